/* mdl_profile_work: parsing the work-by-op-class columns of a profile
 * (models/mdl_profile.h, "Work by op class"). */
#include "models/mdl_profile_int.h"
#include "base/ps_util.h"
#include "base/ps_error.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const mdl_work_cols[W_N] = {
    "wgrad_flops", "wgrad_ms", "gemms", "mm_fwd_flops", "mm_dgrad_flops", "mm_wgrad_flops",
    "vec_fwd_flops", "vec_bwd_flops", "bytes_fwd", "bytes_bwd", "kernels_fwd", "kernels_bwd",
    "kernels_wgrad",
};

int mdl_work_column(const char *name)
{
    for (int c = 0; c < W_N; c++)
        if (!strcmp(name, mdl_work_cols[c]))
            return c;
    return -1;
}

int mdl_work_header(const char *path, int line, int measured, const int *widx)
{
    if (measured && widx[W_WGRAD_FLOPS] >= 0)
        return ps_error(PS_EPARSE, "%s:%d: column 'wgrad_flops' needs 'fwd_flops', not "
                         "'fwd_ms' (use 'wgrad_ms')", path, line);
    if (!measured && widx[W_WGRAD_MS] >= 0)
        return ps_error(PS_EPARSE, "%s:%d: column 'wgrad_ms' needs 'fwd_ms', not "
                         "'fwd_flops' (use 'wgrad_flops')", path, line);
    return 0;
}

void mdl_work_from_gemms(const struct mdl_gemm *g, int n, double *fwd, double *dgrad,
                         double *wgrad)
{
    *fwd = *dgrad = *wgrad = 0;
    for (int i = 0; i < n; i++) {
        double f = 2 * g[i].rows * g[i].k * g[i].n * g[i].count;
        *fwd += f;
        if (g[i].weight) {
            if (g[i].weight == 1) /* 2: the model's input, no input gradient */
                *dgrad += f;
            *wgrad += f;
        } else {
            *dgrad += 2 * f; /* both operands' gradients are input gradients */
        }
    }
}

/* One dimension of a product: digits first (no hex, inf or nan), a whole
 * number from 1 to 1e15 (tiles and waves count whole rows and columns:
 * 9.5 was taken as given, helper-115; a double holds every whole number to
 * 2^53, and the generators' largest, a U-Net's input of 8192^2 x 65536
 * elements, is 4.4e12: 1e12 refused the file gen wrote, helper-119). */
static int dim(const char **s, double *out)
{
    if (**s < '0' || **s > '9' || ((*s)[0] == '0' && ((*s)[1] == 'x' || (*s)[1] == 'X')))
        return -1;
    char *end;
    errno = 0;
    double v = ps_strtod(*s, &end);
    if (errno == ERANGE || !isfinite(v) || !(v >= 1) || v > 1e15 || v != floor(v))
        return -1;
    *s = end;
    *out = v;
    return 0;
}

/* ROWSxKxN[/IN][*COUNT][a|i][c[w]], space-separated (/IN and c: weight
 * products only; w: with /IN = ROWS x K / 9, K a multiple of 9, a 3 x 3
 * stride-1 convolution's input as large as its output: a stride-2 one was
 * run by Winograd, helper-115). */
static int parse_gemms(const char *path, int line, int col, const char *s, struct mdl_work *w)
{
    const char *p = s;
    w->n_gemms = 0;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *item = p;
        struct mdl_gemm g = { .count = 1, .weight = 1 };
        int ok = dim(&p, &g.rows) == 0 && *p++ == 'x' && dim(&p, &g.k) == 0 &&
                 *p++ == 'x' && dim(&p, &g.n) == 0;
        if (ok && *p == '/') {
            p++;
            ok = dim(&p, &g.in) == 0;
        }
        if (ok && *p == '*') {
            p++;
            ok = dim(&p, &g.count) == 0;
        }
        if (ok && *p == 'a') {
            p++;
            g.weight = 0;
        } else if (ok && *p == 'i') {
            p++;
            g.weight = 2;
        }
        if (ok && *p == 'c') {
            p++;
            g.conv = 1;
            if (*p == 'w') {
                p++;
                g.wino = 1;
            }
        }
        ok = ok && (*p == ' ' || !*p) && !(g.weight == 0 && (g.in > 0 || g.conv)) &&
             !(g.wino && (fmod(g.k, 9) != 0 || !(g.in > 0) || g.in * 9 != g.rows * g.k));
        if (!ok) {
            int len = 0;
            while (item[len] && item[len] != ' ')
                len++;
            return ps_error(PS_EPARSE, "%s:%d:%d: field 'gemms': '%.*s' is not "
                             "ROWSxKxN[/IN][*COUNT][a|i][c[w]] (dimensions, /IN and COUNT "
                             "whole numbers from 1 to 1e15, /IN and c only on a weight product, "
                             "w only with /IN = ROWS x K / 9: a 3 x 3 convolution at stride 1 "
                             "whose output is as large as its input)",
                             path, line, col + (int)(item - s), len, item);
        }
        if (w->n_gemms == MDL_MAX_GEMMS)
            return ps_error(PS_EPARSE, "%s:%d:%d: field 'gemms': more than %d products", path,
                             line, col + (int)(item - s), MDL_MAX_GEMMS);
        w->gemms[w->n_gemms++] = g;
    }
    return 0;
}

static int agree(const char *path, int line, int col, const char *field, double given,
                 double derived)
{
    if (fabs(given - derived) <= 1e-3 * fmax(fabs(given), fabs(derived)))
        return 0;
    return ps_error(PS_EINVAL, "%s:%d:%d: field '%s' (%.6g) disagrees with gemms (%.6g) by "
                     "more than 0.1 %%", path, line, col, field, given, derived);
}

int mdl_work_row(const char *path, int line, char **f, const int *colno, const int *widx,
                 int measured, struct mdl_layer *l, struct mdl_work *w)
{
    struct mdl_gemm *room = w->gemms;
    memset(w, 0, sizeof *w);
    w->gemms = room; /* MDL_MAX_GEMMS products of the caller's */
    l->work = NULL;
    int rc, any = 0, have[W_N] = { 0 };
    double v[W_N] = { 0 };
    for (int c = 0; c < W_N; c++) {
        int i = widx[c];
        if (i < 0 || !*f[i])
            continue;
        have[c] = 1;
        if (c == W_GEMMS)
            rc = parse_gemms(path, line, colno[i], f[i], w);
        else
            rc = mdl_profile_num(path, line, colno[i], mdl_work_cols[c], f[i], &v[c]);
        if (rc < 0)
            return rc;
        if ((c == W_K_FWD || c == W_K_BWD || c == W_K_WGRAD) && v[c] != floor(v[c]))
            return ps_error(PS_EINVAL, "%s:%d:%d: field '%s' (%s) must be a whole number of "
                             "kernels", path, line, colno[i], mdl_work_cols[c], f[i]);
        any |= c != W_WGRAD_FLOPS && c != W_WGRAD_MS;
    }
    int wc = measured ? W_WGRAD_MS : W_WGRAD_FLOPS;
    if (have[wc]) {
        l->has_wgrad = 1;
        l->wgrad = measured ? ps_strtod_exp(f[widx[wc]], -3) : v[wc]; /* ms rounded once */
        if (l->wgrad > l->bwd * (1 + 1e-12))
            return ps_error(PS_EINVAL, "%s:%d:%d: field '%s' (%g) must be <= the backward "
                             "(%g)", path, line, colno[widx[wc]], mdl_work_cols[wc],
                             v[wc], measured ? l->bwd * 1e3 : l->bwd);
    }
    if (!any)
        return 0;
    double df, dd, dw;
    mdl_work_from_gemms(w->gemms, w->n_gemms, &df, &dd, &dw);
    static const int mm[3] = { W_MM_FWD, W_MM_DGRAD, W_MM_WGRAD };
    double der[3] = { df, dd, dw };
    for (int k = 0; k < 3; k++) {
        if (!have[mm[k]])
            v[mm[k]] = der[k];
        else if (have[W_GEMMS] &&
                 (rc = agree(path, line, colno[widx[mm[k]]], mdl_work_cols[mm[k]], v[mm[k]],
                             der[k])) < 0)
            return rc;
    }
    w->mm_fwd = v[W_MM_FWD];
    w->mm_dgrad = v[W_MM_DGRAD];
    w->mm_wgrad = v[W_MM_WGRAD];
    w->vec_fwd = v[W_VEC_FWD];
    w->vec_bwd = v[W_VEC_BWD];
    w->bytes_fwd = v[W_BYTES_FWD];
    w->bytes_bwd = v[W_BYTES_BWD];
    w->kernels_fwd = v[W_K_FWD];
    w->kernels_bwd = v[W_K_BWD];
    w->kernels_wgrad = v[W_K_WGRAD];
    l->work = w; /* mdl_profile_add copies n_gemms products (none: NULL) */
    return 0;
}
