/* test-render.c: what the rendered scripts contain for each launcher. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "system.h"
#include "tap.h"

static struct bd_sysdirs dirs;

static char *render(const char *system, const char *workload, char **sets, int trials)
{
        struct bd_system s;
        struct bd_err err;
        if (system_load(&dirs, system, sets, &s, &err) < 0) {
                printf("# %s\n", err.msg);
                return NULL;
        }
        struct render_opts o = { .workload = workload, .trials = trials, .run_id = "RID", .bin_dir = "/opt/bd/bin",
                                 .version = "test" };
        struct bd_buf b = BD_BUF_INIT;
        int r = render_script(&s, &o, &b, &err);
        system_release(&s);
        if (r < 0) {
                printf("# %s\n", err.msg);
                buf_release(&b);
                return NULL;
        }
        /* join continued lines so that checks do not depend on line breaks */
        struct bd_buf flat = BD_BUF_INIT;
        for (const char *p = b.s; *p; p++) {
                if (p[0] == ' ' && p[1] == '\\' && p[2] == '\n') {
                        p += 3;
                        while (p[0] == ' ')
                                p++;
                        buf_putc(&flat, ' ');
                        p--;
                        continue;
                }
                buf_putc(&flat, *p);
        }
        buf_release(&b);
        return buf_detach(&flat);
}

static int count(const char *hay, const char *needle)
{
        int n = 0;
        for (const char *p = hay; (p = strstr(p, needle)); p++)
                n++;
        return n;
}

int main(void)
{
        const char *src = getenv("srcdir");
        static char path[1024];
        snprintf(path, sizeof(path), "%s/systems", src ? src : ".");
        char *d[] = { path };
        dirs.dirs = d;
        dirs.n = 1;
        setenv("HOME", "/home/u", 1);

        char *s = render("4xC4140", "ssd", NULL, 0);
        ok(s != NULL, "4xC4140 ssd renders");
        if (s) {
                like(s, "#SBATCH --nodes=4\n", "4 nodes");
                like(s, "#SBATCH --ntasks-per-node=4\n", "4 tasks per node");
                like(s, "#SBATCH --ntasks=16\n", "16 tasks");
                like(s, "#SBATCH --gres=gpu:4\n", "4 GPUs per node");
                like(s, "#SBATCH --exclusive\n", "exclusive");
                like(s, "#SBATCH --time=04:00:00\n", "time limit");
                like(s, "#SBATCH --job-name=benchd-ssd-4xC4140\n", "job name");
                like(s, "#SBATCH --output=/shared/benchd/logs/RID_slurm-%j.out\n", "job output file");
                like(s, "NTRIALS=5\n", "five trials by default");
                like(s, "log=\"$LOGDIR/${RUN_ID}_${trial}.log\"", "per-trial log name");
                is_int(count(s, "echo \"RESULT,SINGLE_STAGE_DETECTOR"), 1, "exactly one RESULT line, printed by the script");
                like(s, "srun --nodes=\"$SLURM_JOB_NUM_NODES\"", "page cache dropped on every node through srun");
                like(s, "mpirun -np \"$SLURM_NTASKS\" --bind-to none", "one mpirun of all ranks");
                like(s, "\"$BENCHD_BIN\"/benchd-bind -r 0-9:0:mlx5_0 -r 10-19:0:mlx5_0", "binding wrapper with the plan");
                like(s, "-r 30-39:1:mlx5_0 --", "last rank's plan");
                like(s, "singularity exec --nv -B /shared/data/coco2017:/data", "singularity with GPUs and data bind");
                like(s, "/opt/benchd/bin/benchd-ssd --data /data", "trainer inside the container");
                like(s, "--batch-size 56", "4xC4140 batch size");
                like(s, "--lr 0.0032", "4xC4140 lr");
                like(s, "--warmup-epochs 5 ", "warmup");
                like(s, "--weight-decay 0.00013", "weight decay");
                like(s, "--loader-workers 3", "data loader workers (dali-workers=3)");
                like(s, "--decay-epochs 44,55", "decay epochs list");
                like(s, "--pretrained /pretrained/resnet34.bdw", "pretrained weights inside the container");
                like(s, "--seed \"$seed\"", "per-trial seed");
                ok(strstr(s, "--published") == NULL, "published numbers are not trainer arguments");
                free(s);
        }

        s = render("4xC4140", "ssd", (char *[]){ "ssd.batch_size=64", "slurm.partition=gpu", "env.FOO=a b",
                                                "slurm.launch=srun", "slurm.mpi=pmix", NULL }, 2);
        ok(s != NULL, "4xC4140 with overrides renders");
        if (s) {
                like(s, "--batch-size 64", "--set batch size");
                like(s, "#SBATCH --partition=gpu\n", "--set partition");
                like(s, "export FOO=\"a b\"\n", "--set environment exported");
                like(s, "NTRIALS=2\n", "--runs");
                like(s, "srun --ntasks=\"$SLURM_NTASKS\" --ntasks-per-node=4 --cpu-bind=none --export=ALL --mpi=pmix",
                     "srun launch");
                free(s);
        }

        s = render("p3dn", "maskrcnn", NULL, 0);
        ok(s != NULL, "p3dn maskrcnn renders");
        if (s) {
                ok(strstr(s, "#SBATCH") == NULL, "no #SBATCH for mpirun systems");
                like(s, "mpirun -np 8 -H localhost:8 --bind-to none --map-by slot", "mpirun on one node");
                like(s, "--mca pml ob1 --mca btl '^openib' --mca btl_tcp_if_include ens5", "MCA settings");
                like(s, "-x LD_LIBRARY_PATH -x FI_PROVIDER", "-x for the configured variables");
                like(s, "-x NCCL_SOCKET_IFNAME", "NCCL told the interface");
                like(s, "export NCCL_SOCKET_IFNAME=ens5\n", "interface exported");
                like(s, "export LD_LIBRARY_PATH=\"/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/install/lib:${LD_LIBRARY_PATH:-}\"",
                     "library path keeps the caller's");
                like(s, "export NCCL_TREE_THRESHOLD=\"4294967296\"", "numbers exported as text");
                ok(strstr(s, "-x PATH") == NULL && strstr(s, "-x TERM") == NULL, "not the shell's whole environment");
                like(s, "--tag-output", "tagged output");
                like(s, "-r 30-35,78-83:1:rdmap16s27/efa ", "p3dn rank 5 binding with its EFA device (libfabric's)");
                like(s, "--ims-per-batch 16 --test-ims-per-batch 8 --lr 0.02", "Mask R-CNN hyperparameters");
                like(s, "--clip-gradient 1.5", "gradient clipping");
                like(s, "--decay-epochs 8,10", "decay epochs");
                ok(strstr(s, "--max-iter") == NULL, "max_iter unset by p3dn");
                like(s, "echo \"RESULT,OBJECT_DETECTION", "Mask R-CNN RESULT line");
                free(s);
        }

        s = render("24xp3dn", "maskrcnn", NULL, 0);
        ok(s != NULL, "24xp3dn renders");
        if (s) {
                like(s, "mpirun -np 192 --hostfile /home/u/hosts_24", "192 ranks from the hostfile");
                like(s, "--map-by ppr:1:node -np 24 bash -c", "page cache dropped once per node");
                free(s);
        }

        s = render("DSS8440", "ssd", NULL, 0);
        ok(s != NULL, "DSS8440 renders");
        if (s) {
                like(s, "docker run -d --rm --name \"$CONTAINER\" --gpus=all --net=host --ipc=host", "one container");
                like(s, "--ulimit memlock=-1 --ulimit stack=67108864", "docker limits");
                like(s, "docker exec \"$CONTAINER\" mpirun -np 8 -H localhost:8", "docker exec per trial");
                like(s, "/opt/benchd/bin/benchd-bind -r 0-4,40-44:0:mlx5_0", "binding wrapper inside the container");
                like(s, "trap 'docker rm -f \"$CONTAINER\"", "container removed on exit");
                free(s);
        }

        s = render("local", "allreduce", NULL, 0);
        ok(s != NULL, "local allreduce renders");
        if (s) {
                like(s, "mpirun -np 2 -H localhost:2 --bind-to none", "mpirun on localhost");
                like(s, "\"$BENCHD_BIN\"/benchd-allreduce --min-bytes 8 --max-bytes 67108864", "allreduce sizes");
                like(s, "BENCHD_BIN='/opt/bd/bin'\n", "programs next to benchctl");
                like(s, "LOGDIR='/home/u/.local/share/benchd/logs'\n", "~ expanded");
                ok(strstr(s, "benchd-bind") == NULL, "binding policy none: no wrapper");
                ok(strstr(s, "clear_caches") == NULL, "clear_caches false: no cache drop");
                ok(strstr(s, "--data") == NULL, "allreduce takes no data");
                free(s);
        }

        s = render("4xlocal", "ssd", NULL, 0);
        ok(s != NULL, "4xlocal ssd renders");
        if (s) {
                like(s, "#SBATCH --nodes=4\n", "4 emulated nodes");
                like(s, "#SBATCH --ntasks=16\n", "16 ranks");
                ok(strstr(s, "--gres") == NULL, "no GPUs requested");
                like(s, "--backend cpu", "CPU trainer");
                free(s);
        }

        s = render("local", "resnet", NULL, 0);
        ok(s == NULL, "unknown workload is an error");
        return done_testing();
}
