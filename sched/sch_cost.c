#include "sched/sch_cost.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>

/* Saturates outside +-SCH_MAX_OP_S (NaN too): callers range-check first, so
 * no out-of-range double reaches llround. */
sch_time sch_seconds_to_time(double s)
{
    if (!(s < SCH_MAX_OP_S))
        return (sch_time)(SCH_MAX_OP_S * 1e9);
    if (s < -SCH_MAX_OP_S)
        return -(sch_time)(SCH_MAX_OP_S * 1e9);
    return (sch_time)llround(s * 1e9);
}
/* Divided, not multiplied by 1e-9 (not a double): the quotient of two exact
 * doubles is rounded once, so a time of n ns is the double nearest n x 10^-9,
 * and its shortest round-trip decimal (base/ps_util.h, ps_fmt_double) is the
 * nanosecond figure itself (67309895894 ns: 67.309895894, not the
 * 67.30989589400001 of the product). */
double sch_time_to_seconds(sch_time t) { return (double)t / 1e9; }

sch_time sch_op_seconds_to_time(double s)
{
    sch_time t = sch_seconds_to_time(s);
    return s > 0 && t < 1 ? 1 : t;
}

/* bit when s seconds is above 0 but under min_ns, so timed at that minimum */
static unsigned below_tick(double s, double min_ns, unsigned bit)
{
    return s > 0 && s < min_ns * 1e-9 ? bit : 0;
}

static int64_t bytes(double per_sample, double n)
{
    double b = per_sample * n;
    return b < SCH_MAX_BYTES ? (int64_t)llround(b) : (int64_t)SCH_MAX_BYTES;
}

/* Huge but finite inputs (1e300 FLOPs, 1e-300 FLOP/s) must not wrap the
 * int64 clock or byte counters: report them instead. */
static int check_range(const struct mdl_profile *p, const struct mdl_device *d,
                       const struct sch_partition *part, int s, double micro_batch,
                       const char *what, double v, double max, const char *unit)
{
    if (v <= max) /* false for NaN */
        return 0;
    int a = part->first[s], b = part->first[s + 1] - 1;
    return ps_error(PS_EINVAL, "%s: layers %d-%d ('%s'..'%s', stage %d on device %s): %s of "
                     "%g %s is out of range (at most %g); check their costs and sizes, the "
                     "device's figures and the micro-batch of %g samples (--batch / -M)",
                     p->path, a + 1, b + 1, p->layers[a].name, p->layers[b].name, s, d->name,
                     what, v, unit, max, micro_batch);
}

/* A stage's backward of `seconds` in ns, at least 2 when not zero (each
 * half of a split one takes time too), and its halves: the input gradient
 * the layers' own split `b_in` (split) or half, each part at least 1 ns. */
static void split_bwd(double seconds, int split, double b_in, sch_time *bwd, sch_time *input,
                      sch_time *weight)
{
    *bwd = sch_op_seconds_to_time(seconds);
    if (seconds > 0 && *bwd < 2)
        *bwd = 2;
    *input = *bwd / 2;
    if (split && *bwd >= 2) {
        sch_time bi = sch_seconds_to_time(b_in);
        *input = bi < 1 ? 1 : bi > *bwd - 1 ? *bwd - 1 : bi;
    }
    *weight = *bwd - *input;
}

/* A message of b bytes copied at s + b / bw seconds (bw 0: no per-byte
 * part) into *out, ns; PS_EINVAL past SCH_MAX_OP_S. */
static int msg_copy(const struct mdl_topology *t, const struct mdl_device *d, const char *what,
                    double s, double bw, int64_t b, sch_time *out)
{
    double x = s + (bw > 0 ? (double)b / bw : 0);
    if (!(x <= SCH_MAX_OP_S))
        return ps_error(PS_EINVAL, "topology %s: device %s: a %s of %lld bytes takes %g s, "
                         "more than %g s", t->path, d->name, what, (long long)b, x,
                         SCH_MAX_OP_S);
    *out = sch_seconds_to_time(x);
    return 0;
}

int sch_costs_messages(const struct mdl_topology *t, struct sch_costs *c)
{
    int rc = 0;
    for (int s = 0; s < c->n_stages && !rc; s++) {
        struct sch_stage_cost *sc = &c->st[s];
        const struct mdl_device *d = &t->devices[sc->device];
        /* what an earlier call added comes off first: the table ends the
         * same however often it is called */
        sch_time f0 = sc->fwd_pre + sc->fwd_post, b0 = sc->bwd_pre + sc->bwd_post;
        sc->fwd_pre = sc->fwd_post = sc->bwd_pre = sc->bwd_post = 0;
        sc->fwd -= f0;
        sc->fwd_nostash -= f0;
        sc->bwd -= b0;
        sc->bwd_remat -= b0;
        sc->bwd_input -= b0;
        sc->bwd_input_remat -= b0;
        if (!(d->msg_send_s > 0 || d->msg_send_bw > 0 || d->msg_recv_s > 0 ||
              d->msg_recv_bw > 0))
            continue;
        int prev = s > 0 && c->st[s - 1].device != sc->device;
        int next = s + 1 < c->n_stages && c->st[s + 1].device != sc->device;
        if ((prev && ((rc = msg_copy(t, d, "received activation", d->msg_recv_s,
                                     d->msg_recv_bw, sch_stage_wire(sc, 0), &sc->fwd_pre)) < 0 ||
                      (rc = msg_copy(t, d, "sent gradient", d->msg_send_s, d->msg_send_bw,
                                     sch_stage_wire(sc, 0), &sc->bwd_post)) < 0)) ||
            (next && ((rc = msg_copy(t, d, "sent activation", d->msg_send_s, d->msg_send_bw,
                                     sch_stage_wire(sc, 1), &sc->fwd_post)) < 0 ||
                      (rc = msg_copy(t, d, "received gradient", d->msg_recv_s,
                                     d->msg_recv_bw, sch_stage_wire(sc, 1), &sc->bwd_pre)) < 0)))
            break;
        sch_time f = sc->fwd_pre + sc->fwd_post, b = sc->bwd_pre + sc->bwd_post;
        sc->fwd += f;
        sc->fwd_nostash += f;
        sc->bwd += b;
        sc->bwd_remat += b;
        sc->bwd_input += b;
        sc->bwd_input_remat += b;
    }
    return rc;
}

int sch_costs_new(const struct mdl_profile *p, const struct mdl_topology *t,
                  const struct sch_partition *part, const int *stage_device,
                  double micro_batch, struct sch_costs **out)
{
    *out = NULL;
    if (!(micro_batch > 0))
        return ps_error(PS_EINVAL, "micro-batch size must be > 0, got %g", micro_batch);
    if (part->n_layers != p->n_layers)
        return ps_error(PS_EINVAL, "partition covers %d layers, profile %s has %d",
                         part->n_layers, p->path, p->n_layers);
    struct sch_costs *c = calloc(1, sizeof *c);
    if (!c || !(c->st = calloc((size_t)part->n_stages, sizeof *c->st))) {
        free(c);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    c->n_stages = part->n_stages;
    c->micro_batch = micro_batch;
    c->grad_bytes = t->mem.grad_bytes;
    for (int s = 0; s < part->n_stages; s++) {
        int dev = stage_device ? stage_device[s] : s;
        if (dev < 0 || dev >= t->n_devices) {
            sch_costs_free(c);
            return ps_error(PS_ENOFIT, "stage %d needs device %d but topology %s has %d "
                             "devices", s, dev, t->path, t->n_devices);
        }
        const struct mdl_device *d = &t->devices[dev];
        struct sch_stage_cost *sc = &c->st[s];
        double fwd = 0, bwd = 0, nostash = 0, params = 0, stash = 0, recomp = 0, bwd_r = 0;
        double b_in = 0, b_w = 0, b_half = 0, wg = 0; /* the split backward */
        double br_in = 0, br_w = 0, br_half = 0;       /* of a re-materialized one */
        int split = 0;
        for (int l = part->first[s]; l < part->first[s + 1]; l++) {
            const struct mdl_layer *ly = &p->layers[l];
            double lf = mdl_layer_seconds(d, p->measured, ly, MDL_OP_FWD, micro_batch);
            fwd += lf;
            /* R and a re-materialized backward: F and B unless the
             * calibrated profile times them apart */
            recomp += mdl_layer_remat_seconds(p->measured, ly, MDL_OP_RECOMP, lf, micro_batch);
            double lb, lw;
            int ls = mdl_layer_bwd_split(d, p->measured, ly, micro_batch, &lb, &lw);
            if (ls) {
                b_in += lb;
                b_w += lw;
                split = 1;
            } else {
                b_half += lb + lw;
            }
            bwd += lb + lw;
            if (p->measured && ly->has_bwd_remat)
                ls = mdl_layer_bwd_split_op(d, p->measured, ly, MDL_OP_BWD_REMAT, micro_batch,
                                            &lb, &lw);
            if (ls) {
                br_in += lb;
                br_w += lw;
            } else {
                br_half += lb + lw;
            }
            bwd_r += lb + lw;
            nostash += mdl_layer_seconds(d, p->measured, ly, MDL_OP_FWD_NOSTASH, micro_batch);
            params += ly->params;
            /* a tensor this layer and the previous one both keep, once per stage */
            stash += ly->stash_bytes - (l > part->first[s] ? ly->stash_shared_bytes : 0);
            if (l + 1 < part->first[s + 1]) /* W's deferred output gradients (below) */
                wg += ly->out_bytes - ly->carry_bytes;
        }
        double upd = d->mem_bandwidth > 0 ? 2.0 * params * t->bytes_per_param / d->mem_bandwidth
                                           : 0;
        const struct mdl_layer *first_l = &p->layers[part->first[s]];
        const struct mdl_layer *last_l = &p->layers[part->first[s + 1] - 1];
        double in_b = s > 0 ? first_l[-1].out_bytes * micro_batch : 0;
        /* activations as the ledger holds them: scaled by the policy's allocator
         * overhead below, so checked scaled (helper-124: 5e16 x 11 was clamped
         * to 1e17 and read as fitting a 2e17-byte device) */
        double ka = t->mem.allocator_overhead > 0 ? 1 + t->mem.allocator_overhead : 1;
        int rc;
#define RANGE(what, v, max, unit) check_range(p, d, part, s, micro_batch, what, v, max, unit)
        if ((rc = RANGE("forward time", fwd, SCH_MAX_OP_S, "s")) < 0 ||
            (rc = RANGE("backward time", bwd, SCH_MAX_OP_S, "s")) < 0 ||
            (rc = RANGE("forward time without stash", nostash, SCH_MAX_OP_S, "s")) < 0 ||
            (rc = RANGE("recompute time", recomp, SCH_MAX_OP_S, "s")) < 0 ||
            (rc = RANGE("backward time after a recompute", bwd_r, SCH_MAX_OP_S, "s")) < 0 ||
            (rc = RANGE("update time", upd, SCH_MAX_OP_S, "s")) < 0 ||
            (rc = RANGE("parameter memory", params * t->bytes_per_param + t->mem.workspace_bytes,
                        SCH_MAX_BYTES,
                        "bytes")) < 0 ||
            (rc = RANGE(ka > 1 ? "stash (x 1 + allocator_overhead)" : "stash",
                        stash * micro_batch * ka, SCH_MAX_BYTES, "bytes")) < 0 ||
            (rc = RANGE(ka > 1 ? "input activation (x 1 + allocator_overhead)"
                               : "input activation", in_b * ka, SCH_MAX_BYTES, "bytes")) < 0 ||
            (rc = RANGE(ka > 1 ? "deferred output gradients (x 1 + allocator_overhead)"
                               : "deferred output gradients", wg * micro_batch * ka,
                        SCH_MAX_BYTES, "bytes")) < 0 ||
            (rc = RANGE(ka > 1 ? "output activation (x 1 + allocator_overhead)"
                               : "output activation", last_l->out_bytes * micro_batch * ka,
                        SCH_MAX_BYTES, "bytes")) < 0) {
#undef RANGE
            sch_costs_free(c);
            return rc;
        }
        sc->device = dev;
        /* what the minimums below lengthen (the exact sums, not rounded) */
        double bin_exact = split ? b_in + b_half / 2 : bwd / 2;
        double bw_exact = split ? b_w + b_half / 2 : bwd / 2;
        double brin_exact = split ? br_in + br_half / 2 : bwd_r / 2;
        sc->short_ops = below_tick(fwd, 1, SCH_SHORT_FWD) |
                        below_tick(recomp, 1, SCH_SHORT_RECOMP) |
                        below_tick(bwd_r, 2, SCH_SHORT_BWD_REMAT) |
                        below_tick(brin_exact, 1, SCH_SHORT_BWD_REMAT_INPUT) |
                        below_tick(split ? br_w + br_half / 2 : bwd_r / 2, 1,
                                   SCH_SHORT_BWD_REMAT_WEIGHT) |
                        below_tick(nostash, 1, SCH_SHORT_FWD_NOSTASH) |
                        below_tick(bwd, 2, SCH_SHORT_BWD) |
                        below_tick(bin_exact, 1, SCH_SHORT_BWD_INPUT) |
                        below_tick(bw_exact, 1, SCH_SHORT_BWD_WEIGHT) |
                        below_tick(upd, 1, SCH_SHORT_UPDATE);
        sc->fwd = sch_op_seconds_to_time(fwd);
        sc->fwd_nostash = sch_op_seconds_to_time(nostash);
        sc->recomp = sch_op_seconds_to_time(recomp);
        split_bwd(bwd, split, b_in + b_half / 2, &sc->bwd, &sc->bwd_input, &sc->bwd_weight);
        split_bwd(bwd_r, split, br_in + br_half / 2, &sc->bwd_remat, &sc->bwd_input_remat,
                  &sc->bwd_weight_remat);
        sc->params = params;
        sc->param_bytes = bytes(params, t->bytes_per_param);
        if (t->mem.workspace_bytes > 0) /* memory_policy: a fixed workspace per stage */
            sc->param_bytes += bytes(t->mem.workspace_bytes, 1);
        sc->update = sch_op_seconds_to_time(upd);
        int first = part->first[s], last = part->first[s + 1] - 1;
        sc->mem.in = s > 0 ? bytes(p->layers[first - 1].out_bytes, micro_batch) : 0;
        sc->mem.out = s + 1 < part->n_stages ? bytes(p->layers[last].out_bytes, micro_batch) : 0;
        sc->mem.stash = bytes(stash, micro_batch);
        /* W's deferred inputs: the gradient of every layer's output but the
         * stage's last (that one is the received gradient, mem.out, held to
         * the backward's end anyway); the layers' inputs W also reads are in
         * the stash, which a split backward keeps until W. */
        sc->mem.wgrad = bytes(wg, micro_batch);
        sc->wire_in = sc->mem.in;
        sc->wire_out = sc->mem.out;
        sc->wire_set = 1;
        if (t->mem.allocator_overhead > 0) { /* memory_policy: allocator overhead */
            /* rounded once, from the bytes per sample, so that the partitioner's
             * per-layer sums rounded up bound it (helper-129: two roundings put
             * the ledger up to 7 bytes above them) */
            double nk = micro_batch * (1 + t->mem.allocator_overhead);
            sc->mem.in = s > 0 ? bytes(p->layers[first - 1].out_bytes, nk) : 0;
            sc->mem.out = s + 1 < part->n_stages ? bytes(p->layers[last].out_bytes, nk) : 0;
            sc->mem.stash = bytes(stash, nk);
            sc->mem.wgrad = bytes(wg, nk);
        }
    }
    int rc = sch_costs_messages(t, c);
    if (rc < 0) {
        sch_costs_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void sch_costs_free(struct sch_costs *c)
{
    if (!c)
        return;
    free(c->st);
    free(c);
}

sch_time sch_costs_op_time(const struct sch_costs *c, const struct sch_schedule *s,
                           const struct sch_op *op)
{
    const struct sch_stage_cost *sc = &c->st[op->stage];
    switch (op->kind) {
    case SCH_OP_FWD:
        return op->mb >= 0 && sch_schedule_remat_mb(s, op->mb) ? sc->fwd_nostash : sc->fwd;
    case SCH_OP_RECOMP: return sc->recomp;
    case SCH_OP_BWD:
    case SCH_OP_WGRAD: {
        int rm = op->mb >= 0 && sch_schedule_remat_mb(s, op->mb);
        if (op->kind == SCH_OP_WGRAD)
            return rm ? sc->bwd_weight_remat : sc->bwd_weight;
        return s->has_wgrad ? (rm ? sc->bwd_input_remat : sc->bwd_input)
                            : (rm ? sc->bwd_remat : sc->bwd);
    }
    case SCH_OP_UPDATE: return sc->update;
    default: return 0;
    }
}

int64_t sch_costs_short_ops(const struct sch_costs *c, const struct sch_schedule *s,
                            int64_t *total, unsigned *kinds)
{
    int64_t M = s->n_micro, n_remat = 0, n = 0;
    for (int m = 0; m < s->n_micro; m++)
        n_remat += sch_schedule_remat_mb(s, m);
    *total = (int64_t)s->n_stages * (2 * M + n_remat + (s->has_wgrad ? M : 0) + 1);
    *kinds = 0;
    for (int st = 0; st < s->n_stages && st < c->n_stages; st++) {
        unsigned f = c->st[st].short_ops;
        int64_t k[SCH_OP_NKINDS] = { 0 };
        k[SCH_OP_FWD] = (f & SCH_SHORT_FWD ? M - n_remat : 0) +
                        (f & SCH_SHORT_FWD_NOSTASH ? n_remat : 0);
        k[SCH_OP_RECOMP] = f & SCH_SHORT_RECOMP ? n_remat : 0;
        k[SCH_OP_BWD] =
            (f & (s->has_wgrad ? SCH_SHORT_BWD_INPUT : SCH_SHORT_BWD) ? M - n_remat : 0) +
            (f & (s->has_wgrad ? SCH_SHORT_BWD_REMAT_INPUT : SCH_SHORT_BWD_REMAT) ? n_remat : 0);
        k[SCH_OP_WGRAD] = !s->has_wgrad ? 0
                          : (f & SCH_SHORT_BWD_WEIGHT ? M - n_remat : 0) +
                                (f & SCH_SHORT_BWD_REMAT_WEIGHT ? n_remat : 0);
        k[SCH_OP_UPDATE] = f & SCH_SHORT_UPDATE ? 1 : 0;
        for (int i = 0; i < SCH_OP_NKINDS; i++)
            if (k[i]) {
                n += k[i];
                *kinds |= 1u << i;
            }
    }
    return n;
}

sch_time sch_costs_op_copy(const struct sch_costs *c, const struct sch_op *op)
{
    const struct sch_stage_cost *sc = &c->st[op->stage];
    switch (op->kind) {
    case SCH_OP_SEND_ACT: return sc->fwd_post;
    case SCH_OP_SEND_GRAD: return sc->bwd_post;
    case SCH_OP_RECV_ACT: return sc->fwd_pre;
    case SCH_OP_RECV_GRAD: return sc->bwd_pre;
    default: return 0;
    }
}

int64_t sch_costs_op_bytes(const struct sch_costs *c, const struct sch_op *op)
{
    const struct sch_stage_cost *sc = &c->st[op->stage];
    if (op->kind == SCH_OP_SEND_ACT || op->kind == SCH_OP_RECV_ACT)
        return sch_stage_wire(sc, op->kind == SCH_OP_SEND_ACT);
    if (op->kind == SCH_OP_SEND_GRAD || op->kind == SCH_OP_RECV_GRAD)
        return sch_stage_wire(sc, op->kind == SCH_OP_RECV_GRAD);
    if (op->kind == SCH_OP_ALLREDUCE) /* the stage's gradients */
        return (int64_t)llround(sch_costs_grad_bytes(c) * sc->params);
    return 0;
}
