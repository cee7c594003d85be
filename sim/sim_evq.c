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

static struct sim_event *lane_at(struct sim_evq_lane *l, int k)
{
    return &l->ring[(l->head + k) & (l->cap - 1)];
}

int sim_evq_push(struct sim_evq *q, int lane, sch_time t, int32_t payload)
{
    struct sim_evq_lane *l = &q->lanes[lane];
    if (l->len && t < lane_at(l, l->len - 1)->t)
        PS_BUG("event queue lane %d pushed out of order", lane);
    if (l->len == l->cap) { /* grow the ring (power of two), unwrapping it */
        int cap = l->cap ? l->cap * 2 : 8;
        struct sim_event *r = malloc((size_t)cap * sizeof *r);
        if (!r)
            return ps_error(PS_ENOMEM, "out of memory growing the event queue");
        for (int k = 0; k < l->len; k++)
            r[k] = *lane_at(l, k);
        free(l->ring);
        l->ring = r;
        l->head = 0;
        l->cap = cap;
    }
    struct sim_event ev = { t, (uint32_t)q->seq++, payload };
    *lane_at(l, l->len++) = ev;
    q->n++;
    /* a lane enters the heap keyed by its head event's own (t, seq) */
    return l->len == 1 ? sim_heap_push_seq(&q->heads, t, ev.seq, lane) : 0;
}

struct sim_event sim_evq_pop(struct sim_evq *q)
{
    if (q->n <= 0)
        PS_BUG("pop from an empty event queue");
    int lane = q->heads.a[0].payload;
    struct sim_evq_lane *l = &q->lanes[lane];
    struct sim_event ev = *lane_at(l, 0);
    l->head = (l->head + 1) & (l->cap - 1);
    l->len--;
    q->n--;
    if (l->len) { /* the lane's next event takes its place in the heap */
        const struct sim_event *nx = lane_at(l, 0);
        sim_heap_replace_top(&q->heads, nx->t, nx->seq, lane);
    } else {
        sim_heap_pop(&q->heads);
    }
    return ev;
}

sch_time sim_evq_next_time(const struct sim_evq *q)
{
    return q->heads.a[0].t;
}
