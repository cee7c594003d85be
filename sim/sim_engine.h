/*
 * sim_engine — the discrete-event engine that replays a schedule.
 *
 * Resources: each device runs two in-order streams: compute (F, R, B, W, U,
 * AR and the receives, which take their data in list order and no time) and
 * send; each link is a FIFO resource (per direction if dedicated, one for
 * all if shared). An op starts when it heads its stream, its dependencies
 * are done, and (transfers, all-reduces) every resource of its route is
 * free and has it at the head of its queue (mdl_topology.h: all at once,
 * FIFO, deadlock-free). A send holds its route and its send stream for
 * bytes / bandwidth; its receiver's dependency is met the route's latency
 * (+ overhead_s) later, by a delivery event (none when that is 0).
 * Events sit in FIFO lanes, one per distinct op duration (with drawn op
 * times, struct sim_draw, the compute ops' ends one lane per stream, each
 * holding at most one event), and only the
 * lanes' heads are in a 4-ary min-heap keyed by (time, seq) (sim_evq.h,
 * sim_heap.h); seq is a per-engine counter taken at each push, so ties pop
 * in insertion order and replays are bit-identical. The engine keeps no
 * record per op: each stream is a cursor into its device's op list, and
 * the only dependencies across streams (a send on the F or B that made its
 * data, a receive on its send's delivery) are two bits per transfer. Lanes,
 * heap and bits are allocated up front: no malloc per event. Durations and
 * ledger effects are tabled once per (stage, kind) and re-materialized or
 * not (sch_costs_op_time, sch_mem_effect); each op picks its row by whether
 * its micro-batch is re-materialized (sch_schedule_remat_mb).
 *
 * Cost: O(ops * log(lanes)) time (lanes <= distinct op durations); memory
 * O(devices + stages x kinds) plus 2 bits per (stage, micro-batch) (and an
 * int64 per transfer with a trace): the schedule's own lists are the only
 * per-op storage.
 * Trace: an op's span is its own time, without the host-driven message
 * copies around it (sch_stage_cost fwd_pre ...); a send its sender copies
 * and a receive its reader copies span what the runtime's workers record
 * (runtime/rt_replay.c): from the sender's copy (or the device's previous
 * send's end, if later) to the transfer's end, and from when both the
 * transfer had ended and the device was free to the end of the reader's
 * copy. With a trace the engine also keeps two times per device.
 * Ownership: sim_engine_new borrows schedule and costs (they must outlive
 * the engine) and reads the topology only while it builds; the result and
 * the trace belong to the engine until sim_engine_take_trace hands the
 * trace over; sim_engine_free (NULL ok).
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include "models/mdl_topology.h"
#include "sched/sch_cost.h"
#include "sched/sch_schedule.h"
#include "traces/trc_trace.h"

typedef struct sim_engine sim_engine;

/* Op times drawn per op (optional): fn(ctx, op, remat, tabled) returns the
 * duration of compute op op (F, R, B, W, U; remat: whether its micro-batch
 * is re-materialized), given the one its (stage, kind) table holds (without
 * the device's message copies around an F or B, sch_cost.h, which keep
 * their time and are added back); the engine clamps it to [0, 16 x tabled]. Transfers and all-reduces keep
 * their tabled times. The draws happen in the engine's event order, which
 * is deterministic, so a deterministic fn (a seeded generator) replays bit
 * for bit. Used to simulate steps whose ops vary as measured ones do
 * (measure/msr_calib.h, msr_noise): a step is a max over paths, so varying
 * op times lengthen it beyond the step of their mean times. */
struct sim_draw {
    sch_time (*fn)(void *ctx, const struct sch_op *op, int remat, sch_time tabled);
    void *ctx;
};

struct sim_engine_opts {
    int record_trace;   /* keep every op and memory change as trace records */
    const struct sim_draw *draw; /* NULL: every op takes its tabled time */
    const char *inputs;  /* where the op times came from, for errors that ask
                            to check them; NULL: "the profile and topology" */
};

struct sim_result {
    sch_time makespan;       /* end of the last op (update included) */
    sch_time fb_end;         /* end of the last forward/backward op */
    int n_devices;
    sch_time *busy;          /* [dev] F+B+R+W time */
    sch_time *busy_recomp;   /* [dev] R time */
    sch_time *busy_update;   /* [dev] U time */
    sch_time *busy_allreduce;/* [dev] AR time (data-parallel replicas), the sum
                                over the device's stages */
    sch_time allreduce_max;  /* the longest one stage's AR took */
    int64_t *static_mem;     /* [dev] parameters + optimizer state */
    int64_t *peak_act;       /* [dev] peak activation + buffer bytes */
    int64_t *peak_mem;       /* [dev] static + peak_act */
    double *capacity;        /* [dev] device memory */
    int fits;                /* every device's peak <= capacity */
    double bubble;           /* 1 - sum(busy) / (devices * fb_end) */
    int64_t n_ops;
    int64_t n_events;
    int peak_queue;          /* most events pending at once */
};

int sim_engine_new(const struct sch_schedule *s, const struct sch_costs *c,
                   const struct mdl_topology *t, const struct sim_engine_opts *o,
                   sim_engine **out);
void sim_engine_free(sim_engine *e);
/* One event: 1 = more to do, 0 = finished, <0 = error (deadlock). */
int sim_engine_step(sim_engine *e);
/* Runs events up to and including time t; same returns as step. */
int sim_engine_run_until(sim_engine *e, sch_time t);
int sim_engine_run(sim_engine *e);
sch_time sim_engine_now(const sim_engine *e);
/* Valid after run returned 0. Owned by the engine. */
const struct sim_result *sim_engine_result(const sim_engine *e);
/* The recorded trace (record_trace) — owned by the engine. */
const struct trc_trace *sim_engine_trace(const sim_engine *e);
/* Hands the recorded trace to the caller (trc_trace_free), NULL without
 * one; the engine keeps none after. */
struct trc_trace *sim_engine_take_trace(sim_engine *e);

/* Bytes the engine allocates for a schedule of n_stages x n_micro beyond
 * its per-device and per-stage tables (two bits per transfer; with a trace
 * also each transfer's start), for sim_membudget's estimate. */
size_t sim_engine_bytes(int n_stages, int n_micro, int record_trace);

/* Convenience: one whole simulation of a schedule. */
int sim_simulate(const struct sch_schedule *s, const struct sch_costs *c,
                 const struct mdl_topology *t, int record_trace,
                 sim_engine **out);

#endif
