/* meter.c: the progress line of long local steps (meter.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "meter.h"

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void format_time(double s, char *buf, size_t n)
{
        if (s < 60)
                snprintf(buf, n, "%.0fs", s);
        else if (s < 3600)
                snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
        else
                snprintf(buf, n, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

void meter_start(struct meter *m, const char *what, bool quiet)
{
        memset(m, 0, sizeof(*m));
        pthread_mutex_init(&m->lock, NULL);
        m->what = what;
        m->quiet = quiet;
        m->tty = isatty(STDERR_FILENO);
        m->start = now_s();
        m->printed_at = m->start;
}

/* The latest state, shown when its time has come. */
static void show(struct meter *m, const char *line)
{
        pthread_mutex_lock(&m->lock);
        double t = now_s();
        snprintf(m->line, sizeof(m->line), "%s", line);
        if (m->tty && t - m->drawn_at >= 0.2) {
                fprintf(stderr, "\r\033[K%s: %s", m->what, line);
                fflush(stderr);
                m->drawn = true;
                m->drawn_at = t;
        } else if (!m->tty && t - m->printed_at >= (m->every > 0 ? m->every : 60)) {
                fprintf(stderr, "%s: %s\n", m->what, line);
                m->printed_at = t;
        }
        pthread_mutex_unlock(&m->lock);
}

void meter_count(struct meter *m, const char *unit, uint64_t done, uint64_t total)
{
        if (m->quiet)
                return;
        double el = now_s() - m->start;
        double rate = el > 0 ? (double)done / el : 0;
        char elapsed[32], left[32] = "--";
        format_time(el, elapsed, sizeof(elapsed));
        if (rate > 0 && total >= done)
                format_time((double)(total - done) / rate, left, sizeof(left));
        char line[256];
        snprintf(line, sizeof(line), "%3.0f%% %llu/%llu %s, %.1f/s, %s elapsed, %s left",
                 total ? 100.0 * (double)done / (double)total : 100.0,
                 (unsigned long long)done, (unsigned long long)total, unit, rate, elapsed, left);
        show(m, line);
}

void meter_bytes_text(uint64_t n, char *buf, size_t len)
{
        if (n >= 1000000000ull)
                snprintf(buf, len, "%.2f GB", (double)n / 1e9);
        else if (n >= 1000000)
                snprintf(buf, len, "%.1f MB", (double)n / 1e6);
        else if (n >= 1000)
                snprintf(buf, len, "%.1f kB", (double)n / 1e3);
        else
                snprintf(buf, len, "%llu B", (unsigned long long)n);
}

void meter_bytes(struct meter *m, const char *verb, uint64_t done, uint64_t total, uint64_t base)
{
        if (m->quiet)
                return;
        double el = now_s() - m->start;
        double rate = el > 0 && done > base ? (double)(done - base) / el : 0;
        char elapsed[32], left[32] = "--", d[32], t[32], r[32], bar[24];
        format_time(el, elapsed, sizeof(elapsed));
        if (rate > 0 && total >= done)
                format_time((double)(total - done) / rate, left, sizeof(left));
        meter_bytes_text(done, d, sizeof(d));
        meter_bytes_text(total, t, sizeof(t));
        meter_bytes_text((uint64_t)rate, r, sizeof(r));
        double share = total ? (double)done / (double)total : 1;
        int filled = (int)(share * 20 + 0.5);
        for (int i = 0; i < 20; i++)
                bar[i] = i < filled ? '#' : '.';
        bar[20] = '\0';
        char line[256];
        snprintf(line, sizeof(line), "[%s] %3.0f%% %s of %s %s, %s/s, %s elapsed, %s left", bar, 100 * share, d, t,
                 verb, r, elapsed, left);
        show(m, line);
}

void meter_status(struct meter *m, const char *text)
{
        if (m->quiet)
                return;
        char elapsed[32], line[256];
        format_time(now_s() - m->start, elapsed, sizeof(elapsed));
        snprintf(line, sizeof(line), "%s elapsed, %s", elapsed, text);
        show(m, line);
}

void meter_line(struct meter *m, const char *text)
{
        pthread_mutex_lock(&m->lock);
        if (m->drawn)
                fputs("\r\033[K", stderr);
        fprintf(stderr, "%s\n", text);
        m->drawn = false;
        m->printed_at = now_s();
        pthread_mutex_unlock(&m->lock);
}

void meter_end(struct meter *m)
{
        if (m->drawn)   /* the last state, which the throttle may have held back */
                fprintf(stderr, "\r\033[K%s: %s\n", m->what, m->line);
        m->drawn = false;
        pthread_mutex_destroy(&m->lock);
}
