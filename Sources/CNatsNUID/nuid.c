// nats.c 3.4 names every inbox `<prefix>.<NUID>`, and its NUIDs are 12 characters that one
// process shares for all of its connections followed by a sequence: a relay operator reading
// the subscriptions (`/connz?subs=1`) of two connections of one sotto-relayd, or of one
// daemon, sees the same 12 characters and links the identities they serve (docs/adr/0044).
// libnats calls natsNUID_Next through its PLT, so this definition in the executable takes
// its place: 22 characters straight from getrandom(2), nothing shared between two NUIDs.
// The contract is nats.c's own (nuid.c): at least 23 bytes, 22 characters and a NUL.
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <nats/nats.h>
#include "CNatsNUID.h"

#define SOTTO_NUID_LEN 22

static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static int fill_random(unsigned char *bytes, size_t count) {
    size_t done = 0;
    while (done < count) {
        ssize_t got = getrandom(bytes + done, count - done, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        done += (size_t)got;
    }
    return 0;
}

__attribute__((visibility("default"), used))
natsStatus natsNUID_Next(char *buffer, int bufferLen) {
    if (buffer == NULL || bufferLen <= SOTTO_NUID_LEN) return NATS_INSUFFICIENT_BUFFER;
    int written = 0;
    unsigned char bytes[64];
    while (written < SOTTO_NUID_LEN) {
        if (fill_random(bytes, sizeof bytes) != 0) return NATS_ERR;
        for (size_t i = 0; i < sizeof bytes && written < SOTTO_NUID_LEN; i++) {
            if (bytes[i] >= 248) continue;  // 248 = 4 x 62: no bias
            buffer[written++] = digits[bytes[i] % 62];
        }
    }
    buffer[SOTTO_NUID_LEN] = '\0';
    return NATS_OK;
}

int sotto_nuid_is_private(void) {
    // Two inboxes from the client itself: with its own NUIDs they share their first 12
    // characters after "_INBOX." (the process's prefix); with these, almost never (62^-12).
    natsInbox *first = NULL, *second = NULL;
    int distinct = 0;
    if (natsInbox_Create(&first) == NATS_OK && natsInbox_Create(&second) == NATS_OK
        && strlen(first) >= 7 + 12 && strlen(second) >= 7 + 12) {
        distinct = memcmp(first + 7, second + 7, 12) != 0;
    }
    natsInbox_Destroy(first);
    natsInbox_Destroy(second);
    return distinct;
}
