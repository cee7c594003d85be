/*
 * ana_plan_int — internals shared by the files of the plan search: not a
 * public interface.
 *   ana_plan.c          enumeration, progress line, ranking, the run (--jobs)
 *   ana_plan_search.c   the search: top N, frontier, visits, simulation
 *   ana_plan_bounds.c   stage layouts and the lower bounds
 *   ana_plan_cache.c    the cached partitions and costs, the cached stash counts
 * Ownership: each cache owns its entries (ana_plan_*cache_release).
 * Cost: a cache lookup is O(1) expected; a miss costs one partition (with
 * its costs) or one schedule build.
 */
#ifndef ANA_PLAN_INT_H
#define ANA_PLAN_INT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ana_plan.h"
#include "sched/sch_cost.h"
#include "sched/sch_partition.h"
#include "sched/sch_schedule.h"

struct ana_plan_layout {
    int v, vee; /* v stages per device; vee: zb-v's V (d holds d and 2K-1-d) */
};

struct ana_plan_pkey {
    int v, vee, K, M;
    enum sch_remat remat;
    double micro;
    char sched[24];   /* "": the layout's partition under fill-drain's memory (every
                         schedule of the layout shares it); a name: that schedule's own,
                         under its program order's stashes (sch_part_opts.sched) */
};

struct ana_plan_pentry {
    struct ana_plan_pkey k;
    int used;
    int rc;                    /* < 0: the partitioner's or the costs' error */
    char msg[160];
    int capped;
    int binding;               /* the memory cap rejected the unconstrained optimum */
    struct sch_partition *part;
    struct sch_costs *costs;
    /* the unconstrained optimum the closed form refused while the capped
     * search found a cut: simulated too, taken where the engine finds it fits
     * (with several stages a device, where it also runs faster); NULL else */
    struct sch_partition *upart;
    struct sch_costs *ucosts;
    int *stage_device;         /* [S] */
    int64_t tlb;               /* the time lower bound from the costs (ns) */
    int64_t tlb_plain;         /* the same for schedules without a split backward */
    int64_t mem_lb;            /* largest device's parameters + largest stash */
    int over;                  /* some device's mem_lb is above its capacity */
};

struct ana_plan_pcache {
    struct ana_plan_pentry *e;
    size_t cap;
    int n;
};

struct ana_plan_work {
    double micro;
    double f, fn, b, u; /* seconds, each the sum over layers of the per-device minimum */
    double r, br;       /* R and a re-materialized backward (= f, b unless calibrated apart) */
    double params, stash; /* bytes: parameters (x bytes_per_param), stash per micro-batch */
    double *layer;      /* [L][ANA_PLAN_LW]: each layer's f, fn, b, r, br, u as above, its
                           parameter bytes and its stash less its shared tensors (owned;
                           freed by ana_plan_work_release) */
};
#define ANA_PLAN_LW 8

struct ana_plan_centry {
    char name[24];
    int K, M, used, rc, S;
    enum sch_remat remat;
    int *cnt;        /* [S] */
    int64_t *pcnt;   /* [S][4]: sch_part_stage_counts, for the partitioner */
    int dominated;   /* every stage's counts at most fill-drain's closed form's: a cut
                        that fits fill-drain's memory fits this schedule's */
    int fitted;      /* zb-auto: the engine runs an order fitted to the costs
                        (ana_schedule_fit), not these lists; their counts bound nothing */
    char msg[160];
};

struct ana_plan_ccache {
    struct ana_plan_centry *e;
    size_t cap;
    int n;
};


struct ana_plan_layout ana_plan_layout_of(const char *name);
int ana_plan_layout_dev(struct ana_plan_layout l, int K, int s);
/* Whether the schedule splits backward into B and W (zero-bubble family,
 * DualPipeV). */
int ana_plan_split_backward(const char *name);
/* Whether the schedule's conditions hold for K, M on L layers. */
int ana_plan_schedule_valid(const char *name, int K, int M, int L);
/* Re-materialized micro-batches of M under r. */
int ana_plan_n_remat(enum sch_remat r, int M);

/* Copies msg into dst[n]; one too long keeps its start and its end (the
 * cause, after a long model spec) with " [...] " between. */
void ana_plan_msg_copy(char *dst, size_t n, const char *msg);

/* The partition and costs of key k (made on a miss; e->rc < 0 with its
 * message when they cannot be made); counts: k.sched's stage counts (the
 * centry's pcnt), or NULL to replay the schedule. */
int ana_plan_pcache_get(const struct ana_plan_spec *sp, struct ana_plan_pcache *c,
                        const int64_t *counts,
                        const struct ana_plan_pkey *k, struct ana_plan_pentry **out);
void ana_plan_pcache_release(struct ana_plan_pcache *c);
/* The stash counts of g's schedule, K, M and remat. */
int ana_plan_ccache_get(struct ana_plan_ccache *c, const struct ana_plan_cfg *g,
                        const struct ana_plan_centry **out);
void ana_plan_ccache_release(struct ana_plan_ccache *c);

/* The per-layer work at one micro-batch size (a table grown on a miss). */
int ana_plan_work_of(const struct ana_plan_spec *sp, struct ana_plan_work **tab, int *n,
                     int *cap, double micro, const struct ana_plan_work **out);
void ana_plan_work_release(struct ana_plan_work *tab, int n);
/* Lower bounds before partitioning: step (ns) and largest peak (bytes). */
int64_t ana_plan_work_bound(const struct ana_plan_work *w, int K, int M, int v,
                            enum sch_remat r);
/* Lower bounds of any cut into K stages, one a device: the least, over the
 * contiguous cuts, of the busiest stage's step work (*tlb, ns) and of the
 * largest stage's parameters and one stash (*mlb, bytes). */
void ana_plan_cut_bounds(const struct ana_plan_spec *sp, const struct ana_plan_work *w, int K,
                         int M, enum sch_remat r, int64_t *tlb, int64_t *mlb);
int64_t ana_plan_mem_bound0(const struct ana_plan_spec *sp, const struct ana_plan_work *w,
                            int K, int v);
/* The stash-count bound on e's partition (*lb; 1 when a device cannot fit). */
int ana_plan_count_bound(const struct ana_plan_spec *sp, const struct ana_plan_pentry *e,
                         const struct ana_plan_centry *c, int64_t *lb);
/* The program-order walk of a built schedule (*lb; 1 when a device cannot fit). */
int ana_plan_mem_bound(const struct sch_schedule *s, const struct sch_costs *c,
                       const double *capv, int64_t *lb);
/* Seconds device d spends sending per step. */
double ana_plan_send_seconds(const struct ana_plan_spec *sp, const struct sch_schedule *s,
                             const struct sch_costs *c, int d);

/* Objective key order; -1 when a is better (ana_plan_search.c). */
int ana_plan_better(const struct ana_plan_cfg *a, const struct ana_plan_cfg *b,
                    enum ana_plan_objective o);
/* Whether g runs on one device: K = 1, one replica. */
int ana_plan_is_single(const struct ana_plan_cfg *g);
/* Bounds p's enumerated configurations (those of sp's shard) and visits them:
 * partition, memory bounds, simulation unless pruned (brute force prunes none). */
int ana_plan_search(const struct ana_plan_spec *sp, struct ana_plan *p);
/* The progress line (ana_plan.c): a visit (visit 1) or a simulation (ran) of
 * a configuration of n. */
void ana_plan_progress_tick(const struct ana_plan_spec *sp, int n, int visit, int ran);

#endif
