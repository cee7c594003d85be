/*
 * stu_paper — the GPipe paper's reproductions (`pipesim paper`): Table 1
 * (largest model that fits), Table 2 (TPU throughput), Table 3 (GPU
 * throughput over PCIe) and a partition comparison, each written as a
 * markdown file beside the paper's figures (studies/gpipe/reference/, one
 * CSV per table, read at run time: stu_ref.h), with the error of every cell
 * and a note on every deviation over 10 %.
 *
 * Every cell is one ana_predict() run of a generated model (mdl_amoeba,
 * mdl_transformer) on a preset topology (models/topologies/ JSON, sources
 * in SOURCES.md). Nothing is fitted to the paper's numbers. Output files
 * are written atomically (ps_afile) and stamped with the version and the
 * topology file hashes, never with dates or paths, so a run reproduces the
 * committed results/paper/ byte for byte. PNG plots are drawn by gnuplot when
 * it is on PATH (their bytes depend on the gnuplot build: not compared).
 *
 * Partitions come from the optimal partitioner (sched/sch_partitioner.h,
 * analysis/ana_rank.h); the min-max and prefix partitions below are the
 * extra candidates partitions.md compares it with.
 *
 * Ownership: nothing escapes; stu_part_* allocate *out (sch_partition_free).
 * Cost: the whole run is about a thousand simulations of <= 30k ops each
 * (a fraction of a second); stu_part_time is sch_part_solve's
 * O(L log K log C).
 */
#ifndef STU_PAPER_H
#define STU_PAPER_H

#include <stdio.h>

#include "analysis/ana_predict.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_partition.h"
#include "sched/sch_schedule.h"

enum {
    STU_PAPER_T1 = 1,     /* table1.md */
    STU_PAPER_T2 = 2,     /* table2.md (+ table2.png) */
    STU_PAPER_T3 = 4,     /* table3.md (+ table3.png) */
    STU_PAPER_PARTS = 8,  /* partitions.md */
    STU_PAPER_ALL = 15
};

/* The study's data files: the data folder's gpipe/ (base/ps_data.h:
 * studies/gpipe in the source tree, share/pipesim/gpipe installed), or
 * --data. */
#define STU_PAPER_DATA "gpipe"

struct stu_out;

struct stu_paper_opts {
    const char *out_dir;   /* results/paper; created if missing */
    const char *topo_dir;  /* where tpu-v2.json, tpu-v3.json, p100-pcie-8.json are;
                              NULL = the data folder's topologies/ */
    const char *data_dir;  /* reference/ CSVs, text/ templates; NULL = the data
                              folder's STU_PAPER_DATA */
    unsigned tables;       /* STU_PAPER_* mask */
    int plots;             /* 1: PNG plots when gnuplot is present */
    FILE *log;             /* one line per file written; NULL = quiet */
    struct stu_out *out;   /* set by stu_paper_run: files are staged there
                              (studies/stu_out.h) and published together */
};

/* "1,2,3,partitions" or "all" -> mask; PS_EUSAGE naming the bad item. */
int stu_paper_parse_tables(const char *s, unsigned *mask);
/* The whole study into o->out_dir: every input loaded and checked, every
 * file it reads and writes declared (base/ps_afile.h: the registry is
 * reset first, as one command's, and left holding them), then the
 * selected tables written, each atomically. */
int stu_paper_run(const struct stu_paper_opts *o);

/* The study's inputs, loaded and checked (topologies, reference figures,
 * templates; o is borrowed for the context's life): what stu_paper_run
 * writes from, and what bench/bench_repro.c asks for figures. */
struct stu_paper_ctx;
int stu_paper_open(const struct stu_paper_opts *o, struct stu_paper_ctx **out);
void stu_paper_close(struct stu_paper_ctx *c); /* NULL ok */

/* Table 2's cells as table2.md computes them: normalized throughput
 * [model][M = 1, 4, 32][K = 2, 4, 8], predicted and the paper's, and each
 * cell's prediction (owned: stu_t2_fig_release). */
struct stu_t2_fig {
    const char *model[2];                  /* "AmoebaNet-D (18, 256)", "Transformer-48" */
    const char *spec[2];                   /* their generator specs */
    const struct mdl_topology *topo[2];    /* the context's */
    int K[3], M[3];
    double pred[2][3][3], paper[2][3][3];
    struct ana_prediction *p[2][3][3];
};
int stu_paper_t2_figures(const struct stu_paper_ctx *c, struct stu_t2_fig *f);
void stu_t2_fig_release(struct stu_t2_fig *f);

/* Table 3's cells as table3.md computes them: normalized throughput
 * [model][K = 2, 4, 8] at M = 32 on the P100 host, predicted and the
 * paper's (NaN where the reference holds NA), the same GPUs with a
 * dedicated link per stage pair, and each cell's load imbalance. */
struct stu_t3_fig {
    const char *model[2];                  /* "AmoebaNet-D (18, 128)", "Transformer-24" */
    int K[3];
    double pred[2][3], paper[2][3], dedicated[2][3], imbalance[2][3];
};
int stu_paper_t3_figures(const struct stu_paper_ctx *c, struct stu_t3_fig *f);

/* Table 1's cells as table1.md computes them, per model and paper column:
 * the generated parameter count of the paper's configuration and of the
 * largest model that fits, beside the paper's. */
struct stu_t1_col_fig {
    char name[16];             /* "Pipeline-8" */
    int K, L, D;               /* the paper's configuration */
    double params_paper, params_at;
    int largest_fits, largest_capped, largest_L, largest_D;
    double params_largest;
};
struct stu_t1_fig {
    const char *model[2];      /* "AmoebaNet-D", "Transformer" */
    struct stu_t1_col_fig col[2][5];
};
int stu_paper_t1_figures(const struct stu_paper_ctx *c, struct stu_t1_fig *f);

/* The contiguous K-stage partition minimizing the largest per-micro-batch
 * compute (F + R + B with remat, F + B without, each layer on device 0 of
 * t), exact: sch_part_solve (sched/sch_partitioner.h) on that additive cost
 * in ns. PS_ENOFIT if K > layers. */
int stu_part_time(const struct mdl_profile *p, const struct mdl_topology *t, int K,
                  double micro_batch, enum sch_remat remat, struct sch_partition **out);
/* Greedy prefix heuristic: cut when the running compute passes s/K of the
 * total (the nearer side of the crossing), one layer per stage at least. */
int stu_part_prefix(const struct mdl_profile *p, const struct mdl_topology *t, int K,
                    double micro_batch, enum sch_remat remat, struct sch_partition **out);

#endif
