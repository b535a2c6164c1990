#ifndef CHTTPDNS_OPENSSL_SHIM_H
#define CHTTPDNS_OPENSSL_SHIM_H
/* Digests and the HMAC of client signatures use libcrypto's SHA-256 and MD5 functions (the HMAC
   copies `SHA256_CTX` states, a plain struct), which OpenSSL 3 deprecates but keeps: its EVP
   interface fetches the algorithm and allocates contexts on every call. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

/// One-shot digest with libcrypto's SHA-256 or MD5 functions (`SHA256_Update`, `MD5`: no
/// provider fetch, no context allocated, which `EVP_Digest` costs OpenSSL 3.0 on every call); `out` must
/// hold EVP_MAX_MD_SIZE bytes. `md` is 0 for SHA-256, 1 for MD5. Returns the digest length, or 0
/// on failure.
static inline unsigned int chttpdns_digest(int md, const void *data, size_t count, unsigned char *out) {
    if (md == 0) {
        /* `SHA256()` itself is `EVP_Q_digest` in OpenSSL 3: a fetch by name on every call. */
        SHA256_CTX context;
        int ok = SHA256_Init(&context) == 1 && SHA256_Update(&context, data, count) == 1 && SHA256_Final(out, &context) == 1;
        return ok ? SHA256_DIGEST_LENGTH : 0;
    }
    return MD5((const unsigned char *)data, count, out) != NULL ? MD5_DIGEST_LENGTH : 0;
}

/// One-shot HMAC-SHA256 (`HMAC`); `out` must hold EVP_MAX_MD_SIZE bytes. Returns the MAC length,
/// or 0 on failure.
static inline unsigned int chttpdns_hmac_sha256(
    const void *key, int keyCount, const unsigned char *data, size_t count, unsigned char *out) {
    unsigned int size = 0;
    return HMAC(EVP_sha256(), key, keyCount, data, count, out, &size) != NULL ? size : 0;
}

/// An HMAC-SHA256 key prepared once (RFC 2104): the SHA-256 states after the key's inner block
/// (key ^ 0x36...) and after its outer block (key ^ 0x5c...). Holds what the key can sign with.
typedef struct {
    SHA256_CTX inner;
    SHA256_CTX outer;
} chttpdns_hmac_sha256_key;

/// Fills `prepared` for `key` (a key longer than a block is hashed first, as RFC 2104 says).
/// Returns 1 on success, 0 on failure.
static inline int chttpdns_hmac_sha256_prepare(chttpdns_hmac_sha256_key *prepared, const void *key, size_t count) {
    unsigned char block[SHA256_CBLOCK] = {0};
    unsigned char pad[SHA256_CBLOCK];
    int ok = 1;
    if (count > SHA256_CBLOCK) {
        ok = chttpdns_digest(0, key, count, block) == SHA256_DIGEST_LENGTH;
    } else if (count > 0) {
        memcpy(block, key, count);
    }
    for (int i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x36;
    ok = ok && SHA256_Init(&prepared->inner) == 1 && SHA256_Update(&prepared->inner, pad, sizeof pad) == 1;
    for (int i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x5c;
    ok = ok && SHA256_Init(&prepared->outer) == 1 && SHA256_Update(&prepared->outer, pad, sizeof pad) == 1;
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
    return ok;
}

/// HMAC-SHA256 of `data` under `prepared`, which is only read (each call copies the two states
/// onto its own stack: no allocation, no lock, any number of threads at once); `out` holds 32
/// bytes. Returns 1 on success, 0 on failure.
static inline int chttpdns_hmac_sha256_prepared(
    const chttpdns_hmac_sha256_key *prepared, const void *data, size_t count, unsigned char *out) {
    SHA256_CTX context = prepared->inner;
    unsigned char inner[SHA256_DIGEST_LENGTH];
    int ok = SHA256_Update(&context, data, count) == 1 && SHA256_Final(inner, &context) == 1;
    context = prepared->outer;
    ok = ok && SHA256_Update(&context, inner, sizeof inner) == 1 && SHA256_Final(out, &context) == 1;
    return ok;
}

/// GCM control codes for `EVP_CIPHER_CTX_ctrl` (macros defined through other macros, which Swift
/// does not import).
static const int chttpdns_gcm_set_ivlen = EVP_CTRL_GCM_SET_IVLEN;
static const int chttpdns_gcm_get_tag = EVP_CTRL_GCM_GET_TAG;
static const int chttpdns_gcm_set_tag = EVP_CTRL_GCM_SET_TAG;

#endif
