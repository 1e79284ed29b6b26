// The Secret Service (org.freedesktop.secrets) through libsecret, for the daemon only: the
// worker never links this (docs/adr/0045). Every call is bounded by `timeout_ms`: a service
// that does not answer is cancelled, not waited for.
#ifndef SOTTO_SECRET_SERVICE_SHIM_H
#define SOTTO_SECRET_SERVICE_SHIM_H

#include <stddef.h>

#define SOTTO_SECRET_FOUND 0
#define SOTTO_SECRET_NOT_FOUND 1
#define SOTTO_SECRET_LOCKED 2
#define SOTTO_SECRET_UNREACHABLE 3
#define SOTTO_SECRET_FAILED 4
// The service answers but has no default collection to store in (GNOME Keyring before the
// first desktop login made its "login" keyring): the user can make one, so it is a state.
#define SOTTO_SECRET_NO_DEFAULT_COLLECTION 5

/// Looks up the item with attributes application=sotto, group=`group`, without unlocking
/// anything (no prompt). FOUND: `*secret` (malloc'd, `*length` bytes) holds its value.
/// NO_DEFAULT_COLLECTION when there is no such item and nowhere to store one. Otherwise
/// `*error` (malloc'd, may be NULL) says why. The caller frees both.
int sotto_secret_lookup(const char *group, int timeout_ms, unsigned char **secret, size_t *length, char **error);

/// Stores `secret` (text) under those attributes in the default collection, replacing one
/// that is there. FOUND (0) on success; NO_DEFAULT_COLLECTION when there is none.
int sotto_secret_store(const char *group, const char *label, const char *secret, int timeout_ms, char **error);

/// Deletes the item. FOUND (0) when one was deleted, NOT_FOUND when there was none.
int sotto_secret_clear(const char *group, int timeout_ms, char **error);

#endif
