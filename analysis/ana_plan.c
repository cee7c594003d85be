/* ana_plan: the configuration search with exact bounds (see ana_plan.h). */
#include "analysis/ana_plan.h"
#include "base/ps_error.h"
#include "sched/sch_cost.h"
#include "sched/sch_partitioner.h"
#include "sim/sim_engine.h"
#include "sim/sim_membudget.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const ana_plan_schedules[] = {
    "gpipe", "1f1b", "eager-1f1b", "interleaved:2", "interleaved:4", "breadth-first:2",
    "zb-h1", "zb-h2", "zb-v", "zb-auto",
};
const int ana_plan_nschedules = (int)(sizeof ana_plan_schedules / sizeof *ana_plan_schedules);

static const char *const status_names[] = {
#define X(id, name, desc) name,
    ANA_PLAN_STATUS(X)
#undef X
};
static const char *const status_descs[] = {
#define X(id, name, desc) desc,
    ANA_PLAN_STATUS(X)
#undef X
};
const char *ana_plan_status_name(enum ana_plan_status s) { return status_names[s]; }
const char *ana_plan_status_desc(enum ana_plan_status s) { return status_descs[s]; }

const char *ana_plan_limit_name(enum ana_plan_limit l)
{
    static const char *const n[] = { "bubble", "imbalance", "link", "memory", "compute" };
    return n[l];
}

/* ---- stage layouts: where a schedule puts its stages ---- */

struct layout {
    int v, vee; /* v stages per device; vee: zb-v's V (d holds d and 2K-1-d) */
};

static struct layout layout_of(const char *name)
{
    struct layout l = { 1, 0 };
    if (!strcmp(name, "zb-v"))
        l = (struct layout){ 2, 1 };
    else if (!strncmp(name, "interleaved:", 12) || !strncmp(name, "breadth-first:", 14))
        l.v = atoi(strchr(name, ':') + 1);
    if (l.v < 1)
        l.v = 1;
    return l;
}

static int layout_dev(struct layout l, int K, int s)
{
    return l.vee && s >= K ? 2 * K - 1 - s : s % K;
}

/* Whether the schedule splits backward into B and W (zero-bubble family). */
static int split_backward(const char *name)
{
    return !strncmp(name, "zb-", 3);
}

/* Whether the schedule's conditions hold for K, M on L layers. */
static int schedule_valid(const char *name, int K, int M, int L)
{
    struct layout l = layout_of(name);
    if ((int64_t)l.v * K > L || (int64_t)K * M * l.v > 1LL << 28)
        return 0;
    if (!strncmp(name, "interleaved:", 12) && l.v > 1 && M % K)
        return 0;
    return 1;
}

/* ---- partitions and costs, cached by what they depend on ---- */

struct pkey {
    int v, vee, K, M;
    enum sch_remat remat;
    double micro;
};

struct pentry {
    struct pkey k;
    int used;
    int rc;                    /* < 0: the partitioner's or the costs' error */
    char msg[96];
    int capped;
    struct sch_partition *part;
    struct sch_costs *costs;
    int *stage_device;         /* [S] */
    int64_t tlb;               /* the time lower bound from the costs (ns) */
    int64_t tlb_plain;         /* the same for schedules without a split backward */
    int64_t mem_lb;            /* largest device's parameters + largest stash */
    int64_t *dev_static;       /* [K] each device's parameter bytes */
    int over;                  /* some device's mem_lb is above its capacity */
};

struct pcache {
    struct pentry *e;
    size_t cap;
    int n;
};

static uint64_t pkey_hash(const struct pkey *k)
{
    uint64_t h = 1469598103934665603ULL, mb;
    memcpy(&mb, &k->micro, sizeof mb);
    uint64_t w[] = { (uint64_t)k->v, (uint64_t)k->vee, (uint64_t)k->K, (uint64_t)k->M,
                     (uint64_t)k->remat, mb };
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        h = (h ^ w[i]) * 1099511628211ULL;
    return h;
}

static int pkey_eq(const struct pkey *a, const struct pkey *b)
{
    return a->v == b->v && a->vee == b->vee && a->K == b->K && a->M == b->M &&
           a->remat == b->remat && a->micro == b->micro;
}

static void pcache_release(struct pcache *c)
{
    for (size_t i = 0; c->e && i < c->cap; i++)
        if (c->e[i].used) {
            sch_partition_free(c->e[i].part);
            sch_costs_free(c->e[i].costs);
            free(c->e[i].stage_device);
            free(c->e[i].dev_static);
        }
    free(c->e);
}

static int n_remat(enum sch_remat r, int M)
{
    return r == SCH_REMAT_ALWAYS ? M : r == SCH_REMAT_EXCEPT_LAST ? M - 1 : 0;
}

/* The capped optimum, else the unconstrained one; the costs of it. */
static void pentry_fill(const struct ana_plan_spec *sp, struct pentry *e)
{
    const struct pkey *k = &e->k;
    int S = k->v * k->K, rc;
    sch_part_model *m = NULL;
    struct layout l = { k->v, k->vee };
    if (!(e->stage_device = malloc(sizeof *e->stage_device * (size_t)S))) {
        e->rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int s = 0; s < S; s++)
        e->stage_device[s] = layout_dev(l, k->K, s);
    struct sch_part_opts o = { .n_stages = S, .stage_device = e->stage_device,
                               .n_micro = k->M, .micro_batch = k->micro, .remat = k->remat,
                               .cap_mode = sp->cap_mode, .cap = sp->cap };
    /* The unconstrained optimum first (the fast path of sch_part_solve):
     * when it meets the cap it is an optimum under the cap too; else the
     * capped search; else (none meets the closed-form cap) the
     * unconstrained one, for the engine to judge. */
    int64_t bn;
    sch_part_model *um = NULL;
    struct sch_part_opts uo = o;
    uo.cap_mode = 0;
    struct sch_partition *up = NULL;
    if ((rc = sch_part_model_new(sp->profile, sp->topo, &uo, &um)) == 0 &&
        (rc = sch_part_solve(sch_part_model_problem(um), &up, &bn)) == 0 &&
        (rc = sch_part_model_new(sp->profile, sp->topo, &o, &m)) == 0) {
        int feasible = 0;
        sch_part_bottleneck(sch_part_model_problem(m), up, NULL, &feasible);
        if (feasible) {
            e->part = up;
            up = NULL;
            e->capped = 1;
        } else if ((rc = sch_part_solve(sch_part_model_problem(m), &e->part, &bn)) == 0) {
            e->capped = 1;
        } else if (rc == -PS_ENOFIT) {
            e->part = up;
            up = NULL;
            rc = 0;
        }
    }
    sch_partition_free(up);
    sch_part_model_free(um);
    if (rc == 0)
        rc = sch_costs_new(sp->profile, sp->topo, e->part, e->stage_device, k->micro,
                           &e->costs);
    if (rc < 0) {
        e->rc = rc;
        goto out;
    }
    /* The engine's compute ops back to back on each device, after the
     * forward of some micro-batch has gone through the stages before its
     * first one (the first op on a device is an F whose earlier stages are
     * all on other devices). Without a split backward, only U follows a
     * device's last B, whose gradient then goes back through the stages
     * before it: the tail. Memory: the parameters, and the stash of its
     * largest stage at that stage's backward. */
    int64_t *b = calloc((size_t)k->K * 6, sizeof *b);
    if (!b) {
        e->rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    int64_t *st = b + k->K, *mx = st + k->K, *head = mx + k->K, *tail = head + k->K;
    int64_t *upd = tail + k->K, nr = n_remat(k->remat, k->M);
    int64_t before = 0, back = 0;
    for (int d = 0; d < k->K; d++)
        head[d] = tail[d] = INT64_MAX;
    for (int s = 0; s < S; s++) {
        const struct sch_stage_cost *c = &e->costs->st[s];
        int d = c->device;
        b[d] += (k->M - nr) * c->fwd + nr * (c->fwd_nostash + c->recomp) +
                (int64_t)k->M * c->bwd + c->update;
        st[d] += c->param_bytes;
        upd[d] += c->update;
        mx[d] = c->mem.stash > mx[d] ? c->mem.stash : mx[d];
        head[d] = before < head[d] ? before : head[d];
        tail[d] = back < tail[d] ? back : tail[d];
        before += c->fwd < c->fwd_nostash ? c->fwd : c->fwd_nostash;
        back += c->bwd;
    }
    if (!(e->dev_static = malloc(sizeof *e->dev_static * (size_t)k->K))) {
        free(b);
        e->rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(e->dev_static, st, sizeof *st * (size_t)k->K);
    for (int d = 0; d < k->K; d++) {
        int64_t t = b[d] + (head[d] == INT64_MAX ? 0 : head[d]), need = st[d] + mx[d];
        int64_t tp = t + (tail[d] != INT64_MAX && tail[d] > upd[d] ? tail[d] - upd[d] : 0);
        double cap = sp->cap_mode == 2 ? sp->cap : sp->topo->devices[d].memory;
        e->tlb = t > e->tlb ? t : e->tlb;
        e->tlb_plain = tp > e->tlb_plain ? tp : e->tlb_plain;
        e->mem_lb = need > e->mem_lb ? need : e->mem_lb;
        e->over |= (double)need > cap;
    }
    free(b);
out:
    if (e->rc < 0)
        snprintf(e->msg, sizeof e->msg, "%s", ps_errmsg());
    sch_part_model_free(m);
}

static int pcache_get(const struct ana_plan_spec *sp, struct pcache *c, const struct pkey *k,
                      struct pentry **out)
{
    if ((size_t)(c->n + 1) * 2 > c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 256;
        struct pentry *ne = calloc(ncap, sizeof *ne);
        if (!ne)
            return ps_error(PS_ENOMEM, "out of memory");
        for (size_t i = 0; i < c->cap; i++)
            if (c->e[i].used) {
                size_t j = pkey_hash(&c->e[i].k) & (ncap - 1);
                while (ne[j].used)
                    j = (j + 1) & (ncap - 1);
                ne[j] = c->e[i];
            }
        free(c->e);
        c->e = ne;
        c->cap = ncap;
    }
    size_t j = pkey_hash(k) & (c->cap - 1);
    while (c->e[j].used && !pkey_eq(&c->e[j].k, k))
        j = (j + 1) & (c->cap - 1);
    struct pentry *e = &c->e[j];
    if (!e->used) {
        memset(e, 0, sizeof *e);
        e->used = 1;
        e->k = *k;
        c->n++;
        pentry_fill(sp, e);
    }
    *out = e;
    return 0;
}

/* ---- the cheap bound: the whole model's work over K devices ---- */

/* Per micro-batch size: the least time of each layer's step work over the
 * devices, summed (f, fn, b, u over layers). */
struct work {
    double micro;
    double f, fn, b, u; /* seconds, each the sum over layers of the per-device minimum */
    double params, stash; /* bytes: parameters (x bytes_per_param), stash per micro-batch */
};

static int work_of(const struct ana_plan_spec *sp, struct work **tab, int *n, int *cap,
                   double micro, const struct work **out)
{
    for (int i = 0; i < *n; i++)
        if ((*tab)[i].micro == micro) {
            *out = &(*tab)[i];
            return 0;
        }
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        struct work *w = realloc(*tab, sizeof *w * (size_t)nc);
        if (!w)
            return ps_error(PS_ENOMEM, "out of memory");
        *tab = w;
        *cap = nc;
    }
    struct work *w = &(*tab)[(*n)++];
    memset(w, 0, sizeof *w);
    w->micro = micro;
    const struct mdl_profile *p = sp->profile;
    for (int l = 0; l < p->n_layers; l++) {
        double f = INFINITY, fn = INFINITY, b = INFINITY, u = INFINITY;
        for (int d = 0; d < sp->devices; d++) {
            const struct mdl_device *dv = &sp->topo->devices[d];
            const struct mdl_layer *ly = &p->layers[l];
            f = fmin(f, mdl_layer_seconds(dv, p->measured, ly, MDL_OP_FWD, micro));
            fn = fmin(fn, mdl_layer_seconds(dv, p->measured, ly, MDL_OP_FWD_NOSTASH, micro));
            b = fmin(b, mdl_layer_seconds(dv, p->measured, ly, MDL_OP_BWD, micro));
            u = fmin(u, dv->mem_bandwidth > 0 ? 2.0 * ly->params * sp->topo->bytes_per_param /
                                                    dv->mem_bandwidth : 0);
        }
        w->f += f;
        w->fn += fn;
        w->b += b;
        w->u += u;
        w->params += p->layers[l].params * sp->topo->bytes_per_param;
        w->stash += p->layers[l].stash_bytes * micro;
    }
    *out = w;
    return 0;
}

/* Lower bound of the step (ns) before partitioning: the busiest device does
 * at least the average of the whole work (each layer at its fastest
 * device), less 1 ns per compute op for the rounding of stage durations. */
static int64_t work_bound(const struct work *w, int K, int M, int v, enum sch_remat r)
{
    double nr = n_remat(r, M);
    double total = (M - nr) * w->f + nr * (w->fn + w->f) + M * w->b + w->u;
    double lb = total * 1e9 / K - (double)v * (4.0 * M + 1) - 1;
    return lb > 0 && isfinite(lb) ? (int64_t)floor(lb) : 0;
}

/* Lower bound of the largest device's peak (bytes) before partitioning:
 * each device holds its stages' parameters (and workspace) throughout and
 * the stash of its largest stage at that stage's backward, so the largest
 * is at least the mean over the K devices of parameters + stash / v; less
 * 2 bytes per stage for rounding. */
static int64_t mem_bound0(const struct ana_plan_spec *sp, const struct work *w, int K, int v)
{
    double k = 1 + (sp->topo->mem.allocator_overhead > 0 ? sp->topo->mem.allocator_overhead : 0);
    double ws = sp->topo->mem.workspace_bytes > 0 ? sp->topo->mem.workspace_bytes : 0;
    double S = (double)v * K;
    double lb = (w->params + S * ws + k * w->stash / v) / K - 2 * S - 2;
    return lb > 0 && lb < 9e18 ? (int64_t)floor(lb) : 0;
}

/* ---- stashes in flight, cached by schedule ---- */

/* Per (schedule, K, M, remat): the most stashes each stage holds at once
 * in its device's program order (F of a stashing micro-batch or R: one
 * more; the end of its backward: one less; sch_mem_effect with one byte
 * of stash). Partition- and batch-free, so every R and micro-batch size
 * shares it; device d's peak is at least its parameters plus, for each of
 * its stages, that count times the stage's stash (exact with one stage per
 * device). */
struct centry {
    char name[24];
    int K, M, used, rc, S;
    enum sch_remat remat;
    int *cnt;        /* [S] */
    char msg[96];
};

struct ccache {
    struct centry *e;
    size_t cap;
    int n;
};

static uint64_t ckey_hash(const char *name, int K, int M, enum sch_remat r)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    uint64_t w[] = { (uint64_t)K, (uint64_t)M, (uint64_t)r };
    for (int i = 0; i < 3; i++)
        h = (h ^ w[i]) * 1099511628211ULL;
    return h;
}

static void ccache_release(struct ccache *c)
{
    for (size_t i = 0; c->e && i < c->cap; i++)
        free(c->e[i].cnt);
    free(c->e);
}

static void centry_fill(struct centry *e)
{
    struct sch_schedule *s = NULL;
    ps_error_clear();
    if ((e->rc = sch_schedule_build(e->name, e->K, e->M, e->remat, &s)) < 0)
        goto out;
    e->S = s->n_stages;
    int *cur = calloc((size_t)e->S * 2, sizeof *cur);
    if (!cur) {
        e->rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    e->cnt = cur + e->S;
    struct sch_stage_mem one = { 0, 0, 1, 0 };
    for (int d = 0; d < s->n_devices; d++)
        for (int i = 0; i < s->n_ops[d]; i++) {
            const struct sch_op *op = &s->ops[d][i];
            if (!sch_op_is_compute(op->kind) || op->stage < 0)
                continue;
            int64_t a, z;
            sch_mem_effect(s, op, &one, &a, &z);
            int st = op->stage;
            cur[st] += (int)a;
            e->cnt[st] = cur[st] > e->cnt[st] ? cur[st] : e->cnt[st];
            cur[st] += (int)z;
            e->cnt[st] = cur[st] > e->cnt[st] ? cur[st] : e->cnt[st];
        }
    /* keep cnt, drop cur: move the counts to the front */
    memmove(cur, e->cnt, sizeof *cur * (size_t)e->S);
    e->cnt = cur;
out:
    if (e->rc < 0)
        snprintf(e->msg, sizeof e->msg, "%s", ps_errmsg());
    sch_schedule_free(s);
}

static int ccache_get(struct ccache *c, const struct ana_plan_cfg *g, const struct centry **out)
{
    if ((size_t)(c->n + 1) * 2 > c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 256;
        struct centry *ne = calloc(ncap, sizeof *ne);
        if (!ne)
            return ps_error(PS_ENOMEM, "out of memory");
        for (size_t i = 0; i < c->cap; i++)
            if (c->e[i].used) {
                size_t j = ckey_hash(c->e[i].name, c->e[i].K, c->e[i].M, c->e[i].remat) &
                           (ncap - 1);
                while (ne[j].used)
                    j = (j + 1) & (ncap - 1);
                ne[j] = c->e[i];
            }
        free(c->e);
        c->e = ne;
        c->cap = ncap;
    }
    size_t j = ckey_hash(g->schedule, g->K, g->M, g->remat) & (c->cap - 1);
    while (c->e[j].used && !(c->e[j].K == g->K && c->e[j].M == g->M &&
                             c->e[j].remat == g->remat && !strcmp(c->e[j].name, g->schedule)))
        j = (j + 1) & (c->cap - 1);
    struct centry *e = &c->e[j];
    if (!e->used) {
        e->used = 1;
        snprintf(e->name, sizeof e->name, "%s", g->schedule);
        e->K = g->K;
        e->M = g->M;
        e->remat = g->remat;
        c->n++;
        centry_fill(e);
    }
    *out = e;
    return 0;
}

/* The stash-count bound of g on e's partition: the largest device need in
 * *lb; 1 when some device's need is above its capacity. */
static int count_bound(const struct ana_plan_spec *sp, const struct pentry *e,
                       const struct centry *c, int64_t *lb)
{
    int over = 0;
    *lb = 0;
    for (int d = 0; d < e->k.K; d++) {
        int64_t most = 0;
        for (int s = 0; s < c->S; s++)
            if (e->stage_device[s] == d) {
                int64_t v = (int64_t)c->cnt[s] * e->costs->st[s].mem.stash;
                most = v > most ? v : most;
            }
        int64_t need = e->dev_static[d] + most;
        double cap = sp->cap_mode == 2 ? sp->cap : sp->topo->devices[d].memory;
        *lb = need > *lb ? need : *lb;
        over |= (double)need > cap;
    }
    return over;
}

/* ---- one simulation ---- */

/* The stash and split-backward bytes held in program order on each device's
 * compute stream, plus its parameters: a lower bound of its simulated peak
 * (buffers in flight only add to it). The largest excess over capacity
 * decides; *lb is the largest bound. Returns 1 when some device cannot fit. */
static int mem_bound(const struct sch_schedule *s, const struct sch_costs *c,
                     const double *capv, int64_t *lb)
{
    int over = 0;
    *lb = 0;
    for (int d = 0; d < s->n_devices; d++) {
        int64_t stat = 0, cur = 0, peak = 0;
        for (int st = 0; st < c->n_stages; st++)
            if (c->st[st].device == d)
                stat += c->st[st].param_bytes;
        for (int i = 0; i < s->n_ops[d]; i++) {
            const struct sch_op *op = &s->ops[d][i];
            if (!sch_op_is_compute(op->kind))
                continue;
            struct sch_stage_mem m = { 0, 0, c->st[op->stage].mem.stash,
                                       c->st[op->stage].mem.wgrad };
            int64_t a, e;
            sch_mem_effect(s, op, &m, &a, &e);
            cur += a;
            peak = cur > peak ? cur : peak;
            cur += e;
            peak = cur > peak ? cur : peak;
        }
        int64_t need = stat + peak;
        *lb = need > *lb ? need : *lb;
        over |= (double)need > capv[d];
    }
    return over;
}

/* Seconds device d spends sending per step (bytes / bandwidth + latency of
 * each transfer on its route). */
static double send_seconds(const struct ana_plan_spec *sp, const struct sch_schedule *s,
                           const struct sch_costs *c, int d)
{
    double t = 0;
    for (int st = 0; st < s->n_stages; st++) {
        if (s->stage_device[st] != d)
            continue;
        for (int dir = 0; dir < 2; dir++) {
            int peer = dir ? st + 1 : st - 1;
            if (peer < 0 || peer >= s->n_stages || s->stage_device[peer] == d)
                continue;
            struct mdl_route rt;
            if (mdl_topology_route(sp->topo, d, s->stage_device[peer], &rt) < 0 ||
                !(rt.bandwidth > 0))
                continue;
            double bytes = (double)(dir ? c->st[st].mem.out : c->st[st].mem.in);
            t += s->n_micro * (bytes / rt.bandwidth + rt.latency);
        }
    }
    return t;
}

static void cfg_error(struct ana_plan_cfg *g, const char *msg)
{
    g->status = ANA_PLAN_ERROR;
    snprintf(g->error, sizeof g->error, "%s", msg);
}

/* Builds, bounds memory and (if it may fit) simulates g on e's partition. */
struct prune;
static int keep(const struct prune *pr, int single, int64_t tlb, int64_t mlb);

/* pr: NULL for brute force (no pruning, no rejection by the bounds). */
static int simulate(const struct ana_plan_spec *sp, const struct pentry *e,
                    struct ana_plan_cfg *g, const struct prune *pr, int *ran)
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
    if ((rc = sim_mem_check_run("plan", g->schedule, g->K, g->M, g->remat, g->R, 0)) < 0 ||
        (rc = sch_schedule_build(g->schedule, g->K, g->M, g->remat, &s)) < 0) {
        cfg_error(g, ps_errmsg());
        rc = rc == -PS_ENOMEM ? rc : 0;
        goto out;
    }
    if (s->n_stages != g->S || s->has_wgrad != split_backward(g->schedule) || memcmp(s->stage_device, e->stage_device,
                                      sizeof *s->stage_device * (size_t)g->S)) {
        rc = ps_error(PS_EINVAL, "plan: schedule %s places its %d stages (or splits its "
                       "backward) unlike the planner assumed", g->schedule, s->n_stages);
        goto out;
    }
    int64_t mlb;
    if (mem_bound(s, e->costs, cv, &mlb) && pr) { /* brute force: the engine judges */
        g->mem_lb = mlb > g->mem_lb ? mlb : g->mem_lb;
        g->status = ANA_PLAN_MEM_BOUND;
        goto out;
    }
    g->mem_lb = mlb > g->mem_lb ? mlb : g->mem_lb;
    if (pr && !keep(pr, g->K == 1 && g->R == 1, sch_seconds_to_time(g->lb_s), g->mem_lb))
        goto out; /* stays PRUNED: the memory walk bounds it out of the top and frontier */
    if ((rc = sch_schedule_add_allreduce(s, g->R)) < 0 ||
        (rc = sim_simulate(s, e->costs, sp->topo, 0, &eng)) < 0) {
        cfg_error(g, ps_errmsg());
        rc = rc == -PS_ENOMEM ? rc : 0;
        goto out;
    }
    *ran = 1;
    const struct sim_result *r = sim_engine_result(eng);
    g->step_ns = r->makespan;
    g->step_s = sch_time_to_seconds(r->makespan);
    g->samples_per_s = g->step_s > 0 ? (double)sp->batch / g->step_s : 0;
    g->bubble = r->bubble;
    int fits = 1;
    double sum = 0, mx = 0, comm = 0;
    for (int d = 0; d < g->K; d++) {
        if (r->peak_mem[d] > g->peak_mem || d == 0) {
            g->peak_mem = r->peak_mem[d];
            g->capacity = cv[d];
        }
        fits &= (double)r->peak_mem[d] <= cv[d];
        double busy = (double)r->busy[d];
        sum += busy;
        mx = busy > mx ? busy : mx;
        double cm = sch_time_to_seconds(r->busy_allreduce[d]) + send_seconds(sp, s, e->costs, d);
        comm = cm > comm ? cm : comm;
    }
    g->imbalance = sum > 0 ? mx / (sum / g->K) - 1 : 0;
    g->comm = g->step_s > 0 ? fmin(1, comm / g->step_s) : 0;
    g->status = fits ? ANA_PLAN_FIT : ANA_PLAN_MEM_SIM;
    if ((double)g->peak_mem >= 0.9 * g->capacity)
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
static int better(const struct ana_plan_cfg *a, const struct ana_plan_cfg *b,
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
    while (pos > 0 && better(&c[i], &c[t->idx[pos - 1]], o) < 0)
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

static const struct ana_plan_cfg *sort_cfgs;
static const int64_t *sort_lb;

static int by_bound(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (sort_lb[i] != sort_lb[j])
        return sort_lb[i] < sort_lb[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

static int enumerate(const struct ana_plan_spec *sp, struct ana_plan *p)
{
    static const enum sch_remat all_remat[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                                SCH_REMAT_ALWAYS };
    const char *const *names = sp->schedules ? sp->schedules : ana_plan_schedules;
    int nn = sp->schedules ? sp->nsched : ana_plan_nschedules;
    const enum sch_remat *rm = sp->remats ? sp->remats : all_remat;
    int nr = sp->remats ? sp->nremat : 3, L = sp->profile->n_layers, cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        for (int K = 1; K <= sp->devices && K <= L; K++)
            for (int R = 1; (int64_t)K * R <= sp->devices; R++) {
                if (sp->batch % R)
                    continue;
                long Bp = sp->batch / R;
                for (long M = 1; M <= Bp && M <= (1L << 20); M++) {
                    if (Bp % M)
                        continue;
                    for (int s = 0; s < nn; s++) {
                        if (!schedule_valid(names[s], K, (int)M, L))
                            continue;
                        for (int r = 0; r < nr; r++, n++) {
                            if (M == 1 && rm[r] == SCH_REMAT_EXCEPT_LAST && nr > 1) {
                                n--; /* = never with one micro-batch */
                                continue;
                            }
                            if (!pass)
                                continue;
                            struct ana_plan_cfg *g = &p->c[n];
                            g->K = K;
                            g->R = R;
                            g->M = (int)M;
                            g->S = layout_of(names[s]).v * K;
                            snprintf(g->schedule, sizeof g->schedule, "%s", names[s]);
                            g->remat = rm[r];
                            g->index = n;
                            g->status = ANA_PLAN_PRUNED;
                        }
                    }
                }
            }
        if (!pass) {
            if (n == 0)
                return ps_error(PS_EUSAGE, "plan: no configuration to search (devices %d, "
                                 "batch %ld, %d layers)", sp->devices, sp->batch, L);
            if (n > 50000000)
                return ps_error(PS_EUSAGE, "plan: %d configurations are too many (at most "
                                 "50 000 000); give fewer --devices, --schedules or --remat", n);
            cap = n;
            if (!(p->c = calloc((size_t)cap, sizeof *p->c)))
                return ps_error(PS_ENOMEM, "out of memory");
        }
        p->n = n;
    }
    return 0;
}

static int is_single(const struct ana_plan_cfg *g)
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
static int visit(const struct ana_plan_spec *sp, struct ana_plan *p, struct pcache *pc,
                 struct ccache *cc, const struct bounds *b, struct prune *pr, int i)
{
    struct ana_plan_cfg *g = &p->c[i];
    int single = is_single(g), rc;
    if (pr && !keep(pr, single, b->t[i], b->m[i]))
        return 0; /* stays PRUNED */
    struct layout l = layout_of(g->schedule);
    struct pkey k = { l.v, l.vee, g->K, g->M, g->remat, (double)sp->batch / g->R / g->M };
    struct pentry *e = NULL;
    if ((rc = pcache_get(sp, pc, &k, &e)) < 0)
        return rc;
    if (e->rc < 0) {
        if (e->rc == -PS_ENOMEM)
            return ps_error(PS_ENOMEM, "%s", e->msg);
        cfg_error(g, e->msg);
        return 0;
    }
    g->capped = e->capped;
    sch_partition_format(e->part, g->partition, sizeof g->partition);
    int64_t et = split_backward(g->schedule) ? e->tlb : e->tlb_plain;
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
    const struct centry *ce = NULL;
    if ((rc = ccache_get(cc, g, &ce)) < 0)
        return rc;
    if (ce->rc < 0) {
        if (ce->rc == -PS_ENOMEM)
            return ps_error(PS_ENOMEM, "%s", ce->msg);
        cfg_error(g, ce->msg);
        return 0;
    }
    if (ce->S != g->S)
        return ps_error(PS_EINVAL, "plan: schedule %s has %d stages, the planner assumed %d",
                        g->schedule, ce->S, g->S);
    int64_t clb;
    int over = count_bound(sp, e, ce, &clb);
    mlb = clb > mlb ? clb : mlb;
    g->mem_lb = mlb;
    if (pr && over) {
        g->status = ANA_PLAN_MEM_BOUND;
        return 0;
    }
    if (pr && !keep(pr, single, tlb, mlb))
        return 0;
    int ran;
    if ((rc = simulate(sp, e, g, pr, &ran)) < 0)
        return rc;
    p->simulated += ran;
    if (g->status == ANA_PLAN_FIT && pr) {
        topn_add(&pr->top, p->c, i, sp->objective);
        if (single)
            topn_add(&pr->one, p->c, i, ANA_PLAN_THROUGHPUT);
        if ((rc = stair_add(&pr->stair, g->peak_mem, g->step_ns)) < 0)
            return rc;
    }
    return 0;
}

static int search(const struct ana_plan_spec *sp, struct ana_plan *p)
{
    struct pcache pc = { 0 };
    struct ccache cc = { 0 };
    struct work *wt = NULL;
    struct prune pr = { .all = p->c, .obj = sp->objective };
    int nw = 0, cw = 0, rc = 0;
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
        const struct work *w = NULL;
        if ((rc = work_of(sp, &wt, &nw, &cw, (double)sp->batch / g->R / g->M, &w)) < 0)
            goto out;
        b.t[i] = work_bound(w, g->K, g->M, g->S / g->K, g->remat);
        b.m[i] = mem_bound0(sp, w, g->K, g->S / g->K);
        g->lb_s = sch_time_to_seconds(b.t[i]);
        g->mem_lb = b.m[i];
        if (sp->nshards > 1 && i % sp->nshards != sp->shard) {
            g->status = ANA_PLAN_NSTATUS; /* not this shard's */
            seen[i] = 1;
        }
    }
    for (int phase = 0; phase < (sp->brute_force ? 1 : 2); phase++) {
        for (int i = 0; i < p->n; i++)
            order[i] = i;
        if (!sp->brute_force) {
            sort_lb = phase || sp->objective == ANA_PLAN_MEMORY ? b.m : b.t;
            qsort(order, (size_t)p->n, sizeof *order, by_bound);
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
    pcache_release(&pc);
    ccache_release(&cc);
    free(wt);
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

static int by_memory(const void *a, const void *b)
{
    const struct ana_plan_cfg *x = &sort_cfgs[*(const int *)a], *y = &sort_cfgs[*(const int *)b];
    if (x->peak_mem != y->peak_mem)
        return x->peak_mem < y->peak_mem ? -1 : 1;
    return better(x, y, ANA_PLAN_THROUGHPUT);
}

static int by_objective_tp(const void *a, const void *b)
{
    return better(&sort_cfgs[*(const int *)a], &sort_cfgs[*(const int *)b], ANA_PLAN_THROUGHPUT);
}

static int by_objective_mem(const void *a, const void *b)
{
    return better(&sort_cfgs[*(const int *)a], &sort_cfgs[*(const int *)b], ANA_PLAN_MEMORY);
}

int ana_plan_rerank(struct ana_plan *p)
{
    free(p->rank);
    free(p->front);
    p->rank = p->front = NULL;
    p->n_rank = p->n_front = 0;
    p->baseline = -1;
    memset(p->counts, 0, sizeof p->counts);
    int *fit = malloc(sizeof *fit * (size_t)(p->n ? p->n : 1)), nf = 0;
    if (!fit)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; i < p->n; i++) {
        const struct ana_plan_cfg *g = &p->c[i];
        if (g->status < ANA_PLAN_NSTATUS)
            p->counts[g->status]++;
        if (g->status != ANA_PLAN_FIT)
            continue;
        fit[nf++] = i;
        if (is_single(g) && (p->baseline < 0 ||
                             better(g, &p->c[p->baseline], ANA_PLAN_THROUGHPUT) < 0))
            p->baseline = i;
    }
    sort_cfgs = p->c;
    qsort(fit, (size_t)nf, sizeof *fit,
          p->spec.objective == ANA_PLAN_MEMORY ? by_objective_mem : by_objective_tp);
    p->n_rank = nf < p->spec.top ? nf : p->spec.top;
    p->rank = malloc(sizeof *p->rank * (size_t)(p->n_rank ? p->n_rank : 1));
    p->front = malloc(sizeof *p->front * (size_t)(nf ? nf : 1));
    if (!p->rank || !p->front) {
        free(fit);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    memcpy(p->rank, fit, sizeof *fit * (size_t)p->n_rank);
    /* frontier: by peak memory, keep each strictly faster than all before */
    qsort(fit, (size_t)nf, sizeof *fit, by_memory);
    int64_t best = INT64_MAX;
    for (int j = 0; j < nf; j++)
        if (p->c[fit[j]].step_ns < best) {
            best = p->c[fit[j]].step_ns;
            p->front[p->n_front++] = fit[j];
        }
    free(fit);
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int ana_plan_run(const struct ana_plan_spec *sp, struct ana_plan **out)
{
    *out = NULL;
    if (sp->devices < 1 || sp->devices > sp->topo->n_devices)
        return ps_error(PS_EUSAGE, "--devices %d: topology %s has %d devices", sp->devices,
                         sp->topo->path, sp->topo->n_devices);
    if (sp->batch < 1)
        return ps_error(PS_EUSAGE, "--batch must be >= 1, got %ld", sp->batch);
    if (sp->top < 1)
        return ps_error(PS_EUSAGE, "--top must be >= 1, got %d", sp->top);
    if (sp->cap_mode == 2 && !(sp->cap > 0))
        return ps_error(PS_EUSAGE, "--mem-cap must be > 0 bytes, got %g", sp->cap);
    struct ana_plan *p = calloc(1, sizeof *p);
    if (!p)
        return ps_error(PS_ENOMEM, "out of memory");
    p->spec = *sp;
    p->baseline = -1;
    double t0 = now();
    int rc;
    if ((rc = enumerate(sp, p)) < 0 || (rc = search(sp, p)) < 0 ||
        (rc = ana_plan_rerank(p)) < 0) {
        ana_plan_free(p);
        return rc;
    }
    p->elapsed_s = now() - t0;
    *out = p;
    return 0;
}

void ana_plan_free(struct ana_plan *p)
{
    if (!p)
        return;
    free(p->c);
    free(p->rank);
    free(p->front);
    free(p);
}

double ana_plan_speedup(const struct ana_plan *p, const struct ana_plan_cfg *c)
{
    if (p->baseline < 0 || !(c->step_s > 0))
        return 0;
    return p->c[p->baseline].step_s / c->step_s;
}
