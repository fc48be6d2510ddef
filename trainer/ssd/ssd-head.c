/* ssd-head.c: the head gather of ssd-elem.h, checks and the CPU launcher;
 * the CUDA launcher is ssd-head-cuda.cu (ssd-head-cuda-none.c without CUDA). */
#include "config.h"

#include <errno.h>

#include "ssd-elem.h"
#include "ssd-head-launch.h"
#include "ssd-net.h"

/* below this many elements a loop runs on one thread */
#define PAR_MIN 16384

/* the 4-D loops in the head's memory order, as ops-cpu.c runs its kernels */
static void head_cpu(const struct ssd_head_args *a)
{
        const int64_t N = a->s.N, C = a->s.C, H = a->s.H, W = a->s.W;
        int par = N * C * H * W >= PAR_MIN;
        if (a->s.layout == BD_NHWC) {
#pragma omp parallel for schedule(static) if (par)
                for (int64_t nh = 0; nh < N * H; nh++) {
                        int64_t n = nh / H, h = nh % H, i = nh * W * C;
                        for (int64_t w = 0; w < W; w++)
                                for (int64_t c = 0; c < C; c++, i++)
                                        ssd_k_head(i, n, c, h, w, a);
                }
        } else if (a->s.layout == BD_NCHW8C) {
                const int64_t CB = C / 8;
#pragma omp parallel for schedule(static) if (par)
                for (int64_t nb = 0; nb < N * CB; nb++) {
                        int64_t n = nb / CB, c0 = (nb % CB) * 8, i = nb * H * W * 8;
                        for (int64_t h = 0; h < H; h++)
                                for (int64_t w = 0; w < W; w++)
                                        for (int64_t j = 0; j < 8; j++, i++)
                                                ssd_k_head(i, n, c0 + j, h, w, a);
                }
        } else {
#pragma omp parallel for schedule(static) if (par)
                for (int64_t nc = 0; nc < N * C; nc++) {
                        int64_t n = nc / C, c = nc % C, i = nc * H * W;
                        for (int64_t h = 0; h < H; h++)
                                for (int64_t w = 0; w < W; w++, i++)
                                        ssd_k_head(i, n, c, h, w, a);
                }
        }
}

int ssd_head_gather(struct bd_backend *be, struct bd_tensor *head, int64_t A, int64_t off, struct bd_tensor *rows,
                    int to_head)
{
        char a[128], b[128];
        if (head->ndim != 4 || rows->ndim != 2 || A < 1 || BD_C(head) % A || head->dtype != rows->dtype ||
            head->dev != be->dev || rows->dev != be->dev || bd_dtype_size(head->dtype) > 8)
                return bd_err_set(&be->err, -EINVAL, "ssd head: head %s and rows %s do not fit (%lld boxes per cell)",
                                  bd_tensor_str(head, a, sizeof(a)), bd_tensor_str(rows, b, sizeof(b)), (long long)A);
        int64_t N = BD_N(head), R = BD_C(head) / A, HW = BD_H(head) * BD_W(head);
        if (rows->dims[1] != R || rows->dims[0] % N || off < 0 || off + A * HW > rows->dims[0] / N)
                return bd_err_set(&be->err, -EINVAL, "ssd head: head %s does not fit rows %s at box %lld",
                                  bd_tensor_str(head, a, sizeof(a)), bd_tensor_str(rows, b, sizeof(b)), (long long)off);
        if (!head->data || !rows->data)
                return bd_err_set(&be->err, -EINVAL, "ssd head: a tensor has no memory");
        struct ssd_head_args args = {
                .s = { BD_N(head), BD_C(head), BD_H(head), BD_W(head), head->layout },
                .head = head->data, .rows = rows->data, .A = A, .R = R, .B = rows->dims[0] / N, .off = off,
                .esize = (int)bd_dtype_size(head->dtype), .to_head = to_head,
        };
        if (be->dev == BD_CUDA)
                return ssd_head_cuda(be, &args);
        head_cpu(&args);
        return 0;
}
