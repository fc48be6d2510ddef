/* ring.c: the data loaders' worker threads and ring of batches (see ring.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "macro.h"
#include "ring.h"

struct slot {
        long g;                 /* the batch (counted from the last seek) it holds, -1: none */
        long epoch, index, nb;  /* that batch, and the batches of its epoch */
        int n;                  /* samples */
        int done;               /* samples finished */
};

struct worker {
        struct ring *r;
        int id;
        pthread_t tid;
};

struct ring {
        struct ring_config cfg;
        struct slot *slots;
        struct worker *workers;
        int n_workers;
        /* all below under mu */
        pthread_mutex_t mu;
        pthread_cond_t work, done;
        long claim_g, claim_epoch, claim_index; /* the next sample to hand out */
        int claim_j;
        long next_g;            /* the batch ring_next returns next */
        long next_epoch;        /* and its epoch */
        long want_epoch;        /* the epoch of the batch ring_next last asked for */
        long released;          /* batches before this one are free for reuse */
        long in_flight;
        bool stop, paused;
        int error;
        char error_msg[sizeof(((struct bd_err *)0)->msg)];
};

struct ring *ring_new(const struct ring_config *c)
{
        struct ring *r = xcalloc(1, sizeof(*r));
        r->cfg = *c;
        r->slots = xcalloc((size_t)c->slots, sizeof(*r->slots));
        for (int i = 0; i < c->slots; i++)
                r->slots[i].g = -1;
        pthread_mutex_init(&r->mu, NULL);
        pthread_cond_init(&r->work, NULL);
        pthread_cond_init(&r->done, NULL);
        return r;
}

void ring_lock(struct ring *r)
{
        pthread_mutex_lock(&r->mu);
}

void ring_unlock(struct ring *r)
{
        pthread_mutex_unlock(&r->mu);
}

/* Whether workers may start the next sample (lock held). */
static bool can_claim(const struct ring *r)
{
        if (r->stop || r->paused || r->error)
                return false;
        if (r->claim_g >= r->released + r->cfg.slots)
                return false;
        if (r->cfg.one_epoch && r->claim_epoch > r->want_epoch)
                return false;
        return true;
}

/* Lock held: the sample to fill next, its slot started on its first sample. */
static struct slot *claim(struct ring *r, int *ret_j)
{
        int s = (int)(r->claim_g % r->cfg.slots);
        struct slot *sl = &r->slots[s];
        int j = r->claim_j;
        if (j == 0) {
                sl->g = r->claim_g;
                sl->done = 0;
                sl->epoch = r->claim_epoch;
                sl->index = r->claim_index;
                sl->n = r->cfg.ops->start(r->cfg.ctx, s, sl->epoch, sl->index, &sl->nb);
        }
        if (++r->claim_j >= sl->n) {
                r->claim_j = 0;
                r->claim_g++;
                if (++r->claim_index >= sl->nb) {
                        r->claim_index = 0;
                        r->claim_epoch++;
                }
        }
        *ret_j = j;
        return sl;
}

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        struct ring *r = w->r;
        pthread_mutex_lock(&r->mu);
        for (;;) {
                while (!r->stop && !can_claim(r))
                        pthread_cond_wait(&r->work, &r->mu);
                if (r->stop)
                        break;
                int j;
                struct slot *sl = claim(r, &j);
                r->in_flight++;
                pthread_mutex_unlock(&r->mu);
                struct bd_err err;
                int e = r->cfg.ops->fill(r->cfg.ctx, w->id, (int)(sl - r->slots), j, &err);
                pthread_mutex_lock(&r->mu);
                r->in_flight--;
                if (e < 0 && !r->error) {
                        r->error = e;
                        snprintf(r->error_msg, sizeof(r->error_msg), "%s", err.msg);
                }
                /* the consumer waits for whole batches (or an error, or seek's in_flight) */
                if (++sl->done == sl->n || r->error || (r->paused && r->in_flight == 0))
                        pthread_cond_broadcast(&r->done);
        }
        pthread_mutex_unlock(&r->mu);
        return NULL;
}

int ring_start(struct ring *r, int n, struct bd_err *err)
{
        r->workers = xcalloc((size_t)n, sizeof(*r->workers));
        for (int i = 0; i < n; i++) {
                struct worker *w = &r->workers[i];
                w->r = r;
                w->id = i;
                if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
                        if (i == 0)
                                return bd_err_set(err, -EAGAIN, "%s: cannot start a thread", r->cfg.name);
                        break;
                }
                r->n_workers++;
        }
        return r->n_workers;
}

struct ring *ring_free(struct ring *r)
{
        if (!r)
                return NULL;
        pthread_mutex_lock(&r->mu);
        r->stop = true;
        pthread_cond_broadcast(&r->work);
        pthread_mutex_unlock(&r->mu);
        for (int i = 0; i < r->n_workers; i++)
                pthread_join(r->workers[i].tid, NULL);
        free(r->workers);
        free(r->slots);
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->work);
        pthread_cond_destroy(&r->done);
        free(r);
        return NULL;
}

int ring_next(struct ring *r, struct bd_err *err)
{
        pthread_mutex_lock(&r->mu);
        /* the batch returned last time is free again */
        r->released = r->next_g;
        long g = r->next_g;
        int s = (int)(g % r->cfg.slots);
        struct slot *sl = &r->slots[s];
        r->want_epoch = r->next_epoch;
        pthread_cond_broadcast(&r->work);
        while (!r->error && (sl->g != g || sl->done < sl->n))
                pthread_cond_wait(&r->done, &r->mu);
        if (r->cfg.warnings)
                loader_warn_summary(r->cfg.warnings);
        if (r->error) {
                int e = bd_err_set(err, r->error, "%s", r->error_msg);
                pthread_mutex_unlock(&r->mu);
                return e;
        }
        r->next_g = g + 1;
        r->next_epoch = sl->index + 1 == sl->nb ? sl->epoch + 1 : sl->epoch;
        pthread_mutex_unlock(&r->mu);
        return s;
}

void ring_seek(struct ring *r, long epoch)
{
        pthread_mutex_lock(&r->mu);
        /* let the samples in progress finish, then restart the counters */
        r->paused = true;
        while (r->in_flight > 0)
                pthread_cond_wait(&r->done, &r->mu);
        for (int i = 0; i < r->cfg.slots; i++)
                r->slots[i].g = -1;
        if (r->cfg.ops->reset)
                r->cfg.ops->reset(r->cfg.ctx);
        r->claim_g = r->next_g = r->released = 0;
        r->claim_epoch = r->next_epoch = r->want_epoch = epoch;
        r->claim_index = 0;
        r->claim_j = 0;
        r->paused = false;
        pthread_cond_broadcast(&r->work);
        pthread_mutex_unlock(&r->mu);
}
