/* clock.c: clock_gettime() in seconds. */
#include "config.h"

#include <time.h>

#include "clock.h"

static double now(clockid_t c)
{
        struct timespec ts;
        clock_gettime(c, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double clock_monotonic(void)
{
        return now(CLOCK_MONOTONIC);
}

double clock_wall(void)
{
        return now(CLOCK_REALTIME);
}
