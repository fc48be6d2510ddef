/* sched-common.c: helpers shared by the Slurm back ends. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "scheduler.h"

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
