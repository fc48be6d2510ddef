/* ops-dnnl.c: the CPU backend's library operations on oneDNN (ops-dnnl.h).
 *
 * f32 operations go to oneDNN primitives built once per shape and cached in
 * the layer's plan cache; weights are reordered into the blocked format the
 * primitive wants only when their version changes; one scratchpad is shared
 * by all primitives.  f64, and f32 with BD_CPU_REF=1, go to the reference
 * loops of ops-ref.c.
 */
#include "config.h"

#include <dnnl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "ops-dnnl.h"
#include "ops-ref.h"

struct bd_dnnl {
        int force_ref;                  /* BD_CPU_REF=1: the reference loops for f32 too */
        int verbose;                    /* BD_VERBOSE=1: each primitive's implementation on stderr */
        dnnl_engine_t eng;
        dnnl_stream_t stream;
        void *scratch;
        size_t scratch_cap;
};

static struct bd_dnnl *dnnl_of(struct bd_backend *be)
{
        return ((struct bd_cpu_impl *)be->impl)->dnnl;
}

int bd_dnnl_new(struct bd_dnnl **ret, struct bd_err *err)
{
        struct bd_dnnl *d = xcalloc(1, sizeof(*d));
        const char *ref = getenv("BD_CPU_REF");
        d->force_ref = ref && *ref && strcmp(ref, "0") != 0;
        const char *v = getenv("BD_VERBOSE");
        d->verbose = v && *v && strcmp(v, "0") != 0;
        if (dnnl_engine_create(&d->eng, dnnl_cpu, 0) != dnnl_success ||
            dnnl_stream_create(&d->stream, d->eng, dnnl_stream_default_flags) != dnnl_success) {
                bd_dnnl_free(d);
                return bd_err_set(err, -EIO, "oneDNN: cannot create the CPU engine");
        }
        *ret = d;
        return 0;
}

void bd_dnnl_free(struct bd_dnnl *d)
{
        if (!d)
                return;
        if (d->stream)
                dnnl_stream_destroy(d->stream);
        if (d->eng)
                dnnl_engine_destroy(d->eng);
        free(d->scratch);
        free(d);
}

/* out += tmp, both shaped like out */
static int add_into(struct bd_backend *be, const struct bd_tensor *tmp, struct bd_tensor *out)
{
        struct bd_axpby_args a = { tmp->data, out->data, 1.0, 1.0 };
        return be->ops->elem(be, BD_K_axpby, out->dtype, bd_tensor_numel(out), &a);
}

/* ---- oneDNN's objects ---- */

#define DN(call)                                                                                        \
        do {                                                                                            \
                dnnl_status_t _s = (call);                                                              \
                if (_s != dnnl_success)                                                                 \
                        return bd_err_set(&be->err, -EIO, "oneDNN: %s failed (status %d)", #call, (int)_s); \
        } while (0)

static dnnl_format_tag_t layout_tag(const struct bd_tensor *t)
{
        switch (t->ndim) {
        case 1: return dnnl_x;
        case 2: return dnnl_nc;
        case 4: return t->layout == BD_NHWC ? dnnl_nhwc : t->layout == BD_NCHW8C ? dnnl_nChw8c : dnnl_nchw;
        default: return dnnl_format_tag_undef;
        }
}

static int md_of(struct bd_backend *be, const struct bd_tensor *t, dnnl_memory_desc_t *md)
{
        dnnl_dims_t d;
        for (int i = 0; i < t->ndim; i++)
                d[i] = t->dims[i];
        DN(dnnl_memory_desc_init_by_tag(md, t->ndim, d, dnnl_f32, layout_tag(t)));
        return 0;
}

static int mem_new(struct bd_backend *be, const dnnl_memory_desc_t *md, const void *p, dnnl_memory_t *ret)
{
        struct bd_dnnl *dn = dnnl_of(be);
        DN(dnnl_memory_create(ret, md, dn->eng, (void *)p));
        return 0;
}

/* arguments of one execution; memories created here are destroyed by exec */
struct xargs {
        int n;
        dnnl_exec_arg_t a[16];
};

static int arg(struct bd_backend *be, struct xargs *x, int kind, const dnnl_memory_desc_t *md, const void *p)
{
        dnnl_memory_t m;
        int r = mem_new(be, md, p, &m);
        if (r < 0)
                return r;
        x->a[x->n].arg = kind;
        x->a[x->n].memory = m;
        x->n++;
        return 0;
}

static int scratch_arg(struct bd_backend *be, struct xargs *x, const_dnnl_primitive_desc_t pd)
{
        struct bd_dnnl *dn = dnnl_of(be);
        const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        size_t sz = md ? dnnl_memory_desc_get_size(md) : 0;
        if (!sz)
                return 0;
        if (sz > dn->scratch_cap) {
                free(dn->scratch);
                dn->scratch_cap = (sz + 4095) & ~(size_t)4095;
                dn->scratch = aligned_alloc(64, dn->scratch_cap);
                if (!dn->scratch) {
                        dn->scratch_cap = 0;
                        return bd_err_set(&be->err, -ENOMEM, "cpu: out of memory for a %zu-byte scratchpad", sz);
                }
        }
        return arg(be, x, DNNL_ARG_SCRATCHPAD, md, dn->scratch);
}

static int exec(struct bd_backend *be, dnnl_primitive_t p, struct xargs *x)
{
        struct bd_dnnl *dn = dnnl_of(be);
        dnnl_status_t s = dnnl_primitive_execute(p, dn->stream, x->n, x->a);
        if (s == dnnl_success)
                s = dnnl_stream_wait(dn->stream);
        for (int i = 0; i < x->n; i++)
                dnnl_memory_destroy(x->a[i].memory);
        x->n = 0;
        if (s != dnnl_success)
                return bd_err_set(&be->err, -EIO, "oneDNN: primitive execution failed (status %d)", (int)s);
        return 0;
}

static int attr_user_scratch(struct bd_backend *be, dnnl_primitive_attr_t *ret)
{
        DN(dnnl_primitive_attr_create(ret));
        DN(dnnl_primitive_attr_set_scratchpad_mode(*ret, dnnl_scratchpad_mode_user));
        return 0;
}

static int pd_create(struct bd_backend *be, dnnl_primitive_desc_t *pd, const void *desc,
                     const_dnnl_primitive_desc_t hint, const char *what)
{
        struct bd_dnnl *dn = dnnl_of(be);
        dnnl_primitive_attr_t attr;
        int r = attr_user_scratch(be, &attr);
        if (r < 0)
                return r;
        dnnl_status_t s = dnnl_primitive_desc_create(pd, (const_dnnl_op_desc_t)desc, attr, dn->eng, hint);
        dnnl_primitive_attr_destroy(attr);
        if (s != dnnl_success)
                return bd_err_set(&be->err, -EINVAL, "oneDNN: no %s implementation for these shapes (status %d)",
                                  what, (int)s);
        if (dn->verbose) {
                const char *impl = "?";
                dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl);
                fprintf(stderr, "bd-cpu: %s: %s\n", what, impl);
        }
        return 0;
}

static int prim_create(struct bd_backend *be, dnnl_primitive_t *p, const_dnnl_primitive_desc_t pd)
{
        DN(dnnl_primitive_create(p, pd));
        return 0;
}

/* A tensor in the format a primitive wants ("in") next to the caller's
 * ("user"): when they differ, a buffer holds the converted copy and reorders
 * (created when first needed) move data either way; for weights the copy is
 * refreshed only when their version changes. */
struct fmt {
        dnnl_memory_desc_t in, user;
        int same;
        void *buf;
        dnnl_primitive_t u2i, i2u, i2u_acc;
        uint64_t ver;
        int valid;
};

static int reorder_new(struct bd_backend *be, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to, int sum,
                       dnnl_primitive_t *ret)
{
        struct bd_dnnl *dn = dnnl_of(be);
        dnnl_primitive_attr_t attr = NULL;
        dnnl_post_ops_t po = NULL;
        dnnl_primitive_desc_t pd;
        if (sum) {
                DN(dnnl_primitive_attr_create(&attr));
                DN(dnnl_post_ops_create(&po));
                DN(dnnl_post_ops_append_sum(po, 1.0f));
                DN(dnnl_primitive_attr_set_post_ops(attr, po));
        }
        dnnl_status_t s = dnnl_reorder_primitive_desc_create(&pd, from, dn->eng, to, dn->eng, attr);
        if (po)
                dnnl_post_ops_destroy(po);
        if (attr)
                dnnl_primitive_attr_destroy(attr);
        DN(s);
        s = dnnl_primitive_create(ret, pd);
        dnnl_primitive_desc_destroy(pd);
        DN(s);
        return 0;
}

static int fmt_init(struct bd_backend *be, struct fmt *f, const dnnl_memory_desc_t *in, const dnnl_memory_desc_t *user)
{
        memset(f, 0, sizeof(*f));
        f->in = *in;
        f->user = *user;
        f->same = dnnl_memory_desc_equal(in, user);
        return 0;
}

static void fmt_release(struct fmt *f)
{
        if (f->u2i)
                dnnl_primitive_destroy(f->u2i);
        if (f->i2u)
                dnnl_primitive_destroy(f->i2u);
        if (f->i2u_acc)
                dnnl_primitive_destroy(f->i2u_acc);
        free(f->buf);
        memset(f, 0, sizeof(*f));
}

static int fmt_buf(struct bd_backend *be, struct fmt *f)
{
        if (f->buf)
                return 0;
        f->buf = aligned_alloc(64, (dnnl_memory_desc_get_size(&f->in) + 63) & ~(size_t)63);
        if (!f->buf)
                return bd_err_set(&be->err, -ENOMEM, "cpu: out of memory for a reordered copy");
        return 0;
}

static int run_reorder(struct bd_backend *be, dnnl_primitive_t p, const dnnl_memory_desc_t *from, const void *src,
                       const dnnl_memory_desc_t *to, void *dst)
{
        struct xargs x = { 0 };
        int r;
        if ((r = arg(be, &x, DNNL_ARG_FROM, from, src)) < 0 || (r = arg(be, &x, DNNL_ARG_TO, to, dst)) < 0)
                return r;
        return exec(be, p, &x);
}

/* the user's data in the primitive's format: the user's pointer or the buffer */
static int fmt_in(struct bd_backend *be, struct fmt *f, const void *user, const void **ret)
{
        int r;
        if (f->same) {
                *ret = user;
                return 0;
        }
        if ((r = fmt_buf(be, f)) < 0 || (!f->u2i && (r = reorder_new(be, &f->user, &f->in, 0, &f->u2i)) < 0) ||
            (r = run_reorder(be, f->u2i, &f->user, user, &f->in, f->buf)) < 0)
                return r;
        *ret = f->buf;
        return 0;
}

/* the same for weights, converted only when their version changed */
static int fmt_weights(struct bd_backend *be, struct fmt *f, const struct bd_tensor *w, uint64_t ver, const void **ret)
{
        if (f->same) {
                *ret = w->data;
                return 0;
        }
        if (!f->valid || f->ver != ver) {
                int r = fmt_in(be, f, w->data, ret);
                if (r < 0)
                        return r;
                f->ver = ver;
                f->valid = 1;
        }
        *ret = f->buf;
        return 0;
}

/* where a primitive writes an output the caller sees in its own format */
static int fmt_out(struct bd_backend *be, struct fmt *f, void *user, int accumulate, void **ret)
{
        if (f->same && !accumulate) {
                *ret = user;
                return 0;
        }
        int r = fmt_buf(be, f);
        *ret = f->buf;
        return r;
}

/* after the primitive: the buffer into (or added to) the caller's memory */
static int fmt_finish(struct bd_backend *be, struct fmt *f, void *user, int accumulate)
{
        int r;
        if (f->same && !accumulate)
                return 0;
        dnnl_primitive_t *p = accumulate ? &f->i2u_acc : &f->i2u;
        if (!*p && (r = reorder_new(be, &f->in, &f->user, accumulate, p)) < 0)
                return r;
        return run_reorder(be, *p, &f->in, f->buf, &f->user, user);
}

/* ---- convolution and fully connected plans ---- */

enum { P_CONV, P_FC, P_BN, P_POOL };

struct dplan {
        int kind;
        int transposed;
        /* convolution / inner product: primitives without [0] and with [1] bias */
        dnnl_primitive_desc_t fwd_pd[2], bwdd_pd, bwdw_pd[2];
        dnnl_primitive_t fwd[2], bwdd, bwdw[2];
        union {
                dnnl_convolution_desc_t conv;
                dnnl_inner_product_desc_t ip;
        } fd[2];
        struct fmt x, y, dx, dy;        /* activations: user vs primitive layouts */
        struct fmt wf, wbd, dw;         /* weights for forward and backward data, weight gradient */
        dnnl_memory_desc_t b_md, w_user;
        void *db_tmp;
        /* batch norm / pooling */
        dnnl_memory_desc_t x_md, y_md, ws_md;
        dnnl_primitive_desc_t pd_f, pd_b;
        dnnl_primitive_t p_f, p_b;
        int has_ws;
};

void bd_dnnl_plan_free(struct bd_backend *be, void *vp)
{
        struct dplan *p = vp;
        if (!p)
                return;
        for (int i = 0; i < 2; i++) {
                if (p->fwd[i])
                        dnnl_primitive_destroy(p->fwd[i]);
                if (p->bwdw[i])
                        dnnl_primitive_destroy(p->bwdw[i]);
                if (p->fwd_pd[i])
                        dnnl_primitive_desc_destroy(p->fwd_pd[i]);
                if (p->bwdw_pd[i])
                        dnnl_primitive_desc_destroy(p->bwdw_pd[i]);
        }
        if (p->bwdd)
                dnnl_primitive_destroy(p->bwdd);
        if (p->bwdd_pd)
                dnnl_primitive_desc_destroy(p->bwdd_pd);
        if (p->p_f)
                dnnl_primitive_destroy(p->p_f);
        if (p->p_b)
                dnnl_primitive_destroy(p->p_b);
        if (p->pd_f)
                dnnl_primitive_desc_destroy(p->pd_f);
        if (p->pd_b)
                dnnl_primitive_desc_destroy(p->pd_b);
        struct fmt *fs[] = { &p->x, &p->y, &p->dx, &p->dy, &p->wf, &p->wbd, &p->dw };
        for (size_t i = 0; i < ARRAY_SIZE(fs); i++)
                fmt_release(fs[i]);
        free(p->db_tmp);
        free(p);
}

static int conv_weights_md(struct bd_backend *be, const struct bd_conv_desc *d, const struct bd_tensor *w,
                           dnnl_memory_desc_t *user, dnnl_memory_desc_t *any)
{
        int64_t G = d->groups;
        dnnl_dims_t wd;
        int nd;
        dnnl_format_tag_t tag;
        /* oneDNN's weight dims are (O, I, kh, kw) for both directions */
        int64_t O = d->transposed ? w->dims[1] * G : w->dims[0];
        int64_t I = d->transposed ? w->dims[0] : w->dims[1] * G;
        if (G == 1) {
                nd = 4;
                wd[0] = O; wd[1] = I; wd[2] = d->kh; wd[3] = d->kw;
                tag = d->transposed ? dnnl_iohw : dnnl_oihw;
        } else {
                nd = 5;
                wd[0] = G; wd[1] = O / G; wd[2] = I / G; wd[3] = d->kh; wd[4] = d->kw;
                tag = d->transposed ? dnnl_giohw : dnnl_goihw;
        }
        DN(dnnl_memory_desc_init_by_tag(user, nd, wd, dnnl_f32, tag));
        DN(dnnl_memory_desc_init_by_tag(any, nd, wd, dnnl_f32, dnnl_format_tag_any));
        return 0;
}

static int md_tag(struct bd_backend *be, const struct bd_tensor *t, dnnl_format_tag_t tag, dnnl_memory_desc_t *md)
{
        dnnl_dims_t d;
        for (int i = 0; i < t->ndim; i++)
                d[i] = t->dims[i];
        DN(dnnl_memory_desc_init_by_tag(md, t->ndim, d, dnnl_f32, tag));
        return 0;
}

/* The layouts the convolution runs in, whatever the caller's: AVX2 kernels
 * exist for nChw8c -> nChw8c (channels padded to 8 when needed, e.g. a head
 * with 324 outputs), plain nchw -> nChw8c and nhwc -> nhwc (the 3-channel
 * stem); mixing others falls to oneDNN's slow reference code. */
static int conv_internal_mds(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *y,
                             dnnl_memory_desc_t *xi, dnnl_memory_desc_t *yi)
{
        int r;
        if (x->dims[1] % 8 == 0) {
                if ((r = md_tag(be, x, dnnl_nChw8c, xi)) < 0 || (r = md_tag(be, y, dnnl_nChw8c, yi)) < 0)
                        return r;
        } else if (x->layout == BD_NHWC) {
                if ((r = md_tag(be, x, dnnl_nhwc, xi)) < 0 || (r = md_tag(be, y, dnnl_nhwc, yi)) < 0)
                        return r;
        } else {
                if ((r = md_tag(be, x, dnnl_nchw, xi)) < 0 || (r = md_tag(be, y, dnnl_nChw8c, yi)) < 0)
                        return r;
        }
        return 0;
}

static uint64_t conv_key(const struct bd_conv_desc *d, const struct bd_tensor *x, const struct bd_tensor *w,
                         const struct bd_tensor *dy_or_y)
{
        uint64_t h = bd_hash(d, sizeof(*d), BD_HASH_INIT);
        h = bd_hash_tensor(x, h);
        h = bd_hash_tensor(w, h);
        return bd_hash_tensor(dy_or_y, h);
}

static const char *conv_what(const struct dplan *p, int pass)
{
        static const char *const n[2][3] = { { "conv fwd", "conv bwd data", "conv bwd weights" },
                                              { "deconv fwd", "deconv bwd data", "deconv bwd weights" } };
        return n[p->transposed][pass];
}

static int conv_plan(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *y,
                     struct dplan **ret)
{
        uint64_t key = conv_key(d, x, w, y);
        struct dplan *p = bd_plan_find(pc, key);
        if (p) {
                *ret = p;
                return 0;
        }
        p = xcalloc(1, sizeof(*p));
        p->kind = P_CONV;
        p->transposed = d->transposed;
        int r;
        dnnl_memory_desc_t w_any, xu, yu, xi, yi;
        dnnl_dims_t st = { d->sh, d->sw }, dil = { d->dh - 1, d->dw - 1 }, pl = { d->ph, d->pw }, pr;
        if (!d->transposed) {
                /* PyTorch's floor gives a right padding that may be negative */
                pr[0] = (y->dims[2] - 1) * d->sh + (d->kh - 1) * d->dh + 1 - x->dims[2] - d->ph;
                pr[1] = (y->dims[3] - 1) * d->sw + (d->kw - 1) * d->dw + 1 - x->dims[3] - d->pw;
        } else {
                pr[0] = d->ph;
                pr[1] = d->pw;
        }
        if ((r = md_of(be, x, &xu)) < 0 || (r = md_of(be, y, &yu)) < 0 ||
            (r = conv_internal_mds(be, x, y, &xi, &yi)) < 0 || (r = conv_weights_md(be, d, w, &p->w_user, &w_any)) < 0)
                goto fail;
        fmt_init(be, &p->x, &xi, &xu);
        fmt_init(be, &p->dx, &xi, &xu);
        fmt_init(be, &p->y, &yi, &yu);
        fmt_init(be, &p->dy, &yi, &yu);
        dnnl_dims_t bd = { y->dims[1] };
        if (dnnl_memory_desc_init_by_tag(&p->b_md, 1, bd, dnnl_f32, dnnl_x) != dnnl_success) {
                r = bd_err_set(&be->err, -EIO, "oneDNN: bias descriptor");
                goto fail;
        }
        for (int b = 0; b < 2; b++) {
                dnnl_status_t s;
                if (!d->transposed)
                        s = dnnl_dilated_convolution_forward_desc_init(&p->fd[b].conv, dnnl_forward_training,
                                                                       dnnl_convolution_direct, &xi, &w_any,
                                                                       b ? &p->b_md : NULL, &yi, st, dil, pl, pr);
                else
                        s = dnnl_dilated_deconvolution_forward_desc_init(&p->fd[b].conv, dnnl_forward_training,
                                                                         dnnl_deconvolution_direct, &xi, &w_any,
                                                                         b ? &p->b_md : NULL, &yi, st, dil, pl, pr);
                if (s != dnnl_success) {
                        r = bd_err_set(&be->err, -EINVAL, "oneDNN: convolution descriptor (status %d)", (int)s);
                        goto fail;
                }
        }
        /* the bias-less forward sets the weights format for all passes */
        if ((r = pd_create(be, &p->fwd_pd[0], &p->fd[0], NULL, conv_what(p, 0))) < 0 ||
            (r = prim_create(be, &p->fwd[0], p->fwd_pd[0])) < 0)
                goto fail;
        fmt_init(be, &p->wf, dnnl_primitive_desc_query_md(p->fwd_pd[0], dnnl_query_weights_md, 0), &p->w_user);
        bd_plan_put(be, pc, key, p);
        *ret = p;
        return 0;
fail:
        bd_dnnl_plan_free(be, p);
        return r;
}

static int conv_fwd_prim(struct bd_backend *be, struct dplan *p, int bias)
{
        if (p->fwd[bias])
                return 0;
        int r;
        if ((r = pd_create(be, &p->fwd_pd[bias], &p->fd[bias], NULL, conv_what(p, 0))) < 0 ||
            (r = prim_create(be, &p->fwd[bias], p->fwd_pd[bias])) < 0)
                return r;
        if (!dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(p->fwd_pd[bias], dnnl_query_weights_md, 0), &p->wf.in))
                return bd_err_set(&be->err, -EIO, "oneDNN: a primitive with bias wants other weights");
        return 0;
}

int bd_dnnl_conv_fwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *b,
                     struct bd_tensor *y, uint64_t wver)
{
        struct bd_dnnl *dn = dnnl_of(be);
        if (x->dtype != BD_F32 || dn->force_ref)
                return bd_ref_conv_fwd(be, d, x, w, b, y);
        struct dplan *p;
        const void *wp, *xp;
        void *yp;
        int r, bias = b != NULL;
        if ((r = conv_plan(be, d, pc, x, w, y, &p)) < 0 || (r = conv_fwd_prim(be, p, bias)) < 0 ||
            (r = fmt_weights(be, &p->wf, w, wver, &wp)) < 0 || (r = fmt_in(be, &p->x, x->data, &xp)) < 0 ||
            (r = fmt_out(be, &p->y, y->data, 0, &yp)) < 0)
                return r;
        struct xargs a = { 0 };
        if ((r = arg(be, &a, DNNL_ARG_SRC, &p->x.in, xp)) < 0 || (r = arg(be, &a, DNNL_ARG_WEIGHTS, &p->wf.in, wp)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_DST, &p->y.in, yp)) < 0 ||
            (bias && (r = arg(be, &a, DNNL_ARG_BIAS, &p->b_md, b->data)) < 0) ||
            (r = scratch_arg(be, &a, p->fwd_pd[bias])) < 0 || (r = exec(be, p->fwd[bias], &a)) < 0)
                return r;
        return fmt_finish(be, &p->y, y->data, 0);
}

static int conv_bwdd_prim(struct bd_backend *be, struct dplan *p, const struct bd_conv_desc *d)
{
        if (p->bwdd)
                return 0;
        int r;
        dnnl_memory_desc_t w_any;
        dnnl_dims_t st = { d->sh, d->sw }, dil = { d->dh - 1, d->dw - 1 }, pl = { d->ph, d->pw };
        dnnl_convolution_desc_t bd;
        dnnl_status_t s;
        dnnl_memory_desc_init_by_tag(&w_any, p->w_user.ndims, p->w_user.dims, dnnl_f32, dnnl_format_tag_any);
        if (!d->transposed)
                s = dnnl_dilated_convolution_backward_data_desc_init(&bd, dnnl_convolution_direct, &p->dx.in, &w_any,
                                                                     &p->dy.in, st, dil, pl, p->fd[0].conv.padding[1]);
        else
                s = dnnl_dilated_deconvolution_backward_data_desc_init(&bd, dnnl_deconvolution_direct, &p->dx.in,
                                                                       &w_any, &p->dy.in, st, dil, pl,
                                                                       p->fd[0].conv.padding[1]);
        if (s != dnnl_success)
                return bd_err_set(&be->err, -EINVAL, "oneDNN: backward-data descriptor (status %d)", (int)s);
        if ((r = pd_create(be, &p->bwdd_pd, &bd, p->fwd_pd[0], conv_what(p, 1))) < 0 ||
            (r = prim_create(be, &p->bwdd, p->bwdd_pd)) < 0)
                return r;
        return fmt_init(be, &p->wbd, dnnl_primitive_desc_query_md(p->bwdd_pd, dnnl_query_weights_md, 0), &p->w_user);
}

static int conv_bwdw_prim(struct bd_backend *be, struct dplan *p, const struct bd_conv_desc *d, int bias)
{
        if (p->bwdw[bias])
                return 0;
        int r;
        dnnl_memory_desc_t w_any;
        dnnl_dims_t st = { d->sh, d->sw }, dil = { d->dh - 1, d->dw - 1 }, pl = { d->ph, d->pw };
        dnnl_convolution_desc_t bd;
        dnnl_status_t s;
        dnnl_memory_desc_init_by_tag(&w_any, p->w_user.ndims, p->w_user.dims, dnnl_f32, dnnl_format_tag_any);
        if (!d->transposed)
                s = dnnl_dilated_convolution_backward_weights_desc_init(&bd, dnnl_convolution_direct, &p->x.in, &w_any,
                                                                        bias ? &p->b_md : NULL, &p->dy.in, st, dil,
                                                                        pl, p->fd[0].conv.padding[1]);
        else
                s = dnnl_dilated_deconvolution_backward_weights_desc_init(&bd, dnnl_deconvolution_direct, &p->x.in,
                                                                          &w_any, bias ? &p->b_md : NULL, &p->dy.in,
                                                                          st, dil, pl, p->fd[0].conv.padding[1]);
        if (s != dnnl_success)
                return bd_err_set(&be->err, -EINVAL, "oneDNN: backward-weights descriptor (status %d)", (int)s);
        if ((r = pd_create(be, &p->bwdw_pd[bias], &bd, p->fwd_pd[0], conv_what(p, 2))) < 0 ||
            (r = prim_create(be, &p->bwdw[bias], p->bwdw_pd[bias])) < 0)
                return r;
        const dnnl_memory_desc_t *dwmd = dnnl_primitive_desc_query_md(p->bwdw_pd[bias], dnnl_query_diff_weights_md, 0);
        if (p->dw.in.ndims) {
                if (!dnnl_memory_desc_equal(dwmd, &p->dw.in))
                        return bd_err_set(&be->err, -EIO, "oneDNN: weight gradient formats differ with bias");
                return 0;
        }
        return fmt_init(be, &p->dw, dwmd, &p->w_user);
}

/* weight (and bias) gradients of convolution or inner product */
static int wgrad(struct bd_backend *be, struct dplan *p, int bias, const void *xp, const void *dyp,
                 const dnnl_memory_desc_t *xmd, const dnnl_memory_desc_t *dymd, struct bd_tensor *dw,
                 struct bd_tensor *db, int acc)
{
        int r;
        void *dwp, *dbp = NULL;
        if (dw) {
                if ((r = fmt_out(be, &p->dw, dw->data, acc, &dwp)) < 0)
                        return r;
        } else {        /* frozen weights, trained bias: the gradient goes to the buffer */
                if ((r = fmt_buf(be, &p->dw)) < 0)
                        return r;
                dwp = p->dw.buf;
        }
        if (bias) {
                if (acc) {
                        if (!p->db_tmp)
                                p->db_tmp = xmalloc(bd_tensor_bytes(db));
                        dbp = p->db_tmp;
                } else {
                        dbp = db->data;
                }
        }
        struct xargs a = { 0 };
        if ((r = arg(be, &a, DNNL_ARG_SRC, xmd, xp)) < 0 || (r = arg(be, &a, DNNL_ARG_DIFF_DST, dymd, dyp)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_DIFF_WEIGHTS, &p->dw.in, dwp)) < 0 ||
            (bias && (r = arg(be, &a, DNNL_ARG_DIFF_BIAS, &p->b_md, dbp)) < 0) ||
            (r = scratch_arg(be, &a, p->bwdw_pd[bias])) < 0 || (r = exec(be, p->bwdw[bias], &a)) < 0)
                return r;
        if (dw && (r = fmt_finish(be, &p->dw, dw->data, acc)) < 0)
                return r;
        if (bias && acc) {
                struct bd_tensor t = *db;
                t.data = p->db_tmp;
                if ((r = add_into(be, &t, db)) < 0)
                        return r;
        }
        return 0;
}

/* A convolution of a 1x1 input giving a 1x1 output (SSD's last head) only
 * uses the kernel tap at (ph, pw), so its gradients are small matrix products;
 * oneDNN has only reference code for the blocked weight gradient there (about
 * 40 ms a step on SSD300 against 2 here).  Feature maps of one pixel are N x C
 * matrices in every layout. */
static int is_point_conv(const struct bd_conv_desc *d, const struct bd_tensor *x, const struct bd_tensor *dy)
{
        return !d->transposed && d->groups == 1 && d->dh == 1 && d->dw == 1 && d->ph < d->kh && d->pw < d->kw &&
               x->dims[2] == 1 && x->dims[3] == 1 && dy->dims[2] == 1 && dy->dims[3] == 1;
}

static void point_conv_bwd(const struct bd_conv_desc *d, const struct bd_tensor *x, const struct bd_tensor *w,
                           const struct bd_tensor *dy, struct bd_tensor *dx, struct bd_tensor *dw,
                           struct bd_tensor *db, unsigned flags)
{
        int64_t N = x->dims[0], I = x->dims[1], O = dy->dims[1], K = d->kh * d->kw, tap = d->ph * d->kw + d->pw;
        const float *xs = x->data, *ws = w->data, *g = dy->data;
        if (dw) {
                float *o = dw->data;
                int acc = (flags & BD_ACC_DW) != 0;
#pragma omp parallel for schedule(static) if (O * I * N >= 65536)
                for (int64_t oc = 0; oc < O; oc++) {
                        float *row = o + oc * I * K;
                        if (!acc)
                                memset(row, 0, (size_t)(I * K) * sizeof(float));
                        for (int64_t n = 0; n < N; n++) {
                                float gv = g[n * O + oc];
                                const float *xr = xs + n * I;
                                for (int64_t i = 0; i < I; i++)
                                        row[i * K + tap] += gv * xr[i];
                        }
                }
        }
        if (db) {
                float *b = db->data;
                int acc = (flags & BD_ACC_DW) != 0;
                for (int64_t oc = 0; oc < O; oc++) {
                        float s = acc ? b[oc] : 0;
                        for (int64_t n = 0; n < N; n++)
                                s += g[n * O + oc];
                        b[oc] = s;
                }
        }
        if (dx) {
                float *o = dx->data;
                int acc = (flags & BD_ACC_DX) != 0;
#pragma omp parallel for collapse(2) schedule(static) if (O * I * N >= 65536)
                for (int64_t n = 0; n < N; n++)
                        for (int64_t i = 0; i < I; i++) {
                                float s = acc ? o[n * I + i] : 0;
                                for (int64_t oc = 0; oc < O; oc++)
                                        s += ws[(oc * I + i) * K + tap] * g[n * O + oc];
                                o[n * I + i] = s;
                        }
        }
}

int bd_dnnl_conv_bwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *dy,
                     struct bd_tensor *dx, struct bd_tensor *dw, struct bd_tensor *db, unsigned flags,
                     uint64_t wver)
{
        struct bd_dnnl *dn = dnnl_of(be);
        if (x->dtype != BD_F32 || dn->force_ref)
                return bd_ref_conv_bwd(be, d, x, w, dy, dx, dw, db, flags);
        if (is_point_conv(d, x, dy)) {
                point_conv_bwd(d, x, w, dy, dx, dw, db, flags);
                return 0;
        }
        struct dplan *p;
        const void *dyp;
        int r;
        if ((r = conv_plan(be, d, pc, x, w, dy, &p)) < 0 || (r = fmt_in(be, &p->dy, dy->data, &dyp)) < 0)
                return r;
        if (dw || db) {
                const void *xp;
                int bias = db != NULL;
                if ((r = conv_bwdw_prim(be, p, d, bias)) < 0 || (r = fmt_in(be, &p->x, x->data, &xp)) < 0 ||
                    (r = wgrad(be, p, bias, xp, dyp, &p->x.in, &p->dy.in, dw, db, (flags & BD_ACC_DW) != 0)) < 0)
                        return r;
        }
        if (dx) {
                const void *wp;
                void *dxp;
                int acc = (flags & BD_ACC_DX) != 0;
                if ((r = conv_bwdd_prim(be, p, d)) < 0 || (r = fmt_weights(be, &p->wbd, w, wver, &wp)) < 0 ||
                    (r = fmt_out(be, &p->dx, dx->data, acc, &dxp)) < 0)
                        return r;
                struct xargs a = { 0 };
                if ((r = arg(be, &a, DNNL_ARG_DIFF_DST, &p->dy.in, dyp)) < 0 ||
                    (r = arg(be, &a, DNNL_ARG_WEIGHTS, &p->wbd.in, wp)) < 0 ||
                    (r = arg(be, &a, DNNL_ARG_DIFF_SRC, &p->dx.in, dxp)) < 0 || (r = scratch_arg(be, &a, p->bwdd_pd)) < 0 ||
                    (r = exec(be, p->bwdd, &a)) < 0 || (r = fmt_finish(be, &p->dx, dx->data, acc)) < 0)
                        return r;
        }
        return 0;
}

/* ---- batch norm ---- */

static int bn_plan(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, int need_diff,
                   const struct bd_tensor *x, struct dplan **ret)
{
        uint64_t key = bd_hash_tensor(x, bd_hash(&eps, sizeof(eps), bd_hash(&relu, sizeof(relu), BD_HASH_INIT ^ 0xb)));
        struct dplan *p = bd_plan_find(pc, key);
        int r;
        if (!p) {
                p = xcalloc(1, sizeof(*p));
                p->kind = P_BN;
                unsigned fl = dnnl_use_scale | dnnl_use_shift | (relu ? dnnl_fuse_norm_relu : 0);
                dnnl_batch_normalization_desc_t bd;
                if ((r = md_of(be, x, &p->x_md)) < 0)
                        goto fail;
                if (dnnl_batch_normalization_forward_desc_init(&bd, dnnl_forward_training, &p->x_md, (float)eps, fl) !=
                    dnnl_success) {
                        r = bd_err_set(&be->err, -EINVAL, "oneDNN: batch norm descriptor");
                        goto fail;
                }
                if ((r = pd_create(be, &p->pd_f, &bd, NULL, "bnorm fwd")) < 0 || (r = prim_create(be, &p->p_f, p->pd_f)) < 0)
                        goto fail;
                const dnnl_memory_desc_t *ws = dnnl_primitive_desc_query_md(p->pd_f, dnnl_query_workspace_md, 0);
                p->has_ws = ws && dnnl_memory_desc_get_size(ws) > 0;
                if (p->has_ws)
                        p->ws_md = *ws;
                const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(p->pd_f, dnnl_query_weights_md, 0);
                if (smd)
                        p->b_md = *smd;
                bd_plan_put(be, pc, key, p);
        }
        if (need_diff && !p->p_b) {
                unsigned fl = dnnl_use_scale | dnnl_use_shift | (relu ? dnnl_fuse_norm_relu : 0);
                dnnl_batch_normalization_desc_t bd;
                if (dnnl_batch_normalization_backward_desc_init(&bd, dnnl_backward, &p->x_md, &p->x_md, (float)eps, fl) !=
                    dnnl_success)
                        return bd_err_set(&be->err, -EINVAL, "oneDNN: batch norm backward descriptor");
                if ((r = pd_create(be, &p->pd_b, &bd, p->pd_f, "bnorm bwd")) < 0 || (r = prim_create(be, &p->p_b, p->pd_b)) < 0)
                        return r;
        }
        *ret = p;
        return 0;
fail:
        bd_dnnl_plan_free(be, p);
        return r;
}

int bd_dnnl_bn_fwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                   const struct bd_tensor *gamma, const struct bd_tensor *beta, struct bd_tensor *y,
                   struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *ws)
{
        struct bd_dnnl *dn = dnnl_of(be);
        if (x->dtype != BD_F32 || dn->force_ref)
                return bd_ref_bn_fwd(be, eps, relu, x, gamma, beta, y, mean, var);
        struct dplan *p;
        int r;
        if ((r = bn_plan(be, pc, eps, relu, 0, x, &p)) < 0)
                return r;
        dnnl_memory_desc_t cmd;
        dnnl_dims_t cd = { BD_C(x) };
        DN(dnnl_memory_desc_init_by_tag(&cmd, 1, cd, dnnl_f32, dnnl_x));
        if (p->has_ws) {
                int64_t n = (int64_t)((dnnl_memory_desc_get_size(&p->ws_md) + 3) / 4);
                if ((r = bd_tensor_resize(be, ws, BD_I32, BD_NCHW, 1, &n)) < 0)
                        return r;
        }
        struct xargs a = { 0 };
        if ((r = arg(be, &a, DNNL_ARG_SRC, &p->x_md, x->data)) < 0 || (r = arg(be, &a, DNNL_ARG_DST, &p->x_md, y->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_SCALE, &cmd, gamma->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_SHIFT, &cmd, beta->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_MEAN, &cmd, mean->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_VARIANCE, &cmd, var->data)) < 0 ||
            (p->has_ws && (r = arg(be, &a, DNNL_ARG_WORKSPACE, &p->ws_md, ws->data)) < 0) ||
            (r = scratch_arg(be, &a, p->pd_f)) < 0)
                return r;
        return exec(be, p->p_f, &a);
}

int bd_dnnl_bn_bwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                   const struct bd_tensor *y, const struct bd_tensor *dy, const struct bd_tensor *gamma,
                   const struct bd_tensor *mean, const struct bd_tensor *var, const struct bd_tensor *ws,
                   struct bd_tensor *dx, struct bd_tensor *dgamma, struct bd_tensor *dbeta, unsigned flags)
{
        struct bd_dnnl *dn = dnnl_of(be);
        if (x->dtype != BD_F32 || dn->force_ref)
                return bd_ref_bn_bwd(be, eps, relu, x, y, dy, gamma, mean, var, dx, dgamma, dbeta, flags);
        struct dplan *p;
        int r;
        if ((r = bn_plan(be, pc, eps, relu, 1, x, &p)) < 0)
                return r;
        if (p->has_ws && (!ws || !ws->data))
                return bd_err_set(&be->err, -EINVAL, "batch norm backward: no saved state from the forward");
        int64_t C = BD_C(x);
        int acc_w = (flags & BD_ACC_DW) != 0, acc_x = (flags & BD_ACC_DX) != 0;
        dnnl_memory_desc_t cmd;
        dnnl_dims_t cd = { C };
        DN(dnnl_memory_desc_init_by_tag(&cmd, 1, cd, dnnl_f32, dnnl_x));
        _cleanup_free_ float *tmpw = xmalloc(2 * (size_t)C * sizeof(float));
        _cleanup_free_ void *tmpx = acc_x ? aligned_alloc(64, (bd_tensor_bytes(dx) + 63) & ~(size_t)63) : NULL;
        void *dgp = dgamma && !acc_w ? dgamma->data : tmpw, *dbp = dbeta && !acc_w ? dbeta->data : tmpw + C;
        struct xargs a = { 0 };
        if ((r = arg(be, &a, DNNL_ARG_SRC, &p->x_md, x->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_MEAN, &cmd, mean->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_VARIANCE, &cmd, var->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_DIFF_DST, &p->x_md, dy->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_SCALE, &cmd, gamma->data)) < 0 ||
            /* oneDNN 2.6 refuses the backward without a shift argument it does not read */
            (r = arg(be, &a, DNNL_ARG_SHIFT, &cmd, gamma->data)) < 0 ||
            (p->has_ws && (r = arg(be, &a, DNNL_ARG_WORKSPACE, &p->ws_md, ws->data)) < 0) ||
            (r = arg(be, &a, DNNL_ARG_DIFF_SRC, &p->x_md, acc_x ? tmpx : dx->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_DIFF_SCALE, &cmd, dgp)) < 0 || (r = arg(be, &a, DNNL_ARG_DIFF_SHIFT, &cmd, dbp)) < 0 ||
            (r = scratch_arg(be, &a, p->pd_b)) < 0 || (r = exec(be, p->p_b, &a)) < 0)
                return r;
        if (acc_w) {
                struct bd_tensor t = *gamma;
                if (dgamma) {
                        t.data = tmpw;
                        add_into(be, &t, dgamma);
                }
                if (dbeta) {
                        t.data = tmpw + C;
                        add_into(be, &t, dbeta);
                }
        }
        if (acc_x) {
                struct bd_tensor t = *dx;
                t.data = tmpx;
                add_into(be, &t, dx);
        }
        return 0;
}

/* ---- max pooling ---- */

static int pool_plan(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc, int need_bwd,
                     const struct bd_tensor *x, const struct bd_tensor *y, struct dplan **ret)
{
        uint64_t key = bd_hash_tensor(x, bd_hash_tensor(y, bd_hash(d, sizeof(*d), BD_HASH_INIT ^ 0x9)));
        struct dplan *p = bd_plan_find(pc, key);
        int r;
        dnnl_dims_t st = { d->sh, d->sw }, k = { d->kh, d->kw }, dil = { 0, 0 }, pl = { d->ph, d->pw }, pr;
        pr[0] = (y->dims[2] - 1) * d->sh + d->kh - x->dims[2] - d->ph;
        pr[1] = (y->dims[3] - 1) * d->sw + d->kw - x->dims[3] - d->pw;
        if (!p) {
                p = xcalloc(1, sizeof(*p));
                p->kind = P_POOL;
                dnnl_pooling_v2_desc_t pd;
                if ((r = md_of(be, x, &p->x_md)) < 0 || (r = md_of(be, y, &p->y_md)) < 0)
                        goto fail;
                if (dnnl_pooling_v2_forward_desc_init(&pd, dnnl_forward_training, dnnl_pooling_max, &p->x_md, &p->y_md,
                                                      st, k, dil, pl, pr) != dnnl_success) {
                        r = bd_err_set(&be->err, -EINVAL, "oneDNN: pooling descriptor");
                        goto fail;
                }
                if ((r = pd_create(be, &p->pd_f, &pd, NULL, "pool fwd")) < 0 || (r = prim_create(be, &p->p_f, p->pd_f)) < 0)
                        goto fail;
                const dnnl_memory_desc_t *ws = dnnl_primitive_desc_query_md(p->pd_f, dnnl_query_workspace_md, 0);
                p->has_ws = ws && dnnl_memory_desc_get_size(ws) > 0;
                if (p->has_ws)
                        p->ws_md = *ws;
                bd_plan_put(be, pc, key, p);
        }
        if (need_bwd && !p->p_b) {
                dnnl_pooling_v2_desc_t pd;
                if (dnnl_pooling_v2_backward_desc_init(&pd, dnnl_pooling_max, &p->x_md, &p->y_md, st, k, dil, pl, pr) !=
                    dnnl_success)
                        return bd_err_set(&be->err, -EINVAL, "oneDNN: pooling backward descriptor");
                if ((r = pd_create(be, &p->pd_b, &pd, p->pd_f, "pool bwd")) < 0 || (r = prim_create(be, &p->p_b, p->pd_b)) < 0)
                        return r;
        }
        *ret = p;
        return 0;
fail:
        bd_dnnl_plan_free(be, p);
        return r;
}

int bd_dnnl_pool_fwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, struct bd_tensor *y, struct bd_tensor *ws)
{
        struct bd_dnnl *dn = dnnl_of(be);
        if (x->dtype != BD_F32 || dn->force_ref)
                return bd_ref_pool_fwd(be, d, x, y, ws);
        struct dplan *p;
        int r;
        if ((r = pool_plan(be, d, pc, 0, x, y, &p)) < 0)
                return r;
        if (p->has_ws) {
                int64_t n = (int64_t)((dnnl_memory_desc_get_size(&p->ws_md) + 3) / 4);
                if ((r = bd_tensor_resize(be, ws, BD_I32, BD_NCHW, 1, &n)) < 0)
                        return r;
        }
        struct xargs a = { 0 };
        if ((r = arg(be, &a, DNNL_ARG_SRC, &p->x_md, x->data)) < 0 || (r = arg(be, &a, DNNL_ARG_DST, &p->y_md, y->data)) < 0 ||
            (p->has_ws && (r = arg(be, &a, DNNL_ARG_WORKSPACE, &p->ws_md, ws->data)) < 0) ||
            (r = scratch_arg(be, &a, p->pd_f)) < 0)
                return r;
        return exec(be, p->p_f, &a);
}

int bd_dnnl_pool_bwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *y, const struct bd_tensor *dy,
                     const struct bd_tensor *ws, struct bd_tensor *dx)
{
        struct bd_dnnl *dn = dnnl_of(be);
        if (x->dtype != BD_F32 || dn->force_ref)
                return bd_ref_pool_bwd(be, d, x, dy, ws, dx);
        struct dplan *p;
        int r;
        if ((r = pool_plan(be, d, pc, 1, x, y, &p)) < 0)
                return r;
        if (p->has_ws && (!ws || !ws->data))
                return bd_err_set(&be->err, -EINVAL, "max pool backward: no saved state from the forward");
        struct xargs a = { 0 };
        if ((r = arg(be, &a, DNNL_ARG_DIFF_DST, &p->y_md, dy->data)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_DIFF_SRC, &p->x_md, dx->data)) < 0 ||
            (p->has_ws && (r = arg(be, &a, DNNL_ARG_WORKSPACE, &p->ws_md, ws->data)) < 0) ||
            (r = scratch_arg(be, &a, p->pd_b)) < 0)
                return r;
        return exec(be, p->p_b, &a);
}

/* ---- fully connected (inner product) ---- */

static int fc_plan(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                   const struct bd_tensor *w, struct dplan **ret)
{
        uint64_t key = bd_hash_tensor(x, bd_hash_tensor(w, BD_HASH_INIT ^ 0xfc));
        struct dplan *p = bd_plan_find(pc, key);
        if (p) {
                *ret = p;
                return 0;
        }
        int r;
        p = xcalloc(1, sizeof(*p));
        p->kind = P_FC;
        int64_t yd[2] = { x->dims[0], w->dims[0] };
        struct bd_tensor yt = bd_tensor_view(NULL, BD_CPU, BD_F32, BD_NCHW, 2, yd);
        dnnl_memory_desc_t w_any, xu, yu;
        if ((r = md_of(be, x, &xu)) < 0 || (r = md_of(be, &yt, &yu)) < 0 || (r = md_of(be, w, &p->w_user)) < 0)
                goto fail;
        fmt_init(be, &p->x, &xu, &xu);
        fmt_init(be, &p->dx, &xu, &xu);
        fmt_init(be, &p->y, &yu, &yu);
        fmt_init(be, &p->dy, &yu, &yu);
        dnnl_dims_t bd = { w->dims[0] };
        dnnl_memory_desc_init_by_tag(&p->b_md, 1, bd, dnnl_f32, dnnl_x);
        dnnl_memory_desc_init_by_tag(&w_any, 2, p->w_user.dims, dnnl_f32, dnnl_format_tag_any);
        for (int b = 0; b < 2; b++)
                if (dnnl_inner_product_forward_desc_init(&p->fd[b].ip, dnnl_forward_training, &xu, &w_any,
                                                         b ? &p->b_md : NULL, &yu) != dnnl_success) {
                        r = bd_err_set(&be->err, -EINVAL, "oneDNN: inner product descriptor");
                        goto fail;
                }
        if ((r = pd_create(be, &p->fwd_pd[0], &p->fd[0], NULL, "ip fwd")) < 0 || (r = prim_create(be, &p->fwd[0], p->fwd_pd[0])) < 0)
                goto fail;
        fmt_init(be, &p->wf, dnnl_primitive_desc_query_md(p->fwd_pd[0], dnnl_query_weights_md, 0), &p->w_user);
        bd_plan_put(be, pc, key, p);
        *ret = p;
        return 0;
fail:
        bd_dnnl_plan_free(be, p);
        return r;
}

int bd_dnnl_fc_fwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                   const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y, uint64_t wver)
{
        struct bd_dnnl *dn = dnnl_of(be);
        if (x->dtype != BD_F32 || dn->force_ref)
                return bd_ref_fc_fwd(be, x, w, b, y);
        struct dplan *p;
        const void *wp;
        int r, bias = b != NULL;
        if ((r = fc_plan(be, pc, x, w, &p)) < 0)
                return r;
        if (!p->fwd[bias]) {
                if ((r = pd_create(be, &p->fwd_pd[bias], &p->fd[bias], NULL, "ip fwd")) < 0 ||
                    (r = prim_create(be, &p->fwd[bias], p->fwd_pd[bias])) < 0)
                        return r;
                if (!dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(p->fwd_pd[bias], dnnl_query_weights_md, 0),
                                            &p->wf.in))
                        return bd_err_set(&be->err, -EIO, "oneDNN: inner product with bias wants other weights");
        }
        if ((r = fmt_weights(be, &p->wf, w, wver, &wp)) < 0)
                return r;
        struct xargs a = { 0 };
        if ((r = arg(be, &a, DNNL_ARG_SRC, &p->x.in, x->data)) < 0 || (r = arg(be, &a, DNNL_ARG_WEIGHTS, &p->wf.in, wp)) < 0 ||
            (r = arg(be, &a, DNNL_ARG_DST, &p->y.in, y->data)) < 0 ||
            (bias && (r = arg(be, &a, DNNL_ARG_BIAS, &p->b_md, b->data)) < 0) ||
            (r = scratch_arg(be, &a, p->fwd_pd[bias])) < 0)
                return r;
        return exec(be, p->fwd[bias], &a);
}

int bd_dnnl_fc_bwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                   const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx,
                   struct bd_tensor *dw, struct bd_tensor *db, unsigned flags, uint64_t wver)
{
        struct bd_dnnl *dn = dnnl_of(be);
        if (x->dtype != BD_F32 || dn->force_ref)
                return bd_ref_fc_bwd(be, x, w, dy, dx, dw, db, flags);
        struct dplan *p;
        int r;
        if ((r = fc_plan(be, pc, x, w, &p)) < 0)
                return r;
        if (dw || db) {
                int bias = db != NULL;
                if (!p->bwdw[bias]) {
                        dnnl_inner_product_desc_t d;
                        dnnl_memory_desc_t w_any;
                        dnnl_memory_desc_init_by_tag(&w_any, 2, p->w_user.dims, dnnl_f32, dnnl_format_tag_any);
                        if (dnnl_inner_product_backward_weights_desc_init(&d, &p->x.in, &w_any, bias ? &p->b_md : NULL,
                                                                          &p->y.in) != dnnl_success)
                                return bd_err_set(&be->err, -EINVAL, "oneDNN: inner product backward descriptor");
                        if ((r = pd_create(be, &p->bwdw_pd[bias], &d, p->fwd_pd[0], "ip bwd weights")) < 0 ||
                            (r = prim_create(be, &p->bwdw[bias], p->bwdw_pd[bias])) < 0)
                                return r;
                        const dnnl_memory_desc_t *dwmd =
                                dnnl_primitive_desc_query_md(p->bwdw_pd[bias], dnnl_query_diff_weights_md, 0);
                        if (!p->dw.in.ndims)
                                fmt_init(be, &p->dw, dwmd, &p->w_user);
                        else if (!dnnl_memory_desc_equal(dwmd, &p->dw.in))
                                return bd_err_set(&be->err, -EIO, "oneDNN: weight gradient formats differ with bias");
                }
                if ((r = wgrad(be, p, bias, x->data, dy->data, &p->x.in, &p->y.in, dw, db, (flags & BD_ACC_DW) != 0)) < 0)
                        return r;
        }
        if (dx) {
                const void *wp;
                void *dxp;
                int acc = (flags & BD_ACC_DX) != 0;
                if (!p->bwdd) {
                        dnnl_inner_product_desc_t d;
                        dnnl_memory_desc_t w_any;
                        dnnl_memory_desc_init_by_tag(&w_any, 2, p->w_user.dims, dnnl_f32, dnnl_format_tag_any);
                        if (dnnl_inner_product_backward_data_desc_init(&d, &p->x.in, &w_any, &p->y.in) != dnnl_success)
                                return bd_err_set(&be->err, -EINVAL, "oneDNN: inner product backward descriptor");
                        if ((r = pd_create(be, &p->bwdd_pd, &d, p->fwd_pd[0], "ip bwd data")) < 0 ||
                            (r = prim_create(be, &p->bwdd, p->bwdd_pd)) < 0)
                                return r;
                        fmt_init(be, &p->wbd, dnnl_primitive_desc_query_md(p->bwdd_pd, dnnl_query_weights_md, 0), &p->w_user);
                }
                if ((r = fmt_weights(be, &p->wbd, w, wver, &wp)) < 0 || (r = fmt_out(be, &p->dx, dx->data, acc, &dxp)) < 0)
                        return r;
                struct xargs a = { 0 };
                if ((r = arg(be, &a, DNNL_ARG_DIFF_DST, &p->y.in, dy->data)) < 0 ||
                    (r = arg(be, &a, DNNL_ARG_WEIGHTS, &p->wbd.in, wp)) < 0 ||
                    (r = arg(be, &a, DNNL_ARG_DIFF_SRC, &p->dx.in, dxp)) < 0 || (r = scratch_arg(be, &a, p->bwdd_pd)) < 0 ||
                    (r = exec(be, p->bwdd, &a)) < 0 || (r = fmt_finish(be, &p->dx, dx->data, acc)) < 0)
                        return r;
        }
        return 0;
}
