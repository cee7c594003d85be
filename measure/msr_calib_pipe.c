/* msr_calib pipelined: every stage op timed inside real pipeline steps of
 * the schedule the grid will run (see msr_calib.h, opts.pipelined).
 *
 * The layer passes (msr_calib_time.c) time each layer alone in phases that
 * imitate a step; what they cannot see is what the real step adds around
 * its kernels and does to them: the copies of an op's output into its
 * buffer, the allocations, the ops before it on the same core (which
 * leave their working set in the caches), the other core's traffic at
 * that moment, and the channels' hand-off. So the pipeline (rt_pipe, the
 * runtime the grid measures) runs the schedule at each micro-batch size,
 * remat never (F keeping its stash, B after B) and remat always (F keeping
 * nothing, R, B after R), the two steps of every size in one round and the
 * rounds one after another, so that a drift of the machine over the rounds
 * lands in every size alike. With opts.warm_each, each timed step comes
 * right after an untimed step of the same pipeline, as the grid's timed
 * steps follow its warm-up; without it (the default) right after the
 * previous size's step, with another pipeline's buffers in the caches and
 * TLB. Paired runs (docs/validation.md): warm_each took gpipe at K = 1 from
 * 3-7 % slower than measured at M >= 8 to within a few percent, and made
 * the K = 2 schedules with many dependencies (1f1b, zb-auto, dualpipe-v)
 * worse: their cold op times had covered waits the model lacks. Each op's duration comes from the step's
 * trace; per (stage, size, class) the median over the rounds and micro-
 * batches, with the standard error of that median; rounds go on until each
 * is known to rel_se or max_rounds is reached. The layers keep the split
 * of their stage's time the passes measured; their times are scaled so
 * that the stage's sums equal the trimmed means of the same samples, each
 * op class apart: F of a stashed micro-batch (the profile's fwd_ms), R
 * (recomp_ms), F without stash, B of a stashed micro-batch (bwd_ms) and B
 * right after its recompute (bwd_remat_ms): the same kernels, but what ran
 * before them differs (F follows F; B of a stashed micro-batch reads a
 * stash written long before, B after R a fresh one), and so do their times;
 * on the same samples the classes apart came closer to the calibration's
 * own steps and to the grid than F with R and B of both modes pooled,
 * opts.pool_remat (docs/validation.md). struct msr_stat says which samples
 * the trimmed mean drops. A step is a sum of many ops and each op
 * class is skewed right (in a measured K = 2, M = 64 step the mean of each
 * is 1-5 % above its median), so medians undercount a step's busy time;
 * on the same samples the means came closer to the grid in paired runs
 * (docs/validation.md). opts.by_median keeps the medians.
 * A split-backward schedule's B and W of a micro-batch count as
 * one backward (the profile's bwd), and its W ops alone set W's share of
 * it: the layers' W (timed inside their backward) scaled to the W ops'
 * centre, the profile's wgrad_ms. The link is refitted to the hand-offs of the steps: from a
 * send's start to the end of its receive's copy, where the receiver was
 * already waiting (the time a transfer adds to a dependency). */
#include "measure/msr_calib.h"
#include "measure/msr_calib_int.h"
#include "measure/msr_msgwalk.h"
#include "runtime/rt_chan.h"
#include "runtime/rt_pipe.h"
#include "sched/sch_partition.h"
#include "base/ps_error.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *msr_pipe_class_name(enum msr_pipe_class k)
{
    static const char *const n[MSR_PIPE_NCLASS] = { "F", "F-nostash", "R", "B-never",
                                                    "B-always", "U", "W" };
    return k >= 0 && k < MSR_PIPE_NCLASS ? n[k] : "?";
}

/* Samples of one (stage, size, class), grown as rounds come. */
struct samples {
    double *v;
    int n, cap;
};

static int push(struct samples *s, double x)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        double *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v)
            return ps_error(PS_ENOMEM, "out of memory");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

struct pipe_ctx {
    struct msr_calib *c;
    int S;                         /* stages */
    struct samples *smp;           /* [S][n_sizes][NCLASS] */
    struct samples *rel;           /* the same, each over the mean of its class's
                                      samples in its own step: the spread inside
                                      a step, without the drift between steps */
    struct samples hb, hs;         /* hand-offs: bytes, seconds */
    struct samples sb, ss;         /* the workers' copies of their messages: a
                                      send's (bytes, seconds), */
    struct samples rb, rs;         /* a receive's that did not wait, */
    struct samples lb, ls;         /* a receive's that waited: its end less
                                      its send's end (its copy and the
                                      latency) */
};

/* Copies s's samples to dst (none when it has none: v may be NULL). */
static void copy_samples(double *dst, const struct samples *s)
{
    if (s->n)
        memcpy(dst, s->v, (size_t)s->n * sizeof *dst);
}

static struct samples *smp_at(struct pipe_ctx *x, int s, int i, int k)
{
    return &x->smp[((size_t)s * x->c->n_sizes + i) * MSR_PIPE_NCLASS + k];
}

static struct samples *rel_at(struct pipe_ctx *x, int s, int i, int k)
{
    return &x->rel[((size_t)s * x->c->n_sizes + i) * MSR_PIPE_NCLASS + k];
}

/* The samples of size i that the step just taken added to each (stage,
 * class) (those past n0[s][k]), each over their mean, into x->rel. */
static int take_rel(struct pipe_ctx *x, int i, const int *n0)
{
    int rc = 0;
    for (int s = 0; s < x->S && !rc; s++)
        for (int k = 0; k < MSR_PIPE_NCLASS && !rc; k++) {
            const struct samples *sm = smp_at(x, s, i, k);
            int a = n0[s * MSR_PIPE_NCLASS + k];
            double sum = 0;
            for (int j = a; j < sm->n; j++)
                sum += sm->v[j];
            if (!(sum > 0))
                continue;
            double mean = sum / (sm->n - a);
            for (int j = a; j < sm->n && !rc; j++)
                rc = push(rel_at(x, s, i, k), sm->v[j] / mean);
        }
    return rc;
}

/* One message of a measured step (msr_msgwalk.h) into the samples: a send's
 * copy, a receive's copy, and for a receive that waited, its hand-off from
 * its send's start and its latency from its send's end (to its copy's end). */
static int take_msg(void *ctx, const struct msr_msg *m)
{
    struct pipe_ctx *x = ctx;
    const struct trc_event *r = m->ev, *sd = m->send;
    double d = (double)(r->end_ns - r->start_ns) * 1e-9;
    int rc = 0;
    switch (m->kind) {
    case MSR_MSG_SEND:
        if (r->bytes > 0 && !(rc = push(&x->sb, (double)r->bytes)))
            rc = push(&x->ss, d);
        return rc;
    case MSR_MSG_RECV_COPY:
        if (r->bytes > 0 && !(rc = push(&x->rb, (double)r->bytes)))
            rc = push(&x->rs, d);
        return rc;
    case MSR_MSG_RECV_WAITED: break;
    }
    if (!sd || sd->bytes <= 0)
        return 0;
    if (r->end_ns > sd->start_ns && !(rc = push(&x->hb, (double)sd->bytes)))
        rc = push(&x->hs, (double)(r->end_ns - sd->start_ns) * 1e-9);
    if (!rc && r->end_ns > sd->end_ns && !(rc = push(&x->lb, (double)sd->bytes)))
        rc = push(&x->ls, (double)(r->end_ns - sd->end_ns) * 1e-9);
    return rc;
}

/* One measured step's ops into the samples of size i (always: the remat
 * always step), then its messages (take_msg). */
static int take_step(struct pipe_ctx *x, const struct trc_trace *t, int i, int always)
{
    size_t n = t->n_events;
    double *bw = calloc((size_t)x->S * (t->n_micro > 0 ? t->n_micro : 1), sizeof *bw);
    int *n0 = malloc((size_t)x->S * MSR_PIPE_NCLASS * sizeof *n0);
    int rc = 0;
    if (!bw || !n0) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int s = 0; s < x->S; s++)
        for (int k = 0; k < MSR_PIPE_NCLASS; k++)
            n0[s * MSR_PIPE_NCLASS + k] = smp_at(x, s, i, k)->n;
    for (size_t e = 0; e < n && !rc; e++) {
        const struct trc_event *a = &t->events[e];
        double d = (double)(a->end_ns - a->start_ns) * 1e-9;
        if (a->stage < 0 || a->stage >= x->S)
            continue;
        switch ((enum sch_op_kind)a->kind) {
        case SCH_OP_FWD: rc = push(smp_at(x, a->stage, i, always ? MSR_PIPE_FN : MSR_PIPE_F), d);
            break;
        case SCH_OP_RECOMP: rc = push(smp_at(x, a->stage, i, MSR_PIPE_R), d); break;
        case SCH_OP_UPDATE: rc = push(smp_at(x, a->stage, i, MSR_PIPE_U), d); break;
        case SCH_OP_WGRAD: /* its own class, and with its B one backward */
            rc = push(smp_at(x, a->stage, i, MSR_PIPE_W), d);
            /* fall through */
        case SCH_OP_BWD:
            if (a->mb >= 0 && a->mb < t->n_micro)
                bw[(size_t)a->stage * t->n_micro + a->mb] += d;
            break;
        default: break;
        }
    }
    for (int s = 0; s < x->S && !rc; s++)
        for (int m = 0; m < t->n_micro && !rc; m++)
            if (bw[(size_t)s * t->n_micro + m] > 0)
                rc = push(smp_at(x, s, i, always ? MSR_PIPE_BR : MSR_PIPE_BB),
                          bw[(size_t)s * t->n_micro + m]);
    if (!rc)
        rc = take_rel(x, i, n0);
    /* hand-offs and the workers' own copies of their messages (msr_calib.h,
     * msg_*) */
    if (!rc)
        rc = msr_msg_walk(t, take_msg, x);
out:
    free(bw);
    free(n0);
    return rc;
}

/* Every (stage, size, class) measured has its median known to rel_se. */
static int settled(struct pipe_ctx *x, double rel_se, double *tmp)
{
    struct msr_calib *c = x->c;
    for (int s = 0; s < x->S; s++)
        for (int i = 0; i < c->n_sizes; i++)
            for (int k = 0; k < MSR_PIPE_NCLASS; k++) {
                struct samples *sm = smp_at(x, s, i, k);
                if (!sm->n)
                    continue;
                copy_samples(tmp, sm);
                if (msr_median_rel_se(tmp, sm->n) > rel_se)
                    return 0;
            }
    return 1;
}

static void set_centre(struct msr_calib *c, int s, int i, int k, const struct msr_stat *m)
{
    MSR_PIPE_AT(c, s, i, k)->centre_med = m->med;
    MSR_PIPE_AT(c, s, i, k)->centre_mean = m->mean;
}

static void set_pool(struct msr_calib *c, int s, int i, int k, const struct msr_stat *m)
{
    MSR_PIPE_AT(c, s, i, k)->pool_med = m->med;
    MSR_PIPE_AT(c, s, i, k)->pool_mean = m->mean;
}

/* The stats into c->pipe, the pools' centres, and the layers' stats scaled
 * to them (scale_to_centres). */
static int apply(struct pipe_ctx *x, const struct sch_partition *part, int by_mean,
                 int pooled)
{
    struct msr_calib *c = x->c;
    int maxn = 0, maxu = 0; /* the largest pool of two classes; of a stage's updates */
    for (int s = 0; s < x->S; s++) {
        int nu = 0;
        for (int i = 0; i < c->n_sizes; i++) {
            for (int k = 0; k < MSR_PIPE_NCLASS; k++)
                maxn = smp_at(x, s, i, k)->n > maxn ? smp_at(x, s, i, k)->n : maxn;
            nu += smp_at(x, s, i, MSR_PIPE_U)->n;
        }
        maxu = nu > maxu ? nu : maxu;
    }
    double *tmp = malloc((size_t)(2 * maxn > maxu ? 2 * maxn + 1 : maxu + 1) * sizeof *tmp);
    struct msr_stat **st = malloc((size_t)c->n_layers * sizeof *st);
    if (!tmp || !st) {
        free(tmp);
        free(st);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int s = 0; s < x->S; s++) {
        for (int i = 0; i < c->n_sizes; i++) {
            for (int k = 0; k < MSR_PIPE_NCLASS; k++) {
                struct samples *sm = smp_at(x, s, i, k);
                struct msr_pipe_point *pp = MSR_PIPE_AT(c, s, i, k);
                const struct samples *rs = rel_at(x, s, i, k);
                struct msr_stat rst;
                copy_samples(tmp, rs);
                msr_stat_of(tmp, rs->n, &rst);
                msr_stat_spread(tmp, rs->n, &rst, pp->rq);
                copy_samples(tmp, sm);
                msr_stat_of(tmp, sm->n, &pp->t);
                pp->rel_se = msr_stat_rel_se(&pp->t);
                pp->scale = 1;
                pp->centre_med = pp->centre_mean = 0;
            }
            for (int k = 0; k < MSR_PIPE_NCLASS; k++) {
                if (k == MSR_PIPE_U) /* below */
                    continue;
                int partner = msr_pipe_partner(k);
                struct samples *a = smp_at(x, s, i, k);
                struct samples *b = partner >= 0 ? smp_at(x, s, i, partner) : NULL;
                struct msr_stat m;
                if (a->n) { /* its own */
                    copy_samples(tmp, a);
                    msr_stat_of(tmp, a->n, &m);
                    set_centre(c, s, i, k, &m);
                }
                int n = a->n + (b ? b->n : 0);
                if (!n)
                    continue;
                copy_samples(tmp, a); /* and the pool's */
                if (b)
                    copy_samples(tmp + a->n, b);
                msr_stat_of(tmp, n, &m);
                set_pool(c, s, i, k, &m);
            }
        }
        /* the update: one per step, after the step's last B, over every size */
        int n = 0;
        for (int i = 0; i < c->n_sizes; i++) {
            struct samples *us = smp_at(x, s, i, MSR_PIPE_U);
            copy_samples(tmp + n, us);
            n += us->n;
        }
        if (n) {
            struct msr_stat m;
            msr_stat_of(tmp, n, &m);
            for (int i = 0; i < c->n_sizes; i++)
                set_centre(c, s, i, MSR_PIPE_U, &m);
        }
    }
    /* B after a recompute starts from the passes' split of B */
    for (int l = 0; l < c->n_layers; l++)
        for (int i = 0; i < c->n_sizes; i++)
            c->layers[l].bwd_remat[i] = c->layers[l].t[MSR_CALIB_BWD][i];
    msr_pipe_scale_to_centres(c, part, by_mean, pooled, st);
    free(tmp);
    free(st);
    return 0;
}

/* The link fit to the hand-offs of the steps (K >= 2; a point per message
 * size), and the workers' copies of their messages: a line for the sends,
 * one for the receives that did not wait, and the latency, the median over
 * the receives that waited of their end less their send's end less the
 * receive line at their size (at least 0). */
static int fit_handoffs(struct pipe_ctx *x)
{
    struct msr_calib *c = x->c;
    int nh = x->hs.n, rc;
    c->n_handoff = nh;
    if (nh >= 3 && (rc = msr_fit_size_line(x->hb.v, x->hs.v, nh, &c->handoff_fit)) < 0)
        return rc;
    if (c->handoff_fit.n < 2)
        c->handoff_fit = (struct msr_fit){ 0 };
    c->n_msg_send = x->ss.n;
    c->n_msg_recv = x->rs.n;
    if ((rc = msr_fit_copy_line(x->sb.v, x->ss.v, x->ss.n, &c->msg_send_fit)) < 0 ||
        (rc = msr_fit_copy_line(x->rb.v, x->rs.v, x->rs.n, &c->msg_recv_fit)) < 0)
        return rc;
    if (!x->ls.n)
        return 0;
    double *l = malloc((size_t)x->ls.n * sizeof *l);
    if (!l)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int j = 0; j < x->ls.n; j++) /* the copy as the topology will have it */
        l[j] = x->ls.v[j] - (c->msg_recv_fit.a + c->msg_recv_fit.b * x->lb.v[j]);
    struct msr_stat m;
    msr_stat_of(l, x->ls.n, &m);
    free(l);
    c->msg_latency = m.med > 0 ? m.med : 0;
    return 0;
}

struct msr_pipe_state {
    struct pipe_ctx x;
    const struct msr_calib_opts *o;
    struct rt_net *net;
    struct sch_partition *part;
    struct rt_data *data;
    rt_pipe **pp;                  /* [n_sizes][2]: remat never, always */
    struct samples steps[MSR_CALIB_MAX_SIZES][2]; /* their timed steps' times (s) */
    int size_steps[MSR_CALIB_MAX_SIZES]; /* timed steps of one size (_size) */
    int most_size_steps;               /* the most of them at any size */
    int round;                     /* rounds run, warm-up ones included */
    int max_rounds;
    double rel_se;
};

void msr_calib_pipe_free(struct msr_pipe_state *ps)
{
    if (!ps)
        return;
    for (int i = 0; ps->pp && i < 2 * ps->x.c->n_sizes; i++)
        rt_pipe_free(ps->pp[i]);
    free(ps->pp);
    for (size_t j = 0; ps->x.smp && j < (size_t)ps->x.S * ps->x.c->n_sizes * MSR_PIPE_NCLASS; j++)
        free(ps->x.smp[j].v);
    for (size_t j = 0; ps->x.rel && j < (size_t)ps->x.S * ps->x.c->n_sizes * MSR_PIPE_NCLASS; j++)
        free(ps->x.rel[j].v);
    free(ps->x.smp);
    free(ps->x.rel);
    struct samples *sm[] = { &ps->x.hb, &ps->x.hs, &ps->x.sb, &ps->x.ss,
                             &ps->x.rb, &ps->x.rs, &ps->x.lb, &ps->x.ls };
    for (size_t i = 0; i < sizeof sm / sizeof *sm; i++)
        free(sm[i]->v);
    for (int i = 0; i < MSR_CALIB_MAX_SIZES; i++)
        for (int a = 0; a < 2; a++)
            free(ps->steps[i][a].v);
    rt_data_free(ps->data);
    sch_partition_free(ps->part);
    free(ps);
}

int msr_calib_pipe_new(const struct msr_calib_opts *o, struct rt_net *net, struct msr_calib *c,
                       struct msr_pipe_state **out)
{
    *out = NULL;
    int S = c->n_stages, nz = c->n_sizes, rc = 0;
    struct msr_pipe_state *ps = calloc(1, sizeof *ps);
    if (!ps)
        return ps_error(PS_ENOMEM, "out of memory");
    ps->o = o;
    ps->net = net;
    ps->x.c = c;
    ps->pp = calloc((size_t)nz * 2, sizeof *ps->pp);
    if (!ps->pp) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err;
    }
    c->pipelined = 1;
    snprintf(c->pipe_schedule, sizeof c->pipe_schedule, "%s", o->schedule ? o->schedule : "gpipe");
    if ((rc = rt_data_new(net, o->batch, o->seed, &ps->data)) < 0)
        goto err;
    int live = 0;
    for (int i = 0; i < nz; i++) {
        if (o->batch % c->sizes[i])
            continue;
        int ok = 1;
        for (int a = 0; a < 2 && ok; a++) {
            struct rt_pipe_config pc = { .schedule = o->schedule, .K = S,
                                         .M = o->batch / c->sizes[i], .batch = o->batch,
                                         .remat = a ? SCH_REMAT_ALWAYS : SCH_REMAT_NEVER,
                                         .lr = 0.05f };
            rc = rt_pipe_new(net, &pc, &ps->pp[2 * i + a]);
            if (rc == -PS_EUSAGE) { /* no such schedule at this M (dualpipe-v: M < 2K) */
                ps_error_clear();
                rt_pipe_free(ps->pp[2 * i]);
                ps->pp[2 * i] = ps->pp[2 * i + 1] = NULL;
                ok = 0;
                rc = 0;
            } else if (rc < 0) {
                goto err;
            }
        }
        live += ok;
    }
    if (!live) {
        rc = ps_error(PS_EUSAGE, "calibrate: no micro-batch size divides the batch %d into "
                       "a step the schedule has", o->batch);
        goto err;
    }
    /* the schedule's stages (2K for the two-chunk ones: interleaved,
     * breadth-first, zb-v, dualpipe-v), uniform over the layers as the
     * runtime cuts them: the stage ops are scaled over these */
    for (int i = 0; i < nz; i++)
        if (ps->pp[2 * i]) {
            S = rt_pipe_n_stages(ps->pp[2 * i]);
            break;
        }
    ps->x.S = c->pipe_stages = S;
    ps->x.smp = calloc((size_t)S * nz * MSR_PIPE_NCLASS, sizeof *ps->x.smp);
    ps->x.rel = calloc((size_t)S * nz * MSR_PIPE_NCLASS, sizeof *ps->x.rel);
    c->pipe = calloc((size_t)S * nz * MSR_PIPE_NCLASS, sizeof *c->pipe);
    if (!ps->x.smp || !ps->x.rel || !c->pipe) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err;
    }
    if ((rc = sch_partition_uniform(S, net->n_layers, &ps->part)) < 0)
        goto err;
    int reps = c->repeats;
    ps->max_rounds = o->max_rounds ? o->max_rounds : 4 * reps;
    ps->max_rounds = ps->max_rounds < reps ? reps : ps->max_rounds;
    ps->rel_se = o->rel_se > 0 ? o->rel_se : 0.005;
    ps->round = -c->warmup;
    *out = ps;
    return 0;
err:
    msr_calib_pipe_free(ps);
    return rc;
}

/* The steps of size i, remat never then always (timed once the warm-up
 * rounds ran). */
static int step_size(struct msr_pipe_state *ps, int i)
{
    int rc = 0;
    for (int a = 0; a < 2 && ps->pp[2 * i] && !rc; a++) {
        struct rt_step_stats st;
        struct trc_trace *t = NULL;
        /* as the grid runs a point: from the initial weights (and
         * with warm_each after a step of the same pipeline) */
        if ((rc = rt_net_init_params(ps->net, ps->o->seed)) < 0 ||
            (ps->o->warm_each &&
             (rc = rt_pipe_step(ps->pp[2 * i + a], ps->data, &st, NULL)) < 0))
            break;
        rc = rt_pipe_step(ps->pp[2 * i + a], ps->data, &st, ps->round >= 0 ? &t : NULL);
        if (!rc && t && !(rc = take_step(&ps->x, t, i, a)))
            rc = push(&ps->steps[i][a], (double)st.step_ns * 1e-9);
        trc_trace_free(t);
    }
    return rc;
}

int msr_calib_pipe_size(struct msr_pipe_state *ps, int micro)
{
    struct msr_calib *c = ps->x.c;
    if (ps->round < 0)
        return ps_error(PS_EINVAL, "calibrate: the steps of size %d asked before the %d "
                         "warm-up round%s ran", micro, c->warmup, c->warmup > 1 ? "s" : "");
    for (int i = 0; i < c->n_sizes; i++)
        if (c->sizes[i] == micro && ps->pp[2 * i]) {
            int rc = step_size(ps, i);
            if (!rc && ++ps->size_steps[i] > ps->most_size_steps)
                ps->most_size_steps = ps->size_steps[i];
            return rc;
        }
    return 0;
}

int msr_calib_pipe_round(struct msr_pipe_state *ps)
{
    struct msr_calib *c = ps->x.c;
    int rc = 0;
    for (int i = 0; i < c->n_sizes && !rc; i++)
        rc = step_size(ps, i);
    if (rc < 0)
        return rc;
    if (++ps->round < c->repeats)
        return ps->round >= ps->max_rounds;
    if (ps->round >= ps->max_rounds)
        return 1;
    int maxn = 0;
    for (size_t j = 0; j < (size_t)ps->x.S * c->n_sizes * MSR_PIPE_NCLASS; j++)
        maxn = ps->x.smp[j].n > maxn ? ps->x.smp[j].n : maxn;
    double *tmp = malloc((size_t)(maxn + 1) * sizeof *tmp);
    if (!tmp)
        return ps_error(PS_ENOMEM, "out of memory");
    rc = settled(&ps->x, ps->rel_se, tmp);
    free(tmp);
    return rc;
}

int msr_calib_pipe_finish(struct msr_pipe_state *ps)
{
    struct msr_calib *c = ps->x.c;
    c->pipe_rounds = (ps->round > 0 ? ps->round : 0) + ps->most_size_steps;
    for (int i = 0; i < c->n_sizes; i++) /* the steps themselves (the stats sort v) */
        for (int a = 0; a < 2; a++)
            msr_stat_of(ps->steps[i][a].v, ps->steps[i][a].n, &c->pipe_step[i][a]);
    int rc = apply(&ps->x, ps->part, !ps->o->by_median, ps->o->pool_remat);
    if (!rc)
        msr_calib_update_totals(ps->net, c);
    if (!rc && ps->x.S > 1)
        rc = fit_handoffs(&ps->x);
    return rc;
}
