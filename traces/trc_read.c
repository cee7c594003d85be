/* trc_read_chrome: reads back the Chrome JSON that trc_write_chrome writes
 * (the tracks of older traces, tid = stream, are lane 0 of today's). */
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_jsonpos.h"
#include "base/ps_memavail.h"
#include "base/ps_util.h"
#include "sched/sch_cost.h"
#include "traces/trc_trace.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int kind_from_name(const char *s)
{
    for (int k = 0; k < SCH_OP_NKINDS; k++)
        if (!strcmp(sch_op_kind_name(k), s))
            return k;
    return -1;
}

/* A JSON number of microseconds (|v| <= MAX_US) to nanoseconds: an integer
 * as an integer, a real's whole microseconds scaled apart from its fraction
 * (helper-106: llround(us * 1000.0) in a double rounded 3.9e15 us to 512 ns,
 * so an op ending where the next began could overlap it). */
static int64_t us_to_ns(json_t *v)
{
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v) * 1000;
    return ps_us_to_ns(json_number_value(v));
}

/* Times and byte counts become int64: beyond these they would wrap
 * (4e15 us is 127 years). */
#define MAX_US 4e15
#define MAX_COUNT 4e18

static int in_range(json_t *v, double max)
{
    return json_is_number(v) && fabs(json_number_value(v)) <= max; /* false for NaN */
}

/* A byte count: a number in [0, MAX_COUNT] (in_range let -65536 through). */
static int is_count(json_t *v)
{
    return in_range(v, MAX_COUNT) && json_number_value(v) >= 0;
}

static int get_int(json_t *o, const char *key, int *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
        json_integer_value(v) > INT32_MAX)
        return -1;
    *out = (int)json_integer_value(v);
    return 0;
}

/* A header value for messages: a number as written ("-2", "1e+30", "2.0"), a
 * short string quoted, else what it is ("a string", "an array", "missing"). */
static const char *what_is(json_t *v, char *buf, size_t n)
{
    if (!v)
        return "missing";
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL:
        ps_fmt_double(json_real_value(v), buf, n);
        if (!strpbrk(buf, ".eni") && strlen(buf) + 2 < n) /* 2.0 is not the integer 2 */
            strcat(buf, ".0");
        return buf;
    case JSON_STRING: {
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        for (size_t i = 0; i < len; i++)
            if (s[i] < ' ' || s[i] > '~' || s[i] == '\'')
                return "a string";
        if (len + 3 > n)
            return "a string";
        snprintf(buf, n, "'%s'", s);
        return buf;
    }
    case JSON_ARRAY: return "an array";
    case JSON_OBJECT: return "an object";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: return "null";
    }
    return "missing";
}

/* The header's names of the run, each optional (measured traces from other
 * tools, older traces); one present must be what the writer writes: a
 * schedule's name ("" none), a remat mode ("" none), a positive batch (0 none:
 * what the writer writes for a trace that names none, so that it reads back). */
static int read_config(const char *path, json_t *meta, struct trc_trace *t)
{
    char w[48];
    json_t *v = json_object_get(meta, "schedule");
    if (v && (!json_is_string(v) || json_string_length(v) >= sizeof t->schedule ||
              strlen(json_string_value(v)) != json_string_length(v)))
        return ps_error(PS_EPARSE, "%s: pipesim.schedule: %s: must be a schedule's name (a "
                        "string of at most %zu bytes)", path, what_is(v, w, sizeof w),
                        sizeof t->schedule - 1);
    if (v)
        snprintf(t->schedule, sizeof t->schedule, "%s", json_string_value(v));
    enum sch_remat r;
    v = json_object_get(meta, "remat");
    if (v && (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
              (*json_string_value(v) && sch_remat_parse(json_string_value(v), &r) < 0)))
        return ps_error(PS_EPARSE, "%s: pipesim.remat: %s: must be never, except_last or "
                        "always", path, what_is(v, w, sizeof w));
    if (v)
        snprintf(t->remat, sizeof t->remat, "%s", json_string_value(v));
    v = json_object_get(meta, "batch");
    if (v && (!json_is_number(v) || !(json_number_value(v) >= 0) ||
              !isfinite(json_number_value(v))))
        return ps_error(PS_EPARSE, "%s: pipesim.batch: %s: must be a positive number (0: none "
                        "named)", path, what_is(v, w, sizeof w));
    if (v)
        t->batch = json_number_value(v);
    return 0;
}

/* One of the header's counts, a whole number in [1, max], named when it is not
 * (helper-95: one message for the three named none, -2 and 1e30 alike). */
static int get_count(const char *path, json_t *meta, const char *key, int max, int *out)
{
    json_t *v = json_object_get(meta, key);
    if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= max) {
        *out = (int)json_integer_value(v);
        return 0;
    }
    char w[48];
    return ps_error(PS_EPARSE, "%s: pipesim.%s: %s: must be a whole number in [1, %d]", path,
                    key, what_is(v, w, sizeof w), max);
}

static int read_meta(const char *path, json_t *meta, struct trc_trace **out)
{
    int nd, ns, nm;
    if (!json_is_object(meta))
        return ps_error(PS_EPARSE, "%s: pipesim: missing or bad metadata object (devices, "
                         "stages, micro_batches)", path);
    if (get_count(path, meta, "devices", 1 << 20, &nd) < 0 ||
        get_count(path, meta, "stages", 1 << 24, &ns) < 0 ||
        get_count(path, meta, "micro_batches", 1 << 24, &nm) < 0)
        return -PS_EPARSE;
    json_t *src = json_object_get(meta, "source");
    struct trc_trace *t = trc_trace_new(json_is_string(src) ? json_string_value(src) : "unknown",
                                        nd, ns, nm);
    if (!t || !(t->static_mem = calloc((size_t)nd, sizeof *t->static_mem))) {
        trc_trace_free(t);
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    }
    json_t *v;
    if (read_config(path, meta, t) < 0) {
        trc_trace_free(t);
        return -PS_EPARSE;
    }
    if ((v = json_object_get(meta, "replicas"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > 1 << 16) {
            trc_trace_free(t);
            return ps_error(PS_EPARSE, "%s: pipesim.replicas: must be a whole number in "
                             "[1, 65536]", path);
        }
        t->n_replicas = (int)json_integer_value(v);
    }
    if ((v = json_object_get(meta, "step_ns"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            (double)json_integer_value(v) > MAX_COUNT) {
            trc_trace_free(t);
            return ps_error(PS_EPARSE, "%s: pipesim.step_ns: must be a whole number of ns in "
                             "[0, %g]", path, MAX_COUNT);
        }
        t->step_ns = (int64_t)json_integer_value(v);
    }
    json_t *sm = json_object_get(meta, "static_mem");
    for (int d = 0; d < nd && json_is_array(sm) && (size_t)d < json_array_size(sm); d++) {
        json_t *x = json_array_get(sm, (size_t)d);
        if (!in_range(x, MAX_COUNT) || json_number_value(x) < 0) {
            trc_trace_free(t);
            return ps_error(PS_EPARSE, "%s: pipesim.static_mem[%d]: must be a byte count in "
                             "[0, %g]", path, d, MAX_COUNT);
        }
        t->static_mem[d] = (int64_t)json_number_value(x);
    }
    *out = t;
    return 0;
}

static int read_event(const char *path, size_t i, json_t *ev, struct trc_trace *t)
{
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    if (!ph)
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu]: missing 'ph'", path, i);
    int pid;
    if (strcmp(ph, "X") && strcmp(ph, "C"))
        return 0; /* metadata and flow events carry nothing to read back */
    json_t *ts = json_object_get(ev, "ts");
    json_t *args = json_object_get(ev, "args");
    /* each field named (helper-83: one line listed five candidates) */
    if (get_int(ev, "pid", &pid))
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].pid: missing, not an integer or beyond 32 "
                        "bits", path, i);
    if (pid < 0 || pid >= t->n_devices)
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].pid: %d is not a device of the trace "
                        "(0..%d)", path, i, pid, t->n_devices - 1);
    if (!in_range(ts, MAX_US))
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].ts: missing, not a number or beyond "
                        "%g us", path, i, MAX_US);
    if (!json_is_object(args))
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].args: missing or not an object", path,
                        i);
    if (json_number_value(ts) < 0) /* times count from the step's start */
        return ps_error(PS_EINVAL, "%s: traceEvents[%zu].ts: %g us, before the step's start "
                        "(times count from it)", path, i, json_number_value(ts));
    if (!strcmp(ph, "C")) {
        json_t *a = json_object_get(args, "activations");
        if (!a)
            return ps_error(PS_EPARSE, "%s: traceEvents[%zu].args: counter without "
                             "'activations' (a byte count)", path, i);
        if (!is_count(a)) /* it said "without" of a negative one (helper-126) */
            return ps_error(PS_EPARSE, "%s: traceEvents[%zu].args.activations: must be a "
                             "byte count (a number from 0)", path, i);
        return trc_add_counter(t, pid, us_to_ns(ts),
                               (int64_t)json_number_value(a));
    }
    struct trc_event e = { .device = pid, .peer = -1, .src = (uint32_t)i };
    int tid, stage, mb, peer = -1;
    json_t *dur = json_object_get(ev, "dur");
    const char *kind = json_string_value(json_object_get(args, "kind"));
    int k = kind ? kind_from_name(kind) : -1;
    if (get_int(ev, "tid", &tid) || tid < 0)
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].tid: missing, negative, not an integer or "
                        "beyond 32 bits", path, i);
    if (!json_is_number(dur) || !(json_number_value(dur) >= 0))
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].dur: missing, not a number or "
                        "negative", path, i);
    /* one op lasts at most SCH_MAX_OP_S, as in a profile (helper-106: 3.99e15 us
     * was read, and compare printed an error of +3218572534847686.50%) */
    if (json_number_value(dur) > SCH_MAX_OP_S * 1e6)
        return ps_error(PS_EINVAL, "%s: traceEvents[%zu].dur: %g us is beyond one op's bound "
                        "of %g us (%g s)", path, i, json_number_value(dur), SCH_MAX_OP_S * 1e6,
                        SCH_MAX_OP_S);
    if (k < 0)
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].args.kind: %s%s%s", path, i,
                        kind                              ? "unknown op kind '"
                        : json_object_get(args, "kind") ? "not a string"
                                                          : "missing",
                        kind ? kind : "", kind ? "'" : "");
    if (get_int(args, "stage", &stage) || stage < 0 || stage >= t->n_stages)
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].args.stage: missing or not a stage of "
                        "the trace (0..%d)", path, i, t->n_stages - 1);
    /* U and AR are of no micro-batch, the others of one (helper-95: an F of mb -1
     * read as F-1, a U of mb 2 was a U to compare --replay, named without it) */
    if (sch_op_per_stage(k) && (get_int(args, "mb", &mb) || mb != -1))
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].args.mb: missing or not -1: %s ops "
                        "are of no micro-batch", path, i, kind);
    if (!sch_op_per_stage(k) && (get_int(args, "mb", &mb) || mb < 0 || mb >= t->n_micro))
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].args.mb: missing or not a micro-batch "
                        "of the trace (0..%d)", path, i, t->n_micro - 1);
    /* a receive names the stage that sent it: none before stage 0 (activations)
     * or after the last stage (gradients) */
    if ((k == SCH_OP_RECV_ACT && stage == 0) || (k == SCH_OP_RECV_GRAD && stage == t->n_stages - 1))
        return ps_error(PS_EINVAL, "%s: traceEvents[%zu]: %s of stage %d: no stage sends it "
                         "(stages 0..%d)", path, i, kind, stage, t->n_stages - 1);
    /* tid = lane * SCH_NSTREAMS + stream (trc_layout.h): the stream must be
     * the one the kind runs on */
    if (tid % SCH_NSTREAMS != (int)sch_op_stream((enum sch_op_kind)k))
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu]: tid %d is a %s track, but a %s op "
                         "runs on %s", path, i, tid, trc_stream_name(tid % SCH_NSTREAMS), kind,
                         trc_stream_name(sch_op_stream((enum sch_op_kind)k)));
    get_int(args, "peer", &peer);
    json_t *b = json_object_get(args, "bytes");
    if (b && !is_count(b))
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu]: args.bytes: must be a byte count",
                         path, i);
    e.kind = (uint8_t)k;
    e.stream = (uint8_t)(tid % SCH_NSTREAMS);
    e.stage = stage;
    e.mb = mb;
    e.peer = peer;
    e.bytes = json_is_number(b) ? (int64_t)json_number_value(b) : 0;
    e.start_ns = us_to_ns(ts);
    e.end_ns = e.start_ns + us_to_ns(dur);
    return trc_add_event(t, &e);
}

/* A device runs one compute op at a time (trc_layout.h): in a trace sorted
 * by start, each compute op starts no earlier than the device's previous one
 * ended, give or take a microsecond (the format's unit, rounded). */
struct op_key {
    int32_t device, stage, mb;
    uint8_t kind;
    uint32_t src;
};

static int cmp_key(const void *x, const void *y)
{
    const struct op_key *a = x, *b = y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->stage != b->stage)
        return a->stage < b->stage ? -1 : 1;
    return a->mb < b->mb ? -1 : a->mb > b->mb;
}

/* Each op (device, kind, stage, micro-batch) once: a repeated one would be
 * matched to nothing in a comparison and named as missing from the other
 * trace. */
static int check_unique_ops(const char *path, const struct trc_trace *t)
{
    if (t->n_events < 2)
        return 0;
    struct op_key *k = malloc(sizeof *k * t->n_events);
    if (!k)
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < t->n_events; i++)
        k[i] = (struct op_key){ t->events[i].device, t->events[i].stage, t->events[i].mb,
                                t->events[i].kind, t->events[i].src };
    qsort(k, t->n_events, sizeof *k, cmp_key);
    int rc = 0;
    for (size_t i = 1; i < t->n_events && !rc; i++)
        if (!cmp_key(&k[i], &k[i - 1])) {
            struct sch_op op = { k[i].kind, k[i].stage, k[i].mb };
            char lab[32];
            sch_op_label(&op, lab, sizeof lab);
            /* the later event's path (its line and column are added) */
            uint32_t a = k[i].src > k[i - 1].src ? k[i].src : k[i - 1].src;
            uint32_t b = k[i].src > k[i - 1].src ? k[i - 1].src : k[i].src;
            rc = ps_error(PS_EPARSE, "%s: traceEvents[%u]: %s of stage %d on device %d appears "
                          "more than once (also traceEvents[%u])", path, a, lab, k[i].stage,
                          k[i].device, b);
        }
    free(k);
    return rc;
}

static int check_compute_serial(const char *path, const struct trc_trace *t)
{
    const int64_t slack_ns = 1000;
    int64_t *end = calloc((size_t)t->n_devices + 1, sizeof *end);
    size_t *prev = calloc((size_t)t->n_devices + 1, sizeof *prev);
    int rc = 0;
    if (!end || !prev) {
        rc = ps_error(PS_ENOMEM, "%s: out of memory", path);
        goto out_free;
    }
    for (size_t i = 0; i < t->n_events; i++) {
        const struct trc_event *e = &t->events[i];
        if (e->stream != SCH_STREAM_COMPUTE || e->device < 0 || e->device >= t->n_devices)
            continue;
        if (prev[e->device] && e->start_ns + slack_ns < end[e->device]) {
            const struct trc_event *p = &t->events[prev[e->device] - 1];
            rc = ps_error(PS_EINVAL, "%s: traceEvents[%u]: device %d: compute ops %s of stage "
                           "%d, mb %d (%.3f to %.3f us) and %s of stage %d, mb %d (from %.3f "
                           "us) overlap: a device runs one compute op at a time", path, e->src,
                           e->device,
                           sch_op_kind_name((enum sch_op_kind)p->kind), p->stage, p->mb,
                           (double)p->start_ns / 1e3, (double)p->end_ns / 1e3,
                           sch_op_kind_name((enum sch_op_kind)e->kind), e->stage, e->mb,
                           (double)e->start_ns / 1e3);
            goto out_free;
        }
        if (!prev[e->device] || e->end_ns > end[e->device]) {
            end[e->device] = e->end_ns;
            prev[e->device] = i + 1;
        }
    }
out_free:
    free(end);
    free(prev);
    return rc;
}

/* Times count from the trace's earliest event (op or counter), as trace
 * viewers show them: pipesim's traces have one at 0 (the step's start), and
 * are left as they are; another tool's absolute times (epoch microseconds)
 * made a makespan of 3.9e9 s (helper-106). Times before 0 were refused. */
static void rebase(struct trc_trace *t)
{
    if (!t->n_events && !t->n_counters)
        return;
    int64_t origin = INT64_MAX;
    for (size_t i = 0; i < t->n_events; i++)
        origin = t->events[i].start_ns < origin ? t->events[i].start_ns : origin;
    for (size_t i = 0; i < t->n_counters; i++)
        origin = t->counters[i].t_ns < origin ? t->counters[i].t_ns : origin;
    if (origin <= 0)
        return;
    for (size_t i = 0; i < t->n_events; i++) {
        t->events[i].start_ns -= origin;
        t->events[i].end_ns -= origin;
    }
    for (size_t i = 0; i < t->n_counters; i++)
        t->counters[i].t_ns -= origin;
}

/* Reads the trace out of a parsed document; takes the reference to root. */
static int read_root(json_t *root, const char *path, struct trc_trace **out)
{
    struct trc_trace *t = NULL;
    int rc = read_meta(path, json_object_get(root, "pipesim"), &t);
    json_t *evs = json_object_get(root, "traceEvents");
    if (!rc && !json_is_array(evs))
        rc = ps_error(PS_EPARSE, "%s: traceEvents: missing or not an array", path);
    for (size_t i = 0; !rc && i < json_array_size(evs); i++)
        rc = read_event(path, i, json_array_get(evs, i), t);
    json_decref(root);
    if (rc < 0) {
        trc_trace_free(t);
        return rc;
    }
    trc_trace_sort(t);
    rc = check_unique_ops(path, t);
    if (!rc)
        rc = check_compute_serial(path, t); /* its message: the file's times */
    if (!rc)
        rebase(t);
    if (!rc && t->n_events > 0) { /* the header's counts are the events' */
        int top_dev = 0, top_stage = 0, top_mb = -1; /* -1: U and AR only, no micro-batch */
        for (size_t i = 0; i < t->n_events; i++) {
            top_dev = t->events[i].device > top_dev ? t->events[i].device : top_dev;
            top_stage = t->events[i].stage > top_stage ? t->events[i].stage : top_stage;
            top_mb = t->events[i].mb > top_mb ? t->events[i].mb : top_mb;
        }
        if (top_dev + 1 != t->n_devices)
            rc = ps_error(PS_EPARSE, "%s: pipesim.devices: %d, but the events are on %d "
                          "device%s", path, t->n_devices, top_dev + 1, top_dev ? "s" : "");
        else if (top_stage + 1 != t->n_stages)
            rc = ps_error(PS_EPARSE, "%s: pipesim.stages: %d, but the events are of %d "
                          "stage%s", path, t->n_stages, top_stage + 1, top_stage ? "s" : "");
        /* helper-95: a forged 7 was compared as '7 micro-batches' */
        else if (top_mb >= 0 && top_mb + 1 != t->n_micro)
            rc = ps_error(PS_EPARSE, "%s: pipesim.micro_batches: %d, but the events are of %d "
                          "micro-batch%s", path, t->n_micro, top_mb + 1, top_mb ? "es" : "");
        /* a measured step's own time ends with or after its last op (helper-74: a
         * hand-edited 1 ns was replaced by the last end, silently) */
        int64_t last = 0;
        for (size_t i = 0; i < t->n_events; i++)
            last = t->events[i].end_ns > last ? t->events[i].end_ns : last;
        if (!rc && t->step_ns > 0 && t->step_ns < last)
            rc = ps_error(PS_EINVAL, "%s: pipesim.step_ns: %lld ns, before the last op's end "
                          "(%lld ns)", path, (long long)t->step_ns, (long long)last);
    }
    if (rc < 0) {
        trc_trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* helper-106: a trace of no ops (or whose X events were stripped, its
 * counters and step_ns left) compared as "ops aligned 0", exit 0 */
int trc_require_compute(const struct trc_trace *t, const char *path)
{
    for (size_t i = 0; i < t->n_events; i++) /* F, B, R, W: not U or AR, of no mb */
        if (sch_op_is_compute(t->events[i].kind) && !sch_op_per_stage(t->events[i].kind))
            return 0;
    return ps_error(PS_EPARSE, "%s: the trace holds no compute ops (no X event of kind F, B, R "
                    "or W): a step's trace has its forward and backward ops", path);
}

#define TRC_PEAK_FACTOR 8.0 /* bytes held per byte of trace: 7.7 measured (trc_read_fits) */

int trc_read_fits(const char *a, const char *b)
{
    return trc_fits_at(a, b, TRC_PEAK_FACTOR);
}

int trc_fits_at(const char *a, const char *b, double per_byte)
{
    const char *p[2] = { a, b };
    double bytes = 0;
    struct stat sb;
    for (int i = 0; i < 2; i++)
        if (p[i] && stat(p[i], &sb) == 0 && S_ISREG(sb.st_mode))
            bytes += (double)sb.st_size;
    if (!(bytes > 0))
        return 0;
    char what[600], detail[128], sz[32];
    snprintf(what, sizeof what, "%s%s%s", a, b ? " with " : "", b ? b : "");
    ps_mem_format(bytes, sz, sizeof sz);
    snprintf(detail, sizeof detail, "%s of trace held as JSON, about %.0f x its size", sz,
             per_byte);
    return ps_mem_check(bytes * per_byte, what, detail, "use shorter traces (fewer "
                        "micro-batches or steps), or set " PS_MEM_ENV " to override the check");
}

int trc_read_chrome(const char *path, struct trc_trace **out)
{
    *out = NULL;
    char *text;
    size_t len;
    int rc = trc_read_fits(path, NULL);
    if (rc < 0)
        return rc;
    rc = ps_read_file(path, &text, &len);
    if (rc < 0)
        return rc;
    rc = trc_read_chrome_mem(text, len, path, out);
    free(text);
    return rc;
}

int trc_read_chrome_mem(const char *text, size_t len, const char *name, struct trc_trace **out)
{
    *out = NULL;
    json_error_t jerr;
    size_t bom = ps_bom_len(text, len);
    text += bom;
    len -= bom;
    ps_json_begin();
    /* a key twice in an object is an error at the second, as in a topology
     * (helper-106: the last value was read) */
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (ps_json_oom()) { /* a syntax error to jansson, or a document missing a byte */
        json_decref(root);
        return ps_error(PS_ENOMEM, "%s: out of memory parsing JSON", name);
    }
    if (!root)
        return ps_json_parse_error(name, len, jerr.line, jerr.column, jerr.text);
    /* errors name the JSON path; add the line and column it is on */
    return ps_json_error_at(read_root(root, name, out), name, text, len, NULL);
}
