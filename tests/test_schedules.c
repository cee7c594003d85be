/* 1F1B, interleaved 1F1B and ZB-H1: op-list validity, replayability by one
 * thread per device, and exact step times, bubbles and memory peaks on
 * uniform stages. */
#include "helpers.h"
#include "oracle_sched.h"
#include "sched/sch_schedsize.h"

#include <math.h>

TestSuite(schedules, .timeout = 120);

static const char *const all_schedules[] = {
    "gpipe", "1f1b", "zb-h1", "interleaved:1", "interleaved:2", "interleaved:3", "interleaved:4",
};
#define N_SCHED (int)(sizeof all_schedules / sizeof *all_schedules)

static struct mdl_topology *ring_bw(int n, double bw) { return th_ring(n, 0, bw, 0); }

static struct mdl_topology *ring(int n) { return ring_bw(n, 1e300); }

static int64_t slot(const struct sch_schedule *s, int kind, int st, int mb)
{
    return ((int64_t)kind * s->n_stages + st) * s->n_micro + (mb < 0 ? 0 : mb);
}

/* Each micro-batch once per stage: F and B exactly once per (stage, mb), W
 * exactly once iff the backward is split, R once iff re-materialized, one U
 * per stage. Counted here independently of sch_schedule_validate. */
static void check_counts(const struct sch_schedule *s)
{
    int S = s->n_stages, M = s->n_micro;
    int *cnt = calloc((size_t)(SCH_OP_NKINDS * S * M), sizeof *cnt);
    cr_assert(cnt);
    for (int d = 0; d < s->n_devices; d++)
        for (int i = 0; i < s->n_ops[d]; i++) {
            const struct sch_op *op = &s->ops[d][i];
            cr_assert_eq(s->stage_device[op->stage], d);
            cnt[slot(s, op->kind, op->stage, op->mb)]++;
        }
    for (int st = 0; st < S; st++) {
        cr_assert_eq(cnt[slot(s, SCH_OP_UPDATE, st, 0)], 1);
        for (int m = 0; m < M; m++) {
            cr_assert_eq(cnt[slot(s, SCH_OP_FWD, st, m)], 1, "%s F%d of stage %d", s->name, m, st);
            cr_assert_eq(cnt[slot(s, SCH_OP_BWD, st, m)], 1, "%s B%d of stage %d", s->name, m, st);
            cr_assert_eq(cnt[slot(s, SCH_OP_WGRAD, st, m)], s->has_wgrad);
            cr_assert_eq(cnt[slot(s, SCH_OP_RECOMP, st, m)], sch_schedule_remat_mb(s, m));
        }
    }
    free(cnt);
}

/* Every generated schedule is valid, replays on one thread per device, and
 * the engine completes it, for K 1..8, M 1..16, every remat mode, v 1..4
 * where M % K == 0. The memory ledger returns to zero on every device. */
Test(schedules, every_schedule_is_valid_and_completes)
{
    int runs = 0;
    for (int K = 1; K <= 8; K++) {
        struct mdl_topology *t = ring_bw(K, 1e9); /* 64 B: 64 ns per transfer */
        for (int M = 1; M <= 16; M++)
            for (int i = 0; i < N_SCHED; i++)
                for (int r = 0; r < 3; r++) {
                    const char *name = all_schedules[i];
                    struct sch_schedule *s;
                    int rc = sch_schedule_build(name, K, M, (enum sch_remat)r, &s);
                    if (!strncmp(name, "interleaved:", 12) && name[12] != '1' && M % K) {
                        cr_assert_eq(rc, -PS_EUSAGE, "%s K=%d M=%d", name, K, M);
                        cr_assert(strstr(ps_errmsg(), "multiple of -K"));
                        continue;
                    }
                    cr_assert_eq(rc, 0, "%s K=%d M=%d: %s", name, K, M, ps_errmsg());
                    cr_assert_eq(sch_schedule_validate(s), 0, "%s", ps_errmsg());
                    check_counts(s);
                    char why[256];
                    cr_assert(oracle_schedule_ok(s, why, sizeof why), "%s K=%d M=%d remat %d "
                              "deadlocks one thread per device: %s", name, K, M, r, why);
                    struct mdl_profile *p = th_uniform(s->n_stages, 3000, 7000, 1, 64, 1000, 0);
                    struct sch_partition *part;
                    struct sch_costs *c;
                    sim_engine *e;
                    cr_assert_eq(sch_partition_uniform(s->n_stages, s->n_stages, &part), 0);
                    cr_assert_eq(sch_costs_new(p, t, part, s->stage_device, 1, &c), 0);
                    cr_assert_eq(sim_simulate(s, c, t, 1, &e), 0, "%s K=%d M=%d remat %d: %s",
                                 name, K, M, r, ps_errmsg());
                    const struct trc_trace *tr = sim_engine_trace(e);
                    for (int d = 0; d < K; d++) {
                        int64_t last = 0;
                        for (size_t k = 0; k < tr->n_counters; k++)
                            if (tr->counters[k].device == d)
                                last = tr->counters[k].bytes;
                        cr_assert_eq(last, 0, "%s device %d ends holding %lld B", name, d,
                                     (long long)last);
                    }
                    runs++;
                    sim_engine_free(e);
                    sch_costs_free(c);
                    sch_partition_free(part);
                    mdl_profile_free(p);
                    sch_schedule_free(s);
                }
        mdl_topology_free(t);
    }
    cr_assert_gt(runs, 8 * 16 * 3 * 4);
}

/* 1F1B's list on stage s: w = min(K-s-1, M) forwards, then F/B alternating,
 * so at most min(K-s, M) forwards are ahead of the backwards. */
Test(schedules, one_f_one_b_order_bounds_in_flight_microbatches)
{
    for (int K = 1; K <= 8; K++)
        for (int M = 1; M <= 16; M++) {
            struct sch_schedule *s;
            cr_assert_eq(sch_schedule_1f1b(K, M, SCH_REMAT_NEVER, &s), 0);
            for (int st = 0; st < K; st++) {
                int bound = K - st < M ? K - st : M, nf = 0, nb = 0, peak = 0, before_b = -1;
                int next_f = 0, next_b = 0;
                for (int i = 0; i < s->n_ops[st]; i++) {
                    const struct sch_op *op = &s->ops[st][i];
                    if (op->kind == SCH_OP_FWD) {
                        cr_assert_eq(op->mb, next_f++);
                        nf++;
                    } else if (op->kind == SCH_OP_BWD) {
                        cr_assert_eq(op->mb, next_b++);
                        if (before_b < 0)
                            before_b = nf;
                        nb++;
                    }
                    if (nf - nb > peak)
                        peak = nf - nb;
                }
                cr_assert_eq(peak, bound, "K=%d M=%d stage %d", K, M, st);
                cr_assert_eq(before_b, bound);
            }
            sch_schedule_free(s);
        }
}

/* Uniform stages, no communication, no re-materialization: 1F1B takes
 * exactly GPipe's (M+K-1)(tf+tb) + update, to the nanosecond. */
Test(schedules, one_f_one_b_step_time_equals_gpipe)
{
    const double tfb[][2] = { { 3000, 7000 }, { 5000, 2000 }, { 1234, 4321 } };
    for (int K = 1; K <= 8; K++) {
        struct mdl_topology *t = th_chain(K, 1e9, 1e300, 0);
        for (int M = 1; M <= 16; M++)
            for (int k = 0; k < 3; k++) {
                struct mdl_profile *p = th_uniform(K, tfb[k][0], tfb[k][1], 1, 0, 0, 100);
                struct th_run g, o;
                th_simulate(&g, "gpipe", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
                th_simulate(&o, "1f1b", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
                sch_time expect = (sch_time)(M + K - 1) * (sch_time)(tfb[k][0] + tfb[k][1]) +
                                  g.c->st[0].update;
                cr_assert_gt(g.c->st[0].update, 0);
                cr_assert_eq(g.r->makespan, expect);
                cr_assert_eq(o.r->makespan, expect, "K=%d M=%d: 1f1b %lld, gpipe %lld", K, M,
                             (long long)o.r->makespan, (long long)g.r->makespan);
                cr_assert_eq(o.r->bubble, g.r->bubble);
                th_release(&g);
                th_release(&o);
                mdl_profile_free(p);
            }
        mdl_topology_free(t);
    }
}

/* Stash only (no activation buffers): the ledger adds a stage's stash at
 * F start and frees it at the end of B (W for zb-h1), and a device's
 * compute ops run one at a time in list order, so the peak is exactly the
 * list's largest number of forwards ahead of their backwards times the
 * stash. That is M for GPipe, min(K-s, M) for 1F1B, min(K, M) on every stage
 * for ZB-H1 (its W of micro-batch j waits for F of j+K-1), and on device d of
 * interleaved:v min(2(K-d-1) + (v-1)K + 1, vM) chunk stashes (the warm-up
 * forwards plus one). 1F1B saves (M - min(K-s, M)) stashes on stage s. */
Test(schedules, peak_stash_per_stage_matches_in_flight_bound)
{
    const int64_t S = 1000;
    for (int K = 1; K <= 8; K++) {
        struct mdl_topology *t = ring(K);
        for (int M = 1; M <= 16; M++) {
            struct mdl_profile *p = th_uniform(K, 3000, 7000, 1, 0, (double)S, 0);
            struct th_run g, o, z;
            th_simulate(&g, "gpipe", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            th_simulate(&o, "1f1b", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            th_simulate(&z, "zb-h1", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            for (int s = 0; s < K; s++) {
                int64_t lim = K - s < M ? K - s : M;
                cr_assert_eq(g.r->peak_act[s], M * S);
                cr_assert_eq(o.r->peak_act[s], lim * S, "K=%d M=%d stage %d: %lld", K, M, s,
                             (long long)o.r->peak_act[s]);
                cr_assert_eq(g.r->peak_act[s] - o.r->peak_act[s], (M - lim) * S);
                cr_assert_eq(z.r->peak_act[s], (K < M ? K : M) * S);
            }
            th_release(&g);
            th_release(&o);
            th_release(&z);
            mdl_profile_free(p);
            for (int v = 2; v <= 4 && M % K == 0; v++) {
                char name[32];
                snprintf(name, sizeof name, "interleaved:%d", v);
                struct mdl_profile *pv = th_uniform(v * K, 3000, 7000, 1, 0, (double)S, 0);
                struct th_run iv;
                th_simulate(&iv, name, pv, t, K, M, SCH_REMAT_NEVER, 1, 0);
                for (int d = 0; d < K; d++) {
                    int64_t n = 2 * (K - d - 1) + (v - 1) * K + 1;
                    if (n > v * M)
                        n = v * M;
                    cr_assert_eq(iv.r->peak_act[d], n * S, "%s K=%d M=%d device %d: %lld",
                                 name, K, M, d, (long long)iv.r->peak_act[d]);
                }
                th_release(&iv);
                mdl_profile_free(pv);
            }
        }
        mdl_topology_free(t);
    }
}

/* With activation buffers, walked by hand through the ledger rule
 * (sch_memory.c). Two stages chosen so that no two unrelated events on a
 * device share an instant (the peaks then do not depend on how the engine
 * orders simultaneous events): stage 0 F 1000 / B 2000 ns, stage 1 F 1700 /
 * B 2500 ns, M = 4, micro-batch 1, a = 400 B between them on a 1e9 B/s link
 * (400 ns per transfer, either way), stashes S0 = 1e5 and S1 = 2e5 B.
 *   1F1B, device 0: F1 ends at 2000 with 2 stashes and its 400 B output
 *     sending (2000-2400); later peaks repeat it (gradient RG0 at 6000).
 *                     peak 2*S0 + a
 *   1F1B, device 1: RA1's bytes land at 2400 while F0 (1400-3100) still
 *     holds its input, but a receive takes its buffer only when the
 *     device's list reaches it (after F0, which freed its input); at 5600 B0
 *     ends (+a gradient, handed to the link at once) and F1 starts.
 *                     peak S1 + a
 *   GPipe, device 0: F3 ends at 4000 with 4 stashes and its output sending.
 *                     peak 4*S0 + a
 *   GPipe, device 1: inputs arrive every 1000 ns and are consumed every
 *     1700: at 4400 it holds 2 stashes + 3 inputs, at 4800 3 + 2, at F3's
 *     start (6500) 4 stashes + 1 input.
 *                     peak 4*S1 + a   (> 3*S1 + 2a > 2*S1 + 3a)
 * So 1F1B saves 2*S0 on device 0 and 3*S1 on device 1. */
Test(schedules, peak_memory_with_buffers_hand_computed)
{
    double f[] = { 1000, 1700 }, b[] = { 2000, 2500 };
    double out[] = { 400, 99 }, stash[] = { 1e5, 2e5 };
    struct mdl_profile *p = th_profile(2, f, b, 1, out, stash, 0);
    struct mdl_topology *t = th_chain(2, 0, 1e9, 0);
    const int64_t a = 400, S0 = 100000, S1 = 200000;
    struct th_run g, o;
    th_simulate(&g, "gpipe", p, t, 2, 4, SCH_REMAT_NEVER, 1, 0);
    th_simulate(&o, "1f1b", p, t, 2, 4, SCH_REMAT_NEVER, 1, 0);
    cr_assert_eq(o.c->st[1].mem.in, a);
    cr_assert_eq(o.c->st[1].mem.out, 0);
    cr_assert_eq(o.c->st[1].fwd, 1700);
    cr_assert_eq(o.r->peak_act[0], 2 * S0 + a, "%lld", (long long)o.r->peak_act[0]);
    cr_assert_eq(o.r->peak_act[1], S1 + a, "%lld", (long long)o.r->peak_act[1]);
    cr_assert_eq(g.r->peak_act[0], 4 * S0 + a, "%lld", (long long)g.r->peak_act[0]);
    cr_assert_eq(g.r->peak_act[1], 4 * S1 + a, "%lld", (long long)g.r->peak_act[1]);
    /* the hand timeline's last backward: B0 on device 0 ends at 20600 */
    cr_assert_eq(o.r->fb_end, 20600);
    th_release(&g);
    th_release(&o);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* Re-materialization never raises a stage's peak: a recompute rebuilds the
 * stash and frees the kept input as a forward does (sch_memory.c), so a
 * re-materialized micro-batch holds at most what it would without. The
 * zero-bubble schedules hold a recomputed stash from R to the deferred W;
 * before the recompute freed its input, they held the input beside it, and
 * at K = 4, M = 8 zb-h1's stages 2 and 3 peaked higher under --remat always
 * than under never (helper-151). Uniform layers whose stash (4 A) holds
 * their input (A), no link time, every schedule the remat modes apply to. */
Test(schedules, remat_never_raises_a_stage_peak)
{
    static const char *const names[] = { "gpipe", "1f1b", "eager-1f1b", "interleaved:2",
                                          "breadth-first:2", "zb-h1", "zb-h2", "zb-v" };
    const double A = 1000;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        int v = !strcmp(names[i], "interleaved:2") || !strcmp(names[i], "breadth-first:2") ||
                !strcmp(names[i], "zb-v") ? 2 : 1;
        for (int K = 2; K <= 4; K++) {
            struct mdl_topology *t = ring(K);
            for (int M = K; M <= 3 * K; M += K) {
                struct mdl_profile *p = th_uniform(v * K, 3000, 7000, 1, A, 4 * A, 0);
                struct th_run r[3];
                const enum sch_remat modes[3] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                                  SCH_REMAT_ALWAYS };
                for (int k = 0; k < 3; k++)
                    th_simulate(&r[k], names[i], p, t, K, M, modes[k], 1, 0);
                for (int d = 0; d < K; d++)
                    for (int k = 1; k < 3; k++)
                        cr_assert_leq(r[k].r->peak_act[d], r[k - 1].r->peak_act[d],
                                      "%s K=%d M=%d device %d: %s %lld > %s %lld", names[i],
                                      K, M, d, sch_remat_name(modes[k]),
                                      (long long)r[k].r->peak_act[d],
                                      sch_remat_name(modes[k - 1]),
                                      (long long)r[k - 1].r->peak_act[d]);
                for (int k = 0; k < 3; k++)
                    th_release(&r[k]);
                mdl_profile_free(p);
            }
            mdl_topology_free(t);
        }
    }
}

/* Interleaved 1F1B on uniform chunks (each of the v*K stages one layer of
 * tf, tb; so a device's share of one micro-batch is v*(tf+tb)), no
 * communication: the forward/backward span is exactly
 *     (v*M + K - 1) * (tf + tb),
 * i.e. per-device idle (K-1)(tf+tb) = (K-1)/v of a device's per-micro-batch
 * time, against busy v*M*(tf+tb), so the bubble is (K-1)/(v*M + K-1).
 * Checked to 1e-12 for K 1..8, M = K, 2K, 3K, v 1..4 (v = 1 is 1F1B). */
Test(schedules, interleaved_bubble_formula)
{
    const double tfb[][2] = { { 3000, 7000 }, { 5000, 2000 }, { 4000, 4000 } };
    for (int K = 1; K <= 8; K++) {
        struct mdl_topology *t = ring(K);
        for (int g = 1; g <= 3; g++)
            for (int v = 1; v <= 4; v++)
                for (int k = 0; k < 3; k++) {
                    int M = g * K;
                    char name[32];
                    snprintf(name, sizeof name, "interleaved:%d", v);
                    struct mdl_profile *p = th_uniform(v * K, tfb[k][0], tfb[k][1], 1, 0, 0, 0);
                    struct th_run r;
                    th_simulate(&r, name, p, t, K, M, SCH_REMAT_NEVER, 1, 0);
                    sch_time unit = (sch_time)(tfb[k][0] + tfb[k][1]);
                    cr_assert_eq(r.r->fb_end, (sch_time)(v * M + K - 1) * unit,
                                 "%s K=%d M=%d: %lld", name, K, M, (long long)r.r->fb_end);
                    double want = (double)(K - 1) / (v * M + K - 1);
                    cr_assert(fabs(r.r->bubble - want) < 1e-12, "%s K=%d M=%d: %.15f vs %.15f",
                              name, K, M, r.r->bubble, want);
                    for (int d = 0; d < K; d++)
                        cr_assert_eq(r.r->busy[d], (sch_time)(v * M) * unit);
                    th_release(&r);
                    mdl_profile_free(p);
                }
        mdl_topology_free(t);
    }
}

/* ZB-H1 on uniform stages, no communication, M >= K: with B = floor(tb/2)
 * the input-gradient half and W the rest, the forward/backward span is
 *     M*(tf+tb) + (K-1)*max(tf, B).
 * It is also a lower bound for any schedule with 1F1B's warm-up, so the
 * lists reach it: the last stage cannot start before (K-1)*tf and has
 * M*(tf+tb) of work; stage 0 has only its K forwards to run before B(0)'s
 * gradient returns at K*tf + (K-1)*B. (The ZB paper's (K-1)(tf+B-W) is the
 * case tf >= B = W.) 1F1B's idle is (K-1)(tf+tb), strictly more. */
Test(schedules, zb_h1_bubble_formula_and_beats_1f1b)
{
    const double tfb[][2] = { { 3000, 7000 }, { 5000, 2000 }, { 1000, 4000 }, { 3501, 7001 },
                              { 2000, 4000 } };
    for (int K = 1; K <= 8; K++) {
        struct mdl_topology *t = th_chain(K, 0, 1e300, 0);
        for (int M = K; M <= 16; M++)
            for (int k = 0; k < 5; k++) {
                struct mdl_profile *p = th_uniform(K, tfb[k][0], tfb[k][1], 1, 0, 0, 0);
                struct th_run z, o;
                th_simulate(&z, "zb-h1", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
                th_simulate(&o, "1f1b", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
                sch_time tf = z.c->st[0].fwd, tb = z.c->st[0].bwd, bi = z.c->st[0].bwd_input;
                cr_assert_eq(bi, tb / 2);
                cr_assert_eq(z.c->st[0].bwd_weight, tb - tb / 2);
                sch_time span = (sch_time)M * (tf + tb) + (K - 1) * (tf > bi ? tf : bi);
                cr_assert_eq(z.r->fb_end, span, "K=%d M=%d tf=%lld tb=%lld: %lld vs %lld", K,
                             M, (long long)tf, (long long)tb, (long long)z.r->fb_end,
                             (long long)span);
                double want = 1.0 - (double)(M * (tf + tb)) / (double)span;
                cr_assert(fabs(z.r->bubble - want) < 1e-12);
                if (K > 1)
                    cr_assert_lt(z.r->bubble, o.r->bubble);
                else
                    cr_assert_eq(z.r->fb_end, o.r->fb_end);
                th_release(&z);
                th_release(&o);
                mdl_profile_free(p);
            }
        mdl_topology_free(t);
    }
}

/* For M < K the ZB-H1 bubble is not the closed form above, but it stays
 * below 1F1B's on every grid point. */
Test(schedules, zb_h1_beats_1f1b_with_few_microbatches)
{
    for (int K = 2; K <= 8; K++) {
        struct mdl_topology *t = th_chain(K, 0, 1e300, 0);
        struct mdl_profile *p = th_uniform(K, 3000, 7000, 1, 0, 0, 0);
        for (int M = 1; M < K; M++) {
            struct th_run z, o;
            th_simulate(&z, "zb-h1", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            th_simulate(&o, "1f1b", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            cr_assert_lt(z.r->bubble, o.r->bubble, "K=%d M=%d", K, M);
            th_release(&z);
            th_release(&o);
        }
        mdl_profile_free(p);
        mdl_topology_free(t);
    }
}

Test(schedules, interleaved_1_is_1f1b_op_for_op)
{
    for (int K = 1; K <= 6; K++)
        for (int M = 1; M <= 9; M++)
            for (int r = 0; r < 3; r++) {
                struct sch_schedule *a, *b;
                cr_assert_eq(sch_schedule_build("1f1b", K, M, (enum sch_remat)r, &a), 0);
                cr_assert_eq(sch_schedule_build("interleaved:1", K, M, (enum sch_remat)r, &b), 0);
                cr_assert_str_eq(b->name, "interleaved:1");
                cr_assert_eq(a->n_stages, b->n_stages);
                for (int d = 0; d < K; d++) {
                    cr_assert_eq(a->n_ops[d], b->n_ops[d]);
                    for (int i = 0; i < a->n_ops[d]; i++) {
                        cr_assert_eq(a->ops[d][i].kind, b->ops[d][i].kind);
                        cr_assert_eq(a->ops[d][i].stage, b->ops[d][i].stage);
                        cr_assert_eq(a->ops[d][i].mb, b->ops[d][i].mb);
                    }
                }
                sch_schedule_free(a);
                sch_schedule_free(b);
            }
}

/* Megatron's order on K = 2, v = 2, M = 2: device d holds stages d and d+2;
 * warm-up 2(K-d-1) + (v-1)K forwards (4, capped at vM = 4, on device 0; 2
 * on device 1), then F and B alternating; backwards go through the chunks in
 * reverse. */
Test(schedules, interleaved_follows_megatron_order)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("interleaved:2", 2, 2, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(s->n_stages, 4);
    for (int st = 0; st < 4; st++)
        cr_assert_eq(s->stage_device[st], st % 2);
    static const char *want[2] = { "F0:0 F1:0 F0:2 F1:2 B0:2 B1:2 B0:0 B1:0",
                                   "F0:1 F1:1 F0:3 B0:3 F1:3 B1:3 B0:1 B1:1" };
    for (int d = 0; d < 2; d++) {
        char got[256] = "";
        for (int i = 0; i < s->n_ops[d]; i++) {
            const struct sch_op *op = &s->ops[d][i];
            if (op->kind == SCH_OP_FWD || op->kind == SCH_OP_BWD)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s%d:%d",
                         *got ? " " : "", op->kind == SCH_OP_FWD ? "F" : "B", op->mb,
                         op->stage);
        }
        cr_assert_str_eq(got, want[d]);
    }
    sch_schedule_free(s);
}

/* ZB-H1 on K = 3, M = 4, stage 1: one warm-up F, then F B pairs with W of
 * micro-batch j after the F of j+K-1, the rest of the W's at the end. */
Test(schedules, zb_h1_defers_weight_gradients)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("zb-h1", 3, 4, SCH_REMAT_NEVER, &s), 0);
    cr_assert(s->has_wgrad);
    static const char *want[3] = { "F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3",
                                   "F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3",
                                   "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3" };
    for (int d = 0; d < 3; d++) {
        char got[256] = "";
        for (int i = 0; i < s->n_ops[d]; i++) {
            const struct sch_op *op = &s->ops[d][i];
            if (op->kind == SCH_OP_FWD || op->kind == SCH_OP_BWD || op->kind == SCH_OP_WGRAD) {
                char lab[16];
                sch_op_label(op, lab, sizeof lab);
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", *got ? " " : "",
                         lab);
            }
        }
        cr_assert_str_eq(got, want[d], "stage %d: %s", d, got);
    }
    sch_schedule_free(s);
}

/* Re-materialization applies to every schedule: R comes right before the
 * gradient receive (or B) of its micro-batch. */
Test(schedules, recompute_right_before_its_backward)
{
    const char *names[] = { "1f1b", "zb-h1", "interleaved:2" };
    for (int i = 0; i < 3; i++) {
        struct sch_schedule *s;
        cr_assert_eq(sch_schedule_build(names[i], 4, 8, SCH_REMAT_ALWAYS, &s), 0);
        int nr = 0;
        for (int d = 0; d < 4; d++)
            for (int k = 0; k < s->n_ops[d]; k++) {
                const struct sch_op *op = &s->ops[d][k];
                if (op->kind != SCH_OP_RECOMP)
                    continue;
                nr++;
                const struct sch_op *nx = &s->ops[d][k + 1];
                if (nx->kind == SCH_OP_RECV_GRAD)
                    nx++;
                cr_assert_eq(nx->kind, SCH_OP_BWD);
                cr_assert_eq(nx->stage, op->stage);
                cr_assert_eq(nx->mb, op->mb);
            }
        cr_assert_eq(nr, s->n_stages * 8);
        sch_schedule_free(s);
    }
}

Test(schedules, bad_names_and_parameters)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("1f1b:2", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "takes no parameter"));
    cr_assert_eq(sch_schedule_build("zb-h1:1", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_build("interleaved", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "interleaved:2"));
    cr_assert_eq(sch_schedule_build("interleaved:0", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_build("interleaved:two", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "not an integer"));
    cr_assert_eq(sch_schedule_build("interleaved:2", 4, 6, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "-M 6 must be a multiple of -K 4"), "%s", ps_errmsg());
    cr_assert_null(s);
    cr_assert_eq(sch_schedule_build("1f1b", 0, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_build("zb-h1", 2, 0, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_build("interleaved:2", 4, 8, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(s->n_stages, 8);
    cr_assert_str_eq(s->name, "interleaved:2");
    sch_schedule_free(s);
}

/* On a chain without the wrap-around link, interleaving has no way from the
 * last device back to the first: a clear error, not a crash. */
Test(schedules, interleaved_needs_a_link_back_to_device_0)
{
    struct mdl_topology *t = th_chain(4, 0, 1e9, 0);
    struct mdl_profile *p = th_uniform(8, 1000, 2000, 1, 8, 0, 0);
    struct sch_schedule *s;
    struct sch_partition *part;
    struct sch_costs *c;
    sim_engine *e;
    cr_assert_eq(sch_schedule_build("interleaved:2", 4, 4, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(sch_partition_uniform(8, 8, &part), 0);
    cr_assert_eq(sch_costs_new(p, t, part, s->stage_device, 1, &c), 0);
    cr_assert_eq(sim_simulate(s, c, t, 0, &e), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "no link between dev3 and dev0"), "%s", ps_errmsg());
    sch_costs_free(c);
    sch_partition_free(part);
    sch_schedule_free(s);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* A gradient receive listed before the forward that leads to it: the
 * engine's separate receive stream would still finish the step, but one
 * thread per device waits forever, so validation rejects the list. */
Test(schedules, lists_that_deadlock_one_thread_per_device_are_invalid)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_gpipe(2, 1, SCH_REMAT_NEVER, &s), 0);
    /* device 0: F0 sendF0 recvB0 B0 U  ->  recvB0 F0 sendF0 B0 U */
    cr_assert_eq(s->ops[0][2].kind, SCH_OP_RECV_GRAD);
    struct sch_op rg = s->ops[0][2];
    s->ops[0][2] = s->ops[0][1];
    s->ops[0][1] = s->ops[0][0];
    s->ops[0][0] = rg;
    cr_assert(!oracle_schedule_ok(s, NULL, 0));
    cr_assert_eq(sch_schedule_validate(s), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "deadlocks one in-order thread per device: device 0 waits "
                     "forever at recvB0"), "%s", ps_errmsg());
    sch_schedule_free(s);
}

/* At most SCH_STAGES_MAX stages (a generator's per-device passes over the
 * stages are quadratic: 200 000 took a minute); the size estimate says so
 * without building, and is linear (65 536 stages at once). */
Test(schedules, at_most_65536_stages)
{
    struct sch_schedule *s = (void *)1;
    cr_assert_eq(sch_schedule_build("1f1b", SCH_STAGES_MAX + 1, 1, SCH_REMAT_NEVER, &s),
                 -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "1f1b: 65537 stages is too many (at most 65536)"), "%s",
              ps_errmsg());
    cr_assert_eq(sch_schedule_build("gpipe", SCH_STAGES_MAX + 1, 1, SCH_REMAT_NEVER, &s),
                 -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "-K 65537 is too many stages (at most 65536)"), "%s",
              ps_errmsg());
    cr_assert_eq(sch_schedule_build("zb-v", SCH_STAGES_MAX / 2 + 1, 2, SCH_REMAT_NEVER, &s),
                 -PS_EINVAL, "zb-v has 2K stages");
    struct sch_mem_sched est;
    cr_assert_eq(sch_mem_sched_estimate("1f1b", SCH_STAGES_MAX + 1, 1, SCH_REMAT_NEVER, 1,
                                        &est), 1);
    cr_assert_eq(sch_mem_sched_estimate("zb-v", SCH_STAGES_MAX / 2, 2, SCH_REMAT_NEVER, 1, &est),
                 0);
    cr_assert_eq(est.n_stages, SCH_STAGES_MAX);
    /* every device holds two stages, 3 ops per micro-batch each (F, B, W),
     * their boundary sends and receives, and an update */
    cr_assert_gt(est.n_ops, (int64_t)SCH_STAGES_MAX * 2 * 3);
}
