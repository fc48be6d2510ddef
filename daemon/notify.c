/* notify.c: sd_notify, the watchdog period and socket activation. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "macro.h"
#include "notify.h"
#include "strutil.h"

int notify_send(const char *state)
{
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len;
        if (!path || !*path)
                return 0;
        len = strlen(path);
        if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
                return -EINVAL;
        memcpy(sa.sun_path, path, len);
        if (sa.sun_path[0] == '@')
                sa.sun_path[0] = '\0';  /* abstract namespace */
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
                   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
                return -errno;
        return 1;
}

int notify_sendf(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *s = xvasprintf(fmt, ap);
        va_end(ap);
        return notify_send(s);
}

/* True when the variable is unset or holds our process id. */
static int pid_is_ours(const char *var, bool required)
{
        const char *s = getenv(var);
        long pid;
        if (!s)
                return !required;
        return str_parse_long(s, &pid) == 0 && pid == (long)getpid();
}

uint64_t notify_watchdog_usec(void)
{
        const char *s = getenv("WATCHDOG_USEC");
        char *end;
        unsigned long long usec;
        if (!s || !pid_is_ours("WATCHDOG_PID", false))
                return 0;
        errno = 0;
        usec = strtoull(s, &end, 10);
        if (errno || end == s || *end)
                return 0;
        return usec;
}

int notify_listen_fds(void)
{
        const char *s = getenv("LISTEN_FDS");
        long n;
        if (!s || !pid_is_ours("LISTEN_PID", true))
                return 0;
        if (str_parse_long(s, &n) < 0 || n < 0 || n > 1024)
                return -EINVAL;
        for (int fd = NOTIFY_LISTEN_FDS_START; fd < NOTIFY_LISTEN_FDS_START + n; fd++) {
                int flags = fcntl(fd, F_GETFD);
                if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
                        return -errno;
        }
        unsetenv("LISTEN_PID");
        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_FDNAMES");
        return (int)n;
}
