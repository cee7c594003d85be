/*
 * rt_pipe_int — rt_pipe's private state, shared by rt_pipe.c (setup, steps,
 * statistics, traces) and rt_replay.c (a worker replaying its op list).
 * Not for use outside runtime/.
 */
#ifndef RT_PIPE_INT_H
#define RT_PIPE_INT_H

#include <pthread.h>

#include "runtime/rt_chan.h"
#include "runtime/rt_mem.h"
#include "base/ps_error.h"
#include "runtime/rt_pipe.h"
#include "sched/sch_partition.h"

/* Buffers of one (stage, micro-batch); NULL when not held. */
struct rt_mbuf {
    float *in;      /* received input (or the previous stage's output) */
    void *stash;
    float *out;     /* output waiting for its send */
    float *gout;    /* gradient of the output */
    float *gin;     /* gradient of the input waiting for its send */
    void *wgrad;    /* split backward, B to W */
};

/* What one op did, for the trace. */
struct rt_rec {
    int64_t start, end;   /* absolute CLOCK_MONOTONIC ns */
};

struct rt_worker {
    struct rt_pipe *p;
    int dev, cpu;
    pthread_t tid;
    struct rt_work ws;
    struct rt_mem mem;
    struct rt_rec *recs;  /* [n_ops[dev]] */
    int64_t t_begin, t_end;
    int64_t busy_ns, comm_ns, wait_ns;
    int64_t runq_ns;            /* waiting for a CPU during the step, -1 unknown */
    double loss;
    int rc;
    char err[PS_ERRMSG_MAX];
    const struct rt_data *data;
};

struct rt_pipe {
    struct rt_net *net;
    struct sch_schedule *s;
    struct sch_partition *part;
    int D, S, M, batch, rows;
    float lr;
    int pin, oversubscribed;
    struct rt_stage *st;        /* [S] */
    struct rt_mbuf *mb;         /* [S * M] */
    struct rt_chan **act;       /* [S]: stage s -> s+1, NULL on one device */
    struct rt_chan **grad;      /* [S]: stage s+1 -> s */
    struct rt_chan **chans;     /* the non-NULL ones, for the watch */
    int n_chans;
    struct rt_watch watch;
    pthread_mutex_t gate_mu;    /* start gate: 0 closed, 1 go, 2 cancelled */
    pthread_cond_t gate_cv;
    int gate;
    int have_watch, have_gate;
    struct rt_worker *w;        /* [D] */
    struct rt_dev_stats *stats; /* [D] */
    int64_t *expected;          /* [D] */
};

static inline struct rt_mbuf *rt_mb(struct rt_pipe *p, int s, int m)
{
    return &p->mb[(size_t)s * p->M + m];
}

/* Thread entry: pins, waits at the start gate, replays dev's list. */
/* Pieces of the replay the MPI backend shares (rt_replay.c): the compute
 * ops (w->data must be set), and the error and allocation helpers. */
int rt_replay_compute(struct rt_worker *w, const struct sch_op *op, int64_t t0);
int rt_replay_missing(const struct sch_op *op, const char *what);
/* An op's end (t_recv when a receive's data arrived then, else now), the
 * memory sample at it, and its time as busy (compute) or communication. */
void rt_replay_finish(struct rt_worker *w, const struct sch_op *op, struct rt_rec *rec,
                      int64_t t_recv);
int rt_replay_take(struct rt_mem *m, const struct sch_op *op, int64_t bytes, void **p);
void *rt_worker_main(void *arg);
/* Frees whatever buffers a failed step left behind. */
void rt_pipe_drop_buffers(struct rt_pipe *p);

#endif
