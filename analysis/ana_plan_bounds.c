/* ana_plan_bounds: stage layouts and the lower bounds of the plan search
 * (see ana_plan.h, ana_plan_int.h): the cheap bounds of the whole model's
 * work, those of the contiguous cuts, the stash-count bound, the memory walk
 * in program order, and the time spent sending. The caches of partitions
 * and stash counts that they read are in ana_plan_cache.c. */
#include "analysis/ana_plan_int.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- stage layouts: where a schedule puts its stages ---- */

struct ana_plan_layout ana_plan_layout_of(const char *name)
{
    struct ana_plan_layout l = { 1, 0 };
    if (!strcmp(name, "zb-v") || !strcmp(name, "dualpipe-v")) /* the V of two chunks */
        l = (struct ana_plan_layout){ 2, 1 };
    else if (!strncmp(name, "interleaved:", 12) || !strncmp(name, "breadth-first:", 14))
        l.v = atoi(strchr(name, ':') + 1);
    if (l.v < 1)
        l.v = 1;
    return l;
}

int ana_plan_layout_dev(struct ana_plan_layout l, int K, int s)
{
    return l.vee && s >= K ? 2 * K - 1 - s : s % K;
}

/* Whether the schedule splits backward into B and W (zero-bubble family,
 * DualPipeV). */
int ana_plan_split_backward(const char *name)
{
    return !strncmp(name, "zb-", 3) || !strcmp(name, "dualpipe-v");
}

/* Whether the schedule's conditions hold for K, M on L layers. */
int ana_plan_schedule_valid(const char *name, int K, int M, int L)
{
    struct ana_plan_layout l = ana_plan_layout_of(name);
    if ((int64_t)l.v * K > L || (int64_t)K * M * l.v > 1LL << 28)
        return 0;
    if (!strncmp(name, "interleaved:", 12) && l.v > 1 && M % K)
        return 0;
    if (!strcmp(name, "dualpipe-v") && M < 2 * K) /* its warm-up fills both chunks */
        return 0;
    return 1;
}

void ana_plan_msg_copy(char *dst, size_t n, const char *msg)
{
    size_t len = strlen(msg);
    if (len < n) {
        memcpy(dst, msg, len + 1);
        return;
    }
    static const char mid[] = " [...] ";
    size_t head = (n - sizeof mid) / 3, tail = n - sizeof mid - head;
    memcpy(dst, msg, head);
    memcpy(dst + head, mid, sizeof mid - 1);
    memcpy(dst + head + sizeof mid - 1, msg + len - tail, tail);
    dst[n - 1] = 0;
}

int ana_plan_n_remat(enum sch_remat r, int M)
{
    return r == SCH_REMAT_ALWAYS ? M : r == SCH_REMAT_EXCEPT_LAST ? M - 1 : 0;
}

/* ---- the cheap bound: the whole model's work over K devices ---- */

/* Per micro-batch size: the least time of each layer's step work over the
 * devices, summed (f, fn, b, u over layers). */

int ana_plan_work_of(const struct ana_plan_spec *sp, struct ana_plan_work **tab, int *n, int *cap,
                   double micro, const struct ana_plan_work **out)
{
    for (int i = 0; i < *n; i++)
        if ((*tab)[i].micro == micro) {
            *out = &(*tab)[i];
            return 0;
        }
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        struct ana_plan_work *w = realloc(*tab, sizeof *w * (size_t)nc);
        if (!w)
            return ps_error(PS_ENOMEM, "out of memory");
        *tab = w;
        *cap = nc;
    }
    const struct mdl_profile *p = sp->profile;
    double *lw = malloc(sizeof *lw * ANA_PLAN_LW * (size_t)p->n_layers);
    if (!lw)
        return ps_error(PS_ENOMEM, "out of memory");
    struct ana_plan_work *w = &(*tab)[(*n)++];
    memset(w, 0, sizeof *w);
    w->micro = micro;
    w->layer = lw;
    for (int l = 0; l < p->n_layers; l++) {
        double f = INFINITY, fn = INFINITY, b = INFINITY, u = INFINITY, r = INFINITY,
               br = INFINITY;
        for (int d = 0; d < sp->devices; d++) {
            const struct mdl_device *dv = &sp->topo->devices[d];
            const struct mdl_layer *ly = &p->layers[l];
            double lf = mdl_layer_seconds(dv, p->measured, ly, MDL_OP_FWD, micro);
            f = fmin(f, lf);
            fn = fmin(fn, mdl_layer_seconds(dv, p->measured, ly, MDL_OP_FWD_NOSTASH, micro));
            double lb = mdl_layer_seconds(dv, p->measured, ly, MDL_OP_BWD, micro);
            b = fmin(b, lb);
            r = fmin(r, mdl_layer_remat_seconds(p->measured, ly, MDL_OP_RECOMP, lf, micro));
            br = fmin(br, mdl_layer_remat_seconds(p->measured, ly, MDL_OP_BWD_REMAT, lb, micro));
            u = fmin(u, dv->mem_bandwidth > 0 ? 2.0 * ly->params * sp->topo->bytes_per_param /
                                                    dv->mem_bandwidth : 0);
        }
        double *x = lw + ANA_PLAN_LW * l;
        x[0] = f, x[1] = fn, x[2] = b, x[3] = r, x[4] = br, x[5] = u;
        x[6] = p->layers[l].params * sp->topo->bytes_per_param;
        x[7] = (p->layers[l].stash_bytes - p->layers[l].stash_shared_bytes) * micro;
        w->f += f;
        w->fn += fn;
        w->b += b;
        w->r += r;
        w->br += br;
        w->u += u;
        w->params += p->layers[l].params * sp->topo->bytes_per_param;
        /* shared tensors once: the fewest bytes any cut can leave (a lower
         * bound, as the memory bound below needs) */
        w->stash += (p->layers[l].stash_bytes - p->layers[l].stash_shared_bytes) * micro;
    }
    *out = w;
    return 0;
}

/* Lower bound of the step (ns) before partitioning: the busiest device does
 * at least the average of the whole work (each layer at its fastest
 * device), less 1 ns per compute op for the rounding of stage durations. */
/* A step's work (s) of M micro-batches, nr of them re-materialized, from the
 * forward, no-stash forward, backward, recompute, re-materialized backward and
 * update times of one micro-batch: the whole model's or one layer's. */
static double step_work(double M, double nr, double f, double fn, double b, double r,
                        double br, double u)
{
    return (M - nr) * (f + b) + nr * (fn + r + br) + u;
}

/* The memory policy's allocator factor on activations and its workspace per stage. */
static void mem_policy(const struct ana_plan_spec *sp, double *k, double *ws)
{
    *k = 1 + (sp->topo->mem.allocator_overhead > 0 ? sp->topo->mem.allocator_overhead : 0);
    *ws = sp->topo->mem.workspace_bytes > 0 ? sp->topo->mem.workspace_bytes : 0;
}

int64_t ana_plan_work_bound(const struct ana_plan_work *w, int K, int M, int v, enum sch_remat r)
{
    double nr = ana_plan_n_remat(r, M);
    double total = step_work(M, nr, w->f, w->fn, w->b, w->r, w->br, w->u);
    double lb = total * 1e9 / K - (double)v * (4.0 * M + 1) - 1;
    return lb > 0 && isfinite(lb) ? (int64_t)floor(lb) : 0;
}

void ana_plan_work_release(struct ana_plan_work *tab, int n)
{
    for (int i = 0; i < n; i++)
        free(tab[i].layer);
    free(tab);
}

/* Whether the layers' works x[L] go into at most K contiguous stages of at
 * most t each. */
static int cut_fits(const double *x, int L, int K, double t)
{
    double run = 0;
    int parts = 1;
    for (int l = 0; l < L; l++) {
        if (x[l] > t)
            return 0;
        if (run + x[l] > t) {
            if (++parts > K)
                return 0;
            run = 0;
        }
        run += x[l];
    }
    return 1;
}

/* The least, over the contiguous cuts of x[L] into K stages, of the largest
 * stage's sum: a lower bound (the bisection's low end is infeasible, or the
 * largest layer or the mean, however few steps it takes). */
static double cut_minmax(const double *x, int L, int K)
{
    double total = 0, big = 0;
    for (int l = 0; l < L; l++) {
        total += x[l];
        big = x[l] > big ? x[l] : big;
    }
    double lo = total / K > big ? total / K : big, hi = total;
    if (!cut_fits(x, L, K, lo))
        for (int i = 0; i < 40 && hi > lo * (1 + 1e-12); i++) {
            double mid = lo + (hi - lo) / 2;
            if (cut_fits(x, L, K, mid))
                hi = mid;
            else
                lo = mid;
        }
    return lo * (1 - 1e-12);
}

/* Each stage's step work is the sum of its layers' at their fastest device
 * (rounded to ns per op: the slack of ana_plan_work_bound); its memory at
 * least its parameters, workspace and one stash (of layers whose shared
 * tensors all count once: fewer bytes than any stage keeps). */
void ana_plan_cut_bounds(const struct ana_plan_spec *sp, const struct ana_plan_work *w, int K,
                         int M, enum sch_remat r, int64_t *tlb, int64_t *mlb)
{
    int L = sp->profile->n_layers;
    double nr = ana_plan_n_remat(r, M), k, ws;
    mem_policy(sp, &k, &ws);
    double *x = malloc(sizeof *x * (size_t)L);
    *tlb = *mlb = 0;
    if (!x || L < 1 || K < 1) {
        free(x);
        return; /* no bound */
    }
    for (int l = 0; l < L; l++) {
        const double *y = w->layer + ANA_PLAN_LW * l;
        x[l] = step_work(M, nr, y[0], y[1], y[2], y[3], y[4], y[5]);
    }
    double t = cut_minmax(x, L, K) * 1e9 - (4.0 * M + 1) - 1;
    for (int l = 0; l < L; l++) {
        const double *y = w->layer + ANA_PLAN_LW * l;
        x[l] = y[6] + k * y[7];
    }
    double m = cut_minmax(x, L, K) + ws - 4;
    free(x);
    *tlb = t > 0 && isfinite(t) ? (int64_t)floor(t) : 0;
    *mlb = m > 0 && m < 9e18 ? (int64_t)floor(m) : 0;
}

/* Lower bound of the largest device's peak (bytes) before partitioning:
 * each device holds its stages' parameters (and workspace) throughout and
 * the stash of its largest stage at that stage's backward, so the largest
 * is at least the mean over the K devices of parameters + stash / v; less
 * 2 bytes per stage for rounding. */
int64_t ana_plan_mem_bound0(const struct ana_plan_spec *sp, const struct ana_plan_work *w, int K,
                            int v)
{
    double k, ws, S = (double)v * K;
    mem_policy(sp, &k, &ws);
    double lb = (w->params + S * ws + k * w->stash / v) / K - 2 * S - 2;
    return lb > 0 && lb < 9e18 ? (int64_t)floor(lb) : 0;
}

/* The stash-count bound of g on e's partition: the largest device need in
 * *lb; 1 when some device's need is above its capacity. */
int ana_plan_count_bound(const struct ana_plan_spec *sp, const struct ana_plan_pentry *e,
                       const struct ana_plan_centry *c, int64_t *lb)
{
    int over_all = 1;
    *lb = INT64_MAX;
    for (int u = 0; u < 1 + (e->ucosts != NULL); u++) { /* either cut may run: the least */
        const struct sch_costs *costs = u ? e->ucosts : e->costs;
        int over = 0;
        int64_t cut_lb = 0;
        for (int d = 0; d < e->k.K; d++) {
            int64_t most = 0, params = 0;
            for (int s = 0; s < c->S; s++)
                if (e->stage_device[s] == d) {
                    int64_t v = (int64_t)c->cnt[s] * costs->st[s].mem.stash;
                    most = v > most ? v : most;
                    params += costs->st[s].param_bytes;
                }
            int64_t need = params + most;
            double cap = sp->cap_mode == 2 ? sp->cap : sp->topo->devices[d].memory;
            cut_lb = need > cut_lb ? need : cut_lb;
            over |= (double)need > cap;
        }
        *lb = cut_lb < *lb ? cut_lb : *lb;
        over_all &= over;
    }
    return over_all;
}

/* ---- memory in program order, transfers ---- */

/* The stash and split-backward bytes held in program order on each device's
 * compute stream, plus its parameters: a lower bound of its simulated peak
 * (buffers in flight only add to it). The largest excess over capacity
 * decides; *lb is the largest bound. Returns 1 when some device cannot fit. */
int ana_plan_mem_bound(const struct sch_schedule *s, const struct sch_costs *c,
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

/* Seconds device d spends sending per step (bytes / bandwidth of each
 * transfer on its route, a direction's transfers behind one latency; with
 * replicas, the engine's rule for the copies of a transfer,
 * mdl_route_copies), and copying its messages on its compute stream where
 * its topology says it does (mdl_topology.h "messages"). */
double ana_plan_send_seconds(const struct ana_plan_spec *sp, const struct sch_schedule *s,
                           const struct sch_costs *c, int d)
{
    double t = 0;
    int R = s->n_replicas > 1 ? s->n_replicas : 1;
    struct mdl_route *rts = R > 1 ? malloc((size_t)R * sizeof *rts) : NULL;
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
            double bytes = (double)sch_stage_wire(&c->st[st], dir);
            double occ = bytes / rt.bandwidth, lat = rt.latency;
            if (rts && mdl_route_copies(sp->topo, s->n_devices, R, d, s->stage_device[peer],
                                        bytes, rts, &occ, &lat) < 0) {
                occ = bytes / rt.bandwidth; /* no memory: replica 0's alone, an estimate */
                lat = rt.latency;
            }
            t += s->n_micro * occ + lat; /* the messages pipeline behind one latency */
        }
        const struct sch_stage_cost *sc = &c->st[st];
        t += s->n_micro *
             sch_time_to_seconds(sc->fwd_pre + sc->fwd_post + sc->bwd_pre + sc->bwd_post);
    }
    free(rts);
    return t;
}
