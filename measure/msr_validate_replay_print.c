/* msr_validate replay report's printers: `pipesim compare --replay
 * MEASURED.json` (msr_replay_report_new, msr_validate_replay.c), a measured
 * step replayed on its own op times three ways: the means of each kind (the
 * model), each op its own time (the dependencies alone), and the times of
 * each (stage, kind, re-materialized or not) shuffled among its ops (the
 * same spread, no order in time). Table, CSV (reals as ps_fmt_double
 * writes them) and JSON. O(shuffles). */
#include "measure/msr_validate.h"
#include "base/ps_json.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The shuffles' mean, least and greatest error, mean simulated step and
 * bubble, and mean bubble error. */
static void shuffle_stats(const struct msr_replay_report *r, double *mean, double *lo,
                          double *hi, double *step, double *bub, double *bub_sim)
{
    *mean = *lo = *hi = *step = *bub = *bub_sim = 0;
    for (int i = 0; i < r->n_shuffles; i++) {
        const struct msr_replay *x = &r->shuffled[i];
        *mean += x->makespan_err / r->n_shuffles;
        *step += x->step_sim_s / r->n_shuffles;
        *bub += x->bubble_err / r->n_shuffles;
        *bub_sim += x->bubble_sim / r->n_shuffles;
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
    ps_human_seconds(r->means.latency_s, ho, sizeof ho);
    fprintf(f, "measured step   %s K=%d M=%d remat %s: %s, bubble %.2f%%\n", r->schedule, r->K,
            r->M, r->remat, st, 100 * r->means.bubble_meas);
    if (r->means.msg_send_s > 0 || r->means.msg_recv_s > 0) {
        char sc[32], rc_[32];
        ps_human_seconds(r->means.msg_send_s, sc, sizeof sc);
        ps_human_seconds(r->means.msg_recv_s, rc_, sizeof rc_);
        fprintf(f, "messages        the workers' copies: send %s, receive %s (the step's means); "
                "link latency %s from a send's end, no bandwidth limit\n", sc, rc_, ho);
    } else {
        fprintf(f, "link            hand-off %s (the median of the receives that waited), no "
                "bandwidth limit\n", ho);
    }
    fprintf(f, "  %-34s %10s   %8s   %7s   %10s\n", "replayed with the op times of",
            "step", "error", "bubble", "bubble err");
    row(f, "each kind's mean (the model)", &r->means);
    row(f, "each op its own", &r->own);
    if (r->n_shuffles) {
        double mean, lo, hi, step, bub, bub_sim;
        shuffle_stats(r, &mean, &lo, &hi, &step, &bub, &bub_sim);
        ps_human_seconds(step, st, sizeof st);
        char what[64];
        snprintf(what, sizeof what, "shuffled in each kind (%d, mean)", r->n_shuffles);
        fprintf(f, "  %-34s %10s   %+7.2f%%   %6.2f%%   %+6.2f pts   (errors %+.2f%% to "
                "%+.2f%%; seeds %llu-%llu)\n", what, st, 100 * mean, 100 * bub_sim, 100 * bub,
                100 * lo, 100 * hi, (unsigned long long)r->seed,
                (unsigned long long)(r->seed + (uint64_t)r->n_shuffles - 1));
    }
    fprintf(f, "errors are measured / simulated - 1 (step) and measured - simulated "
            "(bubble)\n");
}

static void csv_row(FILE *f, const char *what, long long seed, const struct msr_replay *x)
{
    fprintf(f, "%s,", what);
    if (seed >= 0)
        fprintf(f, "%lld", seed);
    fprintf(f, ",%s,%s,%s,%s,%s,%s,%s,%s,%s\n", PS_DBL(x->step_sim_s), PS_DBL(x->step_meas_s),
            PS_DBL(x->makespan_err), PS_DBL(x->bubble_sim), PS_DBL(x->bubble_meas),
            PS_DBL(x->handoff_s), PS_DBL(x->latency_s), PS_DBL(x->msg_send_s),
            PS_DBL(x->msg_recv_s));
}

static void print_csv(const void *obj, FILE *f)
{
    const struct msr_replay_report *r = obj;
    fprintf(f, "op_times,seed,step_sim_s,step_meas_s,makespan_err,bubble_sim,bubble_meas,"
            "handoff_s,latency_s,msg_send_s,msg_recv_s\n");
    csv_row(f, "means", -1, &r->means);
    csv_row(f, "own", -1, &r->own);
    for (int i = 0; i < r->n_shuffles; i++)
        csv_row(f, "shuffled", (long long)(r->seed + (uint64_t)i), &r->shuffled[i]);
}

static json_t *json_replay(const struct msr_replay *x)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "step_sim_s",
                     x->step_sim_s, "step_meas_s", x->step_meas_s, "makespan_err",
                     x->makespan_err, "bubble_sim", x->bubble_sim, "bubble_meas",
                     x->bubble_meas, "handoff_s", x->handoff_s, "latency_s", x->latency_s,
                     "msg_send_s", x->msg_send_s, "msg_recv_s", x->msg_recv_s);
}

static int print_json(const void *obj, FILE *f)
{
    const struct msr_replay_report *r = obj;
    ps_json_begin();
    json_t *sh = json_array();
    int bad = !sh;
    for (int i = 0; !bad && i < r->n_shuffles; i++) {
        json_t *x = json_replay(&r->shuffled[i]);
        bad |= !x || json_object_set_new(x, "seed", json_integer((json_int_t)(r->seed +
                                                                     (uint64_t)i))) ||
               json_array_append_new(sh, x);
    }
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
