/* cmd-logs.c: benchctl logs: collect a run's trial logs into its directory
 * and print or follow them. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchctl.h"
#include "fs.h"
#include "run.h"
#include "strutil.h"

#define OPT_FOLLOW 'f'
#define OPT_TRIAL 't'

static const struct bd_option options[] = {
        { "follow", OPT_FOLLOW, NULL, "keep printing as the logs grow, until the run ends" },
        { "trial", OPT_TRIAL, "N", "only trial N" },
        { 0 }
};

/* Copies a trial log into RUNDIR/logs/ and returns its text; when the log
 * directory's copy is gone or shorter than the one kept (logs only grow), the
 * kept one, which is then left as it is.  NULL when neither can be read
 * (err says why). */
static char *collect(const struct bd_run *r, const struct bd_trial *t, char **ret_path, bool *ret_kept,
                     struct bd_err *err)
{
        char *text = NULL;
        size_t len = 0;
        *ret_path = trial_log_best(r, t, ret_kept);
        if (!*ret_path) {
                bd_err_set(err, -ENOENT, "no log recorded");
                return NULL;
        }
        if (fs_read_file(*ret_path, 1u << 30, &text, &len, err) < 0)
                return NULL;
        if (!*ret_kept) {
                _cleanup_free_ char *dst = trial_log_copy(r, t);
                _cleanup_free_ char *dir = xasprintf("%s/logs", r->rundir);
                if (fs_mkdir_p(dir, 0755) == 0)
                        (void) fs_write_atomic(dst, text, len, 0644, NULL);
        }
        return text;
}

static int follow(struct bd_store *store, const char *id, long only)
{
        size_t *off = NULL;
        int n = 0, ret = BD_EXIT_OK;
        for (;;) {
                struct bd_run r;
                struct bd_trial *t;
                if (load_run(store, id, &r, &t))
                        return BD_EXIT_FAIL;
                if (!off) {
                        n = r.ntrials;
                        off = xcalloc((size_t)n, sizeof(*off));
                }
                bool final = bd_state_final(r.state);
                for (int i = 0; i < n; i++) {
                        if ((only && t[i].trial != only) || !t[i].log_path)
                                continue;
                        _cleanup_free_ char *text = NULL;
                        size_t len = 0;
                        if (fs_read_file(t[i].log_path, 1u << 30, &text, &len, NULL) < 0 || len <= off[i])
                                continue;
                        if (off[i] == 0)
                                printf("==> trial %d: %s <==\n", t[i].trial, t[i].log_path);
                        fwrite(text + off[i], 1, len - off[i], stdout);
                        off[i] = len;
                }
                fflush(stdout);
                bool printed = false;
                for (int i = 0; i < n; i++)
                        printed |= off[i] > 0;
                if (final && !printed) {
                        /* nothing to show: say why, rather than end in silence */
                        ret = BD_EXIT_FAIL;
                        bd_error("run %s ended (%s%s%s) before %s wrote a log", r.id, bd_state_name(r.state),
                                 r.reason ? ": " : "", r.reason ? r.reason : "",
                                 only ? "the trial" : "any trial");
                }
                if (final)
                        for (int i = 0; i < n; i++)
                                if (!only || t[i].trial == only) {
                                        char *path = NULL;
                                        bool kept;
                                        struct bd_err err;
                                        free(collect(&r, &t[i], &path, &kept, &err));
                                        free(path);
                                }
                bd_trials_free(t, r.ntrials);
                bd_run_release(&r);
                if (final)
                        break;
                sleep(1);
        }
        free(off);
        return ret;
}

int cmd_logs(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        bool fol = false;
        long only = 0;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == OPT_FOLLOW)
                        fol = true;
                else if (c == OPT_TRIAL)
                        opts_number(&o, "trial", arg, 1, LONG_MAX, &only);
        }
        int next = opts_finish(&o, 1, 1, "RUN");
        if (next < 0)
                return opts_exit(next);
        struct bd_store store;
        if (open_store(&store))
                return BD_EXIT_FAIL;
        if (fol) {
                int ret = follow(&store, argv[next], only);
                store_close(&store);
                return ret;
        }
        struct bd_run r;
        struct bd_trial *t;
        if (load_run(&store, argv[next], &r, &t)) {
                store_close(&store);
                return BD_EXIT_FAIL;
        }
        int ret = BD_EXIT_OK;
        if (only > r.ntrials) {
                bd_error("--trial %ld: run %s has %d trial%s", only, r.id, r.ntrials, r.ntrials == 1 ? "" : "s");
                ret = BD_EXIT_FAIL;
        }
        for (int i = 0; ret == BD_EXIT_OK && i < r.ntrials; i++) {
                if (only && t[i].trial != only)
                        continue;
                struct bd_err err;
                _cleanup_free_ char *path = NULL;
                bool kept = false;
                _cleanup_free_ char *text = collect(&r, &t[i], &path, &kept, &err);
                if (!text && !bd_state_final(t[i].state))
                        printf("==> trial %d: no log yet (%s) <==\n", t[i].trial, bd_state_name(t[i].state));
                else if (!text)
                        printf("==> trial %d: no log (%s): %s <==\n", t[i].trial, bd_state_name(t[i].state), err.msg);
                if (!text)
                        continue;
                if (kept)
                        printf("==> trial %d: %s (collected earlier; %s is %s) <==\n%s", t[i].trial, path,
                               t[i].log_path, access(t[i].log_path, F_OK) == 0 ? "shorter now" : "gone", text);
                else
                        printf("==> trial %d: %s <==\n%s", t[i].trial, path, text);
                if (*text && text[strlen(text) - 1] != '\n')
                        putchar('\n');
        }
        bd_trials_free(t, r.ntrials);
        bd_run_release(&r);
        store_close(&store);
        return ret;
}
