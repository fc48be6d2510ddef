/* elfdyn.h: the dynamic section of an ELF file (the libraries it needs, its
 * soname and its run path), as the dynamic loader reads it; for the CUDA
 * image, which carries the libraries the trainers need that Debian's
 * packages do not have (cuda.h).
 *
 * 64-bit little-endian ELF only (x86-64, AArch64).  The file is read
 * through a callback, so that only its headers, dynamic section and string
 * table are read (a CUDA library is hundreds of MiB), and so that the
 * parser runs on memory in its fuzz harness. */
#ifndef BD_ELFDYN_H
#define BD_ELFDYN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct elf_dyn {
        char **needed;          /* DT_NEEDED, in order; NULL-terminated (empty for a static file) */
        char *soname;           /* DT_SONAME, or NULL */
        char *runpath;          /* DT_RUNPATH, else DT_RPATH, or NULL */
};

/* Reads len bytes at off into buf: 0, or a negative errno (-EIO for a short read) */
typedef int (*elf_read_fn)(void *ctx, void *buf, size_t len, uint64_t off);

/* The dynamic section of the size-byte file that rd reads; name is for the
 * messages ("NAME: ...").  -ENOEXEC for a file that is not ELF (err says
 * so), -EINVAL for a malformed one; 0 with *ret filled. */
int elf_dyn_read(elf_read_fn rd, void *ctx, uint64_t size, const char *name, struct elf_dyn *ret,
                 struct bd_err *err);
/* The same of a file */
int elf_dyn_file(const char *path, struct elf_dyn *ret, struct bd_err *err);
void elf_dyn_free(struct elf_dyn *d);

#endif
