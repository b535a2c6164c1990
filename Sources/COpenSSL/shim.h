#ifndef CHTTPDNS_OPENSSL_SHIM_H
#define CHTTPDNS_OPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>

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

/// GCM control codes for `EVP_CIPHER_CTX_ctrl` (macros defined through other macros, which Swift
/// does not import).
static const int chttpdns_gcm_set_ivlen = EVP_CTRL_GCM_SET_IVLEN;
static const int chttpdns_gcm_get_tag = EVP_CTRL_GCM_GET_TAG;
static const int chttpdns_gcm_set_tag = EVP_CTRL_GCM_SET_TAG;

#endif
