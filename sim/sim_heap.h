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
 * sequence of their event). */
int sim_heap_push_seq(struct sim_heap *h, sch_time t, uint32_t seq, int32_t payload);
/* Removes and returns the least (t, seq) event; the heap must not be empty. */
struct sim_event sim_heap_pop(struct sim_heap *h);
/* Pop then push (t, seq, payload) in one sift: the same heap as the two
 * calls, at the cost of one (sim_evq swaps a lane's head for its next). */
struct sim_event sim_heap_replace_top(struct sim_heap *h, sch_time t, uint32_t seq,
                                      int32_t payload);

#endif
