/*
 * stu_ref — the published figures the GPipe reproduction compares with, read
 * at run time from the CSV files in <data>/reference/ (studies/gpipe/: each
 * file cites its paper and table in its '#' lines, README.md beside them).
 *
 * Format: '#' comment lines and blank lines anywhere, then a header naming
 * the columns (any order, each once, no others), then one row per published
 * cell; fields are split at commas (base/ps_csv.h), numbers must be finite
 * and >= 0, NA (Table 3 only) = not available; a normalized throughput
 * (Tables 2 and 3) and a torchgpipe speed-up must lie in (0.001, 1000]
 * (STU_REF_RATIO_MIN, _MAX: the tables' own are 1 to 6.3; past these the
 * errors are no figures). Every error is one
 * PS_EPARSE message "file:line[:column]: ..." naming the field (exit
 * status 3): a missing or unknown column, a missing field, a non-number, a
 * key out of the table, a duplicate row, a wrong row count.
 *
 * Ownership: stu_ref_load fills a caller's struct; nothing to free.
 * Cost: four files of a few hundred bytes.
 */
#ifndef STU_REF_H
#define STU_REF_H

#define STU_REF_NCOL 5 /* Table 1 columns per model */
/* the range of a published ratio (normalized throughput, speed-up) */
#define STU_REF_RATIO_MIN 1e-3
#define STU_REF_RATIO_MAX 1e3

struct stu_ref_t1 {
    char name[16];        /* the paper's column: "Naive-1", "Pipeline-8" */
    int K, naive, L, D;   /* D = 0: Transformer */
    double params;        /* count */
    double pmem, act;     /* bytes (the file's GB = 1e9 or GiB times its unit) */
    int line;             /* its line in table1.csv (stu_ref.t1_path) */
};

struct stu_ref {
    struct stu_ref_t1 t1[2][STU_REF_NCOL]; /* [AmoebaNet-D, Transformer][file order] */
    char t1_path[4096];                    /* the file they came from */
    double t2[2][3][3];                    /* [model][M = 1, 4, 32][K = 2, 4, 8] */
    double t3[2][3];                       /* [model][K = 2, 4, 8], M = 32; NAN = NA */
    double tg_speedup[3][3];               /* torchgpipe [K = 2, 4, 8][M = 1, 4, 32] */
    char tg_balance[3][3][64];             /* the same cells, "2,2,2,3" */
};

/* Reads dir/table1.csv, table2.csv, table3.csv, torchgpipe.csv into *r. */
int stu_ref_load(const char *dir, struct stu_ref *r);

#endif
