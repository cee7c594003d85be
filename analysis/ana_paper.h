/*
 * ana_paper — the GPipe paper's reproductions (`pipesim paper`): Table 1
 * (largest model that fits), Table 2 (TPU throughput), Table 3 (GPU
 * throughput over PCIe) and a partition comparison, each written as a
 * markdown file beside the paper's figures (/work/shared/paper-tables.md),
 * with the error of every cell and a note on every deviation over 10 %.
 *
 * Every cell is one ana_predict() run of a generated model (mdl_amoeba,
 * mdl_transformer) on a preset topology (models/topologies/ JSON, sources
 * in SOURCES.md). Nothing is fitted to the paper's numbers. Output files
 * are written atomically (sim_afile) and stamped with the version and the
 * topology file hashes, never with dates or paths, so a run reproduces the
 * committed results/paper/ byte for byte. PNG plots are drawn by gnuplot when
 * it is on PATH (their bytes depend on the gnuplot build: not compared).
 *
 * Partitions come from the optimal partitioner (sim/sim_partitioner.h,
 * analysis/ana_rank.h); the min-max and prefix partitions below are the
 * extra candidates partitions.md compares it with.
 *
 * Ownership: nothing escapes; ana_part_* allocate *out (sim_partition_free).
 * Cost: the whole run is about a thousand simulations of <= 30k ops each
 * (a fraction of a second); ana_part_minmax is O(layers x bisection steps).
 */
#ifndef ANA_PAPER_H
#define ANA_PAPER_H

#include <stdio.h>

#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sim/sim_partition.h"
#include "sim/sim_schedule.h"

enum {
    ANA_PAPER_T1 = 1,     /* table1.md */
    ANA_PAPER_T2 = 2,     /* table2.md (+ table2.png) */
    ANA_PAPER_T3 = 4,     /* table3.md (+ table3.png) */
    ANA_PAPER_PARTS = 8,  /* partitions.md */
    ANA_PAPER_ALL = 15
};

struct ana_paper_opts {
    const char *out_dir;   /* results/paper; created if missing */
    const char *topo_dir;  /* where tpu-v2.json, tpu-v3.json, p100-pcie-8.json are */
    unsigned tables;       /* ANA_PAPER_* mask */
    int plots;             /* 1: PNG plots when gnuplot is present */
    FILE *log;             /* one line per file written; NULL = quiet */
};

/* "1,2,3,partitions" or "all" -> mask; SIM_EUSAGE naming the bad item. */
int ana_paper_parse_tables(const char *s, unsigned *mask);
int ana_paper_run(const struct ana_paper_opts *o);

/* Stage cost of layers [a, b) of an n-layer model, K stages in all. */
typedef double (*ana_stage_cost_fn)(void *ctx, int a, int b);

/* The contiguous K-stage partition of n layers minimizing the largest stage
 * cost, for a cost that grows as a stage extends (exact for additive costs:
 * bisection on the bound, then the greedy that fills each stage up to it).
 * SIM_ENOFIT if K > n. */
int ana_part_minmax(int n, int K, ana_stage_cost_fn cost, void *ctx,
                    struct sim_partition **out);
/* Min-max of per-micro-batch compute (F + R + B with remat, F + B without)
 * of each layer on device 0 of t. */
int ana_part_time(const struct mdl_profile *p, const struct mdl_topology *t, int K,
                  double micro_batch, enum sim_remat remat, struct sim_partition **out);
/* Greedy prefix heuristic: cut when the running compute passes s/K of the
 * total (the nearer side of the crossing), one layer per stage at least. */
int ana_part_prefix(const struct mdl_profile *p, const struct mdl_topology *t, int K,
                    double micro_batch, enum sim_remat remat, struct sim_partition **out);

#endif
