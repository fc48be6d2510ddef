/* test-coco-eval-mpi.c: evaluation spread over MPI ranks gives the numbers
 * of one process.  Run by tests/t0630-coco-eval-mpi.t under mpirun; alone
 * it skips.  Rank 0 prints the TAP. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coco-eval-mpi.h"
#include "fs.h"
#include "macro.h"
#include "rng.h"
#include "tap.h"

static struct coco_index *make_gt(int rank, uint64_t seed)
{
        struct bd_rng r;
        bd_rng_seed_key(&r, seed);
        struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        buf_puts(&b, "{\"images\": [");
        int ni = 40;
        for (int i = 0; i < ni; i++)
                buf_printf(&b, "%s{\"id\": %d, \"file_name\": \"%d.jpg\", \"width\": 300, \"height\": 300}", i ? "," : "",
                           3 * i + 1, i);
        buf_puts(&b, "], \"categories\": [{\"id\": 1, \"name\": \"a\"}, {\"id\": 2, \"name\": \"b\"}], \"annotations\": [");
        int id = 1;
        for (int i = 0; i < ni; i++)
                for (int k = 0; k < (int)bd_rng_pick(&r, 5); k++, id++) {
                        double w = round(bd_rng_range(&r, 5, 150) * 10) / 10, h = round(bd_rng_range(&r, 5, 150) * 10) / 10;
                        double x = round(bd_rng_range(&r, 0, 300 - w) * 10) / 10, y = round(bd_rng_range(&r, 0, 300 - h) * 10) / 10;
                        /* a triangle in the box: masks and boxes give different numbers */
                        buf_printf(&b, "%s{\"id\": %d, \"image_id\": %d, \"category_id\": %d, \"bbox\": [%.1f, %.1f, %.1f, %.1f], "
                                       "\"area\": %.1f, \"iscrowd\": %d, \"segmentation\": [[%.1f, %.1f, %.1f, %.1f, %.1f, %.1f]]}",
                                   id > 1 ? "," : "", id, 3 * i + 1, 1 + (int)bd_rng_pick(&r, 2), x, y, w, h, w * h / 2,
                                   bd_rng_uniform(&r) < 0.1, x, y, x + w, y, x, y + h);
                }
        buf_puts(&b, "]}");
        char path[64];
        snprintf(path, sizeof(path), "/tmp/test-coco-eval-mpi.%d.%d.json", (int)getpid(), rank);
        struct bd_err err;
        struct coco_index *x = NULL;
        if (fs_write_atomic(path, b.s, b.len, 0644, &err) < 0 ||
            coco_index_open(path, NULL, COCO_INDEX_NO_CACHE, &x, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        unlink(path);
        buf_release(&b);
        return x;
}

/* Detections near the ground truth and elsewhere, the same on every rank. */
static void make_dets(const struct coco_index *gt, uint64_t seed, struct coco_det **ret, size_t *ret_n)
{
        struct bd_rng r;
        bd_rng_seed_key(&r, seed);
        size_t n = 0;
        struct coco_det *d = xmalloc((gt->n_anns + 10 * gt->n_images + 1) * sizeof(*d));
        for (size_t i = 0; i < gt->n_anns; i++) {
                const struct coco_ann *a = &gt->anns[i];
                struct coco_det *x = &d[n++];
                x->image_id = gt->images[a->image].id;
                x->category_id = a->category_id;
                for (int j = 0; j < 4; j++)
                        x->bbox[j] = fmax(0, a->bbox[j] + bd_rng_range(&r, -8, 8));
                x->score = bd_rng_uniform(&r);
        }
        for (size_t i = 0; i < gt->n_images; i++)
                for (int k = 0; k < 10; k++) {
                        struct coco_det *x = &d[n++];
                        x->image_id = gt->images[i].id;
                        x->category_id = 1 + (int)bd_rng_pick(&r, 2);
                        x->bbox[0] = bd_rng_range(&r, 0, 250);
                        x->bbox[1] = bd_rng_range(&r, 0, 250);
                        x->bbox[2] = bd_rng_range(&r, 2, 50);
                        x->bbox[3] = bd_rng_range(&r, 2, 50);
                        x->score = bd_rng_uniform(&r) / 2;
                }
        *ret = d;
        *ret_n = n;
}

int main(int argc, char **argv)
{
        if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE")) {
                printf("1..0 # SKIP run under mpirun by tests/t0630-coco-eval-mpi.t\n");
                return 0;
        }
        MPI_Init(&argc, &argv);
        int rank, size;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (rank != 0 && !freopen("/dev/null", "w", stdout))
                MPI_Abort(MPI_COMM_WORLD, 1);
        for (uint64_t seed = 1; seed <= 6; seed++) {
                enum coco_eval_type type = seed > 3 ? COCO_EVAL_SEGM : COCO_EVAL_BBOX;
                _cleanup_(coco_index_freep) struct coco_index *gt = make_gt(rank, seed);
                _cleanup_free_ struct coco_det *d = NULL;
                size_t nd;
                make_dets(gt, seed + 100, &d, &nd);
                /* segm: triangles in the detections' boxes, as the ground truth's */
                struct rle *masks = xcalloc(nd + 1, sizeof(*masks));
                for (size_t k = 0; k < nd; k++) {
                        const double *b = d[k].bbox;
                        double xy[6] = { b[0], b[1], b[0] + b[2], b[1], b[0], b[1] + b[3] };
                        rle_from_poly(&masks[k], xy, 3, 300, 300);
                }
                struct bd_err err;
                /* the reference: one process, all detections */
                double whole[12], gathered[12];
                _cleanup_(coco_eval_freep) struct coco_eval *one = coco_eval_new_type(gt, type, 1);
                if (type == COCO_EVAL_SEGM)
                        coco_eval_add_masks(one, d, masks, nd, &err);
                else
                        coco_eval_add(one, d, nd, &err);
                coco_eval_accumulate(one, whole, &err);
                /* each rank: the detections of its images, evaluated there */
                _cleanup_(coco_eval_freep) struct coco_eval *ev = coco_eval_new_type(gt, type, 2);
                int64_t *ids = xmalloc(gt->n_images * sizeof(int64_t));
                size_t n = 0;
                for (size_t i = 0; i < gt->n_images; i++)
                        if ((int)(i % (size_t)size) == rank)
                                ids[n++] = gt->images[i].id;
                int r = 0;
                for (size_t k = 0; k < nd; k++)
                        if ((int)(coco_index_find_image(gt, d[k].image_id) % size) == rank)
                                r |= type == COCO_EVAL_SEGM ? coco_eval_add_masks(ev, &d[k], &masks[k], 1, &err)
                                                            : coco_eval_add(ev, &d[k], 1, &err);
                for (size_t k = 0; k < nd; k++)
                        rle_free(&masks[k]);
                free(masks);
                r |= coco_eval_images(ev, ids, n, &err);
                free(ids);
                r |= coco_eval_gather_stats(ev, MPI_COMM_WORLD, 0, gathered, &err);
                /* every rank got the same numbers, equal to one process's */
                int same = r == 0 && memcmp(whole, gathered, sizeof(whole)) == 0, all = 0;
                MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
                char what[128];
                snprintf(what, sizeof(what), "%s, seed %d: %d ranks gather the numbers of one process, on every rank",
                         coco_eval_type_name(type), (int)seed, size);
                ok(all, what);
                ok(whole[0] > 0.05 && whole[0] < 1, "  a non-trivial mAP");
        }
        /* an image evaluated by two ranks is an error reported on every rank */
        _cleanup_(coco_index_freep) struct coco_index *gt = make_gt(rank, 9);
        _cleanup_(coco_eval_freep) struct coco_eval *ev = coco_eval_new(gt, 1);
        struct bd_err err;
        int64_t first = gt->images[0].id;
        coco_eval_images(ev, &first, 1, &err);
        double s[12];
        int r = coco_eval_gather_stats(ev, MPI_COMM_WORLD, 0, s, &err), all = 0, mine = size > 1 ? r < 0 : r == 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        ok(all, size > 1 ? "the same image from two ranks: an error on every rank" : "one rank: no conflict");
        if (size > 1)
                like(err.msg, "evaluated twice", "  saying so");
        int ret = done_testing();
        MPI_Finalize();
        return ret;
}
