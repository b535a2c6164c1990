#ifndef CHTTPDNS_OPENSSL_SHIM_H
#define CHTTPDNS_OPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/crypto.h>
#endif
