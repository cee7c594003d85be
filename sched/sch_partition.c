#include "sched/sch_partition.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sch_partition *sch_partition_new(int n_stages, int n_layers)
{
    struct sch_partition *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->first = calloc((size_t)n_stages + 1, sizeof *p->first);
    if (!p->first) {
        free(p);
        return NULL;
    }
    p->n_stages = n_stages;
    p->n_layers = n_layers;
    p->first[n_stages] = n_layers;
    return p;
}

void sch_partition_free(struct sch_partition *p)
{
    if (!p)
        return;
    free(p->first);
    free(p);
}

struct sch_partition *sch_partition_copy(const struct sch_partition *p)
{
    struct sch_partition *q = sch_partition_new(p->n_stages, p->n_layers);
    if (q)
        memcpy(q->first, p->first, sizeof *q->first * (size_t)(p->n_stages + 1));
    return q;
}

int sch_partition_equal(const struct sch_partition *a, const struct sch_partition *b)
{
    return a->n_stages == b->n_stages && a->n_layers == b->n_layers &&
           !memcmp(a->first, b->first, sizeof *a->first * (size_t)(a->n_stages + 1));
}

static int check_k(int n_stages, int n_layers)
{
    if (n_stages < 1)
        return ps_error(PS_EUSAGE, "number of stages must be >= 1, got %d", n_stages);
    if (n_stages > n_layers)
        return ps_error(PS_ENOFIT, "%d stages but the model has only %d layers "
                         "(each stage needs at least one)", n_stages, n_layers);
    return 0;
}

int sch_partition_uniform(int n_stages, int n_layers, struct sch_partition **out)
{
    *out = NULL;
    int rc = check_k(n_stages, n_layers);
    if (rc < 0)
        return rc;
    struct sch_partition *p = sch_partition_new(n_stages, n_layers);
    if (!p)
        return ps_error(PS_ENOMEM, "out of memory");
    int base = n_layers / n_stages, extra = n_layers % n_stages;
    for (int s = 0; s < n_stages; s++)
        p->first[s + 1] = p->first[s] + base + (s < extra);
    *out = p;
    return 0;
}

int sch_partition_lingvo(int n_stages, const double *cost, int n_layers,
                         struct sch_partition **out)
{
    *out = NULL;
    int rc = check_k(n_stages, n_layers);
    if (rc < 0)
        return rc;
    double total = 0;
    for (int i = 0; i < n_layers; i++) {
        if (!(cost[i] >= 0) || !isfinite(cost[i]))
            return ps_error(PS_EINVAL, "lingvo partition: layer %d's forward cost is %g (must "
                             "be finite and >= 0)", i, cost[i]);
        total += cost[i];
    }
    if (!isfinite(total))
        return ps_error(PS_EINVAL, "lingvo partition: the layers' forward costs sum to %g",
                         total);
    if (!(total > 0))
        return sch_partition_uniform(n_stages, n_layers, out);
    struct sch_partition *p = sch_partition_new(n_stages, n_layers);
    if (!p)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int s = 1; s <= n_stages; s++)
        p->first[s] = n_layers;
    double run = 0;
    for (int i = 0, prev = 0; i < n_layers; i++) { /* Lingvo's sums, in its order */
        run += cost[i];
        double share = floor(run / total * n_stages);
        int j = share < n_stages - 1 ? (int)share : n_stages - 1;
        for (int s = prev + 1; s <= j; s++) /* layer i opens stages prev+1..j */
            p->first[s] = i;
        prev = j > prev ? j : prev;
    }
    for (int s = 1; s < n_stages; s++) /* every stage a layer */
        if (p->first[s] < p->first[s - 1] + 1)
            p->first[s] = p->first[s - 1] + 1;
    for (int s = n_stages - 1; s >= 1; s--)
        if (p->first[s] > p->first[s + 1] - 1)
            p->first[s] = p->first[s + 1] - 1;
    *out = p;
    return 0;
}

int sch_partition_parse(const char *spec, int n_stages, int n_layers,
                        struct sch_partition **out)
{
    *out = NULL;
    if (!strcmp(spec, "uniform"))
        return sch_partition_uniform(n_stages, n_layers, out);
    int rc = check_k(n_stages, n_layers);
    if (rc < 0)
        return rc;
    long *v;
    int n;
    if ((rc = ps_parse_long_list(spec, "--partition", 1, n_layers, &v, &n)) < 0)
        return rc;
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    if (n != n_stages) {
        free(v);
        return ps_error(PS_EUSAGE, "--partition '%s' has %d stages, the schedule has %d (K, "
                         "times the chunks per device of an interleaved or V schedule)", spec,
                         n, n_stages);
    }
    if (sum != n_layers) {
        free(v);
        return ps_error(PS_EUSAGE, "--partition '%s' covers %ld layers, the model has %d",
                         spec, sum, n_layers);
    }
    struct sch_partition *p = sch_partition_new(n_stages, n_layers);
    if (!p) {
        free(v);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int s = 0; s < n_stages; s++)
        p->first[s + 1] = p->first[s] + (int)v[s];
    free(v);
    *out = p;
    return 0;
}

void sch_partition_format(const struct sch_partition *p, char *buf, int n)
{
    if (n <= 0)
        return;
    size_t full = 0;
    char item[16], tail[40];
    for (int s = 0; s < p->n_stages; s++)
        full += (size_t)snprintf(item, sizeof item, "%s%d", s ? "," : "",
                                 sch_partition_layers(p, s));
    int tl = full < (size_t)n ? 0 : snprintf(tail, sizeof tail, ",... (%d stages)", p->n_stages);
    int off = 0;
    buf[0] = 0;
    for (int s = 0; s < p->n_stages; s++) {
        int len = snprintf(item, sizeof item, "%s%d", s ? "," : "", sch_partition_layers(p, s));
        if (off + len + tl >= n) /* the rest does not fit: end at an entry */
            break;
        memcpy(buf + off, item, (size_t)len + 1);
        off += len;
    }
    if (tl && off + tl < n)
        memcpy(buf + off, tail, (size_t)tl + 1);
}

int sch_partition_layers(const struct sch_partition *p, int s)
{
    return p->first[s + 1] - p->first[s];
}
