/* msr_calib pipelined, the layers' side: a pipelined calibration's
 * classes (msr_calib.h, enum msr_pipe_class) measure whole stages; this
 * scales each stage's layers so that their times sum to the class's
 * centre (its trimmed mean or median, its own or pooled with its partner),
 * keeping the split of the stage's time that the layer passes measured,
 * and rescales them when validate --check or the bench asks for another
 * rule (msr_calib_recentre, msr_calib_repool). See msr_calib_pipe.c for
 * the measurement and why the classes are kept apart.
 * Cost: O(stages x sizes x classes x layers per stage) per rescaling.
 */
#include "measure/msr_calib.h"
#include "measure/msr_calib_int.h"
#include "sched/sch_partition.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>

static void stat_scale(struct msr_stat *s, double f)
{
    s->med *= f;
    s->p25 *= f;
    s->p75 *= f;
    s->min *= f;
    s->max *= f;
    s->mean *= f;
}

double msr_stat_rescale(struct msr_stat *const *st, int n, double target)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += st[i]->med;
    if (!(sum > 0) || !(target > 0) || !isfinite(target))
        return 1;
    double f = target / sum;
    for (int i = 0; i < n; i++)
        stat_scale(st[i], f);
    return f;
}

/* The layers' stats a class scales: the kept kernel (the profile's
 * forward), or t[op], or (BWD_REMAT) the backward after a recompute. */
#define KEPT MSR_CALIB_NOPS
#define BWD_REMAT (MSR_CALIB_NOPS + 1)

/* The stats of the stage's layers for op at size i, and their count. */
static int layer_stats(struct msr_calib *c, const struct sch_partition *part, int s, int op,
                       int i, struct msr_stat **out)
{
    int n = 0;
    for (int l = part->first[s]; l < part->first[s + 1]; l++) {
        struct msr_calib_layer *cl = &c->layers[l];
        out[n++] = op == KEPT ? &cl->kept[i] : op == BWD_REMAT ? &cl->bwd_remat[i]
                                                               : &cl->t[op][i];
    }
    return n;
}

/* What each class scales, and its partner in the pool of opts.pool_remat
 * (-1: alone): F (of a stashed micro-batch) the kept kernel, its forward;
 * R the recompute, pooled with F; B of a stashed micro-batch and B after a
 * recompute, pooled; F-nostash; W, after B (the profile's W is a share of
 * its backward). Each class alone by default: F follows F, R a backward,
 * B of a stashed micro-batch reads a stash written long before, B after R
 * a fresh one, and their times differ (docs/validation.md). */
#define N_CLS 6
static const int CLS[N_CLS][3] = { { MSR_PIPE_F, MSR_PIPE_R, KEPT },
                                   { MSR_PIPE_R, MSR_PIPE_F, MSR_CALIB_RECOMP },
                                   { MSR_PIPE_BB, MSR_PIPE_BR, MSR_CALIB_BWD },
                                   { MSR_PIPE_BR, MSR_PIPE_BB, BWD_REMAT },
                                   { MSR_PIPE_FN, -1, MSR_CALIB_FWD_NOSTASH },
                                   { MSR_PIPE_W, -1, MSR_CALIB_WGRAD } };

int msr_pipe_partner(int k)
{
    for (int q = 0; q < N_CLS; q++)
        if (CLS[q][0] == k)
            return CLS[q][1];
    return -1;
}

/* Scales stage s's layers for class q at size i so that they sum to target
 * and records the factor. Pooled (F with R, B of both modes) the partner's
 * layers get the same factor (one kernel, one time), and only the first of
 * the two classes of a pool is scaled. st: room for the layers. */
static void rescale_cls(struct msr_calib *c, const struct sch_partition *part, int s, int i,
                        int q, double target, int pooled, struct msr_stat **st)
{
    int L = layer_stats(c, part, s, CLS[q][2], i, st);
    double f = msr_stat_rescale(st, L, target);
    MSR_PIPE_AT(c, s, i, CLS[q][0])->scale *= f;
    if (CLS[q][2] == KEPT) /* the F rows (and the fit) are the kept kernel's too */
        for (int l = 0; l < L; l++)
            stat_scale(&c->layers[part->first[s] + l].t[MSR_CALIB_FWD][i], f);
    if (!pooled || CLS[q][1] < 0)
        return;
    int p = q ^ 1; /* the partner's row (pairs 0-1, 2-3) */
    MSR_PIPE_AT(c, s, i, CLS[p][0])->scale *= f;
    L = layer_stats(c, part, s, CLS[p][2], i, st);
    for (int l = 0; l < L; l++)
        stat_scale(st[l], f);
}

/* The same for the stage's updates (one per step, the same at every size). */
static void rescale_update(struct msr_calib *c, const struct sch_partition *part, int s,
                           double target, struct msr_stat **st)
{
    int L = 0;
    for (int l = part->first[s]; l < part->first[s + 1]; l++)
        st[L++] = &c->layers[l].update;
    double f = msr_stat_rescale(st, L, target);
    for (int i = 0; i < c->n_sizes; i++)
        MSR_PIPE_AT(c, s, i, MSR_PIPE_U)->scale *= f;
}

/* Scales every stage's layers from where they are to the classes' centres
 * (by_mean: trimmed means, else medians; pooled: the pools' as
 * opts.pool_remat) and records the rule; classes without samples stay. A
 * class without samples of its own but with its partner's is scaled to
 * those. */
void msr_pipe_scale_to_centres(struct msr_calib *c, const struct sch_partition *part,
                               int by_mean, int pooled, struct msr_stat **st)
{
    for (int s = 0; s < c->pipe_stages; s++) {
        for (int i = 0; i < c->n_sizes; i++)
            for (int q = 0; q < N_CLS; q++) {
                if (pooled && CLS[q][1] >= 0 && (q & 1))
                    continue; /* scaled with its partner */
                const struct msr_pipe_point *pp = MSR_PIPE_AT(c, s, i, CLS[q][0]);
                int own = !pooled && pp->centre_med > 0;
                double med = own ? pp->centre_med : pp->pool_med;
                double mean = own ? pp->centre_mean : pp->pool_mean;
                if (med > 0)
                    rescale_cls(c, part, s, i, q, by_mean ? mean : med, pooled, st);
            }
        const struct msr_pipe_point *u = MSR_PIPE_AT(c, s, 0, MSR_PIPE_U);
        if (c->n_sizes && u->centre_med > 0)
            rescale_update(c, part, s, by_mean ? u->centre_mean : u->centre_med, st);
    }
    c->pipe_by_mean = !!by_mean;
    c->pipe_pooled = !!pooled;
}

static int rescale_all(struct msr_calib *c, int by_mean, int pooled);

int msr_calib_recentre(struct msr_calib *c, int by_mean)
{
    if (!c->pipelined || !c->pipe || c->pipe_by_mean == !!by_mean)
        return 0;
    return rescale_all(c, by_mean, c->pipe_pooled);
}

int msr_calib_repool(struct msr_calib *c, int pooled)
{
    if (!c->pipelined || !c->pipe || c->pipe_pooled == !!pooled)
        return 0;
    return rescale_all(c, c->pipe_by_mean, pooled);
}

static int rescale_all(struct msr_calib *c, int by_mean, int pooled)
{
    struct sch_partition *part;
    int rc = sch_partition_uniform(c->pipe_stages, c->n_layers, &part);
    if (rc < 0)
        return rc;
    struct msr_stat **st = malloc((size_t)c->n_layers * sizeof *st);
    if (!st) {
        sch_partition_free(part);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    msr_pipe_scale_to_centres(c, part, by_mean, pooled, st);
    free(st);
    sch_partition_free(part);
    return 0;
}

