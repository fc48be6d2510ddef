/* unpack.h: an archive (zip, or any format libarchive reads) unpacked into
 * a directory, on several threads, nothing presented as complete before it
 * is.
 *
 * A zip is read through its central directory (libarchive's seekable zip
 * reader), so each of the threads opens the archive itself and takes every
 * Nth member, skipping the others by seeking: the members are decompressed
 * and their CRC-32 checked in parallel.  Other formats are read in one
 * stream.  Members go into DEST/.unpack-ARCHIVE/ first; when every member
 * is out, each top-level entry is renamed into DEST and the staging
 * directory removed, so
 * a kill leaves either the old tree or the new one, plus a staging
 * directory the next call clears.  Nothing is replaced: a top-level name
 * already in DEST is an error before any member is out.
 *
 * Members are regular files and directories with relative paths that stay
 * inside DEST; links, devices, absolute paths, ".." and a file twice (the
 * threads would write it at once) are refused naming the member.  Modes are 0644/0755 (no set-id bits); modification times are
 * the archive's. */
#ifndef BD_UNPACK_H
#define BD_UNPACK_H

#include <signal.h>
#include <stdint.h>

#include "err.h"

struct unpack_opts {
        int threads;                    /* default: the CPUs available */
        void (*progress)(void *arg, uint64_t done, uint64_t total);     /* bytes written */
        void *arg;
        volatile sig_atomic_t *stop;
};

struct unpack_stats {
        uint64_t files, dirs, bytes;
        int threads;
        char *tops;                     /* the top-level names put in DEST, "NAME\n" each (free()) */
};

/* What the archive holds: members and bytes unpacked (for the room check). */
int unpack_measure(const char *archive, uint64_t *files, uint64_t *bytes, struct bd_err *err);
int unpack_archive(const char *archive, const char *dest, const struct unpack_opts *o, struct unpack_stats *st,
                   struct bd_err *err);

#endif
