/*
 * msr_msgwalk — the messages of one measured step, read one way for the
 * pipelined calibration (msr_calib_pipe.c: the workers' copy lines, the
 * hand-offs and the link latency it fits, with msr_fit.c's lines) and the replay of a step
 * (msr_validate_replay.c: the same figures of that step alone).
 *
 * The runtime's convention (runtime/rt_replay.c): each worker runs its
 * device's ops one after another on one thread and copies every message
 * itself; a send's record is its copy into the channel; a receive's starts
 * when both the worker called it and the message had been sent, and ends
 * when its copy out of the channel is done. So, with a device's events in
 * start order, a receive that starts more than MSR_MSG_WAIT_NS after the
 * end of every event before it on its device waited for its data; one
 * that does not is a copy alone. A receive that is its device's first event
 * has nothing before it and is left out. A receive that waited is paired with its send by the
 * transfer's tag (sch_op_tag's numbering, from the trace's stages and
 * micro-batches).
 *
 * Ownership: borrows the trace; the callback gets pointers into it.
 * Cost: O(events log events) time, O(events + stages x micro-batches)
 * memory for the walk.
 */
#ifndef MSR_MSGWALK_H
#define MSR_MSGWALK_H

#include "traces/trc_trace.h"

/* A receive that starts more than this after the ops before it on its
 * device ended waited for its data (1 us: far above the clock's reading
 * cost, far below an op). */
#define MSR_MSG_WAIT_NS 1000

enum msr_msg_kind {
    MSR_MSG_SEND,        /* a send: the sender's copy */
    MSR_MSG_RECV_COPY,   /* a receive whose data was there: the reader's copy */
    MSR_MSG_RECV_WAITED, /* a receive that waited for its data */
};

struct msr_msg {
    enum msr_msg_kind kind;
    const struct trc_event *ev;   /* the send or the receive */
    const struct trc_event *send; /* MSR_MSG_RECV_WAITED: its send, NULL when
                                     the trace has none */
};

/* Calls fn(ctx, m) for every send and every receive of t but one that is
 * its device's first event, in device then start order; stops at and
 * returns the first negative return. PS_ENOMEM. */
typedef int (*msr_msg_fn)(void *ctx, const struct msr_msg *m);
int msr_msg_walk(const struct trc_trace *t, msr_msg_fn fn, void *ctx);

#endif
