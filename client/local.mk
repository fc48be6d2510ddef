# client/: benchctl, the rank binding wrapper benchd-bind, and benchd-dataset
# (the program behind 'benchctl dataset').  client/README.md names the rooms.

# ---- libbdclient.a: benchctl's modules that stand alone (they never print):
# the results store, MLPerf logs and scores, SVG and HTML writers, OCI
# archives, SHA-256, child processes.  benchctl links it; so do the unit
# tests and fuzz harnesses of these modules. ----
noinst_LIBRARIES += libbdclient.a
libbdclient_a_SOURCES = \
	client/store.h client/store.c \
	client/report/mlperf.h client/report/mlperf.c \
	client/report/reader.h client/report/reader.c \
	client/report/trace.h client/report/trace.c \
	client/report/tenants.h client/report/tenants.c \
	client/health/health.h client/health/health.c client/health/perf.h client/health/perf.c \
	client/report/svg.h client/report/svg.c client/report/html.h client/report/html.c \
	client/image/proc.h client/image/proc.c client/image/sha256.h client/image/sha256.c \
	client/image/oci.h client/image/oci.c \
	client/image/md.h client/image/sha1.h client/image/sha1.c \
	client/image/elfdyn.h client/image/elfdyn.c client/image/cudalibs.h client/image/cudalibs.c \
	client/fetch/digest.h client/fetch/digest.c \
	client/fetch/fetch-table.h client/fetch/fetch-table.c
nodist_libbdclient_a_SOURCES = client/fetch/bd-fetch-tables.c
# the download engine (XXH3 for each chunk in its journal)
if HAVE_XXHASH
libbdclient_a_SOURCES += client/fetch/fetch.h client/fetch/fetch.c
endif
# the download tables (fetch/), built in as the workloads are
BD_FETCH_TABLES = fetch/coco2017.json fetch/resnet34.json fetch/resnet50.json
EXTRA_DIST += fetch/README.md $(BD_FETCH_TABLES)
BUILT_SOURCES += client/fetch/bd-fetch-tables.c
CLEANFILES += client/fetch/bd-fetch-tables.c
client/fetch/bd-fetch-tables.c: $(BD_FETCH_TABLES:%=$(srcdir)/%) $(srcdir)/client/local.mk $(srcdir)/lib/embed-json.sh
	$(AM_V_GEN)$(MKDIR_P) client/fetch && \
	  $(SHELL) $(srcdir)/lib/embed-json.sh $@ fetch-table.h fetch_table_text fetch_bundled $(srcdir) $(BD_FETCH_TABLES)
BD_CLIENT_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/client -I$(top_srcdir)/client/report -I$(top_srcdir)/client/health \
	-I$(top_srcdir)/client/image -I$(top_srcdir)/client/fetch -I$(top_srcdir)/client/run -I$(top_srcdir)/client/sched
libbdclient_a_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
BD_CLIENT_LIBS = libbdclient.a $(BD_LIBS) $(SQLITE3_LIBS) -lm
# pretrained weights (weights/): PyTorch state dicts read without Python
# (pickle, zip), benchd weights files written and described
libbdclient_a_SOURCES += \
	client/weights/pickle.h client/weights/pickle.c client/weights/zipread.h client/weights/zipread.c \
	client/weights/ptload.h client/weights/ptload.c client/weights/bdw.h client/weights/bdw.c
BD_CLIENT_CPPFLAGS += -I$(top_srcdir)/client/weights

bin_PROGRAMS += benchctl benchd-bind
# the program, its options and the commands (cmd/: one file each)
benchctl_SOURCES = \
	client/benchctl.h client/benchctl.c \
	client/opts.h client/opts.c client/context.c \
	client/cmd/cmd-systems.c client/cmd/cmd-show.c client/cmd/cmd-render.c client/cmd/cmd-bind.c \
	client/cmd/cmd-submit.c client/cmd/cmd-status.c client/cmd/cmd-cancel.c client/cmd/cmd-logs.c \
	client/cmd/cmd-runs.c client/cmd/cmd-report.c client/cmd/cmd-sweep.c client/cmd/cmd-suite.c \
	client/cmd/cmd-nodes.c client/cmd/cmd-image.c client/cmd/cmd-workloads.c client/cmd/cmd-health.c \
	client/meter.h client/meter.c client/cmd/cmd-weights.c
# runs: launch scripts, submitting, following and cancelling runs (run/);
# the schedulers (sched/); groups of runs (sweeps, suites)
benchctl_SOURCES += \
	client/run/render.h client/run/render.c \
	client/run/run.h client/run/run.c \
	client/run/launch.h client/run/submit.c client/run/follow.c client/run/cancel.c \
	client/run/progress.h client/run/progress.c \
	client/sched/scheduler.h client/sched/sched-common.c client/sched/sched-local.c \
	client/group.h client/group.c

# reports: text, JSON, CSV, the sweep table, scaling, suites, the pages
benchctl_SOURCES += \
	client/report/report.h client/report/report.c \
	client/report/results.h client/report/results.c \
	client/report/sweep.h client/report/sweep.c \
	client/report/suite.h client/report/suite.c client/report/suite-report.h client/report/suite-report.c \
	client/report/scaling.h client/report/scaling.c \
	client/report/pages.h client/report/pages.c \
	client/image/image.h \
	client/nodes.h client/nodes.c \
	client/stage-ui.h
if HAVE_SLURM
benchctl_SOURCES += client/sched/sched-slurm.c
else
benchctl_SOURCES += client/sched/sched-slurm-cli.c
endif
benchctl_CPPFLAGS = $(BD_CLIENT_CPPFLAGS) -I$(top_srcdir)/daemon
benchctl_LDADD = $(BD_CLIENT_LIBS) $(BD_NODE_LIBS) $(BD_LIBS) $(SLURM_LIBS) -ldl
# staging: benchctl stage and manifest
if HAVE_XXHASH
benchctl_SOURCES += client/stage-ui.c client/cmd/cmd-stage.c client/cmd/cmd-manifest.c \
	client/stage-remote.h client/stage-remote.c
else
benchctl_SOURCES += client/cmd/cmd-stage-none.c
endif
# the COCO data library: 'benchctl dataset' runs benchd-dataset, so benchctl
# itself links no JPEG library (coco-eval takes no JPEG code from
# libbddata.a; named here, the libraries would be loaded at every start
# wherever the linker does not drop unused ones)
if BUILD_DATA
benchctl_SOURCES += client/cmd/cmd-dataset.c client/cmd/cmd-coco-eval.c
benchctl_CPPFLAGS += $(DATA_CPPFLAGS)
benchctl_LDADD += libbddata.a $(BD_LIBS)
pkglibexec_PROGRAMS = benchd-dataset
benchd_dataset_SOURCES = client/benchd-dataset.c client/opts.h client/opts.c client/context.c client/benchctl.h \
	client/meter.h client/meter.c client/dataset-fetch.h client/dataset-fetch.c client/stage-ui.h client/stage-ui.c \
	client/fetch/unpack.h
benchd_dataset_CPPFLAGS = $(BD_CLIENT_CPPFLAGS) $(DATA_CPPFLAGS)
benchd_dataset_LDADD = libbdclient.a $(DATA_LIBS) $(ARCHIVE_LIBS) -ldl
if HAVE_ARCHIVE
benchd_dataset_SOURCES += client/fetch/unpack.c
else
benchd_dataset_SOURCES += client/fetch/unpack-none.c
endif
else
benchctl_SOURCES += client/cmd/cmd-data-missing.c
endif
EXTRA_DIST += client/README.md client/sched/sched-slurm.c client/sched/sched-slurm-cli.c \
	client/stage-ui.c client/cmd/cmd-stage.c client/cmd/cmd-manifest.c client/cmd/cmd-stage-none.c \
	client/stage-remote.h client/stage-remote.c \
	client/cmd/cmd-data-missing.c client/benchd-dataset.c client/cmd/cmd-dataset.c client/cmd/cmd-coco-eval.c \
	client/dataset-fetch.h client/dataset-fetch.c client/fetch/unpack.h client/fetch/unpack.c client/fetch/unpack-none.c

benchd_bind_SOURCES = client/benchd-bind.c
benchd_bind_LDADD = $(BD_LIBS) -ldl
