/*
 * sim_schedule — a pipeline schedule as data: an ordered op list per device.
 *
 * A schedule generator turns (devices, stages, micro-batches, remat mode)
 * into op lists; the simulator (sim_engine) and the validation runtime
 * (runtime/) both replay the same lists, so a new schedule is one generator.
 *
 * Ops belong to three streams per device: compute (F, R, B, W, U, AR), send
 * (SEND_ACT, SEND_GRAD) and receive (RECV_ACT, RECV_GRAD; traces draw them
 * on their own thread, the engine runs them in list order with compute).
 * Within a stream ops run in list order; across streams and devices they
 * wait for the dependencies of sim_schedule_deps(). Stage s lives on stage_device[s];
 * S = n_stages may exceed the device count (interleaved schedules).
 *
 * Ownership: generators return a heap schedule; sim_schedule_free (NULL ok).
 * Cost: generation and validation are O(total ops).
 */
#ifndef SIM_SCHEDULE_H
#define SIM_SCHEDULE_H

#include <stdint.h>

typedef int64_t sim_time; /* nanoseconds: integer time makes equal inputs give
                             bit-identical replays and exact sums in tests;
                             int64 ns spans 292 years */

enum sim_op_kind {
    SIM_OP_FWD,        /* F(s,m): stage forward of micro-batch m */
    SIM_OP_BWD,        /* B(s,m): backward (input grad only if W ops exist) */
    SIM_OP_RECOMP,     /* R(s,m): re-materialization forward before B */
    SIM_OP_WGRAD,      /* W(s,m): weight-gradient half of B (zero-bubble) */
    SIM_OP_SEND_ACT,   /* activations of (s,m) to stage s+1 */
    SIM_OP_RECV_ACT,   /* activations of (s-1,m) arrive for stage s */
    SIM_OP_SEND_GRAD,  /* gradient of (s,m) input to stage s-1 */
    SIM_OP_RECV_GRAD,  /* gradient from (s+1,m) arrives for stage s */
    SIM_OP_UPDATE,     /* U(s): optimizer step of stage s (mb = -1) */
    SIM_OP_ALLREDUCE,  /* AR(s): gradient all-reduce of stage s across data-
                          parallel replicas, before U(s) (mb = -1) */
    SIM_OP_NKINDS
};

enum sim_stream { SIM_STREAM_COMPUTE, SIM_STREAM_SEND, SIM_STREAM_RECV, SIM_NSTREAMS };

enum sim_remat { SIM_REMAT_NEVER, SIM_REMAT_EXCEPT_LAST, SIM_REMAT_ALWAYS };

struct sim_op {
    uint8_t kind;    /* enum sim_op_kind */
    int32_t stage;
    int32_t mb;      /* micro-batch, -1 for UPDATE */
};

struct sim_schedule {
    char name[32];          /* "gpipe", "1f1b", "interleaved:2", "zb-h1" */
    int n_devices;
    int n_stages;
    int n_micro;
    enum sim_remat remat;
    int has_wgrad;          /* 1 if backward is split into B and W */
    int n_replicas;         /* data-parallel pipelines (0 or 1: none); with more,
                               every stage has an AR op before its U */
    int *stage_device;      /* [n_stages] */
    int *n_ops;             /* [n_devices] */
    int *cap_ops;           /* [n_devices] allocated */
    struct sim_op **ops;    /* [n_devices][n_ops[d]] */
};

/* Empty schedule with stage s on device s % n_devices. */
struct sim_schedule *sim_schedule_new(const char *name, int n_devices,
                                      int n_stages, int n_micro,
                                      enum sim_remat remat);
/* Appends an op to device d's list (amortized O(1)); <0 on ENOMEM. */
int sim_schedule_push(struct sim_schedule *s, int d, enum sim_op_kind kind,
                      int stage, int mb);
void sim_schedule_free(struct sim_schedule *s);
/* Makes room for n more ops on device d (generators that know their size). */
int sim_schedule_reserve(struct sim_schedule *s, int d, int n);

/* GPipe fill-drain: all forwards, then backwards in reverse micro-batch
 * order, recomputes issued before the gradient they need, update last. */
int sim_schedule_gpipe(int K, int M, enum sim_remat remat,
                       struct sim_schedule **out);
/* 1F1B (PipeDream-flush), Megatron's interleaved 1F1B with v model chunks
 * per device (S = v*K stages, stage s on device s % K; M % K == 0 when
 * v > 1) and Zero Bubble's ZB-H1 (has_wgrad). See sim_schedules.c. */
int sim_schedule_1f1b(int K, int M, enum sim_remat remat, struct sim_schedule **out);
int sim_schedule_interleaved(int K, int M, int v, enum sim_remat remat,
                             struct sim_schedule **out);
int sim_schedule_zbh1(int K, int M, enum sim_remat remat, struct sim_schedule **out);
/* Their entries in sim_schedule_build's table ("1f1b", "interleaved:v",
 * "zb-h1"); arg is the text after ':' or NULL. */
int sim_gen_1f1b(const char *arg, int K, int M, enum sim_remat remat,
                 struct sim_schedule **out);
int sim_gen_interleaved(const char *arg, int K, int M, enum sim_remat remat,
                        struct sim_schedule **out);
int sim_gen_zbh1(const char *arg, int K, int M, enum sim_remat remat,
                 struct sim_schedule **out);
/* Builds the named schedule ("gpipe", and those registered by later
 * generators); unknown names are SIM_EUSAGE. */
int sim_schedule_build(const char *name, int K, int M, enum sim_remat remat,
                       struct sim_schedule **out);

/* Data parallelism: R copies of this pipeline, replica r's stage s on device
 * r * n_devices + stage_device[s]. Inserts AR(s) before each U(s): the ring
 * all-reduce of stage s's gradients, on its device's compute stream (as
 * NCCL kernels occupy the device), overlapping other stages' backward. */
int sim_schedule_add_allreduce(struct sim_schedule *s, int replicas);
/* UPDATE and ALLREDUCE: one op per stage, mb = -1. */
static inline int sim_op_per_stage(int k)
{
    return k == SIM_OP_UPDATE || k == SIM_OP_ALLREDUCE;
}

/* Whether stage s re-materializes micro-batch m under the schedule's mode. */
int sim_schedule_remat_mb(const struct sim_schedule *s, int m);
static inline enum sim_stream sim_op_stream(enum sim_op_kind k)
{
    return k == SIM_OP_SEND_ACT || k == SIM_OP_SEND_GRAD   ? SIM_STREAM_SEND
           : k == SIM_OP_RECV_ACT || k == SIM_OP_RECV_GRAD ? SIM_STREAM_RECV
                                                           : SIM_STREAM_COMPUTE;
}
static inline int sim_op_is_compute(enum sim_op_kind k)
{
    return sim_op_stream(k) == SIM_STREAM_COMPUTE;
}
/* "F", "B", "R", "W", "send-act", ... */
const char *sim_op_kind_name(enum sim_op_kind k);
/* Short label for traces: "F3", "B3", "R3", "W3", "U", "sendF3", ... */
void sim_op_label(const struct sim_op *op, char *buf, int n);
int sim_remat_parse(const char *s, enum sim_remat *out);
const char *sim_remat_name(enum sim_remat r);

/* The ops this op waits for besides its stream predecessor, written to deps
 * (at most 3). Same-device deps must come earlier in the device's list. */
int sim_schedule_deps(const struct sim_schedule *s, const struct sim_op *op,
                      struct sim_op deps[3]);
/* Checks every op is on its stage's device, each (kind, stage, mb) appears
 * exactly where required (F/B per stage and micro-batch, R iff
 * re-materialized, W iff has_wgrad, sends/receives at device boundaries,
 * one U per stage), same-device deps precede their users, and one in-order
 * thread per device with non-blocking sends (the validation runtime) runs
 * the lists to the end. SIM_EINVAL with the first problem. O(total ops) for
 * pipeline lists (O(ops * devices) at worst). */
int sim_schedule_validate(const struct sim_schedule *s);
int64_t sim_schedule_total_ops(const struct sim_schedule *s);

/* Positions of one device's ops by (stage, kind, mb), for the validator and
 * the engine. Sized for the device with the most stages and reused across
 * devices, so it stays small (stages per device x kinds x micro-batches). */
struct sim_devindex {
    int32_t *pos;       /* -1 = absent */
    int *local;         /* [n_stages] slot of each stage on its device */
    int max_local;
};
int sim_devindex_init(struct sim_devindex *x, const struct sim_schedule *s);
void sim_devindex_release(struct sim_devindex *x);
/* Indexes device d's list: SIM_EINVAL for an op out of range, on the wrong
 * device, or listed twice. O(ops of d + table). */
int sim_devindex_fill(struct sim_devindex *x, const struct sim_schedule *s, int d);
/* The two halves of sim_schedule_validate, for callers that walk devices
 * themselves (the engine): whole-schedule shape, then each indexed device. */
int sim_schedule_check_shape(const struct sim_schedule *s);
int sim_schedule_check_device(const struct sim_schedule *s, const struct sim_devindex *x, int d);
/* The last part of sim_schedule_validate: one in-order thread per device
 * with non-blocking sends runs the lists to the end (SIM_EINVAL naming the
 * first stuck op otherwise). Assumes the per-device checks passed. */
int sim_schedule_check_replay(const struct sim_schedule *s);
/* Position of (kind, stage, mb) in its device's list (stage on the indexed
 * device), or -1. UPDATE uses mb -1. */
static inline int32_t sim_devindex_get(const struct sim_devindex *x,
                                       const struct sim_schedule *s, int kind,
                                       int stage, int mb)
{
    return x->pos[((int64_t)x->local[stage] * SIM_OP_NKINDS + kind) * s->n_micro +
                  (mb < 0 ? 0 : mb)];
}

/* Activation bytes per micro-batch of one stage, for the memory ledger. */
struct sim_stage_mem {
    int64_t in;      /* stage input (received), 0 for stage 0 */
    int64_t out;     /* stage output (sent), 0 for the last stage */
    int64_t stash;   /* kept for backward when not re-materialized */
};
/* The ledger rule, shared by simulator and runtime: bytes op allocates when
 * it starts (*at_start; negative for sends, whose buffer goes to the link)
 * and the net change when it ends (*at_end). See
 * sim_memory.c for the rules. */
void sim_mem_effect(const struct sim_schedule *s, const struct sim_op *op,
                    const struct sim_stage_mem *m, int64_t *at_start,
                    int64_t *at_end);

#endif
