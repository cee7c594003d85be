/* msr_calib_plot: gnuplot pictures (see msr_calib_plot.h). */
#include "measure/msr_calib_plot.h"
#include "analysis/ana_plot.h"
#include "base/ps_strbuf.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_gnuplot.h"
#include "base/ps_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* <name>.gp beside <name>.png: the script, its data inline, to redraw it
 * (`gnuplot name.gp > name.png`), as `pipesim plot` and `paper` keep theirs. */
static int keep_script(const char *script_path, const char *png_path, size_t pl,
                       struct ana_plot_batch *b)
{
    char *text = NULL, gp[4096];
    size_t len = 0;
    if (pl >= sizeof gp)
        return 0; /* a path this long was already written; no sidecar */
    snprintf(gp, sizeof gp, "%.*s.gp", (int)(pl - 4), png_path);
    int rc = ps_read_file(script_path, &text, &len);
    if (rc < 0)
        return rc;
    struct ps_afile af;
    if ((rc = ps_afile_open(&af, gp)) == 0) {
        if (fwrite(text, 1, len, af.f) != len) {
            ps_afile_abort(&af);
            rc = ps_error(PS_EIO, "%s: write failed", gp);
        } else {
            rc = b ? ana_plot_batch_adopt(b, &af) : ps_afile_commit(&af);
        }
    }
    free(text);
    return rc;
}

/* The script goes to a private temporary file; gnuplot's stdout is the
 * output's temporary (ps_afile), published only when gnuplot succeeds. */
int msr_plot_gnuplot(const char *script, int width, int height, const char *png_path,
                     struct ana_plot_batch *b)
{
    int rc = ps_gnuplot_require();
    if (rc < 0)
        return rc;
    size_t pl = strlen(png_path);
    int svg = pl > 4 && !strcmp(png_path + pl - 4, ".svg");
    char sp[256];
    snprintf(sp, sizeof sp, "%s/pipesim-gp-XXXXXX", ps_tmpdir());
    int slot = -1, fd = ps_afile_mkstemp(sp, &slot); /* tracked as it is made */
    if (fd < 0)
        return fd;
    FILE *g = fdopen(fd, "w");
    if (!g) {
        close(fd);
        unlink(sp);
        ps_afile_untrack(slot);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    if (svg)
        fprintf(g, "set terminal svg size %d,%d font 'sans,9'\n", width, height);
    else
        fprintf(g, "set terminal png size %d,%d font ',9'\n", width, height);
    fputs(script, g);
    fputs("\nset output\n", g);
    if (fclose(g) != 0) {
        rc = ps_error(PS_EIO, "%s: write failed: %s", sp, strerror(errno));
        goto out;
    }
    struct ps_afile af;
    if ((rc = ps_afile_open(&af, png_path)) < 0)
        goto out;
    fflush(af.f);
    struct ps_gnuplot_cmd gc = { .script = sp, .out_fd = fileno(af.f), .what = png_path };
    int direct = ps_afile_direct(&af);
    if ((rc = ps_gnuplot_run(&gc)) < 0)
        ps_afile_abort(&af);
    else /* published now, or with the set (which aborts it if need be) */
        rc = b ? ana_plot_batch_adopt(b, &af) : ps_afile_commit(&af);
    if (rc == 0 && !svg && !direct && pl > 4 && !strcmp(png_path + pl - 4, ".png"))
        rc = keep_script(sp, png_path, pl, b);
out:
    unlink(sp);
    ps_afile_untrack(slot);
    return rc;
}

/* One trace's compute ops as boxes: x xlow xhigh y ylow yhigh colour. */
static void boxes(FILE *f, const struct trc_trace *t, int upper, double per,
                  int used[SCH_OP_NKINDS])
{
    for (size_t i = 0; i < t->n_events; i++) {
        const struct trc_event *e = &t->events[i];
        if (e->stream != SCH_STREAM_COMPUTE)
            continue;
        double x0 = (double)e->start_ns / per, x1 = (double)e->end_ns / per;
        double base = (double)(t->n_devices - 1 - e->device) * 2 + (upper ? 1 : 0);
        fprintf(f, "%.6f %.6f %.6f %.3f %.3f %.3f %u\n", (x0 + x1) / 2, x0, x1, base + 0.5,
                base + 0.1, base + 0.9, ana_plot_kind_rgb(e->kind, 0));
        if (e->kind < SCH_OP_NKINDS)
            used[e->kind] = 1;
    }
}

int msr_plot_timelines(const struct trc_trace *sim, const struct trc_trace *meas,
                       const char *title, const char *png_path)
{
    return msr_plot_timelines_in(sim, meas, title, png_path, NULL);
}

int msr_plot_timelines_in(const struct trc_trace *sim, const struct trc_trace *meas,
                          const char *title, const char *png_path, struct ana_plot_batch *b)
{
    if (sim->n_devices != meas->n_devices)
        return ps_error(PS_EINVAL, "timelines of %d and %d devices", sim->n_devices,
                         meas->n_devices);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = ps_memstream_open(&buf, &len);
    if (!f)
        return ps_error(PS_ENOMEM, "out of memory");
    int D = sim->n_devices;
    const char *unit;
    double per = ana_plot_trace_unit((const struct trc_trace *const[]){ sim, meas }, 2, &unit);
    char clean[1024];
    ana_plot_clean(clean, sizeof clean, title); /* file names: no way out of the string */
    fprintf(f, "set title \"%s\" noenhanced\nset xlabel 'time (%s)'\nset yrange [0:%d]\n"
               "set ytics (", clean, unit, 2 * D);
    for (int d = 0; d < D; d++)
        fprintf(f, "%s'dev %d simulated' %.1f, 'dev %d measured' %.1f", d ? ", " : "", d,
                (double)(D - 1 - d) * 2 + 1.5, d, (double)(D - 1 - d) * 2 + 0.5);
    /* the key at the right, as the timeline's: below it met the axis label */
    fprintf(f, ")\nset grid xtics\nset key outside right top vertical reverse Left\n"
               "set style fill solid 0.85\n"
               "$ops << EOD\n");
    int used[SCH_OP_NKINDS] = { 0 };
    boxes(f, sim, 1, per, used);
    boxes(f, meas, 0, per, used);
    fprintf(f, "EOD\n");
    /* the legend of every timeline (ana_plot.h): the kinds drawn */
    struct ps_strbuf key = PS_STRBUF_INIT;
    ana_plot_legend(&key, used);
    fprintf(f, "plot $ops using 1:4:2:3:5:6:7 with boxxyerror fs solid 0.85 border lc rgb '#ffffff' "
               "lc rgb variable notitle%s",
            ps_strbuf_error(&key) || !ps_strbuf_str(&key) ? "" : ps_strbuf_str(&key));
    ps_strbuf_release(&key);
    fputc('\n', f);
    if (ps_memstream_close(f, &buf, &len) < 0)
        return ps_error(PS_ENOMEM, "out of memory");
    int rc = msr_plot_gnuplot(buf, 1200, 120 + 110 * D, png_path, b);
    free(buf);
    return rc;
}
