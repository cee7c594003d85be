/*
 * ana_plot — PNG and SVG figures through gnuplot:
 *   speedup   speedup over one device vs M, a line per K, with the ideal
 *             K M / (M + K - 1) of balanced stages with free communication
 *   bubble    simulated bubble fraction vs M per K, with the analytic
 *             (K - 1) / (M + K - 1)
 *   memory    per-stage simulated peak memory vs K (each stage a point, the
 *             largest a line, the device capacity dashed) at one M
 *   timeline  a Gantt chart of a Chrome trace (trc_read_chrome): a row per
 *             device stream, a box per op coloured by kind
 * The first three read one group of sweep runs (ana_report.h selection;
 * the first group that matches, named on the figure). Data and the script
 * go to a private temporary directory; gnuplot renders each figure to a
 * temporary name beside the target, which is checked (PNG signature, SVG
 * root element) and renamed over it, so a failed run leaves no partial file.
 *
 * Cost: O(runs + trace events) to write data, plus gnuplot.
 */
#ifndef ANA_PLOT_H
#define ANA_PLOT_H

#include "analysis/ana_db.h"
#include "analysis/ana_report.h"

struct ana_plot_opts {
    const char *out_dir;         /* created if missing */
    const char *prefix;          /* file name prefix, NULL = "" */
    const char *gnuplot;         /* program, NULL = "gnuplot" (PATH lookup; ps_gnuplot.h) */
    struct ana_report_opts sel;  /* which runs */
    int mem_M;                   /* M of the memory figure; 0 = the group's largest */
};

/* Writes <out>/<prefix><kind>.png and .svg for each kind in the comma list
 * kinds (speedup, bubble, memory). */
int ana_plot_sweep(const struct ana_run *runs, int n, const char *kinds,
                   const struct ana_plot_opts *o);
/* Writes <out>/<prefix>timeline.png and .svg of the trace. */
int ana_plot_timeline(const char *trace_path, const struct ana_plot_opts *o);

#endif
