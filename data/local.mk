# data/: the COCO data library (libbddata.a): annotation index, JPEG
# decoding, SSD augmentation, the SSD and Mask R-CNN loaders, the synthetic
# dataset generator, run-length masks and COCO bbox and segm evaluation.
# Used by benchctl (dataset, coco-eval), benchd-dataset, the bench and the
# trainers; it uses only lib/.
DATA_CPPFLAGS = -I$(top_srcdir)/data
DATA_CFLAGS = -pthread -ffp-contract=off
EXTRA_DIST += data/README.md
if BUILD_DATA
noinst_LIBRARIES += libbddata.a
libbddata_a_SOURCES = \
	data/parallel.h data/parallel.c \
	data/json-stream.h data/json-stream.c \
	data/coco-index.h data/coco-index.c \
	data/mask.h data/mask.c \
	data/coco-eval.h data/coco-eval.c \
	data/jpeg.h data/jpeg.c \
	data/augment.h data/augment.c data/resample.c \
	data/loader-util.h data/loader-util.c \
	data/ring.h data/ring.c \
	data/loader.h data/loader.c \
	data/det-loader.h data/det-loader.c \
	data/det-render.h data/det-render.c \
	data/synth.h data/synth.c
libbddata_a_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
libbddata_a_CFLAGS = $(AM_CFLAGS) $(DATA_CFLAGS)
DATA_LIBS = libbddata.a $(BD_LIBS) $(TURBOJPEG_LIBS) $(JPEG_LIBS) $(XXHASH_LIBS) -lpthread
# the MPI side of evaluation, for the trainers (and its test)
if HAVE_MPI
noinst_LIBRARIES += libbddata-mpi.a
libbddata_mpi_a_SOURCES = data/coco-eval-mpi.h data/coco-eval-mpi.c
libbddata_mpi_a_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS) $(MPI_CFLAGS)
libbddata_mpi_a_CFLAGS = $(AM_CFLAGS) $(DATA_CFLAGS)
endif
endif
