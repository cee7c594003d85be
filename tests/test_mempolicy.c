/* Memory policies (models/mdl_mempolicy.h): bytes per parameter of each
 * named policy counted by hand, the topology's "memory_policy" field and its
 * errors, where the overheads apply (sch_costs), and the default unchanged. */
#include "helpers.h"

#include "models/mdl_mempolicy.h"
#include "sched/sch_cost.h"
#include "sched/sch_partition.h"
#include "sched/sch_schedule.h"
#include "sim/sim_engine.h"
#include "traces/trc_trace.h"

/* A hand-counted layer of 1000 parameters: fp32 weights are 4000 B, fp32
 * gradients 4000 B, each fp32 optimizer slot 4000 B; fp16 weights and
 * gradients 2000 B each, ZeRO's fp32 master + momentum + variance 12000 B. */
Test(mempolicy, named_bytes_by_hand)
{
    static const struct { const char *name; double bytes; } m[] = {
        { "fp32-rmsprop", 4000 + 4000 + 4000 }, { "fp32-sgd", 4000 + 4000 },
        { "fp32-momentum", 4000 + 4000 + 4000 }, { "fp32-adam", 4000 * 4 },
        { "mixed-adam", 2000 + 2000 + 12000 },  { "mixed-adam-fp32grad", 2000 + 4000 + 12000 },
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        struct mdl_mempolicy p;
        cr_assert_eq(mdl_mempolicy_named(m[i].name, &p), 0, "%s", m[i].name);
        cr_expect_eq(mdl_mempolicy_static_bytes(&p, 1000), m[i].bytes, "%s", m[i].name);
        cr_expect_eq(mdl_mempolicy_act_bytes(&p, 1e6), 1e6);
    }
    struct mdl_mempolicy p;
    cr_expect_eq(mdl_mempolicy_named("adamw", &p), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "mixed-adam"), "%s", ps_errmsg());
    cr_assert_eq(mdl_mempolicy_named("mixed-adam", &p), 0);
    p.allocator_overhead = 0.25;
    p.workspace_bytes = 500;
    cr_expect_eq(mdl_mempolicy_act_bytes(&p, 4000), 5000);
    cr_expect_eq(mdl_mempolicy_static_bytes(&p, 1000), 16500);
}

static const char *topo_fmt =
    "{\"name\": \"t\", %s \"devices\": [{\"name\": \"d0\", \"flops\": 1e12, \"memory\": 1e10},"
    " {\"name\": \"d1\", \"flops\": 1e12, \"memory\": 1e10}],"
    " \"links\": [{\"name\": \"l\", \"endpoints\": [\"d0\", \"d1\"], \"bandwidth\": 1e9}]}";

static int parse(const char *extra, struct mdl_topology **t)
{
    char text[1024];
    snprintf(text, sizeof text, topo_fmt, extra);
    return mdl_topology_parse(text, strlen(text), "<t>", t);
}

Test(mempolicy, topology_field)
{
    struct mdl_topology *t;
    cr_assert_eq(parse("", &t), 0, "%s", ps_errmsg());
    cr_expect_eq(t->bytes_per_param, 12);
    cr_expect_eq(t->mem.optimizer[0], 0);
    cr_expect_eq(t->mem.allocator_overhead, 0);
    mdl_topology_free(t);
    cr_assert_eq(parse("\"memory_policy\": \"mixed-adam\",", &t), 0, "%s", ps_errmsg());
    cr_expect_eq(t->bytes_per_param, 16);
    cr_expect_str_eq(t->mem.optimizer, "mixed-adam");
    mdl_topology_free(t);
    cr_assert_eq(parse("\"bytes_per_param\": 18, \"memory_policy\": {\"optimizer\": "
                       "\"mixed-adam-fp32grad\", \"allocator_overhead\": 0.05, "
                       "\"workspace_bytes\": 1e6},", &t), 0, "%s", ps_errmsg());
    cr_expect_eq(t->bytes_per_param, 18);
    cr_expect_eq(t->mem.allocator_overhead, 0.05);
    cr_expect_eq(t->mem.workspace_bytes, 1e6);
    mdl_topology_free(t);
}

Test(mempolicy, topology_errors)
{
    static const struct { const char *extra, *msg; } bad[] = {
        { "\"memory_policy\": \"adamw\",", "unknown" },
        { "\"memory_policy\": 12,", "policy name" },
        { "\"memory_policy\": {\"allocator_overhead\": 0.1},", "missing field 'optimizer'" },
        { "\"memory_policy\": {\"optimizer\": \"fp32-sgd\", \"overhead\": 1},", "unknown field" },
        { "\"memory_policy\": {\"optimizer\": \"fp32-sgd\", \"workspace_bytes\": -1},", ">= 0" },
        { "\"memory_policy\": {\"optimizer\": \"fp32-sgd\", \"allocator_overhead\": 20},",
          "[0, 10]" },
        { "\"bytes_per_param\": 12, \"memory_policy\": \"mixed-adam\",", "disagrees" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct mdl_topology *t = NULL;
        cr_expect_lt(parse(bad[i].extra, &t), 0, "%s accepted", bad[i].extra);
        cr_expect(strstr(ps_errmsg(), bad[i].msg), "%s: '%s'", bad[i].extra, ps_errmsg());
        cr_expect_null(t);
    }
    /* a long unknown name is cut, the message whole (helper-124: it ended inside the name) */
    char extra[400] = "\"memory_policy\": \"";
    memset(extra + strlen(extra), 'A', 300);
    strcat(extra, "\",");
    struct mdl_topology *t = NULL;
    cr_expect_lt(parse(extra, &t), 0);
    cr_expect(strstr(ps_errmsg(), "AAA...': unknown (known: fp32-rmsprop"), "%s", ps_errmsg());
}

/* Two stages of one layer each (1000 params, stash 100 B and out 10 B per
 * sample), micro-batch 4: the overhead scales in/out/stash, the workspace
 * adds to each stage's static bytes; without a policy nothing changes. */
Test(mempolicy, stage_memory)
{
    double f[2] = { 1e6, 1e6 }, b[2] = { 2e6, 2e6 }, o[2] = { 10, 10 }, st[2] = { 100, 100 };
    struct mdl_profile *p = th_profile(2, f, b, 4, o, st, 1000);
    struct sch_partition *part;
    cr_assert_eq(sch_partition_uniform(2, 2, &part), 0);
    struct mdl_topology *t;
    struct sch_costs *c;
    cr_assert_eq(parse("", &t), 0);
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 4, &c), 0, "%s", ps_errmsg());
    cr_expect_eq(c->st[0].param_bytes, 12000);
    cr_expect_eq(c->st[0].mem.stash, 400);
    cr_expect_eq(c->st[1].mem.in, 40);
    sch_costs_free(c);
    mdl_topology_free(t);
    cr_assert_eq(parse("\"memory_policy\": {\"optimizer\": \"fp32-adam\", \"allocator_overhead\":"
                       " 0.5, \"workspace_bytes\": 777},", &t), 0, "%s", ps_errmsg());
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 4, &c), 0, "%s", ps_errmsg());
    cr_expect_eq(c->st[0].param_bytes, 16000 + 777);
    cr_expect_eq(c->st[0].mem.stash, 600);
    cr_expect_eq(c->st[0].mem.out, 60);
    cr_expect_eq(c->st[1].mem.in, 60);
    sch_costs_free(c);
    mdl_topology_free(t);
    /* scaled past the ledger's 1e17 bytes: refused, not clamped to 1e17 (helper-124:
     * a 5e16-byte stash x 11 was read as 1e17 and fitted a 2e17-byte device) */
    mdl_profile_free(p);
    double big[2] = { 5e15, 5e15 };
    p = th_profile(2, f, b, 4, o, big, 1000);
    cr_assert_eq(parse("\"memory_policy\": {\"optimizer\": \"fp32-adam\", \"allocator_overhead\":"
                       " 10},", &t), 0, "%s", ps_errmsg());
    c = NULL;
    cr_expect_eq(sch_costs_new(p, t, part, NULL, 4, &c), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "stash (x 1 + allocator_overhead) of 2.2e+17 bytes is out of "
                                  "range"), "%s", ps_errmsg());
    sch_costs_free(c);
    mdl_topology_free(t);
    sch_partition_free(part);
    mdl_profile_free(p);
}

/* The allocator's slack is memory, not traffic: with allocator_overhead 0.5
 * the stages' buffers and peaks grow by half, but a transfer moves the
 * activation's bytes (4 x 1e5 B at 1e9 B/s: 400 us), so the step, each
 * send's bytes and its time are those without the policy (a send once
 * moved 1.5x its bytes and lengthened the step). */
Test(mempolicy, allocator_overhead_is_not_sent)
{
    double f[2] = { 1e6, 1e6 }, b[2] = { 2e6, 2e6 }, o[2] = { 1e5, 1e5 }, st[2] = { 1e5, 1e5 };
    struct mdl_profile *p = th_profile(2, f, b, 4, o, st, 1000);
    struct sch_partition *part;
    cr_assert_eq(sch_partition_uniform(2, 2, &part), 0);
    sch_time span[2];
    int64_t peak[2];
    for (int i = 0; i < 2; i++) {
        struct mdl_topology *t;
        cr_assert_eq(parse(i ? "\"memory_policy\": {\"optimizer\": \"fp32-rmsprop\", "
                               "\"allocator_overhead\": 0.5}," : "", &t), 0, "%s", ps_errmsg());
        struct sch_costs *c;
        struct sch_schedule *s;
        sim_engine *e;
        cr_assert_eq(sch_costs_new(p, t, part, NULL, 4, &c), 0, "%s", ps_errmsg());
        cr_expect_eq(c->st[0].mem.out, i ? 600000 : 400000);
        cr_expect_eq(sch_stage_wire(&c->st[0], 1), 400000);
        cr_expect_eq(sch_stage_wire(&c->st[1], 0), 400000);
        cr_assert_eq(sch_schedule_gpipe(2, 2, SCH_REMAT_NEVER, &s), 0);
        cr_assert_eq(sim_simulate(s, c, t, 1, &e), 0, "%s", ps_errmsg());
        span[i] = sim_engine_result(e)->makespan;
        peak[i] = sim_engine_result(e)->peak_act[0];
        const struct trc_trace *tr = sim_engine_trace(e);
        int sends = 0;
        for (size_t k = 0; k < tr->n_events; k++) {
            const struct trc_event *ev = &tr->events[k];
            if (ev->kind != SCH_OP_SEND_ACT && ev->kind != SCH_OP_SEND_GRAD)
                continue;
            sends++;
            cr_expect_eq(ev->bytes, 400000, "policy %d: send of %lld bytes", i,
                         (long long)ev->bytes);
            cr_expect_eq(ev->end_ns - ev->start_ns, 400000, "policy %d: send of %lld ns", i,
                         (long long)(ev->end_ns - ev->start_ns));
        }
        cr_expect_eq(sends, 4);
        sim_engine_free(e);
        sch_schedule_free(s);
        sch_costs_free(c);
        mdl_topology_free(t);
    }
    cr_expect_eq(span[1], span[0], "step %lld ns with the overhead, %lld without",
                 (long long)span[1], (long long)span[0]);
    cr_expect_eq(2 * peak[1], 3 * peak[0], "peaks %lld, %lld", (long long)peak[1],
                 (long long)peak[0]);
    sch_partition_free(part);
    mdl_profile_free(p);
}
