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
 *   R start      +stash            activations of one recompute
 *   R end        -in               (s > 0) kept input consumed, as at F end:
 *                                  what backward needs of it is in stash
 *   recv-grad    +out              (s not last) gradient of the output
 *   B end        +in               (s > 0) gradient of the input, to send
 *                +wgrad            (split backward) W's deferred inputs
 *   W end        -wgrad            (split backward) consumed
 *   backward end -stash            (B, or W when backward is split)
 *                -out              (s not last) output gradient consumed
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
    case SCH_OP_RECOMP:
        a += m->stash;
        if (st > 0)
            e -= m->in;
        break;
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
    }
    *at_start = a;
    *at_end = e;
}

/* sch_part_stage_counts (sched/sch_partitioner.h): the rule above on unit
 * sizes, replayed over a schedule's op lists. sch_mem_effect depends on an
 * op through its kind, whether its stage is the first or the last, and
 * whether its micro-batch is re-materialized: the replay reads the four
 * classes' changes from a table of those, made by sch_mem_effect itself on
 * one class at a time. */
struct unit_effect {
    int8_t a[4], e[4]; /* at the start, at the end: stash, in, out, wgrad */
    int8_t any;
};

void sch_part_stage_counts(const struct sch_schedule *sc, int64_t *cnt)
{
    static const struct sch_stage_mem unit[4] = {
        { .stash = 1 }, { .in = 1 }, { .out = 1 }, { .wgrad = 1 } };
    int S = sc->n_stages;
    memset(cnt, 0, sizeof *cnt * 4 * (size_t)S);
    int64_t *c = calloc((size_t)S * 4, sizeof *c);
    if (!c) { /* out of memory: an upper bound of every count */
        for (int i = 0; i < 4 * S; i++)
            cnt[i] = (int64_t)sc->n_micro * 2 + 2;
        return;
    }
    /* [kind][first][last][remat]; a stage both first and last when S = 1. The
     * table's ops: stage 0 or S - 1 (or 1, neither, when S > 2; with S = 2 no
     * stage is neither, and that row is not read), a micro-batch re-materialized
     * or not (M - 1 is the one except_last keeps) */
    struct unit_effect tab[SCH_OP_NKINDS][2][2][2];
    memset(tab, 0, sizeof tab);
    for (int k = 0; k < SCH_OP_NKINDS; k++)
        for (int f = 0; f < 2; f++)
            for (int l = 0; l < 2; l++) {
                int st = f ? 0 : l ? S - 1 : 1;
                if (f != (st == 0) || l != (st == S - 1) || st >= S)
                    continue;
                for (int r = 0; r < 2; r++) {
                    int mb = -1; /* a micro-batch whose remat is r, if any */
                    for (int m = sc->n_micro - 1; m >= 0 && m >= sc->n_micro - 2 && mb < 0; m--)
                        if (sch_schedule_remat_mb(sc, m) == r)
                            mb = m;
                    if (mb < 0)
                        continue;
                    struct sch_op op = { .kind = (uint8_t)k, .stage = st, .mb = mb };
                    struct unit_effect *u = &tab[k][f][l][r];
                    for (int q = 0; q < 4; q++) {
                        int64_t a, e;
                        sch_mem_effect(sc, &op, &unit[q], &a, &e);
                        u->a[q] = (int8_t)a;
                        u->e[q] = (int8_t)e;
                        u->any |= a != 0 || e != 0;
                    }
                }
            }
    for (int d = 0; d < sc->n_devices; d++) {
        const struct sch_op *ops = sc->ops[d];
        for (int i = 0; i < sc->n_ops[d]; i++) {
            const struct sch_op *op = &ops[i];
            int st = op->stage;
            if (st < 0 || st >= S || op->kind >= SCH_OP_NKINDS)
                continue;
            /* U and AR (mb -1) move no class */
            int r = op->mb >= 0 && sch_schedule_remat_mb(sc, op->mb);
            const struct unit_effect *u = &tab[op->kind][st == 0][st == S - 1][r];
            if (!u->any)
                continue; /* no class moves: no new maximum */
            int64_t *cs = c + 4 * st, *mx = cnt + 4 * st;
            for (int k = 0; k < 4; k++) {
                int64_t v = cs[k] + u->a[k], w = v + u->e[k];
                int64_t m = v > w ? v : w;
                mx[k] = m > mx[k] ? m : mx[k];
                cs[k] = w;
            }
        }
    }
    free(c);
}
