/*
 * ana_rank — candidate partitions ranked by simulated step time.
 *
 * The bottleneck bound of sch_partitioner ignores bubbles, link contention
 * and memory-buffer timing, so `pipesim partition` simulates every candidate:
 * the partitions of the requested strategies, plus (with optimal) the
 * neighbours of the optimum, each cut moved by one layer. Identical
 * partitions are merged (their labels joined). Order: candidates that fit
 * (every stage's simulated peak within its capacity) first, then by
 * simulated step time, bottleneck bound, partition string — a total order,
 * so output is deterministic.
 *
 * Ownership: ana_rank_new allocates; ana_rank_free (NULL ok).
 * Cost: one simulation per candidate, 2(K-1) + strategies candidates.
 */
#ifndef ANA_RANK_H
#define ANA_RANK_H

#include <stdio.h>

#include "analysis/ana_predict.h"
#include "sched/sch_partitioner.h"

struct ana_candidate {
    char label[96];                    /* "optimal", "gpipe=uniform", "optimal: cut 2 -1" */
    struct sch_partition *part;
    char spec[256];                    /* "3,5,4,4" */
    double bound_s;                    /* max stage time per step (the search objective) */
    struct sch_part_stage_info *info;  /* [n_stages] closed-form per-stage figures */
    struct ana_prediction *pred;       /* simulated */
    int fits;                          /* simulated peaks within the capacities used */
};

struct ana_rank {
    int n;
    struct ana_candidate *c;           /* ranked */
    double baseline_step_s;            /* K = 1, M = 1, no remat */
    int baseline_fits;                 /* it fits one device */
    double baseline_peak;              /* its peak bytes */
    char baseline_skipped[320];        /* why the baseline was not simulated (the whole
                                        * model on one device is beyond the engine's
                                        * range): speedups are NaN; "" when it ran */
    int n_dropped;                     /* candidates beyond the engine's range, left out */
    char dropped[384];                 /* the first of them: "label (spec): why" */
};

/* cfg: everything but the partition. strategies[n]; neighbours: add the
 * optimum's neighbours when SCH_PART_OPTIMAL is among them. */
int ana_rank_new(const struct ana_config *cfg, const sch_part_model *m,
                 const enum sch_part_strategy *strategies, int n, int neighbours,
                 struct ana_rank **out);
void ana_rank_free(struct ana_rank *r);
/* fmt: any of table, csv, json; the first `top` candidates (<= 0: all). */
int ana_rank_print(const struct ana_rank *r, enum ana_fmt fmt, int top, FILE *f);

#endif
