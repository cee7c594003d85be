/* The reference figures' CSV files (see stu_ref.h): one small strict reader
 * (header by name, fields by column) and a loader per table. */
#include "studies/stu_ref.h"
#include "base/ps_csv.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXF 16

struct csv {
    char path[4096];
    char *buf, *s;
    int line, nf, rows;
    const char *const *cols; /* the columns, in the order the loader reads them */
    int ncols, idx[MAXF];    /* idx[c]: the field of column c */
    char *f[MAXF];
    int colno[MAXF];
};

/* The next line that is not blank or a comment, split; 0 at the end. */
static int next_line(struct csv *c)
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
        if ((c->nf = ps_csv_split(start, c->f, c->colno, MAXF)) < 0)
            return ps_error(PS_EPARSE, "%s:%d: more than %d fields", c->path, c->line, MAXF);
        return 1;
    }
    return 0;
}

static void csv_close(struct csv *c) { free(c->buf); }

static int csv_open(struct csv *c, const char *dir, const char *name, const char *const *cols,
                    int ncols)
{
    memset(c, 0, sizeof *c);
    c->cols = cols;
    c->ncols = ncols;
    if ((size_t)snprintf(c->path, sizeof c->path, "%s/%s", dir, name) >= sizeof c->path)
        return ps_error(PS_EUSAGE, "path too long: %s/%s", dir, name);
    size_t len;
    int rc = ps_read_file(c->path, &c->buf, &len);
    if (rc < 0)
        return rc;
    if (memchr(c->buf, 0, len)) {
        rc = ps_error(PS_EPARSE, "%s: binary data (NUL byte) in a CSV file", c->path);
        goto err_free_buf;
    }
    c->s = c->buf + ps_bom_len(c->buf, len);
    if ((rc = next_line(c)) <= 0) {
        if (rc == 0)
            rc = ps_error(PS_EPARSE, "%s: no header (columns %s...)", c->path, cols[0]);
        goto err_free_buf;
    }
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
    csv_close(c);
    return rc;
}

/* The next row; 0 at the end. Every column's field must be there. */
static int csv_row(struct csv *c)
{
    int rc = next_line(c);
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

static const char *field(const struct csv *c, int k) { return c->f[c->idx[k]]; }

/* Column k as a finite number >= 0 (na_ok: NA = NAN). */
static int num(const struct csv *c, int k, int na_ok, double *v)
{
    const char *s = field(c, k);
    int col = c->colno[c->idx[k]];
    if (na_ok && !strcmp(s, "NA")) {
        *v = NAN;
        return 0;
    }
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (*end || end == s || errno == ERANGE || !isfinite(*v) || *v < 0)
        return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is not a finite number >= 0%s",
                        c->path, c->line, col, c->cols[k], s, na_ok ? " or NA" : "");
    return 0;
}

static int whole(const struct csv *c, int k, int lo, int hi, int *v)
{
    double d;
    int rc = num(c, k, 0, &d);
    if (rc < 0)
        return rc;
    if (d != floor(d) || d < lo || d > hi)
        return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is not a whole number in "
                        "[%d, %d]", c->path, c->line, c->colno[c->idx[k]], c->cols[k],
                        field(c, k), lo, hi);
    *v = (int)d;
    return 0;
}

/* Index of column k's value among the n allowed, or an error naming them. */
static int key(const struct csv *c, int k, const char *const *names, int n, int *v)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(field(c, k), names[i])) {
            *v = i;
            return 0;
        }
    char list[128] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 names[i]);
    return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is not one of %s", c->path, c->line,
                    c->colno[c->idx[k]], c->cols[k], field(c, k), list);
}

static int rows_end(const struct csv *c, int want, const char *what)
{
    if (c->rows == want)
        return 0;
    return ps_error(PS_EPARSE, "%s:%d: %d rows, %s has %d", c->path, c->line, c->rows, what,
                    want);
}

static int dup(const struct csv *c, int *seen, const char *what)
{
    if (!*seen) {
        *seen = 1;
        return 0;
    }
    return ps_error(PS_EPARSE, "%s:%d: a second row for %s", c->path, c->line, what);
}

static const char *const models[2] = { "AmoebaNet-D", "Transformer" };
static const char *const Ks[3] = { "2", "4", "8" }, *const Ms[3] = { "1", "4", "32" };

static int load_t1(const char *dir, struct stu_ref *r)
{
    static const char *const cols[] = { "model", "column", "K", "L", "D", "params",
                                        "param_memory", "peak_activation_memory", "unit" };
    static const char *const units[] = { "GB", "GiB" };
    struct csv c;
    int n[2] = { 0, 0 }, rc = csv_open(&c, dir, "table1.csv", cols, 9);
    if (rc < 0)
        return rc;
    while ((rc = csv_row(&c)) > 0) {
        int m, u;
        if ((rc = key(&c, 0, models, 2, &m)) < 0)
            break;
        if (n[m] == STU_REF_NCOL) {
            rc = ps_error(PS_EPARSE, "%s:%d: more than %d rows for %s", c.path, c.line,
                          STU_REF_NCOL, models[m]);
            break;
        }
        struct stu_ref_t1 *t = &r->t1[m][n[m]++];
        double unit;
        if ((rc = whole(&c, 2, 1, 1 << 20, &t->K)) < 0 || (rc = whole(&c, 3, 1, 1 << 20, &t->L)) < 0 ||
            (rc = whole(&c, 4, 0, 1 << 20, &t->D)) < 0 || (rc = num(&c, 5, 0, &t->params)) < 0 ||
            (rc = num(&c, 6, 0, &t->pmem)) < 0 || (rc = num(&c, 7, 0, &t->act)) < 0 ||
            (rc = key(&c, 8, units, 2, &u)) < 0)
            break;
        /* The column is the paper's name: Naive-K or Pipeline-K. */
        char want[2][32];
        snprintf(want[0], sizeof want[0], "Naive-%d", t->K);
        snprintf(want[1], sizeof want[1], "Pipeline-%d", t->K);
        const char *name = field(&c, 1);
        if (strcmp(name, want[0]) && strcmp(name, want[1])) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'column': '%s' is neither %s nor %s (K = "
                          "%d)", c.path, c.line, c.colno[c.idx[1]], name, want[0], want[1],
                          t->K);
            break;
        }
        if ((m == 0) != (t->D > 0)) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'D': %s", c.path, c.line,
                          c.colno[c.idx[4]], m ? "must be 0 for the Transformer"
                                               : "must be > 0 for AmoebaNet-D");
            break;
        }
        snprintf(t->name, sizeof t->name, "%s", name);
        t->naive = name[0] == 'N';
        unit = u ? 1073741824.0 : 1e9;
        t->pmem *= unit;
        t->act *= unit;
    }
    if (rc == 0)
        rc = rows_end(&c, 2 * STU_REF_NCOL, "Table 1 (5 columns per model)");
    csv_close(&c);
    return rc;
}

/* Tables 2 and 3: model, M, K, throughput. */
static int load_tput(const char *dir, const char *name, int t3, struct stu_ref *r)
{
    static const char *const cols[] = { "model", "M", "K", "throughput" };
    struct csv c;
    int seen[2][3][3] = { { { 0 } } }, rc = csv_open(&c, dir, name, cols, 4);
    if (rc < 0)
        return rc;
    while ((rc = csv_row(&c)) > 0) {
        int m, j, k;
        double v;
        if ((rc = key(&c, 0, models, 2, &m)) < 0 ||
            (rc = key(&c, 1, t3 ? Ms + 2 : Ms, t3 ? 1 : 3, &j)) < 0 ||
            (rc = key(&c, 2, Ks, 3, &k)) < 0 || (rc = num(&c, 3, t3, &v)) < 0)
            break;
        char what[64];
        snprintf(what, sizeof what, "%s M = %s K = %s", models[m], field(&c, 1), Ks[k]);
        if ((rc = dup(&c, &seen[m][j][k], what)) < 0)
            break;
        if (t3)
            r->t3[m][k] = v;
        else
            r->t2[m][j][k] = v;
    }
    if (rc == 0)
        rc = rows_end(&c, t3 ? 6 : 18, t3 ? "Table 3 (2 models x K 2, 4, 8)"
                                          : "Table 2 (2 models x M 1, 4, 32 x K 2, 4, 8)");
    csv_close(&c);
    return rc;
}

static int load_tg(const char *dir, struct stu_ref *r)
{
    static const char *const cols[] = { "K", "M", "speedup", "balance" };
    struct csv c;
    int seen[3][3] = { { 0 } }, rc = csv_open(&c, dir, "torchgpipe.csv", cols, 4);
    if (rc < 0)
        return rc;
    while ((rc = csv_row(&c)) > 0) {
        int k, j;
        if ((rc = key(&c, 0, Ks, 3, &k)) < 0 || (rc = key(&c, 1, Ms, 3, &j)) < 0 ||
            (rc = num(&c, 2, 0, &r->tg_speedup[k][j])) < 0)
            break;
        char what[32];
        snprintf(what, sizeof what, "K = %s M = %s", Ks[k], Ms[j]);
        if ((rc = dup(&c, &seen[k][j], what)) < 0)
            break;
        /* "2 2 3" -> "2,2,3": K positive layer counts. */
        char *b = r->tg_balance[k][j], *s = (char *)field(&c, 3);
        size_t o = 0;
        int parts = 0;
        char *save = NULL;
        for (char *tok = strtok_r(s, " \t", &save); tok && rc == 0;
             tok = strtok_r(NULL, " \t", &save)) {
            char *end;
            long v = strtol(tok, &end, 10);
            if (*end || v < 1 || v > 1 << 20 ||
                o + strlen(tok) + 2 > sizeof r->tg_balance[k][j])
                rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'balance': '%s' is not a positive "
                              "layer count", c.path, c.line, c.colno[c.idx[3]], tok);
            else
                o += (size_t)sprintf(b + o, "%s%ld", parts++ ? "," : "", v);
        }
        if (rc == 0 && parts != atoi(Ks[k]))
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'balance': %d counts for K = %s",
                          c.path, c.line, c.colno[c.idx[3]], parts, Ks[k]);
        if (rc < 0)
            break;
    }
    if (rc == 0)
        rc = rows_end(&c, 9, "torchgpipe's table (K 2, 4, 8 x M 1, 4, 32)");
    csv_close(&c);
    return rc;
}

int stu_ref_load(const char *dir, struct stu_ref *r)
{
    memset(r, 0, sizeof *r);
    int rc;
    if ((rc = load_t1(dir, r)) < 0 || (rc = load_tput(dir, "table2.csv", 0, r)) < 0 ||
        (rc = load_tput(dir, "table3.csv", 1, r)) < 0 || (rc = load_tg(dir, r)) < 0)
        return rc;
    return 0;
}
