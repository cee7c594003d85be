/*
 * stu_torchgpipe — torchgpipe's published speed benchmarks on 8 x Tesla
 * P40 (`pipesim reproduce torchgpipe`; kakaobrain/torchgpipe
 * docs/benchmarks.rst @ fe52c4dc): AmoebaNet-D (18, 256) (the settings of
 * benchmarks/amoebanetd-speed/main.py @ a4710261), ResNet-101
 * (benchmarks/resnet101-speed/main.py @ fe52c4dc) and U-Net (5, 64)
 * (benchmarks/unet-speed/main.py @ fe52c4dc; its long skips relayed from
 * stage to stage, models/mdl_unet.h). Every row of a table is
 * predicted in absolute samples/s with its own mini-batch, chunks, balance
 * and checkpoint mode, then its speed-up over the benchmark's base row,
 * beside the measured figures, with every deviation over 10 % listed and
 * the fact the source does not give.
 *
 * As main.py measures it: an epoch is dataset_size samples (10 000,
 * 50 000 and 10 000) in mini-batches of `batch`, the last one the remainder; each
 * mini-batch is cut as torch.chunk cuts it (chunks of ceil(batch / m)
 * samples, ceil(batch / size) of them, the last one smaller); throughput =
 * dataset_size / the epoch's time. The engine runs equal micro-batches, so
 * a mini-batch that torch.chunk cuts unevenly is simulated as `count`
 * chunks of the full size (at most size - 1 extra samples, e.g. 25 005 for
 * 25 000 in 1667 chunks); the epoch is the full mini-batches' steps plus
 * the last one's.
 *
 * Data: <data>/reference/<file>.csv (the measured rows, their citation in
 * its '#' lines; format below) and <data>/text/<file>.md (the prose,
 * stu_tmpl.h); <data> is --data, default the data folder's torchgpipe/
 * (base/ps_data.h: studies/torchgpipe in the source tree). The topology is
 * <topo_dir>/p40-pcie-8.json (default the data folder's topologies/); its
 * bytes_per_param is replaced by the
 * optimizer's (STU_TG_BYTES_PER_PARAM). Outputs: <out>/<file>.md and
 * <out>/<file>.csv, atomic (ps_afile), stamped with the version and the
 * input hashes, never dates or paths, so a rerun reproduces them byte for
 * byte.
 *
 * <file>.csv columns (any order, each once): experiment (torchgpipe's name:
 * "n<K>m<M>" for AmoebaNet-D; "baseline" (n = m = 1, checkpoint never: no
 * GPipe) or "pipeline-<K>" for ResNet-101 and U-Net), n, m, batch (>= m), balance (n
 * positive layer counts separated by spaces, the same total in every row),
 * checkpoint (always, except_last, never), samples_per_s (in (0.001, 1e7]:
 * STU_TG_SPS_MIN, _MAX), speedup (in (0.001, 1000]; the published ratio to
 * the base row, which must be there; it must agree with samples_per_s to
 * the 3 decimals printed). Every error is one
 * PS_EPARSE "file:line[:column]: field '...': ..." (exit status 3), found
 * before anything is written.
 *
 * Ownership: stu_tg_ref_load fills a caller's struct; stu_tg_predict
 * allocates *out (stu_tg_run_free, NULL ok), which owns its predictions.
 * Cost: one or two ana_predict per row (its K = 1 baseline skipped), each
 * at most a few hundred thousand ops: milliseconds; stu_torchgpipe_run adds,
 * per row off by over 10 %, about 170 row predictions (stu_tgneed.h): a
 * fraction of a second for the bundled tables.
 */
#ifndef STU_TORCHGPIPE_H
#define STU_TORCHGPIPE_H

#include <stdio.h>

#include "analysis/ana_predict.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_schedule.h"

/* the ranges of a measured row's samples_per_s and speedup (the files' own
 * are 24 to 412 and 0.86 to 4.3; past these its cells are no figures) */
#define STU_TG_SPS_MIN 1e-3
#define STU_TG_SPS_MAX 1e7
#define STU_TG_SPEEDUP_MIN 1e-3
#define STU_TG_SPEEDUP_MAX 1e3
#define STU_TG_DATA "torchgpipe"
#define STU_TG_TOPOLOGY "p40-pcie-8.json"

/* One published benchmark. */
struct stu_tg_bench {
    const char *name;     /* benchmarks/<name>/main.py */
    const char *title;    /* "AmoebaNet-D (18, 256)" */
    const char *model;    /* the generator spec */
    const char *model_h;  /* the generator's header, cited in the outputs */
    const char *file;     /* reference/<file>.csv, text/<file>.md, <out>/<file>.{md,csv} */
    const char *base;     /* the experiment the speed-ups are over */
    const char *commit;   /* of main.py */
    int dataset;          /* main.py's dataset_size: samples per epoch */
    int nm_names;         /* 1: n<K>m<M>; 0: baseline / pipeline-<K> */
    int relayed;          /* 1: the model relays long skips (models/mdl_unet.h):
                             rows of more than one partition also get note E */
};
#define STU_TG_NBENCH 3
extern const struct stu_tg_bench stu_tg_bench[STU_TG_NBENCH];
/* torchgpipe's benchmark trains with torch.optim.SGD(lr=0.1): no momentum,
 * so no optimizer state: an FP32 weight and its FP32 gradient. */
#define STU_TG_BYTES_PER_PARAM 8.0
#define STU_TG_MAXROW 16

struct stu_tg_row {
    char exp[32];            /* "n2m1", "pipeline-4" */
    int n, m, batch, line;   /* line: in speed.csv, for errors */
    char balance[128];       /* "7,17" */
    enum sch_remat remat;
    double samples_s, speedup;
};

struct stu_tg_ref {
    const struct stu_tg_bench *bench;
    char path[4096];         /* <dir>/<file>.csv */
    int n_rows, base;        /* base: the bench's base row */
    struct stu_tg_row row[STU_TG_MAXROW];
};

/* Reads dir/<b->file>.csv (dir = <data>/reference). */
int stu_tg_ref_load(const char *dir, const struct stu_tg_bench *b, struct stu_tg_ref *r);
struct stu_csv;
/* Column k of c's current row: n positive layer counts separated by spaces
 * ("7 17"), written to out as "7,17" (outn bytes), their sum in *total; one
 * PS_EPARSE naming file:line:column and the field 'balance', n by its
 * column's name nname ("n", or the GPipe reference's "K"). */
int stu_tg_balance(const struct stu_csv *c, int k, int n, const char *nname, char *out,
                   size_t outn, int *total);

struct stu_out;

struct stu_tg_opts {
    const char *out_dir;   /* results/torchgpipe; created if missing */
    const char *topo_dir;  /* where p40-pcie-8.json is; NULL = the data folder's */
    const char *data_dir;  /* reference/, text/; NULL = the data folder's STU_TG_DATA */
    FILE *log;             /* one line per file written; NULL = quiet */
    const struct stu_tg_bench *bench; /* stu_tg_predict's; NULL = stu_tg_bench[0] */
    struct stu_out *out;   /* set by stu_torchgpipe_run: files are staged there
                              (studies/stu_out.h) and published together */
};

/* What one hardware figure alone would have to be for a row's prediction
 * to equal its measurement (studies/stu_tgneed.h): per knob of
 * analysis/ana_sens.h, the factor on it (NaN: none in [1/64, 64]) and the
 * row's elasticity to it at the preset. */
struct stu_tg_need {
    double elasticity[ANA_SENS_KNOBS]; /* of the row's samples/s */
    double factor[ANA_SENS_KNOBS];
};

struct stu_tg_cell {
    const struct stu_tg_row *ref;
    struct ana_prediction *p;          /* the row's predicted step */
    int size, count;                   /* torch.chunk of a full mini-batch */
    int last, last_size, last_count;   /* the epoch's last mini-batch (0: none) */
    int n_full;                        /* full mini-batches per epoch */
    double epoch_s;                    /* n_full steps + the last one's */
    double pred, meas, err;            /* samples/s; err = pred / meas - 1 */
    double ratio_pred, ratio_meas, ratio_err; /* over the base row */
    int has_need;                      /* need filled: samples/s off by over 10 %
                                          (stu_torchgpipe_run, before writing) */
    struct stu_tg_need need;
};

struct stu_tg_run {
    struct stu_tg_ref ref;
    struct mdl_topology *topo;
    struct mdl_profile *prof;
    char h_topo[17], h_ref[17];        /* FNV-1a 64 of the input files */
    int n;
    struct stu_tg_cell cell[STU_TG_MAXROW];
};

/* Shared by the study's files (speed and memory). The checkpoint modes as
 * the reference files name them, [always, except_last, never]. */
extern const char *const stu_tg_ckpt_names[3];
extern const enum sch_remat stu_tg_ckpt_modes[3];
const char *stu_tg_remat_name(enum sch_remat m);
/* The checkpoint mode torchgpipe runs when `chunks` were asked for and
 * torch.chunk made `count`: its checkpoint_stop counts the chunks asked
 * (gpipe.py: 'except_last': self.chunks-1), so except_last with fewer
 * chunks than asked checkpoints every one: always. */
enum sch_remat stu_tg_remat_run(enum sch_remat asked, int chunks, int count);
/* A reference row's balance ("7,17") as a partition of p into n stages on
 * t's first devices; one PS_EPARSE naming path:line and the field ('n':
 * more partitions than t has devices; 'balance': what
 * sch_partition_parse refused, with model's layer count). */
int stu_tg_partition(const char *path, int line, const struct mdl_topology *t,
                     const struct mdl_profile *p, const char *model, int n, const char *balance,
                     struct sch_partition **part);
/* torch.chunk's cut of `batch` samples into m chunks: chunks of
 * ceil(batch / m), ceil(batch / size) of them (the last one smaller when
 * size does not divide batch). */
void stu_tg_chunks(int batch, int m, int *size, int *count);
/* A balance "7,17" as a CSV field, "7 17" (the reference files' form). */
const char *stu_tg_balance_csv(const char *balance, char *buf, size_t n);
/* "+1.2 %", in bold ("**+12.0 %**") past 10 %; buf of n bytes. */
const char *stu_tg_pct(double e, char *buf, size_t n);
/* An output's stamp in comment syntax open / cont / close: the version,
 * the topology's and reference/<file>.csv's hashes, the model line, and
 * benchmarks/<bench>/main.py @ commit. */
void stu_tg_stamp(FILE *f, const char *open, const char *cont, const char *close,
                  const char *h_topo, const char *file, const char *h_ref, const char *model,
                  const char *bench, const char *commit);
/* <out_dir>/name written by fn(f, arg) and staged in o->out (studies/stu_out.h). */
int stu_tg_write(const struct stu_tg_opts *o, const char *name,
                 void (*fn)(FILE *f, const void *arg), const void *arg);
/* <topo_dir>/p40-pcie-8.json (topo_dir NULL: the data folder's). */
int stu_tg_topo_path(const struct stu_tg_opts *o, char *buf, size_t n);
/* That topology loaded into *t (mdl_topology_free), its FNV-1a 64 hash in
 * hash, its bytes_per_param replaced by a benchmark optimizer's bpp. */
int stu_tg_topology(const struct stu_tg_opts *o, double bpp, struct mdl_topology **t,
                    char hash[17]);
/* <data>/sub: o->data_dir, or the data folder's STU_TG_DATA. */
int stu_tg_data_sub(const struct stu_tg_opts *o, const char *sub, char *buf, size_t n);
/* Loads the topology, the model and the reference, predicts every row. */
int stu_tg_predict(const struct stu_tg_opts *o, struct stu_tg_run **out);
/* Row i's predicted samples/s (main.py's epoch, as stu_tg_predict has it)
 * with the run's profile on topology t instead of the run's: what a
 * hardware figure changes (analysis/ana_sens.h). Two simulations. */
int stu_tg_row_samples(const struct stu_tg_run *r, int i, const struct mdl_topology *t,
                       double *samples_s);
void stu_tg_run_free(struct stu_tg_run *r);
/* For every benchmark: stu_tg_predict, the templates, then the outputs
 * (every benchmark's inputs are read and checked, and every file read or
 * written declared, base/ps_afile.h: the registry reset first, as one
 * command's, and left holding them, before anything is written). */
int stu_torchgpipe_run(const struct stu_tg_opts *o);

#endif
