/* dataset-fetch.c: benchctl dataset fetch, in benchd-dataset: a dataset's
 * archives downloaded (or taken from a directory), verified, unpacked into
 * the layout the trainers read, then its annotation index and manifest
 * built and the tree checked.
 *
 *   DIR/train2017/ DIR/val2017/ DIR/annotations/   the dataset (-o DIR)
 *   ARCHIVES/NAME.zip                               the archives (--archives;
 *                                                   default DIR/../downloads,
 *                                                   as MLPerf's scripts keep them)
 *   ARCHIVES/NAME.zip.part, .part.journal           a download under way
 *   ARCHIVES/NAME.zip.unpacked                      unpacked into DIR (a stamp: DIR's
 *                                                   path, then the names the archive
 *                                                   put there; --from keeps it here too)
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "benchctl.h"
#include "clock.h"
#include "coco-index.h"
#include "dataset-fetch.h"
#include "digest.h"
#include "fetch.h"
#include "fetch-table.h"
#include "fs.h"
#include "meter.h"
#include "stage-ui.h"
#include "strutil.h"
#include "unpack.h"

#define OPT_SPLITS 400
#define OPT_MIRROR 401
#define OPT_FROM 402
#define OPT_TABLE 403
#define OPT_CONNS 404
#define OPT_CHUNK 405
#define OPT_RETRIES 406
#define OPT_ARCHIVES 407
#define OPT_REMOVE 408
#define OPT_NOCHECK 409
#define OPT_LIST 410
#define OPT_FQUIET 411
#define OPT_FTHREADS 412
#define OPT_RETRY_DELAY 413
#define OPT_DOWNLOAD_ONLY 414
#define OPT_CHECKSUMS 415

const struct bd_command dataset_fetch_cmd = {
        "dataset fetch", NULL,
        "NAME [-o DIR] [--splits LIST] [--mirror URL | --from DIR] [--archives DIR] [--table FILE] [--checksums FILE]\n"
        "       [--list]",
        "Download a dataset's archives in parallel byte ranges (resumable: run it again after an interruption),\n"
        "verify each against its published size and digest, unpack them into DIR, build the annotation index\n"
        "and the manifest, and check the tree.  NAME is a bundled table (--list) or, with --table, any.",
};

static const struct bd_option fetch_options[] = {
        { "output", 'o', "DIR", "the dataset directory (default: ./NAME)" },
        { "splits", OPT_SPLITS, "LIST", "the parts to fetch, comma-separated (coco2017: train,val,annotations; default all)" },
        { "mirror", OPT_MIRROR, "URL", "fetch from a site's copy: URL/FILE for each archive" },
        { "from", OPT_FROM, "DIR", "the archives are in DIR already: verify and unpack them, download nothing" },
        { "archives", OPT_ARCHIVES, "DIR", "keep the downloaded archives in DIR (default: DIR/../downloads)" },
        { "remove-archives", OPT_REMOVE, NULL, "remove each archive once unpacked (never those of --from)" },
        { "table", OPT_TABLE, "FILE", "a download table of one's own (fetch/README.md) instead of a bundled one" },
        { "checksums", OPT_CHECKSUMS, "FILE", "the archives' digests from FILE (sha256sum or sha1sum output): archives of one's own" },
        { "connections", OPT_CONNS, "N", "transfers at once (default 4)" },
        { "chunk-size", OPT_CHUNK, "BYTES", "bytes per range request (default 8M)" },
        { "retries", OPT_RETRIES, "N", "tries per range before giving up (default 5)" },
        { "retry-delay", OPT_RETRY_DELAY, "SECONDS", "the first retry's wait, doubled each time (default 1)" },
        { "threads", OPT_FTHREADS, "N", "unpack and check on N threads (default: the CPUs available)" },
        { "no-check", OPT_NOCHECK, NULL, "do not build the index and manifest or check the tree" },
        { "download-only", OPT_DOWNLOAD_ONLY, NULL, "fetch and verify the archives, nothing more (unpack later with --from)" },
        { "list", OPT_LIST, NULL, "list the bundled datasets and their files, then exit" },
        { "quiet", OPT_FQUIET, NULL, "no progress on standard error" },
        { 0 }
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
        stop_signal = sig;
}

struct ui {
        struct meter m;
        const char *verb;
        uint64_t base;
};

static void fetch_progress(void *arg, const struct fetch_progress *p)
{
        struct ui *u = arg;
        if (p->event)
                meter_line(&u->m, p->event);
        meter_bytes(&u->m, u->verb, (uint64_t)p->done, (uint64_t)p->total, (uint64_t)p->resumed);
}

static void unpack_progress(void *arg, uint64_t done, uint64_t total)
{
        struct ui *u = arg;
        meter_bytes(&u->m, u->verb, done, total, 0);
}

static int parse_bytes(const char *s, int64_t *ret)
{
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s || v <= 0)
                return -1;
        switch (*end) {
        case 'k': case 'K': v *= 1024; end++; break;
        case 'm': case 'M': v *= 1024 * 1024; end++; break;
        case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
        }
        if (*end || v < 4096 || v > (double)(1LL << 34))
                return -1;
        *ret = (int64_t)v;
        return 0;
}

static bool split_selected(const char *splits, const char *split)
{
        if (!splits)
                return true;
        if (!split)
                return false;
        size_t n = strlen(split);
        for (const char *p = splits; *p;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                if (len == n && !strncmp(p, split, n))
                        return true;
                if (!e)
                        break;
                p = e + 1;
        }
        return false;
}

/* Every name in --splits is one of the table's. */
static int splits_known(const struct fetch_table *t, const char *splits, struct bd_buf *known)
{
        for (int i = 0; i < t->nfiles; i++) {
                bool seen = false;
                for (int k = 0; k < i && !seen; k++)
                        seen = t->files[k].split && streq(t->files[k].split, t->files[i].split);
                if (t->files[i].split && !seen)
                        buf_printf(known, "%s%s", known->len ? ", " : "", t->files[i].split);
        }
        for (const char *p = splits; *p;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                bool found = false;
                for (int i = 0; i < t->nfiles && !found; i++)
                        found = t->files[i].split && strlen(t->files[i].split) == len &&
                                !strncmp(p, t->files[i].split, len);
                if (!found)
                        return -1;
                if (!e)
                        break;
                p = e + 1;
        }
        return 0;
}

static void list_tables(void)
{
        for (const struct fetch_table_text *tt = fetch_bundled; tt->name; tt++) {
                struct fetch_table t;
                struct bd_err err;
                if (fetch_table_parse(tt->text, tt->file, &t, &err) < 0)
                        continue;
                if (!streq(t.kind, "dataset")) {
                        fetch_table_release(&t);
                        continue;
                }
                printf("%s: %s\n", t.name, t.description ? t.description : "");
                for (int i = 0; i < t.nfiles; i++) {
                        char b[32] = "size from the server";
                        if (t.files[i].bytes > 0)
                                meter_bytes_text((uint64_t)t.files[i].bytes, b, sizeof(b));
                        printf("  %-30s %-12s %10s  %s %s\n", t.files[i].name, t.files[i].split ? t.files[i].split : "-",
                               b, t.files[i].sha256 ? "sha256" : "sha1",
                               t.files[i].sha256 ? t.files[i].sha256 : t.files[i].sha1);
                        printf("  %-30s %s\n", "", t.files[i].url);
                }
                fetch_table_release(&t);
        }
}

static char *default_archives(const char *dir)
{
        _cleanup_free_ char *copy = xstrdup(dir);
        return xasprintf("%s/downloads", dirname(copy));
}

/* Bytes free where path is (or its nearest existing parent). */
static int64_t free_bytes(const char *path)
{
        _cleanup_free_ char *p = xstrdup(path);
        struct statvfs sv;
        while (statvfs(p, &sv) < 0) {
                char *s = strrchr(p, '/');
                if (!s || s == p)
                        return statvfs(s ? "/" : ".", &sv) == 0 ? (int64_t)sv.f_bavail * (int64_t)sv.f_frsize : -1;
                *s = '\0';
        }
        return (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
}

static bool same_fs(const char *a, const char *b)
{
        struct stat sa, sb;
        return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev;
}

/* Whether the stamp says this archive was unpacked into dir (its first
 * line) and what it put there (the lines after it; a stamp of one line
 * names nothing) is still there; *gone: the first name that is not. */
static bool stamp_holds(const char *stamp, const char *dir, char **text, char **gone)
{
        size_t len;
        struct bd_err e;
        *gone = NULL;
        if (fs_read_file(stamp, 1 << 26, text, &len, &e) < 0)
                return false;
        char *nl = strchr(*text, '\n');
        if (nl)
                *nl = '\0';
        if (!streq(*text, dir))
                return false;
        for (char *name = nl ? nl + 1 : NULL; name && *name;) {
                char *end = strchr(name, '\n');
                if (end)
                        *end = '\0';
                struct stat sb;
                _cleanup_free_ char *there = xasprintf("%s/%s", dir, name);
                if (!*name || strchr(name, '/') || streq(name, "..") || lstat(there, &sb) < 0) {
                        *gone = xstrdup(name);
                        return false;
                }
                name = end ? end + 1 : NULL;
        }
        return true;
}

int dataset_fetch(int argc, char **argv)
{
        const struct bd_command *cmd = &dataset_fetch_cmd;
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, fetch_options, cmd, NULL);
        const char *out = NULL, *splits = NULL, *mirror = NULL, *from = NULL, *table_file = NULL, *archives_opt = NULL,
                   *sums = NULL;
        bool remove_archives = false, check = true, list = false, quiet = false, download_only = false;
        long conns = 4, retries = 5, threads = 0;
        double retry_delay = 1;
        int64_t chunk = 8 << 20;
        const char *arg;
        int opt;
        while ((opt = opts_next(&o, &arg)) > 0) {
                switch (opt) {
                case 'o': out = arg; break;
                case OPT_SPLITS: splits = arg; break;
                case OPT_MIRROR: mirror = arg; break;
                case OPT_FROM: from = arg; break;
                case OPT_TABLE: table_file = arg; break;
                case OPT_CHECKSUMS: sums = arg; break;
                case OPT_ARCHIVES: archives_opt = arg; break;
                case OPT_REMOVE: remove_archives = true; break;
                case OPT_NOCHECK: check = false; break;
                case OPT_DOWNLOAD_ONLY: download_only = true; break;
                case OPT_LIST: list = true; break;
                case OPT_FQUIET: quiet = true; break;
                case OPT_CONNS: opts_number(&o, "connections", arg, 1, 64, &conns); break;
                case OPT_RETRIES: opts_number(&o, "retries", arg, 0, 100, &retries); break;
                case OPT_FTHREADS: opts_number(&o, "threads", arg, 1, 64, &threads); break;
                case OPT_RETRY_DELAY: {
                        char *end;
                        retry_delay = strtod(arg, &end);
                        if (*end || end == arg || !(retry_delay >= 0 && retry_delay <= 3600))
                                return usage_error(cmd, "--retry-delay: expected seconds, 0 to 3600, got '%s'", arg);
                        break;
                }
                case OPT_CHUNK:
                        if (parse_bytes(arg, &chunk) < 0)
                                return usage_error(cmd, "--chunk-size: expected bytes, 4K to 16G (8M, 65536), got '%s'",
                                                   arg);
                        break;
                }
        }
        int next = opts_finish(&o, list ? 0 : 1, 1, "NAME");
        if (next < 0)
                return opts_exit(next);
        if (list) {
                list_tables();
                return BD_EXIT_OK;
        }
        const char *problem = fetch_source_problem(mirror, from);
        if (problem)
                return usage_error(cmd, "%s", problem);
        const char *name = argv[next];
        struct bd_err err;
        struct fetch_table t;
        int tr = fetch_table_open(table_file, name, "dataset", &t, &err);
        if (tr < 0) {
                bd_error("dataset fetch: %s", err.msg);
                return tr == FETCH_TABLE_UNKNOWN ? BD_EXIT_USAGE : BD_EXIT_CONFIG;
        }
        int rc = BD_EXIT_FAIL;
        if (sums) {
                _cleanup_free_ char *text = NULL;
                size_t len;
                if (fs_read_file(sums, 1 << 24, &text, &len, &err) < 0 ||
                    fetch_table_checksums(&t, text, len, sums, &err) < 0) {
                        bd_error("dataset fetch: %s", err.msg);
                        fetch_table_release(&t);
                        return BD_EXIT_CONFIG;
                }
        }
        _cleanup_free_ char *out_default = NULL, *archives = NULL, *stamps = NULL, *out_real = NULL;
        _cleanup_free_ bool *before = NULL;
        _cleanup_free_ struct fetch_file *todo = NULL;
        _cleanup_free_ struct fetch_file *ff = NULL;
        _cleanup_free_ int *idx = NULL;
        char **paths = NULL;
        int n = 0;
        if (splits) {
                _cleanup_buf_ struct bd_buf known = BD_BUF_INIT;
                buf_init(&known);
                if (splits_known(&t, splits, &known) < 0) {
                        bd_error("dataset fetch: --splits: '%s' names a part %s does not have (it has: %s)", splits,
                                 t.name, known.len ? known.s : "none");
                        rc = BD_EXIT_USAGE;
                        goto out;
                }
        }
        if (!out)
                out = out_default = xasprintf("./%s", t.name);
        /* the archives' directory keeps the stamps of what was unpacked where,
         * for --from's archives too (their directory is not written) */
        stamps = archives_opt ? xstrdup(archives_opt) : default_archives(out);
        archives = from ? xstrdup(from) : xstrdup(stamps);
        ff = xcalloc((size_t)t.nfiles, sizeof(*ff));
        idx = xcalloc((size_t)t.nfiles, sizeof(int));
        paths = xcalloc((size_t)t.nfiles * 2 + 1, sizeof(char *));
        for (int i = 0; i < t.nfiles; i++) {
                const struct fetch_entry *e = &t.files[i];
                if (!split_selected(splits, e->split))
                        continue;
                idx[n] = i;
                paths[2 * n] = xasprintf("%s/%s", archives, e->name);
                paths[2 * n + 1] = fetch_url(e, mirror);
                ff[n] = (struct fetch_file){ .name = e->name, .url = paths[2 * n + 1], .dest = paths[2 * n],
                                             .size = e->bytes, .sha256 = e->sha256, .sha1 = e->sha1 };
                n++;
        }
        int mr;
        if ((mr = fs_mkdir_p(stamps, 0755)) < 0) {
                bd_error("dataset fetch: cannot create '%s': %s", stamps, strerror(-mr));
                goto out;
        }
        if ((mr = fs_mkdir_p(out, 0755)) < 0 || !(out_real = realpath(out, NULL))) {
                bd_error("dataset fetch: cannot create '%s': %s", out, strerror(mr < 0 ? -mr : errno));
                goto out;
        }
        /* the archives unpacked into this directory before: nothing to do,
         * where what they put there is still there */
        before = xcalloc((size_t)n + 1, sizeof(bool));
        for (int k = 0; k < n; k++) {
                const struct fetch_entry *e = &t.files[idx[k]];
                _cleanup_free_ char *stamp = xasprintf("%s/%s.unpacked", stamps, ff[k].name), *text = NULL;
                _cleanup_free_ char *gone = NULL;
                if (!stamp_holds(stamp, out_real, &text, &gone)) {
                        if (gone)
                                printf("%s: unpacked into %s before, but %s/%s is gone: unpacking it again\n",
                                       ff[k].name, out, out, gone);
                        /* what it unpacks into must not be there already:
                         * said before anything is fetched */
                        struct stat sb;
                        _cleanup_free_ char *there = e->unpacks_to ? xasprintf("%s/%s", out, e->unpacks_to) : NULL;
                        if (!download_only && there && lstat(there, &sb) == 0) {
                                bd_error("dataset fetch: %s is already there and no fetch into %s unpacked it (%s): "
                                         "move it away or fetch into another directory: nothing fetched",
                                         there, out, stamp);
                                goto out;
                        }
                        continue;
                }
                before[k] = true;
        }
        /* room, before anything is fetched: the archives still to come, and
         * each archive unpacked */
        int64_t need_dl = 0, need_unpack = 0;
        for (int k = 0; k < n; k++) {
                const struct fetch_entry *e = &t.files[idx[k]];
                if (before[k])
                        continue;
                struct stat st;
                if (!from && stat(ff[k].dest, &st) < 0 && e->bytes > 0) {
                        need_dl += e->bytes;
                        _cleanup_free_ char *part = xasprintf("%s.part", ff[k].dest);
                        if (stat(part, &st) == 0 && st.st_size == e->bytes)
                                need_dl -= (int64_t)st.st_blocks * 512 < e->bytes ? (int64_t)st.st_blocks * 512 : e->bytes;
                }
                if (!download_only)
                        need_unpack += e->unpacked_bytes > 0 ? e->unpacked_bytes : e->bytes > 0 ? e->bytes : 0;
        }
        int64_t free_out = free_bytes(out), free_arch = from ? -1 : free_bytes(archives);
        bool one_fs = from || same_fs(out, archives);
        char a[32], b[32], c[32];
        if (one_fs && free_out >= 0 && need_dl + need_unpack > free_out) {
                meter_bytes_text((uint64_t)free_out, a, sizeof(a));
                meter_bytes_text((uint64_t)(need_dl + need_unpack), b, sizeof(b));
                meter_bytes_text((uint64_t)need_dl, c, sizeof(c));
                bd_error("dataset fetch: %s: %s free, %s needed (%s of archives to fetch, the rest unpacked): nothing "
                         "fetched", out, a, b, c);
                goto out;
        }
        if (!one_fs && ((free_arch >= 0 && need_dl > free_arch) || (free_out >= 0 && need_unpack > free_out))) {
                bool arch = free_arch >= 0 && need_dl > free_arch;
                meter_bytes_text((uint64_t)(arch ? free_arch : free_out), a, sizeof(a));
                meter_bytes_text((uint64_t)(arch ? need_dl : need_unpack), b, sizeof(b));
                bd_error("dataset fetch: %s: %s free, %s needed: nothing fetched", arch ? archives : out, a, b);
                goto out;
        }
        struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        struct ui u = { .verb = from ? "verified" : "fetched" };
        int r;
        /* 1. the archives, verified */
        meter_start(&u.m, from ? "dataset fetch: verifying" : "dataset fetch", quiet);
        u.m.every = 10;
        if (from) {
                r = 0;
                for (int k = 0; k < n && r == 0; k++) {
                        if (before[k])
                                continue;
                        const struct fetch_entry *e = &t.files[idx[k]];
                        r = fetch_verify(ff[k].dest, e->name, e->bytes, e->sha256, e->sha1, unpack_progress, &u,
                                         &stop_signal, &err);
                }
        } else {
                struct fetch_opts fo = {
                        .connections = (int)conns, .chunk = chunk, .retries = retries ? (int)retries : -1, .retry_delay = retry_delay,
                        .progress = fetch_progress, .arg = &u, .stop = &stop_signal,
                };
                todo = xcalloc((size_t)n + 1, sizeof(*todo));
                int m = 0;
                for (int k = 0; k < n; k++)
                        if (!before[k])
                                todo[m++] = ff[k];
                r = fetch_files(todo, m, &fo, &err);
                for (int k = 0, j = 0; k < n; k++)
                        if (!before[k])
                                ff[k] = todo[j++];
        }
        meter_end(&u.m);
        if (!from)
                for (int k = 0; k < n; k++) {
                        if (!ff[k].done || before[k])
                                continue;       /* an archive verified is said, even where another failed */
                        char s1[32], s2[32];
                        meter_bytes_text((uint64_t)ff[k].size, s1, sizeof(s1));
                        meter_bytes_text((uint64_t)ff[k].fetched, s2, sizeof(s2));
                        printf("%s: %s, %s verified (%s fetched now%s)\n", ff[k].name, ff[k].dest, s1, s2,
                               ff[k].resumed ? ", the rest kept from before" : "");
                }
        if (r < 0) {
                fflush(stdout);
                bd_error("dataset fetch: %s", err.msg);
                rc = stop_signal ? BD_EXIT_SIGNAL + stop_signal : BD_EXIT_FAIL;
                goto restore;
        }
        if (download_only) {
                rc = BD_EXIT_OK;
                goto restore;
        }
        /* 2. unpacked, each archive once */
        for (int k = 0; k < n; k++) {
                _cleanup_free_ char *stamp = xasprintf("%s/%s.unpacked", stamps, ff[k].name);
                if (before[k]) {
                        printf("%s: unpacked into %s before\n", ff[k].name, out);
                        continue;
                }
                _cleanup_free_ char *what = xasprintf("dataset fetch: unpacking %s", ff[k].name);
                u.verb = "unpacked";
                meter_start(&u.m, what, quiet);
                u.m.every = 10;
                struct unpack_opts uo = { .threads = (int)threads, .progress = unpack_progress, .arg = &u,
                                          .stop = &stop_signal };
                struct unpack_stats us;
                double t0 = clock_monotonic();
                r = unpack_archive(ff[k].dest, out, &uo, &us, &err);
                double took = clock_monotonic() - t0;
                meter_end(&u.m);
                if (r < 0) {
                        bd_error("dataset fetch: %s", err.msg);
                        rc = stop_signal ? BD_EXIT_SIGNAL + stop_signal : BD_EXIT_FAIL;
                        goto restore;
                }
                char s1[32];
                meter_bytes_text(us.bytes, s1, sizeof(s1));
                printf("%s: unpacked into %s: %" PRIu64 " files, %s, on %d thread%s in %.2f s\n", ff[k].name, out,
                       us.files, s1, us.threads, us.threads == 1 ? "" : "s", took);
                _cleanup_free_ char *text = xasprintf("%s\n%s", out_real, us.tops ? us.tops : "");
                free(us.tops);
                if (fs_write_atomic(stamp, text, strlen(text), 0644, &err) < 0) {
                        bd_error("dataset fetch: %s", err.msg);
                        goto restore;
                }
                if (remove_archives && !from)
                        unlink(ff[k].dest);     /* the stamp stays: nothing to fetch again */
        }
        rc = BD_EXIT_OK;
restore:
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        /* 3. the annotation index of each instances file, the manifest, the
         * check (interrupted as those commands are) */
        if (rc == BD_EXIT_OK && check && !download_only)
                rc = dataset_fetch_finish(out, (int)threads, quiet);
out:
        if (paths)
                for (int k = 0; k < 2 * t.nfiles; k++)
                        free(paths[k]);
        free(paths);
        fetch_table_release(&t);
        return rc;
}

int dataset_fetch_finish(const char *dir, int threads, bool quiet)
{
        struct bd_err err;
        bool any = false;
        static const char *const splits[] = { "train2017", "val2017" };
        for (size_t i = 0; i < ARRAY_SIZE(splits); i++) {
                _cleanup_free_ char *ann = xasprintf("%s/annotations/instances_%s.json", dir, splits[i]);
                if (access(ann, F_OK) < 0)
                        continue;
                _cleanup_(coco_index_freep) struct coco_index *x = NULL;
                if (coco_index_open(ann, NULL, 0, &x, &err) < 0) {
                        bd_error("dataset fetch: %s", err.msg);
                        return BD_EXIT_FAIL;
                }
                printf("%s: index %s: %zu images, %zu annotations, %zu categories\n", ann,
                       x->info.built ? "built" : "up to date", x->n_images, x->n_anns, x->n_cats);
        }
        struct bd_stage_opts so = { .mode = STAGE_MANIFEST_ONLY, .copy_method = COPY_AUTO, .src = dir };
        _cleanup_(stage_freep) struct bd_stage *s = stage_new(&so, &err);
        if (!s) {
                bd_error("dataset fetch: manifest: %s", err.msg);
                return BD_EXIT_FAIL;
        }
        int r = stage_ui_run(s, "dataset fetch: manifest", quiet);
        if (r != 0) {
                bd_error("dataset fetch: manifest: %s", stage_error(s));
                return stage_ui_exit(r);
        }
        const char *mp = stage_manifest_path(s);
        printf("%s: manifest %s\n", dir, mp ? mp : "built");
        /* the check, as 'benchctl dataset check' does it, of the splits there */
        bool usable = false;
        _cleanup_buf_ struct bd_buf text = BD_BUF_INIT;
        buf_init(&text);
        for (size_t i = 0; i < ARRAY_SIZE(splits); i++) {
                _cleanup_free_ char *ann = xasprintf("%s/annotations/instances_%s.json", dir, splits[i]);
                _cleanup_free_ char *imgs = xasprintf("%s/%s", dir, splits[i]);
                if (access(ann, F_OK) < 0 || access(imgs, F_OK) < 0)
                        continue;
                any = true;
                int cr = dataset_check_split(dir, splits[i], false, threads > 0 ? threads : 2, NULL, false, quiet,
                                             &usable, &text);
                if (cr != BD_EXIT_OK)
                        return cr;
        }
        if (any) {
                printf("dataset check %s:\n", dir);
                for (const char *p = text.s; *p;) {
                        const char *nl = strchr(p, '\n');
                        size_t len = nl ? (size_t)(nl - p) : strlen(p);
                        printf("  %.*s\n", (int)len, p);
                        p += len + (nl != NULL);
                }
                if (!usable) {
                        bd_error("dataset fetch: %s: no image usable for training", dir);
                        return BD_EXIT_FAIL;
                }
        }
        return BD_EXIT_OK;
}
