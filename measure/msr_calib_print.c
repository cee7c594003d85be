/* msr_calib_print: the calibration report, as a table or a long CSV. */
#include "analysis/ana_format.h"
#include "measure/msr_calib.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

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
    fprintf(f, "\nupdate          SGD of %.0f params: %.3f ms -> mem_bandwidth %.3g B/s "
            "(the simulator's 2 x 8 B/param)\n", params, c->update_s * 1e3, c->update_bw);
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
    fprintf(f, "transfer        send copy + receive copy: t = %.2f us + bytes / %.2f GB/s "
            "(R2 %.4f, max|res| %.1f%%) over %s..%s; memcpy %.2f GB/s\n", us(c->xfer_fit.a),
            c->xfer_fit.b > 0 ? 1e-9 / c->xfer_fit.b : 0, c->xfer_fit.r2,
            100 * c->xfer_fit.max_rel, lo, hi, c->memcpy_bw * 1e-9);
    fprintf(f, "link            latency %.2f us, bandwidth %.2f GB/s, shared (one memory bus "
            "for %d cores)\n", us(c->link_latency), c->link_bandwidth * 1e-9, c->n_cores);
    fprintf(f, "memory          %.2f GiB per core (MemTotal over %d cores)\n",
            c->memory_per_core / PS_GIB, c->n_cores);
    fprintf(f, "took            %.2f s\n", c->wall_s);
}

static void csv_row(FILE *f, const char *scope, const char *name, const char *op, double n,
                    const struct msr_stat *s, double median, const struct msr_fit *fit,
                    int i)
{
    double model = fit->a + fit->b * n;
    fprintf(f, "%s,%s,%s,%.17g,%.6f,", scope, name, op, n, us(median));
    if (s)
        fprintf(f, "%.6f,%.6f,%.6f,%.6f,", us(s->p25), us(s->p75), us(s->min), us(s->max));
    else
        fputs(",,,,", f);
    fprintf(f, "%.6f,%.4f,%.6f,%.9f,%.6f\n", us(model),
            median > 0 ? 100 * fit->resid[i] / median : 0, us(fit->a), us(fit->b), fit->r2);
}

static void print_csv(const void *obj, FILE *f)
{
    const struct msr_calib *c = obj;
    fprintf(f, "# pipesim calibrate %s on cpu %d, OpenBLAS %s, %d repeats, %s\n", c->spec,
            c->cpu, c->blas, c->repeats, c->stamp);
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

int msr_calib_print(const struct msr_calib *c, enum ana_fmt fmt, FILE *f)
{
    static const struct ana_printers pr = { print_table, print_csv, NULL };
    return ana_print_as(fmt, &pr, c, f);
}
