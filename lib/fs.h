/* fs.h: file helpers.  Writes are atomic: a temporary file in the same
 * directory, fsync, then rename over the target, so a reader never sees a
 * partial file and a failed write leaves the old file (or none) in place.
 * A target that is there and is no regular file (-o /dev/null, a FIFO,
 * /dev/stdout) is written where it is instead: renaming over it would
 * replace the device with a file. */
#ifndef BD_FS_H
#define BD_FS_H

#include <stddef.h>
#include <sys/types.h>

#include "err.h"

/* Reads a whole file (at most max bytes, else -EFBIG) into a NUL-terminated
 * buffer.  On success *ret_data belongs to the caller. */
int fs_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len, struct bd_err *err);
int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode, struct bd_err *err);
/* The same without fsync: still never a partial file under the final name,
 * but a crash may lose the new content.  For copies of what is stored elsewhere. */
int fs_write_replace(const char *path, const void *data, size_t len, mode_t mode, struct bd_err *err);
/* Creates a new file (an existing one is an error, -EEXIST) and writes it
 * all, or removes it.  Not atomic: for a directory that this process has
 * just created and that no reader knows yet (a run's directory before the
 * run is recorded).  The mode is subject to the umask. */
int fs_write_new(const char *path, const void *data, size_t len, mode_t mode, struct bd_err *err);
/* Writes all of data to fd, again after EINTR and short writes: 0 or a
 * negative errno. */
int fs_write_all(int fd, const void *data, size_t len);
/* Reads len bytes at off (pread, retried): 0, a negative errno, or -EIO at the end of the file */
int fs_pread_all(int fd, void *buf, size_t len, off_t off);
/* Creates a directory and its parents (mode for new ones). */
int fs_mkdir_p(const char *path, mode_t mode);
/* path made absolute (from the working directory) and written one way: no
 * empty or "." components, no trailing '/' ("..": kept, it depends on links);
 * caller frees. */
char *fs_path_clean(const char *path);
/* Directory of the running executable (from /proc/self/exe), caller frees. */
char *fs_exe_dir(void);

#endif
