/* rt_pipe: setup, one step, statistics and the measured trace. */
#include "runtime/rt_cpu.h"
#include "runtime/rt_pipe_int.h"
#include "base/ps_error.h"
#include "base/ps_memavail.h"
#include "sched/sch_schedsize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long a receive polls before sleeping when each worker has its own
 * core, as NCCL's proxies and the frameworks' pipeline workers poll: a
 * condition-variable wake-up costs tens of microseconds (more in a VM),
 * and at 50 us every wait a little longer than that (a stage a few % slower
 * than its neighbour, at small micro-batches) paid it once per message —
 * validate measured bubbles 2-4 points above the simulator's at K = 2,
 * M >= 32. 5 ms covers a wait for any op of a step but the longest. */
#define RT_SPIN_NS 5000000

static int plan_stages(rt_pipe *p, const char *partition)
{
    int rc = sch_partition_parse(partition ? partition : "uniform", p->S, p->net->n_layers,
                                 &p->part);
    if (rc < 0)
        return rc;
    if (!(p->st = calloc((size_t)p->S, sizeof *p->st)))
        return ps_error(PS_ENOMEM, "out of memory");
    for (int s = 0; s < p->S; s++)
        if ((rc = rt_stage_plan(p->net, s, p->S, p->part->first[s],
                                p->part->first[s + 1] - p->part->first[s], p->rows,
                                &p->st[s])) < 0)
            return rc;
    return 0;
}

static int make_channels(rt_pipe *p)
{
    p->act = calloc((size_t)p->S, sizeof *p->act);
    p->grad = calloc((size_t)p->S, sizeof *p->grad);
    p->chans = calloc((size_t)p->S * 2, sizeof *p->chans);
    if (!p->act || !p->grad || !p->chans)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int s = 0; s + 1 < p->S; s++) {
        if (p->s->stage_device[s] == p->s->stage_device[s + 1])
            continue;
        int rc = rt_chan_new(p->M, p->st[s].mem.out, &p->watch, &p->act[s]);
        if (rc < 0)
            return rc;
        p->chans[p->n_chans++] = p->act[s];
        if ((rc = rt_chan_new(p->M, p->st[s + 1].mem.in, &p->watch, &p->grad[s])) < 0)
            return rc;
        p->chans[p->n_chans++] = p->grad[s];
    }
    return 0;
}

/* The ledger's count: sch_mem_effect over each device's list in order. */
static int expected_peaks(rt_pipe *p)
{
    if (!(p->expected = calloc((size_t)p->D, sizeof *p->expected)))
        return ps_error(PS_ENOMEM, "out of memory");
    for (int d = 0; d < p->D; d++) {
        int64_t cur = 0, peak = 0, a, e;
        for (int i = 0; i < p->s->n_ops[d]; i++) {
            const struct sch_op *op = &p->s->ops[d][i];
            sch_mem_effect(p->s, op, &p->st[op->stage].mem, &a, &e);
            cur += a;
            peak = cur > peak ? cur : peak;
            cur += e;
            peak = cur > peak ? cur : peak;
        }
        if (cur != 0)
            return ps_error(PS_EINVAL, "schedule %s: device %d's ledger ends at %lld bytes, "
                             "not 0", p->s->name, d, (long long)cur);
        p->expected[d] = peak;
    }
    return 0;
}

/* Bytes each op costs the runtime besides its schedule entry: a trace
 * record and two memory samples (make_workers). */
#define RT_OP_BYTES (sizeof(struct rt_rec) + 2 * sizeof(struct rt_mem_sample))

/* The whole run's memory, from the stage plans and the ledger, checked
 * before the channels, workspaces and activations are allocated: the net's
 * parameters and gradients (allocated by rt_net_parse but not counted as
 * resident: callers initialize them after this), the data, each device's
 * ledger peak (rt_mem_alloc allocates exactly that), the channel slots,
 * the workspaces and the per-op records (the split-backward buffers kept
 * from B to W are in the ledger's peak). Not covered: the schedule itself
 * (already allocated). A
 * caller that reuses an initialized net (validate --check's grid) has its
 * parameters counted twice. Measured (pipesim validate --no-pin --steps 1
 * --net mlp:layers=8,width=512 -K 2 -M 4, /usr/bin/time -f %M): batch 8192
 * estimate 167.0 MiB, RSS 163.3 MiB; batch 32768: 620.1 vs 580.2 MiB;
 * batch 8192 --remat never: 284.0 vs 268.2 MiB (1.02-1.07 of the peak; the
 * 0.9 margin of ps_mem_check still lets a run use ~84% of what is free). */
static int check_memory(const rt_pipe *p)
{
    double pg = 8.0 * (double)rt_net_params(p->net), act = 0, chan = 0, work = 0;
    double data = 4.0 * p->batch * (rt_net_width(p->net, 0) +
                                    rt_net_width(p->net, p->net->n_layers));
    for (int d = 0; d < p->D; d++) {
        act += (double)p->expected[d];
        double big = 1, rows = 1;
        for (int st = 0; st < p->S; st++)
            if (p->s->stage_device[st] == d) {
                for (int l = p->st[st].first; l <= p->st[st].first + p->st[st].n_layers; l++)
                    if ((double)p->st[st].rows * rt_net_width(p->net, l) > big)
                        big = (double)p->st[st].rows * rt_net_width(p->net, l);
                rows = p->st[st].rows > rows ? p->st[st].rows : rows;
            }
        work += 4 * (3 * big + rows);
    }
    for (int st = 0; st + 1 < p->S; st++)
        if (p->s->stage_device[st] != p->s->stage_device[st + 1])
            chan += (double)p->M * (double)(p->st[st].mem.out + p->st[st + 1].mem.in);
    double ops = (double)sch_schedule_total_ops(p->s) * RT_OP_BYTES;
    char what[400], detail[256], b[5][32];
    snprintf(what, sizeof what, "net '%s' with schedule %s, K=%d, M=%d, batch %d",
             p->net->spec, p->s->name, p->D, p->M, p->batch);
    ps_mem_format(pg, b[0], sizeof b[0]);
    ps_mem_format(act, b[1], sizeof b[1]);
    ps_mem_format(chan, b[2], sizeof b[2]);
    ps_mem_format(work + data, b[3], sizeof b[3]);
    ps_mem_format(ops, b[4], sizeof b[4]);
    snprintf(detail, sizeof detail, "parameters and gradients %s, activations %s, channel "
             "buffers %s, workspaces and data %s, op records %s", b[0], b[1], b[2], b[3], b[4]);
    return ps_mem_check(pg + data + act + chan + work + ops, what, detail,
                         "use a smaller net, batch, -K or -M, or set " PS_MEM_ENV
                         " to override the check");
}

static int make_workers(rt_pipe *p)
{
    int *cpus = NULL, n_cpus = 0, rc;
    if ((rc = rt_cpus_allowed(&cpus, &n_cpus)) < 0)
        return rc;
    p->oversubscribed = p->D > n_cpus;
    p->watch.spin_ns = p->oversubscribed || !p->pin ? 0 : RT_SPIN_NS;
    if (p->oversubscribed && p->pin)
        fprintf(stderr, "pipesim: warning: %d workers on %d cores: timings are "
                        "oversubscribed\n", p->D, n_cpus);
    p->w = calloc((size_t)p->D, sizeof *p->w);
    p->stats = calloc((size_t)p->D, sizeof *p->stats);
    if (!p->w || !p->stats) {
        free(cpus);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    struct rt_stage *mine = malloc((size_t)p->S * sizeof *mine);
    for (int d = 0; d < p->D && !rc; d++) {
        struct rt_worker *w = &p->w[d];
        w->p = p;
        w->dev = d;
        w->cpu = p->pin ? cpus[d % n_cpus] : -1;
        rt_mem_init(&w->mem);
        int n = 0;
        for (int s = 0; mine && s < p->S; s++)
            if (p->s->stage_device[s] == d)
                mine[n++] = p->st[s];
        if (!mine || !(w->recs = calloc((size_t)p->s->n_ops[d] + 1, sizeof *w->recs)))
            rc = ps_error(PS_ENOMEM, "out of memory");
        else if ((rc = rt_work_init(&w->ws, p->net, mine, n)) == 0)
            rc = rt_mem_reserve(&w->mem, 2 * (int64_t)p->s->n_ops[d] + 2);
    }
    free(mine);
    free(cpus);
    return rc;
}

int rt_pipe_new_schedule(struct rt_net *net, struct sch_schedule *s, int batch,
                         const char *partition, float lr, int no_pin, rt_pipe **out)
{
    *out = NULL;
    int rc = sch_schedule_validate(s);
    if (rc < 0)
        goto err_free_schedule;
    if (s->n_replicas > 1) {
        rc = ps_error(PS_EINVAL, "schedule %s has %d data-parallel replicas; the runtime "
                       "runs one pipeline", s->name, s->n_replicas);
        goto err_free_schedule;
    }
    if (batch < 1 || batch % s->n_micro) {
        rc = ps_error(PS_EINVAL, "batch %d must be a positive multiple of M = %d", batch,
                       s->n_micro);
        goto err_free_schedule;
    }
    rt_pipe *p = calloc(1, sizeof *p);
    if (!p) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err_free_schedule;
    }
    p->net = net;
    p->s = s;
    p->D = s->n_devices;
    p->S = s->n_stages;
    p->M = s->n_micro;
    p->batch = batch;
    p->rows = batch / s->n_micro;
    p->lr = lr;
    p->pin = !no_pin;
    if ((rc = plan_stages(p, partition)) < 0)
        goto err_free_pipe;
    if (!(p->mb = calloc((size_t)p->S * p->M, sizeof *p->mb))) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err_free_pipe;
    }
    if ((rc = expected_peaks(p)) < 0 || (rc = check_memory(p)) < 0 ||
        (rc = make_channels(p)) < 0)
        goto err_free_pipe;
    if ((rc = rt_watch_init(&p->watch, p->D, p->chans, p->n_chans)) < 0)
        goto err_free_pipe;
    p->have_watch = 1;
    if (pthread_mutex_init(&p->gate_mu, NULL)) {
        rc = ps_error(PS_ERUNTIME, "pthread_mutex_init failed");
        goto err_free_pipe;
    }
    if (pthread_cond_init(&p->gate_cv, NULL)) {
        pthread_mutex_destroy(&p->gate_mu);
        rc = ps_error(PS_ERUNTIME, "pthread_cond_init failed");
        goto err_free_pipe;
    }
    p->have_gate = 1;
    if ((rc = make_workers(p)) < 0)
        goto err_free_pipe;
    rt_blas_single_thread();
    *out = p;
    return 0;
err_free_pipe:
    rt_pipe_free(p); /* frees s */
    return rc;
err_free_schedule:
    sch_schedule_free(s);
    return rc;
}

int rt_pipe_new(struct rt_net *net, const struct rt_pipe_config *c, rt_pipe **out)
{
    *out = NULL;
    struct sch_schedule *s;
    const char *name = c->schedule ? c->schedule : "gpipe";
    struct sch_mem_sched ms; /* the op lists themselves, before building them */
    if (!sch_mem_sched_estimate(name, c->K, c->M, c->remat, 1, &ms)) {
        char what[160], detail[64];
        snprintf(what, sizeof what, "schedule %s with K=%d, M=%d", name, c->K, c->M);
        snprintf(detail, sizeof detail, "%lld ops", (long long)ms.n_ops);
        int rc = ps_mem_check(ms.bytes + (double)ms.n_ops * RT_OP_BYTES, what, detail,
                               "use a smaller -K or -M, or set " PS_MEM_ENV
                               " to override the check");
        if (rc < 0)
            return rc;
    }
    int rc = sch_schedule_build(name, c->K, c->M, c->remat, &s);
    if (rc < 0)
        return rc;
    return rt_pipe_new_schedule(net, s, c->batch, c->partition, c->lr, c->no_pin, out);
}

void rt_pipe_drop_buffers(rt_pipe *p)
{
    for (int s = 0; p->mb && s < p->S; s++) {
        struct rt_mem *m = &p->w[p->s->stage_device[s]].mem;
        const struct sch_stage_mem *sm = &p->st[s].mem;
        for (int i = 0; i < p->M; i++) {
            struct rt_mbuf *b = rt_mb(p, s, i);
            rt_mem_free(m, b->in, sm->in);
            rt_mem_free(m, b->stash, sm->stash);
            rt_mem_free(m, b->out, sm->out);
            rt_mem_free(m, b->gout, sm->out);
            rt_mem_free(m, b->gin, sm->in);
            rt_mem_free(m, b->wgrad, p->st[s].wgrad_bytes);
            memset(b, 0, sizeof *b);
        }
    }
}

void rt_pipe_free(rt_pipe *p)
{
    if (!p)
        return;
    if (p->w) {
        rt_pipe_drop_buffers(p);
        for (int d = 0; d < p->D; d++) {
            rt_work_release(&p->w[d].ws);
            rt_mem_release(&p->w[d].mem);
            free(p->w[d].recs);
        }
    }
    for (int i = 0; i < p->n_chans; i++)
        rt_chan_free(p->chans[i]);
    if (p->have_watch)
        rt_watch_release(&p->watch);
    if (p->have_gate) {
        pthread_cond_destroy(&p->gate_cv);
        pthread_mutex_destroy(&p->gate_mu);
    }
    for (int s = 0; p->st && s < p->S; s++)
        rt_stage_release(&p->st[s]);
    free(p->st);
    free(p->mb);
    free(p->act);
    free(p->grad);
    free(p->chans);
    free(p->w);
    free(p->stats);
    free(p->expected);
    sch_partition_free(p->part);
    sch_schedule_free(p->s);
    free(p);
}

/* ---- one step ---- */

static void reset_step(rt_pipe *p)
{
    rt_net_zero_grad(p->net);
    for (int i = 0; i < p->n_chans; i++)
        rt_chan_reset(p->chans[i]);
    p->watch.live = p->D;
    p->watch.blocked = 0;
    atomic_store(&p->watch.abort, 0);
    for (int d = 0; d < p->D; d++) {
        struct rt_worker *w = &p->w[d];
        rt_mem_reset(&w->mem);
        w->busy_ns = w->comm_ns = w->wait_ns = 0;
        w->runq_ns = -1;
        w->loss = 0;
        w->rc = 0;
        w->err[0] = 0;
    }
}

static int64_t step_origin(const rt_pipe *p)
{
    int64_t t0 = p->w[0].t_begin;
    for (int d = 1; d < p->D; d++)
        t0 = p->w[d].t_begin < t0 ? p->w[d].t_begin : t0;
    return t0;
}

static int build_trace(const rt_pipe *p, int64_t t0, int64_t step_ns, struct trc_trace **out)
{
    *out = NULL;
    struct trc_trace *t = trc_trace_new("measured", p->D, p->S, p->M);
    if (!t || !(t->static_mem = calloc((size_t)p->D, sizeof *t->static_mem))) {
        trc_trace_free(t);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    t->step_ns = step_ns;
    snprintf(t->schedule, sizeof t->schedule, "%s", p->s->name);
    snprintf(t->remat, sizeof t->remat, "%s", sch_remat_name(p->s->remat));
    t->batch = p->batch;
    int rc = 0;
    for (int d = 0; d < p->D && !rc; d++) {
        const struct rt_worker *w = &p->w[d];
        t->static_mem[d] = p->stats[d].static_bytes;
        rc = trc_add_counter(t, d, 0, 0);
        for (int64_t i = 0; !rc && i < w->mem.n_samples; i++)
            rc = trc_add_counter(t, d, w->mem.samples[i].t_ns - t0, w->mem.samples[i].bytes);
        for (int i = 0; !rc && i < p->s->n_ops[d]; i++) {
            const struct sch_op *op = &p->s->ops[d][i];
            const struct rt_stage *st = &p->st[op->stage];
            struct trc_event ev = {
                .device = d, .stage = op->stage, .mb = op->mb, .peer = sch_op_peer(p->s, op),
                .kind = op->kind, .stream = (uint8_t)sch_op_stream((enum sch_op_kind)op->kind),
                .start_ns = w->recs[i].start - t0, .end_ns = w->recs[i].end - t0,
            };
            if (op->kind == SCH_OP_SEND_ACT || op->kind == SCH_OP_RECV_GRAD)
                ev.bytes = st->mem.out;
            else if (op->kind == SCH_OP_SEND_GRAD || op->kind == SCH_OP_RECV_ACT)
                ev.bytes = st->mem.in;
            rc = trc_add_event(t, &ev);
        }
    }
    if (rc < 0) {
        trc_trace_free(t);
        return rc;
    }
    trc_trace_sort(t);
    *out = t;
    return 0;
}

int rt_pipe_step(rt_pipe *p, const struct rt_data *data, struct rt_step_stats *st,
                 struct trc_trace **trace)
{
    memset(st, 0, sizeof *st);
    if (trace)
        *trace = NULL;
    int out_w = rt_net_width(p->net, p->net->n_layers);
    if (data->n != p->batch || data->in != p->net->in_width || data->out != out_w)
        return ps_error(PS_EINVAL, "data of %d x %d -> %d does not fit a batch of %d x %d "
                         "-> %d", data->n, data->in, data->out, p->batch, p->net->in_width,
                         out_w);
    reset_step(p);
    int started = 0, rc = 0;
    p->gate = 0;
    for (; started < p->D; started++) {
        p->w[started].data = data;
        int e = pthread_create(&p->w[started].tid, NULL, rt_worker_main, &p->w[started]);
        if (e) {
            rc = ps_error(PS_ERUNTIME, "cannot start worker %d: %s", started, strerror(e));
            break;
        }
    }
    pthread_mutex_lock(&p->gate_mu);
    p->gate = rc < 0 ? 2 : 1; /* all start together, or none runs */
    pthread_cond_broadcast(&p->gate_cv);
    pthread_mutex_unlock(&p->gate_mu);
    for (int d = 0; d < started; d++)
        pthread_join(p->w[d].tid, NULL);
    if (rc < 0)
        return rc;
    for (int d = 0; d < p->D && !rc; d++)
        if (p->w[d].rc < 0 && !strstr(p->w[d].err, "aborted (another"))
            rc = ps_error(-p->w[d].rc, "device %d: %s", d, p->w[d].err);
    for (int d = 0; d < p->D && !rc; d++)
        if (p->w[d].rc < 0)
            rc = ps_error(-p->w[d].rc, "device %d: %s", d, p->w[d].err);
    if (rc < 0) {
        rt_pipe_drop_buffers(p);
        return rc;
    }
    int64_t t0 = step_origin(p), t_end = t0, busy = 0;
    for (int d = 0; d < p->D; d++) {
        const struct rt_worker *w = &p->w[d];
        struct rt_dev_stats *ds = &p->stats[d];
        if (w->mem.cur != 0 || w->mem.extra_cur != 0)
            PS_BUG("device %d ends a step holding %lld activation bytes", d,
                    (long long)w->mem.cur);
        t_end = w->t_end > t_end ? w->t_end : t_end;
        busy += w->busy_ns;
        *ds = (struct rt_dev_stats){
            .cpu = w->cpu, .busy_ns = w->busy_ns, .comm_ns = w->comm_ns,
            .wait_ns = w->wait_ns, .peak_act = w->mem.peak, .expected_peak = p->expected[d],
            .extra_peak = w->mem.extra_peak, .workspace_bytes = w->ws.bytes,
            .n_allocs = w->mem.n_allocs, .runq_ns = w->runq_ns,
        };
        for (int s = 0; s < p->S; s++)
            if (p->s->stage_device[s] == d)
                ds->static_bytes += rt_stage_param_bytes(&p->st[s], p->net);
        st->loss += w->loss;
    }
    st->step_ns = t_end - t0;
    st->n_devices = p->D;
    st->dev = p->stats;
    st->bubble = st->step_ns > 0 ? 1.0 - (double)busy / ((double)p->D * st->step_ns) : 0;
    st->samples_per_s = st->step_ns > 0 ? p->batch / (st->step_ns * 1e-9) : 0;
    return trace ? build_trace(p, t0, st->step_ns, trace) : 0;
}

const struct sch_schedule *rt_pipe_schedule(const rt_pipe *p) { return p->s; }
const struct rt_stage *rt_pipe_stage(const rt_pipe *p, int s) { return &p->st[s]; }
int rt_pipe_n_stages(const rt_pipe *p) { return p->S; }
int rt_pipe_oversubscribed(const rt_pipe *p) { return p->oversubscribed; }

void rt_pipe_partition(const rt_pipe *p, char *buf, int n)
{
    sch_partition_format(p->part, buf, n);
}
