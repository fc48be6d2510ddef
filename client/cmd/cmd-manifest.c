/* cmd-manifest.c: benchctl manifest: build, print or write a dataset's manifest. */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "benchctl.h"
#include "fs.h"
#include "stage-ui.h"

#define OPT_REHASH 420
#define OPT_NO_STORE 421

static const struct bd_option options[] = {
        { "output", 'o', "FILE", "write the manifest to FILE (atomically) instead of standard output" },
        { "workers", 'j', "N", "worker threads (default: 4 per CPU, 16 to 64)" },
        { "rehash", OPT_REHASH, NULL, "checksum every file, ignoring the stored manifest" },
        { "no-store", OPT_NO_STORE, NULL, "do not store the manifest as DIR/" MANIFEST_NAME },
        { "quiet", 'q', NULL, "no progress output" },
        { 0 }
};

int cmd_manifest(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        struct bd_stage_opts so = { .mode = STAGE_MANIFEST_ONLY, .copy_method = COPY_AUTO };
        const char *out = NULL, *arg;
        bool quiet = false;
        long n;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 'o': out = arg; break;
                case 'q': quiet = true; break;
                case OPT_REHASH: so.rehash = true; break;
                case OPT_NO_STORE: so.no_store = true; break;
                case 'j':
                        if (opts_number(&o, "workers", arg, 1, 256, &n) == 0)
                                so.workers = (unsigned)n;
                        break;
                }
        }
        int next = opts_finish(&o, 1, 1, "DIR");
        if (next < 0)
                return opts_exit(next);
        so.src = argv[next];
        struct bd_err err;
        _cleanup_(stage_freep) struct bd_stage *s = stage_new(&so, &err);
        if (!s) {
                bd_error("manifest: %s", err.msg);
                return BD_EXIT_USAGE;
        }
        int r = stage_ui_run(s, "manifest", quiet);
        if (stage_error(s))
                bd_error("manifest: %s", stage_error(s));
        stage_ui_problems(s, stderr, "benchctl: manifest: ", SEVERITY_BIT(SEV_ERROR) | SEVERITY_BIT(SEV_WARNING), 100);
        if (r < 0) {
                bd_error("manifest: no manifest written: not every file of '%s' could be checksummed", so.src);
                return stage_ui_exit(r);
        }
        /* stage_manifest() is complete here: every file has its checksum */
        struct bd_manifest *m = stage_manifest(s);
        _cleanup_buf_ struct bd_buf text = BD_BUF_INIT;
        buf_init(&text);
        if (manifest_format(m, &text, &err) < 0) {
                bd_error("manifest: %s", err.msg);
                return BD_EXIT_FAIL;
        }
        if (out) {
                if (fs_write_atomic(out, text.s, text.len, 0644, &err) < 0) {
                        bd_error("manifest: %s", err.msg);
                        return BD_EXIT_FAIL;
                }
        } else
                fwrite(text.s, 1, text.len, stdout);
        if (!quiet || out) {
                struct bd_stage_progress p;
                stage_progress(s, &p);
                char size[32], hex[33];
                stage_format_size(m->bytes, size, sizeof(size));
                manifest_sum_hex(m->sum, hex);
                const char *mp = stage_manifest_path(s);
                _cleanup_free_ char *emp = mp ? manifest_escaped(mp) : NULL;
                fprintf(out ? stdout : stderr,
                        "manifest of %s: %" PRIu64 " file%s, %s, %" PRIu64 " director%s, %" PRIu64
                        " link%s; %" PRIu64 " file%s checksummed in %.1f s; checksum %s%s%s\n",
                        so.src, m->files, m->files == 1 ? "" : "s", size, m->dirs, m->dirs == 1 ? "y" : "ies",
                        m->links, m->links == 1 ? "" : "s", p.files_hashed, p.files_hashed == 1 ? "" : "s",
                        p.elapsed, hex, emp ? ", stored as " : "", emp ? emp : "");
        }
        return BD_EXIT_OK;
}
