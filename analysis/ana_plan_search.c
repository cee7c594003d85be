/* ana_plan_search: the search over the enumerated configurations (see
 * ana_plan.h, ana_plan_int.h): the top N and the frontier found so far, the
 * order of the visits by the cheap bounds, and each visit: its partition,
 * its memory bounds and, unless they prune it, its simulation. */
#include "analysis/ana_plan.h"
#include "analysis/ana_plan_int.h"
#include "analysis/ana_predict.h"
#include "base/ps_error.h"
#include "sched/sch_cost.h"
#include "sched/sch_partitioner.h"
#include "sched/sch_zb.h"
#include "sim/sim_engine.h"
#include "sim/sim_membudget.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cfg_error(struct ana_plan_cfg *g, const char *msg)
{
    g->status = ANA_PLAN_ERROR;
    ana_plan_msg_copy(g->error, sizeof g->error, msg);
}

/* Builds, bounds memory and (if it may fit) simulates g on e's partition. */
struct prune;
static int keep(const struct prune *pr, int single, int64_t tlb, int64_t mlb);

/* pr: NULL for brute force (no pruning, no rejection by the bounds). */
static int simulate(const struct ana_plan_spec *sp, const struct ana_plan_pentry *e,
                    const struct sch_costs *costs, struct ana_plan_cfg *g,
                    const struct prune *pr, int *ran)
{
    struct sch_schedule *s = NULL;
    sim_engine *eng = NULL;
    double capv[1024], *cv = g->K <= 1024 ? capv : malloc(sizeof *cv * (size_t)g->K);
    int rc = 0;
    *ran = 0;
    if (!cv)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int d = 0; d < g->K; d++)
        cv[d] = sp->cap_mode == 2 ? sp->cap : sp->topo->devices[d].memory;
    ps_error_clear();
    if ((rc = sim_mem_check_run("plan", g->schedule, g->K, g->M, g->remat, g->R, 0, 0)) < 0 ||
        (rc = sch_schedule_build(g->schedule, g->K, g->M, g->remat, &s)) < 0) {
        cfg_error(g, ps_errmsg());
        rc = rc == -PS_ENOMEM ? rc : 0;
        goto out;
    }
    if (s->n_stages != g->S || s->has_wgrad != ana_plan_split_backward(g->schedule) ||
        memcmp(s->stage_device, e->stage_device, sizeof *s->stage_device * (size_t)g->S)) {
        rc = ps_error(PS_EINVAL, "schedule %s places its %d stages (or splits its "
                       "backward) unlike the planner assumed", g->schedule, s->n_stages);
        goto out;
    }
    /* zb-auto's built lists are its first phase: the engine runs them
     * fitted to the costs (ana_schedule_fit, as predict does), an order the
     * walk of these lists does not bound */
    int64_t mlb = 0;
    if (!sch_zbauto_limit(s) && ana_plan_mem_bound(s, costs, cv, &mlb) && pr) {
        g->mem_lb = mlb > g->mem_lb ? mlb : g->mem_lb; /* brute force: the engine judges */
        g->status = ANA_PLAN_MEM_BOUND;
        goto out;
    }
    g->mem_lb = mlb > g->mem_lb ? mlb : g->mem_lb;
    if (pr && !keep(pr, g->K == 1 && g->R == 1, sch_seconds_to_time(g->lb_s), g->mem_lb))
        goto out; /* stays PRUNED: the memory walk bounds it out of the top and frontier */
    if ((rc = ana_schedule_fit(&s, costs, sp->topo, g->R)) < 0 ||
        (rc = sim_simulate(s, costs, sp->topo, 0, &eng)) < 0) {
        cfg_error(g, ps_errmsg());
        rc = rc == -PS_ENOMEM ? rc : 0;
        goto out;
    }
    *ran = 1;
    const struct sim_result *r = sim_engine_result(eng);
    if (r->makespan <= 0) { /* as ana_predict: no work, no throughput to rank */
        cfg_error(g, "the step takes no time: no layer has work, bytes to move or parameters "
                     "to update");
        goto out;
    }
    g->step_ns = r->makespan;
    g->step_s = sch_time_to_seconds(r->makespan);
    g->samples_per_s = g->step_s > 0 ? (double)sp->batch / g->step_s : 0;
    g->bubble = r->bubble;
    int fits = 1, full = 0;
    double sum = 0, mx = 0, comm = 0;
    for (int d = 0; d < g->K; d++) {
        if (r->peak_mem[d] > g->peak_mem || d == 0) {
            g->peak_mem = r->peak_mem[d];
            g->capacity = cv[d];
        }
        fits &= (double)r->peak_mem[d] <= cv[d];
        /* any device near its own capacity (helper-150: a 2 GiB device at 93 % beside a
         * 16 GiB one at 10.75 GiB was "limit bubble") */
        full |= (double)r->peak_mem[d] >= 0.9 * cv[d];
        double busy = (double)r->busy[d];
        sum += busy;
        mx = busy > mx ? busy : mx;
        double cm = sch_time_to_seconds(r->busy_allreduce[d]) +
                    ana_plan_send_seconds(sp, s, costs, d);
        comm = cm > comm ? cm : comm;
    }
    g->imbalance = sum > 0 ? mx / (sum / g->K) - 1 : 0;
    g->comm = g->step_s > 0 ? fmin(1, comm / g->step_s) : 0;
    g->status = fits ? ANA_PLAN_FIT : ANA_PLAN_MEM_SIM;
    if (full)
        g->limit = ANA_LIM_MEMORY;
    else {
        double best = 0.05;
        g->limit = ANA_LIM_COMPUTE;
        if (g->bubble > best)
            best = g->bubble, g->limit = ANA_LIM_BUBBLE;
        if (g->imbalance > best)
            best = g->imbalance, g->limit = ANA_LIM_IMBALANCE;
        if (g->comm > best)
            g->limit = ANA_LIM_LINK;
    }
out:
    sim_engine_free(eng);
    sch_schedule_free(s);
    if (cv != capv)
        free(cv);
    return rc;
}

/* ---- the search ---- */

/* Objective key order; -1 when a is better. */
int ana_plan_better(const struct ana_plan_cfg *a, const struct ana_plan_cfg *b,
                    enum ana_plan_objective o)
{
    if (o == ANA_PLAN_MEMORY && a->peak_mem != b->peak_mem)
        return a->peak_mem < b->peak_mem ? -1 : 1;
    if (a->step_ns != b->step_ns)
        return a->step_ns < b->step_ns ? -1 : 1;
    if (a->peak_mem != b->peak_mem)
        return a->peak_mem < b->peak_mem ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The best `cap` feasible configurations so far, best first. */
struct topn {
    int *idx, n, cap;
};

static void topn_add(struct topn *t, const struct ana_plan_cfg *c, int i,
                     enum ana_plan_objective o)
{
    int pos = t->n;
    while (pos > 0 && ana_plan_better(&c[i], &c[t->idx[pos - 1]], o) < 0)
        pos--;
    if (pos >= t->cap)
        return;
    int last = t->n < t->cap ? t->n : t->cap - 1;
    memmove(t->idx + pos + 1, t->idx + pos, sizeof *t->idx * (size_t)(last - pos));
    t->idx[pos] = i;
    if (t->n < t->cap)
        t->n++;
}

/* Whether a configuration with these lower bounds may still enter t. */
static int may_enter(const struct topn *t, const struct ana_plan_cfg *c, int64_t tlb,
                     int64_t mlb, enum ana_plan_objective o)
{
    if (t->n < t->cap)
        return 1;
    const struct ana_plan_cfg *w = &c[t->idx[t->n - 1]];
    return o == ANA_PLAN_MEMORY ? mlb <= w->peak_mem : tlb <= w->step_ns;
}

/* The frontier of the feasible configurations simulated so far: peak
 * memory up, step strictly down. */
struct stair {
    int64_t *peak, *step;
    int n, cap;
};

/* Whether some feasible configuration found is at least as good as any
 * configuration with these bounds in both, so that it cannot be on the
 * frontier (the tie rules of ana_plan_rerank's frontier). O(frontier). */
static int dominated(const struct stair *st, int64_t tlb, int64_t mlb)
{
    for (int i = 0; i < st->n; i++)
        if ((st->peak[i] <= mlb && st->step[i] < tlb) || (st->peak[i] < mlb && st->step[i] <= tlb))
            return 1;
    return 0;
}

static int stair_add(struct stair *st, int64_t peak, int64_t step)
{
    for (int i = 0; i < st->n; i++)
        if (st->peak[i] <= peak && st->step[i] <= step)
            return 0;
    int j = 0;
    for (int i = 0; i < st->n; i++) /* drop what the new point dominates */
        if (!(st->peak[i] >= peak && st->step[i] >= step)) {
            st->peak[j] = st->peak[i];
            st->step[j++] = st->step[i];
        }
    st->n = j;
    if (st->n == st->cap) {
        int nc = st->cap ? 2 * st->cap : 16;
        int64_t *a = realloc(st->peak, sizeof *a * (size_t)nc);
        if (!a)
            return ps_error(PS_ENOMEM, "out of memory");
        st->peak = a;
        int64_t *b = realloc(st->step, sizeof *b * (size_t)nc);
        if (!b)
            return ps_error(PS_ENOMEM, "out of memory");
        st->step = b;
        st->cap = nc;
    }
    st->peak[st->n] = peak;
    st->step[st->n++] = step;
    return 0;
}

/* qsort_r's comparators (glibc's order of arguments): plan --jobs runs
 * searches in threads */
static int by_bound(const void *a, const void *b, void *ctx)
{
    const int64_t *sort_lb = ctx;
    int i = *(const int *)a, j = *(const int *)b;
    if (sort_lb[i] != sort_lb[j])
        return sort_lb[i] < sort_lb[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

int ana_plan_is_single(const struct ana_plan_cfg *g)
{
    return g->K == 1 && g->R == 1;
}

/* What the search has found, against which a configuration's bounds are
 * judged: phase 0 looks for the top N (and the best single device) in the
 * order of the objective's bound, phase 1 completes the frontier in the
 * order of the memory bound. */
struct prune {
    struct topn top, one;
    struct stair stair;
    const struct ana_plan_cfg *all;
    enum ana_plan_objective obj;
    int phase;
};

/* Whether a configuration with these bounds may still enter the top N or
 * be the best single device (phase 0), or be on the frontier (phase 1). */
static int keep(const struct prune *pr, int single, int64_t tlb, int64_t mlb)
{
    if (pr->phase)
        return !dominated(&pr->stair, tlb, mlb);
    return may_enter(&pr->top, pr->all, tlb, mlb, pr->obj) ||
           (single && may_enter(&pr->one, pr->all, tlb, 0, ANA_PLAN_THROUGHPUT));
}

struct bounds {
    int64_t *t, *m; /* the cheap bounds of every configuration */
};

/* Visits configuration i: bounds, partition, memory, simulation, unless
 * pr (NULL: brute force) says it cannot matter. */
static int visit(const struct ana_plan_spec *sp, struct ana_plan *p, struct ana_plan_pcache *pc,
                 struct ana_plan_ccache *cc, const struct bounds *b, struct prune *pr, int i)
{
    struct ana_plan_cfg *g = &p->c[i];
    int single = ana_plan_is_single(g), rc;
    ana_plan_progress_tick(sp, p->n, 1, 0);
    if (pr && !keep(pr, single, b->t[i], b->m[i]))
        return 0; /* stays PRUNED */
    struct ana_plan_layout l = ana_plan_layout_of(g->schedule);
    struct ana_plan_pkey k = { l.v, l.vee, g->K, g->M, g->remat,
                               (double)sp->batch / g->R / g->M, "" };
    struct ana_plan_pentry *e = NULL;
    if ((rc = ana_plan_pcache_get(sp, pc, NULL, &k, &e)) < 0)
        return rc;
    /* The layout's entry is the optimum under fill-drain's stashes. Another
     * schedule gets the optimum under its own where that may differ: the cap
     * rejected the unconstrained optimum (fewer stashes may allow a faster
     * cut), its stages hold more than fill-drain's closed form at some count
     * (1F1B at except_last keeps a recompute beside the last micro-batch's
     * stash: a cut that fit fill-drain overflowed), or a device holds several
     * stages (their sum must fit). Decided before any bound of the entry prunes:
     * those bound that entry's cut, not the one the schedule runs (helper-61: a
     * zb-v configuration was pruned by the fill-drain cut's 502.6 ms, its own
     * cut running 448.6 ms). */
    const struct ana_plan_centry *ce = NULL;
    if (e->rc == 0 && sp->cap_mode && strcmp(g->schedule, "gpipe")) {
        if ((rc = ana_plan_ccache_get(cc, g, &ce)) < 0)
            return rc;
        if (e->binding || l.v > 1 || ce->rc < 0 || !ce->dominated) {
            snprintf(k.sched, sizeof k.sched, "%s", g->schedule);
            if ((rc = ana_plan_pcache_get(sp, pc, ce->rc < 0 ? NULL : ce->pcnt, &k, &e)) < 0)
                return rc;
        }
    }
    if (e->rc < 0) {
        if (e->rc == -PS_ENOMEM)
            return ps_error(PS_ENOMEM, "%s", e->msg);
        cfg_error(g, e->msg);
        return 0;
    }
    g->capped = e->capped;
    sch_partition_format(e->part, g->partition, sizeof g->partition);
    int64_t et = ana_plan_split_backward(g->schedule) ? e->tlb : e->tlb_plain;
    int64_t tlb = et > b->t[i] ? et : b->t[i];
    int64_t mlb = e->mem_lb > b->m[i] ? e->mem_lb : b->m[i];
    mlb = g->mem_lb > mlb ? g->mem_lb : mlb; /* the memory walk of an earlier phase */
    g->lb_s = sch_time_to_seconds(tlb);
    g->mem_lb = mlb;
    if (pr && e->over) {
        g->status = ANA_PLAN_MEM_BOUND;
        return 0;
    }
    if (pr && !keep(pr, single, tlb, mlb))
        return 0;
    if (!ce && (rc = ana_plan_ccache_get(cc, g, &ce)) < 0)
        return rc;
    if (ce->rc < 0) {
        if (ce->rc == -PS_ENOMEM)
            return ps_error(PS_ENOMEM, "%s", ce->msg);
        cfg_error(g, ce->msg);
        return 0;
    }
    if (ce->S != g->S)
        return ps_error(PS_EINVAL, "schedule %s has %d stages, the planner assumed %d",
                        g->schedule, ce->S, g->S);
    int64_t clb = 0; /* not of zb-auto, whose engine order is fitted to the costs */
    int over = !ce->fitted && ana_plan_count_bound(sp, e, ce, &clb);
    mlb = clb > mlb ? clb : mlb;
    g->mem_lb = mlb;
    if (pr && over) {
        g->status = ANA_PLAN_MEM_BOUND;
        return 0;
    }
    if (pr && !keep(pr, single, tlb, mlb))
        return 0;
    int ran;
    if (e->upart) { /* the optimum the closed form refused, judged by the engine first */
        /* both cuts run whole, as brute force runs them: which one a configuration
         * reports may not depend on the pruning (helper-133: a pruned run of the
         * optimum fell back to the capped cut, which brute force never reports
         * where the optimum fits); the configuration's own bounds pruned above */
        struct ana_plan_cfg before = *g, up;
        sch_partition_format(e->upart, g->partition, sizeof g->partition);
        if ((rc = simulate(sp, e, e->ucosts, g, NULL, &ran)) < 0)
            return rc;
        up = *g;
        int ran_up = ran; /* a configuration counts once as simulated */
        if (!(up.status == ANA_PLAN_FIT && l.v == 1 && !l.vee)) {
            /* the capped cut; with several stages a device the faster that fits */
            *g = before;
            if ((rc = simulate(sp, e, e->costs, g, NULL, &ran)) < 0)
                return rc;
            if (up.status == ANA_PLAN_FIT &&
                (g->status != ANA_PLAN_FIT || up.step_ns < g->step_ns))
                *g = up;
        }
        ran |= ran_up;
    } else if ((rc = simulate(sp, e, e->costs, g, pr, &ran)) < 0) {
        return rc;
    }
    p->simulated += ran;
    ana_plan_progress_tick(sp, p->n, 0, ran);
    if (g->status == ANA_PLAN_FIT && pr) {
        topn_add(&pr->top, p->c, i, sp->objective);
        if (single)
            topn_add(&pr->one, p->c, i, ANA_PLAN_THROUGHPUT);
        if ((rc = stair_add(&pr->stair, g->peak_mem, g->step_ns)) < 0)
            return rc;
    }
    return 0;
}

int ana_plan_search(const struct ana_plan_spec *sp, struct ana_plan *p)
{
    struct ana_plan_pcache pc = { 0 };
    struct ana_plan_ccache cc = { 0 };
    struct ana_plan_work *wt = NULL;
    struct prune pr = { .all = p->c, .obj = sp->objective };
    int nw = 0, cw = 0, rc = 0;
    struct cut_memo {
        double micro;
        int K, M;
        enum sch_remat r;
        int64_t tlb, mlb;
    } memo[3] = { { .K = 0 }, { .K = 0 }, { .K = 0 } };
    struct bounds b = { malloc(sizeof *b.t * (size_t)p->n), malloc(sizeof *b.m * (size_t)p->n) };
    int *order = malloc(sizeof *order * (size_t)p->n);
    char *seen = calloc((size_t)p->n, 1);
    pr.top = (struct topn){ malloc(sizeof(int) * (size_t)sp->top), 0, sp->top };
    pr.one = (struct topn){ malloc(sizeof(int)), 0, 1 };
    if (!b.t || !b.m || !order || !seen || !pr.top.idx || !pr.one.idx) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < p->n; i++) {
        struct ana_plan_cfg *g = &p->c[i];
        if (sp->nshards > 1 && ana_plan_shard_of(g, sp->nshards) != sp->shard) {
            g->status = ANA_PLAN_NSTATUS; /* another shard's: it bounds and visits it */
            seen[i] = 1;
            b.t[i] = b.m[i] = 0;
            continue;
        }
        const struct ana_plan_work *w = NULL;
        if ((rc = ana_plan_work_of(sp, &wt, &nw, &cw, (double)sp->batch / g->R / g->M, &w)) < 0)
            goto out;
        b.t[i] = ana_plan_work_bound(w, g->K, g->M, g->S / g->K, g->remat);
        b.m[i] = ana_plan_mem_bound0(sp, w, g->K, g->S / g->K);
        if (g->S == g->K) { /* one stage a device: the best contiguous cut's busiest */
            struct cut_memo *cm = &memo[g->remat % 3]; /* the remats alternate */
            if (cm->micro != w->micro || cm->K != g->K || cm->M != g->M || cm->r != g->remat) {
                *cm = (struct cut_memo){ w->micro, g->K, g->M, g->remat, 0, 0 };
                ana_plan_cut_bounds(sp, w, g->K, g->M, g->remat, &cm->tlb, &cm->mlb);
            }
            b.t[i] = cm->tlb > b.t[i] ? cm->tlb : b.t[i];
            b.m[i] = cm->mlb > b.m[i] ? cm->mlb : b.m[i];
        }
        g->lb_s = sch_time_to_seconds(b.t[i]);
        g->mem_lb = b.m[i];
    }
    for (int phase = 0; phase < (sp->brute_force || sp->frontier_found ? 1 : 2); phase++) {
        for (int i = 0; i < p->n; i++)
            order[i] = i;
        if (!sp->brute_force) {
            qsort_r(order, (size_t)p->n, sizeof *order, by_bound,
                    phase || sp->objective == ANA_PLAN_MEMORY ? b.m : b.t);
        }
        pr.phase = phase;
        for (int oi = 0; oi < p->n; oi++) {
            int i = order[oi];
            if (seen[i])
                continue;
            if ((rc = visit(sp, p, &pc, &cc, &b, sp->brute_force ? NULL : &pr, i)) < 0)
                goto out;
            seen[i] = p->c[i].status != ANA_PLAN_PRUNED;
        }
    }
    p->partitions = pc.n;
out:
    ana_plan_pcache_release(&pc);
    ana_plan_ccache_release(&cc);
    ana_plan_work_release(wt, nw);
    free(b.t);
    free(b.m);
    free(order);
    free(seen);
    free(pr.top.idx);
    free(pr.one.idx);
    free(pr.stair.peak);
    free(pr.stair.step);
    return rc;
}
