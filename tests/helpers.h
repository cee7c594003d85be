/* Shared fixtures for the Criterion tests: in-memory profiles, topologies
 * and one-call simulations with exact (integer-ns) costs. */
#ifndef TESTS_HELPERS_H
#define TESTS_HELPERS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_cost.h"
#include "sim/sim_engine.h"
#include "base/ps_error.h"
#include "sched/sch_partition.h"
#include "sched/sch_schedule.h"

/* A measured profile: layer i takes fwd_ns[i] / bwd_ns[i] at at_batch samples. */
static inline struct mdl_profile *
th_profile(int n, const double *fwd_ns, const double *bwd_ns, double at_batch,
           const double *out_b, const double *stash_b, double params)
{
    struct mdl_profile *p = mdl_profile_new("<test>", 1);
    cr_assert(p);
    for (int i = 0; i < n; i++) {
        struct mdl_layer l = { .fwd = fwd_ns[i] * 1e-9, .bwd = bwd_ns[i] * 1e-9,
                               .at_batch = at_batch, .params = params,
                               .out_bytes = out_b ? out_b[i] : 0,
                               .stash_bytes = stash_b ? stash_b[i] : 0 };
        snprintf(l.name, sizeof l.name, "l%d", i);
        cr_assert_eq(mdl_profile_add(p, &l), 0);
    }
    return p;
}

/* n ideal devices (efficiency 1, no overhead) in a chain. */
static inline struct mdl_topology *th_chain(int n, double mem_bw, double bw, double lat)
{
    struct mdl_device d = { .flops = 1e12, .memory = 1e12, .mem_bandwidth = mem_bw,
                            .eff_max = 1 };
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_chain(n, &d, bw, lat, &t), 0);
    return t;
}

struct th_run {
    struct sch_schedule *s;
    struct sch_costs *c;
    struct sch_partition *part;
    sim_engine *e;
    const struct sim_result *r;
};

static inline void th_simulate(struct th_run *run, const char *sched, const struct mdl_profile *p,
                               const struct mdl_topology *t, int K, int M, enum sch_remat remat,
                               double micro, int trace)
{
    memset(run, 0, sizeof *run);
    cr_assert_eq(sch_schedule_build(sched, K, M, remat, &run->s), 0, "%s", ps_errmsg());
    cr_assert_eq(sch_partition_uniform(run->s->n_stages, p->n_layers, &run->part), 0, "%s",
                 ps_errmsg());
    cr_assert_eq(sch_costs_new(p, t, run->part, run->s->stage_device, micro, &run->c), 0, "%s",
                 ps_errmsg());
    cr_assert_eq(sim_simulate(run->s, run->c, t, trace, &run->e), 0, "%s", ps_errmsg());
    run->r = sim_engine_result(run->e);
    cr_assert(run->r);
}

static inline void th_release(struct th_run *run)
{
    sim_engine_free(run->e);
    sch_costs_free(run->c);
    sch_partition_free(run->part);
    sch_schedule_free(run->s);
}

/* Runs a shell command; returns its exit status. */
static inline int th_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
#include <sys/wait.h>
static inline int th_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static inline const char *th_pipesim(void)
{
    const char *p = getenv("PIPESIM");
    return p ? p : "build/pipesim";
}

#endif
