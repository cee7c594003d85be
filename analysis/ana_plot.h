/*
 * ana_plot — PNG and SVG figures through gnuplot:
 *   speedup   speedup over one device vs M, a line per K, with the ideal
 *             K M / (M + K - 1) of balanced stages with free communication
 *   bubble    simulated bubble fraction vs M per K, with the analytic
 *             (K - 1) / (M + K - 1)
 *   memory    per-stage simulated peak memory vs K (each stage a point, the
 *             largest a line, a colour per M: every M of the group, or
 *             mem_M alone), the device capacity dashed at every K of the
 *             group (per K its largest device) and always on the scale
 *             (log GB when it is over 20 times the largest peak)
 *   timeline  a Gantt chart of a Chrome trace (trc_read_chrome): a row per
 *             device stream, a box per op coloured by kind
 * The first three read one group of sweep runs (ana_report.h selection;
 * the first group that matches, named on the figure). Data and the script
 * go to a private temporary directory; gnuplot renders each figure to a
 * temporary name beside the target, which is checked (PNG signature, SVG
 * root element) and renamed over it, so a failed run leaves no partial file;
 * with a batch (below; `pipesim plot` uses one) no partial set either.
 *
 * Cost: O(runs + trace events) to write data, plus gnuplot.
 */
#ifndef ANA_PLOT_H
#define ANA_PLOT_H

#include "analysis/ana_db.h"
#include "analysis/ana_report.h"
#include "sched/sch_schedule.h"

#include <stdio.h>

struct ana_plot_batch;
struct ps_afile;

struct ana_plot_opts {
    const char *out_dir;         /* created if missing */
    const char *prefix;          /* file name prefix, NULL = "" */
    const char *gnuplot;         /* program, NULL = "gnuplot" (PATH lookup; ps_gnuplot.h) */
    struct ana_report_opts sel;  /* which runs */
    int mem_M;                   /* M of the memory figure; 0 = every M */
    struct ana_plot_batch *batch; /* NULL: each file published when drawn; else held
                                     back until ana_plot_batch_finish */
};

/* A set of figures published together: with o->batch set, every file the
 * calls below write (PNG, SVG, script, data) stays a temporary beside its
 * target; ana_plot_batch_finish(b, 0) syncs them all (ps_afile_sync), then
 * renames them into place; (b, rc < 0), or a failed sync, removes them all,
 * so a run that fails on its third figure publishes none (at most
 * ANA_PLOT_BATCH_MAX files). finish frees b and returns rc, or the first
 * error; when the set is published and said is not NULL, it prints there
 * "wrote <figure>.png and .svg" for each figure (PNG) of the set. */
#define ANA_PLOT_BATCH_MAX 64
int ana_plot_batch_new(struct ana_plot_batch **out);
int ana_plot_batch_finish(struct ana_plot_batch *b, int rc, FILE *said);
/* Before finish: the folders the set's figures made go to *to when it is
 * published (ps_made_move), for a caller whose own step after it (a
 * database row) may still fail and take them away (ps_made_undo); else
 * finish keeps them. */
struct ps_made;
void ana_plot_batch_hand_made(struct ana_plot_batch *b, struct ps_made *to);
/* An output of the caller's own (an open ps_afile) held and published with
 * the set; b takes it over (aborted with the set). */
int ana_plot_batch_adopt(struct ana_plot_batch *b, struct ps_afile *af);
/* finish's first half alone: every file of the set synced (ps_afile_sync), so
 * that a caller can commit something else between (plan: its database) and
 * fail before any figure is renamed into place. */
int ana_plot_batch_sync(struct ana_plot_batch *b);

/* 0 when kind is one of ana_plot_sweep's figures (speedup, bubble,
 * memory), else PS_EUSAGE "--kind: unknown figure" naming the closest of
 * every --kind (timeline and schedules too): a caller checks its list
 * before it opens the database. */
int ana_plot_sweep_kind(const char *kind);
/* Writes <out>/<prefix><kind>.png and .svg for each kind in the comma list
 * kinds (speedup, bubble, memory). */
int ana_plot_sweep(const struct ana_run *runs, int n, const char *kinds,
                   const struct ana_plot_opts *o);
/* Writes <out>/<prefix>timeline.png and .svg of the trace. */
int ana_plot_timeline(const char *trace_path, const struct ana_plot_opts *o);
/* Writes <out>/<prefix>schedules.png and .svg: the named schedules'
 * timelines one above another (one row per device, F/B/W coloured) at K, M,
 * replayed compute-only (ana_plot_sched.c). Unknown or impossible
 * schedules are the generator's error. */
int ana_plot_schedules(const char *const *names, int n, int K, int M,
                       const struct ana_plot_opts *o);

/* The one palette of every timeline (this file's trace timeline, the
 * schedules figure, measure/'s simulated-against-measured picture): the
 * fill of an op kind (light: 45 % toward white, a V's second chunk), its
 * legend label ("F forward", "B backward", "W weight grad", "R recompute",
 * "activation transfer", "gradient transfer", ...), and the legend entries
 * of the kinds used (appended to a gnuplot plot command, transfers once). */
unsigned ana_plot_kind_rgb(int kind, int light);
const char *ana_plot_kind_label(int kind);
struct ps_strbuf;
void ana_plot_legend(struct ps_strbuf *b, const int used[SCH_OP_NKINDS]);
/* The unit a time axis spanning span_ns reads in, the same in every
 * timeline: "s" above 10 s, "us" below 10 ms, else "ms" (a 67 s step is
 * not 67309 ms); *name gets it, the return is nanoseconds per unit. */
double ana_plot_time_unit(double span_ns, const char **name);
/* ana_plot_time_unit over the latest event end of the n traces t drawn on
 * one axis. */
struct trc_trace;
double ana_plot_trace_unit(const struct trc_trace *const *t, int n, const char **name);
/* Copies src (cut to n - 1 bytes) for a gnuplot double-quoted string: its
 * quotes, backslashes and backquotes as ', control characters as ?. */
void ana_plot_clean(char *dst, size_t n, const char *src);

#endif
