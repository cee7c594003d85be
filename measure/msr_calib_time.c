/* msr_calib timing: layer passes and updates per stage on pinned cores, the
 * GEMM rate (see msr_calib.h); the link is timed in msr_calib_link.c. */
#include "measure/msr_calib.h"
#include "measure/msr_calib_int.h"
#include "runtime/rt_chan.h"
#include "runtime/rt_cpu.h"
#include "runtime/rt_net.h"
#include "runtime/rt_stage.h"
#include "sched/sch_partition.h"
#include "base/ps_error.h"
#include "base/ps_memavail.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double secs(int64_t ns) { return (double)ns * 1e-9; }

static float *other(const struct rt_work *w, const float *cur)
{
    return cur == w->a ? w->b : w->a;
}

static void *at(uint8_t *base, int64_t off) { return off < 0 ? NULL : base + off; }

/* One forward over the stage's layers, as rt_stage_forward runs it, timing
 * each layer (the head's loss counts with the head). stash NULL: the F of a
 * re-materialized micro-batch. t[l] for the stage's l-th layer. */
static void pass_fwd(struct rt_net *net, const struct rt_stage *st, const struct rt_work *w,
                     const float *x, const float *tg, uint8_t *stash, double *t)
{
    const float *cur = x;
    int L = st->n_layers, r = st->rows;
    for (int l = 0; l < L; l++) {
        const struct rt_layer *ly = &net->layers[st->first + l];
        int64_t t0 = rt_now_ns();
        if (stash && st->x_off[l] >= 0) {
            float *xs = at(stash, st->x_off[l]);
            if (cur != xs)
                memcpy(xs, cur, (size_t)r * ly->in * sizeof *xs);
            cur = xs;
        }
        float *dst = stash && l + 1 < L && st->x_off[l + 1] >= 0 ? at(stash, st->x_off[l + 1])
                                                                 : other(w, cur);
        float *aux = ly->kind == RT_LAYER_NORM ? (stash ? at(stash, st->aux_off[l]) : w->aux)
                                               : NULL;
        rt_layer_forward(ly, r, cur, dst, aux, stash ? at(stash, st->mask_off[l]) : NULL);
        cur = dst;
        if (l == L - 1 && st->is_last_layer_head)
            rt_loss(r, ly->out, r, cur, tg, stash ? at(stash, st->dy_off) : NULL);
        t[l] = secs(rt_now_ns() - t0);
    }
}

/* One backward (input and weight gradients) from a filled stash, as
 * rt_stage_backward runs it (stage 0's first layer computes no input
 * gradient); gout: the output gradient of a stage without the head. t[l]:
 * the layer's backward, tw[l] the weight gradient inside it (the W of a
 * split-backward schedule; the rest is its B). */
static void pass_bwd(struct rt_net *net, const struct rt_stage *st, const struct rt_work *w,
                     uint8_t *stash, float *gout, double *t, double *tw)
{
    float *g = st->is_last_layer_head ? at(stash, st->dy_off) : gout;
    int r = st->rows;
    for (int l = st->n_layers - 1; l >= 0; l--) {
        struct rt_layer *ly = &net->layers[st->first + l];
        int64_t t0 = rt_now_ns();
        const float *aux = at(stash, st->aux_off[l]);
        rt_layer_grad_prep(ly, r, at(stash, st->mask_off[l]), g);
        int64_t tw0 = rt_now_ns();
        rt_layer_grad_weight(ly, r, at(stash, st->x_off[l]), aux, g);
        tw[l] = secs(rt_now_ns() - tw0);
        if (l > 0 || st->index > 0) {
            float *dst = other(w, g);
            rt_layer_grad_input(ly, r, aux, g, dst);
            g = dst;
        }
        t[l] = secs(rt_now_ns() - t0);
    }
}

/* Per (stage, micro-batch size): the stage plan, workspace, one stash and
 * input per micro-batch of a batch of the largest size, and the samples. */
struct size_run {
    int n;
    struct rt_stage st;
    struct rt_work w;
    int have_plan, have_work;
    int n_buf;           /* micro-batches of the largest size's batch */
    uint8_t *stash;
    float *x, *gout;     /* [n_buf][n][in width], [n][out width] */
    const float *tg;     /* targets of the head */
    size_t x_stride;     /* floats per micro-batch input */
    struct rt_data *data;
    int cap, cnt[MSR_CALIB_NOPS];
    double *samp;        /* [ops][stage layers][cap] */
};

static void record(struct size_run *s, int op, const double *t)
{
    int L = s->st.n_layers;
    for (int l = 0; l < L; l++)
        s->samp[((size_t)op * L + l) * s->cap + s->cnt[op]] = t[l];
    s->cnt[op]++;
}

static void size_release(struct size_run *s)
{
    if (s->have_plan)
        rt_stage_release(&s->st);
    if (s->have_work)
        rt_work_release(&s->w);
    free(s->stash);
    free(s->samp);
    free(s->gout);
    if (s->x && (!s->data || s->x != s->data->x))
        free(s->x);
    rt_data_free(s->data);
}

static int size_setup(struct rt_net *net, const struct sch_partition *part, int stage, int n,
                      int max_n, int reps, uint64_t seed, struct size_run *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    int first = part->first[stage], L = part->first[stage + 1] - first, rc;
    if ((rc = rt_stage_plan(net, stage, part->n_stages, first, L, n, &s->st)) < 0)
        return rc;
    s->have_plan = 1;
    if ((rc = rt_work_init(&s->w, net, &s->st, 1)) < 0)
        return rc;
    s->have_work = 1;
    /* as many micro-batches as a step of the batch holds: the working set,
     * and so the cache state, of the steps the grid runs */
    s->n_buf = max_n / n;
    s->n_buf = s->n_buf < 1 ? 1 : s->n_buf;
    s->cap = 2 * reps * s->n_buf; /* B is timed twice per micro-batch */
    s->stash = calloc((size_t)s->n_buf, (size_t)s->st.mem.stash);
    s->samp = calloc((size_t)MSR_CALIB_NOPS * L * s->cap, sizeof *s->samp);
    size_t w_in = (size_t)rt_net_width(net, first), w_out = (size_t)rt_net_width(net, first + L);
    s->gout = malloc((size_t)n * w_out * sizeof *s->gout);
    if (!s->stash || !s->samp || !s->gout)
        return ps_error(PS_ENOMEM, "out of memory for %d stashes of %lld bytes", s->n_buf,
                         (long long)s->st.mem.stash);
    for (size_t i = 0; i < (size_t)n * w_out; i++)
        s->gout[i] = 1e-3f * (float)((int)(i % 7) - 3);
    if ((rc = rt_data_new(net, s->n_buf * n, seed, &s->data)) < 0)
        return rc;
    s->tg = s->data->t;
    s->x_stride = (size_t)n * w_in;
    if (stage == 0) {
        s->x = s->data->x;
        return 0;
    }
    /* a later stage's input: activations of its width, as the data's scale */
    if (!(s->x = malloc((size_t)s->n_buf * n * w_in * sizeof *s->x)))
        return ps_error(PS_ENOMEM, "out of memory");
    for (size_t i = 0; i < (size_t)s->n_buf * n * w_in; i++)
        s->x[i] = s->data->x[i % ((size_t)s->n_buf * n * s->data->in)];
    return 0;
}

static const float *mb_x(const struct size_run *s, int m)
{
    return s->x + (size_t)m * s->x_stride;
}

/* One repetition at one size: the phases of a GPipe step on one device
 * over n_buf micro-batches, so every op runs after the ops it follows in a
 * pipeline: all forwards keeping their stash, all backwards (B after B);
 * all forwards keeping nothing, then recompute and backward per
 * micro-batch (R after B, B after R); then the update of each layer (U
 * after the last B), into upd[layer] when timed. */
static void size_rep(struct rt_net *net, struct size_run *s, int timed, double *tmp,
                     double *upd)
{
    int nb = s->n_buf;
    for (int l = 0; l < s->st.n_layers; l++) /* the step's gradients only */
        rt_layer_zero_grad(&net->layers[s->st.first + l]);
    size_t tstride = (size_t)s->n * s->data->out;
    for (int m = 0; m < nb; m++) {
        pass_fwd(net, &s->st, &s->w, mb_x(s, m), s->tg + m * tstride,
                 s->stash + (size_t)m * s->st.mem.stash, tmp);
        if (timed)
            record(s, MSR_CALIB_FWD, tmp);
    }
    for (int m = nb - 1; m >= 0; m--) {
        pass_bwd(net, &s->st, &s->w, s->stash + (size_t)m * s->st.mem.stash, s->gout, tmp,
                 tmp + s->st.n_layers);
        if (timed) {
            record(s, MSR_CALIB_BWD, tmp);
            record(s, MSR_CALIB_WGRAD, tmp + s->st.n_layers);
        }
    }
    for (int m = 0; m < nb; m++) {
        pass_fwd(net, &s->st, &s->w, mb_x(s, m), s->tg + m * tstride, NULL, tmp);
        if (timed)
            record(s, MSR_CALIB_FWD_NOSTASH, tmp);
    }
    for (int m = nb - 1; m >= 0; m--) {
        uint8_t *stash = s->stash + (size_t)m * s->st.mem.stash;
        pass_fwd(net, &s->st, &s->w, mb_x(s, m), s->tg + m * tstride, stash, tmp);
        if (timed)
            record(s, MSR_CALIB_RECOMP, tmp);
        pass_bwd(net, &s->st, &s->w, stash, s->gout, tmp, tmp + s->st.n_layers);
        if (timed) {
            record(s, MSR_CALIB_BWD, tmp);
            record(s, MSR_CALIB_WGRAD, tmp + s->st.n_layers);
        }
    }
    for (int l = 0; l < s->st.n_layers; l++) {
        int64_t t0 = rt_now_ns();
        rt_layer_sgd(&net->layers[s->st.first + l], 1e-4f);
        if (timed)
            upd[l] = secs(rt_now_ns() - t0);
    }
}

static void size_stats(struct msr_calib *c, const struct size_run *run, int i, double *v)
{
    int L = run->st.n_layers;
    for (int l = 0; l < L; l++) {
        struct msr_calib_layer *cl = &c->layers[run->st.first + l];
        for (int op = 0; op < MSR_CALIB_NOPS; op++) {
            memcpy(v, &run->samp[((size_t)op * L + l) * run->cap],
                   (size_t)run->cnt[op] * sizeof *v);
            msr_stat_of(v, run->cnt[op], &cl->t[op][i]);
        }
        /* the profile's forward: kept F and R are one kernel; pool them */
        int nf = run->cnt[MSR_CALIB_FWD], nr = run->cnt[MSR_CALIB_RECOMP];
        memcpy(v, &run->samp[((size_t)MSR_CALIB_FWD * L + l) * run->cap],
               (size_t)nf * sizeof *v);
        memcpy(v + nf, &run->samp[((size_t)MSR_CALIB_RECOMP * L + l) * run->cap],
               (size_t)nr * sizeof *v);
        msr_stat_of(v, nf + nr, &cl->kept[i]);
    }
}

/* One stage's worker: every size in turn, in step with the other stages'
 * workers (a barrier per size), so the stages run concurrently on their
 * cores as in the pipeline, sharing the memory system as they do there. */
struct stage_job {
    struct rt_net *net;
    struct msr_calib *c;
    const struct sch_partition *part;
    int stage, cpu, pin;
    uint64_t seed;
    pthread_barrier_t *bar;
    struct gate *gate;
    int rc;
    char err[PS_ERRMSG_MAX];
};

/* All workers start together, or none does (a failed thread creation). */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state; /* 0 closed, 1 go, 2 cancelled */
};

static int gate_wait(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    while (!g->state)
        pthread_cond_wait(&g->cv, &g->mu);
    int go = g->state == 1;
    pthread_mutex_unlock(&g->mu);
    return go;
}

static void gate_open(struct gate *g, int state)
{
    pthread_mutex_lock(&g->mu);
    g->state = state;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void *stage_main(void *arg)
{
    struct stage_job *j = arg;
    if (j->gate && !gate_wait(j->gate))
        return NULL;
    struct msr_calib *c = j->c;
    int S = c->n_sizes, reps = c->repeats, rc = j->pin ? rt_pin_self(j->cpu) : 0;
    rt_flush_denormals(); /* as the runtime's workers */
    int first = j->part->first[j->stage], last = j->part->first[j->stage + 1], L = last - first;
    double *tmp = malloc((size_t)2 * L * sizeof *tmp), *v = NULL;
    double *upd = calloc((size_t)L * S * reps, sizeof *upd), *u = malloc(sizeof *u * (size_t)L);
    int n_upd = 0;
    if (!rc && (!tmp || !upd || !u))
        rc = ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; i < S; i++) {
        if (j->bar)
            pthread_barrier_wait(j->bar); /* failed workers keep the pace */
        if (rc)
            continue;
        struct size_run run;
        rc = size_setup(j->net, j->part, j->stage, c->sizes[i],
                        c->batch > 0 ? c->batch : c->sizes[S - 1], reps, j->seed, &run);
        free(v);
        v = rc ? NULL : malloc(2 * (size_t)run.cap * sizeof *v);
        if (!rc && !v)
            rc = ps_error(PS_ENOMEM, "out of memory");
        for (int rep = -c->warmup; rep < reps && !rc; rep++) {
            size_rep(j->net, &run, rep >= 0, tmp, u);
            for (int l = 0; rep >= 0 && l < L; l++)
                upd[(size_t)l * S * reps + n_upd] = u[l];
            n_upd += rep >= 0;
        }
        if (!rc)
            size_stats(c, &run, i, v); /* this stage's layers only */
        size_release(&run);
        for (int l = first; l < last; l++)
            rt_layer_zero_grad(&j->net->layers[l]);
    }
    for (int l = 0; !rc && l < L; l++) /* U over every size's steps */
        msr_stat_of(upd + (size_t)l * S * reps, n_upd, &c->layers[first + l].update);
    free(tmp);
    free(v);
    free(upd);
    free(u);
    j->rc = rc;
    if (rc < 0)
        snprintf(j->err, sizeof j->err, "%s", ps_errmsg());
    return NULL;
}

/* What the stages' workers allocate at once (size_setup, each stage at its
 * largest size's set, the stages side by side), checked against the memory
 * before any of it is (helper-127: --micro-batches 131072 grew to a 4 GiB
 * workspace and 3.5 GB of stashes before failing, where validate refuses the
 * same net up front): stashes of the step's micro-batches, the input data
 * and a later stage's input copy, the gradient in, the samples and the
 * workspace (rt_work_init: three buffers of the widest layer's rows and
 * the rows); then, after them, the link's ping-pong of the largest message
 * (msr_calib_link_bytes: 1.9 GB of 2.1 at 16384 samples of width 1024).
 * The parameters were checked when the net was built. */
static int check_memory(struct rt_net *net, const struct sch_partition *part,
                        const struct msr_calib *c)
{
    double total = 0, stash = 0, work = 0;
    int max_n = c->batch > 0 ? c->batch : c->sizes[c->n_sizes - 1];
    for (int s = 0; s < part->n_stages; s++) {
        int first = part->first[s], L = part->first[s + 1] - first;
        double most = 0, most_stash = 0, most_work = 0;
        for (int i = 0; i < c->n_sizes; i++) {
            double n = c->sizes[i], n_buf = max_n / c->sizes[i] < 1 ? 1 : max_n / c->sizes[i];
            struct rt_stage st;
            int rc = rt_stage_plan(net, s, part->n_stages, first, L, c->sizes[i], &st);
            if (rc < 0)
                return rc;
            double sb = n_buf * (double)st.mem.stash, big = 1;
            rt_stage_release(&st);
            for (int l = first; l <= first + L; l++)
                big = n * rt_net_width(net, l) > big ? n * rt_net_width(net, l) : big;
            double wb = 4 * (3 * big + n);
            double cap = 2.0 * c->repeats * n_buf;
            double b = sb + wb + 4 * n_buf * n * (rt_net_width(net, 0) + rt_net_width(net,
                       net->n_layers)) + 4 * n * rt_net_width(net, first + L) +
                       (s ? 4 * n_buf * n * rt_net_width(net, first) : 0) +
                       8 * cap * (MSR_CALIB_NOPS * L + 2);
            if (b > most) {
                most = b;
                most_stash = sb;
                most_work = wb;
            }
        }
        total += most;
        stash += most_stash;
        work += most_work;
    }
    char what[400], detail[240], b[4][32];
    double link = msr_calib_link_bytes(net, c);
    snprintf(what, sizeof what, "calibrating net '%s' at micro-batches up to %d samples "
             "(%d in a step)", net->spec, c->sizes[c->n_sizes - 1], max_n);
    ps_mem_format(stash, b[0], sizeof b[0]);
    ps_mem_format(work, b[1], sizeof b[1]);
    ps_mem_format(total - stash - work, b[2], sizeof b[2]);
    ps_mem_format(link, b[3], sizeof b[3]);
    snprintf(detail, sizeof detail, "stashes %s, workspaces %s, data, gradients and samples %s; "
             "then the link's messages %s", b[0], b[1], b[2], b[3]);
    return ps_mem_check(total > link ? total : link, what, detail, "use a smaller net or "
                        "micro-batch sizes, or set " PS_MEM_ENV " to override the check");
}

static int time_layers(struct rt_net *net, const struct msr_calib_opts *o, struct msr_calib *c)
{
    int K = c->n_stages, rc, *cpus = NULL, n_cpus = 0;
    struct sch_partition *part;
    if ((rc = sch_partition_uniform(K, net->n_layers, &part)) < 0)
        return rc;
    if ((rc = check_memory(net, part, c)) < 0) {
        sch_partition_free(part);
        return rc;
    }
    sch_partition_format(part, c->partition, sizeof c->partition);
    struct stage_job *jobs = calloc((size_t)K, sizeof *jobs);
    pthread_t *th = calloc((size_t)K, sizeof *th);
    pthread_barrier_t bar;
    struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
    int have_bar = 0, started = 0;
    if (!jobs || !th) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = rt_cpus_allowed(&cpus, &n_cpus)) < 0)
        goto out;
    for (int s = 0; s < K; s++)
        jobs[s] = (struct stage_job){ .net = net, .c = c, .part = part, .stage = s,
                                      .cpu = s == 0 ? c->cpu : s == 1 ? c->peer_cpu
                                                                      : cpus[s % n_cpus],
                                      .pin = 1, .seed = o->seed + 1 + (uint64_t)s };
    if (K == 1) { /* this thread is pinned to c->cpu already */
        jobs[0].pin = 0;
        stage_main(&jobs[0]);
        rc = jobs[0].rc < 0 ? ps_error(-jobs[0].rc, "%s", jobs[0].err) : 0;
        goto out;
    }
    if (pthread_barrier_init(&bar, NULL, (unsigned)K)) {
        rc = ps_error(PS_ERUNTIME, "pthread_barrier_init failed");
        goto out;
    }
    have_bar = 1;
    for (; started < K; started++) {
        jobs[started].bar = &bar;
        jobs[started].gate = &gate;
        if (pthread_create(&th[started], NULL, stage_main, &jobs[started])) {
            rc = ps_error(PS_ERUNTIME, "cannot start calibration worker %d", started);
            break;
        }
    }
    gate_open(&gate, started == K ? 1 : 2);
    for (int s = 0; s < started; s++)
        pthread_join(th[s], NULL);
    for (int s = 0; s < K && !rc; s++)
        if (jobs[s].rc < 0)
            rc = ps_error(-jobs[s].rc, "stage %d: %s", s, jobs[s].err);
out:
    if (have_bar)
        pthread_barrier_destroy(&bar);
    free(cpus);
    free(jobs);
    free(th);
    sch_partition_free(part);
    return rc;
}

/* The update totals from the layers' U timings (time_layers). */
void msr_calib_update_totals(const struct rt_net *net, struct msr_calib *c)
{
    double total = 0, params = 0;
    for (int l = 0; l < net->n_layers; l++) {
        total += c->layers[l].update.med;
        params += (double)net->layers[l].n_params;
    }
    c->update_s = total;
    /* the simulator's update is 2 * params * bytes_per_param / mem_bandwidth
     * with bytes_per_param = 8 (FP32 weights + gradients) */
    c->update_bw = total > 0 ? 16.0 * params / total : 0;
}

static int time_gemm(struct msr_calib *c)
{
    enum { W = 1024, ROWS = 256, REPS = 7 };
    struct rt_layer l;
    int rc = rt_layer_init(&l, RT_LAYER_DENSE, W, W, 0);
    if (rc < 0)
        return rc;
    float *x = calloc((size_t)ROWS * W, sizeof *x), *y = malloc((size_t)ROWS * W * sizeof *y);
    double v[REPS];
    if (!x || !y) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < (size_t)ROWS * W; i++)
        x[i] = (float)(i % 13) * 0.01f;
    for (size_t i = 0; i < (size_t)W * W; i++)
        l.w[i] = (float)(i % 7) * 0.001f;
    for (int rep = -2; rep < REPS; rep++) {
        int64_t t0 = rt_now_ns();
        rt_layer_forward(&l, ROWS, x, y, NULL, NULL);
        if (rep >= 0)
            v[rep] = secs(rt_now_ns() - t0);
    }
    struct msr_stat s;
    msr_stat_of(v, REPS, &s);
    c->gemm_flops = 2.0 * ROWS * W * W / s.med;
out:
    free(x);
    free(y);
    rt_layer_release(&l);
    return rc;
}

/* ---- the calibration thread (pinned) ---- */

struct job {
    const struct msr_calib_opts *o;
    struct msr_calib *c;
    struct rt_net *net;
    int rc;
    char err[PS_ERRMSG_MAX];
};

static void *core_main(void *arg)
{
    struct job *j = arg;
    int rc = rt_pin_self(j->c->cpu);
    rt_blas_single_thread();
    rt_flush_denormals();
    if (!rc)
        rc = time_gemm(j->c);
    if (!rc)
        rc = time_layers(j->net, j->o, j->c);
    if (!rc)
        msr_calib_update_totals(j->net, j->c);
    j->rc = rc;
    if (rc < 0)
        snprintf(j->err, sizeof j->err, "%s", ps_errmsg());
    return NULL;
}

int msr_calib_time(const struct msr_calib_opts *o, struct rt_net *net, struct msr_calib *c)
{
    struct job j = { .o = o, .c = c, .net = net };
    pthread_t th;
    if (pthread_create(&th, NULL, core_main, &j))
        return ps_error(PS_ERUNTIME, "cannot start the calibration thread");
    pthread_join(th, NULL);
    if (j.rc < 0)
        return ps_error(-j.rc, "%s", j.err);
    return msr_calib_time_link(net, c);
}
