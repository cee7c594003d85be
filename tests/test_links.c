/* The interconnect model (models/mdl_topology.h): latency does not hold a
 * link, routes through switches, cut-through on a route, shared buses, and
 * the loader's errors on the new fields. Every time below is worked out by
 * hand from the rule, not read off the engine. */
#include "helpers.h"

#include <math.h>

TestSuite(links, .timeout = 60);

static struct mdl_topology *parse(const char *json)
{
    struct mdl_topology *t;
    int rc = mdl_topology_parse(json, strlen(json), "t.json", &t);
    cr_assert_eq(rc, 0, "%s", ps_errmsg());
    return t;
}

static void parse_fails(const char *json, int code, const char *want)
{
    struct mdl_topology *t;
    int rc = mdl_topology_parse(json, strlen(json), "t.json", &t);
    cr_assert_eq(rc, -code, "rc %d for %s", rc, json);
    cr_assert_null(t);
    cr_assert(strstr(ps_errmsg(), want), "'%s' lacks '%s'", ps_errmsg(), want);
    cr_assert(!strchr(ps_errmsg(), '\n'), "one line: %s", ps_errmsg());
}

static const struct trc_event *find(const struct trc_trace *tr, int kind, int stage, int mb)
{
    for (size_t i = 0; i < tr->n_events; i++)
        if (tr->events[i].kind == kind && tr->events[i].stage == stage && tr->events[i].mb == mb)
            return &tr->events[i];
    cr_assert_fail("event not found");
    return NULL;
}

#define DEV2 "\"devices\": [{\"name\": \"g\", \"count\": 2, \"flops\": 1e12, \"memory\": 1e12}]"

/* One 1000 ns forward per micro-batch on stage 0, 6000 B per micro-batch
 * (3000 ns at 2 GB/s), 2000 ns latency. Old rule: each send held the link
 * 5000 ns. New: send 0 holds it [1000, 4000], send 1 [4000, 7000]; they
 * land at 6000 and 9000: the second message is latency + 2 x bytes/bw
 * after the first one started. */
Test(links, back_to_back_messages_pipeline_on_one_link)
{
    struct mdl_topology *t = parse("{" DEV2 ", \"links\": [{\"name\": \"l\", \"endpoints\": "
                                   "[\"g0\", \"g1\"], \"bandwidth\": 2e9, \"latency\": 2e-6}]}");
    struct mdl_profile *p = th_uniform(2, 1000, 1000, 1, 6000, 0, 0);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 1);
    const struct trc_trace *tr = sim_engine_trace(run.e);
    cr_assert_eq(find(tr, SCH_OP_SEND_ACT, 0, 0)->start_ns, 1000);
    cr_assert_eq(find(tr, SCH_OP_SEND_ACT, 0, 0)->end_ns, 4000);
    cr_assert_eq(find(tr, SCH_OP_SEND_ACT, 0, 1)->start_ns, 4000);
    cr_assert_eq(find(tr, SCH_OP_SEND_ACT, 0, 1)->end_ns, 7000);
    cr_assert_eq(find(tr, SCH_OP_FWD, 1, 0)->start_ns, 6000);
    cr_assert_eq(find(tr, SCH_OP_FWD, 1, 1)->start_ns, 9000);
    cr_assert_eq(find(tr, SCH_OP_FWD, 1, 1)->start_ns - find(tr, SCH_OP_SEND_ACT, 0, 0)->start_ns,
                 2000 + 2 * 3000);
    /* the receive is drawn from the transfer's start to when it is taken */
    cr_assert_eq(find(tr, SCH_OP_RECV_ACT, 1, 1)->start_ns, 4000);
    cr_assert_eq(find(tr, SCH_OP_RECV_ACT, 1, 1)->end_ns, 9000);
    th_release(&run);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* The case: K = 2, M = 2 GPipe, 1 ms forward and backward per
 * stage, empty messages on a 2 ms link, no re-materialization, free update.
 * By hand: stage 0 F0 [0,1] F1 [1,2], sent at 1 and 2, land at 3 and 4;
 * stage 1 F0 [3,4] F1 [4,5] B1 [5,6] B0 [6,7], gradients sent at 6 and 7
 * land at 8 and 9; stage 0 B1 [8,9] B0 [9,10]: 10 ms (the old rule, which
 * held the link 2 ms per message, gave 12 ms). Latency split into 1.5 ms
 * propagation + 0.5 ms overhead_s is the same. */
Test(links, gpipe_k2_m2_with_latency_is_10_ms)
{
    const char *topo[] = {
        "{" DEV2 ", \"links\": [{\"name\": \"l\", \"endpoints\": [\"g0\", \"g1\"], "
        "\"bandwidth\": 1e9, \"latency\": 2e-3}]}",
        "{" DEV2 ", \"links\": [{\"name\": \"l\", \"endpoints\": [\"g0\", \"g1\"], "
        "\"bandwidth\": 1e9, \"latency\": 1.5e-3, \"overhead_s\": 0.5e-3}]}",
    };
    for (int i = 0; i < 2; i++) {
        struct mdl_topology *t = parse(topo[i]);
        struct mdl_profile *p = th_uniform(2, 1e6, 1e6, 1, 0, 0, 0);
        struct th_run run;
        th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 0);
        cr_assert_eq(run.r->makespan, 10000000, "%s: %lld ns", topo[i],
                     (long long)run.r->makespan);
        th_release(&run);
        mdl_profile_free(p);
        mdl_topology_free(t);
    }
}

/* Two sockets: g0 behind plx0 on socket0, g1 behind plx1 on socket1.
 * GPU-switch 10 GB/s 1 us, switch-root 16 GB/s 1 us, socket0-socket1
 * 5 GB/s 2 us + 1 us overhead. The route is the 5 hops g0 plx0 socket0
 * socket1 plx1 g1; its bandwidth the inter-socket 5 GB/s, its latency
 * 1+1+3+1+1 = 7 us. */
static const char *two_sockets =
    "{" DEV2 ", \"switches\": [{\"name\": \"plx0\", \"kind\": \"pcie-switch\"}, "
    "{\"name\": \"plx1\"}, {\"name\": \"socket0\", \"comment\": \"root complex\"}, "
    "{\"name\": \"socket1\"}], \"links\": ["
    "{\"name\": \"a\", \"endpoints\": [\"g0\", \"plx0\"], \"bandwidth\": 1e10, \"latency\": 1e-6},"
    "{\"name\": \"b\", \"endpoints\": [\"plx0\", \"socket0\"], \"bandwidth\": 1.6e10, "
    "\"latency\": 1e-6},"
    "{\"name\": \"x\", \"endpoints\": [\"socket0\", \"socket1\"], \"bandwidth\": 5e9, "
    "\"latency\": 2e-6, \"overhead_s\": 1e-6, \"comment\": \"inter-socket\"},"
    "{\"name\": \"c\", \"endpoints\": [\"socket1\", \"plx1\"], \"bandwidth\": 1.6e10, "
    "\"latency\": 1e-6},"
    "{\"name\": \"d\", \"endpoints\": [\"g1\", \"plx1\"], \"bandwidth\": 1e10, \"latency\": 1e-6}]}";

Test(links, route_across_sockets)
{
    struct mdl_topology *t = parse(two_sockets);
    cr_assert_eq(t->n_switches, 4);
    struct mdl_route r;
    cr_assert_eq(mdl_topology_route(t, 0, 1, &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r.n_hops, 5);
    const int links[5] = { 0, 1, 2, 3, 4 }, dirs[5] = { 0, 0, 0, 0, 1 };
    for (int h = 0; h < 5; h++) {
        cr_assert_eq(r.hops[h].link, links[h], "hop %d", h);
        cr_assert_eq(r.hops[h].dir, dirs[h], "hop %d", h);
    }
    cr_assert_eq(r.bandwidth, 5e9);
    cr_assert(fabs(r.latency - 7e-6) < 1e-18, "%g", r.latency);
    cr_assert_eq(mdl_topology_route(t, 1, 0, &r), 0);
    cr_assert_eq(r.hops[0].link, 4);
    cr_assert_eq(r.hops[0].dir, 0);
    cr_assert_eq(r.hops[4].dir, 1);
    /* GPipe K = 2, M = 1, 1000 ns per op, 10000 B each way: 2000 ns on
     * the route, 7000 ns latency. F0 [0,1000], sent [1000,3000], lands
     * 10000; stage 1 F [10000,11000] B [11000,12000], the gradient sent
     * [12000,14000] lands 21000; stage 0 B [21000,22000]. */
    struct mdl_profile *p = th_uniform(2, 1000, 1000, 1, 10000, 0, 0);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 1, SCH_REMAT_NEVER, 1, 1);
    cr_assert_eq(run.r->makespan, 22000, "%lld", (long long)run.r->makespan);
    const struct trc_trace *tr = sim_engine_trace(run.e);
    cr_assert_eq(find(tr, SCH_OP_SEND_GRAD, 1, 0)->start_ns, 12000);
    cr_assert_eq(find(tr, SCH_OP_SEND_GRAD, 1, 0)->end_ns, 14000);
    th_release(&run);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* Cut-through on a 2-hop route g0 -(4 GB/s, 1 us)- sw -(2 GB/s, 0.5 us +
 * 0.5 us overhead)- g1: 6000 B hold both hops 3000 ns (the least
 * bandwidth), land 2 us later. Two messages back to back: sends [1000,
 * 4000] and [4000, 7000], forwards of stage 1 at 6000 and 9000. */
Test(links, cut_through_on_a_two_hop_route)
{
    struct mdl_topology *t = parse(
        "{" DEV2 ", \"switches\": [{\"name\": \"sw\"}], \"links\": ["
        "{\"name\": \"a\", \"endpoints\": [\"g0\", \"sw\"], \"bandwidth\": 4e9, \"latency\": 1e-6},"
        "{\"name\": \"b\", \"endpoints\": [\"sw\", \"g1\"], \"bandwidth\": 2e9, \"latency\": 5e-7,"
        " \"overhead_s\": 5e-7}]}");
    struct mdl_route r;
    cr_assert_eq(mdl_topology_route(t, 0, 1, &r), 0);
    cr_assert_eq(r.n_hops, 2);
    cr_assert_eq(r.bandwidth, 2e9);
    struct mdl_profile *p = th_uniform(2, 1000, 1000, 1, 6000, 0, 0);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 1);
    const struct trc_trace *tr = sim_engine_trace(run.e);
    cr_assert_eq(find(tr, SCH_OP_SEND_ACT, 0, 0)->end_ns, 4000);
    cr_assert_eq(find(tr, SCH_OP_SEND_ACT, 0, 1)->start_ns, 4000);
    cr_assert_eq(find(tr, SCH_OP_FWD, 1, 0)->start_ns, 6000);
    cr_assert_eq(find(tr, SCH_OP_FWD, 1, 1)->start_ns, 9000);
    th_release(&run);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* Three GPUs each behind its own switch, the switches on one shared bus
 * (one resource for every endpoint and direction), 1 GB/s everywhere, no
 * latency. Stage 1's forward is shorter by the transfer time, so at 8000
 * stage 0 sends micro-batch 1 (g0 sw0 bus sw1 g1) and stage 1 micro-batch
 * 0 (g1 sw1 bus sw2 g2): their routes share only the bus, and the second
 * (stage 1: its forward ended later in event order) waits for the first.
 * With a dedicated sw0-sw1 and sw1-sw2 instead both go at 8000. */
Test(links, a_shared_hop_serializes_routes)
{
    const char *head =
        "{\"devices\": [{\"name\": \"g\", \"count\": 3, \"flops\": 1e12, \"memory\": 1e12}],"
        "\"switches\": [{\"name\": \"sw0\"}, {\"name\": \"sw1\"}, {\"name\": \"sw2\"}],"
        "\"links\": ["
        "{\"name\": \"a\", \"endpoints\": [\"g0\", \"sw0\"], \"bandwidth\": 1e9},"
        "{\"name\": \"b\", \"endpoints\": [\"g1\", \"sw1\"], \"bandwidth\": 1e9},"
        "{\"name\": \"c\", \"endpoints\": [\"g2\", \"sw2\"], \"bandwidth\": 1e9},";
    char bus[1024], ded[1024];
    snprintf(bus, sizeof bus, "%s{\"name\": \"bus\", \"endpoints\": [\"sw0\", \"sw1\", \"sw2\"], "
             "\"bandwidth\": 1e9, \"shared\": true}]}", head);
    snprintf(ded, sizeof ded, "%s{\"name\": \"x\", \"endpoints\": [\"sw0\", \"sw1\"], "
             "\"bandwidth\": 1e9}, {\"name\": \"y\", \"endpoints\": [\"sw1\", \"sw2\"], "
             "\"bandwidth\": 1e9}]}", head);
    struct mdl_topology *tb = parse(bus), *td = parse(ded);
    double f[3] = { 4000, 3000, 4000 }, b[3] = { 8000, 8000, 8000 };
    double out[3] = { 500, 500, 500 };
    struct mdl_profile *p = th_profile(3, f, b, 2, out, NULL, 0);
    struct th_run s, a;
    th_simulate(&s, "gpipe", p, tb, 3, 2, SCH_REMAT_NEVER, 2, 1);
    th_simulate(&a, "gpipe", p, td, 3, 2, SCH_REMAT_NEVER, 2, 1);
    const struct trc_trace *ts = sim_engine_trace(s.e), *ta = sim_engine_trace(a.e);
    cr_assert_eq(find(ta, SCH_OP_SEND_ACT, 0, 1)->start_ns, 8000);
    cr_assert_eq(find(ta, SCH_OP_SEND_ACT, 1, 0)->start_ns, 8000);
    cr_assert_eq(find(ts, SCH_OP_SEND_ACT, 0, 1)->start_ns, 8000);
    cr_assert_eq(find(ts, SCH_OP_SEND_ACT, 0, 1)->end_ns, 9000);
    cr_assert_eq(find(ts, SCH_OP_SEND_ACT, 1, 0)->start_ns, 9000);
    cr_assert_eq(find(ts, SCH_OP_SEND_ACT, 1, 0)->end_ns, 10000);
    cr_assert_gt(s.r->makespan, a.r->makespan);
    th_release(&s);
    th_release(&a);
    mdl_profile_free(p);
    mdl_topology_free(tb);
    mdl_topology_free(td);
}

/* The legacy meaning: a "*" bus is one FIFO for all, and a direct link
 * listed first wins over any route. */
Test(links, legacy_bus_and_direct_links_keep_their_meaning)
{
    struct mdl_topology *t = parse(
        "{\"devices\": [{\"name\": \"g\", \"count\": 3, \"flops\": 1e12, \"memory\": 1e12}],"
        "\"links\": [{\"name\": \"bus\", \"endpoints\": \"*\", \"bandwidth\": 1e9, "
        "\"latency\": 1e-6, \"shared\": true}]}");
    struct mdl_route r;
    cr_assert_eq(mdl_topology_route(t, 2, 0, &r), 0);
    cr_assert_eq(r.n_hops, 1);
    cr_assert_eq(r.hops[0].link, 0);
    cr_assert_eq(r.hops[0].dir, 0);
    mdl_topology_free(t);
    t = parse("{" DEV2 ", \"switches\": [{\"name\": \"sw\"}], \"links\": ["
              "{\"name\": \"a\", \"endpoints\": [\"g0\", \"sw\"], \"bandwidth\": 1e11},"
              "{\"name\": \"b\", \"endpoints\": [\"sw\", \"g1\"], \"bandwidth\": 1e11},"
              "{\"name\": \"d\", \"endpoints\": [\"g1\", \"g0\"], \"bandwidth\": 1e9}]}");
    cr_assert_eq(mdl_topology_route(t, 0, 1, &r), 0);
    cr_assert_eq(r.n_hops, 1);
    cr_assert_eq(r.hops[0].link, 2);
    cr_assert_eq(r.hops[0].dir, 1);
    mdl_topology_free(t);
}

/* Fewest hops; among equal ones the smallest link index hop by hop from the
 * source (so listing a torus's X links first routes X first), and devices
 * never forward. */
Test(links, tie_rule_and_no_transit_through_devices)
{
    struct mdl_topology *t = parse(
        "{\"devices\": [{\"name\": \"g\", \"count\": 3, \"flops\": 1e12, \"memory\": 1e12}],"
        "\"switches\": [{\"name\": \"s0\"}, {\"name\": \"s1\"}], \"links\": ["
        "{\"name\": \"a1\", \"endpoints\": [\"g0\", \"s1\"], \"bandwidth\": 1e9},"
        "{\"name\": \"a0\", \"endpoints\": [\"g0\", \"s0\"], \"bandwidth\": 1e9},"
        "{\"name\": \"b0\", \"endpoints\": [\"s0\", \"g1\"], \"bandwidth\": 1e9},"
        "{\"name\": \"b1\", \"endpoints\": [\"s1\", \"g1\"], \"bandwidth\": 1e9},"
        "{\"name\": \"c\", \"endpoints\": [\"g1\", \"g2\"], \"bandwidth\": 1e9}]}");
    struct mdl_route r;
    cr_assert_eq(mdl_topology_route(t, 0, 1, &r), 0);
    cr_assert_eq(r.n_hops, 2);
    cr_assert_eq(r.hops[0].link, 0, "a1 is listed first");
    cr_assert_eq(r.hops[1].link, 3);
    /* g0 to g2 would need to pass through g1 */
    cr_assert_eq(mdl_topology_route(t, 0, 2, &r), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "no link or route between g0 and g2"), "%s", ps_errmsg());
    mdl_topology_free(t);
}

/* Unreachable pairs load (two machines in one file are fine) and fail only
 * when a schedule needs them. */
Test(links, unreachable_pair_fails_when_used)
{
    struct mdl_topology *t = parse(
        "{" DEV2 ", \"switches\": [{\"name\": \"s0\"}, {\"name\": \"s1\"}], \"links\": ["
        "{\"name\": \"a\", \"endpoints\": [\"g0\", \"s0\"], \"bandwidth\": 1e9},"
        "{\"name\": \"b\", \"endpoints\": [\"g1\", \"s1\"], \"bandwidth\": 1e9}]}");
    struct mdl_profile *p = th_uniform(2, 1000, 2000, 1, 0, 0, 0);
    struct sch_schedule *s;
    struct sch_partition *part;
    struct sch_costs *c;
    sim_engine *e;
    cr_assert_eq(sch_schedule_gpipe(2, 2, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(sch_partition_uniform(2, 2, &part), 0);
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 1, &c), 0);
    cr_assert_eq(sim_engine_new(s, c, t, NULL, &e), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "no link between g0 and g1"), "%s", ps_errmsg());
    sch_costs_free(c);
    sch_partition_free(part);
    sch_schedule_free(s);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

Test(links, bad_fabric_input_is_one_clear_error)
{
    parse_fails("{" DEV2 ", \"switches\": {}}", PS_EPARSE, "t.json:1:");
    parse_fails("{" DEV2 ", \"switches\": {}}", PS_EPARSE, "switches: must be an array");
    parse_fails("{" DEV2 ", \"switches\": [3]}", PS_EPARSE, "switches[0]: must be an object");
    parse_fails("{" DEV2 ", \"switches\": [{}]}", PS_EPARSE, "switches[0]: missing field 'name'");
    parse_fails("{" DEV2 ", \"switches\": [{\"name\": \"s\", \"ports\": 4}]}", PS_EPARSE,
                "switches[0]: unknown field 'ports'");
    parse_fails("{" DEV2 ", \"switches\": [{\"name\": \"s\", \"kind\": 4}]}", PS_EPARSE,
                "switches[0].kind: must be a string");
    parse_fails("{" DEV2 ", \"switches\": [{\"name\": \"g1\"}]}", PS_EINVAL,
                "switches[0].name: duplicate node name 'g1'");
    parse_fails("{" DEV2 ", \"switches\": [{\"name\": \"s\"}, {\"name\": \"s\"}]}", PS_EINVAL,
                "switches[1].name: duplicate node name 's'");
    parse_fails("{" DEV2 ", \"switches\": [{\"name\": \"s\"}], \"links\": [{\"name\": \"l\", "
                "\"endpoints\": [\"g0\", \"g1\"], \"bandwidth\": 1}]}", PS_EINVAL,
                "switches[0]: switch 's' is an endpoint of no link");
    parse_fails("{" DEV2 ", \"links\": [{\"name\": \"l\", \"endpoints\": [\"g0\", \"g1\"], "
                "\"bandwidth\": 1, \"overhead_s\": -1}]}", PS_EINVAL,
                "links[0].overhead_s: must be >= 0");
    parse_fails("{" DEV2 ", \"links\": [{\"name\": \"l\", \"endpoints\": [\"g0\", \"g1\"], "
                "\"bandwidth\": 1, \"overhead_s\": \"1\"}]}", PS_EPARSE,
                "links[0].overhead_s: must be a number");
    parse_fails("{" DEV2 ", \"links\": [{\"name\": \"l\", \"endpoints\": [\"g0\", \"g1\"], "
                "\"bandwidth\": 1, \"comment\": 1}]}", PS_EPARSE,
                "links[0].comment: must be a string");
    parse_fails("{" DEV2 ", \"switches\": [{\"name\": \"s\"}], \"links\": [{\"name\": \"l\", "
                "\"endpoints\": [\"g0\", \"sx\"], \"bandwidth\": 1}]}", PS_EINVAL,
                "links[0].endpoints[1]: unknown device 'sx'");
    parse_fails("{" DEV2 ", \"switches\": [{\"name\": \"s\"}], \"links\": ["
                "{\"name\": \"l\", \"endpoints\": [\"g0\", \"s\"], \"bandwidth\": 1},"
                "{\"name\": \"m\", \"endpoints\": [\"s\", \"g0\"], \"bandwidth\": 1}]}",
                PS_EINVAL, "links[1].endpoints: a second link between 's' and 'g0'");
}

/* Same fabric, same answer, twice (ties pop in insertion order). */
Test(links, fabric_runs_repeat_bit_identically)
{
    struct mdl_topology *t = parse(two_sockets);
    struct mdl_profile *p = th_uniform(4, 1500, 2500, 2, 3000, 100, 10);
    sch_time first = 0;
    for (int i = 0; i < 2; i++) {
        struct th_run run;
        th_simulate(&run, "1f1b", p, t, 2, 8, SCH_REMAT_EXCEPT_LAST, 2, 0);
        if (!i)
            first = run.r->makespan;
        else
            cr_assert_eq(run.r->makespan, first);
        th_release(&run);
    }
    mdl_profile_free(p);
    mdl_topology_free(t);
}

static int dev_ix(const struct mdl_topology *t, const char *name)
{
    for (int d = 0; d < t->n_devices; d++)
        if (!strcmp(t->devices[d].name, name))
            return d;
    cr_assert_fail("no device %s in %s", name, t->path);
    return -1;
}

static struct mdl_route route_of(const struct mdl_topology *t, const char *a, const char *b)
{
    struct mdl_route r;
    cr_assert_eq(mdl_topology_route(t, dev_ix(t, a), dev_ix(t, b), &r), 0, "%s", ps_errmsg());
    return r;
}

/* The fabric presets load, every device pair has a route, and the routes
 * are the ones the files' comments describe. */
Test(links, fabric_presets_route_as_documented)
{
    const char *files[] = { "p100-pcie-dual-root", "p40-pcie-8", "dgx1-v100", "dgx-a100",
                            "tpu-v3-torus", "dgx-h100" };
    for (int i = 0; i < 6; i++) {
        char path[128];
        snprintf(path, sizeof path, "models/topologies/%s.json", files[i]);
        struct mdl_topology *t;
        cr_assert_eq(mdl_topology_load(path, &t), 0, "%s", ps_errmsg());
        for (int a = 0; a < t->n_devices; a++)
            for (int b = 0; b < t->n_devices; b++) {
                struct mdl_route r;
                if (a != b)
                    cr_assert_eq(mdl_topology_route(t, a, b, &r), 0, "%s: %s", path,
                                 ps_errmsg());
            }
        struct mdl_route r;
        if (i < 2) { /* PCIe trees: same switch, same socket, across sockets */
            r = route_of(t, "gpu0", "gpu1");
            cr_assert_eq(r.n_hops, 2);
            cr_assert_eq(r.bandwidth, 1.5754e10);
            cr_assert(fabs(r.latency - (2 * 5e-7 + 2 * 5e-6)) < 1e-15);
            cr_assert_eq(route_of(t, "gpu1", "gpu2").n_hops, 4);
            r = route_of(t, "gpu3", "gpu4");
            cr_assert_eq(r.n_hops, 5);
            cr_assert_str_eq(t->links[r.hops[2].link].name, "qpi");
            cr_assert(fabs(r.latency - (5 * 5e-7 + 2 * 5e-6)) < 1e-15);
        } else if (i == 2) { /* DGX-1: NVLink where a pair has it, else PCIe */
            r = route_of(t, "gpu0", "gpu3");
            cr_assert_eq(r.n_hops, 1);
            cr_assert_eq(r.bandwidth, 5e10);
            cr_assert_eq(route_of(t, "gpu0", "gpu1").bandwidth, 2.5e10);
            r = route_of(t, "gpu0", "gpu6");
            cr_assert_eq(r.n_hops, 5, "no NVLink: PCIe across the sockets");
            cr_assert_eq(r.bandwidth, 1.5754e10);
            int nvl[8] = { 0 };
            for (int k = 0; k < t->n_links; k++)
                if (!strncmp(t->links[k].name, "nvlink", 6)) {
                    int n = t->links[k].name[6] - '0';
                    for (int e = 0; e < 2; e++)
                        nvl[t->links[k].name[6 + 6 + (e ? 5 : 0)] - '0'] += n;
                }
            for (int g = 0; g < 8; g++)
                cr_assert_eq(nvl[g], 6, "gpu%d has %d NVLinks", g, nvl[g]);
            for (int d = 0; d + 1 < 8; d++)
                cr_assert_eq(mdl_topology_route(t, d, d + 1, &r), 0);
            for (int d = 0; d + 1 < 8; d++) {
                mdl_topology_route(t, d, d + 1, &r);
                cr_assert_eq(r.n_hops, 1, "stage %d -> %d over NVLink", d, d + 1);
            }
        } else if (i == 3 || i == 5) { /* DGX A100, H100: all pairs through the NVSwitch */
            r = route_of(t, "gpu2", "gpu7");
            cr_assert_eq(r.n_hops, 2);
            cr_assert_eq(r.bandwidth, i == 3 ? 3e11 : 4.5e11, "%s", path);
            cr_assert(fabs(r.latency - (2 * 5e-7 + 2 * 5e-6)) < 1e-15);
        } else { /* TPU v3 4x4 torus, X first */
            cr_assert_eq(t->n_devices, 32);
            cr_assert_eq(route_of(t, "core00_0", "core00_1").n_hops, 2);
            r = route_of(t, "core00_0", "core30_0");
            cr_assert_eq(r.n_hops, 3, "the wrap-around link: one ICI hop");
            r = route_of(t, "core00_0", "core22_0");
            cr_assert_eq(r.n_hops, 6);
            cr_assert_str_eq(t->links[r.hops[1].link].name, "ici-x00", "X first");
            cr_assert(fabs(r.latency - 4e-6) < 1e-15);
            for (int d = 0; d + 1 < 32; d++) {
                mdl_topology_route(t, d, d + 1, &r);
                cr_assert_leq(r.n_hops, 3, "stage %d -> %d: one ICI hop at most", d, d + 1);
            }
        }
        mdl_topology_free(t);
    }
}

/* Data-parallel replicas on a fabric: K = 1, R = 2 on the two-socket
 * topology (one stage, replica 1 on g1). The all-reduce of 1e6 parameters
 * (4e6 B) runs over the 5-hop route: 2(R-1)/R * 4e6 / 5e9 = 800 us, plus
 * 2(R-1) * 7 us = 14 us, 814 us in all, held on every hop of the ring. */
Test(links, allreduce_rides_the_route)
{
    struct mdl_topology *t = parse(two_sockets);
    struct mdl_profile *p = th_uniform(1, 1000, 2000, 1, 0, 0, 1e6);
    struct sch_schedule *s;
    struct sch_partition *part;
    struct sch_costs *c;
    sim_engine *e;
    cr_assert_eq(sch_schedule_gpipe(1, 1, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(sch_schedule_add_allreduce(s, 2), 0);
    cr_assert_eq(sch_partition_uniform(1, 1, &part), 0);
    cr_assert_eq(sch_costs_new(p, t, part, s->stage_device, 1, &c), 0, "%s", ps_errmsg());
    cr_assert_eq(sim_simulate(s, c, t, 0, &e), 0, "%s", ps_errmsg());
    const struct sim_result *r = sim_engine_result(e);
    cr_assert_eq(r->busy_allreduce[0], 814000, "%lld", (long long)r->busy_allreduce[0]);
    sim_engine_free(e);
    sch_costs_free(c);
    sch_partition_free(part);
    sch_schedule_free(s);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* An independent recurrence for GPipe (no re-materialization, free update)
 * on a chain of dedicated links under the new rule, written from the
 * definitions (sim_engine.h, mdl_topology.h), not from the engine: device
 * s runs its compute list F0..F(M-1), B(M-1)..B0 in order, each op when
 * the previous one ended and its input arrived; its send stream runs
 * sendF0..sendF(M-1), sendB(M-1)..sendB0 in order, each when its producer
 * ended and the previous send left the stream; a send holds its link and
 * stream x_s ns and arrives L ns after that. Makespan = the last B0 end.
 * Random stage costs, cut sizes and latencies; to the nanosecond. */
static uint64_t lcg(uint64_t *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return *st >> 33;
}

static int64_t mx(int64_t a, int64_t b) { return a > b ? a : b; }

Test(links, gpipe_recurrence_agrees_with_the_engine)
{
    uint64_t seed = 14;
    int cases = 0;
    for (int it = 0; it < 300; it++) {
        int K = 2 + (int)(lcg(&seed) % 5), M = 1 + (int)(lcg(&seed) % 8);
        int64_t L = (int64_t)(lcg(&seed) % 3000);
        double f[8], b[8], out[8];
        for (int s = 0; s < K; s++) {
            f[s] = (double)(1 + lcg(&seed) % 2000);
            b[s] = (double)(2 + lcg(&seed) % 4000); /* a backward takes >= 2 ns */
            out[s] = (double)(lcg(&seed) % 2500); /* bytes = ns at 1 GB/s */
        }
        int64_t F[8][8], B[8][8], sF[8][8], sB[8][8]; /* ends; send starts */
        for (int s = 0; s < K; s++) {
            int64_t comp = 0, snd = 0; /* compute and send stream free at */
            for (int m = 0; m < M; m++) {
                int64_t in = s ? sF[s - 1][m] + (int64_t)out[s - 1] + L : 0;
                F[s][m] = mx(comp, in) + (int64_t)f[s];
                comp = F[s][m];
                if (s + 1 < K) {
                    sF[s][m] = mx(F[s][m], snd);
                    snd = sF[s][m] + (int64_t)out[s];
                }
            }
            (void)snd;
        }
        for (int s = K - 1; s >= 0; s--) {
            int64_t comp = F[s][M - 1];
            int64_t snd = s + 1 < K ? sF[s][M - 1] + (int64_t)out[s] : 0;
            for (int m = M - 1; m >= 0; m--) {
                int64_t in = s + 1 < K ? sB[s + 1][m] + (int64_t)out[s] + L : 0;
                B[s][m] = mx(comp, in) + (int64_t)b[s];
                comp = B[s][m];
                if (s > 0) {
                    sB[s][m] = mx(B[s][m], snd);
                    snd = sB[s][m] + (int64_t)out[s - 1];
                }
            }
        }
        int64_t want = 0;
        for (int s = 0; s < K; s++)
            want = mx(want, B[s][0]);
        struct mdl_profile *p = th_profile(K, f, b, 1, out, NULL, 0);
        struct mdl_topology *t = th_chain(K, 0, 1e9, (double)L * 1e-9);
        struct th_run run;
        th_simulate(&run, "gpipe", p, t, K, M, SCH_REMAT_NEVER, 1, 0);
        cr_assert_eq(run.r->makespan, want, "case %d K=%d M=%d L=%lld: engine %lld, "
                     "recurrence %lld", it, K, M, (long long)L, (long long)run.r->makespan,
                     (long long)want);
        th_release(&run);
        mdl_topology_free(t);
        mdl_profile_free(p);
        cases++;
    }
    cr_assert_eq(cases, 300);
}

/* The incidence index (mdl_topology_index) gives what a scan of the links
 * gives: for every pair of nodes the first listed link joining them, with
 * a bus over a dedicated link and switches; and routes through it equal
 * the routes without the index (a topology edited after load). */
Test(links, the_incidence_index_finds_what_a_scan_finds)
{
    struct mdl_topology *t = parse(
        "{\"devices\": [{\"name\": \"g\", \"count\": 5, \"flops\": 1e12, \"memory\": 1e12}],"
        " \"switches\": [{\"name\": \"sw\"}],"
        " \"links\": [{\"name\": \"a\", \"endpoints\": [\"g1\", \"g2\"], \"bandwidth\": 1e9},"
        " {\"name\": \"bus\", \"endpoints\": [\"g0\", \"g1\", \"g2\", \"g3\", \"sw\"],"
        "  \"shared\": true,"
        "  \"bandwidth\": 2e9},"
        " {\"name\": \"up4\", \"endpoints\": [\"g4\", \"sw\"], \"bandwidth\": 5e9}]}");
    const int *first, *inc = mdl_topology_incidence(t, &first);
    cr_assert_not_null(inc, "the loader builds the index");
    int nn = t->n_devices + t->n_switches;
    for (int a = 0; a < nn; a++)
        for (int b = 0; b < nn; b++) {
            if (a == b)
                continue;
            int want = -1;
            for (int i = 0; i < t->n_links && want < 0; i++) {
                int ha = 0, hb = 0;
                for (int k = 0; k < t->links[i].n_ends; k++) {
                    ha |= t->links[i].ends[k] == a;
                    hb |= t->links[i].ends[k] == b;
                }
                if (ha && hb)
                    want = i;
            }
            cr_assert_eq(mdl_topology_link_between(t, a, b), want, "%d-%d", a, b);
        }
    cr_assert_eq(mdl_topology_link_between(t, 1, 2), 0, "the first listed of a and bus");
    cr_assert_eq(mdl_topology_link_between(t, 0, 2), 1, "the bus");
    cr_assert_eq(mdl_topology_link_between(t, 0, 4), -1);
    struct mdl_route with[5][5], without;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            if (a != b)
                cr_assert_eq(mdl_topology_route(t, a, b, &with[a][b]), 0, "%s", ps_errmsg());
    cr_assert_eq(with[0][4].n_hops, 2, "g0 -bus- sw -up4- g4");
    /* an edited topology (one link fewer, then back) is not read through a
     * stale index */
    t->n_links--;
    cr_assert_null(mdl_topology_incidence(t, &first));
    cr_assert_eq(mdl_topology_route(t, 0, 4, &without), -PS_EINVAL, "up4 is gone");
    t->n_links++;
    cr_assert_not_null(mdl_topology_incidence(t, &first));
    free(t->inc);
    t->inc = NULL;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++) {
            if (a == b)
                continue;
            cr_assert_eq(mdl_topology_route(t, a, b, &without), 0);
            cr_assert_eq(without.n_hops, with[a][b].n_hops, "%d-%d", a, b);
            for (int h = 0; h < without.n_hops; h++)
                cr_assert_eq(without.hops[h].link, with[a][b].hops[h].link, "%d-%d", a, b);
        }
    mdl_topology_free(t);
}

/* What a probe of the topology format found. A counted device keeps its
 * whole name (a 52-byte name was cut to 50 before its index); a route over
 * 32 hops says so (it read "no link or route joins them"); a transfer too
 * long for the clock names the route's slowest link (it named the first);
 * presets lists each run of devices with its own entry's preset (a name
 * prefix gave gpu the preset of g) and tells kinds apart (c and d read
 * "2 x c"). */
Test(links, topology_names_routes_and_runs)
{
    char dir[64], x52[53];
    memset(x52, 'x', 52);
    x52[52] = 0;
    th_tmpdir(dir, sizeof dir, "links-probe");
    char j[1024];
    snprintf(j, sizeof j, "{\"devices\": [{\"name\": \"%s\", \"count\": 2, \"flops\": 1e12, "
             "\"memory\": 1e9}], \"links\": [{\"name\": \"l\", \"endpoints\": [\"%s0\", "
             "\"%s1\"], \"bandwidth\": 1e9}]}", x52, x52, x52);
    struct mdl_topology *t = th_topo(j);
    cr_expect_eq(strlen(t->devices[1].name), 53);
    cr_expect_eq(t->devices[1].name[52], '1');
    mdl_topology_free(t);
    /* 34 switches in a chain: 35 hops from d0 to d1 */
    char big[8192] = "{\"devices\": [{\"name\": \"d\", \"count\": 2, \"flops\": 1e12, "
                     "\"memory\": 1e9}], \"switches\": [";
    for (int s = 0; s < 34; s++)
        snprintf(big + strlen(big), sizeof big - strlen(big), "%s{\"name\": \"s%d\"}",
                 s ? ", " : "", s);
    strcat(big, "], \"links\": [{\"name\": \"a\", \"endpoints\": [\"d0\", \"s0\"], "
                "\"bandwidth\": 1e9}");
    for (int s = 0; s < 33; s++)
        snprintf(big + strlen(big), sizeof big - strlen(big), ", {\"name\": \"h%d\", "
                 "\"endpoints\": [\"s%d\", \"s%d\"], \"bandwidth\": 1e9}", s, s, s + 1);
    strcat(big, ", {\"name\": \"z\", \"endpoints\": [\"s33\", \"d1\"], \"bandwidth\": 1e9}]}");
    th_put(dir, "long.json", big);
    char out[1024];
    cr_assert_eq(th_capture(out, sizeof out, "%s predict --model mlp:layers=2,width=8 "
                            "--topology %s/long.json -K 2 -M 1 --batch 1 2>&1", th_pipesim(),
                            dir), 4, "%s", out);
    cr_expect(strstr(out, "takes 35 hops, more than 32 (stages 0 and 1)"), "%s", out);
    /* the slow link is the last of three */
    th_put(dir, "slow.json", "{\"devices\": [{\"name\": \"d\", \"count\": 2, \"flops\": 1e12, "
           "\"memory\": 1e9}], \"switches\": [{\"name\": \"s\"}, {\"name\": \"u\"}], "
           "\"links\": [{\"name\": \"a\", \"endpoints\": [\"d0\", \"s\"], \"bandwidth\": 4e9}, "
           "{\"name\": \"b\", \"endpoints\": [\"s\", \"u\"], \"bandwidth\": 4e9}, "
           "{\"name\": \"c\", \"endpoints\": [\"u\", \"d1\"], \"bandwidth\": 1e-6}]}");
    th_put(dir, "p.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,1e9,0,1e6,0\n"
                         "b,1e9,0,1e6,0\n");
    cr_assert_eq(th_capture(out, sizeof out, "%s predict --model %s/p.csv --topology "
                            "%s/slow.json -K 2 -M 1 --batch 1 2>&1", th_pipesim(), dir, dir), 4,
                 "%s", out);
    cr_expect(strstr(out, "slow.json:1:283: links[2].bandwidth: link c: a transfer of "), "%s",
              out);
    /* presets: runs by entry, preset and kind */
    cr_assert_eq(th_sh("mkdir -p %s/data/topologies && cp models/topologies/devices.json "
                       "%s/data/topologies/", dir, dir), 0);
    th_put(dir, "data/topologies/mix.json",
           "{\"devices\": [{\"name\": \"g\", \"preset\": \"tesla-p40\"}, {\"name\": \"gpu\", "
           "\"count\": 2, \"preset\": \"v100-sxm2\"}, {\"name\": \"c\", \"flops\": 1e12, "
           "\"memory\": 1e9}, {\"name\": \"d\", \"flops\": 1e12, \"memory\": 1e9}], "
           "\"links\": [{\"name\": \"bus\", \"endpoints\": \"*\", \"bandwidth\": 1e9, "
           "\"shared\": true}]}");
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s/data %s presets --format json "
                            "| python3 -c 'import json,sys; print([(r[\"count\"], r[\"kind\"], "
                            "r[\"preset\"]) for r in json.load(sys.stdin)[\"topologies\"][0]"
                            "[\"device_runs\"]])'", dir, th_pipesim()), 0, "%s", out);
    cr_expect_str_eq(out, "[(1, 'g', 'tesla-p40'), (2, 'gpu', 'v100-sxm2'), (1, 'c', None), "
                          "(1, 'd', None)]\n");
    th_sh("rm -rf %s", dir);
}

/* A count written as a whole real (2.0, 3e0) is that count, as device presets take whole
 * numbers; presets' runs count it too. It was refused as not an integer (exit 3) while
 * 1e18 and 4294967298 were the same error with exit 3 and 4 (tests/test_badinput.c). */
Test(links, a_count_written_as_a_whole_real_is_that_count)
{
    struct mdl_topology *t = th_topo("{\"devices\": [{\"name\": \"d\", \"count\": 2.0, "
                                     "\"flops\": 1e12, \"memory\": 1e9}, {\"name\": \"e\", "
                                     "\"count\": 3e0, \"flops\": 1e12, \"memory\": 1e9}]}");
    cr_assert_eq(t->n_devices, 5);
    cr_expect_str_eq(t->devices[1].name, "d1");
    cr_expect_str_eq(t->devices[4].name, "e2");
    mdl_topology_free(t);
    char dir[64], out[1024];
    th_tmpdir(dir, sizeof dir, "links-count");
    cr_assert_eq(th_sh("mkdir -p %s/topologies", dir), 0);
    th_put(dir, "topologies/c.json", "{\"devices\": [{\"name\": \"d\", \"count\": 2.0, "
           "\"flops\": 1e12, \"memory\": 1e9, \"preset\": \"x\"}, {\"name\": \"d\", "
           "\"flops\": 1e12, \"memory\": 1e9}]}");
    th_put(dir, "topologies/devices.json", "{\"devices\": {\"x\": {\"flops\": 1e12, "
           "\"memory\": 1e9}}}");
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets --format json "
                            "| python3 -c 'import json,sys; print([(r[\"count\"], r[\"kind\"], "
                            "r[\"preset\"]) for r in json.load(sys.stdin)[\"topologies\"][0]"
                            "[\"device_runs\"]])'", dir, th_pipesim()), 0, "%s", out);
    cr_expect_str_eq(out, "[(2, 'd', 'x'), (1, 'd', None)]\n");
    th_sh("rm -rf %s", dir);
}

/* A second "*" link over many devices is refused before a list of every device is
 * built for it (helper-98: 400 such links over 1048576 devices took 5.4 GB, then were
 * refused; under 1.5 GB of address space they ran out of memory first). */
Test(links, a_second_star_link_over_many_devices_is_refused_at_once, .timeout = 60)
{
    th_skip_if_sanitized(th_pipesim());
    char dir[128];
    th_tmpdir(dir, sizeof dir, "links");
    cr_assert_eq(th_sh("cd %s && { printf '{\"devices\":[{\"name\":\"d\",\"count\":1048576,"
                       "\"flops\":1e12,\"memory\":1e9}],\"links\":['; for i in $(seq 400); do "
                       "printf '%%s{\"name\":\"l%%d\",\"endpoints\":\"*\",\"shared\":true,"
                       "\"bandwidth\":1}' \"$([ $i = 1 ] || echo ,)\" $i; done; echo ']}'; } > "
                       "t.json", dir), 0);
    cr_expect_eq(th_sh("cd %s && (ulimit -v 1500000; %s predict --model mlp:layers=8,width=8 "
                       "--topology t.json -K 2 -M 1 --batch 1 2> err); test $? = 4 && grep -q "
                       "\"t.json:1:[0-9]*: links\\[1\\].endpoints: earlier links already join "
                       "every two of its 1048576 endpoints (the first: links\\[0\\] 'l1')\" err",
                       dir, th_pipesim()), 0);
    th_sh("rm -rf %s", dir);
}
