/* Trace writers: output that the reader (and any JSON parser) takes back. */
#include "helpers.h"
#include "base/ps_util.h"

#include <unistd.h>

Test(traces, metadata_strings_are_escaped_and_round_trip)
{
    /* a fuzz finding: a tab in the source string made the writer emit
     * invalid JSON (tests/fuzz/regress/trace/source-with-tab-breaks-rewrite.json) */
    struct trc_trace *t;
    cr_assert_eq(trc_read_chrome("tests/fuzz/regress/trace/source-with-tab-breaks-rewrite.json",
                                 &t), 0, "%s", ps_errmsg());
    cr_assert_str_eq(t->source, "simul\ted");
    snprintf(t->schedule, sizeof t->schedule, "q\"b\\s\n");
    char path[] = "/tmp/pipesim-trc-XXXXXX";
    close(mkstemp(path));
    cr_assert_eq(trc_write_chrome(t, path), 0);
    struct trc_trace *u;
    cr_assert_eq(trc_read_chrome(path, &u), 0, "%s", ps_errmsg());
    cr_assert_str_eq(u->source, t->source);
    cr_assert_str_eq(u->schedule, t->schedule);
    cr_assert_eq(u->n_counters, t->n_counters);
    trc_trace_free(u);
    trc_trace_free(t);
    unlink(path);
}

/* A source cut to its 15 bytes stops before a character, not inside one (helper-98,
 * fuzz_trace: "aaaaaaaaaaaaa\u20ac" was cut after the euro sign's first byte, and the
 * trace written from it did not read back); and the cut itself. */
Test(traces, a_cut_source_keeps_whole_characters)
{
    struct trc_trace *t, *u;
    cr_assert_eq(trc_read_chrome("tests/fuzz/regress/trace/source-utf8-cut-breaks-rewrite.json",
                                 &t), 0, "%s", ps_errmsg());
    cr_assert(strlen(t->source) >= 13 && strspn(t->source, "a") == strlen(t->source), "%s",
              t->source); /* the a's, without the euro sign's first byte */
    char path[] = "/tmp/pipesim-trc-XXXXXX";
    close(mkstemp(path));
    cr_assert_eq(trc_write_chrome(t, path), 0);
    cr_assert_eq(trc_read_chrome(path, &u), 0, "%s", ps_errmsg());
    cr_assert_str_eq(u->source, t->source);
    trc_trace_free(u);
    trc_trace_free(t);
    unlink(path);
    static const struct { const char *in, *out; } c[] = {
        { "ab\xc3\xa9", "ab\xc3\xa9" }, { "ab\xc3", "ab" }, { "a\xe2\x82", "a" },
        { "a\xe2\x82\xac", "a\xe2\x82\xac" }, { "\xf0\x9f\x98", "" }, { "abc", "abc" },
        { "", "" },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char b[16];
        snprintf(b, sizeof b, "%s", c[i].in);
        ps_utf8_trim_cut(b);
        cr_expect_str_eq(b, c[i].out, "case %zu", i);
    }
}

/* The same trace to a second, strict JSON reader. */
Test(traces, escaped_metadata_passes_a_second_json_reader)
{
    if (th_sh("command -v python3 >/dev/null 2>&1"))
        cr_skip_test("python3 is not installed: no second JSON reader (apt-get install "
                     "python3; `make test` installs it)");
    struct trc_trace *t;
    cr_assert_eq(trc_read_chrome("tests/fuzz/regress/trace/source-with-tab-breaks-rewrite.json",
                                 &t), 0, "%s", ps_errmsg());
    snprintf(t->schedule, sizeof t->schedule, "q\"b\\s\n");
    char path[] = "/tmp/pipesim-trc-XXXXXX";
    close(mkstemp(path));
    cr_assert_eq(trc_write_chrome(t, path), 0);
    cr_assert_eq(th_sh("python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s", path),
                 0, "python's json module rejects %s", path);
    trc_trace_free(t);
    unlink(path);
}

Test(traces, a_receive_no_stage_sends_is_refused)
{
    /* a fuzz finding: a recv-act of stage 0 was read, and its flow's sender
     * (stage -1) wrapped the written id past what a JSON integer holds, so the
     * written trace did not read back
     * (tests/fuzz/regress/trace/recv-act-stage0-flow-id-wraps.json) */
    struct trc_trace *t = NULL;
    int rc = trc_read_chrome("tests/fuzz/regress/trace/recv-act-stage0-flow-id-wraps.json", &t);
    cr_assert_eq(rc, -PS_EINVAL, "%s", ps_errmsg());
    cr_assert_null(t);
    cr_assert(strstr(ps_errmsg(), "recv-act of stage 0: no stage sends it (stages 0..1)"), "%s",
              ps_errmsg());
    static const char grad[] =
        "{\"pipesim\":{\"devices\":2,\"stages\":2,\"micro_batches\":1},\"traceEvents\":["
        "{\"name\":\"recvB0\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":1,"
        "\"args\":{\"kind\":\"recv-grad\",\"stage\":1,\"mb\":0}}]}";
    rc = trc_read_chrome_mem(grad, sizeof grad - 1, "g.json", &t);
    cr_assert_eq(rc, -PS_EINVAL, "%s", ps_errmsg());
    cr_assert(strstr(ps_errmsg(), "g.json:") &&
                  strstr(ps_errmsg(), "traceEvents[0]: recv-grad of stage 1: no stage sends it "
                                      "(stages 0..1)"),
              "%s", ps_errmsg());
}

/* ---- Perfetto's rules, checked on the written JSON ----
 * A strict reader would be Perfetto's trace processor; neither Debian's
 * archive nor npm ships it (npm has no perfetto, @perfetto/ui or
 * trace-processor; checked 2026-12-04). npm's Chrome readers do not fit:
 * devtools-timeline-model 1.4.0 (DevTools' TracingModel) wants Chrome's
 * page events (TracingStartedInPage) and tracium 0.2.1 a page's main
 * thread, and neither checks that slices nest. So these rules are checked here from the
 * Trace Event Format's definitions: complete ("X") slices on one (pid, tid)
 * nest (none starts inside another and ends after it), every flow has one
 * "s" and one "f" of the same id, each strictly inside a complete slice of
 * its own (pid, tid), the "f" with bp "e" and later than its "s", and the
 * document holds no trailing metadata event (otherData has the count). */

#include <jansson.h>
#include <math.h>

struct slice {
    int64_t pid, tid, start, end;
};

static int slice_cmp(const void *pa, const void *pb)
{
    const struct slice *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->end > b->end ? -1 : a->end < b->end; /* the enclosing one first */
}

static int64_t ns_of(json_t *v)
{
    cr_assert(json_is_number(v));
    return llround(json_number_value(v) * 1000.0);
}

struct flow_end {
    int64_t id, pid, tid, ts;
    int phase; /* 's' or 'f' */
};

static int flow_cmp(const void *pa, const void *pb)
{
    const struct flow_end *a = pa, *b = pb;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return a->phase == b->phase ? 0 : a->phase == 's' ? -1 : 1;
}

/* Whether an X slice of (pid, tid) has ts strictly inside it (slices sorted). */
static int binds(const struct slice *x, size_t n, int64_t pid, int64_t tid, int64_t ts)
{
    for (size_t i = 0; i < n; i++)
        if (x[i].pid == pid && x[i].tid == tid && x[i].start < ts && ts < x[i].end)
            return 1;
    return 0;
}

struct perfetto_stats {
    size_t slices, transfers, flows;
    int64_t max_tid;
};

/* Asserts the rules above on the Chrome trace at path. */
static struct perfetto_stats check_perfetto_rules(const char *path)
{
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    cr_assert(root, "%s:%d: %s", path, err.line, err.text);
    json_t *evs = json_object_get(root, "traceEvents");
    cr_assert(json_is_array(evs), "%s: traceEvents", path);
    size_t n = json_array_size(evs), nx = 0, nf = 0, ntr = 0;
    int64_t max_tid = -1;
    struct slice *x = calloc(n + 1, sizeof *x);
    struct flow_end *fl = calloc(n + 1, sizeof *fl);
    cr_assert(x && fl);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(evs, i);
        const char *ph = json_string_value(json_object_get(e, "ph"));
        cr_assert(ph, "%s: traceEvents[%zu] has no ph", path, i);
        int64_t pid = json_integer_value(json_object_get(e, "pid"));
        int64_t tid = json_integer_value(json_object_get(e, "tid"));
        if (!strcmp(ph, "M")) {
            cr_assert(strcmp(json_string_value(json_object_get(e, "name")), "trace_end"),
                      "%s: a trace_end metadata event", path);
        } else if (!strcmp(ph, "X")) {
            int64_t ts = ns_of(json_object_get(e, "ts"));
            int64_t dur = ns_of(json_object_get(e, "dur"));
            cr_assert(dur >= 0);
            x[nx++] = (struct slice){ pid, tid, ts, ts + dur };
            if (tid > max_tid)
                max_tid = tid;
            const char *k = json_string_value(json_object_get(json_object_get(e, "args"), "kind"));
            ntr += k && (!strncmp(k, "send", 4) || !strncmp(k, "recv", 4));
        } else if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
            json_t *id = json_object_get(e, "id");
            cr_assert(json_is_integer(id), "%s: traceEvents[%zu]: flow id", path, i);
            if (*ph == 'f')
                cr_assert_str_eq(json_string_value(json_object_get(e, "bp")), "e",
                                 "%s: traceEvents[%zu]: an 'f' binds to its enclosing slice",
                                 path, i);
            fl[nf++] = (struct flow_end){ json_integer_value(id), pid, tid,
                                          ns_of(json_object_get(e, "ts")), *ph };
        } else {
            cr_assert(!strcmp(ph, "C"), "%s: traceEvents[%zu]: unexpected ph '%s'", path, i, ph);
        }
    }
    json_t *other = json_object_get(root, "otherData");
    cr_assert(json_is_object(other), "%s: no otherData", path);
    cr_assert_eq(json_integer_value(json_object_get(other, "events")), (json_int_t)nx, "%s", path);
    qsort(x, nx, sizeof *x, slice_cmp);
    /* nesting: a stack of the open slices per (pid, tid) */
    size_t *stack = calloc(nx + 1, sizeof *stack), top = 0;
    cr_assert(stack);
    for (size_t i = 0; i < nx; i++) {
        if (i && (x[i].pid != x[i - 1].pid || x[i].tid != x[i - 1].tid))
            top = 0;
        while (top && x[stack[top - 1]].end <= x[i].start)
            top--;
        if (top) {
            const struct slice *o = &x[stack[top - 1]];
            cr_assert(x[i].end <= o->end,
                      "%s: pid %lld tid %lld: [%lld, %lld] ns partly overlaps [%lld, %lld] ns",
                      path, (long long)x[i].pid, (long long)x[i].tid, (long long)o->start,
                      (long long)o->end, (long long)x[i].start, (long long)x[i].end);
        }
        stack[top++] = i;
    }
    qsort(fl, nf, sizeof *fl, flow_cmp);
    cr_assert_eq(nf % 2, 0, "%s: %zu flow ends", path, nf);
    for (size_t i = 0; i < nf; i += 2) {
        const struct flow_end *s = &fl[i], *f = &fl[i + 1];
        cr_assert(s->id == f->id && s->phase == 's' && f->phase == 'f' &&
                      (i + 2 >= nf || fl[i + 2].id != s->id),
                  "%s: flow %lld: not one 's' and one 'f'", path, (long long)s->id);
        cr_assert_lt(s->ts, f->ts, "%s: flow %lld ends before it starts", path, (long long)s->id);
        cr_assert(binds(x, nx, s->pid, s->tid, s->ts) && binds(x, nx, f->pid, f->tid, f->ts),
                  "%s: flow %lld does not bind to a slice of its thread", path,
                  (long long)s->id);
    }
    free(stack);
    free(x);
    free(fl);
    json_decref(root);
    return (struct perfetto_stats){ nx, ntr, nf / 2, max_tid };
}

/* The generator names sch_schedule_build knows, from its own list (so a
 * new generator is checked without editing this test). */
static int generator_names(char names[][32], int max)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("?", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    const char *p = strstr(ps_errmsg(), "(known: ");
    cr_assert(p, "%s", ps_errmsg());
    p += strlen("(known: ");
    int n = 0;
    while (*p && *p != ')' && n < max) {
        size_t len = strcspn(p, ",)");
        cr_assert(len > 0 && len < 32);
        snprintf(names[n++], 32, "%.*s", (int)len, p);
        p += len;
        p += strspn(p, ", ");
    }
    return n;
}

/* Simulates schedule name under both remat modes, writes each trace and
 * checks it against the rules and the reader. */
static void check_schedule(const char *name, const struct mdl_profile *p,
                           const struct mdl_topology *t, const char *dir)
{
    char path[128];
    for (int r = 0; r < 2; r++) {
        struct th_run run;
        th_simulate(&run, name, p, t, 4, 8, r ? SCH_REMAT_ALWAYS : SCH_REMAT_NEVER, 4, 1);
        const struct trc_trace *tr = sim_engine_trace(run.e);
        cr_assert(tr);
        snprintf(path, sizeof path, "%s/%s-%d.json", dir, name, r);
        cr_assert_eq(trc_write_chrome(tr, path), 0, "%s", ps_errmsg());
        struct perfetto_stats st = check_perfetto_rules(path);
        cr_assert_eq(st.slices, tr->n_events, "%s", name);
        /* receives were in flight at once (what used to overlap on tid 2) */
        cr_assert_geq(st.max_tid, SCH_NSTREAMS, "%s: one track per stream sufficed", name);
        /* every send has its receive, and each pair its flow */
        cr_assert_gt(st.transfers, 0, "%s", name);
        cr_assert_eq(st.flows * 2, st.transfers, "%s: %zu flows for %zu transfers", name,
                     st.flows, st.transfers);
        /* and it reads back as the same events */
        struct trc_trace *back;
        cr_assert_eq(trc_read_chrome(path, &back), 0, "%s", ps_errmsg());
        cr_assert_eq(back->n_events, tr->n_events);
        for (size_t k = 0; k < tr->n_events; k++) {
            const struct trc_event *a = &tr->events[k], *b = &back->events[k];
            cr_assert(a->device == b->device && a->stream == b->stream && a->kind == b->kind &&
                          a->stage == b->stage && a->mb == b->mb &&
                          a->start_ns == b->start_ns && a->end_ns == b->end_ns &&
                          a->bytes == b->bytes && a->peer == b->peer,
                      "%s: event %zu read back differs", name, k);
        }
        trc_trace_free(back);
        unlink(path);
        th_release(&run);
    }
}

Test(traces, every_schedule_nests_and_its_flows_bind, .timeout = 120)
{
    char names[32][32];
    int n = generator_names(names, 32), n_built = 0;
    cr_assert_geq(n, 9, "%d generators", n);
    /* transfers (4 MB at 1 GB/s) as long as a stage's forward, plus latency:
     * a receive is still in flight when the next one starts */
    struct mdl_profile *p = th_uniform(8, 2e6, 4e6, 4, 1e6, 1e5, 1000);
    struct mdl_topology *t = th_ring(4, 1e12, 1e9, 3e-4);
    char dir[64];
    th_tmpdir(dir, sizeof dir, "trc");
    for (int i = 0; i < n; i++)
        for (int v = 0; v < 2; v++) { /* plain, and ":2" where it takes a parameter */
            char name[40];
            struct sch_schedule *probe;
            snprintf(name, sizeof name, v ? "%.31s:2" : "%.31s", names[i]);
            if (sch_schedule_build(name, 4, 8, SCH_REMAT_NEVER, &probe) < 0)
                continue;
            sch_schedule_free(probe);
            check_schedule(name, p, t, dir);
            n_built++;
        }
    /* gpipe, zb-h1, ... plain; interleaved:2; breadth-first and breadth-first:2 */
    cr_assert_geq(n_built, n + 1, "%d schedules built for %d generators", n_built, n);
    rmdir(dir);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* The traces `make demo` writes (every `$P predict|validate ... --trace`
 * line of scripts/demo.sh, run as the demo runs it), the issue's
 * 24-layer Transformer on the PCIe machine, and the same with two
 * data-parallel replicas (flows of equal stages on different devices):
 * Perfetto's rules hold, and compare reads them back. */
Test(traces, demo_traces_nest_and_read_back, .timeout = 240)
{
    char dir[64];
    th_tmpdir(dir, sizeof dir, "trcdemo");
    const char *P = th_pipesim();
    cr_assert_eq(th_sh("awk '/\\\\$/ { sub(/\\\\$/, \"\"); buf = buf $0; next } "
                       "{ print buf $0; buf = \"\" }' scripts/demo.sh | "
                       "grep -E '^\\$P (predict|validate) .*--trace ' > %s/cmds", dir), 0);
    /* the demo predicts with what validate --check calibrated ($C.csv, $C.json):
     * here the net's own profile on cpu-2core stands in for it */
    cr_assert_eq(th_sh("cd %s && (echo 'set -e; mkdir -p \"$R/demo\"; C=$R/cal; "
                       "$P validate --net mlp:layers=8,width=512 --emit-profile $C.csv; "
                       "cp models/topologies/cpu-2core.json $C.json'; cat cmds) > demo.sh", dir),
                 0);
    cr_assert_eq(th_sh("P=%s R=%s sh %s/demo.sh >%s/out 2>&1 || { cat %s/out; exit 1; }", P, dir,
                       dir, dir, dir), 0, "the demo's trace commands failed");
    cr_assert_eq(th_sh("%s predict --model transformer:L=24 --topology "
                       "models/topologies/pcie-8gpu.json -K 4 -M 32 --batch 128 "
                       "--trace %s/demo/issue.json >/dev/null", P, dir), 0);
    cr_assert_eq(th_sh("%s predict --model transformer:L=24 --topology "
                       "models/topologies/pcie-8gpu.json -K 4 -M 8 --batch 32 --replicas 2 "
                       "--trace %s/demo/replicas.json >/dev/null", P, dir), 0);
    static const char *const files[] = { "mlp-cpu", "transformer-chain", "transformer-pcie",
                                         "validate-measured", "validate-simulated", "issue",
                                         "replicas" };
    int lanes = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/demo/%s.json", dir, files[i]);
        struct perfetto_stats st = check_perfetto_rules(path);
        cr_assert_gt(st.transfers, 0, "%s", path);
        cr_assert_eq(st.flows * 2, st.transfers, "%s: %zu flows, %zu transfers", path, st.flows,
                     st.transfers);
        lanes += st.max_tid >= SCH_NSTREAMS;
        struct trc_trace *t;
        cr_assert_eq(trc_read_chrome(path, &t), 0, "%s", ps_errmsg());
        cr_assert_eq(t->n_events, st.slices, "%s", path);
        trc_trace_free(t);
    }
    /* the PCIe runs are the ones that overlapped (issue 18: 48, 60 slices) */
    cr_assert_geq(lanes, 3, "%d traces needed more than one track per stream", lanes);
    /* the demo's own comparison of the two */
    cr_assert_eq(th_sh("%s compare %s/demo/validate-simulated.json %s/demo/validate-measured.json "
                       ">/dev/null", P, dir, dir), 0);
    th_sh("rm -rf %s", dir);
}

Test(traces, tracks_read_as_their_stream)
{
    /* tid 5 is the second receive track (lane 1 of stream 2); tid 4 is a
     * send track, where a forward cannot be */
    static const char ok[] =
        "{\"pipesim\":{\"devices\":2,\"stages\":2,\"micro_batches\":1},\"traceEvents\":["
        "{\"name\":\"recvF0\",\"ph\":\"X\",\"pid\":1,\"tid\":5,\"ts\":1,\"dur\":2,"
        "\"args\":{\"kind\":\"recv-act\",\"stage\":1,\"mb\":0}}]}";
    struct trc_trace *t = NULL;
    cr_assert_eq(trc_read_chrome_mem(ok, sizeof ok - 1, "ok.json", &t), 0, "%s", ps_errmsg());
    cr_assert_eq(t->n_events, 1);
    cr_assert_eq(t->events[0].stream, SCH_STREAM_RECV);
    cr_assert_eq(t->events[0].start_ns, 0); /* times count from the earliest event */
    cr_assert_eq(t->events[0].end_ns, 2000);
    trc_trace_free(t);
    static const char bad[] =
        "{\"pipesim\":{\"devices\":2,\"stages\":2,\"micro_batches\":1},\"traceEvents\":[\n"
        "{\"name\":\"F0\",\"ph\":\"X\",\"pid\":0,\"tid\":4,\"ts\":1,\"dur\":2,"
        "\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":0}}]}";
    int rc = trc_read_chrome_mem(bad, sizeof bad - 1, "bad.json", &t);
    cr_assert_eq(rc, -PS_EPARSE, "%s", ps_errmsg());
    cr_assert_null(t);
    cr_assert_str_eq(ps_errmsg(), "bad.json:2:1: traceEvents[0]: tid 4 is a send track, but a F "
                                  "op runs on compute");
}

/* helper-95: the header's micro_batches is the events' as devices and stages are: a
 * forged 7 on a step of 4 was compared as "7 micro-batches" (exit 0); U and AR (mb -1)
 * are of no micro-batch. */
Test(traces, header_micro_batches_are_the_events)
{
#define MB_META(m) "{\"pipesim\":{\"devices\":1,\"stages\":1,\"micro_batches\":" m "},\n" \
                   "\"traceEvents\":["
#define MB_F(ts, mb) "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":" ts ",\"dur\":1," \
                     "\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":" mb "}}"
#define MB_U "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":9,\"dur\":1," \
             "\"args\":{\"kind\":\"U\",\"stage\":0,\"mb\":-1}}"
    static const char forged[] = MB_META("7") MB_F("1", "0") "," MB_F("3", "1") "," MB_U "]}";
    struct trc_trace *t = NULL;
    int rc = trc_read_chrome_mem(forged, sizeof forged - 1, "m.json", &t);
    cr_expect_eq(rc, -PS_EPARSE, "%s", ps_errmsg());
    cr_expect_null(t);
    cr_expect_str_eq(ps_errmsg(), "m.json:1:36: pipesim.micro_batches: 7, but the events are of "
                                  "2 micro-batches");
    static const char one[] = MB_META("2") MB_F("1", "0") "," MB_U "]}";
    rc = trc_read_chrome_mem(one, sizeof one - 1, "one.json", &t);
    cr_expect_eq(rc, -PS_EPARSE, "%s", ps_errmsg());
    cr_expect(strstr(ps_errmsg(), "pipesim.micro_batches: 2, but the events are of 1 "
                                  "micro-batch"), "%s", ps_errmsg());
    static const char ok[] = MB_META("2") MB_F("1", "0") "," MB_F("3", "1") "," MB_U "]}";
    cr_assert_eq(trc_read_chrome_mem(ok, sizeof ok - 1, "ok.json", &t), 0, "%s", ps_errmsg());
    cr_expect_eq(t->n_micro, 2);
    trc_trace_free(t);
#undef MB_META
#undef MB_F
#undef MB_U
    /* end to end: the tester's edit */
    char d[64], out[4096];
    th_tmpdir(d, sizeof d, "trcmb");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=4,width=64 --topology cpu-2core "
                       "-K 2 -M 4 --batch 64 --trace a.json >/dev/null 2>&1 && sed "
                       "'s/\"micro_batches\":4/\"micro_batches\":7/' a.json > m7.json", d, ps),
                 0);
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && %s compare m7.json m7.json 2>&1", d, ps),
                 3, "%s", out);
    cr_expect(strstr(out, "m7.json:2:") && strstr(out, "pipesim.micro_batches: 7, but the events "
                                                       "are of 4 micro-batches"), "%s", out);
    th_sh("rm -rf %s", d);
}

/* helper-95: mb -1 is the micro-batch of the ops that have none, U and AR (as the writer
 * writes them), and only theirs: an F of mb -1 read as op F-1, a U of mb 2 reached compare
 * --replay as a U its message could not tell from the schedule's. */
Test(traces, only_u_and_ar_are_of_no_micro_batch)
{
#define NOMB_EV(kind, mb) "{\"pipesim\":{\"devices\":1,\"stages\":1,\"micro_batches\":1}," \
                          "\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1," \
                          "\"dur\":1,\"args\":{\"kind\":\"" kind "\",\"stage\":0,\"mb\":" mb "}}]}"
    static const struct {
        const char *text, *what;
    } bad[] = {
        { NOMB_EV("F", "-1"), "n.json:2:71: traceEvents[0].args.mb: missing or not a "
                              "micro-batch of the trace (0..0)" },
        { NOMB_EV("W", "-1"), "n.json:2:71: traceEvents[0].args.mb: missing or not a "
                              "micro-batch of the trace (0..0)" },
        { NOMB_EV("U", "0"), "n.json:2:71: traceEvents[0].args.mb: missing or not -1: U ops are "
                             "of no micro-batch" },
        { NOMB_EV("AR", "2"), "n.json:2:72: traceEvents[0].args.mb: missing or not -1: AR ops "
                              "are of no micro-batch" },
    };
    struct trc_trace *t = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = trc_read_chrome_mem(bad[i].text, strlen(bad[i].text), "n.json", &t);
        cr_expect_eq(rc, -PS_EPARSE, "case %zu: %s", i, ps_errmsg());
        cr_expect_null(t);
        cr_expect_str_eq(ps_errmsg(), bad[i].what, "case %zu: %s", i, ps_errmsg());
    }
    static const char u[] = NOMB_EV("U", "-1"), ar[] = NOMB_EV("AR", "-1");
    cr_assert_eq(trc_read_chrome_mem(u, sizeof u - 1, "u.json", &t), 0, "%s", ps_errmsg());
    cr_expect_eq(t->events[0].mb, -1);
    trc_trace_free(t);
    cr_assert_eq(trc_read_chrome_mem(ar, sizeof ar - 1, "ar.json", &t), 0, "%s", ps_errmsg());
    trc_trace_free(t);
#undef NOMB_EV
}

/* Epoch-like times (up to 4e15 us) are read to the nanosecond: us * 1000 in a
 * double rounded them to 512 ns, so an op that starts where the one before
 * ends could read as overlapping it, and durations were off (helper-106). */
Test(traces, epoch_times_keep_their_nanoseconds)
{
    static const char text[] =
        "{\"pipesim\":{\"devices\":1,\"stages\":1,\"micro_batches\":2},\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":3900000000000000.5,\"dur\":6.5,"
        "\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":0}},\n"
        "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":3900000000000007,\"dur\":3,"
        "\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":1}}]}";
    struct trc_trace *t = NULL;
    cr_assert_eq(trc_read_chrome_mem(text, sizeof text - 1, "e.json", &t), 0, "%s",
                 ps_errmsg());
    cr_assert_eq(t->n_events, 2);
    const struct trc_event *a = &t->events[0], *b = &t->events[1];
    cr_expect_eq(a->end_ns - a->start_ns, 6500, "%lld ns", (long long)(a->end_ns - a->start_ns));
    cr_expect_eq(b->start_ns - a->start_ns, 6500, "%lld ns",
                 (long long)(b->start_ns - a->start_ns));
    cr_expect_eq(b->end_ns - b->start_ns, 3000, "%lld ns", (long long)(b->end_ns - b->start_ns));
    trc_trace_free(t);
}
