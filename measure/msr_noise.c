/* msr_noise: op times drawn from a pipelined calibration's spread (see
 * msr_calib.h). */
#include "measure/msr_calib.h"
#include "base/ps_error.h"
#include "sim/sim_engine.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

struct msr_noise {
    struct sim_draw draw;
    const struct msr_calib *c;
    int size;      /* the calibration's index of the micro-batch size */
    gsl_rng *rng;  /* GSL's MT19937, seeded with the caller's seed */
};

/* The class of a compute op of a micro-batch re-materialized or not; -1
 * for other kinds. */
static int class_of(int kind, int remat)
{
    switch (kind) {
    case SCH_OP_FWD: return remat ? MSR_PIPE_FN : MSR_PIPE_F;
    case SCH_OP_RECOMP: return MSR_PIPE_R;
    case SCH_OP_BWD: return remat ? MSR_PIPE_BR : MSR_PIPE_BB;
    case SCH_OP_WGRAD: return MSR_PIPE_W;
    case SCH_OP_UPDATE: return MSR_PIPE_U;
    default: return -1;
    }
}

static sch_time draw(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    struct msr_noise *n = ctx;
    int k = class_of(op->kind, remat);
    const struct msr_calib *c = n->c;
    if (k < 0 || op->stage < 0 || op->stage >= c->pipe_stages)
        return tabled;
    const double *rq = MSR_PIPE_AT(c, op->stage, n->size, k)->rq;
    if (!(rq[MSR_PIPE_NQ - 1] > 0))
        return tabled;
    double x = gsl_rng_uniform(n->rng) * (MSR_PIPE_NQ - 1); /* in [0, NQ - 1) */
    int j = (int)x;
    double f = rq[j] + (x - j) * (rq[j + 1] - rq[j]);
    f = f < 0 ? 0 : f > 16 ? 16 : f; /* the engine's clamp, before the rounding */
    return (sch_time)llround((double)tabled * f);
}

int msr_noise_new(const struct msr_calib *c, int micro, uint64_t seed, struct msr_noise **out)
{
    *out = NULL;
    int size = -1;
    for (int i = 0; c->pipelined && c->pipe && i < c->n_sizes; i++)
        if (c->sizes[i] == micro)
            size = i;
    if (size < 0) /* nothing to draw from */
        return 0;
    struct msr_noise *n = calloc(1, sizeof *n);
    if (!n || !(n->rng = gsl_rng_alloc(gsl_rng_mt19937))) {
        free(n);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    gsl_rng_set(n->rng, (unsigned long)seed);
    n->c = c;
    n->size = size;
    n->draw.fn = draw;
    n->draw.ctx = n;
    *out = n;
    return 0;
}

const struct sim_draw *msr_noise_draw(const struct msr_noise *n) { return &n->draw; }

void msr_noise_free(struct msr_noise *n)
{
    if (!n)
        return;
    gsl_rng_free(n->rng);
    free(n);
}
