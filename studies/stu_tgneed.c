/* stu_tgneed: the factor on one hardware figure that would make a
 * torchgpipe row's prediction equal its measurement (stu_tgneed.h). */
#include "studies/stu_tgneed.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct row_ctx {
    const struct stu_tg_run *r;
    int i;
};

static int row_eval(void *ctx, const struct mdl_topology *t, double *samples_s)
{
    const struct row_ctx *c = ctx;
    return stu_tg_row_samples(c->r, c->i, t, samples_s);
}

int stu_tg_need(const struct stu_tg_run *r, int i, struct stu_tg_need *out)
{
    struct row_ctx c = { r, i };
    for (int k = 0; k < ANA_KNOB_N; k++) {
        int rc = ana_elasticity(r->topo, (enum ana_knob)k, ANA_SENS_REL, row_eval, &c,
                                &out->elasticity[k]);
        out->factor[k] = NAN;
        /* solved even at an elasticity of 0: a figure off the critical
         * path at the preset can set it far from it */
        if (rc == 0)
            rc = ana_knob_solve(r->topo, (enum ana_knob)k, r->cell[i].meas, row_eval, &c,
                                &out->factor[k]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

double stu_tg_need_frac(const struct mdl_device *d, int k)
{
    if (!d->model.on)
        return 0;
    return k == ANA_KNOB_MATRIX ? d->model.gemm_eff : k == ANA_KNOB_MEMORY ? d->model.mem_eff : 0;
}

void stu_tg_need_cell(const struct mdl_device *d, const struct stu_tg_need *nd, int k, char *buf,
                      size_t n)
{
    double fr = stu_tg_need_frac(d, k), x = nd->factor[k];
    if (!isfinite(x))
        snprintf(buf, n, "none [%+.2f]", nd->elasticity[k]);
    else if (fr > 0)
        snprintf(buf, n, "x%.3g=%.2f [%+.2f]", x, x * fr, nd->elasticity[k]);
    else
        snprintf(buf, n, "x%.3g [%+.2f]", x, nd->elasticity[k]);
}
