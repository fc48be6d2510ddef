/* coco-eval-mpi.c: gathering per-image evaluation results on one rank. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "coco-eval-mpi.h"
#include "macro.h"

int coco_eval_gather_stats(struct coco_eval *ev, MPI_Comm comm, int root, double stats[COCO_EVAL_NSTATS],
                           struct bd_err *err)
{
        int rank, size;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        _cleanup_free_ void *mine = NULL;
        size_t len = 0;
        coco_eval_pack(ev, &mine, &len);
        /* result[0]: status, result[1..12]: the numbers; the message follows */
        struct {
                double status;
                double stats[COCO_EVAL_NSTATS];
                char msg[sizeof(err->msg)];
        } result = { 0 };
        int ok = len <= INT_MAX;
        int all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
        if (!all_ok)
                return bd_err_set(err, -EFBIG, "evaluation results over 2 GiB on a rank");
        int n = (int)len;
        _cleanup_free_ int *counts = rank == root ? xcalloc((size_t)size, sizeof(int)) : NULL;
        _cleanup_free_ int *displs = rank == root ? xcalloc((size_t)size, sizeof(int)) : NULL;
        MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, root, comm);
        _cleanup_free_ char *all = NULL;
        if (rank == root) {
                long long total = 0;
                for (int i = 0; i < size; i++) {
                        displs[i] = (int)total;
                        total += counts[i];
                }
                if (total > INT_MAX) {
                        result.status = -EFBIG;
                        snprintf(result.msg, sizeof(result.msg), "evaluation results over 2 GiB in all");
                }
                all = xmalloc(result.status ? 1 : (size_t)total + 1);
        }
        /* the gather must run on every rank; root skips it when too large for one */
        int go = result.status == 0;
        MPI_Bcast(&go, 1, MPI_INT, root, comm);
        if (go)
                MPI_Gatherv(mine, n, MPI_BYTE, all, counts, displs, MPI_BYTE, root, comm);
        if (rank == root && go) {
                struct bd_err e;
                int r = 0;
                for (int i = 0; i < size && r == 0; i++)
                        if (i != root)
                                r = coco_eval_merge(ev, all + displs[i], (size_t)counts[i], &e);
                if (r == 0)
                        r = coco_eval_accumulate(ev, result.stats, &e);
                if (r < 0) {
                        result.status = r;
                        memcpy(result.msg, e.msg, sizeof(result.msg));
                }
        }
        MPI_Bcast(&result, (int)sizeof(result), MPI_BYTE, root, comm);
        if (result.status < 0)
                return bd_err_set(err, (int)result.status, "%s", result.msg);
        memcpy(stats, result.stats, sizeof(result.stats));
        return 0;
}
