/* golden-bin.h: the named arrays of a golden.bin written by the PyTorch
 * generators (tests/ssd-golden.py, tests/maskrcnn-golden.py), for the
 * helper programs that compare with them.
 *
 * Format: "SSDGOLD1", u32 count, then per array: u16 name length, name, u8
 * type (0 f32, 1 i32, 2 f64), u8 ndim, i64 dims[ndim], little-endian
 * values.  One file per program: the arrays live in statics here.
 */
#ifndef BD_TESTS_GOLDEN_BIN_H
#define BD_TESTS_GOLDEN_BIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "macro.h"

enum { GB_F32, GB_I32, GB_F64 };

struct garr {
        char name[160];
        int type;                       /* GB_F32, GB_I32, GB_F64 */
        int ndim;
        int64_t dims[8], n;
        void *data;                     /* copied out of the file: aligned */
};

static struct garr *gb_arrs;
static int gb_narrs;

/* Reads path; -1 (a message on stdout as a TAP comment) when it is not a
 * well-formed golden file. */
static inline int gb_load(const char *path)
{
        char *buf;
        size_t len;
        struct bd_err err;
        if (fs_read_file(path, (size_t)1 << 31, &buf, &len, &err) < 0) {
                printf("# %s\n", err.msg);
                return -1;
        }
        if (len < 12 || memcmp(buf, "SSDGOLD1", 8) != 0) {
                printf("# %s: not a golden file\n", path);
                free(buf);
                return -1;
        }
        uint32_t count;
        memcpy(&count, buf + 8, 4);
        gb_arrs = xcalloc(count ? count : 1, sizeof(*gb_arrs));
        size_t at = 12;
        int bad = 0;
        for (uint32_t i = 0; i < count && !bad; i++) {
                struct garr *a = &gb_arrs[gb_narrs++];
                uint16_t nl;
                bad = at + 2 > len;
                if (!bad) {
                        memcpy(&nl, buf + at, 2);
                        at += 2;
                        bad = nl >= sizeof(a->name) || at + nl + 2 > len;
                }
                if (bad)
                        break;
                memcpy(a->name, buf + at, nl);
                at += nl;
                a->type = (unsigned char)buf[at++];
                a->ndim = (unsigned char)buf[at++];
                if (a->type > GB_F64 || a->ndim > 8 || at + 8 * (size_t)a->ndim > len) {
                        bad = 1;
                        break;
                }
                a->n = 1;
                for (int k = 0; k < a->ndim; k++) {
                        memcpy(&a->dims[k], buf + at, 8);
                        at += 8;
                        a->n *= a->dims[k];
                }
                size_t es = a->type == GB_F64 ? 8 : 4;
                if (a->n < 0 || at + es * (size_t)a->n > len) {
                        bad = 1;
                        break;
                }
                a->data = xmalloc(es * (size_t)a->n + 1);
                memcpy(a->data, buf + at, es * (size_t)a->n);
                at += es * (size_t)a->n;
        }
        free(buf);
        if (bad || at != len) {
                printf("# %s: truncated or malformed at byte %zu\n", path, at);
                return -1;
        }
        return 0;
}

static inline void gb_free(void)
{
        for (int i = 0; i < gb_narrs; i++)
                free(gb_arrs[i].data);
        free(gb_arrs);
        gb_arrs = NULL;
        gb_narrs = 0;
}

/* DIR/golden.bin, or a TAP failure and the end of the program. */
static inline void gb_open_dir(const char *dir)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/golden.bin", dir);
        if (gb_load(path) < 0) {
                printf("not ok 1 - %s is readable\n1..1\n", path);
                exit(1);
        }
}

/* The array called name, or NULL. */
static inline const struct garr *gb_find(const char *name)
{
        for (int i = 0; i < gb_narrs; i++)
                if (!strcmp(gb_arrs[i].name, name))
                        return &gb_arrs[i];
        return NULL;
}

/* The array called name of the given type; a missing or mistyped array
 * ends the program (the generator and the helper disagree). */
static inline const struct garr *gb_get(const char *name, int type)
{
        const struct garr *a = gb_find(name);
        if (!a || a->type != type) {
                printf("# golden.bin has no %s array '%s'\n", type == GB_F64 ? "f64" : type == GB_I32 ? "i32" : "f32",
                       name);
                printf("Bail out! golden.bin does not match this helper\n");
                exit(1);
        }
        return a;
}

#endif
