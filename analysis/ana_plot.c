/* ana_plot: running gnuplot safely, and the trace timeline (see ana_plot.h). */
#include "analysis/ana_plot.h"
#include "analysis/ana_plot_util.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_gnuplot.h"
#include "base/ps_strbuf.h"
#include "base/ps_util.h"
#include "traces/trc_layout.h"
#include "traces/trc_trace.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ana_tmp_new(struct tmp *t)
{
    memset(t, 0, sizeof *t);
    t->dir_slot = -1;
    snprintf(t->dir, sizeof t->dir, "%s/pipesim-plot-XXXXXX", ps_tmpdir());
    /* removed on SIGINT/SIGTERM/SIGHUP with the files in it (ps_afile.h) */
    int slot = ps_afile_mkdtemp(t->dir);
    if (slot < 0)
        return slot;
    t->dir_slot = slot;
    return 0;
}

/* Opens <tmp>/name for writing, remembering it for removal. */
FILE *ana_tmp_file(struct tmp *t, const char *name, char *path, size_t n)
{
    if ((size_t)snprintf(path, n, "%s/%s", t->dir, name) >= n || t->n == 16 ||
        (size_t)snprintf(t->names[t->n], sizeof t->names[0], "%s", name) >= sizeof t->names[0])
        return NULL; /* our own short names: cannot happen */
    int slot = ps_afile_track(path);
    if (slot < 0)
        return NULL;
    t->slots[t->n++] = slot;
    return fopen(path, "w");
}

void ana_tmp_free(struct tmp *t)
{
    char p[320];
    for (int i = 0; i < t->n; i++) {
        snprintf(p, sizeof p, "%s/%s", t->dir, t->names[i]);
        unlink(p);
        ps_afile_untrack(t->slots[i]);
    }
    rmdir(t->dir);
    ps_afile_untrack(t->dir_slot);
}

/* The rendered file is what its name says. */
static int valid_output(const char *path, int png)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    int ok;
    if (png) { /* whole: its IEND chunk last */
        ok = n >= 8 && !memcmp(buf, "\x89PNG\r\n\x1a\n", 8);
        if (ok && fseek(f, -8, SEEK_END) == 0) {
            n = fread(buf, 1, 8, f);
            ok = n == 8 && !memcmp(buf, "IEND\xae\x42\x60\x82", 8);
        }
    } else {
        ok = strstr(buf, "<svg") != NULL;
        if (ok && fseek(f, -64, SEEK_END) == 0) {
            n = fread(buf, 1, 63, f);
            buf[n] = 0;
            ok = strstr(buf, "</svg>") != NULL;
        }
    }
    fclose(f);
    return ok;
}

struct ana_plot_batch {
    struct ps_afile af[ANA_PLOT_BATCH_MAX];
    int n;
    int synced; /* every file synced since the last was added (ana_plot_batch_sync) */
    struct ps_made made; /* the folders its figures made: taken away again when it fails */
    struct ps_made *hand_to; /* ana_plot_batch_hand_made: where they go when it succeeds */
};

void ana_plot_batch_hand_made(struct ana_plot_batch *b, struct ps_made *to)
{
    if (b)
        b->hand_to = to;
}

int ana_plot_batch_new(struct ana_plot_batch **out)
{
    if (!(*out = calloc(1, sizeof **out)))
        return ps_error(PS_ENOMEM, "plot: out of memory");
    return 0;
}

int ana_plot_batch_sync(struct ana_plot_batch *b)
{
    int rc = 0;
    for (int i = 0; b && i < b->n && rc == 0; i++)
        rc = ps_afile_sync(&b->af[i]);
    if (b)
        b->synced = rc == 0;
    return rc;
}

int ana_plot_batch_finish(struct ana_plot_batch *b, int rc, FILE *said)
{
    if (!b)
        return rc;
    /* the figures' names, said once they are in place (commit frees them) */
    struct ps_strbuf names = PS_STRBUF_INIT;
    for (int i = 0; i < b->n && said; i++) {
        const char *p = b->af[i].path;
        size_t l = p ? strlen(p) : 0;
        if (l > 4 && !strcmp(p + l - 4, ".png")) {
            char shown[4200]; /* one line each: a newline in a folder's name as '?' */
            snprintf(shown, sizeof shown, "%.*s", (int)(l - 4), p);
            ps_strbuf_printf(&names, "wrote %s.png and .svg\n", ps_printable_in_place(shown));
        }
    }
    if (rc == 0)
        rc = ps_strbuf_error(&names);
    /* every file written and synced before the first is renamed into place
     * (once: plan synced them before storing its row) */
    if (rc == 0 && !b->synced)
        rc = ana_plot_batch_sync(b);
    ps_afile_publish_begin(); /* a signal now leaves the old set or the new */
    for (int i = 0; i < b->n; i++) {
        if (rc < 0) {
            ps_afile_abort(&b->af[i]);
            continue;
        }
        rc = ps_afile_commit(&b->af[i]);
    }
    ps_afile_publish_end();
    if (rc < 0)
        ps_made_undo(&b->made);
    else if (b->hand_to && (rc = ps_made_move(b->hand_to, &b->made)) < 0)
        ps_made_undo(&b->made); /* out of memory: kept by no one, so taken away */
    else
        ps_made_keep(&b->made);
    if (rc == 0 && said)
        fputs(ps_strbuf_str(&names), said);
    ps_strbuf_release(&names);
    free(b);
    return rc;
}

/* A drawn file: published now, or held in the batch (aborted when full). */
static int finish_file(const struct ana_plot_opts *o, struct ps_afile *af)
{
    if (!o->batch)
        return ps_afile_commit(af);
    if (o->batch->n == ANA_PLOT_BATCH_MAX) {
        ps_afile_abort(af);
        return ps_error(PS_EIO, "plot: more than %d files in one set", ANA_PLOT_BATCH_MAX);
    }
    o->batch->af[o->batch->n++] = *af;
    o->batch->synced = 0;
    return 0;
}

int ana_plot_batch_adopt(struct ana_plot_batch *b, struct ps_afile *af)
{
    struct ana_plot_opts o = { .batch = b };
    return finish_file(&o, af);
}

/* Writes text to <out>/<prefix><file> atomically. */
static int keep_write(const struct ana_plot_opts *o, const char *file, const char *text,
                      size_t len)
{
    char final[1024];
    if ((size_t)snprintf(final, sizeof final, "%s/%s%s", o->out_dir, o->prefix ? o->prefix : "",
                         file) >= sizeof final)
        return ps_error(PS_EUSAGE, "plot: output path too long: %s/%s", o->out_dir, file);
    struct ps_afile af;
    int rc = ps_afile_open(&af, final);
    if (rc < 0)
        return rc;
    if (fwrite(text, 1, len, af.f) != len) {
        ps_afile_abort(&af);
        return ps_error(PS_EIO, "%s: write failed", final);
    }
    return finish_file(o, &af);
}

/* The figure's sources beside it, as `pipesim paper` keeps its own: each
 * data file the script reads ('x.dat' outside double-quoted text, copied as
 * <prefix>x.dat) and <prefix><name>.gp, the PNG script with those names,
 * to be rerun in the output folder as
 * `gnuplot <prefix><name>.gp > <prefix><name>.png`. */
static int keep_sources(const struct ana_plot_opts *o, struct tmp *t, const char *name, int w,
                        int h, const char *body)
{
    const char *pre = o->prefix ? o->prefix : "";
    struct ps_strbuf gp = PS_STRBUF_INIT;
    ps_strbuf_printf(&gp, "# %s%s.gp, written by pipesim plot; in this folder: gnuplot "
                          "%s%s.gp > %s%s.png\nset terminal pngcairo size %d,%d font "
                          "'Sans,10'\n", pre, name, pre, name, pre, name, w, h);
    int rc = 0, dq = 0, copied[16] = { 0 };
    for (const char *p = body; *p && rc == 0; p++) {
        if (*p == '"' && (p == body || p[-1] != '\\'))
            dq = !dq;
        const char *e = !dq && *p == '\'' ? strchr(p + 1, '\'') : NULL;
        if (!e) {
            ps_strbuf_printf(&gp, "%c", *p);
            continue;
        }
        size_t n = (size_t)(e - p - 1);
        int is_dat = n > 4 && !memcmp(e - 4, ".dat", 4);
        ps_strbuf_printf(&gp, "'%s%.*s'", is_dat ? pre : "", (int)n, p + 1);
        for (int i = 0; is_dat && i < t->n && rc == 0; i++) {
            if (copied[i] || strlen(t->names[i]) != n || memcmp(t->names[i], p + 1, n))
                continue;
            char src[320], *text = NULL;
            size_t len = 0;
            snprintf(src, sizeof src, "%s/%s", t->dir, t->names[i]);
            if ((rc = ps_read_file(src, &text, &len)) == 0)
                rc = keep_write(o, t->names[i], text, len);
            free(text);
            copied[i] = 1;
        }
        p = e;
    }
    ps_strbuf_printf(&gp, "\nset output\n");
    char file[64];
    snprintf(file, sizeof file, "%s.gp", name);
    if (rc == 0 && (rc = ps_strbuf_error(&gp)) == 0)
        rc = keep_write(o, file, ps_strbuf_str(&gp), strlen(ps_strbuf_str(&gp)));
    ps_strbuf_release(&gp);
    return rc;
}

/* Renders body (gnuplot commands reading data from tmp) to
 * <out>/<prefix><name>.png and .svg: gnuplot writes to its stdout, which is
 * the output file's temporary (ps_afile), checked before it is published. */
int ana_plot_render(const struct ana_plot_opts *o, struct tmp *t, const char *name, int w, int h,
                  const char *body)
{
    int rc = o->batch ? ps_mkdirs_made(o->out_dir, &o->batch->made) : ps_mkdirs(o->out_dir);
    if (rc < 0)
        return rc;
    for (int png = 1; png >= 0; png--) {
        char final[1024], script[320];
        if ((size_t)snprintf(final, sizeof final, "%s/%s%s.%s", o->out_dir,
                             o->prefix ? o->prefix : "", name, png ? "png" : "svg") >=
            sizeof final)
            return ps_error(PS_EUSAGE, "plot: output path too long: %s/%s%s.%s", o->out_dir,
                             o->prefix ? o->prefix : "", name, png ? "png" : "svg");
        char sname[32];
        snprintf(sname, sizeof sname, "%s-%s.gp", name, png ? "png" : "svg");
        FILE *f = ana_tmp_file(t, sname, script, sizeof script);
        if (!f)
            return ps_error(PS_EIO, "%s: cannot write: %s", script, strerror(errno));
        fprintf(f, "cd '%s'\n", t->dir);
        if (png)
            fprintf(f, "set terminal pngcairo size %d,%d font 'Sans,10'\n", w, h);
        else
            fprintf(f, "set terminal svg size %d,%d dynamic font 'Sans,10'\n", w, h);
        fputs(body, f);
        fputs("\nset output\n", f);
        if (fclose(f) != 0)
            return ps_error(PS_EIO, "%s: write failed", script);
        struct ps_afile af;
        if ((rc = ps_afile_open(&af, final)) < 0)
            return rc;
        fflush(af.f);
        struct ps_gnuplot_cmd g = { .prog = o->gnuplot, .script = script,
                                    .out_fd = fileno(af.f), .what = final };
        rc = ps_gnuplot_run(&g);
        /* a device or FIFO cannot be read back: gnuplot's status decides */
        if (rc == 0 && !ps_afile_direct(&af) && !valid_output(af.tmp, png))
            rc = ps_error(PS_EIO, "%s: gnuplot wrote no valid %s%s%s", final,
                           png ? "PNG" : "SVG", g.errline[0] ? ": " : "", g.errline);
        if (rc < 0) {
            ps_afile_abort(&af);
            return rc;
        }
        if ((rc = finish_file(o, &af)) < 0)
            return rc;
    }
    return keep_sources(o, t, name, w, h, body);
}

/* Text for a double-quoted gnuplot string: a quote, a backslash or a
 * backquote (gnuplot runs `...` as a shell command even inside double
 * quotes) becomes ', a control character (a newline would end the command)
 * ?: a file name or a stored model name cannot break out of its string. */
void ana_plot_clean(char *dst, size_t n, const char *src)
{
    size_t j = 0;
    for (; *src && j + 1 < n; src++) {
        unsigned char c = (unsigned char)*src;
        dst[j++] = c == '"' || c == '\\' || c == '`' ? '\'' : ps_is_ctrl(c) ? '?' : *src;
    }
    dst[j] = 0;
}


/* The one palette and legend of every timeline (Paul Tol's bright scheme). */
static const struct {
    unsigned rgb;
    const char *label;
} kind_style[SCH_OP_NKINDS] = {
    [SCH_OP_FWD] = { 0x4477aa, "F forward" },
    [SCH_OP_BWD] = { 0xee6677, "B backward" },
    [SCH_OP_WGRAD] = { 0x228833, "W weight grad" },
    [SCH_OP_RECOMP] = { 0xccbb44, "R recompute" },
    [SCH_OP_SEND_ACT] = { 0x66ccee, "activation transfer" },
    [SCH_OP_RECV_ACT] = { 0x66ccee, "activation transfer" },
    [SCH_OP_SEND_GRAD] = { 0xaa3377, "gradient transfer" },
    [SCH_OP_RECV_GRAD] = { 0xaa3377, "gradient transfer" },
    [SCH_OP_UPDATE] = { 0xbbbbbb, "U update" },
    [SCH_OP_ALLREDUCE] = { 0x555555, "AR all-reduce" },
};

double ana_plot_time_unit(double span_ns, const char **name)
{
    if (span_ns > 10e9) {
        *name = "s";
        return 1e9;
    }
    if (span_ns < 10e6) {
        *name = "us";
        return 1e3;
    }
    *name = "ms";
    return 1e6;
}

double ana_plot_trace_unit(const struct trc_trace *const *t, int n, const char **name)
{
    double span_ns = 0;
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < t[k]->n_events; i++)
            if ((double)t[k]->events[i].end_ns > span_ns)
                span_ns = (double)t[k]->events[i].end_ns;
    return ana_plot_time_unit(span_ns, name);
}

unsigned ana_plot_kind_rgb(int kind, int light)
{
    unsigned c = kind >= 0 && kind < SCH_OP_NKINDS ? kind_style[kind].rgb : 0x999999;
    if (!light)
        return c;
    unsigned r = c >> 16 & 0xff, g = c >> 8 & 0xff, b = c & 0xff; /* 45 % toward white */
    r += (255 - r) * 45 / 100;
    g += (255 - g) * 45 / 100;
    b += (255 - b) * 45 / 100;
    return r << 16 | g << 8 | b;
}

const char *ana_plot_kind_label(int kind)
{
    return kind >= 0 && kind < SCH_OP_NKINDS ? kind_style[kind].label : "other";
}

void ana_plot_legend(struct ps_strbuf *b, const int used[SCH_OP_NKINDS])
{
    static const int order[] = { SCH_OP_FWD, SCH_OP_BWD, SCH_OP_WGRAD, SCH_OP_RECOMP,
                                 SCH_OP_SEND_ACT, SCH_OP_RECV_ACT, SCH_OP_SEND_GRAD,
                                 SCH_OP_RECV_GRAD, SCH_OP_UPDATE, SCH_OP_ALLREDUCE };
    int shown[SCH_OP_NKINDS] = { 0 };
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        int k = order[i], dup = 0;
        if (!used[k])
            continue;
        for (int j = 0; j < SCH_OP_NKINDS; j++)
            dup |= shown[j] && !strcmp(kind_style[j].label, kind_style[k].label);
        if (dup)
            continue;
        shown[k] = 1;
        ps_strbuf_printf(b, ", \\\n  keyentry with boxes fc rgb \"#%06x\" title \"%s\"",
                         kind_style[k].rgb, kind_style[k].label);
    }
}

static const char *stream_name[SCH_NSTREAMS] = { "compute", "send", "recv" };

/* A row per (device, stream, lane), top down: the lanes of trc_layout, one
 * per buffer in flight, so that transfers in flight together do not cover
 * one another (helper-83: every receive lane of a device was drawn on one
 * row, a long receive hiding those under it). *row[d * SCH_NSTREAMS + s] is
 * the first row of that stream; returns the number of rows. */
static int timeline_rows(const struct trc_layout *l, int ndev, int *row)
{
    int n = 0;
    for (int d = 0; d < ndev; d++)
        for (int s = 0; s < SCH_NSTREAMS; s++) {
            row[d * SCH_NSTREAMS + s] = n;
            n += l->n_lanes[d * SCH_NSTREAMS + s];
        }
    return n;
}

int ana_plot_timeline(const char *trace_path, const struct ana_plot_opts *o)
{
    struct trc_trace *tr = NULL;
    struct tmp t;
    struct ps_strbuf b = PS_STRBUF_INIT;
    struct trc_layout lay = { 0 };
    int *row = NULL;
    /* the trace, its layout and the figure's data: 15.7 x the file measured */
    int rc = trc_fits_at(trace_path, NULL, 16.0);
    if (rc == 0)
        rc = trc_read_chrome(trace_path, &tr);
    if (rc < 0)
        return rc;
    if (!tr->n_events) {
        rc = ps_error(PS_EPARSE, "%s: the trace has no events to draw", trace_path);
        goto err_free_trace;
    }
    int ndev = tr->n_devices;
    if ((rc = trc_layout_init(&lay, tr)) < 0)
        goto err_free_trace;
    if (!(row = malloc(sizeof *row * (size_t)ndev * SCH_NSTREAMS))) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err_free_trace;
    }
    int nrows = timeline_rows(&lay, ndev, row);
    if ((rc = ana_tmp_new(&t)) < 0)
        goto err_free_trace;
    char path[320];
    FILE *f = ana_tmp_file(&t, "timeline.dat", path, sizeof path);
    if (!f) {
        rc = ps_error(PS_EIO, "%s: cannot write", path);
        goto err_free_tmp;
    }
    int used[SCH_OP_NKINDS] = { 0 };
    double tmax = 0;
    const char *unit;
    double per = ana_plot_trace_unit((const struct trc_trace *const[]){ tr }, 1, &unit);
    for (size_t i = 0; i < tr->n_events; i++) {
        const struct trc_event *e = &tr->events[i];
        if (e->kind >= SCH_OP_NKINDS || e->stream >= SCH_NSTREAMS)
            continue;
        double s = (double)e->start_ns / per, en = (double)e->end_ns / per;
        if (en > tmax)
            tmax = en;
        used[e->kind] = 1;
        int y = row[e->device * SCH_NSTREAMS + e->stream] + lay.tid[i] / SCH_NSTREAMS;
        fprintf(f, "%.9g %d %.9g 0.38 %u\n", (s + en) / 2, -y, (en - s) / 2,
                kind_style[e->kind].rgb);
    }
    if (fclose(f) != 0) {
        rc = ps_error(PS_EIO, "%s: write failed", path);
        goto err_free_tmp;
    }
    char src[64], sched[64];
    ana_plot_clean(src, sizeof src, tr->source);
    ana_plot_clean(sched, sizeof sched, tr->schedule);
    ps_strbuf_printf(&b, "set title \"%s %s, %d devices, %d stages, M=%d, remat %s\" noenhanced\n",
                  src, sched, tr->n_devices, tr->n_stages, tr->n_micro, tr->remat);
    ps_strbuf_printf(&b, "set xlabel \"time (%s)\"\nset xrange [0:%.9g]\nset yrange [%d:0.8]\n"
                      "set grid x\nset key outside right top\nset ytics (", unit, tmax * 1.01,
                  -nrows);
    /* each lane named as the trace's thread: "recv", "recv 2", ... */
    for (int d = 0; d < ndev; d++)
        for (int s = 0; s < SCH_NSTREAMS; s++)
            for (int k = 0; k < lay.n_lanes[d * SCH_NSTREAMS + s]; k++) {
                char lane[16] = "";
                if (k)
                    snprintf(lane, sizeof lane, " %d", k + 1);
                ps_strbuf_printf(&b, "%s\"dev%d %s%s\" %d", d || s || k ? ", " : "", d,
                                 stream_name[s], lane, -(row[d * SCH_NSTREAMS + s] + k));
            }
    ps_strbuf_printf(&b, ")\nset style fill solid 0.9 noborder\nplot 'timeline.dat' using "
                      "1:2:3:4:5 with boxxyerror lc rgb variable notitle");
    ana_plot_legend(&b, used);
    ps_strbuf_printf(&b, "\n");
    if ((rc = ps_strbuf_error(&b)) < 0)
        goto err_free_tmp;
    /* 22 pixels a row, so that the labels of many devices stay apart */
    int h = 160 + 22 * nrows;
    rc = ana_plot_render(o, &t, "timeline", 1200, h > 16000 ? 16000 : h, ps_strbuf_str(&b));
err_free_tmp:
    ana_tmp_free(&t);
    ps_strbuf_release(&b);
err_free_trace:
    free(row);
    trc_layout_release(&lay);
    trc_trace_free(tr);
    return rc;
}
