#include "sim/sim_evq.h"
#include "base/ps_error.h"

#include <stdlib.h>

int sim_evq_init(struct sim_evq *q, int n_lanes)
{
    q->n = 0;
    q->seq = 0;
    q->n_lanes = n_lanes;
    q->lanes = calloc((size_t)(n_lanes > 0 ? n_lanes : 1), sizeof *q->lanes);
    if (!q->lanes)
        return ps_error(PS_ENOMEM, "out of memory for the event queue");
    int rc = sim_heap_init(&q->heads, n_lanes < 64 ? 64 : n_lanes);
    if (rc < 0) {
        free(q->lanes);
        q->lanes = NULL;
    }
    return rc;
}

void sim_evq_release(struct sim_evq *q)
{
    if (q->lanes)
        for (int i = 0; i < q->n_lanes; i++)
            free(q->lanes[i].ring);
    free(q->lanes);
    q->lanes = NULL;
    sim_heap_release(&q->heads);
}

int sim_evq_grow(struct sim_evq_lane *l)
{
    int cap = l->cap ? l->cap * 2 : 8;
    struct sim_event *r = malloc((size_t)cap * sizeof *r);
    if (!r)
        return ps_error(PS_ENOMEM, "out of memory growing the event queue");
    for (int k = 0; k < l->len; k++)
        r[k] = *sim_evq_at(l, k);
    free(l->ring);
    l->ring = r;
    l->head = 0;
    l->cap = cap;
    return 0;
}

void sim_evq_bug(int lane, const char *what)
{
    PS_BUG("event queue lane %d %s", lane, what);
}

sch_time sim_evq_next_time(const struct sim_evq *q)
{
    return q->heads.a[0].t;
}
