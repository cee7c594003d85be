/*
 * stu_torchgpipe — torchgpipe's AmoebaNet-D (18, 256) speed benchmark
 * (`pipesim reproduce torchgpipe`): every row of the published table
 * (kakaobrain/torchgpipe docs/benchmarks.rst @ fe52c4dc, the settings of
 * benchmarks/amoebanetd-speed/main.py @ a4710261) predicted in absolute
 * samples/s with its own mini-batch, balance and checkpoint mode, then the
 * speed-ups over the n = 2, m = 1 row, beside the measured figures, with
 * every deviation over 10 % listed and the fact the source does not give.
 *
 * Data: <data>/reference/speed.csv (the measured rows, their citation in
 * its '#' lines; format below) and <data>/text/speed.md (the prose,
 * stu_tmpl.h); <data> is --data, default the data folder's torchgpipe/
 * (base/ps_data.h: studies/torchgpipe in the source tree). The topology is
 * <topo_dir>/p40-pcie-8.json (default the data folder's topologies/); its bytes_per_param is replaced by the
 * optimizer's (STU_TG_BYTES_PER_PARAM). Outputs: <out>/speed.md and
 * <out>/speed.csv, atomic (ps_afile), stamped with the version and the input
 * hashes, never dates or paths, so a rerun reproduces them byte for byte.
 *
 * speed.csv columns (any order, each once): experiment (torchgpipe's name,
 * "n<K>m<M>"), n, m, batch (divisible by m), balance (n positive layer
 * counts separated by spaces, the same total in every row), checkpoint
 * (always, except_last, never), samples_per_s (> 0), speedup (the
 * published ratio to the n = 2, m = 1 row, which must be there; it must
 * agree with samples_per_s to the 3 decimals printed). Every error is one
 * PS_EPARSE "file:line[:column]: field '...': ..." (exit status 3), found
 * before anything is written.
 *
 * Ownership: stu_tg_ref_load fills a caller's struct; stu_tg_predict
 * allocates *out (stu_tg_run_free, NULL ok), which owns its predictions.
 * Cost: one ana_predict per row (with its K = 1 baseline skipped), each a
 * few thousand ops: milliseconds.
 */
#ifndef STU_TORCHGPIPE_H
#define STU_TORCHGPIPE_H

#include <stdio.h>

#include "analysis/ana_predict.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_schedule.h"

#define STU_TG_DATA "torchgpipe"
#define STU_TG_TOPOLOGY "p40-pcie-8.json"
#define STU_TG_MODEL "amoebanet:L=18,D=256"
/* torchgpipe's benchmark trains with torch.optim.SGD(lr=0.1): no momentum,
 * so no optimizer state: an FP32 weight and its FP32 gradient. */
#define STU_TG_BYTES_PER_PARAM 8.0
#define STU_TG_MAXROW 16

struct stu_tg_row {
    char exp[32];            /* "n2m1" */
    int n, m, batch, line;   /* line: in speed.csv, for errors */
    char balance[128];       /* "7,17" */
    enum sch_remat remat;
    double samples_s, speedup;
};

struct stu_tg_ref {
    char path[4096];         /* <dir>/speed.csv */
    int n_rows, base;        /* base: the n = 2, m = 1 row */
    struct stu_tg_row row[STU_TG_MAXROW];
};

/* Reads dir/speed.csv (dir = <data>/reference). */
int stu_tg_ref_load(const char *dir, struct stu_tg_ref *r);

struct stu_tg_opts {
    const char *out_dir;   /* results/torchgpipe; created if missing */
    const char *topo_dir;  /* where p40-pcie-8.json is; NULL = the data folder's */
    const char *data_dir;  /* reference/, text/; NULL = the data folder's STU_TG_DATA */
    FILE *log;             /* one line per file written; NULL = quiet */
};

struct stu_tg_cell {
    const struct stu_tg_row *ref;
    struct ana_prediction *p;          /* the row's predicted step */
    double pred, meas, err;            /* samples/s; err = pred / meas - 1 */
    double ratio_pred, ratio_meas, ratio_err; /* over the base row */
};

struct stu_tg_run {
    struct stu_tg_ref ref;
    struct mdl_topology *topo;
    struct mdl_profile *prof;
    char h_topo[17], h_ref[17];        /* FNV-1a 64 of the input files */
    int n;
    struct stu_tg_cell cell[STU_TG_MAXROW];
};

/* Loads the topology, the model and the reference, predicts every row. */
int stu_tg_predict(const struct stu_tg_opts *o, struct stu_tg_run **out);
void stu_tg_run_free(struct stu_tg_run *r);
/* stu_tg_predict, the templates, then the outputs. */
int stu_torchgpipe_run(const struct stu_tg_opts *o);

#endif
