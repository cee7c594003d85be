/* msr_validate replay: the model on one measured step's own op times.
 *
 * A prediction of a grid point differs from its measurement for two
 * reasons: the model (what the engine does with op times: the schedule's
 * dependencies, the streams, the hand-offs, the workers' message copies)
 * and the op times it is given (a calibration measured seconds or minutes
 * before, on a machine whose speed moves). The replay isolates the first:
 * validate --check simulates a point's median and fastest steps with their
 * own op times, each (stage, op kind, micro-batch re-materialized or not)
 * at the plain mean of that step's ops of the kind (every sample, none
 * trimmed: a slow op in this step was time of this step), the workers'
 * message copies and the links' latency from the same step (step_links),
 * and compares the simulated step with the measured one as it compares a
 * point. What remains is the model's error apart from any calibration or
 * drift: chiefly that each op of a kind takes the kind's mean (a step is a
 * max over paths, so op times that vary leave waits their mean does not,
 * more so when a core slows for a while than when each op varies alone).
 * msr_replay_step_with replays with each op's own time or the times
 * shuffled within their rows instead, and msr_replay_report_new runs all
 * three for `pipesim compare --replay`.
 * Cost: per replay one simulated step and one comparison, O(events log
 * events), and with own times a stages x kinds x (M + 1) table.
 */
#include "measure/msr_validate.h"
#include "measure/msr_calib.h"
#include "measure/msr_msgwalk.h"
#include "analysis/ana_compare.h"
#include "base/ps_error.h"
#include "sim/sim_engine.h"
#include "sched/sch_schedsize.h"
#include "base/ps_memavail.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

/* The links of a step: the median hand-off of its receives that waited for
 * their data (a send's start to the end of its receive's copy), and, for a
 * measured step (the runtime's convention, msr_msgwalk.h: the worker copies
 * each message itself), its messages: the mean send (the copy into the
 * channel), the mean receive that did not wait (the copy out of it, 0 when
 * every receive waited), and the latency from a send's end to its
 * receive's copy: the median over the receives that waited of their end
 * less their send's end less that copy (at least 0). Which receives waited
 * is msr_msg_walk's rule, the pipelined calibration's. The hand-off and
 * latency are 0 when no receive waited. */
struct step_links {
    double handoff, send_s, recv_s, latency;
};

struct links_acc {
    double send_sum, recv_sum, *h, *hl;
    size_t ns, nr, nh;
};

static int links_msg(void *ctx, const struct msr_msg *m)
{
    struct links_acc *a = ctx;
    const struct trc_event *r = m->ev, *sd = m->send;
    double d = (double)(r->end_ns - r->start_ns) * 1e-9;
    switch (m->kind) {
    case MSR_MSG_SEND:
        if (r->bytes > 0)
            a->send_sum += d, a->ns++;
        break;
    case MSR_MSG_RECV_COPY:
        if (r->bytes > 0)
            a->recv_sum += d, a->nr++;
        break;
    case MSR_MSG_RECV_WAITED:
        if (sd && r->end_ns > sd->start_ns) {
            a->h[a->nh] = (double)(r->end_ns - sd->start_ns) * 1e-9;
            a->hl[a->nh++] = (double)(r->end_ns - sd->end_ns) * 1e-9;
        }
        break;
    }
    return 0;
}

static int step_links(const struct trc_trace *t, struct step_links *out)
{
    memset(out, 0, sizeof *out);
    size_t n = t->n_events;
    struct links_acc a = { .h = malloc((n ? n : 1) * sizeof *a.h),
                           .hl = malloc((n ? n : 1) * sizeof *a.hl) };
    int rc = 0;
    if (!a.h || !a.hl) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = msr_msg_walk(t, links_msg, &a)) < 0)
        goto out;
    out->send_s = a.ns ? a.send_sum / (double)a.ns : 0;
    out->recv_s = a.nr ? a.recv_sum / (double)a.nr : 0;
    if (a.nh) {
        gsl_sort(a.h, 1, a.nh);
        out->handoff = gsl_stats_median_from_sorted_data(a.h, 1, a.nh);
        gsl_sort(a.hl, 1, a.nh);
        double l = gsl_stats_median_from_sorted_data(a.hl, 1, a.nh) - out->recv_s;
        out->latency = l > 0 ? l : 0;
    }
out:
    free(a.h);
    free(a.hl);
    return rc;
}

/* The mean duration of stage g's ops of kind k whose micro-batch is
 * re-materialized (rm 1) or not (rm 0), rounded to ns and, when above 0,
 * at least `least` ns (2 for a whole backward), as sch_costs_new tables a
 * stage; a row with no ops takes the other row's mean (the engine never
 * asks for it), 0 when neither has any. sum and cnt are [stage][kind][rm]. */
static sch_time row_mean(const double *sum, const int *cnt, int g, int k, int rm, sch_time least)
{
    size_t j = ((size_t)g * SCH_OP_NKINDS + (size_t)k) * 2;
    size_t r = cnt[j + (size_t)rm] ? j + (size_t)rm : j + (size_t)!rm;
    if (!cnt[r])
        return 0;
    double mean = sum[r] / cnt[r];
    sch_time t = sch_seconds_to_time(mean);
    return mean > 0 && t < least ? least : t;
}

/* A measured step's message copies on every device of t. */
static void host_copies(struct mdl_topology *t, const struct step_links *sl)
{
    for (int d = 0; d < t->n_devices; d++) {
        t->devices[d].msg_send_s = sl->send_s;
        t->devices[d].msg_recv_s = sl->recv_s;
    }
}

/* Memory per op of a replay beyond the op lists: the trace's event and the
 * engine's recorded one, the comparison's sorted copies (a bound). */
#define REPLAY_OP_BYTES (4.0 * sizeof(struct trc_event))

/* Each compute op's own time in a step (MSR_REPLAY_OWN, _SHUFFLED): the
 * engine's draw (sim/sim_engine.h) returns it, looked up by (stage, kind,
 * micro-batch; -1 for the update). */
struct own_times {
    const struct sch_schedule *s;
    sch_time *t;               /* [stage][kind][mb + 1] */
};

static size_t own_at(const struct sch_schedule *s, int stage, int kind, int mb)
{
    return ((size_t)stage * SCH_OP_NKINDS + (size_t)kind) * (size_t)(s->n_micro + 1) +
           (size_t)(mb + 1);
}

static sch_time own_time(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)remat;
    const struct own_times *o = ctx;
    sch_time t = o->t[own_at(o->s, op->stage, op->kind, op->mb)];
    return t >= 0 ? t : tabled; /* the engine adds the message copies */
}

/* o->t from meas (-1 where an op has no event); shuffled within each
 * (stage, kind, re-materialized or not) when rng is set. */
static int own_fill(struct own_times *o, const struct trc_trace *meas, gsl_rng *rng)
{
    const struct sch_schedule *s = o->s;
    size_t n = own_at(s, s->n_stages, 0, -1);
    if (!(o->t = malloc((n ? n : 1) * sizeof *o->t)))
        return ps_error(PS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        o->t[i] = -1;
    for (size_t i = 0; i < meas->n_events; i++) {
        const struct trc_event *e = &meas->events[i];
        if (e->stage >= 0 && e->stage < s->n_stages && e->mb >= -1 && e->mb < s->n_micro &&
            e->kind < SCH_OP_NKINDS && sch_op_is_compute((enum sch_op_kind)e->kind))
            o->t[own_at(s, e->stage, e->kind, e->mb)] = e->end_ns - e->start_ns;
    }
    if (!rng)
        return 0;
    sch_time *row = malloc((size_t)(s->n_micro + 1) * sizeof *row);
    size_t *at = malloc((size_t)(s->n_micro + 1) * sizeof *at);
    if (!row || !at) {
        free(row);
        free(at);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int g = 0; g < s->n_stages; g++)
        for (int k = 0; k < SCH_OP_NKINDS; k++)
            for (int rm = 0; rm < 2; rm++) {
                size_t c = 0;
                for (int m = -1; m < s->n_micro; m++) {
                    size_t j = own_at(s, g, k, m);
                    int r = m >= 0 && sch_schedule_remat_mb(s, m);
                    if (o->t[j] >= 0 && r == rm) {
                        at[c] = j;
                        row[c++] = o->t[j];
                    }
                }
                if (c > 1)
                    gsl_ran_shuffle(rng, row, c, sizeof *row);
                for (size_t i = 0; i < c; i++)
                    o->t[at[i]] = row[i];
            }
    free(row);
    free(at);
    return 0;
}

int msr_replay_step(const struct sch_schedule *s, const struct trc_trace *meas,
                    struct msr_replay *out)
{
    return msr_replay_step_with(s, meas, MSR_REPLAY_MEANS, 0, out);
}

int msr_replay_step_with(const struct sch_schedule *s, const struct trc_trace *meas,
                         enum msr_replay_times how, uint64_t seed, struct msr_replay *out)
{
    memset(out, 0, sizeof *out);
    int S = s->n_stages, rc = 0;
    struct own_times own = { s, NULL };
    gsl_rng *rng = NULL;
    if (meas->n_stages != S || meas->n_devices != s->n_devices || S < 1)
        return ps_error(PS_EINVAL, "replay: a trace of %d stage(s) on %d device(s) for a "
                         "schedule of %d on %d", meas->n_stages, meas->n_devices, S,
                         s->n_devices);
    size_t rows = (size_t)S * SCH_OP_NKINDS * 2; /* [stage][kind][re-materialized] */
    double *sum = calloc(rows, sizeof *sum);
    int *cnt = calloc(rows, sizeof *cnt);
    struct sch_stage_cost *st = calloc((size_t)S, sizeof *st);
    struct mdl_topology *topo = NULL;
    sim_engine *e = NULL;
    struct trc_trace *sim = NULL;
    struct ana_compare *cmp = NULL;
    if (!sum || !cnt || !st) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < meas->n_events; i++) {
        const struct trc_event *ev = &meas->events[i];
        if (ev->stage < 0 || ev->stage >= S || ev->kind >= SCH_OP_NKINDS ||
            !sch_op_is_compute((enum sch_op_kind)ev->kind))
            continue;
        int rm = ev->mb >= 0 && ev->mb < s->n_micro && sch_schedule_remat_mb(s, ev->mb);
        size_t j = ((size_t)ev->stage * SCH_OP_NKINDS + ev->kind) * 2 + (size_t)rm;
        double d = (double)(ev->end_ns - ev->start_ns) * 1e-9;
        if (how == MSR_REPLAY_MEANS) {
            sum[j] += d;
            cnt[j]++;
        } else { /* each op its own time: the table only bounds the engine's
                  * draw (16 x tabled), so the longest, one of one */
            sum[j] = d > sum[j] ? d : sum[j];
            cnt[j] = 1;
        }
    }
    for (int g = 0; g < S; g++) {
        struct sch_stage_cost *sc = &st[g];
        sc->device = s->stage_device[g];
        sc->fwd = row_mean(sum, cnt, g, SCH_OP_FWD, 0, 1);
        sc->fwd_nostash = row_mean(sum, cnt, g, SCH_OP_FWD, 1, 1);
        sc->recomp = row_mean(sum, cnt, g, SCH_OP_RECOMP, 1, 1);
        sc->update = row_mean(sum, cnt, g, SCH_OP_UPDATE, 0, 1);
        int split = s->has_wgrad;
        sc->bwd_input = row_mean(sum, cnt, g, SCH_OP_BWD, 0, split ? 1 : 2);
        sc->bwd_input_remat = row_mean(sum, cnt, g, SCH_OP_BWD, 1, split ? 1 : 2);
        sc->bwd_weight = row_mean(sum, cnt, g, SCH_OP_WGRAD, 0, 1);
        sc->bwd_weight_remat = row_mean(sum, cnt, g, SCH_OP_WGRAD, 1, 1);
        sc->bwd = split ? sc->bwd_input + sc->bwd_weight : sc->bwd_input;
        sc->bwd_remat = split ? sc->bwd_input_remat + sc->bwd_weight_remat
                              : sc->bwd_input_remat;
    }
    double micro = meas->n_micro > 0 ? (double)meas->batch / meas->n_micro : 0;
    struct sch_costs costs = { .n_stages = S, .micro_batch = micro, .st = st };
    /* the links a calibration gives its cores (a full-duplex one per pair,
     * msr_calib_topology), free of bandwidth; nothing else of a calibration
     * is used (the costs above are the step's own). A measured step's
     * workers copy their messages themselves: its devices get the step's
     * copies ("messages", mdl_topology.h) and the links the latency from a
     * send's end; another trace (the engine's) the whole hand-off. */
    struct step_links sl;
    if ((rc = step_links(meas, &sl)) < 0)
        goto out;
    int host = !strcmp(meas->source, "measured");
    struct msr_calib lc = { .n_cores = s->n_devices, .link_bandwidth = MSR_FREE_LINK,
                            .link_latency = host ? sl.latency : sl.handoff };
    struct sim_draw draw = { own_time, &own };
    if (how == MSR_REPLAY_SHUFFLED) {
        if (!(rng = gsl_rng_alloc(gsl_rng_mt19937))) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto out;
        }
        gsl_rng_set(rng, (unsigned long)seed);
    }
    if ((how != MSR_REPLAY_MEANS && (rc = own_fill(&own, meas, rng)) < 0) ||
        (rc = msr_calib_topology(&lc, &topo)) < 0)
        goto out;
    if (host)
        host_copies(topo, &sl);
    if ((rc = sch_costs_messages(topo, &costs)) < 0 ||
        (rc = sim_engine_new(s, &costs, topo,
                             &(struct sim_engine_opts){
                                 .record_trace = 1,
                                 .draw = how == MSR_REPLAY_MEANS ? NULL : &draw,
                                 .inputs = "the trace's op times" },
                             &e)) < 0 ||
        (rc = sim_engine_run(e)) < 0)
        goto out;
    if (!(sim = sim_engine_take_trace(e)))
        PS_BUG("the engine kept no trace with record_trace set");
    if ((rc = ana_compare_new(sim, meas, &cmp)) < 0)
        goto out;
    out->makespan_err = cmp->makespan_err;
    out->bubble_err = cmp->bubble_meas - cmp->bubble_sim;
    out->handoff_s = sl.handoff;
    out->latency_s = lc.link_latency;
    out->msg_send_s = host ? sl.send_s : 0;
    out->msg_recv_s = host ? sl.recv_s : 0;
    out->step_sim_s = sch_time_to_seconds(cmp->makespan_sim);
    out->step_meas_s = sch_time_to_seconds(cmp->makespan_meas);
    out->bubble_sim = cmp->bubble_sim;
    out->bubble_meas = cmp->bubble_meas;
out:
    gsl_rng_free(rng);
    free(own.t);
    ana_compare_free(cmp);
    trc_trace_free(sim);
    sim_engine_free(e);
    mdl_topology_free(topo);
    free(st);
    free(cnt);
    free(sum);
    return rc;
}

int msr_replay_report_new(const struct trc_trace *meas, int n_shuffles, uint64_t seed,
                          struct msr_replay_report **out)
{
    *out = NULL;
    if (n_shuffles < 0 || n_shuffles > MSR_REPLAY_MAX_SHUFFLES)
        return ps_error(PS_EUSAGE, "--shuffles: %d is not in [0, %d]", n_shuffles,
                         MSR_REPLAY_MAX_SHUFFLES);
    if (strcmp(meas->source, "measured"))
        return ps_error(PS_EINVAL, "the trace is %s, not a measured step (validate --trace "
                         "writes one)", meas->source[0] ? meas->source : "unnamed");
    enum sch_remat remat;
    if (!meas->schedule[0] || sch_remat_parse(meas->remat, &remat) < 0) {
        ps_error_clear();
        return ps_error(PS_EINVAL, "the trace names no schedule or remat mode to rebuild "
                         "its step from");
    }
    /* the op lists the trace's header names, before building them: a
     * measured step holds each op once */
    struct sch_mem_sched ms;
    if (!sch_mem_sched_estimate(meas->schedule, meas->n_devices, meas->n_micro, remat, 1,
                                &ms)) {
        if (ms.n_stages != meas->n_stages || ms.n_ops != (int64_t)meas->n_events)
            return ps_error(PS_EINVAL, "the trace holds %zu ops of %d stages, not the %lld "
                             "ops of %d stages of schedule %s with K=%d, M=%d, remat %s",
                             meas->n_events, meas->n_stages, (long long)ms.n_ops, ms.n_stages,
                             meas->schedule, meas->n_devices, meas->n_micro, meas->remat);
        char what[160];
        snprintf(what, sizeof what, "replaying schedule %s with K=%d, M=%d", meas->schedule,
                 meas->n_devices, meas->n_micro);
        int rc = ps_mem_check(ms.bytes + (double)ms.n_ops * REPLAY_OP_BYTES, what, NULL,
                              "set " PS_MEM_ENV " to override the check");
        if (rc < 0)
            return rc;
    }
    struct msr_replay_report *r = calloc(1, sizeof *r);
    struct sch_schedule *s = NULL;
    int rc = 0;
    if (!r || (n_shuffles && !(r->shuffled = calloc((size_t)n_shuffles, sizeof *r->shuffled)))) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err;
    }
    snprintf(r->schedule, sizeof r->schedule, "%s", meas->schedule);
    snprintf(r->remat, sizeof r->remat, "%s", meas->remat);
    r->K = meas->n_devices;
    r->M = meas->n_micro;
    r->n_shuffles = n_shuffles;
    r->seed = seed;
    if ((rc = sch_schedule_known(meas->schedule, "field 'schedule'")) < 0 ||
        (rc = sch_schedule_build(meas->schedule, meas->n_devices, meas->n_micro, remat, &s)) <
        0) {
        if (rc == -PS_EUSAGE) { /* the generator's refusal: of the trace, not the command */
            char msg[512];
            snprintf(msg, sizeof msg, "%s", ps_errmsg());
            rc = ps_error(PS_EINVAL, "the trace's schedule %s with K=%d, M=%d: %s",
                          meas->schedule, meas->n_devices, meas->n_micro, msg);
        }
        goto err;
    }
    if ((rc = msr_replay_step_with(s, meas, MSR_REPLAY_MEANS, 0, &r->means)) < 0 ||
        (rc = msr_replay_step_with(s, meas, MSR_REPLAY_OWN, 0, &r->own)) < 0)
        goto err;
    for (int i = 0; i < n_shuffles && !rc; i++)
        rc = msr_replay_step_with(s, meas, MSR_REPLAY_SHUFFLED, seed + (uint64_t)i,
                                  &r->shuffled[i]);
    if (rc < 0)
        goto err;
    sch_schedule_free(s);
    *out = r;
    return 0;
err:
    sch_schedule_free(s);
    msr_replay_report_free(r);
    return rc;
}

void msr_replay_report_free(struct msr_replay_report *r)
{
    if (!r)
        return;
    free(r->shuffled);
    free(r);
}
