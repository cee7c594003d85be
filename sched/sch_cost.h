/*
 * sch_cost — turns a profile, a topology and a partition into the per-stage
 * durations and byte counts the engine replays.
 *
 * Each layer's time comes from mdl_layer_seconds on the device that holds
 * the stage; a stage's forward is the sum over its layers, rounded once to
 * nanoseconds, and at least 1 ns when it is not zero (a backward at least
 * 2 ns, so that each half of a split one is). Recompute = forward unless
 * a calibrated profile times it apart (recomp_ms, MDL_OP_RECOMP). The
 * forward of a re-materialized
 * micro-batch keeps nothing for backward; calibrated profiles may time it
 * apart (fwd_nostash, mdl_layer_seconds MDL_OP_FWD_NOSTASH; = forward
 * otherwise), and sch_costs_op_time returns it for F ops whose micro-batch
 * is re-materialized (sch_schedule_remat_mb); likewise the backward of a
 * re-materialized micro-batch, right after its recompute (bwd_remat_ms,
 * MDL_OP_BWD_REMAT; = backward otherwise), for its B and W ops, split in
 * the same shares as the backward of a stashed one. The engine tables both
 * durations of each stage and kind (asking with the schedule's mode set
 * to never and to always) and gives each op the one of its own
 * micro-batch, so under except_last the last micro-batch's F keeps the
 * stashing forward's time. Transfers are not here: their time is the
 * link's latency + bytes / bandwidth (sim_engine.c). With a split backward (zero-bubble
 * schedules) B is the input-gradient half and W the weight-gradient half:
 * bwd_input = the sum of the layers' input gradients (mdl_layer_bwd_split:
 * the device model's B, or the wgrad_* / work columns' share), layers that
 * say nothing counted half, rounded to ns and kept in [1, bwd - 1];
 * bwd_weight = bwd - bwd_input. When no layer of the stage says anything,
 * bwd_input = bwd/2 exactly as before (dense layers do equal FLOPs for dX
 * and dW). mem.wgrad (held from B's end to W's end by split-backward
 * schedules, sch_memory.c) = the micro-batch's output bytes of every layer
 * of the stage but its last, less what each carries on unchanged
 * (carry_bytes: skips in flight, whose gradient W does not keep): the
 * output gradients W still needs (the
 * inputs it reads are in the stash; the last layer's output gradient is
 * mem.out), what the CPU runtime keeps (rt_stage.h). Update = 2 * params * bytes_per_param /
 * mem_bandwidth (read and write of the optimizer state), 0 if unknown.
 * A device with host-driven messages (mdl_topology.h "messages") copies
 * each message it sends or receives on its compute stream: F's and B's
 * durations include the copies of the messages received right before them
 * and sent right after them (fwd_pre/post, bwd_pre/post: msg_*_s + bytes /
 * msg_*_bw, each rounded to ns), which the engine does not count busy and
 * leaves out of the op's recorded span.
 * Ownership: sch_costs_new / sch_costs_free (NULL ok). Cost: O(layers).
 */
#ifndef SCH_COST_H
#define SCH_COST_H

#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_partition.h"
#include "sched/sch_schedule.h"

/* The durations of a stage that were shorter than the engine can time
 * (sch_stage_cost.short_ops): above 0 but under 1 ns (a whole backward
 * under its 2 ns), so taken at that minimum. */
enum {
    SCH_SHORT_FWD = 1 << 0,     /* fwd (and recomp, the same) */
    SCH_SHORT_FWD_NOSTASH = 1 << 1,
    SCH_SHORT_BWD = 1 << 2,     /* the whole backward: < 2 ns */
    SCH_SHORT_BWD_INPUT = 1 << 3, /* its halves (split backward) */
    SCH_SHORT_BWD_WEIGHT = 1 << 4,
    SCH_SHORT_UPDATE = 1 << 5,
    SCH_SHORT_RECOMP = 1 << 6,  /* recomp apart from fwd (recomp_ms) */
    SCH_SHORT_BWD_REMAT = 1 << 7, /* the backward of a re-materialized
                                   micro-batch (bwd_remat_ms): < 2 ns */
    SCH_SHORT_BWD_REMAT_INPUT = 1 << 8, /* and its halves */
    SCH_SHORT_BWD_REMAT_WEIGHT = 1 << 9,
};

struct sch_stage_cost {
    int device;
    sch_time fwd, bwd, recomp, bwd_input, bwd_weight, update;
    sch_time fwd_nostash;       /* F of a re-materialized micro-batch */
    sch_time bwd_remat, bwd_input_remat, bwd_weight_remat; /* its B (and W) */
    sch_time fwd_pre, fwd_post; /* of fwd and fwd_nostash: the device's copies of
                                   the activations received before F and sent
                                   after it (host-driven messages, mdl_topology.h
                                   "messages"; 0 without), not busy */
    sch_time bwd_pre, bwd_post; /* the same of the gradients around B (of bwd,
                                   bwd_remat, bwd_input, bwd_input_remat) */
    unsigned short_ops;         /* SCH_SHORT_* of the durations above */
    struct sch_stage_mem mem;   /* per micro-batch */
    int64_t wire_in, wire_out;  /* what a transfer moves per micro-batch: mem.in and
                                   .out before the memory policy's allocator_overhead
                                   (an allocator's slack is not sent); read through
                                   sch_stage_wire, which takes mem's when wire_set is
                                   0 (a table built by hand) */
    int wire_set;
    double params;
    int64_t param_bytes;        /* params * bytes_per_param (+ the memory
                                 * policy's workspace_bytes; its
                                 * allocator_overhead scales mem) */
};

/* The bytes stage sc sends or receives per micro-batch: its output (out = 1,
 * the activation sent on and the gradient received) or its input (out = 0). */
static inline int64_t sch_stage_wire(const struct sch_stage_cost *sc, int out)
{
    if (sc->wire_set)
        return out ? sc->wire_out : sc->wire_in;
    return out ? sc->mem.out : sc->mem.in;
}

struct sch_costs {
    int n_stages;
    double micro_batch;         /* samples per micro-batch */
    double grad_bytes;          /* per parameter, what the replicas' all-reduce moves:
                                   the memory policy's gradients; 0 (a table built by
                                   hand, or no policy): 4, FP32 */
    struct sch_stage_cost *st;  /* [n_stages] */
};

/* stage_device[s] gives the device of stage s (NULL: device s). */
int sch_costs_new(const struct mdl_profile *p, const struct mdl_topology *t,
                  const struct sch_partition *part, const int *stage_device,
                  double micro_batch, struct sch_costs **out);
void sch_costs_free(struct sch_costs *c);
/* Host-driven messages (mdl_topology.h "messages"): adds each stage's
 * copies of what it receives and sends across devices to the F and B they
 * surround (every schedule's lists put a send right after the op that made
 * its data and a receive right before the op that reads it) and sets
 * fwd/bwd_pre/post, replacing what an earlier call set; sch_costs_new calls
 * it, so does a table built by hand (the replay of a measured step).
 * PS_EINVAL for a copy past SCH_MAX_OP_S. */
int sch_costs_messages(const struct mdl_topology *t, struct sch_costs *c);
/* Duration of op on its stage (transfers excluded: those depend on links). */
sch_time sch_costs_op_time(const struct sch_costs *c, const struct sch_schedule *s,
                           const struct sch_op *op);
/* The bytes per parameter a replicas' all-reduce moves (4 when not set). */
static inline double sch_costs_grad_bytes(const struct sch_costs *c)
{
    return c->grad_bytes > 0 ? c->grad_bytes : 4;
}
/* Bytes an op moves: a transfer's (SEND_*, RECV_*), an all-reduce's (the
 * stage's gradients, sch_costs_grad_bytes per parameter); 0 otherwise. */
int64_t sch_costs_op_bytes(const struct sch_costs *c, const struct sch_op *op);
/* A send's or receive's copy by its own device (host-driven messages): the
 * fwd/bwd_post of the F or B whose data a send sends, the fwd/bwd_pre of
 * the one that reads what a receive receives; 0 for other ops. */
sch_time sch_costs_op_copy(const struct sch_costs *c, const struct sch_op *op);
/* Range of one op and one buffer: beyond these a figure is a typo or an
 * overflow, not a configuration (31 years; 100 PB). sch_costs_new and the
 * engine reject them with PS_EINVAL; the engine also rejects a step whose
 * ops could add up past its int64 clock (292 years). */
#define SCH_MAX_OP_S 1e9
#define SCH_MAX_BYTES 1e17
sch_time sch_seconds_to_time(double s);
double sch_time_to_seconds(sch_time t);
/* The duration of a compute op (F, B, R, W, U): as sch_seconds_to_time, but
 * at least 1 ns when s > 0, so that real work shorter than the clock tick is
 * never free (0 ns ops made a step of them 0 ms, its throughput 0 samples/s
 * and its bubble 100 %). Transfers keep plain rounding: a link of 1e300 B/s
 * is a deliberately free one. */
sch_time sch_op_seconds_to_time(double s);
/* The compute ops of schedule s (F, R, B, W, U; not transfers, whose time
 * comes from the links) whose stage duration was shorter than the engine
 * can time (SCH_SHORT_*): their number, the number of all compute ops in
 * *total, and in *kinds a bit (1u << kind) per sch_op_kind among them. From
 * the op counts every generator keeps (sch_schedule_validate: F and B per
 * stage and micro-batch, R where re-materialized, W with has_wgrad, one U
 * per stage), so compact schedules too. O(stages + micro-batches). */
int64_t sch_costs_short_ops(const struct sch_costs *c, const struct sch_schedule *s,
                            int64_t *total, unsigned *kinds);

#endif
