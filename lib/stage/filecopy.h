/* filecopy.h: copying one open file to another, checksumming, pacing.
 *
 * copy_fd() tries copy_file_range first (in the kernel, reflinks where the
 * filesystem can), then sendfile, then pread/pwrite.  copy_file_range fails
 * with EXDEV between filesystems of different types (and before Linux 5.19
 * between any two), sendfile with EINVAL on some filesystems; the first
 * method that fails that way is dropped for the rest of the job (the
 * bd_copier is shared by every worker), so the failing call is paid once.
 *
 * Every copy is checksummed (XXH3-128) while it is written: each piece of
 * the source is read into a buffer and hashed, then written from it (read/
 * write) or moved by the kernel from the page cache the read just filled.
 * Reading the copy back would be a second read of every byte; it is not done.
 * On the read/write path the source may be read with O_DIRECT (see
 * copy_direct_read_auto()): the disk then writes into the buffer itself.
 *
 * A sparse source (fewer blocks than its size needs) keeps its holes
 * (SEEK_DATA/SEEK_HOLE): they are hashed as the zeros they read as and not
 * written, the copy's length set at the end.  Hard links are not kept: each
 * name is copied as a file of its own.
 */
#ifndef BD_FILECOPY_H
#define BD_FILECOPY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum bd_copy_method {
        COPY_FILE_RANGE,
        COPY_SENDFILE,
        COPY_READWRITE,
        _COPY_METHOD_MAX,
        COPY_AUTO = _COPY_METHOD_MAX,   /* as an option: copy_method_auto() of the two directories */
};

/* COPY_FILE_RANGE where the filesystem of both can copy without moving the
 * data (reflinks, server-side copies), else COPY_READWRITE. */
enum bd_copy_method copy_method_auto(int srcfd, int dstfd);

const char *copy_method_name(enum bd_copy_method m);
/* -EINVAL for an unknown name; "auto" gives COPY_AUTO. */
int copy_method_parse(const char *name, enum bd_copy_method *ret);

/* A shared bandwidth budget: reservations in bytes paced at rate bytes/s.
 * (Opaque so that this header needs no <pthread.h>: client/ has a sched.h.) */
struct bd_bwlimit;

/* NULL when rate <= 0 (no limit); every function accepts NULL. */
struct bd_bwlimit *copy_bwlimit_new(double rate);
void copy_bwlimit_free(struct bd_bwlimit *b);
/* Reserves n bytes and sleeps until they may go; returns early when *cancel
 * is set. */
void copy_bwlimit_take(struct bd_bwlimit *b, uint64_t n, const atomic_bool *cancel);
/* The chunk size that keeps pacing smooth under a limit (whole files without one). */
uint64_t copy_bwlimit_chunk(const struct bd_bwlimit *b);

/* Buffers given to copy_fd() aligned to this (and sized in multiples of it)
 * allow direct reads. */
#define COPY_BUF_ALIGN ((size_t)4096)

/* Whether to read the sources in srcfd's filesystem with O_DIRECT: on a local
 * disk filesystem (ext4, XFS, Btrfs), where each byte of a dataset is read
 * once, the page cache would cost a copy of every byte (most of the CPU time
 * of a copy) and memory the node's training job wants.  On network and
 * parallel filesystems (NFS, Lustre, GPFS, ...) the client's readahead makes
 * the reads fast: through the page cache there. */
bool copy_direct_read_auto(int srcfd);

struct bd_copier {
        atomic_int method;              /* the first method still believed to work */
        atomic_bool direct_read;        /* read/write path: sources read with O_DIRECT */
        struct bd_bwlimit *bw;          /* NULL: no limit */
        const atomic_bool *cancel;
        atomic_uint_fast64_t *progress; /* bytes added as they are copied, or NULL */
        atomic_uint_fast64_t used[_COPY_METHOD_MAX];    /* files copied by each method */
};

void copy_copier_init(struct bd_copier *c, enum bd_copy_method first, struct bd_bwlimit *bw, const atomic_bool *cancel,
                      atomic_uint_fast64_t *progress);

/* Copies up to size bytes from the start of sfd to the start of dfd (a new,
 * empty file opened read-write) and checksums them.  The source is read in
 * pieces of at most bufsize bytes into buf (a worker's buffer), each piece is
 * hashed, then written: from buf on the read/write path, by the kernel from
 * the page cache the read just filled on the others, so that every byte is
 * read once from the disk and the checksum is of the bytes written (a source
 * that changes meanwhile changes its ctime: the caller compares).
 * *ret_copied is what was copied (and added to progress): less than size
 * when the source ended early.  Returns 0, or a negative errno with
 * *ret_dest_side telling which file failed; -ECANCELED when cancelled. */
int copy_fd(struct bd_copier *c, int sfd, int dfd, uint64_t size, void *buf, size_t bufsize, uint8_t ret_sum[16],
            uint64_t *ret_copied, bool *ret_dest_side);

/* Checksums a whole file from its start; *ret_len is how many bytes it held
 * (on failure, how many were read).  progress (may be NULL) grows as it reads. */
int copy_hash_fd(int fd, void *buf, size_t bufsize, const atomic_bool *cancel, atomic_uint_fast64_t *progress,
                 uint8_t ret_sum[16], uint64_t *ret_len);

#endif
