# tests/: everything 'make check' runs, through automake's TAP driver
# (tests/README.md lists what each test covers and the ranges of numbers).
TEST_EXTENSIONS = .t
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
T_LOG_DRIVER = $(LOG_DRIVER)
T_LOG_COMPILER = bash
AM_TESTS_ENVIRONMENT = \
	srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; \
	SHELLCHECK='$(SHELLCHECK)'; \
	export srcdir top_builddir SHELLCHECK;

# ---- lib/ and client/ ----
check_PROGRAMS += tests/unit/test-config tests/unit/test-bind tests/unit/test-render tests/unit/test-mlperf \
	tests/unit/test-fs tests/unit/test-stats tests/unit/test-suite tests/unit/test-tenants tests/unit/test-health-perf
check_PROGRAMS += tests/unit/test-svg
check_PROGRAMS += tests/unit/test-oci tests/unit/test-digest
tests_unit_test_digest_SOURCES = tests/unit/tap.h tests/unit/test-digest.c
tests_unit_test_digest_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_digest_LDADD = $(BD_CLIENT_LIBS) -ldl
check_PROGRAMS += tests/unit/test-ptweights
tests_unit_test_ptweights_SOURCES = tests/unit/tap.h tests/unit/test-ptweights.c
tests_unit_test_ptweights_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_ptweights_LDADD = $(BD_CLIENT_LIBS)
check_PROGRAMS += tests/unit/test-cudalibs
tests_unit_test_cudalibs_SOURCES = tests/unit/tap.h tests/unit/test-cudalibs.c
tests_unit_test_cudalibs_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_cudalibs_LDADD = $(BD_CLIENT_LIBS)
tests_unit_test_oci_SOURCES = tests/unit/tap.h tests/unit/test-oci.c
tests_unit_test_oci_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_oci_LDADD = $(BD_CLIENT_LIBS)
tests_unit_test_svg_SOURCES = tests/unit/tap.h tests/unit/test-svg.c
tests_unit_test_svg_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_svg_LDADD = $(BD_CLIENT_LIBS)
# unit/svg-demo: one page with every plot kind, for t0930 (and for eyes)
noinst_PROGRAMS += tests/unit/svg-demo
tests_unit_svg_demo_SOURCES = tests/unit/svg-demo.c
tests_unit_svg_demo_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_svg_demo_LDADD = $(BD_CLIENT_LIBS)
tests_unit_test_suite_SOURCES = tests/unit/tap.h tests/unit/test-suite.c client/report/suite.c
tests_unit_test_suite_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_suite_LDADD = $(BD_LIBS) -lm
tests_unit_test_health_perf_SOURCES = tests/unit/tap.h tests/unit/test-health-perf.c
tests_unit_test_health_perf_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_health_perf_LDADD = $(BD_CLIENT_LIBS)
tests_unit_test_tenants_SOURCES = tests/unit/tap.h tests/unit/test-tenants.c
tests_unit_test_tenants_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_tenants_LDADD = $(BD_CLIENT_LIBS)
tests_unit_test_stats_SOURCES = tests/unit/tap.h tests/unit/test-stats.c
tests_unit_test_stats_LDADD = $(BD_LIBS) -lm
tests_unit_test_config_SOURCES = tests/unit/tap.h tests/unit/test-config.c
tests_unit_test_config_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_config_LDADD = $(BD_CLIENT_LIBS)
tests_unit_test_fs_SOURCES = tests/unit/tap.h tests/unit/test-fs.c
tests_unit_test_fs_LDADD = $(BD_LIBS)
tests_unit_test_bind_SOURCES = tests/unit/tap.h tests/unit/test-bind.c
tests_unit_test_bind_LDADD = $(BD_LIBS)
tests_unit_test_mlperf_SOURCES = tests/unit/tap.h tests/unit/test-mlperf.c client/report/report.c
check_PROGRAMS += tests/unit/test-reader
tests_unit_test_reader_SOURCES = tests/unit/tap.h tests/unit/test-reader.c
tests_unit_test_reader_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_reader_LDADD = $(BD_CLIENT_LIBS)
tests_unit_test_mlperf_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_mlperf_LDADD = $(BD_CLIENT_LIBS)
tests_unit_test_render_SOURCES = tests/unit/tap.h tests/unit/test-render.c client/run/render.c
tests_unit_test_render_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_unit_test_render_LDADD = $(BD_LIBS)

# ---- lib/stage/ ----
if HAVE_XXHASH
check_PROGRAMS += tests/unit/test-manifest tests/unit/test-stage tests/unit/test-filecopy
tests_unit_test_manifest_SOURCES = tests/unit/tap.h tests/unit/test-manifest.c
tests_unit_test_manifest_LDADD = $(BD_LIBS)
tests_unit_test_stage_SOURCES = tests/unit/tap.h tests/unit/randfile.h tests/unit/test-stage.c
tests_unit_test_stage_LDADD = $(BD_LIBS)
tests_unit_test_filecopy_SOURCES = tests/unit/tap.h tests/unit/randfile.h tests/unit/test-filecopy.c
tests_unit_test_filecopy_LDADD = $(BD_LIBS)
endif

# ---- data/ ----
if BUILD_DATA
check_PROGRAMS += tests/unit/test-coco-index tests/unit/test-coco-eval tests/unit/test-augment tests/unit/test-loader \
	tests/unit/test-mask tests/unit/test-det-loader
tests_unit_test_coco_index_SOURCES = tests/unit/tap.h tests/unit/test-coco-index.c
tests_unit_test_coco_index_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_unit_test_coco_index_LDADD = $(DATA_LIBS)
tests_unit_test_coco_eval_SOURCES = tests/unit/tap.h tests/unit/test-coco-eval.c
tests_unit_test_coco_eval_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_unit_test_coco_eval_LDADD = $(DATA_LIBS)
tests_unit_test_augment_SOURCES = tests/unit/tap.h tests/unit/test-augment.c
tests_unit_test_augment_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_unit_test_augment_LDADD = $(DATA_LIBS)
tests_unit_test_loader_SOURCES = tests/unit/tap.h tests/unit/test-loader.c
tests_unit_test_loader_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_unit_test_loader_LDADD = $(DATA_LIBS)
tests_unit_test_mask_SOURCES = tests/unit/tap.h tests/unit/test-mask.c
tests_unit_test_mask_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_unit_test_mask_LDADD = $(DATA_LIBS)
tests_unit_test_det_loader_SOURCES = tests/unit/tap.h tests/unit/det-golden.h tests/unit/test-det-loader.c
tests_unit_test_det_loader_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_unit_test_det_loader_CFLAGS = $(AM_CFLAGS) -ffp-contract=off
tests_unit_test_det_loader_LDADD = $(DATA_LIBS)
# trainer/det/masks.h and postprocess.h: libbdtrain.a, then libbddata.a (data/mask.h)
check_PROGRAMS += tests/unit/test-det-masks
tests_unit_test_det_masks_SOURCES = tests/unit/tap.h tests/unit/test-det-masks.c tests/unit/det-mask-golden.h
tests_unit_test_det_masks_CPPFLAGS = $(BD_TRAIN_CPPFLAGS) $(DATA_CPPFLAGS)
tests_unit_test_det_masks_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_det_masks_LDADD = libbdtrain.a libbddata.a $(BD_TRAIN_LIBS) $(DATA_LIBS)
if HAVE_CUDA
noinst_PROGRAMS += tests/gpu/test-det-masks-gpu
endif
tests_gpu_test_det_masks_gpu_SOURCES = tests/unit/tap.h tests/gpu/test-det-masks-gpu.c
tests_gpu_test_det_masks_gpu_CPPFLAGS = $(BD_TRAIN_CPPFLAGS) $(DATA_CPPFLAGS)
tests_gpu_test_det_masks_gpu_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_gpu_test_det_masks_gpu_LDADD = libbdtrain.a libbddata.a $(BD_TRAIN_LIBS) $(DATA_LIBS)
if HAVE_MPI
check_PROGRAMS += tests/unit/test-coco-eval-mpi
tests_unit_test_coco_eval_mpi_SOURCES = tests/unit/tap.h tests/unit/test-coco-eval-mpi.c trainer/common/mpi-sanitizer.c
tests_unit_test_coco_eval_mpi_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS) $(MPI_CFLAGS)
tests_unit_test_coco_eval_mpi_LDADD = libbddata-mpi.a $(DATA_LIBS) $(MPI_LIBS)
endif
endif

# ---- trainer core (the CPU backend) ----
TRAIN_TEST_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
check_PROGRAMS += tests/unit/test-trainer-grad tests/unit/test-trainer-optim tests/unit/test-trainer-resnet \
	tests/unit/test-trainer-golden tests/unit/test-trainer-ops tests/unit/test-det-ops \
	tests/unit/test-det-losses
check_PROGRAMS += tests/unit/test-det-roi
check_PROGRAMS += tests/unit/test-det-match tests/unit/test-det-proposals
check_PROGRAMS += tests/unit/test-algo-cache
tests_unit_test_algo_cache_SOURCES = tests/unit/tap.h tests/unit/test-algo-cache.c
tests_unit_test_algo_cache_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_algo_cache_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_algo_cache_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_trainer_grad_SOURCES = tests/unit/tap.h tests/unit/test-trainer-grad.c
tests_unit_test_trainer_grad_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_trainer_grad_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_trainer_grad_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_trainer_optim_SOURCES = tests/unit/tap.h tests/unit/test-trainer-optim.c
tests_unit_test_trainer_optim_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_trainer_optim_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_trainer_optim_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_trainer_resnet_SOURCES = tests/unit/tap.h tests/unit/test-trainer-resnet.c
tests_unit_test_trainer_resnet_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_trainer_resnet_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_trainer_resnet_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_trainer_golden_SOURCES = tests/unit/tap.h tests/unit/test-trainer-golden.c
tests_unit_test_trainer_golden_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_trainer_golden_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_trainer_golden_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_trainer_ops_SOURCES = tests/unit/tap.h tests/unit/test-trainer-ops.c
tests_unit_test_trainer_ops_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_trainer_ops_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_trainer_ops_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_det_ops_SOURCES = tests/unit/tap.h tests/unit/test-det-ops.c tests/unit/det-ops-golden.h
tests_unit_test_det_ops_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_det_ops_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_det_ops_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_det_losses_SOURCES = tests/unit/tap.h tests/unit/test-det-losses.c tests/unit/det-loss-golden.h
tests_unit_test_det_losses_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_det_losses_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_det_losses_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_det_roi_SOURCES = tests/unit/tap.h tests/unit/test-det-roi.c tests/unit/det-roi-golden.h
tests_unit_test_det_roi_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_det_roi_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_det_roi_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_det_match_SOURCES = tests/unit/tap.h tests/unit/test-det-match.c tests/unit/det-rpn-golden.h \
	tests/unit/det-rpn-candidates.h
tests_unit_test_det_match_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_det_match_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_det_match_LDADD = $(BD_TRAIN_LIBS)
tests_unit_test_det_proposals_SOURCES = tests/unit/tap.h tests/unit/test-det-proposals.c tests/unit/det-rpn-golden.h
tests_unit_test_det_proposals_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_det_proposals_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_det_proposals_LDADD = $(BD_TRAIN_LIBS)
# synchronised batch norm on N ranks against one rank's batch norm, run under mpirun by t0515
if HAVE_MPI
check_PROGRAMS += tests/unit/test-trainer-syncbn
endif
tests_unit_test_trainer_syncbn_SOURCES = tests/unit/tap.h tests/unit/test-trainer-syncbn.c trainer/common/mpi-sanitizer.c
tests_unit_test_trainer_syncbn_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_unit_test_trainer_syncbn_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_trainer_syncbn_LDADD = $(BD_TRAIN_LIBS)
# helper/trainer-tool: a whole data-parallel training loop on the core, for the shell tests
noinst_PROGRAMS += tests/helper/trainer-tool
tests_helper_trainer_tool_SOURCES = tests/helper/trainer-tool.c trainer/common/mpi-sanitizer.c
tests_helper_trainer_tool_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_helper_trainer_tool_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_helper_trainer_tool_LDADD = $(BD_TRAIN_LIBS)
# gpu/: what make check-gpu runs
if HAVE_CUDA
noinst_PROGRAMS += tests/gpu/test-trainer-gpu tests/gpu/test-det-roi-gpu tests/gpu/test-det-boxes-gpu
endif
tests_gpu_test_det_roi_gpu_SOURCES = tests/unit/tap.h tests/gpu/test-det-roi-gpu.c
tests_gpu_test_det_roi_gpu_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_gpu_test_det_roi_gpu_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_gpu_test_det_roi_gpu_LDADD = $(BD_TRAIN_LIBS)
tests_gpu_test_det_boxes_gpu_SOURCES = tests/unit/tap.h tests/unit/det-rpn-candidates.h tests/gpu/test-det-boxes-gpu.c
tests_gpu_test_det_boxes_gpu_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_gpu_test_det_boxes_gpu_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_gpu_test_det_boxes_gpu_LDADD = $(BD_TRAIN_LIBS)
tests_gpu_test_trainer_gpu_SOURCES = tests/unit/tap.h tests/gpu/test-trainer-gpu.c
tests_gpu_test_trainer_gpu_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_gpu_test_trainer_gpu_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_gpu_test_trainer_gpu_LDADD = $(BD_TRAIN_LIBS)

# ---- trainer/ssd/ ----
check_PROGRAMS += tests/unit/test-ssd
tests_unit_test_ssd_SOURCES = tests/unit/tap.h tests/unit/test-ssd.c
tests_unit_test_ssd_CPPFLAGS = $(SSD_CPPFLAGS)
tests_unit_test_ssd_CFLAGS = $(SSD_CFLAGS)
tests_unit_test_ssd_LDADD = $(SSD_LIBS)
# the comparison with PyTorch (tests/ssd-golden.py), driven by t0650-ssd-golden.t
noinst_PROGRAMS += tests/helper/ssd-golden
tests_helper_ssd_golden_SOURCES = tests/helper/ssd-golden.c tests/unit/tap.h
tests_helper_ssd_golden_CPPFLAGS = $(SSD_CPPFLAGS)
tests_helper_ssd_golden_CFLAGS = $(SSD_CFLAGS)
tests_helper_ssd_golden_LDADD = $(SSD_LIBS)
# make check-gpu: the network and loss on CUDA against the CPU (skips without a GPU)
noinst_PROGRAMS += tests/helper/ssd-cuda-check
tests_helper_ssd_cuda_check_SOURCES = tests/helper/ssd-cuda-check.c tests/unit/tap.h
tests_helper_ssd_cuda_check_CPPFLAGS = $(SSD_CPPFLAGS)
tests_helper_ssd_cuda_check_CFLAGS = $(SSD_CFLAGS)
tests_helper_ssd_cuda_check_LDADD = $(SSD_LIBS)

# ---- trainer/maskrcnn/ ----
if BUILD_DATA
# helper/jpeg-tool: the loaders' JPEG decoder to a PPM, held against Pillow by t0610
noinst_PROGRAMS += tests/helper/jpeg-tool
tests_helper_jpeg_tool_SOURCES = tests/helper/jpeg-tool.c
tests_helper_jpeg_tool_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_helper_jpeg_tool_LDADD = $(DATA_LIBS)
# a training step against torchvision's MaskRCNN (tests/maskrcnn-golden.py), driven by t0800-maskrcnn-golden.t
noinst_PROGRAMS += tests/helper/maskrcnn-golden
tests_helper_maskrcnn_golden_SOURCES = tests/helper/maskrcnn-golden.c tests/helper/golden-bin.h tests/unit/tap.h
tests_helper_maskrcnn_golden_CPPFLAGS = $(MRCNN_CPPFLAGS)
tests_helper_maskrcnn_golden_CFLAGS = $(MRCNN_CFLAGS)
tests_helper_maskrcnn_golden_LDADD = $(MRCNN_LIBS)
endif

TESTS += $(check_PROGRAMS)
SCRIPT_TESTS = \
	tests/t0010-cli.t \
	tests/t0020-config-errors.t \
	tests/t0025-workload-files.t tests/t0030-render.t tests/t0035-render-golden.t tests/t0045-render-documents.t tests/t0046-render-documents-more.t \
	tests/t0040-bind.t \
	tests/t0060-documented-commands.t tests/t0061-exit-status.t \
	tests/t0100-cluster.t \
	tests/t0110-sbatch-test-only.t \
	tests/t0200-run-local.t tests/t0205-run-workload-file.t tests/t0206-run-workload-readers.t tests/t0207-run-progress.t \
	tests/t0208-run-fixed.t tests/t0209-run-trace.t \
	tests/t0210-run-slurm.t tests/t0211-run-tenants.t \
	tests/t0300-allreduce.t \
	tests/t0400-inventory.t \
	tests/t0410-daemon.t \
	tests/t0420-prometheus.t \
	tests/t0430-daemon-load.t \
	tests/t0435-daemon-soak.t \
	tests/t0440-nodes.t tests/t0445-health.t tests/t0446-health-drain.t tests/t0447-health-allreduce.t \
	tests/t0510-trainer-dp.t \
	tests/t0515-trainer-syncbn.t \
	tests/t0520-trainer-checkpoint.t \
	tests/t0530-trainer-weights.t \
	tests/t0535-weights-convert.t \
	tests/t0537-weights-fetch.t \
	tests/t0610-dataset.t \
	tests/t0620-coco-eval.t \
	tests/t0630-coco-eval-mpi.t \
	tests/t0650-ssd-golden.t \
	tests/t0660-ssd-train.t \
	tests/t0665-plan-ops.t \
	tests/t0670-ssd-learn.t \
	tests/t0680-ssd-slurm.t \
	tests/t0700-stage.t \
	tests/t0710-stage-faults.t \
	tests/t0720-stage-full.t \
	tests/t0730-stage-daemon.t \
	tests/t0736-stage-kill.t \
	tests/t0740-dataset-fetch.t \
	tests/t0760-maskrcnn-train.t \
	tests/t0780-maskrcnn-slurm.t tests/t0785-tv-maskrcnn-slurm.t \
	tests/t0790-tv-maskrcnn.t tests/t0791-tv-maskrcnn-groups.t \
	tests/t0800-maskrcnn-golden.t \
	tests/t0900-throughput.t \
	tests/t0910-sweep.t \
	tests/t0915-sweep-slurm.t \
	tests/t0920-suite.t \
	tests/t0930-html-chromium.t
TESTS += $(SCRIPT_TESTS)
# Long tests, not in make check: make check-learn (CI runs it when time is left)
LEARN_TESTS = \
	tests/t0770-maskrcnn-learn.t tests/t0771-maskrcnn-learn-slurm.t tests/t0775-fasterrcnn-learn.t \
	tests/t0795-tv-maskrcnn-learn.t tests/t0796-tv-maskrcnn-learn-slurm.t
# Container images and packages, not in make check (each builds packages and
# an image; CI runs it after make check): make check-image
IMAGE_TESTS = \
	tests/t0950-image.t tests/t0955-deb-systemd.t
# The CUDA image, where this build has the CUDA backend (make deb-cuda for one
# GPU architecture, then the image; about 5 minutes): make check-image-cuda
IMAGE_CUDA_TESTS = tests/t0951-image-cuda.t
# The Slurm test cluster at 24 nodes with a benchd each (system 24xlocal), not
# in make check (24 slurmd and 24 benchd on one machine; CI runs it after
# make check-image): make check-scale
SCALE_TESTS = \
	tests/t0990-scale.t
dist_check_SCRIPTS = tests/lib.sh tests/stage-lib.sh tests/html-check.py tests/range-server.py tests/image-lib.sh tests/proc-mem.py \
	$(SCRIPT_TESTS) $(LEARN_TESTS) $(IMAGE_TESTS) $(IMAGE_CUDA_TESTS) $(SCALE_TESTS)
# make check-learn: Mask R-CNN learns the shapes dataset through benchctl submit
# --system local, ours (t0770; t0771 on 4xlocal, the local Slurm cluster: 16
# ranks with synchronised batch norm) and torchvision's, benchd-tv-maskrcnn
# (t0795; t0796 on two nodes of 4xlocal)
.PHONY: check-learn
check-learn: all
	$(AM_V_at)$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(LEARN_TESTS)' check_PROGRAMS= XFAIL_TESTS=
# make check-sanitizers: make check less the tests that add nothing under
# the sanitizers but minutes (CI's ASan/UBSan stage, in an
# --enable-sanitizers build): 16 ranks of Mask R-CNN through Slurm (t0780;
# the trainer's code runs sanitized in t0760 and t0790, the Slurm path in
# t0210 and t0680), the sweeps and suites through Slurm (t0915, t0920; their
# code runs sanitized in t0910, t0211 and t0900), and health's allreduce
# checks on the Slurm cluster (t0447: 16 sanitized ranks timing allreduces on
# two cores, 2 minutes plain and a quarter of an hour sanitized; health's
# code runs sanitized in t0445, t0446 and test-health-perf, the allreduce's
# in t0300), and torchvision's Mask R-CNN (t0785, t0790, t0791: 6.5
# minutes there, mostly PyTorch training, which no sanitizer sees; the C
# they reach runs sanitized elsewhere: benchctl's submit and scoring in
# t0200 and t0206, its sweeps in t0910, the torch.distributed launch's
# render in t0046, benchd-maskrcnn's command line in t0760).  They run
# unsanitized in make check.
SANITIZER_SKIP = tests/t0780-maskrcnn-slurm.t tests/t0915-sweep-slurm.t tests/t0920-suite.t \
	tests/t0447-health-allreduce.t tests/t0785-tv-maskrcnn-slurm.t tests/t0790-tv-maskrcnn.t \
	tests/t0791-tv-maskrcnn-groups.t
.PHONY: check-sanitizers
check-sanitizers: all
	$(AM_V_at)list=; for t in $(TESTS); do \
	  case " $(SANITIZER_SKIP) " in *" $$t "*) ;; *) list="$$list $$t" ;; esac; \
	done; $(MAKE) $(AM_MAKEFLAGS) check TESTS="$$list"
# make check-image: the packages (make deb) and the image (benchctl image
# build, its base cached by the package list's checksum under
# $BENCHD_IMAGE_CACHE, default ~/.cache/benchd/images), run for real
.PHONY: check-image
check-image: all
	$(AM_V_at)$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(IMAGE_TESTS)' check_PROGRAMS= XFAIL_TESTS=
# make check-image-cuda: make deb-cuda and benchctl image build --cuda, run
# for real without a GPU (every library resolves in the image; the CUDA
# backend says the driver is missing); CI runs it when time is left
.PHONY: check-image-cuda
check-image-cuda: all
	$(AM_V_at)$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(IMAGE_CUDA_TESTS)' check_PROGRAMS= XFAIL_TESTS=
# make check-scale: submit, nodes and stage on 24 emulated nodes, a node
# failure and a benchd stopped among them, 24xp3dn under sbatch --test-only;
# needs root (about 2 minutes and 1.5 GiB on two cores)
.PHONY: check-scale
check-scale: all
	$(AM_V_at)$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(SCALE_TESTS)' check_PROGRAMS= XFAIL_TESTS=
EXTRA_DIST += tests/cluster tests/gpu tests/golden tests/lsan.supp tests/README.md tests/fixtures \
	tests/check-inventory.py tests/notify-listen.py tests/json-server.py tests/coco-oracle.py \
	tests/check-tree.py tests/ssd-golden.py tests/rle-oracle.py tests/det-golden.py tests/det-ops-golden.py \
	tests/det-loss-golden.py tests/det-mask-golden.py tests/det-roi-golden.py \
	tests/det-rpn-golden.py tests/det_golden_common.py tests/maskrcnn-golden.py tests/soak.py tests/doc-commands.py

# The recorded sysfs trees are full of symlinks (as /sys is): the tarball keeps
# them as links instead of following them (automake's tar command has 'h').
am__tar = $${TAR-tar} --format=posix -cf - "$$tardir"

# make check-gpu: the CUDA backend against the CPU one and NCCL data parallel
# where a GPU is visible, then SSD's network and loss; elsewhere it says it
# skipped and why
.PHONY: check-gpu check-gpu-ssd check-gpu-det-boxes
check-gpu: all
	@srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' $(SHELL) $(srcdir)/tests/gpu/check-gpu.sh
check-gpu: check-gpu-ssd
check-gpu: check-gpu-det-boxes
check-gpu-det-boxes: tests/gpu/test-det-boxes-gpu$(EXEEXT)
	$(AM_V_at)tests/gpu/test-det-boxes-gpu$(EXEEXT)
check-gpu-ssd: tests/helper/ssd-cuda-check$(EXEEXT)
	$(AM_V_at)tests/helper/ssd-cuda-check$(EXEEXT)
# detection postprocess, paste and mask targets on CUDA against the CPU
.PHONY: check-gpu-det-masks
check-gpu: check-gpu-det-masks
check-gpu-det-masks: tests/gpu/test-det-masks-gpu$(EXEEXT)
	$(AM_V_at)tests/gpu/test-det-masks-gpu$(EXEEXT)
# RoIAlign, multi-scale RoIAlign and mask targets: CUDA against the CPU
.PHONY: check-gpu-det-roi
check-gpu: check-gpu-det-roi
check-gpu-det-roi: tests/gpu/test-det-roi-gpu$(EXEEXT)
	$(AM_V_at)tests/gpu/test-det-roi-gpu$(EXEEXT)

# the Mask R-CNN network on its own (trainer/maskrcnn/mrcnn-net.h)
if BUILD_DATA
check_PROGRAMS += tests/unit/test-mrcnn-net
endif
tests_unit_test_mrcnn_net_SOURCES = tests/unit/tap.h tests/unit/test-mrcnn-net.c tests/unit/mrcnn-test-batch.h
tests_unit_test_mrcnn_net_CPPFLAGS = $(MRCNN_CPPFLAGS)
tests_unit_test_mrcnn_net_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_unit_test_mrcnn_net_LDADD = $(MRCNN_LIBS)
# make check-gpu: Mask R-CNN training steps on CUDA against the CPU
if HAVE_CUDA
if BUILD_DATA
noinst_PROGRAMS += tests/gpu/test-mrcnn-gpu
endif
endif
tests_gpu_test_mrcnn_gpu_SOURCES = tests/unit/tap.h tests/unit/mrcnn-test-batch.h tests/gpu/test-mrcnn-gpu.c
tests_gpu_test_mrcnn_gpu_CPPFLAGS = $(MRCNN_CPPFLAGS)
tests_gpu_test_mrcnn_gpu_CFLAGS = $(TRAIN_TEST_CFLAGS)
tests_gpu_test_mrcnn_gpu_LDADD = $(MRCNN_LIBS)
.PHONY: check-gpu-maskrcnn
check-gpu: check-gpu-maskrcnn
check-gpu-maskrcnn: tests/gpu/test-mrcnn-gpu$(EXEEXT)
	$(AM_V_at)tests/gpu/test-mrcnn-gpu$(EXEEXT)

# ---- trainer/maskrcnn/: benchd-maskrcnn's command line ----
if BUILD_DATA
check_PROGRAMS += tests/unit/test-mrcnn-opts
tests_unit_test_mrcnn_opts_SOURCES = tests/unit/tap.h tests/unit/test-mrcnn-opts.c \
	trainer/maskrcnn/mrcnn-opts.h trainer/maskrcnn/mrcnn-opts.c trainer/common/topts.h trainer/common/topts.c
tests_unit_test_mrcnn_opts_CPPFLAGS = $(MRCNN_CPPFLAGS)
tests_unit_test_mrcnn_opts_LDADD = $(BD_LIBS)
endif

# helper/libnvidia-ml.so.1: NVML answering from a recorded file
# ($NVML_RECORDED), loaded by benchd --nvml-library for the recorded trees
noinst_PROGRAMS += tests/helper/libnvidia-ml.so.1
tests_helper_libnvidia_ml_so_1_SOURCES = tests/helper/nvml-recorded.c
tests_helper_libnvidia_ml_so_1_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
tests_helper_libnvidia_ml_so_1_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden
tests_helper_libnvidia_ml_so_1_LDFLAGS = -shared
tests_helper_libnvidia_ml_so_1_LDADD = $(CJSON_LIBS)

# helper/nvml-record: this machine's NVML answers, through daemon/nvml.c, as
# the file helper/libnvidia-ml.so.1 answers from (run where a GPU is lent)
noinst_PROGRAMS += tests/helper/nvml-record
tests_helper_nvml_record_SOURCES = tests/helper/nvml-record.c
tests_helper_nvml_record_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
tests_helper_nvml_record_LDADD = $(BD_NODE_LIBS) $(BD_LIBS)
