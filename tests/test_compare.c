/* pipesim compare: zero error on identical traces, a stretched op reported
 * exactly and first, clear errors on mismatched traces. */
#include "helpers.h"

#include "analysis/ana_compare.h"

#include <math.h>
#include <unistd.h>

static struct trc_trace *copy(const struct trc_trace *t)
{
    struct trc_trace *c = trc_trace_new("measured", t->n_devices, t->n_stages, t->n_micro);
    for (size_t i = 0; i < t->n_events; i++)
        cr_assert_eq(trc_add_event(c, &t->events[i]), 0);
    for (size_t i = 0; i < t->n_counters; i++)
        cr_assert_eq(trc_add_counter(c, t->counters[i].device, t->counters[i].t_ns,
                                     t->counters[i].bytes), 0);
    return c;
}

static void sim_trace(struct th_run *run, struct mdl_profile **p, struct mdl_topology **t)
{
    *p = th_uniform(4, 3000, 6000, 2, 100, 400, 10);
    *t = th_chain(4, 0, 1e9, 100e-9);
    th_simulate(run, "gpipe", *p, *t, 4, 6, SCH_REMAT_EXCEPT_LAST, 2, 1);
}

Test(compare, identical_traces_have_zero_error)
{
    struct th_run run;
    struct mdl_profile *p;
    struct mdl_topology *t;
    sim_trace(&run, &p, &t);
    /* through the files, as the CLI does */
    char a[] = "/tmp/pipesim-cmp-XXXXXX";
    close(mkstemp(a));
    cr_assert_eq(trc_write_chrome(sim_engine_trace(run.e), a), 0);
    struct trc_trace *x, *y;
    cr_assert_eq(trc_read_chrome(a, &x), 0, "%s", ps_errmsg());
    cr_assert_eq(trc_read_chrome(a, &y), 0);
    cr_assert_eq(x->n_events, sim_engine_trace(run.e)->n_events);
    struct ana_compare *c;
    cr_assert_eq(ana_compare_new(x, y, &c), 0, "%s", ps_errmsg());
    cr_assert_eq(c->makespan_err, 0);
    cr_assert_eq(c->makespan_sim, run.r->makespan);
    cr_assert_eq(c->bubble_sim, c->bubble_meas);
    cr_assert_float_eq(c->bubble_sim, run.r->bubble, 1e-12);
    cr_assert_eq(c->dur_err_p95, 0);
    cr_assert_eq(c->drift_max_ns, 0);
    cr_assert_eq(c->n_top, 0);
    for (int d = 0; d < 4; d++) {
        cr_assert_eq(c->peak_act_sim[d], run.r->peak_act[d]);
        cr_assert_eq(c->peak_act_meas[d], c->peak_act_sim[d]);
    }
    ana_compare_free(c);
    trc_trace_free(x);
    trc_trace_free(y);
    unlink(a);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

Test(compare, one_stretched_op_is_reported_exactly_and_first)
{
    struct th_run run;
    struct mdl_profile *p;
    struct mdl_topology *t;
    sim_trace(&run, &p, &t);
    const struct trc_trace *s = sim_engine_trace(run.e);
    struct trc_trace *m = copy(s);
    /* stretch B3 of stage 2 by 2500 ns, and shift everything after it on
     * that device's compute stream, as a slow kernel would */
    int64_t X = 2500, at = -1;
    for (size_t i = 0; i < m->n_events; i++)
        if (m->events[i].kind == SCH_OP_BWD && m->events[i].stage == 2 && m->events[i].mb == 3) {
            at = m->events[i].end_ns;
            m->events[i].end_ns += X;
        }
    cr_assert_geq(at, 0);
    for (size_t i = 0; i < m->n_events; i++)
        if (m->events[i].device == 2 && m->events[i].stream == SCH_STREAM_COMPUTE &&
            m->events[i].start_ns >= at) {
            m->events[i].start_ns += X;
            m->events[i].end_ns += X;
        }
    struct ana_compare *c;
    cr_assert_eq(ana_compare_new(s, m, &c), 0, "%s", ps_errmsg());
    cr_assert_geq(c->n_top, 1);
    cr_assert_eq(c->top[0].sim.kind, SCH_OP_BWD);
    cr_assert_eq(c->top[0].sim.stage, 2);
    cr_assert_eq(c->top[0].sim.mb, 3);
    cr_assert_eq(c->top[0].error_ns, X);
    cr_assert_eq(c->top[0].cause, ANA_CAUSE_COMPUTE);
    cr_assert_str_eq(ana_cause_name(c->top[0].cause, X), "compute slower than modelled");
    /* the ops behind it only inherit the delay: no further duration error */
    for (int i = 1; i < c->n_top; i++)
        cr_assert(c->top[i].cause == ANA_CAUSE_WAIT || c->top[i].error_ns == 0);
    cr_assert_eq(c->drift_max_ns, X);
    /* the table in the units that read: durations as predict prints step
     * times (signed where they are differences), memory in binary units */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(ana_compare_print(c, ANA_FMT_TABLE, f), 0);
    fclose(f);
    cr_expect(strstr(buf, "  1. B3       stage 2   device 2      +2.500 us  compute slower "
                          "than modelled\n"), "%s", buf);
    cr_expect(strstr(buf, "\nstart drift     median 0 s, max 2.500 us\n"), "%s", buf);
    /* device 0 holds one 1000-byte stash at its peak, device 1 two (2000 B) */
    cr_expect(strstr(buf, "\n     0    70.55%    70.55%  +0.00         1000 B         1000 B  "
                          "+0.00%\n"), "%s", buf);
    cr_expect(strstr(buf, "\n     1    70.55%    70.55%  +0.00       1.95 KiB       1.95 KiB  "
                          "+0.00%\n"), "%s", buf);
    free(buf);
    ana_compare_free(c);
    trc_trace_free(m);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p95 of |relative duration error|, from the definition: every op of the
 * simulated trace with a duration, matched to the measured op of the same
 * (device, kind, stage, micro-batch); and the op named at the p95 is one
 * whose own error is that figure, on both sides the same op. */
Test(compare, the_op_at_the_p95_is_named)
{
    struct th_run run;
    struct mdl_profile *p;
    struct mdl_topology *t;
    sim_trace(&run, &p, &t);
    const struct trc_trace *s = sim_engine_trace(run.e);
    struct trc_trace *m = copy(s);
    for (size_t i = 0; i < m->n_events; i++) /* a different stretch for each op */
        m->events[i].end_ns += (int64_t)((i * 37) % 1000);
    double *rel = malloc(s->n_events * sizeof *rel);
    size_t n = 0;
    for (size_t i = 0; i < s->n_events; i++) {
        const struct trc_event *a = &s->events[i];
        if (a->end_ns <= a->start_ns)
            continue;
        for (size_t j = 0; j < m->n_events; j++) {
            const struct trc_event *b = &m->events[j];
            if (b->device == a->device && b->kind == a->kind && b->stage == a->stage &&
                b->mb == a->mb) {
                double ds = (double)(a->end_ns - a->start_ns);
                rel[n++] = fabs((double)(b->end_ns - b->start_ns) - ds) / ds;
                break;
            }
        }
    }
    qsort(rel, n, sizeof *rel, dbl_cmp);
    struct ana_compare *c;
    cr_assert_eq(ana_compare_new(s, m, &c), 0, "%s", ps_errmsg());
    cr_assert_float_eq(c->dur_err_p95, rel[(size_t)ceil(0.95 * (double)n) - 1], 1e-12);
    const struct trc_event *ps = &c->p95_sim, *pm = &c->p95_meas;
    cr_assert(ps->device == pm->device && ps->kind == pm->kind && ps->stage == pm->stage &&
              ps->mb == pm->mb);
    double ds = (double)(ps->end_ns - ps->start_ns);
    cr_assert_float_eq(fabs((double)(pm->end_ns - pm->start_ns) - ds) / ds, c->dur_err_p95,
                       1e-12);
    /* and the table says which op it is */
    char *buf = NULL, lab[32], want[96];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(ana_compare_print(c, ANA_FMT_TABLE, f), 0);
    fclose(f);
    struct sch_op op = { ps->kind, ps->stage, ps->mb };
    sch_op_label(&op, lab, sizeof lab);
    snprintf(want, sizeof want, " (%s, device %d: ", lab, ps->device);
    cr_expect(strstr(buf, want), "no '%s' in:\n%s", want, buf);
    free(buf);
    free(rel);
    ana_compare_free(c);
    trc_trace_free(m);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

Test(compare, mismatched_traces_are_a_clear_error)
{
    struct th_run run;
    struct mdl_profile *p;
    struct mdl_topology *t;
    sim_trace(&run, &p, &t);
    const struct trc_trace *s = sim_engine_trace(run.e);
    struct trc_trace *m = copy(s);
    m->n_events--; /* drop the last event */
    struct ana_compare *c;
    cr_assert_eq(ana_compare_new(s, m, &c), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "1 only simulated, 0 only measured"), "%s", ps_errmsg());
    cr_assert(strstr(ps_errmsg(), "only in the simulated trace"));
    m->n_micro = 5;
    cr_assert_eq(ana_compare_new(s, m, &c), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "6 micro-batches"), "%s", ps_errmsg());
    /* a measured trace with no events at all (and no array: UBSan found
     * memcpy from NULL) */
    m->n_micro = s->n_micro;
    struct trc_event *keep = m->events;
    size_t n = m->n_events;
    m->events = NULL;
    m->n_events = 0;
    cr_assert_eq(ana_compare_new(s, m, &c), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "0 only measured"), "%s", ps_errmsg());
    m->events = keep;
    m->n_events = n;
    trc_trace_free(m);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

Test(compare, cli_end_to_end)
{
    cr_assert_eq(th_sh("%s predict --model mlp:layers=4,width=64 --topology "
                       "models/topologies/cpu-2core.json -K 2 -M 4 --batch 8 --trace "
                       "/tmp/pipesim-cmp.json >/dev/null", th_pipesim()), 0);
    cr_assert_eq(th_sh("%s compare /tmp/pipesim-cmp.json /tmp/pipesim-cmp.json --format json | "
                       "grep -q '\"makespan_err\": 0'", th_pipesim()), 0);
    cr_assert_eq(th_sh("%s compare /tmp/pipesim-cmp.json 2>/dev/null", th_pipesim()), 2);
    cr_assert_eq(th_sh("%s compare /tmp/pipesim-cmp.json /nonexistent.json 2>/dev/null",
                       th_pipesim()), 5);
    /* a measured trace given first and a simulated one second: a warning
     * that the signs read the other way (two simulated traces: none) */
    cr_assert_eq(th_sh("sed 's/\"source\": *\"simulated\"/\"source\": \"measured\"/' "
                       "/tmp/pipesim-cmp.json > /tmp/pipesim-cmp-m.json && "
                       "grep -q '\"measured\"' /tmp/pipesim-cmp-m.json"), 0);
    cr_assert_eq(th_sh("%s compare /tmp/pipesim-cmp-m.json /tmp/pipesim-cmp.json >/dev/null "
                       "2>/tmp/pipesim-cmp.err && grep -q \"^pipesim compare: warning: by "
                       "their headers /tmp/pipesim-cmp-m.json is 'measured' and "
                       "/tmp/pipesim-cmp.json is 'simulated'\" /tmp/pipesim-cmp.err",
                       th_pipesim()), 0);
    cr_assert_eq(th_sh("%s compare /tmp/pipesim-cmp.json /tmp/pipesim-cmp-m.json >/dev/null "
                       "2>/tmp/pipesim-cmp.err && test ! -s /tmp/pipesim-cmp.err",
                       th_pipesim()), 0);
    cr_assert_eq(th_sh("%s compare /tmp/pipesim-cmp.json /tmp/pipesim-cmp.json >/dev/null "
                       "2>/tmp/pipesim-cmp.err && test ! -s /tmp/pipesim-cmp.err",
                       th_pipesim()), 0);
    unlink("/tmp/pipesim-cmp.json");
    unlink("/tmp/pipesim-cmp-m.json");
    unlink("/tmp/pipesim-cmp.err");
}

/* Figures that do not exist are '-', empty and null, not 0 (helper-57): two traces of no
 * events printed every figure as 0 and "the traces agree op for op"; ops of no simulated
 * duration printed a 0 % duration error; plot --compare of them failed in gnuplot (exit 5). */
Test(compare, figures_that_do_not_exist_are_not_zero)
{
    struct trc_trace *a = trc_trace_new("sim", 2, 2, 2), *b = trc_trace_new("meas", 2, 2, 2);
    struct ana_compare *c = NULL;
    cr_assert_eq(ana_compare_new(a, b, &c), 0, "%s", ps_errmsg());
    cr_expect(isnan(c->dur_err_median) && isnan(c->dur_err_p95) && c->n_dur == 0);
    cr_expect(isnan(c->makespan_err));
    ana_compare_free(c);
    trc_trace_free(a);
    trc_trace_free(b);
    char d[64];
    th_tmpdir(d, sizeof d, "cmp0");
    th_put(d, "e.json", "{\"pipesim\":{\"devices\":2,\"stages\":2,\"micro_batches\":2},"
                        "\"traceEvents\":[]}");
    /* one op of no duration (a trace of none is refused: a_trace_without_compute_ops) */
    th_put(d, "z.json", "{\"pipesim\":{\"devices\":1,\"stages\":1,\"micro_batches\":1},"
                        "\"traceEvents\":[{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":0,"
                        "\"dur\":0,\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":0}}]}");
    const char *ps = th_pipesim();
    cr_expect_eq(th_sh("cd %s && %s compare z.json z.json | grep -q '^op duration     |error| - "
                       "(no op has a simulated duration)' && %s compare z.json z.json | grep -q "
                       "'^makespan .* error -$'", d, ps, ps), 0);
    cr_expect_eq(th_sh("cd %s && %s compare z.json z.json --format csv | grep -qx "
                       "'op_duration_rel_error_median,,,,,,,,'", d, ps), 0);
    cr_expect_eq(th_sh("cd %s && %s compare z.json z.json --format json | grep -q "
                       "'\"op_dur_err_median\": null'", d, ps), 0);
    cr_expect_eq(th_sh("cd %s && %s plot --compare e.json e.json --out-dir p 2>err.txt; "
                       "test $? = 3 && grep -q 'no events to draw' err.txt", d, ps), 0);
    /* a malformed trace, exit 3, as compare says it (helper-138: plot's was 4) */
    cr_expect_eq(th_sh("cd %s && %s plot --trace e.json --out-dir p 2>err.txt; "
                       "test $? = 3 && grep -q 'no events to draw' err.txt", d, ps), 0);
    th_sh("rm -rf %s", d);
}

/* helper-74: two traces of different configurations (the header's schedule, replicas or
 * batch) are refused naming the field, in compare and plot --compare alike (gpipe
 * against 1f1b was compared, its gap read as dependencies and slow compute); a negative
 * time and a step that ends before its last op are refused; the median of an even count
 * is its two middle values' mean; a peak error with no simulated peak is '-'. */
Test(compare, another_configuration_is_refused_and_figures_are_exact)
{
    char d[64], out[8192];
    th_tmpdir(d, sizeof d, "cmpcfg");
    const char *ps = th_pipesim();
    const char *run = "predict --model mlp:layers=4,width=64 --topology cpu-2core -K 2 -M 4";
    cr_assert_eq(th_sh("cd %s && %s %s --batch 16 --trace g.json >/dev/null 2>&1 && "
                       "%s %s --batch 16 --schedule 1f1b --trace f.json >/dev/null 2>&1 && "
                       "%s %s --batch 32 --trace b.json >/dev/null 2>&1", d, ps, run, ps, run, ps,
                       run), 0);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && %s compare g.json f.json 2>&1", d, ps), 4);
    cr_expect(strstr(out, "traces differ in schedule: simulated gpipe, measured 1f1b"), "%s",
              out);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && %s compare g.json b.json 2>&1", d, ps), 4);
    cr_expect(strstr(out, "traces differ in batch: simulated 16, measured 32"), "%s", out);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && %s plot --compare g.json f.json "
                            "--out-dir p 2>&1", d, ps), 4);
    cr_expect(strstr(out, "traces differ in schedule"), "%s", out);
    cr_expect_eq(th_sh("cd %s && test ! -e p/compare.png", d), 0);
    /* times from the step's start; a step no shorter than its ops */
    cr_assert_eq(th_sh("cd %s && python3 -c '\n"
                       "import json\n"
                       "d = json.load(open(\"g.json\"))\n"
                       "for e in d[\"traceEvents\"]:\n"
                       "    if e.get(\"ph\") in (\"X\", \"C\"): e[\"ts\"] -= 30\n"
                       "json.dump(d, open(\"neg.json\", \"w\"))\n"
                       "d = json.load(open(\"g.json\")); d[\"pipesim\"][\"step_ns\"] = 1\n"
                       "json.dump(d, open(\"short.json\", \"w\"))'", d), 0);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && %s compare g.json neg.json 2>&1", d, ps),
                 4);
    cr_expect(strstr(out, "].ts: -30 us, before the step's start"), "%s", out);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && %s compare g.json short.json 2>&1", d,
                            ps), 4);
    cr_expect(strstr(out, "pipesim.step_ns: 1 ns, before the last op's end"), "%s", out);
    th_sh("rm -rf %s", d);
    /* the median of four durations' errors: the mean of the middle two */
    struct trc_trace *a = trc_trace_new("simulated", 1, 1, 4), *b = trc_trace_new("measured", 1,
                                                                                    1, 4);
    static const int64_t dur_m[4] = { 110, 120, 140, 180 }; /* +10 %, +20, +40, +80 */
    int64_t ta = 0, tb = 0;
    for (int m = 0; m < 4; m++) {
        struct trc_event ea = { .device = 0, .stream = SCH_STREAM_COMPUTE, .kind = SCH_OP_FWD,
                                .stage = 0, .mb = m, .peer = -1, .start_ns = ta,
                                .end_ns = ta + 100 };
        struct trc_event eb = ea;
        eb.start_ns = tb;
        eb.end_ns = tb + dur_m[m];
        ta = ea.end_ns;
        tb = eb.end_ns;
        cr_assert_eq(trc_add_event(a, &ea), 0);
        cr_assert_eq(trc_add_event(b, &eb), 0);
    }
    struct ana_compare *c = NULL;
    cr_assert_eq(ana_compare_new(a, b, &c), 0, "%s", ps_errmsg());
    cr_expect(fabs(c->dur_err_median - 0.30) < 1e-12, "median %g", c->dur_err_median);
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert(f);
    cr_assert_eq(ana_compare_print(c, ANA_FMT_TABLE, f), 0);
    fclose(f);
    /* no counters: no simulated peak, no relative error of it */
    cr_expect(strstr(buf, "       -\n"), "%s", buf);
    ana_compare_free(c);
    trc_trace_free(a);
    trc_trace_free(b);
}

/* helper-95: a header field of the wrong type or value is refused naming it at its position
 * (exit 3): a batch "128" or -128, a schedule ["1f1b"], a remat mode no one has; the traces
 * compared as one configuration's. A field that is absent (or the writer's none: a batch of
 * 0, an empty name) is none named: the traces still compare. And a negative batch is
 * compared, not read as none (-128 against 64 was skipped). */
Test(compare, a_bad_header_field_is_named_not_skipped)
{
    char d[64], out[8192];
    th_tmpdir(d, sizeof d, "cmphdr");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=4,width=64 --topology cpu-2core "
                       "-K 2 -M 4 --batch 64 --trace a.json >/dev/null 2>&1", d, ps), 0);
    static const struct {
        const char *sed, *what;
    } bad[] = {
        { "s/\"batch\":64/\"batch\":\"64\"/", "pipesim.batch: '64': must be a positive number" },
        { "s/\"batch\":64/\"batch\":-128/", "pipesim.batch: -128: must be a positive number" },
        { "s/\"batch\":64/\"batch\":null/", "pipesim.batch: null: must be a positive number" },
        { "s/\"schedule\":\"gpipe\"/\"schedule\":[\"1f1b\"]/",
          "pipesim.schedule: an array: must be a schedule's name" },
        { "s/\"schedule\":\"gpipe\"/\"schedule\":\"gpipe-gpipe-gpipe-gpipe-gpipe-gpipe\"/",
          "pipesim.schedule: 'gpipe-gpipe-gpipe-gpipe-gpipe-gpipe': must be a schedule's name "
          "(a string of at most 31 bytes)" },
        { "s/\"remat\":\"except_last\"/\"remat\":\"sometimes\"/",
          "pipesim.remat: 'sometimes': must be never, except_last or always" },
        { "s/\"remat\":\"except_last\"/\"remat\":2/",
          "pipesim.remat: 2: must be never, except_last or always" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(th_capture(out, sizeof out, "cd %s && sed '%s' a.json > x.json && %s "
                                "compare a.json x.json 2>&1", d, bad[i].sed, ps), 3,
                     "%s: %s", bad[i].sed, out);
        cr_expect(strstr(out, "x.json:2:") && strstr(out, bad[i].what), "%s: %s", bad[i].sed,
                  out);
    }
    /* absent (or 0, an empty name): none named, compared */
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && sed 's/\"schedule\":\"gpipe\","
                            "\"remat\":\"except_last\",//; s/\"batch\":64,//' a.json > x.json "
                            "&& ! grep -q '\"batch\"' x.json && %s compare a.json x.json 2>&1",
                            d, ps), 0, "%s", out);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && sed 's/\"schedule\":\"gpipe\","
                            "\"remat\":\"except_last\"/\"schedule\":\"\",\"remat\":\"\"/; "
                            "s/\"batch\":64/\"batch\":0/' a.json > x.json && %s compare a.json "
                            "x.json 2>&1", d, ps), 0, "%s", out);
    th_sh("rm -rf %s", d);
    struct trc_trace *a = trc_trace_new("simulated", 1, 1, 1);
    struct trc_trace *b = trc_trace_new("measured", 1, 1, 1);
    a->batch = 64;
    b->batch = -128;
    cr_expect_eq(ana_compare_same_run(a, b), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "traces differ in batch: simulated 64, measured -128"), "%s",
              ps_errmsg());
    b->batch = 0; /* none named */
    cr_expect_eq(ana_compare_same_run(a, b), 0, "%s", ps_errmsg());
    trc_trace_free(a);
    trc_trace_free(b);
}

/* helper-95: an op the traces do not share is named with its micro-batch where it holds one:
 * a U of mb 2 against the schedule's U read "U of stage 0 on device 0 only in the simulated
 * trace; U of stage 0 on device 0 only in the measured trace". The reader refuses such a U
 * (and an F of mb -1): U and AR alone are of no micro-batch. */
Test(compare, ops_only_in_one_trace_are_named_with_their_micro_batch)
{
    struct trc_trace *a = trc_trace_new("simulated", 1, 1, 4);
    struct trc_trace *b = trc_trace_new("measured", 1, 1, 4);
    struct trc_event e = { .device = 0, .stream = SCH_STREAM_COMPUTE, .kind = SCH_OP_UPDATE,
                           .stage = 0, .mb = -1, .peer = -1, .start_ns = 0, .end_ns = 100 };
    cr_assert_eq(trc_add_event(a, &e), 0);
    e.mb = 2;
    cr_assert_eq(trc_add_event(b, &e), 0);
    struct ana_compare *c = NULL;
    cr_expect_eq(ana_compare_new(a, b, &c), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "U of stage 0 on device 0 only in the simulated trace; "
                                  "U (mb 2) of stage 0 on device 0 only in the measured trace"),
              "%s", ps_errmsg());
    trc_trace_free(a);
    trc_trace_free(b);
    char d[64], out[4096];
    th_tmpdir(d, sizeof d, "cmpmb");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=4,width=64 --topology cpu-2core "
                       "-K 2 -M 4 --batch 64 --trace a.json >/dev/null 2>&1", d, ps), 0);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && sed 's/\"kind\":\"U\",\"stage\":1,"
                            "\"mb\":-1/\"kind\":\"U\",\"stage\":1,\"mb\":2/' a.json > u.json && "
                            "%s compare a.json u.json 2>&1", d, ps), 3, "%s", out);
    cr_expect(strstr(out, "args.mb: missing or not -1: U ops are of no micro-batch"), "%s", out);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && sed 's/\"kind\":\"F\",\"stage\":0,"
                            "\"mb\":0/\"kind\":\"F\",\"stage\":0,\"mb\":-1/' a.json > f.json && "
                            "%s compare a.json f.json 2>&1", d, ps), 3, "%s", out);
    cr_expect(strstr(out, "args.mb: missing or not a micro-batch of the trace (0..3)"), "%s",
              out);
    th_sh("rm -rf %s", d);
}

/* A trace of no compute ops is refused, naming it, by compare and --replay: an
 * empty one compared with itself as "ops aligned 0", exit 0, and so did one whose
 * X events were stripped, its counters and step_ns left (helper-106). */
Test(compare, a_trace_without_compute_ops_is_refused)
{
    char d[64], out[4096];
    th_tmpdir(d, sizeof d, "cmpnoops");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && printf '{\"pipesim\":{\"devices\":7,\"stages\":5,"
                       "\"micro_batches\":9},\"traceEvents\":[]}' >e.json && printf "
                       "'{\"pipesim\":{\"devices\":1,\"stages\":1,\"micro_batches\":1,"
                       "\"source\":\"measured\",\"schedule\":\"gpipe\",\"remat\":"
                       "\"except_last\",\"step_ns\":5000},"
                       "\"traceEvents\":[\\n{\"name\":\"memory\",\"ph\":\"C\",\"pid\":0,"
                       "\"ts\":0,\"args\":{\"activations\":0}}]}' >c.json", d), 0);
    static const char want[] = ": the trace holds no compute ops (no X event of kind F, B, R "
                               "or W): a step's trace has its forward and backward ops";
    static const char *const cmd[] = { "compare e.json e.json", "compare --replay e.json",
                                       "compare c.json c.json", "compare --replay c.json" };
    for (int k = 0; k < 4; k++) {
        cr_expect_eq(th_capture(out, sizeof out, "cd %s && %s %s 2>&1", d, ps, cmd[k]), 3,
                     "%s: %s", cmd[k], out);
        char line[256];
        snprintf(line, sizeof line, "pipesim compare: %c.json%s", cmd[k][k % 2 ? 17 : 8], want);
        cr_expect(strstr(out, line), "%s: '%s' lacks '%s'", cmd[k], out, line);
    }
    th_sh("rm -rf %s", d);
}

/* Times count from a trace's earliest event, as trace viewers show them: another
 * tool's absolute (epoch) times made a makespan of 3.9e9 s and an error of
 * +3145973154365334.50% (helper-106). The same step at 0 and at 3.9e15 us
 * compares as identical. */
Test(compare, absolute_times_count_from_the_first_event)
{
    char d[64], out[4096];
    th_tmpdir(d, sizeof d, "cmpepoch");
#define HDR "{\"pipesim\":{\"devices\":1,\"stages\":1,\"micro_batches\":2},\"traceEvents\":["
#define OP(ts, mb) "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":" #ts ",\"dur\":5,\"args\":" \
                   "{\"kind\":\"F\",\"stage\":0,\"mb\":" #mb "}}"
    th_put(d, "z.json", HDR OP(0, 0) ",\n" OP(5.5, 1) "]}");
    th_put(d, "e.json", HDR OP(3900000000000002, 0) ",\n" OP(3900000000000007.5, 1) "]}");
#undef OP
#undef HDR
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s compare z.json e.json 2>&1", d,
                            th_pipesim()), 0, "%s", out);
    cr_expect(strstr(out, "makespan        simulated 10.500 us, measured 10.500 us, error "
                          "+0.00%"), "%s", out);
    cr_expect(strstr(out, "the traces agree op for op"), "%s", out);
    th_sh("rm -rf %s", d);
}

/* A pipe named twice is read once: the second read is empty, and is said to be,
 * not put at line 1, column 0 (helper-106). */
Test(compare, a_pipe_named_twice_is_empty_the_second_time)
{
    char d[64], out[1024];
    th_tmpdir(d, sizeof d, "cmppipe");
    th_put(d, "z.json", "{\"pipesim\":{\"devices\":1,\"stages\":1,\"micro_batches\":1},"
                        "\"traceEvents\":[{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":0,"
                        "\"dur\":1,\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":0}}]}");
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && cat z.json | %s compare /dev/stdin "
                            "/dev/stdin 2>&1", d, th_pipesim()), 3, "%s", out);
    cr_expect_str_eq(out, "pipesim compare: /dev/stdin: the file is empty (no JSON document; a "
                          "pipe is read once)\n");
    th_sh("rm -rf %s", d);
}

/* Two traces held at once are checked against the memory this process may
 * use before either is read (helper-109: compare of two 2 GB traces grew to
 * 18 GB with no check, PIPESIM_MEMORY_LIMIT ignored; reading holds about 8 x
 * a trace's bytes): exit 6 with the one line of every memory refusal, and
 * within the limit it runs. */
Test(compare, two_traces_too_big_for_the_memory_are_refused_first)
{
    char d[64], out[2048];
    th_tmpdir(d, sizeof d, "cmpmem");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=32,width=16 --topology "
                       "chain-8-ideal -K 8 -M 256 --batch 256 --trace t.json >/dev/null "
                       "2>&1 && test $(stat -c %%s t.json) -gt 3000000", d, ps), 0);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && PIPESIM_MEMORY_LIMIT=40MiB %s compare "
                            "t.json t.json 2>&1", d, ps), 6, "%s", out);
    cr_expect(strstr(out, "pipesim compare: t.json with t.json needs about ") &&
              strstr(out, "of trace held as JSON, about 8 x its size) but only 40.0 MiB is "
                          "available (PIPESIM_MEMORY_LIMIT)"), "%s", out);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && PIPESIM_MEMORY_LIMIT=4GiB %s compare "
                            "t.json t.json 2>&1 >/dev/null", d, ps), 0, "%s", out);
    /* plot's timeline holds about 16 x its trace (helper-119: checked at 8 x, a
     * limit of half its need let it through): one trace of over 3 MB needs over
     * 48 MB */
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && PIPESIM_MEMORY_LIMIT=40MiB %s plot "
                            "--trace t.json --out-dir p 2>&1", d, ps), 6, "%s", out);
    cr_expect(strstr(out, "about 16 x its size"), "%s", out);
    th_sh("rm -rf %s", d);
}

/* The p95 is the nearest rank, ceil(0.95 n): with (n - 1) x 0.95 rounded down
 * two ops gave a p95 of 0 % under a median of 50 % (helper-126). */
Test(compare, the_p95_of_two_ops_is_the_larger_error)
{
    char dir[64], out[2048];
    th_tmpdir(dir, sizeof dir, "cmp-p95");
    static const char ev[] =
        "\"traceEvents\":[\n{\"name\":\"F0\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":0,"
        "\"dur\":10,\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":0}},\n{\"name\":\"B0\","
        "\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":10,\"dur\":%d,\"args\":{\"kind\":\"B\","
        "\"stage\":0,\"mb\":0}}]}\n";
    char txt[1024], fmt[1024];
    snprintf(fmt, sizeof fmt, "{\"pipesim\":{\"source\":\"%%s\",\"devices\":1,\"stages\":1,"
             "\"micro_batches\":1},%s", ev);
    snprintf(txt, sizeof txt, fmt, "simulated", 10);
    th_put(dir, "s.json", txt);
    snprintf(txt, sizeof txt, fmt, "measured", 20);
    th_put(dir, "m.json", txt);
    cr_assert_eq(th_capture(out, sizeof out, "%s compare %s/s.json %s/m.json 2>&1", th_pipesim(),
                            dir, dir), 0, "%s", out);
    cr_expect(strstr(out, "median 50.00%, p95 100.00% (B0, device 0: "), "%s", out);
    th_sh("rm -rf %s", dir);
}
