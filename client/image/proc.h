/* proc.h: run another program and wait for it, for the commands that drive
 * tools (mmdebstrap, dpkg, mksquashfs, tar, podman). */
#ifndef BD_PROC_H
#define BD_PROC_H

#include <stdbool.h>

#include "buf.h"

struct proc_opts {
        const char *log;        /* append stdout and stderr to this file (else inherited) */
        struct bd_buf *out;     /* or collect stdout here (stderr to log or inherited) */
        const char *dir;        /* working directory of the child */
        /* called about five times a second while the program runs (not
         * with out); NULL: none */
        void (*tick)(void *ctx);
        void *tick_ctx;
};

/* Runs argv[0] (searched in PATH) with argv and waits.  Returns its exit
 * status (0 to 255), 128 + the signal that ended it, or -errno when it
 * could not be started (-ENOENT: no such program). */
int proc_run(char *const argv[], const struct proc_opts *o);

/* From now on SIGINT, SIGTERM and SIGHUP do not end this process: they are
 * recorded, and one sent by another process (kill, scancel) is passed on to
 * the program proc_run() is waiting for (a terminal's reaches it by itself),
 * so that the caller can clean up and exit 128 + the signal. */
void proc_catch_signals(void);
/* The signal recorded since proc_catch_signals(), else 0. */
int proc_interrupted(void);

/* The last non-empty line of file path, for an
 * error message (caller frees; NULL when there is none). */
char *proc_log_tail(const char *path);

/* Whether a program is found in PATH. */
bool proc_have(const char *prog);

#endif
