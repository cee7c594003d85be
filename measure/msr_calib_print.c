/* msr_calib_print: the calibration report, as a table, a long CSV or JSON. */
#include "analysis/ana_format.h"
#include "measure/msr_calib.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

static double us(double s) { return s * 1e6; }

static void bytes_str(double b, char *buf, size_t n)
{
    if (b >= 1 << 20)
        snprintf(buf, n, "%.1f MiB", b / (1 << 20));
    else if (b >= 1024)
        snprintf(buf, n, "%.0f KiB", b / 1024);
    else
        snprintf(buf, n, "%.0f B", b);
}

static void print_fit_cols(FILE *f, const struct msr_fit *fit)
{
    fprintf(f, " %10.2f %10.4f %8.5f %7.1f%%\n", us(fit->a), us(fit->b), fit->r2,
            100 * fit->max_rel);
}

static double spread(const struct msr_stat *s, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++)
        if (s[i].med > 0 && (s[i].p75 - s[i].p25) / s[i].med > worst)
            worst = (s[i].p75 - s[i].p25) / s[i].med;
    return worst;
}

static void print_table(const void *obj, FILE *f)
{
    const struct msr_calib *c = obj;
    fprintf(f, "calibration     %s (%d layers) on cpu %d, OpenBLAS %s, %s\n", c->spec,
            c->n_layers, c->cpu, c->blas, c->stamp);
    fprintf(f, "micro-batches   ");
    for (int i = 0; i < c->n_sizes; i++)
        fprintf(f, "%s%d", i ? "," : "", c->sizes[i]);
    fprintf(f, "; %d timed repetitions of a GPipe step's phases each after %d warm-up "
            "(median, spread p25-p75)\n", c->repeats, c->warmup);
    fprintf(f, "profile batch   %d (the other sizes as points)\n", c->ref_batch);
    fprintf(f, "\nper layer kind: time = a + b*n (least squares, relative weights)\n");
    fprintf(f, "%-34s %6s %-9s %10s %10s %8s %8s\n", "group", "layers", "op", "a us",
            "b us/smp", "R2", "max|res|");
    for (int g = 0; g < c->n_groups; g++)
        for (int op = 0; op < MSR_CALIB_NOPS; op++) {
            fprintf(f, "%-34s %6d %-9s", op ? "" : c->groups[g].label, c->groups[g].n_layers,
                    msr_calib_op_name((enum msr_calib_op)op));
            print_fit_cols(f, &c->groups[g].fit[op]);
        }
    fprintf(f, "\nper layer: median us at each micro-batch size, fit, worst spread\n");
    fprintf(f, "%-10s %-9s", "layer", "op");
    for (int i = 0; i < c->n_sizes; i++) {
        char h[16];
        snprintf(h, sizeof h, "n=%d", c->sizes[i]);
        fprintf(f, " %9s", h);
    }
    fprintf(f, " %10s %10s %8s %8s %7s\n", "a us", "b us/smp", "R2", "max|res|", "spread");
    for (int l = 0; l < c->n_layers; l++) {
        const struct msr_calib_layer *cl = &c->layers[l];
        for (int op = 0; op < MSR_CALIB_NOPS; op++) {
            fprintf(f, "%-10s %-9s", op ? "" : cl->name, msr_calib_op_name((enum msr_calib_op)op));
            for (int i = 0; i < c->n_sizes; i++) {
                char cell[16];
                snprintf(cell, sizeof cell, "%.1f", us(cl->t[op][i].med));
                fprintf(f, " %9s", cell);
            }
            fprintf(f, " %10.2f %10.4f %8.5f %7.1f%% %6.1f%%\n", us(cl->fit[op].a),
                    us(cl->fit[op].b), cl->fit[op].r2, 100 * cl->fit[op].max_rel,
                    100 * spread(cl->t[op], c->n_sizes));
        }
    }
    double params = 0;
    for (int l = 0; l < c->n_layers; l++)
        params += c->layers[l].params;
    char np[32], ut[32];
    ps_human_count(params, np, sizeof np);
    ps_human_seconds(c->update_s, ut, sizeof ut);
    fprintf(f, "\nupdate          SGD of %s parameter%s: %s -> mem_bandwidth %.3g B/s "
            "(the simulator's 2 x 8 B/param)\n", np, params == 1 ? "" : "s", ut, c->update_bw);
    fprintf(f, "device          dense GEMM 256x1024x1024: %.1f GFLOP/s; FLOP model over dense "
            "layers: %.1f GFLOP/s, batch_half %.2f, overhead %.2f us, R2 %.4f\n",
            c->gemm_flops * 1e-9, c->fit_rate * 1e-9, c->fit_batch_half, us(c->fit_overhead),
            c->fit_r2);
    fprintf(f, "hand-off        64 B one way: %.2f us receiver polling (p25-p75 %.2f-%.2f), "
            "%.2f us receiver asleep\n", us(c->handoff_spin.med), us(c->handoff_spin.p25),
            us(c->handoff_spin.p75), us(c->handoff_sleep.med));
    char lo[32], hi[32];
    bytes_str(c->xfer_bytes[0], lo, sizeof lo);
    bytes_str(c->xfer_bytes[c->n_xfer - 1], hi, sizeof hi);
    char slope[64];
    if (c->xfer_fit.b > 0)
        snprintf(slope, sizeof slope, "bytes / %.2f GB/s", 1e-9 / c->xfer_fit.b);
    else /* noise over these sizes: no bandwidth to read off the fit */
        snprintf(slope, sizeof slope, "bytes x %.3g us/MB (not positive)",
                 us(c->xfer_fit.b) * 1e6);
    fprintf(f, "transfer        send copy + receive copy: t = %.2f us + %s "
            "(R2 %.4f, max|res| %.1f%%) over %s..%s; memcpy %.2f GB/s\n", us(c->xfer_fit.a),
            slope, c->xfer_fit.r2, 100 * c->xfer_fit.max_rel, lo, hi, c->memcpy_bw * 1e-9);
    if (msr_calib_messages(c))
        fprintf(f, "messages        the workers' copies in the steps: send %.2f us + %.3f ns/B "
                "(%d), receive %.2f us + %.3f ns/B (%d); link latency %.2f us from a send's "
                "end, no bandwidth limit\n", us(c->msg_send_fit.a), c->msg_send_fit.b * 1e9,
                c->n_msg_send, us(c->msg_recv_fit.a), c->msg_recv_fit.b * 1e9, c->n_msg_recv,
                us(c->link_latency));
    else {
        /* where the link's figures came from (msr_calib.c): the steps'
         * hand-offs when pipelined, else the transfer fit, or its stand-ins */
        int hand = c->pipelined && c->handoff_fit.n >= 2 && c->handoff_fit.b > 0;
        const char *lat = hand ? " (the steps' hand-offs)"
                          : c->xfer_fit.a > 0 ? ""
                                              : " (the polling hand-off: the transfer fit's "
                                                "intercept is not positive)";
        const char *bw = hand ? "" : msr_calib_xfer_slope_ok(c) ? ""
                                   : c->memcpy_bw > 0 && c->xfer_fit.b > 0
                                        ? " (memcpy / 2, a copy on send and one on receive: "
                                          "the transfer fit's slope gives a rate faster than "
                                          "memcpy, noise)"
                                   : c->memcpy_bw > 0 ? " (memcpy / 2, a copy on send and one "
                                                        "on receive: the transfer fit's slope "
                                                        "is not positive)"
                                                      : " (a stand-in: neither the transfer "
                                                        "fit's slope nor memcpy gave a rate)";
        fprintf(f, "link            latency %.2f us%s, bandwidth %.2f GB/s%s, full duplex, one "
                "per pair of the %d cores (the topology written: no shared bus)\n",
                us(c->link_latency), lat, c->link_bandwidth * 1e-9, bw, c->n_cores);
    }
    fprintf(f, "memory          %.2f GiB per core (MemTotal over %d cores)\n",
            c->memory_per_core / PS_GIB, c->n_cores);
    fprintf(f, "took            %.2f s\n", c->wall_s);
}

static void csv_row(FILE *f, const char *scope, const char *name, const char *op, double n,
                    const struct msr_stat *s, double median, const struct msr_fit *fit,
                    int i)
{
    double model = fit->a + fit->b * n;
    /* every figure exact (errors-and-outputs.md: CSV is), as the JSON */
    fprintf(f, "%s,%s,%s,%s,%s,", scope, name, op, PS_DBL(n), PS_DBL(us(median)));
    if (s)
        fprintf(f, "%s,%s,%s,%s,", PS_DBL(us(s->p25)), PS_DBL(us(s->p75)), PS_DBL(us(s->min)),
                PS_DBL(us(s->max)));
    else
        fputs(",,,,", f);
    fprintf(f, "%s,%s,%s,%s,%s\n", PS_DBL(us(model)),
            PS_DBL(median > 0 ? 100 * fit->resid[i] / median : 0), PS_DBL(us(fit->a)),
            PS_DBL(us(fit->b)), PS_DBL(fit->r2));
}

static void print_csv(const void *obj, FILE *f)
{
    const struct msr_calib *c = obj;
    /* one header row first (PREFIX-fit.csv puts the run's line before it) */
    fprintf(f, "scope,name,op,n,median_us,p25_us,p75_us,min_us,max_us,fit_us,resid_pct,a_us,"
               "b_us,r2\n");
    for (int l = 0; l < c->n_layers; l++) {
        const struct msr_calib_layer *cl = &c->layers[l];
        for (int op = 0; op < MSR_CALIB_NOPS; op++)
            for (int i = 0; i < c->n_sizes; i++)
                csv_row(f, "layer", cl->name, msr_calib_op_name((enum msr_calib_op)op),
                        c->sizes[i], &cl->t[op][i], cl->t[op][i].med, &cl->fit[op], i);
        for (int i = 0; i < c->n_sizes; i++)
            csv_row(f, "layer", cl->name, "F+R", c->sizes[i], &cl->kept[i], cl->kept[i].med,
                    &cl->kept_fit, i);
        csv_row(f, "layer", cl->name, "U", 0, &cl->update, cl->update.med,
                &(struct msr_fit){ .a = cl->update.med }, 0);
    }
    for (int g = 0; g < c->n_groups; g++)
        for (int op = 0; op < MSR_CALIB_NOPS; op++) {
            const struct msr_fit *fit = &c->groups[g].fit[op];
            for (int i = 0; i < c->n_sizes; i++)
                csv_row(f, "kind", c->groups[g].label, msr_calib_op_name((enum msr_calib_op)op),
                        c->sizes[i], NULL, fit->a + fit->b * c->sizes[i] + fit->resid[i], fit,
                        i);
        }
    for (int i = 0; i < c->n_xfer; i++)
        csv_row(f, "link", "transfer", "bytes", c->xfer_bytes[i], &c->xfer[i], c->xfer[i].med,
                &c->xfer_fit, i);
    csv_row(f, "link", "handoff-asleep", "bytes", 64, &c->handoff_sleep, c->handoff_sleep.med,
            &(struct msr_fit){ .a = c->handoff_sleep.med }, 0);
}

/* One CSV row as a JSON object (same names and units; null where the CSV
 * field is empty). */
static json_t *json_row(const char *scope, const char *name, const char *op, double n,
                        const struct msr_stat *s, double median, const struct msr_fit *fit,
                        int i)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:f, s:f}", "scope", scope, "name", name, "op", op,
                          "n", n, "median_us", us(median));
    if (!o)
        return NULL;
    static const char *const stat_keys[] = { "p25_us", "p75_us", "min_us", "max_us" };
    double sv[4] = { s ? s->p25 : 0, s ? s->p75 : 0, s ? s->min : 0, s ? s->max : 0 };
    int bad = 0;
    for (int k = 0; k < 4; k++)
        bad |= json_object_set_new(o, stat_keys[k], s ? json_real(us(sv[k])) : json_null());
    bad |= json_object_set_new(o, "fit_us", json_real(us(fit->a + fit->b * n)));
    bad |= json_object_set_new(o, "resid_pct",
                               json_real(median > 0 ? 100 * fit->resid[i] / median : 0));
    bad |= json_object_set_new(o, "a_us", json_real(us(fit->a)));
    bad |= json_object_set_new(o, "b_us", json_real(us(fit->b)));
    bad |= json_object_set_new(o, "r2", json_real(fit->r2));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The CSV's rows, then the summary the table ends with, in SI units. */
static int print_json(const void *obj, FILE *f)
{
    const struct msr_calib *c = obj;
    ps_json_begin(); /* a NULL from json_pack or a failed dump may be out of memory */
    json_t *sizes = json_array(), *rows = json_array();
    int bad = !sizes || !rows;
    for (int i = 0; sizes && i < c->n_sizes; i++)
        bad |= json_array_append_new(sizes, json_integer(c->sizes[i]));
    for (int l = 0; rows && l < c->n_layers; l++) {
        const struct msr_calib_layer *cl = &c->layers[l];
        for (int op = 0; op < MSR_CALIB_NOPS; op++)
            for (int i = 0; i < c->n_sizes; i++)
                bad |= json_array_append_new(
                    rows, json_row("layer", cl->name, msr_calib_op_name((enum msr_calib_op)op),
                                   c->sizes[i], &cl->t[op][i], cl->t[op][i].med, &cl->fit[op],
                                   i));
        for (int i = 0; i < c->n_sizes; i++)
            bad |= json_array_append_new(rows, json_row("layer", cl->name, "F+R", c->sizes[i],
                                                        &cl->kept[i], cl->kept[i].med,
                                                        &cl->kept_fit, i));
        bad |= json_array_append_new(rows, json_row("layer", cl->name, "U", 0, &cl->update,
                                                    cl->update.med,
                                                    &(struct msr_fit){ .a = cl->update.med },
                                                    0));
    }
    for (int g = 0; rows && g < c->n_groups; g++)
        for (int op = 0; op < MSR_CALIB_NOPS; op++) {
            const struct msr_fit *fit = &c->groups[g].fit[op];
            for (int i = 0; i < c->n_sizes; i++)
                bad |= json_array_append_new(
                    rows, json_row("kind", c->groups[g].label,
                                   msr_calib_op_name((enum msr_calib_op)op), c->sizes[i], NULL,
                                   fit->a + fit->b * c->sizes[i] + fit->resid[i], fit, i));
        }
    for (int i = 0; rows && i < c->n_xfer; i++)
        bad |= json_array_append_new(rows, json_row("link", "transfer", "bytes",
                                                    c->xfer_bytes[i], &c->xfer[i],
                                                    c->xfer[i].med, &c->xfer_fit, i));
    if (rows)
        bad |= json_array_append_new(
            rows, json_row("link", "handoff-asleep", "bytes", 64, &c->handoff_sleep,
                           c->handoff_sleep.med, &(struct msr_fit){ .a = c->handoff_sleep.med },
                           0));
    double params = 0;
    for (int l = 0; l < c->n_layers; l++)
        params += c->layers[l].params;
    /* a slope that is not positive has no bandwidth: null, as the table's
     * "(not positive)" (errors-and-outputs.md, missing values; it was 0) */
    double xfer_bw = c->xfer_fit.b > 0 ? 1 / c->xfer_fit.b : 0;
    json_t *o = json_pack(
        "{s:s, s:i, s:i, s:s, s:s, s:o, s:i, s:i, s:i, s:o,"
        " s:{s:f, s:f, s:f},"
        " s:{s:f, s:f, s:f, s:f, s:f},"
        " s:{s:f, s:f, s:f, s:f},"
        " s:{s:f, s:o, s:f, s:f, s:f},"
        " s:{s:f, s:f, s:i}, s:f, s:f}",
        "spec", c->spec, "layers", c->n_layers, "cpu", c->cpu, "blas", c->blas, "stamp",
        c->stamp, "micro_batches", sizes ? sizes : json_null(), "repeats", c->repeats,
        "warmup", c->warmup, "profile_batch", c->ref_batch, "rows", rows ? rows : json_null(),
        "update", "params", params, "s", c->update_s, "mem_bandwidth_bytes_per_s",
        c->update_bw,
        "device", "gemm_flops", c->gemm_flops, "fit_flops", c->fit_rate, "batch_half",
        c->fit_batch_half, "overhead_s", c->fit_overhead, "r2", c->fit_r2,
        "handoff", "polling_s", c->handoff_spin.med, "polling_p25_s", c->handoff_spin.p25,
        "polling_p75_s", c->handoff_spin.p75, "asleep_s", c->handoff_sleep.med,
        "transfer", "latency_s", c->xfer_fit.a, "bandwidth_bytes_per_s",
        xfer_bw > 0 && isfinite(xfer_bw) ? json_real(xfer_bw) : json_null(), "r2",
        c->xfer_fit.r2, "max_res", c->xfer_fit.max_rel, "memcpy_bytes_per_s", c->memcpy_bw,
        "link", "latency_s", c->link_latency, "bandwidth_bytes_per_s", c->link_bandwidth,
        "cores", c->n_cores, "memory_per_core_bytes", c->memory_per_core, "wall_s", c->wall_s);
    if (!o)
        return ps_error(PS_ENOMEM, "out of memory"); /* "s:o" took sizes and rows */
    return ps_json_print(o, f, bad);
}

int msr_calib_print(const struct msr_calib *c, enum ana_fmt fmt, FILE *f)
{
    static const struct ana_printers pr = { print_table, print_csv, print_json };
    return ana_print_as(fmt, &pr, c, f);
}
