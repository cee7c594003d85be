/* rt_mpi — the MPI backend of pipesim validate (see rt_mpi.h). */
#include "runtime/rt_mpi.h"
#include "base/ps_error.h"
#include "base/ps_mpi.h"

#ifndef PIPESIM_MPI

int rt_mpi_available(void) { return 0; }

int rt_mpi_validate(const struct rt_mpi_args *a)
{
    (void)a;
    return ps_error(PS_EUSAGE, "--backend mpi: this pipesim was built without MPI (install "
                     "openmpi-bin and libopenmpi-dev, then make clean && make)");
}

#else
#include "runtime/rt_cpu.h"
#include "runtime/rt_mpi_int.h"
#include "base/ps_strbuf.h"
#include "base/ps_util.h"
#include "traces/trc_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rt_mpi_available(void) { return 1; }


/* Out of memory where the other ranks wait in a collective: the message, and
 * every rank ended with exit 6 (out of memory), not an abort's 134 (helper-130) */
static void oom_abort(const char *what)
{
    fprintf(stderr, "pipesim validate: out of memory %s\n", what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, ps_exit_status(PS_ENOMEM));
    exit(ps_exit_status(PS_ENOMEM)); /* MPI_Abort does not return */
}

/* Each rank's clock offset to rank 0 from the fastest of 16 ping-pongs. */
static void align_clocks(struct rt_mpi *x)
{
    for (int r = 1; r < x->size; r++) {
        int64_t best = INT64_MAX, off = 0, ta, tr, tb;
        for (int k = 0; k < 16; k++) {
            if (x->rank == 0) {
                ta = rt_now_ns();
                MPI_Send(&ta, 1, MPI_INT64_T, r, 1, MPI_COMM_WORLD);
                MPI_Recv(&tr, 1, MPI_INT64_T, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                tb = rt_now_ns();
                if (tb - ta < best) {
                    best = tb - ta;
                    off = tr - (ta + tb) / 2;
                }
            } else if (x->rank == r) {
                MPI_Recv(&ta, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                tr = rt_now_ns();
                MPI_Send(&tr, 1, MPI_INT64_T, 0, 2, MPI_COMM_WORLD);
            }
        }
        int64_t msg[2] = { off, best / 2 };
        if (x->rank == 0)
            MPI_Send(msg, 2, MPI_INT64_T, r, 3, MPI_COMM_WORLD);
        else if (x->rank == r) {
            MPI_Recv(msg, 2, MPI_INT64_T, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            x->off = msg[0];
            x->skew = msg[1];
        }
    }
}

/* Pins this rank to a core of its own on its host when it can (not with
 * no_pin); -1 unpinned. *shared = some ranks of this host ended up on one
 * core. Every rank takes part in its collectives and flushes denormals,
 * pinned or not (helper-111: a rank given --no-pin returned before them, and
 * the next collective failed with MPI_ERR_TRUNCATE; its products kept
 * denormals the thread backend's workers flush). */
static int pin_rank(struct rt_mpi *x, int no_pin, int *shared)
{
    *shared = 0;
    MPI_Comm local;
    int lr, ln, *cpus = NULL, n = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, x->rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lr);
    MPI_Comm_size(local, &ln);
    int cpu = -1;
    if (!no_pin && rt_cpus_allowed(&cpus, &n) == 0 && n > 0)
        cpu = cpus[lr % n]; /* mpirun may have bound us to one core: that one */
    free(cpus);
    int *all = malloc((size_t)ln * sizeof *all);
    if (all) {
        MPI_Allgather(&cpu, 1, MPI_INT, all, 1, MPI_INT, local);
        for (int i = 0; i < ln; i++)
            for (int j = i + 1; j < ln; j++)
                *shared |= all[i] >= 0 && all[i] == all[j];
        free(all);
    }
    MPI_Comm_free(&local);
    if (cpu >= 0 && rt_pin_self(cpu) < 0)
        cpu = -1;
    rt_flush_denormals(); /* as the threaded runtime's workers */
    return cpu;
}

static void reset_step(struct rt_mpi *x)
{
    struct rt_worker *w = x->w;
    rt_net_zero_grad(x->p->net);
    rt_mem_reset(&w->mem);
    w->busy_ns = w->comm_ns = w->wait_ns = 0;
    w->loss = 0;
    for (int i = 0; i < x->p->s->n_ops[x->rank]; i++)
        x->req[i] = MPI_REQUEST_NULL;
}

/* A rank failed mid-step: its peers may wait on it forever. */
static void abort_step(const struct rt_mpi *x, int rc)
{
    fprintf(stderr, "pipesim validate: rank %d: %s\n", x->rank, ps_errmsg());
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, ps_exit_status(rc));
}

struct step_out { int64_t t0, step_ns, busy; double loss; };

static void one_step(struct rt_mpi *x, const struct rt_data *data, struct step_out *o)
{
    reset_step(x);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = rt_mpi_replay(x, data);
    if (rc < 0)
        abort_step(x, rc);
    if (x->w->mem.cur != 0 || x->w->mem.extra_cur != 0)
        PS_BUG("rank %d ends a step holding %lld activation bytes", x->rank,
                (long long)x->w->mem.cur);
    int64_t b = x->w->t_begin - x->off, e = x->w->t_end - x->off, t1;
    MPI_Allreduce(&b, &o->t0, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&e, &t1, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&x->w->busy_ns, &o->busy, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&x->w->loss, &o->loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    o->step_ns = t1 - o->t0;
}

static struct rt_dev_stats my_stats(const struct rt_mpi *x, int cpu)
{
    const struct rt_worker *w = x->w;
    struct rt_dev_stats ds = {
        .cpu = cpu, .busy_ns = w->busy_ns, .comm_ns = w->comm_ns, .wait_ns = w->wait_ns,
        .peak_act = w->mem.peak, .expected_peak = x->p->expected[x->rank],
        .extra_peak = w->mem.extra_peak, .workspace_bytes = w->ws.bytes,
        .n_allocs = w->mem.n_allocs, .runq_ns = -1,
    };
    for (int s = 0; s < x->p->S; s++)
        if (x->p->s->stage_device[s] == x->rank)
            ds.static_bytes += rt_stage_param_bytes(&x->p->st[s], x->p->net);
    return ds;
}

/* Rank 0: the table of the thread backend plus each rank's host (its stages
 * and workspace too: helper-141, interleaved:2's ranks did not say which
 * stages they held). */
static int print_summary(const struct rt_mpi *x, const struct rt_dev_stats *ds,
                         const char *hosts, const struct step_out *o, int shared)
{
    const struct sch_schedule *s = x->p->s;
    int K = s->n_devices, M = s->n_micro, mismatch = 0;
    char ts[32];
    ps_human_seconds((double)o->step_ns * 1e-9, ts, sizeof ts);
    printf("\nlast step       %s, %.1f samples/s\n", ts,
           o->step_ns > 0 ? x->p->batch / (o->step_ns * 1e-9) : 0);
    double bubble = o->step_ns > 0 ? 1.0 - (double)o->busy / ((double)K * o->step_ns) : 0;
    printf("bubble          %.2f%% measured (idle / step over devices), %.2f%% analytic "
           "(K-1)/(M+K-1)\n", bubble * 100, 100.0 * (K - 1) / (M + K - 1));
    if (shared)
        printf("note            ranks share cores: timings are oversubscribed\n");
    int sw = sch_device_stages_width(s, 7); /* as wide as the longest list */
    printf("\n%6s %-12s %4s %*s %6s %6s %6s %6s %11s %11s %5s %11s %11s\n", "rank", "host",
           "cpu", sw, "stages", "layers", "busy%", "comm%", "wait%", "peak act", "schedule",
           "match", "params+grad", "workspace");
    double T = o->step_ns > 0 ? (double)o->step_ns : 1;
    for (int d = 0; d < K; d++) {
        int layers = 0;
        struct ps_strbuf sl = PS_STRBUF_INIT; /* its stages, whole, as the thread table's */
        sch_device_stages(s, d, &sl);
        for (int k = 0; k < s->n_stages; k++)
            if (s->stage_device[k] == d)
                layers += x->p->st[k].n_layers;
        int ok = ds[d].peak_act == ds[d].expected_peak;
        mismatch |= !ok;
        char pa[32], ep[32], sb[32], wb[32], cpu[16] = "-"; /* unpinned: '-', as the
                                                          thread backend's (helper-121: -1) */
        ps_human_bytes((double)ds[d].peak_act, pa, sizeof pa);
        ps_human_bytes((double)ds[d].expected_peak, ep, sizeof ep);
        ps_human_bytes((double)ds[d].static_bytes, sb, sizeof sb);
        ps_human_bytes((double)ds[d].workspace_bytes, wb, sizeof wb);
        if (ds[d].cpu >= 0)
            snprintf(cpu, sizeof cpu, "%d", ds[d].cpu);
        printf("%6d %-12.12s %4s %*s %6d %6.1f %6.1f %6.1f %11s %11s %5s %11s %11s\n", d,
               hosts + (size_t)d * MPI_MAX_PROCESSOR_NAME, cpu, sw, ps_strbuf_str(&sl), layers,
               100 * ds[d].busy_ns / T, 100 * ds[d].comm_ns / T, 100 * ds[d].wait_ns / T, pa, ep,
               ok ? "yes" : "NO", sb, wb);
        ps_strbuf_release(&sl);
    }
    fflush(stdout);
    return mismatch ? ps_error(PS_ERUNTIME, "measured activation peak differs from the "
                                "schedule's ledger (a runtime bug)") : 0;
}

/* Gathers every rank's events and memory samples to rank 0 as one trace. */
static int gather_trace(const struct rt_mpi *x, const struct rt_dev_stats *ds, int64_t t0,
                        int64_t step_ns, struct trc_trace **out)
{
    const rt_pipe *p = x->p;
    const struct rt_worker *w = x->w;
    int n = p->s->n_ops[x->rank], ns = (int)w->mem.n_samples, rc = 0;
    struct trc_event *ev = calloc((size_t)n + 1, sizeof *ev);
    struct trc_counter *cn = calloc((size_t)ns + 1, sizeof *cn);
    int cnt[2] = { n, ns }, *all = calloc((size_t)x->size * 2, sizeof *all);
    int *dis = calloc((size_t)x->size * 2, sizeof *dis), *len = dis + x->size;
    if (!ev || !cn || !all || !dis)
        oom_abort("gathering the trace"); /* peers wait in the gather */
    for (int i = 0; i < n; i++) {
        const struct sch_op *op = &p->s->ops[x->rank][i];
        int peer = sch_op_peer(p->s, op);
        ev[i] = (struct trc_event){
            .device = x->rank, .stage = op->stage, .mb = op->mb, .peer = peer,
            .kind = op->kind, .stream = (uint8_t)sch_op_stream((enum sch_op_kind)op->kind),
            .start_ns = w->recs[i].start - x->off - t0, .end_ns = w->recs[i].end - x->off - t0,
        };
        const struct rt_stage *st = &p->st[op->stage];
        if (op->kind == SCH_OP_SEND_ACT || op->kind == SCH_OP_RECV_GRAD)
            ev[i].bytes = st->mem.out;
        else if (op->kind == SCH_OP_SEND_GRAD || op->kind == SCH_OP_RECV_ACT)
            ev[i].bytes = st->mem.in;
    }
    for (int i = 0; i < ns; i++)
        cn[i] = (struct trc_counter){ x->rank, w->mem.samples[i].t_ns - x->off - t0,
                                      w->mem.samples[i].bytes };
    MPI_Gather(cnt, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    struct trc_event *aev = NULL;
    struct trc_counter *acn = NULL;
    int tot_e = 0, tot_c = 0;
    if (x->rank == 0) {
        for (int r = 0; r < x->size; r++)
            tot_e += all[2 * r], tot_c += all[2 * r + 1];
        aev = malloc(((size_t)tot_e + 1) * sizeof *aev);
        acn = malloc(((size_t)tot_c + 1) * sizeof *acn);
        if (!aev || !acn)
            oom_abort("gathering the trace");
    }
    for (int pass = 0; pass < 2; pass++) { /* events, then counters, as bytes */
        size_t sz = pass ? sizeof *cn : sizeof *ev;
        for (int r = 0, off = 0; x->rank == 0 && r < x->size; r++) {
            len[r] = all[2 * r + pass] * (int)sz;
            dis[r] = off;
            off += len[r];
        }
        MPI_Gatherv(pass ? (void *)cn : (void *)ev, cnt[pass] * (int)sz, MPI_BYTE,
                    pass ? (void *)acn : (void *)aev, len, dis, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    if (x->rank == 0) {
        struct trc_trace *t = trc_trace_new("measured", p->D, p->S, p->M);
        if (!t || !(t->static_mem = calloc((size_t)p->D, sizeof *t->static_mem))) {
            trc_trace_free(t);
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto out_free;
        }
        t->step_ns = step_ns;
        snprintf(t->schedule, sizeof t->schedule, "%s", p->s->name);
        snprintf(t->remat, sizeof t->remat, "%s", sch_remat_name(p->s->remat));
        t->batch = p->batch;
        for (int d = 0; d < p->D && !rc; d++) {
            t->static_mem[d] = ds[d].static_bytes;
            rc = trc_add_counter(t, d, 0, 0);
        }
        for (int i = 0; i < tot_c && !rc; i++)
            rc = trc_add_counter(t, acn[i].device, acn[i].t_ns, acn[i].bytes);
        for (int i = 0; i < tot_e && !rc; i++)
            rc = trc_add_event(t, &aev[i]);
        if (rc < 0) {
            trc_trace_free(t);
            goto out_free;
        }
        trc_trace_sort(t);
        *out = t;
    }
out_free:
    free(aev);
    free(acn);
    free(all);
    free(dis);
    free(cn);
    free(ev);
    return rc;
}

/* Rank 0 collects every layer's gradients from the rank that holds it. */
static void gather_grads(const struct rt_mpi *x)
{
    const rt_pipe *p = x->p;
    for (int s = 0; s < p->S; s++) {
        int owner = p->s->stage_device[s];
        for (int l = p->part->first[s]; l < p->part->first[s + 1]; l++) {
            struct rt_layer *ly = &p->net->layers[l];
            int nb = ly->out, nw = (int)(ly->n_params - nb);
            if (owner == 0)
                continue;
            if (x->rank == owner) {
                MPI_Send(ly->dw, nw, MPI_FLOAT, 0, 2 * l, MPI_COMM_WORLD);
                MPI_Send(ly->db, nb, MPI_FLOAT, 0, 2 * l + 1, MPI_COMM_WORLD);
            } else if (x->rank == 0) {
                MPI_Recv(ly->dw, nw, MPI_FLOAT, owner, 2 * l, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Recv(ly->db, nb, MPI_FLOAT, owner, 2 * l + 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            }
        }
    }
}

static void print_header(const struct rt_mpi *x, const struct rt_mpi_args *a)
{
    const rt_pipe *p = x->p;
    const struct sch_schedule *s = p->s;
    char part[256];
    rt_pipe_partition(p, part, sizeof part);
    char np[32], sk[32];
    ps_human_count((double)rt_net_params(p->net), np, sizeof np);
    printf("net             %s (%d layer%s, %s parameter%s)\n", p->net->spec, p->net->n_layers,
           p->net->n_layers == 1 ? "" : "s", np, rt_net_params(p->net) == 1 ? "" : "s");
    printf("schedule        %s, K=%d, stages %d, M=%d, batch %d (micro-batch %d), remat %s\n",
           s->name, s->n_devices, s->n_stages, s->n_micro, p->batch, p->rows,
           sch_remat_name(s->remat));
    printf("partition       %s (layers per stage)\n", part);
    printf("data            synthetic regression, seed %lu, lr %g\n", a->seed, (double)p->lr);
    printf("backend         MPI, %d rank%s, one device per rank; clocks aligned to rank 0 "
           "within %s\n", x->size, x->size == 1 ? "" : "s",
           (ps_human_seconds((double)x->skew * 1e-9, sk, sizeof sk), sk));
    printf("kernels         OpenBLAS %s, single-threaded per rank, FP32\n", rt_blas_corename());
    printf("\n%5s %14s %12s\n", "step", "loss", "time");
}

/* Each rank builds its net from its own --net (a file: net read from its own
 * file system) and its own options (mpirun may start ranks with other
 * command lines): both against rank 0's before any message (ps_mpi.h). */
static int same_inputs(const struct rt_mpi_args *a, const struct rt_net *net)
{
    struct ps_strbuf t = PS_STRBUF_INIT, o = PS_STRBUF_INIT;
    char name[300];
    snprintf(name, sizeof name, "--net %s", a->spec);
    struct ps_mpi_input in[2] = {
        { .name = name, .given = strncmp(a->spec, "file:", 5) != 0 },
        { .name = "the options (-K, -M, --batch, --steps, --seed, --lr, --schedule, --remat, "
                  "--partition, --no-pin)", .given = 1 },
    };
    ps_strbuf_printf(&t, "%d", net->in_width);
    for (int i = 0; i < net->n_layers; i++)
        ps_strbuf_printf(&t, " %d:%d:%d:%d", (int)net->layers[i].kind, net->layers[i].in,
                         net->layers[i].out, net->layers[i].relu);
    const struct rt_pipe_config *c = &a->cfg;
    ps_strbuf_printf(&o, "%d %d %d %ld %lu %.9g %s %d %s %d", c->K, c->M, c->batch, a->steps,
                     a->seed, (double)c->lr, c->schedule ? c->schedule : "gpipe", (int)c->remat,
                     c->partition ? c->partition : "uniform", c->no_pin);
    int rc = ps_strbuf_error(&t);
    if (rc == 0)
        rc = ps_strbuf_error(&o);
    if (rc == 0) {
        ps_mpi_hash_text(ps_strbuf_str(&t), in[0].hex);
        ps_mpi_hash_text(ps_strbuf_str(&o), in[1].hex);
    }
    ps_strbuf_release(&t);
    ps_strbuf_release(&o);
    if ((rc = ps_mpi_agree(rc)) < 0)
        return rc;
    return ps_mpi_same_inputs(in, 2);
}

/* Everything between MPI_Init and MPI_Finalize; the same rc on every rank. */
static int run(const struct rt_mpi_args *a, struct rt_mpi *x)
{
    struct rt_net *net = NULL;
    struct rt_data *data = NULL;
    struct trc_trace *trace = NULL;
    struct rt_pipe_config cfg = a->cfg;
    cfg.no_pin = 1; /* one device per process: this file pins (pin_rank) */
    int rc, tag_ub_ok = 1, flag, *ub;
    /* a rank may fail to read its file: net alone; then every rank's inputs */
    if ((rc = ps_mpi_agree(rt_net_parse(a->spec, &net))) < 0 || (rc = same_inputs(a, net)) < 0)
        goto out;
    if ((rc = rt_pipe_new(net, &cfg, &x->p)) < 0 ||
        (rc = rt_net_init_params(net, a->seed)) < 0 ||
        (rc = rt_data_new(net, cfg.batch, a->seed, &data)) < 0)
        goto out_setup;
    const struct sch_schedule *s = x->p->s;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    tag_ub_ok = !flag || 2 * (int64_t)s->n_stages * s->n_micro <= *ub;
    if (x->size != s->n_devices) {
        rc = ps_error(PS_EUSAGE, "--backend mpi: -K %d needs %d MPI rank%s (mpirun -np %d "
                       "pipesim validate ...), running with %d", s->n_devices, s->n_devices,
                       s->n_devices == 1 ? "" : "s", s->n_devices, x->size);
        goto out_setup;
    }
    if (!tag_ub_ok) {
        rc = ps_error(PS_EINVAL, "--backend mpi: S*M = %d needs tags up to %lld, this MPI "
                       "allows %d", s->n_stages * s->n_micro,
                       2LL * s->n_stages * s->n_micro, *ub);
        goto out_setup;
    }
    x->w = &x->p->w[x->rank];
    rc = rt_mpi_buffers(x);
out_setup: /* local so far: agree before the first collective of the run */
    if ((rc = ps_mpi_agree(rc)) < 0)
        goto out;
    int shared, cpu = pin_rank(x, a->cfg.no_pin, &shared), any_shared;
    MPI_Allreduce(&shared, &any_shared, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    align_clocks(x);
    int64_t skew = x->skew;
    MPI_Allreduce(&skew, &x->skew, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (x->rank == 0)
        print_header(x, a);
    struct step_out o;
    for (long i = 0; i < a->steps; i++) {
        one_step(x, data, &o);
        if (x->rank == 0) {
            char ts[32];
            ps_human_seconds((double)o.step_ns * 1e-9, ts, sizeof ts);
            printf("%5ld %14.8f %12s\n", i + 1, o.loss, ts);
            fflush(stdout);
        }
        /* the loss is summed over the ranks: all of them stop together */
        if ((rc = rt_check_diverged(NULL, i + 1, o.loss, a->cfg.lr)) < 0)
            goto out;
    }
    struct rt_dev_stats mine = my_stats(x, cpu), *ds = NULL;
    char host[MPI_MAX_PROCESSOR_NAME] = "", *hosts = NULL;
    int hl;
    MPI_Get_processor_name(host, &hl);
    if (x->rank == 0 && (!(ds = calloc((size_t)x->size, sizeof *ds)) ||
                         !(hosts = calloc((size_t)x->size, MPI_MAX_PROCESSOR_NAME))))
        oom_abort("gathering the devices' figures");
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, ds, (int)sizeof mine, MPI_BYTE, 0,
               MPI_COMM_WORLD);
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME,
               MPI_CHAR, 0, MPI_COMM_WORLD);
    int verdict = x->rank == 0 ? print_summary(x, ds, hosts, &o, any_shared) : 0;
    /* rank 0 writes them, so its options decide who joins the gathers (helper-96: a
     * rank started without --trace skipped one rank 0 waited in, for ever) */
    int want[2] = { a->trace_path || a->csv_path, a->grads_path != NULL };
    MPI_Bcast(want, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (want[0])
        rc = gather_trace(x, ds, o.t0, o.step_ns, &trace);
    if (want[1]) /* every rank takes part even if rank 0 already failed */
        gather_grads(x);
    if (rc == 0 && x->rank == 0 && (want[0] || want[1]))
        rc = a->publish(trace, net, a->publish_ctx); /* one set */
    if (!rc)
        rc = verdict;
    free(ds);
    free(hosts);
out: /* one line for all, from rank 0 (ps_mpi.h) */
    rc = ps_mpi_agree(rc);
    trc_trace_free(trace);
    rt_mpi_buffers_free(x);
    rt_pipe_free(x->p);
    rt_data_free(data);
    rt_net_free(net);
    return rc;
}

int rt_mpi_validate(const struct rt_mpi_args *a)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return ps_error(PS_ERUNTIME, "--backend mpi: MPI_Init failed");
    struct rt_mpi x = { 0 };
    MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &x.size);
    return ps_mpi_finalize(run(a, &x), "validate");
}
#endif
