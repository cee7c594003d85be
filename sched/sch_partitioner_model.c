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
 *   holds all M micro-batches when the backwards begin. For stages that
 *   run at one pace it exceeds the ledger's peak by at most min(in, out)
 *   (the ledger may hold only the larger of those buffers at its peak; a
 *   recompute frees its kept input as it ends), by exactly that when every
 *   micro-batch is re-materialized. A faster
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
 * The rest of the model layer: fit checks and the capped solvers in
 * sch_partitioner_model_solve.c, the descent over a device's stages summed
 * in sch_partitioner_model_descend.c, the named strategies and the
 * messages when nothing fits in sch_partitioner_model_strategy.c; the
 * model's state in sch_partitioner_model_int.h.
 */
#include "sched/sch_partitioner_model_int.h"
#include "sched/sch_cost.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
