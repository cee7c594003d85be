/*
 * sch_schedule — a pipeline schedule as data: an ordered op list per device.
 *
 * A schedule generator turns (devices, stages, micro-batches, remat mode)
 * into op lists; the simulator (sim_engine) and the validation runtime
 * (runtime/) both replay the same lists, so a new schedule is one generator.
 *
 * Ops belong to three streams per device: compute (F, R, B, W, U, AR), send
 * (SEND_ACT, SEND_GRAD) and receive (RECV_ACT, RECV_GRAD; traces draw them
 * on their own thread, the engine runs them in list order with compute).
 * Within a stream ops run in list order; across streams and devices they
 * wait for the dependencies of sch_schedule_deps(). Stage s lives on stage_device[s];
 * S = n_stages may exceed the device count (interleaved schedules).
 *
 * Ownership: generators return a heap schedule; sch_schedule_free (NULL ok).
 * Cost: generation and validation are O(total ops).
 */
#ifndef SCH_SCHEDULE_H
#define SCH_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

typedef int64_t sch_time; /* nanoseconds: integer time makes equal inputs give
                             bit-identical replays and exact sums in tests;
                             int64 ns spans 292 years */

enum sch_op_kind {
    SCH_OP_FWD,        /* F(s,m): stage forward of micro-batch m */
    SCH_OP_BWD,        /* B(s,m): backward (input grad only if W ops exist) */
    SCH_OP_RECOMP,     /* R(s,m): re-materialization forward before B */
    SCH_OP_WGRAD,      /* W(s,m): weight-gradient half of B (zero-bubble) */
    SCH_OP_SEND_ACT,   /* activations of (s,m) to stage s+1 */
    SCH_OP_RECV_ACT,   /* activations of (s-1,m) arrive for stage s */
    SCH_OP_SEND_GRAD,  /* gradient of (s,m) input to stage s-1 */
    SCH_OP_RECV_GRAD,  /* gradient from (s+1,m) arrives for stage s */
    SCH_OP_UPDATE,     /* U(s): optimizer step of stage s (mb = -1) */
    SCH_OP_ALLREDUCE,  /* AR(s): gradient all-reduce of stage s across data-
                          parallel replicas, before U(s) (mb = -1) */
    SCH_OP_NKINDS
};

enum sch_stream { SCH_STREAM_COMPUTE, SCH_STREAM_SEND, SCH_STREAM_RECV, SCH_NSTREAMS };

enum sch_remat { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST, SCH_REMAT_ALWAYS };

struct sch_op {
    uint8_t kind;    /* enum sch_op_kind */
    int32_t stage;
    int32_t mb;      /* micro-batch, -1 for UPDATE */
};

/* A run of a compact schedule: count repetitions of a pattern of n op kinds
 * on one stage, repetition r with micro-batch mb0 + r * dmb (op i of the run
 * is kind[i % n] of micro-batch mb0 + (i / n) * dmb). */
struct sch_run {
    uint8_t kind[4];
    uint8_t n;
    int32_t stage;
    int32_t mb0, dmb, count;
};

struct sch_schedule {
    char name[32];          /* "gpipe", "1f1b", "interleaved:2", "zb-h1" */
    int n_devices;
    int n_stages;
    int n_micro;
    enum sch_remat remat;
    int has_wgrad;          /* 1 if backward is split into B and W */
    int n_replicas;         /* data-parallel pipelines (0 or 1: none); with more,
                               every stage has an AR op before its U */
    int *stage_device;      /* [n_stages] */
    int *n_ops;             /* [n_devices] */
    int *cap_ops;           /* [n_devices] allocated */
    struct sch_op **ops;    /* [n_devices][n_ops[d]] */
    struct sch_op *slab;    /* one block holding the lists sch_schedule_reserve_all
                               sized (NULL: each list is its own block) */
    size_t slab_ops;
    struct sch_run *runs;   /* compact form (sch_schedule_gpipe_compact), NULL for
                               lists: device d's ops are the runs run_first[d] ..
                               run_first[d + 1] - 1 in order, n_ops[d] of them,
                               and ops[d] is NULL until sch_schedule_materialize */
    int *run_first;         /* [n_devices + 1] */
};

/* The most stage micro-batches (stages x M) a schedule is built for: 2^24,
 * seconds of simulation for most schedules (gpipe K = 4096, M = 4096: 2.5 s),
 * under a minute for zb-auto, whose order search is the slowest; more is
 * PS_EINVAL. */
#define SCH_KM_MAX (1LL << 24)
/* The most stages a schedule has: 65536 (a generator's per-device passes
 * over the stages are quadratic in them; 65536 builds in seconds, 200 000
 * took a minute). More is PS_EINVAL. */
#define SCH_STAGES_MAX 65536

/* Empty schedule with stage s on device s % n_devices. */
struct sch_schedule *sch_schedule_new(const char *name, int n_devices,
                                      int n_stages, int n_micro,
                                      enum sch_remat remat);
/* Appends an op to device d's list (amortized O(1)); <0 on ENOMEM. */
static inline int sch_schedule_push(struct sch_schedule *s, int d, enum sch_op_kind kind,
                                    int stage, int mb);
void sch_schedule_free(struct sch_schedule *s);
/* Makes room for n more ops on device d (generators that know their size). */
int sch_schedule_reserve(struct sch_schedule *s, int d, int n);
/* Makes room for n[d] more ops on every device d at once, in one block
 * (on Linux, of huge pages): a generator that knows its whole size saves
 * the page faults of K separate lists. Lists may still grow after (each
 * then moves to its own block). */
int sch_schedule_reserve_all(struct sch_schedule *s, const int *n);
/* sch_schedule_push's slow path: grows device d's list, then appends. */
int sch_schedule_push_grow(struct sch_schedule *s, int d, enum sch_op_kind kind, int stage,
                           int mb);
static inline int sch_schedule_push(struct sch_schedule *s, int d, enum sch_op_kind kind,
                                    int stage, int mb)
{
    int n = s->n_ops[d];
    if (n == s->cap_ops[d])
        return sch_schedule_push_grow(s, d, kind, stage, mb);
    s->ops[d][n] = (struct sch_op){ .kind = (uint8_t)kind, .stage = stage, .mb = mb };
    s->n_ops[d] = n + 1;
    return 0;
}

/* GPipe fill-drain: all forwards, then backwards in reverse micro-batch
 * order, recomputes issued before the gradient they need, update last. */
int sch_schedule_gpipe(int K, int M, enum sch_remat remat,
                       struct sch_schedule **out);
/* The same lists in compact form (struct sch_run: 4 runs per device instead
 * of 7 M ops, O(K) to build): for the engine, which replays runs as they
 * are; every other reader wants lists (sch_schedule_materialize). */
int sch_schedule_gpipe_compact(int K, int M, enum sch_remat remat,
                               struct sch_schedule **out);
/* Expands a compact schedule's runs into lists (one slab) and drops the
 * runs; a schedule with lists is left as it is. O(ops). */
int sch_schedule_materialize(struct sch_schedule *s);
/* 1F1B (PipeDream-flush), Megatron's interleaved 1F1B with v model chunks
 * per device (S = v*K stages, stage s on device s % K; M % K == 0 when
 * v > 1) and Zero Bubble's ZB-H1 (has_wgrad). See sch_schedules.c. */
int sch_schedule_1f1b(int K, int M, enum sch_remat remat, struct sch_schedule **out);
int sch_schedule_interleaved(int K, int M, int v, enum sch_remat remat,
                             struct sch_schedule **out);
int sch_schedule_zbh1(int K, int M, enum sch_remat remat, struct sch_schedule **out);
/* Their entries in sch_schedule_build's table ("1f1b", "interleaved:v",
 * "zb-h1"); arg is the text after ':' or NULL. */
int sch_gen_1f1b(const char *arg, int K, int M, enum sch_remat remat,
                 struct sch_schedule **out);
int sch_gen_interleaved(const char *arg, int K, int M, enum sch_remat remat,
                        struct sch_schedule **out);
int sch_gen_zbh1(const char *arg, int K, int M, enum sch_remat remat,
                 struct sch_schedule **out);
/* Builds the named schedule ("gpipe", and those registered by later
 * generators); unknown names are PS_EUSAGE (sch_schedule_known's message,
 * naming --schedule). */
int sch_schedule_build(const char *name, int K, int M, enum sch_remat remat,
                       struct sch_schedule **out);
/* 0 when name (before any ':') is a registered schedule, else PS_EUSAGE
 * "OPT: unknown schedule 'x'; did you mean 'y'? (known: ...)". Checks the
 * name only, not its argument. */
int sch_schedule_known(const char *name, const char *opt);
/* 0 when name is a registered schedule with a valid argument ("interleaved:0"
 * is not), whatever the sizes: the name as sch_schedule_known, then the
 * schedule built at K = 1, M = 2, a size every generator takes (dualpipe-v
 * needs M >= 2K: a probe at M = 1 refused it whatever the sizes asked, so
 * sweep and plan could not run it). Errors are PS_EUSAGE: an unknown name
 * naming opt, a bad argument the generator's own message. */
int sch_schedule_check(const char *name, const char *opt);
/* 1 when a and b name the same schedule at every K and M: the same text,
 * one spelling its generator's fixed default ("breadth-first" and
 * "breadth-first:1"), or a generator's case that is another schedule
 * (breadth-first:1 is gpipe, interleaved:1 is 1f1b); else 0. */
int sch_schedule_same(const char *a, const char *b);
/* The registry, in its order: how many schedules, and the i-th written with
 * its parameter ("gpipe", "interleaved:v", "zb-auto[:L]"). */
int sch_schedule_count(void);
const char *sch_schedule_form(int i);
/* Device d's stages as "0,2,4" into b (ps_strbuf.h; "" when out of memory),
 * and the longest such list's length over the devices, at least min: the
 * stages column of validate's tables, thread and MPI. */
struct ps_strbuf;
void sch_device_stages(const struct sch_schedule *s, int d, struct ps_strbuf *b);
int sch_device_stages_width(const struct sch_schedule *s, int min);

/* Data parallelism: R copies of this pipeline, replica r's stage s on device
 * r * n_devices + stage_device[s]. Inserts AR(s) before each U(s): the ring
 * all-reduce of stage s's gradients, on its device's compute stream (as
 * NCCL kernels occupy the device), overlapping other stages' backward. */
int sch_schedule_add_allreduce(struct sch_schedule *s, int replicas);
/* UPDATE and ALLREDUCE: one op per stage, mb = -1. */
static inline int sch_op_per_stage(int k)
{
    return k == SCH_OP_UPDATE || k == SCH_OP_ALLREDUCE;
}

/* Whether stage s re-materializes micro-batch m under the schedule's mode. */
int sch_schedule_remat_mb(const struct sch_schedule *s, int m);
static inline enum sch_stream sch_op_stream(enum sch_op_kind k)
{
    return k == SCH_OP_SEND_ACT || k == SCH_OP_SEND_GRAD   ? SCH_STREAM_SEND
           : k == SCH_OP_RECV_ACT || k == SCH_OP_RECV_GRAD ? SCH_STREAM_RECV
                                                           : SCH_STREAM_COMPUTE;
}
static inline int sch_op_is_compute(enum sch_op_kind k)
{
    return sch_op_stream(k) == SCH_STREAM_COMPUTE;
}
/* The two ends of a transfer, for every replayer (engine, runtimes, trace
 * writers): SEND_ACT(s,m) pairs with RECV_ACT(s+1,m), SEND_GRAD(s,m) with
 * RECV_GRAD(s-1,m). sch_op_partner writes the other end's op and returns 1
 * (0 for a kind that is not a transfer); sch_op_peer is its device (the
 * stage_device of its stage), -1 for other kinds; sch_op_tag is the number
 * a send and its receive share, 2 (s M + m) for the activations sent by
 * stage s, 2 (s M + m) + 1 for the gradient it sends, -1 for other kinds
 * (below 2^29 for any schedule a generator builds: an MPI tag);
 * sch_op_tag_m the same for M = n_micro micro-batches without a schedule
 * (a trace's). O(1). */
int sch_op_partner(const struct sch_op *op, struct sch_op *out);
int sch_op_peer(const struct sch_schedule *s, const struct sch_op *op);
int64_t sch_op_tag(const struct sch_schedule *s, const struct sch_op *op);
int64_t sch_op_tag_m(int n_micro, const struct sch_op *op);
/* "F", "B", "R", "W", "send-act", ... */
const char *sch_op_kind_name(enum sch_op_kind k);
/* Short label for traces: "F3", "B3", "R3", "W3", "U", "sendF3", ... */
void sch_op_label(const struct sch_op *op, char *buf, int n);
int sch_remat_parse(const char *s, enum sch_remat *out);
const char *sch_remat_name(enum sch_remat r);

/* The ops this op waits for besides its stream predecessor, written to deps
 * (at most 3). Same-device deps must come earlier in the device's list. */
int sch_schedule_deps(const struct sch_schedule *s, const struct sch_op *op,
                      struct sch_op deps[3]);
/* Checks every op is on its stage's device, each (kind, stage, mb) appears
 * exactly where required (F/B per stage and micro-batch, R iff
 * re-materialized, W iff has_wgrad, sends/receives at device boundaries,
 * one U per stage), same-device deps precede their users, and one in-order
 * thread per device with non-blocking sends (the validation runtime) runs
 * the lists to the end. PS_EINVAL with the first problem. O(total ops) for
 * pipeline lists (O(ops * devices) at worst). */
int sch_schedule_validate(const struct sch_schedule *s);
int64_t sch_schedule_total_ops(const struct sch_schedule *s);

/* Positions of one device's ops by (stage, kind, mb), for the validator and
 * the engine. Sized for the device with the most stages and reused across
 * devices, so it stays small (stages per device x kinds x micro-batches). */
struct sch_devindex {
    int32_t *pos;       /* -1 = absent */
    int *local;         /* [n_stages] slot of each stage on its device */
    int max_local;
};
int sch_devindex_init(struct sch_devindex *x, const struct sch_schedule *s);
void sch_devindex_release(struct sch_devindex *x);
/* Indexes device d's list: PS_EINVAL for an op out of range, on the wrong
 * device, or listed twice. O(ops of d + table). */
int sch_devindex_fill(struct sch_devindex *x, const struct sch_schedule *s, int d);
/* The two halves of sch_schedule_validate, for callers that walk devices
 * themselves (the engine): whole-schedule shape, then each indexed device. */
int sch_schedule_check_shape(const struct sch_schedule *s);
int sch_schedule_check_device(const struct sch_schedule *s, const struct sch_devindex *x, int d);
/* The last part of sch_schedule_validate: one in-order thread per device
 * with non-blocking sends runs the lists to the end (PS_EINVAL naming the
 * first stuck op otherwise). Assumes the per-device checks passed. */
int sch_schedule_check_replay(const struct sch_schedule *s);
/* Position of (kind, stage, mb) in its device's list (stage on the indexed
 * device), or -1. UPDATE uses mb -1. */
static inline int32_t sch_devindex_get(const struct sch_devindex *x,
                                       const struct sch_schedule *s, int kind,
                                       int stage, int mb)
{
    return x->pos[((int64_t)x->local[stage] * SCH_OP_NKINDS + kind) * s->n_micro +
                  (mb < 0 ? 0 : mb)];
}

/* Activation bytes per micro-batch of one stage, for the memory ledger. */
struct sch_stage_mem {
    int64_t in;      /* stage input (received), 0 for stage 0 */
    int64_t out;     /* stage output (sent), 0 for the last stage */
    int64_t stash;   /* kept for backward when not re-materialized */
    int64_t wgrad;   /* split backward (has_wgrad): what B prepares for W and
                        W consumes (the deferred weight-gradient inputs), held
                        from B's end to W's end; 0 where the cost model has
                        no figure for it */
};
/* The ledger rule, shared by simulator and runtime: bytes op allocates when
 * it starts (*at_start; negative for sends, whose buffer goes to the link)
 * and the net change when it ends (*at_end). See
 * sch_memory.c for the rules. */
void sch_mem_effect(const struct sch_schedule *s, const struct sch_op *op,
                    const struct sch_stage_mem *m, int64_t *at_start,
                    int64_t *at_end);

#endif
