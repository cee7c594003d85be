/*
 * ana_plan — the best configuration that fits: a search over pipeline depth
 * K, data-parallel replicas R (K x R <= devices, R dividing the global
 * batch), micro-batch count M (every divisor of the per-replica batch up to
 * ANA_PLAN_M_MAX, which keeps a search within minutes whatever the batch),
 * every schedule the engine replays (where its conditions hold), the
 * re-materialization mode, and the partition: the exact min-max partitioner
 * (sch_part_solve) under the memory cap, or, when no partition meets its
 * closed-form cap (the GPipe peak, an over-estimate for 1F1B-like
 * schedules), the unconstrained optimum, which the engine then judges.
 *
 * A configuration is feasible when the engine's simulated peak of every
 * device is within its capacity (device memory, or --mem-cap BYTES).
 * Feasible configurations are ranked by a total order: throughput
 * objective: step time (integer ns), then peak memory, then enumeration
 * index; memory objective: peak memory, then step time, then index. The
 * search returns exactly what simulating every configuration and sorting
 * would (tests/test_plan.c checks it against that brute force), because it
 * discards only what provably cannot enter the top N or cannot fit:
 *   - time lower bound of the step: the busiest device's compute ops (F, R,
 *     B, W, U at the engine's own ns durations) run back to back on one
 *     in-order stream, so the makespan is at least their sum. Before any
 *     partition (homogeneous devices): the whole model's work / K, less 1 ns
 *     per op for rounding. Configurations are visited in increasing order
 *     of that bound; one whose bound exceeds the N-th best step found so
 *     far is pruned, never simulated;
 *   - memory lower bound, before the engine runs: the parameters of the
 *     device's stages plus the largest stash (and split-backward) bytes held
 *     at any point of its compute list in program order; transfer buffers
 *     are never negative, so the simulated peak is at least this. Above the
 *     capacity: rejected without simulation;
 *   - for the memory objective, the parameters alone bound the peak.
 * Partitions and stage costs are cached and reused by every configuration
 * with the same stage layout, K, M, micro-batch and remat (schedules that
 * place stages alike share them).
 * Speedup baseline: the best feasible K = 1, R = 1 configuration (searched
 * alongside with its own top-1 bound); none when nothing fits one device.
 *
 * Ownership: ana_plan_run allocates *out (ana_plan_free, NULL ok); the spec
 * and its inputs are borrowed for the call. Cost: O(configurations log
 * configurations) for the bounds, plus one partition per distinct key and
 * one simulation per configuration not pruned.
 */
#ifndef ANA_PLAN_H
#define ANA_PLAN_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/ana_format.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_schedule.h"

/* The largest micro-batch count searched: 4096 (a simulation of M = 4096 on
 * 8 stages takes well under a second; the exact search's largest M a few
 * times that many ops). */
#define ANA_PLAN_M_MAX 4096L

enum ana_plan_objective { ANA_PLAN_THROUGHPUT, ANA_PLAN_MEMORY };

/* What became of a configuration (the reasons of rejection after FIT). */
#define ANA_PLAN_STATUS(X)                                                   \
    X(FIT, "fit", "simulated, fits")                                         \
    X(PRUNED, "pruned", "pruned by the bounds (cannot enter the top N or the frontier)") \
    X(MEM_BOUND, "memory-bound", "memory lower bound above capacity (not simulated)") \
    X(MEM_SIM, "memory-sim", "simulated peak above capacity")                \
    X(ERROR, "error", "cannot run (partitioner or engine refused)")
enum ana_plan_status {
#define X(id, name, desc) ANA_PLAN_##id,
    ANA_PLAN_STATUS(X)
#undef X
    ANA_PLAN_NSTATUS
};
const char *ana_plan_status_name(enum ana_plan_status s);
const char *ana_plan_status_desc(enum ana_plan_status s);

enum ana_plan_limit { ANA_LIM_BUBBLE, ANA_LIM_IMBALANCE, ANA_LIM_LINK, ANA_LIM_MEMORY,
                      ANA_LIM_COMPUTE };
const char *ana_plan_limit_name(enum ana_plan_limit l);

struct ana_plan_spec {
    const struct mdl_profile *profile;
    const struct mdl_topology *topo;
    const char *model_arg, *topo_arg, *command; /* as given, stored (NULL ok) */
    int devices;                 /* N: K x R <= N <= topology's devices */
    long batch;                  /* global batch per step */
    int cap_mode;                /* 1: each device's memory; 2: cap bytes */
    double cap;
    int top;                     /* N best kept; >= 1 */
    enum ana_plan_objective objective;
    const char *const *schedules; int nsched; /* NULL: every schedule (ana_plan_schedules) */
    const enum sch_remat *remats; int nremat;  /* NULL: never, except_last, always */
    int frontier_found;          /* 1: skip the frontier phase: the frontier is that of
                                    the configurations simulated for the top N only
                                    (faster; not the whole space's) */
    int brute_force;             /* simulate every configuration (no bound prunes or
                                    rejects; they are still computed) */
    int shard, nshards;          /* visit only the configurations of shard `shard` of
                                    nshards (ana_plan_shard_of; 0, 0 or 1: all) */
    int jobs;                    /* threads: the shards of one search run in parallel and
                                    are merged as MPI's ranks are (0 or 1: one thread). The
                                    ranking and frontier are the same for any jobs; what
                                    was pruned or simulated is not */
    int progress;                /* 1: a line on stderr, redrawn a few times a second, of
                                    the configurations visited and simulated so far by
                                    every shard (for a terminal: cmd_plan sets it) */
};

struct ana_plan_cfg {
    int K, R, M, S;              /* S: stages (v K for interleaved) */
    char schedule[24];
    enum sch_remat remat;
    int index;                   /* enumeration order (the last tie-break) */
    enum ana_plan_status status;
    double lb_s;                 /* the step-time lower bound it was judged by */
    int64_t mem_lb;              /* memory lower bound, bytes (0: not computed) */
    int capped;                  /* 1: partition from the capped partitioner */
    /* simulated (FIT, MEM_SIM): */
    int64_t step_ns;
    double step_s, samples_per_s, bubble, imbalance, comm;
    int64_t peak_mem;            /* largest device peak */
    double capacity;             /* that device's capacity */
    enum ana_plan_limit limit;
    char partition[96];
    char error[160];             /* ERROR: the message, its middle elided past 159 bytes */
};

struct ana_plan {
    struct ana_plan_spec spec;   /* copied; its pointers are not owned */
    int n;                       /* configurations enumerated */
    struct ana_plan_cfg *c;      /* [n] in enumeration order */
    int *rank, n_rank;           /* the top feasible, best first (indices into c) */
    int *front, n_front;         /* Pareto frontier (throughput vs peak memory) of the
                                    simulated feasible ones, by peak memory */
    int baseline;                /* best feasible K = 1, R = 1 (index), -1 if none fits */
    int counts[ANA_PLAN_NSTATUS];
    int simulated, partitions;   /* engine runs; partitioner runs (distinct keys) */
    double elapsed_s;
};

/* The schedule names tried by default. */
extern const char *const ana_plan_schedules[];
extern const int ana_plan_nschedules;

int ana_plan_run(const struct ana_plan_spec *sp, struct ana_plan **out);
/* Ends the progress line, if one was drawn (a newline). */
void ana_plan_progress_end(void);
/* The shard (of n) that searches configuration g: by its K and M, so that the
 * partitions and stash counts one shard caches are of its own configurations
 * alone (every schedule, remat and R of a K and M share them). */
int ana_plan_shard_of(const struct ana_plan_cfg *g, int n);
/* The same search sharded over MPI ranks when an MPI launcher started the
 * process with more than one (analysis/ana_plan_mpi.c): rank r searches
 * shard r of P, rank 0 gathers them and ranks the union as one
 * process would (*out on rank 0, *root = 1; NULL and 0 elsewhere). MPI is
 * initialized and finalized here. Otherwise ana_plan_run, *root = 1. */
int ana_plan_run_mpi(const struct ana_plan_spec *sp, struct ana_plan **out, int *root);
void ana_plan_free(struct ana_plan *p);
/* Merges the configurations of shards (each run with the same spec and its
 * shard) into one plan ranked as one process would: the union of the
 * shards' evaluations (configurations one shard did not visit take the
 * other's). Used by MPI gathering and tests. O(n log n). */
int ana_plan_rerank(struct ana_plan *p);

/* Speedup of c over the baseline (0 without one). */
double ana_plan_speedup(const struct ana_plan *p, const struct ana_plan_cfg *c);
/* fmt: table (top N, frontier, rejections), csv (one row per ranked and
 * frontier configuration), json (all three). */
int ana_plan_print(const struct ana_plan *p, enum ana_fmt fmt, FILE *f);
/* Every configuration into the SQLite plan database at path (a new kind,
 * analysis/ana_dbkind.h), in one transaction, replacing a previous search
 * with the same inputs. */
int ana_plan_store(const struct ana_plan *p, const char *path);
/* Before the search: a file already at path must be a plan database
 * (ana_dbkind_check, read-only, the file left as it was); 0 when it is, or
 * when there is none yet. */
int ana_plan_db_precheck(const char *path);
/* The frontier figure: <out_dir>/<prefix>frontier.png and .svg, throughput
 * against peak memory, infeasible simulated points marked; held in batch
 * (ana_plot.h) when not NULL. */
struct ana_plot_batch;
int ana_plan_plot(const struct ana_plan *p, const char *out_dir, const char *gnuplot,
                  struct ana_plot_batch *batch);

#endif
