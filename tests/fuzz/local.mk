# tests/fuzz/: a libFuzzer harness per parser (tests/fuzz/README.md).
#
# Each fuzz-NAME.c is linked twice: as tests/fuzz/fuzz-NAME with libFuzzer
# (make fuzz, where configure was given --enable-fuzzing: clang), and as
# tests/fuzz/replay-NAME with replay.c's main() in every build, which
# t0960-fuzz-replay.t runs on corpus/NAME/ in make check (under ASan/UBSan in
# a --enable-sanitizers build).  The replay programs are not check_PROGRAMS:
# tests/local.mk makes every check program a test of its own, and they need
# a corpus to run on; t0960's log depends on them instead, so make check
# builds them for it.  bench/fuzz.sh runs the fuzzers for a while.
FUZZ_COMMON = tests/fuzz/fuzz.h tests/fuzz/fuzz.c
FUZZ_REPLAY = $(FUZZ_COMMON) tests/fuzz/replay.c
FUZZ_LINK = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
# the daemon without its main() and server loop, for the API's harnesses
FUZZ_DAEMON_SOURCES = tests/fuzz/fuzz-daemon.h tests/fuzz/fuzz-daemon.c \
	daemon/inventory.h daemon/inventory.c daemon/inventory-cpu.c daemon/inventory-pci.c \
	daemon/inventory-sw.c daemon/inventory-print.c daemon/nvml.h daemon/nvml.c daemon/signals.h daemon/signals.c \
	daemon/conf.h daemon/conf.c daemon/daemon.h daemon/daemon.c daemon/log.h daemon/log.c daemon/notify.h daemon/notify.c \
	daemon/http.h daemon/http.c daemon/api.h daemon/api.c daemon/metrics.c \
	daemon/health-report.h daemon/health-report.c daemon/datasets.h daemon/datasets.c
FUZZ_DAEMON_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
FUZZ_DAEMON_LIBS = $(BD_LIBS) $(MICROHTTPD_LIBS) $(NUMA_LIBS) -ldl -lpthread

FUZZ_HARNESSES = tests/fuzz/fuzz-json tests/fuzz/fuzz-system tests/fuzz/fuzz-workload tests/fuzz/fuzz-mlperf \
	tests/fuzz/fuzz-hostfile \
	tests/fuzz/fuzz-reader-regex tests/fuzz/fuzz-reader-json tests/fuzz/fuzz-reader-dllogger tests/fuzz/fuzz-trace \
	tests/fuzz/fuzz-health tests/fuzz/fuzz-checkpoint tests/fuzz/fuzz-weights tests/fuzz/fuzz-ptload \
	tests/fuzz/fuzz-elfdyn tests/fuzz/fuzz-algo-cache
FUZZ_REPLAYERS = tests/fuzz/replay-json tests/fuzz/replay-system tests/fuzz/replay-workload tests/fuzz/replay-mlperf \
	tests/fuzz/replay-hostfile \
	tests/fuzz/replay-reader-regex tests/fuzz/replay-reader-json tests/fuzz/replay-reader-dllogger tests/fuzz/replay-trace \
	tests/fuzz/replay-health tests/fuzz/replay-checkpoint tests/fuzz/replay-weights tests/fuzz/replay-ptload \
	tests/fuzz/replay-elfdyn tests/fuzz/replay-algo-cache
if HAVE_XXHASH
FUZZ_HARNESSES += tests/fuzz/fuzz-manifest tests/fuzz/fuzz-stage-state tests/fuzz/fuzz-fetch-table tests/fuzz/fuzz-fetch-journal \
	tests/fuzz/fuzz-fetch-sums
FUZZ_REPLAYERS += tests/fuzz/replay-manifest tests/fuzz/replay-stage-state tests/fuzz/replay-fetch-table \
	tests/fuzz/replay-fetch-journal tests/fuzz/replay-fetch-sums
if HAVE_MICROHTTPD
FUZZ_HARNESSES += tests/fuzz/fuzz-http tests/fuzz/fuzz-datasets tests/fuzz/fuzz-health-report
FUZZ_REPLAYERS += tests/fuzz/replay-http tests/fuzz/replay-datasets tests/fuzz/replay-health-report
endif
endif
if BUILD_DATA
FUZZ_HARNESSES += tests/fuzz/fuzz-coco-json tests/fuzz/fuzz-coco-index tests/fuzz/fuzz-rle tests/fuzz/fuzz-polygon
FUZZ_REPLAYERS += tests/fuzz/replay-coco-json tests/fuzz/replay-coco-index tests/fuzz/replay-rle \
	tests/fuzz/replay-polygon
endif
EXTRA_PROGRAMS = $(FUZZ_HARNESSES) $(FUZZ_REPLAYERS)
CLEANFILES += $(FUZZ_HARNESSES) $(FUZZ_REPLAYERS)

# ---- client/fetch/: download tables and journals ----
tests_fuzz_fuzz_fetch_table_SOURCES = tests/fuzz/fuzz-fetch-table.c $(FUZZ_COMMON)
tests_fuzz_fuzz_fetch_table_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_fetch_table_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_fetch_table_LDADD = $(BD_CLIENT_LIBS) -ldl
tests_fuzz_replay_fetch_table_SOURCES = tests/fuzz/fuzz-fetch-table.c $(FUZZ_REPLAY)
tests_fuzz_replay_fetch_table_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_fetch_table_LDADD = $(BD_CLIENT_LIBS) -ldl
tests_fuzz_fuzz_fetch_sums_SOURCES = tests/fuzz/fuzz-fetch-sums.c $(FUZZ_COMMON)
tests_fuzz_fuzz_fetch_sums_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_fetch_sums_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_fetch_sums_LDADD = $(BD_CLIENT_LIBS) -ldl
tests_fuzz_replay_fetch_sums_SOURCES = tests/fuzz/fuzz-fetch-sums.c $(FUZZ_REPLAY)
tests_fuzz_replay_fetch_sums_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_fetch_sums_LDADD = $(BD_CLIENT_LIBS) -ldl
tests_fuzz_fuzz_fetch_journal_SOURCES = tests/fuzz/fuzz-fetch-journal.c $(FUZZ_COMMON)
tests_fuzz_fuzz_fetch_journal_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_fetch_journal_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_fetch_journal_LDADD = $(BD_CLIENT_LIBS) -ldl
tests_fuzz_replay_fetch_journal_SOURCES = tests/fuzz/fuzz-fetch-journal.c $(FUZZ_REPLAY)
tests_fuzz_replay_fetch_journal_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_fetch_journal_LDADD = $(BD_CLIENT_LIBS) -ldl

# ---- client/image/: ELF dynamic sections (image build --cuda) ----
tests_fuzz_fuzz_elfdyn_SOURCES = tests/fuzz/fuzz-elfdyn.c $(FUZZ_COMMON)
tests_fuzz_fuzz_elfdyn_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_elfdyn_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_elfdyn_LDADD = $(BD_CLIENT_LIBS) -ldl
tests_fuzz_replay_elfdyn_SOURCES = tests/fuzz/fuzz-elfdyn.c $(FUZZ_REPLAY)
tests_fuzz_replay_elfdyn_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_elfdyn_LDADD = $(BD_CLIENT_LIBS) -ldl

# ---- lib/ ----
tests_fuzz_fuzz_json_SOURCES = tests/fuzz/fuzz-json.c $(FUZZ_COMMON)
tests_fuzz_fuzz_json_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_json_LDADD = $(BD_LIBS)
tests_fuzz_replay_json_SOURCES = tests/fuzz/fuzz-json.c $(FUZZ_REPLAY)
tests_fuzz_replay_json_LDADD = $(BD_LIBS)
tests_fuzz_fuzz_system_SOURCES = tests/fuzz/fuzz-system.c $(FUZZ_COMMON)
tests_fuzz_fuzz_system_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_system_LDADD = $(BD_LIBS)
tests_fuzz_replay_system_SOURCES = tests/fuzz/fuzz-system.c $(FUZZ_REPLAY)
tests_fuzz_replay_system_LDADD = $(BD_LIBS)
tests_fuzz_fuzz_hostfile_SOURCES = tests/fuzz/fuzz-hostfile.c $(FUZZ_COMMON)
tests_fuzz_fuzz_hostfile_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_hostfile_LDADD = $(BD_LIBS)
tests_fuzz_replay_hostfile_SOURCES = tests/fuzz/fuzz-hostfile.c $(FUZZ_REPLAY)
tests_fuzz_replay_hostfile_LDADD = $(BD_LIBS)
tests_fuzz_fuzz_workload_SOURCES = tests/fuzz/fuzz-workload.c $(FUZZ_COMMON)
tests_fuzz_fuzz_workload_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_workload_LDADD = $(BD_LIBS) -lm
tests_fuzz_replay_workload_SOURCES = tests/fuzz/fuzz-workload.c $(FUZZ_REPLAY)
tests_fuzz_replay_workload_LDADD = $(BD_LIBS) -lm
tests_fuzz_fuzz_trace_SOURCES = tests/fuzz/fuzz-trace.c $(FUZZ_COMMON)
tests_fuzz_fuzz_trace_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_trace_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_trace_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_replay_trace_SOURCES = tests/fuzz/fuzz-trace.c $(FUZZ_REPLAY)
tests_fuzz_replay_trace_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_trace_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_fuzz_health_SOURCES = tests/fuzz/fuzz-health.c $(FUZZ_COMMON)
tests_fuzz_fuzz_health_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_health_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_health_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_replay_health_SOURCES = tests/fuzz/fuzz-health.c $(FUZZ_REPLAY)
tests_fuzz_replay_health_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_health_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_fuzz_reader_regex_SOURCES = tests/fuzz/fuzz-reader-regex.c tests/fuzz/fuzz-reader.h $(FUZZ_COMMON)
tests_fuzz_fuzz_reader_regex_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_reader_regex_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_reader_regex_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_replay_reader_regex_SOURCES = tests/fuzz/fuzz-reader-regex.c tests/fuzz/fuzz-reader.h $(FUZZ_REPLAY)
tests_fuzz_replay_reader_regex_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_reader_regex_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_fuzz_reader_json_SOURCES = tests/fuzz/fuzz-reader-json.c tests/fuzz/fuzz-reader.h $(FUZZ_COMMON)
tests_fuzz_fuzz_reader_json_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_reader_json_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_reader_json_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_replay_reader_json_SOURCES = tests/fuzz/fuzz-reader-json.c tests/fuzz/fuzz-reader.h $(FUZZ_REPLAY)
tests_fuzz_replay_reader_json_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_reader_json_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_fuzz_reader_dllogger_SOURCES = tests/fuzz/fuzz-reader-dllogger.c tests/fuzz/fuzz-reader.h $(FUZZ_COMMON)
tests_fuzz_fuzz_reader_dllogger_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_reader_dllogger_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_reader_dllogger_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_replay_reader_dllogger_SOURCES = tests/fuzz/fuzz-reader-dllogger.c tests/fuzz/fuzz-reader.h $(FUZZ_REPLAY)
tests_fuzz_replay_reader_dllogger_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_reader_dllogger_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_fuzz_mlperf_SOURCES = tests/fuzz/fuzz-mlperf.c $(FUZZ_COMMON)
tests_fuzz_fuzz_mlperf_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_mlperf_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_mlperf_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_replay_mlperf_SOURCES = tests/fuzz/fuzz-mlperf.c $(FUZZ_REPLAY)
tests_fuzz_replay_mlperf_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_mlperf_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_fuzz_ptload_SOURCES = tests/fuzz/fuzz-ptload.c $(FUZZ_COMMON)
tests_fuzz_fuzz_ptload_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_ptload_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_fuzz_ptload_LDADD = $(BD_CLIENT_LIBS)
tests_fuzz_replay_ptload_SOURCES = tests/fuzz/fuzz-ptload.c $(FUZZ_REPLAY)
tests_fuzz_replay_ptload_CPPFLAGS = $(BD_CLIENT_CPPFLAGS)
tests_fuzz_replay_ptload_LDADD = $(BD_CLIENT_LIBS)

# ---- lib/stage/ ----
tests_fuzz_fuzz_manifest_SOURCES = tests/fuzz/fuzz-manifest.c $(FUZZ_COMMON)
tests_fuzz_fuzz_manifest_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_manifest_LDADD = $(BD_LIBS)
tests_fuzz_replay_manifest_SOURCES = tests/fuzz/fuzz-manifest.c $(FUZZ_REPLAY)
tests_fuzz_replay_manifest_LDADD = $(BD_LIBS)
tests_fuzz_fuzz_stage_state_SOURCES = tests/fuzz/fuzz-stage-state.c $(FUZZ_COMMON)
tests_fuzz_fuzz_stage_state_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_stage_state_LDADD = $(BD_LIBS)
tests_fuzz_replay_stage_state_SOURCES = tests/fuzz/fuzz-stage-state.c $(FUZZ_REPLAY)
tests_fuzz_replay_stage_state_LDADD = $(BD_LIBS)

# ---- data/ ----
tests_fuzz_fuzz_coco_json_SOURCES = tests/fuzz/fuzz-coco-json.c tests/fuzz/fuzz-coco.h $(FUZZ_COMMON)
tests_fuzz_fuzz_coco_json_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_fuzz_fuzz_coco_json_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_coco_json_LDADD = $(DATA_LIBS)
tests_fuzz_replay_coco_json_SOURCES = tests/fuzz/fuzz-coco-json.c tests/fuzz/fuzz-coco.h $(FUZZ_REPLAY)
tests_fuzz_replay_coco_json_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_fuzz_replay_coco_json_LDADD = $(DATA_LIBS)
tests_fuzz_fuzz_coco_index_SOURCES = tests/fuzz/fuzz-coco-index.c tests/fuzz/fuzz-coco.h $(FUZZ_COMMON)
tests_fuzz_fuzz_coco_index_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_fuzz_fuzz_coco_index_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_coco_index_LDADD = $(DATA_LIBS)
tests_fuzz_replay_coco_index_SOURCES = tests/fuzz/fuzz-coco-index.c tests/fuzz/fuzz-coco.h $(FUZZ_REPLAY)
tests_fuzz_replay_coco_index_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_fuzz_replay_coco_index_LDADD = $(DATA_LIBS)
tests_fuzz_fuzz_rle_SOURCES = tests/fuzz/fuzz-rle.c $(FUZZ_COMMON)
tests_fuzz_fuzz_rle_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_fuzz_fuzz_rle_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_rle_LDADD = $(DATA_LIBS)
tests_fuzz_replay_rle_SOURCES = tests/fuzz/fuzz-rle.c $(FUZZ_REPLAY)
tests_fuzz_replay_rle_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_fuzz_replay_rle_LDADD = $(DATA_LIBS)
tests_fuzz_fuzz_polygon_SOURCES = tests/fuzz/fuzz-polygon.c $(FUZZ_COMMON)
tests_fuzz_fuzz_polygon_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_fuzz_fuzz_polygon_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_polygon_LDADD = $(DATA_LIBS)
tests_fuzz_replay_polygon_SOURCES = tests/fuzz/fuzz-polygon.c $(FUZZ_REPLAY)
tests_fuzz_replay_polygon_CPPFLAGS = $(AM_CPPFLAGS) $(DATA_CPPFLAGS)
tests_fuzz_replay_polygon_LDADD = $(DATA_LIBS)

# ---- trainer/core/ ----
tests_fuzz_fuzz_algo_cache_SOURCES = tests/fuzz/fuzz-algo-cache.c $(FUZZ_COMMON)
tests_fuzz_fuzz_algo_cache_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_fuzz_fuzz_algo_cache_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_algo_cache_LDADD = $(BD_TRAIN_LIBS)
tests_fuzz_replay_algo_cache_SOURCES = tests/fuzz/fuzz-algo-cache.c $(FUZZ_REPLAY)
tests_fuzz_replay_algo_cache_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_fuzz_replay_algo_cache_LDADD = $(BD_TRAIN_LIBS)
tests_fuzz_fuzz_checkpoint_SOURCES = tests/fuzz/fuzz-checkpoint.c tests/fuzz/fuzz-model.h $(FUZZ_COMMON)
tests_fuzz_fuzz_checkpoint_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_fuzz_fuzz_checkpoint_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_fuzz_fuzz_checkpoint_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_checkpoint_LDADD = $(BD_TRAIN_LIBS)
tests_fuzz_replay_checkpoint_SOURCES = tests/fuzz/fuzz-checkpoint.c tests/fuzz/fuzz-model.h $(FUZZ_REPLAY)
tests_fuzz_replay_checkpoint_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_fuzz_replay_checkpoint_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_fuzz_replay_checkpoint_LDADD = $(BD_TRAIN_LIBS)
tests_fuzz_fuzz_weights_SOURCES = tests/fuzz/fuzz-weights.c tests/fuzz/fuzz-model.h $(FUZZ_COMMON)
tests_fuzz_fuzz_weights_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_fuzz_fuzz_weights_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_fuzz_fuzz_weights_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_weights_LDADD = $(BD_TRAIN_LIBS)
tests_fuzz_replay_weights_SOURCES = tests/fuzz/fuzz-weights.c tests/fuzz/fuzz-model.h $(FUZZ_REPLAY)
tests_fuzz_replay_weights_CPPFLAGS = $(BD_TRAIN_CPPFLAGS)
tests_fuzz_replay_weights_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_fuzz_replay_weights_LDADD = $(BD_TRAIN_LIBS)

# ---- daemon/: the API as benchd serves it, without a socket ----
tests_fuzz_fuzz_http_SOURCES = tests/fuzz/fuzz-http.c $(FUZZ_DAEMON_SOURCES) $(FUZZ_COMMON)
tests_fuzz_fuzz_http_CPPFLAGS = $(FUZZ_DAEMON_CPPFLAGS)
tests_fuzz_fuzz_http_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_http_LDADD = $(FUZZ_DAEMON_LIBS)
tests_fuzz_replay_http_SOURCES = tests/fuzz/fuzz-http.c $(FUZZ_DAEMON_SOURCES) $(FUZZ_REPLAY)
tests_fuzz_replay_http_CPPFLAGS = $(FUZZ_DAEMON_CPPFLAGS)
tests_fuzz_replay_http_LDADD = $(FUZZ_DAEMON_LIBS)
tests_fuzz_fuzz_health_report_SOURCES = tests/fuzz/fuzz-health-report.c $(FUZZ_DAEMON_SOURCES) $(FUZZ_COMMON)
tests_fuzz_fuzz_health_report_CPPFLAGS = $(FUZZ_DAEMON_CPPFLAGS)
tests_fuzz_fuzz_health_report_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_health_report_LDADD = $(FUZZ_DAEMON_LIBS)
tests_fuzz_replay_health_report_SOURCES = tests/fuzz/fuzz-health-report.c $(FUZZ_DAEMON_SOURCES) $(FUZZ_REPLAY)
tests_fuzz_replay_health_report_CPPFLAGS = $(FUZZ_DAEMON_CPPFLAGS)
tests_fuzz_replay_health_report_LDADD = $(FUZZ_DAEMON_LIBS)
tests_fuzz_fuzz_datasets_SOURCES = tests/fuzz/fuzz-datasets.c $(FUZZ_DAEMON_SOURCES) $(FUZZ_COMMON)
tests_fuzz_fuzz_datasets_CPPFLAGS = $(FUZZ_DAEMON_CPPFLAGS)
tests_fuzz_fuzz_datasets_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_datasets_LDADD = $(FUZZ_DAEMON_LIBS)
tests_fuzz_replay_datasets_SOURCES = tests/fuzz/fuzz-datasets.c $(FUZZ_DAEMON_SOURCES) $(FUZZ_REPLAY)
tests_fuzz_replay_datasets_CPPFLAGS = $(FUZZ_DAEMON_CPPFLAGS)
tests_fuzz_replay_datasets_LDADD = $(FUZZ_DAEMON_LIBS)

# make fuzz: every harness, with libFuzzer (lib/bd-paths.h first, as make
# all makes it)
.PHONY: fuzz
if ENABLE_FUZZING
fuzz: $(BUILT_SOURCES)
	$(AM_V_at)$(MAKE) $(AM_MAKEFLAGS) $(FUZZ_HARNESSES)
else
fuzz:
	@echo "make fuzz: this build was configured without --enable-fuzzing; build the harnesses in a" \
	      "build directory of their own: mkdir build-fuzz && cd build-fuzz &&" \
	      "CC=clang ../configure --enable-fuzzing && make fuzz" >&2; exit 1
endif

# make check: every corpus file through its harness
TESTS += tests/t0960-fuzz-replay.t
tests/t0960-fuzz-replay.log: $(FUZZ_REPLAYERS)
EXTRA_DIST += tests/t0960-fuzz-replay.t tests/fuzz/README.md tests/fuzz/corpus
