/* The baseline of cli-start-bench.sh: the least a client can do to run `sotto ls`, in C.
 * Connects to control.sock, sends one listConversations request, copies the reply line to
 * stdout, exits. Usage: ls-client RUNTIME_DIR */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s RUNTIME_DIR\n", argv[0]); return 64; }
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    snprintf(address.sun_path, sizeof address.sun_path, "%s/control.sock", argv[1]);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); return 69; }
    const char *request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"listConversations\",\"params\":{}}\n";
    if (write(fd, request, strlen(request)) != (ssize_t)strlen(request)) { perror("write"); return 70; }
    static char buffer[1 << 16];
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n <= 0) return n == 0 ? 0 : 70;
        fwrite(buffer, 1, (size_t)n, stdout);
        if (buffer[n - 1] == '\n') return 0;
    }
}
