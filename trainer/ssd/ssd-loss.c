/* ssd-loss.c: the SSD loss, hard negative mining on the host. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ssd-loss.h"

int ssd_loss_init(struct ssd_loss *L, struct bd_backend *be, int64_t N, int64_t n, int64_t K)
{
        memset(L, 0, sizeof(*L));
        if (N < 1 || n < 1 || K < 2)
                return bd_err_set(&be->err, -EINVAL, "ssd loss: %lld images, %lld boxes, %lld classes", (long long)N,
                                  (long long)n, (long long)K);
        L->be = be;
        L->N = N;
        L->n = n;
        L->K = K;
        size_t rows = (size_t)(N * n);
        L->glabel = xmalloc(rows * sizeof(int32_t));
        L->gloc = xmalloc(rows * 4 * sizeof(float));
        L->npos = xcalloc((size_t)N, sizeof(int64_t));
        L->ce = xmalloc(rows * sizeof(float));
        L->wc = xmalloc(rows * sizeof(float));
        L->wl = xmalloc(rows * 4 * sizeof(float));
        L->sel = xmalloc(rows * sizeof(float));
        L->best = xmalloc(rows * sizeof(float));
        L->img_conf = xcalloc((size_t)N, sizeof(double));
        return 0;
}

void ssd_loss_release(struct ssd_loss *L)
{
        free(L->glabel);
        free(L->gloc);
        free(L->npos);
        free(L->ce);
        free(L->wc);
        free(L->wl);
        free(L->sel);
        free(L->best);
        free(L->img_conf);
        bd_tensor_release(&L->t_label);
        bd_tensor_release(&L->t_loc);
        bd_tensor_release(&L->t_wc);
        bd_tensor_release(&L->t_wl);
        bd_tensor_release(&L->t_ce);
        bd_tensor_release(&L->t_sl1);
        memset(L, 0, sizeof(*L));
}

int ssd_loss_encode(struct ssd_loss *L, const struct ssd_dboxes *d, const float *boxes, const int32_t *labels,
                    const int32_t *counts, int maxb)
{
        const int64_t n = L->n;
        int bad = -1;
        if (d->n != n)
                return bd_err_set(&L->be->err, -EINVAL, "ssd loss: %lld default boxes, the loss has %lld",
                                  (long long)d->n, (long long)n);
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t i = 0; i < L->N; i++) {
                int G = counts[i] < maxb ? counts[i] : maxb;
                int64_t p = ssd_encode(d, boxes + (size_t)i * (size_t)maxb * 4, labels + (size_t)i * (size_t)maxb, G,
                                       L->best + i * n, L->glabel + i * n, L->gloc + i * n * 4);
                if (p < 0) {
#pragma omp critical
                        bad = (int)i;
                        p = 0;
                }
                L->npos[i] = p;
        }
        if (bad >= 0)
                return bd_err_set(&L->be->err, -EINVAL, "ssd loss: image %d has %d boxes (at most %d)", bad, counts[bad],
                                  SSD_MAX_GT);
        return 0;
}

/* ---- selection ------------------------------------------------------------------- */

static void swapf(float *a, float *b)
{
        float t = *a;
        *a = *b;
        *b = t;
}

void ssd_select_largest(float *v, int64_t m, int64_t k)
{
        int64_t lo = 0, hi = m - 1;
        if (k <= 0 || k >= m)
                return;
        /* invariant: the k largest lie in v[0..k) once [lo, hi] around k - 1 is settled */
        while (hi > lo) {
                int64_t mid = lo + (hi - lo) / 2;
                /* median of three to v[hi] as the pivot, descending order */
                if (v[mid] > v[lo])
                        swapf(&v[mid], &v[lo]);
                if (v[hi] > v[lo])
                        swapf(&v[hi], &v[lo]);
                if (v[mid] > v[hi])
                        swapf(&v[mid], &v[hi]);
                float pivot = v[hi];
                int64_t store = lo;
                for (int64_t i = lo; i < hi; i++)
                        if (v[i] > pivot)
                                swapf(&v[i], &v[store++]);
                swapf(&v[store], &v[hi]);
                /* equal values next to the pivot, so runs of equals end the search */
                int64_t eq = store + 1;
                for (int64_t i = store + 1; i <= hi; i++)
                        if (v[i] == pivot)
                                swapf(&v[i], &v[eq++]);
                if (k - 1 < store)
                        hi = store - 1;
                else if (k - 1 >= eq)
                        lo = eq;
                else
                        return;
        }
}

/* Weights of one image: wc (n) for the cross-entropy, wl (n, 4) for the
 * smooth L1; returns the image's cross-entropy term (before 1 / N). */
static double mine_image(const struct ssd_loss *L, int64_t i)
{
        const int64_t n = L->n;
        const int32_t *lab = L->glabel + i * n;
        const float *ce = L->ce + i * n;
        float *wc = L->wc + i * n, *wl = L->wl + i * n * 4, *v = L->sel + i * n;
        int64_t P = L->npos[i];
        if (P == 0) {
                memset(wc, 0, (size_t)n * sizeof(float));
                memset(wl, 0, (size_t)n * 4 * sizeof(float));
                return 0;
        }
        float w = (float)(1.0 / ((double)P * (double)L->N));
        int64_t M = 0;
        for (int64_t b = 0; b < n; b++) {
                if (!isfinite(ce[b]))
                        return NAN;
                if (lab[b] == 0)
                        v[M++] = ce[b];
        }
        int64_t k = 3 * P < n ? 3 * P : n;
        /* negatives above the threshold all go, equal ones in index order */
        float thr = -INFINITY;
        int64_t above = 0, at_quota = 0;
        if (k < M) {
                ssd_select_largest(v, M, k);
                thr = v[0];
                for (int64_t j = 1; j < k; j++)
                        thr = v[j] < thr ? v[j] : thr;
                for (int64_t j = 0; j < k; j++)
                        above += v[j] > thr;
                at_quota = k - above;
        }
        int64_t extra = k > M ? k - M : 0;      /* quota left over for positives */
        double sum = 0;
        for (int64_t b = 0; b < n; b++) {
                float m = 0;
                if (lab[b] > 0) {
                        m = 1;
                        if (extra > 0)
                                m = 2, extra--;
                } else if (k >= M || ce[b] > thr) {
                        m = 1;
                } else if (ce[b] == thr && at_quota > 0) {
                        m = 1, at_quota--;
                }
                wc[b] = m * w;
                sum += (double)m * ce[b];
                float wp = lab[b] > 0 ? w : 0;
                wl[4 * b] = wl[4 * b + 1] = wl[4 * b + 2] = wl[4 * b + 3] = wp;
        }
        return sum / (double)P;
}

/* ---- the loss ------------------------------------------------------------------- */

static int upload(struct bd_backend *be, struct bd_tensor *t, enum bd_dtype dt, int ndim, const int64_t *dims,
                  const void *host)
{
        int r = bd_tensor_resize(be, t, dt, BD_NCHW, ndim, dims);
        if (r < 0)
                return r;
        return be->ops->copy(be, t->data, t->dev, host, BD_CPU, bd_tensor_bytes(t));
}

int ssd_loss_run(struct ssd_loss *L, const struct bd_tensor *ploc, const struct bd_tensor *plabel, double grad_scale,
                 struct bd_tensor *dploc, struct bd_tensor *dplabel, double *ret_loss, struct ssd_loss_parts *parts)
{
        struct bd_backend *be = L->be;
        const int64_t rows = L->N * L->n;
        int64_t d1[1] = { rows }, d2[2] = { rows, 4 };
        int r;
        if (ploc->ndim != 2 || ploc->dims[0] != rows || ploc->dims[1] != 4 || plabel->ndim != 2 ||
            plabel->dims[0] != rows || plabel->dims[1] != L->K || ploc->dtype != BD_F32 || plabel->dtype != BD_F32) {
                char a[128], b[128];
                return bd_err_set(&be->err, -EINVAL, "ssd loss: outputs %s and %s, expected (%lld, 4) and (%lld, %lld) f32",
                                  bd_tensor_str(ploc, a, sizeof(a)), bd_tensor_str(plabel, b, sizeof(b)),
                                  (long long)rows, (long long)rows, (long long)L->K);
        }
        if ((r = upload(be, &L->t_label, BD_I32, 1, d1, L->glabel)) < 0 ||
            (r = upload(be, &L->t_loc, BD_F32, 2, d2, L->gloc)) < 0 ||
            (r = bd_op_softmax_ce(be, plabel, &L->t_label, NULL, 1.0, &L->t_ce, NULL)) < 0 ||
            (r = be->ops->copy(be, L->ce, BD_CPU, L->t_ce.data, L->t_ce.dev, (size_t)rows * sizeof(float))) < 0 ||
            (r = be->ops->sync(be)) < 0)
                return bd_op_err_prefix(be, r, "ssd loss");

        double conf = 0;
        int64_t pos = 0;
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t i = 0; i < L->N; i++)
                L->img_conf[i] = mine_image(L, i);
        for (int64_t i = 0; i < L->N; i++) {
                conf += L->img_conf[i];
                pos += L->npos[i];
        }
        conf /= (double)L->N;
        double loc = 0;
        if (isfinite(conf)) {
                if ((r = upload(be, &L->t_wc, BD_F32, 1, d1, L->wc)) < 0 ||
                    (r = upload(be, &L->t_wl, BD_F32, 2, d2, L->wl)) < 0 ||
                    (r = bd_op_smooth_l1(be, ploc, &L->t_loc, &L->t_wl, 1.0, grad_scale, &L->t_sl1, dploc)) < 0 ||
                    (r = bd_op_sum(be, &L->t_sl1, &loc)) < 0 ||
                    (dplabel && (r = bd_op_softmax_ce(be, plabel, &L->t_label, &L->t_wc, grad_scale, NULL, dplabel)) < 0))
                        return bd_op_err_prefix(be, r, "ssd loss");
        } else {
                loc = NAN;
        }
        if (parts) {
                parts->loc = loc;
                parts->conf = conf;
                parts->positives = pos;
        }
        *ret_loss = loc + conf;
        return 0;
}
