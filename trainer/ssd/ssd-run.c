/* ssd-run.c: what training (ssd-train.c) and evaluation (ssd-eval.c) share
 * of a benchd-ssd process: the forward of a batch in host memory, the
 * release of its tensors. */
#include "config.h"

#include "ssd-run.h"

int ssd_run_forward(struct ssd_run *run, float *images, int n)
{
        struct bd_backend *be = run->tr.be;
        const int64_t S = run->o.image_size;
        int64_t dims[4] = { n, 3, S, S };
        int r;
        run->xhost = bd_tensor_view(images, BD_CPU, BD_F32, BD_NCHW, 4, dims);
        const struct bd_tensor *x = &run->xhost;
        if (be->dev != BD_CPU) {
                if ((r = bd_tensor_resize(be, &run->xdev, BD_F32, BD_NCHW, 4, dims)) < 0 ||
                    (r = bd_op_copy(be, &run->xhost, &run->xdev)) < 0)
                        return r;
                x = &run->xdev;
                if (run->o.common.amp) {
                        if ((r = bd_op_cast_input(be, &run->xdev, BD_F16, &run->xcast, &run->xhalf)) < 0)
                                return r;
                        x = &run->xhalf;
                }
        }
        if ((r = ssd_net_fwd(&run->tr.m, &run->net, x)) < 0)
                return r;
        run->ploc = &run->net.ploc;
        run->plabel = &run->net.plabel;
        if (run->net.ploc.dtype != BD_F32) {
                if ((r = bd_op_cast(be, &run->net.ploc, BD_F32, 1.0, &run->loc32)) < 0 ||
                    (r = bd_op_cast(be, &run->net.plabel, BD_F32, 1.0, &run->conf32)) < 0)
                        return r;
                run->ploc = &run->loc32;
                run->plabel = &run->conf32;
        }
        return 0;
}

void ssd_run_release(struct ssd_run *run)
{
        bd_tensor_release(&run->xdev);
        bd_tensor_release(&run->xhalf);
        bd_tensor_release(&run->xcast);
        bd_tensor_release(&run->loc32);
        bd_tensor_release(&run->conf32);
        ssd_net_release(&run->net);
}
