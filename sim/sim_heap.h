/*
 * sim_heap — the heap under the engine's event queue (sim_evq.h keeps the
 * heads of its FIFO lanes here): an array 4-ary min-heap keyed by
 * (time, seq) (4 children per node: half the depth of a binary heap and the
 * children of a node share a cache line). seq is a per-heap counter taken
 * at each push (or the caller's, sim_heap_push_seq), so events with
 * equal times pop in insertion order (FIFO) and replays are bit-identical;
 * nothing is ever ordered by pointer. Embedded struct: sim_heap_init /
 * sim_heap_release. Push and pop are O(log n); the array grows by doubling,
 * so a heap sized for its peak never allocates again.
 */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stdint.h>

#include "sched/sch_schedule.h"

struct sim_event {
    sch_time t;
    uint32_t seq;      /* wraps after 2^32 pushes; the engine stays far below */
    int32_t payload;
};

struct sim_heap {
    struct sim_event *a;
    int n, cap;
    uint64_t seq;      /* pushes so far */
};

int sim_heap_init(struct sim_heap *h, int cap);
void sim_heap_release(struct sim_heap *h);
int sim_heap_push(struct sim_heap *h, sch_time t, int32_t payload);
/* Push with a caller's sequence number (sim_evq keys lane heads by the
 * sequence of their event). Inline, as are the sifts and replace_top: the
 * engine's loop calls them once or twice per event. */
static inline int sim_heap_push_seq(struct sim_heap *h, sch_time t, uint32_t seq,
                                    int32_t payload);
/* Removes and returns the least (t, seq) event; the heap must not be empty. */
struct sim_event sim_heap_pop(struct sim_heap *h);
/* Pop then push (t, seq, payload) in one sift: the same heap as the two
 * calls, at the cost of one (sim_evq swaps a lane's head for its next). */
static inline struct sim_event sim_heap_replace_top(struct sim_heap *h, sch_time t,
                                                    uint32_t seq, int32_t payload);
/* push_seq's slow path: doubles the array. */
int sim_heap_grow(struct sim_heap *h);
void sim_heap_bug_empty(void) __attribute__((noreturn));

/* seq compares modulo 2^32, so order survives one wrap of the counter
 * while the events in the heap span less than 2^31 pushes. */
static inline int sim_ev_less(const struct sim_event *a, const struct sim_event *b)
{
    /* bitwise, not short-circuit: the pop loop compiles to conditional moves
     * instead of branches the predictor cannot learn */
    return (a->t < b->t) | ((a->t == b->t) & ((int32_t)(a->seq - b->seq) < 0));
}

static inline int sim_heap_push_seq(struct sim_heap *h, sch_time t, uint32_t seq,
                                    int32_t payload)
{
    if (h->n == h->cap) {
        int rc = sim_heap_grow(h);
        if (rc < 0)
            return rc;
    }
    struct sim_event ev = { t, seq, payload };
    int i = h->n++;
    while (i > 0) {
        int p = (i - 1) / 4;
        if (!sim_ev_less(&ev, &h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = ev;
    return 0;
}

/* Sifts ev down from the root into a heap of h->n entries whose root slot
 * is free. */
static inline void sim_heap_sift_down(struct sim_heap *h, struct sim_event last)
{
    int i = 0, n = h->n;
    for (;;) {
        int c = 4 * i + 1;
        if (c >= n)
            break;
        int m = c;
        if (c + 4 <= n) { /* full node: a branch-free tournament */
            int m1 = c + sim_ev_less(&h->a[c + 1], &h->a[c]);
            int m2 = c + 2 + sim_ev_less(&h->a[c + 3], &h->a[c + 2]);
            m = sim_ev_less(&h->a[m2], &h->a[m1]) ? m2 : m1;
        } else {
            for (int k = c + 1; k < n; k++)
                if (sim_ev_less(&h->a[k], &h->a[m]))
                    m = k;
        }
        if (!sim_ev_less(&h->a[m], &last))
            break;
        h->a[i] = h->a[m];
        i = m;
    }
    h->a[i] = last;
}

static inline struct sim_event sim_heap_replace_top(struct sim_heap *h, sch_time t,
                                                    uint32_t seq, int32_t payload)
{
    if (h->n <= 0)
        sim_heap_bug_empty();
    struct sim_event top = h->a[0], ev = { t, seq, payload };
    sim_heap_sift_down(h, ev);
    return top;
}

#endif
