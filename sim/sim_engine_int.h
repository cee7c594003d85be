/*
 * sim_engine_int — private to sim/sim_engine*.c: the engine's state (streams,
 * devices, resources, the tabled op costs) and the small helpers both its
 * halves use: sim_engine_build.c builds an engine from a schedule, costs
 * and topology; sim_engine.c runs it. The event loop's helpers are inline
 * here so the running half compiles as one unit, as before the split.
 */
#ifndef SIM_ENGINE_INT_H
#define SIM_ENGINE_INT_H

#include "sim/sim_engine.h"
#include "sim/sim_evq.h"

#include <stdint.h>

/* A stream is a cursor into its device's op list: the engine keeps no
 * record per op. Its head is the first op of the stream not yet finished;
 * advancing skips the ops of the device's other streams (each op is passed
 * over once per stream, so O(ops) in all). */
struct stream {
    struct sch_op head; /* copy of ops[dev][pos], the op the loop reads most */
    int32_t pos;       /* head op in ops[dev] (n_ops[dev] when done); of a compact
                          schedule, the head's run (run_first[dev + 1] when done) */
    int32_t rep;       /* compact: the head's repetition in its run */
    int32_t left;      /* ops of the stream not finished */
    int32_t dev;
    int32_t row;       /* the head's row of info (its stage and kind's costs) */
    uint8_t busy;
    uint8_t j;         /* compact: the head's place in its run's pattern */
    uint8_t mask;      /* compact: the places of the stream's kinds in it */
    int32_t end;       /* pos when done: n_ops[dev], or run_first[dev + 1] */
    sch_time t_start;  /* start of the running op (transfer start for sends) */
};

/* The streams the engine runs per device: compute (receives included, see
 * run_stream) and send; two per device, so a device is two cache lines. */
enum { NRUN = 2 };

/* One device's streams and tallies together: an event touches one or two
 * cache lines of its device, not one per array. */
struct device {
    struct stream st[NRUN];
    int64_t cur_mem, peak_act;
    sch_time busy, busy_recomp; /* U and AR time go straight to the result */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct device) == 128, "a device is two cache lines");

struct resource {      /* a link direction, or a whole shared link */
    int32_t *q;        /* FIFO of send streams waiting for it (ring) */
    int head, len, cap;
    int busy;
};

/* What an op of a given stage and kind costs: its duration (transfer time for
 * sends), its link resource (sends), and its ledger effects, indexed by
 * whether its micro-batch is re-materialized. Tabled once so the event loop
 * does no cost or ledger arithmetic. */
struct opinfo {
    sch_time dur[2];   /* by re-materialized or not (a re-materialized F keeps
                          no stash, which can be measurably faster); for a
                          transfer the time its bytes hold the route */
    sch_time lat;      /* transfers: delivery delay after the bytes crossed */
    sch_time pre, post; /* F, B: the device's message copies before and after
                           the op (sch_stage_cost), inside dur, not busy */
    int32_t res;       /* first of n_res resource indices in hold[], or -1 */
    int32_t n_res;
    int32_t lane[2];   /* event-queue lane: one per distinct duration */
    int32_t dlane;     /* lane of the delivery event (lat) */
    int64_t at_start[2], at_end[2];
};

/* The cross-stream dependencies of pipeline lists (sch_schedule_deps) are
 * only these: a send waits for the F or B that made its data (same device,
 * compute stream), a receive for the delivery of its send (other device).
 * Both are bits indexed by the transfer, x = 2 (stage M + mb) + dir, with
 * the sending stage's (stage, mb) and dir 0 for activations, 1 for
 * gradients: src_done when the data's op finished, delivered when the
 * bytes reached the receiver. Every other dependency is on the same
 * stream, which its list order already keeps. */
enum { DIR_ACT, DIR_GRAD };

struct sim_engine {
    const struct sch_schedule *s;
    const struct sch_run *runs; /* s->runs: a compact schedule's, or NULL */
    const struct sch_costs *c;
    int n_dev;
    int n_micro;
    int rm_end;                /* micro-batches below it are re-materialized */
    int64_t n_ops, n_done;
    uint64_t *bits;            /* [2 x 2 S M bits]: transfer x's src_done bit 2x, its
                                  delivered bit 2x + 1, one cache line for both */
    uint8_t *sends_to;         /* [n_stages] bit DIR_ACT: stage s+1 on another
                                  device, bit DIR_GRAD: stage s-1 */
    sch_time *xfer_at;         /* [2 S M] when tracing: of each transfer, the start
                                  of its send, which its receive's span starts
                                  from; with host-driven messages (record) the
                                  start of the sender's copy until the send has
                                  been recorded, then its transfer's end when
                                  the receiver copies it */
    sch_time *dev_free;        /* [2 n_dev] when tracing: end of the device's last
                                  compute op, its copies included (2 d), and of
                                  its last send (2 d + 1) */
    struct device *devs;       /* [n_dev]; stream si is devs[si / 3].st[si % 3] */
    struct opinfo *info;       /* [n_stages * SCH_OP_NKINDS] while building, then
                                  its distinct rows */
    int32_t *row;              /* [n_stages * SCH_OP_NKINDS] row of info */
    struct resource *res;
    int n_res;
    int32_t *hold;             /* resources of each route, opinfo.res..+n_res */
    int n_hold, cap_hold;
    struct sim_evq evq;        /* payload: stream index, or -2 - transfer for a
                                  delivery; a lane per distinct duration, then
                                  (with draw) one per stream */
    int n_dur_lanes;           /* the lanes of the distinct durations */
    const struct sim_draw *draw; /* opts.draw, or NULL */
    const char *inputs;          /* opts.inputs, or "the profile and topology" */
    sch_time now;
    struct sim_result r;
    struct trc_trace *trace;
    int started, finished;
};

/* The stream an op runs on. A receive runs in its device's list order on the
 * compute stream: it takes the data off the link when the device gets to it
 * (as a framework posts its receive, and as the runtime's worker does), so
 * its buffer is booked then, not when the bytes land. It takes no time; the
 * transfer was the send's. Traces still draw it on the receive thread. */
static const uint8_t run_stream_of[SCH_OP_NKINDS] = {
    [SCH_OP_SEND_ACT] = SCH_STREAM_SEND, [SCH_OP_SEND_GRAD] = SCH_STREAM_SEND,
};
static inline int run_stream(int kind) { return run_stream_of[kind]; }

static inline int bit_get(const uint64_t *b, int64_t x) { return b[x >> 6] >> (x & 63) & 1; }
static inline void bit_set(uint64_t *b, int64_t x) { b[x >> 6] |= 1ULL << (x & 63); }

/* Transfer index of the send of (stage, mb) in direction dir. */
static inline int64_t xfer(const sim_engine *e, int stage, int mb, int dir)
{
    return 2 * ((int64_t)stage * e->n_micro + mb) + dir;
}

/* Transfer index of what receive op receives. */
static inline int64_t recv_xfer(const sim_engine *e, const struct sch_op *op)
{
    return op->kind == SCH_OP_RECV_ACT ? xfer(e, op->stage - 1, op->mb, DIR_ACT)
                                       : xfer(e, op->stage + 1, op->mb, DIR_GRAD);
}

static inline int rm_of(const sim_engine *e, int mb)
{
    return (unsigned)mb < (unsigned)e->rm_end;
}

static inline struct stream *stream_at(const sim_engine *e, int si)
{
    return &e->devs[si / NRUN].st[si % NRUN];
}

static inline const struct sch_op *head_op(const sim_engine *e, const struct stream *st)
{
    (void)e;
    return &st->head;
}

static inline const struct opinfo *info_of(const sim_engine *e, const struct sch_op *op)
{
    return &e->info[e->row[(int64_t)op->stage * SCH_OP_NKINDS + op->kind]];
}

/* The costs of stream st's head (its row, looked up once per op by advance). */
static inline const struct opinfo *head_info(const sim_engine *e, const struct stream *st)
{
    return &e->info[st->row];
}

static inline void set_head(const sim_engine *e, struct stream *st, struct sch_op op)
{
    st->head = op;
    st->row = e->row[(int64_t)op.stage * SCH_OP_NKINDS + op.kind];
}

/* The places of stream k's kinds in run u's pattern, as a bit mask. */
static inline unsigned run_mask(const struct sch_run *u, int k)
{
    unsigned m = 0;
    for (int i = 0; i < u->n; i++)
        m |= (unsigned)(run_stream(u->kind[i]) == k) << i;
    return m;
}

/* advance()'s slow path (sim_engine.c): a list's next op of stream k (the
 * list's other streams skipped), or the first op of stream k in the next
 * run of a compact schedule that has the stream at all. From pos -1, the
 * stream's first. */
void sim_advance_slow(const sim_engine *e, struct stream *st, int k);

/* Moves stream st (kind k) from its head to its next op. In a compact
 * schedule's run, inline: the stream's next place in the run's pattern
 * (mask), else its first in the next repetition. */
static inline void advance(const sim_engine *e, struct stream *st, int k)
{
    if (e->runs && st->pos >= 0 && st->pos < st->end) {
        const struct sch_run *u = &e->runs[st->pos];
        unsigned rest = st->mask & (~0u << (st->j + 1));
        int rep = st->rep;
        if (rest || ++rep < u->count) {
            int j = __builtin_ctz(rest ? rest : st->mask);
            st->rep = rep;
            st->j = (uint8_t)j;
            set_head(e, st, (struct sch_op){ u->kind[j], u->stage, u->mb0 + rep * u->dmb });
            return;
        }
    }
    sim_advance_slow(e, st, k);
}

#endif
