/* Balanced contiguous partitions for the paper reproductions: exact min-max
 * of an additive cost (bisection + greedy) and the greedy prefix heuristic.
 * See stu_paper.h. */
#include "studies/stu_paper.h"
#include "base/ps_error.h"

#include <stdlib.h>

/* Greedy: each stage takes layers while its cost stays <= bound, leaving one
 * layer for each later stage. 1 and the cuts in first[] if every stage fits. */
static int greedy(int n, int K, stu_stage_cost_fn cost, void *ctx, double bound, int *first)
{
    int pos = 0;
    first[0] = 0;
    for (int s = 0; s < K; s++) {
        int b;
        if (s == K - 1) {
            b = n;
            if (cost(ctx, pos, b) > bound)
                return 0;
        } else {
            b = pos + 1;
            if (cost(ctx, pos, b) > bound)
                return 0;
            while (b < n - (K - 1 - s) && cost(ctx, pos, b + 1) <= bound)
                b++;
        }
        first[s + 1] = b;
        pos = b;
    }
    return 1;
}

int stu_part_minmax(int n, int K, stu_stage_cost_fn cost, void *ctx,
                    struct sch_partition **out)
{
    *out = NULL;
    if (K < 1)
        return ps_error(PS_EUSAGE, "number of stages must be >= 1, got %d", K);
    if (K > n)
        return ps_error(PS_ENOFIT, "%d stages but the model has only %d layers", K, n);
    struct sch_partition *p = sch_partition_new(K, n);
    if (!p)
        return ps_error(PS_ENOMEM, "out of memory");
    double lo = 0, hi = cost(ctx, 0, n);
    /* The whole model in stage 0 is a bound every (monotone) cost meets, but
     * the greedy must leave a layer per stage, so widen hi until it works. */
    while (!greedy(n, K, cost, ctx, hi, p->first))
        hi = hi > 0 ? hi * 2 : 1;
    for (int it = 0; it < 200 && hi > lo; it++) {
        double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi)
            break;
        if (greedy(n, K, cost, ctx, mid, p->first))
            hi = mid;
        else
            lo = mid;
    }
    if (!greedy(n, K, cost, ctx, hi, p->first))
        PS_BUG("min-max partition: bound %g was feasible and is not", hi);
    *out = p;
    return 0;
}

struct prefix_ctx {
    double *sum; /* [n + 1] prefix sums */
};

static double prefix_cost(void *ctx, int a, int b)
{
    const struct prefix_ctx *c = ctx;
    return c->sum[b] - c->sum[a];
}

static double layer_time(const struct mdl_profile *p, const struct mdl_topology *t, int l,
                         double mb, enum sch_remat remat)
{
    const struct mdl_layer *ly = &p->layers[l];
    const struct mdl_device *d = &t->devices[0];
    double f = mdl_layer_seconds(d, p->measured, ly, MDL_OP_FWD, mb);
    double b = mdl_layer_seconds(d, p->measured, ly, MDL_OP_BWD, mb);
    return (remat == SCH_REMAT_NEVER ? 1 : 2) * f + b;
}

static int time_prefix(const struct mdl_profile *p, const struct mdl_topology *t, double mb,
                       enum sch_remat remat, double **sum)
{
    if (!(*sum = malloc(((size_t)p->n_layers + 1) * sizeof **sum)))
        return ps_error(PS_ENOMEM, "out of memory");
    (*sum)[0] = 0;
    for (int l = 0; l < p->n_layers; l++)
        (*sum)[l + 1] = (*sum)[l] + layer_time(p, t, l, mb, remat);
    return 0;
}

int stu_part_time(const struct mdl_profile *p, const struct mdl_topology *t, int K,
                  double micro_batch, enum sch_remat remat, struct sch_partition **out)
{
    *out = NULL;
    struct prefix_ctx c;
    int rc = time_prefix(p, t, micro_batch, remat, &c.sum);
    if (rc < 0)
        return rc;
    rc = stu_part_minmax(p->n_layers, K, prefix_cost, &c, out);
    free(c.sum);
    return rc;
}

int stu_part_prefix(const struct mdl_profile *p, const struct mdl_topology *t, int K,
                    double micro_batch, enum sch_remat remat, struct sch_partition **out)
{
    *out = NULL;
    int n = p->n_layers;
    if (K < 1)
        return ps_error(PS_EUSAGE, "number of stages must be >= 1, got %d", K);
    if (K > n)
        return ps_error(PS_ENOFIT, "%d stages but the model has only %d layers", K, n);
    double *sum;
    int rc = time_prefix(p, t, micro_batch, remat, &sum);
    if (rc < 0)
        return rc;
    struct sch_partition *part = sch_partition_new(K, n);
    if (!part) {
        free(sum);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int s = 1; s < K; s++) {
        double target = sum[n] * s / K;
        int b = 1;
        while (b < n && sum[b] < target)
            b++;
        if (target - sum[b - 1] <= sum[b] - target)
            b--;
        int lo = part->first[s - 1] + 1, hi = n - (K - s);
        part->first[s] = b < lo ? lo : b > hi ? hi : b;
    }
    free(sum);
    *out = part;
    return 0;
}
