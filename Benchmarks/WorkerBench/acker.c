/* The floor of the worker benchmark: a process that reads one line from fd 3 (or stdin with
 * --stdin) and acks it. Measures spawn + socket activation and nothing else. */
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int in_fd = 3, out_fd = 3;
    if (argc > 1 && strcmp(argv[1], "--stdin") == 0) { in_fd = 0; out_fd = 1; }
    char buf[4098];
    size_t len = 0;
    while (len < sizeof buf) {
        ssize_t n = read(in_fd, buf + len, sizeof buf - len);
        if (n <= 0) break;
        len += (size_t)n;
        if (memchr(buf, '\n', len)) break;
    }
    const char *ack = "{\"ok\":true,\"messageId\":\"acker\",\"duplicate\":false}\n";
    return write(out_fd, ack, strlen(ack)) < 0;
}
