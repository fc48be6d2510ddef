/* losses.c: the heads' losses as compositions of ops.h (see losses.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>

#include "losses.h"

void det_loss_ws_release(struct det_loss_ws *ws)
{
        bd_tensor_release(&ws->t);
        bd_tensor_release(&ws->w);
        bd_tensor_release(&ws->wb);
        bd_tensor_release(&ws->l);
        bd_tensor_release(&ws->sel);
        bd_tensor_release(&ws->dsel);
}

static int check_label(struct bd_backend *be, const char *op, const struct bd_tensor *label, int64_t n)
{
        if (!label || label->ndim != 1 || label->dtype != BD_I32 || label->dims[0] != n) {
                char b[128];
                return bd_err_set(&be->err, -EINVAL, "%s: labels must be (%lld) i32, got %s", op, (long long)n,
                                  label ? bd_tensor_str(label, b, sizeof(b)) : "nothing");
        }
        return 0;
}

static int check_rows(struct bd_backend *be, const char *op, const char *name, const struct bd_tensor *t, int64_t R,
                      int64_t cols)
{
        if (!t || t->ndim != 2 || t->dims[0] != R || t->dims[1] != cols) {
                char b[128];
                return bd_err_set(&be->err, -EINVAL, "%s: %s must be (%lld, %lld), got %s", op, name, (long long)R,
                                  (long long)cols, t ? bd_tensor_str(t, b, sizeof(b)) : "nothing");
        }
        return 0;
}

int det_loss_acc_begin(struct bd_backend *be, struct det_loss_acc *acc)
{
        int64_t d = DET_LOSS_SLOTS;
        acc->used = 0;
        return bd_tensor_resize(be, &acc->sums, BD_F64, BD_NCHW, 1, &d);
}

int det_loss_acc_read(struct bd_backend *be, struct det_loss_acc *acc)
{
        double h[DET_LOSS_SLOTS];
        int n = acc->used, r;
        acc->used = 0;
        if (n == 0)
                return 0;
        if ((r = be->ops->copy(be, h, BD_CPU, acc->sums.data, be->dev, (size_t)n * sizeof(double))) < 0)
                return r;
        for (int i = 0; i < n; i++)
                *acc->dst[i] = h[i] / acc->div[i] * acc->scale[i];
        return 0;
}

void det_loss_acc_release(struct det_loss_acc *acc)
{
        bd_tensor_release(&acc->sums);
        acc->used = 0;
}

/* the value sum(l) / n * vscale into *dst: now, or through o->acc */
static int value(struct bd_backend *be, const struct det_loss_opts *o, const struct bd_tensor *l, double n,
                 double *dst)
{
        double v = o->vscale ? o->vscale : 1, sum = 0;
        struct det_loss_acc *a = o->acc;
        int r;
        if (!a) {
                if ((r = bd_op_sum(be, l, &sum)) < 0)
                        return r;
                *dst = sum / n * v;
                return 0;
        }
        if (a->used >= DET_LOSS_SLOTS)
                return bd_err_set(&be->err, -ENOSPC, "det loss: more than %d values before a read", DET_LOSS_SLOTS);
        if ((r = bd_op_sum_to(be, l, &a->sums, a->used)) < 0)
                return r;
        *dst = 0;
        a->dst[a->used] = dst;
        a->div[a->used] = n;
        a->scale[a->used++] = v;
        return 0;
}

/* the mask of rows with lo <= label (as dt) into ws->w, and their number:
 * the caller's, or counted (a read back) */
static int count_rows(struct bd_backend *be, struct det_loss_ws *ws, const struct det_loss_opts *o,
                      const struct bd_tensor *label, int32_t lo, enum bd_dtype dt, double *n)
{
        int r = bd_op_label_mask(be, label, 1, lo, INT32_MAX, dt, &ws->w);
        if (r < 0 || o->n >= 0) {
                *n = o->n;
                return r;
        }
        return bd_op_sum(be, &ws->w, n);
}

/* zero gradient shaped like x (nothing sampled) */
static int zero_like(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *dx)
{
        int r;
        if (!dx)
                return 0;
        if (dx->cap == 0 && dx->data) {
                if (!bd_tensor_same_shape(dx, x))
                        return bd_err_set(&be->err, -EINVAL, "det loss: gradient view has the wrong shape");
        } else if ((r = bd_tensor_resize_like(be, dx, x)) < 0) {
                return r;
        }
        return bd_op_fill(be, dx, 0);
}

int det_rpn_loss(struct bd_backend *be, struct det_loss_ws *ws, const struct det_loss_opts *lo,
                 const struct bd_tensor *obj, const struct bd_tensor *deltas, const struct bd_tensor *label,
                 const struct bd_tensor *tgt, double beta, double *loss_obj, double *loss_box,
                 struct bd_tensor *d_obj, struct bd_tensor *d_deltas)
{
        const char *op = "RPN loss";
        int r;
        int64_t M = deltas && deltas->ndim == 2 ? deltas->dims[0] : -1;
        if ((r = check_rows(be, op, "deltas", deltas, M, 4)) < 0 || (r = check_label(be, op, label, M)) < 0 ||
            (r = check_rows(be, op, "targets", tgt, M, 4)) < 0)
                return r;
        if (!obj || bd_tensor_numel(obj) != M)
                return bd_err_set(&be->err, -EINVAL, "%s: %lld objectness logits for %lld labels", op,
                                  obj ? (long long)bd_tensor_numel(obj) : 0LL, (long long)M);
        struct bd_tensor o;
        if ((r = bd_tensor_reshape(obj, 1, &M, &o)) < 0)
                return bd_err_set(&be->err, r, "%s: objectness logits must be plain (nchw)", op);
        double n = 0, gscale = lo->gscale;
        if ((r = count_rows(be, ws, lo, label, 0, obj->dtype, &n)) < 0)
                return r;
        *loss_obj = *loss_box = 0;
        if (n == 0) {
                if ((r = zero_like(be, &o, d_obj)) < 0)
                        return r;
                return zero_like(be, deltas, d_deltas);
        }
        /* objectness: targets 1 on positives, weights 1 on sampled anchors */
        if ((r = bd_op_label_mask(be, label, 1, 1, INT32_MAX, obj->dtype, &ws->t)) < 0 ||
            (r = bd_op_bce(be, &o, &ws->t, &ws->w, gscale / n, &ws->l, d_obj)) < 0 ||
            (r = value(be, lo, &ws->l, n, loss_obj)) < 0)
                return r;
        /* boxes: the positives' 4 deltas */
        if ((r = bd_op_label_mask(be, label, 4, 1, INT32_MAX, deltas->dtype, &ws->wb)) < 0 ||
            (r = bd_op_smooth_l1(be, deltas, tgt, &ws->wb, beta, gscale / n, &ws->l, d_deltas)) < 0)
                return r;
        return value(be, lo, &ws->l, n, loss_box);
}

int det_fastrcnn_loss(struct bd_backend *be, struct det_loss_ws *ws, const struct det_loss_opts *lo,
                      const struct bd_tensor *cls, const struct bd_tensor *box, const struct bd_tensor *label,
                      const struct bd_tensor *tgt, double beta, double *loss_cls, double *loss_box,
                      struct bd_tensor *d_cls, struct bd_tensor *d_box)
{
        const char *op = "box head loss";
        int r;
        if (!cls || cls->ndim != 2 || cls->dims[1] < 1) {
                char b[128];
                return bd_err_set(&be->err, -EINVAL, "%s: class logits must be (R, K), got %s", op,
                                  cls ? bd_tensor_str(cls, b, sizeof(b)) : "nothing");
        }
        int64_t R = cls->dims[0], K = cls->dims[1];
        if ((r = check_label(be, op, label, R)) < 0 || (r = check_rows(be, op, "box deltas", box, R, 4 * K)) < 0 ||
            (r = check_rows(be, op, "targets", tgt, R, 4)) < 0)
                return r;
        /* the rows' mask is not needed here: only a count not given makes it */
        double n = lo->n, gscale = lo->gscale;
        if (n < 0 && (r = count_rows(be, ws, lo, label, 0, cls->dtype, &n)) < 0)
                return r;
        *loss_cls = *loss_box = 0;
        if (n == 0) {
                if ((r = zero_like(be, cls, d_cls)) < 0)
                        return r;
                return zero_like(be, box, d_box);
        }
        if ((r = bd_op_softmax_ce(be, cls, label, NULL, gscale / n, &ws->l, d_cls)) < 0 ||
            (r = value(be, lo, &ws->l, n, loss_cls)) < 0)
                return r;
        /* the label's 4 deltas of each row: (R, 4K) seen as (R, K, 4, 1) */
        struct bd_tensor b4, t4, d4;
        int64_t d4d[4] = { R, K, 4, 1 }, t4d[4] = { R, 1, 4, 1 };
        if (bd_tensor_reshape(box, 4, d4d, &b4) < 0 || bd_tensor_reshape(tgt, 4, t4d, &t4) < 0)
                return bd_err_set(&be->err, -EINVAL, "%s: box deltas and targets must be plain (nchw)", op);
        if ((r = bd_op_select_channel(be, &b4, label, &ws->sel)) < 0 ||
            (r = bd_op_label_mask(be, label, 4, 1, INT32_MAX, box->dtype, &ws->wb)) < 0)
                return r;
        struct bd_tensor w4;
        bd_tensor_reshape(&ws->wb, 4, t4d, &w4);
        if ((r = bd_op_smooth_l1(be, &ws->sel, &t4, &w4, beta, gscale / n, &ws->l, d_box ? &ws->dsel : NULL)) < 0 ||
            (r = value(be, lo, &ws->l, n, loss_box)) < 0)
                return r;
        if (!d_box)
                return 0;
        if (d_box->cap == 0 && d_box->data) {
                if (!bd_tensor_same_shape(d_box, box))
                        return bd_err_set(&be->err, -EINVAL, "%s: box gradient view has the wrong shape", op);
        } else if ((r = bd_tensor_resize_like(be, d_box, box)) < 0) {
                return r;
        }
        bd_tensor_reshape(d_box, 4, d4d, &d4);
        return bd_op_select_channel_bwd(be, &ws->dsel, label, &b4, &d4, 0);
}

int det_mask_loss(struct bd_backend *be, struct det_loss_ws *ws, const struct det_loss_opts *lo,
                  const struct bd_tensor *logits, const struct bd_tensor *label, const struct bd_tensor *tgt,
                  double *loss, struct bd_tensor *d_logits)
{
        const char *op = "mask loss";
        int r;
        char b[128];
        if (!logits || logits->ndim != 4)
                return bd_err_set(&be->err, -EINVAL, "%s: logits must be (P, K, M, M), got %s", op,
                                  logits ? bd_tensor_str(logits, b, sizeof(b)) : "nothing");
        int64_t P = logits->dims[0], H = logits->dims[2], W = logits->dims[3];
        if ((r = check_label(be, op, label, P)) < 0)
                return r;
        int64_t td[4] = { P, 1, H, W };
        struct bd_tensor t4;
        if (!tgt || bd_tensor_numel(tgt) != P * H * W || tgt->ndim < 3 || tgt->dims[0] != P ||
            tgt->dims[tgt->ndim - 1] != W || tgt->dims[tgt->ndim - 2] != H || bd_tensor_reshape(tgt, 4, td, &t4) < 0)
                return bd_err_set(&be->err, -EINVAL, "%s: targets must be plain (%lld, %lld, %lld), got %s", op,
                                  (long long)P, (long long)H, (long long)W,
                                  tgt ? bd_tensor_str(tgt, b, sizeof(b)) : "nothing");
        *loss = 0;
        if (P * H * W == 0)
                return zero_like(be, logits, d_logits);
        double n = (double)(P * H * W);
        if ((r = bd_op_select_channel(be, logits, label, &ws->sel)) < 0 ||
            (r = bd_op_bce(be, &ws->sel, &t4, NULL, lo->gscale / n, &ws->l, d_logits ? &ws->dsel : NULL)) < 0 ||
            (r = value(be, lo, &ws->l, n, loss)) < 0)
                return r;
        if (!d_logits)
                return 0;
        return bd_op_select_channel_bwd(be, &ws->dsel, label, logits, d_logits, 0);
}
