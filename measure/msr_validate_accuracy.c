/* msr_validate accuracy: a grid's figures against the targets (see
 * msr_validate.h, msr_vcheck_accuracy): the makespan, bubble and peak
 * memory errors of the median or fastest steps, the model misses (a
 * prediction outside its point's measured spread), the model on the
 * calibration's own steps and the drift, and the model on each point's own
 * op times (msr_replay_step). O(points log points).
 */
#include "measure/msr_validate.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The median of v[0..n), n > 0 (sorted in place). */
static double median(double *v, int n)
{
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

void msr_vcheck_accuracy(const struct msr_vcheck *v, int fastest, struct msr_accuracy *a)
{
    memset(a, 0, sizeof *a);
    a->fastest = fastest;
    a->i_miss_max = -1;
    a->n = v->n_points;
    double *mk = malloc((size_t)(v->n_points ? v->n_points : 1) * sizeof *mk);
    for (int i = 0; i < v->n_points; i++) {
        const struct msr_vpoint *pt = &v->pts[i];
        const struct ana_compare *c = fastest ? pt->cmp_min : pt->cmp;
        double e = fabs(c->makespan_err), b = 100 * fabs(c->bubble_meas - c->bubble_sim);
        if (mk)
            mk[i] = e;
        if (e > a->mk_max || i == 0)
            a->mk_max = e, a->i_mk_max = i;
        if (b > a->bubble_max || i == 0)
            a->bubble_max = b, a->i_bubble_max = i;
        if (pt->peak_err > a->peak_max || i == 0)
            a->peak_max = pt->peak_err, a->i_peak_max = i;
        if (!msr_vpoint_in_spread(pt)) {
            double lo = pt->step_min_s - pt->step_sim_s, hi = pt->step_sim_s - pt->step_max_s;
            double d = (lo > hi ? lo : hi) / pt->step_med_s;
            if (!a->n_miss++ || d > a->miss_max)
                a->miss_max = d, a->i_miss_max = i;
        }
    }
    if (mk && v->n_points)
        a->mk_median = median(mk, v->n_points);
    /* the points whose step the calibration itself ran */
    double *dr = mk ? malloc((size_t)(v->n_points ? v->n_points : 1) * sizeof *dr) : NULL;
    for (int i = 0; dr && i < v->n_points; i++) {
        const struct msr_vpoint *pt = &v->pts[i];
        if (!(pt->step_own_s > 0) || !(pt->step_sim_s > 0))
            continue;
        double e = fabs(pt->step_own_s / pt->step_sim_s - 1);
        if (!a->own_n || e > a->own_max)
            a->own_max = e, a->i_own_max = i;
        mk[a->own_n] = e;
        dr[a->own_n++] = fabs(pt->step_med_s / pt->step_own_s - 1);
    }
    if (a->own_n) {
        a->own_median = median(mk, a->own_n);
        a->drift_median = median(dr, a->own_n);
        a->drift_max = dr[a->own_n - 1];
    }
    /* the model on each point's own median (fastest) step: no calibration,
     * no drift */
    for (int i = 0; mk && dr && i < v->n_points; i++) {
        const struct msr_replay *r = fastest ? &v->pts[i].replay_min : &v->pts[i].replay;
        double e = fabs(r->makespan_err), b = 100 * fabs(r->bubble_err);
        if (!i || e > a->replay_max)
            a->replay_max = e, a->i_replay_max = i;
        if (!i || b > a->replay_bub_max)
            a->replay_bub_max = b, a->i_replay_bub_max = i;
        a->replay_mean += r->makespan_err / v->n_points;
        a->replay_bub_mean += 100 * r->bubble_err / v->n_points;
        mk[i] = e;
        dr[i] = b;
    }
    if (mk && dr && v->n_points) {
        a->replay_median = median(mk, v->n_points);
        a->replay_bub_median = median(dr, v->n_points);
    }
    free(dr);
    free(mk);
}
