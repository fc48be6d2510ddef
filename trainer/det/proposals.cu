/* proposals.cu: the CUDA twin of det_rpn_proposals (boxes-dev.h).
 *
 * Per level, one stable radix sort of all images' logits on the key
 * (image, det_desc_key(logit)) gives each image's top-n in the host's order;
 * a kernel decodes, clips and filters those candidates (boxes-impl.h's
 * arithmetic); the survivors are compacted on the host (a few thousand per
 * image, in level then rank order, as the host loop appends them) and go
 * back up in one copy, NMS runs on the device (the level is the class: for
 * [R] det_cuda_nms_batch, queued for every image and the kept indices read
 * back once; torchvision's batched order through det_cuda_nms, which waits
 * per image), and the per-level cap and the post-NMS top-n are the host's
 * det_rpn_select.  The result is copied to the device.
 */
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "config.h"
#include "boxes-dev.h"
}
#include "boxes-impl.h"
#include "det-cuda.h"


/* key (image, descending logit), value the anchor */
__global__ void k_level_keys(const float *obj, int64_t N, int64_t A, uint64_t *key, int32_t *val)
{
        GRID_LOOP(t, N * A) {
                key[t] = (uint64_t)(t / A) << 32 | det_desc_key(obj[t]);
                val[t] = (int32_t)(t % A);
        }
}

struct rpn_arg {
        float one, min_size, score_thresh;
        int64_t A, k, cap, off;         /* level size, its top-n, candidates per image, the level's offset */
};

/* candidate (i, t) of a level: image i's t-th best anchor, decoded, clipped,
 * and its keep flag */
__global__ void k_candidates(struct rpn_arg a, const float *obj, const float *deltas, const float *anchors,
                             const int32_t *order, const int *hw, int64_t N, float *cb, float *cs, uint8_t *ck)
{
        GRID_LOOP(u, N * a.k) {
                int64_t i = u / a.k, t = u % a.k, an = order[i * a.A + t], o = i * a.cap + a.off + t;
                float s = det_sigmoid(obj[i * a.A + an]);
                det_decode1(deltas + 4 * (i * a.A + an), anchors + 4 * an, 1.0f, 1.0f, 1.0f, 1.0f,
                            (float)DET_BBOX_XFORM_CLIP, a.one, cb + 4 * o);
                ck[o] = (uint8_t)det_clip_keep1(cb + 4 * o, a.one, (float)hw[2 * i + 1], (float)hw[2 * i], a.min_size,
                                                s, a.score_thresh);
                cs[o] = s;
        }
}

extern "C" int det_cuda_rpn_proposals(void *stream, const struct det_conv *c, const struct det_rpn_params *p,
                                      const float *const *obj, const float *const *deltas,
                                      const float *const *anchors, const int64_t *A, int L, int N,
                                      const int *image_hw, float *boxes, float *scores, int64_t *count,
                                      struct bd_err *err)
{
        cudaStream_t st = (cudaStream_t)stream;
        int r = det_rpn_check(p, A, L, N, image_hw);
        int64_t cap = 0, amax = 0, off = 0, post = p->post_nms_top_n;
        uint64_t *key = NULL;
        int32_t *val = NULL, *hl = NULL, *dl = NULL;
        int *dhw = NULL;
        float *cb = NULL, *cs = NULL, *hb = NULL, *hs = NULL, *db = NULL, *ds = NULL, *ob = NULL, *os = NULL;
        uint8_t *ck = NULL, *hk = NULL;
        int64_t *keep = NULL, *m = NULL, *nk = NULL;
        struct det_rpn_kept *kept = NULL;
        void *tmp = NULL;
        size_t tmpb = 0;
        if (r < 0)
                return bd_err_set(err, r, "det rpn proposals: negative count, size or top-n");
        for (int l = 0; l < L; l++) {
                cap += A[l] < p->pre_nms_top_n ? A[l] : p->pre_nms_top_n;
                amax = A[l] > amax ? A[l] : amax;
        }
        if (N == 0)
                return 0;
        if ((int64_t)N * amax > INT32_MAX / 2)
                return bd_err_set(err, -EINVAL, "det rpn proposals: %d images of %lld anchors", N, (long long)amax);
        CU(cudaMallocAsync((void **)&key, 2 * (size_t)(N * amax + 1) * sizeof(uint64_t), st));
        CU(cudaMallocAsync((void **)&val, 2 * (size_t)(N * amax + 1) * sizeof(int32_t), st));
        CU(cudaMallocAsync((void **)&cb, (size_t)(N * cap + 1) * 5 * sizeof(float), st));
        CU(cudaMallocAsync((void **)&ck, (size_t)(N * cap + 1), st));
        CU(cudaMallocAsync((void **)&dhw, (size_t)N * 2 * sizeof(int), st));
        cs = cb + 4 * (N * cap + 1);
        CU(cudaMemcpyAsync(dhw, image_hw, (size_t)N * 2 * sizeof(int), cudaMemcpyHostToDevice, st));
        {
                /* one sort's scratch fits all levels: the largest */
                int64_t n = N * amax;
                CU(cub::DeviceRadixSort::SortPairs(NULL, tmpb, key, key + n, val, val + n, (int)n, 0,
                                                   32 + 32 - __builtin_clz((unsigned)N), st));
                CU(cudaMallocAsync(&tmp, tmpb + 1, st));
        }
        for (int l = 0; l < L; l++) {
                int64_t n = N * A[l], k = A[l] < p->pre_nms_top_n ? A[l] : p->pre_nms_top_n;
                size_t b = tmpb;
                if (k == 0)
                        continue;   /* adds nothing to off */
                k_level_keys<<<det_blocks(n), DET_THREADS, 0, st>>>(obj[l], N, A[l], key, val);
                CU(cudaGetLastError());
                CU(cub::DeviceRadixSort::SortPairs(tmp, b, key, key + n, val, val + n, (int)n, 0,
                                                   32 + 32 - __builtin_clz((unsigned)N), st));
                struct rpn_arg a = { c->plus_one ? 1.0f : 0.0f, p->min_size, p->score_thresh, A[l], k, cap, off };
                k_candidates<<<det_blocks(N * k), DET_THREADS, 0, st>>>(a, obj[l], deltas[l], anchors[l], val + n,
                                                                        dhw, N, cb, cs, ck);
                CU(cudaGetLastError());
                off += k;
        }
        /* the survivors, compacted on the host in the host loop's order */
        hb = (float *)malloc((size_t)(N * cap + 1) * 5 * sizeof(float));
        hk = (uint8_t *)malloc((size_t)(N * cap + 1));
        hl = (int32_t *)malloc((size_t)(N * cap + 1) * sizeof(int32_t));
        keep = (int64_t *)malloc((size_t)(N * cap + 1) * sizeof(int64_t));
        m = (int64_t *)calloc((size_t)N, sizeof(int64_t));
        nk = (int64_t *)calloc((size_t)N, sizeof(int64_t));
        kept = (struct det_rpn_kept *)calloc((size_t)N, sizeof(*kept));
        ob = (float *)malloc((size_t)(N * post + 1) * 5 * sizeof(float));
        if (!hb || !hk || !hl || !keep || !m || !nk || !kept || !ob) {
                r = bd_err_set(err, -ENOMEM, "det rpn proposals: no host memory");
                goto out;
        }
        hs = hb + 4 * (N * cap + 1);
        os = ob + 4 * (N * post + 1);
        CU(cudaMemcpyAsync(hb, cb, (size_t)(N * cap + 1) * 5 * sizeof(float), cudaMemcpyDeviceToHost, st));
        CU(cudaMemcpyAsync(hk, ck, (size_t)(N * cap + 1), cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        for (int i = 0; i < N; i++) {
                float *ib = hb + 4 * i * cap, *is = hs + i * cap;
                int32_t *il = hl + i * cap;
                int64_t j = 0, t = 0;
                for (int l = 0; l < L; l++)
                        for (int64_t e = t + (A[l] < p->pre_nms_top_n ? A[l] : p->pre_nms_top_n); t < e; t++)
                                if (hk[i * cap + t]) {
                                        memmove(ib + 4 * j, ib + 4 * t, 4 * sizeof(float));
                                        is[j] = is[t];
                                        il[j++] = l;
                                }
                m[i] = j;
                kept[i].boxes = ib;
                kept[i].scores = is;
                kept[i].levels = il;
                kept[i].keep = keep + i * cap;
        }
        /* all images' survivors up in one copy each; [R]'s per-level NMS
         * queued image after image without waiting, the kept indices back in
         * one copy; torchvision's batched order (its coordinate trick and
         * final sort on the host) waits per image */
        CU(cudaMallocAsync((void **)&db, (size_t)(N * cap + 1) * 5 * sizeof(float), st));
        CU(cudaMallocAsync((void **)&dl, (size_t)(N * cap + 1) * sizeof(int32_t), st));
        ds = db + 4 * (N * cap + 1);
        CU(cudaMemcpyAsync(db, hb, (size_t)(N * cap) * 4 * sizeof(float), cudaMemcpyHostToDevice, st));
        CU(cudaMemcpyAsync(ds, hs, (size_t)(N * cap) * sizeof(float), cudaMemcpyHostToDevice, st));
        CU(cudaMemcpyAsync(dl, hl, (size_t)(N * cap) * sizeof(int32_t), cudaMemcpyHostToDevice, st));
        if (c->plus_one) {
                if ((r = det_cuda_nms_batch(stream, c, db, ds, dl, m, N, cap, p->nms_thresh, keep, nk, err)) < 0)
                        goto out;
                for (int i = 0; i < N; i++)
                        kept[i].nkeep = nk[i];
        } else {
                for (int i = 0; i < N; i++)
                        if ((r = det_cuda_nms(stream, c, db + 4 * i * cap, ds + i * cap, dl + i * cap, m[i],
                                              p->nms_thresh, keep + i * cap, &kept[i].nkeep, err)) < 0)
                                goto out;
        }
        det_rpn_select(p, L, N, kept, ob, os, count);
        if (N * post > 0) {
                CU(cudaMemcpyAsync(boxes, ob, (size_t)(N * post) * 4 * sizeof(float), cudaMemcpyHostToDevice, st));
                CU(cudaMemcpyAsync(scores, os, (size_t)(N * post) * sizeof(float), cudaMemcpyHostToDevice, st));
                CU(cudaStreamSynchronize(st));
        }
out:
        det_dfree(key, st);
        det_dfree(val, st);
        det_dfree(cb, st);
        det_dfree(ck, st);
        det_dfree(dhw, st);
        det_dfree(tmp, st);
        det_dfree(db, st);
        det_dfree(dl, st);
        free(hb);
        free(hk);
        free(hl);
        free(keep);
        free(m);
        free(nk);
        free(kept);
        free(ob);
        return r;
}
