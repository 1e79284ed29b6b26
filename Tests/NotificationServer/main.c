// sotto-test-notification-server: a desktop notification server for the tests, on the bus
// of DBUS_SESSION_BUS_ADDRESS. It owns org.freedesktop.Notifications, answers Notify with
// ids 1, 2, 3, … and prints one line per call on stdout:
//
//   notify ID SENDER ACTIONS<TAB>SUMMARY<TAB>BODY     (ACTIONS: the action keys joined by ',', or '-')
//
// SUMMARY and BODY are the exact bytes received, in lowercase hex (so a tab, a newline or an
// escape in them cannot end the line). GetCapabilities answers "body,actions,persistence",
// or the comma-separated list given as `--capabilities LIST` (e.g. body,body-markup,
// body-hyperlinks,actions: what GNOME Shell, KDE and dunst say), and prints
// "capabilities SENDER".
//
// A line "invoke ID KEY" on stdin emits ActionInvoked(ID, KEY) addressed to the peer that
// posted ID only, as dunst, KDE Plasma and notification-daemon do (GNOME Shell broadcasts
// it): so a poster that has exited never hears it. It prints "invoked ID" or "unknown ID".
// "ready" is printed once the name is owned.
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NOTIFICATIONS 4096

static char *posters[MAX_NOTIFICATIONS + 1];
static uint32_t next_id = 1;
static sd_bus *bus;
static char *capabilities[16] = {"body", "actions", "persistence", NULL};

static void print_hex(const char *text) {
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) printf("%02x", *p);
}

static int on_notify(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)userdata; (void)error;
    const char *app, *icon, *summary, *body;
    uint32_t replaces;
    int r = sd_bus_message_read(m, "susss", &app, &replaces, &icon, &summary, &body);
    if (r < 0) return r;
    char actions[1024] = "";
    size_t used = 0;
    if ((r = sd_bus_message_enter_container(m, 'a', "s")) < 0) return r;
    const char *action;
    int index = 0;
    while ((r = sd_bus_message_read(m, "s", &action)) > 0) {
        if (index % 2 == 0 && used + strlen(action) + 2 < sizeof actions) {  // keys, not labels
            used += (size_t)snprintf(actions + used, sizeof actions - used, "%s%s", used ? "," : "", action);
        }
        index++;
    }
    if (r < 0) return r;
    sd_bus_message_exit_container(m);
    uint32_t id = next_id++;
    if (id <= MAX_NOTIFICATIONS) posters[id] = strdup(sd_bus_message_get_sender(m));
    printf("notify %u %s %s\t", id, sd_bus_message_get_sender(m), used ? actions : "-");
    print_hex(summary);
    printf("\t");
    print_hex(body);
    printf("\n");
    fflush(stdout);
    return sd_bus_reply_method_return(m, "u", id);
}

static int on_capabilities(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)userdata; (void)error;
    printf("capabilities %s\n", sd_bus_message_get_sender(m));
    fflush(stdout);
    sd_bus_message *reply = NULL;
    int r = sd_bus_message_new_method_return(m, &reply);
    if (r >= 0) r = sd_bus_message_append_strv(reply, capabilities);
    if (r >= 0) r = sd_bus_send(NULL, reply, NULL);
    sd_bus_message_unref(reply);
    return r;
}

static int on_close(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)userdata; (void)error;
    return sd_bus_reply_method_return(m, "");
}

static int on_information(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)userdata; (void)error;
    return sd_bus_reply_method_return(m, "ssss", "sotto-test-notification-server", "sotto", "1", "1.2");
}

static const sd_bus_vtable vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Notify", "susssasa{sv}i", "u", on_notify, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetCapabilities", "", "as", on_capabilities, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("CloseNotification", "u", "", on_close, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetServerInformation", "", "ssss", on_information, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("ActionInvoked", "us", 0),
    SD_BUS_SIGNAL("NotificationClosed", "uu", 0),
    SD_BUS_VTABLE_END,
};

static int on_stdin(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
    (void)revents; (void)userdata;
    static char line[512];
    static size_t length;
    ssize_t n = read(fd, line + length, sizeof line - 1 - length);
    if (n <= 0) return sd_event_exit(sd_event_source_get_event(source), 0);
    length += (size_t)n;
    char *newline;
    while ((newline = memchr(line, '\n', length))) {
        *newline = 0;
        unsigned id;
        char key[128];
        if (sscanf(line, "invoke %u %127s", &id, key) == 2) {
            if (id >= 1 && id <= MAX_NOTIFICATIONS && id < next_id && posters[id]) {
                sd_bus_message *signal = NULL;
                int r = sd_bus_message_new_signal(bus, &signal, "/org/freedesktop/Notifications",
                                                  "org.freedesktop.Notifications", "ActionInvoked");
                if (r >= 0) r = sd_bus_message_set_destination(signal, posters[id]);
                if (r >= 0) r = sd_bus_message_append(signal, "us", (uint32_t)id, key);
                if (r >= 0) r = sd_bus_send(bus, signal, NULL);
                sd_bus_message_unref(signal);
                printf(r >= 0 ? "invoked %u\n" : "failed %u\n", id);
            } else {
                printf("unknown %u\n", id);
            }
            fflush(stdout);
        }
        size_t consumed = (size_t)(newline - line) + 1;
        memmove(line, line + consumed, length - consumed);
        length -= consumed;
    }
    if (length == sizeof line - 1) length = 0;  // an overlong line is dropped
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--capabilities") == 0) {
        int count = 0;
        for (char *name = strtok(argv[2], ","); name && count < 15; name = strtok(NULL, ",")) capabilities[count++] = name;
        capabilities[count] = NULL;
    }
    sd_event *event = NULL;
    int r = sd_event_default(&event);
    if (r >= 0) r = sd_bus_open_user(&bus);
    if (r >= 0) r = sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/Notifications",
                                             "org.freedesktop.Notifications", vtable, NULL);
    if (r >= 0) r = sd_bus_request_name(bus, "org.freedesktop.Notifications", 0);
    if (r >= 0) r = sd_bus_attach_event(bus, event, 0);
    if (r >= 0) r = sd_event_add_io(event, NULL, STDIN_FILENO, EPOLLIN, on_stdin, NULL);
    if (r < 0) {
        fprintf(stderr, "sotto-test-notification-server: %s\n", strerror(-r));
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    r = sd_event_loop(event);
    return r < 0 ? 1 : 0;
}
