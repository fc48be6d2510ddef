/* log.h: the daemon's log, at syslog priorities.
 *
 * Messages go to standard error as "benchd: warning: MESSAGE".  Under systemd
 * (JOURNAL_STREAM names our standard error) they go to the journal instead:
 * with libsystemd as structured entries (MESSAGE, PRIORITY, CODE_FILE,
 * CODE_LINE, CODE_FUNC, SYSLOG_IDENTIFIER), without it as "<N>MESSAGE" lines
 * that journald files at priority N.  The level is checked before the
 * arguments are evaluated.  Messages start lowercase, have no final period,
 * and say what failed first.  Library code (lib/) does not log.
 */
#ifndef BD_LOG_H
#define BD_LOG_H

#include <stdbool.h>
#include <syslog.h>

#include "macro.h"

extern int log_max_level;

/* ident: the program name; detects the journal. */
void log_init(const char *ident);
bool log_to_journal(void);
/* From now on to syslog (a daemon in the background has no stderr). */
void log_use_syslog(void);
/* "err", "warning", "notice", "info", "debug" (or a number 0-7); -EINVAL when unknown. */
int log_level_parse(const char *s);

void log_internal(int level, const char *file, int line, const char *func, const char *fmt, ...) _printf_(5, 6);

#define log_full(level, ...)                                                            \
        do {                                                                            \
                if ((level) <= log_max_level)                                           \
                        log_internal((level), __FILE__, __LINE__, __func__, __VA_ARGS__); \
        } while (0)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)

/* Logs at LOG_ERR with errno set to -r (so %m names it) and returns r. */
#define log_error_errno(r, ...)                                                         \
        ({                                                                              \
                int _r = (r);                                                           \
                errno = _r < 0 ? -_r : _r;                                              \
                log_full(LOG_ERR, __VA_ARGS__);                                         \
                _r < 0 ? _r : -_r;                                                      \
        })

#endif
