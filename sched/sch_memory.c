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
