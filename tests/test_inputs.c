/*
 * Input loading at scale and its messages (issue 12): the profile loader's
 * duplicate-name check in O(n log n), duplicate links in topologies, byte
 * order marks, and the one-line messages of numbers out of range. The large
 * cases carry a .timeout: a quadratic check would take minutes.
 */
#include "helpers.h"

#include "traces/trc_trace.h"

#include <unistd.h>

static char path[64];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/pipesim-inputs-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(inputs, .init = setup, .fini = teardown, .timeout = 60);

static void put(const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    cr_assert_geq(fputs(text, f), 0);
    cr_assert_eq(fclose(f), 0);
}

/* Loads path as a profile; expects error `code` whose message holds `what`. */
static void bad_profile(int code, const char *what)
{
    struct mdl_profile *p = (void *)1;
    cr_assert_eq(mdl_profile_load(path, &p), -code, "rc: %s", ps_errmsg());
    cr_assert_null(p);
    cr_assert(strstr(ps_errmsg(), what), "message '%s' lacks '%s'", ps_errmsg(), what);
    cr_assert(strstr(ps_errmsg(), path), "message '%s' lacks the path", ps_errmsg());
    cr_assert_null(strchr(ps_errmsg(), '\n'));
}

#define CSV_H "name,fwd_flops,params,out_bytes,stash_bytes\n"

/* The first repetition in file order is named, with its line and column,
 * whatever order the names sort in. */
Test(inputs, duplicate_layer_named_at_first_repetition)
{
    put(CSV_H "z,1,1,1,1\nb,1,1,1,1\nc,1,1,1,1\n  b,1,1,1,1\nz,1,1,1,1\n");
    bad_profile(PS_EINVAL, ":5:3: duplicate layer name 'b'");
    put(CSV_H "z,1,1,1,1\nb,1,1,1,1\nz,1,1,1,1\nb,1,1,1,1\n");
    bad_profile(PS_EINVAL, ":4:1: duplicate layer name 'z'");
    /* the name column need not come first */
    put("fwd_flops,params,out_bytes,stash_bytes,name\n1,1,1,1,x\n1,1,1,1,y\n1,1,1,1,x\n");
    bad_profile(PS_EINVAL, ":4:9: duplicate layer name 'x'");
    /* names that differ only late, or are prefixes of each other, are distinct */
    put(CSV_H "layer1,1,1,1,1\nlayer10,1,1,1,1\nlayer1x,1,1,1,1\nlayer,1,1,1,1\n");
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(path, &p), 0, "%s", ps_errmsg());
    cr_assert_eq(p->n_layers, 4);
    mdl_profile_free(p);
}

/* 200 000 layers: loads (all distinct) and finds the one repeated name at
 * the end; a pairwise check takes about 100 s here. */
Test(inputs, large_profile_loads_and_finds_a_duplicate, .timeout = 60)
{
    enum { N = 200000 };
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(CSV_H, f);
    for (int i = 0; i < N; i++)
        fprintf(f, "l%d,%d,1,1,1\n", (int)((i * 7919L) % N), 1 + i % 7);
    cr_assert_eq(fclose(f), 0);
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(path, &p), 0, "%s", ps_errmsg());
    cr_assert_eq(p->n_layers, N);
    cr_assert_str_eq(p->layers[1].name, "l7919");
    mdl_profile_free(p);
    f = fopen(path, "a");
    cr_assert(f);
    fprintf(f, "l%d,1,1,1,1\n", 12345);
    cr_assert_eq(fclose(f), 0);
    char want[64];
    snprintf(want, sizeof want, ":%d:1: duplicate layer name 'l12345'", N + 2);
    bad_profile(PS_EINVAL, want);
}

/* Measured points are copied into the profile (out of line since the layer
 * records shrank): a layer given to mdl_profile_add may be reused. */
Test(inputs, profile_add_copies_measured_points)
{
    struct mdl_profile *p = mdl_profile_new("<test>", 1);
    cr_assert(p);
    double b[2] = { 4, 16 }, fw[2] = { 1, 2 }, bw[2] = { 3, 4 }, ns[2] = { 5, 6 };
    struct mdl_layer l = { .fwd = 1, .bwd = 2, .at_batch = 8, .n_pts = 2, .pt_batch = b,
                           .pt_fwd = fw, .pt_bwd = bw, .pt_nostash = ns };
    strcpy(l.name, "a");
    cr_assert_eq(mdl_profile_add(p, &l), 0);
    b[0] = fw[0] = bw[0] = ns[0] = -1;
    l.n_pts = 0;
    strcpy(l.name, "b");
    cr_assert_eq(mdl_profile_add(p, &l), 0);
    const struct mdl_layer *a = &p->layers[0];
    cr_assert_eq(a->n_pts, 2);
    cr_expect_eq(a->pt_batch[0], 4);
    cr_expect_eq(a->pt_batch[1], 16);
    cr_expect_eq(a->pt_fwd[0], 1);
    cr_expect_eq(a->pt_bwd[1], 4);
    cr_expect_eq(a->pt_nostash[0], 5);
    cr_expect_eq(p->layers[1].n_pts, 0);
    cr_expect_null(p->layers[1].pt_batch);
    mdl_profile_free(p);
}

/* ---- topologies: a second link between the same two devices ---- */

#define DEV4 "{\"name\":\"d\",\"count\":4,\"flops\":1e12,\"memory\":1e9}"
#define LINK(n, a, b) "{\"name\":\"" n "\",\"endpoints\":[\"" a "\",\"" b "\"],\"bandwidth\":1e9}"
#define SHARED2(n, a, b)                                                                  \
    "{\"name\":\"" n "\",\"endpoints\":[\"" a "\",\"" b "\"],\"bandwidth\":1e9,\"shared\":true}"
#define BUS(n) "{\"name\":\"" n "\",\"endpoints\":\"*\",\"bandwidth\":1e9,\"shared\":true}"
#define BUS3(n, a, b, c)                                                                  \
    "{\"name\":\"" n "\",\"endpoints\":[\"" a "\",\"" b "\",\"" c "\"],\"bandwidth\":1e9,"      \
    "\"shared\":true}"
#define TOPO(links) "{\"devices\":[" DEV4 "],\n\"links\":[\n" links "]}"

static void bad_topology(const char *text, const char *what)
{
    struct mdl_topology *t = (void *)1;
    cr_assert_eq(mdl_topology_parse(text, strlen(text), "t.json", &t), -PS_EINVAL,
                 "'%s': %s", text, ps_errmsg());
    cr_assert_null(t);
    cr_assert(strstr(ps_errmsg(), what), "message '%s' lacks '%s'", ps_errmsg(), what);
    cr_assert_null(strchr(ps_errmsg(), '\n'));
}

static void good_topology(const char *text, int n_links)
{
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_parse(text, strlen(text), "t.json", &t), 0, "'%s': %s", text,
                 ps_errmsg());
    cr_assert_eq(t->n_links, n_links);
    mdl_topology_free(t);
}

Test(inputs, second_link_between_two_devices_is_an_error)
{
    /* same direction, the reverse direction (links are full duplex), and a
     * shared link of two endpoints: each names the later link, its line,
     * column and field, and the link that would win */
    bad_topology(TOPO(LINK("a", "d0", "d1") ",\n" LINK("b", "d1", "d2") ",\n"
                      LINK("c", "d0", "d1")),
                 "t.json:5:13: links[2].endpoints: a second link between 'd0' and 'd1': "
                 "links[0] ('a') already joins them");
    bad_topology(TOPO(LINK("slow", "d1", "d0") ",\n" LINK("fast", "d0", "d1")),
                 "t.json:4:16: links[1].endpoints: a second link between 'd0' and 'd1': "
                 "links[0] ('slow') already joins them");
    bad_topology(TOPO(LINK("a", "d2", "d3") ",\n" SHARED2("b", "d3", "d2")),
                 "links[1].endpoints: a second link between 'd3' and 'd2': links[0] ('a')");
    /* a bus listed first already joins every pair of its devices */
    bad_topology(TOPO(BUS("bus") ",\n" LINK("nv", "d0", "d3")),
                 "links[1].endpoints: a second link between 'd0' and 'd3': links[0] ('bus')");
    /* the earliest offender in file order, whichever check finds it */
    bad_topology(TOPO(LINK("a", "d0", "d1") ",\n" LINK("b", "d1", "d0") ",\n"
                      LINK("a", "d2", "d3")),
                 "links[1].endpoints: a second link");
    bad_topology(TOPO(LINK("a", "d0", "d1") ",\n" LINK("a", "d1", "d2") ",\n"
                      LINK("b", "d1", "d0")),
                 "t.json:4:2: links[1].name: duplicate link name 'a' (also links[0])");
    /* a bus whose every two devices earlier links join carries nothing:
     * "*" twice, one inside an earlier bus, one over three dedicated links */
    bad_topology(TOPO(BUS("bus1") ",\n" BUS("bus2")),
                 "t.json:4:16: links[1].endpoints: earlier links already join every two of "
                 "its 4 endpoints (the first: links[0] 'bus1'), so it would carry no traffic");
    bad_topology(TOPO(BUS("all") ",\n" BUS3("some", "d3", "d1", "d2")),
                 "links[1].endpoints: earlier links already join every two of its 3 endpoints "
                 "(the first: links[0] 'all')");
    bad_topology(TOPO(LINK("a", "d0", "d1") ",\n" LINK("b", "d3", "d0") ",\n"
                      LINK("c", "d1", "d2") ",\n" LINK("e", "d1", "d3") ",\n"
                      BUS3("bus", "d0", "d1", "d3")),
                 "links[4].endpoints: earlier links already join every two of its 3 endpoints "
                 "(the first: links[0] 'a')");
    /* what stays legal: dedicated links before a bus (the bus serves the
     * other pairs), overlapping buses, distinct pairs */
    good_topology(TOPO(LINK("nv01", "d0", "d1") ",\n" LINK("nv23", "d3", "d2") ",\n" BUS("pcie")),
                  3);
    good_topology(TOPO(BUS3("bus1", "d0", "d1", "d2") ",\n" BUS3("bus2", "d1", "d2", "d3")), 2);
    good_topology(TOPO(LINK("a", "d0", "d1") ",\n" LINK("b", "d1", "d2") ",\n"
                       LINK("c", "d0", "d2") ",\n" LINK("e", "d3", "d0")),
                  4);
    /* two of a bus's three pairs joined before: it serves the third */
    good_topology(TOPO(LINK("a", "d0", "d1") ",\n" LINK("b", "d3", "d0") ",\n"
                       BUS3("bus", "d0", "d1", "d3")),
                  3);
}

/* A chain of 2^17 devices and links loads; a repeated pair at the end is
 * found (a pairwise check of 131 072 links is about 10^10 comparisons). */
Test(inputs, large_topology_finds_a_second_link, .timeout = 60)
{
    enum { N = 1 << 17 };
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "{\"devices\":[{\"name\":\"g\",\"count\":%d,\"flops\":1,\"memory\":1}],"
               "\"links\":[\n", N);
    for (int i = 0; i + 1 < N; i++)
        fprintf(f, "{\"name\":\"l%d\",\"endpoints\":[\"g%d\",\"g%d\"],\"bandwidth\":1},\n", i,
                i + 1, i);
    fprintf(f, "{\"name\":\"bus\",\"endpoints\":\"*\",\"bandwidth\":1,\"shared\":true}]}\n");
    cr_assert_eq(fclose(f), 0);
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load(path, &t), 0, "%s", ps_errmsg());
    cr_assert_eq(t->n_links, N);
    mdl_topology_free(t);
    /* the same with one more link after the bus */
    f = fopen(path, "r+");
    cr_assert(f);
    cr_assert_eq(fseek(f, -3, SEEK_END), 0);
    fprintf(f, ",\n{\"name\":\"late\",\"endpoints\":[\"g7\",\"g9\"],\"bandwidth\":1}]}\n");
    cr_assert_eq(fclose(f), 0);
    t = (void *)1;
    cr_assert_eq(mdl_topology_load(path, &t), -PS_EINVAL);
    char want[160];
    snprintf(want, sizeof want, ":%d:16: links[%d].endpoints: a second link between 'g7' and "
             "'g9': links[%d] ('bus')", N + 2, N, N - 1);
    cr_assert(strstr(ps_errmsg(), want), "'%s' lacks '%s'", ps_errmsg(), want);
}

/* ---- ops shorter than the clock tick ---- */

Test(inputs, sub_nanosecond_work_takes_at_least_one_tick)
{
    cr_expect_eq(sch_op_seconds_to_time(0), 0);
    cr_expect_eq(sch_op_seconds_to_time(1e-15), 1);
    cr_expect_eq(sch_op_seconds_to_time(0.4e-9), 1);
    cr_expect_eq(sch_op_seconds_to_time(2.4e-9), 2);
    cr_expect_eq(sch_op_seconds_to_time(2.6e-9), 3);
    cr_expect_eq(sch_seconds_to_time(0.4e-9), 0); /* transfers: plain rounding */
    /* a stage of 1e-15 s forward and backward: 1 ns and 2 ns (both halves
     * of a split backward take a tick) */
    struct mdl_profile *p = th_uniform(2, 1e-6, 1e-6, 1, 0, 0, 0);
    struct mdl_topology *t = th_chain(2, 0, 1e300, 0);
    struct th_run r;
    th_simulate(&r, "zb-h1", p, t, 2, 4, SCH_REMAT_NEVER, 1, 0);
    cr_expect_eq(r.c->st[0].fwd, 1);
    cr_expect_eq(r.c->st[0].bwd, 2);
    cr_expect_eq(r.c->st[0].bwd_input, 1);
    cr_expect_eq(r.c->st[0].bwd_weight, 1);
    cr_expect_gt(r.r->makespan, 0);
    cr_expect_lt(r.r->bubble, 1);
    th_release(&r);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* sch_costs_short_ops against the op lists: stage 0 holds a layer of 0.3 ns
 * forward and 0.6 ns backward (under the 1 ns tick, a whole backward under
 * 2 ns), the others 5 and 10 ns per layer; every compute op of every list
 * whose engine time is the minimum (1 or 2 ns) is one, and the total is
 * every F, R, B, W, U of the lists. Each schedule, with and without
 * re-materialization. */
Test(inputs, short_ops_are_the_ops_timed_at_the_minimum)
{
    static const char *const names[] = { "gpipe", "1f1b", "eager-1f1b", "interleaved:2",
                                         "breadth-first:2", "zb-h1", "zb-h2", "zb-v",
                                         "dualpipe-v" };
    static const enum sch_remat rm[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST };
    double f[8] = { 0.3, 5, 5, 5, 5, 5, 5, 5 }, b[8] = { 0.6, 10, 10, 10, 10, 10, 10, 10 };
    struct mdl_profile *p = th_profile(8, f, b, 1, NULL, NULL, 0);
    struct mdl_topology *t = th_chain(2, 0, 1e9, 0);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        for (int m = 0; m < 2; m++) {
            struct sch_schedule *s;
            struct sch_partition *part;
            struct sch_costs *c;
            cr_assert_eq(sch_schedule_build(names[i], 2, 4, rm[m], &s), 0, "%s", ps_errmsg());
            /* stage 0 is the short layer alone */
            cr_assert((part = sch_partition_new(s->n_stages, 8)));
            part->first[1] = 1;
            for (int st = 2; st <= s->n_stages; st++)
                part->first[st] = 1 + (st - 1) * 7 / (s->n_stages - 1);
            cr_assert_eq(sch_costs_new(p, t, part, s->stage_device, 1, &c), 0, "%s",
                         ps_errmsg());
            int64_t want = 0, want_total = 0;
            unsigned want_kinds = 0;
            for (int d = 0; d < s->n_devices; d++)
                for (int k = 0; k < s->n_ops[d]; k++) {
                    const struct sch_op *op = &s->ops[d][k];
                    if (!sch_op_is_compute(op->kind) || op->kind == SCH_OP_ALLREDUCE ||
                        op->kind == SCH_OP_RECV_ACT || op->kind == SCH_OP_RECV_GRAD)
                        continue;
                    want_total++;
                    sch_time dt = sch_costs_op_time(c, s, op);
                    if (dt == 1 || dt == 2) {
                        cr_assert_eq(op->stage, 0, "%s: %s of stage %d", names[i],
                                     sch_op_kind_name(op->kind), op->stage);
                        want++;
                        want_kinds |= 1u << op->kind;
                    }
                }
            int64_t total;
            unsigned kinds;
            cr_expect_eq(sch_costs_short_ops(c, s, &total, &kinds), want, "%s, remat %s",
                         names[i], sch_remat_name(rm[m]));
            cr_expect_eq(total, want_total, "%s", names[i]);
            cr_expect_eq(kinds, want_kinds, "%s: kinds %#x, not %#x", names[i], kinds,
                         want_kinds);
            cr_expect_eq(want, 4 * (2 + (s->has_wgrad ? 1 : 0)) + (m ? 3 : 0), "%s", names[i]);
            sch_costs_free(c);
            sch_partition_free(part);
            sch_schedule_free(s);
        }
    /* the bounds: 1 ns of forward and 2 ns of backward are timed as they are */
    double f1[1] = { 1 }, b1[1] = { 2 }, b2[1] = { 1.99 };
    struct mdl_profile *q[2] = { th_profile(1, f1, b1, 1, NULL, NULL, 0),
                                 th_profile(1, f1, b2, 1, NULL, NULL, 0) };
    for (int k = 0; k < 2; k++) {
        struct sch_schedule *s;
        struct sch_partition *part;
        struct sch_costs *c;
        cr_assert_eq(sch_schedule_build("gpipe", 1, 2, SCH_REMAT_NEVER, &s), 0);
        cr_assert_eq(sch_partition_uniform(1, 1, &part), 0);
        cr_assert_eq(sch_costs_new(q[k], t, part, s->stage_device, 1, &c), 0);
        int64_t total;
        unsigned kinds;
        cr_expect_eq(sch_costs_short_ops(c, s, &total, &kinds), k ? 2 : 0);
        cr_expect_eq(total, 5); /* 2 F, 2 B, U */
        cr_expect_eq(kinds, k ? 1u << SCH_OP_BWD : 0);
        sch_costs_free(c);
        sch_partition_free(part);
        sch_schedule_free(s);
        mdl_profile_free(q[k]);
    }
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* predict and compare-schedules say so on stderr, one line, and the JSON
 * counts them: the MLP of 4 layers of width 8 takes 5.76 ps of forward and
 * 10.88 ps of backward per sample on the ideal chain's devices. */
Test(inputs, short_ops_are_reported)
{
    char err[1024], out[8192];
    const char *ps = th_pipesim();
    const char *tiny = "--model mlp:layers=4,width=8 --topology "
                       "models/topologies/chain-8-ideal.json";
    cr_assert_eq(th_capture(out, sizeof out, "%s predict %s -K 1 -M 1 --batch 1 --format json "
                            "2>%s", ps, tiny, path), 0);
    th_slurp("/", path, err, sizeof err);
    cr_assert_str_eq(err, "pipesim predict: warning: 2 of 3 compute ops (F, B) are shorter "
                          "than the engine's 1 ns clock tick and were timed at 1 ns (a whole "
                          "backward at 2 ns): the step time is an upper bound and the "
                          "throughput a lower bound\n");
    cr_assert(strstr(out, "\"ops_below_tick\": 2,"), "%s", out);
    cr_assert(strstr(out, "\"step_s\": 3e-9,"), "%s", out);
    /* zero-bubble: F, B and W of both stages; re-materialized, R too */
    cr_assert_eq(th_capture(out, sizeof out, "%s predict %s -K 2 -M 4 --batch 8 --schedule "
                            "zb-h1 --remat except_last 2>%s", ps, tiny, path), 0);
    th_slurp("/", path, err, sizeof err);
    cr_assert_str_eq(err, "pipesim predict: warning: 30 of 32 compute ops (F, B, R, W) are "
                          "shorter than the engine's 1 ns clock tick and were timed at 1 ns (a "
                          "whole backward at 2 ns): the step time is an upper bound and the "
                          "throughput a lower bound\n");
    cr_assert_eq(th_capture(out, sizeof out, "%s compare-schedules %s -K 2 -M 4 --batch 8 "
                            "--schedules gpipe,zb-h1 --remat never --format json 2>%s", ps,
                            tiny, path), 0);
    th_slurp("/", path, err, sizeof err);
    cr_assert_str_eq(err, "pipesim compare-schedules: warning: gpipe 16 of 18, zb-h1 24 of 26 "
                          "compute ops are shorter than the engine's 1 ns clock tick and were "
                          "timed at 1 ns (a whole backward at 2 ns): those step times are "
                          "upper bounds and their throughputs lower bounds\n");
    cr_assert(strstr(out, "\"ops_below_tick\": 16") && strstr(out, "\"ops_below_tick\": 24"),
              "%s", out);
    /* width 512: 0.5 us per layer, nothing to say */
    cr_assert_eq(th_capture(out, sizeof out, "%s predict --model mlp:layers=4,width=512 "
                            "--topology models/topologies/chain-8-ideal.json -K 2 -M 4 "
                            "--batch 8 --format json 2>%s", ps, path), 0);
    th_slurp("/", path, err, sizeof err);
    cr_assert_str_eq(err, "");
    cr_assert(strstr(out, "\"ops_below_tick\": 0,"), "%s", out);
}

/* The brief's case: a tiny MLP on the ideal chain printed a 0 ms stage time,
 * no speedup line and a 100 % bubble. */
Test(inputs, tiny_model_predicts_real_times)
{
    char out[160];
    snprintf(out, sizeof out, "%s.txt", path);
    const char *cmd = "predict --model mlp:layers=4,width=8 --topology "
                      "models/topologies/chain-8-ideal.json -K 2 -M 4 --batch 8";
    cr_assert_eq(th_sh("%s %s --format json > %s", th_pipesim(), cmd, path), 0);
    cr_assert_eq(th_sh("grep -q '\"samples_per_s\": [1-9]' %s", path), 0);
    cr_assert_eq(th_sh("grep -q '\"baseline_step_s\": [1-9]' %s", path), 0);
    cr_assert_eq(th_sh("grep -q '\"fwd_s\": 1e-9,' %s", path), 0);
    cr_assert_neq(th_sh("grep -q '\"bubble_sim\": 1,' %s", path), 0, "a 100 %% bubble");
    cr_assert_neq(th_sh("grep -q '\"fwd_s\": 0,' %s", path), 0, "a free forward");
    /* the table shows the nanoseconds instead of 0.0000 */
    cr_assert_eq(th_sh("%s %s > %s", th_pipesim(), cmd, out), 0);
    cr_assert_eq(th_sh("grep -Eq '^ +0 +0 +2 +1 ns +2 ns ' %s", out), 0);
    cr_assert_eq(th_sh("grep -q '^speedup  .*over K=1' %s", out), 0);
    cr_assert_neq(th_sh("grep -Eq ' 0(\\.0+)? (s|ms|us|ns) ' %s", out), 0);
    unlink(out);
}

/* ---- partitions of many stages ---- */

/* The gpipe strategy on K (L+1) > 2^25 cells read its cuts back from a
 * full table and refused ("over the 33554432 entries it keeps for the
 * read-back"); now it reads them back block by block. */
Test(inputs, gpipe_strategy_on_many_stages_and_layers, .timeout = 120)
{
    char topo[96];
    snprintf(topo, sizeof topo, "%s.json", path);
    cr_assert_eq(th_sh("%s gen chain -n 1700 -o %s", th_pipesim(), topo), 0);
    cr_assert_eq(th_sh("%s partition --model mlp:layers=20000,width=8 --topology %s -K 1700 "
                       "-M 1 --batch 1 --strategy gpipe --format json > %s 2>&1",
                       th_pipesim(), topo, path), 0);
    cr_assert_eq(th_sh("grep -q '\"gpipe\"' %s", path), 0);
    unlink(topo);
}

/* A partition too long for its buffer ends at an entry, with the count. */
Test(inputs, partition_format_never_cuts_a_number)
{
    struct sch_partition *p;
    cr_assert_eq(sch_partition_uniform(100, 100000, &p), 0);
    char buf[64];
    sch_partition_format(p, buf, sizeof buf);
    cr_assert_str_eq(buf, "1000,1000,1000,1000,1000,1000,1000,1000,1000,... (100 stages)");
    char big[600]; /* 100 x "1000," - 1 = 499 characters: all of it */
    sch_partition_format(p, big, 500);
    cr_assert_eq(strlen(big), 499);
    cr_assert_eq(strstr(big, "..."), NULL);
    sch_partition_format(p, big, 499);
    cr_assert(strstr(big, ",... (100 stages)"), "%s", big);
    sch_partition_free(p);
}

/* ---- messages ---- */

/* A message longer than the buffer keeps the file's start and the whole
 * explanation; the middle of the path goes. */
Test(inputs, long_message_keeps_its_explanation)
{
    static char longpath[6001];
    memset(longpath, 'd', 6000);
    memcpy(longpath, "/start/", 7);
    memcpy(longpath + 6000 - 6, "/p.csv", 6);
    const char *why = "field 'params': 'lots' is not a number (the end of the explanation)";
    cr_assert_eq(ps_error(PS_EPARSE, "%s:2:7: %s", longpath, why), -PS_EPARSE);
    const char *m = ps_errmsg();
    cr_assert_lt(strlen(m), (size_t)PS_ERRMSG_MAX);
    cr_assert_gt(strlen(m), (size_t)PS_ERRMSG_MAX - 64);
    cr_assert(!strncmp(m, "/start/ddd", 10), "%.40s", m);
    cr_assert(strstr(m, " [...] "));
    char tail[160];
    snprintf(tail, sizeof tail, "/p.csv:2:7: %s", why);
    cr_assert(!strcmp(m + strlen(m) - strlen(tail), tail), "...%s", m + strlen(m) - 100);
    cr_assert_eq(ps_errcode(), PS_EPARSE);
    /* a short one is untouched */
    ps_error(PS_EINVAL, "%s", why);
    cr_assert_str_eq(ps_errmsg(), why);
}

/* A UTF-8 byte-order mark is skipped by every loader; lines and columns
 * count from after it. */
Test(inputs, byte_order_mark_is_skipped)
{
    put("\xEF\xBB\xBF" CSV_H "a,1,1,1,1\n");
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(path, &p), 0, "%s", ps_errmsg());
    cr_assert_str_eq(p->layers[0].name, "a");
    mdl_profile_free(p);
    put("\xEF\xBB\xBF" CSV_H "a,x,1,1,1\n");
    bad_profile(PS_EPARSE, ":2:3: field 'fwd_flops': 'x' is not a number");

    const char *topo = "\xEF\xBB\xBF" TOPO(LINK("a", "d0", "d1"));
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_parse(topo, strlen(topo), "t.json", &t), 0, "%s", ps_errmsg());
    mdl_topology_free(t);
    bad_topology("\xEF\xBB\xBF" TOPO(LINK("a", "d0", "d1") ",\n" LINK("b", "d1", "d0")),
                 "t.json:4:13: links[1].endpoints: a second link");

    /* a trace written by predict, with a mark in front, reads back */
    char tr[96];
    snprintf(tr, sizeof tr, "%s.trace.json", path);
    cr_assert_eq(th_sh("%s predict --model mlp:layers=4,width=8 --topology "
                       "models/topologies/chain-8-ideal.json -K 2 -M 2 --batch 4 --trace %s "
                       "> /dev/null && printf '\\357\\273\\277' > %s && cat %s >> %s",
                       th_pipesim(), tr, path, tr, path), 0);
    struct trc_trace *a = NULL, *b = NULL;
    cr_assert_eq(trc_read_chrome(tr, &a), 0, "%s", ps_errmsg());
    cr_assert_eq(trc_read_chrome(path, &b), 0, "%s", ps_errmsg());
    cr_assert_eq(a->n_events, b->n_events);
    trc_trace_free(a);
    trc_trace_free(b);
    unlink(tr);
    cr_assert_eq(th_sh("%s compare %s %s > /dev/null", th_pipesim(), path, path), 0);
}

/* ---- validate: a learning rate that diverges ---- */

/* --lr 1e30 trained on to a NaN loss and exited 0; now the step that
 * diverged is named, with the advice, exit 4. A learning rate that is
 * infinite in FP32 makes the parameters non-finite at step 1 already. */
Test(inputs, validate_reports_divergence, .timeout = 120)
{
    char err[96];
    snprintf(err, sizeof err, "%s.err", path);
    const char *run = "validate --net mlp:layers=4,width=16 -K 2 -M 2 --batch 8 --steps 4 "
                      "--no-pin";
    int st = th_sh("%s %s --lr 1e30 > %s 2> %s", th_pipesim(), run, path, err);
    cr_assert_eq(st, ps_exit_status(PS_EINVAL), "exit %d", st);
    cr_assert_eq(th_sh("grep -qx 'pipesim validate: step 2: the loss is NaN: training "
                       "diverged; try a smaller --lr (now 1e+30)' %s", err), 0);
    cr_assert_eq(th_sh("test $(wc -l < %s) -eq 1", err), 0, "one line on stderr");
    cr_assert_neq(th_sh("grep -q '^ *3 ' %s", path), 0, "trained on after the divergence");
    /* a rate past a float's is refused before it runs (it was inf there; the check
     * of non-finite parameters is rt_kernels/divergence_names_the_layer's) */
    st = th_sh("%s %s --lr 1e39 > %s 2> %s", th_pipesim(), run, path, err);
    cr_assert_eq(st, ps_exit_status(PS_EUSAGE), "exit %d", st);
    /* the default rate trains */
    cr_assert_eq(th_sh("%s %s > %s 2> %s", th_pipesim(), run, path, err), 0);
    unlink(err);
}

/* 30 buses of 4096 endpoints, each the same 4094 devices and two of ten
 * others, none covered by the ones before: they load, and quickly enough
 * for the suite's limit (the covered-bus check compared each bus with every
 * earlier link pair by pair: 7 s, 86 s under ASan; found by fuzzing). */
Test(inputs, wide_overlapping_buses_load, .timeout = 60)
{
    enum { C = 4094, B = 30 };
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "{\"devices\":[{\"name\":\"g\",\"count\":%d,\"flops\":1,\"memory\":1}],"
               "\"links\":[\n", C + 10);
    int k = 0;
    for (int a = C; a < C + 10 && k < B; a++)
        for (int b = a + 1; b < C + 10 && k < B; b++, k++) {
            fprintf(f, "%s{\"name\":\"b%d\",\"shared\":true,\"bandwidth\":1,\"endpoints\":[",
                    k ? ",\n" : "", k);
            for (int d = 0; d < C; d++)
                fprintf(f, "\"g%d\",", d);
            fprintf(f, "\"g%d\",\"g%d\"]}", a, b);
        }
    fprintf(f, "]}\n");
    cr_assert_eq(fclose(f), 0);
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load(path, &t), 0, "%s", ps_errmsg());
    cr_assert_eq(t->n_links, B);
    mdl_topology_free(t);
}

/* A model with no work at all: its step takes no time, so a throughput would
 * be infinite and a speedup 0/0; predict said 0 samples/s and speedup 0. It
 * is refused, exit 4, naming the model. */
Test(inputs, a_model_with_no_work_is_refused)
{
    char dir[64];
    th_tmpdir(dir, sizeof dir, "nowork");
    th_put(dir, "z.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,0,0,0,0\nb,0,0,0,0\n");
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_expect_eq(th_sh("cd %s && %s predict --model z.csv --topology "
                       "%s/models/topologies/chain-8-ideal.json -K 1 -M 1 --batch 4 2> err.txt "
                       ">/dev/null; s=$?; grep -qx 'pipesim predict: model z.csv: the step takes "
                       "no time: no layer has work, bytes to move or parameters to update' "
                       "err.txt && exit $s", dir, th_pipesim(), wd), 4);
    th_sh("rm -rf %s", dir);
}

/* A backward of infinite time is named as inf, not -nan (helper-113: its
 * split into B and W took inf - inf). */
Test(inputs, an_infinite_backward_is_named_inf)
{
    put("name,fwd_flops,bwd_flops,params,out_bytes,stash_bytes\n"
        "a,1e6,1e308,10,4,8\nb,1e6,2e6,10,4,8\n");
    char out[4096];
    cr_assert_eq(th_capture(out, sizeof out, "%s predict --model %s --topology "
                            "models/topologies/chain-8-ideal.json -K 2 -M 2 --batch 4 2>&1",
                            th_pipesim(), path), 4, "%s", out);
    cr_expect(strstr(out, "backward time of inf s is out of range"), "%s", out);
    cr_expect_null(strstr(out, "nan"), "%s", out);
}
