/* pickle.c: a pickle interpreter for torch state dicts (pickle.h).
 *
 * The machine of Python's pickle.py, cut down: a stack, marks (where the
 * items of TUPLE, SETITEMS and APPENDS begin), a memo.  Each opcode checks
 * what it pops and the bytes it reads; no value is ever walked
 * recursively. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "pickle.h"
#include "strutil.h"

#define PK_BLOCK 256

struct pk_block {
        struct pk_block *next;
        size_t n;
        struct pk_value v[PK_BLOCK];
};

void pk_arena_release(struct pk_arena *a)
{
        while (a->blocks) {
                struct pk_block *b = a->blocks;
                for (size_t i = 0; i < b->n; i++) {
                        struct pk_value *v = &b->v[i];
                        if (v->kind == PK_STR || v->kind == PK_BIGINT)
                                free(v->u.str.s);
                        else if (v->kind == PK_TUPLE || v->kind == PK_LIST || v->kind == PK_DICT)
                                free(v->u.seq.v);
                        else if (v->kind == PK_TENSOR)
                                free(v->u.tensor);
                }
                a->blocks = b->next;
                free(b);
        }
        free(a->storages);
        a->storages = NULL;
        a->nstorages = 0;
        a->cells = 0;
}

static struct pk_value *new_value(struct pk_arena *a, enum pk_kind kind, size_t at)
{
        if (!a->blocks || a->blocks->n == PK_BLOCK) {
                struct pk_block *b = xmalloc(sizeof(*b));
                b->next = a->blocks;
                b->n = 0;
                a->blocks = b;
        }
        struct pk_value *v = &a->blocks->v[a->blocks->n++];
        memset(v, 0, sizeof(*v));
        v->kind = kind;
        v->at = at;
        a->cells++;
        return v;
}

static void seq_add(struct pk_arena *a, struct pk_value *s, struct pk_value *v)
{
        a->cells++;
        if (s->u.seq.n == s->u.seq.cap) {
                s->u.seq.cap = s->u.seq.cap ? 2 * s->u.seq.cap : 4;
                s->u.seq.v = xrealloc(s->u.seq.v, s->u.seq.cap * sizeof(*s->u.seq.v));
        }
        s->u.seq.v[s->u.seq.n++] = v;
}

/* ---- names -------------------------------------------------------------------------------- */

static const struct {
        enum pk_dtype t;
        const char *name, *storage;
        size_t size;
} dtypes[] = {
        { PK_DT_F32, "float32", "FloatStorage", 4 },
        { PK_DT_F64, "float64", "DoubleStorage", 8 },
        { PK_DT_F16, "float16", "HalfStorage", 2 },
        { PK_DT_BF16, "bfloat16", "BFloat16Storage", 2 },
        { PK_DT_I64, "int64", "LongStorage", 8 },
        { PK_DT_I32, "int32", "IntStorage", 4 },
        { PK_DT_I16, "int16", "ShortStorage", 2 },
        { PK_DT_I8, "int8", "CharStorage", 1 },
        { PK_DT_U8, "uint8", "ByteStorage", 1 },
        { PK_DT_BOOL, "bool", "BoolStorage", 1 },
};

const char *pk_dtype_name(enum pk_dtype t)
{
        return (unsigned)t < ARRAY_SIZE(dtypes) ? dtypes[t].name : "?";
}

size_t pk_dtype_size(enum pk_dtype t)
{
        return (unsigned)t < ARRAY_SIZE(dtypes) ? dtypes[t].size : 1;
}

bool pk_dtype_is_float(enum pk_dtype t)
{
        return t == PK_DT_F32 || t == PK_DT_F64 || t == PK_DT_F16 || t == PK_DT_BF16;
}

const char *pk_kind_name(enum pk_kind k)
{
        static const char *const names[] = {
                [PK_NONE] = "None", [PK_BOOL] = "bool", [PK_INT] = "int", [PK_BIGINT] = "int",
                [PK_FLOAT] = "float", [PK_STR] = "str", [PK_TUPLE] = "tuple", [PK_LIST] = "list",
                [PK_DICT] = "dict", [PK_GLOBAL] = "global", [PK_STORAGE] = "storage", [PK_TENSOR] = "tensor",
        };
        return (unsigned)k < ARRAY_SIZE(names) ? names[k] : "?";
}

/* The opcodes: those interpreted, then the others by name for messages */
enum {
        OP_MARK = '(', OP_STOP = '.', OP_BININT = 'J', OP_BININT1 = 'K', OP_BININT2 = 'M', OP_NONE = 'N',
        OP_BINPERSID = 'Q', OP_REDUCE = 'R', OP_BINSTRING = 'T', OP_SHORT_BINSTRING = 'U',
        OP_BINUNICODE = 'X', OP_APPEND = 'a', OP_BUILD = 'b', OP_GLOBAL = 'c', OP_APPENDS = 'e',
        OP_BINGET = 'h', OP_LONG_BINGET = 'j', OP_EMPTY_LIST = ']', OP_BINPUT = 'q', OP_LONG_BINPUT = 'r',
        OP_SETITEM = 's', OP_TUPLE = 't', OP_EMPTY_TUPLE = ')', OP_SETITEMS = 'u', OP_BINFLOAT = 'G',
        OP_EMPTY_DICT = '}', OP_PROTO = 0x80, OP_TUPLE1 = 0x85, OP_TUPLE2 = 0x86, OP_TUPLE3 = 0x87,
        OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89, OP_LONG1 = 0x8a, OP_SHORT_BINUNICODE = 0x8c,
        OP_STACK_GLOBAL = 0x93, OP_MEMOIZE = 0x94, OP_FRAME = 0x95,
};

static const char *op_name(unsigned char op)
{
        static const struct {
                unsigned char op;
                const char *name;
        } names[] = {
                { '(', "MARK" }, { '.', "STOP" }, { '0', "POP" }, { '1', "POP_MARK" }, { '2', "DUP" },
                { 'F', "FLOAT" }, { 'I', "INT" }, { 'J', "BININT" }, { 'K', "BININT1" }, { 'L', "LONG" },
                { 'M', "BININT2" }, { 'N', "NONE" }, { 'P', "PERSID" }, { 'Q', "BINPERSID" }, { 'R', "REDUCE" },
                { 'S', "STRING" }, { 'T', "BINSTRING" }, { 'U', "SHORT_BINSTRING" }, { 'V', "UNICODE" },
                { 'X', "BINUNICODE" }, { 'a', "APPEND" }, { 'b', "BUILD" }, { 'c', "GLOBAL" }, { 'd', "DICT" },
                { '}', "EMPTY_DICT" }, { 'e', "APPENDS" }, { 'g', "GET" }, { 'h', "BINGET" }, { 'i', "INST" },
                { 'j', "LONG_BINGET" }, { 'l', "LIST" }, { ']', "EMPTY_LIST" }, { 'o', "OBJ" }, { 'p', "PUT" },
                { 'q', "BINPUT" }, { 'r', "LONG_BINPUT" }, { 's', "SETITEM" }, { 't', "TUPLE" },
                { ')', "EMPTY_TUPLE" }, { 'u', "SETITEMS" }, { 'G', "BINFLOAT" }, { 'B', "BINBYTES" },
                { 'C', "SHORT_BINBYTES" }, { 0x80, "PROTO" }, { 0x81, "NEWOBJ" }, { 0x82, "EXT1" },
                { 0x83, "EXT2" }, { 0x84, "EXT4" }, { 0x85, "TUPLE1" }, { 0x86, "TUPLE2" }, { 0x87, "TUPLE3" },
                { 0x88, "NEWTRUE" }, { 0x89, "NEWFALSE" }, { 0x8a, "LONG1" }, { 0x8b, "LONG4" },
                { 0x8c, "SHORT_BINUNICODE" }, { 0x8d, "BINUNICODE8" }, { 0x8e, "BINBYTES8" },
                { 0x8f, "EMPTY_SET" }, { 0x90, "ADDITEMS" }, { 0x91, "FROZENSET" }, { 0x92, "NEWOBJ_EX" },
                { 0x93, "STACK_GLOBAL" }, { 0x94, "MEMOIZE" }, { 0x95, "FRAME" }, { 0x96, "BYTEARRAY8" },
                { 0x97, "NEXT_BUFFER" }, { 0x98, "READONLY_BUFFER" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (names[i].op == op)
                        return names[i].name;
        return "unknown";
}

/* ---- the machine ---------------------------------------------------------------------------- */

struct vm {
        struct pk_arena *a;
        const unsigned char *p;
        size_t size, pos;
        size_t op_at;                   /* the opcode being run */
        unsigned char op;
        struct pk_value **stack;
        size_t n, cap;
        size_t marks[PK_MAX_MARKS];
        int nmarks;
        struct pk_value **memo;
        size_t memo_cap, memo_count;
        int protocol;
        struct bd_err *err;
};

static int fail(struct vm *m, int r, const char *fmt, ...) _printf_(3, 4);
static int fail(struct vm *m, int r, const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return bd_err_set(m->err, r, "byte %zu: %s (%s)", m->op_at, msg, op_name(m->op));
}

static int need(struct vm *m, size_t n)
{
        if (n > m->size - m->pos)
                return fail(m, -EBADMSG, "the pickle ends inside its opcode");
        return 0;
}

static uint64_t get_le(struct vm *m, size_t n)
{
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++)
                v |= (uint64_t)m->p[m->pos + i] << (8 * i);
        m->pos += n;
        return v;
}

static void push(struct vm *m, struct pk_value *v)
{
        if (m->n == m->cap) {
                m->cap = m->cap ? 2 * m->cap : 64;
                m->stack = xrealloc(m->stack, m->cap * sizeof(*m->stack));
        }
        m->stack[m->n++] = v;
}

/* the stack's floor: values below the last mark are not the current list's */
static size_t floor_of(const struct vm *m)
{
        return m->nmarks ? m->marks[m->nmarks - 1] : 0;
}

static struct pk_value *pop(struct vm *m)
{
        if (m->n <= floor_of(m)) {
                fail(m, -EBADMSG, "stack underflow");
                return NULL;
        }
        return m->stack[--m->n];
}

static struct pk_value *top(struct vm *m)
{
        if (m->n <= floor_of(m)) {
                fail(m, -EBADMSG, "stack underflow");
                return NULL;
        }
        return m->stack[m->n - 1];
}

/* The values since the last mark (*ret_items, *ret_n: still in the stack
 * array until the next push), the mark removed. */
static int pop_mark(struct vm *m, struct pk_value ***ret_items, size_t *ret_n)
{
        if (!m->nmarks)
                return fail(m, -EBADMSG, "no mark");
        size_t at = m->marks[--m->nmarks];
        *ret_items = m->stack ? m->stack + at : NULL;   /* a mark before any value */
        *ret_n = m->n - at;
        m->n = at;
        return 0;
}

static int memo_put(struct vm *m, uint64_t i)
{
        if (i >= PK_MAX_MEMO)
                return fail(m, -E2BIG, "memo index %llu (at most %d)", (unsigned long long)i, PK_MAX_MEMO - 1);
        struct pk_value *v = top(m);
        if (!v)
                return -EBADMSG;
        if (i >= m->memo_cap) {
                size_t cap = m->memo_cap ? m->memo_cap : 64;
                while (cap <= i)
                        cap *= 2;
                m->memo = xrealloc(m->memo, cap * sizeof(*m->memo));
                memset(m->memo + m->memo_cap, 0, (cap - m->memo_cap) * sizeof(*m->memo));
                m->memo_cap = cap;
        }
        if (!m->memo[i])
                m->memo_count++;
        m->memo[i] = v;
        return 0;
}

static int memo_get(struct vm *m, uint64_t i)
{
        if (i >= m->memo_cap || !m->memo[i])
                return fail(m, -EBADMSG, "memo %llu is not set", (unsigned long long)i);
        push(m, m->memo[i]);
        return 0;
}

/* A string of n bytes at pos: UTF-8 without NUL (Python's decoding, and
 * what a tensor's name can be) */
static int get_str(struct vm *m, size_t n)
{
        int r = need(m, n);
        if (r < 0)
                return r;
        const char *s = (const char *)m->p + m->pos;
        if (memchr(s, 0, n))
                return fail(m, -EBADMSG, "a string holding a NUL byte");
        struct pk_value *v = new_value(m->a, PK_STR, m->op_at);
        v->u.str.s = xmalloc(n + 1);
        memcpy(v->u.str.s, s, n);
        v->u.str.s[n] = '\0';
        v->u.str.len = n;
        m->pos += n;
        push(m, v);     /* the arena has it: freed there on error too */
        for (size_t i = 0; i < n;) {
                size_t l = str_utf8_char_len(v->u.str.s + i);
                if (!l)
                        return fail(m, -EBADMSG, "a string that is not UTF-8 (its byte %zu)", i);
                i += l;
        }
        return 0;
}

static int get_long1(struct vm *m)
{
        int r = need(m, 1);
        if (r < 0)
                return r;
        size_t n = m->p[m->pos++];
        if ((r = need(m, n)) < 0)
                return r;
        const unsigned char *b = m->p + m->pos;
        /* fits 64 bits when the bytes past the 8th repeat the sign */
        bool fits = true;
        unsigned char ext = n && (b[n - 1] & 0x80) ? 0xff : 0;
        for (size_t i = 8; i < n && fits; i++)
                fits = b[i] == ext && (b[7] & 0x80) == (ext & 0x80);
        struct pk_value *v;
        if (fits) {
                uint64_t u = n && (b[n - 1] & 0x80) ? UINT64_MAX : 0;
                for (size_t i = 0; i < n && i < 8; i++) {
                        u &= ~((uint64_t)0xff << (8 * i));
                        u |= (uint64_t)b[i] << (8 * i);
                }
                v = new_value(m->a, PK_INT, m->op_at);
                v->u.i = (int64_t)u;
        } else {
                v = new_value(m->a, PK_BIGINT, m->op_at);
                v->u.str.s = xmalloc(n + 1);
                memcpy(v->u.str.s, b, n);
                v->u.str.s[n] = 0;
                v->u.str.len = n;
        }
        m->pos += n;
        push(m, v);
        return 0;
}

/* ---- globals and calls ---------------------------------------------------------------------- */

static int find_global(struct vm *m, const char *module, size_t ml, const char *name, size_t nl)
{
        static const struct {
                const char *module, *name;
                enum pk_global g;
        } calls[] = {
                { "collections", "OrderedDict", PKG_ORDERED_DICT },
                { "torch._utils", "_rebuild_tensor_v2", PKG_REBUILD_TENSOR_V2 },
                { "torch._utils", "_rebuild_tensor", PKG_REBUILD_TENSOR },
                { "torch._utils", "_rebuild_parameter", PKG_REBUILD_PARAMETER },
        };
        struct pk_value *v = new_value(m->a, PK_GLOBAL, m->op_at);
        for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
                if (ml == strlen(calls[i].module) && !memcmp(module, calls[i].module, ml) &&
                    nl == strlen(calls[i].name) && !memcmp(name, calls[i].name, nl)) {
                        v->u.global.g = calls[i].g;
                        push(m, v);
                        return 0;
                }
        /* the typed storages, also those saved from a GPU (torch.cuda) */
        if ((ml == 5 && !memcmp(module, "torch", 5)) || (ml == 10 && !memcmp(module, "torch.cuda", 10)))
                for (size_t i = 0; i < ARRAY_SIZE(dtypes); i++)
                        if (nl == strlen(dtypes[i].storage) && !memcmp(name, dtypes[i].storage, nl)) {
                                v->u.global.g = PKG_STORAGE;
                                v->u.global.dtype = dtypes[i].t;
                                push(m, v);
                                return 0;
                        }
        return fail(m, -EPERM, "global '%.*s.%.*s' is not one a state dict uses", (int)(ml > 100 ? 100 : ml),
                    module, (int)(nl > 100 ? 100 : nl), name);
}

/* GLOBAL: "module\nname\n" */
static int op_global(struct vm *m)
{
        const char *s = (const char *)m->p + m->pos;
        size_t left = m->size - m->pos;
        const char *nl1 = memchr(s, '\n', left);
        const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', left - (size_t)(nl1 + 1 - s)) : NULL;
        if (!nl2)
                return fail(m, -EBADMSG, "the pickle ends inside its opcode");
        m->pos += (size_t)(nl2 + 1 - s);
        return find_global(m, s, (size_t)(nl1 - s), nl1 + 1, (size_t)(nl2 - nl1 - 1));
}

static int op_stack_global(struct vm *m)
{
        struct pk_value *name = pop(m), *module = name ? pop(m) : NULL;
        if (!module)
                return -EBADMSG;
        if (name->kind != PK_STR || module->kind != PK_STR)
                return fail(m, -EBADMSG, "module and name are a %s and a %s, not strings",
                            pk_kind_name(module->kind), pk_kind_name(name->kind));
        return find_global(m, module->u.str.s, module->u.str.len, name->u.str.s, name->u.str.len);
}

static int as_int(struct vm *m, const struct pk_value *v, const char *what, int64_t min, int64_t max,
                  int64_t *ret)
{
        if (v->kind == PK_BOOL)
                *ret = v->u.b;
        else if (v->kind == PK_INT)
                *ret = v->u.i;
        else
                return fail(m, -EBADMSG, "%s is a %s, not an int", what, pk_kind_name(v->kind));
        if (*ret < min || *ret > max)
                return fail(m, -EBADMSG, "%s %lld out of range", what, (long long)*ret);
        return 0;
}

/* the largest element count: its bytes in 8-byte elements fit 63 bits */
#define NUMEL_MAX (INT64_MAX / 8)

/* ('storage', TYPE, KEY, LOCATION, NUMEL[, VIEW]) */
static int op_persid(struct vm *m)
{
        struct pk_value *pid = pop(m);
        if (!pid)
                return -EBADMSG;
        if (pid->kind != PK_TUPLE || pid->u.seq.n < 5 || pid->u.seq.n > 6)
                return fail(m, -EBADMSG, "a persistent id that is not a storage's tuple (a %s)",
                            pk_kind_name(pid->kind));
        struct pk_value **t = pid->u.seq.v;
        if (!pk_is_str(t[0], "storage"))
                return fail(m, -EBADMSG, "a persistent id that is not a storage");
        if (t[1]->kind != PK_GLOBAL || t[1]->u.global.g != PKG_STORAGE)
                return fail(m, -EBADMSG, "a storage whose type is no storage class");
        if (t[2]->kind != PK_STR || t[3]->kind != PK_STR)
                return fail(m, -EBADMSG, "a storage whose key or location is no string");
        struct pk_value *v = new_value(m->a, PK_STORAGE, m->op_at);
        struct pk_storage *s = &v->u.storage;
        s->dtype = t[1]->u.global.dtype;
        s->key = t[2]->u.str.s;
        int r = as_int(m, t[4], "a storage's size", 0, NUMEL_MAX, &s->numel);
        if (r < 0)
                return r;
        s->view_numel = s->numel;
        if (pid->u.seq.n == 6 && t[5]->kind != PK_NONE) {
                struct pk_value *view = t[5];
                if (view->kind != PK_TUPLE || view->u.seq.n != 3 || view->u.seq.v[0]->kind != PK_STR)
                        return fail(m, -EBADMSG, "a storage view that is not (key, offset, size)");
                if ((r = as_int(m, view->u.seq.v[1], "a view's offset", 0, s->numel, &s->view_offset)) < 0 ||
                    (r = as_int(m, view->u.seq.v[2], "a view's size", 0, s->numel - s->view_offset,
                                &s->view_numel)) < 0)
                        return r;
        }
        size_t ns = m->a->nstorages;
        if (!(ns & (ns - 1)))   /* grown at each power of two */
                m->a->storages = xrealloc(m->a->storages, (ns ? 2 * ns : 1) * sizeof(*m->a->storages));
        m->a->storages[m->a->nstorages++] = s;
        push(m, v);
        return 0;
}

/* size and stride tuples */
static int dims(struct vm *m, const struct pk_value *v, const char *what, int64_t *out, int *ret_n)
{
        if (v->kind != PK_TUPLE && v->kind != PK_LIST)
                return fail(m, -EBADMSG, "a tensor's %s is a %s, not a tuple", what, pk_kind_name(v->kind));
        if (v->u.seq.n > PK_MAX_DIMS)
                return fail(m, -E2BIG, "a tensor of %zu dimensions (at most %d)", v->u.seq.n, PK_MAX_DIMS);
        for (size_t i = 0; i < v->u.seq.n; i++) {
                int r = as_int(m, v->u.seq.v[i], what, 0, NUMEL_MAX, &out[i]);
                if (r < 0)
                        return r;
        }
        *ret_n = (int)v->u.seq.n;
        return 0;
}

static int rebuild_tensor(struct vm *m, struct pk_value **args, size_t n, bool v2)
{
        if (v2 ? n < 6 || n > 7 : n != 4)
                return fail(m, -EBADMSG, "%s with %zu arguments", v2 ? "_rebuild_tensor_v2" : "_rebuild_tensor", n);
        if (args[0]->kind != PK_STORAGE)
                return fail(m, -EBADMSG, "a tensor of a %s, not a storage", pk_kind_name(args[0]->kind));
        struct pk_tensor t = { .storage = args[0]->u.storage };
        int nd_stride = 0;
        int r = as_int(m, args[1], "a tensor's storage offset", 0, NUMEL_MAX, &t.offset);
        if (r < 0 || (r = dims(m, args[2], "size", t.size, &t.ndim)) < 0 ||
            (r = dims(m, args[3], "stride", t.stride, &nd_stride)) < 0)
                return r;
        if (nd_stride != t.ndim)
                return fail(m, -EBADMSG, "a tensor of %d sizes and %d strides", t.ndim, nd_stride);
        if (v2)
                t.requires_grad = args[4]->kind == PK_BOOL ? args[4]->u.b : false;
        struct pk_value *v = new_value(m->a, PK_TENSOR, m->op_at);
        v->u.tensor = xmalloc(sizeof(t));
        *v->u.tensor = t;
        push(m, v);
        return 0;
}

static int ordered_dict(struct vm *m, struct pk_value **args, size_t n)
{
        struct pk_value *d = new_value(m->a, PK_DICT, m->op_at);
        if (n == 0) {
                push(m, d);
                return 0;
        }
        /* Python 2's OrderedDict pickles as OrderedDict([[k, v], ...]) */
        struct pk_value *items = args[0];
        if (n != 1 || (items->kind != PK_LIST && items->kind != PK_TUPLE && items->kind != PK_DICT))
                return fail(m, -EBADMSG, "OrderedDict of %zu arguments, not () or (items,)", n);
        if (items->kind == PK_DICT) {
                for (size_t i = 0; i < items->u.seq.n; i++)
                        seq_add(m->a, d, items->u.seq.v[i]);
        } else {
                for (size_t i = 0; i < items->u.seq.n; i++) {
                        struct pk_value *kv = items->u.seq.v[i];
                        if ((kv->kind != PK_LIST && kv->kind != PK_TUPLE) || kv->u.seq.n != 2)
                                return fail(m, -EBADMSG, "OrderedDict's item %zu is not a pair", i);
                        seq_add(m->a, d, kv->u.seq.v[0]);
                        seq_add(m->a, d, kv->u.seq.v[1]);
                }
        }
        push(m, d);
        return 0;
}

static int op_reduce(struct vm *m)
{
        struct pk_value *args = pop(m), *fn = args ? pop(m) : NULL;
        if (!fn)
                return -EBADMSG;
        if (fn->kind != PK_GLOBAL)
                return fail(m, -EBADMSG, "calling a %s", pk_kind_name(fn->kind));
        if (args->kind != PK_TUPLE)
                return fail(m, -EBADMSG, "arguments in a %s, not a tuple", pk_kind_name(args->kind));
        struct pk_value **a = args->u.seq.v;
        size_t n = args->u.seq.n;
        switch (fn->u.global.g) {
        case PKG_ORDERED_DICT:
                return ordered_dict(m, a, n);
        case PKG_REBUILD_TENSOR_V2:
        case PKG_REBUILD_TENSOR:
                return rebuild_tensor(m, a, n, fn->u.global.g == PKG_REBUILD_TENSOR_V2);
        case PKG_REBUILD_PARAMETER: {
                if (n != 3 || a[0]->kind != PK_TENSOR)
                        return fail(m, -EBADMSG, "_rebuild_parameter of %zu arguments, not (tensor, "
                                    "requires_grad, hooks)", n);
                struct pk_value *v = new_value(m->a, PK_TENSOR, m->op_at);
                v->u.tensor = xmalloc(sizeof(*v->u.tensor));
                *v->u.tensor = *a[0]->u.tensor;
                v->u.tensor->parameter = true;
                v->u.tensor->requires_grad = a[1]->kind == PK_BOOL && a[1]->u.b;
                push(m, v);
                return 0;
        }
        case PKG_STORAGE:
                break;
        }
        return fail(m, -EPERM, "calling the storage class torch.%s", dtypes[fn->u.global.dtype].storage);
}

static int make_tuple(struct vm *m, struct pk_value **items, size_t n)
{
        struct pk_value *t = new_value(m->a, PK_TUPLE, m->op_at);
        if (n) {
                t->u.seq.v = xmalloc(n * sizeof(*t->u.seq.v));
                memcpy(t->u.seq.v, items, n * sizeof(*items));
                t->u.seq.n = t->u.seq.cap = n;
                m->a->cells += n;
        }
        push(m, t);
        return 0;
}

/* the container below popped values: the dict of SETITEM(S), the list of APPEND(S) */
static struct pk_value *container(struct vm *m, enum pk_kind kind)
{
        struct pk_value *c = top(m);
        if (c && c->kind != kind) {
                fail(m, -EBADMSG, "adding to a %s, not a %s", pk_kind_name(c->kind), pk_kind_name(kind));
                return NULL;
        }
        return c;
}

static int step(struct vm *m, bool *ret_stop, struct pk_value **ret)
{
        m->op_at = m->pos;
        m->op = m->p[m->pos++];
        struct pk_value *v, *k, **items = NULL;
        size_t n = 0;
        int r;
        switch (m->op) {
        case OP_PROTO:
                if ((r = need(m, 1)) < 0)
                        return r;
                m->protocol = m->p[m->pos++];
                if (m->protocol > 5)
                        return fail(m, -EBADMSG, "protocol %d (Python's are 0 to 5)", m->protocol);
                return 0;
        case OP_FRAME:
                if ((r = need(m, 8)) < 0)
                        return r;
                if (get_le(m, 8) > m->size - m->pos)
                        return fail(m, -EBADMSG, "a frame past the end of the pickle");
                return 0;
        case OP_GLOBAL:
                return op_global(m);
        case OP_STACK_GLOBAL:
                return op_stack_global(m);
        case OP_BINPUT:
                return (r = need(m, 1)) < 0 ? r : memo_put(m, get_le(m, 1));
        case OP_LONG_BINPUT:
                return (r = need(m, 4)) < 0 ? r : memo_put(m, get_le(m, 4));
        case OP_MEMOIZE:
                return memo_put(m, m->memo_count);
        case OP_BINGET:
                return (r = need(m, 1)) < 0 ? r : memo_get(m, get_le(m, 1));
        case OP_LONG_BINGET:
                return (r = need(m, 4)) < 0 ? r : memo_get(m, get_le(m, 4));
        case OP_EMPTY_DICT:
                push(m, new_value(m->a, PK_DICT, m->op_at));
                return 0;
        case OP_EMPTY_LIST:
                push(m, new_value(m->a, PK_LIST, m->op_at));
                return 0;
        case OP_EMPTY_TUPLE:
                return make_tuple(m, NULL, 0);
        case OP_MARK:
                if (m->nmarks == PK_MAX_MARKS)
                        return fail(m, -E2BIG, "more than %d marks open", PK_MAX_MARKS);
                m->marks[m->nmarks++] = m->n;
                return 0;
        case OP_TUPLE:
                return (r = pop_mark(m, &items, &n)) < 0 ? r : make_tuple(m, items, n);
        case OP_TUPLE1:
        case OP_TUPLE2:
        case OP_TUPLE3:
                n = (size_t)(m->op - OP_TUPLE1 + 1);
                if (m->n < floor_of(m) + n)
                        return fail(m, -EBADMSG, "stack underflow");
                m->n -= n;
                return make_tuple(m, m->stack + m->n, n);
        case OP_BININT:
        case OP_BININT1:
        case OP_BININT2:
                n = m->op == OP_BININT ? 4 : m->op == OP_BININT1 ? 1 : 2;
                if ((r = need(m, n)) < 0)
                        return r;
                v = new_value(m->a, PK_INT, m->op_at);
                v->u.i = m->op == OP_BININT ? (int64_t)(int32_t)(uint32_t)get_le(m, 4) : (int64_t)get_le(m, n);
                push(m, v);
                return 0;
        case OP_LONG1:
                return get_long1(m);
        case OP_BINFLOAT: {
                if ((r = need(m, 8)) < 0)
                        return r;
                uint64_t bits = 0;
                for (int i = 0; i < 8; i++)
                        bits = bits << 8 | m->p[m->pos++];
                v = new_value(m->a, PK_FLOAT, m->op_at);
                memcpy(&v->u.f, &bits, 8);
                push(m, v);
                return 0;
        }
        case OP_BINUNICODE:
        case OP_BINSTRING: {
                if ((r = need(m, 4)) < 0)
                        return r;
                uint64_t len = get_le(m, 4);
                if (m->op == OP_BINSTRING && len >= 0x80000000u)
                        return fail(m, -EBADMSG, "a negative length");
                return get_str(m, len);
        }
        case OP_SHORT_BINUNICODE:
        case OP_SHORT_BINSTRING:
                return (r = need(m, 1)) < 0 ? r : get_str(m, get_le(m, 1));
        case OP_NEWTRUE:
        case OP_NEWFALSE:
                v = new_value(m->a, PK_BOOL, m->op_at);
                v->u.b = m->op == OP_NEWTRUE;
                push(m, v);
                return 0;
        case OP_NONE:
                push(m, new_value(m->a, PK_NONE, m->op_at));
                return 0;
        case OP_REDUCE:
                return op_reduce(m);
        case OP_BUILD:
                /* an OrderedDict's attributes (a module's _metadata): not part of the state */
                if (!(v = pop(m)) || !(k = top(m)))
                        return -EBADMSG;
                if (k->kind != PK_DICT)
                        return fail(m, -EBADMSG, "setting the state of a %s", pk_kind_name(k->kind));
                return 0;
        case OP_SETITEM: {
                if (!(v = pop(m)) || !(k = pop(m)))
                        return -EBADMSG;
                struct pk_value *c = container(m, PK_DICT);
                if (!c)
                        return -EBADMSG;
                seq_add(m->a, c, k);
                seq_add(m->a, c, v);
                return 0;
        }
        case OP_SETITEMS:
        case OP_APPENDS: {
                if ((r = pop_mark(m, &items, &n)) < 0)
                        return r;
                if (m->op == OP_SETITEMS && n % 2)
                        return fail(m, -EBADMSG, "an odd number of keys and values (%zu)", n);
                struct pk_value *c = container(m, m->op == OP_SETITEMS ? PK_DICT : PK_LIST);
                if (!c)
                        return -EBADMSG;
                for (size_t i = 0; i < n; i++)
                        seq_add(m->a, c, items[i]);
                return 0;
        }
        case OP_APPEND: {
                if (!(v = pop(m)))
                        return -EBADMSG;
                struct pk_value *c = container(m, PK_LIST);
                if (!c)
                        return -EBADMSG;
                seq_add(m->a, c, v);
                return 0;
        }
        case OP_BINPERSID:
                return op_persid(m);
        case OP_STOP:
                if (!(v = pop(m)))
                        return -EBADMSG;
                *ret = v;
                *ret_stop = true;
                return 0;
        }
        return fail(m, -EBADMSG, "opcode 0x%02x is not one a state dict uses", m->op);
}

int pk_load(struct pk_arena *a, const unsigned char *data, size_t size, size_t start, struct pk_value **ret,
            size_t *ret_end, int *ret_protocol, struct bd_err *err)
{
        struct vm m = { .a = a, .p = data, .size = size, .pos = start, .err = err };
        struct pk_value *v = NULL;
        bool stop = false;
        int r = 0;
        while (!stop && r == 0) {
                if (m.pos >= size) {
                        m.op_at = m.pos;
                        r = bd_err_set(err, -EBADMSG, "byte %zu: the pickle ends before its STOP", m.pos);
                        break;
                }
                /* an opcode adds 1 to the stack, and at most as many cells as
                 * there are already (a copy of a list): the arena ends below
                 * twice its limit */
                if (a->cells >= PK_MAX_CELLS || m.n >= PK_MAX_STACK) {
                        m.op_at = m.pos;
                        m.op = data[m.pos];
                        r = fail(&m, -E2BIG, "more than %d %s", a->cells >= PK_MAX_CELLS ? PK_MAX_CELLS : PK_MAX_STACK,
                                 a->cells >= PK_MAX_CELLS ? "values and items" : "values on the stack");
                        break;
                }
                r = step(&m, &stop, &v);
        }
        free(m.stack);
        free(m.memo);
        if (r < 0)
                return r;
        *ret = v;
        if (ret_end)
                *ret_end = m.pos;
        if (ret_protocol)
                *ret_protocol = m.protocol;
        return 0;
}

struct pk_value *pk_dict_get(const struct pk_value *dict, const char *key)
{
        if (!dict || dict->kind != PK_DICT)
                return NULL;
        for (size_t i = dict->u.seq.n / 2; i-- > 0;)
                if (pk_is_str(dict->u.seq.v[2 * i], key))
                        return dict->u.seq.v[2 * i + 1];
        return NULL;
}

bool pk_is_str(const struct pk_value *v, const char *s)
{
        return v && v->kind == PK_STR && streq(v->u.str.s, s);
}
