#ifndef SOTTO_CSYSTEMD_SHIM_H
#define SOTTO_CSYSTEMD_SHIM_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-bus.h>

/// SD_LISTEN_FDS_START is a macro; expose it as a function.
static inline int sotto_sd_listen_fds_start(void) { return SD_LISTEN_FDS_START; }

/// `sd_bus_message_append` is variadic, which Swift cannot call. This appends the arguments
/// of org.freedesktop.Notifications.Notify (susssasa{sv}i) with one hint, "category".
static inline int sotto_append_notify_arguments(sd_bus_message *m, const char *app_name,
                                                const char *summary, const char *body,
                                                const char *category, int expire_timeout_ms) {
    return sd_bus_message_append(m, "susssasa{sv}i",
                                 app_name, (uint32_t)0, "", summary, body,
                                 0,
                                 1, "category", "s", category,
                                 (int32_t)expire_timeout_ms);
}

/// Notify's arguments with one action, `key` labelled `label` (the daemon posts with "default":
/// activating the notification opens its conversation, docs/adr/0046).
static inline int sotto_append_notify_with_action(sd_bus_message *m, const char *app_name,
                                                  const char *summary, const char *body,
                                                  const char *category, const char *key,
                                                  const char *label) {
    return sd_bus_message_append(m, "susssasa{sv}i",
                                 app_name, (uint32_t)0, "", summary, body,
                                 2, key, label,
                                 1, "category", "s", category,
                                 (int32_t)-1);
}

/// Notify's reply: the notification's id.
static inline int sotto_read_notification_id(sd_bus_message *m, uint32_t *id) {
    return sd_bus_message_read(m, "u", id);
}

/// ActionInvoked(u id, s action_key), and NotificationClosed(u id, u reason) read as its id.
static inline int sotto_read_action_invoked(sd_bus_message *m, uint32_t *id, const char **key) {
    return sd_bus_message_read(m, "us", id, key);
}

/// A zero-initialised sd_bus_error (SD_BUS_ERROR_NULL is a macro initialiser).
static inline sd_bus_error sotto_sd_bus_error_null(void) {
    sd_bus_error e = SD_BUS_ERROR_NULL;
    return e;
}

#endif
