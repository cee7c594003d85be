#include "sim/sim_engine.h"
#include "sim/sim_error.h"
#include "sim/sim_heap.h"

#include <stdlib.h>
#include <string.h>

struct stream {
    int32_t *ops;      /* global op ids in list order */
    int32_t n, cur;
    int busy;
    sim_time t_start;  /* start of the running op (transfer start for sends) */
};

struct resource {      /* a link direction, or a whole shared link */
    int32_t *q;        /* FIFO of send ops waiting for it (ring) */
    int head, len, cap;
    int busy;
};

struct sim_engine {
    const struct sim_schedule *s;
    const struct sim_costs *c;
    int n_dev;
    int64_t n_ops, n_done;
    struct sim_op *ops;        /* flat copy, [n_ops] */
    int32_t *succ;             /* the one cross-stream dependent, or -1 */
    uint8_t *wait;             /* unfinished cross-stream dependencies */
    sim_time *xfer_start;      /* [n_ops] when tracing: transfer start of a recv */
    struct stream *streams;    /* [n_dev * SIM_NSTREAMS] */
    struct resource *res;
    int n_res;
    int32_t *act_res, *grad_res;       /* [stage] resource of its sends, -1 none */
    sim_time *act_xfer, *grad_xfer;    /* [stage] transfer durations */
    struct sim_heap heap;
    sim_time now;
    int64_t *cur_mem;
    struct sim_result r;
    struct trc_trace *trace;
    int started, finished;
};

/* ---- construction ---- */

static int dep_slot(int kind)
{
    switch (kind) {
    case SIM_OP_FWD: return 0;
    case SIM_OP_BWD: return 1;
    case SIM_OP_SEND_ACT: return 2;
    case SIM_OP_RECV_ACT: return 3;
    case SIM_OP_SEND_GRAD: return 4;
    case SIM_OP_RECV_GRAD: return 5;
    default: return -1;
    }
}
#define N_DEP_SLOTS 6

static int build_links(sim_engine *e, const struct mdl_topology *t)
{
    const struct sim_schedule *s = e->s;
    int S = s->n_stages;
    int *first_res = malloc((size_t)(t->n_links ? t->n_links : 1) * sizeof *first_res);
    if (!first_res)
        return sim_error(SIM_ENOMEM, "out of memory");
    for (int i = 0; i < t->n_links; i++) {
        first_res[i] = e->n_res;
        e->n_res += t->links[i].shared ? 1 : 2;
    }
    e->res = calloc((size_t)e->n_res + 1, sizeof *e->res);
    int rc = 0;
    if (!e->res) {
        rc = sim_error(SIM_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < t->n_links; i++) {
        int nr = t->links[i].shared ? 1 : 2;
        for (int k = 0; k < nr; k++) {
            struct resource *r = &e->res[first_res[i] + k];
            r->cap = t->links[i].n_ends * 2 + 1;
            if (!(r->q = malloc((size_t)r->cap * sizeof *r->q))) {
                rc = sim_error(SIM_ENOMEM, "out of memory");
                goto out;
            }
        }
    }
    for (int st = 0; st < S; st++) {
        e->act_res[st] = e->grad_res[st] = -1;
        for (int dir = 0; dir < 2; dir++) {
            int peer = dir == 0 ? st + 1 : st - 1;
            if (peer < 0 || peer >= S)
                continue;
            int a = s->stage_device[st], b = s->stage_device[peer];
            if (a == b)
                continue;
            int l = mdl_topology_link_between(t, a, b);
            if (l < 0) {
                rc = sim_error(SIM_EINVAL, "topology %s: no link between %s and %s (stages "
                               "%d and %d)", t->path, t->devices[a].name, t->devices[b].name,
                               st, peer);
                goto out;
            }
            const struct mdl_link *lk = &t->links[l];
            int r = first_res[l] + (lk->shared ? 0 : (a == lk->ends[0] ? 0 : 1));
            int64_t bytes = dir == 0 ? e->c->st[st].mem.out : e->c->st[st].mem.in;
            sim_time dur = sim_seconds_to_time(lk->latency + (double)bytes / lk->bandwidth);
            if (dir == 0) {
                e->act_res[st] = r;
                e->act_xfer[st] = dur;
            } else {
                e->grad_res[st] = r;
                e->grad_xfer[st] = dur;
            }
        }
    }
out:
    free(first_res);
    return rc;
}

static int build_deps(sim_engine *e)
{
    const struct sim_schedule *s = e->s;
    int64_t S = s->n_stages, M = s->n_micro;
    int32_t *idx = malloc((size_t)(N_DEP_SLOTS * S * M) * sizeof *idx);
    if (!idx)
        return sim_error(SIM_ENOMEM, "out of memory indexing %lld ops", (long long)e->n_ops);
    for (int64_t i = 0; i < e->n_ops; i++) {
        int k = dep_slot(e->ops[i].kind);
        if (k >= 0)
            idx[(k * S + e->ops[i].stage) * M + e->ops[i].mb] = (int32_t)i;
    }
    int rc = 0;
    for (int64_t i = 0; i < e->n_ops && !rc; i++) {
        const struct sim_op *op = &e->ops[i];
        struct sim_op deps[3];
        int nd = sim_schedule_deps(s, op, deps);
        for (int j = 0; j < nd; j++) {
            int same_dev = s->stage_device[deps[j].stage] == s->stage_device[op->stage];
            if (same_dev && sim_op_stream(deps[j].kind) == sim_op_stream(op->kind))
                continue; /* the stream's order already guarantees it */
            int32_t d = idx[(dep_slot(deps[j].kind) * S + deps[j].stage) * M + deps[j].mb];
            if (e->succ[d] >= 0) {
                rc = sim_error(SIM_EINVAL, "schedule %s: op of stage %d has two cross-stream "
                               "dependents", s->name, deps[j].stage);
                break;
            }
            e->succ[d] = (int32_t)i;
            e->wait[i]++;
        }
    }
    free(idx);
    return rc;
}

int sim_engine_new(const struct sim_schedule *s, const struct sim_costs *c,
                   const struct mdl_topology *t, const struct sim_engine_opts *o,
                   sim_engine **out)
{
    *out = NULL;
    int rc;
    if (c->n_stages != s->n_stages)
        return sim_error(SIM_EINVAL, "costs for %d stages, schedule has %d", c->n_stages,
                         s->n_stages);
    if (s->n_devices > t->n_devices)
        return sim_error(SIM_ENOFIT, "K = %d needs %d devices, topology %s has %d",
                         s->n_devices, s->n_devices, t->path, t->n_devices);
    if ((rc = sim_schedule_validate(s)) < 0)
        return rc;
    sim_engine *e = calloc(1, sizeof *e);
    if (!e)
        return sim_error(SIM_ENOMEM, "out of memory");
    e->s = s;
    e->c = c;
    e->n_dev = s->n_devices;
    e->n_ops = sim_schedule_total_ops(s);
    int S = s->n_stages, D = e->n_dev;
    size_t N = (size_t)e->n_ops;
    e->ops = malloc(N * sizeof *e->ops);
    e->succ = malloc(N * sizeof *e->succ);
    e->wait = calloc(N, 1);
    e->streams = calloc((size_t)D * SIM_NSTREAMS, sizeof *e->streams);
    e->act_res = calloc((size_t)S, sizeof *e->act_res);
    e->grad_res = calloc((size_t)S, sizeof *e->grad_res);
    e->act_xfer = calloc((size_t)S, sizeof *e->act_xfer);
    e->grad_xfer = calloc((size_t)S, sizeof *e->grad_xfer);
    e->cur_mem = calloc((size_t)D, sizeof *e->cur_mem);
    e->r.n_devices = D;
    e->r.busy = calloc((size_t)D, sizeof(sim_time));
    e->r.busy_recomp = calloc((size_t)D, sizeof(sim_time));
    e->r.busy_update = calloc((size_t)D, sizeof(sim_time));
    e->r.static_mem = calloc((size_t)D, sizeof(int64_t));
    e->r.peak_act = calloc((size_t)D, sizeof(int64_t));
    e->r.peak_mem = calloc((size_t)D, sizeof(int64_t));
    e->r.capacity = calloc((size_t)D, sizeof(double));
    if (!e->ops || !e->succ || !e->wait || !e->streams || !e->act_res || !e->grad_res ||
        !e->act_xfer || !e->grad_xfer || !e->cur_mem || !e->r.busy ||
        !e->r.busy_recomp || !e->r.busy_update || !e->r.static_mem || !e->r.peak_act ||
        !e->r.peak_mem || !e->r.capacity) {
        rc = sim_error(SIM_ENOMEM, "out of memory for %lld ops", (long long)e->n_ops);
        goto err_free_engine;
    }
    if ((rc = sim_heap_init(&e->heap, D * SIM_NSTREAMS + 16)) < 0)
        goto err_free_engine;
    /* Flatten the lists and cut each device's list into its three streams. */
    int64_t g = 0;
    for (int d = 0; d < D; d++) {
        int cnt[SIM_NSTREAMS] = { 0 };
        for (int i = 0; i < s->n_ops[d]; i++)
            cnt[sim_op_stream(s->ops[d][i].kind)]++;
        for (int k = 0; k < SIM_NSTREAMS; k++) {
            struct stream *st = &e->streams[d * SIM_NSTREAMS + k];
            st->ops = malloc((size_t)(cnt[k] ? cnt[k] : 1) * sizeof *st->ops);
            if (!st->ops) {
                rc = sim_error(SIM_ENOMEM, "out of memory");
                goto err_free_engine;
            }
        }
        for (int i = 0; i < s->n_ops[d]; i++, g++) {
            e->ops[g] = s->ops[d][i];
            e->succ[g] = -1;
            struct stream *st = &e->streams[d * SIM_NSTREAMS + sim_op_stream(s->ops[d][i].kind)];
            st->ops[st->n++] = (int32_t)g;
        }
    }
    if ((rc = build_links(e, t)) < 0 || (rc = build_deps(e)) < 0)
        goto err_free_engine;
    for (int st = 0; st < S; st++)
        e->r.static_mem[c->st[st].device] += c->st[st].param_bytes;
    for (int d = 0; d < D; d++)
        e->r.capacity[d] = t->devices[d].memory;
    if (o && o->record_trace) {
        e->trace = trc_trace_new("simulated", D, S, s->n_micro);
        e->xfer_start = calloc(N ? N : 1, sizeof *e->xfer_start);
        if (!e->trace || !e->xfer_start ||
            !(e->trace->static_mem = calloc((size_t)D, sizeof(int64_t)))) {
            rc = sim_error(SIM_ENOMEM, "out of memory");
            goto err_free_engine;
        }
        memcpy(e->trace->static_mem, e->r.static_mem, (size_t)D * sizeof(int64_t));
        snprintf(e->trace->schedule, sizeof e->trace->schedule, "%s", s->name);
        snprintf(e->trace->remat, sizeof e->trace->remat, "%s", sim_remat_name(s->remat));
        e->trace->batch = c->micro_batch * s->n_micro;
        for (int d = 0; d < D; d++)
            if ((rc = trc_add_counter(e->trace, d, 0, 0)) < 0)
                goto err_free_engine;
    }
    *out = e;
    return 0;

err_free_engine:
    sim_engine_free(e);
    return rc;
}

void sim_engine_free(sim_engine *e)
{
    if (!e)
        return;
    if (e->streams)
        for (int i = 0; i < e->n_dev * SIM_NSTREAMS; i++)
            free(e->streams[i].ops);
    if (e->res)
        for (int i = 0; i < e->n_res; i++)
            free(e->res[i].q);
    free(e->res);
    free(e->streams);
    free(e->ops);
    free(e->succ);
    free(e->wait);
    free(e->xfer_start);
    free(e->act_res);
    free(e->grad_res);
    free(e->act_xfer);
    free(e->grad_xfer);
    sim_heap_release(&e->heap);
    free(e->cur_mem);
    free(e->r.busy);
    free(e->r.busy_recomp);
    free(e->r.busy_update);
    free(e->r.static_mem);
    free(e->r.peak_act);
    free(e->r.peak_mem);
    free(e->r.capacity);
    trc_trace_free(e->trace);
    free(e);
}

/* ---- running ---- */

static int push(sim_engine *e, sim_time t, int32_t op)
{
    if (t < e->now)
        SIM_BUG("event scheduled in the past (%lld < %lld)", (long long)t, (long long)e->now);
    return sim_heap_push(&e->heap, t, op);
}

static struct stream *stream_of(sim_engine *e, int32_t op)
{
    const struct sim_op *o = &e->ops[op];
    return &e->streams[e->s->stage_device[o->stage] * SIM_NSTREAMS + sim_op_stream(o->kind)];
}

static int mem_change(sim_engine *e, int d, int64_t delta)
{
    if (!delta)
        return 0;
    int64_t v = e->cur_mem[d] += delta;
    if (v > e->r.peak_act[d])
        e->r.peak_act[d] = v;
    return e->trace ? trc_add_counter(e->trace, d, e->now, v) : 0;
}

static int start_transfer(sim_engine *e, struct resource *r, int32_t op)
{
    const struct sim_op *o = &e->ops[op];
    r->busy = 1;
    stream_of(e, op)->t_start = e->now;
    sim_time dur = o->kind == SIM_OP_SEND_ACT ? e->act_xfer[o->stage] : e->grad_xfer[o->stage];
    return push(e, e->now + dur, op);
}

/* Starts the head of a stream if it is idle and the head's dependencies are
 * done. Sends then queue for their link. */
static int try_start(sim_engine *e, struct stream *st)
{
    if (st->busy || st->cur == st->n)
        return 0;
    int32_t op = st->ops[st->cur];
    if (e->wait[op])
        return 0;
    const struct sim_op *o = &e->ops[op];
    st->busy = 1;
    st->t_start = e->now;
    int64_t a, end;
    sim_mem_effect(e->s, o, &e->c->st[o->stage].mem, &a, &end);
    int rc = mem_change(e, e->s->stage_device[o->stage], a);
    if (rc < 0)
        return rc;
    if (o->kind == SIM_OP_SEND_ACT || o->kind == SIM_OP_SEND_GRAD) {
        int ri = o->kind == SIM_OP_SEND_ACT ? e->act_res[o->stage] : e->grad_res[o->stage];
        struct resource *r = &e->res[ri];
        if (!r->busy)
            return start_transfer(e, r, op);
        if (r->len == r->cap)
            SIM_BUG("link queue overflow");
        r->q[(r->head + r->len++) % r->cap] = op;
        return 0;
    }
    return push(e, e->now + sim_costs_op_time(e->c, e->s, o), op);
}

static int record(sim_engine *e, int32_t op, sim_time start)
{
    const struct sim_op *o = &e->ops[op];
    int d = e->s->stage_device[o->stage];
    struct trc_event ev = {
        .device = d, .stage = o->stage, .mb = o->mb, .peer = -1, .kind = o->kind,
        .stream = (uint8_t)sim_op_stream(o->kind), .start_ns = start, .end_ns = e->now,
    };
    switch (o->kind) {
    case SIM_OP_SEND_ACT:
    case SIM_OP_RECV_GRAD: ev.peer = e->s->stage_device[o->stage + 1]; break;
    case SIM_OP_SEND_GRAD:
    case SIM_OP_RECV_ACT: ev.peer = e->s->stage_device[o->stage - 1]; break;
    default: break;
    }
    if (ev.stream != SIM_STREAM_COMPUTE)
        ev.bytes = sim_costs_op_bytes(e->c, o);
    return trc_add_event(e->trace, &ev);
}

static int complete(sim_engine *e, int32_t op)
{
    const struct sim_op *o = &e->ops[op];
    struct stream *st = stream_of(e, op);
    int d = e->s->stage_device[o->stage], rc;
    sim_time start = st->t_start;
    if (o->kind == SIM_OP_RECV_ACT || o->kind == SIM_OP_RECV_GRAD) {
        if (e->xfer_start)
            start = e->xfer_start[op];
    } else if (sim_op_is_compute(o->kind)) {
        sim_time dur = e->now - st->t_start;
        if (o->kind == SIM_OP_UPDATE) {
            e->r.busy_update[d] += dur;
        } else {
            e->r.busy[d] += dur;
            if (o->kind == SIM_OP_RECOMP)
                e->r.busy_recomp[d] += dur;
            if (e->now > e->r.fb_end)
                e->r.fb_end = e->now;
        }
    }
    if (e->trace && (rc = record(e, op, start)) < 0)
        return rc;
    int64_t a, end;
    sim_mem_effect(e->s, o, &e->c->st[o->stage].mem, &a, &end);
    if ((rc = mem_change(e, d, end)) < 0)
        return rc;
    st->busy = 0;
    st->cur++;
    e->n_done++;
    if (o->kind == SIM_OP_SEND_ACT || o->kind == SIM_OP_SEND_GRAD) {
        struct resource *r =
            &e->res[o->kind == SIM_OP_SEND_ACT ? e->act_res[o->stage] : e->grad_res[o->stage]];
        r->busy = 0;
        if (r->len) {
            int32_t next = r->q[r->head];
            r->head = (r->head + 1) % r->cap;
            r->len--;
            if ((rc = start_transfer(e, r, next)) < 0)
                return rc;
        }
        if (e->xfer_start && e->succ[op] >= 0)
            e->xfer_start[e->succ[op]] = start;
    }
    int32_t s2 = e->succ[op];
    if (s2 >= 0 && --e->wait[s2] == 0 && (rc = try_start(e, stream_of(e, s2))) < 0)
        return rc;
    return try_start(e, st);
}

static int finish(sim_engine *e)
{
    if (e->n_done != e->n_ops) {
        for (int d = 0; d < e->n_dev; d++)
            for (int k = 0; k < SIM_NSTREAMS; k++) {
                struct stream *st = &e->streams[d * SIM_NSTREAMS + k];
                if (st->cur < st->n) {
                    char lab[32];
                    sim_op_label(&e->ops[st->ops[st->cur]], lab, sizeof lab);
                    return sim_error(SIM_EINVAL, "schedule %s deadlocks: %lld of %lld ops "
                                     "done; device %d is stuck at %s of stage %d",
                                     e->s->name, (long long)e->n_done, (long long)e->n_ops,
                                     d, lab, e->ops[st->ops[st->cur]].stage);
                }
            }
    }
    struct sim_result *r = &e->r;
    r->makespan = e->now;
    r->n_ops = e->n_ops;
    r->n_events = (int64_t)e->heap.seq;
    r->fits = 1;
    double busy = 0;
    for (int d = 0; d < e->n_dev; d++) {
        r->peak_mem[d] = r->static_mem[d] + r->peak_act[d];
        r->fits &= (double)r->peak_mem[d] <= r->capacity[d];
        busy += (double)r->busy[d];
    }
    r->bubble = r->fb_end > 0 ? 1.0 - busy / ((double)e->n_dev * (double)r->fb_end) : 0;
    if (e->trace)
        trc_trace_sort(e->trace);
    e->finished = 1;
    return 0;
}

static int begin(sim_engine *e)
{
    if (e->started)
        return 0;
    e->started = 1;
    for (int i = 0; i < e->n_dev * SIM_NSTREAMS; i++) {
        int rc = try_start(e, &e->streams[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int sim_engine_step(sim_engine *e)
{
    if (e->finished)
        return 0;
    int rc = begin(e);
    if (rc < 0)
        return rc;
    if (!e->heap.n)
        return (rc = finish(e)) < 0 ? rc : 0;
    struct sim_event ev = sim_heap_pop(&e->heap);
    e->now = ev.t;
    if ((rc = complete(e, ev.payload)) < 0)
        return rc;
    return 1;
}

int sim_engine_run_until(sim_engine *e, sim_time t)
{
    int rc = begin(e);
    if (rc < 0)
        return rc;
    while (!e->finished && (!e->heap.n || e->heap.a[0].t <= t))
        if ((rc = sim_engine_step(e)) <= 0)
            return rc;
    return e->finished ? 0 : 1;
}

int sim_engine_run(sim_engine *e)
{
    int rc;
    while ((rc = sim_engine_step(e)) > 0)
        ;
    return rc;
}

sim_time sim_engine_now(const sim_engine *e) { return e->now; }

const struct sim_result *sim_engine_result(const sim_engine *e)
{
    return e->finished ? &e->r : NULL;
}

const struct trc_trace *sim_engine_trace(const sim_engine *e) { return e->trace; }

int sim_simulate(const struct sim_schedule *s, const struct sim_costs *c,
                 const struct mdl_topology *t, int record_trace, sim_engine **out)
{
    struct sim_engine_opts o = { .record_trace = record_trace };
    int rc = sim_engine_new(s, c, t, &o, out);
    if (rc < 0)
        return rc;
    if ((rc = sim_engine_run(*out)) < 0) {
        sim_engine_free(*out);
        *out = NULL;
    }
    return rc;
}
