/* ana_rank: candidate partitions, simulated and ranked (see ana_rank.h). */
#include "analysis/ana_rank.h"
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "base/ps_json.h"

#include <jansson.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

void ana_rank_free(struct ana_rank *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n; i++) {
        sch_partition_free(r->c[i].part);
        free(r->c[i].info);
        ana_prediction_free(r->c[i].pred);
    }
    free(r->c);
    free(r);
}

/* Adds part (taken over) under label, or joins the label of an equal one
 * (a neighbour's "optimal: cut s +1" and the refit do not: where they equal
 * another candidate they say nothing new; "optimal: simulated" does: which
 * strategy's cut predict takes). */
static int add(struct ana_rank *r, int *cap, struct sch_partition *part, const char *label)
{
    char spec[256];
    sch_partition_format(part, spec, sizeof spec);
    for (int i = 0; i < r->n; i++)
        if (sch_partition_equal(r->c[i].part, part)) {
            size_t l = strlen(r->c[i].label);
            if ((!strchr(label, ':') || !strcmp(label, "optimal: simulated")) &&
                l + strlen(label) + 2 < sizeof r->c[i].label)
                snprintf(r->c[i].label + l, sizeof r->c[i].label - l, "=%s", label);
            sch_partition_free(part);
            return 0;
        }
    if (r->n == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        struct ana_candidate *c = realloc(r->c, sizeof *c * (size_t)nc);
        if (!c) {
            sch_partition_free(part);
            return ps_error(PS_ENOMEM, "out of memory");
        }
        r->c = c;
        *cap = nc;
    }
    struct ana_candidate *c = &r->c[r->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->spec, sizeof c->spec, "%s", spec);
    c->part = part;
    return 0;
}

static int cmp_cand(const void *x, const void *y)
{
    const struct ana_candidate *a = x, *b = y;
    if (a->fits != b->fits)
        return b->fits - a->fits;
    if (a->pred->step_s != b->pred->step_s)
        return a->pred->step_s < b->pred->step_s ? -1 : 1;
    if (a->bound_s != b->bound_s)
        return a->bound_s < b->bound_s ? -1 : 1;
    return memcmp(a->part->first, b->part->first,
                  sizeof *a->part->first * (size_t)(a->part->n_stages + 1));
}

static int evaluate(const struct ana_config *cfg, const sch_part_model *m,
                    struct ana_candidate *c, int with_baseline)
{
    int S = c->part->n_stages;
    if (!(c->info = calloc((size_t)S, sizeof *c->info)))
        return ps_error(PS_ENOMEM, "out of memory");
    sch_part_model_stages(m, c->part, c->info);
    c->bound_s = 0;
    for (int s = 0; s < S; s++)
        if (c->info[s].time_s > c->bound_s)
            c->bound_s = c->info[s].time_s;
    struct ana_config k = *cfg;
    k.partition = c->part;
    k.record_trace = 0;
    k.no_baseline = !with_baseline;
    int rc = ana_predict(&k, &c->pred);
    if (rc < 0)
        return rc;
    c->fits = 1;
    for (int s = 0; s < S; s++)
        if ((double)c->pred->stages[s].peak_mem > c->info[s].capacity)
            c->fits = 0;
    return 0;
}

int ana_rank_new(const struct ana_config *cfg, const sch_part_model *m,
                 const enum sch_part_strategy *strategies, int n, int neighbours,
                 struct ana_rank **out)
{
    *out = NULL;
    struct ana_rank *r = calloc(1, sizeof *r);
    if (!r)
        return ps_error(PS_ENOMEM, "out of memory");
    int cap = 0, rc = 0, shared = sch_part_model_shared(m), simulated = 0;
    struct sch_partition *opt = NULL;
    for (int i = 0; i < n; i++) {
        struct sch_partition *p;
        rc = sch_part_strategy_run(m, strategies[i], &p);
        if (rc == -PS_ENOFIT && strategies[i] == SCH_PART_OPTIMAL && cfg->topo) {
            /* no optimum the closed form holds: no "optimal" row, nor its
             * neighbours; the cut ana_partition_optimal finds among the
             * strategies' by simulation is "optimal: simulated" below (it was
             * listed as "optimal", another strategy's cut: helper-84) */
            ps_error_clear();
            rc = 0;
            simulated = 1;
            continue;
        }
        if (rc == -PS_ENOFIT && strategies[i] == SCH_PART_OPTIMAL)
            rc = ana_partition_optimal(cfg, m, &p); /* the engine's ledger judges the sum */
        if (rc < 0)
            goto err_free_rank;
        if (strategies[i] == SCH_PART_OPTIMAL && !opt && !(opt = sch_partition_copy(p))) {
            sch_partition_free(p);
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto err_free_rank;
        }
        if ((rc = add(r, &cap, p, sch_part_strategy_name(strategies[i]))) < 0)
            goto err_free_rank;
    }
    if ((opt || simulated) && cfg->topo) {
        /* the optimum whose closed-form peaks the ledger finds over a device,
         * cut again under limits lowered by the overflow (ana_partition_fit);
         * with several stages a device, the fastest simulated of that, the
         * device-balanced cut and the other strategies' (ana_partition_optimal:
         * under --mem-cap device, what predict and sweep run as optimal) */
        int sim = shared || simulated;
        struct sch_partition *q = sim ? NULL : sch_partition_copy(opt);
        if (!sim && !q) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto err_free_rank;
        }
        if ((rc = sim ? ana_partition_optimal(cfg, m, &q) : ana_partition_fit(cfg, m, &q)) < 0) {
            sch_partition_free(q);
            goto err_free_rank;
        }
        if (!opt || !sch_partition_equal(q, opt)) {
            if ((rc = add(r, &cap, q, sim ? "optimal: simulated" : "optimal: refit")) < 0)
                goto err_free_rank;
        } else {
            sch_partition_free(q);
        }
    }
    if (opt && neighbours) {
        int S = opt->n_stages;
        for (int s = 1; s < S; s++)
            for (int d = -1; d <= 1; d += 2) {
                int v = opt->first[s] + d;
                if (v <= opt->first[s - 1] || v >= opt->first[s + 1])
                    continue;
                struct sch_partition *q = sch_partition_copy(opt);
                if (!q) {
                    rc = ps_error(PS_ENOMEM, "out of memory");
                    goto err_free_rank;
                }
                q->first[s] = v;
                char label[64];
                snprintf(label, sizeof label, "optimal: cut %d %+d", s, d);
                if ((rc = add(r, &cap, q, label)) < 0)
                    goto err_free_rank;
            }
    }
    /* a candidate beyond the engine's range (a stage's time or bytes) is left
     * out, the others ranked; the first simulated one carries the baseline */
    int need_base = !cfg->no_baseline, kept = 0, first_rc = 0;
    r->baseline_fits = 1;
    for (int i = 0; i < r->n; i++) {
        struct ana_candidate *c = &r->c[i];
        if ((rc = evaluate(cfg, m, c, need_base)) == -PS_EINVAL) {
            if (!r->n_dropped++) {
                first_rc = rc;
                snprintf(r->dropped, sizeof r->dropped, "%s (%s): %s", c->label, c->spec,
                         ps_errmsg());
            }
            sch_partition_free(c->part); /* dropped: NULL members, freed by ana_rank_free */
            free(c->info);
            ana_prediction_free(c->pred);
            c->part = NULL;
            c->info = NULL;
            c->pred = NULL;
            continue;
        }
        if (rc < 0)
            goto err_free_rank;
        if (need_base) {
            need_base = 0;
            r->baseline_step_s = c->pred->baseline_step_s;
            r->baseline_fits = c->pred->baseline_fits;
            r->baseline_peak = c->pred->baseline_peak;
            snprintf(r->baseline_skipped, sizeof r->baseline_skipped, "%s",
                     c->pred->baseline_skipped);
        }
    }
    rc = 0;
    for (int i = 0; i < r->n; i++)
        if (r->c[i].part)
            r->c[kept++] = r->c[i];
    r->n = kept;
    if (!kept && first_rc) {
        rc = ps_error(-first_rc, "no candidate partition could be simulated: %s",
                      r->dropped);
        goto err_free_rank;
    }
    for (int i = 0; i < r->n; i++) {
        struct ana_prediction *p = r->c[i].pred;
        p->baseline_step_s = r->baseline_step_s;
        snprintf(p->baseline_skipped, sizeof p->baseline_skipped, "%s", r->baseline_skipped);
        p->speedup = ana_speedup(r->baseline_skipped[0] ? NAN : r->baseline_step_s, p->step_s, 1);
    }
    qsort(r->c, (size_t)r->n, sizeof *r->c, cmp_cand);
    sch_partition_free(opt);
    *out = r;
    return 0;

err_free_rank:
    sch_partition_free(opt);
    ana_rank_free(r);
    return rc;
}

static void gb(double b, char *buf, size_t n)
{
    ps_fixed(b / PS_GIB, 3, buf, n);
}

static void print_table(const struct ana_rank *r, int top, FILE *f)
{
    int wl = 9, wp = 9;
    for (int i = 0; i < top; i++) {
        int a = (int)strlen(r->c[i].label), b = (int)strlen(r->c[i].spec);
        wl = a > wl ? a : wl;
        wp = b > wp ? b : wp;
    }
    fprintf(f, "%4s  %-*s  %-*s %12s %12s %8s %5s\n", "rank", wl, "candidate", wp, "partition",
            "bound", "step", "speedup", "fits");
    for (int i = 0; i < top; i++) {
        const struct ana_candidate *c = &r->c[i];
        char bs[32], ss[32];
        ps_human_seconds(c->bound_s, bs, sizeof bs);
        ps_human_seconds(c->pred->step_s, ss, sizeof ss);
        char sp[32];
        if (isnan(c->pred->speedup)) {
            snprintf(sp, sizeof sp, "-");
        } else {
            ps_fixed(c->pred->speedup, 3, sp, sizeof sp - 1);
            strcat(sp, "x");
        }
        fprintf(f, "%4d  %-*s  %-*s %12s %12s %8s %5s\n", i + 1, wl, c->label, wp, c->spec,
                bs, ss, sp, c->fits ? "yes" : "NO");
    }
    /* what the labels and the bound mean (helper-94: read as contradictions) */
    int nb = 0, sim = 0, eq = 0;
    for (int i = 0; i < top; i++) {
        nb |= strstr(r->c[i].label, ": cut ") != NULL;
        sim |= strstr(r->c[i].label, ": simulated") != NULL;
        eq |= strchr(r->c[i].label, '=') != NULL;
    }
    fprintf(f, "bound: the slowest stage's time a step, which the optimum minimizes%s%s%s\n",
            eq ? "; a=b: one cut from both" : "",
            nb ? ";\n\"optimal: cut i +-1\": the optimum with its i-th cut moved a layer" : "",
            sim ? ";\n\"optimal: simulated\": the cut predict --partition optimal runs, the "
                  "fastest of the strategies'\ncuts (the optimum's neighbours are simulated "
                  "here alone)" : "");
    for (int i = 0; i < top; i++) {
        const struct ana_candidate *c = &r->c[i];
        char ss[32], an[32] = "";
        ps_human_seconds(c->pred->step_s, ss, sizeof ss);
        if (isfinite(c->pred->bubble_analytic))
            snprintf(an, sizeof an, " (analytic %.2f%%)", c->pred->bubble_analytic * 100);
        fprintf(f, "\n#%d %s: %s, step %s, bubble %.2f%%%s\n", i + 1, c->label, c->spec, ss,
                c->pred->bubble_sim * 100, an);
        fprintf(f, "%5s %6s %11s %13s %13s %6s %11s %11s %11s %4s\n", "stage", "device",
                "layers", "cost/step", "compute", "busy%", "est GiB", "sim peak GiB",
                "capacity GiB", "fits");
        for (int s = 0; s < c->part->n_stages; s++) {
            const struct sch_part_stage_info *in = &c->info[s];
            const struct ana_stage *st = &c->pred->stages[s];
            char a[32], b[32], d[32], lay[32];
            gb((double)in->mem, a, sizeof a);
            gb((double)st->peak_mem, b, sizeof b);
            gb(in->capacity, d, sizeof d);
            snprintf(lay, sizeof lay, "%d-%d", in->first, in->first + in->n_layers - 1);
            char ts[32], cs[32];
            ps_human_seconds(in->time_s, ts, sizeof ts);
            ps_human_seconds(in->compute_s, cs, sizeof cs);
            fprintf(f, "%5d %6d %11s %13s %13s %6.1f %11s %11s %11s %4s\n", s, in->device,
                    lay, ts, cs, st->busy_frac * 100, a, b, d,
                    (double)st->peak_mem <= in->capacity ? "yes" : "NO");
        }
    }
}

static void print_csv(const struct ana_rank *r, int top, FILE *f)
{
    fprintf(f, "rank,candidate,partition,bound_s,step_s,speedup,bubble_sim,fits,stage,device,"
               "first_layer,layers,cost_s,compute_s,busy_frac,est_bytes,sim_peak_bytes,"
               "capacity_bytes\n");
    for (int i = 0; i < top; i++) {
        const struct ana_candidate *c = &r->c[i];
        for (int s = 0; s < c->part->n_stages; s++) {
            const struct sch_part_stage_info *in = &c->info[s];
            const struct ana_stage *st = &c->pred->stages[s];
            fprintf(f, "%d,\"%s\",\"%s\",%s,%s,%s,%s,%d,%d,%d,%d,%d,%s,%s,%s,%lld,%lld,%s\n",
                    i + 1, c->label, c->spec, PS_DBL(c->bound_s), PS_DBL(c->pred->step_s),
                    isnan(c->pred->speedup) ? "" : PS_DBL(c->pred->speedup),
                    PS_DBL(c->pred->bubble_sim), c->fits, s,
                    in->device, in->first, in->n_layers, PS_DBL(in->time_s),
                    PS_DBL(in->compute_s), PS_DBL(st->busy_frac), (long long)in->mem,
                    (long long)st->peak_mem, PS_DBL(in->capacity));
        }
    }
}

static int print_json(const struct ana_rank *r, int top, FILE *f)
{
    ps_json_begin(); /* a failed dump may be out of memory */
    json_t *arr = json_array();
    if (!arr)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; i < top; i++) {
        const struct ana_candidate *c = &r->c[i];
        json_t *st = json_array();
        for (int s = 0; s < c->part->n_stages; s++) {
            const struct sch_part_stage_info *in = &c->info[s];
            json_array_append_new(st, json_pack("{s:i, s:i, s:i, s:f, s:f, s:f, s:I, s:I, s:f}",
                "device", in->device, "first_layer", in->first, "layers", in->n_layers,
                "cost_s", in->time_s, "compute_s", in->compute_s, "busy_frac",
                c->pred->stages[s].busy_frac, "est_bytes", (json_int_t)in->mem,
                "sim_peak_bytes", (json_int_t)c->pred->stages[s].peak_mem, "capacity_bytes",
                in->capacity));
        }
        json_t *cand = json_pack("{s:i, s:s, s:s, s:f, s:f, s:o, s:f, s:b, s:o}",
            "rank", i + 1, "candidate", c->label, "partition", c->spec, "bound_s", c->bound_s,
            "step_s", c->pred->step_s, "speedup",
            isnan(c->pred->speedup) ? json_null() : json_real(c->pred->speedup), "bubble_sim",
            c->pred->bubble_sim, "fits", c->fits, "stages", st);
        if (cand && r->baseline_skipped[0]) /* no speedup: why */
            json_object_set_new(cand, "baseline_skipped", ps_json_text(r->baseline_skipped));
        json_array_append_new(arr, cand);
    }
    int rc = ps_json_dumpf(arr, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(arr);
    if (rc && ps_json_oom())
        return ps_error(PS_ENOMEM, "out of memory writing JSON");
    return rc ? ps_error(PS_EIO, "write error") : 0;
}

int ana_rank_print(const struct ana_rank *r, enum ana_fmt fmt, int top, FILE *f)
{
    if (top <= 0 || top > r->n)
        top = r->n;
    switch (fmt) {
    case ANA_FMT_TABLE: print_table(r, top, f); break;
    case ANA_FMT_CSV: print_csv(r, top, f); break;
    case ANA_FMT_JSON: return print_json(r, top, f);
    default: PS_BUG("output format %d", (int)fmt);
    }
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}
