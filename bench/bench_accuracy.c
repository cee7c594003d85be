/* bench_accuracy — how close the calibrated simulator comes to real runs on
 * this machine: the validate --check grid of mlp:layers=8,width=512 (M
 * 1..64; never, except_last, always; batch 256) for every schedule the
 * engine has, K = 1 and 2 with gpipe and K = 2 with the others. Per schedule
 * and K: a pipelined calibration (layer passes in K stages, a warm-up
 * round, then the stage ops inside real steps of the schedule, each size's
 * steps right before each of the grid's points of that size in its 4
 * rounds (every point: 1 warm-up + 3 timed steps)), so both see the same
 * seconds of the machine. Prints every point with its
 * measured spread, one line of figures per schedule, then the pooled
 * figures against the targets as ratios (<= 1 met): median
 * |makespan error| <= 2 %, max <= 5 %, bubble-fraction error <= 1 point,
 * peak activation memory exact, for the median and the fastest
 * steps, the count of predictions outside their measured spread (model
 * misses), and for each missed target the ops that account for it. Not a
 * test: the figures depend on what else runs on the cores.
 * Measures under SCHED_FIFO when permitted; BENCH_ACCURACY_NORT=1 measures
 * at normal priority; BENCH_ACCURACY_SCHEDULES=gpipe,1f1b for a subset.
 * Prints the kernel's RT throttling (FIFO workers spinning in receives are
 * stopped ~50 ms a second under the default 950 of 1000 ms);
 * BENCH_ACCURACY_UNTHROTTLE=1 (root) lifts it for the run and restores the
 * old value at the end and on SIGINT, SIGTERM and SIGHUP.
 * BENCH_ACCURACY_CALIB_PER_ROUND=1: the calibration's rounds (every size)
 * between the grid's rounds, not each size's steps right before its points.
 * BENCH_ACCURACY_CALIB_WARM=1: the calibration's warm_each (msr_calib.h).
 * BENCH_ACCURACY_CALIB_MEDIAN=1: the calibration's by_median (the stages
 * scaled to the in-step medians, not the trimmed means). Either way each
 * schedule also gets a paired line: both rules on the same calibration
 * samples against the same measured steps.
 * BENCH_ACCURACY_DRAWS=N (default 0, none): each point's prediction is the
 * median of N simulated steps whose op times are drawn from the
 * calibration's spread inside a step (msr_noise, opts.draws); a paired line
 * compares it with the step of the mean op times on the same steps (two
 * runs: 0.1-0.4 % apart, neither closer: docs/validation.md).
 * Usage: bench_accuracy [NET [BATCH]]. */
#include "measure/msr_calib.h"
#include "measure/msr_validate.h"
#include "runtime/rt_layer.h"
#include "base/ps_error.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the RT runtime to restore, as the text written back from the handler */
static char rt_restore[32];
static int rt_restore_len;

static void rt_put_back(void)
{
    if (!rt_restore_len)
        return;
    int fd = open("/proc/sys/kernel/sched_rt_runtime_us", O_WRONLY);
    if (fd >= 0) {
        if (write(fd, rt_restore, (size_t)rt_restore_len) < 0) {
            /* nothing more to do from here: the line below says what to run */
        }
        close(fd);
    }
    rt_restore_len = 0;
}

static void on_stop(int sig)
{
    rt_put_back(); /* open, write, close: async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* BENCH_ACCURACY_UNTHROTTLE: lift the RT limit, remember the old one */
static void unthrottle(void)
{
    long old;
    if (msr_rt_throttle_set(NULL, -1, &old) < 0) {
        printf("rt throttling   left as it is: %s\n", ps_errmsg());
        return;
    }
    rt_restore_len = snprintf(rt_restore, sizeof rt_restore, "%ld\n", old);
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    for (int i = 0; i < 3; i++)
        signal(sigs[i], on_stop);
    printf("rt throttling   lifted for this run (kernel.sched_rt_runtime_us -1; %ld restored "
           "at the end; if killed: sysctl -w kernel.sched_rt_runtime_us=%ld)\n", old, old);
}

static void pr_cal(const struct msr_calib *cal)
{
    char bw[48] = "no bandwidth limit";
    if (cal->link_bandwidth < MSR_FREE_LINK)
        snprintf(bw, sizeof bw, "B / %.2f GB/s", cal->link_bandwidth * 1e-9);
    printf("calibration     stages %s, %.1f s: hand-off %.2f us, link %.2f us + %s, "
           "GEMM %.1f GFLOP/s, update %.3f ms\n", cal->partition, cal->wall_s,
           cal->handoff_spin.med * 1e6, cal->link_latency * 1e6, bw, cal->gemm_flops * 1e-9,
           cal->update_s * 1e3);
    if (!cal->pipelined)
        return;
    printf("  pipelined in %s steps, %d timed steps per size and mode; %d hand-offs (ping-pong "
           "link %.2f us + B / "
           "%.2f GB/s)\n", cal->pipe_schedule, cal->pipe_rounds, cal->n_handoff,
           cal->pingpong_latency * 1e6, cal->pingpong_bandwidth * 1e-9);
    if (msr_calib_messages(cal))
        printf("  the workers' message copies: send %.2f us, receive %.2f us (+ bytes), link "
               "latency %.2f us from a send's end\n", cal->msg_send_fit.a * 1e6,
               cal->msg_recv_fit.a * 1e6, cal->link_latency * 1e6);
    for (int s = 0; s < cal->pipe_stages; s++)
        for (int i = 0; i < cal->n_sizes; i++) {
            printf("  stage %d size %3d:", s, cal->sizes[i]);
            for (int k = 0; k < MSR_PIPE_NCLASS; k++) {
                const struct msr_pipe_point *p = MSR_PIPE_AT(cal, s, i, k);
                if (p->t.n)
                    printf(" %s %.3f ms ±%.2f%% x%.3f", msr_pipe_class_name(k), p->t.med * 1e3,
                           100 * p->rel_se, p->scale);
            }
            printf("\n");
        }
}

struct cal_ctx {
    const char *net;
    int batch;
    const int *sizes;
    int n_sizes;
    const char *schedule;
    msr_calib_session *sess;
    struct msr_calib *cal[2];
    struct mdl_profile *prof[2];
    struct mdl_topology *topo[2];
    struct mdl_profile *alt_prof[2];   /* the same samples under the other rule */
    struct mdl_topology *alt_topo[2];
    struct mdl_profile *pool_prof[2];  /* and under the other pooling (pool_remat) */
    struct mdl_topology *pool_topo[2];
    int Ks[2];
    int n;
};

static void cal_release(struct cal_ctx *c)
{
    for (int k = 0; k < c->n; k++) {
        mdl_profile_free(c->prof[k]);
        mdl_topology_free(c->topo[k]);
        mdl_profile_free(c->alt_prof[k]);
        mdl_topology_free(c->alt_topo[k]);
        c->alt_prof[k] = NULL;
        c->alt_topo[k] = NULL;
        mdl_profile_free(c->pool_prof[k]);
        mdl_topology_free(c->pool_topo[k]);
        c->pool_prof[k] = NULL;
        c->pool_topo[k] = NULL;
        msr_calib_free(c->cal[k]);
    }
    c->n = 0;
    msr_calib_session_free(c->sess);
    c->sess = NULL;
}

/* The calibration of K, measured alongside K's points: begun before them
 * (layer passes, link, pipes), CAL_PER_ROUND pipelined rounds before each
 * of the grid's rounds, ended after them. */
#define GRID_ROUNDS 4
#define CAL_PER_ROUND 3

static int cal_begin(void *ctx, int K)
{
    struct cal_ctx *c = ctx;
    if (c->n == 2)
        return ps_error(PS_EINVAL, "bench: three values of K");
    struct msr_calib_opts co = { .spec = c->net, .sizes = c->sizes, .n_sizes = c->n_sizes,
                                 .repeats = 5, .warmup = 1, .n_stages = K, .cpu = -1,
                                 .peer_cpu = -1, .seed = 1, .batch = c->batch, .pipelined = 1,
                                 .schedule = c->schedule,
                                 .warm_each = getenv("BENCH_ACCURACY_CALIB_WARM") != NULL,
                                 .by_median = getenv("BENCH_ACCURACY_CALIB_MEDIAN") != NULL,
                                 .pool_remat = getenv("BENCH_ACCURACY_CALIB_POOLED") != NULL,
                                 /* every round the grid leaves room for, no early stop */
                                 .max_rounds = GRID_ROUNDS * CAL_PER_ROUND - 1, .rel_se = 1e-9 };
    return msr_calib_begin(&co, &c->sess);
}

/* By default each size's calibration steps run right before each of the
 * grid's points of that size (before_point), after one warm-up round: in
 * two all-schedule runs the grid's steps were a median 1.9-2.2 % from the
 * calibration's own, against 2.8-3.4 % in five runs with whole rounds
 * between the grid's (docs/validation.md).
 * BENCH_ACCURACY_CALIB_PER_ROUND=1: CAL_PER_ROUND rounds of every size
 * before each grid round, as before. */
static int per_point(void) { return getenv("BENCH_ACCURACY_CALIB_PER_ROUND") == NULL; }

static int cal_between(void *ctx, int K, int round)
{
    (void)K;
    struct cal_ctx *c = ctx;
    if (per_point())
        return round ? 0 : msr_calib_rounds(c->sess, 1);
    return msr_calib_rounds(c->sess, CAL_PER_ROUND);
}

static int cal_before_point(void *ctx, int K, int micro, enum sch_remat remat, int round)
{
    (void)K, (void)remat, (void)round;
    struct cal_ctx *c = ctx;
    return msr_calib_size_round(c->sess, micro);
}

/* The calibration's profile and topology under the other value of a rule
 * (set: msr_calib_recentre or msr_calib_repool; now: its value), then the
 * rule set back. */
static int other_rule(struct msr_calib *cal, int (*set)(struct msr_calib *, int), int now,
                      struct mdl_profile **prof, struct mdl_topology **topo)
{
    int rc;
    if ((rc = set(cal, !now)) < 0 || (rc = msr_calib_profile(cal, prof)) < 0 ||
        (rc = msr_calib_topology(cal, topo)) < 0) {
        set(cal, now);
        return rc;
    }
    return set(cal, now);
}

static int cal_end(void *ctx, int K, const struct mdl_profile **prof,
                   const struct mdl_topology **topo)
{
    struct cal_ctx *c = ctx;
    int k = c->n++, rc;
    c->Ks[k] = K;
    rc = msr_calib_end(c->sess, &c->cal[k]);
    c->sess = NULL;
    if (rc < 0 || (rc = msr_calib_profile(c->cal[k], &c->prof[k])) < 0 ||
        (rc = msr_calib_topology(c->cal[k], &c->topo[k])) < 0)
        return rc;
    pr_cal(c->cal[k]);
    /* the other centre rule, and the other pooling of R and of B after R,
     * on the same samples, for the paired lines (paired()) */
    if ((rc = other_rule(c->cal[k], msr_calib_recentre, c->cal[k]->pipe_by_mean,
                         &c->alt_prof[k], &c->alt_topo[k])) < 0 ||
        (rc = other_rule(c->cal[k], msr_calib_repool, c->cal[k]->pipe_pooled, &c->pool_prof[k],
                         &c->pool_topo[k])) < 0)
        return rc;
    *prof = c->prof[k];
    *topo = c->topo[k];
    return 0;
}

/* Signed makespan errors (median step - prediction) / prediction of a
 * schedule's points under both rules of the calibration (medians, trimmed
 * means), from the same calibration samples and against the same measured
 * steps: the comparison that run-to-run drift cannot blur. */
struct paired_acc {
    int n[2];                  /* points at K = 1, K >= 2 */
    double sum[2][2];          /* [rule][K class] signed errors */
    double abs_sum[2], abs_max[2];
    int own_n;                 /* points whose step the calibration ran */
    double own_abs[2], own_max[2]; /* [rule] |errors| against those steps */
};

static void print_paired(const struct paired_acc *a, const char *const rule[2])
{
    int n = a->n[0] + a->n[1];
    for (int r = 0; r < 2; r++) {
        printf("  paired, %-13s mean |error| %5.2f%%  max %6.2f%%  mean signed", rule[r],
               n ? 100 * a->abs_sum[r] / n : 0, 100 * a->abs_max[r]);
        for (int kc = 0; kc < 2; kc++)
            if (a->n[kc])
                printf("  %s %+.2f%%", kc ? "K=2" : "K=1", 100 * a->sum[r][kc] / a->n[kc]);
        if (a->own_n)
            printf("; on the calibration's own steps mean |error| %5.2f%% max %6.2f%%",
                   100 * a->own_abs[r] / a->own_n, 100 * a->own_max[r]);
        printf("\n");
    }
}

/* opts.own_step: the median of the calibration's own steps of K at micro
 * samples, remat never or always (msr_calib.pipe_step), 0 when it ran none;
 * the points' step_own_s. */
static double own_step(void *ctx, int K, int micro, enum sch_remat remat)
{
    const struct cal_ctx *c = ctx;
    for (int k = 0; k < c->n; k++)
        for (int i = 0; c->Ks[k] == K && c->cal[k] && i < c->cal[k]->n_sizes; i++) {
            const struct msr_stat *st = &c->cal[k]->pipe_step[i][remat == SCH_REMAT_ALWAYS];
            if (c->cal[k]->sizes[i] == micro && st->n > 0)
                return st->med;
        }
    return 0;
}

static int noise(void *ctx, int K, int micro, uint64_t seed, struct msr_noise **out);

/* Point pt's errors under the two predictions sim[0..1] into a. */
static void paired_add(struct paired_acc *a, const struct msr_vpoint *pt, const double sim[2])
{
    int kc = pt->K > 1;
    double own = pt->step_own_s;
    a->n[kc]++;
    a->own_n += own > 0;
    for (int r = 0; r < 2; r++) {
        double e = (pt->step_med_s - sim[r]) / sim[r];
        a->sum[r][kc] += e;
        a->abs_sum[r] += fabs(e);
        a->abs_max[r] = fmax(a->abs_max[r], fabs(e));
        if (own > 0) {
            double eo = fabs(own - sim[r]) / sim[r];
            a->own_abs[r] += eo;
            a->own_max[r] = fmax(a->own_max[r], eo);
        }
    }
}

/* A schedule's paired figures into the totals. */
static void paired_merge(struct paired_acc *tot, const struct paired_acc *a)
{
    for (int r = 0; r < 2; r++) {
        for (int kc = 0; kc < 2; kc++)
            tot->sum[r][kc] += a->sum[r][kc];
        tot->abs_sum[r] += a->abs_sum[r];
        tot->abs_max[r] = fmax(tot->abs_max[r], a->abs_max[r]);
        tot->own_abs[r] += a->own_abs[r];
        tot->own_max[r] = fmax(tot->own_max[r], a->own_max[r]);
    }
    tot->n[0] += a->n[0];
    tot->n[1] += a->n[1];
    tot->own_n += a->own_n;
}

/* Each point predicted under both rules of a calibration (rule `mine` is
 * the one the grid used; the other's profile and topology alt_*), against
 * the same measured steps and the same calibration steps. */
static int paired(const struct cal_ctx *c, const struct msr_vcheck *v, int mine,
                  struct mdl_profile *const *alt_prof, struct mdl_topology *const *alt_topo,
                  const char *const rule[2], struct paired_acc *tot)
{
    struct paired_acc a = { 0 };
    for (int j = 0; j < v->n_points; j++) {
        const struct msr_vpoint *pt = &v->pts[j];
        int k = c->n > 1 && c->Ks[1] == pt->K ? 1 : 0;
        double sim[2];
        sim[mine] = pt->step_sim_s;
        /* the other rule with the grid's draws (the same seed: the same
         * random numbers), so that only the rule differs */
        struct msr_noise *nz = NULL;
        int rc = pt->n_drawn ? noise((void *)c, pt->K, pt->micro,
                                     msr_vpoint_seed(v->seed, pt), &nz) : 0;
        struct msr_vdraws dr = { .draw = nz ? msr_noise_draw(nz) : NULL, .n = pt->n_drawn };
        double det;
        if (rc >= 0)
            rc = msr_vpoint_simulate(v->schedule, v->batch, alt_prof[k], alt_topo[k], pt,
                                     &det, NULL, nz ? &dr : NULL);
        msr_noise_free(nz);
        if (rc < 0)
            return rc;
        sim[!mine] = nz ? dr.step_s : det;
        paired_add(&a, pt, sim);
    }
    print_paired(&a, rule);
    paired_merge(tot, &a);
    return 0;
}

static const char *const CENTRE_RULES[2] = { "medians", "trimmed means" };
static const char *const POOL_RULES[2] = { "classes apart", "pooled" };

/* opts.noise: the spread of K's calibration. */
static int noise(void *ctx, int K, int micro, uint64_t seed, struct msr_noise **out)
{
    const struct cal_ctx *c = ctx;
    *out = NULL;
    for (int k = 0; k < c->n; k++)
        if (c->Ks[k] == K && c->cal[k])
            return msr_noise_new(c->cal[k], micro, seed, out);
    return 0;
}

static int draws(void)
{
    const char *e = getenv("BENCH_ACCURACY_DRAWS");
    int n = e ? atoi(e) : 0;
    return n > 0 ? (n < 10000 ? n : 10000) : 0;
}

/* The drawn median step (the grid's prediction) and the step of the mean
 * op times, against the same measured and calibration steps. */
static void paired_draws(const struct msr_vcheck *v, const char *const rule[2],
                         struct paired_acc *tot)
{
    struct paired_acc a = { 0 };
    for (int j = 0; j < v->n_points; j++) {
        const struct msr_vpoint *pt = &v->pts[j];
        if (!pt->n_drawn)
            continue;
        const double sim[2] = { pt->step_sim_s, pt->step_det_s };
        paired_add(&a, pt, sim);
    }
    if (a.n[0] + a.n[1])
        print_paired(&a, rule);
    paired_merge(tot, &a);
}

static const char *const DRAW_RULES[2] = { "drawn median", "mean op times" };

/* One line per schedule: its figures against the targets. */
static void brief(const char *name, const struct msr_vcheck *v)
{
    struct msr_accuracy a;
    msr_vcheck_accuracy(v, 0, &a);
    /* each figure with its ratio to the target (<= 1 met), as the pooled lines */
    printf("  %-16s %3d points  median %5.2f%% (x%.2f)  max %6.2f%% (x%.2f)  bubble %5.2f pts "
           "(x%.2f)  peak %.2f%% (%s)  outside the spread %d;  on their own op times median "
           "%5.2f%%  max %6.2f%%  bubble %5.2f pts\n", name, a.n, 100 * a.mk_median,
           a.mk_median / MSR_TARGET_MAKESPAN_MEDIAN, 100 * a.mk_max,
           a.mk_max / MSR_TARGET_MAKESPAN_MAX, a.bubble_max,
           a.bubble_max / MSR_TARGET_BUBBLE_POINTS, 100 * a.peak_max,
           a.peak_max == MSR_TARGET_PEAK_ACT ? "exact" : "MISS", a.n_miss,
           100 * a.replay_median, 100 * a.replay_max, a.replay_bub_max);
}

/* One line per schedule: its points whose step the pipelined calibration
 * itself ran (remat never and always), predicted against those steps (the
 * model's error on steps whose op times it was given) and the grid's steps
 * against them (the machine's drift), as msr_vcheck_accuracy counts them,
 * with the mean signed error of each mode. */
static void own_steps(const struct msr_vcheck *v, const char *name)
{
    struct msr_accuracy a;
    msr_vcheck_accuracy(v, 0, &a);
    if (!a.own_n)
        return;
    int ns[2] = { 0, 0 };
    double sum[2] = { 0, 0 }; /* signed, by remat never / always */
    for (int j = 0; j < v->n_points; j++) {
        const struct msr_vpoint *pt = &v->pts[j];
        if (!(pt->step_own_s > 0) || !(pt->step_sim_s > 0))
            continue;
        int al = pt->remat == SCH_REMAT_ALWAYS;
        sum[al] += pt->step_own_s / pt->step_sim_s - 1;
        ns[al]++;
    }
    const struct msr_vpoint *worst = &v->pts[a.i_own_max];
    printf("  %s, the %d points whose step the calibration ran (remat never, always): "
           "prediction vs the calibration's own steps median |error| %.2f%% max %.2f%% "
           "(K=%d M=%d %s), mean signed never %+.2f%% always %+.2f%%; the grid's steps vs "
           "those steps median %.2f%% max %.2f%%\n", name, a.own_n, 100 * a.own_median,
           100 * a.own_max, worst->K, worst->M, sch_remat_name(worst->remat),
           ns[0] ? 100 * sum[0] / ns[0] : 0.0, ns[1] ? 100 * sum[1] / ns[1] : 0.0,
           100 * a.drift_median, 100 * a.drift_max);
}

/* Whether name is one of the comma-separated names of list, whole. */
static int listed(const char *list, const char *name)
{
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, ",");
        if (l == strlen(name) && !strncmp(p, name, l))
            return 1;
        p += l + (p[l] == ',');
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *net = argc > 1 ? argv[1] : "mlp:layers=8,width=512";
    int batch = argc > 2 ? atoi(argv[2]) : 256;
    /* every schedule the engine has: K = 1 (one list for all) with gpipe,
     * K = 2 with each; BENCH_ACCURACY_SCHEDULES="gpipe,1f1b" for fewer */
    static const char *const all[] = { "gpipe", "1f1b", "eager-1f1b", "interleaved:2",
                                       "breadth-first:2", "zb-h1", "zb-h2", "zb-v",
                                       "zb-auto", "dualpipe-v" };
    enum { NS = sizeof all / sizeof *all };
    const char *only = getenv("BENCH_ACCURACY_SCHEDULES");
    static const int K12[] = { 1, 2 }, K2[] = { 2 }, Ms[] = { 1, 2, 4, 8, 16, 32, 64 };
    static const enum sch_remat rm[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                         SCH_REMAT_ALWAYS };
    int sizes[7], n = 0;
    for (int i = 0; i < 7; i++)
        if (batch % Ms[i] == 0)
            sizes[n++] = batch / Ms[i];
    printf("bench_accuracy: %s, batch %d, OpenBLAS %s\n", net, batch, rt_blas_corename());
    struct cal_ctx cc = { .net = net, .batch = batch, .sizes = sizes, .n_sizes = n };
    struct msr_vcheck *v[NS] = { 0 };
    int rc = 0, rt = !getenv("BENCH_ACCURACY_NORT"), nv = 0;
    if (rt && msr_realtime(1) < 0) {
        printf("scheduling      normal (%s)\n", ps_errmsg());
        rt = 0;
    } else {
        printf("scheduling      %s\n", rt ? "SCHED_FIFO (BENCH_ACCURACY_NORT=1: normal)"
                                            : "normal (BENCH_ACCURACY_NORT set)");
    }
    if (rt) {
        char line[256];
        msr_rt_throttle_describe(NULL, line, sizeof line);
        printf("rt throttling   %s\n", line + strlen("RT throttling: "));
        if (getenv("BENCH_ACCURACY_UNTHROTTLE"))
            unthrottle();
    }
    const char *warm = getenv("BENCH_ACCURACY_CALIB_WARM") ? "; each timed step after an "
                                                             "untimed one of the same pipeline"
                                                           : "";
    const char *centre = getenv("BENCH_ACCURACY_CALIB_MEDIAN") ? "medians" : "trimmed means";
    if (per_point())
        printf("protocol        per schedule and K: one warm-up round of a pipelined "
               "calibration, then %d rounds of the grid (every point: 1 warm-up + 3 timed "
               "steps), each point right after the calibration's steps of its micro-batch size "
               "(the schedule's own, remat never and always%s; stages scaled to the in-step "
               "%s)\n", GRID_ROUNDS, warm, centre);
    else
        printf("protocol        per schedule and K: %d rounds of the grid (every point: 1 "
               "warm-up + 3 timed steps), each after %d rounds of a pipelined calibration (the "
               "schedule's own steps at every size, remat never and always%s; stages scaled to "
               "the in-step %s)\n", GRID_ROUNDS, CAL_PER_ROUND, warm, centre);
    if (draws())
        printf("predictions     each the median of %d simulated steps whose op times are drawn "
               "from the calibration's spread inside a step (BENCH_ACCURACY_DRAWS)\n", draws());
    const char *name[NS];
    struct paired_acc both = { 0 }, pools = { 0 }, drawn = { 0 };
    /* every name listed is one of the bench's: a typo fails, it is not left out */
    for (const char *p = only; p && *p && rc == 0;) {
        size_t l = strcspn(p, ",");
        int known = 0;
        for (int s = 0; s < NS; s++)
            known |= strlen(all[s]) == l && !strncmp(p, all[s], l);
        if (!known)
            rc = ps_error(PS_EUSAGE, "BENCH_ACCURACY_SCHEDULES: '%.*s' is not one of the "
                          "bench's schedules", (int)l, p);
        p += l + (p[l] == ',');
    }
    if (rc < 0)
        goto out;
    for (int s = 0; s < NS && !rc; s++) {
        if (only && !listed(only, all[s])) /* a comma-separated subset */
            continue;
        int k1 = !strcmp(all[s], "gpipe");
        cc.schedule = all[s];
        struct msr_vcheck_opts o = { .spec = net, .batch = batch, .steps = 3, .warmup_steps = 1,
                                     .rounds = GRID_ROUNDS, .schedule = all[s],
                                     .Ks = k1 ? K12 : K2, .n_K = k1 ? 2 : 1, .Ms = Ms, .n_M = 7,
                                     .remats = rm, .n_remat = 3, .prepare = cal_end,
                                     .begin = cal_begin, .between = cal_between,
                                     .prepare_ctx = &cc, .own_step = own_step,
                                     .noise = noise, .draws = draws(),
                                     .before_point = per_point() ? cal_before_point : NULL,
                                     .profile_desc = per_point()
                                                         ? "pipelined calibration in K stages, "
                                                           "each size's steps right before its "
                                                           "points"
                                                         : "pipelined calibration in K stages, "
                                                           "its rounds between the grid's",
                                     .topology_desc = "calibrated in this run", .seed = 1,
                                     .progress = stdout };
        printf("\n== %s\n", all[s]);
        rc = msr_vcheck_run(&o, &v[nv]);
        if (rc >= 0)
            rc = paired(&cc, v[nv], getenv("BENCH_ACCURACY_CALIB_MEDIAN") == NULL,
                        cc.alt_prof, cc.alt_topo, CENTRE_RULES, &both);
        if (rc >= 0)
            rc = paired(&cc, v[nv], getenv("BENCH_ACCURACY_CALIB_POOLED") != NULL,
                        cc.pool_prof, cc.pool_topo, POOL_RULES, &pools);
        if (rc >= 0)
            own_steps(v[nv], all[s]);
        if (rc >= 0)
            paired_draws(v[nv], DRAW_RULES, &drawn);
        cal_release(&cc);
        if (rc < 0)
            break;
        name[nv++] = all[s];
    }
    if (rc >= 0 && !nv) { /* a typo, or a schedule the bench does not run: not a pass */
        rc = ps_error(PS_EUSAGE, "BENCH_ACCURACY_SCHEDULES='%s' names none of the bench's "
                      "schedules", only ? only : "");
        goto out;
    }
    if (rc < 0)
        goto out;
    /* every point of every schedule, pooled */
    int total = 0;
    for (int i = 0; i < nv; i++)
        total += v[i]->n_points;
    struct msr_vcheck pool = *v[0];
    if (!(pool.pts = malloc((size_t)total * sizeof *pool.pts))) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    pool.n_points = 0;
    long pre = 0;
    double wall = 0;
    for (int i = 0; i < nv; i++) {
        memcpy(pool.pts + pool.n_points, v[i]->pts, (size_t)v[i]->n_points * sizeof *pool.pts);
        pool.n_points += v[i]->n_points;
        wall += v[i]->wall_s;
        for (int j = 0; j < v[i]->n_points; j++)
            pre += v[i]->pts[j].preempt_all;
    }
    printf("\nper schedule (median steps; targets median 2%%, max 5%%, bubble 1 pt, peak exact):\n");
    for (int i = 0; i < nv; i++)
        brief(name[i], v[i]);
    printf("\nall schedules: %d points in %.1f s; %ld involuntary context switches in the timed "
           "steps (other load on the cores)\n", pool.n_points, wall, pre);
    printf("the calibration's two rules on the same samples, against the same steps:\n");
    print_paired(&both, CENTRE_RULES);
    printf("R and B after R apart from F and B, or pooled with them, on the same samples:\n");
    print_paired(&pools, POOL_RULES);
    if (drawn.n[0] + drawn.n[1]) {
        printf("the step as the median of %d draws of the calibration's spread, or the step of "
               "the mean op times, on the same samples:\n", draws());
        print_paired(&drawn, DRAW_RULES);
    }
    for (int fast = 0; fast < 2 && rc >= 0; fast++) {
        struct msr_accuracy a;
        msr_vcheck_accuracy(&pool, fast, &a);
        rc = msr_accuracy_print(&pool, &a, stdout);
    }
    free(pool.pts);
out:
    if (rt)
        msr_realtime(0);
    rt_put_back();
    if (rc < 0)
        fprintf(stderr, "bench_accuracy: %s\n", ps_errmsg());
    for (int i = 0; i < nv; i++)
        msr_vcheck_free(v[i]);
    cal_release(&cc);
    return rc < 0 ? 1 : 0;
}
