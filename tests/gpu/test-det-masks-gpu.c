/* test-det-masks-gpu.c: postprocess.h and masks.h on CUDA against the CPU
 * (make check-gpu-det-masks).
 *
 * Random inputs through det_op_postprocess, det_op_paste_masks and
 * det_op_mask_targets on both backends:
 *   detections: the same count, labels and proposals in the same order (the
 *     GPU's candidates are put back in (proposal, class) order and NMS runs on
 *     the host); scores within 1e-5 relative and boxes within 1e-5 of the
 *     box's largest coordinate (the device's expf differs from glibc's by
 *     an ulp or two; both round every other operation alike);
 *   paste: within 1e-6 absolute (the same rounded operations: in practice
 *     bit-exact);
 *   mask targets: bit-exact (the kernel runs the host's column rule, which
 *     test-det-masks checks against rle_from_poly; RLE objects and M > 256
 *     are done on the host).
 * Without a visible GPU (or a build without CUDA) the test is skipped.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "backend.h"
#include "masks.h"
#include "postprocess.h"
#include "../unit/tap.h"

static struct bd_backend *cpu, *gpu;
static uint64_t rs = 88172645463325252ull;

static double urand(void)
{
        rs ^= rs << 13;
        rs ^= rs >> 7;
        rs ^= rs << 17;
        return (double)(rs >> 11) / 9007199254740992.0;
}

static struct bd_tensor on_gpu(const float *h, int nd, const int64_t *dims)
{
        struct bd_tensor t;
        memset(&t, 0, sizeof(t));
        bd_tensor_resize(gpu, &t, BD_F32, BD_NCHW, nd, dims);
        size_t b = bd_tensor_bytes(&t);
        if (b)
                gpu->ops->copy(gpu, t.data, BD_CUDA, h, BD_CPU, b);
        gpu->ops->sync(gpu);
        return t;
}

static float *to_host(const struct bd_tensor *t)
{
        size_t b = bd_tensor_bytes(t);
        float *h = xmalloc(b ? b : 1);
        if (b)
                gpu->ops->copy(gpu, h, BD_CPU, t->data, BD_CUDA, b);
        gpu->ops->sync(gpu);
        return h;
}

static void compare_dets(const struct det_dets *a, const struct det_dets *b, const char *what)
{
        char m[128];
        snprintf(m, sizeof(m), "%s: same count (%lld)", what, (long long)a->n);
        if (!ok(a->n == b->n, m)) {
                printf("#   CPU %lld, GPU %lld\n", (long long)a->n, (long long)b->n);
                return;
        }
        int64_t bad = -1;
        double ws = 0, wb = 0;
        for (int64_t i = 0; i < a->n; i++) {
                if (bad < 0 && (a->labels[i] != b->labels[i] || a->proposal[i] != b->proposal[i]))
                        bad = i;
                ws = fmax(ws, fabs(a->scores[i] - b->scores[i]) / fmax(fabs(a->scores[i]), 1e-3));
                double big = 1;
                for (int q = 0; q < 4; q++)
                        big = fmax(big, fabs(a->boxes[4 * i + q]));
                for (int q = 0; q < 4; q++)
                        wb = fmax(wb, fabs(a->boxes[4 * i + q] - b->boxes[4 * i + q]) / big);
        }
        snprintf(m, sizeof(m), "%s: same labels, proposals, order", what);
        if (!ok(bad < 0, m))
                printf("#   first difference at %lld\n", (long long)bad);
        snprintf(m, sizeof(m), "%s: scores within 1e-5", what);
        if (!ok(ws <= 1e-5, m))
                printf("#   worst %.3g\n", ws);
        snprintf(m, sizeof(m), "%s: boxes within 1e-5", what);
        if (!ok(wb <= 1e-5, m))
                printf("#   worst %.3g\n", wb);
}

static void test_postprocess(int N, int K, int H, int W)
{
        float *logits = xmalloc((size_t)N * K * sizeof(float)), *deltas = xmalloc((size_t)N * K * 16);
        float *props = xmalloc((size_t)N * 16 + 1);
        for (int64_t q = 0; q < (int64_t)N * K; q++)
                logits[q] = (float)(6 * urand() - 3 + (q % K == 0 ? 2 : 0));
        for (int64_t q = 0; q < (int64_t)N * K * 4; q++)
                deltas[q] = (float)(2 * urand() - 1);
        for (int i = 0; i < N; i++) {
                float x = (float)(urand() * W), y = (float)(urand() * H);
                float b[4] = { x, y, fminf(x + (float)(urand() * 200), (float)W),
                               fminf(y + (float)(urand() * 200), (float)H) };
                memcpy(props + 4 * i, b, sizeof(b));
        }
        int64_t dl[2] = { N, K }, dd[2] = { N, 4 * K }, dp[2] = { N, 4 };
        struct bd_tensor cl = bd_tensor_view(logits, BD_CPU, BD_F32, BD_NCHW, 2, dl);
        struct bd_tensor cd = bd_tensor_view(deltas, BD_CPU, BD_F32, BD_NCHW, 2, dd);
        struct bd_tensor cp = bd_tensor_view(props, BD_CPU, BD_F32, BD_NCHW, 2, dp);
        struct bd_tensor gl = on_gpu(logits, 2, dl), gd = on_gpu(deltas, 2, dd), gp = on_gpu(props, 2, dp);
        for (int conv = 0; conv < 2; conv++) {
                const struct det_conv *c = conv ? &det_conv_mlperf : &det_conv_torchvision;
                const struct det_post_config *pc = conv ? &det_post_mlperf : &det_post_torchvision;
                struct det_dets a, b;
                char what[96];
                snprintf(what, sizeof(what), "%s postprocess N %d K %d", conv ? "[R]" : "[TV]", N, K);
                int r1 = det_op_postprocess(cpu, c, pc, &cl, &cd, &cp, H, W, &a);
                int r2 = det_op_postprocess(gpu, c, pc, &gl, &gd, &gp, H, W, &b);
                if (!ok(r1 == 0 && r2 == 0, what)) {
                        printf("#   %s / %s\n", cpu->err.msg, gpu->err.msg);
                        continue;
                }
                compare_dets(&a, &b, what);
                det_dets_release(&a);
                det_dets_release(&b);
        }
        bd_tensor_release(&gl);
        bd_tensor_release(&gd);
        bd_tensor_release(&gp);
        free(logits);
        free(deltas);
        free(props);
}

static void test_paste(int n, int M, int H, int W)
{
        float *masks = xmalloc((size_t)n * M * M * sizeof(float) + 1), *boxes = xmalloc((size_t)n * 16 + 1);
        for (int64_t q = 0; q < (int64_t)n * M * M; q++)
                masks[q] = (float)urand();
        for (int i = 0; i < n; i++) {
                float x = (float)(urand() * (W + 40) - 20), y = (float)(urand() * (H + 40) - 20);
                float b[4] = { x, y, x + (float)(urand() * 150), y + (float)(urand() * 150) };
                if (i == 1)
                        b[0] = NAN;
                if (i == 2)
                        b[2] = b[0] - 5;        /* negative width */
                memcpy(boxes + 4 * i, b, sizeof(b));
        }
        int64_t dm[3] = { n, M, M }, db[2] = { n, 4 };
        struct bd_tensor cm = bd_tensor_view(masks, BD_CPU, BD_F32, BD_NCHW, 3, dm);
        struct bd_tensor cb = bd_tensor_view(boxes, BD_CPU, BD_F32, BD_NCHW, 2, db);
        struct bd_tensor gm = on_gpu(masks, 3, dm), gb = on_gpu(boxes, 2, db), co, go;
        memset(&co, 0, sizeof(co));
        memset(&go, 0, sizeof(go));
        int r1 = det_op_paste_masks(cpu, &cm, &cb, H, W, &co);
        int r2 = det_op_paste_masks(gpu, &gm, &gb, H, W, &go);
        char what[96];
        snprintf(what, sizeof(what), "paste %d masks of %d into %d x %d", n, M, H, W);
        if (ok(r1 == 0 && r2 == 0, what)) {
                float *h = to_host(&go);
                double worst = 0;
                for (int64_t q = 0; q < (int64_t)n * H * W; q++)
                        worst = fmax(worst, fabs(h[q] - ((float *)co.data)[q]));
                snprintf(what, sizeof(what), "paste %d masks: within 1e-6 of the CPU", n);
                if (!ok(worst <= 1e-6, what))
                        printf("#   worst %.3g\n", worst);
                free(h);
        } else {
                printf("#   %s / %s\n", cpu->err.msg, gpu->err.msg);
        }
        bd_tensor_release(&co);
        bd_tensor_release(&go);
        bd_tensor_release(&gm);
        bd_tensor_release(&gb);
        free(masks);
        free(boxes);
}

/* polygons (two objects, one of two parts), an RLE object, a NaN box; M
 * within the kernel's range and beyond it (the host path).  Without the RLE
 * object (rle 0) nothing is computed on the host (the GPU's targets start
 * from zeros), and the proposals come from the host (det_op_mask_targets_h,
 * as the trainer calls it). */
static void test_targets(int M, int rle)
{
        enum { P = 64 };
        double xy[3 * 16];
        uint32_t len[3] = { 16, 16, 16 };
        static uint32_t cnts[3] = { 20000, 30000, 26800 };     /* 240 x 320 */
        struct det_gt_mask gts[3];
        for (int q = 0; q < 48; q++)
                xy[q] = (float)(100 + 80 * urand());
        gts[0] = (struct det_gt_mask){ .kind = DET_GT_MASK_POLYGONS, .poly = { 2, len, xy } };
        gts[1] = (struct det_gt_mask){ .kind = DET_GT_MASK_POLYGONS, .poly = { 1, len + 2, xy + 32 } };
        gts[2] = (struct det_gt_mask){ .kind = DET_GT_MASK_RLE, .rle = { 240, 320, 3, cnts } };
        float props[P * 4];
        int64_t matched[P];
        for (int i = 0; i < P; i++) {
                float x = (float)(90 + 60 * urand()), y = (float)(90 + 60 * urand());
                float b[4] = { x, y, x + (float)(urand() * 60), y + (float)(urand() * 60) };
                if (i == 5)
                        b[1] = NAN;
                memcpy(props + 4 * i, b, sizeof(b));
                matched[i] = i % (rle ? 3 : 2);
        }
        int64_t dp[2] = { P, 4 };
        struct bd_tensor cp = bd_tensor_view(props, BD_CPU, BD_F32, BD_NCHW, 2, dp), gp = on_gpu(props, 2, dp), co, go;
        memset(&co, 0, sizeof(co));
        memset(&go, 0, sizeof(go));
        int r1 = det_op_mask_targets(cpu, gts, 3, &cp, matched, M, &co);
        int r2 = rle ? det_op_mask_targets(gpu, gts, 3, &gp, matched, M, &go) :
                       det_op_mask_targets_h(gpu, gts, 3, props, matched, P, M, &go);
        char what[96];
        snprintf(what, sizeof(what), "mask targets at %d x %d on both%s", M, M, rle ? "" : ", polygons only");
        if (ok(r1 == 0 && r2 == 0, what)) {
                float *h = to_host(&go);
                snprintf(what, sizeof(what), "mask targets at %d x %d%s: bit-exact", M, M, rle ? "" : ", polygons only");
                ok(memcmp(h, co.data, (size_t)P * M * M * sizeof(float)) == 0, what);
                free(h);
        } else {
                printf("#   %s / %s\n", cpu->err.msg, gpu->err.msg);
        }
        bd_tensor_release(&co);
        bd_tensor_release(&go);
        bd_tensor_release(&gp);
}

int main(void)
{
        struct bd_err err = { { 0 } };
        if (bd_backend_cuda_new(0, &gpu, &err) < 0) {
                printf("1..0 # SKIP no GPU: %s\n", err.msg);
                return 0;
        }
        if (bd_backend_cpu_new(0, &cpu, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        test_postprocess(1000, 81, 800, 1216);
        test_postprocess(300, 5, 480, 640);
        test_postprocess(0, 81, 800, 1216);
        test_paste(100, 28, 800, 1216);
        test_paste(7, 14, 60, 50);
        test_paste(0, 28, 60, 50);
        test_targets(28, 1);
        test_targets(14, 1);
        test_targets(300, 1);
        test_targets(28, 0);
        test_targets(300, 0);
        bd_backend_free(gpu);
        bd_backend_free(cpu);
        return done_testing();
}
