#ifndef SOTTO_CNATS_SHIM_H
#define SOTTO_CNATS_SHIM_H

// The official NATS C client (Debian libnats-dev): connections, reconnection, TLS through
// OpenSSL, and the JetStream API the relay uses (docs/adr/0026). Only sotto-relayd and the
// relay tests link it; the worker never does (docs/adr/0001).
#include <nats/nats.h>

#endif
