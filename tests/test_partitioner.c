/* The partitioner against brute force over every partition, and its edge
 * cases; the model layer against sch_costs and the simulator. */
#include "helpers.h"

#include <float.h>
#include <gsl/gsl_rng.h>
#include <math.h>

#include "sched/sch_partitioner.h"

#define MAXL 12

struct inst {
    int L, K, same, capped;
    int64_t pre[5][MAXL + 1], in[5][MAXL + 1], out[5][MAXL + 1];
    int64_t mpre[5][MAXL + 1], min_[5][MAXL + 1], mout[5][MAXL + 1];
    struct sch_part_cost time[5], mem[5];
    struct sch_part_problem p;
};

static void make(struct inst *x, gsl_rng *r, int L, int K, int same, int capped)
{
    memset(x, 0, sizeof *x);
    x->L = L;
    x->K = K;
    for (int s = 0; s < K; s++) {
        int src = same ? 0 : s;
        for (int i = 0; i <= L; i++) {
            if (src != s) {
                x->pre[s][i] = x->pre[0][i];
                x->in[s][i] = x->in[0][i];
                x->out[s][i] = x->out[0][i];
                x->mpre[s][i] = x->mpre[0][i];
                x->min_[s][i] = x->min_[0][i];
                x->mout[s][i] = x->mout[0][i];
                continue;
            }
            x->pre[s][i] = i ? x->pre[s][i - 1] + (int64_t)gsl_rng_uniform_int(r, 21) : 0;
            x->mpre[s][i] = i ? x->mpre[s][i - 1] + (int64_t)gsl_rng_uniform_int(r, 11) : 0;
            x->in[s][i] = (int64_t)gsl_rng_uniform_int(r, 16);
            x->out[s][i] = (int64_t)gsl_rng_uniform_int(r, 16);
            x->min_[s][i] = (int64_t)gsl_rng_uniform_int(r, 30);
            x->mout[s][i] = (int64_t)gsl_rng_uniform_int(r, 10);
        }
        x->time[s] = (struct sch_part_cost){ x->pre[s], x->in[s], x->out[s], 0 };
        int64_t cap = (int64_t)gsl_rng_uniform_int(r, 80) + 10;
        x->mem[s] = (struct sch_part_cost){ x->mpre[s], x->min_[s], x->mout[s], -cap };
        if (same && s)
            x->mem[s].bias = x->mem[0].bias;
    }
    x->p = (struct sch_part_problem){ L, K, x->time, capped ? x->mem : NULL, same };
}

/* Brute force: least bottleneck over all compositions (INT64_MAX if none
 * fits), and least sum of squares of time pre. */
static void brute(const struct inst *x, int64_t *best, int64_t *best_sq)
{
    int first[6];
    *best = INT64_MAX;
    *best_sq = INT64_MAX;
    int n = 1 << (x->L - 1);
    for (int mask = 0; mask < n; mask++) {
        if (__builtin_popcount((unsigned)mask) != x->K - 1)
            continue;
        int s = 0;
        first[0] = 0;
        for (int i = 1; i < x->L; i++)
            if (mask & (1 << (i - 1)))
                first[++s] = i;
        first[x->K] = x->L;
        int64_t bn = INT64_MIN, sq = 0;
        int ok = 1;
        for (s = 0; s < x->K; s++) {
            int64_t v = sch_part_cost_eval(&x->time[s], x->L, first[s], first[s + 1]);
            if (v > bn)
                bn = v;
            int64_t c = x->pre[s][first[s + 1]] - x->pre[s][first[s]];
            sq += c * c;
            if (x->p.mem && sch_part_cost_eval(&x->mem[s], x->L, first[s], first[s + 1]) > 0)
                ok = 0;
        }
        if (ok && bn < *best)
            *best = bn;
        if (sq < *best_sq)
            *best_sq = sq;
    }
}

static void check_valid(const struct sch_partition *p, int L, int K)
{
    cr_assert_eq(p->n_stages, K);
    cr_assert_eq(p->first[0], 0);
    cr_assert_eq(p->first[K], L);
    for (int s = 0; s < K; s++)
        cr_assert_gt(p->first[s + 1], p->first[s], "stage %d empty", s);
}

Test(partitioner, optimal_equals_brute_force, .timeout = 60)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20240601);
    int cases = 0, fitted = 0, nofit = 0;
    for (int it = 0; it < 2400; it++) {
        int L = 1 + (int)gsl_rng_uniform_int(r, MAXL);
        int K = 1 + (int)gsl_rng_uniform_int(r, L < 5 ? L : 5);
        int same = it % 4 != 3, capped = it % 3 == 2;
        struct inst x;
        make(&x, r, L, K, same, capped);
        int64_t best, best_sq, got = -1;
        brute(&x, &best, &best_sq);
        struct sch_partition *p;
        int rc = sch_part_solve(&x.p, &p, &got);
        cases++;
        if (best == INT64_MAX) {
            cr_assert_eq(rc, -PS_ENOFIT, "case %d: expected no fit, rc %d", it, rc);
            nofit++;
            continue;
        }
        cr_assert_eq(rc, 0, "case %d: %s", it, ps_errmsg());
        check_valid(p, L, K);
        int feasible;
        cr_assert_eq(got, best, "case %d (L=%d K=%d same=%d capped=%d): %lld != brute %lld", it,
                     L, K, same, capped, (long long)got, (long long)best);
        cr_assert_eq(sch_part_bottleneck(&x.p, p, NULL, &feasible), best);
        cr_assert(feasible);
        sch_partition_free(p);
        fitted += capped;

        struct sch_partition *q;
        cr_assert_eq(sch_part_min_sq_sum(&x.p, &q), 0, "%s", ps_errmsg());
        check_valid(q, L, K);
        int64_t sq = 0;
        for (int s = 0; s < K; s++) {
            int64_t c = x.pre[s][q->first[s + 1]] - x.pre[s][q->first[s]];
            sq += c * c;
        }
        cr_assert_eq(sq, best_sq, "case %d: sum of squares %lld != brute %lld", it,
                     (long long)sq, (long long)best_sq);
        sch_partition_free(q);
        /* read back in blocks of 1 and 2 rows (recomputed from checkpoints) */
        for (int B = 1; B <= 2; B++) {
            cr_assert_eq(sch_part_min_sq_sum_block(&x.p, B, &q), 0, "%s", ps_errmsg());
            check_valid(q, L, K);
            sq = 0;
            for (int s = 0; s < K; s++) {
                int64_t c = x.pre[s][q->first[s + 1]] - x.pre[s][q->first[s]];
                sq += c * c;
            }
            cr_assert_eq(sq, best_sq, "case %d, blocks of %d: sum of squares %lld != brute %lld",
                         it, B, (long long)sq, (long long)best_sq);
            sch_partition_free(q);
        }
    }
    gsl_rng_free(r);
    cr_assert_geq(cases, 500);
    cr_assert_geq(fitted, 100, "too few capped cases fitted (%d)", fitted);
    cr_assert_geq(nofit, 20, "too few infeasible cases (%d)", nofit);
}

static struct sch_part_problem plain(int L, int K, const int64_t *cost, int64_t *pre,
                                     struct sch_part_cost *tc)
{
    pre[0] = 0;
    for (int i = 0; i < L; i++)
        pre[i + 1] = pre[i] + cost[i];
    *tc = (struct sch_part_cost){ pre, NULL, NULL, 0 };
    return (struct sch_part_problem){ L, K, tc, NULL, 1 };
}

Test(partitioner, heavy_last_layer)
{
    int64_t c[] = { 1, 1, 1, 1, 1, 1, 1, 10 }, pre[9], bn;
    struct sch_part_cost tc;
    struct sch_part_problem pb = plain(8, 2, c, pre, &tc);
    struct sch_partition *p;
    cr_assert_eq(sch_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 10);
    cr_assert_eq(p->first[1], 7, "the 10 stands alone");
    sch_partition_free(p);
}

Test(partitioner, edge_cases_k_equals_l_and_one)
{
    int64_t c[] = { 4, 9, 2, 7, 7, 1 }, pre[7], bn;
    struct sch_part_cost tc;
    struct sch_part_problem pb = plain(6, 6, c, pre, &tc);
    struct sch_partition *p;
    cr_assert_eq(sch_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 9);
    for (int s = 0; s <= 6; s++)
        cr_assert_eq(p->first[s], s);
    sch_partition_free(p);
    pb.n_stages = 1;
    cr_assert_eq(sch_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 30);
    cr_assert_eq(p->first[1], 6);
    sch_partition_free(p);
    pb.same = 0; /* the layered path agrees */
    pb.n_stages = 6;
    struct sch_part_cost six[6] = { tc, tc, tc, tc, tc, tc };
    pb.time = six;
    cr_assert_eq(sch_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 9);
    sch_partition_free(p);
}

Test(partitioner, k_greater_than_l_is_a_clear_error)
{
    int64_t c[] = { 1, 2, 3 }, pre[4], bn;
    struct sch_part_cost tc;
    struct sch_part_problem pb = plain(3, 4, c, pre, &tc);
    struct sch_partition *p = (void *)1;
    cr_assert_eq(sch_part_solve(&pb, &p, &bn), -PS_ENOFIT);
    cr_assert_null(p);
    cr_assert(strstr(ps_errmsg(), "4 stages but the model has only 3 layers"), "%s",
              ps_errmsg());
    cr_assert_eq(sch_part_min_sq_sum(&pb, &p), -PS_ENOFIT);
    pb.n_stages = 0;
    cr_assert_eq(sch_part_solve(&pb, &p, &bn), -PS_EUSAGE);
}

Test(partitioner, memory_cap_changes_the_answer)
{
    /* time wants [0,1,2 | 3]; memory of layers 0..2 together is over the cap */
    int64_t c[] = { 1, 1, 1, 3 }, pre[5], mpre[5] = { 0, 5, 10, 15, 16 }, bn;
    struct sch_part_cost tc, mc = { mpre, NULL, NULL, -10 };
    struct sch_part_problem pb = plain(4, 2, c, pre, &tc);
    struct sch_partition *p;
    cr_assert_eq(sch_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 3);
    cr_assert_eq(p->first[1], 3);
    sch_partition_free(p);
    pb.mem = &mc;
    cr_assert_eq(sch_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(p->first[1], 2, "[0,1 | 2,3]: memory 10 and 6");
    cr_assert_eq(bn, 4);
    sch_partition_free(p);
    mc.bias = -7; /* 16 bytes over 2 stages of 7: impossible */
    cr_assert_eq(sch_part_solve(&pb, &p, &bn), -PS_ENOFIT);
}

/* ---- model layer ---- */

static struct mdl_profile *model(int L, unsigned seed)
{
    double f[16], b[16], ob[16], sb[16];
    for (int i = 0; i < L; i++) {
        f[i] = 1000 + (double)((seed * 7 + (unsigned)i * 13) % 9) * 500;
        b[i] = 2 * f[i] + 100 * (i % 3);
        ob[i] = 64 + 32 * ((i + seed) % 4);
        sb[i] = 400 + 100 * ((i * 5 + seed) % 7);
    }
    return th_profile(L, f, b, 4, ob, sb, 1000);
}

/* 8 layers of equal time, outputs and stashes of a few sizes: stages that
 * run at one pace, where the memory estimates are exact or bound. */
static struct mdl_profile *equal_layers(void)
{
    double f[8], b[8], ob[8], sb[8];
    for (int i = 0; i < 8; i++) {
        f[i] = 1500;
        b[i] = 3100;
        ob[i] = 64 + 32 * (i % 4);
        sb[i] = 400 + 100 * ((i * 5) % 7);
    }
    return th_profile(8, f, b, 4, ob, sb, 1000);
}

static struct sch_part_opts popts(int K, int M, enum sch_remat r)
{
    return (struct sch_part_opts){ .n_stages = K, .n_micro = M, .micro_batch = 4, .remat = r };
}

static void compare_with_sim(const struct mdl_profile *p, const struct mdl_topology *t,
                             const char *spec, int M, int r, int check_mem)
{
    struct sch_partition *part;
    int K = 1;
    for (const char *c = spec; *c; c++)
        K += *c == ',';
    cr_assert_eq(sch_partition_parse(spec, K, p->n_layers, &part), 0);
    struct sch_part_opts o = popts(K, M, (enum sch_remat)r);
    sch_part_model *m;
    cr_assert_eq(sch_part_model_new(p, t, &o, &m), 0, "%s", ps_errmsg());
    struct sch_part_stage_info info[4];
    sch_part_model_stages(m, part, info);
    struct sch_schedule *s;
    struct sch_costs *c;
    sim_engine *e;
    cr_assert_eq(sch_schedule_build("gpipe", K, M, (enum sch_remat)r, &s), 0);
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 4, &c), 0);
    cr_assert_eq(sim_simulate(s, c, t, 0, &e), 0);
    const struct sim_result *res = sim_engine_result(e);
    for (int st = 0; st < K; st++) {
        sch_time mine = sch_seconds_to_time(info[st].compute_s);
        cr_assert_eq(mine, res->busy[st] + c->st[st].update,
                     "%s M=%d remat=%d stage %d: compute %lld != busy+update %lld", spec, M, r,
                     st, (long long)mine, (long long)(res->busy[st] + c->st[st].update));
        if (!check_mem)
            continue;
        /* the closed form counts a receive (or kept input) buffer and the
         * output buffer both; the ledger may hold only the larger of the two
         * at the peak (a recompute frees its kept input as it ends) */
        int64_t in = st ? c->st[st].mem.in : 0, out = c->st[st].mem.out;
        int64_t slack = in < out ? in : out;
        cr_assert(res->peak_mem[st] <= info[st].mem && info[st].mem - slack <= res->peak_mem[st],
                  "%s M=%d remat=%d stage %d: estimate %lld vs simulated %lld (slack %lld)",
                  spec, M, r, st, (long long)info[st].mem, (long long)res->peak_mem[st],
                  (long long)slack);
        /* every micro-batch re-materialized: exactly (M - 1) kept inputs, a
         * stash and the larger of the input and output buffers */
        if (r == SCH_REMAT_ALWAYS)
            cr_assert_eq(res->peak_mem[st], info[st].mem - slack,
                         "%s M=%d stage %d: estimate %lld - %lld vs simulated %lld", spec, M,
                         st, (long long)info[st].mem, (long long)slack,
                         (long long)res->peak_mem[st]);
    }
    sim_engine_free(e);
    sch_costs_free(c);
    sch_schedule_free(s);
    sch_part_model_free(m);
    sch_partition_free(part);
}

Test(partitioner, model_costs_match_the_simulator, .timeout = 60)
{
    struct mdl_profile *p = model(8, 3);
    struct mdl_topology *t = th_chain(4, 1e9, 1e300, 0); /* instant links */
    static const char *specs[] = { "8", "3,5", "5,3", "1,7", "2,4,2", "1,1,6", "1,2,3,2",
                                   "2,2,2,2", "4,1,1,2" };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
        for (int M = 1; M <= 8; M *= 2)
            for (int r = 0; r < 3; r++)
                compare_with_sim(p, t, specs[i], M, r, 0);
    mdl_profile_free(p);
    /* The memory estimate is the ledger's fill-drain peak when neighbours run
     * at the same pace; a faster neighbour delivers buffers early (the
     * simulated check in ana_rank catches those). Equal stages: */
    p = equal_layers();
    static const char *eq[] = { "8", "4,4", "2,2,2,2" };
    for (size_t i = 0; i < sizeof eq / sizeof *eq; i++)
        for (int M = 1; M <= 8; M *= 2)
            for (int r = 0; r < 3; r++)
                compare_with_sim(p, t, eq[i], M, r, 1);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* A stash two neighbouring layers share (stash_shared_bytes) counts once
 * in a stage, in the model as in the simulator's ledger: the same checks
 * as above on equal layers whose every layer but the first shares part of
 * its stash with the layer before, and a stage's stash by hand. */
static void sched_mem_bounds(const struct mdl_profile *p, const struct mdl_topology *t,
                             const char *sname, const char *spec, int M, int r);

Test(partitioner, shared_stash_counts_once_per_stage, .timeout = 60)
{
    struct mdl_profile *p = equal_layers();
    for (int l = 1; l < p->n_layers; l++)
        p->layers[l].stash_shared_bytes = 50 + 25 * (l % 3);
    struct mdl_topology *t = th_chain(4, 1e9, 1e300, 0);
    static const char *eq[] = { "8", "4,4", "2,2,2,2", "1,3,4" };
    for (size_t i = 0; i < sizeof eq / sizeof *eq; i++)
        for (int M = 1; M <= 8; M *= 2)
            for (int r = 0; r < 3; r++)
                compare_with_sim(p, t, eq[i], M, r, 1);
    static const char *sn[] = { "1f1b", "zb-h1" };
    for (size_t i = 0; i < sizeof sn / sizeof *sn; i++)
        for (int M = 1; M <= 8; M *= 2)
            sched_mem_bounds(p, t, sn[i], "4,4", M, SCH_REMAT_NEVER);
    /* stage 1 of "3,5": layers 3-7, the shared part of 4-7 once, of 3 kept */
    struct sch_partition *part;
    struct sch_costs *c;
    cr_assert_eq(sch_partition_parse("3,5", 2, 8, &part), 0);
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 1, &c), 0, "%s", ps_errmsg());
    double want = 0;
    for (int l = 3; l < 8; l++)
        want += p->layers[l].stash_bytes - (l > 3 ? p->layers[l].stash_shared_bytes : 0);
    cr_expect_eq(c->st[1].mem.stash, (int64_t)want, "%lld vs %.0f",
                 (long long)c->st[1].mem.stash, want);
    sch_costs_free(c);
    sch_partition_free(part);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* carry_bytes: the part of a layer's output it passes on unchanged (a skip
 * in flight) crosses a cut but is no output gradient W keeps: a zero-bubble
 * stage's W buffer is its layers' out_bytes less it (all but the last
 * layer's), by hand, and the model still bounds the ledger with it. */
Test(partitioner, carried_bytes_leave_the_w_buffer, .timeout = 60)
{
    struct mdl_profile *p = equal_layers();
    for (int l = 0; l < p->n_layers; l++)
        p->layers[l].carry_bytes = p->layers[l].out_bytes * (l % 2 ? 0.75 : 0.25);
    struct mdl_topology *t = th_chain(4, 1e9, 1e300, 0);
    for (int M = 1; M <= 8; M *= 2)
        sched_mem_bounds(p, t, "zb-h1", "4,4", M, SCH_REMAT_NEVER);
    struct sch_partition *part;
    struct sch_costs *c;
    cr_assert_eq(sch_partition_parse("3,5", 2, 8, &part), 0);
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 1, &c), 0, "%s", ps_errmsg());
    double want = 0;
    for (int l = 3; l < 7; l++) /* layers 3-6: all of stage 1 but its last */
        want += p->layers[l].out_bytes - p->layers[l].carry_bytes;
    cr_expect_eq(c->st[1].mem.wgrad, (int64_t)want, "%lld vs %.0f",
                 (long long)c->st[1].mem.wgrad, want);
    cr_expect_eq(c->st[0].mem.out, (int64_t)p->layers[2].out_bytes, "a cut sends it all");
    sch_costs_free(c);
    sch_partition_free(part);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* Other schedules: each stage's estimate from its list-order counts bounds
 * the simulated ledger peak from above on equal stages, and is exact where
 * the counts are (1F1B without re-materialization: min(K - s, M) stashes). */
static void sched_mem_bounds(const struct mdl_profile *p, const struct mdl_topology *t,
                             const char *sname, const char *spec, int M, int r)
{
    struct sch_schedule *s;
    int K = 1;
    for (const char *ch = spec; *ch; ch++)
        K += *ch == ',';
    cr_assert_eq(sch_schedule_build(sname, K, M, (enum sch_remat)r, &s), 0, "%s: %s", sname,
                 ps_errmsg());
    struct sch_partition *part;
    cr_assert_eq(sch_partition_parse(spec, s->n_stages, p->n_layers, &part), 0);
    struct sch_part_opts o = popts(s->n_stages, M, (enum sch_remat)r);
    o.stage_device = s->stage_device;
    o.sched = s;
    sch_part_model *m;
    cr_assert_eq(sch_part_model_new(p, t, &o, &m), 0, "%s", ps_errmsg());
    struct sch_part_stage_info info[8];
    sch_part_model_stages(m, part, info);
    struct sch_costs *c;
    sim_engine *e;
    cr_assert_eq(sch_costs_new(p, t, part, s->stage_device, 4, &c), 0, "%s", ps_errmsg());
    cr_assert_eq(sim_simulate(s, c, t, 0, &e), 0, "%s", ps_errmsg());
    const struct sim_result *res = sim_engine_result(e);
    for (int st = 0; st < s->n_stages; st++) {
        int64_t params = 0;
        for (int l = part->first[st]; l < part->first[st + 1]; l++)
            params += (int64_t)(p->layers[l].params * t->bytes_per_param);
        cr_assert(res->peak_mem[st] <= info[st].mem,
                  "%s %s M=%d remat=%d stage %d: estimate %lld < simulated %lld", sname, spec,
                  M, r, st, (long long)info[st].mem, (long long)res->peak_mem[st]);
        if (!strcmp(sname, "1f1b") && r == SCH_REMAT_NEVER) {
            int held = K - st < M ? K - st : M;
            int64_t stash = 0;
            for (int l = part->first[st]; l < part->first[st + 1]; l++)
                stash += (int64_t)((p->layers[l].stash_bytes -
                                    (l > part->first[st] ? p->layers[l].stash_shared_bytes : 0)) *
                                   4);
            cr_assert_geq(info[st].mem, params + held * stash, "stage %d", st);
            cr_assert_lt(info[st].mem, params + (held + 1) * stash, "stage %d", st);
        }
    }
    sim_engine_free(e);
    sch_costs_free(c);
    sch_part_model_free(m);
    sch_partition_free(part);
    sch_schedule_free(s);
}

Test(partitioner, other_schedules_bound_their_ledger, .timeout = 60)
{
    struct mdl_profile *p = equal_layers();
    struct mdl_topology *t = th_chain(4, 1e9, 1e300, 0);
    static const char *sn[] = { "1f1b", "eager-1f1b", "zb-h1", "zb-h2" };
    for (size_t i = 0; i < sizeof sn / sizeof *sn; i++)
        for (int M = 1; M <= 8; M *= 2)
            for (int r = 0; r < 3; r++) {
                sched_mem_bounds(p, t, sn[i], "4,4", M, r);
                sched_mem_bounds(p, t, sn[i], "2,2,2,2", M, r);
            }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* Least max stage time over every partition, by the model's own figures. */
static double brute_model(const sch_part_model *m, int L, int K, double cap)
{
    double best = 1e300;
    for (int mask = 0; mask < 1 << (L - 1); mask++) {
        if (__builtin_popcount((unsigned)mask) != K - 1)
            continue;
        struct sch_partition *p = sch_partition_new(K, L);
        for (int i = 1, s = 0; i < L; i++)
            if (mask & (1 << (i - 1)))
                p->first[++s] = i;
        struct sch_part_stage_info info[8];
        sch_part_model_stages(m, p, info);
        double bn = 0;
        int ok = 1;
        for (int s = 0; s < K; s++) {
            bn = info[s].time_s > bn ? info[s].time_s : bn;
            ok &= (double)info[s].mem <= cap;
        }
        if (ok && bn < best)
            best = bn;
        sch_partition_free(p);
    }
    return best;
}

static double bound(const sch_part_model *m, const struct sch_partition *p)
{
    struct sch_part_stage_info info[8];
    sch_part_model_stages(m, p, info);
    double bn = 0;
    for (int s = 0; s < p->n_stages; s++)
        bn = info[s].time_s > bn ? info[s].time_s : bn;
    return bn;
}

Test(partitioner, model_optimum_beats_the_alternatives, .timeout = 60)
{
    struct mdl_topology *t = th_chain(4, 1e9, 2e9, 1e-6);
    for (unsigned seed = 0; seed < 6; seed++) {
        struct mdl_profile *p = model(10, seed);
        for (int K = 1; K <= 4; K++) {
            struct sch_part_opts o = popts(K, 4, SCH_REMAT_EXCEPT_LAST);
            sch_part_model *m;
            cr_assert_eq(sch_part_model_new(p, t, &o, &m), 0, "%s", ps_errmsg());
            cr_assert(sch_part_model_problem(m)->same, "a homogeneous chain is one cost class");
            struct sch_partition *opt;
            cr_assert_eq(sch_part_strategy_run(m, SCH_PART_OPTIMAL, &opt), 0);
            double b = bound(m, opt);
            cr_assert_float_eq(b, brute_model(m, 10, K, 1e300), 1e-12, "seed %u K=%d", seed, K);
            for (int s = 1; s < SCH_PART_NSTRATEGIES; s++) {
                struct sch_partition *q;
                cr_assert_eq(sch_part_strategy_run(m, (enum sch_part_strategy)s, &q), 0);
                check_valid(q, 10, K);
                cr_assert_leq(b, bound(m, q) + 1e-12, "%s beats optimal",
                              sch_part_strategy_name((enum sch_part_strategy)s));
                sch_partition_free(q);
            }
            sch_partition_free(opt);
            sch_part_model_free(m);
        }
        mdl_profile_free(p);
    }
    mdl_topology_free(t);
}

Test(partitioner, model_memory_cap_is_respected)
{
    /* cheap layers with big stashes, then dear layers with small ones */
    double f[10], b[10], ob[10], sb[10];
    for (int i = 0; i < 10; i++) {
        f[i] = i < 5 ? 1000 : 5000;
        b[i] = 2 * f[i];
        ob[i] = 100;
        sb[i] = i < 5 ? 9000 : 1000;
    }
    struct mdl_profile *p = th_profile(10, f, b, 4, ob, sb, 1000);
    struct mdl_topology *t = th_chain(3, 1e9, 2e9, 1e-6);
    struct sch_part_opts o = popts(3, 8, SCH_REMAT_NEVER);
    sch_part_model *m;
    cr_assert_eq(sch_part_model_new(p, t, &o, &m), 0);
    struct sch_partition *free_opt, *q;
    cr_assert_eq(sch_part_strategy_run(m, SCH_PART_OPTIMAL, &free_opt), 0);
    struct sch_part_stage_info info[3];
    sch_part_model_stages(m, free_opt, info);
    int64_t mx = 0;
    for (int s = 0; s < 3; s++)
        mx = info[s].mem > mx ? info[s].mem : mx;
    sch_part_model_free(m);
    /* balance-by-size gives the least feasible cap */
    cr_assert_eq(sch_part_model_new(p, t, &o, &m), 0);
    cr_assert_eq(sch_part_strategy_run(m, SCH_PART_BALANCE_SIZE, &q), 0);
    sch_part_model_stages(m, q, info);
    int64_t least = 0;
    for (int s = 0; s < 3; s++)
        least = info[s].mem > least ? info[s].mem : least;
    sch_partition_free(q);
    sch_part_model_free(m);
    cr_assert_lt(least, mx, "the instance must make the cap bind");
    for (int64_t cap = least; cap <= mx; cap += (mx - least) / 4 + 1) {
        o.cap_mode = 2;
        o.cap = (double)cap;
        cr_assert_eq(sch_part_model_new(p, t, &o, &m), 0);
        cr_assert_eq(sch_part_strategy_run(m, SCH_PART_OPTIMAL, &q), 0, "%s", ps_errmsg());
        sch_part_model_stages(m, q, info);
        for (int s = 0; s < 3; s++)
            cr_assert_leq(info[s].mem, cap, "stage %d over the cap", s);
        cr_assert_float_eq(bound(m, q), brute_model(m, 10, 3, (double)cap), 1e-12);
        sch_partition_free(q);
        sch_part_model_free(m);
    }
    o.cap = (double)least - 1;
    cr_assert_eq(sch_part_model_new(p, t, &o, &m), 0);
    cr_assert_eq(sch_part_strategy_run(m, SCH_PART_OPTIMAL, &q), -PS_ENOFIT);
    cr_assert(strstr(ps_errmsg(), "fits in memory") && strstr(ps_errmsg(), "over"), "%s",
              ps_errmsg());
    sch_part_model_free(m);
    sch_partition_free(free_opt);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

Test(partitioner, heterogeneous_devices_use_the_exact_general_path)
{
    char path[] = "/tmp/pipesim-part-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"devices\":[{\"name\":\"fast\",\"count\":2,\"flops\":2e12,\"memory\":1e12},"
          "{\"name\":\"slow\",\"count\":2,\"flops\":1e12,\"memory\":1e12}],"
          "\"links\":[{\"name\":\"l\",\"endpoints\":\"*\",\"bandwidth\":1e9,\"latency\":1e-6,"
          "\"shared\":true}]}", /* a "*" of 4 is a bus: a dedicated one joins 2 */
          f);
    fclose(f);
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load(path, &t), 0, "%s", ps_errmsg());
    unlink(path);
    struct mdl_profile *p = mdl_profile_new("<test>", 0);
    for (int i = 0; i < 11; i++) {
        struct mdl_layer l = { .fwd = 1e6 * (1 + i % 4), .bwd = 2e6 * (1 + i % 3),
                               .params = 100, .out_bytes = 1000.0 * (1 + i % 5),
                               .stash_bytes = 100 };
        snprintf(l.name, sizeof l.name, "l%d", i);
        cr_assert_eq(mdl_profile_add(p, &l), 0);
    }
    for (int K = 2; K <= 4; K++) {
        struct sch_part_opts o = popts(K, 2, SCH_REMAT_NEVER);
        sch_part_model *m;
        cr_assert_eq(sch_part_model_new(p, t, &o, &m), 0, "%s", ps_errmsg());
        cr_assert_eq(sch_part_model_problem(m)->same, K <= 2, "K=%d", K);
        struct sch_partition *q;
        cr_assert_eq(sch_part_strategy_run(m, SCH_PART_OPTIMAL, &q), 0);
        cr_assert_float_eq(bound(m, q), brute_model(m, 11, K, 1e300), 1e-12, "K=%d", K);
        sch_partition_free(q);
        sch_part_model_free(m);
    }
    mdl_profile_free(p);
    mdl_topology_free(t);
}

Test(partitioner, cli_end_to_end, .timeout = 60)
{
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s partition --help >/dev/null", ps), 0);
    cr_assert_eq(th_sh("%s partition --model mlp:layers=12,width=256 --topology "
                       "models/topologies/chain-8-ideal.json -K 3 -M 4 --batch 32 --format csv "
                       "--top 2 > /tmp/pipesim-part.csv", ps), 0);
    FILE *f = fopen("/tmp/pipesim-part.csv", "r");
    cr_assert(f);
    char line[1024];
    int rows = 0, header = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "rank,candidate,partition", 24))
            header++;
        else
            rows++;
    }
    fclose(f);
    unlink("/tmp/pipesim-part.csv");
    cr_assert_eq(header, 1);
    cr_assert_eq(rows, 2 * 3, "two candidates of three stages");
    /* K > L, unknown strategy, bad cap */
    cr_assert_eq(th_sh("%s partition --model mlp:layers=2,width=8 --topology "
                       "models/topologies/chain-8-ideal.json -K 3 -M 1 --batch 1 2>/dev/null",
                       ps), 7);
    cr_assert_eq(th_sh("%s partition --model mlp:layers=4,width=8 --topology "
                       "models/topologies/chain-8-ideal.json -K 2 -M 1 --batch 1 --strategy "
                       "best 2>/dev/null", ps), 2);
    cr_assert_eq(th_sh("%s partition --model mlp:layers=4,width=8 --topology "
                       "models/topologies/chain-8-ideal.json -K 2 -M 1 --batch 1 --mem-cap 3X "
                       "2>/dev/null", ps), 2);
}

/* predict --partition STRATEGY and a sweep's --strategy cut as `partition`
 * does for the same schedule: under 1f1b a stage holds fewer stashes than
 * fill-drain's M. They had used fill-drain's memory whatever the schedule:
 * balance-by-size gave 4,2,1,1 (partition: 1,3,3,1) and optimal refused a
 * 1F1B run that fits (32 GPipe stashes, 29 GiB on a stage). */
Test(partitioner, strategies_in_predict_and_sweep_follow_the_schedule, .timeout = 120)
{
    const char *ps = th_pipesim();
    char want[128], got[128], dir[64];
    const char *cfg = "--model transformer-small --topology models/topologies/pcie-8gpu.json "
                      "-K 4 -M 8 --batch 16 --schedule 1f1b --remat never";
    cr_assert_eq(th_capture(want, sizeof want, "%s partition %s --strategy balance-by-size "
                            "--format csv | awk -F'\"' 'NR == 2 {print \"\\\"\" $4 \"\\\"\"}'", ps,
                            cfg), 0);
    cr_assert_eq(th_capture(got, sizeof got, "%s predict %s --partition balance-by-size | "
                            "awk '/^partition/ {print \"\\\"\" $2 \"\\\"\"}'", ps, cfg), 0);
    cr_expect_str_eq(got, want);
    cr_expect_str_eq(want, "\"1,3,3,1\"\n");
    th_tmpdir(dir, sizeof dir, "part-sweep");
    cr_assert_eq(th_sh("%s sweep %s --strategy balance-by-size --db %s/s.db --quiet", ps, cfg,
                       dir), 0);
    cr_assert_eq(th_capture(got, sizeof got, "%s report --db %s/s.db --csv /dev/stdout "
                            "--metric step 2>/dev/null | grep -o '\"1,3,3,1\"' | head -1", ps,
                            dir), 0);
    cr_expect_str_eq(got, "\"1,3,3,1\"\n");
    th_sh("rm -rf %s", dir);
    /* optimal under 1f1b: partition's answer, and it fits */
    const char *gpt = "--model gpt:layers=24,hidden=1024,heads=16,seq=1024,vocab=50257 "
                      "--topology models/topologies/pcie-8gpu.json -K 4 -M 32 --batch 64 "
                      "--schedule 1f1b --remat never";
    cr_assert_eq(th_capture(want, sizeof want, "%s partition %s --strategy optimal --format "
                            "csv | awk -F'\"' 'NR == 2 {print \"\\\"\" $4 \"\\\"\"}'", ps, gpt), 0);
    cr_assert_eq(th_capture(got, sizeof got, "%s predict %s --partition optimal | awk "
                            "'/^partition/ {print \"\\\"\" $2 \"\\\"\"} /^memory/ {print $2, $3}'",
                            ps, gpt), 0, "%s", got);
    char both[160];
    snprintf(both, sizeof both, "%severy stage\n", want);
    cr_expect_str_eq(got, both);
}

/* GPipe's library partitioner (sch_partition_lingvo), by hand: eight equal
 * layers in four stages go 1, 2, 2, 3 (a layer whose running share lands
 * exactly on a boundary opens the next stage, as Lingvo's floor does); a
 * first layer dearer than two stages' shares leaves stages empty, which
 * the cuts then fill with one layer each (1, 1, 2); zero costs give the
 * uniform cut; more stages than layers is refused. */
static void lingvo_is(const double *cost, int L, int K, const char *want)
{
    struct sch_partition *p;
    char got[64];
    cr_assert_eq(sch_partition_lingvo(K, cost, L, &p), 0, "%s", ps_errmsg());
    sch_partition_format(p, got, sizeof got);
    cr_expect_str_eq(got, want);
    sch_partition_free(p);
}

Test(partitioner, lingvo_by_hand)
{
    static const double eight[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    static const double heavy[4] = { 10, 1, 1, 1 }, zero[5] = { 0 };
    static const double tail[6] = { 1, 1, 1, 1, 1, 20 };
    lingvo_is(eight, 8, 4, "1,2,2,3");
    lingvo_is(eight, 8, 1, "8");
    lingvo_is(heavy, 4, 3, "1,1,2");
    lingvo_is(tail, 6, 3, "4,1,1"); /* 5/25 of the cost before the last layer */
    lingvo_is(zero, 5, 2, "3,2");
    struct sch_partition *p;
    cr_expect_lt(sch_partition_lingvo(5, eight, 4, &p), 0);
    cr_expect_null(p);
    static const double bad[3][3] = { { 1, -1, 1 }, { 1, NAN, 1 }, { 1, INFINITY, 1 } };
    for (int k = 0; k < 3; k++) {
        cr_expect_eq(sch_partition_lingvo(2, bad[k], 3, &p), -PS_EINVAL, "cost set %d", k);
        cr_expect_null(p);
    }
    static const double huge[2] = { DBL_MAX, DBL_MAX }; /* their sum overflows */
    cr_expect_eq(sch_partition_lingvo(2, huge, 2, &p), -PS_EINVAL);
}

/* The strategy takes the profile's forward cost (a measured profile's
 * seconds, a generated one's FLOPs per sample): eight layers whose second
 * half is four times dearer split where the running cost crosses half
 * (running shares 1/20 .. 4/20, 8/20, 12/20: layer 5 opens stage 1). */
Test(partitioner, lingvo_strategy_reads_the_forward_cost)
{
    double f[8] = { 1e6, 1e6, 1e6, 1e6, 4e6, 4e6, 4e6, 4e6 }, b[8], ob[8], sb[8];
    for (int i = 0; i < 8; i++)
        b[i] = 2 * f[i], ob[i] = 100, sb[i] = 100;
    struct mdl_profile *meas = th_profile(8, f, b, 4, ob, sb, 1000);
    struct mdl_profile *flops = mdl_profile_new("<flops>", 0);
    cr_assert(flops);
    for (int i = 0; i < 8; i++) {
        struct mdl_layer l = { .fwd = f[i], .bwd = b[i], .params = 1000, .out_bytes = 100,
                               .stash_bytes = 100 };
        snprintf(l.name, sizeof l.name, "l%d", i);
        cr_assert_eq(mdl_profile_add(flops, &l), 0);
    }
    struct mdl_topology *t = th_chain(2, 1e12, 1e10, 1e-6);
    struct sch_part_opts o = popts(2, 4, SCH_REMAT_NEVER);
    const struct mdl_profile *ps[2] = { meas, flops };
    for (int k = 0; k < 2; k++) {
        sch_part_model *m;
        cr_assert_eq(sch_part_model_new(ps[k], t, &o, &m), 0, "%s", ps_errmsg());
        struct sch_partition *q;
        cr_assert_eq(sch_part_strategy_run(m, SCH_PART_LINGVO, &q), 0, "%s", ps_errmsg());
        char got[32];
        sch_partition_format(q, got, sizeof got);
        cr_expect_str_eq(got, "5,3", "profile %d", k);
        sch_partition_free(q);
        sch_part_model_free(m);
    }
    cr_expect_str_eq(sch_part_strategy_name(SCH_PART_LINGVO), "lingvo");
    enum sch_part_strategy st;
    cr_expect_eq(sch_part_strategy_parse("lingvo", &st), 0);
    cr_expect_eq(st, SCH_PART_LINGVO);
    mdl_topology_free(t);
    mdl_profile_free(meas);
    mdl_profile_free(flops);
}

/* A device holding two stages (zb-v's V) holds their sum: the optimum under each stage's
 * cap alone, 8,7,7,4, needs 16.21 GiB on gpu1 of 16 (helper-58); predict --partition
 * optimal now gives a cut every device holds, and plan ranks it. */
Test(partitioner, a_device_holding_two_stages_holds_their_sum, .timeout = 120)
{
    const char *ps = th_pipesim();
    const char *g = "--model gpt:layers=24,hidden=1024,heads=16,seq=1024,vocab=50257 "
                    "--topology pcie-8gpu";
    cr_assert_eq(th_sh("%s predict %s -K 2 -M 2 --batch 16 --schedule zb-v --remat never "
                       "--partition optimal | grep -q '^memory          every stage fits'",
                       ps, g), 0);
    cr_assert_eq(th_sh("%s plan %s --devices 4 --batch 32 --top 3 2>/dev/null | "
                       "grep -qE '^ +1 +2 +2 +2 +zb-v +never .* memory +8,6,7,5$'", ps, g), 0);
}

/* helper-63's two cuts that did not fit. With gpipe at except_last the closed form of stage
 * 0's peak (4 layers) lay under the engine's ledger (a faster neighbour's gradients arrive
 * early): --partition optimal gave 4,1,2,3, DOES NOT FIT; it is now cut again under a limit
 * lowered by the overflow until the ledger says it fits. With interleaved:2 the shares of a
 * device's memory tried gave up (exit 7) where 1,1,3,5 fits; shares are now also searched
 * device by device. */
Test(partitioner, optimal_cuts_fit_by_the_engine_s_ledger, .timeout = 120)
{
    char d[64];
    th_tmpdir(d, sizeof d, "pfit");
    th_put(d, "p8.csv", "name,fwd_flops,params,out_bytes,stash_bytes\n"
           "l0,20000000,2400000,4900000,6800000\nl1,20000000,4600000,600000,4400000\n"
           "l2,20000000,1600000,2700000,20800000\nl3,130000000,200000,5900000,25200000\n"
           "l4,50000000,2500000,6400000,10000000\nl5,50000000,600000,6300000,12000000\n"
           "l6,10000000,4500000,3500000,21200000\nl7,50000000,2500000,1500000,13600000\n"
           "l8,10000000,500000,5000000,19600000\nl9,10000000,4300000,800000,17600000\n");
    th_put(d, "p6.csv", "name,fwd_flops,params,out_bytes,stash_bytes\n"
           "l0,80000000,600000,6300000,13600000\nl1,10000000,100000,1900000,24400000\n"
           "l2,130000000,2400000,4100000,1200000\nl3,30000000,3200000,2600000,21200000\n"
           "l4,80000000,3500000,1300000,10000000\nl5,80000000,3600000,3400000,4800000\n"
           "l6,50000000,2200000,1200000,18800000\nl7,50000000,1700000,5700000,5200000\n"
           "l8,20000000,4500000,3800000,5200000\nl9,10000000,3800000,2600000,18800000\n");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s gen chain -n 4 --memory 380800000 --flops 1e12 "
                       "--mem-bandwidth 1e11 --bandwidth 1e10 --latency 1e-6 -o c4.json && "
                       "%s gen chain -n 2 --memory 750000000 --flops 1e12 --mem-bandwidth 1e11 "
                       "--bandwidth 1e10 --latency 1e-6 -o c2.json", d, ps, ps), 0);
    cr_expect_eq(th_sh("cd %s && %s predict --model p8.csv --topology c4.json -K 4 -M 4 "
                       "--batch 16 --partition optimal | grep -q '^memory          every stage "
                       "fits'", d, ps), 0);
    cr_expect_eq(th_sh("cd %s && %s predict --model p6.csv --topology c2.json -K 2 -M 4 "
                       "--batch 16 --schedule interleaved:2 --remat never --partition optimal "
                       "| grep -q '^memory          every stage fits'", d, ps), 0);
    /* helper-64: on a chain of identical devices the search's fast path read stage 0's
     * limit for every stage, so a limit lowered on stage 1 was dropped: 2,3,3 stayed,
     * DOES NOT FIT, where 3,2,3 fits */
    th_put(d, "m.csv", "name,fwd_flops,params,out_bytes,stash_bytes\n"
           "l0,80000000,3700000,1300000,22800000\nl1,130000000,500000,600000,19800000\n"
           "l2,20000000,2500000,6100000,8700000\nl3,50000000,3500000,800000,22000000\n"
           "l4,50000000,2700000,3700000,20500000\nl5,80000000,2000000,4700000,14700000\n"
           "l6,50000000,4200000,3500000,14600000\nl7,130000000,4600000,3800000,1400000\n");
    cr_expect_eq(th_sh("cd %s && %s gen chain -n 3 --memory 525000000 -o c3.json && %s predict "
                       "--model m.csv --topology c3.json -K 3 -M 4 --batch 8 --remat never "
                       "--partition optimal | grep -q '^memory          every stage fits'", d, ps,
                       ps), 0);
    th_sh("rm -rf %s", d);
}

/* The step predict prints for a --partition (JSON step_s), or -1 when it fails
 * or the cut does not fit. */
static double predicted_step(const char *args, const char *part)
{
    char cmd[1024], line[256];
    snprintf(cmd, sizeof cmd, "%s predict %s --partition %s --format json 2>/dev/null | "
             "grep -E '\"(step_s|fits)\"' | head -2 | tr -d ' ,' ", th_pipesim(), args, part);
    FILE *f = popen(cmd, "r");
    cr_assert(f);
    double step = -1;
    int fits = 0;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "\"step_s\":%lf", &step);
        fits |= strstr(line, "\"fits\":true") == line;
    }
    pclose(f);
    return fits ? step : -1;
}

/* With several stages a device, --partition optimal is the fastest simulated of the
 * per-stage optimum, the device-balanced cut and the other strategies' cuts: never
 * slower than any of them (helper-77: GPT-48 on dgx1-v100, K=8 M=32 interleaved:2, the
 * per-stage optimum 11.849 s, gpipe's cut 10.541 s; AmoebaNet-D at K = 4, interleaved:3:
 * 0.236 s, uniform's cut 0.228 s). The engine judges the fit. */
Test(partitioner, optimal_with_shared_devices_is_the_fastest_candidate, .timeout = 240)
{
    static const char *const runs[] = {
        "--model gpt:layers=48,hidden=1600,heads=25,seq=1024,vocab=50257 --topology dgx1-v100 "
        "-K 8 -M 32 --batch 64 --schedule interleaved:2",
        "--model gpt:layers=24,hidden=1024,heads=16,seq=1024,vocab=50257 --topology dgx-a100 "
        "-K 4 -M 16 --batch 32 --schedule zb-v",
        "--model amoebanet:L=18,D=256 --topology dgx1-v100 -K 4 -M 16 --batch 32 "
        "--schedule interleaved:3",
        "--model gpt:layers=24,hidden=1024,heads=16,seq=1024,vocab=50257 --topology dgx1-v100 "
        "-K 8 -M 32 --batch 64 --schedule dualpipe-v",
        /* helper-82: gpipe's cut, 9.11 s against 13.52, was dropped by the closed form's
         * sum of a device's stage peaks (19.6 GiB; the engine's 11.96 of 16) */
        "--model amoebanet:L=36,D=512 --topology p100-pcie-8 -K 4 -M 8 --batch 256 "
        "--schedule interleaved:3 --remat always",
        /* and no cut the closed form holds (exit 7), where balance-by-size's fits */
        "--model transformer:L=24 --topology dgx-a100 -K 8 -M 16 --batch 512 --schedule zb-v",
    };
    static const char *const others[] = { "gpipe", "uniform", "lingvo", "balance-by-size" };
    int beat = 0;
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        double opt = predicted_step(runs[i], "optimal");
        cr_assert_gt(opt, 0, "%s: optimal does not run or fit", runs[i]);
        for (size_t k = 0; k < sizeof others / sizeof *others; k++) {
            double o = predicted_step(runs[i], others[k]);
            if (o > 0)
                cr_expect_leq(opt, o, "%s: optimal %.6f s, %s %.6f s", runs[i], opt, others[k], o);
            beat += o > opt * (1 + 1e-9);
        }
    }
    cr_expect_gt(beat, 0, "no case where optimal beats another strategy");
    /* the first case exactly: gpipe's cut, 10.541 s */
    cr_expect_float_eq(predicted_step(runs[0], "optimal"), predicted_step(runs[0], "gpipe"), 1e-9);
}

/* partition's row of that choice: "optimal: simulated", under its own --mem-cap (it was
 * "optimal: predict's" under --mem-cap none too, another cut than predict's); where no cut
 * meets the closed form it stands alone, with no "optimal" row or neighbours (another
 * strategy's cut was listed as "optimal", with neighbours of it: helper-84). */
Test(partitioner, partition_lists_the_simulated_optimum_as_such, .timeout = 240)
{
    const char *ps = th_pipesim();
    cr_expect_eq(th_sh("%s partition --model transformer:L=24 --topology dgx-a100 -K 8 -M 16 "
                       "--batch 512 --schedule zb-v --top 40 2>/dev/null > /tmp/pp.$$ && "
                       "grep -qE '^ +1 +balance-by-size=optimal: simulated +3,1,1,1,1,1,1,1,1,"
                       "1,1,1,1,2,3,6 ' /tmp/pp.$$ && ! grep -qE '^ +[0-9]+ +(optimal |optimal=|"
                       "optimal: cut)' /tmp/pp.$$; rc=$?; rm -f /tmp/pp.$$; exit $rc", ps), 0);
    /* under the device's memory (the default) the row is predict's cut */
    const char *a = "--model gpt:layers=48,hidden=1600,heads=25,seq=1024,vocab=50257 "
                    "--topology dgx1-v100 -K 8 -M 32 --batch 64 --schedule interleaved:2";
    cr_expect_eq(th_sh("%s partition %s --top 3 2>/dev/null | grep -qE '^ +1 +gpipe=optimal: "
                       "simulated +4,3,3,3,3,3,3,3,3,3,3,3,3,4,4,2 ' && %s predict %s "
                       "--partition optimal | grep -q '^partition       4,3,3,3,3,3,3,3,3,3,3,3,"
                       "3,4,4,2 '", ps, a, ps, a), 0);
    /* the table says what its labels and its bound are (helper-94: the neighbours' and the
     * simulated optimum's labels, and a bound worse for the fastest row, read as wrong) */
    cr_expect_eq(th_sh("%s partition %s --top 8 2>/dev/null > /tmp/pl.$$ && grep -q '^bound: "
                       "the slowest stage.s time a step, which the optimum minimizes; a=b: one "
                       "cut from both;$' /tmp/pl.$$ && grep -q '^\"optimal: simulated\": the cut "
                       "predict --partition optimal runs' /tmp/pl.$$; rc=$?; rm -f /tmp/pl.$$; "
                       "exit $rc", ps, a), 0);
}

/* One stage a device: where no cut meets the closed form (each class at its own maximum,
 * an upper bound), the strategies' cuts are simulated before exit 7, as with several
 * stages a device. 1f1b's optimum was refused as 1.52 MiB over 16 GiB by the closed form
 * while balance-by-size's cut, 4,5,6,11, peaks at 15.97 GiB in the engine (helper-150):
 * predict --partition optimal exited 7, sweep stored it as not fitting. */
Test(partitioner, one_stage_a_device_simulates_before_no_fit, .timeout = 120)
{
    const char *ps = th_pipesim();
    const char *a = "--model transformer:L=24 --topology pcie-8gpu -K 4 -M 8 --batch 32 "
                    "--schedule 1f1b --remat never";
    cr_expect_eq(th_sh("%s predict %s --partition optimal 2>/dev/null | grep -q "
                       "'^partition       4,5,6,11 '", ps, a), 0);
    cr_expect_eq(th_sh("%s partition %s 2>/dev/null | grep -qE '^ +1 +balance-by-size="
                       "optimal: simulated +4,5,6,11 '", ps, a), 0);
    /* still exit 7 where no strategy's cut fits the engine either */
    cr_expect_eq(th_sh("%s predict --model transformer:L=24 --topology pcie-8gpu -K 2 -M 8 "
                       "--batch 32 --schedule 1f1b --remat never --partition optimal "
                       ">/dev/null 2>&1", ps), 7);
}

/* The fallback's filter (cut_cannot_fit) bounds with the schedule's buffer counts only
 * where the lists built by name run: zb-auto runs lists fitted to the stage costs, which
 * can hold fewer, and the filter dropped its cut that fits (helper-153: 7,4,3,2 at
 * 32.65 ms ran where 4,4,4,4 fits at 22.96 ms). */
Test(partitioner, zb_auto_fallback_keeps_a_cut_that_fits, .timeout = 120)
{
    char dir[64];
    th_tmpdir(dir, sizeof dir, "zbfit");
    th_put(dir, "h.csv",
           "name,kind,fwd_flops,bwd_flops,params,out_bytes,stash_bytes\n"
           "l0,dense,8000000,16000000,2000000,2048,8192\n"
           "l1,dense,8000000,16000000,2000000,16384,8192\n"
           "l2,dense,4000000,8000000,4000000,4096,32768\n"
           "l3,dense,2000000,4000000,2000000,4096,4096\n"
           "l4,dense,4000000,8000000,4000000,4096,8192\n"
           "l5,dense,1000000,2000000,4000000,2048,32768\n"
           "l6,dense,4000000,8000000,2000000,2048,8192\n"
           "l7,dense,8000000,16000000,2000000,4096,32768\n"
           "l8,dense,8000000,16000000,2000000,16384,4096\n"
           "l9,dense,1000000,2000000,1000000,65536,32768\n"
           "l10,dense,1000000,2000000,4000000,65536,8192\n"
           "l11,dense,2000000,4000000,4000000,16384,32768\n"
           "l12,dense,1000000,2000000,1000000,4096,4096\n"
           "l13,dense,2000000,4000000,4000000,65536,4096\n"
           "l14,dense,1000000,2000000,2000000,65536,4096\n"
           "l15,dense,4000000,8000000,4000000,16384,32768\n");
    cr_expect_eq(th_sh("cd %s && %s partition --model h.csv --topology dgx1-v100 -K 4 -M 8 "
                       "--batch 4096 --schedule zb-auto --strategy optimal --mem-cap 390M "
                       "2>/dev/null | grep -qE '^ +1 +optimal: simulated +4,4,4,4 '", dir,
                       th_pipesim()), 0);
    th_sh("rm -rf %s", dir);
}

/* sch_part_stage_counts against its definition: per stage and class (stash,
 * in, out, wgrad), the most held at once replaying the device's program
 * order with sch_mem_effect on a size of 1 in that class alone. The counts
 * read sch_mem_effect's changes from a table by kind, first/last stage and
 * re-materialization: every schedule, K, M and remat exercises its rows. */
Test(partitioner, stage_counts_are_the_ledger_replayed)
{
    static const char *const names[] = { "gpipe", "1f1b", "interleaved:2", "interleaved:3",
                                         "zb-h1", "zb-h2", "zb-v", "zb-auto", "dualpipe-v",
                                         "eager-1f1b", "breadth-first:2" };
    static const enum sch_remat rm[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                         SCH_REMAT_ALWAYS };
    int built = 0;
    for (size_t n = 0; n < sizeof names / sizeof *names; n++)
        for (int K = 1; K <= 4; K++)
            for (int M = 1; M <= 9; M++)
                for (int r = 0; r < 3; r++) {
                    struct sch_schedule *s = NULL;
                    if (sch_schedule_build(names[n], K, M, rm[r], &s) < 0)
                        continue; /* conditions (M % K, M >= 2K) not met */
                    built++;
                    int S = s->n_stages;
                    int64_t *got = calloc((size_t)S * 4, sizeof *got);
                    int64_t *cur = calloc((size_t)S * 4, sizeof *cur);
                    int64_t *want = calloc((size_t)S * 4, sizeof *want);
                    cr_assert(got && cur && want);
                    sch_part_stage_counts(s, got);
                    for (int q = 0; q < 4; q++) {
                        struct sch_stage_mem u = { 0 };
                        int64_t *f = q == 0 ? &u.stash : q == 1 ? &u.in : q == 2 ? &u.out
                                                                              : &u.wgrad;
                        *f = 1;
                        for (int d = 0; d < s->n_devices; d++)
                            for (int i = 0; i < s->n_ops[d]; i++) {
                                const struct sch_op *op = &s->ops[d][i];
                                int64_t a, e, *c = &cur[4 * op->stage + q];
                                sch_mem_effect(s, op, &u, &a, &e);
                                *c += a;
                                if (*c > want[4 * op->stage + q])
                                    want[4 * op->stage + q] = *c;
                                *c += e;
                                if (*c > want[4 * op->stage + q])
                                    want[4 * op->stage + q] = *c;
                            }
                    }
                    for (int i = 0; i < 4 * S; i++)
                        cr_expect_eq(got[i], want[i], "%s K=%d M=%d %s: stage %d class %d",
                                     names[n], K, M, sch_remat_name(rm[r]), i / 4, i % 4);
                    free(got);
                    free(cur);
                    free(want);
                    sch_schedule_free(s);
                }
    cr_expect_gt(built, 800);
}

/* W's deferred output gradients are every layer's of a stage but its last
 * (sch_cost): the closed form charged the last too, so a head of 2e8-byte
 * logits put 3.0 GiB on the last stage of zb-h1 against the engine's 22.9
 * MiB, and a cap of 1 GiB refused the only cut (helper-125). */
Test(partitioner, w_buffers_leave_out_each_stages_last_layer, .timeout = 60)
{
    char dir[64], out[8192];
    th_tmpdir(dir, sizeof dir, "part-w");
    th_put(dir, "h.csv", "name,fwd_flops,params,out_bytes,stash_bytes\n"
                         "a,1e9,1000,1e6,1e6\nhead,1e9,1000,2e8,1e6\n");
    for (int z = 0; z < 2; z++) {
        cr_assert_eq(th_capture(out, sizeof out, "%s partition --model %s/h.csv --topology "
                                "dgx1-v100 -K 2 -M 8 --batch 64 --schedule %s --remat never "
                                "--mem-cap 1G --format json", th_pipesim(), dir,
                                z ? "zb-h2" : "zb-h1"), 0, "%s", out);
        /* each stage's estimate bounds the engine's peak, within twice it */
        const char *p = out;
        int n = 0;
        while ((p = strstr(p, "\"est_bytes\": "))) {
            long long est = atoll(p + 13);
            const char *q = strstr(p, "\"sim_peak_bytes\": ");
            cr_assert(q, "%s", out);
            long long sim = atoll(q + 18);
            cr_expect(est >= sim && est <= 2 * sim, "est %lld, sim %lld", est, sim);
            p = q;
            n++;
        }
        cr_expect_geq(n, 2, "%s", out);
    }
    /* and a cut whose stage ends after a layer of large outputs fits as the engine says
     * (helper-129: charging a stage the W buffer of the layer before its start refused
     * 3,2,2 at 43 040 bytes, where the engine holds 42 040 and the old charge 42 240) */
    th_put(dir, "w.csv", "name,kind,fwd_flops,bwd_flops,params,out_bytes,stash_bytes\n"
           "l0,dense,5e6,4e6,10,1000,50\nl1,dense,1e6,4e7,1000,100,2000\n"
           "l2,dense,2e7,4e7,1000,100,2000\nl3,dense,5e6,4e6,1000,100,50\n"
           "l4,dense,2e6,4e7,100,1000,100\nl5,dense,2e7,2e6,10,100,20000\n"
           "l6,dense,5e6,2e6,10,100,300\n");
    th_put(dir, "w43.json", "{\"name\": \"t\", \"devices\": [{\"name\": \"d\", \"count\": 3, "
           "\"flops\": 1e12, \"memory\": 43000}], \"links\": [{\"name\": \"bus\", "
           "\"endpoints\": \"*\", \"bandwidth\": 1e7, \"latency\": 1e-6, \"shared\": true}]}");
    cr_expect_eq(th_sh("%s predict --model %s/w.csv --topology %s/w43.json -K 3 -M 2 --batch 2 "
                       "--schedule zb-h1 --remat never --partition optimal 2>&1 | grep -q "
                       "'every stage fits'", th_pipesim(), dir, dir), 0);
    /* under an allocator overhead the layers' bytes round up: the ledger rounds a stage's
     * sum once (helper-129: 3 estimated against 4 held, 6 stashes of 1.2 bytes) */
    th_put(dir, "r.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,1e6,0,0,1\n"
           "b,1e6,0,0,1\nc,1e6,0,0,1\nd,1e6,0,0,1\ne,1e6,0,0,1\nf,1e6,0,0,1\n");
    th_put(dir, "r.json", "{\"name\": \"t\", \"memory_policy\": {\"optimizer\": \"fp32-adam\", "
           "\"allocator_overhead\": 0.2}, \"devices\": [{\"name\": \"d\", \"count\": 2, "
           "\"flops\": 1e12, \"memory\": 16e9}], \"links\": [{\"name\": \"l\", \"endpoints\": "
           "[\"d0\", \"d1\"], \"bandwidth\": 1e10}]}");
    cr_assert_eq(th_capture(out, sizeof out, "%s partition --model %s/r.csv --topology %s/r.json "
                            "-K 2 -M 1 --batch 1 --remat never --strategy uniform --format json",
                            th_pipesim(), dir, dir), 0, "%s", out);
    const char *e = strstr(out, "\"est_bytes\": "), *q = e ? strstr(e, "\"sim_peak_bytes\": ")
                                                           : NULL;
    cr_assert(e && q, "%s", out);
    cr_expect_geq(atoll(e + 13), atoll(q + 18), "%s", out);
    /* and without an overhead, fractional bytes per sample (helper-133: 7 bytes under the
     * engine's peak on device 3 of 1,1,1,3, zb-h2) */
    th_put(dir, "f.csv", "name,kind,fwd_flops,bwd_flops,params,out_bytes,stash_bytes,"
           "carry_bytes,stash_shared_bytes\n"
           "l0,attn,5.4584e+08,1.0917e+09,4406,3645,0,0,0\n"
           "l1,dense,4.3994e+08,8.7988e+08,25608,841,0,177.292,0\n"
           "l2,conv,5.3479e+08,1.0696e+09,22658,2049.53,6883.46,0,3465.29\n"
           "l3,dense,3.7353e+08,7.4706e+08,44567,2146.16,5393.73,0,0\n"
           "l4,dense,5.5551e+08,1.111e+09,45449,4121.36,0,373.914,0\n"
           "l5,dense,3.1086e+08,6.2172e+08,15278,3540.23,0,2973.27,0\n");
    cr_assert_eq(th_capture(out, sizeof out, "%s partition --model %s/f.csv --topology "
                            "chain-8-ideal -K 4 -M 8 --batch 24 --schedule zb-h2 --remat never "
                            "--format json --top 20", th_pipesim(), dir), 0, "%s", out);
    for (const char *p = out; (p = strstr(p, "\"est_bytes\": "));) {
        const char *sp = strstr(p, "\"sim_peak_bytes\": ");
        cr_assert(sp, "%s", out);
        cr_expect_geq(atoll(p + 13), atoll(sp + 18), "%.200s", p);
        p = sp;
    }
    th_sh("rm -rf %s", dir);
}

/* The no-fit message gives its sizes in the unit that reads (helper-138:
 * "needing 0.02355 GiB for 0.0009313 GiB"). */
Test(partitioner, the_no_fit_message_reads_its_sizes)
{
    char err[1024];
    cr_assert_eq(th_capture(err, sizeof err, "%s partition --model mlp:layers=8,width=4096 "
                            "--topology chain-8-ideal -K 2 -M 2 --batch 64 --mem-cap 1MB 2>&1",
                            th_pipesim()), 7);
    cr_expect(strstr(err, "needing 773.19 MiB for 976.56 KiB of memory, 772.23 MiB over"), "%s",
              err);
}
