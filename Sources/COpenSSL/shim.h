#ifndef CHTTPDNS_OPENSSL_SHIM_H
#define CHTTPDNS_OPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

/// One-shot digest through EVP (OpenSSL 3 default provider); `out` must hold EVP_MAX_MD_SIZE bytes.
/// `md` is 0 for SHA-256, 1 for MD5. Returns the digest length, or 0 on failure.
static inline unsigned int chttpdns_digest(int md, const void *data, size_t count, unsigned char *out) {
    unsigned int size = 0;
    const EVP_MD *type = md == 0 ? EVP_sha256() : EVP_md5();
    return EVP_Digest(data, count, out, &size, type, NULL) == 1 ? size : 0;
}

/// One-shot HMAC-SHA256 (`HMAC`); `out` must hold EVP_MAX_MD_SIZE bytes. Returns the MAC length,
/// or 0 on failure.
static inline unsigned int chttpdns_hmac_sha256(
    const void *key, int keyCount, const unsigned char *data, size_t count, unsigned char *out) {
    unsigned int size = 0;
    return HMAC(EVP_sha256(), key, keyCount, data, count, out, &size) != NULL ? size : 0;
}

/// An HMAC-SHA256 context set up with `key` (`EVP_MAC_init`, which hashes the key's inner and
/// outer blocks), to be copied for each message by `chttpdns_hmac_sha256_prepared`; NULL on
/// failure. Freed with `EVP_MAC_CTX_free`.
static inline EVP_MAC_CTX *chttpdns_hmac_sha256_prepare(const void *key, size_t count) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (mac == NULL) return NULL;
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac);
    if (ctx == NULL) return NULL;
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_end();
    if (EVP_MAC_init(ctx, (const unsigned char *)key, count, params) != 1) {
        EVP_MAC_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/// HMAC-SHA256 of `data` with a context from `chttpdns_hmac_sha256_prepare`, which is only read
/// (`EVP_MAC_CTX_dup`), so several threads may use it at once; `out` must hold 32 bytes.
/// Returns 1 on success, 0 on failure.
static inline int chttpdns_hmac_sha256_prepared(const EVP_MAC_CTX *prepared, const void *data, size_t count, unsigned char *out) {
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup(prepared);
    if (ctx == NULL) return 0;
    size_t size = 0;
    int ok = EVP_MAC_update(ctx, (const unsigned char *)data, count) == 1 && EVP_MAC_final(ctx, out, &size, 32) == 1 && size == 32;
    EVP_MAC_CTX_free(ctx);
    return ok;
}

/// GCM control codes for `EVP_CIPHER_CTX_ctrl` (macros defined through other macros, which Swift
/// does not import).
static const int chttpdns_gcm_set_ivlen = EVP_CTRL_GCM_SET_IVLEN;
static const int chttpdns_gcm_get_tag = EVP_CTRL_GCM_GET_TAG;
static const int chttpdns_gcm_set_tag = EVP_CTRL_GCM_SET_TAG;

#endif
