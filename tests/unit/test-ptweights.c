/* test-ptweights.c: client/weights/ on hand-built bytes: the pickle
 * interpreter (each opcode torch writes, memo, marks, the allowed globals
 * and the refused ones, limits, truncation), the zip reader (stored
 * entries, data descriptors, padding, zip64 records and extra fields, a
 * comment; every damaged offset refused), state dicts in both formats
 * (storage offsets, strides, views, duplicate names, wrappers, expanded
 * tensors), half and bfloat16 conversion, and weights files written, read
 * back and described.  Files torch itself writes: t0535-weights-convert.t. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdw.h"
#include "crc32.h"
#include "fs.h"
#include "pickle.h"
#include "ptload.h"
#include "tap.h"
#include "zipread.h"

/* ---- bytes ---------------------------------------------------------------------------------- */

struct bytes {
        unsigned char *p;
        size_t n, cap;
};

static void put(struct bytes *b, const void *d, size_t n)
{
        if (b->n + n > b->cap) {
                b->cap = (b->n + n) * 2 + 64;
                b->p = xrealloc(b->p, b->cap);
        }
        memcpy(b->p + b->n, d, n);
        b->n += n;
}

static void put_u(struct bytes *b, uint64_t v, int n)
{
        for (int i = 0; i < n; i++, v >>= 8) {
                unsigned char c = (unsigned char)v;
                put(b, &c, 1);
        }
}

static void op(struct bytes *b, unsigned char c)
{
        put(b, &c, 1);
}

/* a literal's bytes, NULs included */
#define ops(b, lit) put((b), "" lit, sizeof(lit) - 1)

/* ---- pickles --------------------------------------------------------------------------------- */

static void p_str(struct bytes *b, const char *s)
{
        op(b, 'X');
        put_u(b, strlen(s), 4);
        put(b, s, strlen(s));
}

static void p_int(struct bytes *b, int32_t v)
{
        op(b, 'J');
        put_u(b, (uint32_t)v, 4);
}

static void p_global(struct bytes *b, const char *module, const char *name)
{
        op(b, 'c');
        put(b, module, strlen(module));
        op(b, '\n');
        put(b, name, strlen(name));
        op(b, '\n');
}

static void p_ints(struct bytes *b, int n, const int32_t *v)
{
        op(b, '(');
        for (int i = 0; i < n; i++)
                p_int(b, v[i]);
        op(b, 't');
}

/* torch's tensor: _rebuild_tensor_v2((pid), offset, size, stride, False, OrderedDict()) */
struct ten {
        const char *key, *storage;
        int32_t numel, offset;
        int nd;
        int32_t size[4], stride[4];
        bool legacy;            /* a sixth pid element, the view: None */
};

static void p_tensor(struct bytes *b, const struct ten *t)
{
        p_global(b, "torch._utils", "_rebuild_tensor_v2");
        op(b, '(');
        op(b, '(');
        p_str(b, "storage");
        p_global(b, "torch", t->storage);
        p_str(b, t->key);
        p_str(b, "cpu");
        p_int(b, t->numel);
        if (t->legacy)
                op(b, 'N');
        op(b, 't');
        op(b, 'Q');
        p_int(b, t->offset);
        p_ints(b, t->nd, t->size);
        p_ints(b, t->nd, t->stride);
        op(b, 0x89);
        p_global(b, "collections", "OrderedDict");
        op(b, ')');
        op(b, 'R');
        op(b, 't');
        op(b, 'R');
}

static void p_dict_begin(struct bytes *b)
{
        ops(b, "\x80\x02");
        p_global(b, "collections", "OrderedDict");
        ops(b, ")R(");
}

static void p_dict_end(struct bytes *b)
{
        ops(b, "u.");
}

struct run {
        int r;
        struct pk_value *v;
        size_t end;
        int protocol;
        struct bd_err err;
};

static struct run run(struct pk_arena *a, const struct bytes *b)
{
        struct run x = { 0 };
        x.r = pk_load(a, b->p, b->n, 0, &x.v, &x.end, &x.protocol, &x.err);
        return x;
}

/* runs literal bytes: 0 or the error, whose message must hold want */
static void refused(const char *bytes, size_t n, int want_r, const char *want, const char *what)
{
        struct pk_arena a = PK_ARENA_INIT;
        struct bytes b = { 0 };
        put(&b, bytes, n);
        struct run x = run(&a, &b);
        is_int(x.r, want_r, what);
        like(x.r < 0 ? x.err.msg : "", want, what);
        pk_arena_release(&a);
        free(b.p);
}
#define REFUSED(lit, r, want, what) refused(lit, sizeof(lit) - 1, r, want, what)

static void test_pickle_values(void)
{
        struct pk_arena a = PK_ARENA_INIT;
        struct bytes b = { 0 };
        /* (255, 65535, -2, LONG1 2^63-1, LONG1 -2^63, 9 bytes of -1, 10 bytes, 1.5, True, None, 'é', b'ab') */
        ops(&b, "\x80\x02(K\xffM\xff\xffJ\xfe\xff\xff\xff");
        ops(&b, "\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f");
        op(&b, 0x8a), op(&b, 8), put(&b, "\0\0\0\0\0\0\0\x80", 8);
        ops(&b, "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xff");
        op(&b, 0x8a), op(&b, 10), put(&b, "\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10);
        ops(&b, "G\x3f\xf8\0\0\0\0\0\0");
        ops(&b, "\x88N\x8c\x02\xc3\xa9U\x02" "abt.");
        struct run x = run(&a, &b);
        is_int(x.r, 0, "values: runs");
        is_int(x.protocol, 2, "values: protocol 2");
        is_int(x.end, b.n, "values: ends after STOP");
        ok(x.v && x.v->kind == PK_TUPLE && x.v->u.seq.n == 12, "values: a tuple of 12");
        if (x.r == 0 && x.v->u.seq.n == 12) {
                struct pk_value **v = x.v->u.seq.v;
                is_int(v[0]->u.i, 255, "BININT1");
                is_int(v[1]->u.i, 65535, "BININT2");
                is_int(v[2]->u.i, -2, "BININT: signed");
                ok(v[3]->kind == PK_INT && v[3]->u.i == INT64_MAX, "LONG1 of 8 bytes: 2^63 - 1");
                ok(v[4]->kind == PK_INT && v[4]->u.i == INT64_MIN, "LONG1 of 8 bytes: -2^63");
                ok(v[5]->kind == PK_INT && v[5]->u.i == -1, "LONG1 of 9 bytes that fits: -1");
                ok(v[6]->kind == PK_BIGINT && v[6]->u.str.len == 10, "LONG1 of 10 bytes: a big int (torch's magic)");
                ok(v[7]->kind == PK_FLOAT && v[7]->u.f == 1.5, "BINFLOAT: big-endian 1.5");
                ok(v[8]->kind == PK_BOOL && v[8]->u.b, "NEWTRUE");
                ok(v[9]->kind == PK_NONE, "NONE");
                ok(pk_is_str(v[10], "\xc3\xa9"), "SHORT_BINUNICODE: UTF-8");
                ok(pk_is_str(v[11], "ab"), "SHORT_BINSTRING");
        }
        pk_arena_release(&a);
        free(b.p);

        /* memo, marks, dicts and lists; protocol 4's opcodes */
        b = (struct bytes){ 0 };
        ops(&b, "\x80\x04\x95\x30\0\0\0\0\0\0\0}q\x05(X\x01\0\0\0a]\x94(K\x01K\x02" "e\x8c\x01" "b\x8c\x01" "b\x85q\x07uh\x05X\x01\0\0\0c");
        ops(&b, "h\x07sj\x05\0\0\0r\xff\xff\x0f\0h\x05\x86.");
        x = run(&a, &b);
        is_int(x.r, 0, "memo and marks: runs");
        is_int(x.protocol, 4, "  protocol 4");
        ok(x.r == 0 && x.v->kind == PK_TUPLE && x.v->u.seq.n == 2 && x.v->u.seq.v[0] == x.v->u.seq.v[1],
           "  BINGET gives the same value twice");
        struct pk_value *d = x.r == 0 ? x.v->u.seq.v[0] : NULL;
        ok(d && d->kind == PK_DICT && d->u.seq.n == 6, "  a dict of 3 items");
        struct pk_value *l = pk_dict_get(d, "a");
        ok(l && l->kind == PK_LIST && l->u.seq.n == 2 && l->u.seq.v[1]->u.i == 2, "  'a': a list through APPENDS");
        struct pk_value *t = pk_dict_get(d, "b");
        ok(t && t->kind == PK_TUPLE && t->u.seq.n == 1 && pk_is_str(t->u.seq.v[0], "b"),
           "  'b': a TUPLE1 (after a MEMOIZE)");
        ok(pk_dict_get(d, "c") == t, "  'c': the memo's tuple again (SETITEM)");
        ok(!pk_dict_get(d, "z"), "  no 'z'");
        pk_arena_release(&a);
        free(b.p);
}

static void test_pickle_errors(void)
{
        REFUSED("\x80\x02" "cos\nsystem\n(X\x04\0\0\0truetR.", -EPERM,
                "byte 2: global 'os.system' is not one a state dict uses (GLOBAL)", "os.system refused");
        REFUSED("\x80\x02" "cposix\nsystem\n.", -EPERM, "'posix.system'", "posix.system refused");
        REFUSED("\x80\x04\x8c\x08" "builtins\x8c\x04" "eval\x93.", -EPERM, "byte 18: global 'builtins.eval'",
                "STACK_GLOBAL builtins.eval refused");
        REFUSED("\x80\x02" "ctorch\nFloatStorage\n)R.", -EPERM, "calling the storage class torch.FloatStorage",
                "a storage class is not called");
        REFUSED("\x80\x02" "ctorch\nTensor\n.", -EPERM, "'torch.Tensor'", "other torch globals refused");
        REFUSED("\x80\x02(i__main__\nX\n.", -EBADMSG, "byte 3: opcode 0x69 is not one a state dict uses (INST)",
                "INST refused, named with its byte");
        REFUSED("\x80\x02\x81.", -EBADMSG, "(NEWOBJ)", "NEWOBJ refused");
        REFUSED("\x80\x02\xff.", -EBADMSG, "opcode 0xff", "an unknown opcode refused");
        REFUSED("\x80\x06.", -EBADMSG, "protocol 6", "protocol 6 refused");
        REFUSED("\x80\x02X\xff\0\0\0abc.", -EBADMSG, "byte 2: the pickle ends inside its opcode (BINUNICODE)",
                "a string past the end");
        REFUSED("\x80\x02T\xff\xff\xff\xff.", -EBADMSG, "a negative length", "BINSTRING of a negative length");
        REFUSED("\x80\x02\x8c\x02\xc3(.", -EBADMSG, "not UTF-8", "a string that is not UTF-8");
        REFUSED("\x80\x02\x8c\x02" "a\0.", -EBADMSG, "NUL", "a string holding NUL");
        REFUSED("\x80\x02h\x03.", -EBADMSG, "byte 2: memo 3 is not set (BINGET)", "BINGET of an unset memo");
        REFUSED("\x80\x02)r\0\0\x10\0.", -E2BIG, "memo index 1048576", "LONG_BINPUT beyond the memo's limit");
        REFUSED("\x80\x02q\0.", -EBADMSG, "stack underflow (BINPUT)", "BINPUT of an empty stack");
        REFUSED("\x80\x02K\x01(\x85.", -EBADMSG, "byte 5: stack underflow (TUPLE1)", "TUPLE1 does not pop past a mark");
        REFUSED("\x80\x02K\x01t.", -EBADMSG, "no mark (TUPLE)", "TUPLE without a mark");
        REFUSED("\x80\x02}(K\x01u.", -EBADMSG, "an odd number", "SETITEMS of an odd count");
        REFUSED("\x80\x02}(K\x01" "e.", -EBADMSG, "adding to a dict, not a list (APPENDS)", "APPENDS to a dict");
        REFUSED("\x80\x02]K\x01K\x02s.", -EBADMSG, "adding to a list, not a dict (SETITEM)", "SETITEM to a list");
        REFUSED("\x80\x02K\x01)R.", -EBADMSG, "calling a int", "REDUCE of an int");
        REFUSED("\x80\x02K\x01K\x02" "b.", -EBADMSG, "setting the state of a int", "BUILD on an int");
        REFUSED("\x80\x02" "ccollections\nOrderedDict\nK\x01\x85R.", -EBADMSG, "OrderedDict of 1 arguments",
                "OrderedDict(1)");
        REFUSED("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\nK\x01\x85R.", -EBADMSG, "with 1 arguments",
                "_rebuild_tensor_v2 of 1 argument");
        REFUSED("\x80\x02(X\x07\0\0\0storageK\x01X\x01\0\0\0" "0X\x03\0\0\0cpuK\x01tQ.", -EBADMSG,
                "a storage whose type is no storage class", "a persistent id of no storage class");
        REFUSED("\x80\x02K\x01Q.", -EBADMSG, "not a storage's tuple (a int)", "a persistent id of an int");
        REFUSED("\x80\x02K\x01", -EBADMSG, "byte 4: the pickle ends before its STOP", "no STOP");
        REFUSED("\x80\x02\x95\xff\0\0\0\0\0\0\0.", -EBADMSG, "a frame past the end", "a frame past the end");
        REFUSED("\x80\x02.", -EBADMSG, "stack underflow (STOP)", "STOP of an empty stack");

        /* 256 marks open are allowed, not 257 */
        struct bytes b = { 0 };
        ops(&b, "\x80\x02");
        for (int i = 0; i < PK_MAX_MARKS + 1; i++)
                op(&b, '(');
        op(&b, '.');
        refused((const char *)b.p, b.n, -E2BIG, "more than 256 marks open", "marks beyond the limit");
        /* a copy of a list costs its length: a list of 1000 pairs copied
         * into OrderedDicts until the arena's limit */
        b.n = 0;
        ops(&b, "\x80\x02]q\x01(");
        for (int i = 0; i < 1000; i++)
                ops(&b, "K\x01K\x02\x86");
        ops(&b, "e");
        p_global(&b, "collections", "OrderedDict");
        ops(&b, "q\x02h\x01\x85q\x03");
        for (int i = 0; i < PK_MAX_CELLS / 2000 + 10; i++)
                ops(&b, "h\x02h\x03R");
        op(&b, '.');
        refused((const char *)b.p, b.n, -E2BIG, "more than 4194304 values and items", "copies of a list: limited");
        free(b.p);
}

static void test_pickle_tensors(void)
{
        struct pk_arena a = PK_ARENA_INIT;
        struct bytes b = { 0 };
        p_dict_begin(&b);
        p_str(&b, "w");
        p_tensor(&b, &(struct ten){ "7", "HalfStorage", 10, 2, 2, { 2, 3 }, { 1, 2 }, false });
        p_str(&b, "p");
        /* an nn.Parameter */
        p_global(&b, "torch._utils", "_rebuild_parameter");
        op(&b, '(');
        p_tensor(&b, &(struct ten){ "8", "DoubleStorage", 4, 0, 1, { 4 }, { 1 }, false });
        ops(&b, "\x88");
        p_global(&b, "collections", "OrderedDict");
        ops(&b, ")RtR");
        p_dict_end(&b);
        struct run x = run(&a, &b);
        is_int(x.r, 0, "a state dict: runs");
        struct pk_value *w = pk_dict_get(x.v, "w"), *p = pk_dict_get(x.v, "p");
        ok(w && w->kind == PK_TENSOR, "  'w' is a tensor");
        if (w && w->kind == PK_TENSOR) {
                const struct pk_tensor *t = w->u.tensor;
                ok(t->storage.dtype == PK_DT_F16 && streq(t->storage.key, "7") && t->storage.numel == 10,
                   "  its storage: float16, key '7', 10 elements");
                ok(t->offset == 2 && t->ndim == 2 && t->size[0] == 2 && t->size[1] == 3 && t->stride[0] == 1 &&
                   t->stride[1] == 2, "  offset 2, size (2, 3), stride (1, 2)");
                ok(!t->parameter, "  not a parameter");
        }
        ok(p && p->kind == PK_TENSOR && p->u.tensor->parameter && p->u.tensor->requires_grad &&
           p->u.tensor->storage.dtype == PK_DT_F64, "  'p': _rebuild_parameter's float64 tensor, requires_grad");
        is_int(a.nstorages, 2, "  2 persistent ids recorded");
        pk_arena_release(&a);

        /* Python 2: OrderedDict([[k, v], ...]), BINSTRING names, the legacy pid's view */
        b.n = 0;
        ops(&b, "\x80\x02");
        p_global(&b, "collections", "OrderedDict");
        ops(&b, "](](U\x01" "a");
        p_tensor(&b, &(struct ten){ "k", "FloatStorage", 1, 0, 0, { 0 }, { 0 }, true });
        ops(&b, "e](T\x01\0\0\0" "bK\x05" "ee\x85R.");
        x = run(&a, &b);
        is_int(x.r, 0, "Python 2's OrderedDict of pairs: runs");
        ok(x.r == 0 && x.v->kind == PK_DICT && x.v->u.seq.n == 4, "  a dict of 2");
        w = pk_dict_get(x.v, "a");
        ok(w && w->kind == PK_TENSOR && w->u.tensor->ndim == 0, "  'a': a scalar tensor");
        p = pk_dict_get(x.v, "b");
        ok(p && p->kind == PK_INT && p->u.i == 5, "  'b': 5");
        pk_arena_release(&a);

        /* a legacy view: (view key, offset, size) within the root */
        b.n = 0;
        ops(&b, "\x80\x02(X\x07\0\0\0storage");
        p_global(&b, "torch", "FloatStorage");
        ops(&b, "X\x01\0\0\0rX\x03\0\0\0cpuK\x0a(X\x01\0\0\0vK\x03K\x04ttQ.");
        x = run(&a, &b);
        ok(x.r == 0 && x.v->kind == PK_STORAGE && x.v->u.storage.view_offset == 3 && x.v->u.storage.view_numel == 4 &&
           x.v->u.storage.numel == 10, "a legacy view: 4 elements from the root's 3rd of 10");
        pk_arena_release(&a);
        b.n = 0;
        ops(&b, "\x80\x02(X\x07\0\0\0storage");
        p_global(&b, "torch", "FloatStorage");
        ops(&b, "X\x01\0\0\0rX\x03\0\0\0cpuK\x0a(X\x01\0\0\0vK\x08K\x04ttQ.");
        x = run(&a, &b);
        like(x.r < 0 ? x.err.msg : "", "a view's size 4 out of range", "a view past its root refused");
        pk_arena_release(&a);
        /* 9 dimensions: more than the weights files take */
        static const int32_t nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
        b.n = 0;
        ops(&b, "\x80\x02");
        p_global(&b, "torch._utils", "_rebuild_tensor_v2");
        ops(&b, "((");
        p_str(&b, "storage");
        p_global(&b, "torch", "FloatStorage");
        p_str(&b, "0");
        p_str(&b, "cpu");
        p_int(&b, 1);
        ops(&b, "tQ");
        p_int(&b, 0);
        p_ints(&b, 9, nine);
        p_ints(&b, 9, nine);
        ops(&b, "\x89NtR.");
        x = run(&a, &b);
        is_int(x.r, -E2BIG, "a tensor of 9 dimensions refused");
        like(x.r < 0 ? x.err.msg : "", "a tensor of 9 dimensions (at most 8) (REDUCE)", "  saying so");
        pk_arena_release(&a);
        free(b.p);
}

/* ---- zip --------------------------------------------------------------------------------------- */

struct zent {
        const char *name;
        const void *data;
        size_t size;
};

enum {
        Z_ZIP64 = 1 << 0,       /* zip64 end record and locator */
        Z_DESCRIPTOR = 1 << 1,  /* sizes in a data descriptor, 0 in the local header */
        Z_PAD = 1 << 2,         /* torch's "FB" extra field: data at multiples of 64 */
        Z_COMMENT = 1 << 3,     /* an archive comment */
        Z_EXTRA64 = 1 << 4,     /* sizes and offsets in zip64 extra fields */
};

/* a zip of stored entries; *cd_at: where the central directory starts */
static struct bytes make_zip(const struct zent *e, size_t n, unsigned flags, size_t *cd_at)
{
        struct bytes z = { 0 };
        size_t off[16];
        for (size_t i = 0; i < n; i++) {
                off[i] = z.n;
                uint32_t crc = bd_crc32(0, e[i].data, e[i].size);
                size_t nl = strlen(e[i].name), pad = 0;
                if (flags & Z_PAD)
                        pad = (64 - (z.n + 30 + nl + 4) % 64) % 64 + 4;
                put_u(&z, 0x04034b50, 4);
                put_u(&z, 20, 2);
                put_u(&z, flags & Z_DESCRIPTOR ? 0x808 : 0, 2);
                put_u(&z, 0, 2 + 2 + 2);
                put_u(&z, flags & Z_DESCRIPTOR ? 0 : crc, 4);
                put_u(&z, flags & Z_DESCRIPTOR ? 0 : e[i].size, 4);
                put_u(&z, flags & Z_DESCRIPTOR ? 0 : e[i].size, 4);
                put_u(&z, nl, 2);
                put_u(&z, pad, 2);
                put(&z, e[i].name, nl);
                if (pad) {
                        ops(&z, "FB");
                        put_u(&z, pad - 4, 2);
                        for (size_t k = 0; k < pad - 4; k++)
                                op(&z, 'Z');
                }
                put(&z, e[i].data, e[i].size);
                if (flags & Z_DESCRIPTOR) {
                        put_u(&z, 0x08074b50, 4);
                        put_u(&z, crc, 4);
                        put_u(&z, e[i].size, 4);
                        put_u(&z, e[i].size, 4);
                }
        }
        size_t cd = z.n;
        for (size_t i = 0; i < n; i++) {
                size_t nl = strlen(e[i].name);
                bool x64 = flags & Z_EXTRA64;
                put_u(&z, 0x02014b50, 4);
                put_u(&z, 0x031e, 2);
                put_u(&z, 20, 2);
                put_u(&z, flags & Z_DESCRIPTOR ? 0x808 : 0, 2);
                put_u(&z, 0, 2 + 2 + 2);
                put_u(&z, bd_crc32(0, e[i].data, e[i].size), 4);
                put_u(&z, x64 ? 0xffffffff : e[i].size, 4);
                put_u(&z, x64 ? 0xffffffff : e[i].size, 4);
                put_u(&z, nl, 2);
                put_u(&z, x64 ? 28 : 0, 2);
                put_u(&z, 0, 2 + 2 + 2 + 4);
                put_u(&z, x64 ? 0xffffffff : off[i], 4);
                put(&z, e[i].name, nl);
                if (x64) {
                        put_u(&z, 1, 2);
                        put_u(&z, 24, 2);
                        put_u(&z, e[i].size, 8);
                        put_u(&z, e[i].size, 8);
                        put_u(&z, off[i], 8);
                }
        }
        size_t cd_size = z.n - cd;
        if (flags & Z_ZIP64) {
                size_t at = z.n;
                put_u(&z, 0x06064b50, 4);
                put_u(&z, 44, 8);
                put_u(&z, 0x031e, 2);
                put_u(&z, 45, 2);
                put_u(&z, 0, 4 + 4);
                put_u(&z, n, 8);
                put_u(&z, n, 8);
                put_u(&z, cd_size, 8);
                put_u(&z, cd, 8);
                put_u(&z, 0x07064b50, 4);
                put_u(&z, 0, 4);
                put_u(&z, at, 8);
                put_u(&z, 1, 4);
        }
        put_u(&z, 0x06054b50, 4);
        put_u(&z, 0, 2 + 2);
        put_u(&z, flags & Z_ZIP64 ? 0xffff : n, 2);
        put_u(&z, flags & Z_ZIP64 ? 0xffff : n, 2);
        put_u(&z, flags & Z_ZIP64 ? 0xffffffff : cd_size, 4);
        put_u(&z, flags & Z_ZIP64 ? 0xffffffff : cd, 4);
        put_u(&z, flags & Z_COMMENT ? 7 : 0, 2);
        if (flags & Z_COMMENT)
                ops(&z, "comment");
        if (cd_at)
                *cd_at = cd;
        return z;
}

static void zip_refused(struct bytes *z, const char *want, const char *what)
{
        struct zip_archive a;
        struct bd_err err = { { 0 } };
        int r = zip_read(z->p, z->n, &a, &err);
        is_int(r, -EBADMSG, what);
        like(err.msg, want, what);
        if (r == 0)
                zip_release(&a);
}

static void test_zip(void)
{
        is_int(bd_crc32(0, "123456789", 9), 0xcbf43926, "CRC-32 of '123456789'");
        is_int(bd_crc32(bd_crc32(0, "1234", 4), "56789", 5), 0xcbf43926, "  continued");
        static const char big[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdefXYZ";
        const struct zent ents[] = {
                { "a/data.pkl", "pkl", 3 }, { "a/data/0", big, sizeof(big) - 1 }, { "a/version", "3\n", 2 },
                { "a/empty", "", 0 },
        };
        static const unsigned kinds[] = { 0, Z_PAD | Z_DESCRIPTOR | Z_ZIP64, Z_EXTRA64 | Z_ZIP64, Z_COMMENT };
        static const char *const kind_names[] = { "plain", "torch's (padding, descriptors, zip64 records)",
                                                   "zip64 extra fields", "with a comment" };
        for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
                struct bytes z = make_zip(ents, ARRAY_SIZE(ents), kinds[k], NULL);
                struct zip_archive a;
                struct bd_err err;
                char what[160];
                int r = zip_read(z.p, z.n, &a, &err);
                snprintf(what, sizeof(what), "zip %s: read", kind_names[k]);
                is_int(r, 0, what);
                if (r < 0) {
                        printf("# %s\n", err.msg);
                        free(z.p);
                        continue;
                }
                is_int(a.n, 4, "  4 entries");
                const struct zip_entry *e = zip_find(&a, "a/data/0");
                ok(e && e->size == sizeof(big) - 1 && !memcmp(z.p + e->offset, big, sizeof(big) - 1),
                   "  an entry's data where the directory says");
                if (kinds[k] & Z_PAD)
                        ok(e && e->offset % 64 == 0, "  padded to 64 bytes");
                ok(e && zip_check_crc(z.p, e, &err) == 0, "  its CRC-32 checks");
                e = zip_find(&a, "a/empty");
                ok(e && e->size == 0, "  an empty entry");
                ok(!zip_find(&a, "a/data/1") && !zip_find(&a, "a"), "  no other names");
                zip_release(&a);
                free(z.p);
        }

        /* damage, one offset at a time */
        size_t cd;
        struct bytes z = make_zip(ents, 2, Z_ZIP64, &cd);
        struct bytes c = { 0 };
        put(&c, z.p, z.n - 1);
        zip_refused(&c, "no end of central directory record", "truncated by a byte");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[c.n - 43] ^= 0xff;       /* the zip64 end record's central directory offset, its top byte */
        zip_refused(&c, "is not within the archive", "a central directory offset beyond the archive");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[c.n - 22 - 20 + 8] += 1;  /* the locator's pointer */
        zip_refused(&c, "points to no zip64 end record", "a zip64 locator off by one");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[cd + 10] = 8;             /* deflated */
        zip_refused(&c, "entry 'a/data.pkl' is compressed (method 8)", "a compressed entry");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[cd + 8] |= 1;             /* encrypted */
        zip_refused(&c, "is encrypted", "an encrypted entry");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[cd + 46 + 10 + 42] = 1;   /* the second entry's local header offset */
        zip_refused(&c, "entry 'a/data/0': no local header at byte 1", "a local header offset that points elsewhere");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[cd + 46 + 10 + 20] = c.p[cd + 46 + 10 + 24] = 0xf0;       /* its size */
        zip_refused(&c, "run past the start of the central directory", "an entry past the directory");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[cd + 46 + 10 + 46 + 2] = 'X';     /* another name than the local header's */
        zip_refused(&c, "its local header (byte ", "a name the local header does not repeat");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[cd + 46 + 3] = 0;         /* a NUL in the first name */
        zip_refused(&c, "entry 0 has a name of 10 bytes holding a NUL", "a name holding NUL");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[cd + 28] = 0xff;          /* a name running past the directory */
        zip_refused(&c, "runs past the directory's end", "a name past the directory");
        c.n = 0;
        put(&c, z.p, z.n);
        c.p[cd] = 'X';
        zip_refused(&c, "no central directory entry 0 of 2", "a directory entry's signature");
        free(z.p);
        const struct zent twice[] = { { "a/x", "1", 1 }, { "a/x", "2", 1 } };
        z = make_zip(twice, 2, 0, NULL);
        zip_refused(&z, "two entries named 'a/x'", "a name twice");
        free(z.p);
        z = make_zip(ents, 1, Z_EXTRA64 | Z_ZIP64, &cd);
        z.p[cd + 30] = 20;            /* an extra field too short for its 3 values */
        zip_refused(&z, "a bad zip64 extra field", "a zip64 extra field that is short");
        free(z.p);
        z = make_zip(ents, 1, 0, &cd);
        z.p[z.n - 14] = z.p[z.n - 12] = 7;    /* 7 entries in the end record */
        zip_refused(&z, "7 entries in a central directory of", "more entries than the directory holds");
        struct zip_archive a;
        struct bd_err err;
        z.p[z.n - 14] = z.p[z.n - 12] = 1;
        z.p[40] ^= 1;                 /* a byte of the pickle */
        if (zip_read(z.p, z.n, &a, &err) == 0) {
                like(zip_check_crc(z.p, &a.e[0], &err) < 0 ? err.msg : "", "CRC-32", "a changed byte: CRC mismatch");
                zip_release(&a);
        }
        free(z.p);
        free(c.p);
}

/* ---- state dicts ------------------------------------------------------------------------------ */

struct load {
        int r;
        struct pt_file f;
        struct bd_err err;
};

static struct load load(const struct bytes *b)
{
        struct load l = { 0 };
        l.r = pt_load_mem(b->p, b->n, "t.pth", &l.f, &l.err);
        return l;
}

static struct bytes zip_of(const struct bytes *pkl, const void *data, size_t size)
{
        const struct zent e[] = { { "arc/data.pkl", pkl->p, pkl->n }, { "arc/data/0", data, size },
                                  { "arc/version", "3\n", 2 }, { "arc/byteorder", "little", 6 } };
        return make_zip(e, ARRAY_SIZE(e), Z_PAD | Z_DESCRIPTOR | Z_ZIP64, NULL);
}

static void values(const struct pt_tensor *t, float *out)
{
        pt_tensor_f32(t, 0, t->numel, out);
}

static void zip_refused_pt(const struct ten *t, const void *data, size_t size, const char *want, const char *what)
{
        struct bytes p = { 0 };
        p_dict_begin(&p);
        p_str(&p, "w");
        p_tensor(&p, t);
        p_dict_end(&p);
        struct bytes z = zip_of(&p, data, size);
        struct load l = load(&z);
        is_int(l.r < 0, 1, what);
        like(l.err.msg, want, what);
        if (l.r == 0)
                pt_file_release(&l.f);
        free(p.p);
        free(z.p);
}

static void test_zip_state_dict(void)
{
        static const float data[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
        struct bytes p = { 0 };
        p_dict_begin(&p);
        p_str(&p, "view");      /* elements 2..7 as (2, 3) */
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 10, 2, 2, { 2, 3 }, { 3, 1 }, false });
        p_str(&p, "t");         /* its transpose */
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 10, 2, 2, { 3, 2 }, { 1, 3 }, false });
        p_str(&p, "n");
        p_int(&p, 3);
        p_str(&p, "view");      /* set again: first place, last value (the whole storage) */
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 10, 0, 1, { 10 }, { 1 }, false });
        p_str(&p, "e");         /* expanded: element 9, 4 times */
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 10, 9, 1, { 4 }, { 0 }, false });
        p_dict_end(&p);
        struct bytes z = zip_of(&p, data, sizeof(data));
        struct load l = load(&z);
        is_int(l.r, 0, "zip state dict: loads");
        if (l.r < 0)
                printf("# %s\n", l.err.msg);
        is_int(l.f.format, PT_FORMAT_ZIP, "  zip format");
        is_int(l.f.version, 3, "  archive version 3");
        is_int(l.f.n, 3, "  3 tensors");
        is_int(l.f.others, 1, "  1 other entry");
        if (l.r == 0 && l.f.n == 3) {
                float v[10];
                is_str(l.f.t[0].name, "view", "  'view' first, set twice");
                values(&l.f.t[0], v);
                ok(l.f.t[0].numel == 10 && v[0] == 0 && v[9] == 9, "  with its last value");
                is_str(l.f.t[1].name, "t", "  't'");
                ok(!l.f.t[1].contiguous, "  't' is not contiguous");
                values(&l.f.t[1], v);
                ok(v[0] == 2 && v[1] == 5 && v[2] == 3 && v[3] == 6 && v[4] == 4 && v[5] == 7,
                   "  't' read by its strides from its offset: 2 5 3 6 4 7");
                pt_tensor_f32(&l.f.t[1], 3, 2, v);
                ok(v[0] == 6 && v[1] == 4, "  and from the middle");
                values(&l.f.t[2], v);
                ok(v[0] == 9 && v[3] == 9, "  'e': element 9 expanded");
                struct bdw_desc d;
                bdw_describe(&l.f, &d);
                ok(d.floats == 3 && d.values == 10 + 6 + 4 && !d.resnet && !d.ntrainers,
                   "  described: 3 float tensors, 20 values, no ResNet");
                pt_file_release(&l.f);
        }
        free(z.p);

        /* a wrapper: {'epoch': 1, 'state_dict': {...}} */
        p.n = 0;
        ops(&p, "\x80\x02}(X\x05\0\0\0epochK\x01X\x0a\0\0\0state_dict}(X\x01\0\0\0x");
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 10, 0, 1, { 2 }, { 1 }, false });
        ops(&p, "uu.");
        z = zip_of(&p, data, sizeof(data));
        l = load(&z);
        ok(l.r == 0 && l.f.n == 1 && streq(l.f.wrapper, "state_dict") && l.f.others == 0,
           "its 'state_dict' entry is the state dict");
        if (l.r == 0)
                pt_file_release(&l.f);
        free(z.p);
        /* not a dict; a key that is no name */
        p.n = 0;
        ops(&p, "\x80\x02]K\x01\x61.");
        z = zip_of(&p, data, sizeof(data));
        l = load(&z);
        like(l.r < 0 ? l.err.msg : "", "t.pth: holds a list, not a state dict", "a list is no state dict");
        free(z.p);
        p.n = 0;
        ops(&p, "\x80\x02}K\x01K\x02s.");
        z = zip_of(&p, data, sizeof(data));
        l = load(&z);
        like(l.r < 0 ? l.err.msg : "", "state dict entry 0: its key is a int, not a name", "a key that is no name");
        free(z.p);

        zip_refused_pt(&(struct ten){ "0", "FloatStorage", 10, 5, 2, { 2, 3 }, { 3, 1 }, false }, data, sizeof(data),
                       "tensor 'w': its elements (offset 5, 2 dimensions) lie beyond its storage '0' of 10",
                       "a tensor past its storage's end");
        zip_refused_pt(&(struct ten){ "0", "FloatStorage", 10, 0, 1, { 2 }, { 0x7fffffff }, false }, data, sizeof(data),
                       "lie beyond its storage", "a stride past the end");
        zip_refused_pt(&(struct ten){ "0", "FloatStorage", 11, 0, 1, { 2 }, { 1 }, false }, data, sizeof(data),
                       "zip: entry 'arc/data/0': 40 bytes, storage '0' is 11 float32 elements",
                       "a storage larger than its entry");
        zip_refused_pt(&(struct ten){ "1", "FloatStorage", 1, 0, 1, { 1 }, { 1 }, false }, data, sizeof(data),
                       "zip: no entry 'arc/data/1' for storage '1'", "a storage without its entry");
        zip_refused_pt(&(struct ten){ "0", "FloatStorage", 1, 0, 2, { 0x10000, 0x10000 }, { 0, 0 }, false }, data,
                       sizeof(data), "expanded tensors add more than 67108864 elements", "an expansion of 2^32");

        /* one key, two types */
        p.n = 0;
        p_dict_begin(&p);
        p_str(&p, "a");
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 10, 0, 1, { 1 }, { 1 }, false });
        p_str(&p, "b");
        p_tensor(&p, &(struct ten){ "0", "LongStorage", 5, 0, 1, { 1 }, { 1 }, false });
        p_dict_end(&p);
        z = zip_of(&p, data, sizeof(data));
        l = load(&z);
        like(l.r < 0 ? l.err.msg : "", "storage '0' is both", "a storage of two types");
        free(z.p);
        /* big-endian storages */
        const struct zent be[] = { { "arc/data.pkl", p.p, p.n }, { "arc/byteorder", "big", 3 } };
        z = make_zip(be, 2, 0, NULL);
        l = load(&z);
        like(l.r < 0 ? l.err.msg : "", "another byte order", "big-endian storages");
        free(z.p);
        /* a bad pickle names its entry and byte */
        p.n = 0;
        ops(&p, "\x80\x02" "cos\nsystem\n.");
        z = zip_of(&p, data, sizeof(data));
        l = load(&z);
        like(l.r < 0 ? l.err.msg : "", "t.pth: arc/data.pkl: byte 2: global 'os.system'", "a forbidden global");
        free(z.p);
        /* a name with a newline: the message stays one line */
        p.n = 0;
        p_dict_begin(&p);
        p_str(&p, "a\nb");
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 10, 50, 1, { 1 }, { 1 }, false });
        p_dict_end(&p);
        z = zip_of(&p, data, sizeof(data));
        l = load(&z);
        ok(l.r < 0 && !strchr(l.err.msg, '\n'), "an error quoting a name with a newline is one line");
        free(z.p);
        /* a storage's byte changed: its CRC */
        p.n = 0;
        p_dict_begin(&p);
        p_str(&p, "w");
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 10, 0, 1, { 10 }, { 1 }, false });
        p_dict_end(&p);
        z = zip_of(&p, data, sizeof(data));
        struct zip_archive a;
        if (zip_read(z.p, z.n, &a, &l.err) == 0) {
                z.p[zip_find(&a, "arc/data/0")->offset + 5] ^= 1;
                zip_release(&a);
        }
        l = load(&z);
        like(l.r < 0 ? l.err.msg : "", "t.pth: zip: entry 'arc/data/0': CRC-32", "a storage's byte changed");
        free(p.p);
        free(z.p);
        const unsigned char junk[] = "\x89PNG....";
        struct bytes j = { (unsigned char *)junk, sizeof(junk), 0 };
        l = load(&j);
        like(l.r < 0 ? l.err.msg : "", "neither a PyTorch file", "another kind of file");
}

/* the legacy format: magic, 1001, sys_info, object, keys, storages */
static struct bytes legacy_file(const struct bytes *obj, const char *const *keys, const uint64_t *counts,
                                const void *const *data, const size_t *sizes, size_t n)
{
        struct bytes b = { 0 };
        ops(&b, "\x80\x02\x8a\x0a");
        put(&b, "\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 11);
        ops(&b, "\x80\x02M\xe9\x03.");
        ops(&b, "\x80\x02}(X\x0d\0\0\0little_endian\x88u.");
        put(&b, obj->p, obj->n);
        ops(&b, "\x80\x02](");
        for (size_t i = 0; i < n; i++)
                p_str(&b, keys[i]);
        ops(&b, "e.");
        for (size_t i = 0; i < n; i++) {
                put_u(&b, counts[i], 8);
                put(&b, data[i], sizes[i]);
        }
        return b;
}

static void test_legacy(void)
{
        static const uint16_t half[] = { 0x3c00, 0xc000, 0x3800, 0x0001 };
        static const double dbl[] = { 0.1, -3 };
        struct bytes o = { 0 };
        p_dict_begin(&o);
        p_str(&o, "h");
        p_tensor(&o, &(struct ten){ "k1", "HalfStorage", 4, 0, 1, { 4 }, { 1 }, true });
        p_str(&o, "d");
        p_tensor(&o, &(struct ten){ "k2", "DoubleStorage", 2, 1, 0, { 0 }, { 0 }, true });
        p_dict_end(&o);
        const char *keys[] = { "k2", "k1" };
        const void *data[] = { dbl, half };
        size_t sizes[] = { sizeof(dbl), sizeof(half) };
        uint64_t counts[] = { 2, 4 };
        struct bytes b = legacy_file(&o, keys, counts, data, sizes, 2);
        struct load l = load(&b);
        is_int(l.r, 0, "legacy: loads");
        if (l.r < 0)
                printf("# %s\n", l.err.msg);
        if (l.r == 0 && l.f.n == 2) {
                float v[4];
                is_int(l.f.format, PT_FORMAT_LEGACY, "  legacy format");
                values(&l.f.t[0], v);
                ok(v[0] == 1 && v[1] == -2 && v[2] == 0.5f && v[3] == ldexpf(1, -24), "  float16 converted");
                values(&l.f.t[1], v);
                ok(l.f.t[1].ndim == 0 && v[0] == -3.0f, "  a float64 scalar at storage offset 1");
                pt_file_release(&l.f);
        }
        /* damage */
        static const size_t cuts[] = { 1, 20, 27 };
        for (size_t i = 0; i < ARRAY_SIZE(cuts); i++) {
                size_t cut = cuts[i];
                struct bytes t = { 0 };
                put(&t, b.p, b.n - cut);
                l = load(&t);
                like(l.r < 0 ? l.err.msg : "", "runs past the end of the file", "legacy: truncated in a storage");
                free(t.p);
        }
        free(b.p);
        counts[1] = 5;
        b = legacy_file(&o, keys, counts, data, sizes, 2);
        l = load(&b);
        like(l.r < 0 ? l.err.msg : "", "storage 'k1' has 5 elements, its tensors say 4", "legacy: a wrong count");
        free(b.p);
        counts[1] = 4;
        keys[1] = "k3";
        b = legacy_file(&o, keys, counts, data, sizes, 2);
        l = load(&b);
        like(l.r < 0 ? l.err.msg : "", "storage key 'k3' is in the list, not in the object", "legacy: an unknown key");
        free(b.p);
        b = legacy_file(&o, keys, counts, data, sizes, 1);
        l = load(&b);
        like(l.r < 0 ? l.err.msg : "", "tensor 'h': its storage 'k1' has no data in the file", "legacy: a key missing");
        free(b.p);
        free(o.p);
        static const unsigned char wrong[] = "\x80\x02K\x01.";
        struct bytes w = { (unsigned char *)wrong, sizeof(wrong) - 1, 0 };
        l = load(&w);
        like(l.r < 0 ? l.err.msg : "", "not a torch file: a pickle without torch's magic number",
             "a pickle that is not torch's");
}

static void test_floats(void)
{
        static const struct {
                uint16_t h;
                float f;
        } v[] = {
                { 0x0000, 0.0f }, { 0x3c00, 1.0f }, { 0xc000, -2.0f }, { 0x7bff, 65504.0f }, { 0x0400, 0x1p-14f },
                { 0x0001, 0x1p-24f }, { 0x03ff, 0x1.ff8p-15f }, { 0x3555, 0x1.554p-2f },
        };
        for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
                char what[64];
                snprintf(what, sizeof(what), "half 0x%04x is %a", v[i].h, (double)v[i].f);
                ok(pt_half_to_float(v[i].h) == v[i].f, what);
        }
        ok(signbit(pt_half_to_float(0x8000)) && pt_half_to_float(0x8000) == 0, "half -0");
        ok(isinf(pt_half_to_float(0x7c00)) && pt_half_to_float(0xfc00) < 0, "half infinities");
        ok(isnan(pt_half_to_float(0x7e00)) && isnan(pt_half_to_float(0x7c01)), "half NaNs, signalling ones too");
        ok(pt_bf16_to_float(0x3f80) == 1.0f && pt_bf16_to_float(0xc0a0) == -5.0f, "bfloat16");
}

/* ---- weights files --------------------------------------------------------------------------- */

static char dir[] = "/tmp/benchd-test-ptweights.XXXXXX";

static int files_in(const char *path)
{
        DIR *d = opendir(path);
        int n = 0;
        for (struct dirent *e; d && (e = readdir(d));)
                n += e->d_name[0] != '.';
        if (d)
                closedir(d);
        return n;
}

static void test_bdw(void)
{
        static const float data[] = { 1, 2, 3, 4, 5, 6 };
        struct bytes p = { 0 };
        p_dict_begin(&p);
        p_str(&p, "module.a");
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 6, 0, 2, { 3, 2 }, { 1, 3 }, false });
        p_str(&p, "b");
        p_tensor(&p, &(struct ten){ "0", "FloatStorage", 6, 5, 0, { 0 }, { 0 }, false });
        p_dict_end(&p);
        struct bytes z = zip_of(&p, data, sizeof(data));
        struct load l = load(&z);
        is_int(l.r, 0, "a state dict to write");
        _cleanup_free_ char *path = xasprintf("%s/w.bdw", dir);
        size_t count = 0;
        struct bd_err err;
        const char *source = "a source text longer than the header's sixty-three bytes, cut there";
        int r = l.r == 0 ? bdw_write(path, &l.f, "module.", source, &count, &err) : -1;
        is_int(r, 0, "bdw_write");
        is_int(count, 2, "  2 tensors");
        struct pt_file w;
        r = pt_load(path, &w, &err);
        is_int(r, 0, "  read back");
        if (r == 0) {
                is_int(w.format, PT_FORMAT_BDW, "  a weights file");
                ok(strlen(w.source) == 63 && !strncmp(w.source, source, 63), "  its source cut to 63 bytes");
                ok(w.n == 2 && streq(w.t[0].name, "a") && streq(w.t[1].name, "b"), "  'module.' stripped");
                float v[6];
                values(&w.t[0], v);
                ok(w.t[0].ndim == 2 && w.t[0].dims[0] == 3 && v[0] == 1 && v[1] == 4 && v[2] == 2 && v[5] == 6,
                   "  values row-major from the strided tensor");
                values(&w.t[1], v);
                ok(w.t[1].ndim == 0 && v[0] == 6, "  a scalar");
                pt_file_release(&w);
        }
        is_int(files_in(dir), 1, "  no temporary file left");
        /* damage: a byte changed, the version, the end */
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if (fs_read_file(path, 1 << 20, &text, &len, &err) == 0) {
                struct bytes c = { 0 };
                put(&c, text, len);
                c.p[110] ^= 1;
                struct load x = load(&c);
                like(x.r < 0 ? x.err.msg : "", "t.pth: checksum mismatch", "a changed byte");
                c.p[110] ^= 1;
                c.p[8] = 2;
                x = load(&c);
                like(x.r < 0 ? x.err.msg : "", "format version 2, this build reads version 1", "another version");
                c.p[8] = 1;
                c.n -= 17;
                x = load(&c);
                like(x.r < 0 ? x.err.msg : "", "truncated", "truncated");
                free(c.p);
        }
        _cleanup_free_ char *bad = xasprintf("%s/none/w.bdw", dir);
        r = l.r == 0 ? bdw_write(bad, &l.f, NULL, "", NULL, &err) : 0;
        like(r < 0 ? err.msg : "", "none/w.bdw", "a directory that is not there: an error naming the file");
        if (l.r == 0)
                pt_file_release(&l.f);
        free(z.p);
        free(p.p);
}

/* A torchvision ResNet's names and shapes, described */
static void add(struct pt_file *f, const char *name, int nd, int64_t a, int64_t b, int64_t c, int64_t d)
{
        f->t = xrealloc(f->t, (f->n + 1) * sizeof(*f->t));
        struct pt_tensor *t = &f->t[f->n++];
        *t = (struct pt_tensor){ .name = xstrdup(name), .dtype = PK_DT_F32, .ndim = nd, .dims = { a, b, c, d } };
        t->numel = 1;
        for (int k = 0; k < nd; k++)
                t->numel *= t->dims[k];
}

static void add_bn(struct pt_file *f, const char *bn, int64_t ch)
{
        char name[128];
        static const char *const parts[] = { "weight", "bias", "running_mean", "running_var" };
        for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
                snprintf(name, sizeof(name), "%s.%s", bn, parts[i]);
                add(f, name, 1, ch, 0, 0, 0);
        }
}

/* resnet18 (or, bottleneck, resnet50's first stage only, for the problem) */
static void resnet18(struct pt_file *f, const char *prefix, int64_t w)
{
        char name[128], bn[128];
        snprintf(name, sizeof(name), "%sconv1.weight", prefix);
        add(f, name, 4, w, 3, 7, 7);
        snprintf(bn, sizeof(bn), "%sbn1", prefix);
        add_bn(f, bn, w);
        for (int s = 0; s < 4; s++)
                for (int j = 0; j < 2; j++) {
                        int64_t co = w << s, ci = j || !s ? co : co / 2;
                        snprintf(name, sizeof(name), "%slayer%d.%d.conv1.weight", prefix, s + 1, j);
                        add(f, name, 4, co, ci, 3, 3);
                        snprintf(bn, sizeof(bn), "%slayer%d.%d.bn1", prefix, s + 1, j);
                        add_bn(f, bn, co);
                        snprintf(name, sizeof(name), "%slayer%d.%d.conv2.weight", prefix, s + 1, j);
                        add(f, name, 4, co, co, 3, 3);
                        snprintf(bn, sizeof(bn), "%slayer%d.%d.bn2", prefix, s + 1, j);
                        add_bn(f, bn, co);
                        if (s && !j) {
                                snprintf(name, sizeof(name), "%slayer%d.0.downsample.0.weight", prefix, s + 1);
                                add(f, name, 4, co, ci, 1, 1);
                                snprintf(bn, sizeof(bn), "%slayer%d.0.downsample.1", prefix, s + 1);
                                add_bn(f, bn, co);
                        }
                }
        snprintf(name, sizeof(name), "%sfc.weight", prefix);
        add(f, name, 2, 10, 8 * w, 0, 0);
        snprintf(name, sizeof(name), "%sfc.bias", prefix);
        add(f, name, 1, 10, 0, 0, 0);
}

static void test_describe(void)
{
        struct pt_file f = { 0 };
        struct bdw_desc d;
        resnet18(&f, "", 64);
        bdw_describe(&f, &d);
        ok(d.resnet && streq(d.arch, "resnet18") && !d.bottleneck && d.width == 64 && d.classes == 10,
           "resnet18's names: resnet18, BasicBlock, width 64, 10 classes");
        ok(!d.problem[0] && !d.extra && !d.prefix[0], "  complete, nothing else, no prefix");
        ok(d.ntrainers == 2 && streq(d.trainers[0]->program, "benchd-ssd") &&
           streq(d.trainers[1]->program, "benchd-maskrcnn"), "  both trainers take it");
        is_int(d.values - d.parameters, 2 * (64 + 4 * 64 + 4 * 128 + 128 + 4 * 256 + 256 + 4 * 512 + 512),
               "  running statistics are no parameters");
        add(&f, "head.weight", 1, 3, 0, 0, 0);
        bdw_describe(&f, &d);
        ok(d.resnet && d.extra == 1 && !d.ntrainers, "  one more tensor: extra, no trainer");
        free(f.t[--f.n].name);
        free(f.t[4].name);
        f.t[4].name = xstrdup("bn1.running_varX");
        bdw_describe(&f, &d);
        like(d.problem, "no tensor 'bn1.running_var'", "  a tensor missing: named");
        pt_file_release(&f);

        resnet18(&f, "module.", 64);
        bdw_describe(&f, &d);
        ok(d.resnet && streq(d.prefix, "module.") && streq(d.arch, "resnet18") && !d.problem[0] && !d.ntrainers,
           "under 'module.': found with its prefix, no trainer as it is");
        pt_file_release(&f);
        resnet18(&f, "", 32);
        bdw_describe(&f, &d);
        ok(d.resnet && d.width == 32 && !d.problem[0] && !d.ntrainers, "width 32: complete, no trainer");
        pt_file_release(&f);
        resnet18(&f, "", 64);
        f.t[0].dims[1] = 4;
        bdw_describe(&f, &d);
        like(d.problem, "'conv1.weight' is float32 (64, 4, 7, 7), not float (64, 3, 7, 7)", "a shape changed");
        f.t[0].dims[1] = 3;
        add(&f, "layer1.0.conv3.weight", 4, 256, 64, 1, 1);
        bdw_describe(&f, &d);
        ok(d.bottleneck && !d.arch[0] && d.problem[0], "a conv3: a Bottleneck ResNet of no known depth, not as made");
        pt_file_release(&f);
}

int main(void)
{
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        test_pickle_values();
        test_pickle_errors();
        test_pickle_tensors();
        test_zip();
        test_zip_state_dict();
        test_legacy();
        test_floats();
        test_bdw();
        test_describe();
        _cleanup_free_ char *rm = xasprintf("rm -rf %s", dir);
        if (system(rm) != 0)
                return 1;
        return done_testing();
}
