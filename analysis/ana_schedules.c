#include "analysis/ana_format.h"
#include "analysis/ana_schedules.h"
#include "sched/sch_schedsize.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_util.h"
#include "sched/sch_schedule.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x is half of tb to the engine's nanosecond: times are sums of whole
 * nanoseconds, so a ratio that holds exactly can be a few ns off (zb-h2's
 * T_F = T_B / 2 was tested without that slack, and lost its formula where
 * zb-v and zb-h1 kept theirs: helper-102). */
static int half_of(double x, double tb)
{
    return fabs(x - tb / 2) <= 1e-9 * tb + 2e-9;
}

double ana_bubble_formula(const char *schedule, int K, int M, double tf, double tb,
                          double tw)
{
    if (K < 1 || M < 1)
        return NAN;
    if (!strncmp(schedule, "zb-", 3) && !half_of(tw, tb))
        return NAN; /* B != W: the closed forms assume halves */
    if (!strcmp(schedule, "gpipe") || !strcmp(schedule, "1f1b") ||
        !strcmp(schedule, "eager-1f1b") || !strcmp(schedule, "breadth-first"))
        return (double)(K - 1) / (M + K - 1);
    if (!strncmp(schedule, "interleaved:", 12)) {
        char *end;
        long v = strtol(schedule + 12, &end, 10);
        if (*end || v < 1 || (v > 1 && M % K))
            return NAN;
        return (double)(K - 1) / ((double)v * M + K - 1);
    }
    if (!strncmp(schedule, "breadth-first:", 14)) { /* (vM+K-1)(tf+tb)/v span, M >= K */
        char *end;
        long v = strtol(schedule + 14, &end, 10);
        if (*end || v < 1 || (v > 1 && M < K)) /* v = 1 is gpipe, op for op */
            return NAN;
        return (double)(K - 1) / ((double)v * M + K - 1);
    }
    if (!strcmp(schedule, "zb-h2")) { /* (3M+K-1) T span when T_F = T_B = T_W = T */
        if (M < K || !(tb > 0) || !half_of(tf, tb))
            return NAN;
        return (double)(K - 1) / (3.0 * M + K - 1);
    }
    if (!strcmp(schedule, "dualpipe-v") || !strcmp(schedule, "zb-v")) {
        /* (6M+K-1) T_chunk span when T_F = T_B = T_W; dualpipe-v needs M >= 2K */
        if (M < (schedule[0] == 'd' ? 2 * K : K) || !(tb > 0) || !half_of(tf, tb))
            return NAN;
        return (double)(K - 1) / (6.0 * M + K - 1);
    }
    if (!strcmp(schedule, "zb-h1")) {
        if (M < K || !(tf + tb > 0))
            return NAN;
        /* B = tb - tw, the engine's input half (the lesser of an odd backward's
         * halves, engine.md), not tb / 2 (helper-131: 0.111128 against the
         * simulation's exact 0.111078 at tb = 2001 ns) */
        double bi = tb - tw, c = tf > bi ? tf : bi;
        return (K - 1) * c / (M * (tf + tb) + (K - 1) * c);
    }
    return NAN;
}

const char *ana_bubble_formula_name(const char *schedule)
{
    if (sch_schedule_same(schedule, "gpipe") || sch_schedule_same(schedule, "1f1b") ||
        !strcmp(schedule, "eager-1f1b")) /* breadth-first:1 and interleaved:1 among them */
        return "(K-1)/(M+K-1)";
    if (!strncmp(schedule, "interleaved:", 12) || !strncmp(schedule, "breadth-first:", 14))
        return "(K-1)/(vM+K-1)";
    if (!strcmp(schedule, "zb-h2"))
        return "(K-1)/(3M+K-1)";
    if (!strcmp(schedule, "zb-v") || !strcmp(schedule, "dualpipe-v"))
        return "(K-1)/(6M+K-1)";
    return "on uniform stages";
}

void ana_sched_cmp_free(struct ana_sched_cmp *c)
{
    if (!c)
        return;
    for (int i = 0; c->rows && i < c->n; i++) {
        free(c->rows[i].static_mem);
        free(c->rows[i].peak_act);
        free(c->rows[i].peak_mem);
        free(c->rows[i].capacity);
    }
    free(c->rows);
    free(c);
}

/* Fills a row from one prediction: memory per device, mean stage times for
 * the formula. */
static void fill_row(struct ana_sched_row *r, const struct ana_prediction *p, int K)
{
    double tf = 0, tb = 0, tw = 0;
    r->n_stages = p->n_stages;
    r->step_s = p->step_s;
    r->samples_per_s = p->samples_per_s;
    r->bubble_sim = p->bubble_sim;
    r->fits = p->fits;
    r->short_ops = p->short_ops;
    r->compute_ops = p->compute_ops;
    for (int s = 0; s < p->n_stages; s++) {
        const struct ana_stage *st = &p->stages[s];
        int d = st->device;
        r->static_mem[d] = st->static_mem;
        r->peak_act[d] = st->peak_act;
        r->peak_mem[d] = st->peak_mem;
        r->capacity[d] = st->capacity;
        tf += st->fwd_s;
        tb += st->bwd_s;
        tw += st->wgrad_s;
    }
    for (int d = 0; d < K; d++) {
        if (r->peak_act[d] > r->peak_act_max)
            r->peak_act_max = r->peak_act[d];
        if (r->peak_mem[d] > r->peak_mem_max)
            r->peak_mem_max = r->peak_mem[d];
    }
    /* one device's share of a micro-batch, as the formula takes it */
    r->bubble_formula = ana_bubble_formula(p->schedule, K, p->M, tf / K, tb / K, tw / K);
}

/* prior: a comparison of the same model, topology and batch that ran (its
 * K = 1 baseline is this one's: it runs without remat whatever the mode),
 * or NULL to simulate the baseline here. */
static int compare(const struct ana_config *base, const char *const *names, int n,
                   const struct ana_sched_cmp *prior, struct ana_sched_cmp **out)
{
    *out = NULL;
    if (n < 1)
        return ps_error(PS_EUSAGE, "--schedules: no schedule to compare");
    /* Unknown names and malformed parameters are usage errors up front; a
     * schedule that merely cannot run at this K, M is a row with its error.
     * M = 2K satisfies every generator's rule (M % K, dualpipe-v's M >= 2K). */
    for (int i = 0; i < n; i++) {
        int S, rc = sch_schedule_stages(names[i], base->K, 2 * base->K, base->remat, &S);
        if (rc < 0)
            return rc;
        for (int j = 0; j < i; j++)
            if (!strcmp(names[i], names[j]))
                return ps_error(PS_EUSAGE, "--schedules: '%s' is listed twice", names[i]);
    }
    struct ana_sched_cmp *c = calloc(1, sizeof *c);
    if (!c || !(c->rows = calloc((size_t)n, sizeof *c->rows))) {
        free(c);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    c->n = n;
    c->K = base->K;
    c->M = base->M;
    c->batch = base->batch;
    c->micro_batch = base->batch / base->M;
    c->remat = base->remat;
    snprintf(c->model, sizeof c->model, "%s", base->profile->path);
    snprintf(c->topology, sizeof c->topology, "%s", base->topo->path);
    int rc = 0, ran = 0, first_rc = 0, have_baseline = prior != NULL;
    if (prior) {
        c->baseline_step_s = prior->baseline_step_s;
        c->baseline_fits = prior->baseline_fits;
        c->baseline_peak = prior->baseline_peak;
        memcpy(c->baseline_skipped, prior->baseline_skipped, sizeof c->baseline_skipped);
    }
    for (int i = 0; i < n; i++) {
        struct ana_sched_row *r = &c->rows[i];
        snprintf(r->schedule, sizeof r->schedule, "%s", names[i]);
        r->remat = base->remat;
        r->static_mem = calloc((size_t)c->K, sizeof *r->static_mem);
        r->peak_act = calloc((size_t)c->K, sizeof *r->peak_act);
        r->peak_mem = calloc((size_t)c->K, sizeof *r->peak_mem);
        r->capacity = calloc((size_t)c->K, sizeof *r->capacity);
        if (!r->static_mem || !r->peak_act || !r->peak_mem || !r->capacity) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto err_free_cmp;
        }
        struct ana_config cfg = *base;
        struct ana_prediction *p;
        cfg.schedule = names[i];
        cfg.partition = NULL;
        cfg.record_trace = 0;
        cfg.no_baseline = have_baseline; /* simulated (or skipped) once */
        if ((rc = ana_predict(&cfg, &p)) < 0) {
            if (rc == -PS_ENOMEM)
                goto err_free_cmp;
            snprintf(r->error, sizeof r->error, "%s", ps_errmsg());
            if (!first_rc)
                first_rc = rc;
            r->bubble_formula = NAN;
            rc = 0;
            continue;
        }
        if (!cfg.no_baseline) {
            have_baseline = 1;
            c->baseline_step_s = p->baseline_step_s;
            c->baseline_fits = p->baseline_fits;
            c->baseline_peak = p->baseline_peak;
            snprintf(c->baseline_skipped, sizeof c->baseline_skipped, "%s",
                     p->baseline_skipped);
        }
        fill_row(r, p, c->K);
        r->speedup = ana_speedup(c->baseline_skipped[0] ? NAN : c->baseline_step_s, r->step_s, 1);
        ana_prediction_free(p);
        ran++;
    }
    if (!ran) {
        rc = ps_error(-first_rc, "no schedule could run: %s: %s", c->rows[0].schedule,
                       c->rows[0].error);
        goto err_free_cmp;
    }
    *out = c;
    return 0;

err_free_cmp:
    ana_sched_cmp_free(c);
    return rc;
}

int ana_schedules_compare(const struct ana_config *base, const char *const *names, int n,
                          struct ana_sched_cmp **out)
{
    return compare(base, names, n, NULL, out);
}

int ana_schedules_compare_auto(const struct ana_config *base, const char *const *names, int n,
                               struct ana_sched_cmp **out)
{
    static const enum sch_remat modes[3] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                             SCH_REMAT_ALWAYS };
    struct ana_sched_cmp *c[3] = { NULL, NULL, NULL };
    int rc = 0, first = -1;
    *out = NULL;
    for (int m = 0; m < 3; m++) {
        struct ana_config b = *base;
        b.remat = modes[m];
        int r = compare(&b, names, n, first >= 0 ? c[first] : NULL, &c[m]);
        if (r == -PS_ENOMEM || r == -PS_EUSAGE) {
            rc = r;
            goto out;
        }
        if (r < 0 && !rc)
            rc = r; /* no schedule ran in this mode; another may do */
        if (r == 0 && first < 0)
            first = m;
    }
    if (first < 0)
        goto out; /* rc: the first mode's error */
    rc = 0;
    struct ana_sched_cmp *res = c[first];
    c[first] = NULL;
    res->remat_per_schedule = 1;
    for (int i = 0; i < n; i++) {
        struct ana_sched_row *best = &res->rows[i];
        for (int m = first + 1; m < 3; m++) {
            struct ana_sched_row *r = c[m] ? &c[m]->rows[i] : NULL;
            if (!r || *r->error)
                continue;
            int take = *best->error ||
                       (r->fits && (!best->fits || r->samples_per_s > best->samples_per_s)) ||
                       (!r->fits && !best->fits && r->peak_mem_max < best->peak_mem_max);
            if (take) { /* swap, so each comparison still frees what it holds */
                struct ana_sched_row tmp = *best;
                *best = *r;
                *r = tmp;
            }
        }
    }
    *out = res;
out:
    for (int m = 0; m < 3; m++)
        ana_sched_cmp_free(c[m]);
    return rc;
}

int ana_sched_cmp_short_ops(const struct ana_sched_cmp *c, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < c->n; i++) {
        const struct ana_sched_row *r = &c->rows[i];
        if (*r->error || r->short_ops <= 0)
            continue;
        int w = snprintf(buf + k, n - k, "%s%s %lld of %lld", k ? ", " : "", r->schedule,
                         (long long)r->short_ops, (long long)r->compute_ops);
        k = w < 0 || (size_t)w >= n - k ? n - 1 : k + (size_t)w;
    }
    if (!k)
        return 0;
    snprintf(buf + k, n - k, " compute ops are " ANA_SHORT_OPS_WHAT ": those step times are "
             "upper bounds and their throughputs lower bounds");
    return 1;
}

/* ---- output ---- */

static void pct(double x, char *buf, size_t n)
{
    if (isnan(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f%%", x * 100);
}

static void print_table(const void *obj, FILE *f)
{
    const struct ana_sched_cmp *c = obj;
    fprintf(f, "model           %s\n", c->model);
    fprintf(f, "topology        %s\n", c->topology);
    if (c->remat_per_schedule)
        fprintf(f, "pipeline        K=%d, M=%d, batch %.0f (micro-batch %.0f), remat per schedule "
                   "(the fastest of never, except_last, always that fits; else the least "
                   "memory)\n", c->K, c->M, c->batch, c->micro_batch);
    else
        fprintf(f, "pipeline        K=%d, M=%d, batch %.0f (micro-batch %.0f), remat %s\n", c->K,
                c->M, c->batch, c->micro_batch, sch_remat_name(c->remat));
    char bs[32];
    ps_human_seconds(c->baseline_step_s, bs, sizeof bs);
    if (c->baseline_skipped[0])
        fprintf(f, "baseline        not simulated: the whole model on one device is out of "
                   "range\n                (%s)\n", c->baseline_skipped);
    else
        fprintf(f, "baseline        %s on one device (K=1, M=1, no remat)\n", bs);
    if (!c->baseline_skipped[0] && c->baseline_step_s > 0 && !c->baseline_fits) {
        ps_human_bytes(c->baseline_peak, bs, sizeof bs);
        fprintf(f, "                (it needs %s, more than one device holds: simulated as if "
                "it fit)\n", bs);
    }
    fputc('\n', f);
    fprintf(f, "%-15s %6s %12s %12s %8s %8s %8s %11s %11s %4s%s\n", "schedule", "stages",
            "step", "samples/s", "speedup", "bubble", "formula", "peak act", "peak total",
            "fits", c->remat_per_schedule ? "  remat" : "");
    for (int i = 0; i < c->n; i++) {
        const struct ana_sched_row *r = &c->rows[i];
        if (*r->error) {
            fprintf(f, "%-15s skipped: %s\n", r->schedule, r->error);
            continue;
        }
        char b[16], fm[16], a[32], t[32], st[32];
        ps_human_seconds(r->step_s, st, sizeof st);
        pct(r->bubble_sim, b, sizeof b);
        pct(r->bubble_formula, fm, sizeof fm);
        ps_human_bytes((double)r->peak_act_max, a, sizeof a);
        ps_human_bytes((double)r->peak_mem_max, t, sizeof t);
        char sp[40], tp[32];
        if (isnan(r->speedup)) {
            snprintf(sp, sizeof sp, "-");
        } else {
            ps_fixed(r->speedup, 3, sp, sizeof sp - 1);
            strcat(sp, "x");
        }
        ps_fixed(r->samples_per_s, 2, tp, sizeof tp);
        fprintf(f, "%-15s %6d %12s %12s %8s %8s %8s %11s %11s %4s%s%s\n", r->schedule,
                r->n_stages, st, tp, sp, b, fm, a, t,
                r->fits ? "yes" : "NO", c->remat_per_schedule ? "  " : "",
                c->remat_per_schedule ? sch_remat_name(r->remat) : "");
    }
    fprintf(f, "\npeak activation memory per device (device d holds stage d; interleaved:v "
               "and breadth-first:v d, d+K, ...; zb-v and dualpipe-v d and 2K-1-d)\n%-15s",
            "schedule");
    for (int d = 0; d < c->K; d++) {
        char h[16];
        snprintf(h, sizeof h, "dev%d", d);
        fprintf(f, " %10s", h);
    }
    fputc('\n', f);
    for (int i = 0; i < c->n; i++) {
        const struct ana_sched_row *r = &c->rows[i];
        if (*r->error)
            continue;
        fprintf(f, "%-15s", r->schedule);
        for (int d = 0; d < c->K; d++) {
            char a[32];
            ps_human_bytes((double)r->peak_act[d], a, sizeof a);
            fprintf(f, " %10s", a);
        }
        fputc('\n', f);
    }
    fprintf(f, "\nbubble: 1 - busy / (K x forward-backward span), simulated; formula: the "
               "schedule's uniform-stage\nfigure at the mean stage times, '-' where none "
               "applies (zb-h1, zb-h2 and zb-v only where W is half\nof B and M >= K, "
               "dualpipe-v with M >= 2K; zb-h2, zb-v and dualpipe-v only with T_F = T_B =\n"
               "T_W, each within 2 ns, the figure exact up to that rounding; interleaved:v, v > 1,\n"
               "with M a multiple of K;\n"
               "breadth-first:v, v > 1, with M >= K; zb-auto has none).\n");
}

/* A CSV row's last fields, what the JSON has besides (helper-114: the CSV
 * lacked them): the inputs, the baseline's step (empty where it was not
 * simulated) and the row's ops below the engine's tick (empty on an error). */
static void csv_tail(const struct ana_sched_cmp *c, const struct ana_sched_row *r, FILE *f)
{
    fputc(',', f);
    ps_csv_str(f, c->model);
    fputc(',', f);
    ps_csv_str(f, c->topology);
    fprintf(f, ",%s,", c->baseline_skipped[0] ? "" : PS_DBL(c->baseline_step_s));
    if (!*r->error)
        fprintf(f, "%lld", (long long)r->short_ops);
    fputc('\n', f);
}

static void print_csv(const void *obj, FILE *f)
{
    const struct ana_sched_cmp *c = obj;
    fprintf(f, "schedule,K,M,batch,micro_batch,remat,stages,step_s,samples_per_s,speedup,"
               "bubble_sim,bubble_formula,peak_act_max_bytes,peak_max_bytes,fits,device,"
               "static_bytes,peak_act_bytes,peak_bytes,capacity_bytes,error,model,topology,"
               "baseline_step_s,ops_below_tick\n");
    for (int i = 0; i < c->n; i++) {
        const struct ana_sched_row *r = &c->rows[i];
        for (int d = 0; d < (*r->error ? 1 : c->K); d++) {
            /* a skipped row ran in no mode when each schedule picks its own */
            fprintf(f, "%s,%d,%d,%s,%s,%s,", r->schedule, c->K, c->M, PS_DBL(c->batch),
                    PS_DBL(c->micro_batch),
                    *r->error && c->remat_per_schedule ? "" : sch_remat_name(r->remat));
            if (*r->error) {
                fprintf(f, ",,,,,,,,,,,,,,");
                ps_csv_str(f, r->error);
                csv_tail(c, r, f);
                continue;
            }
            fprintf(f, "%d,%s,%s,%s,%s,", r->n_stages, PS_DBL(r->step_s),
                    PS_DBL(r->samples_per_s), isnan(r->speedup) ? "" : PS_DBL(r->speedup),
                    PS_DBL(r->bubble_sim));
            if (!isnan(r->bubble_formula))
                fputs(PS_DBL(r->bubble_formula), f);
            fprintf(f, ",%lld,%lld,%d,%d,%lld,%lld,%lld,%s,", (long long)r->peak_act_max,
                    (long long)r->peak_mem_max, r->fits, d, (long long)r->static_mem[d],
                    (long long)r->peak_act[d], (long long)r->peak_mem[d],
                    PS_DBL(r->capacity[d]));
            csv_tail(c, r, f);
        }
    }
}

static json_t *row_json(const struct ana_sched_cmp *c, const struct ana_sched_row *r)
{
    if (*r->error)
        return json_pack("{s:s, s:o}", "schedule", r->schedule, "error",
                         ps_json_text(r->error)); /* may quote a file name */
    json_t *devs = json_array();
    for (int d = 0; devs && d < c->K; d++)
        json_array_append_new(devs, json_pack("{s:i, s:I, s:I, s:I, s:f}", "device", d,
                                              "static_bytes", (json_int_t)r->static_mem[d],
                                              "peak_act_bytes", (json_int_t)r->peak_act[d],
                                              "peak_bytes", (json_int_t)r->peak_mem[d],
                                              "capacity_bytes", r->capacity[d]));
    json_t *o = json_pack("{s:s, s:i, s:f, s:f, s:o, s:f, s:o, s:I, s:I, s:b, s:o}", "schedule",
                          r->schedule, "stages", r->n_stages, "step_s", r->step_s,
                          "samples_per_s", r->samples_per_s, "speedup",
                          isnan(r->speedup) ? json_null() : json_real(r->speedup),
                          "bubble_sim", r->bubble_sim, "bubble_formula",
                          isnan(r->bubble_formula) ? json_null()
                                                   : json_real(r->bubble_formula),
                          "peak_act_max_bytes", (json_int_t)r->peak_act_max, "peak_max_bytes",
                          (json_int_t)r->peak_mem_max, "fits", r->fits, "devices", devs);
    if (o)
        json_object_set_new(o, "ops_below_tick", json_integer(r->short_ops));
    if (o && c->remat_per_schedule)
        json_object_set_new(o, "remat", json_string(sch_remat_name(r->remat)));
    return o;
}

static int print_json(const void *obj, FILE *f)
{
    const struct ana_sched_cmp *c = obj;
    ps_json_begin(); /* a failed dump may be out of memory */
    json_t *arr = json_array();
    /* the names may not be UTF-8 ('?' for their other bytes: json_pack "s" failed
       on them, which read as out of memory, exit 6: helper-114) */
    json_t *o = json_pack("{s:o, s:o, s:i, s:i, s:f, s:f, s:s, s:o}", "model",
                          ps_json_text(c->model), "topology", ps_json_text(c->topology), "K",
                          c->K, "M", c->M, "batch", c->batch,
                          "micro_batch", c->micro_batch, "remat",
                          c->remat_per_schedule ? "per-schedule" : sch_remat_name(c->remat),
                          "baseline_step_s",
                          c->baseline_skipped[0] ? json_null() : json_real(c->baseline_step_s));
    if (o && c->baseline_skipped[0]) /* no speedups: why */
        json_object_set_new(o, "baseline_skipped", ps_json_text(c->baseline_skipped));
    int rc = 0;
    if (!arr || !o) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < c->n; i++) {
        json_t *r = row_json(c, &c->rows[i]);
        if (!r || json_array_append_new(arr, r)) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto out;
        }
    }
    json_object_set_new(o, "schedules", arr);
    arr = NULL;
    if (ps_json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
        rc = ps_json_oom() ? ps_error(PS_ENOMEM, "out of memory writing JSON")
                           : ps_error(PS_EIO, "write error");
    fputc('\n', f);
out:
    json_decref(arr);
    json_decref(o);
    return rc;
}

int ana_sched_cmp_print(const struct ana_sched_cmp *c, enum ana_fmt fmt, FILE *f)
{
    static const struct ana_printers pr = { print_table, print_csv, print_json };
    return ana_print_as(fmt, &pr, c, f);
}
