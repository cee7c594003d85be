/*
 * sim_evq — the engine's event set: FIFO lanes under a small heap.
 *
 * Every event of a lane is pushed with a time no earlier than the lane's
 * last one (the engine gives each distinct op duration its own lane: events
 * pushed at now + d with a non-decreasing now arrive in order; with drawn op
 * times, each stream's op ends a lane of their own, one event at a time). A lane is
 * then a FIFO ring, and only the lanes' heads sit in a sim_heap keyed by
 * (time, seq). seq is global, so events pop in exactly the (time, seq)
 * order of a single heap of all events — same determinism, equal times in
 * insertion order — while the heap holds at most one entry per busy lane:
 * uniform pipelines have a handful of durations, so a few hundred pending
 * events cost a heap of a few entries.
 * Embedded struct: sim_evq_init / sim_evq_release. push/pop O(log lanes).
 */
#ifndef SIM_EVQ_H
#define SIM_EVQ_H

#include "sim/sim_heap.h"

struct sim_evq_lane {
    struct sim_event *ring;
    int head, len, cap;
};

struct sim_evq {
    struct sim_evq_lane *lanes;
    int n_lanes;
    int n;               /* pending events */
    uint64_t seq;
    struct sim_heap heads; /* payload: lane */
};

int sim_evq_init(struct sim_evq *q, int n_lanes);
void sim_evq_release(struct sim_evq *q);
/* PS_BUG if t is earlier than the lane's last push. Inline, as is pop: the
 * engine calls each once per event. */
static inline int sim_evq_push(struct sim_evq *q, int lane, sch_time t, int32_t payload);
/* The least (time, seq) event; q must not be empty. */
static inline struct sim_event sim_evq_pop(struct sim_evq *q);
/* Time of the next event (q must not be empty). */
sch_time sim_evq_next_time(const struct sim_evq *q);
/* push's slow paths: doubles a full lane's ring (unwrapping it); reports a
 * push out of order. */
int sim_evq_grow(struct sim_evq_lane *l);
void sim_evq_bug(int lane, const char *what) __attribute__((noreturn));

static inline struct sim_event *sim_evq_at(struct sim_evq_lane *l, int k)
{
    return &l->ring[(l->head + k) & (l->cap - 1)];
}

static inline int sim_evq_push(struct sim_evq *q, int lane, sch_time t, int32_t payload)
{
    struct sim_evq_lane *l = &q->lanes[lane];
    if (l->len && t < sim_evq_at(l, l->len - 1)->t)
        sim_evq_bug(lane, "pushed out of order");
    if (l->len == l->cap) {
        int rc = sim_evq_grow(l);
        if (rc < 0)
            return rc;
    }
    struct sim_event ev = { t, (uint32_t)q->seq++, payload };
    *sim_evq_at(l, l->len++) = ev;
    q->n++;
    /* a lane enters the heap keyed by its head event's own (t, seq) */
    return l->len == 1 ? sim_heap_push_seq(&q->heads, t, ev.seq, lane) : 0;
}

static inline struct sim_event sim_evq_pop(struct sim_evq *q)
{
    if (q->n <= 0)
        sim_evq_bug(-1, "popped while empty");
    int lane = q->heads.a[0].payload;
    struct sim_evq_lane *l = &q->lanes[lane];
    struct sim_event ev = *sim_evq_at(l, 0);
    l->head = (l->head + 1) & (l->cap - 1);
    l->len--;
    q->n--;
    if (l->len) { /* the lane's next event takes its place in the heap */
        const struct sim_event *nx = sim_evq_at(l, 0);
        sim_heap_replace_top(&q->heads, nx->t, nx->seq, lane);
    } else {
        sim_heap_pop(&q->heads);
    }
    return ev;
}

#endif
