/* ana_compare_print: the comparison as a table, CSV or JSON. */
#include "analysis/ana_format.h"
#include "analysis/ana_compare.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

static void label(const struct trc_event *e, char *buf, size_t n)
{
    struct sch_op op = { e->kind, e->stage, e->mb };
    sch_op_label(&op, buf, (int)n);
}

static void print_table(const void *obj, FILE *f)
{
    const struct ana_compare *c = obj;
    fprintf(f, "ops aligned     %zu (%d device%s, %d stage%s, %d micro-batch%s)\n", c->n_ops,
            c->n_devices, c->n_devices == 1 ? "" : "s", c->n_stages, c->n_stages == 1 ? "" : "s",
            c->n_micro, c->n_micro == 1 ? "" : "es");
    char ts[32], tm[32];
    ps_human_seconds(c->makespan_sim * 1e-9, ts, sizeof ts);
    ps_human_seconds(c->makespan_meas * 1e-9, tm, sizeof tm);
    /* a figure that does not exist (no ops, no duration) is '-', not 0 */
    if (isfinite(c->makespan_err))
        fprintf(f, "makespan        simulated %s, measured %s, error %+.2f%%\n", ts, tm,
                c->makespan_err * 100);
    else
        fprintf(f, "makespan        simulated %s, measured %s, error -\n", ts, tm);
    if (c->n_ops)
        fprintf(f, "bubble          simulated %.2f%%, measured %.2f%%, error %+.2f points\n",
                c->bubble_sim * 100, c->bubble_meas * 100,
                (c->bubble_meas - c->bubble_sim) * 100);
    else
        fprintf(f, "bubble          - (no ops)\n");
    if (c->n_dur)
        fprintf(f, "op duration     |error| median %.2f%%, p95 %.2f%%", c->dur_err_median * 100,
                c->dur_err_p95 * 100);
    else
        fprintf(f, "op duration     |error| - (no op has a simulated duration)");
    if (c->p95_sim.end_ns > c->p95_sim.start_ns) { /* which op: a short one, often */
        char lab[32], ds[32], dm[32];
        label(&c->p95_sim, lab, sizeof lab);
        ps_human_seconds((double)(c->p95_sim.end_ns - c->p95_sim.start_ns) * 1e-9, ds, sizeof ds);
        ps_human_seconds((double)(c->p95_meas.end_ns - c->p95_meas.start_ns) * 1e-9, dm,
                         sizeof dm);
        fprintf(f, " (%s, device %d: %s sim, %s meas)", lab, c->p95_sim.device, ds, dm);
    }
    fputc('\n', f);
    ps_human_seconds((double)c->drift_median_ns * 1e-9, ts, sizeof ts);
    ps_human_seconds((double)c->drift_max_ns * 1e-9, tm, sizeof tm);
    if (c->n_ops)
        fprintf(f, "start drift     median %s, max %s\n", ts, tm);
    else
        fprintf(f, "start drift     - (no ops)\n");
    fprintf(f, "\n%6s %9s %9s %7s %14s %14s %7s\n", "device", "busy sim", "busy meas", "error",
            "peak act sim", "peak act meas", "error");
    for (int d = 0; d < c->n_devices; d++) {
        char as[32], am[32], pe[32] = "-"; /* no simulated peak: no relative error */
        if (c->peak_act_sim[d])
            snprintf(pe, sizeof pe, "%+6.2f%%", 100.0 * (double)(c->peak_act_meas[d] -
                                                                 c->peak_act_sim[d]) /
                                                    (double)c->peak_act_sim[d]);
        ps_human_bytes((double)c->peak_act_sim[d], as, sizeof as);
        ps_human_bytes((double)c->peak_act_meas[d], am, sizeof am);
        fprintf(f, "%6d %8.2f%% %8.2f%% %+6.2f %14s %14s %7s\n", d, c->busy_sim[d] * 100,
                c->busy_meas[d] * 100, (c->busy_meas[d] - c->busy_sim[d]) * 100, as, am, pe);
    }
    fprintf(f, "\nlargest discrepancies (measured - simulated):\n");
    for (int i = 0; i < c->n_top; i++) {
        const struct ana_discrepancy *d = &c->top[i];
        char lab[32], e[32];
        label(&d->sim, lab, sizeof lab);
        ps_human_seconds_delta((double)d->error_ns * 1e-9, e, sizeof e);
        fprintf(f, "%3d. %-8s stage %-3d device %-3d %12s  %s\n", i + 1, lab, d->sim.stage,
                d->sim.device, e, ana_cause_name(d->cause, d->error_ns));
    }
    if (!c->n_top)
        fprintf(f, c->n_ops ? "  none: the traces agree op for op\n"
                            : "  none: the traces have no ops to compare\n");
}

/* v exactly, or "" where it does not exist (NaN, or !have). */
#define csv_dbl(v, have) (!(have) || isnan(v) ? "" : PS_DBL(v))

static void print_csv(const void *obj, FILE *f)
{
    const struct ana_compare *c = obj;
    fprintf(f, "metric,device,op,stage,mb,simulated,measured,error,cause\n");
    /* a figure that does not exist is an empty field */
    fprintf(f, "makespan_ns,,,,,%lld,%lld,%s,\n", (long long)c->makespan_sim,
            (long long)c->makespan_meas, csv_dbl(c->makespan_err, 1));
    fprintf(f, "bubble,,,,,%s,%s,%s,\n", csv_dbl(c->bubble_sim, c->n_ops > 0),
            csv_dbl(c->bubble_meas, c->n_ops > 0),
            csv_dbl(c->bubble_meas - c->bubble_sim, c->n_ops > 0));
    fprintf(f, "op_duration_rel_error_median,,,,,,,%s,\n", csv_dbl(c->dur_err_median, 1));
    fprintf(f, "op_duration_rel_error_p95,,,,,,,%s,\n", csv_dbl(c->dur_err_p95, 1));
    if (c->n_ops) {
        fprintf(f, "start_drift_median_ns,,,,,,,%lld,\n", (long long)c->drift_median_ns);
        fprintf(f, "start_drift_max_ns,,,,,,,%lld,\n", (long long)c->drift_max_ns);
    } else {
        fprintf(f, "start_drift_median_ns,,,,,,,,\nstart_drift_max_ns,,,,,,,,\n");
    }
    for (int d = 0; d < c->n_devices; d++) {
        fprintf(f, "busy,%d,,,,%s,%s,%s,\n", d, PS_DBL(c->busy_sim[d]),
                PS_DBL(c->busy_meas[d]), PS_DBL(c->busy_meas[d] - c->busy_sim[d]));
        fprintf(f, "peak_act_bytes,%d,,,,%lld,%lld,%lld,\n", d, (long long)c->peak_act_sim[d],
                (long long)c->peak_act_meas[d],
                (long long)(c->peak_act_meas[d] - c->peak_act_sim[d]));
    }
    for (int i = 0; i < c->n_top; i++) {
        const struct ana_discrepancy *d = &c->top[i];
        char lab[32];
        label(&d->sim, lab, sizeof lab);
        char mb[16] = ""; /* an op of no micro-batch (U, AR): empty, as missing values are */
        if (d->sim.mb >= 0)
            snprintf(mb, sizeof mb, "%d", d->sim.mb);
        fprintf(f, "discrepancy_ns,%d,%s,%d,%s,,,%lld,%s\n", d->sim.device, lab, d->sim.stage,
                mb, (long long)d->error_ns, ana_cause_name(d->cause, d->error_ns));
    }
}

static int print_json(const void *obj, FILE *f)
{
    const struct ana_compare *c = obj;
    ps_json_begin(); /* a failed dump may be out of memory */
    json_t *o = json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "ops",
                          (json_int_t)c->n_ops, "makespan_sim_ns", (json_int_t)c->makespan_sim,
                          "makespan_meas_ns", (json_int_t)c->makespan_meas, "makespan_err",
                          isfinite(c->makespan_err) ? c->makespan_err : 0, "bubble_sim",
                          c->bubble_sim, "bubble_meas", c->bubble_meas, "op_dur_err_median",
                          c->n_dur ? c->dur_err_median : 0, "op_dur_err_p95",
                          c->n_dur ? c->dur_err_p95 : 0, "drift_median_ns",
                          (json_int_t)c->drift_median_ns, "drift_max_ns",
                          (json_int_t)c->drift_max_ns);
    if (o) { /* a figure that does not exist is null */
        if (!isfinite(c->makespan_err))
            json_object_set_new(o, "makespan_err", json_null());
        if (!c->n_ops) {
            json_object_set_new(o, "bubble_sim", json_null());
            json_object_set_new(o, "bubble_meas", json_null());
            json_object_set_new(o, "drift_median_ns", json_null());
            json_object_set_new(o, "drift_max_ns", json_null());
        }
        if (!c->n_dur) {
            json_object_set_new(o, "op_dur_err_median", json_null());
            json_object_set_new(o, "op_dur_err_p95", json_null());
        }
    }
    json_t *dev = json_array(), *top = json_array();
    if (!o || !dev || !top) {
        json_decref(o);
        json_decref(dev);
        json_decref(top);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int d = 0; d < c->n_devices; d++)
        json_array_append_new(dev, json_pack("{s:i, s:f, s:f, s:I, s:I}", "device", d,
                                             "busy_sim", c->busy_sim[d], "busy_meas",
                                             c->busy_meas[d], "peak_act_sim",
                                             (json_int_t)c->peak_act_sim[d], "peak_act_meas",
                                             (json_int_t)c->peak_act_meas[d]));
    for (int i = 0; i < c->n_top; i++) {
        const struct ana_discrepancy *d = &c->top[i];
        char lab[32];
        label(&d->sim, lab, sizeof lab);
        json_t *row = json_pack("{s:s, s:i, s:i, s:o, s:I, s:s}", "op", lab, "device",
                                d->sim.device, "stage", d->sim.stage, "mb",
                                d->sim.mb >= 0 ? json_integer(d->sim.mb) : json_null(),
                                "error_ns", (json_int_t)d->error_ns, "cause",
                                ana_cause_name(d->cause, d->error_ns));
        json_array_append_new(top, row);
    }
    json_object_set_new(o, "devices", dev);
    json_object_set_new(o, "discrepancies", top);
    int rc = ps_json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(o);
    if (rc && ps_json_oom())
        return ps_error(PS_ENOMEM, "out of memory writing JSON");
    return rc ? ps_error(PS_EIO, "write error") : 0;
}

int ana_compare_print(const struct ana_compare *c, enum ana_fmt fmt, FILE *f)
{
    static const struct ana_printers pr = { print_table, print_csv, print_json };
    return ana_print_as(fmt, &pr, c, f);
}
