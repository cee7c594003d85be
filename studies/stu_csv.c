/* The strict reader of the studies' reference CSV files (stu_ref.h for the
 * GPipe tables, stu_torchgpipe.h for torchgpipe's), split out of stu_ref.c
 * so that every study reads its figures the same way: '#' comment lines and
 * blank lines anywhere, then a header naming the columns (any order, each
 * once, no others), then one row per published cell, fields split at commas
 * (base/ps_csv.h). Every error is one PS_EPARSE message "file:line[:column]:
 * ..." naming the field (exit status 3). */
#include "studies/stu_csv.h"
#include "studies/stu_data.h"
#include "base/ps_csv.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next line that is not blank or a comment, split; 0 at the end. */
static int stu_csv_next(struct stu_csv *c)
{
    while (c->s && *c->s) {
        char *nl = strchr(c->s, '\n'), *start = c->s, *t = c->s;
        if (nl)
            *nl = 0;
        c->line++;
        c->s = nl ? nl + 1 : NULL;
        while (*t == ' ' || *t == '\t')
            t++;
        if (!*t || *t == '#' || !strcmp(t, "\r"))
            continue;
        if ((c->nf = ps_csv_split(start, c->f, c->colno, STU_CSV_MAXF)) < 0)
            return ps_error(PS_EPARSE, "%s:%d: more than %d fields", c->path, c->line, STU_CSV_MAXF);
        return 1;
    }
    return 0;
}

void stu_csv_close(struct stu_csv *c) { free(c->buf); }

int stu_csv_open(struct stu_csv *c, const char *dir, const char *name, const char *const *cols,
                    int ncols)
{
    memset(c, 0, sizeof *c);
    c->cols = cols;
    c->ncols = ncols;
    size_t len;
    int rc = stu_join(dir, name, c->path, sizeof c->path);
    if (rc < 0)
        return rc;
    if ((rc = stu_data_regular(c->path)) < 0 || (rc = ps_read_file(c->path, &c->buf, &len)) < 0)
        return rc;
    int nl, nc;
    if (ps_nul_at(c->buf, len, &nl, &nc)) {
        rc = ps_error(PS_EPARSE, "%s:%d:%d: binary data (NUL byte) in a CSV file", c->path, nl,
                      nc);
        goto err_free_buf;
    }
    c->s = c->buf + ps_bom_len(c->buf, len);
    if ((rc = stu_csv_next(c)) <= 0) {
        if (rc == 0)
            rc = ps_error(PS_EPARSE, "%s: no header (columns %s...)", c->path, cols[0]);
        goto err_free_buf;
    }
    /* a UTF-8 byte-order mark before the header line too (a file whose
     * comment lines were put before an exported CSV), skipped as at the start */
    c->f[0] += ps_bom_len(c->f[0], strlen(c->f[0]));
    for (int k = 0; k < ncols; k++)
        c->idx[k] = -1;
    for (int i = 0; i < c->nf; i++) {
        int k = 0;
        while (k < ncols && strcmp(c->f[i], cols[k]))
            k++;
        if (k == ncols) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: unknown column '%s'", c->path, c->line,
                          c->colno[i], c->f[i]);
            goto err_free_buf;
        }
        if (c->idx[k] >= 0) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: duplicate column '%s'", c->path, c->line,
                          c->colno[i], c->f[i]);
            goto err_free_buf;
        }
        c->idx[k] = i;
    }
    for (int k = 0; k < ncols; k++)
        if (c->idx[k] < 0) {
            rc = ps_error(PS_EPARSE, "%s:%d: missing column '%s'", c->path, c->line, cols[k]);
            goto err_free_buf;
        }
    return 0;

err_free_buf:
    stu_csv_close(c);
    return rc;
}

/* The next row; 0 at the end. Every column's field must be there. */
int stu_csv_row(struct stu_csv *c)
{
    int rc = stu_csv_next(c);
    if (rc <= 0)
        return rc;
    if (c->nf > c->ncols)
        return ps_error(PS_EPARSE, "%s:%d:%d: %d fields, the header has %d", c->path, c->line,
                        c->colno[c->ncols], c->nf, c->ncols);
    for (int k = 0; k < c->ncols; k++)
        if (c->idx[k] >= c->nf || !*c->f[c->idx[k]])
            return ps_error(PS_EPARSE, "%s:%d: field '%s' is missing", c->path, c->line,
                            c->cols[k]);
    c->rows++;
    return 1;
}

const char *stu_csv_field(const struct stu_csv *c, int k) { return c->f[c->idx[k]]; }

int stu_csv_col(const struct stu_csv *c, int k) { return c->colno[c->idx[k]]; }

int stu_csv_bad(const struct stu_csv *c, int k, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': %s", c->path, c->line, stu_csv_col(c, k),
                    c->cols[k], why);
}

static int range(const struct stu_csv *c, int k, int na_ok, double lo, double hi, double *v)
{
    int rc = stu_csv_num(c, k, na_ok, v);
    if (rc == 0 && !isnan(*v) && !(*v > lo && *v <= hi))
        rc = stu_csv_bad(c, k, "%g is not in (%g, %g]", *v, lo, hi);
    return rc;
}

int stu_csv_range(const struct stu_csv *c, int k, double lo, double hi, double *v)
{
    return range(c, k, 0, lo, hi, v);
}

int stu_csv_range_na(const struct stu_csv *c, int k, double lo, double hi, double *v)
{
    return range(c, k, 1, lo, hi, v);
}

/* Column k as a finite number >= 0 (na_ok: NA = NAN). */
int stu_csv_num(const struct stu_csv *c, int k, int na_ok, double *v)
{
    const char *s = stu_csv_field(c, k);
    int col = c->colno[c->idx[k]];
    if (na_ok && !strcmp(s, "NA")) {
        *v = NAN;
        return 0;
    }
    char *end;
    errno = 0;
    *v = ps_strtod(s, &end);
    if (*end || end == s || errno == ERANGE || !isfinite(*v) || *v < 0)
        return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is not a finite number >= 0%s",
                        c->path, c->line, col, c->cols[k], s, na_ok ? " or NA" : "");
    return 0;
}

int stu_csv_pos(const struct stu_csv *c, int k, int na_ok, double *v)
{
    int rc = stu_csv_num(c, k, na_ok, v);
    if (rc == 0 && !isnan(*v) && !(*v > 0))
        rc = stu_csv_bad(c, k, "a published value must be > 0 (errors are relative to it)");
    return rc;
}

int stu_csv_whole(const struct stu_csv *c, int k, int lo, int hi, int *v)
{
    double d;
    int rc = stu_csv_num(c, k, 0, &d);
    if (rc < 0)
        return rc;
    if (d != floor(d) || d < lo || d > hi)
        return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is not a whole number in "
                        "[%d, %d]", c->path, c->line, c->colno[c->idx[k]], c->cols[k],
                        stu_csv_field(c, k), lo, hi);
    *v = (int)d;
    return 0;
}

/* Index of column k's value among the n allowed, or an error naming them. */
int stu_csv_key(const struct stu_csv *c, int k, const char *const *names, int n, int *v)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(stu_csv_field(c, k), names[i])) {
            *v = i;
            return 0;
        }
    char list[128] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 names[i]);
    return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is not one of %s", c->path, c->line,
                    c->colno[c->idx[k]], c->cols[k], stu_csv_field(c, k), list);
}

int stu_csv_rows_end(const struct stu_csv *c, int want, const char *what)
{
    if (c->rows == want)
        return 0;
    return ps_error(PS_EPARSE, "%s:%d: %d rows, %s has %d", c->path, c->line, c->rows, what,
                    want);
}

int stu_csv_dup(const struct stu_csv *c, int *seen, const char *what)
{
    if (!*seen) {
        *seen = 1;
        return 0;
    }
    return ps_error(PS_EPARSE, "%s:%d: a second row for %s", c->path, c->line, what);
}

