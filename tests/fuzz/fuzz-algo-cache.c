/* fuzz-algo-cache.c: a convolution algorithm cache file as the CUDA
 * backend reads it under BD_CUDA_ALGO_CACHE (trainer/ops/algo-cache.h).
 *
 * Promises checked: never a crash; refused with one line naming the file
 * (-EINVAL) and no entry kept, or parsed: then every entry's algorithms are
 * within 0..BD_ALGO_MAX, an entry set before the parse is kept as it was,
 * and the cache's text parses again to the same entries. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "algo-cache.h"
#include "fuzz.h"
#include "macro.h"

static bool same(const struct bd_algo_cache *a, const struct bd_algo_cache *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++) {
                const struct bd_algo_entry *x = &a->e[i], *y = bd_algo_cache_get(b, x->key);
                if (!y || x->fwd != y->fwd || x->bwd_data != y->bwd_data || x->bwd_filter != y->bwd_filter)
                        return false;
        }
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct bd_algo_cache c, d;
        struct bd_err err;
        bd_algo_cache_init(&c, "NVIDIA H200", 91002);
        FUZZ_CHECK(bd_algo_cache_set(&c, 0x0123456789abcdefULL, 1, 2, 3) == 0, "set");
        bool other = false;
        int r = bd_algo_cache_parse(&c, (const char *)data, size, "CACHE", &other, &err);
        const struct bd_algo_entry *mine = bd_algo_cache_get(&c, 0x0123456789abcdefULL);
        FUZZ_CHECK(mine && mine->fwd == 1 && mine->bwd_data == 2 && mine->bwd_filter == 3,
                   "the entry set before the parse is kept");
        if (r < 0) {
                FUZZ_CHECK(r == -EINVAL, "a refusal is -EINVAL, not %d", r);
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n') && !strncmp(err.msg, "CACHE", 5),
                           "a refusal is one line naming the file: '%s'", err.msg);
                FUZZ_CHECK(c.n == 1, "a refused file leaves no entry (%zu)", c.n);
                bd_algo_cache_free(&c);
                return 0;
        }
        FUZZ_CHECK(!other || c.n == 1, "another device's file leaves no entry");
        for (size_t i = 0; i < c.n; i++)
                FUZZ_CHECK(c.e[i].fwd >= 0 && c.e[i].fwd <= BD_ALGO_MAX && c.e[i].bwd_data >= 0 &&
                                   c.e[i].bwd_data <= BD_ALGO_MAX && c.e[i].bwd_filter >= 0 &&
                                   c.e[i].bwd_filter <= BD_ALGO_MAX,
                           "entry %zu: algorithms within 0..%d", i, BD_ALGO_MAX);
        char *text = bd_algo_cache_format(&c);
        bd_algo_cache_init(&d, "NVIDIA H200", 91002);
        FUZZ_CHECK(bd_algo_cache_parse(&d, text, strlen(text), "again", &other, &err) == 0 && !other,
                   "the cache's own text parses: %s", err.msg);
        FUZZ_CHECK(same(&c, &d), "the cache's own text parses to the same entries");
        free(text);
        bd_algo_cache_free(&d);
        bd_algo_cache_free(&c);
        return 0;
}
