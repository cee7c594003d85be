/*
 * stu_paper_int — what the stu_paper_*.c files share: the run context (the
 * three preset topologies, loaded once), the markdown file helpers, one
 * prediction per cell, and the gnuplot runner. Internal to analysis/.
 */
#ifndef STU_PAPER_INT_H
#define STU_PAPER_INT_H

#include "studies/stu_paper.h"
#include "studies/stu_ref.h"
#include "studies/stu_tmpl.h"
#include "analysis/ana_predict.h"
#include "sched/sch_partitioner.h"
#include "base/ps_util.h"

/* The prose templates, <data>/text/<output> (stu_tmpl.h): each table file
 * declares its sections. */
enum { STU_TX_T1, STU_TX_T2, STU_TX_T3, STU_TX_PARTS, STU_TX_T2GP, STU_TX_T3GP, STU_NTX };

struct stu_paper_ctx {
    const struct stu_paper_opts *o;
    struct mdl_topology *tpu2, *tpu3, *p100;
    char h_tpu2[17], h_tpu3[17], h_p100[17];
    struct stu_ref ref; /* the published figures, <data>/reference/ */
    stu_tmpl *tx[STU_NTX]; /* the prose, <data>/text/ */
};

/* Opens <out_dir>/<name> atomically and writes the stamp and the title. */
int stu_paper_md_open(const struct stu_paper_ctx *c, const char *name, const char *title,
                      struct ps_afile *af);
/* rc < 0: abort (nothing left behind) and return rc; else commit. */
int stu_paper_md_close(const struct stu_paper_ctx *c, struct ps_afile *af, int rc);
/* Writes a small text file (data, gnuplot script) atomically. */
int stu_paper_write_text(const struct stu_paper_ctx *c, const char *name, const char *text);
/* The same with section of template tx filled from v (may be NULL). */
int stu_paper_write_tmpl(const struct stu_paper_ctx *c, const char *name, const stu_tmpl *tx,
                         const char *section, const struct stu_vals *v);
/* Runs `gnuplot <script>` in out_dir, its stdout (a PNG) into <png>,
 * atomically; a missing gnuplot is a note on the log, not an error. */
int stu_paper_plot(const struct stu_paper_ctx *c, const char *script, const char *png);

/* 100 * (pred / paper - 1), formatted "+12.3 %" into buf. */
const char *stu_paper_err(double pred, double paper, char *buf, size_t n);
/* "**" when |error| > 10 % (bold in markdown), else "". */
const char *stu_paper_flag(double pred, double paper);

/* One cell: GPipe schedule, K stages, M micro-batches of batch/M. part NULL =
 * uniform. baseline: also the K = 1 run (for speedup). */
int stu_paper_eval(const struct mdl_profile *p, const struct mdl_topology *t, int K, int M,
                   double batch, enum sch_remat remat, const struct sch_partition *part,
                   int baseline, struct ana_prediction **out);
/* The partition of a sch_partitioner strategy for K stages on devices
 * 0..K-1, M micro-batches of mb; capped: under each device's memory
 * (PS_ENOFIT when no partition fits). */
int stu_paper_strategy(const struct mdl_profile *p, const struct mdl_topology *t, int K, int M,
                       double mb, enum sch_remat remat, enum sch_part_strategy s, int capped,
                       struct sch_partition **out);
/* GPipe's partition as its library Lingvo cuts the paper's models: a
 * Transformer (a profile from transformer:) as GPipeTransformerStack and
 * its Builder do, ceil(L / K) blocks per stage, the last stage the rest,
 * the embedding with the first and the softmax with the last (evenly where
 * that leaves a stage no block; Lingvo refuses such a model); any other
 * model by PartitionSequentialLayers (SCH_PART_LINGVO: equal shares of
 * forward FLOPs), its generic partitioner, assumed for AmoebaNet, whose
 * GPipe code is not published. Fewer blocks than stages (which Lingvo
 * refuses): equal layer counts over all the layers. */
int stu_paper_gpipe_part(const struct mdl_profile *p, const struct mdl_topology *t, int K,
                         int M, double mb, enum sch_remat remat, struct sch_partition **out);
/* The best simulated of the partitioner's optimum and its one-cut
 * neighbours (ana_rank), under the memory cap (uncapped when no partition
 * fits it): `pipesim partition --strategy optimal --mem-cap device`'s first. */
int stu_paper_ranked(const struct mdl_profile *p, const struct mdl_topology *t, int K, int M,
                     double batch, enum sch_remat remat, struct sch_partition **out);
/* The generated models. */
/* The paper's models; fused: keep=fused, what XLA keeps for backward
 * (models/mdl_amoeba.h, models/mdl_transformer.h), for the TPU tables. */
int stu_paper_amoeba(int L, int D, int fused, struct mdl_profile **out);
int stu_paper_transformer(int L, int fused, struct mdl_profile **out);

int stu_paper_table1(const struct stu_paper_ctx *c);
int stu_paper_table2(const struct stu_paper_ctx *c);
int stu_paper_table3(const struct stu_paper_ctx *c);
int stu_paper_partitions(const struct stu_paper_ctx *c);

/* The batch policy of Tables 2 and 3 (see table2.md): from `start` (doubled
 * until M divides it) halve the mini-batch, keeping it a multiple of M, until
 * every stage fits; if none down to micro-batch 1 fits, the run at `start`
 * is returned with fits = 0. The partition at each batch is GPipe's
 * (stu_paper_gpipe_part). *pred owns the result. */
int stu_paper_fit_batch(const struct mdl_profile *p, const struct mdl_topology *t, int K,
                        int M, double start, int baseline, struct ana_prediction **pred);

#endif
