/* msr_validate: the --check grid (predict, run, compare) and its accuracy
 * figures (see msr_validate.h). */
#include "measure/msr_validate.h"
#include "analysis/ana_predict.h"
#include "measure/msr_calib.h"
#include "runtime/rt_chan.h"
#include "sched/sch_cost.h"
#include "runtime/rt_cpu.h"
#include "runtime/rt_pipe.h"
#include "runtime/rt_stage.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <malloc.h>
#include <sys/resource.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void msr_vcheck_free(struct msr_vcheck *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->n_points; i++) {
        ana_compare_free(v->pts[i].cmp);
        ana_compare_free(v->pts[i].cmp_min);
        trc_trace_free(v->pts[i].sim_trace);
        trc_trace_free(v->pts[i].meas_trace);
    }
    free(v->pts);
    free(v);
}

/* A deep copy of a trace (the fastest step when it is also the median one). */
static int copy_trace(const struct trc_trace *t, struct trc_trace **out)
{
    *out = NULL;
    struct trc_trace *c = trc_trace_new(t->source, t->n_devices, t->n_stages, t->n_micro);
    if (!c)
        return ps_error(PS_ENOMEM, "out of memory");
    memcpy(c->schedule, t->schedule, sizeof c->schedule);
    memcpy(c->remat, t->remat, sizeof c->remat);
    c->batch = t->batch;
    c->step_ns = t->step_ns;
    c->n_replicas = t->n_replicas;
    int rc = 0;
    for (size_t i = 0; i < t->n_events && !rc; i++)
        rc = trc_add_event(c, &t->events[i]);
    for (size_t i = 0; i < t->n_counters && !rc; i++)
        rc = trc_add_counter(c, t->counters[i].device, t->counters[i].t_ns,
                             t->counters[i].bytes);
    if (!rc && t->static_mem) {
        if (!(c->static_mem = malloc((size_t)t->n_devices * sizeof *c->static_mem)))
            rc = ps_error(PS_ENOMEM, "out of memory");
        else
            memcpy(c->static_mem, t->static_mem, (size_t)t->n_devices * sizeof *c->static_mem);
    }
    if (rc < 0) {
        trc_trace_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int msr_vpoint_simulate(const char *schedule, int batch, const struct mdl_profile *prof,
                        const struct mdl_topology *topo, const struct msr_vpoint *pt,
                        double *step_s, struct trc_trace **trace, struct msr_vdraws *dr)
{
    struct ana_config cfg = { .profile = prof, .topo = topo, .schedule = schedule,
                              .K = pt->K, .M = pt->M, .batch = batch, .remat = pt->remat,
                              .record_trace = trace != NULL, .no_baseline = 1,
                              .lists_as_built = 1 /* the runtime's lists */,
                              .draw = dr ? dr->draw : NULL, .draws = dr ? dr->n : 0 };
    struct ana_prediction *p;
    int rc = ana_predict(&cfg, &p);
    if (rc < 0)
        return rc;
    *step_s = p->step_s;
    if (dr) {
        dr->step_s = p->n_drawn ? p->step_drawn_s : p->step_s;
        dr->bubble = p->n_drawn ? p->bubble_drawn : p->bubble_sim;
    }
    if (trace) {
        *trace = p->trace;
        p->trace = NULL;
    }
    ana_prediction_free(p);
    return 0;
}

uint64_t msr_vpoint_seed(uint64_t seed, const struct msr_vpoint *pt)
{
    return seed ^ ((uint64_t)pt->K << 48 | (uint64_t)pt->M << 16 | (uint64_t)pt->remat);
}

static int simulate(const struct msr_vcheck_opts *o, const struct mdl_profile *prof,
                    const struct mdl_topology *topo, struct msr_vpoint *pt)
{
    struct msr_noise *nz = NULL;
    int rc;
    if (o->noise && o->draws > 0 &&
        (rc = o->noise(o->prepare_ctx, pt->K, pt->micro, msr_vpoint_seed(o->seed, pt), &nz)) < 0)
        return rc;
    struct msr_vdraws dr = { .draw = nz ? msr_noise_draw(nz) : NULL, .n = o->draws };
    /* the point keeps the prediction's trace */
    rc = msr_vpoint_simulate(o->schedule, o->batch, prof, topo, pt, &pt->step_det_s,
                             &pt->sim_trace, nz ? &dr : NULL);
    msr_noise_free(nz);
    pt->step_sim_s = nz ? dr.step_s : pt->step_det_s;
    pt->n_drawn = nz ? o->draws : 0;
    pt->bubble_drawn = nz ? dr.bubble : 0;
    return rc;
}

static int step_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The timed steps of one point over every round (rounds x steps). */
struct point_acc {
    int n, cap;
    int64_t *ns;
    long *csw;
    double *bubble;
    struct trc_trace **tr;
    int64_t runq, worker_ns;
    int runq_known;
};

static void acc_release(struct point_acc *a)
{
    for (int i = 0; i < a->n; i++)
        trc_trace_free(a->tr[i]);
    free(a->ns);
    free(a->csw);
    free(a->bubble);
    free(a->tr);
    memset(a, 0, sizeof *a);
}

/* One round of a point: warm-up steps, then o->steps timed ones into acc. */
static int run_round(const struct msr_vcheck_opts *o, struct rt_net *net,
                     const struct rt_data *data, const struct msr_vpoint *pt,
                     struct point_acc *acc)
{
    struct rt_pipe_config cfg = { .schedule = o->schedule, .K = pt->K, .M = pt->M,
                                  .batch = o->batch, .remat = pt->remat, .lr = 0.05f,
                                  .no_pin = o->no_pin };
    rt_pipe *p = NULL;
    int rc = 0;
    if (!acc->cap) {
        int cap = o->steps * (o->rounds > 1 ? o->rounds : 1);
        acc->runq_known = 1;
        if (!(acc->ns = calloc((size_t)cap, sizeof *acc->ns)) ||
            !(acc->csw = calloc((size_t)cap, sizeof *acc->csw)) ||
            !(acc->bubble = calloc((size_t)cap, sizeof *acc->bubble)) ||
            !(acc->tr = calloc((size_t)cap, sizeof *acc->tr)))
            return ps_error(PS_ENOMEM, "out of memory");
        acc->cap = cap;
    }
    if ((rc = rt_pipe_new(net, &cfg, &p)) < 0 || (rc = rt_net_init_params(net, o->seed)) < 0)
        goto out;
    struct rt_step_stats st;
    for (int i = -o->warmup_steps; i < o->steps && !rc; i++) {
        if (i >= 0 && acc->n == acc->cap)
            PS_BUG("more timed steps than rounds x steps");
        struct rusage r0, r1;
        struct trc_trace **tr = i >= 0 ? &acc->tr[acc->n] : NULL;
        getrusage(RUSAGE_SELF, &r0);
        rc = rt_pipe_step(p, data, &st, tr);
        getrusage(RUSAGE_SELF, &r1);
        if (!rc && i >= 0) {
            int k = acc->n++;
            acc->ns[k] = st.step_ns;
            acc->csw[k] = r1.ru_nivcsw - r0.ru_nivcsw;
            acc->bubble[k] = st.bubble;
            for (int d = 0; d < st.n_devices; d++) {
                if (st.dev[d].runq_ns < 0)
                    acc->runq_known = 0;
                acc->runq += st.dev[d].runq_ns;
                acc->worker_ns += st.step_ns;
            }
        }
    }
out:
    rt_pipe_free(p);
    return rc;
}

/* The point's figures from every timed step: the median and fastest steps'
 * traces (taken from acc), the spread of the step times and bubbles. */
static int finish_point(struct point_acc *acc, struct msr_vpoint *pt,
                        struct trc_trace **fastest)
{
    int n = acc->n, rc = 0;
    int64_t *sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return ps_error(PS_ENOMEM, "out of memory");
    memcpy(sorted, acc->ns, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, step_cmp);
    int64_t med = sorted[(n - 1) / 2]; /* the lower median: a step that ran */
    int im = 0, imin = 0;
    for (int i = 0; i < n; i++) {
        if (acc->ns[i] == med)
            im = i;
        if (acc->ns[i] < acc->ns[imin])
            imin = i;
    }
    pt->n_steps = n;
    pt->runq_frac = acc->runq_known && acc->worker_ns > 0
                        ? (double)acc->runq / (double)acc->worker_ns : -1;
    pt->preempt_med = acc->csw[im];
    pt->bubble_min = pt->bubble_max = acc->bubble[0];
    for (int i = 0; i < n; i++) {
        pt->preempt_all += acc->csw[i];
        pt->bubble_min = acc->bubble[i] < pt->bubble_min ? acc->bubble[i] : pt->bubble_min;
        pt->bubble_max = acc->bubble[i] > pt->bubble_max ? acc->bubble[i] : pt->bubble_max;
    }
    /* the median and fastest steps on their own op times, after every
     * round: their schedule is the one the runtime replayed */
    struct sch_schedule *s;
    if ((rc = sch_schedule_build(pt->schedule, pt->K, pt->M, pt->remat, &s)) < 0) {
        free(sorted);
        return rc;
    }
    if ((rc = msr_replay_step(s, acc->tr[im], &pt->replay)) == 0)
        rc = msr_replay_step(s, acc->tr[imin], &pt->replay_min);
    sch_schedule_free(s);
    if (rc < 0) {
        free(sorted);
        return rc;
    }
    pt->step_med_s = sch_time_to_seconds(med);
    pt->step_min_s = sch_time_to_seconds(sorted[0]);
    pt->step_max_s = sch_time_to_seconds(sorted[n - 1]);
    free(sorted);
    pt->meas_trace = acc->tr[im];
    acc->tr[im] = NULL;
    if (imin == im) {
        rc = copy_trace(pt->meas_trace, fastest);
    } else {
        *fastest = acc->tr[imin];
        acc->tr[imin] = NULL;
    }
    return rc;
}

static int ev_key(const void *pa, const void *pb)
{
    const struct trc_event *a = pa, *b = pb;
    int64_t ka = (((int64_t)a->device * SCH_OP_NKINDS + a->kind) * 65536 + a->stage) * 65536 +
                 a->mb;
    int64_t kb = (((int64_t)b->device * SCH_OP_NKINDS + b->kind) * 65536 + b->stage) * 65536 +
                 b->mb;
    return ka < kb ? -1 : ka > kb;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Per op kind, the median relative duration error of the compute ops
 * (the traces hold the same ops: ana_compare checked). */
static int kind_errors(struct msr_vpoint *pt)
{
    const struct trc_trace *s = pt->sim_trace, *m = pt->meas_trace;
    size_t n = s->n_events;
    struct trc_event *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    double *e = malloc((n ? n : 1) * sizeof *e);
    if (!a || !b || !e) {
        free(a);
        free(b);
        free(e);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    memcpy(a, s->events, n * sizeof *a);
    memcpy(b, m->events, n * sizeof *b);
    qsort(a, n, sizeof *a, ev_key);
    qsort(b, n, sizeof *b, ev_key);
    for (int k = 0; k < SCH_OP_NKINDS; k++) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t ds = a[i].end_ns - a[i].start_ns, dm = b[i].end_ns - b[i].start_ns;
            if (a[i].kind == k && a[i].stream == SCH_STREAM_COMPUTE && ds > 0)
                e[c++] = (double)(dm - ds) / (double)ds;
        }
        qsort(e, c, sizeof *e, dbl_cmp);
        pt->kind_err[k] = !c ? NAN : c % 2 ? e[c / 2] : (e[c / 2 - 1] + e[c / 2]) / 2;
    }
    free(a);
    free(b);
    free(e);
    return 0;
}

static void peak_error(struct msr_vpoint *pt)
{
    const struct ana_compare *c = pt->cmp;
    pt->peak_err = 0;
    for (int d = 0; d < c->n_devices; d++) {
        int64_t s = c->peak_act_sim[d], m = c->peak_act_meas[d];
        double e = s ? fabs((double)(m - s)) / (double)s : m ? 1 : 0;
        if (d == 0 || e > pt->peak_err) {
            pt->peak_err = e;
            pt->peak_sim = s;
            pt->peak_meas = m;
        }
    }
}

/* After every round: compare the point's median and fastest steps with
 * the prediction. */
static int close_point(struct point_acc *acc, struct msr_vpoint *pt)
{
    struct trc_trace *fastest = NULL;
    int rc;
    if ((rc = finish_point(acc, pt, &fastest)) < 0 ||
        (rc = ana_compare_new(pt->sim_trace, pt->meas_trace, &pt->cmp)) < 0 ||
        (rc = ana_compare_new(pt->sim_trace, fastest, &pt->cmp_min)) < 0 ||
        (rc = kind_errors(pt)) < 0)
        goto out;
    /* the measured steps as the point prints them (the step's own time, by
     * which it is in or out of the spread), so its error is their ratio:
     * the trace's last op end fell tens of ns short of it */
    struct ana_compare *cs[2] = { pt->cmp, pt->cmp_min };
    for (int i = 0; i < 2; i++) {
        ana_compare_set_makespan_meas(cs[i], (int64_t)llround((i ? pt->step_min_s
                                                                  : pt->step_med_s) * 1e9));
        /* with drawn op times, against the drawn median step, not the trace's */
        ana_compare_set_makespan_sim(cs[i], (int64_t)llround(pt->step_sim_s * 1e9));
        if (pt->n_drawn)
            cs[i]->bubble_sim = pt->bubble_drawn;
    }
    peak_error(pt);
out:
    trc_trace_free(fastest);
    return rc;
}

static int check_opts(const struct msr_vcheck_opts *o)
{
    if (!o->spec || ((!o->profile || !o->topo) && !o->prepare))
        return ps_error(PS_EUSAGE, "--check: a net, a profile and a topology are "
                         "required");
    if (o->batch < 1 || o->steps < 1 || o->steps > MSR_VCHECK_MAX_STEPS ||
        o->warmup_steps < 0 || o->warmup_steps > MSR_VCHECK_MAX_STEPS)
        return ps_error(PS_EUSAGE, "--check: batch >= 1, steps in [1, %d], "
                         "warm-up steps in [0, %d]", MSR_VCHECK_MAX_STEPS,
                         MSR_VCHECK_MAX_STEPS);
    if (o->rounds < 0 || o->rounds > MSR_VCHECK_MAX_STEPS ||
        (long)o->steps * (o->rounds > 1 ? o->rounds : 1) > MSR_VCHECK_MAX_STEPS)
        return ps_error(PS_EUSAGE, "--check: rounds in [1, %d], rounds x steps <= %d",
                         MSR_VCHECK_MAX_STEPS, MSR_VCHECK_MAX_STEPS);
    if (o->n_K < 1 || o->n_M < 1 || o->n_remat < 1)
        return ps_error(PS_EUSAGE, "--check: empty grid");
    return 0;
}

/* One line per point: prediction, measured median and spread, errors. */
static void progress_line(FILE *f, const struct msr_vpoint *pt)
{
    const struct ana_compare *c = pt->cmp;
    /* an op kind the point has none of (R at M = 1) reads "-" */
    char ke[4][16];
    static const enum sch_op_kind kk[4] = { SCH_OP_FWD, SCH_OP_RECOMP, SCH_OP_BWD,
                                             SCH_OP_UPDATE };
    for (int q = 0; q < 4; q++)
        snprintf(ke[q], sizeof ke[q], isfinite(pt->kind_err[kk[q]]) ? "%+.1f%%" : "-",
                 100 * pt->kind_err[kk[q]]);
    char t[4][32], own[64] = "";
    if (pt->step_own_s > 0) /* against the calibration's own steps of this point */
        snprintf(own, sizeof own, "  calib steps %+.2f%%",
                 100 * (pt->step_own_s / pt->step_sim_s - 1));
    ps_human_seconds(pt->step_sim_s, t[0], sizeof t[0]);
    ps_human_seconds(pt->step_med_s, t[1], sizeof t[1]);
    ps_human_seconds(pt->step_min_s, t[2], sizeof t[2]);
    ps_human_seconds(pt->step_max_s, t[3], sizeof t[3]);
    fprintf(f, "%s K=%d M=%-3d %-12s step %10s sim %10s meas [%s, %s] %s "
            "(%+6.2f%%, fastest %+6.2f%%)  bubble %5.2f%% sim %5.2f%% meas (%+5.2f pts)  "
            "peak act %+.2f%%  preempted %ld  op err F %s R %s B %s U %s%s\n", pt->schedule,
            pt->K, pt->M, sch_remat_name(pt->remat), t[0], t[1], t[2], t[3],
            msr_vpoint_in_spread(pt) ? "in  " : "OUT ", 100 * c->makespan_err,
            100 * pt->cmp_min->makespan_err, 100 * c->bubble_sim, 100 * c->bubble_meas,
            100 * (c->bubble_meas - c->bubble_sim), 100 * pt->peak_err, pt->preempt_med,
            ke[0], ke[1], ke[2], ke[3], own);
    fflush(f);
}

int msr_vpoint_in_spread(const struct msr_vpoint *pt)
{
    return pt->step_sim_s >= pt->step_min_s && pt->step_sim_s <= pt->step_max_s;
}

/* The profile and topology for K: the caller's, or prepare's. */
static int have_profile(const struct msr_vcheck_opts *o, const struct rt_net *net, int K,
                        const struct mdl_profile **prof, const struct mdl_topology **topo)
{
    int rc;
    if (o->prepare && (rc = o->prepare(o->prepare_ctx, K, prof, topo)) < 0)
        return rc;
    if (!*prof || !*topo)
        return ps_error(PS_EINVAL, "--check: no profile for K = %d", K);
    return msr_vcheck_profile_fits(*prof, net);
}

/* A point the schedule has no list for: noted, left out. */
static int skip_point(const struct msr_vcheck_opts *o, const struct msr_vpoint *pt, char *skip)
{
    if (o->progress)
        fprintf(o->progress, "%s K=%d M=%-3d %-12s skipped: %s\n", pt->schedule, pt->K, pt->M,
                sch_remat_name(pt->remat), ps_errmsg());
    ps_error_clear();
    *skip = 1;
    return 0;
}

int msr_vcheck_run(const struct msr_vcheck_opts *o, struct msr_vcheck **out)
{
    *out = NULL;
    int rc = check_opts(o);
    if (rc < 0)
        return rc;
    struct msr_vcheck *v = calloc(1, sizeof *v);
    size_t cap = (size_t)o->n_K * o->n_M * o->n_remat;
    if (!v || !(v->pts = calloc(cap, sizeof *v->pts))) {
        free(v);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    struct rt_net *net = NULL;
    struct rt_data *data = NULL;
    int64_t t0 = rt_now_ns();
    if ((rc = rt_net_parse(o->spec, &net)) < 0 ||
        (rc = rt_data_new(net, o->batch, o->seed, &data)) < 0 ||
        (rc = msr_vcheck_precheck(o)) < 0)
        goto err;
    snprintf(v->spec, sizeof v->spec, "%s", net->spec);
    snprintf(v->schedule, sizeof v->schedule, "%s", o->schedule ? o->schedule : "gpipe");
    snprintf(v->blas, sizeof v->blas, "%s", rt_blas_corename());
    time_t now = time(NULL);
    strftime(v->stamp, sizeof v->stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    v->batch = o->batch;
    v->steps = o->steps;
    v->rounds = o->rounds > 1 ? o->rounds : 1;
    v->warmup_steps = o->warmup_steps;
    v->seed = o->seed;
    int *cpus;
    if ((rc = rt_cpus_allowed(&cpus, &v->n_cpus)) < 0)
        goto err;
    free(cpus);
    /* steady-state steps reuse the heap instead of faulting in fresh pages */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    for (int a = 0; a < o->n_K; a++) {
        const struct mdl_profile *prof = o->profile_for_K && o->profile_for_K[a]
                                             ? o->profile_for_K[a] : o->profile;
        const struct mdl_topology *topo = o->topo_for_K && o->topo_for_K[a] ? o->topo_for_K[a]
                                                                           : o->topo;
        int K = o->Ks[a], inter = o->prepare && o->between;
        if (inter && o->begin && (rc = o->begin(o->prepare_ctx, K)) < 0)
            goto err;
        if (!inter && (rc = have_profile(o, net, K, &prof, &topo)) < 0)
            goto err;
        int first = v->n_points;
        for (int b = 0; b < o->n_M; b++)
            for (int r = 0; r < o->n_remat; r++) {
                if (o->batch % o->Ms[b])
                    continue;
                struct msr_vpoint *pt = &v->pts[v->n_points++];
                pt->K = K;
                pt->M = o->Ms[b];
                pt->micro = o->batch / o->Ms[b];
                pt->remat = o->remats[r];
                snprintf(pt->schedule, sizeof pt->schedule, "%s", v->schedule);
            }
        int np = v->n_points - first;
        struct point_acc *acc = calloc((size_t)(np ? np : 1), sizeof *acc);
        char *skip = calloc((size_t)(np ? np : 1), 1);
        if (!acc || !skip) {
            free(acc);
            free(skip);
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto err;
        }
        /* predicted first when the profile is known; a schedule with no
         * list at a point (dualpipe-v: M >= 2K) skips it */
        for (int q = 0; q < np && !inter && !rc; q++)
            if ((rc = simulate(o, prof, topo, &v->pts[first + q])) == -PS_EUSAGE)
                rc = skip_point(o, &v->pts[first + q], &skip[q]);
        /* the rounds: every point of this K once per round, so a drift of
         * the machine lands in every point alike; interleaved with the
         * calibration's rounds (between) when it is measured alongside */
        for (int round = 0; round < (o->rounds > 1 ? o->rounds : 1) && !rc; round++) {
            if (inter && (rc = o->between(o->prepare_ctx, K, round)) < 0)
                break;
            for (int q = 0; q < np && !rc; q++) {
                const struct msr_vpoint *pt = &v->pts[first + q];
                if (!skip[q] && inter && o->before_point &&
                    (rc = o->before_point(o->prepare_ctx, K, pt->micro, pt->remat, round)) < 0)
                    break;
                if (!skip[q] && (rc = run_round(o, net, data, &v->pts[first + q], &acc[q])) ==
                                    -PS_EUSAGE)
                    rc = skip_point(o, &v->pts[first + q], &skip[q]);
            }
        }
        if (!rc && inter && !(rc = have_profile(o, net, K, &prof, &topo)))
            for (int q = 0; q < np && !rc; q++)
                if (!skip[q] && (rc = simulate(o, prof, topo, &v->pts[first + q])) == -PS_EUSAGE)
                    rc = skip_point(o, &v->pts[first + q], &skip[q]);
        for (int q = 0; q < np && !rc && o->own_step; q++) {
            struct msr_vpoint *pt = &v->pts[first + q];
            if (!skip[q] && pt->remat != SCH_REMAT_EXCEPT_LAST)
                pt->step_own_s = o->own_step(o->prepare_ctx, K, pt->micro, pt->remat);
        }
        for (int q = 0; q < np && !rc; q++) {
            struct msr_vpoint *pt = &v->pts[first + q];
            if (skip[q])
                continue;
            if ((rc = close_point(&acc[q], pt)) < 0)
                break;
            if (o->progress)
                progress_line(o->progress, pt);
        }
        for (int q = 0; q < np; q++)
            acc_release(&acc[q]);
        free(acc);
        /* the skipped points out of the list */
        int w = first;
        for (int q = 0; q < np; q++) {
            if (skip[q]) {
                trc_trace_free(v->pts[first + q].sim_trace);
                v->n_skipped++;
                continue;
            }
            if (w != first + q)
                v->pts[w] = v->pts[first + q];
            w++;
        }
        for (int q = w; q < first + np; q++)
            memset(&v->pts[q], 0, sizeof v->pts[q]);
        v->n_points = w;
        free(skip);
        if (rc < 0)
            goto err;
    }
    if (!v->n_points) {
        rc = ps_error(PS_EUSAGE, "--check: no -M divides --batch %d", o->batch);
        goto err;
    }
    /* after the run: a prepare callback may have written them */
    snprintf(v->profile_desc, sizeof v->profile_desc, "%s",
             o->profile_desc ? o->profile_desc : o->profile ? o->profile->path : "");
    snprintf(v->topology_desc, sizeof v->topology_desc, "%s",
             o->topology_desc ? o->topology_desc : o->topo ? o->topo->path : "");
    v->wall_s = (double)(rt_now_ns() - t0) * 1e-9;
    rt_data_free(data);
    rt_net_free(net);
    *out = v;
    return 0;
err:
    rt_data_free(data);
    rt_net_free(net);
    msr_vcheck_free(v);
    return rc;
}
