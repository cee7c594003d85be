/*
 * sch_partitioner — optimal contiguous stage partitions, and the
 * alternatives users compare against.
 *
 * Core (plain arrays, no files): a stage s holding layers [a, e) costs
 *     C_s(a, e) = pre[e] - pre[a] + in[a] + out[e] + bias        (int64)
 * where pre is a nondecreasing prefix sum ([L+1], pre[0] = 0), in[a] >= 0 is
 * charged to the stage that starts at cut a (a > 0) and out[e] >= 0 to the
 * stage that ends at cut e (e < L); in[0] and out[L] are never read.
 * sch_part_solve finds a partition into exactly K stages that minimizes the
 * bottleneck max_s T_s(a_s, e_s), optionally subject to M_s(a_s, e_s) <= 0
 * for every stage (a memory cost with bias = -capacity). It is exact (see
 * the proof in sch_partitioner.c), not a heuristic:
 *   - same costs for every stage and no memory constraint: parametric search
 *     over the integer bottleneck with an O(L log K) feasibility test (fewest
 *     and most stages that reach each cut); O(L log K log C) in all, C the
 *     cost range — L = 100 000, K = 1024 takes milliseconds;
 *   - otherwise (per-stage devices, memory caps): the same search with an
 *     exact layered test, O(K L log L) per probe.
 * sch_part_min_sq_sum is the GPipe paper's heuristic (minimum variance of
 * stage costs = minimum sum of squares, the total being fixed), by DP with
 * divide-and-conquer optimization, O(K L log L) time, O(K L) memory up to
 * 2^25 cells, then O(sqrt(K) L) (the cuts read back block by block).
 *
 * Model layer: sch_part_model_new turns a profile + topology + micro-batch
 * into those arrays with sch_cost.h semantics (see sch_partitioner_model.c),
 * and sch_part_strategy builds the partition of a named strategy.
 *
 * Ownership: partitions returned are heap objects (sch_partition_free);
 * sch_part_model_free (NULL ok). Problems borrow their arrays.
 */
#ifndef SCH_PARTITIONER_H
#define SCH_PARTITIONER_H

#include <stdint.h>

#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_partition.h"
#include "sched/sch_schedule.h"

struct sch_part_cost {
    const int64_t *pre;  /* [L+1], nondecreasing, pre[0] = 0 */
    const int64_t *in;   /* [L+1] >= 0 or NULL */
    const int64_t *out;  /* [L+1] >= 0 or NULL */
    int64_t bias;
};

struct sch_part_problem {
    int n_layers, n_stages;
    const struct sch_part_cost *time; /* [n_stages]: the objective */
    const struct sch_part_cost *mem;  /* [n_stages] or NULL: stage feasible iff <= 0 */
    int same;                         /* 1: stages cost alike; only [0] is read */
};

#define SCH_PART_INF (INT64_MAX / 4)

/* Cost of stage s holding [a, e). O(1). */
int64_t sch_part_cost_eval(const struct sch_part_cost *c, int n_layers, int a, int e);
/* Bottleneck of a partition (index of the worst stage in *worst, NULL ok);
 * also whether every stage meets the memory constraint. O(K). */
int64_t sch_part_bottleneck(const struct sch_part_problem *p, const struct sch_partition *part,
                            int *worst, int *feasible);
/* Optimal partition; *bottleneck gets its value. PS_ENOFIT if K > L or no
 * partition meets the memory constraint. */
int sch_part_solve(const struct sch_part_problem *p, struct sch_partition **out,
                   int64_t *bottleneck);
/* Minimum sum over stages of (pre_s[e] - pre_s[a])^2 (time[s].pre only). */
int sch_part_min_sq_sum(const struct sch_part_problem *p, struct sch_partition **out);
/* The same, reading the cuts back in blocks of B rows (1 <= B <= K; other
 * values mean K): each block after the first recomputes its rows from a
 * checkpoint. Every B gives the same partition; sch_part_min_sq_sum picks
 * B = K while K (L+1) <= 2^25 cells, else about 2 sqrt(K), so memory stays
 * O(sqrt(K) L) at most twice the time. */
int sch_part_min_sq_sum_block(const struct sch_part_problem *p, int B,
                              struct sch_partition **out);

/* ---- model layer ---- */

enum sch_part_strategy {
    SCH_PART_OPTIMAL,      /* min bottleneck of time, under the memory cap */
    SCH_PART_UNIFORM,      /* equal layer counts */
    SCH_PART_GPIPE,        /* min variance of stage compute time (paper) */
    SCH_PART_BALANCE_SIZE, /* min bottleneck of memory (minus capacity if capped) */
    SCH_PART_LINGVO,       /* GPipe's library: equal shares of forward FLOPs
                              (sch_partition_lingvo) */
    SCH_PART_NSTRATEGIES
};
int sch_part_strategy_parse(const char *s, enum sch_part_strategy *out);
const char *sch_part_strategy_name(enum sch_part_strategy s);

struct sch_part_opts {
    int n_stages;            /* stages (= K for gpipe) */
    const int *stage_device; /* [n_stages]; NULL = stage s on device s */
    int n_micro;             /* M */
    double micro_batch;      /* samples per micro-batch */
    enum sch_remat remat;
    int cap_mode;            /* 0 none, 1 device memory, 2 cap bytes */
    double cap;              /* bytes, cap_mode 2 */
    const struct sch_schedule *sched; /* the schedule the stages run: its op
                               * order sets how many stashes, inputs, outputs
                               * and W buffers each stage holds at once
                               * (sch_partitioner_model.c); NULL or "gpipe":
                               * fill-drain's closed form */
    const int64_t *counts;   /* or those counts already made (sch_part_stage_counts of
                              * the schedule, [n_stages][4]): no replay, no sched */
};

/* The most stashes, inputs, outputs and W buffers ([s][0..3]) each stage of sc
 * holds at once when its device runs its ops in list order (the ledger's rule
 * on unit sizes): cnt[n_stages * 4]. */
void sch_part_stage_counts(const struct sch_schedule *sc, int64_t *cnt);

typedef struct sch_part_model sch_part_model;

int sch_part_model_new(const struct mdl_profile *p, const struct mdl_topology *t,
                       const struct sch_part_opts *o, sch_part_model **out);
void sch_part_model_free(sch_part_model *m);
/* The array problem: time objective, memory constraint when capped (each
 * stage under its device's memory: for a device with several stages, what
 * sch_part_model_fits and sch_part_model_solve add). */
const struct sch_part_problem *sch_part_model_problem(const sch_part_model *m);
/* Whether part meets the cap: every stage's closed-form peak under its
 * device's memory and, where a device holds several stages (interleaved,
 * V layouts), their peaks' sum too (each stage at its own peak: an upper
 * bound of the device's). 1 yes, 0 no; 1 without a cap. */
int sch_part_model_fits(const sch_part_model *m, const struct sch_partition *part);
/* The capped optimum (sch_part_solve on the model's problem). Where a
 * device holds several stages and the optimum's sum overflows it, the
 * device's memory is shared among its stages: round by round the first
 * overflowing device gives up its excess from the one of its stages whose
 * cut then has the least bottleneck (each tried), at most 64 rounds; then
 * fixed shares, the memory-balanced cut, and shares searched device by
 * device; the result fits (sch_part_model_fits) but is an optimum only under
 * the shares found, not over every share.
 * -PS_ENOFIT when none fits (no message: sch_part_model_explain_nofit). */
int sch_part_model_solve(const sch_part_model *m, struct sch_partition **out);
/* The same with stage s's closed-form peak at most limit[s] bytes too (what
 * ana_partition_fit lowers where the engine's ledger found a device over:
 * the closed form can lie under the ledger's peak when a faster neighbour
 * delivers buffers early). */
int sch_part_model_solve_caps(const sch_part_model *m, const int64_t *limit,
                              struct sch_partition **out);
/* The optimum with stage s's closed-form peak at most limit[s] alone: no sum
 * over a device's stages (for a caller that judges the device by the engine). */
int sch_part_model_solve_stages(const sch_part_model *m, const int64_t *limit,
                                struct sch_partition **out);
int sch_part_strategy_run(const sch_part_model *m, enum sch_part_strategy s,
                          struct sch_partition **out);
/* Whether a device holds several stages (interleaved, V layouts). */
int sch_part_model_shared(const sch_part_model *m);
/* Where a device holds several stages: *part replaced by the cut of least
 * busiest-device time (its stages' times summed; then the least sum of
 * squares of the devices' times) found by moving one cut a layer at a time
 * from *part and from each other strategy's cut, each stage's closed-form
 * peak within the cap (a device's stages summed are left to the engine). A
 * local optimum, not a proven one; *part unchanged when none of the starts
 * meets the cap or no device is shared. */
int sch_part_model_descend(const sch_part_model *m, struct sch_partition **part);

struct sch_part_stage_info {
    int device, first, n_layers;
    double time_s;     /* per step: M (fwd + bwd) + recomputes + boundary transfers */
    double compute_s;  /* the same without transfers */
    int64_t mem;       /* closed-form peak bytes (parameters + activations) */
    double capacity;   /* the cap the search used (device memory if none) */
};
/* Per-stage figures of a partition, info[n_stages]. */
void sch_part_model_stages(const sch_part_model *m, const struct sch_partition *part,
                           struct sch_part_stage_info *info);
/* Explains why no partition fits: the least-overflowing partition's worst
 * stage, its need and its capacity. Returns the PS_ENOFIT error. */
int sch_part_model_explain_nofit(const sch_part_model *m);

#endif
