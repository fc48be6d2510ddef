/* oci.h: a container image as one tar file, from a root file system tar.
 *
 * The archive is what `docker save` of Docker 25 and later writes: an OCI
 * image layout (oci-layout, index.json, blobs/sha256/<digest>) that also
 * carries Docker's manifest.json, so that `podman load`, `docker load` and
 * skopeo (oci-archive: and docker-archive:) all take it.  One uncompressed
 * layer (its digest is also its diff_id), one config, one manifest.
 *
 * Entries come in a fixed order (oci-layout, blobs/, blobs/sha256/, the
 * layer, the config, the manifest, index.json, manifest.json), owned by
 * 0:0, mtime 0, files 0644 and directories 0755: the same inputs give the
 * same bytes.  The layer is streamed, never held in memory; a size of 8 GiB
 * or more is written in GNU base-256 (which GNU tar, Go's archive/tar and
 * Python's tarfile all read).
 */
#ifndef BD_OCI_H
#define BD_OCI_H

#include <stdint.h>

#include "err.h"

struct oci_image {
        const char *layer_tar;          /* an uncompressed tar of the root file system */
        const char *ref;                /* "benchd/trainers:0.1.0"; no tag: ":latest" */
        const char *created;            /* RFC 3339 UTC time; NULL: none recorded */
        const char *const *env;         /* NULL-terminated "K=V" list, or NULL */
        const char *const *labels;      /* NULL-terminated key, value, key, value..., or NULL */
        const char *arch;               /* "amd64"; NULL: "amd64" */
};

/* Writes the archive at out_path atomically (a temporary file next to it,
 * fsync, rename; the temporary is removed on any failure, and an existing
 * out_path is left as it was; one that is no regular file is refused).
 * Errors name the file at fault: a missing or unreadable layer, a bad ref,
 * env or label list (-EINVAL), or the output. */
int oci_archive_write(const struct oci_image *img, const char *out_path, struct bd_err *err);

/* For tests: the normalised name that io.containerd.image.name carries
 * ("benchd/x:1" -> "docker.io/benchd/x:1", "ubuntu" ->
 * "docker.io/library/ubuntu:latest"), caller frees; NULL for a bad ref. */
char *oci_ref_full_name(const char *ref);

/* For tests: fills one 512-byte ustar header (type '0' file, '5' directory;
 * name shorter than 100 bytes; size in octal, base-256 from 8 GiB). */
void oci_tar_header(uint8_t hdr[512], const char *name, uint64_t size, unsigned mode, char type);

#endif
