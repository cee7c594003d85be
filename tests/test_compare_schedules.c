/* ana_schedules and `pipesim compare-schedules`: schedules side by side on
 * one model and topology, exact on an ideal ring; bad input. */
#include "helpers.h"

#include "analysis/ana_schedules.h"
#include "models/mdl_gen.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <unistd.h>

static char dir[64];

/* 4 ideal devices in a ring with free, instantaneous links: every
 * difference between schedules is the schedule's own. */
static const char ring_json[] =
    "{\"name\":\"ring4\",\"bytes_per_param\":12,\"devices\":[{\"name\":\"d\",\"count\":4,"
    "\"flops\":1e12,\"memory\":1e12,\"mem_bandwidth\":0,\"efficiency\":{\"max\":1,"
    "\"batch_half\":0,\"overhead_s\":0}}],\"links\":["
    "{\"name\":\"a\",\"endpoints\":[\"d0\",\"d1\"],\"bandwidth\":1e300,\"latency\":0},"
    "{\"name\":\"b\",\"endpoints\":[\"d1\",\"d2\"],\"bandwidth\":1e300,\"latency\":0},"
    "{\"name\":\"c\",\"endpoints\":[\"d2\",\"d3\"],\"bandwidth\":1e300,\"latency\":0},"
    "{\"name\":\"w\",\"endpoints\":[\"d3\",\"d0\"],\"bandwidth\":1e300,\"latency\":0}]}";

static void setup(void)
{
    th_tmpdir(dir, sizeof dir, "cmp");
    th_put(dir, "ring.json", ring_json);
}

static void teardown(void)
{
    th_sh("rm -rf %s", dir);
}

TestSuite(compare_schedules, .init = setup, .fini = teardown, .timeout = 60);

static json_t *find_row(json_t *o, const char *name)
{
    json_t *arr = json_object_get(o, "schedules"), *r;
    size_t i;
    json_array_foreach(arr, i, r)
        if (!strcmp(json_string_value(json_object_get(r, "schedule")), name))
            return r;
    cr_assert_fail("no row for %s", name);
    return NULL;
}

static double num(json_t *r, const char *k)
{
    json_t *v = json_object_get(r, k);
    cr_assert(json_is_number(v), "field %s", k);
    return json_number_value(v);
}

/* On uniform stages without communication the simulated bubbles equal the
 * formulas (tests/test_schedules.c derives them), 1F1B matches GPipe's step
 * time with lower peak activation memory, interleaving and ZB-H1 beat both. */
Test(compare_schedules, side_by_side_on_an_ideal_ring)
{
    cr_assert_eq(th_sh("cd %s && %s compare-schedules --model mlp:layers=16,width=256 "
                       "--topology ring.json -K 4 -M 8 --batch 64 --remat never "
                       "--schedules gpipe,1f1b,interleaved:2,zb-h1 --format json --out c.json",
                       dir, th_pipesim()), 0);
    char p[128];
    snprintf(p, sizeof p, "%s/c.json", dir);
    json_error_t err;
    json_t *o = json_load_file(p, 0, &err);
    cr_assert(o, "%s", err.text);
    cr_assert_eq(json_array_size(json_object_get(o, "schedules")), 4);
    json_t *g = find_row(o, "gpipe"), *f = find_row(o, "1f1b");
    json_t *i2 = find_row(o, "interleaved:2"), *z = find_row(o, "zb-h1");
    const char *names[] = { "gpipe", "1f1b", "interleaved:2", "zb-h1" };
    for (int k = 0; k < 4; k++) {
        json_t *r = find_row(o, names[k]);
        if (k == 3) { /* the MLP states its work: B != W, no zero-bubble closed form */
            cr_assert(json_is_null(json_object_get(r, "bubble_formula")));
            continue;
        }
        cr_assert(fabs(num(r, "bubble_sim") - num(r, "bubble_formula")) < 1e-9, "%s: %.12f %.12f",
                  names[k], num(r, "bubble_sim"), num(r, "bubble_formula"));
        cr_assert_eq(json_array_size(json_object_get(r, "devices")), 4);
    }
    cr_assert(fabs(num(g, "bubble_formula") - 3.0 / 11) < 1e-15);
    cr_assert(fabs(num(i2, "bubble_formula") - 3.0 / 19) < 1e-15);
    cr_assert_eq(num(i2, "stages"), 8);
    cr_assert_eq(num(g, "step_s"), num(f, "step_s"));
    cr_assert_lt(num(f, "peak_act_max_bytes"), num(g, "peak_act_max_bytes"));
    cr_assert_lt(num(i2, "step_s"), num(f, "step_s"));
    cr_assert_lt(num(z, "step_s"), num(f, "step_s"));
    cr_assert_gt(num(g, "speedup"), 1);
    json_decref(o);
}

/* A schedule that cannot run at this K, M is a row with its reason, the
 * others still compare; table and CSV carry it. */
Test(compare_schedules, infeasible_schedule_is_listed_with_its_reason)
{
    cr_assert_eq(th_sh("cd %s && %s compare-schedules --model mlp:layers=16,width=64 "
                       "--topology ring.json -K 4 -M 6 --batch 12 > t.txt", dir, th_pipesim()), 0);
    cr_assert_eq(th_sh("grep -q '^interleaved:2 *skipped: .*-M 6 must be a multiple of -K 4' "
                       "%s/t.txt && grep -q '^zb-h1 ' %s/t.txt && grep -q '^gpipe ' %s/t.txt",
                       dir, dir, dir), 0);
    cr_assert_eq(th_sh("cd %s && %s compare-schedules --model mlp:layers=16,width=64 "
                       "--topology ring.json -K 4 -M 6 --batch 12 --format csv > t.csv", dir,
                       th_pipesim()), 0);
    /* header + 4 devices x 8 schedules (the default list less interleaved:2
     * and dualpipe-v, which needs M >= 2K) + 2 error rows, 25 fields each */
    cr_assert_eq(th_sh("test $(wc -l < %s/t.csv) -eq 35", dir), 0);
    cr_assert_eq(th_sh("python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); "
                       "assert {len(x) for x in r} == {25}, {len(x) for x in r}' %s/t.csv",
                       dir), 0);
    cr_assert_eq(th_sh("grep -q '^dualpipe-v *skipped: .*-M >= 2K' %s/t.txt", dir), 0);
    /* each schedule picks its own mode by default: a skipped one ran in none */
    cr_assert_eq(th_sh("grep -q '^interleaved:2,4,6,12,2,,,.*,\"--schedule' %s/t.csv", dir), 0);
    cr_assert_eq(th_sh("cd %s && %s compare-schedules --model mlp:layers=16,width=64 "
                       "--topology ring.json -K 4 -M 6 --batch 12 --remat except_last "
                       "--format csv > t2.csv", dir, th_pipesim()), 0);
    cr_assert_eq(th_sh("grep -q '^interleaved:2,4,6,12,2,except_last,,.*,\"--schedule' "
                       "%s/t2.csv", dir), 0);
}

static void bad(const char *args, int status, const char *what)
{
    int before = th_entries(dir);
    int rc = th_sh("cd %s && %s compare-schedules --out out.txt %s 2>err.txt >/dev/null", dir,
                   th_pipesim(), args);
    char p[128], msg[1024];
    snprintf(p, sizeof p, "%s/err.txt", dir);
    th_slurp(dir, "err.txt", msg, sizeof msg);
    unlink(p);
    cr_expect_eq(rc, status, "'%s' exited %d, not %d: %s", args, rc, status, msg);
    cr_expect(strstr(msg, what), "'%s': message '%s' lacks '%s'", args, msg, what);
    cr_expect_eq(th_entries(dir), before, "'%s' left a file behind", args);
}

#define OK "--model mlp:layers=8,width=16 --topology ring.json"

Test(compare_schedules, bad_inputs_get_one_clear_error)
{
    bad(OK " -K 4 -M 4 --batch 8 --schedules gpipe,pipedream", 2, "unknown schedule 'pipedream'");
    bad(OK " -K 4 -M 4 --batch 8 --schedules gpipe,,1f1b", 2, "empty name");
    bad(OK " -K 4 -M 4 --batch 8 --schedules 1f1b,1f1b", 2, "'1f1b' given twice");
    bad(OK " -K 4 -M 4 --batch 8 --schedules interleaved:1,1f1b", 2, /* op for op */
        "'interleaved:1' and '1f1b' are the same schedule");
    bad(OK " -K 4 -M 4 --batch 8 --schedules interleaved:x", 2, "not an integer");
    bad(OK " -K 4 -M 4 --batch 8 --schedules interleaved", 2, "e.g. interleaved:2");
    bad(OK " -K 4 -M 4 --batch 8 --format xml", 2, "unknown format 'xml'");
    bad(OK " -K 4 -M 4 --batch 8 --remat sometimes", 2, "unknown mode");
    bad(OK " -K 4 -M 4 --batch 8 --frobnicate", 2, "unknown option");
    bad(OK " -M 4 --batch 8", 2, "-K is required (see");
    bad(OK " -K 5 -M 5 --batch 10", 7, "only 4 devices");
    bad(OK " -K 4 -M 6 --batch 12 --schedules interleaved:2", 2, "no schedule could run");
    bad("--model mlp:layers=8,width=16 --topology missing.json -K 2 -M 2 --batch 4", 5,
        "missing.json");
    cr_assert_eq(th_sh("%s compare-schedules --help | grep -q 'usage: pipesim compare-schedules'",
                       th_pipesim()), 0);
}

Test(compare_schedules, same_inputs_give_byte_identical_outputs)
{
    for (int i = 0; i < 2; i++)
        cr_assert_eq(th_sh("cd %s && %s compare-schedules " OK " -K 4 -M 8 --batch 16 "
                           "--schedules gpipe,1f1b,interleaved:2,interleaved:4,zb-h1 "
                           "--format csv --out o%d.csv", dir, th_pipesim(), i), 0);
    cr_assert_eq(th_sh("cd %s && cmp -s o0.csv o1.csv", dir), 0);
}

Test(compare_schedules, bubble_formulas)
{
    cr_assert(fabs(ana_bubble_formula("gpipe", 4, 8, 1, 2, 2 / 2.0) - 3.0 / 11) < 1e-15);
    cr_assert(fabs(ana_bubble_formula("1f1b", 8, 8, 1, 2, 2 / 2.0) - 7.0 / 15) < 1e-15);
    cr_assert(fabs(ana_bubble_formula("interleaved:3", 4, 8, 1, 2, 2 / 2.0) - 3.0 / 27) < 1e-15);
    cr_assert(isnan(ana_bubble_formula("interleaved:3", 4, 6, 1, 2, 2 / 2.0)));
    cr_assert(fabs(ana_bubble_formula("interleaved:1", 4, 6, 1, 2, 2 / 2.0) - 3.0 / 9) < 1e-15);
    /* zb-h1: c = max(tf, tb/2) */
    cr_assert(fabs(ana_bubble_formula("zb-h1", 4, 8, 3, 4, 4 / 2.0) - 9.0 / (56 + 9)) < 1e-15);
    cr_assert(fabs(ana_bubble_formula("zb-h1", 4, 8, 1, 4, 4 / 2.0) - 6.0 / (40 + 6)) < 1e-15);
    cr_assert(isnan(ana_bubble_formula("zb-h1", 4, 3, 1, 2, 2 / 2.0)));
    cr_assert(isnan(ana_bubble_formula("zb-h1", 4, 8, 1, 4, 1.5))); /* B != W */
    /* an odd backward: B = 1000 ns, W = 1001 (the engine's halves): c = max(tf, B), the
     * simulated 3000 / 27008 (helper-131: it took tb / 2) */
    cr_assert(fabs(ana_bubble_formula("zb-h1", 4, 8, 1000e-9, 2001e-9, 1001e-9) -
                   3000.0 / 27008) < 1e-12);
    cr_assert(isnan(ana_bubble_formula("nope", 4, 8, 1, 2, 2 / 2.0)));
    /* dualpipe-v: (K-1) T of (6M+K-1) T per device (test_new_schedules) */
    cr_assert(fabs(ana_bubble_formula("dualpipe-v", 4, 8, 1, 2, 2 / 2.0) - 3.0 / 51) < 1e-15);
    cr_assert(isnan(ana_bubble_formula("dualpipe-v", 4, 7, 1, 2, 2 / 2.0))); /* M < 2K */
    cr_assert(isnan(ana_bubble_formula("dualpipe-v", 4, 8, 2, 2, 2 / 2.0))); /* T_F != T_B */
    /* zb-v: the same (K-1) T of (6M+K-1) T, from M = K on */
    cr_assert(fabs(ana_bubble_formula("zb-v", 4, 4, 1, 2, 2 / 2.0) - 3.0 / 27) < 1e-15);
    cr_assert(isnan(ana_bubble_formula("zb-v", 4, 3, 1, 2, 2 / 2.0)));   /* M < K */
    cr_assert(isnan(ana_bubble_formula("zb-v", 4, 8, 2, 2, 2 / 2.0)));   /* T_F != T_B */
    cr_assert(isnan(ana_bubble_formula("zb-v", 4, 8, 1, 2, 1.5)));       /* B != W */
    /* times in seconds summed from whole nanoseconds: T_F = T_B / 2 to the ns
     * holds for every zero-bubble form alike (zb-h2's had no slack: helper-102) */
    double tf = 1e-3 + 1e-9, tb = 2e-3, tw = 1e-3;
    cr_assert(fabs(ana_bubble_formula("zb-h2", 4, 8, tf, tb, tw) - 3.0 / 27) < 1e-15);
    cr_assert(fabs(ana_bubble_formula("zb-v", 4, 8, tf, tb, tw) - 3.0 / 51) < 1e-15);
    cr_assert(isnan(ana_bubble_formula("zb-h2", 4, 8, 1e-3 + 1e-7, tb, tw)));
    /* the name printed beside each figure is the formula it took */
    cr_assert_str_eq(ana_bubble_formula_name("eager-1f1b"), "(K-1)/(M+K-1)");
    cr_assert_str_eq(ana_bubble_formula_name("breadth-first:2"), "(K-1)/(vM+K-1)");
    cr_assert_str_eq(ana_bubble_formula_name("zb-h2"), "(K-1)/(3M+K-1)");
    cr_assert_str_eq(ana_bubble_formula_name("dualpipe-v"), "(K-1)/(6M+K-1)");
    cr_assert_str_eq(ana_bubble_formula_name("zb-h1"), "on uniform stages");
}

/* The API: memory per device, interleaved puts two stages on each. */
Test(compare_schedules, api_reports_memory_per_device)
{
    struct mdl_profile *p;
    struct mdl_topology *t;
    char path[128];
    snprintf(path, sizeof path, "%s/ring.json", dir);
    cr_assert_eq(mdl_model_open("mlp:layers=16,width=128", &p), 0);
    cr_assert_eq(mdl_topology_load(path, &t), 0, "%s", ps_errmsg());
    struct ana_config cfg = { .profile = p, .topo = t, .K = 4, .M = 8, .batch = 32,
                              .remat = SCH_REMAT_NEVER };
    const char *names[] = { "gpipe", "1f1b", "interleaved:2" };
    struct ana_sched_cmp *c;
    cr_assert_eq(ana_schedules_compare(&cfg, names, 3, &c), 0, "%s", ps_errmsg());
    cr_assert_eq(c->n, 3);
    cr_assert_gt(c->baseline_step_s, 0);
    for (int i = 0; i < 3; i++) {
        const struct ana_sched_row *r = &c->rows[i];
        cr_assert_str_empty(r->error);
        int64_t mx = 0;
        for (int d = 0; d < 4; d++) {
            cr_assert_gt(r->peak_act[d], 0);
            cr_assert_eq(r->peak_mem[d], r->static_mem[d] + r->peak_act[d]);
            mx = r->peak_act[d] > mx ? r->peak_act[d] : mx;
        }
        cr_assert_eq(r->peak_act_max, mx);
        cr_assert(fabs(r->speedup - c->baseline_step_s / r->step_s) < 1e-12);
    }
    cr_assert_eq(c->rows[2].n_stages, 8);
    /* same parameters on every device whichever schedule: uniform 16 layers */
    cr_assert_eq(c->rows[0].static_mem[1], c->rows[2].static_mem[1]);
    /* 1F1B keeps min(K-s, M) stashes: device 3 holds one, GPipe eight */
    cr_assert_lt(c->rows[1].peak_act[3] * 4, c->rows[0].peak_act[3]);
    ana_sched_cmp_free(c);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* `pipesim predict --schedule` takes every generator; the partition follows
 * the schedule's stage count (v*K for interleaved). */
Test(compare_schedules, predict_runs_every_schedule)
{
    const char *names[] = { "gpipe", "1f1b", "interleaved:2", "zb-h1" };
    const int stages[] = { 4, 4, 8, 4 };
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=16,width=64 --topology "
                           "ring.json -K 4 -M 8 --batch 16 --schedule %s --format json "
                           "--out p.json --trace p-trace.json", dir, th_pipesim(), names[i]),
                     0, "%s", names[i]);
        char p[128];
        snprintf(p, sizeof p, "%s/p.json", dir);
        json_error_t err;
        json_t *o = json_load_file(p, 0, &err);
        cr_assert(o, "%s", err.text);
        cr_assert_str_eq(json_string_value(json_object_get(o, "schedule")), names[i]);
        cr_assert_eq(json_array_size(json_object_get(o, "stages")), (size_t)stages[i]);
        json_decref(o);
    }
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=16,width=64 --topology ring.json "
                       "-K 4 -M 8 --batch 16 --schedule interleaved:2 --partition 2,2,2,2,2,2,2,2 "
                       ">/dev/null", dir, th_pipesim()), 0);
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=16,width=64 --topology ring.json "
                       "-K 4 -M 6 --batch 12 --schedule interleaved:2 2>err.txt; test $? -eq 2 "
                       "&& grep -q 'multiple of -K 4' err.txt", dir, th_pipesim()), 0);
}

/* --help reads as paragraphs: no line over 80 columns, no sentence broken
 * onto a line of its own, the default list not run into --format. */
Test(compare_schedules, help_is_reflowed)
{
    char out[16384];
    cr_assert_eq(th_capture(out, sizeof out, "%s compare-schedules --help", th_pipesim()), 0);
    for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1)
        cr_expect_leq(nl - line, 80, "%.*s", (int)(nl - line), line);
    cr_expect(strstr(out, "needs M >= 2K).\nEach schedule gets the uniform partition of its "
                          "own stages. A schedule that\ncannot run here is listed with the "
                          "reason; an unknown name is an error.\n"), "%s", out);
    const char *tail = "Defaults: each schedule its own remat, --format table,\n"
                       "--schedules gpipe,1f1b,eager-1f1b,interleaved:2,breadth-first:2,zb-h1,"
                       "zb-h2,\n            zb-v,zb-auto,dualpipe-v.\n";
    size_t n = strlen(out), t = strlen(tail);
    cr_assert(n >= t);
    cr_expect_str_eq(out + n - t, tail);
}

/* breadth-first:1 is gpipe op for op, so its formula is gpipe's at any M
 * (it had none below M = K); breadth-first:2 keeps its M >= K condition. */
Test(compare_schedules, breadth_first_1_has_gpipe_s_formula_at_every_m)
{
    for (int K = 2; K <= 8; K *= 2)
        for (int M = 1; M <= 2 * K; M++)
            cr_expect_float_eq(ana_bubble_formula("breadth-first:1", K, M, 1, 2, 1),
                               ana_bubble_formula("gpipe", K, M, 1, 2, 1), 1e-15,
                               "K=%d M=%d", K, M);
    cr_expect(isnan(ana_bubble_formula("breadth-first:2", 4, 2, 1, 2, 1)));
}

/* predict's analytic bubble is compare-schedules' formula: both at one
 * device's mean share of the stages' op times (predict took stage 0's alone,
 * an embedding there: zb-h1 at K = 8, 17.95 % against 12.73 %; helper-85). */
Test(compare_schedules, the_formula_is_predict_s_analytic_bubble)
{
    static const char *const scheds[] = { "zb-h1", "zb-h2", "1f1b", "gpipe" };
    for (size_t k = 0; k < sizeof scheds / sizeof *scheds; k++) {
        cr_assert_eq(th_sh("cd %s && %s compare-schedules --model transformer-small --topology "
                           "v100-nvlink-8 -K 8 -M 16 --batch 64 --remat never --schedules %s "
                           "--format json --out c.json && %s predict --model transformer-small "
                           "--topology v100-nvlink-8 -K 8 -M 16 --batch 64 --remat never "
                           "--schedule %s --partition uniform --format json --out p.json", dir,
                           th_pipesim(), scheds[k], th_pipesim(), scheds[k]), 0);
        char p[128];
        json_error_t err;
        snprintf(p, sizeof p, "%s/c.json", dir);
        json_t *c = json_load_file(p, 0, &err);
        cr_assert(c, "%s", err.text);
        snprintf(p, sizeof p, "%s/p.json", dir);
        json_t *q = json_load_file(p, 0, &err);
        cr_assert(q, "%s", err.text);
        json_t *f = json_object_get(find_row(c, scheds[k]), "bubble_formula");
        json_t *a = json_object_get(q, "bubble_analytic");
        if (json_is_null(f)) /* no formula: predict has none either */
            cr_expect(json_is_null(a), "%s", scheds[k]);
        else
            cr_expect(fabs(json_number_value(f) - json_number_value(a)) < 1e-12, "%s: %.12f %.12f",
                      scheds[k], json_number_value(f), json_number_value(a));
        json_decref(c);
        json_decref(q);
    }
}
