/* reader.c: a trial's result read as its workload file says (reader.h). */
#include "config.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fs.h"
#include "json.h"
#include "macro.h"
#include "reader.h"
#include "strutil.h"

/* The most lines a pattern may span. */
#define SPAN_MAX 8

struct reader {
        const struct workload_reader *rd;
        regex_t re[_WV_MAX];
        bool has[_WV_MAX];
        int span[_WV_MAX];              /* the lines a pattern spans: 1 + its newlines */
        int span_max;
};

struct reader *reader_new(const struct workload_reader *rd, struct bd_err *err)
{
        struct reader *r = xcalloc(1, sizeof(*r));
        r->rd = rd;
        if (rd->read != READ_REGEX)
                return r;
        for (int i = 0; i < _WV_MAX; i++) {
                if (!rd->match[i])
                        continue;
                if (regcomp(&r->re[i], rd->match[i], REG_EXTENDED) != 0) {
                        bd_err_set(err, -EINVAL, "result.match.%s: '%s' does not compile", workload_value_names[i],
                                   rd->match[i]);
                        reader_free(r);
                        return NULL;
                }
                r->has[i] = true;
                r->span[i] = 1;
                for (const char *p = rd->match[i]; *p; p++)
                        r->span[i] += *p == '\n';
                if (r->span[i] > SPAN_MAX)
                        r->span[i] = SPAN_MAX;
                if (r->span[i] > r->span_max)
                        r->span_max = r->span[i];
        }
        return r;
}

void reader_free(struct reader *r)
{
        if (!r)
                return;
        for (int i = 0; i < _WV_MAX; i++)
                if (r->has[i])
                        regfree(&r->re[i]);
        free(r);
}

void reader_values_init(struct reader_values *v)
{
        memset(v, 0, sizeof(*v));
        v->step = -1;
}

void reader_values_release(struct reader_values *v)
{
        free(v->loss);
        reader_values_init(v);
}

/* One value read: scaled, kept where it goes. */
static void take(const struct reader *r, struct reader_values *v, int what, double x)
{
        if (!isfinite(x))
                return;
        x *= r->rd->scale[what];
        switch (what) {
        case WV_STEP:
                v->step = x;
                break;
        case WV_LOSS:
                if (v->nloss % 64 == 0)
                        v->loss = xrealloc(v->loss, (v->nloss + 64) * sizeof(*v->loss));
                v->loss[v->nloss] = (struct reader_point){ v->step >= 0 ? v->step : (double)v->nloss, x };
                v->nloss++;
                break;
        case WV_THROUGHPUT:
                if (v->tp_seen++ >= r->rd->skip) {
                        v->tp_sum += x;
                        v->tp_count++;
                }
                break;
        case WV_ACCURACY:
                v->accuracy = x;
                v->has_accuracy = true;
                break;
        case WV_ACCURACY_SEGM:
                v->accuracy_segm = x;
                v->has_accuracy_segm = true;
                break;
        }
}

/* The number at the start of s (n bytes): strtod's, on a copy. */
static bool number_at(const char *s, size_t n, double *ret)
{
        char tmp[64];
        if (n == 0)
                return false;
        if (n >= sizeof(tmp))
                n = sizeof(tmp) - 1;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        char *end;
        errno = 0;
        double x = strtod(tmp, &end);
        if (end == tmp || errno == ERANGE || !isfinite(x))
                return false;
        *ret = x;
        return true;
}

/* The last lines read, for patterns that span several. */
struct window {
        char *line[SPAN_MAX];           /* ring: line[n % SPAN_MAX] is the newest */
        size_t n;                       /* lines put */
        struct bd_buf joined;
};

static void window_put(struct window *w, const char *s, size_t len)
{
        char **slot = &w->line[w->n++ % SPAN_MAX];
        free(*slot);
        *slot = xstrndup(s, len);
}

/* The last k lines joined by newlines; *last: where the newest starts.
 * NULL while fewer have been read. */
static const char *window_last(struct window *w, int k, size_t *last)
{
        if ((size_t)k > w->n)
                return NULL;
        buf_reset(&w->joined);
        for (int i = k - 1; i >= 0; i--) {
                if (i == 0)
                        *last = w->joined.len;
                buf_puts(&w->joined, w->line[(w->n - 1 - (size_t)i) % SPAN_MAX]);
                if (i)
                        buf_putc(&w->joined, '\n');
        }
        return w->joined.s ? w->joined.s : "";
}

static void window_release(struct window *w)
{
        for (int i = 0; i < SPAN_MAX; i++)
                free(w->line[i]);
        buf_release(&w->joined);
}

/* The newest line against each pattern (one that spans k lines: the last k,
 * its match ending in the newest). */
static void regex_line(const struct reader *r, struct window *w, struct reader_values *v)
{
        bool any = false;
        /* the step first: a loss on the same line is at this step */
        static const int order[] = { WV_STEP, WV_LOSS, WV_THROUGHPUT, WV_ACCURACY, WV_ACCURACY_SEGM };
        for (size_t k = 0; k < ARRAY_SIZE(order); k++) {
                int i = order[k];
                regmatch_t m[2];
                double x;
                size_t last = 0;
                if (!r->has[i])
                        continue;
                const char *text = window_last(w, r->span[i], &last);
                if (!text || regexec(&r->re[i], text, 2, m, 0) != 0 || m[1].rm_so < 0 ||
                    (size_t)m[0].rm_eo <= last)
                        continue;
                if (!number_at(text + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so), &x))
                        continue;
                take(r, v, i, x);
                any = true;
        }
        v->matched += any;
}

/* A number of a record's data or a JSON file: a finite number, or a string
 * that is one and nothing else (DLLogger writes some numbers as text). */
static bool data_number(const cJSON *d, double *ret)
{
        if (cJSON_IsNumber(d)) {
                *ret = d->valuedouble;
                return isfinite(*ret);
        }
        if (!cJSON_IsString(d))
                return false;
        char *end;
        errno = 0;
        double x = strtod(d->valuestring, &end);
        while (end != d->valuestring && (*end == ' ' || *end == '\t'))
                end++;
        if (end == d->valuestring || *end || errno == ERANGE || !isfinite(x))
                return false;
        *ret = x;
        return true;
}

/* "DLLL {"timestamp": ..., "type": "LOG", "step": [iter] | "PARAMETER" | [],
 * "data": {...}}" */
static void dllogger_record(const struct reader *r, const char *js, const char *end, struct reader_values *v)
{
        cJSON *j = cJSON_ParseWithLengthOpts(js, (size_t)(end - js), NULL, false);
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
        if (!cJSON_IsObject(data)) {
                v->bad_records++;
                cJSON_Delete(j);
                return;
        }
        v->records++;
        double x;
        const cJSON *step = cJSON_GetObjectItemCaseSensitive(j, "step");
        if (!r->rd->match[WV_STEP]) {
                /* the record's own step: a number, or the last of a list (iteration) */
                const cJSON *s = cJSON_IsArray(step) ? cJSON_GetArrayItem(step, cJSON_GetArraySize(step) - 1) : step;
                if (s && data_number(s, &x))
                        take(r, v, WV_STEP, x);
        }
        bool any = false;
        for (int i = 0; i < _WV_MAX; i++) {
                const char *name = r->rd->match[i];
                if (name && data_number(cJSON_GetObjectItemCaseSensitive(data, name), &x)) {
                        take(r, v, i, x);
                        any = true;
                }
        }
        v->matched += any;
        cJSON_Delete(j);
}

#define DLLL_MARK "DLLL "

static void scan_lines(const struct reader *r, const char *text, size_t len, struct reader_values *v)
{
        const char *p = text, *end = text + len;
        struct window w = { .joined = BD_BUF_INIT };
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *e = nl ? nl : end;
                long rank;
                const char *body = mlperf_line_body(p, e, &rank);
                const char *le = e > body && e[-1] == '\r' ? e - 1 : e;
                if (rank <= 0) {
                        if (r->rd->read == READ_REGEX) {
                                /* a NUL inside ends the line for regexec: what follows is not read */
                                window_put(&w, body, (size_t)(le - body));
                                regex_line(r, &w, v);
                        } else if (r->rd->read == READ_DLLOGGER) {
                                const char *m = memmem(body, (size_t)(le - body), DLLL_MARK, strlen(DLLL_MARK));
                                if (m)
                                        dllogger_record(r, m + strlen(DLLL_MARK), le, v);
                        }
                }
                p = nl ? nl + 1 : end;
        }
        window_release(&w);
}

void reader_scan_log(const struct reader *r, const char *text, size_t len, struct reader_values *v)
{
        if (r->rd->read == READ_REGEX || r->rd->read == READ_DLLOGGER)
                scan_lines(r, text, len, v);
}

/* A JSON text as far as it goes: an array that a writer appends to and never
 * closes ("[{...},{...},") is closed here. */
static cJSON *parse_lenient(const char *text, size_t len)
{
        cJSON *j = cJSON_ParseWithLength(text, len);
        if (j)
                return j;
        size_t a = 0, b = len;
        while (a < b && strchr(" \t\r\n", text[a]))
                a++;
        if (a == b || text[a] != '[')
                return NULL;
        while (b > a && (strchr(" \t\r\n", text[b - 1]) || text[b - 1] == '\0'))
                b--;
        if (b > a && text[b - 1] == ',')
                b--;
        _cleanup_free_ char *copy = xmalloc(b - a + 2);
        memcpy(copy, text + a, b - a);
        copy[b - a] = ']';
        copy[b - a + 1] = '\0';
        return cJSON_ParseWithLength(copy, b - a + 1);
}

/* The value at a dotted path; a name looked up on an array is looked up in
 * its last item that has it. */
static const cJSON *at_path(const cJSON *j, const char *path)
{
        _cleanup_free_ char *copy = xstrdup(path);
        char *save = NULL;
        for (char *seg = strtok_r(copy, ".", &save); seg && j; seg = strtok_r(NULL, ".", &save)) {
                char *end;
                long idx = strtol(seg, &end, 10);
                if (*seg && !*end) {
                        int n = cJSON_GetArraySize(j);
                        if (!cJSON_IsArray(j) || idx < -n || idx >= n)
                                return NULL;
                        j = cJSON_GetArrayItem(j, (int)(idx < 0 ? n + idx : idx));
                } else if (cJSON_IsArray(j)) {
                        const cJSON *hit = NULL, *e;
                        cJSON_ArrayForEach(e, j)
                                if (cJSON_GetObjectItemCaseSensitive(e, seg))
                                        hit = cJSON_GetObjectItemCaseSensitive(e, seg);
                        j = hit;
                } else
                        j = cJSON_GetObjectItemCaseSensitive(j, seg);
        }
        return j;
}

int reader_scan_file(const struct reader *r, const char *text, size_t len, struct reader_values *v,
                     struct bd_err *err)
{
        if (r->rd->read == READ_DLLOGGER) {
                long before = v->records;
                scan_lines(r, text, len, v);
                if (v->records == before)
                        return bd_err_set(err, -EINVAL, "no DLLogger record (\"DLLL {...}\" lines)");
                return 0;
        }
        if (r->rd->read != READ_JSON)
                return 0;
        cJSON *j = parse_lenient(text, len);
        if (!j)
                return bd_err_set(err, -EINVAL, "not JSON");
        v->records += cJSON_IsArray(j) ? cJSON_GetArraySize(j) : 1;
        bool any = false;
        for (int i = 0; i < _WV_MAX; i++) {
                double x;
                if (r->rd->match[i] && data_number(at_path(j, r->rd->match[i]), &x)) {
                        take(r, v, i, x);
                        any = true;
                }
        }
        v->matched += any;
        cJSON_Delete(j);
        return 0;
}

char *reader_trial_result(const struct reader_where *at)
{
        if (at->log && str_has_suffix(at->log, ".log"))
                return xasprintf("%.*s.json", (int)(strlen(at->log) - 4), at->log);
        return at->logdir ? xasprintf("%s/%s_%d.json", at->logdir, at->run ? at->run : "", at->trial) : NULL;
}

/* {result}, {logdir}, {run}, {trial} filled in */
static char *fill_file(const char *tmpl, const struct reader_where *at)
{
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        _cleanup_free_ char *result = reader_trial_result(at);
        for (const char *p = tmpl; *p; p++) {
                const char *end = *p == '{' ? strchr(p, '}') : NULL;
                if (!end) {
                        buf_putc(&b, *p);
                        continue;
                }
                size_t n = (size_t)(end - p - 1);
                if (n == 6 && !strncmp(p + 1, "result", n))
                        buf_puts(&b, result ? result : "");
                else if (n == 6 && !strncmp(p + 1, "logdir", n))
                        buf_puts(&b, at->logdir ? at->logdir : ".");
                else if (n == 3 && !strncmp(p + 1, "run", n))
                        buf_puts(&b, at->run ? at->run : "");
                else if (n == 5 && !strncmp(p + 1, "trial", n))
                        buf_printf(&b, "%d", at->trial);
                else
                        buf_printf(&b, "%.*s", (int)(n + 2), p);
                p = end;
        }
        return buf_detach(&b);
}

char *reader_result_file(const struct workload_reader *rd, const struct reader_where *at, char **missing)
{
        *missing = NULL;
        if (!rd->file)
                return NULL;
        char *path = fill_file(rd->file, at);
        if (!strchr(path, '*'))
                return path;
        glob_t g;
        char *found = NULL;
        if (glob(path, 0, NULL, &g) == 0 && g.gl_pathc > 0)
                found = xstrdup(g.gl_pathv[g.gl_pathc - 1]); /* sorted: the last (a job id, a time) */
        if (!found)
                *missing = TAKE_PTR(path);
        else
                free(path);
        globfree(&g);
        return found;
}

/* What the values say about the trial, over what the launch script's
 * lines said (t: mlperf_parse_text of the log). */
static void conclude(const struct workload *w, const struct reader_values *v, double target, double target_segm,
                     struct mlperf_trial *t)
{
        bool ttt = w->result == RESULT_TIME_TO_TRAIN;
        const char *tp = w->reader.match[WV_THROUGHPUT], *acc = w->reader.match[WV_ACCURACY];
        if (v->tp_count) {
                t->throughput = v->tp_sum / v->tp_count;
                t->throughput_logged = v->tp_count;
        }
        t->has_accuracy = v->has_accuracy;
        t->accuracy = v->accuracy;
        t->has_accuracy_segm = v->has_accuracy_segm;
        t->accuracy_segm = v->accuracy_segm;
        t->has_target = target >= 0;
        t->target = target >= 0 ? target : 0;
        t->target_from_log = false;
        t->has_target_segm = target_segm >= 0;
        t->target_segm = target_segm >= 0 ? target_segm : 0;
        t->reached = t->has_target && t->has_accuracy && t->accuracy >= t->target &&
                     (!t->has_target_segm || (t->has_accuracy_segm && t->accuracy_segm >= t->target_segm));
        bool ended = t->result_lines > 0 || t->ending_seen;
        t->timed = t->result_lines > 0;
        t->time_to_train = t->timed ? t->result_seconds : 0;
        t->reason[0] = '\0';
        if (!ended) {
                t->outcome = v->matched ? OUT_INCOMPLETE : OUT_NO_RUN;
                STR_COPY(t->reason, v->matched ? "no RESULT line: the run did not end (killed or truncated)"
                                    : t->lines ? "no line of the log matched the workload's result rules"
                                               : "empty log");
                t->converged = false;
                return;
        }
        t->outcome = OUT_SUCCESS;
        if (!ttt) {
                t->converged = t->throughput_logged > 0;
                if (!t->converged)
                        snprintf(t->reason, sizeof(t->reason), "no result: %s", !tp ? "no throughput rule"
                                 : v->tp_seen ? "every throughput read was skipped (result.skip)"
                                              : "nothing matched result.match.throughput");
                return;
        }
        if (!t->timed)
                STR_COPY(t->reason, "no RESULT line with the time");
        else if (t->has_target && !t->has_accuracy)
                snprintf(t->reason, sizeof(t->reason), "no result: no accuracy read (%s)",
                         acc ? "nothing matched result.match.accuracy" : "no accuracy rule");
        else if (t->has_target && t->accuracy < t->target)
                snprintf(t->reason, sizeof(t->reason), "accuracy %.4f below the target %.4f", t->accuracy,
                         t->target);
        else if (t->has_target && !t->reached)
                snprintf(t->reason, sizeof(t->reason), t->has_accuracy_segm ? "segm accuracy %.4f below the "
                         "target %.4f" : "no segm accuracy read (target %.4f)",
                         t->has_accuracy_segm ? t->accuracy_segm : t->target_segm, t->target_segm);
        t->converged = t->timed && (t->reached || !t->has_target);
}

void reader_read_text(const struct workload *w, const struct reader *r, const char *log, size_t len,
                      const char *file_text, size_t file_len, double target, double target_segm,
                      struct mlperf_trial *t, struct reader_values *v)
{
        if (w->reader.read == READ_MLLOG) {
                mlperf_parse_text_segm(log, len, target, target_segm, t);
                return;
        }
        mlperf_parse_text_segm(log, len, -1, -1, t);
        reader_scan_log(r, log, len, v);
        if (file_text)
                (void) reader_scan_file(r, file_text, file_len, v, NULL);
        conclude(w, v, target, target_segm, t);
}

int reader_read_trial(const struct workload *w, const struct reader_where *at, double target, double target_segm,
                      struct mlperf_trial *t, struct bd_err *err)
{
        if (w->reader.read == READ_MLLOG)
                return mlperf_read_trial_segm(at->log, target, target_segm, t, err);
        memset(t, 0, sizeof(*t));
        _cleanup_free_ char *text = NULL, *ftext = NULL, *missing = NULL;
        size_t len = 0, flen = 0;
        int r = fs_read_file(at->log, 256u << 20, &text, &len, err);
        if (r < 0) {
                t->outcome = OUT_MISSING;
                snprintf(t->reason, sizeof(t->reason), "%.159s", err ? err->msg : strerror(-r));
                return r;
        }
        struct reader *rd = reader_new(&w->reader, err);
        if (!rd) {
                t->outcome = OUT_MISSING;
                STR_COPY(t->reason, "the workload's result rules do not compile");
                return -EINVAL;
        }
        _cleanup_free_ char *file = reader_result_file(&w->reader, at, &missing);
        bool have_file = file && fs_read_file(file, 256u << 20, &ftext, &flen, NULL) == 0;
        struct reader_values v;
        reader_values_init(&v);
        reader_read_text(w, rd, text, len, have_file ? ftext : NULL, flen, target, target_segm, t, &v);
        struct bd_err ferr;
        if (w->reader.file && t->outcome == OUT_SUCCESS && !t->converged) {
                /* say why the file gave nothing */
                if (!have_file)
                        snprintf(t->reason, sizeof(t->reason), "no result: no file %s",
                                 missing ? missing : file ? file : w->reader.file);
                else {
                        struct reader_values again;
                        reader_values_init(&again);
                        if (reader_scan_file(rd, ftext, flen, &again, &ferr) < 0)
                                snprintf(t->reason, sizeof(t->reason), "no result: %s: %.100s", file, ferr.msg);
                        reader_values_release(&again);
                }
        }
        reader_values_release(&v);
        reader_free(rd);
        return 0;
}
