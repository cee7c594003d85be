#include "traces/trc_trace.h"
#include "traces/trc_layout.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct trc_trace *trc_trace_new(const char *source, int n_devices, int n_stages, int n_micro)
{
    struct trc_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    snprintf(t->source, sizeof t->source, "%s", source);
    ps_utf8_trim_cut(t->source); /* cut short: whole characters (helper-98) */
    t->n_devices = n_devices;
    t->n_stages = n_stages;
    t->n_micro = n_micro;
    return t;
}

void trc_trace_free(struct trc_trace *t)
{
    if (!t)
        return;
    free(t->events);
    free(t->counters);
    free(t->static_mem);
    free(t);
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 256;
    void *np = realloc(*p, nc * size);
    if (!np)
        return ps_error(PS_ENOMEM, "out of memory recording a trace");
    *p = np;
    *cap = nc;
    return 0;
}

int trc_add_event(struct trc_trace *t, const struct trc_event *e)
{
    int rc = grow((void **)&t->events, &t->cap_events, t->n_events, sizeof *e);
    if (rc < 0)
        return rc;
    t->events[t->n_events++] = *e;
    return 0;
}

int trc_add_counter(struct trc_trace *t, int device, int64_t t_ns, int64_t bytes)
{
    int rc = grow((void **)&t->counters, &t->cap_counters, t->n_counters, sizeof *t->counters);
    if (rc < 0)
        return rc;
    t->counters[t->n_counters++] = (struct trc_counter){ device, t_ns, bytes };
    return 0;
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

static int ev_cmp(const void *pa, const void *pb)
{
    const struct trc_event *a = pa, *b = pb;
    int c;
    if ((c = CMP(a->start_ns, b->start_ns)) || (c = CMP(a->device, b->device)) ||
        (c = CMP(a->stream, b->stream)) || (c = CMP(a->kind, b->kind)) ||
        (c = CMP(a->stage, b->stage)) || (c = CMP(a->mb, b->mb)))
        return c;
    return CMP(a->end_ns, b->end_ns);
}

struct ctr_idx {
    struct trc_counter c;
    size_t i;
};

/* (device, time, recording order): a stable order for counters. */
static int ctr_cmp(const void *pa, const void *pb)
{
    const struct ctr_idx *a = pa, *b = pb;
    int c;
    if ((c = CMP(a->c.device, b->c.device)) || (c = CMP(a->c.t_ns, b->c.t_ns)))
        return c;
    return CMP(a->i, b->i);
}

int trc_event_ptr_by_device_start(const void *pa, const void *pb)
{
    const struct trc_event *a = *(const struct trc_event *const *)pa,
                           *b = *(const struct trc_event *const *)pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

void trc_trace_sort(struct trc_trace *t)
{
    if (t->n_events)
        qsort(t->events, t->n_events, sizeof *t->events, ev_cmp);
    size_t n = t->n_counters;
    struct ctr_idx *tmp = n ? malloc(n * sizeof *tmp) : NULL;
    if (!tmp)
        return; /* recording order is still a valid, unsorted trace */
    for (size_t i = 0; i < n; i++)
        tmp[i] = (struct ctr_idx){ t->counters[i], i };
    qsort(tmp, n, sizeof *tmp, ctr_cmp);
    for (size_t i = 0; i < n; i++)
        t->counters[i] = tmp[i].c;
    free(tmp);
}

static const char *stream_names[SCH_NSTREAMS] = { "compute", "send", "recv" };

const char *trc_stream_name(int k)
{
    return k >= 0 && k < SCH_NSTREAMS ? stream_names[k] : "?";
}

/* Microseconds with exactly three decimals: exact for integer ns. */
static void put_us(FILE *f, int64_t ns)
{
    if (ns < 0) {
        fputc('-', f);
        ns = -ns;
    }
    fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* A JSON string literal: quotes, backslashes and control characters escaped
 * (metadata strings come from files, so they may hold anything). */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Separates traceEvents' entries: none before the first. */
static void sep(FILE *f, int *first)
{
    if (!*first)
        fputs(",\n", f);
    *first = 0;
}

static void put_threads(FILE *f, int d, const struct trc_layout *l)
{
    int sort = 0, first = 0;
    for (int k = 0; k < SCH_NSTREAMS; k++)
        for (int lane = 0; lane < l->n_lanes[d * SCH_NSTREAMS + k]; lane++) {
            char name[48];
            if (lane)
                snprintf(name, sizeof name, "%s %d", stream_names[k], lane + 1);
            else
                snprintf(name, sizeof name, "%s", stream_names[k]);
            int tid = lane * SCH_NSTREAMS + k;
            sep(f, &first);
            fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"name\":\"%s\"}},\n", d, tid, name);
            fprintf(f, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"sort_index\":%d}}", d, tid, sort++);
        }
}

int trc_print_chrome(const struct trc_trace *t, FILE *f)
{
    struct trc_layout l;
    int rc = trc_layout_init(&l, t);
    if (rc < 0)
        return rc;
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\n\"pipesim\":{\"version\":\"%s\",\"source\":",
            PS_VERSION);
    put_str(f, t->source);
    fputs(",\"schedule\":", f);
    put_str(f, t->schedule);
    fputs(",\"remat\":", f);
    put_str(f, t->remat);
    fprintf(f, ",\"devices\":%d,\"stages\":%d,\"micro_batches\":%d,\"batch\":%s,"
            "\"static_mem\":[", t->n_devices, t->n_stages, t->n_micro, PS_DBL(t->batch));
    for (int d = 0; d < t->n_devices; d++)
        fprintf(f, "%s%lld", d ? "," : "", t->static_mem ? (long long)t->static_mem[d] : 0LL);
    fputc(']', f);
    if (t->n_replicas > 1)
        fprintf(f, ",\"replicas\":%d", t->n_replicas);
    if (t->step_ns > 0)
        fprintf(f, ",\"step_ns\":%lld", (long long)t->step_ns);
    fprintf(f, "},\n\"otherData\":{\"generator\":\"pipesim %s\",\"events\":%zu},\n"
            "\"traceEvents\":[\n", PS_VERSION, t->n_events);
    int first = 1;
    for (int d = 0; d < t->n_devices; d++) {
        char pname[64];
        snprintf(pname, sizeof pname, "device %d (%s)", d, t->source);
        sep(f, &first);
        fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":", d);
        put_str(f, pname);
        fputs("}},\n", f);
        fprintf(f, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"args\":"
                "{\"sort_index\":%d}}", d, d);
        put_threads(f, d, &l);
    }
    char lab[32];
    for (size_t i = 0; i < t->n_events; i++) {
        const struct trc_event *e = &t->events[i];
        struct sch_op op = { e->kind, e->stage, e->mb };
        sch_op_label(&op, lab, sizeof lab);
        sep(f, &first);
        fprintf(f, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":",
                lab, sch_op_kind_name(e->kind), e->device, l.tid[i]);
        put_us(f, e->start_ns);
        fputs(",\"dur\":", f);
        put_us(f, e->end_ns - e->start_ns);
        fprintf(f, ",\"args\":{\"kind\":\"%s\",\"stage\":%d,\"mb\":%d", sch_op_kind_name(e->kind),
                e->stage, e->mb);
        if (e->stream != SCH_STREAM_COMPUTE || e->kind == SCH_OP_ALLREDUCE)
            fprintf(f, ",\"bytes\":%lld,\"peer\":%d", (long long)e->bytes, e->peer);
        fputs("}}", f);
        if (l.flow[i]) {
            int recv = e->kind == SCH_OP_RECV_ACT || e->kind == SCH_OP_RECV_GRAD;
            int grad = e->kind == SCH_OP_SEND_GRAD || e->kind == SCH_OP_RECV_GRAD;
            fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"transfer\",\"ph\":\"%s\",%s\"id\":%u,"
                    "\"pid\":%d,\"tid\":%d,\"ts\":", grad ? "grad" : "act", recv ? "f" : "s",
                    recv ? "\"bp\":\"e\"," : "", l.flow[i], e->device, l.tid[i]);
            put_us(f, l.flow_ns[i]);
            fputs("}", f);
        }
    }
    for (size_t i = 0; i < t->n_counters; i++) {
        const struct trc_counter *c = &t->counters[i];
        int64_t st = t->static_mem ? t->static_mem[c->device] : 0;
        sep(f, &first);
        fprintf(f, "{\"name\":\"memory\",\"ph\":\"C\",\"pid\":%d,\"ts\":", c->device);
        put_us(f, c->t_ns);
        fprintf(f, ",\"args\":{\"activations\":%lld,\"total\":%lld}}", (long long)c->bytes,
                (long long)(c->bytes + st));
    }
    fputs("\n]}\n", f);
    trc_layout_release(&l);
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}

int trc_print_csv(const struct trc_trace *t, FILE *f)
{
    fprintf(f, "device,stream,kind,stage,mb,start_us,end_us,bytes,peer\n");
    for (size_t i = 0; i < t->n_events; i++) {
        const struct trc_event *e = &t->events[i];
        fprintf(f, "%d,%s,%s,%d,%d,", e->device, stream_names[e->stream],
                sch_op_kind_name(e->kind), e->stage, e->mb);
        put_us(f, e->start_ns);
        fputc(',', f);
        put_us(f, e->end_ns);
        fprintf(f, ",%lld,%d\n", (long long)e->bytes, e->peer);
    }
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}

/* One trace file, atomically (ps_afile). */
static int write_one(const struct trc_trace *t, const char *path,
                     int (*print)(const struct trc_trace *, FILE *))
{
    struct ps_afile af;
    int rc = ps_afile_open(&af, path);
    if (rc < 0)
        return rc;
    errno = 0;
    if ((rc = print(t, af.f)) < 0) {
        int e = errno, werr = rc == -PS_EIO && ferror(af.f);
        ps_afile_abort(&af);
        return werr ? ps_error(PS_EIO, "%s: write failed: %s", path, strerror(e ? e : EIO)) : rc;
    }
    return ps_afile_commit(&af);
}

int trc_write_chrome(const struct trc_trace *t, const char *path)
{
    return write_one(t, path, trc_print_chrome);
}

int trc_write_csv(const struct trc_trace *t, const char *path)
{
    return write_one(t, path, trc_print_csv);
}
