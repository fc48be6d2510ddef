/* stage-problem.c: what went wrong with single entries (problems, each with
 * its severity) and with the whole job (the first fatal error), recorded by
 * every part of the job and read back through the API (stage.h). */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "stage-int.h"

static enum bd_severity severity_of(struct bd_stage *s, enum bd_problem_kind k)
{
        switch (k) {
        case PROB_SKIPPED:
        case PROB_ATTR:
                return SEV_WARNING;
        case PROB_EXTRA:
                return s->o.mode == STAGE_VERIFY_ONLY ? SEV_ERROR : SEV_WARNING;
        case PROB_REPAIRED:
        case PROB_REMOVED:
                return SEV_NOTE;
        default:
                return SEV_ERROR;
        }
}

void stage_problem(struct bd_stage *s, enum bd_problem_kind kind, const char *path, const char *fmt, ...)
{
        enum bd_severity sev = severity_of(s, kind);
        if (sev == SEV_ERROR)
                ADD(errors, 1);
        else if (sev == SEV_WARNING)
                ADD(warnings, 1);
        va_list ap;
        va_start(ap, fmt);
        char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        pthread_mutex_lock(&s->lock);
        if (s->nproblems < MAX_PROBLEMS) {
                if (s->nproblems == s->capproblems) {
                        s->capproblems = s->capproblems ? 2 * s->capproblems : 64;
                        s->problems = xrealloc(s->problems, s->capproblems * sizeof(*s->problems));
                }
                s->problems[s->nproblems++] = (struct bd_stage_problem){ kind, sev, xstrdup(path), msg };
                msg = NULL;
        }
        pthread_mutex_unlock(&s->lock);
        free(msg);
}

/* A failure of the whole job: the first one is kept, every worker stops. */
int stage_fatal(struct bd_stage *s, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        pthread_mutex_lock(&s->lock);
        if (!s->error)
                s->error = TAKE_PTR(msg);
        pthread_mutex_unlock(&s->lock);
        free(msg);
        atomic_store(&s->stop, true);
        return -1;
}

static int problem_cmp(const void *a, const void *b)
{
        const struct bd_stage_problem *x = a, *y = b;
        int c = strcmp(x->path, y->path);
        return c ? c : (int)x->kind - (int)y->kind;
}

size_t stage_problems(struct bd_stage *s, const struct bd_stage_problem **ret)
{
        pthread_mutex_lock(&s->lock);
        if (s->nproblems > 1)
                qsort(s->problems, s->nproblems, sizeof(*s->problems), problem_cmp);
        *ret = s->problems;
        size_t n = s->nproblems;
        pthread_mutex_unlock(&s->lock);
        return n;
}

const char *stage_error(struct bd_stage *s)
{
        return s->error;
}

const char *stage_failure(struct bd_stage *s)
{
        pthread_mutex_lock(&s->lock);
        const char *e = s->error;
        for (size_t i = 0; i < s->nproblems && !e; i++)
                if (s->problems[i].severity == SEV_ERROR)
                        e = s->problems[i].msg;
        pthread_mutex_unlock(&s->lock);
        return e;
}
