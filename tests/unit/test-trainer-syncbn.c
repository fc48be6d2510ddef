/* test-trainer-syncbn.c: synchronised batch norm (layers.h through dp.h's
 * bd_dp_sync_bn) on N ranks, each with its share of a batch, against
 * ordinary batch norm on one rank with the whole batch.
 *
 * Every rank builds the same batch x (N images), output gradient dy,
 * weights and running statistics, and runs ordinary batch norm (oneDNN's,
 * or the reference loops with BD_CPU_REF=1 and in float64) on all of it:
 * the reference.  Then each rank runs a training batch norm layer on its
 * share (N / ranks images) in a data-parallel model (bd_dp_attach,
 * bd_dp_sync_bn, the backward's gradient allreduce and bd_dp_finish).  With
 * the synchronisation its outputs, input gradients, weight and bias
 * gradients (summed over the ranks, as the optimiser gets them) and running
 * statistics are the reference's: within 1e-5 of the largest value (float32;
 * 1.2e-6 seen) or 1e-12 (float64; 2e-15 seen); without it (on more than one rank) the outputs and
 * input gradients differ from the reference's by more than 1e-3.
 * Layouts nchw, nhwc and nchw8c, with and without the fused ReLU.
 *
 * Run by tests/t0515-trainer-syncbn.t under mpirun (1, 2 and 3 ranks; on
 * one, the synchronised path sums over one rank and the "differ" checks are
 * left out); alone it skips.  Rank 0 prints the TAP.
 */
#include "config.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "layers.h"
#include "ops.h"
#include "tap.h"

static struct bd_backend *be;
static int rank, size;

#define IMGS 2          /* images per rank */
#define MH 5            /* a map's height and width */
#define MW 7

/* the case's batch: plain NCHW doubles, the same on every rank */
struct batch {
        int64_t N, C;
        double *x, *dy, *gamma, *beta, *rmean, *rvar;
};

/* what a layer gave: y, dx over its images (plain NCHW), the model's
 * gradients of gamma and beta, its running statistics */
struct result {
        double *y, *dx, *dgamma, *dbeta, *rmean, *rvar;
};

static double *vec(int64_t n)
{
        return xcalloc((size_t)n, sizeof(double));
}

static void make_batch(struct batch *b, int64_t C, uint64_t seed)
{
        struct bd_rng r;
        bd_rng_seed(&r, seed, 0);
        b->N = (int64_t)IMGS * size;
        b->C = C;
        int64_t n = b->N * C * MH * MW;
        b->x = vec(n);
        b->dy = vec(n);
        /* a mean per channel away from zero: the statistics are not trivial */
        for (int64_t i = 0; i < n; i++) {
                int64_t c = (i / (MH * MW)) % C;
                b->x[i] = (double)c * 0.25 - 1 + bd_rng_range(&r, -1.5, 1.5);
                b->dy[i] = bd_rng_range(&r, -1, 1);
        }
        b->gamma = vec(C);
        b->beta = vec(C);
        b->rmean = vec(C);
        b->rvar = vec(C);
        for (int64_t c = 0; c < C; c++) {
                b->gamma[c] = bd_rng_range(&r, 0.5, 1.5);
                b->beta[c] = bd_rng_range(&r, -0.5, 0.5);
                b->rmean[c] = bd_rng_range(&r, -0.2, 0.2);
                b->rvar[c] = bd_rng_range(&r, 0.5, 1.5);
        }
}

static void free_batch(struct batch *b)
{
        double *all[] = { b->x, b->dy, b->gamma, b->beta, b->rmean, b->rvar };
        for (size_t i = 0; i < ARRAY_SIZE(all); i++)
                free(all[i]);
}

static void free_result(struct result *r)
{
        double *all[] = { r->y, r->dx, r->dgamma, r->dbeta, r->rmean, r->rvar };
        for (size_t i = 0; i < ARRAY_SIZE(all); i++)
                free(all[i]);
}

static void bail(const char *what, const char *msg)
{
        printf("Bail out! %s: %s\n", what, msg);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
}

static double ld(const struct bd_tensor *t, int64_t i)
{
        return t->dtype == BD_F64 ? ((const double *)t->data)[i] : ((const float *)t->data)[i];
}

/* images [n0, n0 + n) of the plain array a as a feature map of type dt in
 * layout l, and back */
static void to_map(struct bd_tensor *t, enum bd_dtype dt, enum bd_layout l, const double *a, int64_t n0, int64_t n,
                   int64_t C)
{
        int64_t dims[4] = { n, C, MH, MW };
        if (bd_tensor_resize(be, t, dt, l, 4, dims) < 0)
                bail("resize", be->err.msg);
        struct bd_shape4 s = { n, C, MH, MW, l };
        for (int64_t i = 0; i < n; i++)
                for (int64_t c = 0; c < C; c++)
                        for (int64_t k = 0; k < MH * MW; k++) {
                                double v = a[((n0 + i) * C + c) * MH * MW + k];
                                int64_t o = bd_off4(&s, i, c, k / MW, k % MW);
                                if (dt == BD_F64)
                                        ((double *)t->data)[o] = v;
                                else
                                        ((float *)t->data)[o] = (float)v;
                        }
}

static double *from_map(const struct bd_tensor *t)
{
        struct bd_shape4 s = { t->dims[0], t->dims[1], t->dims[2], t->dims[3], t->layout };
        double *a = vec(s.N * s.C * s.H * s.W);
        for (int64_t i = 0; i < s.N; i++)
                for (int64_t c = 0; c < s.C; c++)
                        for (int64_t k = 0; k < s.H * s.W; k++)
                                a[(i * s.C + c) * s.H * s.W + k] = ld(t, bd_off4(&s, i, c, k / s.W, k % s.W));
        return a;
}

static void set_vec(struct bd_model *m, int id, const double *v)
{
        struct bd_tensor t = bd_model_param(m, id);
        for (int64_t c = 0; c < t.dims[0]; c++)
                if (t.dtype == BD_F64)
                        ((double *)t.data)[c] = v[c];
                else
                        ((float *)t.data)[c] = (float)v[c];
}

static double *get_vec(const struct bd_tensor *t)
{
        double *a = vec(t->dims[0]);
        for (int64_t c = 0; c < t->dims[0]; c++)
                a[c] = ld(t, c);
        return a;
}

/* one rank's sum over the ranks: nothing to add */
static int sum_one(void *ctx, struct bd_model *m, double *v, int64_t n)
{
        return 0;
}

enum mode {
        WHOLE,          /* ordinary batch norm, the whole batch, no data parallel */
        SHARE,          /* ordinary, this rank's share, data parallel */
        SYNC,           /* synchronised, this rank's share, data parallel */
};

/* a training batch norm layer's forward and backward (and with data
 * parallel, the gradient allreduce and the buffers' average) */
static void run(const struct batch *b, enum bd_dtype dt, enum bd_layout l, int relu, enum mode mode,
                struct result *ret)
{
        struct bd_err err;
        struct bd_model m;
        struct bd_bn bn;
        struct bd_dp dp;
        int dpar = mode != WHOLE;
        bd_model_init(&m, be, dt);
        if (bd_bn_init(&bn, &m, "bn", b->C, BD_BN_TRAIN, relu) < 0 || bd_model_finalize(&m, &err) < 0)
                bail("model", be->err.msg);
        set_vec(&m, bn.gamma, b->gamma);
        set_vec(&m, bn.beta, b->beta);
        set_vec(&m, bn.rmean, b->rmean);
        set_vec(&m, bn.rvar, b->rvar);
        if (dpar && (bd_dp_init(&dp, NULL, NULL, &err) < 0 || bd_dp_attach(&dp, &m, 1 << 20, &err) < 0))
                bail("data parallel", err.msg);
        if (mode == SYNC) {
                if (bd_dp_sync_bn(&dp, &err) < 0)
                        bail("bd_dp_sync_bn", err.msg);
                if (size == 1)
                        m.sync_bn = sum_one;
        }
        int64_t n0 = dpar ? (int64_t)IMGS * rank : 0, n = dpar ? IMGS : b->N;
        struct bd_tensor x = { 0 }, y = { 0 }, dy = { 0 }, dx = { 0 };
        to_map(&x, dt, l, b->x, n0, n, b->C);
        to_map(&dy, dt, l, b->dy, n0, n, b->C);
        m.training = 1;
        bd_model_begin_step(&m);
        if (bd_bn_fwd(&m, &bn, &x, &y) < 0)
                bail("forward", be->err.msg);
        if (dpar ? bd_dp_begin_backward(&dp, &err) < 0 : bd_model_begin_backward(&m) < 0)
                bail("begin backward", dpar ? err.msg : be->err.msg);
        if (bd_bn_bwd(&m, &bn, &x, &y, &dy, &dx) < 0)
                bail("backward", be->err.msg);
        if (dpar && bd_dp_finish(&dp, &err) < 0)
                bail("bd_dp_finish", err.msg);
        ret->y = from_map(&y);
        ret->dx = from_map(&dx);
        struct bd_tensor dg = bd_model_grad(&m, bn.gamma), db = bd_model_grad(&m, bn.beta),
                         rm = bd_model_param(&m, bn.rmean), rv = bd_model_param(&m, bn.rvar);
        ret->dgamma = get_vec(&dg);
        ret->dbeta = get_vec(&db);
        ret->rmean = get_vec(&rm);
        ret->rvar = get_vec(&rv);
        bd_tensor_release(&x);
        bd_tensor_release(&y);
        bd_tensor_release(&dy);
        bd_tensor_release(&dx);
        bd_bn_release(&bn);
        if (dpar)
                bd_dp_release(&dp);
        bd_model_release(&m);
}

/* the largest difference between got and want (n values) relative to the
 * largest |want|, the worst over the ranks */
static double rel_diff(const double *got, const double *want, int64_t n)
{
        double d = 0, mx = 0;
        for (int64_t i = 0; i < n; i++) {
                d = fmax(d, fabs(got[i] - want[i]));
                mx = fmax(mx, fabs(want[i]));
        }
        double r = mx > 0 ? d / mx : d, worst;
        MPI_Allreduce(&r, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        return worst;
}

static void check(const char *name, const char *what, double d, double tol, int same)
{
        char desc[256];
        snprintf(desc, sizeof(desc), "%s: %s %s the whole batch's (%.2g)", name, what,
                 same ? "match" : "differ from", d);
        ok(same ? d <= tol : d > tol, desc);
}

static void run_case(enum bd_dtype dt, enum bd_layout l, int relu, int64_t C, uint64_t seed)
{
        char name[128];
        snprintf(name, sizeof(name), "%s %s%s, %d rank%s x %d images", bd_dtype_name(dt),
                 l == BD_NHWC ? "nhwc" : l == BD_NCHW8C ? "nchw8c" : "nchw", relu ? " + relu" : "", size,
                 size == 1 ? "" : "s", IMGS);
        double tol = dt == BD_F64 ? 1e-12 : 1e-5;
        struct batch b;
        make_batch(&b, C, seed);
        struct result whole, sync;
        run(&b, dt, l, relu, WHOLE, &whole);
        run(&b, dt, l, relu, SYNC, &sync);
        int64_t off = (int64_t)IMGS * rank * C * MH * MW, n = (int64_t)IMGS * C * MH * MW;
        check(name, "synchronised: outputs", rel_diff(sync.y, whole.y + off, n), tol, 1);
        check(name, "synchronised: input gradients", rel_diff(sync.dx, whole.dx + off, n), tol, 1);
        check(name, "synchronised: weight gradients summed over the ranks", rel_diff(sync.dgamma, whole.dgamma, C),
              tol, 1);
        check(name, "synchronised: bias gradients summed over the ranks", rel_diff(sync.dbeta, whole.dbeta, C), tol, 1);
        check(name, "synchronised: running means", rel_diff(sync.rmean, whole.rmean, C), tol, 1);
        check(name, "synchronised: running variances", rel_diff(sync.rvar, whole.rvar, C), tol, 1);
        if (size > 1) {
                struct result share;
                run(&b, dt, l, relu, SHARE, &share);
                check(name, "each rank's own statistics: outputs", rel_diff(share.y, whole.y + off, n), 1e-3, 0);
                check(name, "each rank's own statistics: input gradients", rel_diff(share.dx, whole.dx + off, n), 1e-3,
                      0);
                free_result(&share);
        }
        free_result(&whole);
        free_result(&sync);
        free_batch(&b);
}

int main(int argc, char **argv)
{
        if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE")) {
                printf("1..0 # SKIP run under mpirun by tests/t0515-trainer-syncbn.t\n");
                return 0;
        }
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (rank != 0 && !freopen("/dev/null", "w", stdout))
                MPI_Abort(MPI_COMM_WORLD, 1);
        struct bd_err err;
        if (bd_backend_cpu_new(1, &be, &err) < 0)
                bail("backend", err.msg);
        const char *ref = getenv("BD_CPU_REF");
        printf("# %d rank%s, the whole batch's batch norm on %s\n", size, size == 1 ? "" : "s",
               ref && *ref && strcmp(ref, "0") ? "the reference loops" : "oneDNN (float32), the reference loops (float64)");
        static const enum bd_layout L[3] = { BD_NCHW, BD_NHWC, BD_NCHW8C };
        uint64_t seed = 1;
        for (int li = 0; li < 3; li++)
                for (int relu = 0; relu <= 1; relu++)
                        run_case(BD_F32, L[li], relu, 16, seed++);
        run_case(BD_F64, BD_NCHW8C, 1, 16, seed++);
        run_case(BD_F64, BD_NCHW, 0, 8, seed++);
        bd_backend_free(be);
        int ret = done_testing();
        MPI_Finalize();
        return ret;
}
