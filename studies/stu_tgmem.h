/*
 * stu_tgmem — torchgpipe's AmoebaNet-D (L, D) memory benchmark on Tesla
 * P40s, predicted row by row (part of `pipesim reproduce torchgpipe`;
 * kakaobrain/torchgpipe docs/benchmarks.rst @ fe52c4dc, the settings of
 * benchmarks/amoebanetd-memory/main.py @ a4710261): measured PyTorch
 * memory, beside which the engine's memory ledger is checked.
 *
 * What main.py measures, and what is predicted for it: one mini-batch of
 * 128 images, `chunks` micro-batches (128: one image each), the row's
 * balance and checkpoint mode, RMSprop (STU_TGM_BYTES_PER_PARAM: weight,
 * gradient and square average in FP32, main.py's param_scale = 3).
 * "Model Memory" = 12 B x parameters; "Peak Activation Memory" = the sum
 * over the row's GPUs of torch.cuda.max_memory_cached minus that. The
 * prediction: the generator's parameter count (`amoebanet:L=..,D=..,
 * pool3=avg`), 12 B x it, and the sum over the stages of the ledger's peak
 * (sched/sch_cost.c: parameters, stashed and recomputed activations, kept
 * stage inputs, buffers, any memory_policy overheads) minus 12 B x the
 * parameters, as main.py subtracts it. A row whose measured activation
 * memory is "oom" (the baseline, on one P40) is checked for the ledger
 * saying it does not fit.
 *
 * Data: <data>/reference/amoebanetd-memory.csv (format below, citation in
 * its '#' lines), <data>/text/amoebanetd-memory.md (stu_tmpl.h); the
 * topology is stu_torchgpipe.h's (p40-pcie-8.json), its bytes_per_param
 * replaced by RMSprop's. Outputs: <out>/amoebanetd-memory.md and .csv,
 * atomic, stamped with the version and input hashes (a rerun reproduces
 * them byte for byte).
 *
 * Reference columns (any order, each once): experiment ("baseline": n = 1,
 * chunks = 1, checkpoint never; else "pipeline-<n>"), n (1-8), L (a
 * multiple of 3, up to 300), D (a multiple of 8, up to 4096), batch (up to
 * 4096), chunks (dividing the batch), balance (n positive layer counts
 * separated by spaces summing to L + 6, the generator's layers), checkpoint
 * (always, except_last, never), params_millions (0.001, 1e6],
 * model_memory_gib (0.001, 1e4], peak_activation_gib (0.001, 1e4] or oom. Every error is one
 * PS_EPARSE "file:line[:column]: ..." naming the field (a row the engine
 * refuses: "file:line: experiment <name>: <why>"), exit status 3, found
 * before anything is written.
 *
 * Ownership: stu_tgm_predict allocates *out (stu_tgm_run_free, NULL ok),
 * which owns its predictions. Cost: one ana_predict per row (up to 128
 * micro-batches on 8 stages: a few thousand ops), milliseconds.
 */
#ifndef STU_TGMEM_H
#define STU_TGMEM_H

#include <stdio.h>

#include "studies/stu_torchgpipe.h"
#include "studies/stu_tmpl.h"

#define STU_TGM_FILE "amoebanetd-memory"
/* main.py's optimizer: RMSprop, "param + grad + RMSprop.square_avg". */
#define STU_TGM_BYTES_PER_PARAM 12.0
#define STU_TGM_MAXROW 8

struct stu_tgm_row {
    char exp[32];                  /* "baseline", "pipeline-4" */
    int n, L, D, batch, chunks, line;
    char balance[128];             /* "16,12,7,7" */
    enum sch_remat remat;
    double params_m;               /* millions, as printed */
    double model_gib, act_gib;     /* act_gib: 0 when oom */
    int oom;                       /* "Out of memory" */
};

struct stu_tgm_ref {
    char path[4096];
    int n_rows;
    struct stu_tgm_row row[STU_TGM_MAXROW];
};

/* Reads dir/amoebanetd-memory.csv (dir = <data>/reference). */
int stu_tgm_ref_load(const char *dir, struct stu_tgm_ref *r);

struct stu_tgm_cell {
    const struct stu_tgm_row *ref;
    struct ana_prediction *p;      /* the row's step (its stages' ledgers) */
    double params;                 /* the generator's */
    double model_gib, act_gib;     /* predicted, main.py's definitions */
    double fullest_gib;            /* the fullest GPU's peak */
    double err_params, err_model;  /* predicted / measured - 1 */
    double err_act;                /* the same; 0 for an oom row */
    int agrees;                    /* fits as measured (an oom row: does not fit) */
};

struct stu_tgm_run {
    struct stu_tgm_ref ref;
    struct mdl_topology *topo;
    char h_topo[17], h_ref[17];
    int n;
    struct stu_tgm_cell cell[STU_TGM_MAXROW];
};

int stu_tgm_predict(const struct stu_tg_opts *o, struct stu_tgm_run **out);
/* Shared with studies/stu_tgumem.h. Column col of c's row is the
 * experiment's name: "baseline" for n = 1, chunks = 1, checkpoint never
 * (ckpt indexes stu_tg_ckpt_names), else "pipeline-<n>"; copied to exp, or
 * one PS_EPARSE naming the field. */
struct stu_csv;
int stu_tgm_exp_check(const struct stu_csv *c, int col, int n, int chunks, int ckpt,
                      char *exp, size_t expn);
/* The stages' peaks summed (*total) and the fullest (*fullest), bytes. */
void stu_tgm_peaks(const struct ana_prediction *p, double *total, double *fullest);
/* Each stage's "static + activations = peak" in GiB, "; " between. */
void stu_tgm_stage_list(FILE *f, const struct ana_prediction *p);
/* <out_dir>/<stem>.md by md(f, arg) and <stem>.csv by csv(f, arg). */
int stu_tgm_write_pair(const struct stu_tg_opts *o, const char *stem,
                       void (*md)(FILE *f, const void *arg),
                       void (*csv)(FILE *f, const void *arg), const void *arg);
/* One memory experiment (shared with studies/stu_tgumem.h): GPipe on the
 * first n devices of t, model (a generator spec) cut by balance ("16,8"),
 * M micro-batches of batch / M, remat; *out (ana_prediction_free). The
 * row's errors name ref_path:line (the partition's: stu_tg_partition; a
 * row the engine refuses: "experiment <exp>: <why>"), PS_EPARSE. */
int stu_tgm_predict_one(const struct mdl_topology *t, const char *ref_path, int line,
                        const char *exp, const char *model, const char *balance, int n, int M,
                        int batch, enum sch_remat remat, struct ana_prediction **out);
void stu_tgm_run_free(struct stu_tgm_run *r);

/* The template's sections and placeholders (text/amoebanetd-memory.md). */
extern const struct stu_tmpl_sect stu_tgm_text[];
#define STU_TGM_NTEXT 6
void stu_tgm_md(FILE *f, const struct stu_tgm_run *r, const stu_tmpl *tx);
void stu_tgm_csv(FILE *f, const struct stu_tgm_run *r);
/* Both files into o->out_dir (stu_tg_write). */
int stu_tgm_write(const struct stu_tg_opts *o, const struct stu_tgm_run *r, const stu_tmpl *tx);

#endif
