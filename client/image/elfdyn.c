/* elfdyn.c: an ELF file's dynamic section (elfdyn.h).
 *
 * The program headers give the dynamic segment (PT_DYNAMIC) and the
 * loadable ones (PT_LOAD); the dynamic entries give the string table's
 * address (DT_STRTAB, an address, turned into a file offset through the
 * PT_LOAD segment that holds it) and size (DT_STRSZ), and the offsets in it
 * of DT_NEEDED, DT_SONAME, DT_RUNPATH and DT_RPATH.  Every count, offset and
 * size is checked against the file's size and a limit before it is used. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfdyn.h"
#include "fs.h"
#include "macro.h"
#include "strutil.h"

/* Limits no real file comes near */
#define ELF_MAX_PHNUM 4096
#define ELF_MAX_DYN 65536
#define ELF_MAX_STRSZ (64u << 20)
#define ELF_MAX_NEEDED 4096

static uint16_t le16(const unsigned char *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
        return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Whether [off, off + len) lies in a file of size bytes */
static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
        return off <= size && len <= size - off;
}

struct seg {
        uint64_t vaddr, offset, filesz;
};

/* The string at off of the string table, copied; NULL when it is not
 * NUL-terminated inside the table */
static char *str_at(const char *tab, uint64_t tabsz, uint64_t off)
{
        if (off >= tabsz)
                return NULL;
        const char *s = tab + off;
        const char *nul = memchr(s, '\0', tabsz - off);
        return nul ? xstrndup(s, (size_t)(nul - s)) : NULL;
}

void elf_dyn_free(struct elf_dyn *d)
{
        if (!d)
                return;
        for (size_t i = 0; d->needed && d->needed[i]; i++)
                free(d->needed[i]);
        free(d->needed);
        free(d->soname);
        free(d->runpath);
        memset(d, 0, sizeof(*d));
}

int elf_dyn_read(elf_read_fn rd, void *ctx, uint64_t size, const char *name, struct elf_dyn *ret,
                 struct bd_err *err)
{
        memset(ret, 0, sizeof(*ret));
        unsigned char eh[64];
        if (size < sizeof(eh) || rd(ctx, eh, sizeof(eh), 0) < 0 || memcmp(eh, ELFMAG, SELFMAG) != 0)
                return bd_err_set(err, -ENOEXEC, "%s: not an ELF file", name);
        if (eh[EI_CLASS] != ELFCLASS64 || eh[EI_DATA] != ELFDATA2LSB)
                return bd_err_set(err, -EINVAL, "%s: not a 64-bit little-endian ELF file (class %u, data %u)", name,
                                  eh[EI_CLASS], eh[EI_DATA]);
        uint64_t phoff = le64(eh + 32);
        uint16_t phentsize = le16(eh + 54), phnum = le16(eh + 56);
        if (phnum == 0) {       /* no program headers: a relocatable object, nothing to load */
                ret->needed = xcalloc(1, sizeof(*ret->needed));
                return 0;
        }
        if (phentsize < 56 || phnum > ELF_MAX_PHNUM || !in_file(phoff, (uint64_t)phentsize * phnum, size))
                return bd_err_set(err, -EINVAL, "%s: program headers (%u of %u bytes at %llu) outside the file", name,
                                  phnum, phentsize, (unsigned long long)phoff);
        size_t phsz = (size_t)phentsize * phnum;
        _cleanup_free_ unsigned char *ph = xmalloc(phsz);
        if (rd(ctx, ph, phsz, phoff) < 0)
                return bd_err_set(err, -EIO, "%s: cannot read the program headers", name);
        _cleanup_free_ struct seg *loads = xcalloc(phnum, sizeof(*loads));
        size_t nloads = 0;
        bool have_dyn = false;
        uint64_t dyn_off = 0, dyn_sz = 0;
        for (size_t i = 0; i < phnum; i++) {
                const unsigned char *p = ph + i * phentsize;
                uint32_t type = le32(p);
                uint64_t off = le64(p + 8), vaddr = le64(p + 16), filesz = le64(p + 32);
                if (type == PT_LOAD)
                        loads[nloads++] = (struct seg){ vaddr, off, filesz };
                else if (type == PT_DYNAMIC && !have_dyn) {
                        have_dyn = true;
                        dyn_off = off;
                        dyn_sz = filesz;
                }
        }
        if (!have_dyn) {        /* statically linked */
                ret->needed = xcalloc(1, sizeof(*ret->needed));
                return 0;
        }
        if (!in_file(dyn_off, dyn_sz, size) || dyn_sz / 16 > ELF_MAX_DYN)
                return bd_err_set(err, -EINVAL, "%s: dynamic section (%llu bytes at %llu) outside the file", name,
                                  (unsigned long long)dyn_sz, (unsigned long long)dyn_off);
        size_t ndyn = (size_t)(dyn_sz / 16);
        _cleanup_free_ unsigned char *dyn = xmalloc(ndyn * 16 + 1);
        if (ndyn && rd(ctx, dyn, ndyn * 16, dyn_off) < 0)
                return bd_err_set(err, -EIO, "%s: cannot read the dynamic section", name);
        uint64_t strtab = 0, strsz = 0;
        bool have_strtab = false, have_strsz = false;
        size_t nneeded = 0;
        for (size_t i = 0; i < ndyn; i++) {
                int64_t tag = (int64_t)le64(dyn + i * 16);
                uint64_t val = le64(dyn + i * 16 + 8);
                if (tag == DT_NULL)
                        break;
                if (tag == DT_STRTAB)
                        strtab = val, have_strtab = true;
                else if (tag == DT_STRSZ)
                        strsz = val, have_strsz = true;
                else if (tag == DT_NEEDED)
                        nneeded++;
        }
        if (nneeded > ELF_MAX_NEEDED)
                return bd_err_set(err, -EINVAL, "%s: %zu needed libraries (at most %d)", name, nneeded,
                                  ELF_MAX_NEEDED);
        ret->needed = xcalloc(nneeded + 1, sizeof(*ret->needed));
        if (!have_strtab || !have_strsz) {
                if (nneeded == 0)
                        return 0;
                elf_dyn_free(ret);
                return bd_err_set(err, -EINVAL, "%s: dynamic section without a string table", name);
        }
        if (strsz > ELF_MAX_STRSZ) {
                elf_dyn_free(ret);
                return bd_err_set(err, -EINVAL, "%s: string table of %llu bytes (at most %u)", name,
                                  (unsigned long long)strsz, ELF_MAX_STRSZ);
        }
        /* the table's address to its file offset */
        uint64_t str_off = 0;
        bool mapped = false;
        for (size_t i = 0; i < nloads && !mapped; i++)
                if (strtab >= loads[i].vaddr && strtab - loads[i].vaddr < loads[i].filesz &&
                    strsz <= loads[i].filesz - (strtab - loads[i].vaddr) &&
                    loads[i].offset <= UINT64_MAX - (strtab - loads[i].vaddr)) {
                        str_off = loads[i].offset + (strtab - loads[i].vaddr);
                        mapped = true;
                }
        if (!mapped || !in_file(str_off, strsz, size)) {
                elf_dyn_free(ret);
                return bd_err_set(err, -EINVAL, "%s: string table (address 0x%llx, %llu bytes) in no loaded segment "
                                  "of the file", name, (unsigned long long)strtab, (unsigned long long)strsz);
        }
        _cleanup_free_ char *tab = xmalloc((size_t)strsz + 1);
        if (strsz && rd(ctx, tab, (size_t)strsz, str_off) < 0) {
                elf_dyn_free(ret);
                return bd_err_set(err, -EIO, "%s: cannot read the string table", name);
        }
        tab[strsz] = '\0';
        char *rpath = NULL;
        size_t k = 0;
        for (size_t i = 0; i < ndyn; i++) {
                int64_t tag = (int64_t)le64(dyn + i * 16);
                uint64_t val = le64(dyn + i * 16 + 8);
                if (tag == DT_NULL)
                        break;
                if (tag != DT_NEEDED && tag != DT_SONAME && tag != DT_RUNPATH && tag != DT_RPATH)
                        continue;
                char *s = str_at(tab, strsz, val);
                if (!s) {
                        free(rpath);
                        elf_dyn_free(ret);
                        return bd_err_set(err, -EINVAL, "%s: dynamic entry %zu names offset %llu of a %llu-byte "
                                          "string table", name, i, (unsigned long long)val,
                                          (unsigned long long)strsz);
                }
                char **slot = tag == DT_NEEDED ? &ret->needed[k++]
                              : tag == DT_SONAME ? &ret->soname
                              : tag == DT_RUNPATH ? &ret->runpath : &rpath;
                free(*slot);
                *slot = s;
        }
        if (!ret->runpath)
                ret->runpath = rpath;
        else
                free(rpath);
        return 0;
}

static int fd_read(void *ctx, void *buf, size_t len, uint64_t off)
{
        return off > (uint64_t)INT64_MAX ? -EIO : fs_pread_all(*(int *)ctx, buf, len, (off_t)off);
}

int elf_dyn_file(const char *path, struct elf_dyn *ret, struct bd_err *err)
{
        memset(ret, 0, sizeof(*ret));
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "%s: %s", path, strerror(errno));
        struct stat st;
        int r;
        if (fstat(fd, &st) < 0)
                r = bd_err_set(err, -errno, "%s: %s", path, strerror(errno));
        else if (!S_ISREG(st.st_mode))
                r = bd_err_set(err, -ENOEXEC, "%s: not a regular file", path);
        else
                r = elf_dyn_read(fd_read, &fd, (uint64_t)st.st_size, path, ret, err);
        close(fd);
        return r;
}
