# trainer/: the trainer core (libbdtrain.a: tensors, backends, layers,
# optimiser, data parallel, checkpoints, ResNet backbones, MLPerf logging)
# and benchd-allreduce.  Each workload's folder has its own local.mk.

# ---- benchd-allreduce: the pre-flight allreduce check (MPI, or NCCL) ----
if BUILD_ALLREDUCE
bin_PROGRAMS += benchd-allreduce
benchd_allreduce_SOURCES = \
	trainer/common/mllog.h trainer/common/mllog.c \
	trainer/common/mpi-sanitizer.c \
	trainer/allreduce/allreduce.c
benchd_allreduce_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/trainer/common $(MPI_CFLAGS)
# libbd.a for err.c and xalloc.c only (none of BD_LIBS' libraries)
benchd_allreduce_LDADD = libbd.a $(MPI_LIBS)
if HAVE_NCCL
benchd_allreduce_CPPFLAGS += $(CUDA_CFLAGS)
benchd_allreduce_LDADD += $(NCCL_LIBS) $(CUDA_LIBS)
endif
endif

# ---- libbdtrain.a: what the SSD and Mask R-CNN trainers link (with BD_TRAIN_LIBS) ----
noinst_LIBRARIES += libbdtrain.a
BD_TRAIN_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/trainer/core -I$(top_srcdir)/trainer/ops \
	-I$(top_srcdir)/trainer/models -I$(top_srcdir)/trainer/common -I$(top_srcdir)/trainer/det $(MPI_CFLAGS)
libbdtrain_a_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
if HAVE_NCCL
libbdtrain_a_CPPFLAGS += $(CUDA_CFLAGS)
endif
libbdtrain_a_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
libbdtrain_a_SOURCES = \
	trainer/core/tensor.h trainer/core/tensor.c \
	trainer/core/model.h trainer/core/model.c \
	trainer/core/layers.h trainer/core/layers.c \
	trainer/core/scratch.h trainer/core/scratch.c \
	trainer/core/optim.h trainer/core/optim.c \
	trainer/core/checkpoint.h trainer/core/checkpoint.c \
	trainer/core/dp.h trainer/core/dp.c \
	trainer/models/resnet.h trainer/models/resnet.c \
	trainer/common/mllog.h trainer/common/mllog.c \
	trainer/ops/elem.h trainer/ops/elem-impl.h \
	trainer/ops/backend.h trainer/ops/backend.c trainer/ops/backends.c \
	trainer/ops/ops.h trainer/ops/ops.c \
	trainer/ops/ops-ref.h trainer/ops/ops-ref.c \
	trainer/ops/ops-cpu.c trainer/ops/ops-plan.c trainer/ops/ops-dnnl.h \
	trainer/ops/algo-cache.h trainer/ops/algo-cache.c \
	trainer/det/boxes.h trainer/det/boxes.c \
	trainer/det/losses.h trainer/det/losses.c \
	trainer/det/det-fp.h trainer/det/masks.h trainer/det/masks-impl.h trainer/det/masks.c \
	trainer/det/postprocess.h trainer/det/postprocess-impl.h trainer/det/postprocess.c \
	trainer/det/roi-align.h trainer/det/roi-align-impl.h trainer/det/roi-align-types.h \
	trainer/det/roi-align-cpu.h trainer/det/roi-align.c
# masks.c and postprocess.c use data/mask.h (pycocotools' RLE): a program that
# calls them links libbddata.a after libbdtrain.a
libbdtrain_a_CPPFLAGS += $(DATA_CPPFLAGS)
libbdtrain_a_SOURCES += trainer/det/boxes-impl.h trainer/det/sample-impl.h trainer/det/match.h trainer/det/match.c \
	trainer/det/proposals.h trainer/det/proposals.c trainer/det/boxes-dev.h trainer/det/boxes-dev.c
# the CPU backend's library operations: oneDNN's primitives, or the reference loops
if HAVE_DNNL
libbdtrain_a_SOURCES += trainer/ops/ops-dnnl.c
else
libbdtrain_a_SOURCES += trainer/ops/ops-dnnl-none.c
endif
BD_TRAIN_LIBS = libbdtrain.a $(BD_LIBS) $(DNNL_LIBS) $(MPI_LIBS) $(OPENMP_CFLAGS) -lm
EXTRA_DIST += trainer/README.md trainer/tools trainer/ops/ops-cuda-none.c trainer/ops/ops-cuda.cu \
	trainer/det/postprocess.cu trainer/det/masks.cu trainer/det/roi-align.cu
EXTRA_DIST += trainer/det/boxes-cuda.cu trainer/det/proposals.cu trainer/det/rpn-targets.cu trainer/det/det-cuda.h
if HAVE_CUDA
# CUDA sources: a .cu suffix rule (nvcc, the architectures configure chose);
# their objects go into libbdtrain.a through BD_CUDA_OBJS
SUFFIXES = .cu
NVCCFLAGS = -std=c++17 -O3 $(NVCC_GENCODE) -Xcompiler -Wall,-Wno-unused-function
BD_NVCC = $(NVCC) $(NVCCFLAGS) -I$(top_builddir) -I$(top_srcdir)/lib -I$(top_srcdir)/trainer/core \
	-I$(top_srcdir)/trainer/ops -I$(top_srcdir)/trainer/models -I$(top_srcdir)/trainer/det $(CUDA_CFLAGS)
.cu.$(OBJEXT):
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(BD_NVCC) -c $< -o $@
BD_CUDA_OBJS = trainer/ops/ops-cuda.$(OBJEXT)
# detection operators' kernels (trainer/det/*.cu): their C side calls them
# under #if HAVE_CUDA; one line each:
# BD_CUDA_OBJS += trainer/det/NAME.$(OBJEXT)
BD_CUDA_OBJS += trainer/det/postprocess.$(OBJEXT)
BD_CUDA_OBJS += trainer/det/masks.$(OBJEXT)
trainer/det/masks.$(OBJEXT): $(srcdir)/trainer/det/masks.h $(srcdir)/trainer/det/masks-impl.h
# masks.h includes data/mask.h (struct coco_polygons)
BD_NVCC += $(DATA_CPPFLAGS)
trainer/det/postprocess.$(OBJEXT): $(srcdir)/trainer/det/postprocess.h $(srcdir)/trainer/det/postprocess-impl.h \
	$(srcdir)/trainer/det/boxes.h
BD_CUDA_OBJS += trainer/det/roi-align.$(OBJEXT)
trainer/det/roi-align.$(OBJEXT): $(srcdir)/trainer/det/roi-align.h $(srcdir)/trainer/det/roi-align-impl.h \
	$(srcdir)/trainer/det/roi-align-types.h
BD_CUDA_OBJS += trainer/det/boxes-cuda.$(OBJEXT)
BD_CUDA_OBJS += trainer/det/proposals.$(OBJEXT)
BD_CUDA_OBJS += trainer/det/rpn-targets.$(OBJEXT)
trainer/det/rpn-targets.$(OBJEXT): $(srcdir)/lib/rng.h $(srcdir)/trainer/det/sample-impl.h
trainer/det/boxes-cuda.$(OBJEXT) trainer/det/proposals.$(OBJEXT) trainer/det/rpn-targets.$(OBJEXT): \
	$(srcdir)/trainer/det/boxes-impl.h \
	$(srcdir)/trainer/det/det-cuda.h $(srcdir)/trainer/det/boxes-dev.h $(srcdir)/trainer/det/boxes.h \
	$(srcdir)/trainer/det/match.h $(srcdir)/trainer/det/proposals.h
$(BD_CUDA_OBJS): $(srcdir)/trainer/ops/elem.h $(srcdir)/trainer/ops/elem-impl.h $(srcdir)/trainer/ops/backend.h \
	$(srcdir)/trainer/ops/ops.h $(srcdir)/trainer/core/tensor.h config.h
libbdtrain_a_LIBADD = $(BD_CUDA_OBJS)
EXTRA_libbdtrain_a_DEPENDENCIES = $(BD_CUDA_OBJS)
CLEANFILES += $(BD_CUDA_OBJS)
BD_TRAIN_LIBS += $(CUDA_LIBS) -lstdc++
else
libbdtrain_a_SOURCES += trainer/ops/ops-cuda-none.c
endif
if HAVE_NCCL
BD_TRAIN_LIBS += $(NCCL_LIBS)
endif
