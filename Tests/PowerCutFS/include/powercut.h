// sotto-powercut-fs: a FUSE passthrough that forgets what was never made durable.
//
// Every write, truncate and directory change that has not been made durable by fsync (of the
// file) or fsyncdir (of the directory, for creates, unlinks, renames and links) is journaled
// in memory. A "cut" armed over the control socket takes effect when the file system is
// unmounted: the backing directory is rolled back to what a disk would hold after a power
// cut (docs/adr/0037, docs/durability.md).
#ifndef POWERCUT_H
#define POWERCUT_H

#define _GNU_SOURCE
#define FUSE_USE_VERSION 31
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

// MARK: - State shared by the operations, the control socket and the cut

enum cut_mode { CUT_NONE = 0, CUT_ALL, CUT_SUBSET, CUT_TORN };

struct fault {
    uint64_t first;   // 1-based index of the first failing call counted since the command; 0: off
    uint64_t count;   // how many fail from `first` on; 0: every one until `clear`
    int error;        // EIO, ENOSPC
};

struct powercut {
    pthread_mutex_t lock;
    int root_fd;          // the backing directory
    int graveyard_fd;     // BACKING.graveyard: keeps unlinked inodes alive until the cut
    int freed_fd;         // BACKING.freed if the test made it: where the cut leaves them; else -1
    enum cut_mode cut;    // armed cut; once armed every change fails with EIO
    unsigned seed;
    unsigned keep_percent;
    uint64_t writes_seen, syncs_seen;   // counted for faults since the last `fail`
    struct fault write_fault, sync_fault;
    uint64_t next_seq;
};

extern struct powercut pc;

// MARK: - Journal (journal.c)

/// Records a write of `size` bytes at `offset` to the open backing file `fd`, before it happens.
int journal_write(int fd, const char *data, size_t size, off_t offset);
/// Records a truncate of the open backing file `fd` to `size`, before it happens.
int journal_truncate(int fd, off_t size);
/// The file behind `fd` is durable: forget its journal.
void journal_file_synced(int fd);
/// Snapshots the entries of the backing directory `relative` before its first change since
/// its last fsyncdir.
int journal_dir_touch(const char *relative);
/// Keeps the inode at `relative` alive in the graveyard (before an unlink or a replacing rename).
void journal_keep_inode(const char *relative);
/// The backing directory behind `fd` is durable: forget its snapshot.
void journal_dir_synced(int fd);
/// Everything so far is durable (sync(1)).
void journal_forget_all(void);
/// Counts what is not durable yet.
void journal_stats(uint64_t *files, uint64_t *ops, uint64_t *bytes, uint64_t *dirs);
/// Rolls the backing directory back to what survives the armed cut. Returns a summary line.
void journal_apply_cut(char *summary, size_t capacity);

// MARK: - Faults (control.c)

/// 0, or the errno the next write (or fsync) must fail with.
int fault_for_write(void);
int fault_for_sync(void);

// MARK: - Control socket (control.c)

int control_start(const char *socket_path);

// MARK: - Operations (operations.c)

struct fuse_operations;
extern const struct fuse_operations powercut_operations;

#endif
