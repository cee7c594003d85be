/*
 * ana_predict — one prediction: build costs and schedule, simulate, and
 * derive what users read (step time, throughput, speedup over K = 1,
 * simulated vs analytic bubble, busy fraction and peak memory per stage).
 *
 * Speedup baseline: the same model and batch on device 0 alone, K = 1,
 * M = 1, no re-materialization (plain single-device training); with R
 * data-parallel replicas, one device doing all R replicas' batches.
 * The schedule is built once per simulation (the configuration's, then the
 * baseline's): GPipe without a trace or replicas in its compact form
 * (sch_schedule_gpipe_compact, O(K) runs the engine replays as they are,
 * the same results as its lists), every other case as op lists
 * (sch_schedule_build); c->partition and the inputs are borrowed for the
 * call only.
 * Ownership: ana_predict allocates *out, which owns all it points to: with
 * record_trace the simulated trace and the op lists and costs it replays
 * (export-chakra writes them); no engine outlives the call.
 * ana_prediction_free (NULL ok). Cost: two simulations, O(ops log lanes).
 */
#ifndef ANA_PREDICT_H
#define ANA_PREDICT_H

#include <stdio.h>

#include "analysis/ana_format.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_cost.h"
#include "sched/sch_partition.h"
#include "sched/sch_partitioner.h"
#include "sched/sch_schedule.h"
#include "traces/trc_trace.h"

struct sim_draw; /* sim/sim_engine.h */

/* The hardware knobs of analysis/ana_sens.h (enum ana_knob). */
#define ANA_SENS_KNOBS 6

struct ana_config {
    const struct mdl_profile *profile;
    const struct mdl_topology *topo;
    const char *schedule;              /* NULL = "gpipe" */
    int K, M;
    double batch;                      /* mini-batch; must divide by M */
    enum sch_remat remat;
    const struct sch_partition *partition; /* NULL = uniform */
    int replicas;                      /* data-parallel pipelines; 0 = 1 */
    int record_trace;
    int no_baseline;                   /* skip the K = 1 run (speedup = 0) */
    int lists_as_built;                /* simulate the schedule's lists as its
                                        * generator builds them by name, not
                                        * fitted to the stage costs (zb-auto:
                                        * sch_schedule_fit_costs); the CPU
                                        * validation runs those lists */
    int op_lists;                      /* build op lists even where the compact
                                        * form would do (ana_config_compact):
                                        * the same results, more time and
                                        * memory; for tests that check so */
    const struct sim_draw *draw;       /* with draws > 0: the step also simulated
                                        * draws more times with its compute ops'
                                        * times drawn (sim_engine.h), for
                                        * step_drawn_s and bubble_drawn */
    int draws;
};

struct ana_stage {
    int device;
    int first_layer, n_layers;
    double busy_frac;                  /* busy / makespan */
    double fwd_s, bwd_s, recomp_s;     /* per micro-batch */
    double wgrad_s;                    /* W's part of bwd_s */
    int64_t static_mem, peak_act, peak_mem;
    double capacity;
    int fits;
};

struct ana_prediction {
    char schedule[32];
    char model[256];                    /* the profile's path or generator spec */
    int model_layers;                   /* the layers it built */
    double model_params;                /* their parameters */
    int K, M, n_stages;
    int replicas;
    double batch, micro_batch;          /* batch: per replica */
    enum sch_remat remat;
    char partition[256];
    double step_s, samples_per_s;     /* samples/s of all replicas */
    double allreduce_s;                /* the longest one stage's all-reduce took */
    double baseline_step_s, speedup;   /* baseline: one device's step (K = 1, M = 1, no
                                          remat) for one replica's batch; speedup = replicas
                                          x baseline_step_s / step_s (ana_speedup) */
    int baseline_fits;                  /* the K=1 baseline fits one device's memory */
    double baseline_peak;               /* its peak bytes */
    char baseline_skipped[320];         /* why the K=1 baseline was not simulated
                                           (a value out of the engine's range on one
                                           device, the whole model on it); "" if run */
    double bubble_sim, bubble_analytic; /* analytic: the schedule's uniform-stage
                                           formula, (K-1)/(M+K-1) for GPipe; NaN if none */
    int n_drawn;                        /* config.draws run (0: none) */
    double step_drawn_s, bubble_drawn;  /* their median step (the lower of the two
                                           middle ones when draws is even) and that
                                           step's bubble */
    int fits;
    int64_t n_ops;
    int64_t short_ops, compute_ops;    /* compute ops shorter than the engine's 1 ns
                                        * tick, timed at it (sch_costs_short_ops),
                                        * of compute_ops; the K = 1 baseline's not
                                        * counted */
    unsigned short_kinds;              /* their kinds, a bit (1u << kind) each */
    int has_sens;                       /* sens below filled (predict --sensitivity) */
    double sens[ANA_SENS_KNOBS];        /* the step's elasticity to each knob of
                                           analysis/ana_sens.h, in its order */
    struct ana_stage *stages;          /* [n_stages] */
    /* with record_trace, else NULL: */
    struct trc_trace *trace;           /* the simulated step */
    struct sch_schedule *sched;        /* its op lists (all-reduce included) */
    struct sch_costs *costs;           /* their stage costs */
};

/* The checks ana_predict makes first, before building anything: K, M and
 * batch in range, M dividing the batch, K x replicas <= the topology's
 * devices (PS_ENOFIT), K <= the model's layers (PS_ENOFIT). The sweep makes
 * them before partitioning. */
int ana_config_check(const struct ana_config *c);
/* Whether ana_predict simulates c's schedule in GPipe's compact form: the
 * schedule is gpipe, with no trace (a trace's readers and export-chakra
 * want the lists), no op_lists and at most one replica (all-reduce ops go
 * into lists: sch_schedule_add_allreduce). */
int ana_config_compact(const struct ana_config *c);
int ana_predict(const struct ana_config *c, struct ana_prediction **out);
/* What the engine runs of a built schedule *s on stage costs c: *s fitted
 * to c (zb-auto's second phase, sch_schedule_fit_costs) and zb-auto's
 * promise kept, the engine's fastest of that order and ZB-H1/H2 (so *s may
 * be replaced, under zb-auto's name), with R replicas' all-reduce ops added
 * (sch_schedule_add_allreduce). Any other schedule only gains the
 * all-reduce. predict, compare-schedules and sweep run this; so does plan,
 * so that a row it ranks is the step and memory predict prints. */
int ana_schedule_fit(struct sch_schedule **s, const struct sch_costs *c,
                     const struct mdl_topology *t, int R);
/* The speedup of a step of step_s seconds over one device doing the same
 * replicas' batches in baseline_s each: replicas x baseline_s / step_s; NaN
 * when there is no baseline (baseline_s NaN), 0 for a step of no time. The
 * one rule of predict, sweeps, compare-schedules and partition's ranking
 * (the last two run one replica). */
double ana_speedup(double baseline_s, double step_s, int replicas);
void ana_prediction_free(struct ana_prediction *p);
/* The warning of a result whose short_ops > 0, for stderr: "N of T compute
 * ops (F, B) are shorter than ...: the step time is an upper bound and the
 * throughput a lower bound" (no newline), in buf (n bytes). */
void ana_short_ops_describe(int64_t short_ops, int64_t compute_ops, unsigned kinds, char *buf,
                            size_t n);
/* What those ops are, the same in predict's and compare-schedules' warning. */
#define ANA_SHORT_OPS_WHAT "shorter than the engine's 1 ns clock tick and were timed at 1 ns " \
                           "(a whole backward at 2 ns)"
/* fmt: any of table, csv, json. */
int ana_prediction_print(const struct ana_prediction *p, enum ana_fmt fmt, FILE *f);

/* Where the engine's ledger finds a device over its memory with the
 * partitioner's cut *part of m (made for cfg's schedule, K, M, batch, remat):
 * the closed-form peak the search bounds can lie under the ledger's (a faster
 * neighbour delivers gradients early), so that device's largest stage gets a
 * limit its overflow lower and the cut is solved again, until the engine
 * says every device fits, at most 8 rounds. *part is replaced by the last cut
 * that fits, and left as it was when none is found (the engine then reports
 * it does not fit). */
int ana_partition_fit(const struct ana_config *cfg, const sch_part_model *m,
                      struct sch_partition **part);
/* The optimal strategy's cut (sch_part_strategy_run) as the engine judges it:
 * where no cut meets a device's sum of its stages' closed-form peaks (an
 * upper bound: each stage at its own peak), the optimum under each stage's
 * cap alone is simulated and taken if the engine's ledger finds every device
 * within its memory; then ana_partition_fit. */
int ana_partition_optimal(const struct ana_config *cfg, const sch_part_model *m,
                          struct sch_partition **part);
/* The cut strategy st gives cfg's schedule (K, M, batch, remat, replicas) as
 * predict --partition cuts it: the schedule's own op order sets each stage's
 * memory, every stage under cap (cap_mode and cap as struct sch_part_opts: 1
 * each device's memory, 2 cap bytes), optimal as ana_partition_optimal
 * judges it. *out is NULL for uniform (ana_predict's default). */
int ana_partition_for(const struct ana_config *cfg, enum sch_part_strategy st, int cap_mode,
                      double cap, struct sch_partition **out);

#endif
