/* ssd-head-launch.h: the CUDA launch of ssd-elem.h's head gather, on the
 * backend's stream (ssd-head-cuda.cu; -EOPNOTSUPP without CUDA). */
#ifndef BD_SSD_HEAD_LAUNCH_H
#define BD_SSD_HEAD_LAUNCH_H

#include "backend.h"
#include "ssd-elem.h"

#ifdef __cplusplus
extern "C" {
#endif

int ssd_head_cuda(struct bd_backend *be, const struct ssd_head_args *a);

#ifdef __cplusplus
}
#endif

#endif
