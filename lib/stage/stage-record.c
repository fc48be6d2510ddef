/* stage-record.c: the state file of a dataset, names, enum spellings. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "fs.h"
#include "stage-int.h"
#include "strutil.h"

static const char *const state_names[] = {
        [STAGE_IDLE] = "idle", [STAGE_RUNNING] = "running", [STAGE_COMPLETE] = "complete",
        [STAGE_FAILED] = "failed", [STAGE_CANCELLED] = "cancelled",
};
static const char *const phase_names[] = {
        [PHASE_START] = "starting", [PHASE_SCAN] = "scanning", [PHASE_TRANSFER] = "transferring",
        [PHASE_FINISH] = "finishing", [PHASE_DONE] = "done",
};
static const char *const problem_names[] = {
        [PROB_MISSING] = "missing", [PROB_EXTRA] = "extra", [PROB_CORRUPT] = "corrupt", [PROB_SIZE] = "size",
        [PROB_TYPE] = "type", [PROB_ATTR] = "attributes", [PROB_SOURCE] = "source", [PROB_DEST] = "destination",
        [PROB_SKIPPED] = "skipped", [PROB_REPAIRED] = "repaired", [PROB_REMOVED] = "removed",
};
static const char *const severity_names[] = {
        [SEV_ERROR] = "error", [SEV_WARNING] = "warning", [SEV_NOTE] = "note",
};
static const char *const fsync_names[] = { [FSYNC_NONE] = "none", [FSYNC_END] = "end", [FSYNC_FILE] = "file" };
static const char *const mode_names[] = {
        [STAGE_COPY] = "copy", [STAGE_VERIFY_ONLY] = "verify", [STAGE_MANIFEST_ONLY] = "manifest",
};

const char *stage_state_name(enum bd_stage_state s)
{
        return s < _STAGE_STATE_MAX ? state_names[s] : "?";
}

const char *stage_phase_name(enum bd_stage_phase p)
{
        return p < _PHASE_MAX ? phase_names[p] : "?";
}

const char *stage_problem_name(enum bd_problem_kind k)
{
        return k < _PROB_MAX ? problem_names[k] : "?";
}

const char *stage_severity_name(enum bd_severity s)
{
        return s < _SEV_MAX ? severity_names[s] : "?";
}

const char *stage_fsync_policy_name(enum bd_fsync_policy p)
{
        return p < _FSYNC_MAX ? fsync_names[p] : "?";
}

int stage_fsync_policy_parse(const char *name, enum bd_fsync_policy *ret)
{
        for (int i = 0; i < _FSYNC_MAX; i++)
                if (streq(name, fsync_names[i])) {
                        *ret = (enum bd_fsync_policy)i;
                        return 0;
                }
        return -EINVAL;
}

void stage_format_size(uint64_t n, char *buf, size_t len)
{
        static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double v = (double)n;
        size_t u = 0;
        while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
                v /= 1024;
                u++;
        }
        if (u == 0)
                snprintf(buf, len, "%" PRIu64 " bytes", n);
        else
                snprintf(buf, len, "%.1f %s", v, units[u]);
}

bool stage_name_valid(const char *name)
{
        size_t n = strlen(name);
        if (n < 1 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = name[i];
                bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
                if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
                        return false;
        }
        return true;
}

unsigned stage_default_workers(void)
{
        /* workers wait on the disk more than they compute: several per core,
         * and enough for the device's queue on a small machine */
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1)
                n = 1;
        n *= 4;
        if (n < 16)
                n = 16;
        if (n > 64)
                n = 64;
        return (unsigned)n;
}

/* ---- state files ---------------------------------------------------------------- */

static char *record_path(const char *state_dir, const char *name)
{
        return xasprintf("%s/%s.state", state_dir, name);
}

void stage_record_release(struct bd_stage_record *r)
{
        free(r->name);
        free(r->src);
        free(r->dst);
        free(r->error);
        for (size_t i = 0; i < r->nsuspects; i++)
                free(r->suspects[i]);
        free(r->suspects);
        memset(r, 0, sizeof(*r));
}

static void put_str(struct bd_buf *b, const char *key, const char *v)
{
        if (!v)
                return;
        buf_printf(b, "%s=", key);
        manifest_escape(b, v);
        buf_putc(b, '\n');
}

int stage_record_save(const char *state_dir, const struct bd_stage_record *r, struct bd_err *err)
{
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        buf_printf(&b, "benchd-stage 1\n");
        put_str(&b, "name", r->name);
        put_str(&b, "src", r->src);
        put_str(&b, "dst", r->dst);
        buf_printf(&b, "mode=%s\nstate=%s\npid=%ld\n", mode_names[r->mode], stage_state_name(r->state), r->pid);
        buf_printf(&b, "started=%.3f\nfinished=%.3f\nverified=%.3f\n", r->started, r->finished, r->verified);
        if (r->have_manifest) {
                char hex[33];
                manifest_sum_hex(r->manifest_sum, hex);
                buf_printf(&b, "manifest=%s\n", hex);
        }
        buf_printf(&b,
                   "files=%" PRIu64 "\nbytes=%" PRIu64 "\nfiles_copied=%" PRIu64 "\nbytes_copied=%" PRIu64
                   "\nfiles_present=%" PRIu64 "\nfiles_repaired=%" PRIu64 "\nerrors=%" PRIu64 "\n",
                   r->files, r->bytes, r->files_copied, r->bytes_copied, r->files_present, r->files_repaired,
                   r->errors);
        put_str(&b, "error", r->error);
        buf_printf(&b, "workers=%u\nbwlimit=%.0f\nverify=%d\ndelete=%d\nfsync=%s\n", r->workers, r->bwlimit,
                   r->verify, r->delete_extra, stage_fsync_policy_name(r->fsync));
        for (size_t i = 0; i < r->nsuspects; i++)
                put_str(&b, "suspect", r->suspects[i]);
        int x = fs_mkdir_p(state_dir, 0700);
        if (x < 0)
                return bd_err_set(err, x, "cannot create state directory '%s': %s", state_dir, strerror(-x));
        _cleanup_free_ char *path = record_path(state_dir, r->name);
        return fs_write_atomic(path, b.s, b.len, 0644, err);
}

static int parse_u64_field(const char *v, uint64_t *ret)
{
        long x;
        if (str_parse_long(v, &x) < 0 || x < 0)
                return -EINVAL;
        *ret = (uint64_t)x;
        return 0;
}

int stage_record_load(const char *state_dir, const char *name, struct bd_stage_record *ret, struct bd_err *err)
{
        if (!stage_name_valid(name))
                return bd_err_set(err, -EINVAL, "invalid dataset name '%s'", name);
        _cleanup_free_ char *path = record_path(state_dir, name);
        _cleanup_free_ char *data = NULL;
        if (access(path, F_OK) < 0 && errno == ENOENT)
                return -ENOENT;
        int r = fs_read_file(path, 64 << 20, &data, NULL, err);
        if (r < 0)
                return r;
        struct bd_stage_record rec = { 0 };
        size_t lineno = 0;
        char *next = data;
        while (*next) {
                char *line = next;
                char *nl = strchr(line, '\n');
                next = nl ? nl + 1 : line + strlen(line);
                if (nl)
                        *nl = '\0';
                lineno++;
                if (lineno > 1 && !*line)
                        continue;
                if (lineno == 1) {
                        if (!streq(line, "benchd-stage 1")) {
                                stage_record_release(&rec);
                                return bd_err_set(err, -EINVAL, "%s:1: not a benchd stage state file (version 1)",
                                                  path);
                        }
                        continue;
                }
                char *eq = strchr(line, '=');
                if (!eq) {
                        stage_record_release(&rec);
                        return bd_err_set(err, -EINVAL, "%s:%zu: expected KEY=VALUE", path, lineno);
                }
                *eq = '\0';
                const char *k = line;
                char *v = eq + 1;
                char *s = NULL;
                int x = 0;
                double d;
                if (manifest_unescape(v, strlen(v), &s) < 0)
                        x = -EINVAL;
                else if (streq(k, "name")) {
                        free(rec.name);
                        rec.name = TAKE_PTR(s);
                } else if (streq(k, "src")) {
                        free(rec.src);
                        rec.src = TAKE_PTR(s);
                } else if (streq(k, "dst")) {
                        free(rec.dst);
                        rec.dst = TAKE_PTR(s);
                } else if (streq(k, "error")) {
                        free(rec.error);
                        rec.error = TAKE_PTR(s);
                } else if (streq(k, "suspect")) {
                        rec.suspects = xrealloc(rec.suspects, (rec.nsuspects + 1) * sizeof(char *));
                        rec.suspects[rec.nsuspects++] = TAKE_PTR(s);
                } else if (streq(k, "mode")) {
                        x = -EINVAL;
                        for (int i = 0; i < (int)ARRAY_SIZE(mode_names); i++)
                                if (streq(v, mode_names[i])) {
                                        rec.mode = (enum bd_stage_mode)i;
                                        x = 0;
                                }
                } else if (streq(k, "state")) {
                        x = -EINVAL;
                        for (int i = 0; i < _STAGE_STATE_MAX; i++)
                                if (streq(v, state_names[i])) {
                                        rec.state = (enum bd_stage_state)i;
                                        x = 0;
                                }
                } else if (streq(k, "fsync"))
                        x = stage_fsync_policy_parse(v, &rec.fsync);
                else if (streq(k, "manifest")) {
                        x = manifest_sum_parse(v, rec.manifest_sum);
                        rec.have_manifest = x == 0;
                } else if (streq(k, "started") || streq(k, "finished") || streq(k, "verified") ||
                           streq(k, "bwlimit")) {
                        x = str_parse_double(v, &d);
                        if (x == 0)
                                *(streq(k, "started") ? &rec.started : streq(k, "finished") ? &rec.finished
                                                                      : streq(k, "verified") ? &rec.verified
                                                                                             : &rec.bwlimit) = d;
                } else {
                        uint64_t u = 0;
                        x = parse_u64_field(v, &u);
                        if (streq(k, "files")) rec.files = u;
                        else if (streq(k, "bytes")) rec.bytes = u;
                        else if (streq(k, "files_copied")) rec.files_copied = u;
                        else if (streq(k, "bytes_copied")) rec.bytes_copied = u;
                        else if (streq(k, "files_present")) rec.files_present = u;
                        else if (streq(k, "files_repaired")) rec.files_repaired = u;
                        else if (streq(k, "errors")) rec.errors = u;
                        else if (streq(k, "pid")) rec.pid = (long)u;
                        else if (streq(k, "workers")) rec.workers = (unsigned)u;
                        else if (streq(k, "verify")) rec.verify = u != 0;
                        else if (streq(k, "delete")) rec.delete_extra = u != 0;
                        /* unknown keys: written by a newer benchd, ignored */
                }
                free(s);
                if (x < 0) {
                        stage_record_release(&rec);
                        return bd_err_set(err, -EINVAL, "%s:%zu: bad value for '%s'", path, lineno, k);
                }
        }
        if (!rec.name || !streq(rec.name, name)) {
                stage_record_release(&rec);
                return bd_err_set(err, -EINVAL, "%s: the file does not name dataset '%s'", path, name);
        }
        *ret = rec;
        return 0;
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

void stage_record_clean(const char *state_dir, const char *name)
{
        DIR *d = opendir(state_dir);
        if (!d)
                return;
        _cleanup_free_ char *prefix = xasprintf("%s.state.tmp.", name);
        struct dirent *de;
        while ((de = readdir(d)))
                if (!strncmp(de->d_name, prefix, strlen(prefix)))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
        closedir(d);
}

int stage_records(const char *state_dir, char ***ret, size_t *ret_n)
{
        DIR *d = opendir(state_dir);
        if (!d) {
                if (errno != ENOENT)
                        return -errno;
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);
                if (len <= 6 || strcmp(de->d_name + len - 6, ".state"))
                        continue;
                char *name = xstrndup(de->d_name, len - 6);
                if (!stage_name_valid(name)) {
                        free(name);
                        continue;
                }
                names = xrealloc(names, (n + 1) * sizeof(char *));
                names[n++] = name;
        }
        closedir(d);
        if (n > 1)
                qsort(names, n, sizeof(char *), name_cmp);
        *ret = names;
        *ret_n = n;
        return 0;
}

void stage_record_opts(const struct bd_stage_record *r, const char *state_dir, struct bd_stage_opts *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->mode = r->mode;
        ret->name = r->name;
        ret->src = r->src;
        ret->dst = r->dst;
        ret->state_dir = state_dir;
        ret->workers = r->workers;
        ret->bwlimit = r->bwlimit;
        ret->verify = r->verify;
        ret->delete_extra = r->delete_extra;
        ret->fsync = r->fsync;
        ret->copy_method = COPY_AUTO;
}
