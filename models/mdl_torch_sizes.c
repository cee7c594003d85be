/* mdl_torch_sizes — the sidecar CSV of layer sizes beside a torch trace
 * (see mdl_torch.h): header naming the columns, one row per layer, '#'
 * comments. Required: name, params, out_bytes, stash_bytes; optional: kind,
 * at_batch (then equal on every row), stash_shared_bytes (<= stash_bytes:
 * what the layer before keeps too, models/mdl_profile.h). */
#include "models/mdl_torch.h"
#include "base/ps_afile.h"
#include "base/ps_csv.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { S_NAME, S_KIND, S_PARAMS, S_OUT, S_STASH, S_BATCH, S_SHARED, S_N };
static const char *const cols[S_N] = { "name", "kind", "params", "out_bytes",
                                       "stash_bytes", "at_batch", "stash_shared_bytes" };

/* A row's place: file, line, and each field's column (as a profile's errors). */
struct at {
    const char *path;
    int line;
    const int *colno;
};

static int number(const struct at *a, int fi, const char *col, const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = ps_strtod(s, &end);
    int c = a->colno[fi];
    if (!*s || *end)
        return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is not a number", a->path,
                        a->line, c, col, s);
    if (errno == ERANGE) /* a number, but beyond a double's range */
        return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is out of range (%s)", a->path,
                        a->line, c, col, s, fabs(*v) > 1 ? "magnitude above 1.8e308"
                                                         : "nonzero but below 2.2e-308");
    if (!isfinite(*v) || *v < 0)
        return ps_error(PS_EINVAL, "%s:%d:%d: field '%s' must be finite and >= 0, got %s",
                        a->path, a->line, c, col, s);
    return 0;
}

static int header(const char *path, int line, char **f, const int *colno, int n, int *idx)
{
    for (int c = 0; c < S_N; c++)
        idx[c] = -1;
    for (int i = 0; i < n; i++) {
        int c = 0;
        while (c < S_N && strcmp(f[i], cols[c]))
            c++;
        if (c == S_N)
            return ps_error(PS_EPARSE, "%s:%d:%d: unknown column '%s'", path, line, colno[i],
                            f[i]);
        if (idx[c] >= 0)
            return ps_error(PS_EPARSE, "%s:%d:%d: duplicate column '%s'", path, line,
                            colno[i], f[i]);
        idx[c] = i;
    }
    static const int need[] = { S_NAME, S_PARAMS, S_OUT, S_STASH };
    for (size_t k = 0; k < sizeof need / sizeof *need; k++)
        if (idx[need[k]] < 0)
            return ps_error(PS_EPARSE, "%s:%d: missing column '%s'", path, line,
                             cols[need[k]]);
    return 0;
}

static int row(const struct at *a, char **f, int n, int ncols, const int *idx,
               struct mdl_torch_size *r)
{
    const char *path = a->path;
    int line = a->line;
    if (n != ncols)
        return ps_error(PS_EPARSE, "%s:%d: expected %d fields, found %d", path, line, ncols,
                         n);
    memset(r, 0, sizeof *r);
    const char *name = f[idx[S_NAME]];
    if (!*name || strlen(name) >= sizeof r->name)
        return ps_error(PS_EPARSE, "%s:%d:%d: field 'name' is empty or longer than %zu", path,
                        line, a->colno[idx[S_NAME]], sizeof r->name - 1);
    strcpy(r->name, name);
    if (idx[S_KIND] >= 0) {
        if (strlen(f[idx[S_KIND]]) >= sizeof r->kind)
            return ps_error(PS_EPARSE, "%s:%d:%d: field 'kind' too long", path, line,
                            a->colno[idx[S_KIND]]);
        strcpy(r->kind, f[idx[S_KIND]]);
    }
    int rc;
    if ((rc = number(a, idx[S_PARAMS], "params", f[idx[S_PARAMS]], &r->params)) < 0 ||
        (rc = number(a, idx[S_OUT], "out_bytes", f[idx[S_OUT]], &r->out_bytes)) < 0 ||
        (rc = number(a, idx[S_STASH], "stash_bytes", f[idx[S_STASH]], &r->stash_bytes)) < 0)
        return rc;
    if (r->params != floor(r->params)) /* as a profile's (mdl_profile_row.c) */
        return ps_error(PS_EINVAL, "%s:%d:%d: field 'params' (%s) must be a whole number of "
                        "parameters", path, line, a->colno[idx[S_PARAMS]], f[idx[S_PARAMS]]);
    if (idx[S_SHARED] >= 0 && *f[idx[S_SHARED]]) {
        if ((rc = number(a, idx[S_SHARED], "stash_shared_bytes", f[idx[S_SHARED]],
                         &r->stash_shared_bytes)) < 0)
            return rc;
        if (r->stash_shared_bytes > r->stash_bytes)
            return ps_error(PS_EINVAL, "%s:%d:%d: field 'stash_shared_bytes' (%g) must be <= "
                            "stash_bytes (%g)", path, line, a->colno[idx[S_SHARED]],
                            r->stash_shared_bytes, r->stash_bytes);
    }
    if (idx[S_BATCH] >= 0) {
        if ((rc = number(a, idx[S_BATCH], "at_batch", f[idx[S_BATCH]], &r->at_batch)) < 0)
            return rc;
        if (r->at_batch <= 0 || r->at_batch != floor(r->at_batch) || r->at_batch > 1 << 30)
            return ps_error(PS_EINVAL, "%s:%d:%d: field 'at_batch' (%s) must be a whole number "
                            "of samples, 1 to 2^30", path, line, a->colno[idx[S_BATCH]],
                            f[idx[S_BATCH]]);
    }
    return 0;
}

int mdl_torch_sizes_load(const char *path, struct mdl_torch_size **rows, int *n)
{
    *rows = NULL;
    *n = 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return ps_error(PS_EIO, "%s: cannot open: %s", path, strerror(errno));
    int rio = ps_io_read(path); /* the default sidecar too (base/ps_afile.h) */
    if (rio < 0) {
        fclose(fp);
        return rio;
    }
    char buf[4096], *f[16];
    int idx[S_N], colno[16], ncols = 0, line = 0, rc = 0, cap = 0;
    struct mdl_torch_size *v = NULL;
    while (fgets(buf, sizeof buf, fp)) {
        line++;
        if (!strchr(buf, '\n') && !feof(fp)) {
            rc = ps_error(PS_EPARSE, "%s:%d: line too long", path, line);
            goto err_free_rows;
        }
        char *start = buf + (line == 1 ? ps_bom_len(buf, strlen(buf)) : 0), *s = start;
        s += strspn(s, " \t\r\n");
        if (!*s || *s == '#')
            continue;
        buf[strcspn(buf, "\n")] = 0;
        int nf = ps_csv_split(start, f, colno, 16); /* columns from the line's start */
        if (nf < 0)
            nf = 17; /* more fields than any header has: the count error below */
        if (!ncols) {
            if (nf > 16) {
                rc = ps_error(PS_EPARSE, "%s:%d: more than 16 columns", path, line);
                goto err_free_rows;
            }
            if ((rc = header(path, line, f, colno, nf, idx)) < 0)
                goto err_free_rows;
            ncols = nf;
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            struct mdl_torch_size *nv = realloc(v, (size_t)cap * sizeof *nv);
            if (!nv) {
                rc = ps_error(PS_ENOMEM, "out of memory reading %s", path);
                goto err_free_rows;
            }
            v = nv;
        }
        struct mdl_torch_size *r = &v[*n];
        struct at a = { path, line, colno };
        if ((rc = row(&a, f, nf, ncols, idx, r)) < 0)
            goto err_free_rows;
        for (int i = 0; i < *n; i++)
            if (!strcmp(v[i].name, r->name)) {
                rc = ps_error(PS_EINVAL, "%s:%d: layer '%s' listed twice", path, line,
                               r->name);
                goto err_free_rows;
            }
        if (*n && r->at_batch != v[0].at_batch) {
            rc = ps_error(PS_EINVAL, "%s:%d: field 'at_batch' %g differs from the first "
                           "row's %g", path, line, r->at_batch, v[0].at_batch);
            goto err_free_rows;
        }
        (*n)++;
    }
    if (ferror(fp)) {
        rc = ps_error(PS_EIO, "%s: read error", path);
        goto err_free_rows;
    }
    if (!ncols) {
        rc = ps_error(PS_EPARSE, "%s: no header line", path);
        goto err_free_rows;
    }
    fclose(fp);
    *rows = v;
    return 0;

err_free_rows:
    free(v);
    *n = 0;
    fclose(fp);
    return rc;
}
