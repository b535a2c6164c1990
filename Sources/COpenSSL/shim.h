#ifndef CHTTPDNS_OPENSSL_SHIM_H
#define CHTTPDNS_OPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/crypto.h>

/// One-shot digests through EVP (OpenSSL 3 default provider); `out` must hold EVP_MAX_MD_SIZE bytes.
/// Returns the digest length, or 0 on failure.
static inline unsigned int chttpdns_sha256(const void *data, size_t count, unsigned char *out) {
    unsigned int size = 0;
    return EVP_Digest(data, count, out, &size, EVP_sha256(), NULL) == 1 ? size : 0;
}
static inline unsigned int chttpdns_md5(const void *data, size_t count, unsigned char *out) {
    unsigned int size = 0;
    return EVP_Digest(data, count, out, &size, EVP_md5(), NULL) == 1 ? size : 0;
}

#endif
