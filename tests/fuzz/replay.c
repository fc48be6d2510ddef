/* replay.c: runs a harness on files, without libFuzzer.
 *
 *     replay-NAME FILE|DIR...
 *
 * Calls LLVMFuzzerTestOneInput() once per file (the files of a directory in
 * name order, hidden ones left out), each in a buffer of exactly its size so
 * that AddressSanitizer sees a read past the end, and prints "replayed N
 * inputs".  This is how make check runs the corpora (t0960), under the
 * sanitizers where the build has them, and how a finding of bench/fuzz.sh
 * is reproduced in a debugger.  A broken promise aborts; the file being run
 * is named on standard error first when the process dies.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* The sanitizers' runtime, when linked: called before a report ends the process. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static char current[4096];

static void say_current(void)
{
        static const char what[] = "replay: the input was ";
        if (!current[0])
                return;
        (void) !write(STDERR_FILENO, what, sizeof(what) - 1);
        (void) !write(STDERR_FILENO, current, strlen(current));
        (void) !write(STDERR_FILENO, "\n", 1);
}

static void on_signal(int sig)
{
        say_current();
        signal(sig, SIG_DFL);
        raise(sig);
}

/* Reads a whole file into a buffer of its size (an empty one: a pointer to
 * no bytes, as libFuzzer gives). */
static int read_exact(const char *path, uint8_t **ret, size_t *ret_size)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        size_t size = (size_t)st.st_size, got = 0;
        _cleanup_free_ uint8_t *data = xmalloc(size);
        while (got < size) {
                ssize_t n = read(fd, data + got, size - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO;
                got += (size_t)n;
        }
        *ret = TAKE_PTR(data);
        *ret_size = size;
        return 0;
}

static int run_file(const char *path)
{
        uint8_t *data = NULL;
        size_t size = 0;
        int r = read_exact(path, &data, &size);
        if (r < 0) {
                fprintf(stderr, "replay: cannot read '%s': %s\n", path, strerror(-r));
                return r;
        }
        snprintf(current, sizeof(current), "%s", path);
        LLVMFuzzerTestOneInput(data, size);
        current[0] = '\0';
        free(data);
        return 0;
}

static int skip_hidden(const struct dirent *e)
{
        return e->d_name[0] != '.';
}

/* Runs every regular file of a directory; returns how many, or a negative errno. */
static long run_dir(const char *path)
{
        struct dirent **names;
        long count = 0;
        int n = scandir(path, &names, skip_hidden, alphasort), r = 0;
        if (n < 0) {
                fprintf(stderr, "replay: cannot list '%s': %s\n", path, strerror(errno));
                return -errno;
        }
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *p = xasprintf("%s/%s", path, names[i]->d_name);
                struct stat st;
                if (r == 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
                        r = run_file(p);
                        count++;
                }
                free(names[i]);
        }
        free(names);
        return r < 0 ? r : count;
}

int main(int argc, char **argv)
{
        long total = 0;
        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
                return 2;
        }
        if (__sanitizer_set_death_callback)
                __sanitizer_set_death_callback(say_current);
        signal(SIGABRT, on_signal);
        signal(SIGSEGV, on_signal);
        signal(SIGBUS, on_signal);
        signal(SIGFPE, on_signal);
        signal(SIGILL, on_signal);
        for (int i = 1; i < argc; i++) {
                struct stat st;
                long n;
                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "replay: '%s': %s\n", argv[i], strerror(errno));
                        return 1;
                }
                n = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]) == 0 ? 1 : -1;
                if (n < 0)
                        return 1;
                total += n;
        }
        printf("replayed %ld inputs\n", total);
        return 0;
}
