/*
 * sim_evq — the engine's event set: FIFO lanes under a small heap.
 *
 * Every event of a lane is pushed with a time no earlier than the lane's
 * last one (the engine gives each distinct op duration its own lane: events
 * pushed at now + d with a non-decreasing now arrive in order). A lane is
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
/* PS_BUG if t is earlier than the lane's last push. */
int sim_evq_push(struct sim_evq *q, int lane, sch_time t, int32_t payload);
/* The least (time, seq) event; q must not be empty. */
struct sim_event sim_evq_pop(struct sim_evq *q);
/* Time of the next event (q must not be empty). */
sch_time sim_evq_next_time(const struct sim_evq *q);

#endif
