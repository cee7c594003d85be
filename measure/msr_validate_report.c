/* msr_validate_report: accuracy figures against their targets, the Markdown
 * report and its plot (see msr_validate.h). */
#include "measure/msr_calib_plot.h"
#include "analysis/ana_plot.h"
#include "measure/msr_validate.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_gnuplot.h"
#include "base/ps_util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void point_name(const struct msr_vpoint *pt, char *buf, size_t n)
{
    snprintf(buf, n, "%s%sK=%d M=%d %s", pt->schedule, *pt->schedule ? " " : "", pt->K, pt->M,
             sch_remat_name(pt->remat));
}

static void op_name(const struct trc_event *e, char *buf, size_t n)
{
    struct sch_op op = { e->kind, e->stage, e->mb };
    char lab[32];
    sch_op_label(&op, lab, sizeof lab);
    snprintf(buf, n, "%s of stage %d on device %d", lab, e->stage, e->device);
}

static void print_top(const struct ana_compare *c, int n, const char *indent, FILE *f)
{
    for (int k = 0; k < c->n_top && k < n; k++) {
        const struct ana_discrepancy *d = &c->top[k];
        char o[96], e[32];
        op_name(&d->sim, o, sizeof o);
        ps_human_seconds_delta((double)d->error_ns * 1e-9, e, sizeof e);
        fprintf(f, "%s%d. %-30s %12s  %s\n", indent, k + 1, o, e,
                ana_cause_name(d->cause, d->error_ns));
    }
}

/* Over the points whose |makespan error| exceeds lim: the discrepancies
 * summed by op kind and cause, largest first. */
static void print_causes(const struct msr_vcheck *v, int fastest, double lim, FILE *f)
{
    struct agg { int kind, cause, sign, count; double s; } a[64];
    int n = 0, pts = 0;
    for (int i = 0; i < v->n_points; i++) {
        const struct ana_compare *c = fastest ? v->pts[i].cmp_min : v->pts[i].cmp;
        if (fabs(c->makespan_err) <= lim)
            continue;
        pts++;
        for (int k = 0; k < c->n_top; k++) {
            const struct ana_discrepancy *d = &c->top[k];
            int sign = d->error_ns > 0, j = 0;
            while (j < n && !(a[j].kind == d->sim.kind && a[j].cause == (int)d->cause &&
                              a[j].sign == sign))
                j++;
            if (j == n && n < 64)
                a[n++] = (struct agg){ d->sim.kind, (int)d->cause, sign, 0, 0 };
            if (j < n) {
                a[j].count++;
                a[j].s += (double)d->error_ns * 1e-9;
            }
        }
    }
    for (int i = 1; i < n; i++) /* by |total| */
        for (int j = i; j > 0 && fabs(a[j - 1].s) < fabs(a[j].s); j--) {
            struct agg t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
    fprintf(f, "      over the %d point%s above %.0f%%, the ten largest discrepancies of each "
            "by op and cause (the %d largest of %d):\n", pts, pts == 1 ? "" : "s", 100 * lim,
            n < 6 ? n : 6, n);
    for (int i = 0; i < n && i < 6; i++) {
        char t[32];
        ps_human_seconds_delta(a[i].s, t, sizeof t);
        fprintf(f, "        %-2s %-30s %3d ops, %12s in all\n",
                sch_op_kind_name((enum sch_op_kind)a[i].kind),
                ana_cause_name((enum ana_cause)a[i].cause, a[i].sign ? 1 : -1), a[i].count, t);
    }
}

/* judged: 0 for the fastest steps, which the targets are not set on (they
 * are on the median step): the figure and its ratio, no verdict. */
static void figure(FILE *f, const char *what, double val, double target, const char *unit,
                   double scale, const char *where, int judged)
{
    if (!(target > 0)) { /* an exact target: met by 0 alone, no ratio */
        fprintf(f, "  %-26s %8.2f%-4s target %-10s ratio %5s  %s%s%s\n", what, val * scale,
                unit, "exact", "-", !judged ? "-" : val == 0 ? "met" : "MISSED",
                where ? "  " : "", where ? where : "");
        return;
    }
    double ratio = val / target;
    fprintf(f, "  %-26s %8.2f%-4s target %6.2f%-4s ratio %5.2f  %s%s%s\n", what, val * scale,
            unit, target * scale, unit, ratio, !judged ? "-" : ratio <= 1 ? "met" : "MISSED",
            where ? "  " : "", where ? where : "");
}

/* The rounds a point ran (a validation built without any ran one). */
static int rounds_of(const struct msr_vcheck *v) { return v->rounds > 1 ? v->rounds : 1; }

int msr_accuracy_print(const struct msr_vcheck *v, const struct msr_accuracy *a, FILE *f)
{
    if (!a->n)
        return ps_error(PS_EINVAL, "no validation points");
    char w1[64], w2[64], w3[64];
    point_name(&v->pts[a->i_mk_max], w1, sizeof w1);
    point_name(&v->pts[a->i_bubble_max], w2, sizeof w2);
    point_name(&v->pts[a->i_peak_max], w3, sizeof w3);
    int j = !a->fastest;
    /* every round's steps (helper-132: "3 timed steps each" over medians of 6) */
    int timed = rounds_of(v) * v->steps;
    fprintf(f, "accuracy (%s step, %d point%s, %d timed step%s each%s)\n",
            a->fastest ? "fastest" : "median", a->n, a->n == 1 ? "" : "s", timed,
            timed == 1 ? "" : "s",
            a->fastest ? "; for reference: the targets are on the median step" : "");
    figure(f, "median |makespan error|", a->mk_median, MSR_TARGET_MAKESPAN_MEDIAN, "%", 100,
           NULL, j);
    figure(f, "max |makespan error|", a->mk_max, MSR_TARGET_MAKESPAN_MAX, "%", 100, w1, j);
    figure(f, "max |bubble error|", a->bubble_max, MSR_TARGET_BUBBLE_POINTS, " pts", 1, w2, j);
    figure(f, "max peak act. error", a->peak_max, MSR_TARGET_PEAK_ACT, "%", 100, w3, j);
    if (!a->fastest) {
        char w4[64] = "";
        if (a->i_miss_max >= 0)
            point_name(&v->pts[a->i_miss_max], w4, sizeof w4);
        fprintf(f, "  predictions outside the measured spread (model misses): %d of %d", a->n_miss,
                a->n);
        if (a->n_miss)
            fprintf(f, ", the farthest %.2f%% of its step beyond it at %s", 100 * a->miss_max, w4);
        fprintf(f, "\n");
        if (a->own_n) {
            char w5[64];
            point_name(&v->pts[a->i_own_max], w5, sizeof w5);
            fprintf(f, "  the model on the calibration's own steps (%d points at remat never and "
                    "always, no drift between them): median |error| %.2f%%, max %.2f%% at %s; "
                    "the measured steps against those steps (the machine's drift): median "
                    "%.2f%%, max %.2f%%\n", a->own_n, 100 * a->own_median, 100 * a->own_max, w5,
                    100 * a->drift_median, 100 * a->drift_max);
        }
        char w6[64], w7[64];
        point_name(&v->pts[a->i_replay_max], w6, sizeof w6);
        point_name(&v->pts[a->i_replay_bub_max], w7, sizeof w7);
        fprintf(f, "  the model on each point's own op times (its median step replayed with that "
                "step's mean op times, no calibration, no drift): |makespan error| median "
                "%.2f%%, max %.2f%% at %s (mean signed %+.2f%%); |bubble error| median %.2f, "
                "max %.2f pts at %s (mean signed %+.2f)\n", 100 * a->replay_median,
                100 * a->replay_max, w6, 100 * a->replay_mean, a->replay_bub_median,
                a->replay_bub_max, w7, a->replay_bub_mean);
        if (a->n_miss && a->mk_median <= MSR_TARGET_MAKESPAN_MEDIAN &&
            a->mk_max <= MSR_TARGET_MAKESPAN_MAX && a->bubble_max <= MSR_TARGET_BUBBLE_POINTS &&
            a->peak_max <= MSR_TARGET_PEAK_ACT)
            fprintf(f, "        (each within the targets above: the spread of a few steps is "
                    "narrower than the\n        targets, so a prediction that meets them can "
                    "still lie outside it)\n");
    }
    long csw = 0;
    double runq = 0;
    int known = 0;
    for (int i = 0; i < v->n_points; i++) {
        csw += v->pts[i].preempt_all;
        if (v->pts[i].runq_frac >= 0) {
            runq = v->pts[i].runq_frac > runq ? v->pts[i].runq_frac : runq;
            known = 1;
        }
    }
    if (a->fastest)
        return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
    if (known && runq > MSR_BUSY_RUNQ)
        fprintf(f, "  note: the machine was busy: at one point the workers waited %.0f%% of "
                "their time for a CPU\n        (%ld involuntary context switches in all); "
                "measured times, and a MISSED target,\n        then say as much about the "
                "machine as about the simulator (quiet machine, --realtime)\n", 100 * runq,
                csw);
    if (a->mk_median > MSR_TARGET_MAKESPAN_MEDIAN) {
        fprintf(f, "  missed median makespan target:\n");
        print_causes(v, a->fastest, MSR_TARGET_MAKESPAN_MEDIAN, f);
    }
    if (a->mk_max > MSR_TARGET_MAKESPAN_MAX) {
        const struct msr_vpoint *pt = &v->pts[a->i_mk_max];
        const struct ana_compare *c = a->fastest ? pt->cmp_min : pt->cmp;
        fprintf(f, "  missed max makespan target at %s (%+.2f%%), largest discrepancies:\n", w1,
                100 * c->makespan_err);
        print_top(c, 5, "      ", f);
    }
    if (a->bubble_max > MSR_TARGET_BUBBLE_POINTS) {
        const struct msr_vpoint *pt = &v->pts[a->i_bubble_max];
        const struct ana_compare *c = a->fastest ? pt->cmp_min : pt->cmp;
        fprintf(f, "  missed bubble target at %s (%.2f%% sim, %.2f%% meas), largest "
                "discrepancies:\n", w2, 100 * c->bubble_sim, 100 * c->bubble_meas);
        print_top(c, 5, "      ", f);
    }
    if (a->peak_max > MSR_TARGET_PEAK_ACT) {
        const struct msr_vpoint *pt = &v->pts[a->i_peak_max];
        fprintf(f, "  missed peak memory target at %s: per device peak activation "
                "simulated / measured:", w3);
        for (int d = 0; d < pt->cmp->n_devices; d++) {
            char ps[32], pm[32];
            ps_human_bytes((double)pt->cmp->peak_act_sim[d], ps, sizeof ps);
            ps_human_bytes((double)pt->cmp->peak_act_meas[d], pm, sizeof pm);
            fprintf(f, "%s %s / %s", d ? "," : "", ps, pm);
        }
        fprintf(f, "\n");
    }
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}

/* ---- the plot ---- */

/* Labelled ticks of a log axis over [lo, hi] (ps_gnuplot_log_tics). */
static void log_tics(FILE *f, const char *axis, double lo, double hi)
{
    char tics[4096];
    ps_gnuplot_log_tics(tics, sizeof tics, axis, lo, hi);
    fputs(tics, f);
}

static int write_plot(const struct msr_vcheck *v, const char *png, struct ana_plot_batch *b)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = ps_memstream_open(&buf, &len);
    if (!f)
        return ps_error(PS_ENOMEM, "out of memory");
    double lo = INFINITY, hi = 0, bhi = 1;
    for (int i = 0; i < v->n_points; i++) {
        const struct msr_vpoint *pt = &v->pts[i];
        double xs[] = { pt->step_sim_s, pt->step_min_s, pt->step_max_s };
        for (int k = 0; k < 3; k++) {
            lo = xs[k] * 1e3 < lo ? xs[k] * 1e3 : lo;
            hi = xs[k] * 1e3 > hi ? xs[k] * 1e3 : hi;
        }
        bhi = fmax(bhi, 100 * fmax(pt->cmp->bubble_sim, pt->cmp->bubble_meas));
    }
    for (int k = 1; k <= 2; k++) { /* one datablock per K shown (K=1, K>=2) */
        fprintf(f, "$k%d << EOD\n", k);
        for (int i = 0; i < v->n_points; i++) {
            const struct msr_vpoint *pt = &v->pts[i];
            if ((k == 1) != (pt->K == 1))
                continue;
            fprintf(f, "%.6f %.6f %.6f %.6f %.4f %.4f\n", pt->step_sim_s * 1e3,
                    pt->step_med_s * 1e3, pt->step_min_s * 1e3, pt->step_max_s * 1e3,
                    100 * pt->cmp->bubble_sim, 100 * pt->cmp->bubble_meas);
        }
        fprintf(f, "EOD\n");
    }
    log_tics(f, "x", lo / 1.15, hi * 1.15);
    log_tics(f, "y", lo / 1.15, hi * 1.15);
    char spec[sizeof v->spec];
    ana_plot_clean(spec, sizeof spec, v->spec); /* a file: net's path */
    fprintf(f, "set multiplot layout 1,2 title \"%s, %s, batch %d: predicted vs measured "
               "(median of %d steps, bars min-max)\" noenhanced\n"
               "set key top left\nset grid\nset logscale xy\nset xrange [%g:%g]\n"
               "set yrange [%g:%g]\nset size ratio -1\n"
               "set xlabel 'predicted step time (ms)'\nset ylabel 'measured step time (ms)'\n"
               "plot x title 'measured = predicted' lc rgb '#999999', "
               "$k1 using 1:2:3:4 with yerrorbars pt 7 title 'K=1', "
               "$k2 using 1:2:3:4 with yerrorbars pt 5 title 'K>1'\n"
               "unset logscale\nset xtics auto\nset ytics auto\nset xrange [0:%g]\n"
               "set yrange [0:%g]\n"
               "set xlabel 'predicted bubble (%%)'\n"
               "set ylabel 'measured bubble (%%)'\n"
               "plot x title 'measured = predicted' lc rgb '#999999', "
               "$k1 using 5:6 with points pt 7 title 'K=1', "
               "$k2 using 5:6 with points pt 5 title 'K>1'\nunset multiplot\n",
            spec, v->schedule, v->batch, rounds_of(v) * v->steps, lo / 1.15, hi * 1.15,
            lo / 1.15, hi * 1.15,
            bhi * 1.1, bhi * 1.1);
    if (ps_memstream_close(f, &buf, &len) < 0)
        return ps_error(PS_ENOMEM, "out of memory");
    int rc = msr_plot_gnuplot(buf, 1300, 560, png, b);
    free(buf);
    return rc;
}

/* ---- the Markdown report ---- */

static void md_accuracy(const struct msr_vcheck *v, FILE *f)
{
    for (int fast = 0; fast < 2; fast++) {
        struct msr_accuracy a;
        msr_vcheck_accuracy(v, fast, &a);
        fprintf(f, "\n```\n");
        msr_accuracy_print(v, &a, f);
        fprintf(f, "```\n");
    }
}

static void md_points(const struct msr_vcheck *v, FILE *f)
{
    fprintf(f, "\n| K | M | remat | micro-batch | step sim ms | step meas ms (min–max) | "
               "makespan err | fastest err | own op times err | bubble sim | bubble meas | "
               "err pts | own op times err pts | peak act sim | peak act meas | err | "
               "op duration err median / p95 | preempted (median step / all) | "
               "largest discrepancy |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < v->n_points; i++) {
        const struct msr_vpoint *pt = &v->pts[i];
        const struct ana_compare *c = pt->cmp;
        char top[160] = "—", ps[32], pm[32];
        if (c->n_top) {
            char o[96], e[32];
            op_name(&c->top[0].sim, o, sizeof o);
            ps_human_seconds_delta((double)c->top[0].error_ns * 1e-9, e, sizeof e);
            snprintf(top, sizeof top, "%s %s (%s)", o, e,
                     ana_cause_name(c->top[0].cause, c->top[0].error_ns));
        }
        ps_human_bytes((double)pt->peak_sim, ps, sizeof ps);
        ps_human_bytes((double)pt->peak_meas, pm, sizeof pm);
        fprintf(f, "| %d | %d | %s | %d | %.3f | %.3f (%.3f–%.3f) | %+.2f%% | %+.2f%% | "
                   "%+.2f%% | %.2f%% | %.2f%% | %+.2f | %+.2f | %s | %s | %+.2f%% | "
                   "%.1f%% / %.1f%% | %ld / %ld | %s |\n",
                pt->K, pt->M, sch_remat_name(pt->remat), pt->micro, pt->step_sim_s * 1e3,
                pt->step_med_s * 1e3, pt->step_min_s * 1e3, pt->step_max_s * 1e3,
                100 * c->makespan_err, 100 * pt->cmp_min->makespan_err,
                100 * pt->replay.makespan_err, 100 * c->bubble_sim, 100 * c->bubble_meas,
                100 * (c->bubble_meas - c->bubble_sim), 100 * pt->replay.bubble_err,
                ps, pm, 100 * pt->peak_err,
                100 * c->dur_err_median, 100 * c->dur_err_p95, pt->preempt_med,
                pt->preempt_all, top);
    }
}

static void link_to(const char *md_path, const char *target, char *buf, size_t n)
{
    char rel[4096];
    if (ps_path_from(md_path, target, rel, sizeof rel) < 0)
        snprintf(rel, sizeof rel, "%s", target);
    snprintf(buf, n, strpbrk(rel, " \t()<>") ? "<%s>" : "%s", rel);
}

int msr_vcheck_report(const struct msr_vcheck *v, const char *md_path, const char *png_path,
                      const char *timeline_path, struct ana_plot_batch *b)
{
    int rc = 0, plotted = 0;
    char plot_note[600] = "";
    if (png_path) {
        if (!ps_gnuplot_have(NULL)) {
            snprintf(plot_note, sizeof plot_note, "(no plot: gnuplot is not installed)");
        } else if ((rc = write_plot(v, png_path, b)) < 0) {
            return rc;
        } else {
            plotted = 1;
        }
    }
    struct ps_afile af;
    if ((rc = ps_afile_open(&af, md_path)) < 0)
        return rc;
    FILE *f = af.f;
    fprintf(f, "# Validation: the simulator against real runs on this machine\n\n");
    fprintf(f, "- net `%s`, schedule %s, batch %d, %d round%s of %d warm-up + %d timed steps "
               "per point, %d timed steps each (median step compared; the fastest too)\n",
            v->spec, v->schedule, v->batch, rounds_of(v), rounds_of(v) > 1 ? "s" : "",
            v->warmup_steps, v->steps, rounds_of(v) * v->steps);
    fprintf(f, "- %d CPUs, OpenBLAS %s, seed %llu, %s, %.1f s\n", v->n_cpus, v->blas,
            (unsigned long long)v->seed, v->stamp, v->wall_s);
    fprintf(f, "- profile: %s\n- topology: %s\n", v->profile_desc, v->topology_desc);
    fprintf(f, "- errors are measured − simulated; bubble = 1 − Σ compute busy (F, B, R, W) / "
               "(devices × end of the last F/B/R/W), both traces computed the same way "
               "(`pipesim compare`)\n");
    fprintf(f, "\n## Accuracy\n");
    md_accuracy(v, f);
    fprintf(f, "\n## Points\n\nThe peak activation columns are the device whose simulated and "
               "measured peaks differ most (device 0 when they all agree).\n");
    md_points(v, f);
    /* figures linked as seen from the report's folder, wherever they are; in
     * <...> where the path has blanks or parentheses (CommonMark) */
    char rel[4096];
    if (plotted) {
        link_to(md_path, png_path, rel, sizeof rel);
        fprintf(f, "\n## Predicted vs measured\n\n![predicted vs measured](%s)\n", rel);
    } else if (*plot_note) {
        fprintf(f, "\n%s\n", plot_note);
    }
    if (timeline_path && v->n_points > 0 && ps_gnuplot_have(NULL)) {
        struct msr_accuracy acc;
        msr_vcheck_accuracy(v, 0, &acc);
        const struct msr_vpoint *w = &v->pts[acc.i_mk_max];
        link_to(md_path, timeline_path, rel, sizeof rel);
        fprintf(f, "\n## The worst point's timelines\n\nK = %d, M = %d, remat %s (makespan "
                "error %+.2f %%): simulated (upper) against measured (lower).\n\n"
                "![timelines of the worst point](%s)\n", w->K, w->M, sch_remat_name(w->remat),
                100 * w->cmp->makespan_err, rel);
    }
    if (ferror(f)) { /* as every other output says it (helper-138: "write error") */
        int e = errno;
        ps_afile_abort(&af);
        return ps_error(PS_EIO, "%s: write failed: %s", md_path, strerror(e ? e : EIO));
    }
    return b ? ana_plot_batch_adopt(b, &af) : ps_afile_commit(&af);
}
