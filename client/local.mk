# client/: benchctl, the rank binding wrapper benchd-bind, and benchd-dataset
# (the program behind 'benchctl dataset').
bin_PROGRAMS += benchctl benchd-bind
benchctl_SOURCES = \
	client/benchctl.h client/benchctl.c \
	client/opts.h client/opts.c \
	client/render.h client/render.c \
	client/cmd-systems.c client/cmd-show.c client/cmd-render.c client/cmd-bind.c \
	client/run.h client/run.c \
	client/cmd-submit.c client/cmd-status.c client/cmd-cancel.c client/cmd-logs.c client/cmd-runs.c \
	client/cmd-report.c client/report.h client/report.c \
	client/results.h client/results.c client/sweep.h client/cmd-sweep.c client/sweep-report.c \
	client/report-html.c client/suite.h client/suite.c client/cmd-suite.c client/scaling.h client/scaling.c \
	client/nodes.h client/nodes.c client/cmd-nodes.c \
	client/image.h client/cmd-image.c \
	client/scheduler.h client/sched-common.c client/sched-local.c \
	client/stage-ui.h
if HAVE_SLURM
benchctl_SOURCES += client/sched-slurm.c
else
benchctl_SOURCES += client/sched-slurm-cli.c
endif
benchctl_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/client
benchctl_LDADD = $(BD_LIBS) $(SLURM_LIBS) -ldl
# staging: benchctl stage and manifest
if HAVE_XXHASH
benchctl_SOURCES += client/stage-ui.c client/cmd-stage.c client/cmd-manifest.c \
	client/stage-remote.h client/stage-remote.c
else
benchctl_SOURCES += client/cmd-stage-none.c
endif
# the COCO data library: 'benchctl dataset' runs benchd-dataset, so benchctl
# itself links no JPEG library (coco-eval takes no JPEG code from
# libbddata.a; named here, the libraries would be loaded at every start
# wherever the linker does not drop unused ones)
if BUILD_DATA
benchctl_SOURCES += client/cmd-dataset.c client/cmd-coco-eval.c
benchctl_CPPFLAGS += $(DATA_CPPFLAGS)
benchctl_LDADD += libbddata.a $(BD_LIBS)
pkglibexec_PROGRAMS = benchd-dataset
benchd_dataset_SOURCES = client/benchd-dataset.c client/opts.h client/opts.c client/benchctl.h
benchd_dataset_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/client $(DATA_CPPFLAGS)
benchd_dataset_LDADD = $(DATA_LIBS)
else
benchctl_SOURCES += client/cmd-data-missing.c
endif
EXTRA_DIST += client/README.md client/sched-slurm.c client/sched-slurm-cli.c \
	client/stage-ui.c client/cmd-stage.c client/cmd-manifest.c client/cmd-stage-none.c \
	client/stage-remote.h client/stage-remote.c \
	client/cmd-data-missing.c client/benchd-dataset.c client/cmd-dataset.c client/cmd-coco-eval.c

benchd_bind_SOURCES = client/benchd-bind.c
benchd_bind_LDADD = $(BD_LIBS) -ldl
