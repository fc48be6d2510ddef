/* fuzz-elfdyn.c: an ELF file's dynamic section (client/image/elfdyn.h), as
 * benchctl image build --cuda reads the trainers' and CUDA's libraries.
 *
 * Promises checked: an error names the file ("fuzz: ...") in one line, and
 * is -ENOEXEC (not ELF), -EINVAL (malformed) or -EIO; otherwise a needed
 * list, each name, the soname and the run path a NUL-terminated string of
 * the input; the same bytes read again give the same answer; a byte
 * appended to a file that parsed changes nothing. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "elfdyn.h"
#include "fuzz.h"
#include "strutil.h"

struct mem {
        const uint8_t *p;
        size_t n;
};

static int mem_read(void *ctx, void *buf, size_t len, uint64_t off)
{
        const struct mem *m = ctx;
        if (off > m->n || len > m->n - off)
                return -EIO;
        memcpy(buf, m->p + off, len);
        return 0;
}

/* s and its NUL are bytes of the input */
static bool in_input(const uint8_t *data, size_t size, const char *s)
{
        size_t l = strlen(s) + 1;
        return memmem(data, size, s, l) != NULL;
}

static bool same_str(const char *a, const char *b)
{
        return (!a && !b) || (a && b && streq(a, b));
}

static void same(const struct elf_dyn *a, const struct elf_dyn *b, int ra, int rb, const char *what)
{
        FUZZ_CHECK(ra == rb, "%s: %d then %d", what, ra, rb);
        if (ra < 0)
                return;
        FUZZ_CHECK(same_str(a->soname, b->soname) && same_str(a->runpath, b->runpath), "%s: soname/runpath differ",
                   what);
        for (size_t i = 0; a->needed[i] || b->needed[i]; i++)
                FUZZ_CHECK(a->needed[i] && b->needed[i] && streq(a->needed[i], b->needed[i]), "%s: needed %zu differs",
                           what, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct mem m = { data, size };
        struct elf_dyn d, again;
        struct bd_err err = { { 0 } }, err2;
        int r = elf_dyn_read(mem_read, &m, size, "fuzz", &d, &err);
        if (r < 0) {
                FUZZ_CHECK(r == -ENOEXEC || r == -EINVAL || r == -EIO, "error %d", r);
                FUZZ_CHECK(str_has_prefix(err.msg, "fuzz: ") && !strchr(err.msg, '\n'), "error '%s'", err.msg);
        } else {
                FUZZ_CHECK(d.needed, "no needed list");
                for (size_t i = 0; d.needed[i]; i++)
                        FUZZ_CHECK(in_input(data, size, d.needed[i]), "needed '%s' is not in the input", d.needed[i]);
                FUZZ_CHECK(!d.soname || in_input(data, size, d.soname), "soname not in the input");
                FUZZ_CHECK(!d.runpath || in_input(data, size, d.runpath), "run path not in the input");
        }
        int r2 = elf_dyn_read(mem_read, &m, size, "fuzz", &again, &err2);
        same(&d, &again, r, r2, "read twice");
        elf_dyn_free(&again);
        if (r == 0) {
                uint8_t *more = xmalloc(size + 1);
                memcpy(more, data, size);
                more[size] = 0x5a;
                struct mem m2 = { more, size + 1 };
                r2 = elf_dyn_read(mem_read, &m2, size + 1, "fuzz", &again, &err2);
                same(&d, &again, r, r2, "a byte appended");
                elf_dyn_free(&again);
                free(more);
        }
        elf_dyn_free(&d);
        return 0;
}
