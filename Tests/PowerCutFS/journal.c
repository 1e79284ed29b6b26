// What is not durable yet, and the cut that forgets it.
//
// Content: per inode, every write and truncate since the inode's last fsync, with the bytes
// it replaced, so the cut can undo all of them (newest first) and then redo the ones a disk
// kept (a random subset, or all but a torn tail).
// Directories: per directory, its entries as they were at its last fsyncdir (or at mount),
// taken before its first change. The cut puts every directory back to that snapshot; an inode
// that loses a name meanwhile (unlink, a rename over it) is kept alive in the graveyard (a
// hard link) until then.
#include "powercut.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// MARK: - Content journal

enum op_kind { OP_WRITE, OP_TRUNCATE };

struct op {
    enum op_kind kind;
    uint64_t seq;
    off_t offset;        // write: where; truncate: the new size
    size_t size;         // write: bytes written
    char *data;          // write: the bytes written
    off_t old_size;      // the file's size before this op
    char *old_data;      // the bytes this op overwrote or cut off
    size_t old_data_size;
    off_t old_data_offset;
};

struct file_journal {
    dev_t dev;
    ino_t ino;
    int fd;              // a dup: reaches the inode even after every name is gone
    struct op *ops;
    size_t count, capacity;
};

static struct file_journal *files;
static size_t file_count, file_capacity;

static struct file_journal *file_journal_for(int fd, int create) {
    struct stat st;
    if (fstat(fd, &st) != 0) return NULL;
    for (size_t i = 0; i < file_count; i++) {
        if (files[i].dev == st.st_dev && files[i].ino == st.st_ino) return &files[i];
    }
    if (!create) return NULL;
    if (file_count == file_capacity) {
        size_t capacity = file_capacity ? file_capacity * 2 : 16;
        struct file_journal *grown = realloc(files, capacity * sizeof *files);
        if (!grown) return NULL;
        files = grown;
        file_capacity = capacity;
    }
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (copy < 0) return NULL;
    files[file_count] = (struct file_journal){.dev = st.st_dev, .ino = st.st_ino, .fd = copy};
    return &files[file_count++];
}

static struct op *append_op(struct file_journal *journal) {
    if (journal->count == journal->capacity) {
        size_t capacity = journal->capacity ? journal->capacity * 2 : 16;
        struct op *grown = realloc(journal->ops, capacity * sizeof *grown);
        if (!grown) return NULL;
        journal->ops = grown;
        journal->capacity = capacity;
    }
    struct op *op = &journal->ops[journal->count++];
    memset(op, 0, sizeof *op);
    op->seq = ++pc.next_seq;
    return op;
}

/// Reads the bytes of [offset, offset + size) that exist now (the file may be shorter).
static int save_old(int fd, struct op *op, off_t offset, size_t size, off_t file_size) {
    op->old_data_offset = offset;
    if (offset >= file_size) return 0;
    size_t existing = (size_t)(file_size - offset) < size ? (size_t)(file_size - offset) : size;
    op->old_data = malloc(existing ? existing : 1);
    if (!op->old_data) return -ENOMEM;
    ssize_t got = pread(fd, op->old_data, existing, offset);
    if (got != (ssize_t)existing) return -EIO;
    op->old_data_size = existing;
    return 0;
}

int journal_write(int fd, const char *data, size_t size, off_t offset) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    struct file_journal *journal = file_journal_for(fd, 1);
    if (!journal) return -ENOMEM;
    struct op *op = append_op(journal);
    if (!op) return -ENOMEM;
    op->kind = OP_WRITE;
    op->offset = offset;
    op->size = size;
    op->old_size = st.st_size;
    op->data = malloc(size ? size : 1);
    if (!op->data) return -ENOMEM;
    memcpy(op->data, data, size);
    return save_old(fd, op, offset, size, st.st_size);
}

int journal_truncate(int fd, off_t size) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    if (st.st_size == size) return 0;
    struct file_journal *journal = file_journal_for(fd, 1);
    if (!journal) return -ENOMEM;
    struct op *op = append_op(journal);
    if (!op) return -ENOMEM;
    op->kind = OP_TRUNCATE;
    op->offset = size;
    op->old_size = st.st_size;
    return size < st.st_size ? save_old(fd, op, size, (size_t)(st.st_size - size), st.st_size) : 0;
}

static void free_file_journal(struct file_journal *journal) {
    for (size_t i = 0; i < journal->count; i++) {
        free(journal->ops[i].data);
        free(journal->ops[i].old_data);
    }
    free(journal->ops);
    close(journal->fd);
}

void journal_file_synced(int fd) {
    struct file_journal *journal = file_journal_for(fd, 0);
    if (!journal) return;
    free_file_journal(journal);
    *journal = files[--file_count];
}

// MARK: - Directory journal

struct entry {
    char *name;
    dev_t dev;
    ino_t ino;
    mode_t mode;
};

struct dir_journal {
    dev_t dev;
    ino_t ino;
    int fd;              // O_DIRECTORY on the backing directory
    struct entry *entries;
    size_t count;
};

static struct dir_journal *dirs;
static size_t dir_count, dir_capacity;

static void graveyard_name(char *out, size_t capacity, dev_t dev, ino_t ino) {
    snprintf(out, capacity, "%llx-%llx", (unsigned long long)dev, (unsigned long long)ino);
}

static int snapshot_entries(int dir_fd, struct entry **out, size_t *count) {
    int copy = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (copy < 0) return -errno;
    DIR *dir = fdopendir(copy);
    if (!dir) { close(copy); return -errno; }
    size_t capacity = 16, n = 0;
    struct entry *entries = malloc(capacity * sizeof *entries);
    struct dirent *item;
    while (entries && (item = readdir(dir))) {
        if (!strcmp(item->d_name, ".") || !strcmp(item->d_name, "..")) continue;
        struct stat st;
        if (fstatat(dir_fd, item->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (n == capacity) {
            capacity *= 2;
            struct entry *grown = realloc(entries, capacity * sizeof *entries);
            if (!grown) { free(entries); entries = NULL; break; }
            entries = grown;
        }
        entries[n++] = (struct entry){strdup(item->d_name), st.st_dev, st.st_ino, st.st_mode};
    }
    closedir(dir);
    if (!entries) return -ENOMEM;
    *out = entries;
    *count = n;
    return 0;
}

int journal_dir_touch(const char *relative) {
    int fd = openat(pc.root_fd, relative, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) { int e = -errno; close(fd); return e; }
    for (size_t i = 0; i < dir_count; i++) {
        if (dirs[i].dev == st.st_dev && dirs[i].ino == st.st_ino) { close(fd); return 0; }
    }
    if (dir_count == dir_capacity) {
        size_t capacity = dir_capacity ? dir_capacity * 2 : 16;
        struct dir_journal *grown = realloc(dirs, capacity * sizeof *dirs);
        if (!grown) { close(fd); return -ENOMEM; }
        dirs = grown;
        dir_capacity = capacity;
    }
    struct dir_journal journal = {.dev = st.st_dev, .ino = st.st_ino, .fd = fd};
    int result = snapshot_entries(fd, &journal.entries, &journal.count);
    if (result != 0) { close(fd); return result; }
    dirs[dir_count++] = journal;
    return 0;
}

void journal_keep_inode(const char *relative) {
    struct stat st;
    if (fstatat(pc.root_fd, relative, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode)) return;
    char name[64];
    graveyard_name(name, sizeof name, st.st_dev, st.st_ino);
    if (linkat(pc.root_fd, relative, pc.graveyard_fd, name, 0) != 0 && errno != EEXIST) {
        fprintf(stderr, "powercut: cannot keep an inode (errno %d)\n", errno);
    }
}

static void free_dir_journal(struct dir_journal *journal) {
    for (size_t i = 0; i < journal->count; i++) free(journal->entries[i].name);
    free(journal->entries);
    close(journal->fd);
}

void journal_dir_synced(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    for (size_t i = 0; i < dir_count; i++) {
        if (dirs[i].dev == st.st_dev && dirs[i].ino == st.st_ino) {
            free_dir_journal(&dirs[i]);
            dirs[i] = dirs[--dir_count];
            return;
        }
    }
}

void journal_forget_all(void) {
    while (file_count) {
        free_file_journal(&files[file_count - 1]);
        file_count--;
    }
    while (dir_count) {
        free_dir_journal(&dirs[dir_count - 1]);
        dir_count--;
    }
}

void journal_stats(uint64_t *file_total, uint64_t *op_total, uint64_t *byte_total, uint64_t *dir_total) {
    uint64_t ops = 0, bytes = 0;
    for (size_t i = 0; i < file_count; i++) {
        ops += files[i].count;
        for (size_t j = 0; j < files[i].count; j++) bytes += files[i].ops[j].size;
    }
    *file_total = file_count;
    *op_total = ops;
    *byte_total = bytes;
    *dir_total = dir_count;
}

// MARK: - The cut

static void undo(int fd, const struct op *op) {
    if (op->kind == OP_WRITE) {
        if (op->old_data_size && pwrite(fd, op->old_data, op->old_data_size, op->old_data_offset) < 0) {
            fprintf(stderr, "powercut: undo write failed (errno %d)\n", errno);
        }
        if (ftruncate(fd, op->old_size) != 0) fprintf(stderr, "powercut: undo size failed (errno %d)\n", errno);
    } else {
        if (ftruncate(fd, op->old_size) != 0) fprintf(stderr, "powercut: undo truncate failed (errno %d)\n", errno);
        if (op->old_data_size && pwrite(fd, op->old_data, op->old_data_size, op->old_data_offset) < 0) {
            fprintf(stderr, "powercut: undo truncate data failed (errno %d)\n", errno);
        }
    }
}

static void redo(int fd, const struct op *op, size_t bytes) {
    if (op->kind == OP_WRITE) {
        if (bytes && pwrite(fd, op->data, bytes, op->offset) < 0) fprintf(stderr, "powercut: redo failed (errno %d)\n", errno);
    } else if (ftruncate(fd, op->offset) != 0) {
        fprintf(stderr, "powercut: redo truncate failed (errno %d)\n", errno);
    }
}

/// How many bytes of the last write a torn sector boundary keeps: a multiple of 512 of the
/// file's offsets inside the write, or all or nothing for a write within one sector.
static size_t torn_prefix(const struct op *op, unsigned *seed) {
    off_t first_boundary = (op->offset / 512 + 1) * 512;
    off_t end = op->offset + (off_t)op->size;
    if (first_boundary >= end) return (rand_r(seed) % 2) ? op->size : 0;
    off_t sectors = (end - first_boundary + 511) / 512;  // boundaries strictly inside, and `end`'s own
    off_t boundary = first_boundary + (off_t)(rand_r(seed) % (unsigned)sectors) * 512;
    return boundary >= end ? op->size : (size_t)(boundary - op->offset);
}

static void cut_contents(unsigned *kept, unsigned *dropped, unsigned *torn) {
    uint64_t last_seq = 0;
    for (size_t i = 0; i < file_count; i++) {
        for (size_t j = 0; j < files[i].count; j++) {
            if (files[i].ops[j].seq > last_seq) last_seq = files[i].ops[j].seq;
        }
    }
    unsigned seed = pc.seed;
    for (size_t i = 0; i < file_count; i++) {
        struct file_journal *journal = &files[i];
        for (size_t j = journal->count; j-- > 0;) undo(journal->fd, &journal->ops[j]);
        for (size_t j = 0; j < journal->count; j++) {
            const struct op *op = &journal->ops[j];
            size_t bytes = op->size;
            int keep = 0;
            if (pc.cut == CUT_SUBSET) keep = (unsigned)(rand_r(&seed) % 100) < pc.keep_percent;
            if (pc.cut == CUT_TORN) {
                keep = 1;
                if (op->seq == last_seq && op->kind == OP_WRITE) {
                    bytes = torn_prefix(op, &seed);
                    if (bytes < op->size) (*torn)++;
                }
            }
            if (keep) { redo(journal->fd, op, bytes); (*kept)++; } else { (*dropped)++; }
        }
    }
}

static const struct entry *find_entry(const struct dir_journal *journal, const char *name) {
    for (size_t i = 0; i < journal->count; i++) {
        if (!strcmp(journal->entries[i].name, name)) return &journal->entries[i];
    }
    return NULL;
}

/// Removes what the directory did not hold at its last fsyncdir. A new subdirectory goes
/// whole, even when what it holds was synced in it (fsync(2): its entry in the parent needs
/// the parent's fsync): one still holding entries is moved into the graveyard. Returns how
/// many entries it removed.
static unsigned remove_unsynced_entries(struct dir_journal *journal, int directories) {
    unsigned removed = 0;
    struct entry *now;
    size_t count;
    if (snapshot_entries(journal->fd, &now, &count) != 0) return 0;
    for (size_t i = 0; i < count; i++) {
        const struct entry *then = find_entry(journal, now[i].name);
        int same = then && then->dev == now[i].dev && then->ino == now[i].ino;
        if (!same && S_ISDIR(now[i].mode) == directories) {
            if (directories) {
                if (unlinkat(journal->fd, now[i].name, AT_REMOVEDIR) == 0) {
                    removed++;
                } else if (errno == ENOTEMPTY || errno == EEXIST) {
                    char name[64];
                    snprintf(name, sizeof name, "dir-%llx-%llx", (unsigned long long)now[i].dev, (unsigned long long)now[i].ino);
                    if (renameat(journal->fd, now[i].name, pc.graveyard_fd, name) == 0) removed++;
                }
            } else {
                char name[64];
                graveyard_name(name, sizeof name, now[i].dev, now[i].ino);
                if (linkat(journal->fd, now[i].name, pc.graveyard_fd, name, 0) != 0 && errno != EEXIST) {
                    fprintf(stderr, "powercut: cannot keep %s (errno %d)\n", now[i].name, errno);
                }
                if (unlinkat(journal->fd, now[i].name, 0) == 0) removed++;
            }
        }
        free(now[i].name);
    }
    free(now);
    return removed;
}

static unsigned restore_synced_entries(struct dir_journal *journal) {
    unsigned restored = 0;
    for (size_t i = 0; i < journal->count; i++) {
        const struct entry *then = &journal->entries[i];
        struct stat st;
        if (fstatat(journal->fd, then->name, &st, AT_SYMLINK_NOFOLLOW) == 0) continue;
        if (S_ISDIR(then->mode)) {
            // A removed directory comes back empty: what it held is not tracked (docs/durability.md).
            if (mkdirat(journal->fd, then->name, then->mode & 07777) == 0) restored++;
            continue;
        }
        char name[64];
        graveyard_name(name, sizeof name, then->dev, then->ino);
        if (linkat(pc.graveyard_fd, name, journal->fd, then->name, 0) == 0) {
            restored++;
        } else {
            fprintf(stderr, "powercut: cannot restore %s (errno %d)\n", then->name, errno);
        }
    }
    return restored;
}

/// Removes the directory `name` under `parent` and everything in it.
static void remove_tree(int parent, const char *name) {
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (dir) {
        struct dirent *item;
        while ((item = readdir(dir))) {
            if (!strcmp(item->d_name, ".") || !strcmp(item->d_name, "..")) continue;
            if (unlinkat(fd, item->d_name, 0) != 0 && errno == EISDIR) remove_tree(fd, item->d_name);
        }
        closedir(dir);
    } else if (fd >= 0) {
        close(fd);
    }
    unlinkat(parent, name, AT_REMOVEDIR);
}

/// Drops the graveyard: the inodes that have no name after the cut are free space now. With
/// BACKING.freed (made by the test before the mount) they are moved there instead, with the
/// bytes the disk kept, as a forensic read of the disk's free blocks would find them.
static void empty_graveyard(void) {
    int copy = openat(pc.graveyard_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = copy >= 0 ? fdopendir(copy) : NULL;
    if (!dir) return;
    struct dirent *item;
    while ((item = readdir(dir))) {
        if (!strcmp(item->d_name, ".") || !strcmp(item->d_name, "..")) continue;
        if (pc.freed_fd >= 0) {
            char name[96];
            snprintf(name, sizeof name, "%ld-%s", (long)getpid(), item->d_name);
            if (renameat(pc.graveyard_fd, item->d_name, pc.freed_fd, name) == 0) continue;
        }
        if (unlinkat(pc.graveyard_fd, item->d_name, 0) != 0 && errno == EISDIR) remove_tree(pc.graveyard_fd, item->d_name);
    }
    closedir(dir);
}

void journal_apply_cut(char *summary, size_t capacity) {
    unsigned kept = 0, dropped = 0, torn = 0, removed = 0, restored = 0;
    cut_contents(&kept, &dropped, &torn);
    for (size_t i = 0; i < dir_count; i++) removed += remove_unsynced_entries(&dirs[i], 0);
    for (unsigned progress = 1; progress;) {
        progress = 0;
        for (size_t i = 0; i < dir_count; i++) progress += remove_unsynced_entries(&dirs[i], 1);
        removed += progress;
    }
    for (size_t i = 0; i < dir_count; i++) restored += restore_synced_entries(&dirs[i]);
    empty_graveyard();
    snprintf(summary, capacity, "writes kept=%u dropped=%u torn=%u; entries removed=%u restored=%u",
             kept, dropped, torn, removed, restored);
}
