/* trc_layout: tracks (lanes) and flows of a Chrome trace; see trc_layout.h. */
#include "traces/trc_layout.h"
#include "base/ps_error.h"

#include <stdlib.h>

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

struct lane_key {
    int32_t dev;
    int32_t stream;
    int64_t start, end;
    size_t i;
};

static int lane_cmp(const void *pa, const void *pb)
{
    const struct lane_key *a = pa, *b = pb;
    int c;
    if ((c = CMP(a->dev, b->dev)) || (c = CMP(a->stream, b->stream)) ||
        (c = CMP(a->start, b->start)) || (c = CMP(a->end, b->end)))
        return c;
    return CMP(a->i, b->i);
}

/* The two ends of one transfer share (sender device, sender stage, mb, grad). */
struct flow_key {
    int32_t sdev, sstage, mb;
    int32_t grad, recv;
    int64_t start;
    size_t i;
};

static int flow_cmp(const void *pa, const void *pb)
{
    const struct flow_key *a = pa, *b = pb;
    int c;
    if ((c = CMP(a->sdev, b->sdev)) || (c = CMP(a->sstage, b->sstage)) ||
        (c = CMP(a->mb, b->mb)) || (c = CMP(a->grad, b->grad)) || (c = CMP(a->recv, b->recv)) ||
        (c = CMP(a->start, b->start)))
        return c;
    return CMP(a->i, b->i);
}

/* The margin from a slice's edge to its flow point: 1 us, or a third of the
 * slice if shorter; 0 when the slice has no interior point to spare. */
static int64_t margin(const struct trc_event *e)
{
    int64_t m = (e->end_ns - e->start_ns) / 3;
    return m > 1000 ? 1000 : m;
}

static int assign_lanes(struct trc_layout *l, const struct trc_trace *t)
{
    size_t n = t->n_events;
    struct lane_key *k = n ? malloc(n * sizeof *k) : NULL;
    if (n && !k)
        return ps_error(PS_ENOMEM, "out of memory laying out a trace");
    for (size_t i = 0; i < n; i++) {
        const struct trc_event *e = &t->events[i];
        if (e->device < 0 || e->device >= t->n_devices || e->stream >= SCH_NSTREAMS)
            PS_BUG("trace event %zu on device %d, stream %d", i, e->device, e->stream);
        k[i] = (struct lane_key){ e->device, e->stream, e->start_ns, e->end_ns, i };
    }
    if (n)
        qsort(k, n, sizeof *k, lane_cmp);
    int64_t *ends = NULL; /* the last end on each lane of the current group */
    size_t n_ends = 0, cap = 0;
    int rc = 0;
    for (size_t j = 0; j < n && !rc; j++) {
        if (j == 0 || k[j].dev != k[j - 1].dev || k[j].stream != k[j - 1].stream)
            n_ends = 0;
        size_t lane = 0;
        while (lane < n_ends && ends[lane] > k[j].start)
            lane++;
        if (lane == n_ends) {
            if (n_ends == cap) {
                size_t nc = cap ? cap * 2 : 8;
                int64_t *ne = realloc(ends, nc * sizeof *ends);
                if (!ne) {
                    rc = ps_error(PS_ENOMEM, "out of memory laying out a trace");
                    break;
                }
                ends = ne;
                cap = nc;
            }
            n_ends++;
        }
        if (lane > (size_t)(INT32_MAX / SCH_NSTREAMS - 1)) {
            rc = ps_error(PS_EINVAL, "trace: more than %d events at once on device %d",
                          INT32_MAX / SCH_NSTREAMS - 1, k[j].dev);
            break;
        }
        ends[lane] = k[j].end;
        l->tid[k[j].i] = (int32_t)lane * SCH_NSTREAMS + k[j].stream;
        int32_t *nl = &l->n_lanes[k[j].dev * SCH_NSTREAMS + k[j].stream];
        if (*nl < (int32_t)lane + 1)
            *nl = (int32_t)lane + 1;
    }
    free(ends);
    free(k);
    return rc;
}

static int pair_flows(struct trc_layout *l, const struct trc_trace *t)
{
    size_t n = 0;
    struct flow_key *k = t->n_events ? malloc(t->n_events * sizeof *k) : NULL;
    if (t->n_events && !k)
        return ps_error(PS_ENOMEM, "out of memory laying out a trace");
    for (size_t i = 0; i < t->n_events; i++) {
        const struct trc_event *e = &t->events[i];
        struct sch_op op = { e->kind, e->stage, e->mb }, other;
        if (!sch_op_partner(&op, &other))
            continue;
        int recv = e->kind == SCH_OP_RECV_ACT || e->kind == SCH_OP_RECV_GRAD;
        int grad = e->kind == SCH_OP_SEND_GRAD || e->kind == SCH_OP_RECV_GRAD;
        k[n++] = (struct flow_key){ recv ? e->peer : e->device, recv ? other.stage : e->stage,
                                    e->mb, grad, recv, e->start_ns, i };
    }
    if (n)
        qsort(k, n, sizeof *k, flow_cmp);
    uint32_t id = 0;
    /* each group of equal keys: its sends, then its receives; the j-th send
     * pairs with the j-th receive */
    for (size_t g = 0; g < n;) {
        size_t r = g, end = g;
        while (end < n && k[end].sdev == k[g].sdev && k[end].sstage == k[g].sstage &&
               k[end].mb == k[g].mb && k[end].grad == k[g].grad)
            end++;
        while (r < end && !k[r].recv)
            r++;
        for (size_t s = g; s < r && r + (s - g) < end; s++) {
            size_t si = k[s].i, ri = k[r + (s - g)].i;
            const struct trc_event *se = &t->events[si], *re = &t->events[ri];
            int64_t ms = margin(se), mr = margin(re);
            int64_t ps = se->start_ns + ms, pr = re->end_ns - mr;
            if (ms < 1 || mr < 1 || ps >= pr || id == UINT32_MAX)
                continue;
            l->flow[si] = l->flow[ri] = ++id;
            l->flow_ns[si] = ps;
            l->flow_ns[ri] = pr;
        }
        g = end;
    }
    free(k);
    return 0;
}

int trc_layout_init(struct trc_layout *l, const struct trc_trace *t)
{
    size_t n = t->n_events ? t->n_events : 1;
    l->tid = calloc(n, sizeof *l->tid);
    l->flow = calloc(n, sizeof *l->flow);
    l->flow_ns = calloc(n, sizeof *l->flow_ns);
    l->n_lanes = calloc((size_t)t->n_devices * SCH_NSTREAMS, sizeof *l->n_lanes);
    int rc = 0;
    if (!l->tid || !l->flow || !l->flow_ns || !l->n_lanes)
        rc = ps_error(PS_ENOMEM, "out of memory laying out a trace");
    for (int i = 0; !rc && i < t->n_devices * SCH_NSTREAMS; i++)
        l->n_lanes[i] = 1;
    if (!rc && (rc = assign_lanes(l, t)) == 0)
        rc = pair_flows(l, t);
    if (rc < 0)
        trc_layout_release(l);
    return rc;
}

void trc_layout_release(struct trc_layout *l)
{
    free(l->tid);
    free(l->flow);
    free(l->flow_ns);
    free(l->n_lanes);
    *l = (struct trc_layout){ 0 };
}
