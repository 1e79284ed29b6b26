#ifndef SOTTO_CSYSTEMD_SHIM_H
#define SOTTO_CSYSTEMD_SHIM_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-bus.h>

/// SD_LISTEN_FDS_START is a macro Swift cannot always import; expose it as a function.
static inline int sotto_sd_listen_fds_start(void) { return SD_LISTEN_FDS_START; }

#endif
