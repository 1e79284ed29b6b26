// The control socket: one command line per connection, one reply line.
//
//   ping                               -> ok
//   stats                              -> ok files=F ops=O bytes=B dirs=D   (what is not durable)
//   sync                               -> ok; everything so far is durable (sync(1))
//   cut all | cut subset SEED PERCENT | cut torn SEED
//                                      -> ok; every later change fails with EIO, and the
//                                         rollback happens at unmount
//   fail write|sync FIRST ERRNO [COUNT] -> ok; the FIRST-th write (or fsync/fsyncdir) from now
//                                         on, and COUNT-1 more (0: all until `clear`), fail
//   clear                              -> ok; no more faults
//   seen                               -> ok writes=W syncs=S   (counted since the last `fail`
//                                         of each: whether an armed Nth was reached)
#include "powercut.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

// MARK: - Faults

static int fault_check(struct fault *fault, uint64_t *seen) {
    if (!fault->first) return 0;
    uint64_t index = ++*seen;
    if (index < fault->first) return 0;
    if (fault->count && index >= fault->first + fault->count) return 0;
    return fault->error;
}

int fault_for_write(void) { return fault_check(&pc.write_fault, &pc.writes_seen); }
int fault_for_sync(void) { return fault_check(&pc.sync_fault, &pc.syncs_seen); }

// MARK: - Commands

static int errno_named(const char *name) {
    if (!strcmp(name, "EIO")) return EIO;
    if (!strcmp(name, "ENOSPC")) return ENOSPC;
    if (!strcmp(name, "EDQUOT")) return EDQUOT;
    return 0;
}

static void run_command(char *line, char *reply, size_t capacity) {
    char *words[6] = {0};
    int count = 0;
    for (char *word = strtok(line, " \t\r\n"); word && count < 6; word = strtok(NULL, " \t\r\n")) words[count++] = word;
    if (count == 0) { snprintf(reply, capacity, "error empty command"); return; }
    pthread_mutex_lock(&pc.lock);
    if (!strcmp(words[0], "ping")) {
        snprintf(reply, capacity, "ok");
    } else if (!strcmp(words[0], "stats")) {
        uint64_t files, ops, bytes, dirs;
        journal_stats(&files, &ops, &bytes, &dirs);
        snprintf(reply, capacity, "ok files=%llu ops=%llu bytes=%llu dirs=%llu",
                 (unsigned long long)files, (unsigned long long)ops, (unsigned long long)bytes, (unsigned long long)dirs);
    } else if (!strcmp(words[0], "sync")) {
        journal_forget_all();
        snprintf(reply, capacity, "ok");
    } else if (!strcmp(words[0], "cut") && count >= 2) {
        if (!strcmp(words[1], "all")) {
            pc.cut = CUT_ALL;
        } else if (!strcmp(words[1], "subset") && count == 4) {
            pc.cut = CUT_SUBSET;
            pc.seed = (unsigned)strtoul(words[2], NULL, 10);
            pc.keep_percent = (unsigned)strtoul(words[3], NULL, 10);
        } else if (!strcmp(words[1], "torn") && count == 3) {
            pc.cut = CUT_TORN;
            pc.seed = (unsigned)strtoul(words[2], NULL, 10);
        }
        snprintf(reply, capacity, pc.cut == CUT_NONE ? "error cut all|subset SEED PERCENT|torn SEED" : "ok");
    } else if (!strcmp(words[0], "fail") && count >= 4 && errno_named(words[3])) {
        struct fault fault = {
            .first = strtoull(words[2], NULL, 10),
            .count = count >= 5 ? strtoull(words[4], NULL, 10) : 1,
            .error = errno_named(words[3]),
        };
        if (!strcmp(words[1], "write")) {
            pc.write_fault = fault;
            pc.writes_seen = 0;
            snprintf(reply, capacity, "ok");
        } else if (!strcmp(words[1], "sync")) {
            pc.sync_fault = fault;
            pc.syncs_seen = 0;
            snprintf(reply, capacity, "ok");
        } else {
            snprintf(reply, capacity, "error fail write|sync FIRST EIO|ENOSPC|EDQUOT [COUNT]");
        }
    } else if (!strcmp(words[0], "seen")) {
        snprintf(reply, capacity, "ok writes=%llu syncs=%llu",
                 (unsigned long long)pc.writes_seen, (unsigned long long)pc.syncs_seen);
    } else if (!strcmp(words[0], "clear")) {
        pc.write_fault = (struct fault){0};
        pc.sync_fault = (struct fault){0};
        snprintf(reply, capacity, "ok");
    } else {
        snprintf(reply, capacity, "error unknown command");
    }
    pthread_mutex_unlock(&pc.lock);
}

// MARK: - Socket

static void *serve(void *argument) {
    int listener = (int)(intptr_t)argument;
    for (;;) {
        int connection = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (connection < 0) { if (errno == EINTR) continue; return NULL; }
        char line[512];
        size_t used = 0;
        ssize_t n;
        while (used < sizeof line - 1 && (n = read(connection, line + used, sizeof line - 1 - used)) > 0) {
            used += (size_t)n;
            if (memchr(line, '\n', used)) break;
        }
        line[used] = '\0';
        char reply[512];
        run_command(line, reply, sizeof reply - 1);
        strcat(reply, "\n");
        if (write(connection, reply, strlen(reply)) < 0) { /* the asker left */ }
        close(connection);
    }
}

int control_start(const char *socket_path) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof address.sun_path) return -ENAMETOOLONG;
    strcpy(address.sun_path, socket_path);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) return -errno;
    unlink(socket_path);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 8) != 0) {
        int error = -errno;
        close(listener);
        return error;
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, serve, (void *)(intptr_t)listener) != 0) return -EAGAIN;
    pthread_detach(thread);
    return 0;
}
