/* ana_report: K x M tables and CSV from the sweep database (see ana_report.h). */
#include "analysis/ana_report.h"
#include "analysis/ana_schedules.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum metric { M_NORM, M_SPEEDUP, M_THROUGHPUT, M_STEP, M_BUBBLE, M_MEMORY, M_N };

static const struct {
    const char *name, *title;
} metric_tab[M_N] = {
    [M_NORM] = { "normalized", "normalized throughput" },
    [M_SPEEDUP] = { "speedup", "speedup over one device (K=1, M=1, no remat)" },
    [M_THROUGHPUT] = { "throughput", "throughput, samples/s" },
    [M_STEP] = { "step", "step time (grid CSV: ms)" },
    [M_BUBBLE] = { "bubble", "bubble %, simulated/analytic" }, /* + the schedule's formula */
    [M_MEMORY] = { "memory", "largest stage peak memory, GiB (2^30 bytes)" },
};

static int parse_metrics(const char *s, int *v, int *n)
{
    char buf[256];
    if (!s)
        s = "normalized,speedup,bubble";
    size_t len = strlen(s);
    if (len && (s[0] == ',' || s[len - 1] == ',' || strstr(s, ",,")))
        return ps_error(PS_EUSAGE, "--metric: '%s': an empty name in the list", s);
    if (len >= sizeof buf)
        return ps_error(PS_EUSAGE, "--metric: list too long");
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int m = 0;
        while (m < M_N && strcmp(tok, metric_tab[m].name))
            m++;
        if (m == M_N) {
            struct ps_suggest sg;
            ps_suggest_init(&sg, tok);
            for (int i = 0; i < M_N; i++)
                ps_suggest_add(&sg, metric_tab[i].name);
            return ps_error(PS_EUSAGE, "--metric: unknown metric '%s'%s (normalized, speedup, "
                             "throughput, step, bubble, memory)", tok, ps_suggest_hint(&sg));
        }
        for (int i = 0; i < *n; i++)
            if (v[i] == m)
                return ps_error(PS_EUSAGE, "--metric: '%s' given twice", tok);
        if (*n == 16)
            return ps_error(PS_EUSAGE, "--metric: too many metrics");
        v[(*n)++] = m;
    }
    return *n ? 0 : ps_error(PS_EUSAGE, "--metric: empty list");
}

int ana_report_check_metrics(const char *metrics)
{
    int v[16], n;
    return parse_metrics(metrics, v, &n);
}

int ana_report_check_hash(const char *s, const char *opt)
{
    size_t n = strlen(s);
    if (!n || n > 16 || strspn(s, "0123456789abcdefABCDEF") != n)
        return ps_error(PS_EUSAGE, "%s: expected 1 to 16 hex digits (the start of a stored "
                         "hash, as report's group headers and --csv show it), got '%s'",
                         opt, s);
    return 0;
}

/* Whether the stored hash starts with the prefix p (NULL: any). */
static int hash_starts(const char *p, const char *hash)
{
    if (!p)
        return 1;
    size_t n = strlen(p);
    return strlen(hash) >= n && !strncasecmp(hash, p, n);
}

int ana_run_selected(const struct ana_run *r, const struct ana_report_opts *o)
{
    return (!o->model || !strcmp(o->model, r->model)) &&
           hash_starts(o->model_hash, r->model_hash) &&
           hash_starts(o->topology_hash, r->topology_hash) &&
           (!o->topology || !strcmp(o->topology, r->topology)) &&
           (!o->schedule || !strcmp(o->schedule, r->schedule)) &&
           (!o->remat || !strcmp(o->remat, r->remat)) &&
           (!o->strategy || !strcmp(o->strategy, r->strategy)) &&
           (!o->batch || o->batch == r->batch) &&
           (!o->replicas || o->replicas == r->replicas);
}

int ana_run_same_group(const struct ana_run *a, const struct ana_run *b)
{
    return !strcmp(a->model, b->model) && !strcmp(a->model_hash, b->model_hash) &&
           !strcmp(a->topology, b->topology) && !strcmp(a->topology_hash, b->topology_hash) &&
           !strcmp(a->schedule, b->schedule) && !strcmp(a->remat, b->remat) &&
           !strcmp(a->strategy, b->strategy) && a->batch == b->batch &&
           a->replicas == b->replicas;
}

/* Whether a selected run has more than one replica: then the tables name
 * the replicas of every group (a sweep without --replicas prints as before). */
static int any_replicas(const struct ana_run *runs, int n, const struct ana_report_opts *o)
{
    for (int i = 0; i < n; i++)
        if (runs[i].replicas != 1 && ana_run_selected(&runs[i], o))
            return 1;
    return 0;
}

double ana_run_peak(const struct ana_run *r)
{
    double mx = 0;
    for (int s = 0; s < r->n_stages; s++)
        if ((double)r->stages[s].peak_mem > mx)
            mx = (double)r->stages[s].peak_mem;
    return mx;
}

/* Selected runs of one group, as pointers, and its sorted distinct K and M. */
struct group {
    const struct ana_run **r;
    int n;
    int Ks[256], nK, Ms[256], nM;
};

static void add_sorted(int *v, int *n, int x)
{
    int i = 0;
    while (i < *n && v[i] < x)
        i++;
    if (i < *n && v[i] == x)
        return;
    if (*n == 256)
        return;
    memmove(v + i + 1, v + i, sizeof *v * (size_t)(*n - i));
    v[i] = x;
    (*n)++;
}

/* Next group starting at *pos; 0 when there is none. g->r must hold n. */
static int next_group(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                      int *pos, struct group *g)
{
    g->n = g->nK = g->nM = 0;
    while (*pos < n && !ana_run_selected(&runs[*pos], o))
        (*pos)++;
    if (*pos >= n)
        return 0;
    const struct ana_run *first = &runs[*pos];
    while (*pos < n && ana_run_same_group(first, &runs[*pos])) {
        const struct ana_run *r = &runs[(*pos)++];
        if (!ana_run_selected(r, o))
            continue;
        g->r[g->n++] = r;
        add_sorted(g->Ks, &g->nK, r->K);
        add_sorted(g->Ms, &g->nM, r->M);
    }
    return 1;
}

static const struct ana_run *cell(const struct group *g, int K, int M)
{
    for (int i = 0; i < g->n; i++)
        if (g->r[i]->K == K && g->r[i]->M == M)
            return g->r[i];
    return NULL;
}

static int ok(const struct ana_run *r)
{
    return r && !strcmp(r->status, "ok");
}

static const struct ana_run *baseline(const struct group *g, const struct ana_report_opts *o)
{
    return cell(g, o->base_K ? o->base_K : g->Ks[0], o->base_M ? o->base_M : g->Ms[0]);
}

static double value(int m, const struct ana_run *r, const struct ana_run *base, double *second)
{
    *second = 0;
    switch (m) {
    case M_NORM:
        return ok(base) && base->samples_per_s > 0 ? r->samples_per_s / base->samples_per_s : 0;
    case M_SPEEDUP: return r->speedup;
    case M_THROUGHPUT: return r->samples_per_s;
    case M_STEP: return r->step_s * 1e3;
    case M_BUBBLE: *second = r->bubble_analytic * 100; return r->bubble_sim * 100;
    default: return ana_run_peak(r) / PS_GIB;
    }
}

/* The text of one grid cell into buf; 1 when it is a speedup without its
 * baseline ("n/a"). */
static int grid_cell(const struct group *g, int m, const struct ana_run *base, int K, int M,
                     char *buf, size_t n)
{
    const struct ana_run *r = cell(g, K, M);
    double second, v;
    if (!ok(r) || (m == M_NORM && !ok(base))) {
        snprintf(buf, n, "-");
        return 0;
    }
    if (isnan(v = value(m, r, base, &second))) {
        snprintf(buf, n, "n/a%s", r->fits ? "" : "*");
        return 1;
    }
    if (m == M_BUBBLE && !isfinite(second)) /* no formula for the schedule */
        snprintf(buf, n, "%.1f/-", v);
    else if (m == M_BUBBLE)
        snprintf(buf, n, "%.1f/%.1f", v, second);
    else if (m == M_THROUGHPUT)
        ps_fixed(v, 1, buf, n);
    else if (m == M_STEP)
        ps_human_seconds(r->step_s, buf, n);
    else
        ps_fixed(v, 3, buf, n);
    size_t len = strlen(buf); /* a huge value may fill buf */
    if (!r->fits && len + 1 < n)
        snprintf(buf + len, n - len, "*");
    return 0;
}

static void print_grid(const struct group *g, int m, const struct ana_report_opts *o, FILE *f)
{
    const struct ana_run *base = baseline(g, o);
    fprintf(f, "%s", metric_tab[m].title);
    if (m == M_BUBBLE) { /* a group is one schedule's: its own formula, as predict names it
                            (helper-114: every group said (K-1)/(M+K-1)) */
        int any = 0;
        for (int i = 0; i < g->n && !any; i++)
            any = ok(g->r[i]) && isfinite(g->r[i]->bubble_analytic);
        fprintf(f, " %s", any ? ana_bubble_formula_name(g->r[0]->schedule)
                              : "(-: no closed form for this schedule or these stages)");
    }
    if (m == M_NORM) {
        int bK = o->base_K ? o->base_K : g->Ks[0], bM = o->base_M ? o->base_M : g->Ms[0];
        char tp[40]; /* as the tables' throughputs (helper-132: %.6g read 1.1776e+06) */
        if (ok(base)) { /* base may be NULL: no such run (the fuzzer's seed found it) */
            ps_fixed(base->samples_per_s, 2, tp, sizeof tp);
            fprintf(f, ", baseline K=%d M=%d (%s samples/s%s)", bK, bM, tp,
                    base->fits ? "" : "; it does not fit in device memory, so the ratios "
                                      "are over a configuration that cannot run");
        } else {
            fprintf(f, ", baseline K=%d M=%d: not in the database or could not run", bK, bM);
        }
    }
    /* every column as wide as its widest cell (a huge memory figure would
     * push the ones after it out of line), at least 11 */
    int no_value = 0, w = 11;
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            fprintf(f, "\n%8s", "M \\ K");
            for (int k = 0; k < g->nK; k++)
                fprintf(f, " %*d", w, g->Ks[k]);
            fputc('\n', f);
        }
        for (int mi = 0; mi < g->nM; mi++) {
            if (pass)
                fprintf(f, "%8d", g->Ms[mi]);
            for (int k = 0; k < g->nK; k++) {
                char buf[32];
                no_value |= grid_cell(g, m, base, g->Ks[k], g->Ms[mi], buf, sizeof buf);
                int len = (int)strlen(buf);
                if (!pass && len > w)
                    w = len;
                if (pass)
                    fprintf(f, " %*s", w, buf);
            }
            if (pass)
                fputc('\n', f);
        }
    }
    if (no_value)
        fprintf(f, "n/a: the one-device baseline (K=1, M=1) is beyond the engine's range "
                   "(its whole model's time or memory), so no speedup\n");
}

/* What every report starts with: the metrics asked for, and room for a
 * group of up to n runs (g->r, the caller frees). */
static int report_begin(const struct ana_report_opts *o, int n, int *ms, int *nm,
                        struct group *g)
{
    int rc = parse_metrics(o->metrics, ms, nm);
    if (rc < 0)
        return rc;
    *g = (struct group){ .r = malloc(sizeof *g->r * (size_t)(n ? n : 1)) };
    return g->r ? 0 : ps_error(PS_ENOMEM, "out of memory");
}

static int print_best(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                      FILE *f)
{
    const struct ana_run *b = NULL;
    int sel = 0, fit = 0;
    for (int i = 0; i < n; i++) {
        const struct ana_run *r = &runs[i];
        if (!ana_run_selected(r, o) || !ok(r))
            continue;
        sel++;
        fit += r->fits;
        if (o->fits_only && !r->fits)
            continue;
        if (!b || r->samples_per_s > b->samples_per_s)
            b = r;
    }
    /* An empty selection is the filters' error, as plot's (exit 4); 7 only
     * where runs were selected and none fits. */
    if (!sel)
        return ps_error(PS_EINVAL, "--best: no successful runs match the selection (%d "
                         "runs in the database)", n);
    if (!b)
        return ps_error(PS_ENOFIT, "--best --fits: none of the %d successful selected runs "
                         "fits in memory", sel);
    double cap = 0;
    for (int s = 0; s < b->n_stages; s++)
        cap = b->stages[s].capacity > cap ? b->stages[s].capacity : cap;
    char pk[32], cp[32], st[32];
    ps_human_bytes(ana_run_peak(b), pk, sizeof pk);
    ps_human_bytes(cap, cp, sizeof cp);
    ps_human_seconds(b->step_s, st, sizeof st);
    fprintf(f, "best of %d successful runs%s (%d fit in memory):\nmodel ", sel,
            o->fits_only ? ", among those that fit" : "", fit);
    ps_put_printable(f, b->model, -1);
    fputs(", topology ", f);
    ps_put_printable(f, b->topology, -1);
    fprintf(f, "\nschedule %s, K=%d, M=%d, batch %ld, remat %s, strategy %s\n", b->schedule,
            b->K, b->M, b->batch, b->remat, b->strategy);
    /* as the tables: named when any selected run has replicas, so that a
     * best of one replica says so beside runs of several */
    if (b->replicas != 1 || any_replicas(runs, n, o))
        fprintf(f, "replicas %d data-parallel pipeline%s, %d device%s (batch per replica)\n",
                b->replicas, b->replicas == 1 ? "" : "s", b->K * b->replicas,
                b->K * b->replicas == 1 ? "" : "s");
    char sp[64], tp[32];
    if (isnan(b->speedup)) {
        snprintf(sp, sizeof sp, "not simulated (the one-device baseline is out of range)");
    } else {
        ps_fixed(b->speedup, 2, sp, sizeof sp - 1);
        strcat(sp, "x");
    }
    ps_fixed(b->samples_per_s, 2, tp, sizeof tp);
    fprintf(f, "partition %s\nstep %s, %s samples/s, speedup %s\n"
               "bubble %.2f%% simulated\npeak memory %s of %s: %s\n",
            b->partition ? b->partition : "",
            st, tp, sp, b->bubble_sim * 100, pk, cp,
            b->fits ? "fits" : "DOES NOT FIT");
    return 0;
}

/* 1 when a selected run names the same model and topology as h from other
 * files (other hashes: an input edited and swept again): the headers of
 * those groups then show the hashes, or they would read the same. */
static int names_reused(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                        const struct ana_run *h)
{
    for (int i = 0; i < n; i++)
        if (ana_run_selected(&runs[i], o) && !strcmp(runs[i].model, h->model) &&
            !strcmp(runs[i].topology, h->topology) &&
            (strcmp(runs[i].model_hash, h->model_hash) ||
             strcmp(runs[i].topology_hash, h->topology_hash)))
            return 1;
    return 0;
}

int ana_report_print(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                     FILE *f)
{
    if (o->best)
        return print_best(runs, n, o, f);
    int ms[16], nm, rc;
    struct group g;
    if ((rc = report_begin(o, n, ms, &nm, &g)) < 0)
        return rc;
    int pos = 0, groups = 0, show_R = any_replicas(runs, n, o);
    while (next_group(runs, n, o, &pos, &g)) {
        const struct ana_run *h = g.r[0];
        fprintf(f, "%s== model ", groups ? "\n" : "");
        ps_put_printable(f, h->model, -1); /* a newline in a name stored by sweep: one line */
        fputs(", topology ", f);
        ps_put_printable(f, h->topology, -1);
        fprintf(f, ", schedule %s, remat %s, strategy %s, batch %ld", h->schedule, h->remat,
                h->strategy, h->batch);
        if (names_reused(runs, n, o, h))
            fprintf(f, ", inputs %.8s/%.8s (model/topology hash: the same names swept from "
                    "other files)", h->model_hash, h->topology_hash);
        if (show_R) {
            if (h->replicas > 1)
                fprintf(f, " per replica, replicas %d (%d x K devices)", h->replicas,
                        h->replicas);
            else
                fprintf(f, " per replica, replicas 1 (K devices)");
        }
        fputc('\n', f);
        groups++;
        for (int i = 0; i < nm; i++) {
            print_grid(&g, ms[i], o, f);
            if (i + 1 < nm)
                fputc('\n', f);
        }
        int failed = 0, nofit = 0;
        const struct ana_run *first_failed = NULL;
        for (int i = 0; i < g.n; i++) {
            if (!ok(g.r[i])) {
                failed++;
                if (!first_failed)
                    first_failed = g.r[i];
            } else if (!g.r[i]->fits) {
                nofit++;
            }
        }
        if (nofit)
            fprintf(f, "* %d configuration%s do%s not fit in device memory\n", nofit,
                    nofit > 1 ? "s" : "", nofit > 1 ? "" : "es");
        if (failed)
            fprintf(f, "- %d configuration%s could not run; first, K=%d M=%d: %s\n", failed,
                    failed > 1 ? "s" : "", first_failed->K, first_failed->M,
                    first_failed->message);
    }
    free(g.r);
    if (!groups) /* cmd_report refuses an empty selection first */
        fprintf(f, "no runs match (%d in the database)\n", n);
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}

int ana_report_csv(const struct ana_run *runs, int n, const struct ana_report_opts *o, FILE *f)
{
    fprintf(f, "model,model_hash,topology,topology_hash,schedule,remat,strategy,batch,replicas,"
               "K,M,status,partition,micro_batch,step_s,samples_per_s,baseline_step_s,speedup,"
               "bubble_sim,bubble_analytic,fits,peak_bytes,message\n");
    for (int i = 0; i < n; i++) {
        const struct ana_run *r = &runs[i];
        if (!ana_run_selected(r, o))
            continue;
        ps_csv_str(f, r->model);
        fprintf(f, ",%s,", r->model_hash);
        ps_csv_str(f, r->topology);
        fprintf(f, ",%s,%s,%s,%s,%ld,%d,%d,%d,%s,", r->topology_hash, r->schedule, r->remat,
                r->strategy, r->batch, r->replicas, r->K, r->M, r->status);
        ps_csv_str(f, r->partition ? r->partition : "");
        if (ok(r)) {
            fprintf(f, ",%s,%s,%s,", PS_DBL(r->micro_batch), PS_DBL(r->step_s),
                    PS_DBL(r->samples_per_s));
            if (!isnan(r->speedup)) /* empty where the baseline was not simulated */
                fprintf(f, "%s,%s", PS_DBL(r->baseline_step_s), PS_DBL(r->speedup));
            else
                fputc(',', f);
            fprintf(f, ",%s,", PS_DBL(r->bubble_sim));
            if (isfinite(r->bubble_analytic)) /* empty where the schedule has no formula */
                fputs(PS_DBL(r->bubble_analytic), f);
            fprintf(f, ",%d,%s,", r->fits, PS_DBL(ana_run_peak(r)));
        }
        else
            fprintf(f, ",,,,,,,,,,");
        ps_csv_str(f, r->message);
        fputc('\n', f);
    }
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}

/* Calls cell_fn for each (group, metric, M, K) cell that has a value; an is
 * the bubble's analytic percent (NaN for other metrics and for a schedule
 * with no formula), which the table prints beside the simulated one. */
typedef int (*cell_fn)(void *ctx, const struct ana_run *r, const char *metric, double v,
                       double an);
static int each_cell(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                     cell_fn fn, void *ctx)
{
    int ms[16], nm, rc;
    struct group g;
    if ((rc = report_begin(o, n, ms, &nm, &g)) < 0)
        return rc;
    int pos = 0;
    while (!rc && next_group(runs, n, o, &pos, &g)) {
        const struct ana_run *base = baseline(&g, o);
        for (int i = 0; i < nm && !rc; i++)
            for (int mi = 0; mi < g.nM && !rc; mi++)
                for (int k = 0; k < g.nK && !rc; k++) {
                    const struct ana_run *r = cell(&g, g.Ks[k], g.Ms[mi]);
                    if (!ok(r) || (ms[i] == M_NORM && !ok(base)))
                        continue;
                    double second, v = value(ms[i], r, base, &second);
                    if (isnan(v)) /* a speedup without its baseline: no cell */
                        continue;
                    rc = fn(ctx, r, metric_tab[ms[i]].name, v,
                            ms[i] == M_BUBBLE ? second : NAN);
                }
    }
    free(g.r);
    return rc;
}

static int csv_cell(void *ctx, const struct ana_run *r, const char *metric, double v, double an)
{
    FILE *f = ctx;
    ps_csv_str(f, r->model);
    fprintf(f, ",%s,", r->model_hash);
    ps_csv_str(f, r->topology);
    fprintf(f, ",%s,%s,%s,%s,%ld,%d,%s,%d,%d,%s,%d,", r->topology_hash, r->schedule, r->remat,
            r->strategy,
            r->batch, r->replicas, metric, r->M, r->K, PS_DBL(v), r->fits);
    if (isfinite(an)) /* empty but for a bubble with a formula */
        fputs(PS_DBL(an), f);
    fputc('\n', f);
    return 0;
}

int ana_report_grid_csv(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                        FILE *f)
{
    int rc = parse_metrics(o->metrics, (int[16]){ 0 }, &(int){ 0 });
    if (rc < 0)
        return rc;
    /* the input hashes beside the names, as the run CSV: groups of the same
     * names swept from edited files are told apart */
    fprintf(f, "model,model_hash,topology,topology_hash,schedule,remat,strategy,batch,replicas,"
               "metric,M,K,value,fits,analytic\n");
    if ((rc = each_cell(runs, n, o, csv_cell, f)) < 0)
        return rc;
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}

/* One cell as a JSON object. JSON has no inf or nan (json_pack "f" refuses
 * them, and its NULL read as out of memory): ana_db_load refuses such a
 * stored value, and a ratio that overflows is refused here, naming it. The
 * names go through ps_json_text: a file name that is not UTF-8 (stored by
 * sweep as given) failed json_pack "s" the same way. */
static int json_cell(void *ctx, const struct ana_run *r, const char *metric, double v,
                     double an)
{
    if (!isfinite(v))
        return ps_error(PS_EINVAL, "--format json: %s at K=%d M=%d (schedule %s, "
                         "batch %ld, replicas %d) is %g, a number JSON cannot hold", metric,
                         r->K, r->M, r->schedule, r->batch, r->replicas, v);
    json_t *row = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:i, s:o, s:i, s:i, s:f, "
                            "s:b}", "model", ps_json_text(r->model), "model_hash",
                            ps_json_text(r->model_hash), "topology", ps_json_text(r->topology),
                            "topology_hash", ps_json_text(r->topology_hash), "schedule",
                            ps_json_text(r->schedule), "remat", ps_json_text(r->remat),
                            "strategy", ps_json_text(r->strategy), "batch",
                            (json_int_t)r->batch, "replicas", r->replicas, "metric",
                            ps_json_text(metric), "M", r->M, "K", r->K, "value", v, "fits",
                            r->fits);
    if (row && !strcmp(metric, "bubble") && /* the analytic bubble, null with no formula */
        json_object_set_new(row, "analytic", isfinite(an) ? json_real(an) : json_null())) {
        json_decref(row);
        row = NULL;
    }
    if (!row || json_array_append_new(ctx, row))
        return ps_json_oom() ? ps_error(PS_ENOMEM, "out of memory")
                             : ps_error(PS_EINVAL, "--format json: %s at K=%d M=%d "
                                        "(schedule %s) could not be written as JSON", metric,
                                        r->K, r->M, r->schedule);
    return 0;
}

int ana_report_grid_json(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                         FILE *f)
{
    ps_json_begin();
    json_t *arr = json_array();
    if (!arr)
        return ps_error(PS_ENOMEM, "out of memory");
    int rc = each_cell(runs, n, o, json_cell, arr);
    if (rc == 0 && ps_json_dumpf(arr, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
        rc = ps_json_oom() ? ps_error(PS_ENOMEM, "out of memory writing JSON")
                           : ps_error(PS_EIO, "write error");
    if (rc == 0)
        fputc('\n', f);
    json_decref(arr);
    if (rc < 0)
        return rc;
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}
