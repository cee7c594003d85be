/* One MPI rank replaying its device's op list. Compute ops run through the
 * thread backend's own code (rt_replay_compute in rt_replay.c: same kernels,
 * same buffer takes and frees in the ledger's order); sends and receives are
 * MPI messages instead of in-process channels (see rt_mpi.h). */
#ifdef PIPESIM_MPI
#include "runtime/rt_mpi_int.h"
#include "base/ps_error.h"

#include <stdlib.h>
#include <string.h>

#define STAMP ((int64_t)sizeof(int64_t)) /* send time trailer of every message */

/* Bytes a transfer op moves (without the stamp) and the rank at the other end. */
static int64_t xfer_bytes(const rt_pipe *p, const struct sch_op *op, int *peer)
{
    const struct rt_stage *st = &p->st[op->stage];
    *peer = sch_op_peer(p->s, op);
    switch (op->kind) {
    case SCH_OP_SEND_ACT:
    case SCH_OP_RECV_GRAD: return st->mem.out;
    case SCH_OP_SEND_GRAD:
    case SCH_OP_RECV_ACT: return st->mem.in;
    default: return 0;
    }
}

int rt_mpi_buffers(struct rt_mpi *x)
{
    const struct sch_schedule *s = x->p->s;
    int n = s->n_ops[x->rank], peer;
    int64_t most = 0;
    x->slot = calloc((size_t)n + 1, sizeof *x->slot);
    x->req = malloc(((size_t)n + 1) * sizeof *x->req);
    if (!x->slot || !x->req)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        const struct sch_op *op = &s->ops[x->rank][i];
        x->req[i] = MPI_REQUEST_NULL;
        int64_t b = xfer_bytes(x->p, op, &peer);
        if (sch_op_stream((enum sch_op_kind)op->kind) == SCH_STREAM_SEND &&
            !(x->slot[i] = malloc((size_t)(b + STAMP))))
            return ps_error(PS_ENOMEM, "out of memory for send slots");
        most = b > most ? b : most;
    }
    if (most + STAMP > INT32_MAX)
        return ps_error(PS_EINVAL, "a %lld-byte message exceeds MPI's int count",
                         (long long)most);
    if (!(x->stage = malloc((size_t)(most + STAMP))))
        return ps_error(PS_ENOMEM, "out of memory for the receive buffer");
    return 0;
}

void rt_mpi_buffers_free(struct rt_mpi *x)
{
    for (int i = 0; x->slot && i < x->p->s->n_ops[x->rank]; i++)
        free(x->slot[i]);
    free(x->slot);
    free(x->req);
    free(x->stage);
    x->slot = NULL;
    x->req = NULL;
    x->stage = NULL;
}

static int send(struct rt_mpi *x, int i, const struct sch_op *op, struct rt_mbuf *b)
{
    struct rt_worker *w = x->w;
    int peer, act = op->kind == SCH_OP_SEND_ACT;
    int64_t bytes = xfer_bytes(x->p, op, &peer);
    float **src = act ? &b->out : &b->gin;
    if (!*src)
        return rt_replay_missing(op, act ? "output" : "input gradient");
    memcpy(x->slot[i], *src, (size_t)bytes);
    int64_t stamp = rt_now_ns() - x->off; /* on rank 0's clock */
    memcpy(x->slot[i] + bytes, &stamp, sizeof stamp);
    MPI_Isend(x->slot[i], (int)(bytes + STAMP), MPI_BYTE, peer, (int)sch_op_tag(x->p->s, op),
              MPI_COMM_WORLD, &x->req[i]);
    rt_mem_free(&w->mem, *src, bytes);
    *src = NULL;
    return 0;
}

static int recv(struct rt_mpi *x, const struct sch_op *op, struct rt_mbuf *b,
                struct rt_rec *rec, int64_t *t_recv)
{
    struct rt_worker *w = x->w;
    int peer, act = op->kind == SCH_OP_RECV_ACT, rc, count;
    int64_t bytes = xfer_bytes(x->p, op, &peer), stamp;
    float **dst = act ? &b->in : &b->gout;
    if (*dst)
        return rt_replay_missing(op, "previous use of the buffer");
    if ((rc = rt_replay_take(&w->mem, op, bytes, (void **)dst)) < 0)
        return rc;
    rt_mem_sample(&w->mem, rec->start);
    MPI_Status status;
    MPI_Recv(x->stage, (int)(bytes + STAMP), MPI_BYTE, peer, (int)sch_op_tag(x->p->s, op),
             MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (count != bytes + STAMP) {
        char lab[32];
        sch_op_label(op, lab, sizeof lab);
        return ps_error(PS_ERUNTIME, "%s of stage %d: %d bytes from rank %d, expected %lld",
                         lab, op->stage, count, peer, (long long)(bytes + STAMP));
    }
    memcpy(*dst, x->stage, (size_t)bytes);
    memcpy(&stamp, x->stage + bytes, sizeof stamp);
    *t_recv = rt_now_ns();
    int64_t ready = stamp + x->off; /* back on this rank's clock */
    if (ready > rec->start) {
        w->wait_ns += ready - rec->start;
        rec->start = ready < *t_recv ? ready : *t_recv;
    }
    return 0;
}

static int run_op(struct rt_mpi *x, const struct rt_data *d, int i)
{
    struct rt_worker *w = x->w;
    rt_pipe *p = x->p;
    const struct sch_op *op = &p->s->ops[x->rank][i];
    struct rt_rec *rec = &w->recs[i];
    struct rt_mbuf *b = op->mb >= 0 ? rt_mb(p, op->stage, op->mb) : NULL;
    int64_t t_recv = 0;
    int rc = 0;
    rec->start = rt_now_ns();
    w->data = d;
    switch ((enum sch_op_kind)op->kind) {
    case SCH_OP_FWD:
    case SCH_OP_RECOMP:
    case SCH_OP_BWD:
    case SCH_OP_WGRAD:
    case SCH_OP_UPDATE: rc = rt_replay_compute(w, op, rec->start); break;
    case SCH_OP_SEND_ACT:
    case SCH_OP_SEND_GRAD: rc = send(x, i, op, b); break;
    case SCH_OP_RECV_ACT:
    case SCH_OP_RECV_GRAD: rc = recv(x, op, b, rec, &t_recv); break;
    default: return ps_error(PS_EINVAL, "op kind %d cannot run on the MPI backend", op->kind);
    }
    if (rc < 0)
        return rc;
    rt_replay_finish(w, op, rec, t_recv);
    return 0;
}

int rt_mpi_replay(struct rt_mpi *x, const struct rt_data *data)
{
    int rc = 0, n = x->p->s->n_ops[x->rank];
    x->w->t_begin = rt_now_ns();
    for (int i = 0; rc == 0 && i < n; i++)
        rc = run_op(x, data, i);
    if (rc == 0)
        MPI_Waitall(n, x->req, MPI_STATUSES_IGNORE);
    x->w->t_end = rt_now_ns();
    return rc;
}
#endif
