#ifndef CORDIS_COPENSSL_SHIM_H
#define CORDIS_COPENSSL_SHIM_H
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#endif
