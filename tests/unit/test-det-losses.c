/* test-det-losses.c: trainer/det/losses.[ch] and the ops under them
 * (select channel, label mask) on the CPU backend.
 *
 * Against torchvision 0.14's rpn compute_loss, fastrcnn_loss (beta 1/9, and
 * the reference's beta 1.0) and maskrcnn_loss, recorded in float64 by
 * tests/det-loss-golden.py on inputs both sides make from the same integer
 * hash (u() here and there):
 *   float64: losses within 1e-12 relative, gradients within 1e-12 of the
 *            largest gradient magnitude (same arithmetic, other order);
 *   float32: losses within 1e-5 relative, gradients within 1e-5 of the
 *            largest magnitude (float rounding of inputs and sums).
 * Then: select channel in NCHW, NHWC and NCHW8C against direct indexing
 * (exact), its backward and accumulation, labels outside [0, C); nothing
 * sampled (losses 0, gradients 0); an empty mask batch; shape errors.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "losses.h"
#include "macro.h"
#include "tap.h"
#include "det-loss-golden.h"

static struct bd_backend *be;
/* values read back at once, the normaliser counted from the labels */
static const struct det_loss_opts now = { .n = -1, .gscale = 1 };

#define diag(...) (printf("#   "), printf(__VA_ARGS__), printf("\n"))

/* the generator's u(): a 32-bit integer hash, exact in double */
static double u(int64_t i, int64_t seed)
{
        uint32_t x = (uint32_t)((uint64_t)(i + 1) * 2654435761u + (uint64_t)seed * 97531u);
        x ^= x >> 15;
        x *= 2246822519u;
        x ^= x >> 13;
        return x / 4294967296.0;
}

static struct bd_tensor vals(enum bd_dtype dt, int nd, const int64_t *dims, int64_t seed, double lo, double hi)
{
        struct bd_tensor t = { 0 };
        if (bd_tensor_resize(be, &t, dt, BD_NCHW, nd, dims) < 0)
                abort();
        for (int64_t i = 0, n = bd_tensor_numel(&t); i < n; i++) {
                double v = lo + (hi - lo) * u(i, seed);
                if (dt == BD_F64)
                        ((double *)t.data)[i] = v;
                else
                        ((float *)t.data)[i] = (float)v;
        }
        return t;
}

static struct bd_tensor labels(int64_t n, const int32_t *v)
{
        struct bd_tensor t = { 0 };
        if (bd_tensor_resize(be, &t, BD_I32, BD_NCHW, 1, &n) < 0)
                abort();
        memcpy(t.data, v, (size_t)n * sizeof(*v));
        return t;
}

static double at(const struct bd_tensor *t, int64_t i)
{
        return t->dtype == BD_F64 ? ((const double *)t->data)[i] : ((const float *)t->data)[i];
}

static void check_grad(const char *what, const struct bd_tensor *got, const double *want, int64_t n, double tol)
{
        double big = 1e-30, worst = 0;
        int shape_ok = got->data && bd_tensor_numel(got) == n;
        for (int64_t i = 0; i < n; i++)
                big = fmax(big, fabs(want[i]));
        for (int64_t i = 0; shape_ok && i < n; i++)
                worst = fmax(worst, fabs(at(got, i) - want[i]));
        if (!ok(shape_ok && worst <= tol * big, what))
                diag("  %lld values, worst difference %.3g, largest gradient %.3g", (long long)n, worst, big);
}

static int same(const struct bd_tensor *a, const struct bd_tensor *b)
{
        return bd_tensor_same_shape(a, b) && a->dtype == b->dtype &&
               memcmp(a->data, b->data, bd_tensor_bytes(a)) == 0;
}

/* a second call's values (through an accumulator, vscale 2) read back later */
static void check_later(const char *what, int r, int unread, const double *got, const double *first, int k)
{
        int good = r == 0 && unread;
        for (int i = 0; i < k; i++)
                good &= got[i] == 2 * first[i];
        if (!ok(good, what))
                diag("  %s; %d", r < 0 ? be->err.msg : "", unread);
}

static void check_loss(const char *what, double got, double want, double tol)
{
        if (!ok(fabs(got - want) <= tol * fmax(fabs(want), 1e-12), what))
                diag("  got %.17g, want %.17g", got, want);
}

static void rpn_case(const char *tag, enum bd_dtype dt, int64_t M, int64_t seed, const double *cuts, const int32_t *labs,
                     int ncut, const double *want_loss, const double *want_dobj, const double *want_dd)
{
        char what[160];
        double tol = dt == BD_F64 ? 1e-12 : 1e-5;
        int64_t d2[2] = { M, 4 };
        struct bd_tensor obj = vals(dt, 1, &M, seed, -4, 4), deltas = vals(dt, 2, d2, seed + 1, -1, 1),
                         tgt = vals(dt, 2, d2, seed + 2, -1, 1);
        int32_t *lv = xmalloc((size_t)M * sizeof(*lv));
        for (int64_t i = 0; i < M; i++) {
                double v = u(i, seed + 3);
                int k = 0;
                while (k < ncut - 1 && v >= cuts[k])
                        k++;
                lv[i] = labs[k];
        }
        struct bd_tensor lab = labels(M, lv), dobj = { 0 }, dd = { 0 };
        struct det_loss_ws ws = { 0 };
        double lo = -1, lb = -1;
        snprintf(what, sizeof(what), "RPN %s %s: runs", tag, bd_dtype_name(dt));
        if (!ok(det_rpn_loss(be, &ws, &now, &obj, &deltas, &lab, &tgt, DET_BETA_RPN, &lo, &lb, &dobj, &dd) == 0, what))
                diag("  %s", be->err.msg);
        snprintf(what, sizeof(what), "RPN %s %s: objectness loss = compute_loss's", tag, bd_dtype_name(dt));
        check_loss(what, lo, want_loss[0], tol);
        snprintf(what, sizeof(what), "RPN %s %s: box loss = compute_loss's", tag, bd_dtype_name(dt));
        check_loss(what, lb, want_loss[1], tol);
        snprintf(what, sizeof(what), "RPN %s %s: objectness gradient = autograd's", tag, bd_dtype_name(dt));
        check_grad(what, &dobj, want_dobj, M, tol);
        snprintf(what, sizeof(what), "RPN %s %s: delta gradient = autograd's", tag, bd_dtype_name(dt));
        check_grad(what, &dd, want_dd, 4 * M, tol);
        /* the caller's count, the values read back later */
        double nc = 0, l2[2] = { -1, -1 }, l1[2] = { lo, lb };
        for (int64_t i = 0; i < M; i++)
                nc += lv[i] >= 0;
        struct det_loss_acc acc = { 0 };
        struct det_loss_opts later = { .n = nc, .gscale = 1, .vscale = 2, .acc = &acc };
        struct bd_tensor dobj2 = { 0 }, dd2 = { 0 };
        int r = det_loss_acc_begin(be, &acc);
        r = r < 0 ? r : det_rpn_loss(be, &ws, &later, &obj, &deltas, &lab, &tgt, DET_BETA_RPN, &l2[0], &l2[1], &dobj2,
                                     &dd2);
        int unread = l2[0] == 0 && l2[1] == 0 && acc.used == 2 && same(&dobj, &dobj2) && same(&dd, &dd2);
        r = r < 0 ? r : det_loss_acc_read(be, &acc);
        snprintf(what, sizeof(what), "RPN %s %s: caller's count, values read once later: the same", tag,
                 bd_dtype_name(dt));
        check_later(what, r, unread && acc.used == 0, l2, l1, 2);
        det_loss_acc_release(&acc);
        bd_tensor_release(&dobj2);
        bd_tensor_release(&dd2);
        det_loss_ws_release(&ws);
        bd_tensor_release(&obj);
        bd_tensor_release(&deltas);
        bd_tensor_release(&tgt);
        bd_tensor_release(&lab);
        bd_tensor_release(&dobj);
        bd_tensor_release(&dd);
        free(lv);
}

static void box_case(const char *tag, enum bd_dtype dt, int64_t R, int64_t K, int64_t seed, double beta,
                     const double *want_loss, const double *want_dcls, const double *want_dbox)
{
        char what[160];
        double tol = dt == BD_F64 ? 1e-12 : 1e-5;
        int64_t dc[2] = { R, K }, db[2] = { R, 4 * K }, dt2[2] = { R, 4 };
        struct bd_tensor cls = vals(dt, 2, dc, seed, -3, 3), box = vals(dt, 2, db, seed + 1, -1.5, 1.5),
                         tgt = vals(dt, 2, dt2, seed + 2, -1.5, 1.5);
        int32_t *lv = xmalloc((size_t)R * sizeof(*lv));
        for (int64_t i = 0; i < R; i++)
                lv[i] = u(i, seed + 4) < 0.25 ? 1 + (int32_t)(u(i, seed + 3) * (double)(K - 1)) : 0;
        struct bd_tensor lab = labels(R, lv), dcls = { 0 }, dbox = { 0 };
        struct det_loss_ws ws = { 0 };
        double lc = -1, lb = -1;
        snprintf(what, sizeof(what), "box head %s %s: runs", tag, bd_dtype_name(dt));
        if (!ok(det_fastrcnn_loss(be, &ws, &now, &cls, &box, &lab, &tgt, beta, &lc, &lb, &dcls, &dbox) == 0, what))
                diag("  %s", be->err.msg);
        snprintf(what, sizeof(what), "box head %s %s: classification loss = fastrcnn_loss's", tag, bd_dtype_name(dt));
        check_loss(what, lc, want_loss[0], tol);
        snprintf(what, sizeof(what), "box head %s %s: box loss = fastrcnn_loss's", tag, bd_dtype_name(dt));
        check_loss(what, lb, want_loss[1], tol);
        snprintf(what, sizeof(what), "box head %s %s: logit gradient = autograd's", tag, bd_dtype_name(dt));
        check_grad(what, &dcls, want_dcls, R * K, tol);
        snprintf(what, sizeof(what), "box head %s %s: delta gradient = autograd's", tag, bd_dtype_name(dt));
        check_grad(what, &dbox, want_dbox, R * 4 * K, tol);
        double l2[2] = { -1, -1 }, l1[2] = { lc, lb };
        struct det_loss_acc acc = { 0 };
        struct det_loss_opts later = { .n = (double)R, .gscale = 1, .vscale = 2, .acc = &acc };
        struct bd_tensor dcls2 = { 0 }, dbox2 = { 0 };
        int r = det_loss_acc_begin(be, &acc);
        r = r < 0 ? r : det_fastrcnn_loss(be, &ws, &later, &cls, &box, &lab, &tgt, beta, &l2[0], &l2[1], &dcls2,
                                          &dbox2);
        int unread = l2[0] == 0 && l2[1] == 0 && acc.used == 2 && same(&dcls, &dcls2) && same(&dbox, &dbox2);
        r = r < 0 ? r : det_loss_acc_read(be, &acc);
        snprintf(what, sizeof(what), "box head %s %s: caller's count, values read once later: the same", tag,
                 bd_dtype_name(dt));
        check_later(what, r, unread, l2, l1, 2);
        det_loss_acc_release(&acc);
        bd_tensor_release(&dcls2);
        bd_tensor_release(&dbox2);
        det_loss_ws_release(&ws);
        bd_tensor_release(&cls);
        bd_tensor_release(&box);
        bd_tensor_release(&tgt);
        bd_tensor_release(&lab);
        bd_tensor_release(&dcls);
        bd_tensor_release(&dbox);
        free(lv);
}

static void mask_case(enum bd_dtype dt, enum bd_layout layout)
{
        char what[160];
        const int64_t P = MASK_A_P, K = MASK_A_K, M = MASK_A_M, seed = MASK_A_SEED;
        double tol = dt == BD_F64 ? 1e-12 : 1e-5;
        int64_t dl[4] = { P, K, M, M }, dtg[3] = { P, M, M };
        struct bd_tensor logits = vals(dt, 4, dl, seed, -5, 5), tgt = vals(dt, 3, dtg, seed + 1, -0.2, 1.2), x = { 0 };
        for (int64_t i = 0; i < P * M * M; i++) {       /* clamp to [0, 1] as the generator */
                double v = fmin(fmax(-0.2 + 1.4 * u(i, seed + 1), 0.0), 1.0);
                if (dt == BD_F64)
                        ((double *)tgt.data)[i] = v;
                else
                        ((float *)tgt.data)[i] = (float)v;
        }
        if (bd_op_relayout(be, &logits, layout, &x) < 0)
                abort();
        int32_t lv[MASK_A_P];
        for (int64_t i = 0; i < P; i++)
                lv[i] = 1 + (int32_t)(u(i, seed + 2) * (double)(K - 1));
        struct bd_tensor lab = labels(P, lv), dx = { 0 }, d = { 0 };
        struct det_loss_ws ws = { 0 };
        double l = -1;
        snprintf(what, sizeof(what), "mask %s %s: runs", bd_layout_name(layout), bd_dtype_name(dt));
        if (!ok(det_mask_loss(be, &ws, &now, &x, &lab, &tgt, &l, &dx) == 0, what))
                diag("  %s", be->err.msg);
        snprintf(what, sizeof(what), "mask %s %s: loss = maskrcnn_loss's", bd_layout_name(layout), bd_dtype_name(dt));
        check_loss(what, l, mask_a_loss[0], tol);
        snprintf(what, sizeof(what), "mask %s %s: gradient = autograd's (in the logits' layout)", bd_layout_name(layout),
                 bd_dtype_name(dt));
        ok(dx.layout == layout && bd_op_relayout(be, &dx, BD_NCHW, &d) == 0, "mask: gradient comes back in layout");
        check_grad(what, &d, mask_a_dlogits, P * K * M * M, tol);
        double l2 = -1;
        struct det_loss_acc acc = { 0 };
        struct det_loss_opts later = { .n = 12345, .gscale = 1, .vscale = 2, .acc = &acc };
        struct bd_tensor dx2 = { 0 };
        int r = det_loss_acc_begin(be, &acc);
        r = r < 0 ? r : det_mask_loss(be, &ws, &later, &x, &lab, &tgt, &l2, &dx2);
        int unread = l2 == 0 && acc.used == 1 && same(&dx, &dx2);
        r = r < 0 ? r : det_loss_acc_read(be, &acc);
        snprintf(what, sizeof(what), "mask %s %s: values read once later: the same (n is the elements)",
                 bd_layout_name(layout), bd_dtype_name(dt));
        check_later(what, r, unread, &l2, &l, 1);
        det_loss_acc_release(&acc);
        bd_tensor_release(&dx2);
        det_loss_ws_release(&ws);
        bd_tensor_release(&logits);
        bd_tensor_release(&tgt);
        bd_tensor_release(&x);
        bd_tensor_release(&lab);
        bd_tensor_release(&dx);
        bd_tensor_release(&d);
}

/* select channel against direct indexing, every layout */
static void select_layouts(void)
{
        int64_t N = 5, C = 16, H = 3, W = 4, dims[4] = { N, C, H, W };
        struct bd_tensor x = vals(BD_F32, 4, dims, 41, -1, 1);
        int32_t iv[5] = { 3, 15, -1, 16, 0 };
        struct bd_tensor idx = labels(N, iv);
        enum bd_layout ls[3] = { BD_NCHW, BD_NHWC, BD_NCHW8C };
        for (int k = 0; k < 3; k++) {
                struct bd_tensor xl = { 0 }, y = { 0 }, dx = { 0 }, dxp = { 0 };
                char what[128];
                bd_op_relayout(be, &x, ls[k], &xl);
                int r = bd_op_select_channel(be, &xl, &idx, &y);
                int good = r == 0 && y.ndim == 4 && y.dims[1] == 1 && y.layout == BD_NCHW;
                for (int64_t n = 0; good && n < N; n++)
                        for (int64_t h = 0; h < H; h++)
                                for (int64_t w = 0; w < W; w++) {
                                        float want = iv[n] >= 0 && iv[n] < C ?
                                                ((float *)x.data)[((n * C + iv[n]) * H + h) * W + w] : 0.0f;
                                        good &= ((float *)y.data)[(n * H + h) * W + w] == want;
                                }
                snprintf(what, sizeof(what), "select channel %s: exact, 0 for channels outside [0, C)",
                         bd_layout_name(ls[k]));
                ok(good, what);
                /* backward: y as the gradient, twice with accumulation */
                r = bd_op_select_channel_bwd(be, &y, &idx, &xl, &dx, 0);
                r = r < 0 ? r : bd_op_select_channel_bwd(be, &y, &idx, &xl, &dx, 1);
                good = r == 0 && dx.layout == ls[k] && bd_op_relayout(be, &dx, BD_NCHW, &dxp) == 0;
                for (int64_t n = 0; good && n < N; n++)
                        for (int64_t c = 0; c < C; c++)
                                for (int64_t h = 0; h < H; h++)
                                        for (int64_t w = 0; w < W; w++) {
                                                int64_t o = ((n * C + c) * H + h) * W + w;
                                                float want = c == iv[n] ? 2 * ((float *)x.data)[o] : 0.0f;
                                                good &= ((float *)dxp.data)[o] == want;
                                        }
                snprintf(what, sizeof(what), "select channel backward %s: scatter, accumulate, zero elsewhere",
                         bd_layout_name(ls[k]));
                ok(good, what);
                bd_tensor_release(&xl);
                bd_tensor_release(&y);
                bd_tensor_release(&dx);
                bd_tensor_release(&dxp);
        }
        bd_tensor_release(&x);
        bd_tensor_release(&idx);
}

/* nothing sampled, no positives, shape errors */
static void edges(void)
{
        struct det_loss_ws ws = { 0 };
        int64_t M = 8, d2[2] = { M, 4 };
        struct bd_tensor obj = vals(BD_F32, 1, &M, 1, -1, 1), deltas = vals(BD_F32, 2, d2, 2, -1, 1),
                         tgt = vals(BD_F32, 2, d2, 3, -1, 1), dobj = { 0 }, dd = { 0 };
        int32_t none[8] = { -1, -1, -1, -1, -1, -1, -1, -1 }, negs[8] = { 0, 0, -1, 0, -1, -1, 0, 0 };
        struct bd_tensor lab = labels(M, none), lab2 = labels(M, negs);
        double a = -1, b = -1, s = -1;
        ok(det_rpn_loss(be, &ws, &now, &obj, &deltas, &lab, &tgt, DET_BETA_RPN, &a, &b, &dobj, &dd) == 0 && a == 0 &&
           b == 0, "RPN, nothing sampled: losses 0");
        ok(bd_op_sumsq(be, &dobj, &s) == 0 && s == 0 && bd_op_sumsq(be, &dd, &s) == 0 && s == 0,
           "RPN, nothing sampled: zero gradients");
        ok(det_rpn_loss(be, &ws, &now, &obj, &deltas, &lab2, &tgt, DET_BETA_RPN, &a, &b, &dobj, &dd) == 0 && a > 0 &&
           b == 0 && bd_op_sumsq(be, &dd, &s) == 0 && s == 0, "RPN, negatives only: box loss 0, no delta gradient");
        /* a NaN target on an unsampled row still poisons the sum: documented, finite targets required */
        int64_t M2 = 7;
        ok(det_rpn_loss(be, &ws, &now, &obj, &deltas, &lab, &tgt, DET_BETA_RPN, &a, &b, NULL, NULL) == 0,
           "RPN: gradients not wanted");
        struct bd_tensor shortlab = labels(M2, none);
        ok(det_rpn_loss(be, &ws, &now, &obj, &deltas, &shortlab, &tgt, DET_BETA_RPN, &a, &b, NULL, NULL) == -EINVAL,
           "RPN: labels of another length refused");
        diag("%s", be->err.msg);
        /* mask loss over no RoIs */
        int64_t de[4] = { 0, 4, 28, 28 }, dte[3] = { 0, 28, 28 };
        struct bd_tensor el = { 0 }, et = { 0 }, ed = { 0 }, elab = { 0 };
        int64_t zero = 0;
        bd_tensor_resize(be, &el, BD_F32, BD_NHWC, 4, de);
        bd_tensor_resize(be, &et, BD_F32, BD_NCHW, 3, dte);
        bd_tensor_resize(be, &elab, BD_I32, BD_NCHW, 1, &zero);
        ok(det_mask_loss(be, &ws, &now, &el, &elab, &et, &a, &ed) == 0 && a == 0 && bd_tensor_numel(&ed) == 0,
           "mask loss over no RoIs: 0, empty gradient");
        /* box head: K from the logits, deltas must be (R, 4K) */
        int64_t dc[2] = { 8, 3 }, dbx[2] = { 8, 8 };
        struct bd_tensor cls = vals(BD_F32, 2, dc, 4, -1, 1), box = vals(BD_F32, 2, dbx, 5, -1, 1);
        ok(det_fastrcnn_loss(be, &ws, &now, &cls, &box, &lab2, &deltas, 1, &a, &b, NULL, NULL) == -EINVAL,
           "box head: deltas that are not (R, 4K) refused");
        diag("%s", be->err.msg);
        ok(det_fastrcnn_loss(be, &ws, &now, &cls, &deltas, &lab2, &deltas, 1, &a, &b, NULL, NULL) == -EINVAL,
           "box head: (R, 4) deltas for 3 classes refused");
        int64_t dl[4] = { 8, 3, 4, 4 }, dt3[3] = { 8, 4, 5 };
        struct bd_tensor ml = vals(BD_F32, 4, dl, 6, -1, 1), mt = vals(BD_F32, 3, dt3, 7, 0, 1);
        ok(det_mask_loss(be, &ws, &now, &ml, &lab2, &mt, &a, NULL) == -EINVAL, "mask: targets of another size refused");
        diag("%s", be->err.msg);
        /* the accumulator: nothing sampled takes no slot; 8 values, then a refusal */
        struct det_loss_acc acc = { 0 };
        struct det_loss_opts zero_n = { .n = 0, .gscale = 1, .acc = &acc }, later = { .n = 5, .gscale = 1, .acc = &acc };
        double v[10];
        int r = det_loss_acc_begin(be, &acc);
        ok(r == 0 && det_rpn_loss(be, &ws, &zero_n, &obj, &deltas, &lab, &tgt, DET_BETA_RPN, &a, &b, &dobj, &dd) == 0 &&
           a == 0 && b == 0 && acc.used == 0 && bd_op_sumsq(be, &dobj, &s) == 0 && s == 0,
           "accumulator: nothing sampled (n 0) takes no slot, zero gradients");
        ok(det_loss_acc_read(be, &acc) == 0, "accumulator: a read of nothing");
        for (int k = 0; k < 4 && r == 0; k++)
                r = det_rpn_loss(be, &ws, &later, &obj, &deltas, &lab2, &tgt, DET_BETA_RPN, &v[2 * k], &v[2 * k + 1],
                                 NULL, NULL);
        ok(r == 0 && acc.used == 8, "accumulator: 8 values");
        ok(det_rpn_loss(be, &ws, &later, &obj, &deltas, &lab2, &tgt, DET_BETA_RPN, &v[8], &v[9], NULL, NULL) ==
                   -ENOSPC, "accumulator: a ninth refused");
        diag("%s", be->err.msg);
        ok(det_loss_acc_read(be, &acc) == 0 && acc.used == 0 && v[0] > 0 && v[0] == v[6] && v[1] == 0,
           "accumulator: read back, the same call the same value");
        ok(bd_op_sum_to(be, &obj, &acc.sums, DET_LOSS_SLOTS) == -EINVAL && bd_op_sum_to(be, &obj, &obj, 0) == -EINVAL,
           "sum_to: a slot outside the accumulator, an accumulator not f64: refused");
        diag("%s", be->err.msg);
        det_loss_acc_release(&acc);
        det_loss_ws_release(&ws);
        struct bd_tensor *all[] = { &obj, &deltas, &tgt, &dobj, &dd, &lab, &lab2, &shortlab, &el, &et, &elab, &ed, &cls, &box, &ml, &mt };
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
                bd_tensor_release(all[i]);
}

int main(void)
{
        struct bd_err err = { 0 };
        if (bd_backend_cpu_new(2, &be, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        static const double cuts_a[3] = { 0.70, 0.95, 1.0 }, cuts_b[2] = { 0.5, 1.0 };
        static const int32_t labs_a[3] = { -1, 0, 1 }, labs_b[2] = { 0, 1 };
        enum bd_dtype dts[2] = { BD_F64, BD_F32 };
        for (int k = 0; k < 2; k++) {
                rpn_case("A", dts[k], RPN_A_M, RPN_A_SEED, cuts_a, labs_a, 3, rpn_a_loss, rpn_a_dobj, rpn_a_ddeltas);
                rpn_case("B", dts[k], RPN_B_M, RPN_B_SEED, cuts_b, labs_b, 2, rpn_b_loss, rpn_b_dobj, rpn_b_ddeltas);
                box_case("torchvision", dts[k], BOX_TV_R, BOX_TV_K, BOX_TV_SEED, DET_BETA_BOX_TORCHVISION, box_tv_loss,
                         box_tv_dcls, box_tv_dbox);
                box_case("MLPerf", dts[k], BOX_MP_R, BOX_MP_K, BOX_MP_SEED, DET_BETA_BOX_MLPERF, box_mp_loss,
                         box_mp_dcls, box_mp_dbox);
                mask_case(dts[k], BD_NCHW);
                mask_case(dts[k], BD_NHWC);
        }
        select_layouts();
        edges();
        bd_backend_free(be);
        return done_testing();
}
