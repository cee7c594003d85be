/* The schedules of issue 17 (zb-h2, zb-v, zb-auto, eager-1f1b,
 * breadth-first:v): valid lists on a grid, their size estimates, exact
 * steps on uniform stages, memory peaks by hand, the automatic scheduler
 * against ZB-H1 and against exhaustive search, and the CPU runtime's
 * reference gradients under every one of them. */
#include "helpers.h"
#include "rt_check.h"
#include "sched/sch_schedsize.h"
#include "oracle_sched.h"
#include "sched/sch_zb.h"

#include <gsl/gsl_rng.h>

TestSuite(new_schedules, .timeout = 240);

static const char *const names[] = {
    "zb-h2", "zb-v", "zb-auto", "eager-1f1b", "breadth-first", "breadth-first:2",
    "breadth-first:3",
};
#define N_NAMES (int)(sizeof names / sizeof *names)

/* Field by field (struct sch_op has padding). */
static void same_lists(const struct sch_schedule *a, const struct sch_schedule *b)
{
    cr_assert_eq(a->n_devices, b->n_devices);
    for (int d = 0; d < a->n_devices; d++) {
        cr_assert_eq(a->n_ops[d], b->n_ops[d]);
        for (int i = 0; i < a->n_ops[d]; i++) {
            const struct sch_op *x = &a->ops[d][i], *y = &b->ops[d][i];
            cr_assert(x->kind == y->kind && x->stage == y->stage && x->mb == y->mb,
                      "%s vs %s: device %d op %d", a->name, b->name, d, i);
        }
    }
}

Test(new_schedules, every_list_valid_and_sized_on_a_grid)
{
    for (int i = 0; i < N_NAMES; i++)
        for (int K = 1; K <= 8; K++)
            for (int M = 1; M <= 16; M++)
                for (int r = 0; r < 3; r++) {
                    struct sch_schedule *s, *t;
                    enum sch_remat rm = (enum sch_remat)r;
                    cr_assert_eq(sch_schedule_build(names[i], K, M, rm, &s), 0, "%s K=%d M=%d: %s",
                                 names[i], K, M, ps_errmsg());
                    cr_assert_eq(sch_schedule_validate(s), 0, "%s K=%d M=%d remat=%d: %s",
                                 names[i], K, M, r, ps_errmsg());
                    struct sch_mem_sched e;
                    cr_assert_eq(sch_mem_sched_estimate(names[i], K, M, rm, 1, &e), 0);
                    cr_assert_eq(e.n_stages, s->n_stages);
                    cr_assert_eq(e.n_ops, sch_schedule_total_ops(s), "%s K=%d M=%d", names[i],
                                 K, M);
                    /* deterministic: a second build is the same list */
                    cr_assert_eq(sch_schedule_build(names[i], K, M, rm, &t), 0);
                    same_lists(s, t);
                    sch_schedule_free(s);
                    sch_schedule_free(t);
                }
}

Test(new_schedules, zb_auto_limits_valid)
{
    for (int K = 1; K <= 6; K++)
        for (int M = 1; M <= 12; M++)
            for (int L = 1; L <= 2 * K + 1; L++) {
                char name[32];
                snprintf(name, sizeof name, "zb-auto:%d", L);
                struct sch_schedule *s;
                cr_assert_eq(sch_schedule_build(name, K, M, SCH_REMAT_NEVER, &s), 0,
                             "%s K=%d M=%d: %s", name, K, M, ps_errmsg());
                cr_assert_eq(sch_schedule_validate(s), 0, "%s", ps_errmsg());
                cr_assert_leq(sch_zb_peak_stashes(s), L, "%s K=%d M=%d", name, K, M);
                sch_schedule_free(s);
            }
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("zb-auto:0", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_build("zb-h2:1", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_build("zb-v:1", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_build("eager-1f1b:1", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_build("breadth-first:0", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    /* an argument written as the name writes it, or two spellings would be two
     * schedules in a list or a database */
    static const char *const spelt[] = { "interleaved:02", "interleaved:+2", "interleaved: 2",
                                         "breadth-first:02", "zb-auto:03" };
    for (size_t i = 0; i < sizeof spelt / sizeof *spelt; i++) {
        cr_expect_eq(sch_schedule_build(spelt[i], 2, 4, SCH_REMAT_NEVER, &s), -PS_EUSAGE,
                     "%s", spelt[i]);
        cr_expect(strstr(ps_errmsg(), "write '"), "%s: %s", spelt[i], ps_errmsg());
    }
    cr_assert_eq(sch_schedule_build("interleaved:2", 2, 4, SCH_REMAT_NEVER, &s), 0);
    sch_schedule_free(s);
}

/* Looping with one chunk per device is GPipe's fill-drain, op for op. */
Test(new_schedules, breadth_first_1_is_gpipe)
{
    for (int K = 1; K <= 6; K++)
        for (int M = 1; M <= 8; M++) {
            struct sch_schedule *a, *b;
            cr_assert_eq(sch_schedule_build("breadth-first:1", K, M, SCH_REMAT_EXCEPT_LAST, &a), 0);
            cr_assert_eq(sch_schedule_build("gpipe", K, M, SCH_REMAT_EXCEPT_LAST, &b), 0);
            same_lists(a, b);
            sch_schedule_free(a);
            sch_schedule_free(b);
        }
}

/* Two spellings of one schedule (a list names each once): only a fixed
 * default counts; zb-auto's L defaults to K, so zb-auto:2 is not zb-auto. */
Test(new_schedules, same_schedule_spellings)
{
    cr_expect_eq(sch_schedule_same("gpipe", "gpipe"), 1);
    cr_expect_eq(sch_schedule_same("breadth-first", "breadth-first:1"), 1);
    cr_expect_eq(sch_schedule_same("breadth-first:1", "breadth-first"), 1);
    cr_expect_eq(sch_schedule_same("breadth-first:2", "breadth-first"), 0);
    cr_expect_eq(sch_schedule_same("breadth-first:2", "breadth-first:2"), 1);
    cr_expect_eq(sch_schedule_same("zb-auto", "zb-auto:2"), 0);
    cr_expect_eq(sch_schedule_same("interleaved:2", "interleaved:3"), 0);
    /* a generator's case that builds another schedule's op lists, op for op */
    cr_expect_eq(sch_schedule_same("breadth-first", "gpipe"), 1);
    cr_expect_eq(sch_schedule_same("gpipe", "breadth-first:1"), 1);
    cr_expect_eq(sch_schedule_same("interleaved:1", "1f1b"), 1);
    cr_expect_eq(sch_schedule_same("interleaved:2", "1f1b"), 0);
    cr_expect_eq(sch_schedule_same("breadth-first:2", "gpipe"), 0);
    cr_expect_eq(sch_schedule_same("nope", "nope:1"), 0);
}

/* Uniform stages, T_F = T_B = T_W = T (a profile backward of 2T split in
 * half), ideal links (no communication time), M >= K.
 *
 * ZB-H2: step = (3M + K - 1) T. Lower bound: the last stage's first F
 * cannot start before the K-1 forwards ahead of it, (K-1) T, and it has
 * 3M T of its own work. Reached: stage s's 2(K-1-s)+1 warm-up forwards end
 * at s + 2(K-1-s) + 1 = 2K-1-s slots, exactly when B(0) has come back down
 * through the K-1-s later stages (last stage: F0 at K-1, B0 at K, one slot
 * per stage back); from then on every stage alternates B and F with F
 * inputs 2 slots ahead (its upstream runs the same pattern one slot
 * earlier), and the W's held back (2K stashes) fill exactly the slots in
 * which the tail's gradients travel back, so no stage idles after its
 * first op and the last stage ends at (K-1) + 3M.
 *
 * Breadth-first:v with vK one-layer stages (chunk F = T, B = 2T): each
 * device runs its vM forwards back to back (device 0's chunk c+1 input from
 * device K-1 is ready after K slots, and M >= K forwards of chunk c come
 * first), so the forwards end on device K-1 at (vM + K - 1) T; the backward
 * mirrors it at twice the cost: step = 3 (vM + K - 1) T, GPipe's
 * (M + K - 1)(T_F + T_B) with the fill divided by v.
 *
 * Eager 1F1B without communication: the extra warm-up forward only moves a
 * forward earlier into a slot 1F1B leaves idle, so the step is 1F1B's
 * (M + K - 1)(T_F + T_B); it pays off when sends take time. */
Test(new_schedules, closed_forms_on_uniform_stages)
{
    const sch_time T = 1000;
    for (int K = 1; K <= 6; K++) {
        struct mdl_topology *t = th_chain(K, 0, 1e300, 0);
        for (int M = K; M <= 14; M++) {
            struct mdl_profile *p = th_uniform(K, (double)T, 2.0 * T, 1, 0, 0, 0);
            struct th_run z, e, o;
            th_simulate(&z, "zb-h2", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            cr_assert_eq(z.c->st[0].fwd, T);
            cr_assert_eq(z.c->st[0].bwd_input, T);
            cr_assert_eq(z.c->st[0].bwd_weight, T);
            cr_assert_eq(z.r->fb_end, (3 * M + K - 1) * T, "zb-h2 K=%d M=%d: %lld", K, M,
                         (long long)z.r->fb_end);
            th_simulate(&e, "eager-1f1b", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            th_simulate(&o, "1f1b", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            cr_assert_eq(e.r->fb_end, (M + K - 1) * 3 * T, "eager K=%d M=%d", K, M);
            cr_assert_eq(o.r->fb_end, e.r->fb_end);
            th_release(&z);
            th_release(&e);
            th_release(&o);
            mdl_profile_free(p);
        }
        mdl_topology_free(t);
    }
    for (int K = 1; K <= 4; K++) {
        struct mdl_topology *t = th_chain(K, 0, 1e300, 0);
        if (K > 2) { /* the loop from device K-1 back to device 0 */
            t->links = realloc(t->links, (size_t)(t->n_links + 1) * sizeof *t->links);
            cr_assert(t->links);
            struct mdl_link *l = &t->links[t->n_links++];
            memset(l, 0, sizeof *l);
            snprintf(l->name, sizeof l->name, "wrap");
            l->bandwidth = 1e300;
            l->n_ends = 2;
            l->ends = malloc(2 * sizeof *l->ends);
            cr_assert(l->ends);
            l->ends[0] = K - 1;
            l->ends[1] = 0;
        }
        for (int v = 1; v <= 3; v++)
            for (int M = K; M <= 10; M++) {
                struct mdl_profile *p = th_uniform(v * K, (double)T, 2.0 * T, 1, 0, 0, 0);
                char name[32];
                snprintf(name, sizeof name, "breadth-first:%d", v);
                struct th_run b;
                th_simulate(&b, name, p, t, K, M, SCH_REMAT_NEVER, 1, 0);
                cr_assert_eq(b.r->fb_end, 3 * (v * M + K - 1) * T, "%s K=%d M=%d: %lld", name,
                             K, M, (long long)b.r->fb_end);
                th_release(&b);
                mdl_profile_free(p);
            }
        mdl_topology_free(t);
    }
}

/* ZB-V: 2K one-layer chunks, every chunk op T (profile backward 2T split in
 * half), ideal links. Lower bound (6M + K - 1) T: device K-1's first op, F
 * of stage K-1, waits for K-1 forwards, and it has 6M ops. For M >= K the
 * paper's hand-built order (sched/sch_zbv.c) meets it exactly, so any idle
 * slot on device K-1 (a bubble) fails the equality. It beats 1F1B on the
 * same model (two layers per stage: (M + K - 1) 6T) for K >= 2.
 * For M < K the bound is out of reach: device 0 cannot start the loss stage
 * before (2K - 1) T and has 5M ops from there, so the step is at least
 * (5M + 2K - 1) T, and at least (M + 4K) T (the last micro-batch's F on
 * stage 0 waits for M - 1 others, then it passes 2K stages forward and 2K
 * back, and its W follows); the order takes max(4K + 2M - 1, 3K + 4M - 1) T
 * (measured, sched/sch_zbv.c). */
Test(new_schedules, zb_v_closed_form_and_beats_1f1b)
{
    const sch_time T = 1000;
    for (int K = 1; K <= 8; K++) {
        struct mdl_topology *t = th_chain(K, 0, 1e300, 0);
        struct mdl_profile *p = th_uniform(2 * K, (double)T, 2.0 * T, 1, 0, 0, 0);
        int Ms[64], n = 0;
        for (int M = 1; M <= 3 * K; M++)
            Ms[n++] = M;
        Ms[n++] = 4 * K + 1;
        Ms[n++] = 5 * K + 3;
        Ms[n++] = 40;
        for (int i = 0; i < n; i++) {
            int M = Ms[i];
            struct th_run z, o;
            th_simulate(&z, "zb-v", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            cr_assert_eq(z.c->st[0].fwd, T);
            cr_assert_eq(z.c->st[0].bwd_input, T);
            cr_assert_eq(z.c->st[0].bwd_weight, T);
            /* the compute-only replay that places the W's agrees */
            cr_assert_eq(sch_zb_list_time(z.s, NULL, NULL, NULL) * T, z.r->fb_end);
            sch_time lb = (6 * M + K - 1) * T;
            if (M >= K) {
                cr_assert_eq(z.r->fb_end, lb, "zb-v K=%d M=%d: %lld vs %lld", K, M,
                             (long long)z.r->fb_end, (long long)lb);
                th_simulate(&o, "1f1b", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
                cr_assert_eq(o.r->fb_end, (M + K - 1) * 6 * T);
                if (K > 1)
                    cr_assert_lt(z.r->fb_end, o.r->fb_end);
                th_release(&o);
            } else {
                sch_time a = 4 * K + 2 * M - 1, b = 3 * K + 4 * M - 1;
                cr_assert_gt(z.r->fb_end, lb, "K=%d M=%d", K, M);
                cr_assert_geq(z.r->fb_end, (5 * M + 2 * K - 1) * T);
                cr_assert_geq(z.r->fb_end, (M + 4 * K) * T);
                cr_assert_eq(z.r->fb_end, (a > b ? a : b) * T, "zb-v K=%d M=%d: %lld", K, M,
                             (long long)z.r->fb_end);
            }
            th_release(&z);
        }
        mdl_profile_free(p);
        mdl_topology_free(t);
    }
}

/* The order of sched/sch_zbv.c worked by hand from its header for K = 2,
 * M = 3 (n = max(M, 2K-1) = 3, nothing dropped): device 0 (stages 0, 3)
 * runs F0 x3, F3 B3 x2, then B0 F3 B3, then B0 x2; device 1 (stages 1, 2)
 * F1, F2 F1, F2 B2, F1 B1 F2 B2, B1 B2, B1. Replayed in unit slots, at most
 * 2K = 4 stashes (F issued, W not ended), a W first once K = 2 B's await
 * theirs: device 0's F3.1 (slot 5) and device 1's F1.2 (slot 6) and F2.2
 * (slot 9) wait for a W to free a stash; device 0 fills its waits for B1.0
 * (slot 8), F2.2 (10) and B1.2 (15) with W's and idles at slot 16; two
 * pending W's put W2.1 (13), W3.2 (14) and W1.1 (15) before the next B.
 * Step 19 slots = 6M + K - 1, both devices at 4 stashes. */
Test(new_schedules, zb_v_lists_by_hand)
{
    static const char *const want[2] = {
        "F0.0 F0.1 F0.2 F3.0 B3.0 W3.0 F3.1 B3.1 W3.1 B0.0 W0.0 F3.2 B3.2 B0.1 W3.2 W0.1 "
        "B0.2 W0.2",
        "F1.0 F2.0 F1.1 F2.1 B2.0 W2.0 F1.2 B1.0 W1.0 F2.2 B2.1 B1.1 W2.1 B2.2 W1.1 B1.2 "
        "W2.2 W1.2",
    };
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("zb-v", 2, 3, SCH_REMAT_NEVER, &s), 0);
    for (int d = 0; d < 2; d++) {
        char got[512] = "";
        for (int i = 0; i < s->n_ops[d]; i++) {
            const struct sch_op *op = &s->ops[d][i];
            if (op->kind != SCH_OP_FWD && op->kind != SCH_OP_BWD && op->kind != SCH_OP_WGRAD)
                continue;
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%c%d.%d", *got ? " " : "",
                     "FB?W"[op->kind], op->stage, op->mb);
        }
        cr_assert_str_eq(got, want[d], "device %d", d);
    }
    cr_assert_eq(sch_zb_list_time(s, NULL, NULL, NULL), 19);
    cr_assert_eq(sch_zb_peak_stashes(s), 4);
    sch_schedule_free(s);
}

/* Stash only (S bytes per layer and sample, no buffers): the ledger holds a
 * stage's stash from F's start to the end of its backward's last op (W when
 * split), and compute runs in list order, so a device's peak is its most
 * forwards ahead of their last backward op, times the stash:
 *   zb-h2        min(2K, M) on every stage (W of j waits for F of j+2K-1);
 *   eager-1f1b   min(K-s+1, M) on stage s (1F1B's min(K-s, M), plus one);
 *   breadth-f:v  v M chunk stashes on every device (all forwards first);
 *   zb-v         min(2K, 2M) chunk stashes on every device (K micro-batches
 *                of two chunks, 1F1B's stage-0 figure, once M >= K: the
 *                source's warm-up issues 2K forwards before its first W;
 *                below, every forward comes before the first W). */
Test(new_schedules, memory_peaks_by_hand)
{
    const int64_t S = 1000;
    for (int K = 1; K <= 6; K++) {
        struct mdl_topology *t = th_chain(K, 0, 1e300, 0);
        for (int M = 1; M <= 12; M++) {
            struct mdl_profile *p1 = th_uniform(K, 3000, 6000, 1, 0, (double)S, 0);
            struct mdl_profile *p2 = th_uniform(2 * K, 3000, 6000, 1, 0, (double)S, 0);
            struct th_run h, e, b, v;
            th_simulate(&h, "zb-h2", p1, t, K, M, SCH_REMAT_NEVER, 1, 0);
            th_simulate(&e, "eager-1f1b", p1, t, K, M, SCH_REMAT_NEVER, 1, 0);
            th_simulate(&v, "zb-v", p2, t, K, M, SCH_REMAT_NEVER, 1, 0);
            for (int d = 0; d < K; d++) {
                int64_t zh = 2 * K < M ? 2 * K : M, eg = K - d + 1 < M ? K - d + 1 : M;
                int64_t zv = K < M ? 2 * K : 2 * M;
                cr_assert_eq(h.r->peak_act[d], zh * S, "zb-h2 K=%d M=%d dev %d: %lld", K, M, d,
                             (long long)h.r->peak_act[d]);
                cr_assert_eq(e.r->peak_act[d], eg * S, "eager K=%d M=%d dev %d", K, M, d);
                cr_assert_eq(v.r->peak_act[d], zv * S, "zb-v K=%d M=%d dev %d: %lld", K, M, d,
                             (long long)v.r->peak_act[d]);
            }
            th_release(&h);
            th_release(&e);
            th_release(&v);
            for (int vv = 1; vv <= (K <= 2 ? 2 : 1); vv++) { /* v = 2 loops: chain only */
                th_simulate(&b, vv == 1 ? "breadth-first:1" : "breadth-first:2",
                            vv == 1 ? p1 : p2, t, K, M, SCH_REMAT_NEVER, 1, 0);
                for (int d = 0; d < K; d++)
                    cr_assert_eq(b.r->peak_act[d], vv * M * S, "bf:%d K=%d M=%d", vv, K, M);
                th_release(&b);
            }
            mdl_profile_free(p1);
            mdl_profile_free(p2);
        }
        mdl_topology_free(t);
    }
}

/* zb-auto at ZB-H1's memory (L = K) is never slower than ZB-H1, on its own
 * compute-only replay with unit costs, with skewed per-stage costs, and on
 * the engine with T_F = T_B = T_W; and never holds more than L stashes. */
Test(new_schedules, zb_auto_never_slower_than_zb_h1)
{
    const sch_time T = 1000;
    for (int K = 1; K <= 6; K++) {
        struct mdl_topology *t = th_chain(K, 0, 1e300, 0);
        struct mdl_profile *p = th_uniform(K, (double)T, 2.0 * T, 1, 0, 0, 0);
        sch_time cf[6], cb[6], cw[6];
        for (int st = 0; st < K; st++) { /* a slow middle, a cheap W at the end */
            cf[st] = 2 + (st == K / 2);
            cb[st] = 3 + (st == K / 2);
            cw[st] = st == K - 1 ? 1 : 2;
        }
        for (int M = 1; M <= 12; M++) {
            struct th_run a, h;
            th_simulate(&a, "zb-auto", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            th_simulate(&h, "zb-h1", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
            cr_assert_leq(a.r->fb_end, h.r->fb_end, "K=%d M=%d", K, M);
            cr_assert_leq(sch_zb_peak_stashes(a.s), K);
            cr_assert_leq(sch_zb_list_time(a.s, NULL, NULL, NULL),
                          sch_zb_list_time(h.s, NULL, NULL, NULL));
            th_release(&a);
            th_release(&h);
            struct sch_schedule *z, *h1;
            cr_assert_eq(sch_schedule_zbauto(K, M, cf, cb, cw, K, SCH_REMAT_NEVER, &z), 0);
            cr_assert_eq(sch_schedule_zbh1(K, M, SCH_REMAT_NEVER, &h1), 0);
            cr_assert_eq(sch_schedule_validate(z), 0, "%s", ps_errmsg());
            cr_assert_leq(sch_zb_peak_stashes(z), K);
            cr_assert_leq(sch_zb_list_time(z, cf, cb, cw), sch_zb_list_time(h1, cf, cb, cw));
            sch_schedule_free(z);
            sch_schedule_free(h1);
        }
        mdl_profile_free(p);
        mdl_topology_free(t);
    }
}

/* Exhaustive search on tiny cases: every per-device order of F, B, W (one
 * stage per device, F(m) < B(m) < W(m) on the device, at most L stashes),
 * replayed with unit costs and no communication; the best step against
 * zb-auto:L's. Written from the definition: its own replay, not
 * sch_zb_list_time. */
#define EX_MAXK 3
#define EX_MAXOPS 9 /* 3 M, M <= 3 */
#define EX_GAP 0 /* measured on the cases below: zb-auto finds the optimum */
struct ex {
    int K, M, L, n;
    int seq[EX_MAXK][EX_MAXOPS]; /* kind * M + mb, kind 0 F, 1 B, 2 W */
    long best, evaluated;
    int costed;                  /* 0: unit costs, no hand-offs; 1: the arrays */
    long f[EX_MAXK], b[EX_MAXK], w[EX_MAXK], act[EX_MAXK], grad[EX_MAXK];
};

static long ex_replay(const struct ex *x)
{
    long endf[EX_MAXK][3], endb[EX_MAXK][3], t[EX_MAXK] = { 0 };
    int pc[EX_MAXK] = { 0 };
    for (int s = 0; s < x->K; s++)
        for (int m = 0; m < x->M; m++)
            endf[s][m] = endb[s][m] = -1;
    for (int progress = 1; progress;) {
        progress = 0;
        for (int s = 0; s < x->K; s++)
            for (; pc[s] < x->n; pc[s]++, progress = 1) {
                int k = x->seq[s][pc[s]] / x->M, m = x->seq[s][pc[s]] % x->M;
                long dep = k == 0 ? (s ? endf[s - 1][m] : 0)
                         : k == 1 ? (s + 1 < x->K ? endb[s + 1][m] : 0)
                                  : endb[s][m];
                if (dep < 0)
                    break;
                if (x->costed && k == 0 && s > 0)
                    dep += x->act[s - 1];
                if (x->costed && k == 1 && s + 1 < x->K)
                    dep += x->grad[s];
                if (k == 1 && endf[s][m] > dep) /* costed F may end after the gradient */
                    dep = endf[s][m];
                long c = !x->costed ? 1 : k == 0 ? x->f[s] : k == 1 ? x->b[s] : x->w[s];
                long at = (t[s] > dep ? t[s] : dep) + c;
                t[s] = at;
                if (k == 0)
                    endf[s][m] = at;
                else if (k == 1)
                    endb[s][m] = at;
            }
    }
    long span = 0;
    for (int s = 0; s < x->K; s++) {
        if (pc[s] < x->n)
            return -1; /* deadlock */
        span = t[s] > span ? t[s] : span;
    }
    return span;
}

/* Device s's orders, position i on: next[m] is micro-batch m's next kind. */
static void ex_search(struct ex *x, int s, int i, int *next, int held)
{
    if (i == x->n) {
        if (s + 1 < x->K) {
            int nx[3] = { 0, 0, 0 };
            ex_search(x, s + 1, 0, nx, 0);
            return;
        }
        long span = ex_replay(x);
        x->evaluated++;
        if (span > 0 && (x->best < 0 || span < x->best))
            x->best = span;
        return;
    }
    for (int m = 0; m < x->M; m++) {
        int k = next[m];
        if (k > 2 || (k == 0 && held >= x->L))
            continue;
        x->seq[s][i] = k * x->M + m;
        next[m]++;
        ex_search(x, s, i + 1, next, held + (k == 0) - (k == 2));
        next[m]--;
    }
}

Test(new_schedules, zb_auto_against_exhaustive_search)
{
    static const int cases[][3] = { /* K, M, L */
        { 2, 2, 1 }, { 2, 2, 2 }, { 2, 3, 2 }, { 3, 2, 2 }, { 3, 2, 3 }, { 2, 3, 3 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        struct ex x = { .K = cases[c][0], .M = cases[c][1], .L = cases[c][2], .best = -1 };
        x.n = 3 * x.M;
        int nx[3] = { 0, 0, 0 };
        ex_search(&x, 0, 0, nx, 0);
        cr_assert_gt(x.best, 0);
        char name[32];
        snprintf(name, sizeof name, "zb-auto:%d", x.L);
        struct sch_schedule *s;
        cr_assert_eq(sch_schedule_build(name, x.K, x.M, SCH_REMAT_NEVER, &s), 0);
        sch_time got = sch_zb_list_time(s, NULL, NULL, NULL);
        cr_log_info("K=%d M=%d L=%d: exhaustive %ld (%ld orders), zb-auto %lld", x.K, x.M, x.L,
                    x.best, x.evaluated, (long long)got);
        cr_assert_geq(got, x.best);
        cr_assert_leq(got, x.best + EX_GAP, "K=%d M=%d L=%d: zb-auto %lld, best %ld", x.K, x.M,
                      x.L, (long long)got, x.best);
        sch_schedule_free(s);
    }
}

/* zb-auto's second phase (sch_zb_improve) with stage costs and hand-off
 * times: against exhaustive search on tiny cases (the gap stated and
 * pinned: EX_GAP_COSTED, measured on these cases), never slower than its
 * first phase or than ZB-H1 under the same timing, within its limit. */
#define EX_GAP_COSTED 0.0 /* of the optimum: measured at the optimum on all 20 cases */
Test(new_schedules, zb_auto_with_costs_against_exhaustive_search)
{
    static const int cases[][3] = { /* K, M, L */
        { 2, 2, 2 }, { 2, 3, 2 }, { 3, 2, 2 }, { 3, 2, 3 }, { 2, 3, 3 },
    };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    double worst = 0;
    int at_optimum = 0, n = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int rep = 0; rep < 4; rep++, n++) {
            struct ex x = { .K = cases[c][0], .M = cases[c][1], .L = cases[c][2], .best = -1,
                            .costed = 1 };
            x.n = 3 * x.M;
            sch_time f[EX_MAXK], b[EX_MAXK], w[EX_MAXK], act[EX_MAXK], grad[EX_MAXK];
            for (int s = 0; s < x.K; s++) {
                f[s] = x.f[s] = 1 + (long)gsl_rng_uniform_int(r, 10);
                b[s] = x.b[s] = 1 + (long)gsl_rng_uniform_int(r, 20);
                w[s] = x.w[s] = 1 + (long)gsl_rng_uniform_int(r, 10);
                act[s] = x.act[s] = (long)gsl_rng_uniform_int(r, 6);
                grad[s] = x.grad[s] = act[s];
            }
            int nx[3] = { 0, 0, 0 };
            ex_search(&x, 0, 0, nx, 0);
            cr_assert_gt(x.best, 0);
            struct sch_zb_costs zc = { .f = f, .b = b, .w = w, .act = act, .grad = grad };
            struct sch_schedule *z, *h1;
            cr_assert_eq(sch_schedule_zbauto_for(x.K, x.M, &zc, x.L, SCH_REMAT_NEVER, &z), 0,
                         "%s", ps_errmsg());
            cr_assert_eq(sch_schedule_validate(z), 0, "%s", ps_errmsg());
            cr_assert_leq(sch_zb_peak_stashes(z), x.L);
            sch_time got = sch_zb_seq_time(z, &zc);
            cr_assert_geq(got, x.best, "the search's replay and the exhaustive one disagree");
            double gap = (double)(got - x.best) / (double)x.best;
            worst = gap > worst ? gap : worst;
            at_optimum += got == x.best;
            cr_assert_eq(sch_schedule_zbh1(x.K, x.M, SCH_REMAT_NEVER, &h1), 0);
            if (sch_zb_peak_stashes(h1) <= x.L)
                cr_assert_leq(got, sch_zb_seq_time(h1, &zc));
            sch_schedule_free(h1);
            sch_schedule_free(z);
        }
    cr_log_info("zb-auto with costs: at the optimum on %d of %d cases, worst gap %.1f %%",
                at_optimum, n, 100 * worst);
    cr_assert_leq(worst, EX_GAP_COSTED);
    gsl_rng_free(r);
}

/* The second phase improves on the first with hand-offs on a grid of
 * random costs, and keeps every list valid and within its limit. */
Test(new_schedules, zb_auto_second_phase_improves)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4);
    int better = 0;
    for (int K = 2; K <= 6; K++)
        for (int M = 1; M <= 12; M += 3)
            for (int rm = 0; rm < 2; rm++) {
                sch_time f[6], b[6], w[6], act[6], grad[6];
                for (int s = 0; s < K; s++) {
                    f[s] = 100 + (sch_time)gsl_rng_uniform_int(r, 900);
                    b[s] = 100 + (sch_time)gsl_rng_uniform_int(r, 1800);
                    w[s] = 100 + (sch_time)gsl_rng_uniform_int(r, 900);
                    act[s] = grad[s] = (sch_time)gsl_rng_uniform_int(r, 400);
                }
                enum sch_remat remat = rm ? SCH_REMAT_ALWAYS : SCH_REMAT_NEVER;
                struct sch_zb_costs zc = { .f = f, .b = b, .w = w, .act = act, .grad = grad };
                struct sch_schedule *one, *two;
                cr_assert_eq(sch_schedule_zbauto(K, M, f, b, w, K, remat, &one), 0);
                cr_assert_eq(sch_schedule_zbauto_for(K, M, &zc, K, remat, &two), 0);
                cr_assert_eq(sch_schedule_validate(two), 0, "%s", ps_errmsg());
                cr_assert_leq(sch_zb_peak_stashes(two), K);
                sch_time t1 = sch_zb_seq_time(one, &zc), t2 = sch_zb_seq_time(two, &zc);
                cr_assert(t1 > 0 && t2 > 0);
                cr_assert_leq(t2, t1, "K=%d M=%d: second phase %lld, first %lld", K, M,
                              (long long)t2, (long long)t1);
                better += t2 < t1;
                sch_schedule_free(one);
                sch_schedule_free(two);
            }
    cr_log_info("the second phase was faster on %d cases", better);
    cr_assert_gt(better, 0);
    gsl_rng_free(r);
}

/* The CPU runtime replays every new list unchanged and computes the
 * single-threaded reference's loss, gradients and weights; its measured
 * activation peaks equal the ledger's (rt_check.h). */
Test(new_schedules, runtime_reference_gradients)
{
    static const char *const rt_names[] = { "zb-h2", "zb-v", "zb-auto", "zb-auto:2",
                                            "eager-1f1b", "breadth-first:2" };
    static const int Ks[] = { 2, 3 }, Ms[] = { 3, 6 };
    for (int i = 0; i < (int)(sizeof rt_names / sizeof *rt_names); i++)
        for (int ki = 0; ki < 2; ki++)
            for (int mi = 0; mi < 2; mi++)
                for (int r = 0; r < 3; r++) {
                    struct sch_schedule *s;
                    cr_assert_eq(sch_schedule_build(rt_names[i], Ks[ki], Ms[mi],
                                                    (enum sch_remat)r, &s), 0, "%s", ps_errmsg());
                    check_step("mlp:layers=12,width=24,in=16,out=8,norm=2", s, 12, NULL);
                }
}

/* ---- dualpipe-v ---- */

/* Valid on a grid (sch_schedule_validate and the independent oracle), its
 * size estimate exact, and refused with a usage error below M = 2K. Every
 * device runs each chunk's F, B and W of every micro-batch in order (the
 * source's FIFO chunk ids and W queue). */
Test(new_schedules, dualpipe_v_valid_on_a_grid)
{
    for (int K = 1; K <= 8; K++)
        for (int M = 1; M <= 20; M++)
            for (int r = 0; r < 3; r++) {
                struct sch_schedule *s;
                enum sch_remat rm = (enum sch_remat)r;
                int rc = sch_schedule_build("dualpipe-v", K, M, rm, &s);
                struct sch_mem_sched e;
                if (M < 2 * K) {
                    cr_assert_eq(rc, -PS_EUSAGE, "K=%d M=%d", K, M);
                    cr_assert(strstr(ps_errmsg(), "-M >= 2K"), "%s", ps_errmsg());
                    cr_assert_neq(sch_mem_sched_estimate("dualpipe-v", K, M, rm, 1, &e), 0);
                    continue;
                }
                cr_assert_eq(rc, 0, "K=%d M=%d: %s", K, M, ps_errmsg());
                cr_assert_eq(s->n_stages, 2 * K);
                for (int st = 0; st < 2 * K; st++)
                    cr_assert_eq(s->stage_device[st], st < K ? st : 2 * K - 1 - st);
                cr_assert_eq(sch_schedule_validate(s), 0, "K=%d M=%d remat=%d: %s", K, M, r,
                             ps_errmsg());
                char why[256];
                cr_assert(oracle_schedule_ok(s, why, sizeof why), "K=%d M=%d remat=%d: %s", K,
                          M, r, why);
                cr_assert_eq(sch_mem_sched_estimate("dualpipe-v", K, M, rm, 1, &e), 0);
                cr_assert_eq(e.n_ops, sch_schedule_total_ops(s));
                for (int d = 0; d < K; d++) {
                    int next[3][2] = { { 0 } };
                    for (int i = 0; i < s->n_ops[d]; i++) {
                        const struct sch_op *op = &s->ops[d][i];
                        int k = op->kind == SCH_OP_FWD ? 0 : op->kind == SCH_OP_BWD ? 1
                                : op->kind == SCH_OP_WGRAD ? 2 : -1;
                        if (k < 0 || op->stage != d)
                            continue; /* chunk 1's W may come out of order: FIFO */
                        cr_assert_eq(op->mb, next[k][0]++, "K=%d M=%d dev %d op %d", K, M, d, i);
                    }
                }
                sch_schedule_free(s);
            }
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("dualpipe-v:1", 2, 4, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
}

/* DualPipeV's order on device r (sched/sch_dualpipe.c), K = 2, M = 4, one
 * layer per chunk, T_F = T_B = T_W = T, no communication, traced by hand
 * (times in T; F(s,m), B(s,m) split or B+W whole; device 0 holds stages 0
 * and 3, device 1 stages 1 and 2):
 *   dev 0: F(0,0..2) 0-3 | F(3,0) 3-4 (after F(2,0) at 3) | B(3,0) 4-5,
 *          W 5-6 | F(3,1) 6-7 | F(0,3) 7-8 | B+W(3,1) 8-10 | F(3,2) 10-11 |
 *          B+W(0,0) 11-13 | B+W(3,2) 13-15 | F(3,3) 15-16 (F(2,3) at 15) |
 *          B+W(0,1) 16-18 | B+W(3,3) 18-20 | B(0,2) 20-21 | W(0,2) 21-22 |
 *          B(0,3) 23-24 (B(1,3) at 23) | W(0,3) 24-25
 *   dev 1: F(1,0) 1-2 | F(2,0) 2-3 | F(1,1) 3-4 | F(2,1) 4-5 | F(1,2) 5-6 |
 *          B+W(2,0) 6-8 | F(2,2) 8-9 | B+W(1,0) 9-11 | F(1,3) 11-12 |
 *          B+W(2,1) 12-14 | F(2,3) 14-15 | B+W(1,1) 15-17 | B+W(2,2) 17-19 |
 *          B+W(1,2) 19-21 | B(2,3) 21-22 | B(1,3) 22-23 | W(2,3) 23-24 |
 *          W(1,3) 24-25
 * Step 25 T = 6M + K - 1, the lower bound (device K-1's first F waits for
 * K-1 forwards, then it has 6M ops of its own, 2M chunk ops of 3 T), so
 * (K-1) T of bubble per device. The engine meets the bound exactly for
 * every K and M >= 2K of the grid below (K = 4, M = 8: 51 T).
 * Peaks (stash S per chunk, no buffers): device r issues 2(K-r-1) + 2(r+1)
 * = 2K forwards before its first backward, and step 4's first pair starts
 * F0 before its B1 frees anything: 2K + 1 chunk stashes on every device
 * (the list order is the compute order). K = 2: 5 S; K = 4: 9 S. */
Test(new_schedules, dualpipe_v_memory_and_step_by_hand)
{
    const sch_time T = 1000;
    const int64_t S = 1000;
    for (int K = 1; K <= 5; K++)
    for (int M = 2 * K; M <= 4 * K + 3; M++) {
        struct mdl_topology *t = th_chain(K, 0, 1e300, 0);
        struct mdl_profile *pt = th_uniform(2 * K, (double)T, 2.0 * T, 1, 0, 0, 0);
        struct mdl_profile *pm = th_uniform(2 * K, 3000, 6000, 1, 0, (double)S, 0);
        struct th_run a, b;
        th_simulate(&a, "dualpipe-v", pt, t, K, M, SCH_REMAT_NEVER, 1, 0);
        th_simulate(&b, "dualpipe-v", pm, t, K, M, SCH_REMAT_NEVER, 1, 0);
        cr_assert_eq(a.r->fb_end, (6 * M + K - 1) * T, "K=%d M=%d: %lld", K, M,
                     (long long)a.r->fb_end);
        if (K == 2 && M == 4)
            cr_assert_eq(a.r->fb_end, 25 * T); /* the trace above */
        if (K == 4 && M == 8)
            cr_assert_eq(a.r->fb_end, 51 * T);
        for (int d = 0; d < K; d++)
            cr_assert_eq(b.r->peak_act[d], (2 * K + 1) * S, "K=%d M=%d dev %d: %lld", K, M, d,
                         (long long)b.r->peak_act[d]);
        th_release(&a);
        th_release(&b);
        mdl_profile_free(pt);
        mdl_profile_free(pm);
        mdl_topology_free(t);
    }
}

/* The CPU runtime replays dualpipe-v's lists unchanged and computes the
 * reference loss, gradients and weights; measured peaks equal the ledger's. */
Test(new_schedules, dualpipe_v_runtime_reference_gradients)
{
    static const int cases[][2] = { { 2, 4 }, { 2, 6 }, { 3, 6 } };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int r = 0; r < 3; r++) {
            struct sch_schedule *s;
            cr_assert_eq(sch_schedule_build("dualpipe-v", cases[c][0], cases[c][1],
                                            (enum sch_remat)r, &s), 0, "%s", ps_errmsg());
            check_step("mlp:layers=12,width=24,in=16,out=8,norm=2", s, 12, NULL);
        }
}

/* The cost path's W buffers (sch_cost.c): a stage's mem.wgrad is the
 * micro-batch's output bytes of all its layers but the last (the gradients
 * W still needs; the last one's is mem.out), here layers with outputs of
 * 10, 20, 30, 40, 50, 60 B per sample in stages of 3, micro-batch 4:
 * stage 0 (10 + 20) 4 = 120, stage 1 (40 + 50) 4 = 360; scaled by the
 * allocator overhead like the other buffers. Then the ledger by hand, K = 2,
 * M = 1, zb-h1, one stage per device, 2 layers of stash 1000 B and output
 * 100 B per sample, micro-batch 1 (stash 2000, in/out 100, wgrad 100):
 *   device 0: F +2000, F end +out 100, send -100, recv-grad +100, B end
 *             +wgrad 100 -> 2200, W end -100 -2000 -100 -> 0;
 *   device 1: recv +100, F +2000, F end -in 100, B end +in 100 +wgrad 100
 *             -> 2200, send-grad -100, W end -2100 -> 0.
 * Peak 2200 B on both (2100 without the W buffers, what 1f1b holds). */
Test(new_schedules, cost_path_counts_w_buffers)
{
    double f[6], b[6], o[6] = { 10, 20, 30, 40, 50, 60 }, st[6] = { 0 };
    for (int i = 0; i < 6; i++)
        f[i] = b[i] = 1000;
    struct mdl_profile *p = th_profile(6, f, b, 1, o, st, 0);
    struct mdl_topology *t = th_chain(2, 0, 1e300, 0);
    struct sch_partition *part;
    struct sch_costs *c;
    cr_assert_eq(sch_partition_uniform(2, 6, &part), 0);
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 4, &c), 0, "%s", ps_errmsg());
    cr_assert_eq(c->st[0].mem.wgrad, 120);
    cr_assert_eq(c->st[1].mem.wgrad, 360);
    sch_costs_free(c);
    t->mem.allocator_overhead = 0.5;
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 4, &c), 0, "%s", ps_errmsg());
    cr_assert_eq(c->st[0].mem.wgrad, 180);
    cr_assert_eq(c->st[1].mem.wgrad, 540);
    sch_costs_free(c);
    sch_partition_free(part);
    mdl_profile_free(p);
    mdl_topology_free(t);

    t = th_chain(2, 0, 1e300, 0);
    p = th_uniform(4, 1000, 2000, 1, 100, 1000, 0);
    struct th_run z, o1;
    th_simulate(&z, "zb-h1", p, t, 2, 1, SCH_REMAT_NEVER, 1, 0);
    th_simulate(&o1, "1f1b", p, t, 2, 1, SCH_REMAT_NEVER, 1, 0);
    cr_assert_eq(z.c->st[0].mem.wgrad, 100);
    for (int d = 0; d < 2; d++) {
        cr_assert_eq(z.r->peak_act[d], 2200, "zb-h1 device %d: %lld", d,
                     (long long)z.r->peak_act[d]);
        cr_assert_eq(o1.r->peak_act[d], 2100, "1f1b device %d", d);
    }
    th_release(&z);
    th_release(&o1);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* zb-auto with a model's stage costs on real topologies: never slower than
 * ZB-H1 in the engine, whose sends share a stream and whose links are
 * first in, first out (zb-auto's own ordering times hand-offs as delays
 * alone). amoebanet:L=6,D=64 on chain-8-ideal, K=4, M=4 was 11.8 % slower
 * (374.631 us against 335.165 us) before ana_predict kept the faster. */
Test(new_schedules, zb_auto_with_costs_never_slower_than_zb_h1_in_the_engine, .timeout = 120)
{
    static const char *const cases[] = {
        "--model amoebanet:L=6,D=64 --topology models/topologies/chain-8-ideal.json -K 4 -M 4 "
        "--batch 8",
        "--model amoebanet:L=6,D=64 --topology models/topologies/chain-8-ideal.json -K 4 -M 8 "
        "--batch 16",
        "--model transformer-small --topology models/topologies/p100-pcie-dual-root.json -K 4 "
        "-M 8 --batch 16",
        "--model gpt:layers=6,hidden=512,heads=8,seq=256,vocab=1000 --topology "
        "models/topologies/pcie-8gpu.json -K 4 -M 8 --batch 16",
        "--model mlp:layers=8,width=512 --topology models/topologies/p100-pcie-8.json -K 3 -M 6 "
        "--batch 12",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[256];
        cr_assert_eq(th_capture(out, sizeof out, "%s compare-schedules %s --schedules "
                                "zb-h1,zb-auto --remat never --format csv | awk -F, 'NR > 1 && "
                                "!seen[$1]++ {print $8}' | tr '\\n' ' '", th_pipesim(),
                                cases[i]), 0, "%s", out);
        double h1, za;
        cr_assert_eq(sscanf(out, "%lf %lf", &h1, &za), 2, "'%s': %s", cases[i], out);
        cr_expect_leq(za, h1, "'%s': zb-auto %.9g s, zb-h1 %.9g s", cases[i], za, h1);
    }
    /* with R replicas the all-reduce is in the timing: gpt on pcie-8gpu at R = 2 was
     * 26.075 ms against zb-h1's 25.767 ms */
    static const char *const rep[] = {
        "--model gpt:layers=6,hidden=512,heads=8,seq=256,vocab=1000 --topology "
        "models/topologies/pcie-8gpu.json -K 4 -M 4 --batch 8 --remat never --replicas 2",
        "--model gpt:layers=6,hidden=512,heads=8,seq=256,vocab=1000 --topology "
        "models/topologies/p100-pcie-8.json -K 4 -M 4 --batch 8 --remat never --replicas 2",
    };
    for (size_t i = 0; i < sizeof rep / sizeof *rep; i++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            char out[128];
            cr_assert_eq(th_capture(out, sizeof out, "%s predict %s --schedule %s --format json "
                                    "| python3 -c 'import json,sys; print(json.load(sys.stdin)"
                                    "[\"step_s\"])'", th_pipesim(), rep[i],
                                    k ? "zb-auto" : "zb-h1"), 0, "%s", out);
            t[k] = atof(out);
        }
        cr_expect_gt(t[0], 0);
        cr_expect_leq(t[1], t[0], "'%s': zb-auto %.9g s, zb-h1 %.9g s", rep[i], t[1], t[0]);
    }
}
