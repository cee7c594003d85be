/*
 * stu_csv — the strict reader every study's reference figures go through
 * (stu_ref.c: the GPipe tables; stu_torchgpipe_ref.c: torchgpipe's).
 *
 * Format: '#' comment lines and blank lines anywhere, then a header naming
 * the columns (any order, each once, no others), then one row per published
 * cell; fields are split at commas (base/ps_csv.h). Every error is one
 * PS_EPARSE message "file:line[:column]: ..." naming the field (exit status
 * 3): a missing or unknown column, a missing field, a non-number, a value
 * out of its set, a duplicate row, a wrong row count.
 *
 * Ownership: stu_csv_open reads the whole file into c (stu_csv_close frees
 * it); fields point into that buffer until the next stu_csv_row.
 * Cost: one pass over the file.
 */
#ifndef STU_CSV_H
#define STU_CSV_H

#define STU_CSV_MAXF 16

struct stu_csv {
    char path[4096];
    char *buf, *s;
    int line, nf, rows;
    const char *const *cols; /* the columns, in the order the loader reads them */
    int ncols, idx[STU_CSV_MAXF]; /* idx[c]: the field of column c */
    char *f[STU_CSV_MAXF];
    int colno[STU_CSV_MAXF];
};

/* Reads dir/name and its header against cols[0..ncols). */
int stu_csv_open(struct stu_csv *c, const char *dir, const char *name, const char *const *cols,
                 int ncols);
void stu_csv_close(struct stu_csv *c);
/* The next row, every column's field present; 0 at the end. */
int stu_csv_row(struct stu_csv *c);
/* Column k's text in the current row. */
const char *stu_csv_field(const struct stu_csv *c, int k);
/* Column k's column number in the file (for messages). */
int stu_csv_col(const struct stu_csv *c, int k);
/* PS_EPARSE "file:line:column: field '<column k>': <printf(fmt, ...)>". */
int stu_csv_bad(const struct stu_csv *c, int k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Column k as a finite number in (lo, hi] (stu_csv_range_na: or NA = NAN). */
int stu_csv_range(const struct stu_csv *c, int k, double lo, double hi, double *v);
int stu_csv_range_na(const struct stu_csv *c, int k, double lo, double hi, double *v);
/* Column k as a finite number >= 0 (na_ok: NA = NAN). */
int stu_csv_num(const struct stu_csv *c, int k, int na_ok, double *v);
/* stu_csv_num, and > 0 (a published value errors are relative to; NA
 * passes when na_ok). */
int stu_csv_pos(const struct stu_csv *c, int k, int na_ok, double *v);
/* Column k as a whole number in [lo, hi]. */
int stu_csv_whole(const struct stu_csv *c, int k, int lo, int hi, int *v);
/* Index of column k's value among names[0..n), or an error naming them. */
int stu_csv_key(const struct stu_csv *c, int k, const char *const *names, int n, int *v);
/* An error unless the file had `want` rows (`what` names the table). */
int stu_csv_rows_end(const struct stu_csv *c, int want, const char *what);
/* An error if *seen (a second row for `what`); else sets it. */
int stu_csv_dup(const struct stu_csv *c, int *seen, const char *what);

#endif
