/*
 * The activation-memory ledger rule (sch_mem_effect), shared by the
 * simulator and the validation runtime. Bytes per micro-batch of stage s:
 * in = its input, out = its output, stash = what backward keeps.
 *
 *   F start      +stash            unless re-materialized
 *   F end        +out              output buffer (s not last)
 *                -in               input consumed (s > 0, not re-materialized:
 *                                  what backward needs of it is in stash)
 *   send-act start -out            buffer handed to the link (copied into
 *                                  its buffer when the transfer starts)
 *   recv-act     +in               (s > 0) receive buffer, at arrival
 *   R start      +stash            transient activations of one recompute
 *   recv-grad    +out              (s not last) gradient of the output
 *   B end        +in               (s > 0) gradient of the input, to send
 *                +wgrad            (split backward) W's deferred inputs
 *   W end        -wgrad            (split backward) consumed
 *   backward end -stash            (B, or W when backward is split)
 *                -out              (s not last) output gradient consumed
 *                -in               (s > 0, re-materialized) kept input freed
 *   send-grad start -in            buffer handed to the link
 * In-flight data belongs to the link, not to either device: a send frees
 * its buffer when its transfer starts, the receive allocates at arrival.
 * (The CPU runtime copies on send, in list order, which is the same count.)
 * Stages on one device hand buffers over in place: the producer's +out is
 * the consumer's input, so no receive op allocates it again.
 */
#include "sched/sch_schedule.h"
#include "sched/sch_partitioner.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void sch_mem_effect(const struct sch_schedule *s, const struct sch_op *op,
                    const struct sch_stage_mem *m, int64_t *at_start, int64_t *at_end)
{
    int st = op->stage, last = st + 1 == s->n_stages;
    int remat = op->mb >= 0 && sch_schedule_remat_mb(s, op->mb);
    int bwd_end = op->kind == (s->has_wgrad ? SCH_OP_WGRAD : SCH_OP_BWD);
    int64_t a = 0, e = 0;
    switch (op->kind) {
    case SCH_OP_FWD:
        if (!remat)
            a += m->stash;
        if (!last)
            e += m->out;
        if (st > 0 && !remat)
            e -= m->in;
        break;
    case SCH_OP_SEND_ACT: a -= m->out; break;
    case SCH_OP_RECV_ACT: a += m->in; break;
    case SCH_OP_RECOMP: a += m->stash; break;
    case SCH_OP_RECV_GRAD: a += m->out; break;
    case SCH_OP_SEND_GRAD: a -= m->in; break;
    default: break;
    }
    if (op->kind == SCH_OP_BWD && st > 0)
        e += m->in;
    if (s->has_wgrad && op->kind == SCH_OP_BWD)
        e += m->wgrad;
    if (s->has_wgrad && op->kind == SCH_OP_WGRAD)
        e -= m->wgrad;
    if (bwd_end) {
        e -= m->stash;
        if (!last)
            e -= m->out;
        if (st > 0 && remat)
            e -= m->in;
    }
    *at_start = a;
    *at_end = e;
}

/* sch_part_stage_counts (sched/sch_partitioner.h): the rule above on unit
 * sizes, replayed over a schedule's op lists. */
/* The four classes' coefficients of a packed effect (16 bits each): each
 * coefficient is in [-2, 2] (sch_mem_effect adds or removes a class once or
 * twice), so 2 added to every field leaves no field negative to borrow. */
#define PACK_BIAS (2 * (1 + ((int64_t)1 << 16) + ((int64_t)1 << 32) + ((int64_t)1 << 48)))

static void unpack4(int64_t v, int64_t c[4])
{
    uint64_t u = (uint64_t)(v + PACK_BIAS);
    for (int k = 0; k < 4; k++)
        c[k] = (int64_t)((u >> (16 * k)) & 0xffff) - 2;
}

void sch_part_stage_counts(const struct sch_schedule *sc, int64_t *cnt)
{
    /* sch_mem_effect is linear in the sizes, with coefficients of at most 2 in
     * magnitude: one call with each class in its own 16 bits gives all four */
    static const struct sch_stage_mem unit = {
        .stash = 1, .in = (int64_t)1 << 16, .out = (int64_t)1 << 32,
        .wgrad = (int64_t)1 << 48 };
    int S = sc->n_stages;
    memset(cnt, 0, sizeof *cnt * 4 * (size_t)S);
    int64_t *c = calloc((size_t)S * 4, sizeof *c);
    if (!c) { /* out of memory: an upper bound of every count */
        for (int i = 0; i < 4 * S; i++)
            cnt[i] = (int64_t)sc->n_micro * 2 + 2;
        return;
    }
    for (int d = 0; d < sc->n_devices; d++) {
        const struct sch_op *ops = sc->ops[d];
        for (int i = 0; i < sc->n_ops[d]; i++) {
            const struct sch_op *op = &ops[i];
            int st = op->stage;
            if (st < 0 || st >= S)
                continue;
            int64_t *cs = c + 4 * st, *mx = cnt + 4 * st, pa, pe, a[4], e[4];
            sch_mem_effect(sc, op, &unit, &pa, &pe);
            if (!pa && !pe)
                continue; /* no class moves: no new maximum */
            unpack4(pa, a);
            unpack4(pe, e);
            for (int k = 0; k < 4; k++) {
                int64_t v = cs[k] + a[k], w = v + e[k];
                int64_t m = v > w ? v : w;
                mx[k] = m > mx[k] ? m : mx[k];
                cs[k] = w;
            }
        }
    }
    free(c);
}
