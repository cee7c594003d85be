/* The partitioner against brute force over every partition, and its edge
 * cases; the model layer against sim_costs and the simulator. */
#include "helpers.h"

#include <gsl/gsl_rng.h>

#include "sim/sim_partitioner.h"

#define MAXL 12

struct inst {
    int L, K, same, capped;
    int64_t pre[5][MAXL + 1], in[5][MAXL + 1], out[5][MAXL + 1];
    int64_t mpre[5][MAXL + 1], min_[5][MAXL + 1], mout[5][MAXL + 1];
    struct sim_part_cost time[5], mem[5];
    struct sim_part_problem p;
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
        x->time[s] = (struct sim_part_cost){ x->pre[s], x->in[s], x->out[s], 0 };
        int64_t cap = (int64_t)gsl_rng_uniform_int(r, 80) + 10;
        x->mem[s] = (struct sim_part_cost){ x->mpre[s], x->min_[s], x->mout[s], -cap };
        if (same && s)
            x->mem[s].bias = x->mem[0].bias;
    }
    x->p = (struct sim_part_problem){ L, K, x->time, capped ? x->mem : NULL, same };
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
            int64_t v = sim_part_cost_eval(&x->time[s], x->L, first[s], first[s + 1]);
            if (v > bn)
                bn = v;
            int64_t c = x->pre[s][first[s + 1]] - x->pre[s][first[s]];
            sq += c * c;
            if (x->p.mem && sim_part_cost_eval(&x->mem[s], x->L, first[s], first[s + 1]) > 0)
                ok = 0;
        }
        if (ok && bn < *best)
            *best = bn;
        if (sq < *best_sq)
            *best_sq = sq;
    }
}

static void check_valid(const struct sim_partition *p, int L, int K)
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
        struct sim_partition *p;
        int rc = sim_part_solve(&x.p, &p, &got);
        cases++;
        if (best == INT64_MAX) {
            cr_assert_eq(rc, -SIM_ENOFIT, "case %d: expected no fit, rc %d", it, rc);
            nofit++;
            continue;
        }
        cr_assert_eq(rc, 0, "case %d: %s", it, sim_errmsg());
        check_valid(p, L, K);
        int feasible;
        cr_assert_eq(got, best, "case %d (L=%d K=%d same=%d capped=%d): %lld != brute %lld", it,
                     L, K, same, capped, (long long)got, (long long)best);
        cr_assert_eq(sim_part_bottleneck(&x.p, p, NULL, &feasible), best);
        cr_assert(feasible);
        sim_partition_free(p);
        fitted += capped;

        struct sim_partition *q;
        cr_assert_eq(sim_part_min_sq_sum(&x.p, &q), 0, "%s", sim_errmsg());
        check_valid(q, L, K);
        int64_t sq = 0;
        for (int s = 0; s < K; s++) {
            int64_t c = x.pre[s][q->first[s + 1]] - x.pre[s][q->first[s]];
            sq += c * c;
        }
        cr_assert_eq(sq, best_sq, "case %d: sum of squares %lld != brute %lld", it,
                     (long long)sq, (long long)best_sq);
        sim_partition_free(q);
    }
    gsl_rng_free(r);
    cr_assert_geq(cases, 500);
    cr_assert_geq(fitted, 100, "too few capped cases fitted (%d)", fitted);
    cr_assert_geq(nofit, 20, "too few infeasible cases (%d)", nofit);
}

static struct sim_part_problem plain(int L, int K, const int64_t *cost, int64_t *pre,
                                     struct sim_part_cost *tc)
{
    pre[0] = 0;
    for (int i = 0; i < L; i++)
        pre[i + 1] = pre[i] + cost[i];
    *tc = (struct sim_part_cost){ pre, NULL, NULL, 0 };
    return (struct sim_part_problem){ L, K, tc, NULL, 1 };
}

Test(partitioner, heavy_last_layer)
{
    int64_t c[] = { 1, 1, 1, 1, 1, 1, 1, 10 }, pre[9], bn;
    struct sim_part_cost tc;
    struct sim_part_problem pb = plain(8, 2, c, pre, &tc);
    struct sim_partition *p;
    cr_assert_eq(sim_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 10);
    cr_assert_eq(p->first[1], 7, "the 10 stands alone");
    sim_partition_free(p);
}

Test(partitioner, edge_cases_k_equals_l_and_one)
{
    int64_t c[] = { 4, 9, 2, 7, 7, 1 }, pre[7], bn;
    struct sim_part_cost tc;
    struct sim_part_problem pb = plain(6, 6, c, pre, &tc);
    struct sim_partition *p;
    cr_assert_eq(sim_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 9);
    for (int s = 0; s <= 6; s++)
        cr_assert_eq(p->first[s], s);
    sim_partition_free(p);
    pb.n_stages = 1;
    cr_assert_eq(sim_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 30);
    cr_assert_eq(p->first[1], 6);
    sim_partition_free(p);
    pb.same = 0; /* the layered path agrees */
    pb.n_stages = 6;
    struct sim_part_cost six[6] = { tc, tc, tc, tc, tc, tc };
    pb.time = six;
    cr_assert_eq(sim_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 9);
    sim_partition_free(p);
}

Test(partitioner, k_greater_than_l_is_a_clear_error)
{
    int64_t c[] = { 1, 2, 3 }, pre[4], bn;
    struct sim_part_cost tc;
    struct sim_part_problem pb = plain(3, 4, c, pre, &tc);
    struct sim_partition *p = (void *)1;
    cr_assert_eq(sim_part_solve(&pb, &p, &bn), -SIM_ENOFIT);
    cr_assert_null(p);
    cr_assert(strstr(sim_errmsg(), "4 stages but the model has only 3 layers"), "%s",
              sim_errmsg());
    cr_assert_eq(sim_part_min_sq_sum(&pb, &p), -SIM_ENOFIT);
    pb.n_stages = 0;
    cr_assert_eq(sim_part_solve(&pb, &p, &bn), -SIM_EUSAGE);
}

Test(partitioner, memory_cap_changes_the_answer)
{
    /* time wants [0,1,2 | 3]; memory of layers 0..2 together is over the cap */
    int64_t c[] = { 1, 1, 1, 3 }, pre[5], mpre[5] = { 0, 5, 10, 15, 16 }, bn;
    struct sim_part_cost tc, mc = { mpre, NULL, NULL, -10 };
    struct sim_part_problem pb = plain(4, 2, c, pre, &tc);
    struct sim_partition *p;
    cr_assert_eq(sim_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(bn, 3);
    cr_assert_eq(p->first[1], 3);
    sim_partition_free(p);
    pb.mem = &mc;
    cr_assert_eq(sim_part_solve(&pb, &p, &bn), 0);
    cr_assert_eq(p->first[1], 2, "[0,1 | 2,3]: memory 10 and 6");
    cr_assert_eq(bn, 4);
    sim_partition_free(p);
    mc.bias = -7; /* 16 bytes over 2 stages of 7: impossible */
    cr_assert_eq(sim_part_solve(&pb, &p, &bn), -SIM_ENOFIT);
}
