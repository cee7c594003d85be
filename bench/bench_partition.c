/* bench_partition: the optimal partitioner on L = 100 000 layers, K = 1024
 * stages (target < 100 ms), with and without boundary costs, beside the
 * general (layered) path on a smaller problem; and sweep throughput in
 * configurations per second (ana_sweep on a generated MLP, 1 and 2 workers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "analysis/ana_sweep.h"
#include "models/mdl_gen.h"
#include "models/mdl_topology.h"
#include "base/ps_error.h"
#include "sched/sch_partitioner.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Best of `reps` runs, in seconds. */
static double time_solve(const struct sch_part_problem *p, int reps, int64_t *bn)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        struct sch_partition *part;
        double t0 = now();
        if (sch_part_solve(p, &part, bn) < 0) {
            fprintf(stderr, "bench_partition: %s\n", ps_errmsg());
            exit(1);
        }
        double t = now() - t0;
        sch_partition_free(part);
        if (t < best)
            best = t;
    }
    return best;
}

static int bench_partitioner(void)
{
    enum { L = 100000, K = 1024 };
    int64_t *pre = malloc(sizeof *pre * (L + 1)), *x = malloc(sizeof *x * (L + 1));
    if (!pre || !x)
        return 1;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    pre[0] = 0;
    for (int i = 0; i <= L; i++) {
        if (i)
            pre[i] = pre[i - 1] + 200000 + (int64_t)gsl_rng_uniform_int(r, 1800000); /* ns */
        x[i] = (int64_t)gsl_rng_uniform_int(r, 500000);
    }
    printf("seed 42 (gsl mt19937)\n");
    struct sch_part_cost plain = { pre, NULL, NULL, 0 }, bound = { pre, x, x, 0 };
    struct sch_part_problem p = { L, K, &plain, NULL, 1 };
    int64_t bn;
    double t = time_solve(&p, 5, &bn);
    printf("partition L=%d K=%d, compute only:      %8.2f ms  (target 100 ms: %.3f of it), "
           "bottleneck %.6f s\n", L, K, t * 1e3, t / 0.1, (double)bn * 1e-9);
    p.time = &bound;
    t = time_solve(&p, 5, &bn);
    printf("partition L=%d K=%d, + boundary costs:  %8.2f ms  (target 100 ms: %.3f of it), "
           "bottleneck %.6f s\n", L, K, t * 1e3, t / 0.1, (double)bn * 1e-9);
    /* the general path (per-stage costs) on the same arrays, smaller K */
    enum { K2 = 64 };
    struct sch_part_cost *per = malloc(sizeof *per * K2);
    for (int s = 0; s < K2; s++)
        per[s] = bound;
    struct sch_part_problem q = { L, K2, per, NULL, 0 };
    int64_t bn2;
    double tl = time_solve(&q, 1, &bn2);
    q.same = 1;
    double tf = time_solve(&q, 3, &bn);
    printf("partition L=%d K=%d: layered (general) path %.2f ms, fast path %.2f ms: "
           "ratio %.1fx, same bottleneck: %s\n", L, K2, tl * 1e3, tf * 1e3, tl / tf,
           bn == bn2 ? "yes" : "NO");
    free(per);
    gsl_rng_free(r);
    free(pre);
    free(x);
    return bn == bn2 ? 0 : 1;
}

static int sweep_once(const struct mdl_profile *prof, const struct mdl_topology *topo,
                      const char *db, int jobs, double *rate)
{
    long Ks[] = { 1, 2, 4, 8 }, Ms[] = { 1, 2, 4, 8, 16, 32 }, batch[] = { 64, 128, 256 };
    enum sch_remat remat[] = { SCH_REMAT_NEVER, SCH_REMAT_ALWAYS };
    enum sch_part_strategy strat[] = { SCH_PART_UNIFORM, SCH_PART_OPTIMAL };
    struct ana_sweep_spec sp = {
        .profile = prof, .topo = topo, .model_arg = "mlp:layers=64,width=1024",
        .topo_arg = "<chain>", .command = "bench_partition", .Ks = Ks, .nK = 4, .Ms = Ms,
        .nM = 6, .batches = batch, .nbatch = 3, .remats = remat, .nremat = 2,
        .strategies = strat, .nstrategy = 2, .jobs = jobs, .quiet = 1,
    };
    struct ana_sweep_stats st;
    double t0 = now();
    if (ana_sweep_run(&sp, db, &st) < 0) {
        fprintf(stderr, "bench_partition: %s\n", ps_errmsg());
        return 1;
    }
    double t = now() - t0;
    *rate = st.total / t;
    printf("sweep: %d configurations (%d stored, into SQLite) in %.3f s with %d worker%s: "
           "%.1f configurations/s\n", st.total, st.done, t, jobs, jobs > 1 ? "s" : "", *rate);
    unlink(db);
    return 0;
}

static int bench_sweep(void)
{
    char dir[] = "/tmp/pipesim-bench-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char db[128];
    snprintf(db, sizeof db, "%s/sweep.db", dir);
    struct mdl_profile *prof = NULL;
    struct mdl_topology *topo = NULL;
    struct mdl_device d = { .flops = 1e13, .memory = 16e9, .mem_bandwidth = 9e11,
                            .eff_max = 0.5, .batch_half = 8, .overhead_s = 1e-5 };
    int rc = 1;
    double r1, r2;
    if (mdl_model_open("mlp:layers=64,width=1024", &prof) < 0 ||
        mdl_topology_chain(8, &d, 1.2e10, 5e-6, &topo) < 0) {
        fprintf(stderr, "bench_partition: %s\n", ps_errmsg());
        goto out;
    }
    if (sweep_once(prof, topo, db, 1, &r1) || sweep_once(prof, topo, db, 2, &r2))
        goto out;
    printf("sweep: 2 workers / 1 worker = %.2fx (2 cores shared with other work)\n", r2 / r1);
    rc = 0;
out:
    mdl_profile_free(prof);
    mdl_topology_free(topo);
    rmdir(dir);
    return rc;
}

int main(void)
{
    int rc = bench_partitioner();
    return rc | bench_sweep();
}
