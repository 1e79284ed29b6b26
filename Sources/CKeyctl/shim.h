// The kernel key retention service through raw syscalls (keyctl(2), add_key(2)): no
// libkeyutils at run time, so the worker links nothing new (docs/adr/0045).
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SOTTO_KEY_SPEC_USER_KEYRING (-4)
#define SOTTO_KEYCTL_SETPERM 5
#define SOTTO_KEYCTL_DESCRIBE 6
#define SOTTO_KEYCTL_UNLINK 9
#define SOTTO_KEYCTL_SEARCH 10
#define SOTTO_KEYCTL_READ 11
#define SOTTO_KEYCTL_INVALIDATE 21

static inline long sotto_add_key(const char *type, const char *description, const void *payload, size_t length,
                                  int32_t keyring) {
    return syscall(SYS_add_key, type, description, payload, length, keyring);
}

static inline long sotto_keyctl_search(int32_t keyring, const char *type, const char *description) {
    return syscall(SYS_keyctl, SOTTO_KEYCTL_SEARCH, keyring, type, description, 0);
}

static inline long sotto_keyctl_read(int32_t key, void *buffer, size_t length) {
    return syscall(SYS_keyctl, SOTTO_KEYCTL_READ, key, buffer, length);
}

static inline long sotto_keyctl_describe(int32_t key, char *buffer, size_t length) {
    return syscall(SYS_keyctl, SOTTO_KEYCTL_DESCRIBE, key, buffer, length);
}

static inline long sotto_keyctl_setperm(int32_t key, uint32_t permissions) {
    return syscall(SYS_keyctl, SOTTO_KEYCTL_SETPERM, key, permissions);
}

static inline long sotto_keyctl_invalidate(int32_t key) {
    return syscall(SYS_keyctl, SOTTO_KEYCTL_INVALIDATE, key);
}
