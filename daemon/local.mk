# daemon/: benchd, the node daemon.
# libbdnode.a: what a node has (the inventory) and how its parts are doing
# (signals, NVML), read under a root directory; benchd serves them and
# benchctl health reads them in-process (--node-local, --sysfs-root)
noinst_LIBRARIES += libbdnode.a
libbdnode_a_SOURCES = \
	daemon/inventory.h daemon/inventory.c daemon/inventory-cpu.c daemon/inventory-pci.c \
	daemon/inventory-sw.c daemon/inventory-print.c \
	daemon/nvml-abi.h daemon/nvml.h daemon/nvml.c daemon/signals.h daemon/signals.c
libbdnode_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
BD_NODE_LIBS = libbdnode.a $(NUMA_LIBS) -ldl

bin_PROGRAMS += benchd
benchd_SOURCES = \
	daemon/conf.h daemon/conf.c \
	daemon/daemon.h daemon/daemon.c \
	daemon/log.h daemon/log.c daemon/notify.h daemon/notify.c \
	daemon/benchd.c
if HAVE_MICROHTTPD
benchd_SOURCES += daemon/http.h daemon/http.c daemon/api.h daemon/api.c daemon/metrics.c daemon/datasets.h \
	daemon/health-report.h daemon/health-report.c
if HAVE_XXHASH
benchd_SOURCES += daemon/datasets.c
else
benchd_SOURCES += daemon/datasets-none.c
endif
endif
EXTRA_DIST += daemon/README.md daemon/http.h daemon/http.c daemon/api.h daemon/api.c daemon/metrics.c daemon/datasets.h \
	daemon/health-report.h daemon/health-report.c \
	daemon/datasets.c daemon/datasets-none.c
benchd_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
benchd_LDADD = $(BD_NODE_LIBS) $(BD_LIBS) $(MICROHTTPD_LIBS) -lpthread
