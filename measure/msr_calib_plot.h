/*
 * msr_calib_plot — pictures for calibration and validation, with gnuplot
 * (run as a child process: `gnuplot` on PATH, png terminal).
 *
 * msr_plot_timelines overlays a simulated and a measured trace of one
 * configuration: one band per device, the simulated compute ops (F, B, R,
 * W, U, coloured by kind) in the upper half and the measured ones in the
 * lower half, on one time axis, so where the two timelines drift apart is
 * visible at a glance: `pipesim plot --compare SIM.json MEASURED.json` and
 * validate --check (the worst point) draw it. png_path may end in .svg.
 * msr_plot_gnuplot runs a script with its data inline. Outputs go through
 * ps_afile (gnuplot's stdout is the temporary, renamed when it succeeds);
 * beside a .png file goes its script, <name>.gp, data inline, to redraw it
 * with `gnuplot name.gp > name.png`. With a batch b (ana_plot.h), the
 * figure and its script are held in b instead, published with its set
 * (ana_plot_batch_finish: validate --check's outputs).
 * Cost: O(events) plus gnuplot.
 */
#ifndef MSR_CALIB_PLOT_H
#define MSR_CALIB_PLOT_H

#include "traces/trc_trace.h"

struct ana_plot_batch;

/* Runs gnuplot on script (terminal and output are set here: a png — or an
 * svg when png_path ends in ".svg" — of width x height pixels, written by
 * ps_afile to png_path; data goes inline as datablocks); b NULL: published
 * now, else held in b. PS_EIO when gnuplot is missing or fails
 * (ps_gnuplot.h). */
int msr_plot_gnuplot(const char *script, int width, int height, const char *png_path,
                     struct ana_plot_batch *b);
int msr_plot_timelines(const struct trc_trace *sim, const struct trc_trace *meas,
                       const char *title, const char *png_path);
int msr_plot_timelines_in(const struct trc_trace *sim, const struct trc_trace *meas,
                          const char *title, const char *png_path, struct ana_plot_batch *b);

#endif
