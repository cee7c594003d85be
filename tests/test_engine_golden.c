/* The engine's answers pinned bit for bit: step times and a hash of every
 * traced op, memory counter and result figure, on schedules of every shape
 * (fill-drain, 1F1B, interleaved stages, split backward, stage pairs on one
 * device, data-parallel all-reduce) with a non-uniform profile, link time
 * and latency, a shared bus and a switched fabric. The expected values were
 * computed by the engine of commit 9832fb1 (before the record-free rewrite
 * of issue 16), whose answers the oracle tests (test_links.c's recurrence,
 * test_engine.c's formulas) checked; a change of any tie, time or byte here
 * is a change of the engine's results, not a refactoring. The hashes of
 * the re-materialized cases changed once since, with the same makespans:
 * a recompute frees its kept input as it ends (sched/sch_memory.c), which
 * moves only memory counters and peaks. */
#include "helpers.h"

#include <math.h>

TestSuite(engine_golden, .timeout = 120);

static uint64_t fnv(uint64_t h, int64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (uint64_t)v >> (8 * i) & 0xff;
        h *= 1099511628211ULL;
    }
    return h;
}

/* Every figure of the result and the trace, in the engine's order. */
static uint64_t run_hash(const struct sim_result *r, const struct trc_trace *tr)
{
    uint64_t h = 14695981039346656037ULL;
    double bubble = r->bubble;
    int64_t bits;
    memcpy(&bits, &bubble, sizeof bits);
    h = fnv(fnv(fnv(fnv(fnv(h, r->makespan), r->fb_end), r->n_events), r->peak_queue), bits);
    h = fnv(fnv(h, r->n_ops), r->fits);
    for (int d = 0; d < r->n_devices; d++) {
        h = fnv(fnv(fnv(h, r->busy[d]), r->busy_recomp[d]), r->busy_update[d]);
        h = fnv(fnv(fnv(h, r->busy_allreduce[d]), r->peak_act[d]), r->static_mem[d]);
    }
    for (size_t i = 0; i < tr->n_events; i++) {
        const struct trc_event *e = &tr->events[i];
        h = fnv(fnv(fnv(fnv(h, e->device), e->stage), e->mb), e->peer);
        h = fnv(fnv(fnv(fnv(fnv(h, e->kind), e->stream), e->start_ns), e->end_ns), e->bytes);
    }
    for (size_t i = 0; i < tr->n_counters; i++) {
        const struct trc_counter *c = &tr->counters[i];
        h = fnv(fnv(fnv(h, c->device), c->t_ns), c->bytes);
    }
    return fnv(fnv(h, (int64_t)tr->n_events), (int64_t)tr->n_counters);
}

/* 16 layers, no two alike: forward, backward, output and stash all vary. */
static struct mdl_profile *uneven(void)
{
    double f[16], b[16], o[16], st[16];
    for (int i = 0; i < 16; i++) {
        f[i] = 1000 + 137 * ((i * 7) % 11);
        b[i] = 2 * f[i] + 311 * ((i * 5) % 7);
        o[i] = 500 + 97 * ((i * 3) % 13);
        st[i] = 4000 + 1013 * ((i * 11) % 5);
    }
    return th_profile(16, f, b, 2, o, st, 2000);
}

enum topo { CHAIN, CHAIN0, RING, BUS, FABRIC };

struct golden {
    const char *sched;
    int K, M;
    enum sch_remat remat;
    enum topo topo;
    int replicas;
    sch_time makespan;
    uint64_t hash;
};

static const struct golden cases[] = {
    { "gpipe", 4, 8, SCH_REMAT_EXCEPT_LAST, CHAIN, 1, 533047, 0x7a06055c13c7569dULL },
    { "gpipe", 8, 16, SCH_REMAT_NEVER, BUS, 1, 450120, 0x096f014f57cbfa9eULL },
    { "gpipe", 8, 12, SCH_REMAT_ALWAYS, FABRIC, 1, 464410, 0x5e7424d4dc613685ULL },
    /* the two runs of replicas: AR events carry their bytes (4 per parameter) since
     * the review of helper-47, and each pipeline transfer takes its slowest replica's
     * copy (replica 1's devices 3, 4, 5 cross the sockets where replica 0's do not) */
    { "gpipe", 4, 6, SCH_REMAT_NEVER, FABRIC, 2, 340272, 0x4781f89d84bd7cabULL },
    { "1f1b", 4, 8, SCH_REMAT_NEVER, CHAIN, 1, 481727, 0x1384654be46112caULL },
    { "1f1b", 8, 16, SCH_REMAT_EXCEPT_LAST, BUS, 1, 691950, 0xe51d8d962a70b3d0ULL },
    { "1f1b", 3, 7, SCH_REMAT_NEVER, FABRIC, 2, 463370, 0xc126f82b02ae12dfULL },
    { "interleaved:2", 4, 8, SCH_REMAT_NEVER, RING, 1, 453349, 0xa255e38b4025f9adULL },
    { "interleaved:2", 8, 16, SCH_REMAT_ALWAYS, BUS, 1, 711275, 0xdc52903aeac5c430ULL },
    { "interleaved:4", 4, 12, SCH_REMAT_EXCEPT_LAST, RING, 1, 619029, 0x6ae8ad03d2382234ULL },
    { "zb-h1", 4, 8, SCH_REMAT_NEVER, CHAIN, 1, 428515, 0x7231d525c75abf05ULL },
    { "zb-h1", 8, 24, SCH_REMAT_EXCEPT_LAST, FABRIC, 1, 895934, 0x546ee77bf6dd10b1ULL },
    { "zb-h2", 4, 8, SCH_REMAT_NEVER, CHAIN, 1, 425119, 0x989d09b50adf5366ULL },
    { "zb-v", 4, 8, SCH_REMAT_NEVER, CHAIN, 1, 414259, 0xc88a12bfcf40af77ULL }, /* new zb-v lists (sch_zbv.c), pinned with the engine before 9c40403 */
    { "dualpipe-v", 4, 8, SCH_REMAT_NEVER, CHAIN, 1, 409808, 0xf015d2db709d470dULL },
    { "eager-1f1b", 4, 8, SCH_REMAT_NEVER, BUS, 1, 410924, 0xe64bed3fd9537a2cULL },
    { "breadth-first", 4, 8, SCH_REMAT_NEVER, RING, 1, 480113, 0x782406409d009baeULL },
    { "gpipe", 16, 64, SCH_REMAT_EXCEPT_LAST, CHAIN, 1, 801148, 0xf2d6c53f5f65df9cULL },
    { "1f1b", 16, 48, SCH_REMAT_NEVER, CHAIN, 1, 606415, 0xfdebf1737385db6bULL },
    { "gpipe", 4, 8, SCH_REMAT_EXCEPT_LAST, CHAIN0, 1, 531247, 0xec96cdc6a18d8da5ULL },
    { "zb-h1", 4, 8, SCH_REMAT_NEVER, CHAIN0, 1, 425365, 0x7e838a8146c915a6ULL },
};

static struct mdl_topology *topology(enum topo k, int n)
{
    struct mdl_topology *t;
    switch (k) {
    case RING: return th_ring(n, 1e9, 2e9, 300e-9);
    case BUS: cr_assert_eq(mdl_topology_load("models/topologies/pcie-8gpu.json", &t), 0, "%s",
                           ps_errmsg());
              return t;
    case FABRIC: cr_assert_eq(mdl_topology_load("models/topologies/p100-pcie-dual-root.json", &t),
                              0, "%s", ps_errmsg());
                 return t;
    case CHAIN0: return th_chain(n, 1e9, 2e9, 0); /* deliveries on the spot */
    default: return th_chain(n, 1e9, 2e9, 300e-9);
    }
}

Test(engine_golden, results_and_traces_match_the_pinned_values)
{
    struct mdl_profile *p = uneven();
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const struct golden *g = &cases[i];
        struct mdl_topology *t = topology(g->topo, g->K * g->replicas);
        struct th_run run;
        memset(&run, 0, sizeof run);
        cr_assert_eq(sch_schedule_build(g->sched, g->K, g->M, g->remat, &run.s), 0, "%s",
                     ps_errmsg());
        cr_assert_eq(sch_schedule_add_allreduce(run.s, g->replicas), 0, "%s", ps_errmsg());
        cr_assert_eq(sch_partition_uniform(run.s->n_stages, p->n_layers, &run.part), 0, "%s",
                     ps_errmsg());
        cr_assert_eq(sch_costs_new(p, t, run.part, run.s->stage_device, 2, &run.c), 0, "%s",
                     ps_errmsg());
        cr_assert_eq(sim_simulate(run.s, run.c, t, 1, &run.e), 0, "case %zu: %s", i,
                     ps_errmsg());
        run.r = sim_engine_result(run.e);
        uint64_t h = run_hash(run.r, sim_engine_trace(run.e));
        if (run.r->makespan != g->makespan || h != g->hash) {
            fprintf(stderr, "case %zu %s K=%d M=%d: makespan %lld hash 0x%016llxULL\n", i,
                    g->sched, g->K, g->M, (long long)run.r->makespan, (unsigned long long)h);
            bad++;
        }
        /* the same run without a trace gives the same result */
        sim_engine *e2;
        cr_assert_eq(sim_simulate(run.s, run.c, t, 0, &e2), 0, "%s", ps_errmsg());
        const struct sim_result *r2 = sim_engine_result(e2);
        cr_assert_eq(r2->makespan, run.r->makespan);
        cr_assert_eq(r2->n_events, run.r->n_events);
        cr_assert_eq(r2->peak_queue, run.r->peak_queue);
        for (int d = 0; d < r2->n_devices; d++) {
            cr_assert_eq(r2->busy[d], run.r->busy[d]);
            cr_assert_eq(r2->peak_act[d], run.r->peak_act[d]);
        }
        sim_engine_free(e2);
        th_release(&run);
        mdl_topology_free(t);
    }
    mdl_profile_free(p);
    cr_assert_eq(bad, 0, "%d of %zu cases differ from the pinned values", bad,
                 sizeof cases / sizeof *cases);
}
