/* Runs a command ROUNDS times, one after another, and prints each run's CPU (user + system,
 * microseconds) and peak RSS (KB) from wait4: "cpu_us rss_kb" per line. A C parent, so that
 * the peak RSS a child inherits across fork and execve is this program's, about 1 MB, and not
 * a Python interpreter's. Usage: measure ROUNDS COMMAND [ARG...] (stdout of the command to /dev/null) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s ROUNDS COMMAND [ARG...]\n", argv[0]); return 64; }
    int rounds = atoi(argv[1]);
    for (int i = 0; i < rounds; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            execv(argv[2], argv + 2);
            _exit(127);
        }
        int status;
        struct rusage usage;
        if (wait4(pid, &status, 0, &usage) != pid) { perror("wait4"); return 70; }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) { fprintf(stderr, "%s exited %d\n", argv[2], WEXITSTATUS(status)); return 70; }
        long cpu = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000L + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
        printf("%ld %ld\n", cpu, usage.ru_maxrss);
    }
    return 0;
}
