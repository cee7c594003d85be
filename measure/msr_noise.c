/* msr_noise: op times drawn from a pipelined calibration's spread (see
 * msr_calib.h). */
#include "measure/msr_calib.h"
#include "base/ps_error.h"
#include "sim/sim_engine.h"

#include <math.h>
#include <stdlib.h>

struct msr_noise {
    struct sim_draw draw;
    const struct msr_calib *c;
    int size;      /* the calibration's index of the micro-batch size, -1: none */
    uint64_t s;    /* splitmix64 state */
};

/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): a uniform draw in [0, 1) from 53 bits. */
static double uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

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
    if (k < 0 || n->size < 0 || op->stage < 0 || op->stage >= c->pipe_stages)
        return tabled;
    const double *rq = MSR_PIPE_AT(c, op->stage, n->size, k)->rq;
    if (!(rq[MSR_PIPE_NQ - 1] > 0))
        return tabled;
    double x = uniform(&n->s) * (MSR_PIPE_NQ - 1);
    int j = (int)x;
    double f = rq[j] + (x - j) * (rq[j + 1] - rq[j]); /* x < NQ - 1, so j + 1 exists */
    return (sch_time)llround((double)tabled * f);
}

int msr_noise_new(const struct msr_calib *c, int micro, uint64_t seed, struct msr_noise **out)
{
    *out = NULL;
    struct msr_noise *n = calloc(1, sizeof *n);
    if (!n)
        return ps_error(PS_ENOMEM, "out of memory");
    n->c = c;
    n->s = seed;
    n->size = -1;
    for (int i = 0; c->pipelined && c->pipe && i < c->n_sizes; i++)
        if (c->sizes[i] == micro)
            n->size = i;
    n->draw.fn = draw;
    n->draw.ctx = n;
    *out = n;
    return 0;
}

const struct sim_draw *msr_noise_draw(const struct msr_noise *n) { return &n->draw; }

void msr_noise_free(struct msr_noise *n) { free(n); }
