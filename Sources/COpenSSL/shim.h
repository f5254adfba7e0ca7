#ifndef CORDIS_COPENSSL_SHIM_H
#define CORDIS_COPENSSL_SHIM_H
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/pem.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/sha.h>

/* SHA-256 through libcrypto's low-level interface, for the HMAC of every frame of an authenticated
   link (CordisWire's HMACSHA256.Key). OpenSSL 3.0 deprecated these functions in favour of EVP, but EVP's
   HMAC copies its digest context through the provider for every MAC (an allocation, a copy, a
   cleanse), which costs more than hashing a call's frame; these run the same assembly (SHA
   extensions included) on a context that is a plain value. Wrapped here so the deprecation stays in C. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline int ccordis_sha256_init(SHA256_CTX *context) { return SHA256_Init(context); }
static inline int ccordis_sha256_update(SHA256_CTX *context, const void *data, size_t count) {
    return SHA256_Update(context, data, count);
}
static inline int ccordis_sha256_final(unsigned char *digest, SHA256_CTX *context) {
    return SHA256_Final(digest, context);
}
#pragma GCC diagnostic pop
#endif
