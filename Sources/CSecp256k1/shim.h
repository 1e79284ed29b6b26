#ifndef SOTTO_CSECP256K1_SHIM_H
#define SOTTO_CSECP256K1_SHIM_H

#include <secp256k1.h>
#include <secp256k1_ecdh.h>

/// `secp256k1_context_static` imports as a mutable global, which Swift 6 rejects as not
/// concurrency-safe. The static context is immutable in practice; read it through here.
static inline const secp256k1_context *sotto_secp256k1_static_context(void) {
    return secp256k1_context_static;
}

#endif
