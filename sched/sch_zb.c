/*
 * Zero-bubble schedules beyond ZB-H1 (backward split into B, the input
 * gradient, and W, the weight gradient; has_wgrad), each only an op-list
 * generator (placement helpers in sch_gen.h):
 *
 *   zb-h2     ZB-H2 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism",
 *             arXiv 2401.10241, sec. 2.2): stage s runs w = min(2(K-1-s)+1,
 *             M) warm-up forwards (the slots until the first gradient comes
 *             back), then one B and one F alternately; W is deferred: the W
 *             of micro-batch j runs once F of micro-batch j+2K-1 has been
 *             issued, and once the forwards are all issued one W follows
 *             each B, the rest filling the tail. Every stage holds at most
 *             min(2K, M) micro-batches (twice 1F1B's stage 0), and on
 *             uniform stages with T_F = T_B = T_W = T and no communication
 *             the step is (3M + K - 1) T for M >= K: the last stage's own
 *             work after the K-1 forwards that reach it, no bubble in steady
 *             state or in the tail (tests/test_new_schedules.c).
 *   zb-v      ZB-V: sch_zbv.c.
 *   zb-auto[:L]  An automatic zero-bubble scheduler in the spirit of the ZB
 *             authors' greedy (sail-sg/zero-bubble-pipeline-parallelism,
 *             zerobubble/scheduler; read, no code copied), in two phases.
 *             First: given per-stage F, B, W times and a per-device limit
 *             of L micro-batch stashes (default K, ZB-H1's memory), the
 *             greedy list scheduler below; then ZB-H1 and ZB-H2 when their
 *             peaks fit in L; the fastest list wins, so zb-auto is never
 *             slower than ZB-H1 at ZB-H1's memory. By name (no costs known)
 *             only this phase runs, at unit costs. Second, when a model's
 *             stage costs are known (predict, compare-schedules, sweep:
 *             sch_schedule_fit_costs): both phases with the stage costs and
 *             the hand-off time of each stage boundary, the first phase's
 *             lists ranked with the hand-offs, then a local search that
 *             swaps adjacent ops while the step falls (sch_zbauto.c).
 * The greedy list scheduler (stage d on device d): event-driven over op
 * ends; whenever a device is free it starts, among its ops whose inputs are
 * done, a B (it is on the critical path), else an F while the device holds
 * fewer than L stashes, else a W (a W frees the stash at its end). Lists
 * built from one feasible execution are a topological order, so one
 * in-order thread per device replays them without deadlock. Deterministic:
 * ties go to the lower device.
 *
 * Cost: zb-h2 O(total ops); the greedy O(events x devices) time (events <=
 * total ops) and O(stages x micro-batches) memory.
 */
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "sched/sch_gen.h"
#include "sched/sch_schedule.h"
#include "sched/sch_zb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ZB-H2 ---- */

static int zbh2_stage(struct sch_schedule *s, int st)
{
    int K = s->n_stages, M = s->n_micro, rc = 0;
    int w = 2 * (K - 1 - st) + 1 < M ? 2 * (K - 1 - st) + 1 : M;
    int f = 0, b = 0, wg = 0;
    while (f < w && !rc)
        rc = sch_gen_push_fwd(s, st, f++);
    while (b < M && !rc) {
        if ((rc = sch_gen_push_bwd(s, st, b++)) < 0)
            break;
        if (f < M)
            rc = sch_gen_push_fwd(s, st, f++);
        else if (wg < b)
            rc = sch_gen_push_wgrad(s, st, wg++);
        if (!rc && f - wg > 2 * K - 1 && wg < b)
            rc = sch_gen_push_wgrad(s, st, wg++);
    }
    while (wg < M && !rc)
        rc = sch_gen_push_wgrad(s, st, wg++);
    return rc ? rc : sch_gen_push_updates(s, st);
}

int sch_schedule_zbh2(int K, int M, enum sch_remat remat, struct sch_schedule **out)
{
    *out = NULL;
    struct sch_schedule *s;
    int rc = sch_gen_check_sizes(K, M, 1);
    if (rc < 0 || (rc = sch_gen_new("zb-h2", K, K, M, remat, &s)) < 0)
        return rc;
    s->has_wgrad = 1;
    for (int st = 0; st < K && !rc; st++)
        rc = zbh2_stage(s, st);
    return sch_gen_finish(s, rc, out);
}

/* ---- the greedy list scheduler ---- */

struct greedy {
    struct sch_schedule *s;       /* stage d on device d */
    const sch_time *cf, *cb, *cw; /* [S] or NULL: 1 each */
    int limit;
    int *nf, *nb, *nw;            /* [S] next micro-batch of F, B, W */
    sch_time *ef, *eb;            /* [S*M] end of F, B; -1 not started */
    sch_time *t;                  /* [K] when the device is free */
    int *held;                    /* [K] stashes held (F started, W not) */
};

static sch_time cost(const sch_time *c, int st) { return c ? c[st] : 1; }

static int ready(sch_time end, sch_time tau) { return end >= 0 && end <= tau; }

/* Starts the best op of device (and stage) d at tau; 1 if one started, 0
 * if none, <0. */
static int greedy_pick(struct greedy *g, int d, sch_time tau)
{
    struct sch_schedule *s = g->s;
    int S = s->n_stages, M = s->n_micro, rc, st = d;
    int m = g->nb[st];
    if (m < g->nf[st] && ready(g->ef[st * M + m], tau) &&
        (st + 1 == S || ready(g->eb[(st + 1) * M + m], tau))) { /* B */
        if ((rc = sch_gen_push_bwd(s, st, m)) < 0)
            return rc;
        g->eb[st * M + m] = tau + cost(g->cb, st);
        g->t[d] = g->eb[st * M + m];
        g->nb[st]++;
        return 1;
    }
    m = g->nf[st];
    if (m < M && g->held[d] < g->limit && (st == 0 || ready(g->ef[(st - 1) * M + m], tau))) {
        if ((rc = sch_gen_push_fwd(s, st, m)) < 0) /* F */
            return rc;
        g->ef[st * M + m] = tau + cost(g->cf, st);
        g->t[d] = g->ef[st * M + m];
        g->nf[st]++;
        g->held[d]++;
        return 1;
    }
    m = g->nw[st];
    if (m < g->nb[st] && ready(g->eb[st * M + m], tau)) { /* W */
        if ((rc = sch_gen_push_wgrad(s, st, m)) < 0)
            return rc;
        g->t[d] = tau + cost(g->cw, st);
        g->nw[st]++;
        g->held[d]--; /* freed at W's end; no pick before then */
        return 1;
    }
    return 0;
}

static int greedy_run(struct greedy *g)
{
    struct sch_schedule *s = g->s;
    int K = s->n_devices;
    int64_t left = 3LL * s->n_stages * s->n_micro;
    for (sch_time tau = 0; left > 0;) {
        int started;
        do { /* zero-cost ops can make more ready at the same instant */
            started = 0;
            for (int d = 0; d < K; d++) {
                if (g->t[d] > tau)
                    continue;
                int rc = greedy_pick(g, d, tau);
                if (rc < 0)
                    return rc;
                started += rc;
                left -= rc;
            }
        } while (started && left > 0);
        sch_time next = -1;
        for (int d = 0; d < K; d++)
            if (g->t[d] > tau && (next < 0 || g->t[d] < next))
                next = g->t[d];
        if (next < 0 && left > 0)
            return ps_error(PS_EINVAL, "schedule %s: %d stashes per device are too few to "
                             "run every micro-batch", s->name, g->limit);
        tau = next;
    }
    for (int d = 0; d < K; d++) {
        int rc = sch_gen_push_updates(s, d);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Fills s (K stages, stage d on device d, has_wgrad set) with the greedy's
 * lists. */
static int greedy_lists(struct sch_schedule *s, const sch_time *cf, const sch_time *cb,
                        const sch_time *cw, int limit)
{
    int S = s->n_stages, M = s->n_micro, K = s->n_devices, rc = 0;
    struct greedy g = { .s = s, .cf = cf, .cb = cb, .cw = cw, .limit = limit };
    g.nf = calloc((size_t)S, sizeof *g.nf);
    g.nb = calloc((size_t)S, sizeof *g.nb);
    g.nw = calloc((size_t)S, sizeof *g.nw);
    g.ef = malloc((size_t)S * M * sizeof *g.ef);
    g.eb = malloc((size_t)S * M * sizeof *g.eb);
    g.t = calloc((size_t)K, sizeof *g.t);
    g.held = calloc((size_t)K, sizeof *g.held);
    if (!g.nf || !g.nb || !g.nw || !g.ef || !g.eb || !g.t || !g.held) {
        rc = ps_error(PS_ENOMEM, "out of memory building schedule");
        goto out;
    }
    memset(g.ef, 0xff, (size_t)S * M * sizeof *g.ef);
    memset(g.eb, 0xff, (size_t)S * M * sizeof *g.eb);
    for (int st = 0; st < S; st++)
        if (s->stage_device[st] != st)
            PS_BUG("greedy scheduler: stage %d is not on device %d", st, st);
    rc = greedy_run(&g);
out:
    free(g.nf);
    free(g.nb);
    free(g.nw);
    free(g.ef);
    free(g.eb);
    free(g.t);
    free(g.held);
    return rc;
}

/* ---- compute-only replay, peak stashes, zb-auto ---- */

sch_time sch_zb_list_time(const struct sch_schedule *s, const sch_time *cf,
                          const sch_time *cb, const sch_time *cw)
{
    return sch_zb_list_replay(s, cf, cb, cw, NULL);
}

sch_time sch_zb_list_replay(const struct sch_schedule *s, const sch_time *cf,
                            const sch_time *cb, const sch_time *cw, sch_time *const *start)
{
    int S = s->n_stages, M = s->n_micro, K = s->n_devices;
    sch_time *ef = malloc((size_t)S * M * sizeof *ef), *eb = malloc((size_t)S * M * sizeof *eb);
    sch_time *er = malloc((size_t)S * M * sizeof *er), *t = calloc((size_t)K, sizeof *t);
    int *pc = calloc((size_t)K, sizeof *pc);
    sch_time span = -1;
    if (!ef || !eb || !er || !t || !pc)
        goto out;
    memset(ef, 0xff, (size_t)S * M * sizeof *ef);
    memset(eb, 0xff, (size_t)S * M * sizeof *eb);
    memset(er, 0xff, (size_t)S * M * sizeof *er);
    for (int progress = 1; progress;) {
        progress = 0;
        for (int d = 0; d < K; d++)
            for (; pc[d] < s->n_ops[d]; pc[d]++, progress = 1) {
                const struct sch_op *op = &s->ops[d][pc[d]];
                int st = op->stage, m = op->mb, i = st * M + m;
                sch_time at = t[d], c;
                if (start)
                    start[d][pc[d]] = -1;
                if (op->kind == SCH_OP_FWD || op->kind == SCH_OP_RECOMP) {
                    sch_time dep = op->kind == SCH_OP_RECOMP ? ef[i]
                                   : st > 0                  ? ef[i - M] : 0;
                    if (dep < 0)
                        break;
                    at = at > dep ? at : dep;
                    c = cost(cf, st);
                    (op->kind == SCH_OP_FWD ? ef : er)[i] = t[d] = at + c;
                    if (start)
                        start[d][pc[d]] = at;
                } else if (op->kind == SCH_OP_BWD) {
                    sch_time d1 = sch_schedule_remat_mb(s, m) ? er[i] : ef[i];
                    sch_time d2 = st + 1 < S ? eb[i + M] : 0;
                    if (d1 < 0 || d2 < 0)
                        break;
                    at = at > d1 ? at : d1;
                    at = at > d2 ? at : d2;
                    eb[i] = t[d] = at + cost(cb, st);
                    if (start)
                        start[d][pc[d]] = at;
                } else if (op->kind == SCH_OP_WGRAD) {
                    if (eb[i] < 0)
                        break;
                    at = at > eb[i] ? at : eb[i];
                    t[d] = at + cost(cw, st);
                    if (start)
                        start[d][pc[d]] = at;
                }
            }
    }
    span = 0;
    for (int d = 0; d < K; d++) {
        if (pc[d] < s->n_ops[d]) {
            span = -1;
            break;
        }
        span = t[d] > span ? t[d] : span;
    }
out:
    free(ef);
    free(eb);
    free(er);
    free(t);
    free(pc);
    return span;
}

int sch_zb_peak_stashes(const struct sch_schedule *s)
{
    int peak = 0, end = s->has_wgrad ? SCH_OP_WGRAD : SCH_OP_BWD;
    for (int d = 0; d < s->n_devices; d++) {
        int cur = 0;
        for (int i = 0; i < s->n_ops[d]; i++) {
            cur += (s->ops[d][i].kind == SCH_OP_FWD) - (s->ops[d][i].kind == end);
            peak = cur > peak ? cur : peak;
        }
    }
    return peak;
}

/* The greedy, ZB-H1 and ZB-H2 (when they fit), the fastest by
 * sch_zb_seq_time; improved by sch_zb_improve when improve is set. */
static int zbauto_build(int K, int M, const struct sch_zb_costs *c, int limit,
                        enum sch_remat remat, int improve, struct sch_schedule **out)
{
    *out = NULL;
    char name[32];
    int rc = sch_gen_check_sizes(K, M, 1);
    if (rc < 0)
        return rc;
    if (limit < 1)
        return ps_error(PS_EUSAGE, "--schedule zb-auto:L needs L >= 1 stashes, got %d", limit);
    snprintf(name, sizeof name, "zb-auto:%d", limit);
    struct sch_schedule *best = NULL, *better = NULL;
    sch_time best_t = -1;
    if ((rc = sch_gen_new(name, K, K, M, remat, &best)) < 0)
        return rc;
    best->has_wgrad = 1;
    if ((rc = greedy_lists(best, c->f, c->b, c->w, limit)) < 0) {
        sch_schedule_free(best);
        return rc;
    }
    if ((best_t = sch_zb_seq_time(best, c)) < 0) {
        sch_schedule_free(best);
        return ps_error(PS_ENOMEM, "out of memory timing schedule %s", name);
    }
    for (int h = 0; h < 2; h++) { /* ZB-H1, ZB-H2 when they fit */
        struct sch_schedule *o;
        rc = h ? sch_schedule_zbh2(K, M, remat, &o) : sch_schedule_zbh1(K, M, remat, &o);
        if (rc < 0) {
            sch_schedule_free(best);
            return rc;
        }
        sch_time ct = sch_zb_peak_stashes(o) <= limit ? sch_zb_seq_time(o, c) : -1;
        if (ct >= 0 && ct < best_t) {
            sch_schedule_free(best);
            best = o;
            best_t = ct;
        } else {
            sch_schedule_free(o);
        }
    }
    snprintf(best->name, sizeof best->name, "%s", name);
    if (!improve) {
        *out = best;
        return 0;
    }
    rc = sch_zb_improve(best, c, limit, &better, &best_t);
    sch_schedule_free(best);
    if (rc < 0)
        return rc;
    *out = better;
    return 0;
}

int sch_schedule_zbauto_for(int K, int M, const struct sch_zb_costs *c, int limit,
                            enum sch_remat remat, struct sch_schedule **out)
{
    return zbauto_build(K, M, c, limit, remat, 1, out);
}

int sch_schedule_zbauto(int K, int M, const sch_time *cf, const sch_time *cb,
                        const sch_time *cw, int limit, enum sch_remat remat,
                        struct sch_schedule **out)
{
    *out = NULL;
    int rc = sch_gen_check_sizes(K, M, 1);
    if (rc < 0)
        return rc;
    sch_time *one = NULL;
    if (!cf || !cb || !cw) {
        if (!(one = malloc(sizeof *one * (size_t)K)))
            return ps_error(PS_ENOMEM, "out of memory building schedule zb-auto");
        for (int d = 0; d < K; d++)
            one[d] = 1;
    }
    struct sch_zb_costs c = { .f = cf ? cf : one, .b = cb ? cb : one, .w = cw ? cw : one };
    rc = zbauto_build(K, M, &c, limit, remat, 0, out);
    free(one);
    return rc;
}

/* ---- registry entries ---- */

int sch_gen_zbh2(const char *arg, int K, int M, enum sch_remat remat,
                 struct sch_schedule **out)
{
    *out = NULL;
    if (arg)
        return ps_error(PS_EUSAGE, "--schedule zb-h2 takes no parameter");
    return sch_schedule_zbh2(K, M, remat, out);
}

int sch_gen_zbauto(const char *arg, int K, int M, enum sch_remat remat,
                   struct sch_schedule **out)
{
    *out = NULL;
    long L = K;
    int rc = arg ? sch_gen_arg(arg, "--schedule zb-auto:L", 1, 1L << 20, &L) : 0;
    return rc < 0 ? rc : sch_schedule_zbauto(K, M, NULL, NULL, NULL, (int)L, remat, out);
}
