# trainer/maskrcnn/: the Mask R-CNN workload.  libbdmrcnn.a: the network
# (backbone, FPN, RPN, box and mask heads, training step and inference) on
# the trainer core and trainer/det/; it uses data/det-loader.h's batches,
# so programs link it with libbddata.a.
MRCNN_CPPFLAGS = $(BD_TRAIN_CPPFLAGS) -I$(top_srcdir)/trainer/maskrcnn $(DATA_CPPFLAGS)
MRCNN_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
if BUILD_DATA
noinst_LIBRARIES += libbdmrcnn.a
libbdmrcnn_a_CPPFLAGS = $(MRCNN_CPPFLAGS)
libbdmrcnn_a_CFLAGS = $(MRCNN_CFLAGS)
libbdmrcnn_a_SOURCES = trainer/maskrcnn/mrcnn-net.h trainer/maskrcnn/mrcnn-net.c \
	trainer/maskrcnn/mrcnn-stages.h trainer/maskrcnn/mrcnn-common.c trainer/maskrcnn/mrcnn-fpn.c \
	trainer/maskrcnn/mrcnn-rpn.c trainer/maskrcnn/mrcnn-box.c trainer/maskrcnn/mrcnn-mask.c \
	trainer/maskrcnn/mrcnn-detect.c
endif
MRCNN_LIBS = libbdmrcnn.a libbdtrain.a libbddata.a $(BD_TRAIN_LIBS) $(DATA_LIBS)

if BUILD_MASKRCNN
bin_PROGRAMS += benchd-maskrcnn
benchd_maskrcnn_SOURCES = \
	trainer/maskrcnn/mrcnn-opts.h trainer/maskrcnn/mrcnn-opts.c trainer/maskrcnn/mrcnn-cfg.c \
	trainer/maskrcnn/mrcnn-run.h trainer/maskrcnn/mrcnn-eval.c trainer/maskrcnn/mrcnn-train.c \
	trainer/common/topts.h trainer/common/topts.c trainer/common/trun.h trainer/common/trun.c trainer/common/tbench.h trainer/common/tbench.c trainer/common/ttrace.h trainer/common/ttrace.c \
	trainer/common/trainer.h trainer/common/trainer.c \
	trainer/common/mpi-sanitizer.c
benchd_maskrcnn_CPPFLAGS = $(MRCNN_CPPFLAGS)
benchd_maskrcnn_CFLAGS = $(MRCNN_CFLAGS) $(DATA_CFLAGS)
benchd_maskrcnn_LDADD = libbddata-mpi.a $(MRCNN_LIBS)
endif
