#ifndef SOTTO_CSODIUM_SHIM_H
#define SOTTO_CSODIUM_SHIM_H

// libsodium: ChaCha20-Poly1305 (IETF, RFC 8439), HMAC-SHA256 (for HKDF) and SHA-256.
// Chosen over swift-crypto for the worker's start-up budget: see docs/adr/0001.
#include <sodium.h>

#endif
