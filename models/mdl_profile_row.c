/* The profile loader's header and row parsing (models/mdl_profile.h): the
 * columns a header names, the measured points of a calibrated profile, and
 * one row into a layer, every field checked (mdl_profile_int.h). Split from
 * mdl_profile.c, which reads the file and keeps the layers. */
#include "models/mdl_profile.h"
#include "models/mdl_profile_int.h"
#include "models/mdl_profile_row.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *col_names[C_N] = {
    "name", "kind", "fwd_flops", "fwd_ms", "bwd_flops", "bwd_ms", "at_batch",
    "params", "out_bytes", "stash_bytes", "fwd_nostash_ms", "fwd_fixed_ms", "bwd_fixed_ms",
    "fwd_nostash_fixed_ms", "recomp_ms", "bwd_remat_ms", "stash_shared_bytes", "carry_bytes",
};
static const char *pt_names[P_N] = { "fwd_ms@", "bwd_ms@", "fwd_nostash_ms@", "wgrad_ms@",
                                     "recomp_ms@", "bwd_remat_ms@" };

int mdl_profile_num(const char *path, int line, int col, const char *field, const char *s,
                    double *out)
{
    char *end;
    if (!*s)
        return ps_error(PS_EPARSE, "%s:%d:%d: field '%s' is empty", path, line, col, field);
    errno = 0;
    double v = ps_strtod(s, &end);
    if (*end)
        return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is not a number",
                         path, line, col, field, s);
    if (errno == ERANGE) /* a number, but beyond a double's range */
        return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': '%s' is out of range (%s)", path,
                         line, col, field, s,
                         fabs(v) > 1 ? "magnitude above 1.8e308" : "nonzero but below 2.2e-308");
    if (!isfinite(v))
        return ps_error(PS_EINVAL, "%s:%d:%d: field '%s' must be finite, got '%s'",
                         path, line, col, field, s);
    if (v < 0)
        return ps_error(PS_EINVAL, "%s:%d:%d: field '%s' must be >= 0, got %s",
                         path, line, col, field, s);
    *out = v;
    return 0;
}

/* fwd_ms@N: which point kind and N, or -1 if the name is not a point column. */
static int point_column(const char *name, long *n)
{
    for (int k = 0; k < P_N; k++) {
        size_t len = strlen(pt_names[k]);
        if (strncmp(name, pt_names[k], len))
            continue;
        const char *d = name + len;
        char *end;
        if (*d < '1' || *d > '9')
            return -2;
        errno = 0;
        *n = strtol(d, &end, 10);
        return *end || errno || *n > 1L << 30 ? -2 : k;
    }
    return -1;
}

static int add_point_column(const char *path, int line, int col, const char *name, int i,
                            struct header *h)
{
    long n;
    int k = point_column(name, &n);
    if (k == -2)
        return ps_error(PS_EPARSE, "%s:%d:%d: column '%s': the batch size after '@' must "
                         "be a whole number from 1 to 2^30", path, line, col, name);
    if (k < 0)
        return ps_error(PS_EPARSE, "%s:%d:%d: unknown column '%s'", path, line, col, name);
    int p;
    for (p = 0; p < h->n_pts; p++)
        if (h->pt_batch[p] == (double)n)
            break;
    if (p == h->n_pts) {
        if (h->n_pts == MDL_MAX_POINTS)
            return ps_error(PS_EPARSE, "%s:%d:%d: more than %d measured batch sizes", path,
                             line, col, MDL_MAX_POINTS);
        h->pt_batch[h->n_pts++] = (double)n;
        for (int q = 0; q < P_N; q++)
            h->pt_idx[p][q] = -1;
    }
    if (h->pt_idx[p][k] >= 0)
        return ps_error(PS_EPARSE, "%s:%d:%d: duplicate column '%s'", path, line, col, name);
    h->pt_idx[p][k] = i;
    return 0;
}

int mdl_profile_header(const char *path, int line, char **f, int *colno, int n,
                        struct header *h)
{
    int *idx = h->idx;
    for (int c = 0; c < C_N; c++)
        idx[c] = -1;
    h->n_pts = 0;
    for (int c = 0; c < W_N; c++)
        h->widx[c] = -1;
    for (int i = 0; i < n; i++) {
        int c, rc, wc = mdl_work_column(f[i]);
        if (wc >= 0) {
            if (h->widx[wc] >= 0)
                return ps_error(PS_EPARSE, "%s:%d:%d: duplicate column '%s'", path, line,
                                 colno[i], f[i]);
            h->widx[wc] = i;
            continue;
        }
        for (c = 0; c < C_N; c++)
            if (!strcmp(f[i], col_names[c]))
                break;
        if (c == C_N) {
            if ((rc = add_point_column(path, line, colno[i], f[i], i, h)) < 0)
                return rc;
            continue;
        }
        if (idx[c] >= 0)
            return ps_error(PS_EPARSE, "%s:%d:%d: duplicate column '%s'", path, line,
                             colno[i], f[i]);
        idx[c] = i;
    }
    static const int required[] = { C_NAME, C_PARAMS, C_OUT, C_STASH };
    for (size_t r = 0; r < sizeof required / sizeof *required; r++)
        if (idx[required[r]] < 0)
            return ps_error(PS_EPARSE, "%s:%d: missing column '%s'", path, line,
                             col_names[required[r]]);
    int flops = idx[C_FWD_FLOPS] >= 0, ms = idx[C_FWD_MS] >= 0;
    if (flops == ms)
        return ps_error(PS_EPARSE, "%s:%d: need exactly one of columns 'fwd_flops' or "
                         "'fwd_ms'", path, line);
    int wrc = mdl_work_header(path, line, ms, h->widx);
    if (wrc < 0)
        return wrc;
    if (flops && (idx[C_BWD_MS] >= 0 || idx[C_AT_BATCH] >= 0))
        return ps_error(PS_EPARSE, "%s:%d: columns 'bwd_ms'/'at_batch' need 'fwd_ms', "
                         "not 'fwd_flops'", path, line);
    if (ms && idx[C_BWD_FLOPS] >= 0)
        return ps_error(PS_EPARSE, "%s:%d: column 'bwd_flops' needs 'fwd_flops'", path, line);
    if (ms && idx[C_AT_BATCH] < 0)
        return ps_error(PS_EPARSE, "%s:%d: measured times (fwd_ms) need column 'at_batch'",
                         path, line);
    static const int ext[] = { C_NOSTASH, C_FWD_FIXED, C_BWD_FIXED, C_NOSTASH_FIXED, C_RECOMP,
                               C_BWD_REMAT };
    for (size_t e = 0; e < sizeof ext / sizeof *ext; e++)
        if (flops && idx[ext[e]] >= 0)
            return ps_error(PS_EPARSE, "%s:%d: column '%s' needs 'fwd_ms', not 'fwd_flops'",
                             path, line, col_names[ext[e]]);
    if (flops && h->n_pts)
        return ps_error(PS_EPARSE, "%s:%d: columns '%s%g' need 'fwd_ms', not 'fwd_flops'",
                         path, line, pt_names[P_FWD], h->pt_batch[0]);
    if ((idx[C_FWD_FIXED] >= 0) != (idx[C_BWD_FIXED] >= 0))
        return ps_error(PS_EPARSE, "%s:%d: columns 'fwd_fixed_ms' and 'bwd_fixed_ms' come "
                         "together", path, line);
    if (idx[C_NOSTASH_FIXED] >= 0 && idx[C_NOSTASH] < 0)
        return ps_error(PS_EPARSE, "%s:%d: column 'fwd_nostash_fixed_ms' needs "
                         "'fwd_nostash_ms'", path, line);
    if (idx[C_NOSTASH] >= 0 && idx[C_FWD_FIXED] >= 0 && idx[C_NOSTASH_FIXED] < 0)
        return ps_error(PS_EPARSE, "%s:%d: columns 'fwd_nostash_ms' and 'fwd_fixed_ms' "
                         "need 'fwd_nostash_fixed_ms'", path, line);
    if (idx[C_NOSTASH_FIXED] >= 0 && idx[C_FWD_FIXED] < 0)
        return ps_error(PS_EPARSE, "%s:%d: column 'fwd_nostash_fixed_ms' needs "
                         "'fwd_fixed_ms'", path, line);
    for (int p = 0; p < h->n_pts; p++) {
        int *pi = h->pt_idx[p];
        if (pi[P_WGRAD] >= 0 && h->widx[W_WGRAD_MS] < 0)
            return ps_error(PS_EPARSE, "%s:%d: column '%s%g' needs column 'wgrad_ms'", path,
                             line, pt_names[P_WGRAD], h->pt_batch[p]);
        if (pi[P_RECOMP] >= 0 && idx[C_RECOMP] < 0)
            return ps_error(PS_EPARSE, "%s:%d: column '%s%g' needs column 'recomp_ms'", path,
                             line, pt_names[P_RECOMP], h->pt_batch[p]);
        if (pi[P_BWD_REMAT] >= 0 && idx[C_BWD_REMAT] < 0)
            return ps_error(PS_EPARSE, "%s:%d: column '%s%g' needs column 'bwd_remat_ms'",
                             path, line, pt_names[P_BWD_REMAT], h->pt_batch[p]);
        for (int k = 0; k < P_WGRAD; k++) {
            int want = k == P_NOSTASH ? idx[C_NOSTASH] >= 0 : 1;
            if (want != (pi[k] >= 0))
                return ps_error(PS_EPARSE, "%s:%d: column '%s%g' %s", path, line,
                                 pt_names[k], h->pt_batch[p],
                                 pi[k] >= 0 ? "needs column 'fwd_nostash_ms'"
                                            : "is missing (measured sizes need fwd_ms@N and "
                                              "bwd_ms@N, and fwd_nostash_ms@N with "
                                              "fwd_nostash_ms)");
        }
    }
    return 0;
}

/* An optional millisecond field: *have = 0 when empty. */
static int opt_ms(const char *path, int line, char **f, int *colno, int i, const char *field,
                  double *out, int *have)
{
    *have = 0;
    if (i < 0 || !*f[i])
        return 0;
    int rc = mdl_profile_num(path, line, colno[i], field, f[i], out);
    if (rc < 0)
        return rc;
    *out = ps_strtod_exp(f[i], -3); /* rounded once (ps_fmt_exp writes it) */
    *have = 1;
    return 0;
}

static int not_above(const char *path, int line, int col, const char *field, double v,
                     const char *what, double limit)
{
    if (v <= limit)
        return 0;
    return ps_error(PS_EINVAL, "%s:%d:%d: field '%s' (%g ms) must be <= %s (%g ms)", path,
                     line, col, field, v * 1e3, what, limit * 1e3);
}



/* The calibrated extensions of a measured row (times already in seconds). */
static int parse_ext(const char *path, int line, char **f, int *colno, const struct header *h,
                     struct mdl_layer *l, struct row_pts *pts)
{
    const int *idx = h->idx;
    int rc, have, have2, have3;
    if ((rc = opt_ms(path, line, f, colno, idx[C_NOSTASH], "fwd_nostash_ms", &l->fwd_nostash,
                     &l->has_nostash)) < 0 ||
        (rc = opt_ms(path, line, f, colno, idx[C_FWD_FIXED], "fwd_fixed_ms", &l->fwd_fixed,
                     &have)) < 0 ||
        (rc = opt_ms(path, line, f, colno, idx[C_BWD_FIXED], "bwd_fixed_ms", &l->bwd_fixed,
                     &have2)) < 0 ||
        (rc = opt_ms(path, line, f, colno, idx[C_NOSTASH_FIXED], "fwd_nostash_fixed_ms",
                     &l->nostash_fixed, &have3)) < 0 ||
        (rc = opt_ms(path, line, f, colno, idx[C_RECOMP], "recomp_ms", &l->recomp,
                     &l->has_recomp)) < 0 ||
        (rc = opt_ms(path, line, f, colno, idx[C_BWD_REMAT], "bwd_remat_ms", &l->bwd_remat,
                     &l->has_bwd_remat)) < 0)
        return rc;
    if (have != have2 || (l->has_nostash && have != have3) || (!l->has_nostash && have3))
        return ps_error(PS_EPARSE, "%s:%d: fields 'fwd_fixed_ms', 'bwd_fixed_ms'%s are all "
                         "given or all empty", path, line,
                         l->has_nostash ? " and 'fwd_nostash_fixed_ms'" : "");
    l->has_fixed = have;
    if (have && ((rc = not_above(path, line, colno[idx[C_FWD_FIXED]], "fwd_fixed_ms",
                                 l->fwd_fixed, "fwd_ms", l->fwd)) < 0 ||
                 (rc = not_above(path, line, colno[idx[C_BWD_FIXED]], "bwd_fixed_ms",
                                 l->bwd_fixed, "bwd_ms", l->bwd)) < 0 ||
                 (l->has_nostash &&
                  (rc = not_above(path, line, colno[idx[C_NOSTASH_FIXED]],
                                  "fwd_nostash_fixed_ms", l->nostash_fixed, "fwd_nostash_ms",
                                  l->fwd_nostash)) < 0)))
        return rc;
    for (int p = 0; p < h->n_pts; p++) {
        double v[P_N] = { 0 };
        int got[P_N] = { 0 }, any = 0, all = 1;
        char field[P_N][40];
        for (int k = 0; k < P_N; k++) {
            snprintf(field[k], sizeof field[k], "%s%g", pt_names[k], h->pt_batch[p]);
            if (h->pt_idx[p][k] < 0)
                continue;
            if ((rc = opt_ms(path, line, f, colno, h->pt_idx[p][k], field[k], &v[k],
                             &got[k])) < 0)
                return rc;
            if (k < P_WGRAD) { /* W's, R's, B-remat's: checked apart (check_*_pts) */
                any |= got[k];
                all &= got[k];
            }
        }
        if (!any) {
            for (int k = P_WGRAD; k < P_N; k++)
                if (got[k])
                    return ps_error(PS_EPARSE, "%s:%d:%d: field '%s' needs the fields %s and "
                                     "%s", path, line, colno[h->pt_idx[p][k]], field[k],
                                     field[P_FWD], field[P_BWD]);
            continue;
        }
        if (!all || (l->has_nostash != (h->pt_idx[p][P_NOSTASH] >= 0 && got[P_NOSTASH])))
            return ps_error(PS_EPARSE, "%s:%d: the fields of batch size %g (%s, %s%s) are "
                             "all given or all empty%s", path, line, h->pt_batch[p],
                             field[P_FWD], field[P_BWD],
                             h->pt_idx[p][P_NOSTASH] >= 0 ? ", fwd_nostash_ms@" : "",
                             l->has_nostash ? "" : " (and fwd_nostash_ms@N needs fwd_nostash_ms)");
        if (h->pt_batch[p] == l->at_batch) {
            double ref[P_N] = { l->fwd, l->bwd, l->fwd_nostash, 0 };
            if (got[P_WGRAD]) /* checked against wgrad_ms once it is read */
                pts->w_at_ref = v[P_WGRAD];
            for (int r = 0; r < 2; r++)
                if (got[P_RECOMP + r])
                    pts->r_at_ref[r] = v[P_RECOMP + r];
            for (int k = 0; k < P_WGRAD; k++)
                if (got[k] && fabs(v[k] - ref[k]) > 1e-9 * fabs(ref[k]))
                    return ps_error(PS_EINVAL, "%s:%d:%d: field '%s' differs from the "
                                     "value at at_batch %g", path, line,
                                     colno[h->pt_idx[p][k]], field[k], l->at_batch);
            continue;
        }
        int i = l->n_pts++; /* insertion by batch size */
        while (i > 0 && l->pt_batch[i - 1] > h->pt_batch[p]) {
            l->pt_batch[i] = l->pt_batch[i - 1];
            l->pt_fwd[i] = l->pt_fwd[i - 1];
            l->pt_bwd[i] = l->pt_bwd[i - 1];
            l->pt_nostash[i] = l->pt_nostash[i - 1];
            l->pt_wgrad[i] = l->pt_wgrad[i - 1];
            l->pt_recomp[i] = l->pt_recomp[i - 1];
            l->pt_bwd_remat[i] = l->pt_bwd_remat[i - 1];
            pts->wcol[i] = pts->wcol[i - 1];
            pts->rcol[0][i] = pts->rcol[0][i - 1];
            pts->rcol[1][i] = pts->rcol[1][i - 1];
            i--;
        }
        l->pt_batch[i] = h->pt_batch[p];
        l->pt_fwd[i] = v[P_FWD];
        l->pt_bwd[i] = v[P_BWD];
        l->pt_nostash[i] = v[P_NOSTASH];
        l->pt_wgrad[i] = got[P_WGRAD] ? v[P_WGRAD] : -1;
        pts->wcol[i] = h->pt_idx[p][P_WGRAD] >= 0 ? colno[h->pt_idx[p][P_WGRAD]] : 0;
        for (int r = 0; r < 2; r++) {
            int k = P_RECOMP + r;
            (r ? l->pt_bwd_remat : l->pt_recomp)[i] = got[k] ? v[k] : -1;
            pts->rcol[r][i] = h->pt_idx[p][k] >= 0 ? colno[h->pt_idx[p][k]] : 0;
        }
    }
    return 0;
}

/* recomp_ms@N and bwd_remat_ms@N: given at each measured size where the
 * file has the column exactly when the layer has the column's value, and
 * repeating it at at_batch. */
static int check_remat_pts(const char *path, int line, const struct mdl_layer *l,
                           const struct row_pts *pts)
{
    for (int r = 0; r < 2; r++) {
        const char *name = r ? "bwd_remat_ms" : "recomp_ms";
        int has = r ? l->has_bwd_remat : l->has_recomp;
        double at = r ? l->bwd_remat : l->recomp;
        const double *pt = r ? l->pt_bwd_remat : l->pt_recomp;
        if (pts->r_at_ref[r] >= 0 && (!has || fabs(pts->r_at_ref[r] - at) > 1e-9 * fabs(at)))
            return ps_error(PS_EINVAL, "%s:%d: field '%s@%g' %s", path, line, name,
                             l->at_batch, has ? "differs from the value at at_batch"
                                              : "needs its field at at_batch");
        for (int i = 0; i < l->n_pts; i++)
            if (pts->rcol[r][i] && (pt[i] >= 0) != has)
                return ps_error(PS_EPARSE, "%s:%d:%d: field '%s@%g' %s", path, line,
                                 pts->rcol[r][i], name, l->pt_batch[i],
                                 has ? "is empty, and the layer's value at at_batch is given "
                                       "(given at every measured size or at none)"
                                     : "needs the layer's value at at_batch");
    }
    return 0;
}

/* After wgrad_ms is read: a layer with W gives W at each of its measured
 * sizes where the file has the column (one without W gives none), each at
 * most that size's backward; wgrad_ms@at_batch repeats wgrad_ms. */
static int check_wgrad_pts(const char *path, int line, const struct header *h,
                           const struct mdl_layer *l, const struct row_pts *pts)
{
    if (h->widx[W_WGRAD_MS] < 0)
        return 0;
    if (pts->w_at_ref >= 0 &&
        (!l->has_wgrad || fabs(pts->w_at_ref - l->wgrad) > 1e-9 * fabs(l->wgrad)))
        return ps_error(PS_EINVAL, "%s:%d: field 'wgrad_ms@%g' %s", path, line, l->at_batch,
                         l->has_wgrad ? "differs from the value at at_batch"
                                      : "needs the field 'wgrad_ms'");
    for (int i = 0; i < l->n_pts; i++) {
        if (!pts->wcol[i]) /* no wgrad_ms@N column for this size */
            continue;
        if ((l->pt_wgrad[i] >= 0) != l->has_wgrad)
            return ps_error(PS_EPARSE, "%s:%d:%d: field 'wgrad_ms@%g' %s", path, line,
                             pts->wcol[i], l->pt_batch[i],
                             l->has_wgrad ? "is empty, and the layer's 'wgrad_ms' is given "
                                            "(W is given at every measured size or at none)"
                                          : "needs the field 'wgrad_ms'");
        if (l->pt_wgrad[i] > l->pt_bwd[i] * (1 + 1e-12))
            return ps_error(PS_EINVAL, "%s:%d:%d: field 'wgrad_ms@%g' (%g ms) must be <= "
                             "'bwd_ms@%g' (%g ms)", path, line, pts->wcol[i], l->pt_batch[i],
                             l->pt_wgrad[i] * 1e3, l->pt_batch[i], l->pt_bwd[i] * 1e3);
    }
    return 0;
}


int mdl_profile_row(struct mdl_profile *p, const char *path, int line, char **f,
                     int *colno, int n, int ncols, const struct header *h,
                     struct mdl_layer *l, struct row_pts *pts)
{
    const int *idx = h->idx;
    /* quotes first: a quoted field holding a comma (a spreadsheet's export) was
     * "expected 7 fields, found 8" (helper-112) */
    for (int i = 0; i < n; i++)
        if (strchr(f[i], '"'))
            return ps_error(PS_EPARSE, "%s:%d:%d: quoted fields are not supported (a name "
                             "or value with a comma, saved quoted: remove the comma)", path,
                             line, colno[i]);
    if (n != ncols)
        return ps_error(PS_EPARSE, "%s:%d: expected %d fields, found %d", path, line,
                         ncols, n);
    memset(l, 0, sizeof *l);
    l->pt_batch = pts->batch;
    l->pt_fwd = pts->fwd;
    l->pt_bwd = pts->bwd;
    l->pt_nostash = pts->nostash;
    l->pt_wgrad = pts->wgrad;
    l->pt_recomp = pts->recomp;
    l->pt_bwd_remat = pts->bwd_remat;
    pts->w_at_ref = -1;
    pts->r_at_ref[0] = pts->r_at_ref[1] = -1;
    const char *name = f[idx[C_NAME]];
    if (!*name)
        return ps_error(PS_EPARSE, "%s:%d:%d: field 'name' is empty", path, line,
                         colno[idx[C_NAME]]);
    if (*name == '#') /* written back in the first column, it would read as a comment */
        return ps_error(PS_EPARSE, "%s:%d:%d: field 'name' must not start with '#'", path,
                         line, colno[idx[C_NAME]]);
    if (strlen(name) >= MDL_NAME_MAX)
        return ps_error(PS_EPARSE, "%s:%d:%d: field 'name' longer than %d bytes",
                         path, line, colno[idx[C_NAME]], MDL_NAME_MAX - 1);
    strcpy(l->name, name);
    if (idx[C_KIND] >= 0) {
        if (strlen(f[idx[C_KIND]]) >= sizeof l->kind)
            return ps_error(PS_EPARSE, "%s:%d:%d: field 'kind' too long", path, line,
                             colno[idx[C_KIND]]);
        strcpy(l->kind, f[idx[C_KIND]]);
    }
    int rc;
#define NUM(c, dst)                                                              \
    (rc = mdl_profile_num(path, line, colno[idx[c]], col_names[c], f[idx[c]], dst))
    int fc = p->measured ? C_FWD_MS : C_FWD_FLOPS;
    int bc = p->measured ? C_BWD_MS : C_BWD_FLOPS;
    if (NUM(fc, &l->fwd) < 0)
        return rc;
    if (idx[bc] >= 0 && *f[idx[bc]]) {
        if (NUM(bc, &l->bwd) < 0)
            return rc;
    } else {
        l->bwd = 2 * l->fwd;
        if (!isfinite(l->bwd))
            return ps_error(PS_EINVAL, "%s:%d:%d: field '%s': %s is too large (the default "
                             "backward, 2 x forward, overflows)", path, line, colno[idx[fc]],
                             col_names[fc], f[idx[fc]]);
    }
    if (p->measured) {
        if (NUM(C_AT_BATCH, &l->at_batch) < 0)
            return rc;
        if (l->at_batch <= 0 || l->at_batch != floor(l->at_batch) || l->at_batch > 1 << 30)
            return ps_error(PS_EINVAL, "%s:%d:%d: field 'at_batch' (%s) must be a whole number "
                             "of samples, 1 to 2^30", path, line, colno[idx[C_AT_BATCH]],
                             f[idx[C_AT_BATCH]]);
        l->fwd = ps_strtod_exp(f[idx[fc]], -3); /* rounded once, as opt_ms */
        l->bwd = idx[bc] >= 0 && *f[idx[bc]] ? ps_strtod_exp(f[idx[bc]], -3) : 2 * l->fwd;
        if ((rc = parse_ext(path, line, f, colno, h, l, pts)) < 0)
            return rc;
    }
    if (NUM(C_PARAMS, &l->params) < 0 || NUM(C_OUT, &l->out_bytes) < 0 ||
        NUM(C_STASH, &l->stash_bytes) < 0)
        return rc;
    if (l->params != floor(l->params))
        return ps_error(PS_EINVAL, "%s:%d:%d: field 'params' (%s) must be a whole number "
                         "of parameters", path, line, colno[idx[C_PARAMS]], f[idx[C_PARAMS]]);
    if (idx[C_SHARED] >= 0 && *f[idx[C_SHARED]]) {
        int col = colno[idx[C_SHARED]];
        if (NUM(C_SHARED, &l->stash_shared_bytes) < 0)
            return rc;
        if (!(l->stash_shared_bytes >= 0 && l->stash_shared_bytes <= l->stash_bytes))
            return ps_error(PS_EINVAL, "%s:%d:%d: field 'stash_shared_bytes' (%g) must be "
                             "in [0, stash_bytes = %g]", path, line, col,
                             l->stash_shared_bytes, l->stash_bytes);
        if (p->n_layers == 0 && l->stash_shared_bytes > 0)
            return ps_error(PS_EINVAL, "%s:%d:%d: field 'stash_shared_bytes' must be 0 on the "
                             "first layer (no layer before it shares its stash)", path, line,
                             col);
    }
    if (idx[C_CARRY] >= 0 && *f[idx[C_CARRY]]) {
        if (NUM(C_CARRY, &l->carry_bytes) < 0)
            return rc;
        if (!(l->carry_bytes <= l->out_bytes))
            return ps_error(PS_EINVAL, "%s:%d:%d: field 'carry_bytes' (%g) must be in [0, "
                             "out_bytes = %g]", path, line, colno[idx[C_CARRY]],
                             l->carry_bytes, l->out_bytes);
    }
#undef NUM
    pts->work.gemms = pts->gemms;
    if ((rc = mdl_work_row(path, line, f, colno, h->widx, p->measured, l, &pts->work)) < 0)
        return rc;
    if (!p->measured)
        return 0;
    if ((rc = check_wgrad_pts(path, line, h, l, pts)) < 0)
        return rc;
    return check_remat_pts(path, line, l, pts);
}
