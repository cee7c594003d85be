/* How long a layer's ops take on a device (models/mdl_topology.h): the
 * op-level device model or a measured profile's fit and points, the
 * re-materialized variants, and the backward's split into B and W. Split
 * from mdl_topology.c, which loads and builds topologies. */
#include "models/mdl_topology.h"
#include "models/mdl_device.h"
#include "base/ps_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double mdl_device_op_seconds(const struct mdl_device *d, int measured, double cost,
                             double at_batch, double n)
{
    if (cost == 0)
        return 0; /* a pure data layer (the model input) launches no kernel */
    if (measured)
        return cost * (n + d->batch_half) / (at_batch + d->batch_half);
    return d->overhead_s + cost * (n + d->batch_half) / (d->flops * d->eff_max);
}

/* The affine (fixed given) or batch_half rule through (at_batch, t_at). */
static double base_rule(const struct mdl_device *d, const struct mdl_layer *l, double t_at,
                        double fixed, double n)
{
    if (l->has_fixed)
        return fixed + (t_at - fixed) * n / l->at_batch;
    return t_at * (n + d->batch_half) / (l->at_batch + d->batch_half);
}

/* num/den of a layer at n samples: at at_batch num_at / den_at (dflt when
 * den_at is 0), at each measured size where pnum is given (>= 0) its
 * ratio; interpolated linearly between the sizes, constant beyond the
 * outermost. pnum NULL: the at_batch ratio everywhere. */
static double pt_ratio(const struct mdl_layer *l, double num_at, double den_at,
                       const double *pnum, const double *pden, double dflt, double n)
{
    double s0 = den_at > 0 ? num_at / den_at : dflt;
    if (!pnum || l->n_pts < 1)
        return s0;
    double xs[MDL_MAX_POINTS + 1], ss[MDL_MAX_POINTS + 1];
    int k = 0, ref = 0;
    for (int i = 0; i < l->n_pts; i++) {
        if (!ref && l->at_batch < l->pt_batch[i]) {
            xs[k] = l->at_batch;
            ss[k++] = s0;
            ref = 1;
        }
        if (pnum[i] < 0)
            continue;
        xs[k] = l->pt_batch[i];
        ss[k++] = pden[i] > 0 ? pnum[i] / pden[i] : s0;
    }
    if (!ref) {
        xs[k] = l->at_batch;
        ss[k++] = s0;
    }
    if (n <= xs[0])
        return ss[0];
    for (int i = 0; i + 1 < k; i++)
        if (n <= xs[i + 1])
            return ss[i] + (ss[i + 1] - ss[i]) * (n - xs[i]) / (xs[i + 1] - xs[i]);
    return ss[k - 1];
}

double mdl_layer_remat_ratio(const struct mdl_layer *l, enum mdl_op op, double n)
{
    if (op == MDL_OP_BWD_REMAT)
        return l->has_bwd_remat
                   ? pt_ratio(l, l->bwd_remat, l->bwd, l->pt_bwd_remat, l->pt_bwd, 1, n) : 1;
    return op == MDL_OP_RECOMP && l->has_recomp
               ? pt_ratio(l, l->recomp, l->fwd, l->pt_recomp, l->pt_fwd, 1, n) : 1;
}

double mdl_layer_remat_seconds(int measured, const struct mdl_layer *l, enum mdl_op op,
                               double t, double n)
{
    return measured ? t * mdl_layer_remat_ratio(l, op, n) : t;
}

double mdl_layer_seconds(const struct mdl_device *d, int measured, const struct mdl_layer *l,
                         enum mdl_op op, double n)
{
    if (op == MDL_OP_RECOMP || op == MDL_OP_BWD_REMAT) {
        int r = op == MDL_OP_BWD_REMAT;
        double t = mdl_layer_seconds(d, measured, l, r ? MDL_OP_BWD : MDL_OP_FWD, n);
        return mdl_layer_remat_seconds(measured, l, op, t, n);
    }
    if (!measured && l->work && d->model.on) {
        double f, b, w;
        mdl_device_work_s(d, l->work, n, &f, &b, &w);
        return op == MDL_OP_BWD ? b + w : f;
    }
    if (!measured)
        return mdl_device_op_seconds(d, 0, op == MDL_OP_BWD ? l->bwd : l->fwd, 0, n);
    int ns = op == MDL_OP_FWD_NOSTASH && l->has_nostash;
    double t_at = op == MDL_OP_BWD ? l->bwd : ns ? l->fwd_nostash : l->fwd;
    double fixed = op == MDL_OP_BWD ? l->bwd_fixed : ns ? l->nostash_fixed : l->fwd_fixed;
    const double *pt = op == MDL_OP_BWD ? l->pt_bwd : ns ? l->pt_nostash : l->pt_fwd;
    if (!l->n_pts && !l->has_fixed)
        return mdl_device_op_seconds(d, 1, t_at, l->at_batch, n);
    /* the measured points, at_batch merged in, in increasing batch size */
    double xs[MDL_MAX_POINTS + 1], ts[MDL_MAX_POINTS + 1];
    int k = 0, i = 0, placed = 0;
    while (k < l->n_pts || !placed) {
        if (!placed && (k == l->n_pts || l->at_batch < l->pt_batch[k])) {
            xs[i] = l->at_batch;
            ts[i++] = t_at;
            placed = 1;
        } else {
            xs[i] = l->pt_batch[k];
            ts[i++] = pt[k++];
        }
    }
    int last = l->n_pts, e;
    if (n <= xs[0]) {
        e = 0;
    } else if (n >= xs[last]) {
        e = last;
    } else {
        i = 0;
        while (xs[i + 1] < n)
            i++;
        return ts[i] + (ts[i + 1] - ts[i]) * (n - xs[i]) / (xs[i + 1] - xs[i]);
    }
    double b = base_rule(d, l, t_at, fixed, xs[e]);
    return b > 0 ? ts[e] * base_rule(d, l, t_at, fixed, n) / b : base_rule(d, l, t_at, fixed, n);
}

/* W's share of a layer's backward at n samples: at_batch's, or where W is
 * given at measured sizes, interpolated linearly between the sizes' shares
 * (at_batch's among them) and constant beyond the outermost. */
static double wgrad_share(const struct mdl_layer *l, double n)
{
    return pt_ratio(l, l->wgrad, l->bwd, l->pt_wgrad, l->pt_bwd, 0.5, n);
}

int mdl_layer_bwd_split(const struct mdl_device *d, int measured, const struct mdl_layer *l,
                        double n, double *b, double *w)
{
    return mdl_layer_bwd_split_op(d, measured, l, MDL_OP_BWD, n, b, w);
}

int mdl_layer_bwd_split_op(const struct mdl_device *d, int measured, const struct mdl_layer *l,
                           enum mdl_op op, double n, double *b, double *w)
{
    if (!measured && l->work && d->model.on) {
        double f;
        mdl_device_work_s(d, l->work, n, &f, b, w);
        return 1;
    }
    double t = mdl_layer_seconds(d, measured, l, op, n), share = -1;
    if (l->has_wgrad) {
        share = wgrad_share(l, n);
    } else if (l->work) {
        const struct mdl_work *k = l->work;
        double all = k->mm_dgrad + k->mm_wgrad + k->vec_bwd;
        if (all > 0)
            share = k->mm_wgrad / all;
    }
    if (isinf(t)) { /* both infinite: inf - inf is NaN, which the range check
                       printed as "-nan s" (helper-113) */
        *b = *w = t;
        return share >= 0;
    }
    if (share < 0) {
        *b = t / 2;
        *w = t - *b;
        return 0;
    }
    *w = t * share;
    *b = t - *w;
    return 1;
}
