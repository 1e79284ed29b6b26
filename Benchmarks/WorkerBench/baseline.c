/* The C baseline for the worker benchmark (issue #4): what a push costs at the minimum.
 * Started exactly like sotto-notify (socket activation, connection on fd 3, or stdin with
 * --stdin): reads one line, opens a WAL database with the same durability (synchronous=FULL,
 * persistent WAL, busy timeout), inserts one row in a BEGIN IMMEDIATE transaction, writes an
 * ack line and exits. No crypto, no JSON, no checks: a floor, not a rival.
 * With BASELINE_CONVERSATION set it does the worker's insert: one row into the `message`
 * table of the real group database (its schema, indexes and foreign keys); without it, one
 * row into a one-table database of its own. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *db_path = getenv("BASELINE_DB");
    if (!db_path) { fprintf(stderr, "BASELINE_DB not set\n"); return 2; }
    int in_fd = 3, out_fd = 3;
    if (argc > 1 && strcmp(argv[1], "--stdin") == 0) { in_fd = 0; out_fd = 1; }

    char buf[4098];
    size_t len = 0;
    while (len < sizeof buf - 1) {
        ssize_t n = read(in_fd, buf + len, sizeof buf - 1 - len);
        if (n <= 0) break;
        len += (size_t)n;
        if (memchr(buf, '\n', len)) break;
    }
    buf[len] = 0;

    sqlite3 *db;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) return 3;
    int persist = 1;
    sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
    sqlite3_busy_timeout(db, 5000);
    sqlite3_exec(db, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
    const char *conversation = getenv("BASELINE_CONVERSATION");
    if (conversation) sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
    char id[64];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    snprintf(id, sizeof id, "%08x%08lx%016llx", (unsigned)getpid(), (unsigned long)now.tv_nsec, ms);
    sqlite3_stmt *stmt;
    sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (conversation) {
        sqlite3_prepare_v2(db, "INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, "
                               "contentType, content, isOutgoing) VALUES(?, ?, 'baseline', ?, ?, "
                               "'xmtp.org/text:1.0', ?, 0)", -1, &stmt, NULL);
        sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 2, conversation, -1, SQLITE_STATIC);
        sqlite3_bind_int64(stmt, 3, ms);
        sqlite3_bind_int64(stmt, 4, ms);
        sqlite3_bind_blob(stmt, 5, buf, (int)len, SQLITE_STATIC);
    } else {
        sqlite3_prepare_v2(db, "INSERT INTO baseline(id, payload) VALUES(?, ?)", -1, &stmt, NULL);
        sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_blob(stmt, 2, buf, (int)len, SQLITE_STATIC);
    }
    int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) return 4;
    sqlite3_close(db);
    const char *ack = "{\"ok\":true,\"messageId\":\"baseline\",\"duplicate\":false}\n";
    if (write(out_fd, ack, strlen(ack)) < 0) return 5;
    return 0;
}
