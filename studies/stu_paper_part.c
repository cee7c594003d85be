/* Balanced contiguous partitions for the paper reproductions: the exact
 * min-max of per-micro-batch compute (sched/sch_partitioner.h's solver on
 * that cost) and the greedy prefix heuristic. See stu_paper.h. */
#include "studies/stu_paper.h"
#include "sched/sch_partitioner.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

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
    int n = p->n_layers;
    double *sum;
    int rc = time_prefix(p, t, micro_batch, remat, &sum);
    if (rc < 0)
        return rc;
    /* The partitioner's additive cost pre[e] - pre[a] in int64 ns, the unit
     * of its own model (sch_partitioner_model.c); no transfers, no bias. */
    if (!(sum[n] * 1e9 < (double)SCH_PART_INF)) {
        rc = ps_error(PS_EINVAL, "min-max partition: %g s of compute per micro-batch is "
                      "beyond the partitioner's range", sum[n]);
        free(sum);
        return rc;
    }
    int64_t *pre = malloc(((size_t)n + 1) * sizeof *pre);
    if (!pre) {
        free(sum);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int l = 0; l <= n; l++)
        pre[l] = llround(sum[l] * 1e9); /* sum nondecreasing: so is pre */
    free(sum);
    struct sch_part_cost cost = { .pre = pre };
    struct sch_part_problem pb = { .n_layers = n, .n_stages = K, .time = &cost, .same = 1 };
    rc = sch_part_solve(&pb, out, NULL);
    free(pre);
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
