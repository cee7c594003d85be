/* ana_plan_print: a plan as a table, CSV or JSON (see ana_plan.h). */
#include "analysis/ana_plan.h"
#include "analysis/ana_plan_int.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

static const char *objective_name(enum ana_plan_objective o)
{
    return o == ANA_PLAN_MEMORY ? "memory" : "throughput";
}

static void cap_text(const struct ana_plan_spec *sp, char *buf, size_t n)
{
    char b[32];
    if (sp->cap_mode == 2) {
        ps_human_bytes(sp->cap, b, sizeof b);
        snprintf(buf, n, "%s per device (--mem-cap)", b);
    } else {
        snprintf(buf, n, "each device's memory");
    }
}

static void cfg_name(const struct ana_plan_cfg *g, char *buf, size_t n)
{
    snprintf(buf, n, "K=%d R=%d M=%d %s remat %s", g->K, g->R, g->M, g->schedule,
             sch_remat_name(g->remat));
}

static void row(const struct ana_plan *p, const struct ana_plan_cfg *g, int rank, FILE *f)
{
    char pk[32], cp[32], sp[40], st[32], tp[32];
    ps_human_seconds(g->step_s, st, sizeof st);
    ps_human_bytes((double)g->peak_mem, pk, sizeof pk);
    ps_human_bytes(g->capacity, cp, sizeof cp);
    double s = ana_plan_speedup(p, g);
    if (s > 0) {
        ps_fixed(s, 2, sp, sizeof sp - 1);
        strcat(sp, "x");
    } else {
        snprintf(sp, sizeof sp, "-");
    }
    ps_fixed(g->samples_per_s, 2, tp, sizeof tp);
    fprintf(f, "%4d %4d %3d %5d  %-15s %-11s %11s %11s %7s  %10s / %-10s %6.1f%% %6.1f%% "
               "%6.1f%%  %-9s  %s\n", rank, g->K, g->R, g->M, g->schedule,
            sch_remat_name(g->remat), st, tp, sp, pk, cp,
            g->bubble * 100, g->imbalance * 100, g->comm * 100, ana_plan_limit_name(g->limit),
            g->partition);
}

static void header(FILE *f)
{
    fprintf(f, "%4s %4s %3s %5s  %-15s %-11s %11s %11s %7s  %23s %7s %7s %7s  %-9s  %s\n",
            "rank", "K", "R", "M", "schedule", "remat", "step", "samples/s", "speedup",
            "peak memory / capacity", "bubble", "imbal", "comm", "limit", "partition");
}

static void print_table(const void *obj, FILE *f)
{
    const struct ana_plan *p = obj;
    const struct ana_plan_spec *sp = &p->spec;
    char cap[96];
    cap_text(sp, cap, sizeof cap);
    fprintf(f, "plan: %s on %s, %d devices, global batch %ld, capacity %s, objective %s\n",
            sp->model_arg ? sp->model_arg : sp->profile->path,
            sp->topo_arg ? sp->topo_arg : sp->topo->path, sp->devices, sp->batch, cap,
            objective_name(sp->objective));
    fprintf(f, "searched %d configuration%s: %d simulated, %d pruned by the bound, %d "
               "partition%s solved\n", p->n, p->n == 1 ? "" : "s", p->simulated,
            p->counts[ANA_PLAN_PRUNED], p->partitions, p->partitions == 1 ? "" : "s");
    if (p->baseline >= 0) {
        const struct ana_plan_cfg *b = &p->c[p->baseline];
        char nm[96];
        cfg_name(b, nm, sizeof nm);
        char st[32];
        ps_human_seconds(b->step_s, st, sizeof st);
        fprintf(f, "baseline: best single device that fits: %s, %s\n", nm, st);
    } else {
        fprintf(f, "baseline: no single-device configuration fits, or none is within the "
                   "engine's range (speedups not given)\n");
    }
    fprintf(f, "\ntop %d by %s:\n", sp->top, objective_name(sp->objective));
    if (!p->n_rank)
        fprintf(f, "  none: no configuration fits\n");
    else
        header(f);
    for (int i = 0; i < p->n_rank; i++)
        row(p, &p->c[p->rank[i]], i + 1, f);
    fprintf(f, "\nPareto frontier, throughput against peak memory%s:\n",
            sp->frontier_found ? " (of the configurations simulated for the top only, "
                                 "--frontier found)" : "");
    if (p->n_front)
        header(f);
    else /* as the top says (helper-128: the heading stood alone) */
        fprintf(f, "  none: no configuration fits\n");
    for (int i = 0; i < p->n_front; i++)
        row(p, &p->c[p->front[i]], i + 1, f);
    fprintf(f, "\nrejected:\n");
    for (int s = ANA_PLAN_PRUNED; s < ANA_PLAN_NSTATUS; s++)
        fprintf(f, "  %8d  %s\n", p->counts[s], ana_plan_status_desc(s));
    fprintf(f, "  %8d  fit but ranked below the top %d\n", p->counts[ANA_PLAN_FIT] - p->n_rank,
            sp->top);
    /* where a device holds several stages the least largest stage is not the fastest
     * step: say how to find a faster cut for a printed row (docs/plan.md) */
    int shared = 0;
    for (int i = 0; i < p->n_rank + p->n_front && !shared; i++) {
        int k = i < p->n_rank ? p->rank[i] : p->front[i - p->n_rank];
        struct ana_plan_layout l = ana_plan_layout_of(p->c[k].schedule);
        shared = l.v > 1 || l.vee;
    }
    if (shared)
        fprintf(f, "\nRows whose devices hold several stages (interleaved, breadth-first, zb-v, "
                   "dualpipe-v) are cut\nby the exact least largest stage; `pipesim predict "
                   "--partition optimal` also simulates\nother cuts for them and may run "
                   "faster.\n");
}

static void csv_row(const struct ana_plan *p, const char *set, int rank,
                    const struct ana_plan_cfg *g, FILE *f)
{
    fprintf(f, "%s,%d,%d,%d,%d,%d,%s,%s,%s,%s,%s,%lld,%s,%s,%s,%s,%s,", set, rank, g->K, g->R,
            g->M, g->S, g->schedule, sch_remat_name(g->remat), PS_DBL(g->step_s),
            PS_DBL(g->samples_per_s),
            ana_plan_speedup(p, g) > 0 ? PS_DBL(ana_plan_speedup(p, g)) : "", /* no baseline */
            (long long)g->peak_mem,
            PS_DBL(g->capacity), PS_DBL(g->bubble), PS_DBL(g->imbalance), PS_DBL(g->comm),
            ana_plan_limit_name(g->limit));
    ps_csv_str(f, g->partition);
    fputc('\n', f);
}

static void print_csv(const void *obj, FILE *f)
{
    const struct ana_plan *p = obj;
    fprintf(f, "set,rank,K,R,M,stages,schedule,remat,step_s,samples_per_s,speedup,peak_bytes,"
               "capacity_bytes,bubble,imbalance,comm_share,limited_by,partition\n");
    for (int i = 0; i < p->n_rank; i++)
        csv_row(p, "top", i + 1, &p->c[p->rank[i]], f);
    for (int i = 0; i < p->n_front; i++)
        csv_row(p, "frontier", i + 1, &p->c[p->front[i]], f);
}

static json_t *cfg_json(const struct ana_plan *p, const struct ana_plan_cfg *g)
{
    double sp = ana_plan_speedup(p, g);
    return json_pack("{s:i, s:i, s:i, s:i, s:s, s:s, s:f, s:f, s:o, s:I, s:f, s:f, s:f, s:f, "
                     "s:s, s:s}", "K", g->K, "R", g->R, "M", g->M, "stages", g->S, "schedule",
                     g->schedule, "remat", sch_remat_name(g->remat), "step_s", g->step_s,
                     "samples_per_s", g->samples_per_s, "speedup",
                     sp > 0 ? json_real(sp) : json_null(), /* null: no baseline */
                     "peak_bytes", (json_int_t)g->peak_mem, "capacity_bytes", g->capacity,
                     "bubble", g->bubble, "imbalance", g->imbalance, "comm_share", g->comm,
                     "limited_by", ana_plan_limit_name(g->limit), "partition", g->partition);
}

static int print_json(const void *obj, FILE *f)
{
    const struct ana_plan *p = obj;
    ps_json_begin();
    json_t *o = json_pack("{s:i, s:I, s:s, s:i, s:i, s:i, s:i}", "devices", p->spec.devices,
                          "batch", (json_int_t)p->spec.batch, "objective",
                          objective_name(p->spec.objective), "configurations", p->n,
                          "simulated", p->simulated, "pruned", p->counts[ANA_PLAN_PRUNED],
                          "partitions", p->partitions);
    json_t *top = json_array(), *front = json_array(), *rej = json_object();
    int bad = !o || !top || !front || !rej;
    for (int i = 0; !bad && i < p->n_rank; i++)
        bad |= json_array_append_new(top, cfg_json(p, &p->c[p->rank[i]]));
    for (int i = 0; !bad && i < p->n_front; i++)
        bad |= json_array_append_new(front, cfg_json(p, &p->c[p->front[i]]));
    for (int s = ANA_PLAN_PRUNED; !bad && s < ANA_PLAN_NSTATUS; s++)
        bad |= json_object_set_new(rej, ana_plan_status_name(s), json_integer(p->counts[s]));
    if (!bad) {
        bad |= json_object_set_new(o, "baseline", p->baseline >= 0 ?
                                   cfg_json(p, &p->c[p->baseline]) : json_null());
        bad |= json_object_set(o, "top", top) | json_object_set(o, "frontier", front) |
               json_object_set(o, "rejected", rej);
    }
    json_decref(top);
    json_decref(front);
    json_decref(rej);
    return ps_json_print(o, f, bad);
}

int ana_plan_print(const struct ana_plan *p, enum ana_fmt fmt, FILE *f)
{
    static const struct ana_printers pr = { print_table, print_csv, print_json };
    return ana_print_as(fmt, &pr, p, f);
}
