/* stu_paper: the min-max partition against brute force, the partitioner
 * adapters, the batch policy and --tables parsing (`pipesim paper` end to
 * end is tests/test_paper_cli.c). */
#include "helpers.h"

#include "studies/stu_paper.h"
#include "studies/stu_paper_int.h"

#include <gsl/gsl_rng.h>

/* Criterion (2.4) leaks a runner allocation, which the asan target reports,
 * when several suites (or many tests) of one binary carry timeouts: one timed
 * suite per file (the one with the loop), the end-to-end tests in
 * tests/test_paper_cli.c. */
TestSuite(paper_part, .timeout = 30);

/* ---- partitions --------------------------------------------------------- */

/* Smallest possible largest stage over every contiguous K-split of c[a..n). */
static double brute(const double *c, int a, int n, int K)
{
    if (K == 1) {
        double s = 0;
        for (int i = a; i < n; i++)
            s += c[i];
        return s;
    }
    double best = 1e300, s = 0;
    for (int b = a + 1; b <= n - (K - 1); b++) {
        s += c[b - 1];
        double rest = brute(c, b, n, K - 1);
        double m = s > rest ? s : rest;
        if (m < best)
            best = m;
    }
    return best;
}

static double max_stage(const struct sch_partition *p, const double *sum)
{
    double m = 0;
    for (int s = 0; s < p->n_stages; s++) {
        cr_assert_lt(p->first[s], p->first[s + 1], "stage %d is empty", s);
        double w = sum[p->first[s + 1]] - sum[p->first[s]];
        m = w > m ? w : m;
    }
    return m;
}

/* stu_part_time is the partitioner's solver on per-micro-batch compute: its
 * slowest stage must be the brute-force minimum of 2F + B (remat) per layer,
 * in whole milliseconds so that every sum is exact. */
Test(paper_part, time_matches_brute_force)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20181116); /* seed printed in failures via the case index */
    struct mdl_topology *t = th_chain(1, 0, 1e9, 0);
    for (int it = 0; it < 300; it++) {
        int n = 1 + (int)gsl_rng_uniform_int(r, 11);
        int K = 1 + (int)gsl_rng_uniform_int(r, (unsigned long)n);
        double f[12], b[12], c[12], sum[13] = { 0 };
        for (int i = 0; i < n; i++) {
            f[i] = 1e6 * (double)gsl_rng_uniform_int(r, 20); /* ns; zeros included */
            b[i] = 1e6 * (double)gsl_rng_uniform_int(r, 40);
            c[i] = (2 * f[i] + b[i]) / 1e6; /* ms */
            sum[i + 1] = sum[i] + c[i];
        }
        struct mdl_profile *p = th_profile(n, f, b, 1, NULL, NULL, 0);
        struct sch_partition *part;
        cr_assert_eq(stu_part_time(p, t, K, 1, SCH_REMAT_ALWAYS, &part), 0, "%s", ps_errmsg());
        cr_assert_eq(part->n_stages, K);
        cr_assert_eq(part->first[0], 0);
        cr_assert_eq(part->first[K], n);
        cr_assert_eq(max_stage(part, sum), brute(c, 0, n, K), "case %d: n=%d K=%d", it, n, K);
        sch_partition_free(part);
        mdl_profile_free(p);
    }
    mdl_topology_free(t);
    gsl_rng_free(r);
}

Test(paper_part, time_errors)
{
    double f[2] = { 1e6, 1e6 }, b[2] = { 2e6, 2e6 };
    struct mdl_profile *p = th_profile(2, f, b, 1, NULL, NULL, 0);
    struct mdl_topology *t = th_chain(1, 0, 1e9, 0);
    struct sch_partition *part = (void *)1;
    cr_assert_eq(stu_part_time(p, t, 3, 1, SCH_REMAT_ALWAYS, &part), -PS_ENOFIT);
    cr_assert_null(part);
    cr_assert_eq(stu_part_time(p, t, 0, 1, SCH_REMAT_ALWAYS, &part), -PS_EUSAGE);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* 8 equal layers of 1 ms forward, 2 ms backward at batch 1, then one of 10. */
static struct mdl_profile *skewed(void)
{
    double f[9], b[9], out[9], st[9];
    for (int i = 0; i < 9; i++) {
        f[i] = i < 8 ? 1e6 : 10e6;
        b[i] = 2 * f[i];
        out[i] = 100 * (i + 1);
        st[i] = 1000;
    }
    return th_profile(9, f, b, 1, out, st, 10);
}

Test(paper_part, time_and_prefix)
{
    struct mdl_profile *p = skewed();
    struct mdl_topology *t = th_chain(4, 0, 1e9, 0);
    struct sch_partition *a, *h;
    /* With remat a layer costs 2F + B = 4 ms (the last 40): the optimum is the
     * heavy layer alone (40); the greedy fills the first stage up to the
     * bound, leaving one layer to each later stage. */
    cr_assert_eq(stu_part_time(p, t, 3, 1, SCH_REMAT_ALWAYS, &a), 0, "%s", ps_errmsg());
    char buf[64];
    sch_partition_format(a, buf, sizeof buf);
    cr_assert_str_eq(buf, "7,1,1");
    /* Prefix: total 72, targets 24 and 48: cuts at 6 (24) and 8 (32 is
     * nearer 48 than 72), which leaves the heavy layer its own stage. */
    cr_assert_eq(stu_part_prefix(p, t, 3, 1, SCH_REMAT_ALWAYS, &h), 0, "%s", ps_errmsg());
    sch_partition_format(h, buf, sizeof buf);
    cr_assert_str_eq(buf, "6,2,1");
    sch_partition_free(a);
    sch_partition_free(h);
    /* Uniform costs: the prefix heuristic is the uniform partition. */
    struct mdl_profile *u = th_uniform(8, 1e6, 2e6, 1, 0, 0, 1);
    cr_assert_eq(stu_part_prefix(u, t, 4, 1, SCH_REMAT_NEVER, &h), 0);
    sch_partition_format(h, buf, sizeof buf);
    cr_assert_str_eq(buf, "2,2,2,2");
    sch_partition_free(h);
    mdl_profile_free(u);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

Test(paper_part, ranked_is_no_slower_than_the_optimum)
{
    /* The best simulated of the optimum and its neighbours can only beat
     * the optimum itself, and fits where the optimum fits. */
    struct mdl_profile *p;
    cr_assert_eq(stu_paper_amoeba(18, 64, 0, &p), 0, "%s", ps_errmsg());
    struct mdl_topology *t = th_chain(4, 1e11, 1e10, 1e-6);
    struct sch_partition *opt, *best;
    cr_assert_eq(stu_paper_strategy(p, t, 4, 8, 4, SCH_REMAT_ALWAYS, SCH_PART_OPTIMAL, 1, &opt),
                 0, "%s", ps_errmsg());
    cr_assert_eq(stu_paper_ranked(p, t, 4, 8, 32, SCH_REMAT_ALWAYS, &best), 0, "%s",
                 ps_errmsg());
    struct ana_prediction *a, *b;
    cr_assert_eq(stu_paper_eval(p, t, 4, 8, 32, SCH_REMAT_ALWAYS, opt, 0, &a), 0);
    cr_assert_eq(stu_paper_eval(p, t, 4, 8, 32, SCH_REMAT_ALWAYS, best, 0, &b), 0);
    cr_assert_leq(b->step_s, a->step_s);
    cr_assert(b->fits);
    ana_prediction_free(a);
    ana_prediction_free(b);
    sch_partition_free(opt);
    sch_partition_free(best);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* ---- batch policy, --tables --------------------------------------------- */

Test(paper_policy, halves_the_batch_until_it_fits)
{
    /* 4 layers, 1000 B stash per sample each, 2 devices of 10 kB: with M = 2
     * and remat a stage keeps 2 inputs and recomputes one micro-batch; the
     * policy must land on the largest power-of-two batch whose run fits. */
    double f[4] = { 1e6, 1e6, 1e6, 1e6 }, b[4] = { 2e6, 2e6, 2e6, 2e6 };
    double out[4] = { 100, 100, 100, 100 }, st[4] = { 1000, 1000, 1000, 1000 };
    struct mdl_profile *p = th_profile(4, f, b, 1, out, st, 0);
    struct mdl_device d = { .flops = 1e12, .memory = 1e4, .eff_max = 1 };
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_chain(2, &d, 1e9, 0, &t), 0);
    struct ana_prediction *r;
    cr_assert_eq(stu_paper_fit_batch(p, t, 2, 2, 64, 0, &r), 0, "%s", ps_errmsg());
    cr_assert(r->fits);
    double got = r->batch;
    /* the policy's partition, GPipe's own (Lingvo's floor puts the layer
     * that ends exactly at half the FLOPs into the second stage: 1,3) */
    struct sch_partition *u = sch_partition_new(2, 4);
    cr_assert(u);
    for (int s = 0; s < 2; s++)
        u->first[s + 1] = u->first[s] + r->stages[s].n_layers;
    cr_assert_eq(u->first[1], 1);
    ana_prediction_free(r);
    /* Twice the chosen batch must not fit; the chosen one must. */
    cr_assert_eq(stu_paper_eval(p, t, 2, 2, 2 * got, SCH_REMAT_ALWAYS, u, 0, &r), 0);
    cr_assert_not(r->fits, "batch %g fits too", 2 * got);
    ana_prediction_free(r);
    cr_assert_lt(got, 64);
    /* Nothing fits (1 kB devices): the run at the start batch, unfit. */
    t->devices[0].memory = t->devices[1].memory = 1e3;
    cr_assert_eq(stu_paper_fit_batch(p, t, 2, 2, 64, 0, &r), 0);
    cr_assert_not(r->fits);
    cr_assert_float_eq(r->batch, 64, 0);
    ana_prediction_free(r);
    sch_partition_free(u);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

Test(paper_policy, parse_tables)
{
    unsigned m;
    cr_assert_eq(stu_paper_parse_tables("1,3", &m), 0);
    cr_assert_eq(m, STU_PAPER_T1 | STU_PAPER_T3);
    cr_assert_eq(stu_paper_parse_tables("partitions,2", &m), 0);
    cr_assert_eq(m, STU_PAPER_PARTS | STU_PAPER_T2);
    cr_assert_eq(stu_paper_parse_tables("all", &m), 0);
    cr_assert_eq(m, STU_PAPER_ALL);
    cr_assert_eq(stu_paper_parse_tables("1,4", &m), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "'4'"), "%s", ps_errmsg());
    cr_assert_eq(stu_paper_parse_tables("1,", &m), -PS_EUSAGE);
    cr_assert_eq(stu_paper_parse_tables("", &m), -PS_EUSAGE);
    cr_assert_eq(stu_paper_parse_tables("12", &m), -PS_EUSAGE);
    /* each item once; 'all' alone, whichever side the other item is on */
    cr_assert_eq(stu_paper_parse_tables("2,partitions,2", &m), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "'2' given twice"), "%s", ps_errmsg());
    cr_assert_eq(stu_paper_parse_tables("1,all", &m), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "'all' names every table; give it alone"), "%s", ps_errmsg());
    cr_assert_eq(stu_paper_parse_tables("all,1", &m), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "'all' names every table; give it alone"), "%s", ps_errmsg());
    cr_assert_eq(stu_paper_parse_tables("all,all", &m), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "'all' given twice"), "%s", ps_errmsg());
}


/* GPipe's partition of the paper's models (stu_paper_gpipe_part): a
 * Transformer as Lingvo's GPipe Transformer stack cuts it, ceil(L / K)
 * layers per stage and the rest on the last, the embedding with the first
 * stage and the softmax with the last: L = 48 on 8 stages 7,6,...,6,7;
 * L = 103 (13 K - 1, the paper's Pipeline-8) 14,13,...,13; L = 10 on 4
 * 4,3,3,2; where the ceiling leaves a stage none (L = 9 on 4) the layers
 * spread evenly, and with fewer layers than stages every layer counts;
 * AmoebaNet takes the library's FLOP shares (sch_partition_lingvo). */
static void gpipe_part_is(int L, int K, const char *want)
{
    struct mdl_profile *p;
    cr_assert_eq(stu_paper_transformer(L, 1, &p), 0, "%s", ps_errmsg());
    struct sch_partition *q;
    cr_assert_eq(stu_paper_gpipe_part(p, NULL, K, 1, 1, SCH_REMAT_ALWAYS, &q), 0, "%s",
                 ps_errmsg());
    char got[256];
    sch_partition_format(q, got, sizeof got);
    cr_expect_str_eq(got, want, "L = %d, K = %d", L, K);
    sch_partition_free(q);
    mdl_profile_free(p);
}

Test(paper_part, gpipe_partitions_of_the_papers_models)
{
    gpipe_part_is(48, 8, "7,6,6,6,6,6,6,7");
    gpipe_part_is(103, 8, "14,13,13,13,13,13,13,13");
    gpipe_part_is(10, 4, "4,3,3,2");
    gpipe_part_is(9, 4, "3,2,2,4");
    gpipe_part_is(3, 4, "2,1,1,1");
    struct mdl_profile *p;
    cr_assert_eq(stu_paper_amoeba(18, 256, 1, &p), 0, "%s", ps_errmsg());
    struct mdl_topology *t = th_chain(8, 1e11, 1e10, 1e-6);
    struct sch_partition *q;
    cr_assert_eq(stu_paper_gpipe_part(p, t, 8, 4, 32, SCH_REMAT_ALWAYS, &q), 0, "%s",
                 ps_errmsg());
    char got[64];
    sch_partition_format(q, got, sizeof got);
    cr_expect_str_eq(got, "4,3,2,3,3,2,3,4"); /* FLOP shares, docs/reproductions.md */
    sch_partition_free(q);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* An error cell is never cut: past 7 digits it is in exponent notation
 * (helper-103: '+103216665958726849643189560696' in a 32-byte cell). */
Test(paper_policy, error_cells_are_never_cut)
{
    char e[32];
    cr_expect_str_eq(stu_paper_err(1.5, 1, e, sizeof e), "+50.0 %");
    cr_expect_str_eq(stu_paper_err(1e300, 1e-300, e, sizeof e), "+inf %");
    cr_expect_str_eq(stu_paper_err(1.03e27, 1, e, sizeof e), "+1.03e+29 %");
    cr_expect_str_eq(stu_paper_err(1e-30, 1e30, e, sizeof e), "-100.0 %");
}
