/*
 * ps_gnuplot — the one way pipesim runs gnuplot: fork and exec (no shell)
 * with a script file as its one argument, its stdout an open descriptor
 * (an output's ps_afile temporary), its stderr kept in a private temporary
 * so a failure can quote gnuplot's first complaint.
 *
 * Policy for a missing gnuplot, the same in every command:
 *   commands whose purpose is a plot (pipesim plot) call
 *     ps_gnuplot_require() first: PS_EIO naming the Debian package;
 *   commands that draw plots as a side product (paper, validate --check)
 *     test ps_gnuplot_have(NULL), skip the plots and say so once
 *     (ps_gnuplot_skip_note, or a line in the report they write).
 * Detection is ps_gnuplot_have alone: `gnuplot --version` exits 0.
 *
 * Ownership: the caller owns the script, the descriptor and the output;
 * ps_gnuplot_run owns its stderr temporary (removed before it returns, and
 * by the signal handlers of ps_afile meanwhile).
 * Cost: one fork/exec plus gnuplot's own time; ps_gnuplot_have(NULL) runs
 * gnuplot once per process (cached), with another program every call.
 */
#ifndef PS_GNUPLOT_H
#define PS_GNUPLOT_H

#include <stdio.h>

#define PS_GNUPLOT_PKG "gnuplot-nox" /* Debian's package without X11 */

struct ps_gnuplot_cmd {
    const char *prog;   /* program, NULL = "gnuplot" (PATH lookup) */
    const char *script; /* gnuplot's one argument (relative to cwd) */
    const char *cwd;    /* folder it runs in, NULL = ours */
    int out_fd;         /* its stdout */
    const char *what;   /* the output, for messages */
    char errline[256];  /* out: the first line gnuplot wrote to stderr, "" if none */
};

/* 1 if prog (NULL = "gnuplot") runs and `prog --version` exits 0, else 0. */
int ps_gnuplot_have(const char *prog);
/* 0 if gnuplot runs, else PS_EIO "gnuplot is not installed or does not run
 * (Debian: apt-get install gnuplot-nox)". */
int ps_gnuplot_require(void);
/* The side-product note, written to log (NULL: nothing) once per process:
 * "gnuplot not found: plots not drawn (Debian: apt-get install gnuplot-nox)". */
void ps_gnuplot_skip_note(FILE *log);
/* Runs c->prog c->script and waits. 0 when it exits 0; PS_EIO otherwise:
 * "<what>: cannot run <prog>: <reason> (Debian: ...)", "<what>: gnuplot
 * failed (status N): <first stderr line>" (128 + signal when killed). */
int ps_gnuplot_run(struct ps_gnuplot_cmd *c);

/* The labelled ticks of a log axis over [lo, hi] as one gnuplot command,
 * "set ytics (\"1\" 1, \"2\" 2, ...)\n" into buf (n bytes, truncated):
 * 1, 2, 5 x 10^k, or every 1..9 x 10^k when that gives fewer than 4 (gnuplot
 * labels only the decades, so a range inside one decade shows a lone "100").
 * buf is "" when lo, hi are not 0 < lo < hi < inf. */
void ps_gnuplot_log_tics(char *buf, size_t n, const char *axis, double lo, double hi);

#endif
