/* Drawn op times: the engine's per-op draw (sim/sim_engine.h, struct
 * sim_draw), ana_predict's median over draws, and the calibration's draw
 * of them (measure/msr_calib.h, msr_noise). Exact answers throughout: a
 * draw that returns the tabled time changes nothing, the engine's makespan
 * with drawn times equals a recurrence over the same times, the clamp, and
 * which class's spread each op draws from. */
#include "helpers.h"

#include "analysis/ana_predict.h"
#include "measure/msr_calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(draw, .timeout = 60);

static sch_time same(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)op;
    (void)remat;
    (*(int *)ctx)++;
    return tabled;
}

/* A draw that returns the tabled time runs every schedule exactly as
 * without one: the same result and, event for event, the same trace; and
 * it is asked once per compute op. */
Test(draw, the_tabled_time_changes_nothing)
{
    static const char *const sched[] = { "gpipe", "1f1b", "zb-h1", "interleaved:2", "zb-v",
                                         "eager-1f1b" };
    static const enum sch_remat rm[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                         SCH_REMAT_ALWAYS };
    struct mdl_profile *p = th_uniform(8, 1500, 2700, 1, 3000, 100, 1000);
    struct mdl_topology *t = th_ring(4, 0, 1e9, 2.5e-6);
    for (size_t i = 0; i < sizeof sched / sizeof *sched; i++)
        for (int r = 0; r < 3; r++)
            for (int K = 2; K <= 4; K += 2) {
                struct th_run run;
                th_simulate(&run, sched[i], p, t, K, 8, rm[r], 1, 1);
                int calls = 0;
                struct sim_draw d = { same, &calls };
                struct sim_engine_opts o = { .record_trace = 1, .draw = &d };
                sim_engine *e;
                cr_assert_eq(sim_engine_new(run.s, run.c, t, &o, &e), 0, "%s", ps_errmsg());
                cr_assert_eq(sim_engine_run(e), 0);
                const struct sim_result *a = run.r, *b = sim_engine_result(e);
                cr_expect_eq(a->makespan, b->makespan, "%s K=%d remat %d", sched[i], K, r);
                cr_expect_eq(a->fb_end, b->fb_end);
                cr_expect_eq(a->bubble, b->bubble);
                for (int dv = 0; dv < K; dv++)
                    cr_expect_eq(a->busy[dv], b->busy[dv]);
                const struct trc_trace *ta = sim_engine_trace(run.e), *tb = sim_engine_trace(e);
                cr_assert_eq(ta->n_events, tb->n_events);
                int compute = 0;
                for (size_t k = 0; k < ta->n_events; k++) {
                    cr_expect_eq(ta->events[k].start_ns, tb->events[k].start_ns);
                    cr_expect_eq(ta->events[k].end_ns, tb->events[k].end_ns);
                    int kind = ta->events[k].kind;
                    compute += ta->events[k].stream == SCH_STREAM_COMPUTE &&
                               kind != SCH_OP_RECV_ACT && kind != SCH_OP_RECV_GRAD;
                }
                cr_expect_eq(calls, compute, "%s K=%d: %d draws for %d compute ops", sched[i],
                             K, calls, compute);
                sim_engine_free(e);
                th_release(&run);
            }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* Drawn times for GPipe without re-materialization: each F and B of every
 * (stage, micro-batch) a random time, recorded as drawn. With empty
 * messages on a chain of latency L, an independent recurrence over the
 * recorded times (F(s,m) after F(s,m-1) and F(s-1,m) + L; B from the last
 * stage down, B(s,m) after the device's previous op and B(s+1,m) + L)
 * gives the engine's makespan to the nanosecond. */
struct rec {
    uint64_t st;
    sch_time f[8][8], b[8][8];
};

static uint64_t lcg(uint64_t *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return *st >> 33;
}

static sch_time record(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    struct rec *r = ctx;
    (void)remat;
    sch_time d = tabled / 2 + (sch_time)(lcg(&r->st) % (uint64_t)(tabled + 1));
    if (op->kind == SCH_OP_FWD)
        r->f[op->stage][op->mb] = d;
    else if (op->kind == SCH_OP_BWD)
        r->b[op->stage][op->mb] = d;
    else
        return 0; /* the free update */
    return d;
}

static sch_time mx(sch_time a, sch_time b) { return a > b ? a : b; }

Test(draw, drawn_times_follow_the_gpipe_recurrence)
{
    uint64_t seed = 7;
    for (int it = 0; it < 200; it++) {
        int K = 2 + (int)(lcg(&seed) % 5), M = 1 + (int)(lcg(&seed) % 8);
        sch_time L = (sch_time)(lcg(&seed) % 3000);
        struct mdl_profile *p = th_uniform(K, 1000, 2000, 1, 0, 0, 0);
        struct mdl_topology *t = th_chain(K, 0, 1e9, (double)L * 1e-9);
        struct th_run run;
        th_simulate(&run, "gpipe", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
        struct rec r = { .st = seed };
        struct sim_draw d = { record, &r };
        struct sim_engine_opts o = { .draw = &d };
        sim_engine *e;
        cr_assert_eq(sim_engine_new(run.s, run.c, t, &o, &e), 0, "%s", ps_errmsg());
        cr_assert_eq(sim_engine_run(e), 0);
        sch_time F[8][8], B[8][8], want = 0;
        for (int s = 0; s < K; s++)
            for (int m = 0; m < M; m++)
                F[s][m] = mx(m ? F[s][m - 1] : 0, s ? F[s - 1][m] + L : 0) + r.f[s][m];
        for (int s = K - 1; s >= 0; s--)
            for (int m = M - 1; m >= 0; m--) {
                sch_time prev = m == M - 1 ? F[s][M - 1] : B[s][m + 1];
                B[s][m] = mx(prev, s + 1 < K ? B[s + 1][m] + L : 0) + r.b[s][m];
                want = mx(want, B[s][m]);
            }
        cr_assert_eq(sim_engine_result(e)->makespan, want, "case %d K=%d M=%d L=%lld: engine "
                     "%lld, recurrence %lld", it, K, M, (long long)L,
                     (long long)sim_engine_result(e)->makespan, (long long)want);
        sim_engine_free(e);
        th_release(&run);
        mdl_topology_free(t);
        mdl_profile_free(p);
    }
}

static sch_time negative(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)ctx, (void)op, (void)remat, (void)tabled;
    return -5;
}

static sch_time huge(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)ctx, (void)op, (void)remat, (void)tabled;
    return INT64_MAX / 4;
}

/* The engine clamps a draw to [0, 16 x tabled]: K = 1 GPipe, M = 3, F 1000
 * and B 2000 ns, free update: 0 ns, and 16 x 9000 ns. */
Test(draw, the_engine_clamps_a_draw)
{
    struct mdl_profile *p = th_uniform(1, 1000, 2000, 1, 0, 0, 0);
    struct mdl_topology *t = th_chain(1, 0, 1e9, 0);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 1, 3, SCH_REMAT_NEVER, 1, 0);
    cr_assert_eq(run.r->makespan, 9000);
    sch_time (*fn[2])(void *, const struct sch_op *, int, sch_time) = { negative, huge };
    const sch_time want[2] = { 0, 16 * 9000 };
    for (int i = 0; i < 2; i++) {
        struct sim_draw d = { fn[i], NULL };
        struct sim_engine_opts o = { .draw = &d };
        sim_engine *e;
        cr_assert_eq(sim_engine_new(run.s, run.c, t, &o, &e), 0, "%s", ps_errmsg());
        cr_assert_eq(sim_engine_run(e), 0);
        cr_expect_eq(sim_engine_result(e)->makespan, want[i], "%lld",
                     (long long)sim_engine_result(e)->makespan);
        sim_engine_free(e);
    }
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* ana_predict with draws: the deterministic figures as without, n_drawn
 * runs, and their median: a draw that doubles every op at K = 1 (no
 * transfer) doubles the step exactly; the lower median of an even count. */
struct ramp {
    int run;     /* which of the draws, from the update (the step's last op) */
};

static sch_time twice(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)ctx, (void)op, (void)remat;
    return 2 * tabled;
}

static sch_time by_run(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    struct ramp *r = ctx;
    (void)remat;
    sch_time d = tabled * (1 + r->run % 4); /* runs 1x, 2x, 3x, 4x, 1x, ... */
    if (op->kind == SCH_OP_UPDATE)
        r->run++;
    return d;
}

Test(draw, predict_takes_the_median_of_its_draws)
{
    struct mdl_profile *p = th_uniform(4, 1000, 2000, 1, 0, 0, 1000);
    struct mdl_topology *t = th_chain(1, 1e9, 1e9, 0);
    struct ana_config c = { .profile = p, .topo = t, .K = 1, .M = 4, .batch = 4,
                            .remat = SCH_REMAT_NEVER, .no_baseline = 1 };
    struct ana_prediction *det, *dr;
    cr_assert_eq(ana_predict(&c, &det), 0, "%s", ps_errmsg());
    cr_expect_eq(det->n_drawn, 0);
    struct sim_draw d = { twice, NULL };
    c.draw = &d;
    c.draws = 3;
    cr_assert_eq(ana_predict(&c, &dr), 0, "%s", ps_errmsg());
    cr_expect_eq(dr->step_s, det->step_s);
    cr_expect_eq(dr->n_drawn, 3);
    cr_expect_eq(dr->step_drawn_s, 2 * det->step_s, "%.9g vs %.9g", dr->step_drawn_s,
                 det->step_s);
    cr_expect_eq(dr->bubble_drawn, 0);
    ana_prediction_free(dr);
    /* four runs at 1x, 2x, 3x, 4x: the lower median, 2x */
    struct ramp r = { 0 };
    struct sim_draw d2 = { by_run, &r };
    c.draw = &d2;
    c.draws = 4;
    cr_assert_eq(ana_predict(&c, &dr), 0, "%s", ps_errmsg());
    cr_expect_eq(r.run, 4);
    cr_expect_eq(dr->step_drawn_s, 2 * det->step_s);
    ana_prediction_free(dr);
    ana_prediction_free(det);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* A calibration made by hand: 2 stages, sizes 4 and 8; at size 8 stage 1's
 * F without stash has the spread "always 2", stage 0's B of a stashed
 * micro-batch a ramp from 0.5 to 1.5; nothing else has samples. */
static struct msr_calib *hand_calib(void)
{
    struct msr_calib *c = calloc(1, sizeof *c);
    cr_assert(c);
    c->pipelined = 1;
    c->n_sizes = 2;
    c->sizes[0] = 4;
    c->sizes[1] = 8;
    c->pipe_stages = 2;
    c->pipe = calloc((size_t)2 * 2 * MSR_PIPE_NCLASS, sizeof *c->pipe);
    cr_assert(c->pipe);
    for (int j = 0; j < MSR_PIPE_NQ; j++) {
        MSR_PIPE_AT(c, 1, 1, MSR_PIPE_FN)->rq[j] = 2;
        MSR_PIPE_AT(c, 0, 1, MSR_PIPE_BB)->rq[j] = 0.5 + (double)j / (MSR_PIPE_NQ - 1);
    }
    return c;
}

static sch_time draw_of(const struct msr_noise *n, int kind, int stage, int remat, sch_time t)
{
    const struct sim_draw *d = msr_noise_draw(n);
    struct sch_op op = { .kind = (uint8_t)kind, .stage = stage, .mb = 0 };
    return d->fn(d->ctx, &op, remat, t);
}

/* Each op draws from its own class at its stage and size: F of a
 * re-materialized micro-batch from F-without-stash (x2 here), the stashing
 * F from F (no samples: its tabled time), B of a stashed micro-batch within
 * its ramp; another stage, a transfer, a calibrated size without samples:
 * the tabled time; a size not calibrated or a calibration that is not
 * pipelined: no draw at all. The same seed draws the same times. */
Test(draw, noise_draws_from_each_op_class)
{
    struct msr_calib *c = hand_calib();
    struct msr_noise *n, *m;
    cr_assert_eq(msr_noise_new(c, 8, 42, &n), 0);
    cr_assert_eq(msr_noise_new(c, 8, 42, &m), 0);
    cr_expect_eq(draw_of(m, SCH_OP_FWD, 1, 1, 1000), 2000); /* m draws as n does */
    cr_expect_eq(draw_of(n, SCH_OP_FWD, 1, 1, 1000), 2000);
    cr_expect_eq(draw_of(n, SCH_OP_FWD, 1, 0, 1000), 1000);
    cr_expect_eq(draw_of(n, SCH_OP_FWD, 0, 1, 1000), 1000);
    cr_expect_eq(draw_of(n, SCH_OP_BWD, 0, 1, 1000), 1000); /* B after R: no samples */
    cr_expect_eq(draw_of(n, SCH_OP_SEND_ACT, 1, 1, 1000), 1000);
    cr_expect_eq(draw_of(n, SCH_OP_FWD, 2, 1, 1000), 1000); /* no such stage */
    int lo = 0, hi = 0;
    for (int i = 0; i < 1000; i++) {
        sch_time a = draw_of(n, SCH_OP_BWD, 0, 0, 1000), b = draw_of(m, SCH_OP_BWD, 0, 0, 1000);
        cr_assert_eq(a, b);
        cr_assert(a >= 500 && a <= 1500, "%lld", (long long)a);
        lo += a < 1000;
        hi += a > 1000;
    }
    cr_expect(lo > 0 && hi > 0);
    msr_noise_free(m);
    msr_noise_free(n);
    cr_assert_eq(msr_noise_new(c, 4, 42, &n), 0); /* size 4: no samples */
    cr_assert(n);
    cr_expect_eq(draw_of(n, SCH_OP_FWD, 1, 1, 1000), 1000);
    msr_noise_free(n);
    cr_assert_eq(msr_noise_new(c, 16, 42, &n), 0); /* a size it did not run: none */
    cr_expect_null(n);
    c->pipelined = 0; /* not pipelined: none */
    cr_assert_eq(msr_noise_new(c, 8, 42, &n), 0);
    cr_expect_null(n);
    msr_noise_free(NULL);
    free(c->pipe);
    free(c);
}
