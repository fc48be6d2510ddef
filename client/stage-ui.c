/* stage-ui.c: progress bar and problem lists of stage jobs. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "benchctl.h"
#include "stage-ui.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
        got_signal = sig;
}

static void format_eta(double s, char *buf, size_t len)
{
        if (s < 0)
                snprintf(buf, len, "--");
        else if (s < 60)
                snprintf(buf, len, "%.0fs", s);
        else if (s < 3600)
                snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
        else
                snprintf(buf, len, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

static void progress_line(const struct bd_stage_progress *p, const char *what, bool bar, char *out, size_t len)
{
        char done[32], total[32], rate[32], eta[32];
        stage_format_size(p->bytes_done, done, sizeof(done));
        stage_format_size(p->bytes_total, total, sizeof(total));
        stage_format_size((uint64_t)p->rate, rate, sizeof(rate));
        format_eta(p->eta, eta, sizeof(eta));
        if (p->phase < PHASE_TRANSFER) {
                snprintf(out, len, "%s: %s", what, stage_phase_name(p->phase));
                return;
        }
        double frac = p->bytes_total ? (double)p->bytes_done / (double)p->bytes_total
                                     : p->files_total ? (double)p->files_done / (double)p->files_total : 1;
        if (frac > 1)
                frac = 1;
        char barbuf[32] = "";
        if (bar) {
                int n = (int)(frac * 20 + 0.5);
                barbuf[0] = '[';
                for (int i = 0; i < 20; i++)
                        barbuf[1 + i] = i < n ? '#' : '.';
                barbuf[21] = ']';
                barbuf[22] = ' ';
                barbuf[23] = '\0';
        }
        char errs[48] = "";
        if (p->errors)
                snprintf(errs, sizeof(errs), ", %" PRIu64 " error%s", p->errors, p->errors == 1 ? "" : "s");
        snprintf(out, len, "%s: %s%3.0f%% %" PRIu64 "/%" PRIu64 " file%s %s/%s %s/s ETA %s%s", what, barbuf,
                 frac * 100, p->files_done, p->files_total, p->files_total == 1 ? "" : "s", done, total, rate, eta,
                 errs);
}

int stage_ui_run(struct bd_stage *s, const char *what, bool quiet)
{
        struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        got_signal = 0;
        struct bd_err err;
        if (stage_start(s, &err) < 0) {
                bd_error("%s", err.msg);
                return -EIO;
        }
        bool tty = isatty(STDERR_FILENO);
        double last_plain = 0;
        enum bd_stage_phase last_phase = _PHASE_MAX;
        bool cancelled = false;
        bool drawn = false;
        for (;;) {
                stage_wait_for(s, 0.2);
                if (got_signal && !cancelled) {
                        stage_cancel(s);
                        cancelled = true;
                }
                struct bd_stage_progress p;
                stage_progress(s, &p);
                bool over = p.state != STAGE_RUNNING && p.state != STAGE_IDLE;
                if (!quiet) {
                        char line[256];
                        progress_line(&p, what, tty, line, sizeof(line));
                        if (tty) {
                                fprintf(stderr, "\r\033[K%s", line);
                                drawn = true;
                        } else if (!over && (p.phase != last_phase || p.elapsed - last_plain >= 5)) {
                                fprintf(stderr, "%s\n", line);
                                last_plain = p.elapsed;
                        }
                        last_phase = p.phase;
                }
                if (over)
                        break;
        }
        if (drawn)
                fputs("\n", stderr);
        int r = stage_wait(s);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        return r;
}

int stage_ui_exit(int r)
{
        if (got_signal)
                return BD_EXIT_SIGNAL + got_signal;
        return r == 0 ? BD_EXIT_OK : BD_EXIT_FAIL;
}

void stage_ui_problems(struct bd_stage *s, FILE *f, const char *prefix, unsigned severities, size_t max)
{
        const struct bd_stage_problem *pr;
        size_t n = stage_problems(s, &pr), shown = 0, more = 0;
        for (size_t i = 0; i < n; i++) {
                if (!(severities & SEVERITY_BIT(pr[i].severity)))
                        continue;
                if (max && shown >= max) {
                        more++;
                        continue;
                }
                fprintf(f, "%s%s%s\n", prefix, pr[i].severity == SEV_WARNING ? "warning: " : "", pr[i].msg);
                shown++;
        }
        if (more)
                fprintf(f, "%s... and %zu more (--json lists them all)\n", prefix, more);
}
