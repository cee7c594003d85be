/* ana_sens: elasticities of a prediction to each hardware knob, and the
 * factor on one knob that gives a target (analysis/ana_sens.h). */
#include "analysis/ana_sens.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(ANA_KNOB_N == ANA_SENS_KNOBS, "ana_prediction.sens holds every knob");

const char *const ana_knob_names[ANA_KNOB_N] = { "matrix", "vector", "memory",
                                                 "overhead", "link_bw", "latency" };
const char *const ana_knob_titles[ANA_KNOB_N] = { "matrix peak", "vector peak",
                                                  "memory bandwidth", "per-kernel cost",
                                                  "link bandwidth", "link latency" };

static void scale_device(struct mdl_device *d, enum ana_knob k, double f)
{
    struct mdl_devmodel *m = &d->model;
    int p = m->precision;
    switch (k) {
    case ANA_KNOB_MATRIX:
        /* Layers without work take the legacy rule's "flops" on any device:
         * all matrix work. The vector peak that falls back to it stays. */
        if (m->on && !(m->vec_peak[p] > 0))
            m->vec_peak[p] = d->flops;
        if (m->mm_peak[p] > 0)
            m->mm_peak[p] *= f;
        d->flops *= f;
        break;
    case ANA_KNOB_VECTOR:
        if (m->on)
            m->vec_peak[p] = (m->vec_peak[p] > 0 ? m->vec_peak[p] : d->flops) * f;
        break;
    case ANA_KNOB_MEMORY:
        d->mem_bandwidth *= f;
        break;
    case ANA_KNOB_OVERHEAD:
        m->kernel_s *= f;
        d->overhead_s *= f;
        break;
    case ANA_KNOB_LINK_BW: /* a device's own copies of its messages too */
        d->msg_send_bw *= f;
        d->msg_recv_bw *= f;
        break;
    case ANA_KNOB_LATENCY:
        d->msg_send_s *= f;
        d->msg_recv_s *= f;
        break;
    case ANA_KNOB_N:
        break;
    }
}

int ana_topo_scaled(const struct mdl_topology *src, enum ana_knob k, double f,
                    struct ana_topo_scaled *out)
{
    memset(out, 0, sizeof *out);
    if ((unsigned)k >= ANA_KNOB_N || !(f > 0) || !isfinite(f))
        return ps_error(PS_EINVAL, "knob %d scaled by %g: needs a knob and a factor > 0", (int)k,
                        f);
    out->t = *src;
    out->dev = malloc(sizeof *out->dev * (size_t)(src->n_devices > 0 ? src->n_devices : 1));
    out->links = malloc(sizeof *out->links * (size_t)(src->n_links > 0 ? src->n_links : 1));
    if (!out->dev || !out->links) {
        ana_topo_scaled_free(out);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    if (src->n_devices > 0)
        memcpy(out->dev, src->devices, sizeof *out->dev * (size_t)src->n_devices);
    if (src->n_links > 0)
        memcpy(out->links, src->links, sizeof *out->links * (size_t)src->n_links);
    out->t.devices = out->dev;
    out->t.links = out->links;
    for (int i = 0; i < src->n_devices; i++)
        scale_device(&out->dev[i], k, f);
    for (int i = 0; i < src->n_links; i++) {
        if (k == ANA_KNOB_LINK_BW)
            out->links[i].bandwidth *= f;
        else if (k == ANA_KNOB_LATENCY) {
            out->links[i].latency *= f;
            out->links[i].overhead_s *= f;
        }
    }
    return 0;
}

void ana_topo_scaled_free(struct ana_topo_scaled *s)
{
    if (!s)
        return;
    free(s->dev);
    free(s->links);
    memset(s, 0, sizeof *s);
}

/* eval on t with knob k times f. */
static int eval_at(const struct mdl_topology *t, enum ana_knob k, double f, ana_sens_eval eval,
                   void *ctx, double *v)
{
    struct ana_topo_scaled s;
    int rc = ana_topo_scaled(t, k, f, &s);
    if (rc < 0)
        return rc;
    rc = eval(ctx, &s.t, v);
    ana_topo_scaled_free(&s);
    if (rc == 0 && !(*v >= 0 && isfinite(*v)))
        return ps_error(PS_EINVAL, "%s times %g: the value is %g, not a number >= 0",
                        ana_knob_names[k], f, *v);
    return rc;
}

int ana_elasticity(const struct mdl_topology *t, enum ana_knob k, double rel, ana_sens_eval eval,
                   void *ctx, double *e)
{
    double up, down;
    int rc;
    *e = NAN;
    if (!(rel > 0 && rel < 0.5))
        return ps_error(PS_EINVAL, "elasticity step %g: must be in (0, 0.5)", rel);
    if ((rc = eval_at(t, k, 1 + rel, eval, ctx, &up)) < 0 ||
        (rc = eval_at(t, k, 1 - rel, eval, ctx, &down)) < 0)
        return rc;
    if (up == 0 && down == 0) { /* nothing to scale (a step of no work) */
        *e = 0;
        return 0;
    }
    if (up == 0 || down == 0)
        return ps_error(PS_EINVAL, "%s: the value is 0 on one side of the preset only",
                        ana_knob_names[k]);
    *e = (log(up) - log(down)) / (log1p(rel) - log1p(-rel));
    return 0;
}

#define SOLVE_LO (1.0 / 64)
#define SOLVE_HI 64.0
#define SOLVE_TOL 1e-6

int ana_knob_solve(const struct mdl_topology *t, enum ana_knob k, double target,
                   ana_sens_eval eval, void *ctx, double *factor)
{
    double lo = SOLVE_LO, hi = SOLVE_HI, vlo, vhi;
    int rc;
    *factor = NAN;
    if (!(target > 0 && isfinite(target)))
        return ps_error(PS_EINVAL, "solve for %g: the target must be a positive number", target);
    if ((rc = eval_at(t, k, lo, eval, ctx, &vlo)) < 0 ||
        (rc = eval_at(t, k, hi, eval, ctx, &vhi)) < 0)
        return rc;
    if ((vlo - target) * (vhi - target) > 0)
        return 0; /* no factor in range reaches it */
    while (hi / lo - 1 > SOLVE_TOL) {
        double mid = sqrt(lo * hi), v;
        if ((rc = eval_at(t, k, mid, eval, ctx, &v)) < 0)
            return rc;
        if ((v - target) * (vlo - target) > 0) {
            lo = mid;
            vlo = v;
        } else {
            hi = mid;
            vhi = v;
        }
    }
    /* the nearer end, if it is a crossing and not a jump over the target */
    double f = fabs(vlo - target) <= fabs(vhi - target) ? lo : hi;
    double v = f == lo ? vlo : vhi;
    if (fabs(v / target - 1) <= ANA_SOLVE_CHECK)
        *factor = f;
    return 0;
}

int ana_sens_step(void *ctx, const struct mdl_topology *t, double *step_s)
{
    struct ana_config c = *(const struct ana_config *)ctx;
    struct ana_prediction *p = NULL;
    c.topo = t;
    c.no_baseline = 1;
    c.record_trace = 0;
    c.draw = NULL;
    c.draws = 0;
    int rc = ana_predict(&c, &p);
    if (rc == 0)
        *step_s = p->step_s;
    ana_prediction_free(p);
    return rc;
}

int ana_sensitivity(const struct ana_config *c, double e[ANA_KNOB_N])
{
    for (int k = 0; k < ANA_KNOB_N; k++) {
        int rc = ana_elasticity(c->topo, (enum ana_knob)k, ANA_SENS_REL, ana_sens_step,
                                (void *)c, &e[k]);
        if (rc == -PS_EINVAL) { /* the run 1 % away is beyond the engine's range */
            e[k] = NAN;
            ps_error_clear();
        } else if (rc < 0) {
            return rc;
        }
    }
    return 0;
}
