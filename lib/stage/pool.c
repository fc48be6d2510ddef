/* pool.c: worker threads around one mutex-protected task queue. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "pool.h"

struct task {
        struct task *next;
        bd_task_fn fn;
        void *arg;
};

struct worker {
        struct bd_pool *pool;
        unsigned index;
        pthread_t thread;
};

struct bd_pool {
        pthread_mutex_t lock;
        pthread_cond_t work;    /* a task was queued, or the pool stops */
        pthread_cond_t idle;    /* the queue emptied and no task runs */
        struct task *head, *tail;
        unsigned running;       /* tasks being run */
        bool stop;
        unsigned n;
        struct worker *workers;
};

static void *worker_main(void *data)
{
        struct worker *w = data;
        struct bd_pool *p = w->pool;
        pthread_mutex_lock(&p->lock);
        for (;;) {
                while (!p->head && !p->stop)
                        pthread_cond_wait(&p->work, &p->lock);
                if (!p->head)
                        break;
                struct task *t = p->head;
                p->head = t->next;
                if (!p->head)
                        p->tail = NULL;
                p->running++;
                pthread_mutex_unlock(&p->lock);
                t->fn(t->arg, w->index);
                free(t);
                pthread_mutex_lock(&p->lock);
                p->running--;
                if (!p->head && p->running == 0)
                        pthread_cond_broadcast(&p->idle);
        }
        pthread_mutex_unlock(&p->lock);
        return NULL;
}

struct bd_pool *pool_new(unsigned nthreads)
{
        if (nthreads < 1)
                nthreads = 1;
        struct bd_pool *p = xcalloc(1, sizeof(*p));
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->work, NULL);
        pthread_cond_init(&p->idle, NULL);
        p->workers = xcalloc(nthreads, sizeof(*p->workers));
        for (unsigned i = 0; i < nthreads; i++) {
                p->workers[i].pool = p;
                p->workers[i].index = i;
                int r = pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
                if (r != 0) {
                        pool_free(p);
                        errno = r;
                        return NULL;
                }
                p->n++;
        }
        return p;
}

unsigned pool_size(const struct bd_pool *p)
{
        return p->n;
}

void pool_submit(struct bd_pool *p, bd_task_fn fn, void *arg)
{
        struct task *t = xmalloc(sizeof(*t));
        t->next = NULL;
        t->fn = fn;
        t->arg = arg;
        pthread_mutex_lock(&p->lock);
        if (p->tail)
                p->tail->next = t;
        else
                p->head = t;
        p->tail = t;
        pthread_cond_signal(&p->work);
        pthread_mutex_unlock(&p->lock);
}

void pool_wait(struct bd_pool *p)
{
        pthread_mutex_lock(&p->lock);
        while (p->head || p->running)
                pthread_cond_wait(&p->idle, &p->lock);
        pthread_mutex_unlock(&p->lock);
}

struct pool_for {
        void (*fn)(void *arg, size_t i, unsigned worker);
        void *arg;
        size_t n;
        atomic_size_t next;
        pthread_mutex_t lock;
        pthread_cond_t done_cond;
        unsigned left;          /* loop tasks still running */
};

static void pool_for_task(void *data, unsigned worker)
{
        struct pool_for *f = data;
        for (;;) {
                size_t i = atomic_fetch_add(&f->next, 1);
                if (i >= f->n)
                        break;
                f->fn(f->arg, i, worker);
        }
        pthread_mutex_lock(&f->lock);
        if (--f->left == 0)
                pthread_cond_signal(&f->done_cond);
        pthread_mutex_unlock(&f->lock);
}

void pool_for(struct bd_pool *p, size_t n, void (*fn)(void *arg, size_t i, unsigned worker), void *arg)
{
        if (n == 0)
                return;
        struct pool_for f = { .fn = fn, .arg = arg, .n = n };
        atomic_init(&f.next, 0);
        pthread_mutex_init(&f.lock, NULL);
        pthread_cond_init(&f.done_cond, NULL);
        unsigned k = n < p->n ? (unsigned)n : p->n;
        f.left = k;
        for (unsigned i = 0; i < k; i++)
                pool_submit(p, pool_for_task, &f);
        pthread_mutex_lock(&f.lock);
        while (f.left)
                pthread_cond_wait(&f.done_cond, &f.lock);
        pthread_mutex_unlock(&f.lock);
        pthread_mutex_destroy(&f.lock);
        pthread_cond_destroy(&f.done_cond);
}

void pool_free(struct bd_pool *p)
{
        if (!p)
                return;
        pthread_mutex_lock(&p->lock);
        while (p->head || p->running)
                pthread_cond_wait(&p->idle, &p->lock);
        p->stop = true;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->lock);
        for (unsigned i = 0; i < p->n; i++)
                pthread_join(p->workers[i].thread, NULL);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->idle);
        free(p->workers);
        free(p);
}
