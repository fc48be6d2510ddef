# lib/stage/: the dataset staging engine (benchctl stage and manifest, benchd's
# /v1/datasets), part of libbd.a where xxHash is found.
if HAVE_XXHASH
libbd_a_SOURCES += \
	lib/stage/pool.h lib/stage/pool.c \
	lib/stage/tree.h lib/stage/tree.c \
	lib/stage/manifest.h lib/stage/manifest.c \
	lib/stage/filecopy.h lib/stage/filecopy.c \
	lib/stage/stage.h lib/stage/stage-int.h lib/stage/stage.c lib/stage/stage-problem.c \
	lib/stage/stage-plan.c lib/stage/stage-copy.c \
	lib/stage/stage-record.c lib/stage/stage-json.c
endif
BD_LIBS += $(XXHASH_LIBS) -lpthread
EXTRA_DIST += lib/stage/README.md
