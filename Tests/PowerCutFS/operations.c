// The FUSE operations: a passthrough to the backing directory that journals every change
// before making it (journal.c), fails a change once a cut is armed, and fails a write or an
// fsync on command (control.c).
#include "powercut.h"

#include <fuse.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define LOCKED(body) do { pthread_mutex_lock(&pc.lock); int result_ = (body); pthread_mutex_unlock(&pc.lock); return result_; } while (0)

// MARK: - Paths

/// FUSE paths start with "/": the backing path relative to root_fd.
static const char *relative(const char *path) {
    return (path[0] == '/' && path[1] == '\0') ? "." : path + 1;
}

/// The directory holding `path`, relative to root_fd, in `out`.
static const char *parent_of(const char *path, char *out, size_t capacity) {
    snprintf(out, capacity, "%s", path);
    char *slash = strrchr(out, '/');
    if (!slash || slash == out) return ".";
    *slash = '\0';
    return out + 1;
}

static int changes_refused(void) { return pc.cut != CUT_NONE; }

static int touch_parent(const char *path) {
    char buffer[4096];
    return journal_dir_touch(parent_of(path, buffer, sizeof buffer));
}

// MARK: - Reading

static int do_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    pthread_mutex_lock(&pc.lock);
    int result = fi ? fstat((int)fi->fh, st) : fstatat(pc.root_fd, relative(path), st, AT_SYMLINK_NOFOLLOW);
    result = result == 0 ? 0 : -errno;
    pthread_mutex_unlock(&pc.lock);
    return result;
}

static int do_access(const char *path, int mask) {
    return faccessat(pc.root_fd, relative(path), mask, 0) == 0 ? 0 : -errno;
}

static int do_readlink(const char *path, char *buffer, size_t size) {
    ssize_t n = readlinkat(pc.root_fd, relative(path), buffer, size - 1);
    if (n < 0) return -errno;
    buffer[n] = '\0';
    return 0;
}

static int do_opendir(const char *path, struct fuse_file_info *fi) {
    int fd = openat(pc.root_fd, relative(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int do_readdir(const char *path, void *buffer, fuse_fill_dir_t fill, off_t offset,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
    (void)path; (void)offset; (void)flags;
    int copy = openat((int)fi->fh, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = copy >= 0 ? fdopendir(copy) : NULL;
    if (!dir) return -errno;
    struct dirent *item;
    while ((item = readdir(dir))) {
        struct stat st = {.st_ino = item->d_ino, .st_mode = (mode_t)(item->d_type << 12)};
        if (fill(buffer, item->d_name, &st, 0, 0)) break;
    }
    closedir(dir);
    return 0;
}

static int do_releasedir(const char *path, struct fuse_file_info *fi) {
    (void)path;
    close((int)fi->fh);
    return 0;
}

static int do_statfs(const char *path, struct statvfs *st) {
    (void)path;
    return fstatvfs(pc.root_fd, st) == 0 ? 0 : -errno;
}

static int do_read(const char *path, char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)path;
    ssize_t n = pread((int)fi->fh, buffer, size, offset);
    return n < 0 ? -errno : (int)n;
}

// MARK: - Directory changes

static int locked_mkdir(const char *path, mode_t mode) {
    if (changes_refused()) return -EIO;
    int result = touch_parent(path);
    if (result != 0) return result;
    return mkdirat(pc.root_fd, relative(path), mode) == 0 ? 0 : -errno;
}
static int do_mkdir(const char *path, mode_t mode) { LOCKED(locked_mkdir(path, mode)); }

static int locked_mknod(const char *path, mode_t mode, dev_t device) {
    if (changes_refused()) return -EIO;
    int result = touch_parent(path);
    if (result != 0) return result;
    return mknodat(pc.root_fd, relative(path), mode, device) == 0 ? 0 : -errno;
}
static int do_mknod(const char *path, mode_t mode, dev_t device) { LOCKED(locked_mknod(path, mode, device)); }

static int locked_unlink(const char *path) {
    if (changes_refused()) return -EIO;
    int result = touch_parent(path);
    if (result != 0) return result;
    journal_keep_inode(relative(path));
    return unlinkat(pc.root_fd, relative(path), 0) == 0 ? 0 : -errno;
}
static int do_unlink(const char *path) { LOCKED(locked_unlink(path)); }

static int locked_rmdir(const char *path) {
    if (changes_refused()) return -EIO;
    int result = touch_parent(path);
    if (result != 0) return result;
    return unlinkat(pc.root_fd, relative(path), AT_REMOVEDIR) == 0 ? 0 : -errno;
}
static int do_rmdir(const char *path) { LOCKED(locked_rmdir(path)); }

static int locked_symlink(const char *target, const char *path) {
    if (changes_refused()) return -EIO;
    int result = touch_parent(path);
    if (result != 0) return result;
    return symlinkat(target, pc.root_fd, relative(path)) == 0 ? 0 : -errno;
}
static int do_symlink(const char *target, const char *path) { LOCKED(locked_symlink(target, path)); }

static int locked_rename(const char *from, const char *to, unsigned int flags) {
    if (changes_refused()) return -EIO;
    int result = touch_parent(from);
    if (result == 0) result = touch_parent(to);
    if (result != 0) return result;
    journal_keep_inode(relative(to));
    return renameat2(pc.root_fd, relative(from), pc.root_fd, relative(to), flags) == 0 ? 0 : -errno;
}
static int do_rename(const char *from, const char *to, unsigned int flags) { LOCKED(locked_rename(from, to, flags)); }

static int locked_link(const char *from, const char *to) {
    if (changes_refused()) return -EIO;
    int result = touch_parent(to);
    if (result != 0) return result;
    return linkat(pc.root_fd, relative(from), pc.root_fd, relative(to), 0) == 0 ? 0 : -errno;
}
static int do_link(const char *from, const char *to) { LOCKED(locked_link(from, to)); }

static int do_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)path; (void)datasync;
    pthread_mutex_lock(&pc.lock);
    int result = changes_refused() ? -EIO : -fault_for_sync();
    if (result == 0) journal_dir_synced((int)fi->fh);
    pthread_mutex_unlock(&pc.lock);
    return result;
}

// MARK: - Attributes

static int do_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
    int result = fi ? fchmod((int)fi->fh, mode) : fchmodat(pc.root_fd, relative(path), mode, 0);
    return result == 0 ? 0 : -errno;
}

static int do_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
    int result = fi ? fchown((int)fi->fh, uid, gid) : fchownat(pc.root_fd, relative(path), uid, gid, AT_SYMLINK_NOFOLLOW);
    return result == 0 ? 0 : -errno;
}

static int do_utimens(const char *path, const struct timespec times[2], struct fuse_file_info *fi) {
    int result = fi ? futimens((int)fi->fh, times) : utimensat(pc.root_fd, relative(path), times, AT_SYMLINK_NOFOLLOW);
    return result == 0 ? 0 : -errno;
}

static int truncate_fd(int fd, off_t size) {
    int result = -fault_for_write();
    if (result == 0) result = journal_truncate(fd, size);
    if (result == 0 && ftruncate(fd, size) != 0) result = -errno;
    return result;
}

static int locked_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    if (changes_refused()) return -EIO;
    if (fi) return truncate_fd((int)fi->fh, size);
    int fd = openat(pc.root_fd, relative(path), O_RDWR | O_CLOEXEC);  // the journal reads what a truncate cuts
    if (fd < 0) return -errno;
    int result = truncate_fd(fd, size);
    close(fd);
    return result;
}
static int do_truncate(const char *path, off_t size, struct fuse_file_info *fi) { LOCKED(locked_truncate(path, size, fi)); }

// MARK: - Files

/// Opens the backing file; O_TRUNC is journaled like a truncate, O_APPEND is left to the
/// kernel (FUSE passes the offset of every write), and write-only is read-write (the journal
/// reads the bytes a write replaces).
static int open_backing(const char *path, int flags, mode_t mode, struct fuse_file_info *fi) {
    int backing_flags = (flags & ~(O_TRUNC | O_APPEND)) | O_CLOEXEC;
    if ((flags & O_ACCMODE) == O_WRONLY) backing_flags = (backing_flags & ~O_ACCMODE) | O_RDWR;
    int fd = openat(pc.root_fd, relative(path), backing_flags, mode);
    if (fd < 0) return -errno;
    if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY) {
        int result = changes_refused() ? -EIO : truncate_fd(fd, 0);
        if (result != 0) { close(fd); return result; }
    }
    fi->fh = (uint64_t)fd;
    return 0;
}

static int locked_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
    if (changes_refused()) return -EIO;
    struct stat st;
    if (fstatat(pc.root_fd, relative(path), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int result = touch_parent(path);
        if (result != 0) return result;
    }
    return open_backing(path, fi->flags | O_CREAT, mode, fi);
}
static int do_create(const char *path, mode_t mode, struct fuse_file_info *fi) { LOCKED(locked_create(path, mode, fi)); }

static int do_open(const char *path, struct fuse_file_info *fi) { LOCKED(open_backing(path, fi->flags, 0, fi)); }

static int locked_write(const char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    if (changes_refused()) return -EIO;
    // The kernel's writeback of shared mmap pages (SQLite's -shm) comes when it likes: counting
    // it would make "the Nth write" depend on timing.
    int result = fi->writepage ? 0 : -fault_for_write();
    if (result == 0) result = journal_write((int)fi->fh, buffer, size, offset);
    if (result != 0) return result;
    ssize_t n = pwrite((int)fi->fh, buffer, size, offset);
    return n < 0 ? -errno : (int)n;
}
static int do_write(const char *path, const char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)path;
    LOCKED(locked_write(buffer, size, offset, fi));
}

static int do_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)path; (void)datasync;
    pthread_mutex_lock(&pc.lock);
    // The backing file itself is never fsynced: only what this file system remembers counts.
    int result = changes_refused() ? -EIO : -fault_for_sync();
    if (result == 0) journal_file_synced((int)fi->fh);
    pthread_mutex_unlock(&pc.lock);
    return result;
}

static int do_flush(const char *path, struct fuse_file_info *fi) {
    (void)path; (void)fi;
    return 0;
}

static int do_release(const char *path, struct fuse_file_info *fi) {
    (void)path;
    close((int)fi->fh);
    return 0;
}

// MARK: - Lifetime

static void *do_init(struct fuse_conn_info *connection, struct fuse_config *config) {
    (void)connection;
    // No attribute or name caching: what a process sees is what the journal has seen.
    config->attr_timeout = 0;
    config->entry_timeout = 0;
    config->negative_timeout = 0;
    config->use_ino = 1;
    // Unlinked open files keep working through their handle (no .fuse_hidden renames).
    config->hard_remove = 1;
    config->nullpath_ok = 1;
    // Every change passes through this process, so the kernel's page cache stays valid.
    config->kernel_cache = 1;
    printf("ready\n");
    fflush(stdout);
    return NULL;
}

static void do_destroy(void *data) {
    (void)data;
    pthread_mutex_lock(&pc.lock);
    if (pc.cut != CUT_NONE) {
        char summary[256];
        journal_apply_cut(summary, sizeof summary);
        printf("cut: %s\n", summary);
        fflush(stdout);
    }
    pthread_mutex_unlock(&pc.lock);
}

const struct fuse_operations powercut_operations = {
    .getattr = do_getattr,
    .readlink = do_readlink,
    .mknod = do_mknod,
    .mkdir = do_mkdir,
    .unlink = do_unlink,
    .rmdir = do_rmdir,
    .symlink = do_symlink,
    .rename = do_rename,
    .link = do_link,
    .chmod = do_chmod,
    .chown = do_chown,
    .truncate = do_truncate,
    .open = do_open,
    .read = do_read,
    .write = do_write,
    .statfs = do_statfs,
    .flush = do_flush,
    .release = do_release,
    .fsync = do_fsync,
    .opendir = do_opendir,
    .readdir = do_readdir,
    .releasedir = do_releasedir,
    .fsyncdir = do_fsyncdir,
    .init = do_init,
    .destroy = do_destroy,
    .access = do_access,
    .create = do_create,
    .utimens = do_utimens,
};
