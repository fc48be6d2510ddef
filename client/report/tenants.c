/* tenants.c: the tenants of a run, round by round (tenants.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tenants.h"

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

void tenants_compute(struct tenants_model *m)
{
        _cleanup_free_ double *vals = xcalloc((size_t)m->n + 1, sizeof(double));
        for (int g = 0; g < m->rounds; g++) {
                struct tenant_round *rd = &m->round[g];
                *rd = (struct tenant_round){ .spread = NAN, .median = NAN, .best = NAN, .worst = NAN };
                int k = 0;
                for (int i = 0; i < m->n; i++) {
                        struct tenant_row *row = &m->rows[g * m->n + i];
                        row->vs_median = NAN;
                        row->flagged = false;
                        if (row->has_value)
                                vals[k++] = row->value;
                }
                rd->values = k;
                if (k > 0) {
                        qsort(vals, (size_t)k, sizeof(double), cmp_double);
                        rd->median = k % 2 ? vals[k / 2] : (vals[k / 2 - 1] + vals[k / 2]) / 2;
                        for (int i = 0; i < k; i++)
                                rd->sum += vals[i];
                        rd->best = m->higher_better ? vals[k - 1] : vals[0];
                        rd->worst = m->higher_better ? vals[0] : vals[k - 1];
                        if (k > 1 && rd->best > 0 && rd->worst > 0)
                                rd->spread = m->higher_better ? rd->worst / rd->best : rd->best / rd->worst;
                }
                for (int i = 0; i < m->n; i++) {
                        struct tenant_row *row = &m->rows[g * m->n + i];
                        if (!row->has_value) {
                                row->flagged = true;
                        } else if (rd->median > 0) {
                                row->vs_median = (row->value - rd->median) / rd->median;
                                double worse = m->higher_better ? -row->vs_median : row->vs_median;
                                /* a hair under the tolerance from rounding is not over it */
                                row->flagged = worse >= m->tolerance - 1e-12;
                        }
                        rd->flagged += row->flagged;
                }
        }
}

void tenants_release(struct tenants_model *m)
{
        free(m->rows);
        free(m->round);
        m->rows = NULL;
        m->round = NULL;
}

void tenants_text(const struct tenants_model *m, struct bd_buf *out)
{
        const char *what = m->time ? "TIME(min)" : m->unit;
        buf_printf(out, "  tenants: %d single-rank runs at once on one node, %d round%s; flagged: %.0f%% or more %s "
                        "the round's median\n", m->n, m->rounds, m->rounds == 1 ? "" : "s", m->tolerance * 100,
                   m->higher_better ? "below" : "above");
        buf_printf(out, "  ROUND TENANT TRIAL %12s  VS MEDIAN  WHERE\n", what);
        for (int i = 0; i < m->n * m->rounds; i++) {
                const struct tenant_row *row = &m->rows[i];
                char val[32], vs[32];
                if (row->has_value)
                        snprintf(val, sizeof(val), "%.*f", m->time ? 2 : 1, row->value);
                else
                        snprintf(val, sizeof(val), "%s", row->outcome);
                if (isnan(row->vs_median))
                        snprintf(vs, sizeof(vs), "-");
                else
                        snprintf(vs, sizeof(vs), "%+.1f%%", row->vs_median * 100);
                bool none = !row->has_value;
                buf_printf(out, "  %-5d %-6d %-5d %12s  %9s  %s", row->round, row->tenant, row->trial, val, vs,
                           row->where[0] ? row->where : "-");
                if (row->flagged)
                        buf_printf(out, "  <- %s%s%s", none ? "NO RESULT" : "SLOW", none && row->why[0] ? ": " : "",
                                   none ? row->why : "");
                buf_putc(out, '\n');
        }
        for (int g = 0; g < m->rounds; g++) {
                const struct tenant_round *rd = &m->round[g];
                buf_printf(out, "  round %d: ", g + 1);
                if (rd->values == 0) {
                        buf_puts(out, "no tenant gave a result\n");
                        continue;
                }
                if (m->higher_better && !m->time)
                        buf_printf(out, "sum %.1f %s, ", rd->sum, m->unit);
                buf_printf(out, "median %.*f, ", m->time ? 2 : 1, rd->median);
                if (isnan(rd->spread))
                        buf_puts(out, "spread -");
                else
                        buf_printf(out, "slowest/fastest %.3f", rd->spread);
                if (rd->flagged)
                        buf_printf(out, "; %d tenant%s flagged\n", rd->flagged, rd->flagged == 1 ? "" : "s");
                else
                        buf_printf(out, "; no tenant %.0f%% or more %s the median\n", m->tolerance * 100,
                                   m->higher_better ? "below" : "above");
        }
}

cJSON *tenants_json(const struct tenants_model *m)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "tenants", m->n);
        cJSON_AddNumberToObject(o, "rounds", m->rounds);
        cJSON_AddStringToObject(o, "unit", m->time ? "min" : m->unit);
        cJSON_AddBoolToObject(o, "higher_is_better", m->higher_better);
        cJSON_AddNumberToObject(o, "tolerance", m->tolerance);
        cJSON *rows = cJSON_AddArrayToObject(o, "tenant_results");
        for (int i = 0; i < m->n * m->rounds; i++) {
                const struct tenant_row *row = &m->rows[i];
                cJSON *t = cJSON_CreateObject();
                cJSON_AddNumberToObject(t, "round", row->round);
                cJSON_AddNumberToObject(t, "tenant", row->tenant);
                cJSON_AddNumberToObject(t, "trial", row->trial);
                cJSON_AddStringToObject(t, "outcome", row->outcome);
                json_add_number(t, "value", row->has_value ? row->value : NAN);
                json_add_number(t, "vs_median", row->vs_median);
                cJSON_AddBoolToObject(t, "flagged", row->flagged);
                if (row->where[0])
                        cJSON_AddStringToObject(t, "where", row->where);
                else
                        cJSON_AddNullToObject(t, "where");
                if (row->why[0] && !row->has_value)
                        cJSON_AddStringToObject(t, "why", row->why);
                cJSON_AddItemToArray(rows, t);
        }
        cJSON *rounds = cJSON_AddArrayToObject(o, "rounds_summary");
        for (int g = 0; g < m->rounds; g++) {
                const struct tenant_round *rd = &m->round[g];
                cJSON *t = cJSON_CreateObject();
                cJSON_AddNumberToObject(t, "round", g + 1);
                cJSON_AddNumberToObject(t, "values", rd->values);
                json_add_number(t, "sum", rd->values && m->higher_better && !m->time ? rd->sum : NAN);
                json_add_number(t, "median", rd->median);
                json_add_number(t, "best", rd->best);
                json_add_number(t, "worst", rd->worst);
                json_add_number(t, "spread", rd->spread);
                cJSON_AddNumberToObject(t, "flagged", rd->flagged);
                cJSON_AddItemToArray(rounds, t);
        }
        return o;
}
