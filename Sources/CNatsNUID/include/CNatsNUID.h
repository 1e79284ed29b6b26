#ifndef SOTTO_CNATSNUID_H
#define SOTTO_CNATSNUID_H

// Every NUID of the NATS C client from the kernel's CSPRNG (docs/adr/0044); see nuid.c.
// Returns 1 when this process's client uses them (the interposition took), 0 otherwise.
int sotto_nuid_is_private(void);

#endif
