/* ana_prediction_print: a prediction as a table, CSV or JSON. */
#include "analysis/ana_format.h"
#include "analysis/ana_predict.h"
#include "analysis/ana_schedules.h"
#include "analysis/ana_sens.h"
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "base/ps_json.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

static void print_table(const void *obj, FILE *f)
{
    const struct ana_prediction *p = obj;
    char t1[32], t2[32];
    if (p->model[0]) {
        char pm[32];
        ps_human_count(p->model_params, pm, sizeof pm);
        fprintf(f, "model           %s: %d layer%s, %s parameter%s\n", p->model,
                p->model_layers, p->model_layers == 1 ? "" : "s", pm,
                p->model_params == 1 ? "" : "s");
    }
    fprintf(f, "schedule        %s, K=%d, M=%d, batch %.0f (micro-batch %.0f), remat %s\n",
            p->schedule, p->K, p->M, p->batch, p->micro_batch, sch_remat_name(p->remat));
    fprintf(f, "partition       %s (layers per stage)\n", p->partition);
    if (p->replicas > 1) {
        ps_human_seconds(p->allreduce_s, t1, sizeof t1);
        fprintf(f, "replicas        %d data-parallel pipelines, gradient all-reduce up to "
                "%s per stage\n", p->replicas, t1);
    }
    ps_human_seconds(p->step_s, t1, sizeof t1);
    fprintf(f, "step time       %s\n", t1);
    char tp[32];
    ps_fixed(p->samples_per_s, 2, tp, sizeof tp);
    fprintf(f, "throughput      %s samples/s\n", tp);
    if (p->baseline_step_s > 0) {
        /* with replicas the one device does every replica's batch: R steps of
         * baseline_step_s (one batch's, the figure CSV, JSON and sweep store) */
        char t3[32];
        ps_human_seconds(p->baseline_step_s * (p->replicas > 1 ? p->replicas : 1), t2,
                         sizeof t2);
        ps_human_seconds(p->baseline_step_s, t3, sizeof t3);
        fprintf(f, p->speedup < 0.01 ? "speedup         %.3gx over K=1 (M=1, no remat: %s"
                                     : "speedup         %.3fx over K=1 (M=1, no remat: %s",
                p->speedup, t2);
        if (p->replicas > 1)
            fprintf(f, " for the %d replicas' batches of %.0f, %s each", p->replicas, p->batch,
                    t3);
        fputs(")\n", f);
        if (!p->baseline_fits)
            fprintf(f, "                (the K=1 baseline needs %s, more than one device "
                    "holds: simulated as if it fit)\n",
                    (ps_human_bytes(p->baseline_peak, t2, sizeof t2), t2));
    } else if (p->baseline_skipped[0]) {
        fprintf(f, "speedup         not simulated: the K=1 baseline (the whole model on one "
                "device) is out of range\n                (%s)\n", p->baseline_skipped);
    }
    const char *formula = ana_bubble_formula_name(p->schedule);
    if (isnan(p->bubble_analytic))
        fprintf(f, "bubble          %.2f%% simulated\n", p->bubble_sim * 100);
    else
        fprintf(f, "bubble          %.2f%% simulated, %.2f%% analytic %s\n",
                p->bubble_sim * 100, p->bubble_analytic * 100, formula);
    fprintf(f, "memory          %s\n", p->fits ? "every stage fits" : "DOES NOT FIT");
    fprintf(f, "\n%5s %6s %7s %11s %11s %6s %11s %11s %11s %11s %4s\n", "stage", "device",
            "layers", "fwd/mb", "bwd/mb", "busy%", "params+opt", "peak act",
            "peak total", "capacity", "fits");
    for (int s = 0; s < p->n_stages; s++) {
        const struct ana_stage *st = &p->stages[s];
        char a[32], b[32], c[32], d[32], fw[32], bw[32];
        ps_human_seconds(st->fwd_s, fw, sizeof fw);
        ps_human_seconds(st->bwd_s, bw, sizeof bw);
        ps_human_bytes((double)st->static_mem, a, sizeof a);
        ps_human_bytes((double)st->peak_act, b, sizeof b);
        ps_human_bytes((double)st->peak_mem, c, sizeof c);
        ps_human_bytes(st->capacity, d, sizeof d);
        fprintf(f, "%5d %6d %7d %11s %11s %6.1f %11s %11s %11s %11s %4s\n", s, st->device,
                st->n_layers, fw, bw, st->busy_frac * 100, a, b, c, d,
                st->fits ? "yes" : "NO");
    }
    if (p->has_sens) {
        fprintf(f, "\nsensitivity     the step's change per 1 %% more of each figure, on every "
                "device and link\n                at once (elasticity; the partition "
                "kept):\n");
        int none = 0;
        for (int k = 0; k < ANA_KNOB_N; k++) {
            if (isnan(p->sens[k])) {
                fprintf(f, "  %-17s %6s\n", ana_knob_titles[k], "-");
                none = 1;
            } else {
                fprintf(f, "  %-17s %+6.3f\n", ana_knob_titles[k], p->sens[k]);
            }
        }
        if (none)
            fprintf(f, "  -: the run with that figure 1 %% away is beyond the engine's range\n");
    }
}

static void print_csv(const void *obj, FILE *f)
{
    const struct ana_prediction *p = obj;
    fprintf(f, "schedule,K,M,batch,micro_batch,remat,partition,step_s,samples_per_s,speedup,"
            "bubble_sim,bubble_analytic,fits,replicas,allreduce_s,baseline_step_s,model_params,"
            "stage,device,layers,fwd_s,bwd_s,busy_frac,"
            "static_bytes,peak_act_bytes,peak_bytes,capacity_bytes,stage_fits,"
            "model,model_layers,ops,ops_below_tick,baseline_fits,first_layer,recomp_s");
    for (int k = 0; p->has_sens && k < ANA_KNOB_N; k++)
        fprintf(f, ",sens_%s", ana_knob_names[k]);
    fputc('\n', f);
    for (int s = 0; s < p->n_stages; s++) {
        const struct ana_stage *st = &p->stages[s];
        char an[32] = "", sp[32] = ""; /* empty where the schedule has no formula, or
                                          the baseline was not simulated */
        if (isfinite(p->bubble_analytic))
            ps_fmt_double(p->bubble_analytic, an, sizeof an);
        if (!p->baseline_skipped[0])
            ps_fmt_double(p->speedup, sp, sizeof sp);
        char base[32] = ""; /* empty where the baseline was not simulated */
        if (!p->baseline_skipped[0])
            ps_fmt_double(p->baseline_step_s, base, sizeof base);
        fprintf(f, "%s,%d,%d,%s,%s,%s,\"%s\",%s,%s,%s,%s,%s,%d,%d,%s,%s,%s,%d,%d,%d,%s,%s,%s,"
                "%lld,%lld,%lld,%s,%d", p->schedule, p->K, p->M, PS_DBL(p->batch),
                PS_DBL(p->micro_batch), sch_remat_name(p->remat), p->partition,
                PS_DBL(p->step_s), PS_DBL(p->samples_per_s), sp, PS_DBL(p->bubble_sim), an,
                p->fits, p->replicas, PS_DBL(p->allreduce_s), base, PS_DBL(p->model_params), s,
                st->device, st->n_layers, PS_DBL(st->fwd_s), PS_DBL(st->bwd_s),
                PS_DBL(st->busy_frac), (long long)st->static_mem, (long long)st->peak_act,
                (long long)st->peak_mem, PS_DBL(st->capacity), st->fits);
        /* what the JSON has besides (helper-114: the CSV lacked them) */
        fputc(',', f);
        ps_csv_str(f, p->model);
        fprintf(f, ",%d,%lld,%lld,", p->model_layers, (long long)p->n_ops,
                (long long)p->short_ops);
        if (p->baseline_step_s > 0) /* empty where the baseline was not simulated */
            fprintf(f, "%d", p->baseline_fits);
        fprintf(f, ",%d,%s", st->first_layer, PS_DBL(st->recomp_s));
        for (int k = 0; p->has_sens && k < ANA_KNOB_N; k++)
            fprintf(f, ",%s", isnan(p->sens[k]) ? "" : PS_DBL(p->sens[k]));
        fputc('\n', f);
    }
}

static int print_json(const void *obj, FILE *f)
{
    const struct ana_prediction *p = obj;
    ps_json_begin(); /* a NULL from json_pack or a failed dump may be out of memory */
    json_t *o = json_pack("{s:s, s:i, s:i, s:f, s:f, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, "
                          "s:b, s:I}",
                          "schedule", p->schedule, "K", p->K, "M", p->M, "batch", p->batch,
                          "micro_batch", p->micro_batch, "remat", sch_remat_name(p->remat),
                          "partition", p->partition, "step_s", p->step_s, "samples_per_s",
                          p->samples_per_s, "baseline_step_s", p->baseline_step_s, "speedup",
                          p->speedup, "bubble_sim", p->bubble_sim, "bubble_analytic",
                          isnan(p->bubble_analytic) ? 0.0 : p->bubble_analytic, "fits", p->fits,
                          "ops", (json_int_t)p->n_ops);
    json_t *arr = json_array();
    if (!o || !arr) {
        json_decref(o);
        json_decref(arr);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    int bad = 0;
    if (isnan(p->bubble_analytic)) /* no closed form for this schedule */
        json_object_set_new(o, "bubble_analytic", json_null());
    if (p->baseline_step_s > 0)
        json_object_set_new(o, "baseline_fits", json_boolean(p->baseline_fits));
    if (p->baseline_skipped[0]) { /* no speedup: null, and why */
        json_object_set_new(o, "baseline_step_s", json_null());
        json_object_set_new(o, "speedup", json_null());
        json_object_set_new(o, "baseline_skipped", ps_json_text(p->baseline_skipped));
    }
    /* a file name that is not UTF-8 gets '?' (json_string's NULL left the key out:
       helper-114) */
    bad |= json_object_set_new(o, "model", ps_json_text(p->model));
    json_object_set_new(o, "model_layers", json_integer(p->model_layers));
    json_object_set_new(o, "model_params", json_real(p->model_params));
    json_object_set_new(o, "replicas", json_integer(p->replicas));
    json_object_set_new(o, "allreduce_s", json_real(p->allreduce_s));
    json_object_set_new(o, "ops_below_tick", json_integer(p->short_ops));
    for (int s = 0; s < p->n_stages; s++) {
        const struct ana_stage *st = &p->stages[s];
        json_t *row = json_pack("{s:i, s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:f, "
                                "s:b}", "stage", s, "device", st->device, "first_layer",
                                st->first_layer, "layers", st->n_layers, "fwd_s", st->fwd_s,
                                "bwd_s", st->bwd_s, "recomp_s", st->recomp_s, "busy_frac",
                                st->busy_frac, "static_bytes", (json_int_t)st->static_mem,
                                "peak_act_bytes", (json_int_t)st->peak_act, "peak_bytes",
                                (json_int_t)st->peak_mem, "capacity_bytes", st->capacity, "fits",
                                st->fits);
        bad |= json_array_append_new(arr, row);
    }
    bad |= json_object_set_new(o, "stages", arr);
    if (p->has_sens) {
        json_t *sens = json_object();
        if (!sens)
            bad = 1;
        for (int k = 0; sens && k < ANA_KNOB_N; k++)
            bad |= json_object_set_new(sens, ana_knob_names[k],
                                       isnan(p->sens[k]) ? json_null() : json_real(p->sens[k]));
        bad |= json_object_set_new(o, "sensitivity", sens);
    }
    return ps_json_print(o, f, bad);
}

int ana_prediction_print(const struct ana_prediction *p, enum ana_fmt fmt, FILE *f)
{
    static const struct ana_printers pr = { print_table, print_csv, print_json };
    return ana_print_as(fmt, &pr, p, f);
}
