# trainer/ssd/: the SSD workload.  libbdssd.a: default boxes, matching, loss,
# decoding and the network, on the trainer core; benchd-ssd needs MPI and the
# data library too.
noinst_LIBRARIES += libbdssd.a
SSD_CPPFLAGS = $(BD_TRAIN_CPPFLAGS) -I$(top_srcdir)/trainer/ssd
SSD_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS) -ffp-contract=off
libbdssd_a_CPPFLAGS = $(SSD_CPPFLAGS)
libbdssd_a_CFLAGS = $(SSD_CFLAGS)
libbdssd_a_SOURCES = \
	trainer/ssd/ssd-boxes.h trainer/ssd/ssd-boxes.c \
	trainer/ssd/ssd-loss.h trainer/ssd/ssd-loss.c \
	trainer/ssd/ssd-elem.h trainer/ssd/ssd-head-launch.h trainer/ssd/ssd-head.c \
	trainer/ssd/ssd-net.h trainer/ssd/ssd-net.c
if HAVE_CUDA
# the head gather's kernel, built like the core's CUDA backend
SSD_CUDA_OBJ = trainer/ssd/ssd-head-cuda.$(OBJEXT)
libbdssd_a_LIBADD = $(SSD_CUDA_OBJ)
EXTRA_libbdssd_a_DEPENDENCIES = $(SSD_CUDA_OBJ)
CLEANFILES += $(SSD_CUDA_OBJ)
$(SSD_CUDA_OBJ): $(srcdir)/trainer/ssd/ssd-head-cuda.cu $(srcdir)/trainer/ssd/ssd-elem.h \
		$(srcdir)/trainer/ssd/ssd-head-launch.h $(srcdir)/trainer/ops/elem.h config.h
	$(AM_V_GEN)$(MKDIR_P) trainer/ssd && \
	$(NVCC) $(NVCCFLAGS) -I$(top_builddir) -I$(top_srcdir)/lib -I$(top_srcdir)/trainer/core \
		-I$(top_srcdir)/trainer/ops -I$(top_srcdir)/trainer/ssd $(CUDA_CFLAGS) \
		-c $(srcdir)/trainer/ssd/ssd-head-cuda.cu -o $@
else
libbdssd_a_SOURCES += trainer/ssd/ssd-head-cuda-none.c
endif
EXTRA_DIST += trainer/ssd/ssd-head-cuda.cu trainer/ssd/ssd-head-cuda-none.c trainer/ssd/README.md
SSD_LIBS = libbdssd.a $(BD_TRAIN_LIBS)

if BUILD_SSD
bin_PROGRAMS += benchd-ssd
benchd_ssd_SOURCES = \
	trainer/ssd/ssd-opts.h trainer/ssd/ssd-opts.c \
	trainer/ssd/ssd-data.h trainer/ssd/ssd-data.c \
	trainer/ssd/ssd-run.h trainer/ssd/ssd-run.c trainer/ssd/ssd-eval.c trainer/ssd/ssd-train.c \
	trainer/common/topts.h trainer/common/topts.c trainer/common/trun.h trainer/common/trun.c trainer/common/tbench.h trainer/common/tbench.c trainer/common/ttrace.h trainer/common/ttrace.c \
	trainer/common/trainer.h trainer/common/trainer.c \
	trainer/common/mpi-sanitizer.c
benchd_ssd_CPPFLAGS = $(SSD_CPPFLAGS) $(DATA_CPPFLAGS)
benchd_ssd_CFLAGS = $(SSD_CFLAGS) $(DATA_CFLAGS)
benchd_ssd_LDADD = libbddata-mpi.a $(SSD_LIBS) $(DATA_LIBS)
endif
