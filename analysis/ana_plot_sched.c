/* ana_plot_sched: the schedules' timelines one above another, as the
 * zero-bubble paper draws them (see ana_plot.h). Each schedule is replayed
 * compute-only (sch_zb_list_replay: no communication, updates free) on one
 * model: per device a whole forward of T_F = 1, a backward of 2 (B = W = 1
 * when split); a schedule with v chunks per device gives each chunk 1/v of
 * that (v ticks per T_F: exact for every v; ticks of 1/12 were exact only for
 * v = 1, 2, 3, 4, 6 and lost the forwards from v = 13), drawn lighter for the
 * device's later chunks. */
#include "analysis/ana_plot.h"
#include "analysis/ana_plot_util.h"
#include "base/ps_error.h"
#include "sched/sch_schedule.h"
#include "sched/sch_zb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Boxes of one schedule: x_mid y half_width half_height rgb, and the span in
 * T_F. Time in ticks of 1/v of T_F: a chunk's forward is one tick. */
static int sched_boxes(FILE *f, const struct sch_schedule *s, int row0, int used[SCH_OP_NKINDS],
                       int *light, double *span_tf)
{
    int S = s->n_stages, v = S / s->n_devices, rc = 0;
    const double TICKS = v;
    sch_time span = 0;
    sch_time *cf = malloc((size_t)S * sizeof *cf), *cb = malloc((size_t)S * sizeof *cb);
    sch_time *cw = malloc((size_t)S * sizeof *cw);
    sch_time **start = calloc((size_t)s->n_devices, sizeof *start);
    if (!cf || !cb || !cw || !start) {
        rc = ps_error(PS_ENOMEM, "out of memory drawing %s", s->name);
        goto out;
    }
    for (int st = 0; st < S; st++) {
        cf[st] = 1;
        cw[st] = 1;
        cb[st] = s->has_wgrad ? 1 : 2;
    }
    for (int d = 0; d < s->n_devices; d++)
        if (!(start[d] = malloc((size_t)(s->n_ops[d] + 1) * sizeof **start))) {
            rc = ps_error(PS_ENOMEM, "out of memory drawing %s", s->name);
            goto out;
        }
    if ((span = sch_zb_list_replay(s, cf, cb, cw, start)) < 0) {
        rc = ps_error(PS_ENOMEM, "out of memory drawing %s", s->name);
        goto out;
    }
    for (int d = 0; d < s->n_devices; d++)
        for (int i = 0; i < s->n_ops[d]; i++) {
            const struct sch_op *op = &s->ops[d][i];
            sch_time c = op->kind == SCH_OP_FWD || op->kind == SCH_OP_RECOMP ? cf[op->stage]
                         : op->kind == SCH_OP_BWD                            ? cb[op->stage]
                         : op->kind == SCH_OP_WGRAD                          ? cw[op->stage]
                                                                             : 0;
            if (!c || start[d][i] < 0)
                continue;
            double x0 = (double)start[d][i] / TICKS, w = (double)c / TICKS;
            /* chunk 2 of a device (v > 1) a shade lighter: the paper's V */
            int chunk = v > 1 ? (op->stage >= s->n_devices) : 0;
            *light |= chunk;
            fprintf(f, "%.6g %d %.6g 0.42 %u %d %d\n", x0 + w / 2, -(row0 + d), w / 2,
                    ana_plot_kind_rgb(op->kind, chunk), op->mb, w >= 0.5);
            used[op->kind] = 1;
        }
    *span_tf = (double)span / TICKS;
out:
    for (int d = 0; start && d < s->n_devices; d++)
        free(start[d]);
    free(start);
    free(cf);
    free(cb);
    free(cw);
    return rc;
}

int ana_plot_schedules(const char *const *names, int n, int K, int M, const struct ana_plot_opts *o)
{
    if (n < 1)
        return ps_error(PS_EUSAGE, "--schedules: no schedule to draw");
    struct tmp t;
    struct ps_strbuf b = PS_STRBUF_INIT;
    int rc = ana_tmp_new(&t), used[SCH_OP_NKINDS] = { 0 }, light = 0;
    if (rc < 0)
        return rc;
    char path[320];
    FILE *f = ana_tmp_file(&t, "schedules.dat", path, sizeof path);
    if (!f) {
        rc = ps_error(PS_EIO, "%s: cannot write: %s", path, strerror(errno));
        goto out;
    }
    double xmax = 0;
    ps_strbuf_printf(&b, "set ytics (");
    for (int i = 0; i < n && !rc; i++) {
        struct sch_schedule *s;
        if ((rc = sch_schedule_build(names[i], K, M, SCH_REMAT_NEVER, &s)) < 0)
            break;
        double span = 0;
        int row0 = i * (K + 1);
        fprintf(f, "# %s\n", s->name);
        rc = sched_boxes(f, s, row0, used, &light, &span);
        if (span > xmax)
            xmax = span;
        char nm[40];
        ana_plot_clean(nm, sizeof nm, s->name);
        for (int d = 0; d < K; d++)
            ps_strbuf_printf(&b, "%s\"%s%s dev %d\" %d", i || d ? ", " : "", d ? "" : nm,
                             d ? "" : ":", d, -(row0 + d));
        /* the step at the right end of the schedule's first row */
        fprintf(f, "# step %.6g\n", span);
        sch_schedule_free(s);
    }
    if (fclose(f) != 0 && !rc)
        rc = ps_error(PS_EIO, "%s: write failed", path);
    if (rc < 0)
        goto out;
    ps_strbuf_printf(&b, ")\n");
    ps_strbuf_printf(&b,
                     "set title \"K=%d devices, M=%d micro-batches; per device T_F = 1, "
                     "T_B = 2 (B = W = 1 when split), no communication\" noenhanced\n"
                     "set xlabel \"time, in T_F (one device's whole forward)\" noenhanced\n"
                     "set xrange [0:%.6g]\nset yrange [%d:0.7]\nset grid x\n"
                     "set key outside top center horizontal\n"
                     "set style fill solid 1.0 border lc rgb \"#ffffff\"\n"
                     "plot 'schedules.dat' using 1:2:3:4:5 with boxxyerror lc rgb variable "
                     "notitle, \\\n  '' using 1:2:(($7 != 0) ? sprintf(\"%%d\", $6) : \"\") with "
                     "labels font \",7\" tc rgb \"#ffffff\" notitle",
                     K, M, xmax * 1.02, -(n * (K + 1) - 1));
    ana_plot_legend(&b, used);
    if (light)
        ps_strbuf_printf(&b, ", \\\n  keyentry with boxes fc rgb \"#%06x\" title \"lighter: a "
                             "device's later chunks\"", ana_plot_kind_rgb(SCH_OP_FWD, 1));
    ps_strbuf_printf(&b, "\n");
    if ((rc = ps_strbuf_error(&b)) < 0)
        goto out;
    int h = 140 + 18 * n * (K + 1);
    rc = ana_plot_render(o, &t, "schedules", 1400, h > 2400 ? 2400 : h, ps_strbuf_str(&b));
out:
    ana_tmp_free(&t);
    ps_strbuf_release(&b);
    return rc;
}
