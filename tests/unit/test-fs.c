/* test-fs.c: the file helpers: new files, atomic replacement, mkdir -p. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs.h"
#include "tap.h"

static char dir[] = "/tmp/benchd-test-fs.XXXXXX";

/* The file holds exactly want. */
static void is_content(const char *path, const char *want, const char *what)
{
        char *data = NULL;
        if (fs_read_file(path, 1 << 20, &data, NULL, NULL) < 0)
                data = NULL;
        is_str(data, want, what);
        free(data);
}

static void test_new(void)
{
        char path[256];
        struct bd_err err;
        snprintf(path, sizeof(path), "%s/script.sh", dir);
        mode_t old = umask(022);
        is_int(fs_write_new(path, "#!/bin/sh\n", 10, 0755, &err), 0, "a new file is written");
        is_content(path, "#!/bin/sh\n", "with all its content");
        struct stat st;
        ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0755, "with the mode asked for");
        is_int(fs_write_new(path, "other", 5, 0644, &err), -EEXIST, "an existing file is not overwritten");
        ok(strstr(err.msg, path) != NULL, "the error names the file");
        is_content(path, "#!/bin/sh\n", "and keeps its content");
        umask(077);
        snprintf(path, sizeof(path), "%s/config.json", dir);
        is_int(fs_write_new(path, "{}", 2, 0644, &err), 0, "a second file");
        ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600, "its mode follows the umask");
        umask(old);
        snprintf(path, sizeof(path), "%s/missing/config.json", dir);
        is_int(fs_write_new(path, "{}", 2, 0644, &err), -ENOENT, "no file in a missing directory");
        ok(strstr(err.msg, path) != NULL, "the error names the file");
        ok(access(path, F_OK) < 0, "and nothing is left");
}

/* A target that is no regular file is written where it is: a device stays a
 * device (-o /dev/null), a FIFO gets the bytes, a directory is an error. */
static void test_not_regular(void)
{
        char path[256];
        struct bd_err err;
        struct stat st;
        snprintf(path, sizeof(path), "%s/fifo", dir);
        if (mkfifo(path, 0600) == 0) {
                int rd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC); /* a reader, so the write does not block */
                is_int(fs_write_atomic(path, "bytes", 5, 0644, &err), 0, "a FIFO is written");
                char buf[16] = "";
                ok(rd >= 0 && read(rd, buf, sizeof(buf) - 1) == 5 && !strcmp(buf, "bytes"), "  it gets the bytes");
                ok(stat(path, &st) == 0 && S_ISFIFO(st.st_mode), "  and is still a FIFO");
                if (rd >= 0)
                        close(rd);
        } else
                ok(0, "mkfifo");
        snprintf(path, sizeof(path), "%s/null", dir);
        if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0) {
                is_int(fs_write_atomic(path, "x", 1, 0644, &err), 0, "a character device (a /dev/null of our own) is written");
                ok(stat(path, &st) == 0 && S_ISCHR(st.st_mode), "  and is still a device, not a file");
                is_int(fs_write_replace(path, "x", 1, 0644, &err), 0, "  fs_write_replace too");
                ok(stat(path, &st) == 0 && S_ISCHR(st.st_mode), "  still a device");
        } else
                printf("# skipped the device case: mknod: %s (not root)\n", strerror(errno));
        snprintf(path, sizeof(path), "%s/adir", dir);
        mkdir(path, 0755);
        is_int(fs_write_atomic(path, "x", 1, 0644, &err), -EISDIR, "a directory is an error");
        like(err.msg, "it is a directory", "  saying so");
        ok(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "  and stays a directory");
}

static void test_replace(void)
{
        char path[256], sub[256];
        struct bd_err err;
        snprintf(path, sizeof(path), "%s/state.json", dir);
        is_int(fs_write_atomic(path, "one", 3, 0640, &err), 0, "an atomic write creates");
        is_int(fs_write_replace(path, "two", 3, 0644, &err), 0, "and a replacement replaces");
        is_content(path, "two", "with the new content");
        struct stat st;
        ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644, "and the new mode");
        is_int(fs_write_atomic(dir, "x", 1, 0644, &err), -EISDIR, "a directory is not replaced by a file");
        snprintf(sub, sizeof(sub), "%s/a/b/c", dir);
        is_int(fs_mkdir_p(sub, 0755), 0, "mkdir -p creates the parents");
        ok(stat(sub, &st) == 0 && S_ISDIR(st.st_mode), "the directory exists");
        is_int(fs_mkdir_p(sub, 0755), 0, "and an existing one is fine");
        is_int(fs_mkdir_p(path, 0755), -ENOTDIR, "a file in the way is an error");
}

int main(void)
{
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        test_new();
        test_replace();
        test_not_regular();
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                ok(0, "temporary directory removed");
        return done_testing();
}
