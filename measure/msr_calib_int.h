/*
 * msr_calib_int — private to measure/msr_calib*.c and msr_fit.c: the timing
 * half of msr_calib_run (msr_calib_time.c, msr_calib_link.c), which fills
 * the stats of c from net; the pipelined calibration's pieces; and the
 * fits msr_fit.c shares with it.
 * Ownership: as each function says; nothing here owns memory of its own.
 * Cost: as each function says.
 */
#ifndef MSR_CALIB_INT_H
#define MSR_CALIB_INT_H

#include "measure/msr_calib.h"
#include "runtime/rt_net.h"

int msr_calib_time(const struct msr_calib_opts *o, struct rt_net *net, struct msr_calib *c);
/* The link half (msr_calib_link.c): hand-off, transfers, memcpy. */
int msr_calib_time_link(const struct rt_net *net, struct msr_calib *c);
/* What msr_calib_time_link holds at once at the largest size: its channel of
 * a message per slot, and the message's source and copy (bytes). */
double msr_calib_link_bytes(const struct rt_net *net, const struct msr_calib *c);
/* c->update_s and update_bw from the layers' update stats. */
void msr_calib_update_totals(const struct rt_net *net, struct msr_calib *c);
/* The pipelined half (msr_calib_pipe.c, opts.pipelined): stage ops inside
 * real pipeline steps. _new creates the pipes (o and net borrowed);
 * _round runs one round (a step per size and remat mode; warm-up rounds
 * first) and returns 1 once enough rounds ran (the medians known to rel_se
 * after `repeats`, or max_rounds), 0 before; _finish scales the layers'
 * stats and fits the hand-offs. */
struct msr_pipe_state;
int msr_calib_pipe_new(const struct msr_calib_opts *o, struct rt_net *net, struct msr_calib *c,
                       struct msr_pipe_state **out);
int msr_calib_pipe_round(struct msr_pipe_state *ps);
/* The two steps (remat never, always) of micro-batch size micro alone,
 * timed; PS_EINVAL before the warm-up rounds ran; 0 (nothing run) for a
 * size not calibrated. */
int msr_calib_pipe_size(struct msr_pipe_state *ps, int micro);
int msr_calib_pipe_finish(struct msr_pipe_state *ps);
void msr_calib_pipe_free(struct msr_pipe_state *ps);
/* msr_calib_scale.c: the class pooled with class k under opts.pool_remat
 * (F with R, B of a stashed micro-batch with B after a recompute), -1 for
 * none; and every stage's layers scaled from where they are to the
 * classes' centres (by_mean: trimmed means, else medians; pooled: the
 * pools'), the rule recorded in c; st: room for a stage's layers. */
struct sch_partition;
int msr_pipe_partner(int k);
void msr_pipe_scale_to_centres(struct msr_calib *c, const struct sch_partition *part,
                               int by_mean, int pooled, struct msr_stat **st);
/* msr_fit.c: the relative standard error of a median from its stats
 * (normal rule; 1 with fewer than 2 samples or a median not above 0). */
double msr_stat_rel_se(const struct msr_stat *s);
/* msr_fit.c: rq (msr_pipe_point) from n relative samples v (sorted, st
 * their stats) inside Tukey's outer fences, at MSR_PIPE_NQ quantiles,
 * scaled to mean 1; all 0 for none. */
void msr_stat_spread(const double *v, int n, const struct msr_stat *st, double *rq);
/* seconds = a + b * bytes over samples (bx_all, ys) of n, a point per
 * message size (its median); one size gives its median and b = 0; *fit
 * untouched for n = 0. */
int msr_fit_size_line(const double *bx_all, const double *ys, int n, struct msr_fit *fit);
/* A copy's line for the topology: msr_fit_size_line with a and b at least
 * 0 (a slope not above 0: the median, no per-byte part; an intercept below
 * 0: the line through the origin at the mean rate); n = 0 when none. */
int msr_fit_copy_line(const double *bx, const double *ys, int n, struct msr_fit *fit);

#endif
