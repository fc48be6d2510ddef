/* cmd-coco-eval.c: benchctl coco-eval: COCO bbox mAP of a detection file,
 * the 12 numbers of pycocotools' COCOeval. */
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
        { "type", OPT_TYPE, "TYPE", "evaluation type: bbox (the only one)" },
        { "json", 'j', NULL, "print the 12 numbers as JSON" },
        { "threads", OPT_THREADS, "N", "evaluate on N threads (default: the CPUs available)" },
        { 0 }
};

int cmd_coco_eval(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        bool json = false;
        long threads = 0;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 'j': json = true; break;
                case OPT_TYPE:
                        if (!streq(arg, "bbox"))
                                return usage_error(cmd, "--type: only 'bbox' is supported, got '%s'", arg);
                        break;
                case OPT_THREADS: opts_number(&o, "threads", arg, 1, 1024, &threads); break;
                }
        }
        int next = opts_finish(&o, 2, 2, "ANNOTATIONS.json and DETECTIONS.json");
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
        _cleanup_(coco_eval_freep) struct coco_eval *ev = coco_eval_new(gt, (int)threads);
        double stats[COCO_EVAL_NSTATS];
        if (coco_eval_load_json(ev, argv[next + 1], &err) < 0 || coco_eval_accumulate(ev, stats, &err) < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        buf_init(&out);
        if (json) {
                buf_printf(&out, "{\n  \"type\": \"bbox\",\n  \"images\": %zu,\n  \"categories\": %zu,\n"
                                 "  \"detections\": %zu,\n  \"stats\": {",
                           gt->n_images, gt->n_cats, coco_eval_n_dets(ev));
                for (int i = 0; i < COCO_EVAL_NSTATS; i++) {
                        buf_printf(&out, "%s\n    ", i ? "," : "");
                        json_quote(&out, coco_eval_stat_names[i]);
                        buf_puts(&out, ": ");
                        json_number(&out, stats[i]);
                }
                buf_puts(&out, "\n  }\n}\n");
        } else
                coco_eval_summary(stats, &out);
        fputs(out.s, stdout);
        return BD_EXIT_OK;
}
