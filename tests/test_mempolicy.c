/* Memory policies (models/mdl_mempolicy.h): bytes per parameter of each
 * named policy counted by hand, the topology's "memory_policy" field and its
 * errors, where the overheads apply (sch_costs), and the default unchanged. */
#include "helpers.h"

#include "models/mdl_mempolicy.h"
#include "sched/sch_cost.h"
#include "sched/sch_partition.h"

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
    sch_partition_free(part);
    mdl_profile_free(p);
}
