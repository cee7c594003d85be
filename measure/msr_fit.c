/* The statistics and fits of a calibration (msr_calib.h): op names, the
 * robust summary of repeated timings (median, quartiles, fences), the line
 * fit of time against micro-batch size and the FLOP-rate fit across
 * layers, on GSL; a median's standard error and a class's spread; the
 * lines of hand-offs and message copies against bytes. Split from
 * msr_calib.c and msr_calib_pipe.c. */
#include "measure/msr_calib.h"
#include "measure/msr_calib_int.h"
#include "base/ps_error.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *msr_calib_op_name(enum msr_calib_op op)
{
    static const char *const n[MSR_CALIB_NOPS] = { "F", "F-nostash", "R", "B", "W" };
    return op < MSR_CALIB_NOPS ? n[op] : "?";
}

void msr_stat_fences(const struct msr_stat *s, double *lo, double *hi)
{
    double iqr = s->p75 - s->p25;
    *lo = s->p25 - 3 * iqr;
    *hi = s->p75 + 3 * iqr;
}

void msr_stat_of(double *v, int n, struct msr_stat *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1)
        return;
    gsl_sort(v, 1, (size_t)n);
    out->n = n;
    out->min = v[0];
    out->max = v[n - 1];
    out->med = gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
    out->p25 = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.25);
    out->p75 = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.75);
    double lo, hi;
    msr_stat_fences(out, &lo, &hi);
    double sum = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (v[i] >= lo && v[i] <= hi) {
            sum += v[i];
            k++;
        }
    out->mean = k ? sum / k : out->med;
}

static void fit_quality(const double *x, const double *y, int n, struct msr_fit *f)
{
    double mean = 0, ss_tot = 0, ss_res = 0;
    for (int i = 0; i < n; i++)
        mean += y[i] / n;
    f->max_rel = 0;
    for (int i = 0; i < n; i++) {
        double r = y[i] - (f->a + f->b * x[i]);
        f->resid[i] = r;
        ss_res += r * r;
        ss_tot += (y[i] - mean) * (y[i] - mean);
        if (y[i] != 0 && fabs(r / y[i]) > f->max_rel)
            f->max_rel = fabs(r / y[i]);
    }
    f->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : ss_res == 0 ? 1 : 0;
}

int msr_fit_line(const double *x, const double *y, int n, int relative, struct msr_fit *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1 || n > MSR_CALIB_MAX_SIZES + 1)
        return ps_error(PS_EINVAL, "a line fit needs 1 to %d points, got %d",
                         MSR_CALIB_MAX_SIZES + 1, n);
    double w[MSR_CALIB_MAX_SIZES + 1];
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]) || (relative && !(y[i] > 0)))
            return ps_error(PS_EINVAL, "line fit: point %d (%g, %g) is not usable", i, x[i],
                             y[i]);
        w[i] = relative ? 1 / (y[i] * y[i]) : 1;
    }
    out->n = n;
    int distinct = 0;
    for (int i = 1; i < n; i++)
        distinct |= x[i] != x[0];
    if (!distinct) { /* one abscissa: a proportional fit through the origin */
        if (x[0] == 0)
            return ps_error(PS_EINVAL, "line fit: every point at x = 0");
        double sw = 0, swy = 0;
        for (int i = 0; i < n; i++)
            sw += w[i], swy += w[i] * y[i];
        out->a = 0;
        out->b = swy / sw / x[0];
    } else {
        double c00, c01, c11, chisq;
        gsl_error_handler_t *old = gsl_set_error_handler_off();
        int e = gsl_fit_wlinear(x, 1, w, 1, y, 1, (size_t)n, &out->a, &out->b, &c00, &c01,
                                &c11, &chisq);
        gsl_set_error_handler(old);
        if (e || !isfinite(out->a) || !isfinite(out->b))
            return ps_error(PS_EINVAL, "line fit failed: %s", gsl_strerror(e));
    }
    fit_quality(x, y, n, out);
    return 0;
}

int msr_fit_flops(const double *f, const double *ns, const double *t, int n, double *rate,
                  double *batch_half, double *overhead, double *r2)
{
    *rate = *batch_half = *overhead = *r2 = 0;
    if (n < 3)
        return ps_error(PS_EINVAL, "the FLOP fit needs at least 3 points, got %d", n);
    double fmin = INFINITY, fmax = 0;
    for (int i = 0; i < n; i++) {
        if (!(f[i] > 0) || !(ns[i] > 0) || !(t[i] > 0))
            return ps_error(PS_EINVAL, "FLOP fit: point %d (f %g, n %g, t %g) is not usable",
                             i, f[i], ns[i], t[i]);
        fmin = f[i] < fmin ? f[i] : fmin;
        fmax = f[i] > fmax ? f[i] : fmax;
    }
    /* With one layer shape the overhead and batch_half terms are the same
     * column (both constant per point): fit without the overhead. */
    int p = fmax > 1.5 * fmin ? 3 : 2, rc = 0;
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, (size_t)p), *cov = gsl_matrix_alloc((size_t)p,
                                                                                    (size_t)p);
    gsl_vector *y = gsl_vector_alloc((size_t)n), *w = gsl_vector_alloc((size_t)n),
               *c = gsl_vector_alloc((size_t)p);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, (size_t)p);
    if (!X || !cov || !y || !w || !c || !ws) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        gsl_matrix_set(X, (size_t)i, 0, f[i] * ns[i]);
        gsl_matrix_set(X, (size_t)i, 1, f[i]);
        if (p == 3)
            gsl_matrix_set(X, (size_t)i, 2, 1.0);
        gsl_vector_set(y, (size_t)i, t[i]);
        gsl_vector_set(w, (size_t)i, 1 / (t[i] * t[i]));
    }
    double chisq;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int e = gsl_multifit_wlinear(X, w, y, c, cov, &chisq, ws);
    gsl_set_error_handler(old);
    double u = gsl_vector_get(c, 0), v = gsl_vector_get(c, 1);
    if (e || !(u > 0) || !isfinite(v)) {
        rc = ps_error(PS_EINVAL, "FLOP fit failed (%s): time does not grow with FLOPs",
                       e ? gsl_strerror(e) : "slope <= 0");
        goto out;
    }
    *rate = 1 / u;
    *batch_half = v / u;
    *overhead = p == 3 ? gsl_vector_get(c, 2) : 0;
    double mean = 0, ss_tot = 0, ss_res = 0;
    for (int i = 0; i < n; i++)
        mean += t[i] / n;
    for (int i = 0; i < n; i++) {
        double m = *overhead + u * f[i] * ns[i] + v * f[i];
        ss_res += (t[i] - m) * (t[i] - m);
        ss_tot += (t[i] - mean) * (t[i] - mean);
    }
    *r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
out:
    gsl_matrix_free(X);
    gsl_matrix_free(cov);
    gsl_vector_free(y);
    gsl_vector_free(w);
    gsl_vector_free(c);
    gsl_multifit_linear_free(ws);
    return rc;
}

/* The relative standard error of a median from its stats (normal rule). */
double msr_stat_rel_se(const struct msr_stat *s)
{
    if (s->n < 2 || !(s->med > 0))
        return 1;
    double sigma = (s->p75 - s->p25) / 1.349;
    return 1.2533 * sigma / sqrt((double)s->n) / s->med;
}

double msr_median_rel_se(double *v, int n)
{
    struct msr_stat s;
    msr_stat_of(v, n, &s);
    return msr_stat_rel_se(&s);
}

/* rq (msr_pipe_point): the n relative samples v (sorted, as msr_stat_of
 * leaves them; st their stats) inside Tukey's outer fences, at
 * MSR_PIPE_NQ quantiles, scaled so that the piecewise-linear distribution
 * between them has mean 1 (so a draw keeps the class's centre). All 0 for
 * no samples. */
void msr_stat_spread(const double *v, int n, const struct msr_stat *st, double *rq)
{
    memset(rq, 0, MSR_PIPE_NQ * sizeof *rq);
    double lo, hi;
    msr_stat_fences(st, &lo, &hi);
    int a = 0, b = n;
    while (a < n && v[a] < lo)
        a++;
    while (b > a && v[b - 1] > hi)
        b--;
    if (b <= a || !(st->mean > 0))
        return;
    double area = 0;
    for (int j = 0; j < MSR_PIPE_NQ; j++) { /* GSL's interpolation may dip an ulp */
        rq[j] = gsl_stats_quantile_from_sorted_data(v + a, 1, (size_t)(b - a),
                                                    (double)j / (MSR_PIPE_NQ - 1));
        if (j && rq[j] < rq[j - 1])
            rq[j] = rq[j - 1];
    }
    for (int j = 0; j + 1 < MSR_PIPE_NQ; j++)
        area += (rq[j] + rq[j + 1]) / 2;
    area /= MSR_PIPE_NQ - 1;
    for (int j = 0; j < MSR_PIPE_NQ; j++)
        rq[j] = area > 0 ? rq[j] / area : 0;
}

/* seconds = a + b * bytes over the samples (bx_all, ys) of n: one point per
 * message size, its median (the first MSR_CALIB_MAX_SIZES + 1 sizes); one
 * size gives its median and b = 0; *fit untouched (n = 0) for none. */
int msr_fit_size_line(const double *bx_all, const double *ys, int n, struct msr_fit *fit)
{
    if (n < 1)
        return 0;
    double bx[MSR_CALIB_MAX_SIZES + 1], by[MSR_CALIB_MAX_SIZES + 1];
    int nb = 0;
    double *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int j = 0; j < n; j++) {
        int seen = 0;
        for (int q = 0; q < nb; q++)
            seen |= bx[q] == bx_all[j];
        if (seen || nb == MSR_CALIB_MAX_SIZES + 1)
            continue;
        int k = 0;
        for (int q = j; q < n; q++)
            if (bx_all[q] == bx_all[j])
                tmp[k++] = ys[q];
        struct msr_stat m;
        msr_stat_of(tmp, k, &m);
        bx[nb] = bx_all[j];
        by[nb++] = m.med;
    }
    free(tmp);
    if (nb < 2) {
        *fit = (struct msr_fit){ .a = by[0], .n = 1 };
        return 0;
    }
    return msr_fit_line(bx, by, nb, 1, fit);
}

/* A copy's line for the topology: seconds = a + b * bytes with both at
 * least 0, from msr_fit_size_line's fit; a slope that is not above 0 gives the
 * points' median and no per-byte part, an intercept below 0 the line
 * through the origin at the points' mean rate. A fit that fails (a median
 * of 0) leaves n = 0: no line. */
int msr_fit_copy_line(const double *bx, const double *ys, int n, struct msr_fit *fit)
{
    *fit = (struct msr_fit){ 0 };
    if (n < 1)
        return 0;
    int rc = msr_fit_size_line(bx, ys, n, fit);
    if (rc == -PS_EINVAL) {
        ps_error_clear();
        *fit = (struct msr_fit){ 0 };
        return 0;
    }
    if (rc < 0)
        return rc;
    if (!(fit->b > 0) || fit->n < 2) {
        double *t = malloc((size_t)n * sizeof *t);
        if (!t)
            return ps_error(PS_ENOMEM, "out of memory");
        memcpy(t, ys, (size_t)n * sizeof *t);
        struct msr_stat m;
        msr_stat_of(t, n, &m);
        free(t);
        *fit = (struct msr_fit){ .a = m.med > 0 ? m.med : 0, .n = fit->n };
    } else if (fit->a < 0) {
        double sy = 0, sx = 0;
        for (int j = 0; j < n; j++)
            sy += ys[j], sx += bx[j];
        fit->a = 0;
        fit->b = sx > 0 ? sy / sx : 0;
    }
    return 0;
}
