/*
 * stu_tgumem — torchgpipe's U-Net (B, C) memory benchmark on Tesla P40s,
 * predicted row by row (part of `pipesim reproduce torchgpipe`;
 * kakaobrain/torchgpipe docs/benchmarks.rst @ fe52c4dc, the settings of
 * benchmarks/unet-memory/main.py @ a4710261): the engine's memory ledger
 * against PyTorch's total reserve, on a second network beside AmoebaNet-D
 * (studies/stu_tgmem.h).
 *
 * What main.py measures, and what is predicted for it: one mini-batch of
 * 32 images at 192 x 192, the row's balance, chunks and checkpoint mode,
 * SGD without momentum (STU_TGU_BYTES_PER_PARAM: weight and gradient in
 * FP32, main.py's param_scale = 2). The published "Memory usage" is the
 * sum over the row's GPUs of torch.cuda.max_memory_cached over two steps,
 * parameters included. The prediction: the generator's parameter count
 * (`unet:convs=B,channels=C`, models/mdl_unet.h, long skips relayed stage
 * to stage) and the sum over the stages of the ledger's peak
 * (sched/sch_cost.c). Chunks as torch.chunk cuts the batch: micro-batches
 * of ceil(batch / chunks), ceil(batch / that) of them (pipeline-8's 128
 * chunks of 32 images are 32 of one); the engine's micro-batches are
 * equal, so that size must divide the batch.
 *
 * Data: <data>/reference/unet-memory.csv (format below, citation in its
 * '#' lines), <data>/text/unet-memory.md (stu_tmpl.h); the topology is
 * stu_torchgpipe.h's (p40-pcie-8.json), its bytes_per_param replaced by
 * SGD's. Outputs: <out>/unet-memory.md and .csv, atomic, stamped with the
 * version and input hashes (a rerun reproduces them byte for byte).
 *
 * Reference columns (any order, each once): experiment ("baseline": n = 1,
 * chunks = 1, checkpoint never; else "pipeline-<n>"), n (1-8), B (1-100),
 * C (2-1024), batch (up to 4096), chunks (up to 4096), balance (n positive
 * layer counts separated by spaces summing to 44 B + 21, the generator's
 * layers), checkpoint (always, except_last, never), params_millions
 * (0.001, 1e6], memory_gib (0.001, 1e4]. Every error is one PS_EPARSE
 * "file:line[:column]: ..." naming the field (a row the engine refuses:
 * "file:line: experiment <name>: <why>"), exit status 3, found before
 * anything is written.
 *
 * Ownership: stu_tgu_predict allocates *out (stu_tgu_run_free, NULL ok),
 * which owns its predictions. Cost: one ana_predict per row (up to 32
 * micro-batches on 8 stages of up to 2133 layers), milliseconds.
 */
#ifndef STU_TGUMEM_H
#define STU_TGUMEM_H

#include <stdio.h>

#include "studies/stu_torchgpipe.h"
#include "studies/stu_tmpl.h"

#define STU_TGU_FILE "unet-memory"
/* main.py's optimizer: SGD(lr=0.1), no momentum: "param + grad". */
#define STU_TGU_BYTES_PER_PARAM 8.0
#define STU_TGU_MAXROW 8

struct stu_tgu_row {
    char exp[32];                  /* "baseline", "pipeline-4" */
    int n, B, C, batch, chunks, line;
    char balance[128];             /* "472,54,36,515" */
    enum sch_remat remat;
    double params_m;               /* millions, as printed */
    double mem_gib;                /* "Memory usage" */
};

struct stu_tgu_ref {
    char path[4096];
    int n_rows;
    struct stu_tgu_row row[STU_TGU_MAXROW];
};

/* Reads dir/unet-memory.csv (dir = <data>/reference). */
int stu_tgu_ref_load(const char *dir, struct stu_tgu_ref *r);

struct stu_tgu_cell {
    const struct stu_tgu_row *ref;
    struct ana_prediction *p;      /* the row's step (its stages' ledgers) */
    int size, M;                   /* torch.chunk's micro-batches */
    enum sch_remat remat;          /* as run: stu_tg_remat_run (pipeline-8's 32 of
                                      128 chunks asked: always) */
    double params;                 /* the generator's */
    double mem_gib, model_gib;     /* predicted: the stages' peaks summed; 8 B x params */
    double fullest_gib;            /* the fullest GPU's peak */
    double err_params, err_mem;    /* predicted / measured - 1 */
};

struct stu_tgu_run {
    struct stu_tgu_ref ref;
    struct mdl_topology *topo;
    char h_topo[17], h_ref[17];
    int n;
    struct stu_tgu_cell cell[STU_TGU_MAXROW];
};

int stu_tgu_predict(const struct stu_tg_opts *o, struct stu_tgu_run **out);
void stu_tgu_run_free(struct stu_tgu_run *r);

/* The template's sections and placeholders (text/unet-memory.md). */
extern const struct stu_tmpl_sect stu_tgu_text[];
#define STU_TGU_NTEXT 6
/* Both files into o->out_dir (stu_tg_write). */
int stu_tgu_write(const struct stu_tg_opts *o, const struct stu_tgu_run *r, const stu_tmpl *tx);

#endif
