/* A worker replaying its device's op list: the generic switch on op kind. */
#include "runtime/rt_cpu.h"
#include "runtime/rt_pipe_int.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <string.h>

static int nomem(const struct sch_op *op, int64_t bytes)
{
    char lab[32];
    sch_op_label(op, lab, sizeof lab);
    return ps_error(PS_ENOMEM, "%s of stage %d: cannot allocate %lld bytes", lab, op->stage,
                     (long long)bytes);
}

void rt_replay_finish(struct rt_worker *w, const struct sch_op *op, struct rt_rec *rec,
                      int64_t t_recv)
{
    rec->end = t_recv ? t_recv : rt_now_ns();
    rt_mem_sample(&w->mem, rec->end);
    if (sch_op_is_compute((enum sch_op_kind)op->kind))
        w->busy_ns += rec->end - rec->start;
    else
        w->comm_ns += rec->end - rec->start;
}

int rt_replay_missing(const struct sch_op *op, const char *what)
{
    char lab[32];
    sch_op_label(op, lab, sizeof lab);
    return ps_error(PS_ERUNTIME, "%s of stage %d runs without its %s (op list out of order)",
                     lab, op->stage, what);
}

/* Takes bytes from the device's ledger; *p stays NULL for 0 bytes. */
int rt_replay_take(struct rt_mem *m, const struct sch_op *op, int64_t bytes, void **p)
{
    *p = rt_mem_alloc(m, bytes);
    return bytes && !*p ? nomem(op, bytes) : 0;
}

/* The frees at the end of a stage's backward (B, or W when split). */
static void backward_done(struct rt_worker *w, const struct sch_op *op, struct rt_mbuf *b)
{
    const struct rt_stage *st = &w->p->st[op->stage];
    rt_mem_free(&w->mem, b->stash, st->mem.stash);
    rt_mem_free(&w->mem, b->gout, st->mem.out);
    b->stash = NULL;
    b->gout = NULL;
}

static const float *stage_input(struct rt_worker *w, const struct sch_op *op, struct rt_mbuf *b)
{
    if (op->stage > 0)
        return b->in;
    const struct rt_data *d = w->data;
    return d->x + (size_t)op->mb * w->p->rows * d->in;
}

static const float *stage_targets(struct rt_worker *w, const struct sch_op *op)
{
    const struct rt_data *d = w->data;
    return d->t + (size_t)op->mb * w->p->rows * d->out;
}

/* The compute ops (F, R, B, W, U), shared with the MPI backend: kernels
 * and buffer takes and frees in the ledger's order. t0: the op's start. */
int rt_replay_compute(struct rt_worker *w, const struct sch_op *op, int64_t t0)
{
    struct rt_pipe *p = w->p;
    const struct sch_schedule *s = p->s;
    const struct rt_stage *st = &p->st[op->stage];
    struct rt_mbuf *b = op->mb >= 0 ? rt_mb(p, op->stage, op->mb) : NULL;
    int sg = op->stage, last = sg + 1 == p->S, rc = 0;
    int remat = op->mb >= 0 && sch_schedule_remat_mb(s, op->mb);
    switch ((enum sch_op_kind)op->kind) {
    case SCH_OP_FWD:
    case SCH_OP_RECOMP: {
        int keep = op->kind == SCH_OP_RECOMP || !remat;
        const float *x = stage_input(w, op, b);
        if (!x)
            return rt_replay_missing(op, "input");
        if (b->stash)
            return rt_replay_missing(op, "backward of the previous forward");
        void *stash = NULL;
        if (keep && (rc = rt_replay_take(&w->mem, op, st->mem.stash, &stash)) < 0)
            return rc;
        rt_mem_sample(&w->mem, t0);
        double loss = 0;
        const float *y = rt_stage_forward(st, p->net, x, stash, stage_targets(w, op), p->batch,
                                          &loss, &w->ws);
        b->stash = stash;
        if (op->kind == SCH_OP_FWD)
            w->loss += loss;
        /* what backward needs of the input is in the stash: a forward that
         * keeps its stash, or the recompute, frees the input */
        if (sg > 0 && keep) {
            rt_mem_free(&w->mem, b->in, st->mem.in);
            b->in = NULL;
        }
        if (op->kind == SCH_OP_RECOMP)
            break;
        if (!last) {
            float *out;
            if ((rc = rt_replay_take(&w->mem, op, st->mem.out, (void **)&out)) < 0)
                return rc;
            memcpy(out, y, (size_t)st->mem.out);
            if (s->stage_device[sg + 1] == s->stage_device[sg])
                rt_mb(p, sg + 1, op->mb)->in = out; /* handed over in place */
            else
                b->out = out;
        }
        break;
    }
    case SCH_OP_BWD: {
        float *gout = last ? NULL : b->gout;
        if (!b->stash || (!last && !gout))
            return rt_replay_missing(op, b->stash ? "output gradient" : "stash");
        if (s->has_wgrad && !(b->wgrad = rt_mem_alloc(&w->mem, st->wgrad_bytes)) &&
            st->wgrad_bytes)
            return nomem(op, st->wgrad_bytes);
        const float *dx = rt_stage_backward(st, p->net, b->stash, gout, s->has_wgrad,
                                            b->wgrad, &w->ws);
        if (!s->has_wgrad)
            backward_done(w, op, b);
        if (sg > 0) {
            float *gin;
            if ((rc = rt_replay_take(&w->mem, op, st->mem.in, (void **)&gin)) < 0)
                return rc;
            memcpy(gin, dx, (size_t)st->mem.in);
            if (s->stage_device[sg - 1] == s->stage_device[sg])
                rt_mb(p, sg - 1, op->mb)->gout = gin;
            else
                b->gin = gin;
        }
        break;
    }
    case SCH_OP_WGRAD:
        if (!b->stash || (st->wgrad_bytes && !b->wgrad))
            return rt_replay_missing(op, "backward");
        rt_stage_wgrad(st, p->net, b->stash, b->gout, b->wgrad);
        rt_mem_free(&w->mem, b->wgrad, st->wgrad_bytes);
        b->wgrad = NULL;
        backward_done(w, op, b);
        break;
    case SCH_OP_UPDATE:
        rt_stage_update(st, p->net, p->lr);
        break;
    default:
        PS_BUG("op kind %d is not a compute op", op->kind);
    }
    return 0;
}

static int run_op(struct rt_worker *w, const struct sch_op *op, struct rt_rec *rec)
{
    struct rt_pipe *p = w->p;
    const struct rt_stage *st = &p->st[op->stage];
    struct rt_mbuf *b = op->mb >= 0 ? rt_mb(p, op->stage, op->mb) : NULL;
    int sg = op->stage, rc = 0;
    int64_t t_sent = 0, t_recv = 0;
    char lab[32];
    rec->start = rt_now_ns();
    switch ((enum sch_op_kind)op->kind) {
    case SCH_OP_FWD:
    case SCH_OP_RECOMP:
    case SCH_OP_BWD:
    case SCH_OP_WGRAD:
    case SCH_OP_UPDATE:
        if ((rc = rt_replay_compute(w, op, rec->start)) < 0)
            return rc;
        break;
    case SCH_OP_SEND_ACT:
        if (!b->out)
            return rt_replay_missing(op, "output");
        rt_chan_send(p->act[sg], op->mb, b->out, st->mem.out, &t_sent);
        rt_mem_free(&w->mem, b->out, st->mem.out);
        b->out = NULL;
        break;
    case SCH_OP_SEND_GRAD:
        if (!b->gin)
            return rt_replay_missing(op, "input gradient");
        rt_chan_send(p->grad[sg - 1], op->mb, b->gin, st->mem.in, &t_sent);
        rt_mem_free(&w->mem, b->gin, st->mem.in);
        b->gin = NULL;
        break;
    case SCH_OP_RECV_ACT:
    case SCH_OP_RECV_GRAD: {
        int act = op->kind == SCH_OP_RECV_ACT;
        int64_t bytes = act ? st->mem.in : st->mem.out;
        float **dst = act ? &b->in : &b->gout;
        if (*dst)
            return rt_replay_missing(op, "previous use of the buffer");
        if ((rc = rt_replay_take(&w->mem, op, bytes, (void **)dst)) < 0)
            return rc;
        rt_mem_sample(&w->mem, rec->start);
        sch_op_label(op, lab, sizeof lab);
        rc = rt_chan_recv(act ? p->act[sg - 1] : p->grad[sg], op->mb, *dst, bytes, &t_sent,
                          &t_recv, lab);
        if (rc < 0)
            return rc;
        if (t_sent > rec->start) {
            w->wait_ns += t_sent - rec->start;
            rec->start = t_sent;
        }
        break;
    }
    default:
        PS_BUG("op kind %d", op->kind);
    }
    rt_replay_finish(w, op, rec, t_recv);
    return 0;
}

void *rt_worker_main(void *arg)
{
    struct rt_worker *w = arg;
    struct rt_pipe *p = w->p;
    int rc = 0;
    if (p->pin)
        rc = rt_pin_self(w->cpu);
    rt_flush_denormals();
    pthread_mutex_lock(&p->gate_mu);
    while (!p->gate)
        pthread_cond_wait(&p->gate_cv, &p->gate_mu);
    int cancelled = p->gate == 2;
    pthread_mutex_unlock(&p->gate_mu);
    if (cancelled)
        return NULL;
    long long q0 = rt_thread_runq_wait_ns();
    w->t_begin = rt_now_ns();
    const struct sch_op *ops = p->s->ops[w->dev];
    for (int i = 0; rc == 0 && i < p->s->n_ops[w->dev]; i++) {
        if (atomic_load(&p->watch.abort)) {
            rc = ps_error(PS_ERUNTIME, "device %d: aborted (another worker failed)", w->dev);
            break;
        }
        rc = run_op(w, &ops[i], &w->recs[i]);
    }
    w->t_end = rt_now_ns();
    long long q1 = rt_thread_runq_wait_ns();
    w->runq_ns = q0 >= 0 && q1 >= q0 ? q1 - q0 : -1;
    w->rc = rc;
    if (rc < 0) {
        snprintf(w->err, sizeof w->err, "%s", ps_errmsg());
        rt_watch_abort(&p->watch);
    }
    rt_watch_leave(&p->watch);
    return NULL;
}
