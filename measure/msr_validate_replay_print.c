/* msr_validate replay report: `pipesim compare --replay MEASURED.json`, a
 * measured step replayed on its own op times three ways (see
 * msr_validate.h, msr_replay_report_new): the means of each kind (the
 * model), each op its own time (the dependencies alone), and the times of
 * each kind shuffled among its ops (the same spread, no order in time). */
#include "measure/msr_validate.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int msr_replay_report_new(const struct trc_trace *meas, int n_shuffles, uint64_t seed,
                          struct msr_replay_report **out)
{
    *out = NULL;
    if (n_shuffles < 0 || n_shuffles > 100000)
        return ps_error(PS_EUSAGE, "--shuffles: %d is not in [0, 100000]", n_shuffles);
    if (strcmp(meas->source, "measured"))
        return ps_error(PS_EINVAL, "the trace is %s, not a measured step (validate --trace "
                         "writes one)", meas->source[0] ? meas->source : "unnamed");
    enum sch_remat remat;
    if (!meas->schedule[0] || sch_remat_parse(meas->remat, &remat) < 0) {
        ps_error_clear();
        return ps_error(PS_EINVAL, "the trace names no schedule or remat mode to rebuild "
                         "its step from");
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
    if ((rc = sch_schedule_build(meas->schedule, meas->n_devices, meas->n_micro, remat, &s)) <
            0 ||
        (rc = msr_replay_step_with(s, meas, MSR_REPLAY_MEANS, 0, &r->means)) < 0 ||
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

/* The shuffles' mean, least and greatest error and mean simulated step. */
static void shuffle_stats(const struct msr_replay_report *r, double *mean, double *lo,
                          double *hi, double *step, double *bub)
{
    *mean = *lo = *hi = *step = *bub = 0;
    for (int i = 0; i < r->n_shuffles; i++) {
        const struct msr_replay *x = &r->shuffled[i];
        *mean += x->makespan_err / r->n_shuffles;
        *step += x->step_sim_s / r->n_shuffles;
        *bub += x->bubble_err / r->n_shuffles;
        *lo = !i || x->makespan_err < *lo ? x->makespan_err : *lo;
        *hi = !i || x->makespan_err > *hi ? x->makespan_err : *hi;
    }
}

static void row(FILE *f, const char *what, const struct msr_replay *x)
{
    char st[32];
    ps_human_seconds(x->step_sim_s, st, sizeof st);
    fprintf(f, "  %-34s %10s   %+7.2f%%   %6.2f%%   %+6.2f pts\n", what, st,
            100 * x->makespan_err, 100 * x->bubble_sim, 100 * x->bubble_err);
}

static void print_table(const void *obj, FILE *f)
{
    const struct msr_replay_report *r = obj;
    char st[32], ho[32];
    ps_human_seconds(r->means.step_meas_s, st, sizeof st);
    ps_human_seconds(r->means.handoff_s, ho, sizeof ho);
    fprintf(f, "measured step   %s K=%d M=%d remat %s: %s, bubble %.2f%%\n", r->schedule, r->K,
            r->M, r->remat, st, 100 * r->means.bubble_meas);
    fprintf(f, "link            hand-off %s (the median of the receives that waited), no "
            "bandwidth limit\n", ho);
    fprintf(f, "  %-34s %10s   %8s   %7s   %10s\n", "replayed with the op times of",
            "step", "error", "bubble", "bubble err");
    row(f, "each kind's mean (the model)", &r->means);
    row(f, "each op its own", &r->own);
    if (r->n_shuffles) {
        double mean, lo, hi, step, bub;
        shuffle_stats(r, &mean, &lo, &hi, &step, &bub);
        ps_human_seconds(step, st, sizeof st);
        char what[64];
        snprintf(what, sizeof what, "shuffled in each kind (%d, mean)", r->n_shuffles);
        fprintf(f, "  %-34s %10s   %+7.2f%%   %7s   %+6.2f pts   (errors %+.2f%% to %+.2f%%)\n",
                what, st, 100 * mean, "", 100 * bub, 100 * lo, 100 * hi);
    }
    fprintf(f, "errors are measured / simulated - 1 (step) and measured - simulated "
            "(bubble)\n");
}

static void csv_row(FILE *f, const char *what, long long seed, const struct msr_replay *x)
{
    fprintf(f, "%s,", what);
    if (seed >= 0)
        fprintf(f, "%lld", seed);
    fprintf(f, ",%.9g,%.9g,%.6g,%.6g,%.6g,%.9g\n", x->step_sim_s, x->step_meas_s,
            x->makespan_err, x->bubble_sim, x->bubble_meas, x->handoff_s);
}

static void print_csv(const void *obj, FILE *f)
{
    const struct msr_replay_report *r = obj;
    fprintf(f, "op_times,seed,step_sim_s,step_meas_s,makespan_err,bubble_sim,bubble_meas,"
            "handoff_s\n");
    csv_row(f, "means", -1, &r->means);
    csv_row(f, "own", -1, &r->own);
    for (int i = 0; i < r->n_shuffles; i++)
        csv_row(f, "shuffled", (long long)(r->seed + (uint64_t)i), &r->shuffled[i]);
}

static json_t *json_replay(const struct msr_replay *x)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "step_sim_s", x->step_sim_s,
                     "step_meas_s", x->step_meas_s, "makespan_err", x->makespan_err,
                     "bubble_sim", x->bubble_sim, "bubble_meas", x->bubble_meas, "handoff_s",
                     x->handoff_s);
}

static int print_json(const void *obj, FILE *f)
{
    const struct msr_replay_report *r = obj;
    ps_json_begin();
    json_t *sh = json_array();
    int bad = !sh;
    for (int i = 0; !bad && i < r->n_shuffles; i++)
        bad |= json_array_append_new(sh, json_replay(&r->shuffled[i]));
    json_t *o = bad ? NULL
                    : json_pack("{s:s, s:s, s:i, s:i, s:o, s:o, s:I, s:O}", "schedule",
                                r->schedule, "remat", r->remat, "K", r->K, "M", r->M,
                                "means", json_replay(&r->means), "own",
                                json_replay(&r->own), "seed", (json_int_t)r->seed,
                                "shuffled", sh);
    json_decref(sh);
    return ps_json_print(o, f, bad || !o);
}

int msr_replay_report_print(const struct msr_replay_report *r, enum ana_fmt fmt, FILE *f)
{
    static const struct ana_printers pr = { print_table, print_csv, print_json };
    return ana_print_as(fmt, &pr, r, f);
}
