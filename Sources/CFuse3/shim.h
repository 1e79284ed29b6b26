// libfuse3 from Debian (libfuse3-dev), for the power-cut test file system only (docs/adr/0037).
#define FUSE_USE_VERSION 31
#include <fuse.h>
