/* cmd-stage.c: benchctl stage: copy a dataset to node-local disk, verified
 * and resumable, in this process (--local) or on many nodes at once through
 * their benchd (--system, --nodes: stage-remote.c). */
#include "config.h"

#include <float.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>

#include "benchctl.h"
#include "benchd-defaults.h"
#include "json.h"
#include "nodes.h"
#include "stage-remote.h"
#include "stage-ui.h"
#include "store.h"
#include "strutil.h"

#define OPT_NODES 400
#define OPT_SRC 401
#define OPT_DST 402
#define OPT_VERIFY 403
#define OPT_VERIFY_ONLY 404
#define OPT_DELETE 405
#define OPT_BWLIMIT 406
#define OPT_FSYNC 407
#define OPT_REHASH 408
#define OPT_STATE_DIR 409
#define OPT_COPY_METHOD 410
#define OPT_JSON 411
#define OPT_TOKEN_FILE 412
#define OPT_PORT 413
#define OPT_TIMEOUT 414

static const struct bd_option options[] = {
        { "local", 'l', NULL, "stage on this machine, in this process" },
        { "system", 's', "SYSTEM", "stage on every node of SYSTEM through its benchd" },
        { "nodes", OPT_NODES, "N1,N2", "stage on these nodes through their benchd (HOST[:PORT], comma-separated)" },
        { "src", OPT_SRC, "DIR", "the dataset (shared storage)" },
        { "dst", OPT_DST, "DIR", "where it goes (node-local disk)" },
        { "name", 'n', "NAME", "dataset name (default: the last component of --src)" },
        { "verify", OPT_VERIFY, NULL, "also checksum files already at the destination; recopy damaged ones" },
        { "verify-only", OPT_VERIFY_ONLY, NULL, "check the destination against the manifest, change nothing" },
        { "delete", OPT_DELETE, NULL, "remove from the destination what the manifest does not list" },
        { "bwlimit", OPT_BWLIMIT, "MB/s", "copy at most MB/s (10^6 bytes a second)" },
        { "workers", 'j', "N", "worker threads (default: 4 per CPU, 16 to 64)" },
        { "fsync", OPT_FSYNC, "POLICY", "none, end (default: sync once before completing) or file" },
        { "rehash", OPT_REHASH, NULL, "checksum every source file, ignoring a stored manifest" },
        { "state-dir", OPT_STATE_DIR, "DIR", "state files (default: $BENCHD_HOME/stage)" },
        { "copy-method", OPT_COPY_METHOD, "M", "auto (default), copy_file_range, sendfile or readwrite" },
        { "json", OPT_JSON, NULL, "print the result as JSON" },
        { "quiet", 'q', NULL, "no progress output" },
        { "token-file", OPT_TOKEN_FILE, "FILE", "benchd's token (default: $BENCHD_TOKEN, the system's benchd.token_file)" },
        { "port", OPT_PORT, "PORT", "benchd's port where a node gives none (default: the system's, " BD_PORT_STR ")" },
        { "timeout", OPT_TIMEOUT, "MS", "wait this long for each answer of a node's benchd (default 10000)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

static cJSON *result_json(struct bd_stage *s, const char *name, const char *src, const char *dst)
{
        struct bd_stage_progress p;
        stage_progress(s, &p);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", name);
        _cleanup_free_ char *esrc = src ? manifest_escaped(src) : NULL;
        _cleanup_free_ char *edst = manifest_escaped(dst);
        cJSON_AddItemToObject(o, "src", esrc ? cJSON_CreateString(esrc) : cJSON_CreateNull());
        cJSON_AddStringToObject(o, "dst", edst);
        cJSON_AddStringToObject(o, "state", stage_state_name(p.state));
        cJSON_AddItemToObject(o, "error", stage_error(s) ? cJSON_CreateString(stage_error(s)) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "progress", stage_progress_json(&p));
        const struct bd_manifest *mf = stage_manifest(s);
        char hex[33];
        if (mf)
                manifest_sum_hex(mf->sum, hex);
        cJSON_AddItemToObject(o, "manifest", mf ? cJSON_CreateString(hex) : cJSON_CreateNull());
        const char *mp = stage_manifest_path(s);
        _cleanup_free_ char *emp = mp ? manifest_escaped(mp) : NULL;
        cJSON_AddItemToObject(o, "manifest_path", emp ? cJSON_CreateString(emp) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "problems", stage_problems_json(s, 0));
        return o;
}

static void print_summary(struct bd_stage *s, bool verify_only, const char *name, const char *dst)
{
        struct bd_stage_progress p;
        stage_progress(s, &p);
        char size[32], rate[32];
        stage_format_size(p.bytes_total, size, sizeof(size));
        stage_format_size(p.elapsed > 0 ? (uint64_t)((double)p.bytes_copied / p.elapsed) : 0, rate, sizeof(rate));
        const struct bd_manifest *mf = stage_manifest(s);
        char hex[33] = "-";
        if (mf)
                manifest_sum_hex(mf->sum, hex);
        if (verify_only) {
                if (p.state == STAGE_COMPLETE)
                        printf("verified '%s' in %s: %" PRIu64 " file%s, %s, all match manifest %s (%.1f s)\n", name,
                               dst, p.files_total, p.files_total == 1 ? "" : "s", size, hex, p.elapsed);
                else if (!stage_error(s))
                        printf("verify of '%s' in %s: %" PRIu64 " problem%s in %" PRIu64 " file%s (manifest %s)\n",
                               name, dst, p.errors, p.errors == 1 ? "" : "s", p.files_total,
                               p.files_total == 1 ? "" : "s", hex);
                return;
        }
        if (p.state == STAGE_COMPLETE) {
                printf("staged '%s' in %s: %" PRIu64 " file%s, %s: %" PRIu64 " copied, %" PRIu64
                       " already present, %" PRIu64 " repaired; %.1f s, %s/s\n",
                       name, dst, p.files_total, p.files_total == 1 ? "" : "s", size, p.files_copied,
                       p.files_present, p.files_repaired, p.elapsed, rate);
                const char *mp = stage_manifest_path(s);
                _cleanup_free_ char *emp = mp ? manifest_escaped(mp) : NULL;
                printf("manifest %s%s%s%s\n", hex, emp ? " (" : "", emp ? emp : "", emp ? ")" : "");
        } else if (p.state == STAGE_CANCELLED) {
                printf("stage of '%s' cancelled: %" PRIu64 " of %" PRIu64 " file%s in place; run it again to resume\n",
                       name, p.files_copied + p.files_present, p.files_total, p.files_total == 1 ? "" : "s");
        } else {
                uint64_t errors = p.errors + (stage_error(s) ? 1 : 0);
                printf("stage of '%s' failed: %" PRIu64 " error%s; %" PRIu64 " of %" PRIu64
                       " file%s in place and verified (%" PRIu64 " copied now)\n",
                       name, errors, errors == 1 ? "" : "s", p.files_copied + p.files_present, p.files_total,
                       p.files_total == 1 ? "" : "s", p.files_copied);
        }
}

/* The dataset name from a directory's last component, when it is a valid one. */
static char *default_name(const char *dir)
{
        _cleanup_free_ char *copy = xstrdup(dir);
        size_t n = strlen(copy);
        while (n > 1 && copy[n - 1] == '/')
                copy[--n] = '\0';
        const char *b = basename(copy);
        return stage_name_valid(b) ? xstrdup(b) : NULL;
}

/* --system or --nodes: the stage on every node through its benchd. */
static int stage_on_nodes(struct bd_ctx *ctx, const struct bd_stage_opts *so, const char *name, const char *system,
                          const char *nodes, char **sets, const char *token_file, int port, long timeout_ms,
                          bool quiet, bool json)
{
        struct stage_remote_req q = {
                .port = port ? port : BD_PORT, .name = name, .src = so->src, .dst = so->dst,
                .verify_only = so->mode == STAGE_VERIFY_ONLY, .verify = so->verify, .delete_extra = so->delete_extra,
                .rehash = so->rehash, .workers = so->workers, .bwlimit_mbps = so->bwlimit / 1e6, .fsync = so->fsync,
                .quiet = quiet, .json = json,
                .timeout_ms = timeout_ms ? timeout_ms : 10000,
        };
        _cleanup_free_ char *token = NULL, *sys_token = NULL;
        char **names = NULL;
        struct bd_err err;
        int ret;
        if (system) {
                struct bd_system sys;
                if (ctx_load_system(ctx, system, sets, &sys))
                        return BD_EXIT_CONFIG;
                if (nodes_of_system(sys.json, &names, &err) < 0) {
                        bd_error("stage: system '%s': %s", system, err.msg);
                        system_release(&sys);
                        return BD_EXIT_CONFIG;
                }
                if (!port)
                        q.port = (int)sys_int(sys.json, "benchd.port");
                if (!token_file && !getenv("BENCHD_TOKEN"))
                        sys_token = xstrdup(sys_str(sys.json, "benchd.token_file"));
                system_release(&sys);
        } else {
                size_t n = 0;
                /* every name non-empty, each node once */
                if (nodes_add_list(&names, &n, nodes, "--nodes", &err) < 0) {
                        bd_error("stage: %s", err.msg);
                        strv_free(names);
                        return BD_EXIT_USAGE;
                }
                if (!token_file && !getenv("BENCHD_TOKEN"))
                        sys_token = xstrdup(BD_TOKEN_FILE);
        }
        if (nodes_check(names, q.port, system, &err) < 0) {
                bd_error("stage: %s", err.msg);
                strv_free(names);
                return system ? BD_EXIT_CONFIG : BD_EXIT_USAGE;
        }
        if (stage_remote_token(token_file ? token_file : sys_token, &token, &err) < 0) {
                bd_error("stage: %s", err.msg);
                strv_free(names);
                return BD_EXIT_FAIL;
        }
        q.nodes = names;
        q.token = token;
        ret = stage_remote(&q);
        strv_free(names);
        return ret;
}

int cmd_stage(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        struct bd_stage_opts so = { .mode = STAGE_COPY, .fsync = FSYNC_END, .copy_method = COPY_AUTO };
        const char *where = NULL, *name = NULL, *state_dir = NULL, *system = NULL, *nodes = NULL;
        const char *token_file = NULL, *copy_method = NULL;
        bool json = false, quiet = false;
        long port = 0, timeout = 0;
        const char *arg;
        long n;
        double d;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 'l': where = where ? "several" : "local"; break;
                case 's': where = where ? "several" : "benchd"; system = arg; break;
                case OPT_NODES: where = where ? "several" : "benchd"; nodes = arg; break;
                case OPT_TOKEN_FILE: token_file = arg; break;
                case OPT_PORT: opts_number(&o, "port", arg, 1, 65535, &port); break;
                case OPT_TIMEOUT: opts_number(&o, "timeout", arg, 1, 600000, &timeout); break;
                case OPT_SRC: so.src = arg; break;
                case OPT_DST: so.dst = arg; break;
                case 'n': name = arg; break;
                case OPT_VERIFY: so.verify = true; break;
                case OPT_VERIFY_ONLY: so.mode = STAGE_VERIFY_ONLY; break;
                case OPT_DELETE: so.delete_extra = true; break;
                case OPT_REHASH: so.rehash = true; break;
                case OPT_STATE_DIR: state_dir = arg; break;
                case OPT_JSON: json = true; break;
                case 'q': quiet = true; break;
                case OPT_BWLIMIT:
                        if (str_parse_double(arg, &d) < 0 || !(d > 0) || d > 1e9)
                                return usage_error(cmd, "--bwlimit: expected MB/s above 0, got '%s'", arg);
                        so.bwlimit = d * 1e6;
                        break;
                case 'j':
                        if (opts_number(&o, "workers", arg, 1, 256, &n) == 0)
                                so.workers = (unsigned)n;
                        break;
                case OPT_FSYNC:
                        if (stage_fsync_policy_parse(arg, &so.fsync) < 0)
                                return usage_error(cmd, "--fsync: expected none, end or file, got '%s'", arg);
                        break;
                case OPT_COPY_METHOD:
                        copy_method = arg;
                        if (copy_method_parse(arg, &so.copy_method) < 0)
                                return usage_error(cmd,
                                                   "--copy-method: expected auto, copy_file_range, sendfile or "
                                                   "readwrite, got '%s'", arg);
                        break;
                }
        }
        int next = opts_finish(&o, 0, 0, NULL);
        if (next < 0)
                return opts_exit(next);
        if (!where)
                return usage_error(cmd, "say where to stage: --local, --system SYSTEM or --nodes N1,N2");
        if (streq(where, "several"))
                return usage_error(cmd, "--local, --system and --nodes exclude each other");
        if (!so.dst)
                return usage_error(cmd, "missing --dst DIR");
        if (!so.src && so.mode != STAGE_VERIFY_ONLY)
                return usage_error(cmd, "missing --src DIR");
        if (so.mode == STAGE_VERIFY_ONLY && (so.delete_extra || so.verify))
                return usage_error(cmd, "--verify-only changes nothing: no --delete or --verify with it");
        _cleanup_free_ char *auto_name = NULL;
        if (!name) {
                auto_name = default_name(so.src ? so.src : so.dst);
                if (!auto_name) {
                        bd_error("stage: cannot make a dataset name of '%s': give --name NAME", so.src ? so.src : so.dst);
                        return BD_EXIT_USAGE;
                }
                name = auto_name;
        }
        /* checked here for every mode: the name goes into the API's URL */
        if (!stage_name_valid(name))
                return usage_error(cmd, "--name: invalid dataset name '%s' (1 to 64 letters, digits, '.', '_' or "
                                        "'-', starting with a letter or digit)", name);
        if (streq(where, "benchd")) {
                if (state_dir || copy_method)
                        return usage_error(cmd, "--state-dir and --copy-method are benchd's business with --system "
                                                "and --nodes");
                return stage_on_nodes(ctx, &so, name, system, nodes, o.sets, token_file, (int)port, timeout, quiet,
                                      json);
        }
        if (timeout || port || token_file)
                return usage_error(cmd, "--timeout, --port and --token-file are for --system and --nodes");
        _cleanup_free_ char *home = NULL, *default_state = NULL;
        if (!state_dir) {
                home = store_home();
                default_state = xasprintf("%s/stage", home);
                state_dir = default_state;
        }
        so.name = name;
        so.state_dir = state_dir;
        struct bd_err err;
        _cleanup_(stage_freep) struct bd_stage *s = stage_new(&so, &err);
        if (!s) {
                bd_error("stage: %s", err.msg);
                return BD_EXIT_USAGE;
        }
        bool verify_only = so.mode == STAGE_VERIFY_ONLY;
        _cleanup_free_ char *what = xasprintf("%s %s", verify_only ? "verify" : "stage", name);
        int r = stage_ui_run(s, what, quiet || json);
        if (json) {
                _cleanup_json_ cJSON *j = result_json(s, name, so.src, so.dst);
                _cleanup_free_ char *text = cJSON_Print(j);
                printf("%s\n", text);
        } else {
                if (stage_error(s))
                        bd_error("stage: %s", stage_error(s));
                if (verify_only) {
                        /* the report: every problem */
                        stage_ui_problems(s, stdout, "", SEVERITY_BIT(SEV_ERROR) | SEVERITY_BIT(SEV_WARNING), 0);
                } else {
                        stage_ui_problems(s, stderr, "benchctl: stage: ", SEVERITY_BIT(SEV_ERROR), 100);
                        stage_ui_problems(s, stderr, "benchctl: stage: ", SEVERITY_BIT(SEV_WARNING), 100);
                        stage_ui_problems(s, stdout, "", SEVERITY_BIT(SEV_NOTE), 100);
                }
                print_summary(s, verify_only, name, so.dst);
        }
        return stage_ui_exit(r);
}
