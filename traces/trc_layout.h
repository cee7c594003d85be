/*
 * trc_layout — where each event of a trace goes in Chrome Trace Event JSON,
 * so that the file obeys the rules strict readers (Perfetto's trace
 * processor, chrome://tracing) apply:
 *
 * Tracks. Complete ("X") slices on one (pid, tid) must nest. A device's
 * compute ops never overlap, but pending transfers do (a receive spans its
 * send's transfer, so two buffers in flight overlap). Each (device, stream)
 * is therefore split into lanes, one track per buffer in flight: an event
 * takes the lowest lane whose last event has ended by its start, so no two
 * events on one lane overlap at all. tid = lane * SCH_NSTREAMS + stream:
 * lane 0 keeps the tids 0, 1, 2 (compute, send, recv) of older traces.
 *
 * Flows. A send and its receive share a flow: "s" inside the send's slice,
 * "f" (bp "e") inside the receive's, each at a point strictly inside its
 * slice (1 us, or a third of the slice if shorter, from the slice's start
 * for "s" and from its end for "f"), the "s" earlier than the "f". A pair
 * whose slices are too short for such points (under 3 ns) or whose other
 * end is not in the trace gets no flow. Ids count from 1 in pair order.
 *
 * Ownership: trc_layout_init fills l (arrays owned by l);
 * trc_layout_release frees them. Cost: O(n log n) sorts of the events plus
 * O(n * lanes) for the lane search (lanes: buffers in flight, a few).
 */
#ifndef TRC_LAYOUT_H
#define TRC_LAYOUT_H

#include <stdint.h>

#include "traces/trc_trace.h"

struct trc_layout {
    int32_t *tid;      /* [n_events] */
    uint32_t *flow;    /* [n_events]: flow id, 0 for none */
    int64_t *flow_ns;  /* [n_events]: where the flow binds (when flow) */
    int32_t *n_lanes;  /* [n_devices * SCH_NSTREAMS]: lanes used (>= 1) */
};

int trc_layout_init(struct trc_layout *l, const struct trc_trace *t);
void trc_layout_release(struct trc_layout *l);

#endif
