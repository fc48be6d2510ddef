/* sched-common.c: helpers shared by the Slurm back ends. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "macro.h"
#include "scheduler.h"
#include "clock.h"

static char unreachable_reason[256];
static double unreachable_at = -1;

void sched_note_unreachable(const char *reason)
{
        snprintf(unreachable_reason, sizeof(unreachable_reason), "%s", reason);
        unreachable_at = clock_monotonic();
}

int sched_unreachable(const char *what, struct bd_err *err)
{
        if (unreachable_at < 0 || clock_monotonic() - unreachable_at >= SCHED_UNREACHABLE_S)
                return 0;
        return bd_err_set(err, -EHOSTUNREACH, "%s: %s", what, unreachable_reason);
}

char *slurm_controller_name(void)
{
        const char *conf = getenv("SLURM_CONF");
        FILE *f = fopen(conf && *conf ? conf : "/etc/slurm/slurm.conf", "re");
        if (!f)
                return NULL;
        char line[1024];
        char *name = NULL;
        while (!name && fgets(line, sizeof(line), f)) {
                char *p = line;
                while (isspace((unsigned char)*p))
                        p++;
                const char *keys[] = { "SlurmctldHost=", "ControlMachine=" };
                for (size_t i = 0; i < ARRAY_SIZE(keys) && !name; i++)
                        if (!strncasecmp(p, keys[i], strlen(keys[i]))) {
                                p += strlen(keys[i]);
                                p[strcspn(p, " \t\r\n#")] = '\0';
                                name = xstrdup(p);
                        }
        }
        fclose(f);
        if (!name)
                return NULL;
        /* port for the message: SlurmctldPort, default 6817 */
        return name;
}

long slurm_time_minutes(const char *s)
{
        if (!strcmp(s, "UNLIMITED") || !strcmp(s, "INFINITE"))
                return -1;
        long days = 0, f[3] = { 0 };
        int n = 0;
        const char *p = s;
        if (strchr(p, '-')) {
                days = strtol(p, (char **)&p, 10);
                p++;
        }
        while (*p && n < 3) {
                f[n++] = strtol(p, (char **)&p, 10);
                if (*p == ':')
                        p++;
        }
        long h = 0, m = 0, sec = 0;
        if (days) {             /* D-HH, D-HH:MM, D-HH:MM:SS */
                h = f[0];
                m = n > 1 ? f[1] : 0;
                sec = n > 2 ? f[2] : 0;
        } else if (n == 1) {    /* minutes */
                m = f[0];
        } else if (n == 2) {    /* MM:SS */
                m = f[0];
                sec = f[1];
        } else {                /* HH:MM:SS */
                h = f[0];
                m = f[1];
                sec = f[2];
        }
        return days * 1440 + h * 60 + m + (sec + 59) / 60;
}

int slurm_failed_nodes(const char *nodes, char *ret, size_t size, struct bd_err *err)
{
        struct slurm_down *down;
        int n;
        ret[0] = '\0';
        int r = slurm_down_nodes(nodes, &down, &n, err);
        if (r < 0)
                return r;
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        for (int i = 0; i < n; i++)
                buf_printf(&b, "%s%s%s%s%s", i ? ", " : "", down[i].name, down[i].reason[0] ? " (" : "",
                           down[i].reason, down[i].reason[0] ? ")" : "");
        if (n)
                snprintf(ret, size, "%s", b.s);
        free(down);
        return n;
}
