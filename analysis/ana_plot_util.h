/*
 * ana_plot_util — internals shared by the ana_plot files: a private
 * temporary directory for data and scripts, atomic rendering through
 * gnuplot (scripts are built in a base/ps_strbuf.h). Not a public interface.
 */
#ifndef ANA_PLOT_UTIL_H
#define ANA_PLOT_UTIL_H

#include <stdio.h>

#include "analysis/ana_plot.h"
#include "base/ps_strbuf.h"

struct tmp {
    char dir[256];
    int n;
    char names[16][32];
    int slots[16], dir_slot; /* ps_afile_track's: removed on a signal */
};

int ana_tmp_new(struct tmp *t);
/* Opens <dir>/name for writing (path gets its full name); removed by
 * ana_tmp_free. */
FILE *ana_tmp_file(struct tmp *t, const char *name, char *path, size_t n);
void ana_tmp_free(struct tmp *t);

/* Renders the gnuplot commands in body (run in the temporary directory) to
 * <out_dir>/<prefix><name>.png and .svg, each through ps_afile (gnuplot
 * writes to its stdout, the temporary). */
int ana_plot_render(const struct ana_plot_opts *o, struct tmp *t, const char *name, int w,
                    int h, const char *body);

#endif
