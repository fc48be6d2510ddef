/* randfile.h: test files of pseudo-random bytes (rand_r from a seed). */
#ifndef BD_RANDFILE_H
#define BD_RANDFILE_H

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* Writes size bytes from seed to path (created or truncated); aborts on error. */
static inline void write_random_file(const char *path, size_t size, unsigned seed)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                abort();
        unsigned char buf[4096];
        for (size_t done = 0; done < size;) {
                size_t n = size - done < sizeof(buf) ? size - done : sizeof(buf);
                for (size_t i = 0; i < n; i++)
                        buf[i] = (unsigned char)(rand_r(&seed) >> 7);
                if (write(fd, buf, n) != (ssize_t)n)
                        abort();
                done += n;
        }
        if (close(fd) < 0)
                abort();
}

#endif
