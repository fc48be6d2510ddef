/* cudalibs.h: the CUDA image's libraries (benchctl image build --cuda).
 *
 * The trainers of a CUDA build (make deb-cuda) need libraries that are not
 * Debian packages: the CUDA runtime, cuBLAS, cuDNN and NCCL of the CUDA
 * installation they were built against, which their run path names.  The
 * image carries those, found the way the dynamic loader finds them: each
 * library an ELF file of the image needs (DT_NEEDED) and the image does
 * not have is looked up in the file's run path on this host (then in this
 * host's library directories, as the loader would), and so on for
 * what that library needs; the libraries a carried library loads itself at
 * run time (dlopen: cuDNN 9's libcudnn_*.so.9, NVRTC for cuBLASLt's and
 * cuDNN's runtime-compiled kernels), named in its strings and found beside
 * it, come with it.  The GPU
 * driver's libraries (libcuda, libnvidia-*) are never carried: the
 * container runtime brings the host's, which must match its kernel module. */
#ifndef BD_CUDALIBS_H
#define BD_CUDALIBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "json.h"

/* Where the image holds them (and its ld.so.conf.d entry names) */
#define CUDA_IMAGE_LIB_DIR "/usr/local/cuda/lib64"

struct cuda_lib {
        char *soname;           /* libcudnn.so.9 */
        char *path;             /* the file on this host, links resolved */
        char *needed_by;        /* the file that needs it (in the image or carried), or "X (loads it)" */
        uint64_t bytes;
};

struct cuda_libs {
        struct cuda_lib *v;
        size_t n;
        char **driver;          /* driver libraries needed or loaded, left to the host (NULL-terminated) */
        size_t ndriver;
};

/* The libraries that the ELF files elfs (paths inside root, e.g.
 * "/usr/bin/benchd-ssd") need and root does not have.  Fails, naming the
 * file and the library, when one is neither in root nor in the run path
 * of the file that needs it. */
int cuda_libs_find(const char *root, char *const *elfs, struct cuda_libs *ret, struct bd_err *err);
/* Copies them into root's CUDA_IMAGE_LIB_DIR under their real names with
 * soname links, and writes root's /etc/ld.so.conf.d/benchd-cuda.conf
 * (ldconfig in the root is the caller's) */
int cuda_libs_install(const char *root, const struct cuda_libs *l, struct bd_err *err);
/* The image record's "cuda" object: the versions of CUDA, cuDNN and NCCL
 * from the installation's headers (the directory above the first library's),
 * each library with its size, and the driver's from the host */
cJSON *cuda_libs_record(const struct cuda_libs *l);
/* The total size of the libraries */
uint64_t cuda_libs_bytes(const struct cuda_libs *l);
void cuda_libs_free(struct cuda_libs *l);

#endif
