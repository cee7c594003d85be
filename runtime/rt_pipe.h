/*
 * rt_pipe — pipelined training steps on real cores: one worker thread per
 * device, pinned to its own CPU, replaying that device's op list of a
 * sch_schedule (the same lists the simulator replays) with the rt_stage
 * kernels, bounded channels (rt_chan) between devices, and every
 * activation buffer allocated through rt_mem.
 *
 * Replay: a worker runs its list in order and switches on the op kind
 * (F, R, B, W, U, send/recv of activations and gradients), so any schedule
 * that passes sch_schedule_validate runs unchanged: several stages per
 * device (stage s on stage_device[s], buffers handed over in place between
 * them), re-materialization per micro-batch (sch_schedule_remat_mb), split
 * backward (has_wgrad: B computes the input gradient, W the weight
 * gradient). Sends never block (a slot per micro-batch); a receive waits
 * (sch_schedule_validate checks the lists run that way to the end; a
 * deadlock that slipped through anyway is detected and reported, rt_chan).
 * One pipeline replica: schedules with data-parallel all-reduce ops are
 * refused.
 * Buffers are taken and returned exactly as sch_mem_effect books them
 * (allocations of an op's start before it runs; at its end frees first,
 * then allocations), so each device's measured peak equals the ledger's
 * count over its list in order (rt_pipe_expected_peak).
 *
 * Timing: CLOCK_MONOTONIC ns relative to the step's start (the first
 * worker leaving the start gate). Per op the trace records start/end;
 * a receive is recorded from when both sides were ready (max of the op's
 * start and the send's completion) to the end of its copy, and the time a
 * worker spent before that is its wait. The measured bubble is
 * 1 - sum(compute busy) / (devices x step time).
 *
 * Ownership: rt_pipe_new borrows net (it must outlive the pipe; the pipe
 * trains its parameters in place) and owns the schedule; rt_pipe_free
 * (NULL ok). Cost per step: the kernels' FLOPs, two memcpys per message,
 * O(ops) bookkeeping, D thread creations.
 */
#ifndef RT_PIPE_H
#define RT_PIPE_H

#include <stdint.h>

#include "runtime/rt_net.h"
#include "runtime/rt_stage.h"
#include "sched/sch_schedule.h"
#include "traces/trc_trace.h"

typedef struct rt_pipe rt_pipe;

struct rt_pipe_config {
    const char *schedule;    /* NULL = "gpipe" */
    int K, M, batch;         /* batch must divide by M */
    enum sch_remat remat;
    const char *partition;   /* NULL = "uniform", else "3,5,..." per stage */
    float lr;                /* SGD learning rate of U */
    int no_pin;              /* 1: leave threads unpinned (and do not warn
                                when workers outnumber cores) */
};

struct rt_dev_stats {
    int cpu;                 /* pinned CPU, -1 unpinned */
    int64_t busy_ns;         /* F, R, B, W, U */
    int64_t comm_ns;         /* send and receive copies */
    int64_t wait_ns;         /* blocked in receives before data was there */
    int64_t peak_act;        /* measured activation peak */
    int64_t expected_peak;   /* sch_mem_effect over the list in order */
    int64_t extra_peak;      /* buffers outside the ledger: none now (the split-
                                backward ones are in peak_act); kept for readers */
    int64_t static_bytes;    /* weights + gradients */
    int64_t workspace_bytes;
    int64_t n_allocs;
    int64_t runq_ns;         /* runnable but waiting for a CPU (rt_thread_runq_wait_ns),
                                -1 unknown */
};

struct rt_step_stats {
    int64_t step_ns;
    double loss;             /* before this step's update */
    double bubble;
    double samples_per_s;
    int n_devices;
    const struct rt_dev_stats *dev; /* [n_devices], valid until the next step */
};

int rt_pipe_new(struct rt_net *net, const struct rt_pipe_config *c, rt_pipe **out);
/* Same with a ready-made schedule: validated here and owned by the pipe
 * from the call on (freed on error too). */
int rt_pipe_new_schedule(struct rt_net *net, struct sch_schedule *s, int batch,
                         const char *partition, float lr, int no_pin, rt_pipe **out);
void rt_pipe_free(rt_pipe *p);

/* One training step on data (data->n == batch). Gradients are zeroed
 * first and left in the layers after the update. With trace non-NULL,
 * *trace gets the step's measured trace (trc_trace_free). */
int rt_pipe_step(rt_pipe *p, const struct rt_data *data, struct rt_step_stats *st,
                 struct trc_trace **trace);

const struct sch_schedule *rt_pipe_schedule(const rt_pipe *p);
const struct rt_stage *rt_pipe_stage(const rt_pipe *p, int s);
int rt_pipe_n_stages(const rt_pipe *p);
int rt_pipe_oversubscribed(const rt_pipe *p);
/* "3,5" layers per stage. */
void rt_pipe_partition(const rt_pipe *p, char *buf, int n);

#endif
