/* make bench: generation, validation (incl. the one-thread-per-device
 * replay) and simulation of each schedule at K=64, M=1024, as ops per second
 * and as a ratio to GPipe's (the peer; target: within 2x of it). */
#include "models/mdl_gen.h"
#include "sched/sch_cost.h"
#include "sim/sim_engine.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct timing {
    double gen, val, sim;
    long long ops;
};

static int run(const char *name, int K, int M, const struct mdl_profile *p,
               const struct mdl_topology *t, struct timing *tm)
{
    struct sch_schedule *s = NULL;
    struct sch_partition *part = NULL;
    struct sch_costs *c = NULL;
    sim_engine *e = NULL;
    double t0 = now_s();
    int rc = sch_schedule_build(name, K, M, SCH_REMAT_EXCEPT_LAST, &s);
    double t1 = now_s();
    if (rc < 0 || (rc = sch_schedule_validate(s)) < 0)
        goto out;
    double t2 = now_s();
    if ((rc = sch_partition_uniform(s->n_stages, p->n_layers, &part)) < 0 ||
        (rc = sch_costs_new(p, t, part, s->stage_device, 8, &c)) < 0)
        goto out;
    double t3 = now_s();
    if ((rc = sim_simulate(s, c, t, 0, &e)) < 0)
        goto out;
    double t4 = now_s();
    *tm = (struct timing){ t1 - t0, t2 - t1, t4 - t3, (long long)sch_schedule_total_ops(s) };
out:
    sim_engine_free(e);
    sch_costs_free(c);
    sch_partition_free(part);
    sch_schedule_free(s);
    return rc;
}

int main(void)
{
    const int K = 64, M = 1024;
    /* every schedule the engine has (zb-auto as built by name: its first phase) */
    const char *names[] = { "gpipe", "1f1b", "eager-1f1b", "interleaved:2", "interleaved:4",
                            "breadth-first:2", "zb-h1", "zb-h2", "zb-v", "zb-auto",
                            "dualpipe-v" };
    const int n_names = (int)(sizeof names / sizeof *names);
    struct mdl_profile *p;
    struct mdl_topology *t;
    struct mdl_device d = { .flops = 1e14, .memory = 1e12, .mem_bandwidth = 1e12, .eff_max = 1 };
    /* all-to-all shared bus: interleaving needs device K-1 -> 0 */
    if (mdl_gen_mlp(4 * K, 256, 0, &p) < 0 || mdl_topology_chain(K, &d, 1e11, 1e-6, &t) < 0) {
        fprintf(stderr, "bench: %s\n", ps_errmsg());
        return 1;
    }
    free(t->links[0].ends);
    t->links[0].ends = malloc((size_t)K * sizeof *t->links[0].ends);
    for (int i = 0; i < K; i++)
        t->links[0].ends[i] = i;
    t->links[0].n_ends = K;
    t->links[0].shared = 1;
    for (int i = 1; i < t->n_links; i++)
        free(t->links[i].ends);
    t->n_links = 1;
    struct timing base = { 0 };
    for (int i = 0; i < n_names; i++) {
        struct timing tm = { 0 };
        if (run(names[i], K, M, p, t, &tm) < 0) {
            fprintf(stderr, "bench: %s: %s\n", names[i], ps_errmsg());
            return 1;
        }
        if (i == 0)
            base = tm;
        double per = (tm.gen + tm.val + tm.sim) / tm.ops;
        double per0 = (base.gen + base.val + base.sim) / base.ops;
        printf("schedules: %-16s K=%d M=%d %9lld ops: generate %.3f s, validate %.3f s, "
               "simulate %.3f s; %.1f M ops/s, %.2fx GPipe's time per op (target <= 2x)\n",
               names[i], K, M, tm.ops, tm.gen, tm.val, tm.sim, 1e-6 / per, per / per0);
    }
    mdl_topology_free(t);
    mdl_profile_free(p);
    return 0;
}
