#include "analysis/ana_compare.h"
#include "base/ps_error.h"
#include "sched/sch_schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

static int key_cmp(const void *pa, const void *pb)
{
    const struct trc_event *a = pa, *b = pb;
    int c;
    if ((c = CMP(a->device, b->device)) || (c = CMP(a->kind, b->kind)) ||
        (c = CMP(a->stage, b->stage)) || (c = CMP(a->mb, b->mb)))
        return c;
    return 0;
}

/* An op's |relative duration error| and its index, ordered by error then
 * index (so the op at a percentile is the same on every run). */
struct rel_err {
    double rel;
    size_t i;
};

static int rel_cmp(const void *pa, const void *pb)
{
    const struct rel_err *a = pa, *b = pb;
    int c = CMP(a->rel, b->rel);
    return c ? c : CMP(a->i, b->i);
}

static int i64_cmp(const void *a, const void *b)
{
    return CMP(*(const int64_t *)a, *(const int64_t *)b);
}

void ana_compare_free(struct ana_compare *c)
{
    if (!c)
        return;
    free(c->busy_sim);
    free(c->busy_meas);
    free(c->peak_act_sim);
    free(c->peak_act_meas);
    free(c->static_sim);
    free(c->static_meas);
    free(c);
}

const char *ana_cause_name(enum ana_cause c, int64_t err)
{
    switch (c) {
    case ANA_CAUSE_COMPUTE: return err > 0 ? "compute slower than modelled"
                                           : "compute faster than modelled";
    case ANA_CAUSE_TRANSFER: return err > 0 ? "transfer slower than modelled"
                                            : "transfer faster than modelled";
    default: return err > 0 ? "waiting on a dependency" : "dependency arrived earlier";
    }
}

/* Sorted copy of a trace's events by alignment key. */
static struct trc_event *sorted(const struct trc_trace *t)
{
    struct trc_event *e = malloc((t->n_events ? t->n_events : 1) * sizeof *e);
    if (!e)
        return NULL;
    if (t->n_events) /* an empty trace may have no array (memcpy from NULL) */
        memcpy(e, t->events, t->n_events * sizeof *e);
    qsort(e, t->n_events, sizeof *e, key_cmp);
    return e;
}

/* "F3 of stage 1 on device 1"; a U or AR (labelled without a micro-batch) that
 * holds one other than -1 says so (helper-95: a U of mb 2 against the U of the
 * schedule read "U of stage 1 on device 1 only in the simulated trace; U of
 * stage 1 on device 1 only in the measured trace"). */
static void describe(const struct trc_event *e, char *buf, size_t n)
{
    struct sch_op op = { e->kind, e->stage, e->mb };
    char lab[32], mb[24] = "";
    sch_op_label(&op, lab, sizeof lab);
    if (sch_op_per_stage(e->kind) && e->mb != -1)
        snprintf(mb, sizeof mb, " (mb %d)", (int)e->mb);
    snprintf(buf, n, "%s%s of stage %d on device %d", lab, mb, e->stage, e->device);
}

static int check_same_ops(const struct trc_event *a, size_t na, const struct trc_event *b,
                          size_t nb)
{
    char msg[768] = "", d[96];
    int shown = 0;
    size_t i = 0, j = 0, missing_meas = 0, missing_sim = 0;
    while (i < na || j < nb) {
        int c = i == na ? 1 : j == nb ? -1 : key_cmp(&a[i], &b[j]);
        if (c == 0) {
            i++, j++;
            continue;
        }
        const struct trc_event *e = c < 0 ? &a[i++] : &b[j++];
        if (c < 0)
            missing_meas++;
        else
            missing_sim++;
        if (shown++ < 4) {
            describe(e, d, sizeof d);
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s%s only in the %s trace",
                     shown > 1 ? "; " : "", d, c < 0 ? "simulated" : "measured");
        }
    }
    if (!missing_meas && !missing_sim)
        return 0;
    return ps_error(PS_EINVAL, "traces hold different ops (%zu only simulated, %zu only "
                     "measured): %s", missing_meas, missing_sim, msg);
}

static void totals(const struct trc_trace *t, int64_t *makespan, double *bubble, double *busy,
                   int64_t *peak)
{
    int64_t end = 0, fb_end = 0;
    double sum = 0;
    for (int d = 0; d < t->n_devices; d++)
        busy[d] = 0, peak[d] = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const struct trc_event *e = &t->events[i];
        if (e->end_ns > end)
            end = e->end_ns;
        if (e->stream == SCH_STREAM_COMPUTE && !sch_op_per_stage(e->kind)) {
            busy[e->device] += (double)(e->end_ns - e->start_ns);
            sum += (double)(e->end_ns - e->start_ns);
            if (e->end_ns > fb_end)
                fb_end = e->end_ns;
        }
    }
    for (size_t i = 0; i < t->n_counters; i++)
        if (t->counters[i].bytes > peak[t->counters[i].device])
            peak[t->counters[i].device] = t->counters[i].bytes;
    if (t->step_ns > end) /* a measured step's own time, as validate reports it */
        end = t->step_ns;
    *makespan = end;
    *bubble = fb_end > 0 ? 1 - sum / ((double)t->n_devices * (double)fb_end) : 0;
    for (int d = 0; d < t->n_devices; d++)
        busy[d] = end > 0 ? busy[d] / (double)end : 0;
}

static int disc_cmp(const void *pa, const void *pb)
{
    const struct ana_discrepancy *a = pa, *b = pb;
    int64_t x = llabs(a->error_ns), y = llabs(b->error_ns);
    int c;
    if ((c = CMP(y, x)) || (c = CMP(a->cause == ANA_CAUSE_WAIT, b->cause == ANA_CAUSE_WAIT)) ||
        (c = CMP(a->sim.start_ns, b->sim.start_ns)) || (c = key_cmp(&a->sim, &b->sim)))
        return c;
    return 0;
}

/* Keeps the n best (largest) discrepancies in c->top, sorted. */
static void offer(struct ana_compare *c, const struct ana_discrepancy *d)
{
    if (!d->error_ns)
        return;
    if (c->n_top < 10) {
        c->top[c->n_top++] = *d;
    } else if (disc_cmp(d, &c->top[9]) < 0) {
        c->top[9] = *d;
    } else {
        return;
    }
    qsort(c->top, (size_t)c->n_top, sizeof *c->top, disc_cmp);
}

static int stream_order(const void *pa, const void *pb)
{
    const struct trc_event *const *a = pa, *const *b = pb;
    int c;
    if ((c = CMP((*a)->device, (*b)->device)) || (c = CMP((*a)->stream, (*b)->stream)) ||
        (c = CMP((*a)->start_ns, (*b)->start_ns)))
        return c;
    return key_cmp(*a, *b);
}

void ana_compare_set_makespan_sim(struct ana_compare *c, int64_t ns)
{
    c->makespan_sim = ns;
    c->makespan_err = ns > 0 ? (double)(c->makespan_meas - ns) / (double)ns : NAN;
}

void ana_compare_set_makespan_meas(struct ana_compare *c, int64_t ns)
{
    c->makespan_meas = ns;
    ana_compare_set_makespan_sim(c, c->makespan_sim);
}

int ana_compare_same_run(const struct trc_trace *sim, const struct trc_trace *meas)
{
    if (sim->n_devices != meas->n_devices || sim->n_stages != meas->n_stages ||
        sim->n_micro != meas->n_micro)
        return ps_error(PS_EINVAL, "traces differ in shape: simulated has %d devices, %d "
                         "stages, %d micro-batches; measured has %d, %d, %d", sim->n_devices,
                         sim->n_stages, sim->n_micro, meas->n_devices, meas->n_stages,
                         meas->n_micro);
    /* one configuration's: the header's schedule, replicas and batch too, where both
     * name them (helper-74: gpipe against 1f1b, 2 replicas against 4, compared, the gap
     * read as dependencies and slow compute) */
    if (*sim->schedule && *meas->schedule && !sch_schedule_same(sim->schedule, meas->schedule))
        return ps_error(PS_EINVAL, "traces differ in schedule: simulated %s, measured %s",
                        sim->schedule, meas->schedule);
    int ra = sim->n_replicas > 1 ? sim->n_replicas : 1;
    int rb = meas->n_replicas > 1 ? meas->n_replicas : 1;
    if (ra != rb)
        return ps_error(PS_EINVAL, "traces differ in replicas: simulated %d, measured %d", ra,
                        rb);
    /* a batch of 0 is none named; any other (a negative one from a trace not
     * read by trc_read_chrome, which refuses it) is compared (helper-95: -128
     * against 64 was skipped as unnamed) */
    if (sim->batch != 0 && meas->batch != 0 && sim->batch != meas->batch)
        return ps_error(PS_EINVAL, "traces differ in batch: simulated %g, measured %g",
                        sim->batch, meas->batch);
    return 0;
}

int ana_compare_new(const struct trc_trace *sim, const struct trc_trace *meas,
                    struct ana_compare **out)
{
    *out = NULL;
    int rc0 = ana_compare_same_run(sim, meas);
    if (rc0 < 0)
        return rc0;
    int rc = 0, D = sim->n_devices;
    size_t n = sim->n_events;
    struct trc_event *a = sorted(sim), *b = sorted(meas);
    struct ana_compare *c = calloc(1, sizeof *c);
    struct rel_err *rel = malloc((n ? n : 1) * sizeof *rel);
    int64_t *drift = malloc((n ? n : 1) * sizeof *drift);
    const struct trc_event **order = malloc((n ? n : 1) * sizeof *order);
    if (c) {
        c->busy_sim = calloc((size_t)D, sizeof(double));
        c->busy_meas = calloc((size_t)D, sizeof(double));
        c->peak_act_sim = calloc((size_t)D, sizeof(int64_t));
        c->peak_act_meas = calloc((size_t)D, sizeof(int64_t));
        c->static_sim = calloc((size_t)D, sizeof(int64_t));
        c->static_meas = calloc((size_t)D, sizeof(int64_t));
    }
    if (!a || !b || !c || !rel || !drift || !order || !c->busy_sim || !c->busy_meas ||
        !c->peak_act_sim || !c->peak_act_meas || !c->static_sim || !c->static_meas) {
        rc = ps_error(PS_ENOMEM, "out of memory comparing traces");
        goto out;
    }
    if ((rc = check_same_ops(a, sim->n_events, b, meas->n_events)) < 0)
        goto out;
    c->n_devices = D;
    c->n_stages = sim->n_stages;
    c->n_micro = sim->n_micro;
    c->n_ops = n;
    totals(sim, &c->makespan_sim, &c->bubble_sim, c->busy_sim, c->peak_act_sim);
    totals(meas, &c->makespan_meas, &c->bubble_meas, c->busy_meas, c->peak_act_meas);
    for (int d = 0; d < D; d++) {
        c->static_sim[d] = sim->static_mem ? sim->static_mem[d] : 0;
        c->static_meas[d] = meas->static_mem ? meas->static_mem[d] : 0;
    }
    ana_compare_set_makespan_sim(c, c->makespan_sim);
    size_t nrel = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t ds = a[i].end_ns - a[i].start_ns, dm = b[i].end_ns - b[i].start_ns;
        if (ds > 0)
            rel[nrel++] = (struct rel_err){ fabs((double)(dm - ds) / (double)ds), i };
        drift[i] = llabs(b[i].start_ns - a[i].start_ns);
        struct ana_discrepancy d = { a[i], b[i], dm - ds,
                                     a[i].stream == SCH_STREAM_COMPUTE ? ANA_CAUSE_COMPUTE
                                                                       : ANA_CAUSE_TRANSFER };
        /* a receive's span is its send's transfer (with host-driven
         * messages: the hand-off and its reader's copy, what the measured
         * receive spans), so the send or the reader names the cause */
        if (a[i].stream != SCH_STREAM_RECV)
            offer(c, &d);
        order[i] = &a[i];
    }
    qsort(rel, nrel, sizeof *rel, rel_cmp);
    qsort(drift, n, sizeof *drift, i64_cmp);
    c->n_dur = nrel;
    c->dur_err_median = c->dur_err_p95 = NAN; /* no op with a duration: no figure, not 0 */
    if (nrel) /* the median: the two middle values' mean for an even count */
        c->dur_err_median = nrel % 2 ? rel[nrel / 2].rel
                                     : (rel[nrel / 2 - 1].rel + rel[nrel / 2].rel) / 2;
    if (nrel) {
        /* the nearest rank, ceil(0.95 n): (n - 1) x 0.95 rounded down was never
         * the largest error below 20 ops, and below the median at 2 (helper-126) */
        size_t r = (size_t)ceil(0.95 * (double)nrel);
        const struct rel_err *p95 = &rel[r ? r - 1 : 0];
        c->dur_err_p95 = p95->rel;
        c->p95_sim = a[p95->i];
        c->p95_meas = b[p95->i];
    }
    c->drift_median_ns = !n ? 0 : n % 2 ? drift[n / 2] : (drift[n / 2 - 1] + drift[n / 2]) / 2;
    c->drift_max_ns = n ? drift[n - 1] : 0;
    /* Waiting: how much later an op started than its stream predecessor's
     * end error explains (predecessor in simulated stream order). */
    qsort(order, n, sizeof *order, stream_order);
    for (size_t k = 0; k < n; k++) {
        const struct trc_event *s = order[k];
        const struct trc_event *m = &b[s - a];
        int64_t prev_end_err = 0;
        if (k > 0 && order[k - 1]->device == s->device && order[k - 1]->stream == s->stream) {
            const struct trc_event *ps = order[k - 1], *pm = &b[ps - a];
            prev_end_err = pm->end_ns - ps->end_ns;
        }
        struct ana_discrepancy d = { *s, *m, (m->start_ns - s->start_ns) - prev_end_err,
                                     ANA_CAUSE_WAIT };
        if (s->stream == SCH_STREAM_COMPUTE)
            offer(c, &d);
    }
    *out = c;
    c = NULL;
out:
    free(a);
    free(b);
    free(rel);
    free(drift);
    free(order);
    ana_compare_free(c);
    return rc;
}
