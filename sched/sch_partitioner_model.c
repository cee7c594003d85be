/*
 * The partitioner's model layer: profile + topology + micro-batch -> the
 * integer cost arrays of sch_partitioner.h, with sch_cost.h semantics.
 *
 * Time, per training step, in ns (so a stage's cost is its busy time per
 * step and the bottleneck bounds the step from below):
 *   layer l on device d: M (fwd + bwd) + R fwd + update, where fwd/bwd come
 *   from mdl_layer_seconds at the micro-batch size, R is the number of
 *   re-materialized micro-batches (M always, M - 1 except_last, 0 never) and
 *   update = 2 params bytes_per_param / mem_bandwidth;
 *   cut j (between layers j-1 and j) on the route between the two devices
 *   (mdl_topology_route): M bytes_j / bandwidth + latency (only the bytes
 *   hold the route, so the M messages pipeline behind one latency),
 *   bytes_j = out_bytes of layer j-1 x micro-batch, charged once
 *   to each stage it bounds (the receiver of the activations, the sender of
 *   them; the gradients of the same size go back the other way).
 * Memory, the closed-form GPipe peak of the sch_memory.c ledger, bytes:
 *   params bytes_per_param + cs stash + ci in + out, with N = M - R stashes
 *   kept, cs = max(N, R > 0) (one stash is rebuilt at a time), ci = M when
 *   R > 0 (kept inputs and the receive/gradient buffer), else 1: fill-drain
 *   holds all M micro-batches when the backwards begin. It equals the
 *   ledger's peak for stages that run at one pace when every micro-batch is
 *   re-materialized, and exceeds it by at most min(in, out) otherwise (the
 *   ledger may hold only the larger of those buffers at its peak). A faster
 *   neighbour delivers buffers early and can push the real peak above it,
 *   so ana_rank checks every candidate against the simulated peak
 *   (tests/test_partitioner.c checks both claims).
 * Any other schedule (o.sched): each stage's ops replayed in list order
 * through the ledger's rule (sch_mem_effect) with unit sizes give the most
 * stashes cs_s, inputs ci_s, outputs co_s and W buffers cw_s it holds at
 * once; the stage's peak is bounded by params bytes_per_param + cs_s stash +
 * cw_s (its layers' out_bytes less carry_bytes, but the stage's last: that gradient
 * is the received one, `out`; the last stage's exactly, another's last layer
 * charged the larger of co_s out and its cw_s buffers) + ci_s in + co_s out (each
 * class at its own maximum: an upper bound of the list-order peak).
 * Each layer's activation bytes are rounded up (the ledger rounds a stage's
 * sum once). A memory policy (mdl_mempolicy.h) scales every activation
 * buffer by 1 + allocator_overhead and adds its workspace_bytes once a
 * stage, as sch_cost. 1F1B's stage s of K
 * holds min(K - s, M) stashes without re-materialization, where fill-drain
 * holds M.
 * A stash two neighbouring layers share (stash_shared_bytes) counts once
 * per stage: the prefix sums hold each layer's stash without it, and the
 * start term of a stage beginning at layer a (its `in`) adds layer a's
 * back, so a stage [a, e) holds it for a only, as sch_cost does.
 * Arrays are shared between stages whose devices (links) have equal
 * parameters, so a homogeneous chain is one set of arrays (the fast path).
 */
#include "sched/sch_partitioner.h"
#include "sched/sch_cost.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXCLASS 64

struct sch_part_model {
    const struct mdl_profile *prof;
    const struct mdl_topology *topo;
    struct sch_part_opts o;
    int *dev;                      /* [S] */
    int L, S, R;
    int n_tpre, n_x;
    int64_t *tpre[MAXCLASS];       /* per device class, [L+1] */
    int64_t *xs[MAXCLASS];         /* per link class, [L+1] */
    double xbw[MAXCLASS], xlat[MAXCLASS]; /* the route of each class */
    const struct mdl_device *xdev[MAXCLASS]; /* and its sender's message copies */
    int64_t *mpre, *min_, *mout;   /* [L+1] */
    int64_t *spre, *sin, *sout;    /* [S][L+1] per stage (o.sched), else NULL */
    struct sch_part_cost *time, *mem, *size;  /* [S] */
    struct sch_part_cost *time_own;  /* [S] each stage's own time costs, kept when the
                                      * fast path (pb.same) gives every stage stage 0's:
                                      * for sch_part_model_solve's shares; else NULL */
    double *cap;                   /* [S] capacity the search uses */
    struct sch_part_problem pb, size_pb;
};

static const char *const names[] = { "optimal", "uniform", "gpipe", "balance-by-size",
                                      "lingvo" };

int sch_part_strategy_parse(const char *s, enum sch_part_strategy *out)
{
    for (int i = 0; i < SCH_PART_NSTRATEGIES; i++)
        if (!strcmp(s, names[i])) {
            *out = (enum sch_part_strategy)i;
            return 0;
        }
    struct ps_suggest sg;
    ps_suggest_init(&sg, s);
    for (int i = 0; i < SCH_PART_NSTRATEGIES; i++)
        ps_suggest_add(&sg, names[i]);
    return ps_error(PS_EUSAGE, "--strategy: unknown strategy '%s'%s (optimal, uniform, gpipe, "
                     "balance-by-size, lingvo)", s, ps_suggest_hint(&sg));
}

const char *sch_part_strategy_name(enum sch_part_strategy s)
{
    return s >= 0 && s < SCH_PART_NSTRATEGIES ? names[s] : "?";
}

void sch_part_model_free(sch_part_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_tpre; i++)
        free(m->tpre[i]);
    for (int i = 0; i < m->n_x; i++)
        free(m->xs[i]);
    free(m->dev);
    free(m->mpre);
    free(m->min_);
    free(m->mout);
    free(m->spre);
    free(m->sin);
    free(m->sout);
    free(m->time);
    free(m->time_own);
    free(m->mem);
    free(m->size);
    free(m->cap);
    free(m);
}

/* Bounds on the prefix sums, so that the partitioners' sums of a stage's
 * cost and its two transfers cannot wrap int64 (ns, bytes): huge but finite
 * inputs are reported, not wrapped. */
#define MAX_SUM_S 2e9
#define MAX_SUM_BYTES 2e18

static int64_t bytes_of(double per_sample, double n)
{
    return (int64_t)llround(per_sample * n);
}

/* An activation buffer's bytes, rounded up: the ledger rounds each stage's
 * sum once (sch_cost), and the layers' roundings must not fall under it
 * (helper-133: 1 to 7 bytes under with fractional bytes per sample). */
static int64_t act_of(double per_sample, double n)
{
    return (int64_t)ceil(per_sample * n);
}

/* A layer's stash without what it shares with the previous layer (what it
 * adds to a stage it does not start), and the shared part (what a stage it
 * starts adds back): their sum is the whole stash's bytes. Per micro-batch
 * of n samples. */
static int64_t own_stash(const struct mdl_layer *ly, double n)
{
    return act_of(ly->stash_bytes - ly->stash_shared_bytes, n);
}

static int64_t shared_stash(const struct mdl_layer *ly, double n)
{
    return act_of(ly->stash_bytes, n) - own_stash(ly, n);
}

static int same_device(const struct mdl_device *a, const struct mdl_device *b)
{
    return a->flops == b->flops && a->eff_max == b->eff_max &&
           a->batch_half == b->batch_half && a->overhead_s == b->overhead_s &&
           a->mem_bandwidth == b->mem_bandwidth && a->msg_send_s == b->msg_send_s &&
           a->msg_send_bw == b->msg_send_bw && a->msg_recv_s == b->msg_recv_s &&
           a->msg_recv_bw == b->msg_recv_bw;
}

/* Time prefix array of device d (shared with an equal earlier device). */
static int device_pre(sch_part_model *m, int s, int64_t **out)
{
    const struct mdl_device *d = &m->topo->devices[m->dev[s]];
    for (int t = 0; t < s; t++)
        if (same_device(&m->topo->devices[m->dev[t]], d)) {
            *out = (int64_t *)m->time[t].pre;
            return 0;
        }
    if (m->n_tpre == MAXCLASS)
        return ps_error(PS_EINVAL, "partitioner: more than %d distinct device kinds",
                         MAXCLASS);
    int64_t *pre = malloc(sizeof *pre * (size_t)(m->L + 1));
    if (!pre)
        return ps_error(PS_ENOMEM, "out of memory");
    m->tpre[m->n_tpre++] = pre;
    const struct mdl_profile *p = m->prof;
    double n = m->o.micro_batch, M = m->o.n_micro, bpp = m->topo->bytes_per_param;
    pre[0] = 0;
    double total = 0;
    for (int l = 0; l < m->L; l++) {
        const struct mdl_layer *ly = &p->layers[l];
        double f = mdl_layer_seconds(d, p->measured, ly, MDL_OP_FWD, n);
        double fn = mdl_layer_seconds(d, p->measured, ly, MDL_OP_FWD_NOSTASH, n);
        double b = mdl_layer_seconds(d, p->measured, ly, MDL_OP_BWD, n);
        double u = d->mem_bandwidth > 0 ? 2.0 * ly->params * bpp / d->mem_bandwidth : 0;
        /* R re-materialized micro-batches: their forward keeps no stash, and
         * each is computed once more (r) before its backward (br); r = f and
         * br = b unless a calibrated profile times them apart */
        double r = mdl_layer_remat_seconds(p->measured, ly, MDL_OP_RECOMP, f, n);
        double br = mdl_layer_remat_seconds(p->measured, ly, MDL_OP_BWD_REMAT, b, n);
        double t = (M - m->R) * f + m->R * fn + M * b + m->R * f + u + m->R * (r - f) +
                   m->R * (br - b); /* the last two exactly 0 without the columns */
        total += t;
        /* sums of three of these (a stage and its two transfers) stay in int64 ns */
        if (!(total <= MAX_SUM_S))
            return ps_error(PS_EINVAL, "%s: layers 1-%d (up to '%s') take %g s per step on "
                             "device %s, beyond the simulator's clock (at most %g s); check "
                             "their costs and the device's figures", p->path, l + 1, ly->name,
                             total, d->name, MAX_SUM_S);
        pre[l + 1] = pre[l] + sch_seconds_to_time(t);
    }
    *out = pre;
    return 0;
}

/* Transfer array of the link between devices a and b (NULL if a == b). */
static int link_x(sch_part_model *m, int a, int b, const int64_t **out)
{
    *out = NULL;
    if (a == b)
        return 0;
    struct mdl_route rt;
    if (mdl_topology_route(m->topo, a, b, &rt) < 0)
        return ps_error(PS_EINVAL, "topology %s: no link between %s and %s", m->topo->path,
                         m->topo->devices[a].name, m->topo->devices[b].name);
    const struct mdl_link *lk = mdl_route_slowest(m->topo, &rt);
    /* the devices' own copies of the messages across the cut (mdl_topology.h
     * "messages"): each side sends one and receives one per micro-batch,
     * priced at the sender's figures (a pipeline's devices are alike) */
    const struct mdl_device *da = &m->topo->devices[a];
    for (int i = 0; i < m->n_x; i++) {
        const struct mdl_device *di = m->xdev[i];
        if (m->xlat[i] == rt.latency && m->xbw[i] == rt.bandwidth &&
            di->msg_send_s == da->msg_send_s && di->msg_send_bw == da->msg_send_bw &&
            di->msg_recv_s == da->msg_recv_s && di->msg_recv_bw == da->msg_recv_bw) {
            *out = m->xs[i];
            return 0;
        }
    }
    if (m->n_x == MAXCLASS)
        return ps_error(PS_EINVAL, "partitioner: more than %d distinct link kinds", MAXCLASS);
    int64_t *x = malloc(sizeof *x * (size_t)(m->L + 1));
    if (!x)
        return ps_error(PS_ENOMEM, "out of memory");
    m->xbw[m->n_x] = rt.bandwidth;
    m->xlat[m->n_x] = rt.latency;
    m->xdev[m->n_x] = da;
    m->xs[m->n_x++] = x;
    x[0] = 0; /* cut 0 is the model input: never a stage boundary */
    for (int j = 1; j <= m->L; j++) {
        double bd = m->prof->layers[j - 1].out_bytes * m->o.micro_batch;
        double secs = m->o.n_micro * bd / rt.bandwidth + rt.latency;
        if (!(secs <= MAX_SUM_S))
            return ps_error(PS_EINVAL, "topology %s: link %s: the transfers after layer '%s' "
                             "take %g s per step, beyond the simulator's clock (at most %g s)",
                             m->topo->path, lk->name, m->prof->layers[j - 1].name, secs,
                             MAX_SUM_S);
        int64_t bytes = bytes_of(m->prof->layers[j - 1].out_bytes, m->o.micro_batch);
        double copies = da->msg_send_s + da->msg_recv_s +
                        (da->msg_send_bw > 0 ? (double)bytes / da->msg_send_bw : 0) +
                        (da->msg_recv_bw > 0 ? (double)bytes / da->msg_recv_bw : 0);
        if (!(m->o.n_micro * copies <= MAX_SUM_S))
            return ps_error(PS_EINVAL, "topology %s: device %s: the message copies after "
                             "layer '%s' take %g s per step, beyond the simulator's clock (at "
                             "most %g s)", m->topo->path, da->name,
                             m->prof->layers[j - 1].name, m->o.n_micro * copies, MAX_SUM_S);
        x[j] = m->o.n_micro * sch_seconds_to_time((double)bytes / rt.bandwidth) +
               sch_seconds_to_time(rt.latency) +
               m->o.n_micro * (copies > 0 ? sch_seconds_to_time(copies) : 0);
    }
    *out = x;
    return 0;
}

/* The memory policy's allocator overhead (models/mdl_mempolicy.h) scales
 * every activation buffer as sch_cost does: their bytes are those of n x
 * (1 + overhead) samples. */
static double act_samples(const sch_part_model *m)
{
    double k = m->topo->mem.allocator_overhead;
    return m->o.micro_batch * (k > 0 ? 1 + k : 1);
}

/* The policy's fixed workspace, once per stage: added to every prefix past
 * 0 (the first stage's, [0, e), gets it from pre[e]) and to every later
 * stage's start term in[a] (pre[e] - pre[a] cancels it there). Both stay
 * nondecreasing and >= 0, as the solver's bounds need (helper-124: it was
 * left out, with the overhead, so the search refused cuts that fit). */
static void add_workspace(const sch_part_model *m, int64_t *pre, int64_t *in)
{
    double w = m->topo->mem.workspace_bytes;
    if (!(w > 0))
        return;
    int64_t wb = bytes_of(w, 1);
    for (int l = 1; l <= m->L; l++) {
        pre[l] += wb;
        if (l < m->L)
            in[l] += wb;
    }
}

/* Per-stage memory arrays from the schedule's counts (o.sched). */
static int build_sched_mem(sch_part_model *m)
{
    int L = m->L, S = m->S;
    double n = act_samples(m), bpp = m->topo->bytes_per_param;
    size_t cells = (size_t)S * (size_t)(L + 1);
    m->spre = malloc(sizeof *m->spre * cells);
    m->sin = malloc(sizeof *m->sin * cells);
    m->sout = malloc(sizeof *m->sout * cells);
    if (!m->spre || !m->sin || !m->sout)
        return ps_error(PS_ENOMEM, "out of memory");
    int64_t *all = NULL;
    if (!m->o.counts && !(all = malloc(sizeof *all * 4 * (size_t)S)))
        return ps_error(PS_ENOMEM, "out of memory");
    if (all)
        sch_part_stage_counts(m->o.sched, all);
    const int64_t *counts = all ? all : m->o.counts;
    for (int s = 0; s < S; s++) {
        const int64_t *cnt = counts + 4 * s;
        int64_t *pre = m->spre + (size_t)s * (L + 1), *in = m->sin + (size_t)s * (L + 1),
                *out = m->sout + (size_t)s * (L + 1);
        pre[0] = in[0] = out[0] = 0;
        double mem = 0;
        for (int l = 0; l < L; l++) {
            const struct mdl_layer *ly = &m->prof->layers[l];
            mem += ly->params * bpp + (double)cnt[0] * ly->stash_bytes * n +
                   (double)cnt[3] * (ly->out_bytes - ly->carry_bytes) * n;
            /* W's deferred output gradients: of every layer of a stage but its
             * last (sch_cost). Each layer's in pre, and a stage ending at e < L
             * has out[e] = max(its out buffers, e - 1's W buffers) - the latter
             * (>= 0, so the solver's bounds hold: within max(0, W - out) of the
             * exact sum, never above the old charge of both); the model's last
             * layer's is taken from pre[L], which only the last stage ends at,
             * so that stage's is exact (helper-125: the head's logits put 3.0
             * GiB on zb-h1's last stage, 100x the engine's peak; helper-129: a
             * shift to the next stage's start lost more than it took) */
            int64_t wg = cnt[3] * act_of(ly->out_bytes - ly->carry_bytes, n);
            double edge = (double)(cnt[1] > cnt[2] ? cnt[1] : cnt[2]) * ly->out_bytes * n;
            if (!(mem <= MAX_SUM_BYTES) || !(edge <= MAX_SUM_BYTES)) {
                free(all);
                return ps_error(PS_EINVAL, "%s: layers 1-%d (up to '%s') need %g bytes, "
                                "beyond the simulator's memory ledger (at most %g); check "
                                "their sizes", m->prof->path, l + 1, ly->name,
                                fmax(mem, edge), MAX_SUM_BYTES);
            }
            int64_t ob = act_of(ly->out_bytes, n);
            pre[l + 1] = pre[l] + bytes_of(ly->params, bpp) + cnt[0] * own_stash(ly, n) +
                         (l + 1 < L ? wg : 0);
            in[l + 1] = cnt[1] * ob;
            out[l + 1] = cnt[2] * ob > wg ? cnt[2] * ob - wg : 0;
        }
        for (int a = 1; a < L; a++) /* a stage's first layer keeps its shared part */
            in[a] += cnt[0] * shared_stash(&m->prof->layers[a], n);
        add_workspace(m, pre, in);
    }
    free(all);
    return 0;
}

static int shared_devices(const sch_part_model *m);

/* "--remat always, " unless it is the mode already (helper-128: it was suggested
 * to a run at always). */
static const char *remat_hint(const sch_part_model *m)
{
    return m->o.remat == SCH_REMAT_ALWAYS ? "" : "--remat always, ";
}

static int build(sch_part_model *m)
{
    int L = m->L, S = m->S, M = m->o.n_micro, R = m->R;
    double n = act_samples(m), bpp = m->topo->bytes_per_param;
    m->mpre = malloc(sizeof *m->mpre * (size_t)(L + 1));
    m->min_ = malloc(sizeof *m->min_ * (size_t)(L + 1));
    m->mout = malloc(sizeof *m->mout * (size_t)(L + 1));
    m->time = calloc((size_t)S, sizeof *m->time);
    m->mem = calloc((size_t)S, sizeof *m->mem);
    m->size = calloc((size_t)S, sizeof *m->size);
    m->cap = calloc((size_t)S, sizeof *m->cap);
    if (!m->mpre || !m->min_ || !m->mout || !m->time || !m->mem || !m->size || !m->cap)
        return ps_error(PS_ENOMEM, "out of memory");
    int64_t cs = (M - R) > (R > 0) ? M - R : (R > 0), ci = R > 0 ? M : 1;
    m->mpre[0] = m->min_[0] = m->mout[0] = 0;
    double mem = 0;
    for (int l = 0; l < L; l++) {
        const struct mdl_layer *ly = &m->prof->layers[l];
        mem += ly->params * bpp + (double)cs * ly->stash_bytes * n;
        if (!(mem <= MAX_SUM_BYTES) || !((double)ci * ly->out_bytes * n <= MAX_SUM_BYTES))
            return ps_error(PS_EINVAL, "%s: layers 1-%d (up to '%s') need %g bytes, beyond "
                             "the simulator's memory ledger (at most %g); check their sizes",
                             m->prof->path, l + 1, ly->name,
                             fmax(mem, (double)ci * ly->out_bytes * n), MAX_SUM_BYTES);
        int64_t ob = act_of(ly->out_bytes, n);
        m->mpre[l + 1] = m->mpre[l] + bytes_of(ly->params, bpp) + cs * own_stash(ly, n);
        m->min_[l + 1] = ci * ob;
        m->mout[l + 1] = ob;
    }
    for (int a = 1; a < L; a++) /* a stage's first layer keeps its shared part */
        m->min_[a] += cs * shared_stash(&m->prof->layers[a], n);
    add_workspace(m, m->mpre, m->min_);
    int same = 1, rc;
    int per_stage = m->o.counts || (m->o.sched && strcmp(m->o.sched->name, "gpipe") != 0);
    if (per_stage && (rc = build_sched_mem(m)) < 0)
        return rc;
    for (int s = 0; s < S; s++) {
        int64_t *pre = NULL;
        const int64_t *xin = NULL, *xout = NULL;
        if ((rc = device_pre(m, s, &pre)) < 0)
            return rc;
        if (s > 0)
            xin = m->time[s - 1].out;
        if (s + 1 < S && (rc = link_x(m, m->dev[s], m->dev[s + 1], &xout)) < 0)
            return rc;
        m->time[s] = (struct sch_part_cost){ pre, xin, xout, 0 };
        double cap = m->o.cap_mode == 2 ? m->o.cap : m->topo->devices[m->dev[s]].memory;
        m->cap[s] = cap;
        /* a cap no stage can reach is as good as none: clamped so that K of
         * these biases and a stage's bytes still add up in int64 (a 3.4e18
         * byte device times 4 stages overflowed) */
        const int64_t imax = INT64_MAX / (4 * ((int64_t)S + 1));
        int64_t icap = cap >= (double)imax ? imax : (int64_t)floor(cap);
        m->mem[s] = (struct sch_part_cost){ m->mpre, m->min_, m->mout, -icap };
        if (per_stage) {
            size_t o = (size_t)s * (L + 1);
            m->mem[s] = (struct sch_part_cost){ m->spre + o, m->sin + o, m->sout + o, -icap };
            /* stages alike only when their counts are */
            if (s > 0)
                same &= !memcmp(m->spre + o, m->spre, sizeof *m->spre * (size_t)(L + 1)) &&
                        !memcmp(m->sin + o, m->sin, sizeof *m->sin * (size_t)(L + 1)) &&
                        !memcmp(m->sout + o, m->sout, sizeof *m->sout * (size_t)(L + 1));
        }
        m->size[s] = m->mem[s];
        if (!m->o.cap_mode)
            m->size[s].bias = 0;
        /* alike: one device class, one cap, one link class on every cut */
        if (s > 0)
            same &= pre == m->time[0].pre && m->mem[s].bias == m->mem[0].bias &&
                    (s == 1 || xin == m->time[1].in);
    }
    if (same && S > 1 && m->o.cap_mode) {
        /* sch_part_model_solve(_caps) may give stages caps of their own (a device's
         * share, a limit the engine's ledger set), which the fast path cannot read:
         * their costs as they are, for it (helper-64: a limit on stage 1 of a gpipe
         * chain was dropped, and stage 0's applied to every stage) */
        if (!(m->time_own = malloc(sizeof *m->time_own * (size_t)S)))
            return ps_error(PS_ENOMEM, "out of memory");
        memcpy(m->time_own, m->time, sizeof *m->time * (size_t)S);
    }
    if (same && S > 1) {
        /* the fast path reads stage 0's costs only: give it both sides */
        const int64_t *x = m->time[1].in;
        for (int s = 0; s < S; s++)
            m->time[s].in = m->time[s].out = x;
    }
    m->pb = (struct sch_part_problem){ L, S, m->time, m->o.cap_mode ? m->mem : NULL, same };
    m->size_pb = (struct sch_part_problem){ L, S, m->size, NULL, same };
    return 0;
}

int sch_part_model_new(const struct mdl_profile *p, const struct mdl_topology *t,
                       const struct sch_part_opts *o, sch_part_model **out)
{
    *out = NULL;
    if (o->n_stages < 1)
        return ps_error(PS_EUSAGE, "number of stages must be >= 1, got %d", o->n_stages);
    if (o->n_stages > p->n_layers)
        return ps_error(PS_ENOFIT, "%d stages but model %s has only %d layers (each stage "
                         "needs at least one)", o->n_stages, p->path, p->n_layers);
    if (o->n_micro < 1 || !(o->micro_batch > 0))
        return ps_error(PS_EINVAL, "partitioner: need M >= 1 and a micro-batch > 0");
    if (o->cap_mode == 2 && !(o->cap > 0))
        return ps_error(PS_EUSAGE, "--mem-cap must be > 0 bytes, got %g", o->cap);
    sch_part_model *m = calloc(1, sizeof *m);
    if (!m)
        return ps_error(PS_ENOMEM, "out of memory");
    m->prof = p;
    m->topo = t;
    m->o = *o;
    m->L = p->n_layers;
    m->S = o->n_stages;
    m->R = o->remat == SCH_REMAT_ALWAYS ? o->n_micro
         : o->remat == SCH_REMAT_EXCEPT_LAST ? o->n_micro - 1 : 0;
    int rc = 0;
    if (!(m->dev = malloc(sizeof *m->dev * (size_t)m->S))) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err_free_model;
    }
    for (int s = 0; s < m->S; s++) {
        m->dev[s] = o->stage_device ? o->stage_device[s] : s;
        if (m->dev[s] < 0 || m->dev[s] >= t->n_devices) {
            rc = ps_error(PS_ENOFIT, "stage %d needs device %d but topology %s has %d "
                           "devices", s, m->dev[s], t->path, t->n_devices);
            goto err_free_model;
        }
    }
    m->o.stage_device = m->dev;
    if ((rc = build(m)) < 0)
        goto err_free_model;
    *out = m;
    return 0;

err_free_model:
    sch_part_model_free(m);
    return rc;
}

const struct sch_part_problem *sch_part_model_problem(const sch_part_model *m)
{
    return &m->pb;
}

void sch_part_model_stages(const sch_part_model *m, const struct sch_partition *part,
                           struct sch_part_stage_info *info)
{
    for (int s = 0; s < part->n_stages; s++) {
        int a = part->first[s], e = part->first[s + 1];
        const struct sch_part_cost *tc = &m->time[m->pb.same ? 0 : s];
        struct sch_part_cost mc = m->mem[s];
        mc.bias = 0;
        info[s].device = m->dev[s];
        info[s].first = a;
        info[s].n_layers = e - a;
        info[s].time_s = sch_time_to_seconds(sch_part_cost_eval(tc, m->L, a, e));
        info[s].compute_s = sch_time_to_seconds(tc->pre[e] - tc->pre[a]);
        info[s].mem = sch_part_cost_eval(&mc, m->L, a, e);
        info[s].capacity = m->cap[s];
    }
}

int sch_part_model_explain_nofit(const sch_part_model *m)
{
    struct sch_part_problem over = m->size_pb;
    struct sch_part_cost *c = calloc((size_t)m->S, sizeof *c);
    struct sch_part_stage_info *info = calloc((size_t)m->S, sizeof *info);
    struct sch_partition *part = NULL;
    int rc;
    if (!c || !info) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int s = 0; s < m->S; s++)
        c[s] = m->mem[s]; /* overflow = memory - capacity */
    over.time = c;
    int64_t worst_over;
    if ((rc = sch_part_solve(&over, &part, &worst_over)) < 0)
        goto out;
    int w = 0;
    sch_part_bottleneck(&over, part, &w, NULL);
    sch_part_model_stages(m, part, info);
    char spec[256], need[32], cap[32], ov[32]; /* in the unit that reads (helper-138: */
    sch_partition_format(part, spec, sizeof spec); /* "0.0009313 GiB") */
    ps_human_bytes((double)info[w].mem, need, sizeof need);
    ps_human_bytes(info[w].capacity, cap, sizeof cap);
    ps_human_bytes((double)worst_over, ov, sizeof ov);
    rc = ps_error(PS_ENOFIT, "no partition of %d layers into %d stages fits in memory: the "
                   "closest, %s, still has stage %d (layers %d-%d on %s) needing %s for "
                   "%s of memory, %s over (try %smore stages or a "
                   "smaller micro-batch)", m->L, m->S, spec, w, info[w].first,
                   info[w].first + info[w].n_layers - 1, m->topo->devices[m->dev[w]].name,
                   need, cap, ov, remat_hint(m));
out:
    sch_partition_free(part);
    free(c);
    free(info);
    return rc;
}

/* Whether some device holds more than one stage. */
static int shared_devices(const sch_part_model *m)
{
    for (int s = 0; s < m->S; s++)
        for (int t = 0; t < s; t++)
            if (m->dev[t] == m->dev[s])
                return 1;
    return 0;
}

/* Each stage's closed-form peak for part (mem[S]) and, per stage, the sum over
 * the stages of its device (sum[S]). */
static void device_sums(const sch_part_model *m, const struct sch_partition *part,
                        int64_t *mem, int64_t *sum)
{
    for (int s = 0; s < m->S; s++) {
        struct sch_part_cost mc = m->mem[s];
        mc.bias = 0;
        mem[s] = sch_part_cost_eval(&mc, m->L, part->first[s], part->first[s + 1]);
    }
    for (int s = 0; s < m->S; s++) {
        sum[s] = 0;
        for (int t = 0; t < m->S; t++)
            if (m->dev[t] == m->dev[s])
                sum[s] += mem[t];
    }
}

int sch_part_model_fits(const sch_part_model *m, const struct sch_partition *part)
{
    if (!m->o.cap_mode)
        return 1;
    int feasible = 0;
    sch_part_bottleneck(&m->pb, part, NULL, &feasible);
    if (!feasible || !shared_devices(m))
        return feasible;
    int64_t *mem = malloc(sizeof *mem * 2 * (size_t)m->S);
    if (!mem)
        return 0; /* judged by the engine, which also checks */
    int64_t *sum = mem + m->S;
    device_sums(m, part, mem, sum);
    for (int s = 0; s < m->S && feasible; s++)
        feasible = (double)sum[s] <= m->cap[s];
    free(mem);
    return feasible;
}

/* The model's problem on each stage's own time costs (what per-stage caps
 * need: the fast path reads stage 0's alone) and with memory costs mem. */
static struct sch_part_problem own_problem(const sch_part_model *m,
                                           const struct sch_part_cost *mem)
{
    struct sch_part_problem pb = m->pb;
    pb.mem = mem;
    if (m->time_own) {
        pb.time = m->time_own;
        pb.same = 0;
    }
    return pb;
}

/* The optimum with stage s under caps[s] (bytes). */
static int solve_capped_bn(const sch_part_model *m, const int64_t *caps,
                           struct sch_part_cost *c, struct sch_partition **out, int64_t *bn)
{
    for (int s = 0; s < m->S; s++) {
        c[s] = m->mem[s];
        c[s].bias = -caps[s];
    }
    struct sch_part_problem pb = own_problem(m, c);
    return sch_part_solve(&pb, out, bn);
}

static int solve_capped(const sch_part_model *m, const int64_t *caps,
                        struct sch_part_cost *c, struct sch_partition **out)
{
    int64_t bn;
    return solve_capped_bn(m, caps, c, out, &bn);
}

/* Sets the caps of device d's stages: its first stage f of cap0 (f 0: 1/n, an
 * equal share), the others (1 - f) / (n - 1) each (no more than limit's, where
 * given). */
static void set_shares(const sch_part_model *m, int d, double f, const int64_t *cap0,
                       const int64_t *limit, int64_t *caps)
{
    int n = 0, first = -1;
    for (int t = 0; t < m->S; t++)
        if (m->dev[t] == d) {
            n++;
            first = first < 0 ? t : first;
        }
    if (f == 0)
        f = 1.0 / n;
    for (int t = 0; t < m->S; t++)
        if (m->dev[t] == d) {
            caps[t] = (int64_t)floor((double)cap0[t] *
                                     (n == 1 ? 1 : t == first ? f : (1 - f) / (n - 1)));
            if (limit && limit[t] < caps[t])
                caps[t] = limit[t];
        }
}

/* Shares found device by device: for each device holding several stages, its
 * first stage's share f from 0.05 to 0.95 in 0.05, the others' caps kept,
 * the f whose cut overflows the devices least, then runs fastest; three
 * rounds, at most 400 solves. The fastest cut that fits, or -PS_ENOFIT. */
static int share_descent(const sch_part_model *m, int64_t *caps, const int64_t *cap0,
                         const int64_t *limit, struct sch_part_cost *c, int64_t *mem,
                         int64_t *sum, struct sch_partition **out)
{
    int S = m->S, solves = 0, rc;
    int64_t best_fit = INT64_MAX;
    const struct sch_part_problem tp = own_problem(m, NULL);
    for (int s = 0; s < S; s++) { /* equal shares to start */
        int n = 0;
        for (int t = 0; t < S; t++)
            n += m->dev[t] == m->dev[s];
        caps[s] = cap0[s] / n;
        if (limit && limit[s] < caps[s])
            caps[s] = limit[s];
    }
    for (int round = 0; round < 3 && solves < 400; round++)
        for (int d = 0; d < m->topo->n_devices && solves < 400; d++) {
            int n = 0;
            for (int t = 0; t < S; t++)
                n += m->dev[t] == d;
            if (n < 2)
                continue;
            double best_f = -1;
            int64_t best_over = INT64_MAX, best_bn = INT64_MAX;
            for (int k = 1; k < 20 && solves < 400; k++) {
                double f = k / 20.0;
                set_shares(m, d, f, cap0, limit, caps);
                struct sch_partition *p = NULL;
                solves++;
                if ((rc = solve_capped(m, caps, c, &p)) == -PS_ENOFIT) {
                    ps_error_clear();
                    continue;
                }
                if (rc < 0)
                    return rc;
                device_sums(m, p, mem, sum);
                int64_t over = 0;
                for (int t = 0; t < S; t++) /* each device once: at its first stage */
                    if (sum[t] > cap0[t]) {
                        int first = 1;
                        for (int u = 0; u < t; u++)
                            first &= m->dev[u] != m->dev[t];
                        over += first ? sum[t] - cap0[t] : 0;
                    }
                int64_t b = sch_part_bottleneck(&tp, p, NULL, NULL);
                if (over < best_over || (over == best_over && b < best_bn)) {
                    best_over = over;
                    best_bn = b;
                    best_f = f;
                }
                if (!over && b < best_fit) {
                    sch_partition_free(*out);
                    *out = p;
                    p = NULL;
                    best_fit = b;
                }
                sch_partition_free(p);
            }
            if (best_f > 0)
                set_shares(m, d, best_f, cap0, limit, caps);
        }
    return *out ? 0 : -PS_ENOFIT;
}

/* ---- a device's stages summed ----
 *
 * Where a device holds several stages (interleaved, V layouts) its step is
 * bounded by their summed time, not by its largest stage's, which is what
 * sch_part_solve minimizes: the per-stage optimum could leave one device
 * with two heavy stages (GPT-48 on a DGX-1, K = 8, interleaved:2: its
 * busiest device 11.33 s against gpipe's cut's 9.92 s, simulated 11.85 s
 * against 10.54 s). device_descent lowers the busiest device's sum from a
 * feasible cut by moving one cut a layer at a time while that sum falls (or
 * stays and the sum of squares of the devices' loads falls), keeping every
 * stage within the memory cap; from the given cut and each other strategy's
 * that meets it, the least. A local optimum of the device bound, not a
 * proven one; a caller simulates it (ana_partition_optimal). */

struct dwalk {
    const sch_part_model *m;
    struct sch_part_problem tp; /* each stage's own time costs */
    const int64_t *limit;       /* [S] or NULL: each stage's peak at most */
    int dev_sums;               /* a device's stages' peaks summed within its memory */
    int64_t *t, *need, *load, *dmem; /* [S] [S] [n_dev] [n_dev] */
};

static int64_t stage_time(const struct dwalk *w, int s, int a, int e)
{
    return sch_part_cost_eval(&w->tp.time[w->tp.same ? 0 : s], w->m->L, a, e);
}

static int64_t stage_need(const struct dwalk *w, int s, int a, int e)
{
    struct sch_part_cost mc = w->m->mem[s];
    mc.bias = 0;
    return sch_part_cost_eval(&mc, w->m->L, a, e);
}

static int stage_ok(const struct dwalk *w, int s, int64_t need)
{
    return (!w->m->o.cap_mode || (double)need <= w->m->cap[s]) &&
           (!w->limit || need <= w->limit[s]);
}

/* Loads and memory of part into w; 1 when it meets the constraints. */
static int dwalk_load(struct dwalk *w, const struct sch_partition *part)
{
    const sch_part_model *m = w->m;
    int ok = 1;
    memset(w->load, 0, sizeof *w->load * (size_t)m->topo->n_devices);
    memset(w->dmem, 0, sizeof *w->dmem * (size_t)m->topo->n_devices);
    for (int s = 0; s < m->S; s++) {
        int a = part->first[s], e = part->first[s + 1];
        w->t[s] = stage_time(w, s, a, e);
        w->need[s] = stage_need(w, s, a, e);
        w->load[m->dev[s]] += w->t[s];
        w->dmem[m->dev[s]] += w->need[s];
        ok &= stage_ok(w, s, w->need[s]);
    }
    for (int s = 0; s < m->S && w->dev_sums && m->o.cap_mode; s++)
        ok &= (double)w->dmem[m->dev[s]] <= m->cap[s];
    return ok;
}

static void dwalk_objective(const struct dwalk *w, int64_t *mx, long double *sq)
{
    *mx = 0;
    *sq = 0;
    for (int d = 0; d < w->m->topo->n_devices; d++) {
        *mx = w->load[d] > *mx ? w->load[d] : *mx;
        *sq += (long double)w->load[d] * (long double)w->load[d];
    }
}

/* Moves part's cuts while the objective falls; part must meet the
 * constraints (dwalk_load). */
static void dwalk_descend(struct dwalk *w, struct sch_partition *part, int64_t *mx,
                          long double *sq)
{
    const sch_part_model *m = w->m;
    dwalk_objective(w, mx, sq);
    for (int improved = 1, passes = 0; improved && passes < 4 * m->L; passes++) {
        improved = 0;
        for (int j = 1; j < m->S; j++)
            for (int delta = -1; delta <= 1; delta += 2) {
                int lo = part->first[j - 1], a = part->first[j] + delta, hi = part->first[j + 1];
                if (a <= lo || a >= hi)
                    continue;
                int dl = m->dev[j - 1], dr = m->dev[j];
                int64_t tl = stage_time(w, j - 1, lo, a), tr = stage_time(w, j, a, hi);
                int64_t nl = stage_need(w, j - 1, lo, a), nr = stage_need(w, j, a, hi);
                if (!stage_ok(w, j - 1, nl) || !stage_ok(w, j, nr))
                    continue;
                int64_t ml = w->dmem[dl] - w->need[j - 1] + nl, mr = w->dmem[dr] - w->need[j] + nr;
                if (dl == dr)
                    ml = mr = w->dmem[dl] - w->need[j - 1] - w->need[j] + nl + nr;
                if (w->dev_sums && m->o.cap_mode &&
                    ((double)ml > m->cap[j - 1] || (double)mr > m->cap[j]))
                    continue;
                int64_t old_l = w->load[dl], old_r = w->load[dr];
                w->load[dl] += tl - w->t[j - 1];
                w->load[dr] += tr - w->t[j];
                int64_t nmx;
                long double nsq;
                dwalk_objective(w, &nmx, &nsq);
                if (nmx < *mx || (nmx == *mx && nsq < *sq)) {
                    part->first[j] = a;
                    w->t[j - 1] = tl;
                    w->t[j] = tr;
                    w->need[j - 1] = nl;
                    w->need[j] = nr;
                    w->dmem[dl] = ml;
                    w->dmem[dr] = mr;
                    *mx = nmx;
                    *sq = nsq;
                    improved = 1;
                } else {
                    w->load[dl] = old_l;
                    w->load[dr] = old_r;
                }
            }
    }
}

int sch_part_model_shared(const sch_part_model *m) { return shared_devices(m); }

int sch_part_model_descend(const sch_part_model *m, struct sch_partition **part)
{
    /* each stage under the cap; a device's stages summed are left to the
     * engine, whose peak lies far under that sum (helper-82: 19.6 GiB summed,
     * 11.96 GiB simulated), so a start or a move is not refused for it */
    const int64_t *limit = NULL;
    int dev_sums = 0;
    if (!shared_devices(m))
        return 0;
    int nd = m->topo->n_devices, rc = 0;
    struct dwalk w = { m, own_problem(m, NULL), limit, dev_sums, NULL, NULL, NULL, NULL };
    int64_t *buf = malloc(sizeof *buf * (2 * (size_t)m->S + 2 * (size_t)nd));
    if (!buf)
        return ps_error(PS_ENOMEM, "out of memory");
    w.t = buf;
    w.need = buf + m->S;
    w.load = w.need + m->S;
    w.dmem = w.load + nd;
    int64_t best_mx = INT64_MAX;
    long double best_sq = 0;
    if (dwalk_load(&w, *part))
        dwalk_descend(&w, *part, &best_mx, &best_sq);
    for (int k = 0; k < SCH_PART_NSTRATEGIES; k++) {
        struct sch_partition *q = NULL;
        if (k == SCH_PART_OPTIMAL)
            continue;
        if ((rc = sch_part_strategy_run(m, (enum sch_part_strategy)k, &q)) < 0) {
            sch_partition_free(q);
            if (rc == -PS_ENOMEM)
                break;
            ps_error_clear(); /* a strategy with no cut here (lingvo's costs): skipped */
            rc = 0;
            continue;
        }
        int64_t mx;
        long double sq;
        if (dwalk_load(&w, q)) {
            dwalk_descend(&w, q, &mx, &sq);
            if (mx < best_mx || (mx == best_mx && sq < best_sq)) {
                sch_partition_free(*part);
                *part = q;
                q = NULL;
                best_mx = mx;
                best_sq = sq;
            }
        }
        sch_partition_free(q);
    }
    free(buf);
    return rc;
}

int sch_part_model_solve(const sch_part_model *m, struct sch_partition **out)
{
    return sch_part_model_solve_caps(m, NULL, out);
}

int sch_part_model_solve_stages(const sch_part_model *m, const int64_t *limit,
                                struct sch_partition **out)
{
    *out = NULL;
    struct sch_part_cost *c = malloc(sizeof *c * (size_t)m->S);
    if (!c)
        return ps_error(PS_ENOMEM, "out of memory");
    int rc = solve_capped(m, limit, c, out);
    free(c);
    return rc;
}

int sch_part_model_solve_caps(const sch_part_model *m, const int64_t *limit,
                              struct sch_partition **out)
{
    int64_t bn;
    int rc, S = m->S;
    *out = NULL;
    int64_t *mem = malloc(sizeof *mem * 5 * (size_t)S);
    struct sch_part_cost *c = malloc(sizeof *c * (size_t)S);
    if (!mem || !c) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto fail;
    }
    rc = limit ? solve_capped(m, limit, c, out) : sch_part_solve(&m->pb, out, &bn);
    if (rc < 0 || !m->o.cap_mode || !shared_devices(m) || sch_part_model_fits(m, *out))
        goto done;
    int64_t *sum = mem + S, *caps = sum + S, *cap0 = caps + S, *trial = cap0 + S;
    for (int s = 0; s < S; s++) {
        cap0[s] = -m->mem[s].bias;
        caps[s] = limit && limit[s] < cap0[s] ? limit[s] : cap0[s];
    }
    /* The first overflowing device gives up its excess from one of its stages:
     * the one whose cut then runs fastest (each tried); the caps only fall. */
    for (int round = 0; round < 64; round++) {
        device_sums(m, *out, mem, sum);
        int d = -1;
        for (int s = 0; s < S && d < 0; s++)
            if ((double)sum[s] > (double)cap0[s])
                d = s;
        if (d < 0) {
            rc = 0;
            goto done;
        }
        int64_t excess = sum[d] - cap0[d], best_bn = INT64_MAX;
        struct sch_partition *best = NULL;
        int best_s = -1;
        for (int s = 0; s < S; s++) {
            if (m->dev[s] != m->dev[d] || mem[s] <= excess)
                continue;
            memcpy(trial, caps, sizeof *caps * (size_t)S);
            trial[s] = mem[s] - excess < trial[s] ? mem[s] - excess : trial[s];
            struct sch_partition *p = NULL;
            int64_t b;
            if ((rc = solve_capped_bn(m, trial, c, &p, &b)) == 0 && b < best_bn) {
                sch_partition_free(best);
                best = p;
                best_bn = b;
                best_s = s;
            } else {
                sch_partition_free(p);
                if (rc < 0 && rc != -PS_ENOFIT) {
                    sch_partition_free(best); /* helper-61: it leaked here */
                    goto fail;
                }
            }
        }
        if (!best)
            break;
        caps[best_s] = mem[best_s] - excess < caps[best_s] ? mem[best_s] - excess
                                                           : caps[best_s];
        sch_partition_free(*out);
        *out = best;
    }
    if (*out && sch_part_model_fits(m, *out)) { /* the last round's cut, unchecked */
        rc = 0;
        goto done;
    }
    /* Then fixed shares: the first stage of each device gets f of its memory and
     * the others (1 - f) / (n - 1) each, f = 1/n (equal) and 0.1 .. 0.9; and
     * the cut that balances memory (balance-by-size). The fastest that fits
     * (its bottleneck, on the stages' own time costs). */
    sch_partition_free(*out);
    *out = NULL;
    int64_t best_bn = INT64_MAX;
    for (int f10 = 0; f10 <= 10; f10++) { /* f10 0: equal shares; 10: balance-by-size */
        struct sch_partition *p = NULL;
        int64_t b;
        if (f10 < 10) {
            for (int d = 0; d < m->topo->n_devices; d++)
                set_shares(m, d, f10 / 10.0, cap0, limit, caps);
            rc = solve_capped(m, caps, c, &p);
        } else if (!limit) { /* balance-by-size knows no limit */
            rc = sch_part_solve(&m->size_pb, &p, &b);
        } else {
            continue;
        }
        if (rc == -PS_ENOFIT) {
            ps_error_clear();
            continue;
        }
        if (rc < 0)
            goto fail; /* *out may hold an earlier share's cut */
        if (sch_part_model_fits(m, p)) {
            const struct sch_part_problem tp = own_problem(m, NULL);
            b = sch_part_bottleneck(&tp, p, NULL, NULL);
            if (b < best_bn) {
                sch_partition_free(*out);
                *out = p;
                p = NULL;
                best_bn = b;
            }
        }
        sch_partition_free(p);
    }
    if (!*out) { /* each device's share on its own: coordinate descent */
        if ((rc = share_descent(m, caps, cap0, limit, c, mem, sum, out)) < 0 &&
            rc != -PS_ENOFIT)
            goto fail;
        if (rc == -PS_ENOFIT)
            ps_error_clear();
    }
    rc = *out ? 0 : ps_error(PS_ENOFIT, "no partition fits");
    goto done;
fail:
    sch_partition_free(*out);
    *out = NULL;
done:
    free(mem);
    free(c);
    return rc;
}

/* sch_part_model_explain_nofit, or, where every stage fits its device alone
 * but no cut found fits a device holding several, that device's need. */
static int explain_device_nofit(const sch_part_model *m)
{
    struct sch_partition *part = NULL;
    int64_t bn;
    if (sch_part_solve(&m->pb, &part, &bn) < 0)
        return sch_part_model_explain_nofit(m);
    int64_t *mem = malloc(sizeof *mem * 2 * (size_t)m->S);
    if (!mem) {
        sch_partition_free(part);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    int64_t *sum = mem + m->S;
    device_sums(m, part, mem, sum);
    int w = 0;
    for (int s = 1; s < m->S; s++)
        if ((double)sum[s] - m->cap[s] > (double)sum[w] - m->cap[w])
            w = s;
    char spec[256], stages[256] = "";
    sch_partition_format(part, spec, sizeof spec);
    size_t n = 0;
    for (int s = 0; s < m->S && n < sizeof stages; s++)
        if (m->dev[s] == m->dev[w])
            n += (size_t)snprintf(stages + n, sizeof stages - n, "%s%d", n ? ", " : "", s);
    char need[32], cap[32];
    ps_human_bytes((double)sum[w], need, sizeof need);
    ps_human_bytes(m->cap[w], cap, sizeof cap);
    int rc = ps_error(PS_ENOFIT, "no partition of %d layers into %d stages fits in memory: "
                      "each stage fits its device alone, but the cut that does best, %s, has "
                      "device %s holding stages %s needing %s for %s (no share of "
                      "its memory among them that was tried fits; try %smore "
                      "devices or a smaller micro-batch)", m->L, m->S, spec,
                      m->topo->devices[m->dev[w]].name, stages, need, cap, remat_hint(m));
    free(mem);
    sch_partition_free(part);
    return rc;
}

int sch_part_strategy_run(const sch_part_model *m, enum sch_part_strategy s,
                          struct sch_partition **out)
{
    int rc;
    switch (s) {
    case SCH_PART_OPTIMAL:
        rc = sch_part_model_solve(m, out);
        if (rc == -PS_ENOFIT && m->pb.mem)
            return explain_device_nofit(m);
        return rc;
    case SCH_PART_UNIFORM: return sch_partition_uniform(m->S, m->L, out);
    case SCH_PART_GPIPE: return sch_part_min_sq_sum(&m->pb, out);
    case SCH_PART_BALANCE_SIZE: {
        int64_t bn;
        return sch_part_solve(&m->size_pb, out, &bn);
    }
    case SCH_PART_LINGVO: { /* the layers' forward cost: FLOPs per sample, or
                               a measured profile's seconds */
        double *cost = malloc((size_t)m->L * sizeof *cost);
        if (!cost)
            return ps_error(PS_ENOMEM, "out of memory");
        for (int l = 0; l < m->L; l++)
            cost[l] = m->prof->layers[l].fwd;
        rc = sch_partition_lingvo(m->S, cost, m->L, out);
        free(cost);
        return rc;
    }
    default: return ps_error(PS_EUSAGE, "unknown partition strategy %d", (int)s);
    }
}
