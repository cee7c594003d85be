/* msr_validate_print: validate --check's results in the three formats (see
 * msr_validate.h): the accuracy figures (table), one row per point (csv),
 * both (json). */
#include "measure/msr_validate.h"
#include "analysis/ana_format.h"
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "base/ps_json.h"

#include <jansson.h>
#include <math.h>

static void print_table(const void *obj, FILE *f)
{
    const struct msr_vcheck *v = obj;
    for (int fast = 0; fast < 2; fast++) {
        struct msr_accuracy a;
        msr_vcheck_accuracy(v, fast, &a);
        msr_accuracy_print(v, &a, f);
    }
}

static void print_csv(const void *obj, FILE *f)
{
    const struct msr_vcheck *v = obj;
    fprintf(f, "schedule,K,M,micro_batch,remat,step_sim_s,step_median_s,step_min_s,step_max_s,"
            "in_spread,makespan_err,makespan_err_fastest,bubble_sim,bubble_meas,peak_act_err,"
            "preempted,runq_frac,step_calib_own_s,own_times_err,own_times_bubble_err\n");
    for (int i = 0; i < v->n_points; i++) {
        const struct msr_vpoint *p = &v->pts[i];
        /* every figure exact, as the JSON's (it printed 6 to 9 digits) */
        fprintf(f, "%s,%d,%d,%d,%s,%s,%s,%s,%s,%d,", p->schedule, p->K, p->M, p->micro,
                sch_remat_name(p->remat), PS_DBL(p->step_sim_s), PS_DBL(p->step_med_s),
                PS_DBL(p->step_min_s), PS_DBL(p->step_max_s), msr_vpoint_in_spread(p));
        fprintf(f, "%s,%s,%s,%s,%s,%ld,", PS_DBL(p->cmp->makespan_err),
                PS_DBL(p->cmp_min->makespan_err), PS_DBL(p->cmp->bubble_sim),
                PS_DBL(p->cmp->bubble_meas), PS_DBL(p->peak_err), p->preempt_med);
        if (p->runq_frac >= 0)
            fputs(PS_DBL(p->runq_frac), f);
        fputc(',', f);
        if (p->step_own_s > 0) /* the calibration's own steps of this point */
            fputs(PS_DBL(p->step_own_s), f);
        fprintf(f, ",%s,%s\n", PS_DBL(p->replay.makespan_err), PS_DBL(p->replay.bubble_err));
    }
}

static json_t *accuracy_json(const struct msr_vcheck *v, int fast)
{
    struct msr_accuracy a;
    msr_vcheck_accuracy(v, fast, &a);
    /* the misses (against the measured spread), the calibration's own steps and
     * the drift are the median step's figures: null under the fastest step, which
     * has none of its own (helper-71: a 0 and the median's figures stood there) */
#define MED_ONLY(x) (fast ? json_null() : (x))
    /* and none without a point of the calibration's own steps (helper-132: 0 read as a
     * perfect 0 %, where the table leaves the line out) */
#define OWN(x) (fast || !a.own_n ? json_null() : (x))
    return json_pack("{s:f, s:f, s:f, s:f, s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:f, s:f, s:f}",
                     "makespan_err_median", a.mk_median, "makespan_err_max", a.mk_max,
                     "bubble_err_points_max", a.bubble_max, "peak_act_err_max", a.peak_max,
                     "model_misses", MED_ONLY(json_integer(a.n_miss)), "calib_own_points",
                     MED_ONLY(json_integer(a.own_n)), "calib_own_err_median",
                     OWN(json_real(a.own_median)), "calib_own_err_max",
                     OWN(json_real(a.own_max)), "drift_median",
                     OWN(json_real(a.drift_median)), "drift_max",
                     OWN(json_real(a.drift_max)),
                     "own_times_err_median", a.replay_median, "own_times_err_max", a.replay_max,
                     "own_times_bubble_points_median", a.replay_bub_median,
                     "own_times_bubble_points_max", a.replay_bub_max);
#undef OWN
#undef MED_ONLY
}

static int print_json(const void *obj, FILE *f)
{
    const struct msr_vcheck *v = obj;
    ps_json_begin();
    json_t *pts = json_array();
    json_t *o = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:{s:o, s:o}, s:{s:f, s:f, s:f, s:f}}",
                          "net", v->spec, "schedule", v->schedule, "batch", v->batch,
                          "steps", v->steps, "rounds", v->rounds, "warmup_steps",
                          v->warmup_steps, "accuracy",
                          "median_step", accuracy_json(v, 0), "fastest_step",
                          accuracy_json(v, 1), "targets", "makespan_err_median",
                          MSR_TARGET_MAKESPAN_MEDIAN, "makespan_err_max",
                          MSR_TARGET_MAKESPAN_MAX, "bubble_err_points_max",
                          MSR_TARGET_BUBBLE_POINTS, "peak_act_err_max", MSR_TARGET_PEAK_ACT);
    int bad = !o || !pts;
    for (int i = 0; !bad && i < v->n_points; i++) {
        const struct msr_vpoint *p = &v->pts[i];
        bad |= json_array_append_new(pts, json_pack(
            "{s:s, s:i, s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:b, s:f, s:f, s:f, s:f, s:f, s:I, "
            "s:o, s:o, s:f, s:f}", "schedule", p->schedule, "K", p->K, "M", p->M,
            "micro_batch", p->micro,
            "remat", sch_remat_name(p->remat), "step_sim_s", p->step_sim_s, "step_median_s",
            p->step_med_s, "step_min_s", p->step_min_s, "step_max_s", p->step_max_s,
            "in_spread", msr_vpoint_in_spread(p), "makespan_err", p->cmp->makespan_err,
            "makespan_err_fastest", p->cmp_min->makespan_err, "bubble_sim", p->cmp->bubble_sim,
            "bubble_meas", p->cmp->bubble_meas, "peak_act_err", p->peak_err, "preempted",
            (json_int_t)p->preempt_med, "runq_frac",
            p->runq_frac >= 0 ? json_real(p->runq_frac) : json_null(), "step_calib_own_s",
            p->step_own_s > 0 ? json_real(p->step_own_s) : json_null(), "own_times_err",
            p->replay.makespan_err, "own_times_bubble_err", p->replay.bubble_err));
    }
    if (!bad)
        bad |= json_object_set(o, "points", pts);
    json_decref(pts);
    return ps_json_print(o, f, bad);
}

int msr_vcheck_print(const struct msr_vcheck *v, enum ana_fmt fmt, FILE *f)
{
    static const struct ana_printers pr = { print_table, print_csv, print_json };
    if (!v->n_points)
        return ps_error(PS_EINVAL, "no validation points");
    return ana_print_as(fmt, &pr, v, f);
}
