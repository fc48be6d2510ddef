# bench/: benchmarks against the physical floor or a reference (bench/README.md);
# the scripts build what else they need.
noinst_PROGRAMS += bench/resnet34-step
bench_resnet34_step_SOURCES = bench/resnet34-step.c
bench_resnet34_step_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
bench_resnet34_step_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
bench_resnet34_step_LDADD = $(BD_TRAIN_LIBS)
if BUILD_DATA
noinst_PROGRAMS += bench/rle-bench
endif
bench_rle_bench_SOURCES = bench/rle-bench.c
bench_rle_bench_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
bench_rle_bench_LDADD = $(DATA_LIBS)
# the Mask R-CNN input pipeline against TurboJPEG decoding (maskrcnn-pipeline.sh)
if BUILD_DATA
noinst_PROGRAMS += bench/maskrcnn-pipeline
bench_maskrcnn_pipeline_SOURCES = bench/maskrcnn-pipeline.c
bench_maskrcnn_pipeline_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
bench_maskrcnn_pipeline_CFLAGS = $(AM_CFLAGS) $(DATA_CFLAGS)
bench_maskrcnn_pipeline_LDADD = $(DATA_LIBS)
endif
# Mask R-CNN's inference postprocessing against torchvision (det-post.sh)
if BUILD_DATA
noinst_PROGRAMS += bench/det-post
endif
bench_det_post_SOURCES = bench/det-post.c
bench_det_post_CPPFLAGS = $(BD_TRAIN_CPPFLAGS) $(DATA_CPPFLAGS)
bench_det_post_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
bench_det_post_LDADD = libbdtrain.a libbddata.a $(BD_TRAIN_LIBS) $(DATA_LIBS)
# multi-scale RoIAlign forward + backward against torchvision (roi-align.sh)
noinst_PROGRAMS += bench/roi-align
bench_roi_align_SOURCES = bench/roi-align.c
bench_roi_align_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
bench_roi_align_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
bench_roi_align_LDADD = $(BD_TRAIN_LIBS)
# detection operators against torchvision (nms.sh, rpn-proposals.sh)
noinst_PROGRAMS += bench/nms bench/rpn-proposals
bench_nms_SOURCES = bench/nms.c bench/det-bench.h
bench_nms_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
bench_nms_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
bench_nms_LDADD = $(BD_TRAIN_LIBS)
bench_rpn_proposals_SOURCES = bench/rpn-proposals.c bench/det-bench.h
bench_rpn_proposals_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
bench_rpn_proposals_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
bench_rpn_proposals_LDADD = $(BD_TRAIN_LIBS)
# a Mask R-CNN training step against torchvision (maskrcnn-step.sh)
if BUILD_DATA
noinst_PROGRAMS += bench/maskrcnn-step
endif
bench_maskrcnn_step_SOURCES = bench/maskrcnn-step.c bench/det-bench.h
bench_maskrcnn_step_CPPFLAGS = $(MRCNN_CPPFLAGS)
bench_maskrcnn_step_CFLAGS = $(MRCNN_CFLAGS)
bench_maskrcnn_step_LDADD = $(MRCNN_LIBS)
