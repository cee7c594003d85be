/*
 * sch_zbauto — zb-auto's second phase and its costs: the improvement of a
 * zero-bubble order by local search, timed with the stage boundaries'
 * hand-off times, and the entry that orders zb-auto for a model's own
 * stage costs (sch_zb.h).
 *
 * The order. Device d (= stage d) runs 3M compute ops, F, B and W of every
 * micro-batch, each kind in micro-batch order (as every generator here
 * emits them: the channels between stages are first in, first out).
 *
 * The timing (sch_zb_seq_time): one in-order thread per device; F of stage
 * s > 0 waits for F of s - 1 plus the activation hand-off act[s - 1]; B of
 * stage s < S - 1 waits for B of s + 1 plus the gradient hand-off grad[s];
 * a re-materialized micro-batch's R runs right before its B, after its F
 * (R does not wait for the gradient, as the lists place it: before the
 * gradient's receive); W waits for its B; a device's update follows its
 * last op. Sends and receives take no device time (the engine times them
 * on the links), nor do data-parallel all-reduces. An order that
 * cannot run to the end (a device waits for an op that waits for it) has
 * no time.
 *
 * The memory limit: a device holds a micro-batch's stash from its F's
 * start to its W's end (sch_zb_peak_stashes); at most L at once.
 *
 * The search (sch_zb_improve; zb-auto's second phase, run when the
 * stage costs are known: sch_schedule_fit_costs), first improvement: for each device in
 * turn, each adjacent pair of ops of different kinds and different
 * micro-batches is swapped (which keeps each kind's micro-batch order and
 * every op after the ops of its own micro-batch that it needs on this
 * device); the swap stays when the order still fits the limit, still runs
 * and is strictly faster. Passes repeat until one improves nothing or the
 * budget of timings is spent (SCH_ZB_EVALS, scaled down for long lists so
 * the search does at most about 4e6 op replays). Deterministic: devices,
 * then positions, in order. A local optimum under single swaps, not a
 * global one: tests/test_new_schedules.c states the gap to exhaustive
 * search on tiny cases.
 *
 * Cost: a timing O(total ops) (a worklist); the search at most its budget
 * of timings (at least one), each rejected F/W swap also an O(M) peak scan.
 */
#include "base/ps_error.h"
#include "sched/sch_gen.h"
#include "sched/sch_schedule.h"
#include "sched/sch_zb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCH_ZB_EVALS 2000
#define SCH_ZB_WORK 4000000LL

enum { OF, OB, OW };

struct zop {
    unsigned char kind; /* OF, OB, OW */
    int mb;
};

struct zseq {
    int K, M;
    struct zop *op;        /* [K][3M] */
    const unsigned char *remat; /* [M] */
    sch_time *ef, *eb, *t; /* scratch: [K M], [K M], [K] */
    int *pc, *work;        /* scratch: [K] each */
    unsigned char *queued; /* scratch: [K] */
};

static sch_time at_or0(const sch_time *v, int s) { return v ? v[s] : 0; }

/* Devices run until blocked; a device that finishes an F wakes the next
 * one, a B the previous one (a worklist: O(total ops) in all). */
static sch_time seq_time(struct zseq *q, const struct sch_zb_costs *c)
{
    int K = q->K, M = q->M, n = 3 * M, top = 0;
    memset(q->ef, 0xff, sizeof *q->ef * (size_t)K * M);
    memset(q->eb, 0xff, sizeof *q->eb * (size_t)K * M);
    memset(q->t, 0, sizeof *q->t * (size_t)K);
    memset(q->pc, 0, sizeof *q->pc * (size_t)K);
    memset(q->queued, 0, (size_t)K);
    for (int d = K - 1; d >= 0; d--) {
        q->work[top++] = d;
        q->queued[d] = 1;
    }
    while (top > 0) {
        int d = q->work[--top], wake_next = 0, wake_prev = 0;
        q->queued[d] = 0;
        const struct zop *ops = q->op + (size_t)d * n;
        for (; q->pc[d] < n; q->pc[d]++) {
            const struct zop *o = &ops[q->pc[d]];
            int m = o->mb, i = d * M + m;
            sch_time at = q->t[d];
            if (o->kind == OF) {
                if (d > 0) {
                    if (q->ef[i - M] < 0)
                        break;
                    sch_time dep = q->ef[i - M] + at_or0(c->act, d - 1);
                    at = at > dep ? at : dep;
                }
                q->ef[i] = q->t[d] = at + (q->remat[m] && c->fn ? c->fn[d] : c->f[d]);
                wake_next = 1;
            } else if (o->kind == OB) {
                sch_time g = 0;
                if (d + 1 < K) {
                    if (q->eb[i + M] < 0)
                        break;
                    g = q->eb[i + M] + at_or0(c->grad, d);
                }
                /* R after the device's previous op and F, not the gradient */
                at = at > q->ef[i] ? at : q->ef[i];
                if (q->remat[m])
                    at += c->r ? c->r[d] : c->f[d];
                at = at > g ? at : g;
                q->eb[i] = q->t[d] = at + (q->remat[m] && c->br ? c->br[d] : c->b[d]);
                wake_prev = 1;
            } else {
                at = at > q->eb[i] ? at : q->eb[i];
                q->t[d] = at + (q->remat[m] && c->wr ? c->wr[d] : c->w[d]);
            }
        }
        if (wake_next && d + 1 < K && !q->queued[d + 1]) {
            q->work[top++] = d + 1;
            q->queued[d + 1] = 1;
        }
        if (wake_prev && d > 0 && !q->queued[d - 1]) {
            q->work[top++] = d - 1;
            q->queued[d - 1] = 1;
        }
    }
    sch_time span = 0;
    for (int d = 0; d < K; d++) {
        if (q->pc[d] < n)
            return -1;
        sch_time end = q->t[d] + (c->u ? c->u[d] : 0);
        span = end > span ? end : span;
    }
    return span;
}

static int dev_peak(const struct zseq *q, int d)
{
    const struct zop *ops = q->op + (size_t)d * 3 * q->M;
    int cur = 0, peak = 0;
    for (int j = 0; j < 3 * q->M; j++) {
        cur += (ops[j].kind == OF) - (ops[j].kind == OW);
        peak = cur > peak ? cur : peak;
    }
    return peak;
}

/* s's compute order as a sequence; PS_EINVAL when s is not K stages on K
 * devices with split backward and each kind in micro-batch order. */
static int seq_of(const struct sch_schedule *s, struct zseq *q)
{
    int K = s->n_devices, M = s->n_micro, n = 3 * M;
    if (s->n_stages != K || !s->has_wgrad)
        return ps_error(PS_EINVAL, "schedule %s: the zero-bubble search needs K stages "
                        "on K devices with a split backward", s->name);
    for (int d = 0; d < K; d++) {
        int j = 0, next[3] = { 0, 0, 0 };
        if (s->stage_device[d] != d)
            return ps_error(PS_EINVAL, "schedule %s: stage %d is not on device %d", s->name,
                            d, d);
        for (int i = 0; i < s->n_ops[d]; i++) {
            const struct sch_op *op = &s->ops[d][i];
            int k = op->kind == SCH_OP_FWD ? OF : op->kind == SCH_OP_BWD ? OB
                  : op->kind == SCH_OP_WGRAD ? OW : -1;
            if (k < 0)
                continue;
            if (j >= n || op->mb != next[k]++)
                return ps_error(PS_EINVAL, "schedule %s: device %d's ops are not each "
                                "kind in micro-batch order", s->name, d);
            q->op[(size_t)d * n + j++] = (struct zop){ (unsigned char)k, op->mb };
        }
        if (j != n)
            return ps_error(PS_EINVAL, "schedule %s: device %d has %d compute ops, not %d",
                            s->name, d, j, n);
    }
    return 0;
}

/* The lists of q: F, B, W with their transfers and R as the generators
 * place them, the updates last. */
static int lists_of(const struct zseq *q, const char *name, enum sch_remat remat,
                    struct sch_schedule **out)
{
    struct sch_schedule *s;
    int rc = sch_gen_new(name, q->K, q->K, q->M, remat, &s);
    if (rc < 0)
        return rc;
    s->has_wgrad = 1;
    for (int d = 0; d < q->K && rc == 0; d++) {
        const struct zop *ops = q->op + (size_t)d * 3 * q->M;
        for (int j = 0; j < 3 * q->M && rc == 0; j++)
            rc = ops[j].kind == OF   ? sch_gen_push_fwd(s, d, ops[j].mb)
               : ops[j].kind == OB ? sch_gen_push_bwd(s, d, ops[j].mb)
                                   : sch_gen_push_wgrad(s, d, ops[j].mb);
        if (rc == 0)
            rc = sch_gen_push_updates(s, d);
    }
    return sch_gen_finish(s, rc, out);
}

static void seq_free(struct zseq *q)
{
    free(q->op);
    free(q->ef);
    free(q->eb);
    free(q->t);
    free(q->pc);
    free(q->work);
    free(q->queued);
    free((void *)q->remat);
}

static int seq_alloc(const struct sch_schedule *s, struct zseq *q)
{
    int K = s->n_devices, M = s->n_micro;
    unsigned char *rm = malloc((size_t)M);
    *q = (struct zseq){ K, M, malloc(sizeof *q->op * (size_t)K * 3 * M), rm,
                        malloc(sizeof *q->ef * (size_t)K * M),
                        malloc(sizeof *q->eb * (size_t)K * M), malloc(sizeof *q->t * (size_t)K),
                        malloc(sizeof *q->pc * (size_t)K), malloc(sizeof *q->work * (size_t)K),
                        malloc((size_t)K) };
    if (!q->op || !rm || !q->ef || !q->eb || !q->t || !q->pc || !q->work || !q->queued) {
        seq_free(q);
        return ps_error(PS_ENOMEM, "out of memory improving schedule %s", s->name);
    }
    for (int m = 0; m < M; m++)
        rm[m] = (unsigned char)sch_schedule_remat_mb(s, m);
    return 0;
}

sch_time sch_zb_seq_time(const struct sch_schedule *s, const struct sch_zb_costs *c)
{
    struct zseq q;
    sch_time t = -1;
    if (seq_alloc(s, &q) < 0)
        return -1;
    if (seq_of(s, &q) == 0)
        t = seq_time(&q, c);
    else
        ps_error_clear();
    seq_free(&q);
    return t;
}

int sch_zb_improve(const struct sch_schedule *s, const struct sch_zb_costs *c, int limit,
                   struct sch_schedule **out, sch_time *step)
{
    struct zseq q;
    int rc;
    *out = NULL;
    if ((rc = seq_alloc(s, &q)) < 0)
        return rc;
    if ((rc = seq_of(s, &q)) < 0) {
        seq_free(&q);
        return rc;
    }
    int K = q.K, n = 3 * q.M;
    sch_time best = seq_time(&q, c);
    if (best < 0) {
        seq_free(&q);
        return ps_error(PS_EINVAL, "schedule %s does not run to the end", s->name);
    }
    int64_t ops = (int64_t)K * n, evals = SCH_ZB_WORK / (ops > 0 ? ops : 1);
    evals = evals > SCH_ZB_EVALS ? SCH_ZB_EVALS : evals < 1 ? 1 : evals;
    for (int improved = 1; improved && evals > 0;) {
        improved = 0;
        for (int d = 0; d < K && evals > 0; d++) {
            struct zop *o = q.op + (size_t)d * n;
            for (int j = 0; j + 1 < n && evals > 0; j++) {
                if (o[j].kind == o[j + 1].kind || o[j].mb == o[j + 1].mb)
                    continue;
                struct zop x = o[j];
                o[j] = o[j + 1];
                o[j + 1] = x;
                int memory = (o[j].kind == OF || o[j].kind == OW) &&
                             (o[j + 1].kind == OF || o[j + 1].kind == OW);
                sch_time t = -1;
                if (!memory || dev_peak(&q, d) <= limit) {
                    t = seq_time(&q, c);
                    evals--;
                }
                if (t >= 0 && t < best) {
                    best = t;
                    improved = 1;
                } else {
                    o[j + 1] = o[j];
                    o[j] = x;
                }
            }
        }
    }
    rc = lists_of(&q, s->name, s->remat, out);
    seq_free(&q);
    if (rc == 0)
        *step = best;
    return rc;
}

int sch_zbauto_limit(const struct sch_schedule *s)
{
    int limit;
    return strncmp(s->name, "zb-auto:", 8) || sscanf(s->name + 8, "%d", &limit) != 1 ? 0
                                                                                    : limit;
}

int sch_schedule_fit_costs(struct sch_schedule **s, const struct sch_costs *c,
                           const struct mdl_topology *t)
{
    struct sch_schedule *o = *s;
    int limit = sch_zbauto_limit(o), K = o->n_devices, M = o->n_micro, rc = 0;
    if (!limit)
        return 0;
    if (c->n_stages != K)
        return ps_error(PS_EINVAL, "schedule %s: %d stage costs for %d stages", o->name,
                        c->n_stages, K);
    sch_time *v = malloc(sizeof *v * 10 * (size_t)K);
    if (!v)
        return ps_error(PS_ENOMEM, "out of memory building schedule %s", o->name);
    sch_time *f = v, *b = f + K, *w = b + K, *r = w + K, *act = r + K, *grad = act + K;
    sch_time *fn = grad + K, *u = fn + K, *br = u + K, *wr = br + K;
    for (int d = 0; d < K; d++) {
        const struct sch_stage_cost *sc = &c->st[d];
        f[d] = sc->fwd;
        b[d] = sc->bwd_input;
        w[d] = sc->bwd_weight;
        r[d] = sc->recomp;
        fn[d] = sc->fwd_nostash;
        u[d] = sc->update;
        br[d] = sc->bwd_input_remat;
        wr[d] = sc->bwd_weight_remat;
        act[d] = grad[d] = 0;
        for (int dir = 0; dir < 2 && d + 1 < K && sc->device != c->st[d + 1].device; dir++) {
            /* each way its own route: its latency and the micro-batch's bytes */
            struct mdl_route rt;
            int from = dir ? c->st[d + 1].device : sc->device,
                to = dir ? sc->device : c->st[d + 1].device;
            if (mdl_topology_route(t, from, to, &rt) == 0 && rt.bandwidth > 0)
                (dir ? grad : act)[d] =
                    sch_seconds_to_time(rt.latency +
                                        (double)sch_stage_wire(sc, 1) / rt.bandwidth);
            else
                ps_error_clear();
        }
    }
    struct sch_zb_costs zc = { .f = f, .b = b, .w = w, .r = r, .fn = fn, .u = u, .act = act,
                               .grad = grad, .br = br, .wr = wr };
    struct sch_schedule *n = NULL;
    rc = sch_schedule_zbauto_for(K, M, &zc, limit, o->remat, &n);
    free(v);
    if (rc < 0)
        return rc;
    sch_schedule_free(o);
    *s = n;
    return 0;
}
