/* log.c: standard error or the journal. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-journal.h>
#endif

#include "log.h"
#include "strutil.h"

int log_max_level = LOG_INFO;
static const char *log_ident = "benchd";
static bool journal;
static bool structured;          /* journald's native socket is there */
static bool use_syslog;

static const char *const level_names[] = {
        "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

/* JOURNAL_STREAM is "DEVICE:INODE" of the stream systemd connected to the
 * journal; it is ours when standard error is that stream. */
static bool stderr_is_journal(void)
{
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(const char *ident)
{
        log_ident = ident;
        journal = stderr_is_journal();
        /* sd_journal_send() drops messages silently when journald's socket
         * is missing: then the stream's "<N>" lines are the way in */
        structured = journal && access("/run/systemd/journal/socket", W_OK) == 0;
}

void log_use_syslog(void)
{
        openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
        use_syslog = true;
        journal = false;
}

bool log_to_journal(void)
{
        return journal;
}

int log_level_parse(const char *s)
{
        long n;
        if (str_parse_long(s, &n) == 0)
                return n >= 0 && n <= 7 ? (int)n : -EINVAL;
        for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
                if (streq(s, level_names[i]))
                        return (int)i;
        if (streq(s, "error"))
                return LOG_ERR;
        return -EINVAL;
}

void log_internal(int level, const char *file, int line, const char *func, const char *fmt, ...)
{
        int saved = errno;
        char msg[2048];
        va_list ap;
        va_start(ap, fmt);
        errno = saved;  /* for %m */
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (use_syslog)
                syslog(level, "%s", msg);
        else if (journal) {
                int r = -1;
#ifdef HAVE_SYSTEMD
                if (structured)
                        r = sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%i", level, "CODE_FILE=%s", file, "CODE_LINE=%i",
                                            line, "CODE_FUNC=%s", func, "SYSLOG_IDENTIFIER=%s", log_ident, NULL);
#endif
                /* the stream journald reads parses the priority prefix */
                if (r < 0)
                        fprintf(stderr, "<%d>%s\n", level, msg);
        } else if (level <= LOG_WARNING || level == LOG_DEBUG)
                fprintf(stderr, "%s: %s: %s\n", log_ident, level <= LOG_ERR ? "error" : level_names[level], msg);
        else
                fprintf(stderr, "%s: %s\n", log_ident, msg);
        errno = saved;
}
