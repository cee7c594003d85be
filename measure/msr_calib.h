/*
 * msr_calib — calibration: fit the simulator to this machine.
 *
 * msr_calib_run times a validation-runtime net (runtime/rt_net.h) with the
 * runtime's own kernels on pinned cores, at each micro-batch size asked for:
 * every layer's forward that keeps its stash (F of a kept micro-batch), the
 * forward that keeps nothing (F of a re-materialized one), the recompute
 * (R, the kept F's kernel, timed where R runs: after a B) and the backward
 * (B), layer by layer inside whole-stage passes. A layer's cost depends on
 * what runs beside it (its stage's working set in the caches, the other
 * cores' traffic on the memory bus), so the net is cut into n_stages stages
 * (uniform, default 1) and each stage is timed on its own core, all stages
 * concurrently as in the pipeline; calibrate in K stages to predict K.
 * Per size, one size at a time (a barrier keeps the stages in step),
 * warm-up then `repeats` timed repetitions of the phases of a GPipe step
 * on one device over the micro-batches of a step (opts.batch / size, or of
 * the largest size; each with its own input and stash, the working set the
 * grid's steps have): all forwards keeping the
 * stash, all backwards, all forwards keeping nothing, recompute and
 * backward per micro-batch, then every layer's SGD update — so each op
 * follows what it follows in a pipeline (F after F, B after B or R, R after
 * B, U after the last B). Median and spread (p25, p75, min, max) over
 * repetitions x micro-batches. Also: a large dense GEMM (the device's FLOP
 * rate), the hand-off latency of a small message between two pinned cores
 * through the runtime's channels (receiver polling, and receiver asleep), a
 * transfer of each activation size (send copy + receive copy, sender start
 * to receiver end) and the memcpy bandwidth.
 *
 * Fits (GSL least squares, relative: weights 1/t^2): per layer and per
 * layer kind (same kind, shape and position class) time = a + b * n for
 * each op, with R^2 and residuals; the device's FLOP model
 * t = overhead + f (n + batch_half) / rate over the dense layers
 * (gsl_multifit_wlinear); the link t(bytes) = latency + bytes / bandwidth.
 *
 * Outputs: a measured profile (msr_calib_profile) that `pipesim predict`
 * accepts unchanged — times at the reference micro-batch, the other sizes as
 * points (fwd_ms@N ...), the forward without stash, the fitted intercepts
 * (models/mdl_profile.h) — and this machine's topology (msr_calib_topology):
 * one device per allowed core (flops = the measured GEMM rate, efficiency
 * from the FLOP fit, memory = MemTotal split across cores, mem_bandwidth
 * such that the simulator's update 2 * params * 8 / bw equals the measured
 * SGD), a full-duplex link between every two cores (latency and bandwidth
 * from the transfer fit; not one bus: the runtime's workers copy their own
 * messages, so no send waits for another's; beyond 64 cores one switch
 * with a full-duplex link per core).
 *
 * Ownership: msr_calib_run allocates *out; msr_calib_free (NULL ok).
 * Cost: per stage, size and repetition about three forwards and two
 * backwards of (up to 16 micro-batches of) a batch of the largest size,
 * plus a few hundred channel round trips; about 5 s for an 8-layer 512-wide
 * net, sizes 4..256, 5 repetitions, one stage (about 3.5 s in two stages).
 */
#ifndef MSR_CALIB_H
#define MSR_CALIB_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/ana_format.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"

#define MSR_CALIB_MAX_SIZES 16
/* A link's bandwidth when the devices' copies are the bytes' whole time. */
#define MSR_FREE_LINK 1e300

/* W: the weight gradient, timed inside B's backward (B includes it): the
 * profile's wgrad_ms, the W op of a split-backward schedule. */
enum msr_calib_op { MSR_CALIB_FWD, MSR_CALIB_FWD_NOSTASH, MSR_CALIB_RECOMP, MSR_CALIB_BWD,
                    MSR_CALIB_WGRAD, MSR_CALIB_NOPS };

/* Seconds over the repeats of one measurement. mean: the mean of the
 * samples inside Tukey's outer fences [p25 - 3 IQR, p75 + 3 IQR]: what a sum
 * of many such ops adds up to (a median drops their right skew), without
 * the rare far-out sample of a preemption. */
struct msr_stat {
    double med, p25, p75, min, max, mean;
    int n;
};

/* y = a + b x by weighted least squares (relative: weights 1/y^2). */
struct msr_fit {
    double a, b;
    double r2;                          /* 1 - SS_res / SS_tot (unweighted) */
    double max_rel;                     /* max |y - fit| / y */
    int n;
    double resid[MSR_CALIB_MAX_SIZES + 1]; /* y - fit, same unit as y (a fit takes
                                             up to MSR_CALIB_MAX_SIZES + 1 points) */
};

struct msr_calib_layer {
    char name[MDL_NAME_MAX], kind[24];
    char group[64];                     /* "dense 512x512 relu", ... */
    double fwd_flops;                   /* per sample, from rt_net_profile */
    double params;
    struct msr_stat t[MSR_CALIB_NOPS][MSR_CALIB_MAX_SIZES];
    struct msr_fit fit[MSR_CALIB_NOPS];
    struct msr_stat kept[MSR_CALIB_MAX_SIZES]; /* F and R samples pooled: the
                                                  profile's fwd_ms (one kernel) */
    struct msr_fit kept_fit;
    struct msr_stat update;             /* SGD of this layer */
    struct msr_stat bwd_remat[MSR_CALIB_MAX_SIZES]; /* pipelined: its backward right
                                                  after its recompute (the split of
                                                  t[BWD], scaled to those B ops) */
};

struct msr_calib_group {
    char label[64];
    int n_layers;
    struct msr_fit fit[MSR_CALIB_NOPS];  /* over the layers' medians */
};

struct msr_calib_opts {
    const char *spec;          /* rt_net spec (mlp:..., file:...) */
    const int *sizes;          /* micro-batch sizes, > 0, distinct */
    int n_sizes;
    int repeats;               /* timed repetitions per size (default 5) */
    int warmup;                /* untimed repetitions per size */
    int ref_batch;             /* at_batch of the profile; 0 = largest size */
    int n_stages;              /* time each layer inside its stage of a uniform
                                  partition into this many stages (0 = 1) */
    int cpu, peer_cpu;         /* -1: an allowed CPU the other is not on
                                  (msr_calib_pick_cpus) */
    uint64_t seed;             /* weights and data (default 1) */
    int batch;                 /* the step's batch: each size is timed over
                                  batch / size micro-batches, as the grid runs
                                  them (0 = the largest size) */
    /* pipelined (msr_calib_pipe.c): after the layer passes, time every stage
     * op inside real pipeline steps of `schedule` (NULL gpipe) on n_stages
     * cores at M = batch / size for each size (batch required, sizes that do
     * not divide it are skipped there), remat never and always, rounds
     * interleaved across sizes (warm_each: each timed step right after an
     * untimed one of the same pipeline, as the grid's timed steps follow
     * its warm-up; else right after the previous size's step); then scale
     * each layer's times so that its stage's sums equal the trimmed means of
     * those op times (by_median: their medians; the layer passes give the split
     * between layers, the pipeline the totals), the update likewise, and fit
     * the link to the hand-offs measured inside the steps (K >= 2). Rounds:
     * `repeats` at least, more (up to max_rounds, default 4 x repeats) until
     * the median of every (stage, size, op) is known to rel_se (default
     * 0.5 %: its standard error over the median). */
    int pipelined;
    int warm_each;             /* pipelined: an untimed step before each timed
                                  one (doubles the rounds' time; see
                                  docs/validation.md for what it changes) */
    int pool_remat;            /* pipelined: scale the stashing forward and
                                  the recompute to one pool of both, and the
                                  backward of both modes to one (the rule
                                  before recomp_ms and bwd_remat_ms) */
    int by_median;             /* pipelined: scale to the medians of the
                                  in-step samples instead of their trimmed
                                  means (see docs/validation.md) */
    const char *schedule;
    int max_rounds;
    double rel_se;
};

/* The op classes of the pipelined calibration. */
enum msr_pipe_class { MSR_PIPE_F,   /* F keeping its stash (remat never) */
                      MSR_PIPE_FN,  /* F keeping nothing (remat always) */
                      MSR_PIPE_R,   /* recompute (remat always) */
                      MSR_PIPE_BB,  /* B, remat never (after B or F) */
                      MSR_PIPE_BR,  /* B, remat always (after its R) */
                      MSR_PIPE_U,   /* update, after the step's last B */
                      MSR_PIPE_W,   /* W of a split-backward schedule (both
                                       modes; B-never/B-always then hold B + W
                                       of the micro-batch) */
                      MSR_PIPE_NCLASS };

#define MSR_PIPE_NQ 33 /* quantiles of a class's spread (msr_pipe_point.rq) */

struct msr_pipe_point {
    struct msr_stat t;         /* op durations inside the steps (s) */
    double rq[MSR_PIPE_NQ];    /* their spread inside a step: each sample over
                                  the mean of its class's samples in the same
                                  step (the drift between steps, which moves a
                                  whole step, left out), those inside Tukey's
                                  outer fences, at quantiles 0, 1/32, ..., 1,
                                  scaled so that the piecewise-linear
                                  distribution they span has mean 1 (msr_noise
                                  draws from it); all 0 where no samples */
    double rel_se;             /* standard error of the median / median */
    double scale;              /* applied to the layers' pass times */
    double centre_med, centre_mean; /* the median and trimmed mean of the
                                  class's own samples the layers are scaled to
                                  (the updates: of every size); 0 where none */
    double pool_med, pool_mean; /* the same of its pool under opts.pool_remat
                                  (F with R, B of both modes; the others their
                                  own) */
};

struct msr_calib {
    char spec[256];
    char blas[32];
    char stamp[64];            /* UTC time of the run */
    int cpu, peer_cpu, n_cores;
    int repeats, warmup;
    int batch;                        /* micro-batches per timed pass: batch / size */
    int n_sizes, sizes[MSR_CALIB_MAX_SIZES];
    int ref_batch;
    int n_stages;
    char partition[256];              /* layers per stage timed together */
    int n_layers;
    struct msr_calib_layer *layers;   /* [n_layers] */
    struct mdl_profile *net_profile;  /* rt_net_profile: FLOPs, bytes (owned) */
    int n_groups;
    struct msr_calib_group *groups;   /* [n_groups] */
    /* device */
    double gemm_flops;                /* dense forward 1024x1024, 256 rows */
    double fit_rate, fit_batch_half, fit_overhead, fit_r2; /* FLOP model */
    double update_s;                  /* SGD of the whole net */
    double update_bw;                 /* 16 bytes/param / time (see above) */
    double memory_per_core;           /* bytes */
    /* link */
    struct msr_stat handoff_spin, handoff_sleep;   /* one-way, 64 B */
    int n_xfer;
    double xfer_bytes[MSR_CALIB_MAX_SIZES + 1];
    struct msr_stat xfer[MSR_CALIB_MAX_SIZES + 1];
    struct msr_fit xfer_fit;          /* seconds = a + b * bytes */
    double memcpy_bw;                 /* bytes/s, largest activation */
    double link_latency, link_bandwidth;
    double wall_s;                    /* how long calibration took */
    /* pipelined calibration (o->pipelined) */
    int pipelined, pipe_rounds;       /* pipe_rounds: the timed steps of the size
                                         and mode that had the most (one a round,
                                         and one per msr_calib_size_round) */
    int pipe_stages;                  /* the schedule's stages (2 K with two chunks) */
    char pipe_schedule[32];
    int pipe_pooled;                  /* the layers are scaled to pooled classes
                                         (opts.pool_remat): F with R, B of both
                                         modes; else each op class apart, and the
                                         profile has recomp_ms and bwd_remat_ms */
    int pipe_by_mean;                 /* the layers are scaled to the trimmed
                                         means (else the medians) */
    struct msr_pipe_point *pipe;      /* [pipe_stages][n_sizes][MSR_PIPE_NCLASS];
                                         t.n = 0 where not measured */
    struct msr_stat pipe_step[MSR_CALIB_MAX_SIZES][2]; /* the timed steps themselves
                                         (s), per size, remat never [0] and always
                                         [1]: what the profile's prediction of the
                                         same step is checked against, apart from
                                         any drift between calibration and grid;
                                         n = 0 where none */
    int n_handoff;                    /* hand-offs the link is fitted to */
    struct msr_fit handoff_fit;       /* seconds = a + b * bytes, in the steps */
    double pingpong_latency, pingpong_bandwidth; /* the ping-pong link it replaced */
    /* The workers' own copies of their messages in the steps (pipelined,
     * K >= 2): seconds = a + b * bytes of a send (the copy into its
     * channel) and of a receive whose data was there (the copy out), each
     * a point per message size (n = 0: none measured); msg_latency, the
     * median over the receives that waited of their end less their send's
     * end less that receive copy. With both lines the calibrated topology
     * has "messages" (mdl_topology.h) and its links this latency, free of
     * bandwidth (msr_calib_messages). */
    int n_msg_send, n_msg_recv;
    struct msr_fit msg_send_fit, msg_recv_fit;
    double msg_latency;
};

/* Whether c's topology models the workers' message copies (above). */
int msr_calib_messages(const struct msr_calib *c);
/* Whether the transfer fit's slope gives the link's bandwidth: positive, and
 * a rate no faster than memcpy (a transfer is two copies; a slope of noise
 * read 10.7 TB/s beside memcpy's 51 GB/s: helper-127). */
int msr_calib_xfer_slope_ok(const struct msr_calib *c);

#define MSR_PIPE_AT(c, s, i, k) (&(c)->pipe[((size_t)(s) * (c)->n_sizes + (i)) * MSR_PIPE_NCLASS + (k)])
const char *msr_pipe_class_name(enum msr_pipe_class k);
/* The relative standard error of the median of v[0..n) (sorted in place):
 * 1.2533 sigma / sqrt(n) / median with sigma = IQR / 1.349 (normal);
 * 1 for n < 2 or a non-positive median. */
double msr_median_rel_se(double *v, int n);
/* Scales stats so that their medians sum to target: every field of
 * st[0..n) times target / sum of medians (unchanged if that sum is not
 * positive); returns the factor (1 when unchanged). */
double msr_stat_rescale(struct msr_stat *const *st, int n, double target);

int msr_calib_run(const struct msr_calib_opts *o, struct msr_calib **out);
/* The cores a calibration runs on: --cpu (stage 0, the link's first end) and
 * --peer-cpu (stage 1, its second), each given (>= 0) or the first allowed
 * core the other is not on; *n_cores the allowed cores (NULL ok). PS_EUSAGE
 * for a core outside this process's affinity mask. */
int msr_calib_pick_cpus(int cpu, int peer, int *out_cpu, int *out_peer, int *n_cores);

/* The same in steps, so that a caller can interleave the pipelined rounds
 * with its own measurements (validate --check runs them between the grid's
 * rounds, so that the calibration and the steps it predicts see the same
 * machine; its speed drifts by several % over tens of seconds on shared
 * hosts). begin: the layer passes and the link, and the pipes when
 * pipelined (o is copied; the arrays and strings it points to must outlive
 * the session). round: one pipelined round; 1 once enough ran (always 1
 * when not pipelined), 0 while more are wanted, < 0 on error. end: the
 * calibration (*out as from msr_calib_run), and frees the session, also on
 * error; msr_calib_session_free abandons one (NULL ok). msr_calib_run is
 * begin, rounds until 1, end. */
typedef struct msr_calib_session msr_calib_session;
int msr_calib_begin(const struct msr_calib_opts *o, msr_calib_session **out);
int msr_calib_round(msr_calib_session *s);
/* Up to n rounds (fewer once enough ran); 0, or < 0 on error. */
int msr_calib_rounds(msr_calib_session *s, int n);
/* A pipelined session's two steps (remat never, always) at micro-batch
 * size micro alone, timed: so that a caller can time each size's
 * calibration steps right before its own measurements of that size
 * (validate --check's opts.before_point), seconds apart instead of a round
 * apart. The warm-up rounds (opts.warmup) must have run first
 * (msr_calib_rounds): PS_EINVAL before. They count towards no round;
 * pipe_rounds then adds the most steps any size took. 0 (nothing run) for a
 * size not calibrated, a session that is not pipelined or has ended its
 * rounds; < 0 on error. */
int msr_calib_size_round(msr_calib_session *s, int micro);
int msr_calib_end(msr_calib_session *s, struct msr_calib **out);
/* A pipelined calibration's layers rescaled to the pools' trimmed means
 * (by_mean) or medians, as opts.by_median would have scaled them: the same
 * samples under the other rule, for paired comparisons. 0 (nothing to do)
 * for one that is not pipelined or already so. */
int msr_calib_recentre(struct msr_calib *c, int by_mean);
/* The same for the pools: pooled = 1 as opts.pool_remat, 0 each class
 * apart (the default), on the same samples. Pooled, R's and B-after-R's
 * layer stats move by their partner's factor from where they were (so
 * after a switch they are not those of a fresh pool_remat run); the pooled
 * profile has no recomp_ms or bwd_remat_ms, so it does not read them. */
int msr_calib_repool(struct msr_calib *c, int pooled);
void msr_calib_session_free(msr_calib_session *s);

/* Op times that vary as the calibration's in-step samples did: a draw for
 * the simulator (sim/sim_engine.h, struct sim_draw) that gives each compute
 * op of a step at micro-batch size `micro` its tabled time times a factor
 * drawn from its class's spread at that size and stage (msr_pipe_point.rq:
 * F of a stashed micro-batch, F without stash, R, B of each mode, W, U),
 * from GSL's MT19937 seeded with seed. Factor 1 where the calibration has
 * no samples (a stage it did not have, a class without samples) and for a
 * class with one op per step (the update; every class at M = 1), whose
 * spread inside a step is nil. A split-backward schedule's B draws from the
 * spread of B + W of a micro-batch (what the calibration's B classes hold),
 * its W from W's. The factors have mean 1, so the mean step of the ops
 * stays the profile's; what changes is the step, a max over paths: ops that
 * vary independently on two devices leave waits that mean times do not
 * (docs/validation.md). Borrows c, which must outlive it. *out = NULL (and
 * 0) when there is nothing to draw from: a calibration that is not
 * pipelined, or a size it did not run. */
struct msr_noise;
struct sim_draw;
int msr_noise_new(const struct msr_calib *c, int micro, uint64_t seed, struct msr_noise **out);
const struct sim_draw *msr_noise_draw(const struct msr_noise *n);
void msr_noise_free(struct msr_noise *n);
void msr_calib_free(struct msr_calib *c);

/* The measured profile described above (*out from mdl_profile_free). */
int msr_calib_profile(const struct msr_calib *c, struct mdl_profile **out);
/* This machine's topology (*out from mdl_topology_free). */
int msr_calib_topology(const struct msr_calib *c, struct mdl_topology **out);

/* Report: the fits, device and link figures (ANA_FMT_TABLE), or the long CSV
 * scope,name,op,batch,median_us,p25_us,p75_us,fit_us,resid_pct,a_us,b_us,r2
 * (ANA_FMT_CSV); no JSON (ANA_FMTS_TABLE_CSV). */
int msr_calib_print(const struct msr_calib *c, enum ana_fmt fmt, FILE *f);
const char *msr_calib_op_name(enum msr_calib_op op);

/* Measuring on cores shared with other jobs: on = 1 puts the calling
 * thread, and every thread it creates afterwards (calibration threads,
 * runtime workers inherit it), under SCHED_FIFO at priority 10, so other
 * processes' time slices stop landing inside timed ops (the kernel's RT
 * throttling still leaves them 5 % of each core); on = 0 restores
 * SCHED_OTHER. PS_ERUNTIME when not permitted (needs CAP_SYS_NICE), with
 * the scheduling left as it was. */
int msr_realtime(int on);

/* The kernel's RT throttling, which msr_realtime's threads are under:
 * SCHED_FIFO threads may use runtime_us of every period_us
 * (kernel.sched_rt_runtime_us and sched_rt_period_us; runtime -1: no
 * limit). The kernel's default, 950000 of 1000000, stops FIFO workers that
 * spin in their receives for about 50 ms once a second. dir holds the two
 * files (NULL: /proc/sys/kernel; tests give their own). PS_EIO when a file
 * cannot be read or does not hold one integer. */
int msr_rt_throttle_read(const char *dir, long *runtime_us, long *period_us);
/* Writes runtime_us (-1 lifts the limit; root), the value before in *old
 * when old is not NULL. PS_EINVAL for a value below -1, PS_EIO when the
 * file cannot be read or written. */
int msr_rt_throttle_set(const char *dir, long runtime_us, long *old);
/* One line for a report: "RT throttling: FIFO threads may use 950 of every
 * 1000 ms (kernel.sched_rt_runtime_us)", "... off (...= -1)" or
 * "... unknown (<reason>)". Returns 1 when a limit below the period
 * applies, 0 when none does, -1 when unknown (the error cleared). */
int msr_rt_throttle_describe(const char *dir, char *buf, size_t n);

/* ---- the fits, exposed for tests ---- */
/* y = a + b x; relative != 0 weights by 1/y^2. n >= 1 (n = 1: a = 0).
 * PS_EINVAL for n < 1, n > MSR_CALIB_MAX_SIZES + 1 or a non-positive y
 * when relative. */
int msr_fit_line(const double *x, const double *y, int n, int relative, struct msr_fit *out);
/* t_i = overhead + (f_i n_i + batch_half f_i) / rate over n points
 * (gsl_multifit_wlinear, weights 1/t^2); needs n >= 3 and two distinct f n.
 * *r2 over the points. */
int msr_fit_flops(const double *f, const double *n_samples, const double *t, int n,
                  double *rate, double *batch_half, double *overhead, double *r2);
/* Median and quartiles of v[0..n) (sorted in place). */
void msr_stat_of(double *v, int n, struct msr_stat *out);
/* Tukey's outer fences of s, p25 - 3 IQR and p75 + 3 IQR: the samples
 * inside them are the ones s->mean (the trimmed mean) averages. */
void msr_stat_fences(const struct msr_stat *s, double *lo, double *hi);

#endif
