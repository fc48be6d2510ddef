/* backend.c: what backends share: plan caches, the hash of their keys. */
#include "config.h"

#include "backend.h"

void *bd_plan_find(struct bd_plan_cache *pc, uint64_t key)
{
        for (unsigned i = 0; i < BD_PLAN_SLOTS; i++)
                if (pc->slot[i].plan && pc->slot[i].key == key)
                        return pc->slot[i].plan;
        return NULL;
}

void bd_plan_put(struct bd_backend *be, struct bd_plan_cache *pc, uint64_t key, void *plan)
{
        unsigned i = pc->next++ % BD_PLAN_SLOTS;
        if (pc->slot[i].plan)
                be->ops->plan_free(be, pc->slot[i].plan);
        pc->slot[i].key = key;
        pc->slot[i].plan = plan;
}

void bd_plan_cache_clear(struct bd_backend *be, struct bd_plan_cache *pc)
{
        for (unsigned i = 0; i < BD_PLAN_SLOTS; i++) {
                if (pc->slot[i].plan)
                        be->ops->plan_free(be, pc->slot[i].plan);
                pc->slot[i].plan = NULL;
        }
        pc->next = 0;
}

uint64_t bd_hash(const void *p, size_t n, uint64_t h)
{
        const unsigned char *c = p;
        for (size_t i = 0; i < n; i++) {
                h ^= c[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

uint64_t bd_hash_tensor(const struct bd_tensor *t, uint64_t h)
{
        if (!t)
                return bd_hash("-", 1, h);
        int v[3] = { t->ndim, (int)t->dtype, (int)t->layout };
        h = bd_hash(v, sizeof(v), h);
        return bd_hash(t->dims, sizeof(t->dims[0]) * (size_t)t->ndim, h);
}
