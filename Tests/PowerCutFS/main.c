// sotto-powercut-fs BACKING MOUNTPOINT CONTROL_SOCKET
//
// Mounts BACKING at MOUNTPOINT (foreground, single-threaded), prints "ready" once the kernel
// has mounted it, and answers commands on CONTROL_SOCKET (control.c). An armed cut rolls
// BACKING back when the file system is unmounted (`fusermount3 -u MOUNTPOINT`), and prints
// "cut: …" before the process exits. Unlinked inodes wait in BACKING.graveyard (a sibling);
// the cut moves those left without a name to BACKING.freed when that directory exists.
#include "powercut.h"

#include <fuse.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct powercut pc = {.lock = PTHREAD_MUTEX_INITIALIZER};

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s BACKING MOUNTPOINT CONTROL_SOCKET\n", argv[0]);
        return 64;
    }
    pc.root_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pc.root_fd < 0) { perror("backing directory"); return 66; }
    char graveyard[4096];
    snprintf(graveyard, sizeof graveyard, "%s.graveyard", argv[1]);
    if (mkdir(graveyard, 0700) != 0 && errno != EEXIST) { perror("graveyard"); return 73; }
    pc.graveyard_fd = open(graveyard, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pc.graveyard_fd < 0) { perror("graveyard"); return 73; }
    char freed[4096];
    snprintf(freed, sizeof freed, "%s.freed", argv[1]);
    pc.freed_fd = open(freed, O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // only if the test asked for it
    int result = control_start(argv[3]);
    if (result != 0) { fprintf(stderr, "control socket: %s\n", strerror(-result)); return 71; }
    char *fuse_argv[] = {argv[0], argv[2], "-f", "-s", "-o", "fsname=sotto-powercut,allow_other", NULL};
    return fuse_main(6, fuse_argv, &powercut_operations, NULL);
}
