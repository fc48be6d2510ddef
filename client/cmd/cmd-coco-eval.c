/* cmd-coco-eval.c: benchctl coco-eval: COCO bbox and segm mAP of a results
 * file, the 12 numbers of pycocotools' COCOeval. */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "benchctl.h"
#include "coco-eval.h"
#include "coco-index.h"
#include "json.h"
#include "parallel.h"

#define OPT_TYPE 360
#define OPT_THREADS 361

static const struct bd_option options[] = {
        { "type", OPT_TYPE, "TYPE", "bbox (default), segm, or both" },
        { "json", 'j', NULL, "print the 12 numbers as JSON" },
        { "threads", OPT_THREADS, "N", "evaluate on N threads (default: the CPUs available)" },
        { 0 }
};

static void stats_json(struct bd_buf *out, const double stats[COCO_EVAL_NSTATS], const char *indent)
{
        buf_puts(out, "{");
        for (int i = 0; i < COCO_EVAL_NSTATS; i++) {
                buf_printf(out, "%s\n%s  ", i ? "," : "", indent);
                json_quote(out, coco_eval_stat_names[i]);
                buf_puts(out, ": ");
                json_number(out, stats[i]);
        }
        buf_printf(out, "\n%s}", indent);
}

int cmd_coco_eval(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        bool json = false, types[2] = { true, false };  /* bbox, segm */
        long threads = 0;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 'j': json = true; break;
                case OPT_TYPE:
                        if (!streq(arg, "bbox") && !streq(arg, "segm") && !streq(arg, "both"))
                                return usage_error(cmd, "--type: expected bbox, segm or both, got '%s'", arg);
                        types[COCO_EVAL_BBOX] = !streq(arg, "segm");
                        types[COCO_EVAL_SEGM] = !streq(arg, "bbox");
                        break;
                case OPT_THREADS: opts_number(&o, "threads", arg, 1, 1024, &threads); break;
                }
        }
        int next = opts_finish(&o, 2, 2, "ANNOTATIONS.json and RESULTS.json");
        if (next < 0)
                return opts_exit(next);
        if (!threads)
                threads = parallel_cpus();
        struct bd_err err;
        _cleanup_(coco_index_freep) struct coco_index *gt = NULL;
        /* a user's annotation file: no cache written next to it */
        if (coco_index_open(argv[next], NULL, COCO_INDEX_NO_CACHE, &gt, &err) < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        enum coco_eval_type first = types[COCO_EVAL_BBOX] ? COCO_EVAL_BBOX : COCO_EVAL_SEGM;
        _cleanup_(coco_eval_freep) struct coco_eval *ev = coco_eval_new_type(gt, first, (int)threads);
        double stats[2][COCO_EVAL_NSTATS];
        if (coco_eval_load_json(ev, argv[next + 1], &err) < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        for (int t = 0; t < 2; t++) {
                if (!types[t])
                        continue;
                coco_eval_set_type(ev, (enum coco_eval_type)t);
                if (coco_eval_accumulate(ev, stats[t], &err) < 0) {
                        bd_error("%s", err.msg);
                        return BD_EXIT_FAIL;
                }
        }
        bool both = types[0] && types[1];
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        buf_init(&out);
        if (json) {
                buf_printf(&out, "{\n  \"type\": \"%s\",\n  \"images\": %zu,\n  \"categories\": %zu,\n"
                                 "  \"detections\": %zu",
                           both ? "both" : coco_eval_type_name(first), gt->n_images, gt->n_cats,
                           coco_eval_n_dets(ev));
                for (int t = 0; t < 2; t++) {
                        if (!types[t])
                                continue;
                        if (both) {
                                buf_printf(&out, ",\n  \"%s\": ", coco_eval_type_name((enum coco_eval_type)t));
                                stats_json(&out, stats[t], "  ");
                        } else {
                                buf_puts(&out, ",\n  \"stats\": ");
                                stats_json(&out, stats[t], "  ");
                        }
                }
                buf_puts(&out, "\n}\n");
        } else {
                for (int t = 0; t < 2; t++) {
                        if (!types[t])
                                continue;
                        if (both)
                                buf_printf(&out, "%sIoU type: %s\n", t ? "\n" : "",
                                           coco_eval_type_name((enum coco_eval_type)t));
                        coco_eval_summary(stats[t], &out);
                }
        }
        fputs(out.s, stdout);
        return BD_EXIT_OK;
}
