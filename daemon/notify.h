/* notify.h: the service manager's protocols, spoken directly (as Slurm's
 * xsystemd.c does), so they work the same with or without libsystemd.
 *
 *   notify_send("READY=1\nSTATUS=serving")   sd_notify(0, ...): a datagram to
 *                                            $NOTIFY_SOCKET; 0 when there is none
 *   notify_watchdog_usec()                   sd_watchdog_enabled(): the period
 *                                            from $WATCHDOG_USEC when
 *                                            $WATCHDOG_PID is ours (or unset), else 0
 *   notify_listen_fds()                      sd_listen_fds(1): the sockets passed
 *                                            from fd 3 on when $LISTEN_PID is ours;
 *                                            marks them close-on-exec and unsets the
 *                                            variables
 *
 * All return a negative errno on failure.
 */
#ifndef BD_NOTIFY_H
#define BD_NOTIFY_H

#include <stdint.h>

#define NOTIFY_LISTEN_FDS_START 3

int notify_send(const char *state);
int notify_sendf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t notify_watchdog_usec(void);
int notify_listen_fds(void);

#endif
