/* make bench: simulated ops per second for a K=1024, M=4096 GPipe step
 * (target >= 20 M ops/s on one core, the step under 1 s end to end:
 * generate + build + run). Wall and user CPU time for each phase: on a
 * shared machine the user time is the steadier figure. */
#include "models/mdl_gen.h"
#include "sched/sch_cost.h"
#include "sim/sim_engine.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void) /* user + system time of this process */
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

int main(void)
{
    const int K = 1024, M = 4096;
    struct mdl_profile *p;
    struct mdl_topology *t;
    struct mdl_device d = { .flops = 1e14, .memory = 1e12, .mem_bandwidth = 1e12, .eff_max = 1 };
    struct sch_schedule *s;
    struct sch_partition *part;
    struct sch_costs *c;
    sim_engine *e;
    if (mdl_gen_mlp(K, 1024, 0, &p) < 0 || mdl_topology_chain(K, &d, 1e11, 1e-6, &t) < 0 ||
        sch_partition_uniform(K, K, &part) < 0 || sch_costs_new(p, t, part, NULL, 8, &c) < 0) {
        fprintf(stderr, "bench: %s\n", ps_errmsg());
        return 1;
    }
    double t0 = now_s(), c0 = cpu_s();
    if (sch_schedule_gpipe_compact(K, M, SCH_REMAT_EXCEPT_LAST, &s) < 0) {
        fprintf(stderr, "bench: %s\n", ps_errmsg());
        return 1;
    }
    double t1 = now_s(), c1 = cpu_s();
    if (sim_engine_new(s, c, t, NULL, &e) < 0) {
        fprintf(stderr, "bench: %s\n", ps_errmsg());
        return 1;
    }
    double t2 = now_s(), c2 = cpu_s();
    if (sim_engine_run(e) < 0) {
        fprintf(stderr, "bench: %s\n", ps_errmsg());
        return 1;
    }
    double t3 = now_s(), c3 = cpu_s();
    const struct sim_result *r = sim_engine_result(e);
    int64_t compute = 0;
    for (int i = 0; i < s->run_first[K]; i++)
        for (int j = 0; j < s->runs[i].n; j++)
            compute += s->runs[i].count * sch_op_is_compute(s->runs[i].kind[j]);
    double total = t3 - t0, cpu = c3 - c0;
    printf("engine: GPipe K=%d M=%d except_last: %lld ops (%lld compute, %lld transfer)\n", K,
           M, (long long)r->n_ops, (long long)compute, (long long)(r->n_ops - compute));
    printf("engine: wall: generate %.3f s, build %.3f s (incl. validation), run %.3f s; "
           "total %.3f s (target < 1 s: %.2fx of bound)\n", t1 - t0, t2 - t1, t3 - t2, total,
           total / 1.0);
    printf("engine: cpu:  generate %.3f s, build %.3f s, run %.3f s; total %.3f s "
           "(target < 1 s: %.2fx of bound)\n", c1 - c0, c2 - c1, c3 - c2, cpu, cpu / 1.0);
    printf("engine: %.1f M ops/s end to end (%.1f M per cpu second), %.1f M ops/s in the "
           "event loop (target >= 20 M ops/s end to end: %.2fx)\n", r->n_ops / total / 1e6,
           r->n_ops / cpu / 1e6, r->n_ops / (t3 - t2) / 1e6, r->n_ops / total / 20e6);
    printf("engine: %lld events, at most %d pending\n", (long long)r->n_events, r->peak_queue);
    printf("engine: simulated step %.3f ms (%lld ns), bubble %.4f (analytic %.4f without "
           "transfers)\n", sch_time_to_seconds(r->makespan) * 1e3, (long long)r->makespan,
           r->bubble, (double)(K - 1) / (M + K - 1));
    sim_engine_free(e);
    sch_schedule_free(s);
    sch_costs_free(c);
    sch_partition_free(part);
    mdl_topology_free(t);
    mdl_profile_free(p);
    return 0;
}
