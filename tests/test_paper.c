/* ana_paper: the balanced partitions against brute force, the memory
 * estimate, the batch policy, --tables parsing, and `pipesim paper` end to
 * end: it must reproduce the committed results/paper/ byte for byte. */
#include "helpers.h"

#include "analysis/ana_paper.h"
#include "analysis/ana_paper_int.h"

#include <dirent.h>
#include <gsl/gsl_rng.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- partitions --------------------------------------------------------- */

struct arr {
    const double *c;
    double *sum;
};

static double arr_cost(void *ctx, int a, int b)
{
    const struct arr *x = ctx;
    return x->sum[b] - x->sum[a];
}

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

static double max_stage(const struct sim_partition *p, const double *sum)
{
    double m = 0;
    for (int s = 0; s < p->n_stages; s++) {
        cr_assert_lt(p->first[s], p->first[s + 1], "stage %d is empty", s);
        double w = sum[p->first[s + 1]] - sum[p->first[s]];
        m = w > m ? w : m;
    }
    return m;
}

Test(paper_part, minmax_matches_brute_force, .timeout = 20)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20181116); /* seed printed in failures via the case index */
    for (int it = 0; it < 400; it++) {
        int n = 1 + (int)gsl_rng_uniform_int(r, 11);
        int K = 1 + (int)gsl_rng_uniform_int(r, (unsigned long)n);
        double c[12], sum[13] = { 0 };
        for (int i = 0; i < n; i++) {
            c[i] = (double)gsl_rng_uniform_int(r, 50); /* zeros included */
            sum[i + 1] = sum[i] + c[i];
        }
        struct arr x = { c, sum };
        struct sim_partition *p;
        cr_assert_eq(ana_part_minmax(n, K, arr_cost, &x, &p), 0, "%s", sim_errmsg());
        cr_assert_eq(p->n_stages, K);
        cr_assert_eq(p->first[0], 0);
        cr_assert_eq(p->first[K], n);
        cr_assert_eq(max_stage(p, sum), brute(c, 0, n, K), "case %d: n=%d K=%d", it, n, K);
        sim_partition_free(p);
    }
    gsl_rng_free(r);
}

Test(paper_part, minmax_errors)
{
    double sum[3] = { 0, 1, 2 };
    struct arr x = { NULL, sum };
    struct sim_partition *p = (void *)1;
    cr_assert_eq(ana_part_minmax(2, 3, arr_cost, &x, &p), -SIM_ENOFIT);
    cr_assert_null(p);
    cr_assert_eq(ana_part_minmax(2, 0, arr_cost, &x, &p), -SIM_EUSAGE);
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
    struct sim_partition *a, *h;
    /* With remat a layer costs 2F + B = 4 ms (the last 40): the optimum is the
     * heavy layer alone (40); the greedy fills the first stage up to the
     * bound, leaving one layer to each later stage. */
    cr_assert_eq(ana_part_time(p, t, 3, 1, SIM_REMAT_ALWAYS, &a), 0, "%s", sim_errmsg());
    char buf[64];
    sim_partition_format(a, buf, sizeof buf);
    cr_assert_str_eq(buf, "7,1,1");
    /* Prefix: total 72, targets 24 and 48: cuts at 6 (24) and 8 (32 is
     * nearer 48 than 72), which leaves the heavy layer its own stage. */
    cr_assert_eq(ana_part_prefix(p, t, 3, 1, SIM_REMAT_ALWAYS, &h), 0, "%s", sim_errmsg());
    sim_partition_format(h, buf, sizeof buf);
    cr_assert_str_eq(buf, "6,2,1");
    sim_partition_free(a);
    sim_partition_free(h);
    /* Uniform costs: the prefix heuristic is the uniform partition. */
    double f[8] = { 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6 }, b[8];
    for (int i = 0; i < 8; i++)
        b[i] = 2e6;
    struct mdl_profile *u = th_profile(8, f, b, 1, NULL, NULL, 1);
    cr_assert_eq(ana_part_prefix(u, t, 4, 1, SIM_REMAT_NEVER, &h), 0);
    sim_partition_format(h, buf, sizeof buf);
    cr_assert_str_eq(buf, "2,2,2,2");
    sim_partition_free(h);
    mdl_profile_free(u);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

Test(paper_part, memory_estimate_by_hand)
{
    struct mdl_profile *p = skewed();
    /* Stage [2, 5) of 9, M = 4 micro-batches of 2, remat always: params 3 x
     * 10 x 12 B; stash 3000 B once; input out[1] = 200 B kept M times plus 2
     * buffers; output out[4] = 500 B, 2 buffers; all x micro-batch 2. */
    double e = ana_stage_mem_estimate(p, 12, 2, 5, 4, 2, SIM_REMAT_ALWAYS);
    cr_assert_float_eq(e, 360 + 2 * (3000 + 6 * 200 + 2 * 500), 1e-9);
    /* No remat: M stashes, no kept inputs. */
    e = ana_stage_mem_estimate(p, 12, 2, 5, 4, 2, SIM_REMAT_NEVER);
    cr_assert_float_eq(e, 360 + 2 * (4 * 3000 + 2 * 200 + 2 * 500), 1e-9);
    mdl_profile_free(p);
}

Test(paper_part, memory_estimate_is_the_ledger_on_one_device)
{
    struct mdl_profile *p;
    cr_assert_eq(ana_paper_amoeba(18, 64, &p), 0, "%s", sim_errmsg());
    struct mdl_topology *t = th_chain(1, 0, 1e9, 0);
    struct ana_prediction *r;
    cr_assert_eq(ana_paper_eval(p, t, 1, 1, 8, SIM_REMAT_NEVER, NULL, 0, &r), 0, "%s",
                 sim_errmsg());
    double e = ana_stage_mem_estimate(p, t->bytes_per_param, 0, p->n_layers, 1, 8,
                                      SIM_REMAT_NEVER);
    cr_assert_float_eq((double)r->stages[0].peak_mem, e, 1.0);
    ana_prediction_free(r);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

Test(paper_part, memory_partition_balances_the_estimate)
{
    struct mdl_profile *p;
    cr_assert_eq(ana_paper_transformer(24, &p), 0, "%s", sim_errmsg());
    struct mdl_topology *t = th_chain(8, 0, 1e9, 0);
    struct sim_partition *m, *u;
    cr_assert_eq(ana_part_memory(p, t, 8, 32, 1, SIM_REMAT_ALWAYS, &m), 0, "%s", sim_errmsg());
    cr_assert_eq(sim_partition_uniform(8, p->n_layers, &u), 0);
    double wm = 0, wu = 0;
    for (int s = 0; s < 8; s++) {
        double a = ana_stage_mem_estimate(p, 12, m->first[s], m->first[s + 1], 32, 1,
                                          SIM_REMAT_ALWAYS);
        double b = ana_stage_mem_estimate(p, 12, u->first[s], u->first[s + 1], 32, 1,
                                          SIM_REMAT_ALWAYS);
        wm = a > wm ? a : wm;
        wu = b > wu ? b : wu;
    }
    cr_assert_leq(wm, wu);
    sim_partition_free(m);
    sim_partition_free(u);
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
    cr_assert_eq(ana_paper_fit_batch(p, t, 2, 2, 64, 0, &r), 0, "%s", sim_errmsg());
    cr_assert(r->fits);
    double got = r->batch;
    ana_prediction_free(r);
    /* Twice the chosen batch must not fit; the chosen one must. */
    struct sim_partition *u;
    cr_assert_eq(sim_partition_uniform(2, 4, &u), 0);
    cr_assert_eq(ana_paper_eval(p, t, 2, 2, 2 * got, SIM_REMAT_ALWAYS, u, 0, &r), 0);
    cr_assert_not(r->fits, "batch %g fits too", 2 * got);
    ana_prediction_free(r);
    cr_assert_lt(got, 64);
    /* Nothing fits (1 kB devices): the run at the start batch, unfit. */
    t->devices[0].memory = t->devices[1].memory = 1e3;
    cr_assert_eq(ana_paper_fit_batch(p, t, 2, 2, 64, 0, &r), 0);
    cr_assert_not(r->fits);
    cr_assert_float_eq(r->batch, 64, 0);
    ana_prediction_free(r);
    sim_partition_free(u);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

Test(paper_policy, parse_tables)
{
    unsigned m;
    cr_assert_eq(ana_paper_parse_tables("1,3", &m), 0);
    cr_assert_eq(m, ANA_PAPER_T1 | ANA_PAPER_T3);
    cr_assert_eq(ana_paper_parse_tables("partitions,2", &m), 0);
    cr_assert_eq(m, ANA_PAPER_PARTS | ANA_PAPER_T2);
    cr_assert_eq(ana_paper_parse_tables("all", &m), 0);
    cr_assert_eq(m, ANA_PAPER_ALL);
    cr_assert_eq(ana_paper_parse_tables("1,4", &m), -SIM_EUSAGE);
    cr_assert(strstr(sim_errmsg(), "'4'"), "%s", sim_errmsg());
    cr_assert_eq(ana_paper_parse_tables("1,", &m), -SIM_EUSAGE);
    cr_assert_eq(ana_paper_parse_tables("", &m), -SIM_EUSAGE);
    cr_assert_eq(ana_paper_parse_tables("12", &m), -SIM_EUSAGE);
}

/* ---- end to end --------------------------------------------------------- */

static char dir[64];

static void mk(void)
{
    snprintf(dir, sizeof dir, "/tmp/pipesim-paper-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void rm(void) { th_sh("rm -rf %s", dir); }

static int entries(const char *d)
{
    DIR *h = opendir(d);
    if (!h)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(h)))
        n += e->d_name[0] != '.';
    closedir(h);
    return n;
}

static int has_gnuplot(void) { return th_sh("command -v gnuplot >/dev/null 2>&1") == 0; }

/* Every generated text file equals the committed reference byte for byte,
 * and every committed one is generated. */
TestSuite(paper_cli, .init = mk, .fini = rm, .timeout = 60);

Test(paper_cli, reproduces_results_byte_for_byte)
{
    cr_assert_eq(th_sh("%s paper --out %s --quiet", th_pipesim(), dir), 0);
    static const char *const text[] = { "table1.md", "table2.md", "table3.md", "partitions.md",
                                        "table2.dat", "table2.gp", "table3.dat", "table3.gp" };
    for (size_t i = 0; i < sizeof text / sizeof *text; i++)
        cr_expect_eq(th_sh("cmp -s %s/%s results/paper/%s", dir, text[i], text[i]), 0,
                     "%s differs from results/paper/%s: rerun `pipesim paper` and commit",
                     text[i], text[i]);
    /* PNG bytes depend on the gnuplot build: only the signature is checked. */
    if (has_gnuplot())
        for (int i = 0; i < 2; i++) {
            char p[128];
            snprintf(p, sizeof p, "%s/table%d.png", dir, i + 2);
            FILE *f = fopen(p, "rb");
            cr_assert(f, "%s missing", p);
            unsigned char sig[8];
            cr_assert_eq(fread(sig, 1, 8, f), 8);
            fclose(f);
            cr_assert_eq(memcmp(sig, "\x89PNG\r\n\x1a\n", 8), 0, "%s is not a PNG", p);
        }
    cr_assert_eq(entries(dir), 8 + 2 * has_gnuplot(), "unexpected files in %s", dir);
    /* And the reference holds nothing the generator does not make (besides
     * the README section and the committed plots). */
    cr_assert_eq(th_sh("cd results/paper && for f in *; do case $f in README-section.md|*.png) "
                       ";; *) test -e %s/$f || exit 1;; esac; done", dir), 0,
                 "results/paper has a file `pipesim paper` does not write");
}

Test(paper_cli, subset_writes_only_its_files)
{
    cr_assert_eq(th_sh("%s paper --out %s --tables 1,partitions --quiet", th_pipesim(), dir), 0);
    cr_assert_eq(entries(dir), 2);
    cr_assert_eq(th_sh("cmp -s %s/table1.md results/paper/table1.md", dir), 0);
    cr_assert_eq(th_sh("cmp -s %s/partitions.md results/paper/partitions.md", dir), 0);
}

Test(paper_cli, bad_input)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("%s paper --out %s --tables 1,9 2>%s/err", pp, dir, dir), 2);
    cr_assert_eq(th_sh("grep -q \"unknown item '9'\" %s/err", dir), 0);
    cr_assert_eq(th_sh("%s paper --bogus 2>/dev/null", pp), 2);
    cr_assert_eq(th_sh("%s paper extra 2>/dev/null", pp), 2);
    cr_assert_eq(th_sh("%s paper --out 2>/dev/null", pp), 2);
    /* A missing topology names the file; nothing is written. */
    cr_assert_eq(th_sh("mkdir %s/out && %s paper --out %s/out --topologies %s/none 2>%s/err",
                       dir, pp, dir, dir, dir), 5);
    cr_assert_eq(th_sh("grep -q 'tpu-v2.json' %s/err", dir), 0);
    char out[128];
    snprintf(out, sizeof out, "%s/out", dir);
    cr_assert_eq(entries(out), 0);
    /* --out on a file. */
    cr_assert_eq(th_sh("touch %s/file && %s paper --out %s/file --tables 1 2>/dev/null", dir, pp,
                       dir), 5);
    cr_assert_eq(th_sh("%s paper --help | grep -q 'usage: pipesim paper'", pp), 0);
}
