/* ana_calib timing: layer passes, update and GEMM on one pinned core; the
 * channel hand-off and transfers between two (see ana_calib.h). */
#include "analysis/ana_calib.h"
#include "analysis/ana_calib_int.h"
#include "runtime/rt_chan.h"
#include "runtime/rt_cpu.h"
#include "runtime/rt_net.h"
#include "runtime/rt_stage.h"
#include "sim/sim_error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The runtime's receive polls this long before sleeping when every worker
 * has its own core (rt_pipe.c, RT_SPIN_NS): the hand-off measured here must
 * be the one the pipeline sees. */
#define CAL_SPIN_NS 50000

static double secs(int64_t ns) { return (double)ns * 1e-9; }

static float *other(const struct rt_work *w, const float *cur)
{
    return cur == w->a ? w->b : w->a;
}

static void *at(uint8_t *base, int64_t off) { return off < 0 ? NULL : base + off; }

/* One forward over every layer, as rt_stage_forward runs it on a stage that
 * holds the whole net, timing each layer (the head's loss counts with the
 * head). stash NULL: the F of a re-materialized micro-batch. */
static void pass_fwd(struct rt_net *net, const struct rt_stage *st, const struct rt_work *w,
                     const float *x, const float *tg, uint8_t *stash, double *t)
{
    const float *cur = x;
    int L = st->n_layers, r = st->rows;
    for (int l = 0; l < L; l++) {
        const struct rt_layer *ly = &net->layers[l];
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
        if (l == L - 1)
            rt_loss(r, ly->out, r, cur, tg, stash ? at(stash, st->dy_off) : NULL);
        t[l] = secs(rt_now_ns() - t0);
    }
}

/* One backward (input and weight gradients) from a filled stash, as
 * rt_stage_backward runs it on stage 0 (layer 0 computes no input gradient). */
static void pass_bwd(struct rt_net *net, const struct rt_stage *st, const struct rt_work *w,
                     uint8_t *stash, double *t)
{
    float *g = at(stash, st->dy_off);
    int r = st->rows;
    for (int l = st->n_layers - 1; l >= 0; l--) {
        struct rt_layer *ly = &net->layers[l];
        int64_t t0 = rt_now_ns();
        const float *aux = at(stash, st->aux_off[l]);
        rt_layer_grad_prep(ly, r, at(stash, st->mask_off[l]), g);
        rt_layer_grad_weight(ly, r, at(stash, st->x_off[l]), aux, g);
        if (l > 0) {
            float *dst = other(w, g);
            rt_layer_grad_input(ly, r, aux, g, dst);
            g = dst;
        }
        t[l] = secs(rt_now_ns() - t0);
    }
}

/* Per micro-batch size: the stage plan, workspace, rotating stashes and
 * inputs, and the samples. */
struct size_run {
    int n;
    struct rt_stage st;
    struct rt_work w;
    int have_plan, have_work;
    int n_buf;
    uint8_t *stash;
    struct rt_data *data;
    double *samp;        /* [ops][layers][repeats] */
};

static double *sample(struct size_run *s, int op, int l, int rep, int L, int reps)
{
    return &s->samp[((size_t)op * L + l) * reps + rep];
}

static void size_release(struct size_run *s)
{
    if (s->have_plan)
        rt_stage_release(&s->st);
    if (s->have_work)
        rt_work_release(&s->w);
    free(s->stash);
    free(s->samp);
    rt_data_free(s->data);
}

static int size_setup(struct rt_net *net, int n, int max_n, int reps, uint64_t seed,
                      struct size_run *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    int L = net->n_layers, rc;
    if ((rc = rt_stage_plan(net, 0, 1, 0, L, n, &s->st)) < 0)
        return rc;
    s->have_plan = 1;
    if ((rc = rt_work_init(&s->w, net, &s->st, 1)) < 0)
        return rc;
    s->have_work = 1;
    /* the pipeline's micro-batches of a batch of max_n samples use
     * max_n / n distinct stashes: rotate through as many */
    s->n_buf = (max_n + n - 1) / n;
    s->n_buf = s->n_buf < 2 ? 2 : s->n_buf > 64 ? 64 : s->n_buf;
    s->stash = calloc((size_t)s->n_buf, (size_t)s->st.mem.stash);
    s->samp = calloc((size_t)ANA_CALIB_NOPS * L * reps, sizeof *s->samp);
    if (!s->stash || !s->samp)
        return sim_error(SIM_ENOMEM, "out of memory for %d stashes of %lld bytes", s->n_buf,
                         (long long)s->st.mem.stash);
    return rt_data_new(net, s->n_buf * n, seed, &s->data);
}

/* One repetition at one size: F (kept), F (nothing kept), R, B. */
static void size_pass(struct rt_net *net, struct size_run *s, int rep, int reps, double *tmp)
{
    int L = net->n_layers, j = (rep < 0 ? -rep : rep) % s->n_buf;
    const struct rt_data *d = s->data;
    const float *x = d->x + (size_t)j * s->n * d->in, *tg = d->t + (size_t)j * s->n * d->out;
    uint8_t *stash = s->stash + (size_t)j * s->st.mem.stash;
    static const int order[] = { ANA_CALIB_FWD, ANA_CALIB_FWD_NOSTASH, ANA_CALIB_RECOMP,
                                 ANA_CALIB_BWD };
    for (int k = 0; k < 4; k++) {
        int op = order[k];
        if (op == ANA_CALIB_BWD)
            pass_bwd(net, &s->st, &s->w, stash, tmp);
        else
            pass_fwd(net, &s->st, &s->w, x, tg, op == ANA_CALIB_FWD_NOSTASH ? NULL : stash,
                     tmp);
        for (int l = 0; rep >= 0 && l < L; l++)
            *sample(s, op, l, rep, L, reps) = tmp[l];
    }
}

static int time_layers(struct rt_net *net, const struct ana_calib_opts *o, struct ana_calib *c)
{
    int L = net->n_layers, S = c->n_sizes, reps = c->repeats, rc = 0;
    struct size_run *runs = calloc((size_t)S, sizeof *runs);
    double *tmp = malloc((size_t)L * sizeof *tmp), *v = malloc(2 * (size_t)reps * sizeof *v);
    if (!runs || !tmp || !v) {
        rc = sim_error(SIM_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < S && !rc; i++)
        rc = size_setup(net, c->sizes[i], c->sizes[S - 1], reps, o->seed + 1, &runs[i]);
    /* round robin over the sizes, so a burst of other load on the core
     * spreads over all of them instead of biasing one */
    for (int rep = -c->warmup; rep < reps && !rc; rep++)
        for (int i = 0; i < S; i++)
            size_pass(net, &runs[i], rep, reps, tmp);
    for (int i = 0; i < S && !rc; i++)
        for (int l = 0; l < L; l++) {
            struct ana_calib_layer *cl = &c->layers[l];
            for (int op = 0; op < ANA_CALIB_NOPS; op++) {
                memcpy(v, sample(&runs[i], op, l, 0, L, reps), (size_t)reps * sizeof *v);
                ana_stat_of(v, reps, &cl->t[op][i]);
            }
            /* the profile's forward: kept F and R are one kernel; pool them */
            memcpy(v, sample(&runs[i], ANA_CALIB_FWD, l, 0, L, reps), (size_t)reps * sizeof *v);
            memcpy(v + reps, sample(&runs[i], ANA_CALIB_RECOMP, l, 0, L, reps),
                   (size_t)reps * sizeof *v);
            ana_stat_of(v, 2 * reps, &cl->kept[i]);
        }
    rt_net_zero_grad(net);
out:
    for (int i = 0; runs && i < S; i++)
        size_release(&runs[i]);
    free(runs);
    free(tmp);
    free(v);
    return rc;
}

static int time_update(struct rt_net *net, struct ana_calib *c)
{
    int L = net->n_layers, reps = c->repeats;
    double *v = malloc((size_t)L * reps * sizeof *v);
    if (!v)
        return sim_error(SIM_ENOMEM, "out of memory");
    rt_net_zero_grad(net); /* w -= lr * 0: the full pass, weights unchanged */
    for (int rep = -c->warmup; rep < reps; rep++)
        for (int l = 0; l < L; l++) {
            int64_t t0 = rt_now_ns();
            rt_layer_sgd(&net->layers[l], 1e-3f);
            if (rep >= 0)
                v[(size_t)l * reps + rep] = secs(rt_now_ns() - t0);
        }
    double total = 0, params = 0;
    for (int l = 0; l < L; l++) {
        ana_stat_of(v + (size_t)l * reps, reps, &c->layers[l].update);
        total += c->layers[l].update.med;
        params += (double)net->layers[l].n_params;
    }
    free(v);
    c->update_s = total;
    /* the simulator's update is 2 * params * bytes_per_param / mem_bandwidth
     * with bytes_per_param = 8 (FP32 weights + gradients) */
    c->update_bw = total > 0 ? 16.0 * params / total : 0;
    return 0;
}

static int time_gemm(struct ana_calib *c)
{
    enum { W = 1024, ROWS = 256, REPS = 7 };
    struct rt_layer l;
    int rc = rt_layer_init(&l, RT_LAYER_DENSE, W, W, 0);
    if (rc < 0)
        return rc;
    float *x = calloc((size_t)ROWS * W, sizeof *x), *y = malloc((size_t)ROWS * W * sizeof *y);
    double v[REPS];
    if (!x || !y) {
        rc = sim_error(SIM_ENOMEM, "out of memory");
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
    struct ana_stat s;
    ana_stat_of(v, REPS, &s);
    c->gemm_flops = 2.0 * ROWS * W * W / s.med;
out:
    free(x);
    free(y);
    rt_layer_release(&l);
    return rc;
}

/* ---- the calibration thread (pinned) ---- */

struct job {
    const struct ana_calib_opts *o;
    struct ana_calib *c;
    struct rt_net *net;
    int rc;
    char err[512];
};

static void *core_main(void *arg)
{
    struct job *j = arg;
    int rc = rt_pin_self(j->c->cpu);
    rt_blas_single_thread();
    if (!rc)
        rc = time_gemm(j->c);
    if (!rc)
        rc = time_layers(j->net, j->o, j->c);
    if (!rc)
        rc = time_update(j->net, j->c);
    j->rc = rc;
    if (rc < 0)
        snprintf(j->err, sizeof j->err, "%s", sim_errmsg());
    return NULL;
}

/* ---- hand-off and transfers between two pinned cores ---- */

struct pingpong {
    struct rt_chan *ab, *ba;
    int n_msgs, cpu;
    int64_t bytes, delay_ns;
    uint8_t *src, *dst;
    int64_t *t_start, *t_end;
    struct rt_watch *watch;
    int rc;
    char err[256];
};

static void *ping_main(void *arg)
{
    struct pingpong *p = arg;
    int64_t ts, tr;
    uint64_t ack;
    int rc = rt_pin_self(p->cpu);
    for (int k = 0; k < p->n_msgs && !rc; k++) {
        if (p->delay_ns) {
            struct timespec d = { 0, (long)p->delay_ns };
            nanosleep(&d, NULL);
        }
        p->t_start[k] = rt_now_ns();
        rt_chan_send(p->ab, k, p->src, p->bytes, &ts);
        rc = rt_chan_recv(p->ba, k, &ack, sizeof ack, &ts, &tr, "calibration ack");
    }
    p->rc = rc;
    if (rc < 0)
        snprintf(p->err, sizeof p->err, "%s", sim_errmsg());
    rt_watch_leave(p->watch);
    return NULL;
}

static void *pong_main(void *arg)
{
    struct pingpong *p = arg;
    int64_t ts, tr;
    uint64_t ack = 1;
    int rc = rt_pin_self(p->cpu);
    for (int k = 0; k < p->n_msgs && !rc; k++) {
        rc = rt_chan_recv(p->ab, k, p->dst, p->bytes, &ts, &tr, "calibration message");
        p->t_end[k] = tr;
        if (!rc)
            rt_chan_send(p->ba, k, &ack, sizeof ack, &ts);
    }
    p->rc = rc;
    if (rc < 0)
        snprintf(p->err, sizeof p->err, "%s", sim_errmsg());
    rt_watch_leave(p->watch);
    return NULL;
}

/* One-way times (sender's send start to receiver's copy end) of n messages
 * of bytes, the sender pausing delay_ns before each. */
static int pingpong_run(const struct ana_calib *c, int64_t bytes, int64_t delay_ns, int n,
                        int warm, struct ana_stat *out)
{
    struct rt_chan *ch[2] = { NULL, NULL };
    struct rt_watch w;
    struct pingpong p[2];
    int total = n + warm, rc;
    int64_t *t0 = calloc((size_t)total, sizeof *t0), *t1 = calloc((size_t)total, sizeof *t1);
    uint8_t *src = malloc((size_t)bytes), *dst = malloc((size_t)bytes);
    double *v = malloc((size_t)n * sizeof *v);
    if (!t0 || !t1 || !src || !dst || !v) {
        rc = sim_error(SIM_ENOMEM, "out of memory");
        goto out;
    }
    memset(src, 1, (size_t)bytes);
    if ((rc = rt_watch_init(&w, 2, ch, 2)) < 0)
        goto out;
    w.spin_ns = c->cpu != c->peer_cpu ? CAL_SPIN_NS : 0;
    if ((rc = rt_chan_new(total, bytes, &w, &ch[0])) < 0 ||
        (rc = rt_chan_new(total, sizeof(uint64_t), &w, &ch[1])) < 0)
        goto out_watch;
    for (int i = 0; i < 2; i++)
        p[i] = (struct pingpong){ .ab = ch[0], .ba = ch[1], .n_msgs = total,
                                  .cpu = i ? c->peer_cpu : c->cpu, .bytes = bytes,
                                  .delay_ns = delay_ns, .src = src, .dst = dst,
                                  .t_start = t0, .t_end = t1, .watch = &w };
    pthread_t th[2];
    int started = 0;
    for (; started < 2; started++)
        if (pthread_create(&th[started], NULL, started ? pong_main : ping_main, &p[started])) {
            rc = sim_error(SIM_ERUNTIME, "cannot start a calibration thread");
            rt_watch_abort(&w);
            break;
        }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2 && !rc; i++)
        if (p[i].rc < 0)
            rc = sim_error(-p[i].rc, "hand-off calibration: %s", p[i].err);
    if (!rc) {
        for (int k = 0; k < n; k++)
            v[k] = secs(t1[warm + k] - t0[warm + k]);
        ana_stat_of(v, n, out);
    }
out_watch:
    rt_chan_free(ch[0]);
    rt_chan_free(ch[1]);
    rt_watch_release(&w);
out:
    free(t0);
    free(t1);
    free(src);
    free(dst);
    free(v);
    return rc;
}

static int time_memcpy(struct ana_calib *c, int64_t bytes)
{
    enum { REPS = 15, NB = 8 };
    uint8_t *src = malloc((size_t)bytes * NB), *dst = malloc((size_t)bytes * NB);
    double v[REPS];
    if (!src || !dst) {
        free(src);
        free(dst);
        return sim_error(SIM_ENOMEM, "out of memory");
    }
    memset(src, 3, (size_t)bytes * NB);
    memset(dst, 0, (size_t)bytes * NB);
    for (int rep = -2; rep < REPS; rep++) {
        int j = (rep + 2) % NB;
        int64_t t0 = rt_now_ns();
        memcpy(dst + (size_t)j * bytes, src + (size_t)j * bytes, (size_t)bytes);
        if (rep >= 0)
            v[rep] = secs(rt_now_ns() - t0);
    }
    struct ana_stat s;
    ana_stat_of(v, REPS, &s);
    c->memcpy_bw = s.med > 0 ? (double)bytes / s.med : 0;
    free(src);
    free(dst);
    return 0;
}

static int time_link(const struct rt_net *net, struct ana_calib *c)
{
    int rc, W = 1;
    for (int l = 1; l < net->n_layers; l++) /* the widest stage boundary */
        W = rt_net_width(net, l) > W ? rt_net_width(net, l) : W;
    if (net->n_layers == 1)
        W = rt_net_width(net, 1);
    if ((rc = pingpong_run(c, 64, 0, c->repeats, c->warmup, &c->handoff_spin)) < 0 ||
        (rc = pingpong_run(c, 64, 2 * CAL_SPIN_NS + 200000, c->repeats < 9 ? c->repeats : 9, 1,
                           &c->handoff_sleep)) < 0)
        return rc;
    c->n_xfer = 0;
    c->xfer_bytes[c->n_xfer] = 64;
    c->xfer[c->n_xfer++] = c->handoff_spin;
    for (int i = 0; i < c->n_sizes; i++) {
        int64_t b = 4LL * c->sizes[i] * W;
        if (b <= 64)
            continue;
        c->xfer_bytes[c->n_xfer] = (double)b;
        if ((rc = pingpong_run(c, b, 0, c->repeats, c->warmup, &c->xfer[c->n_xfer++])) < 0)
            return rc;
    }
    return time_memcpy(c, (int64_t)c->xfer_bytes[c->n_xfer - 1]);
}

int ana_calib_time(const struct ana_calib_opts *o, struct rt_net *net, struct ana_calib *c)
{
    struct job j = { .o = o, .c = c, .net = net };
    pthread_t th;
    if (pthread_create(&th, NULL, core_main, &j))
        return sim_error(SIM_ERUNTIME, "cannot start the calibration thread");
    pthread_join(th, NULL);
    if (j.rc < 0)
        return sim_error(-j.rc, "%s", j.err);
    return time_link(net, c);
}
