/*
 * msr_validate — `pipesim validate --check`: the simulator against real runs
 * over a grid of configurations, stored and reported.
 *
 * For each (K, M, remat) of the grid (points whose M does not divide the
 * batch are skipped): predict one step with the given (calibrated) profile
 * and topology (ana_predict, trace recorded), run the same schedule for
 * real on the validation runtime (rt_pipe: warm-up steps, then `steps`
 * timed steps with their traces), and compare (ana_compare) the simulated
 * trace with the measured step of median time, and with the fastest step
 * (the least disturbed by other load on shared cores); the involuntary
 * context switches of each step (getrusage) are kept as a noise indicator.
 * The median and fastest steps are also replayed on their own op times
 * (msr_replay_step, after every round): the replays separate the model's
 * error from the calibration's and the drift's. Before running, the
 * harness sets glibc's mmap and trim thresholds high (mallopt) so that
 * steady-state steps reuse heap memory instead of page-faulting fresh
 * buffers from the kernel, as training frameworks' caching allocators do.
 *
 * Accuracy (msr_vcheck_accuracy): over the points, median and max
 * |makespan error|, max |bubble-fraction error| (points), max peak
 * activation memory error (relative, worst device) — the figures of
 * `make bench` with targets 2 %, 5 %, 1 point and 1 %.
 *
 * Storage (msr_vcheck_store, msr_validate_db.c): SQLite, one transaction per
 * run; PRAGMA application_id ANA_VCHECK_APPLICATION_ID ('PSVC') and schema
 * version in PRAGMA user_version (ANA_VCHECK_SCHEMA), set at creation and
 * checked (msr_vcheck_db_prepare) before the grid runs (ana_dbkind.h). Tables
 * runs, points, devices, discrepancies; see msr_validate_db.c.
 * Report (msr_vcheck_report, msr_validate_report.c): Markdown table and
 * figures, and a gnuplot PNG of predicted vs measured step time and bubble.
 *
 * Ownership: msr_vcheck_run borrows the profile and topology and allocates
 * *out (traces and comparisons included); msr_vcheck_free (NULL ok).
 * Cost per point: one simulation plus (warm-up + steps) real steps per
 * round, and two replays (a simulation each).
 */
#ifndef MSR_VALIDATE_H
#define MSR_VALIDATE_H

/* Of the workers' time, the part spent runnable but waiting for a CPU above
 * which validate and validate --check say the machine was busy. */
#define MSR_BUSY_RUNQ 0.05

#include <stdint.h>
#include <stdio.h>

#include "analysis/ana_compare.h"
#include "analysis/ana_dbkind.h" /* ANA_VCHECK_APPLICATION_ID, ANA_VCHECK_SCHEMA */
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_schedule.h"
#include "traces/trc_trace.h"

#define MSR_VCHECK_MAX_STEPS 1000

struct msr_noise; /* measure/msr_calib.h */
struct sim_draw;  /* sim/sim_engine.h */

/* Accuracy targets of the issue (bench_accuracy prints ratios to them). */
#define MSR_TARGET_MAKESPAN_MEDIAN 0.02
#define MSR_TARGET_MAKESPAN_MAX 0.05
#define MSR_TARGET_BUBBLE_POINTS 1.0
#define MSR_TARGET_PEAK_ACT 0.0 /* exact: the "peak memory exact" */

struct msr_vcheck_opts {
    const char *spec;                  /* runtime net */
    int batch, steps, warmup_steps;    /* steps >= 1 */
    /* rounds (0 = 1): every point of a K runs warm-up + steps once per
     * round, the rounds one after another, so the measured spread of a
     * point spans the machine's drift over the grid; a point's figures are
     * over all rounds x steps timed steps */
    int rounds;
    const char *schedule;              /* NULL = "gpipe" */
    const int *Ks, *Ms;
    int n_K, n_M;
    const enum sch_remat *remats;
    int n_remat;
    const struct mdl_profile *profile; /* borrowed */
    const struct mdl_topology *topo;   /* borrowed */
    /* optional [n_K]: the profile and topology to predict Ks[i] with
     * (calibrated in Ks[i] stages); NULL or NULL entries: the above */
    const struct mdl_profile *const *profile_for_K;
    const struct mdl_topology *const *topo_for_K;
    /* optional: called before the points of each K run, to calibrate in K
     * stages just before measuring them (the machine's speed drifts over
     * tens of seconds); sets the profile and topology for that K (the
     * caller's, alive until msr_vcheck_run returns). Overrides the above. */
    int (*prepare)(void *ctx, int K, const struct mdl_profile **prof,
                   const struct mdl_topology **topo);
    void *prepare_ctx;
    /* optional, with prepare and rounds: the calibration measured alongside
     * the grid. begin(ctx, K) once before K's rounds, between(ctx, K, r)
     * before K's round r (calibration rounds go there), and prepare after
     * the rounds (the calibration done), then the points are predicted, so
     * calibration and grid span the same minutes of the machine. */
    int (*begin)(void *ctx, int K);
    int (*between)(void *ctx, int K, int round);
    /* optional, with between: called right before each point's steps of
     * each round (K, its micro-batch size and remat mode, the round), so
     * that the calibration can time that size's steps seconds before the
     * point's own (msr_calib_size_round) rather than a round before */
    int (*before_point)(void *ctx, int K, int micro, enum sch_remat remat, int round);
    /* optional, with a pipelined calibration: the median of the
     * calibration's own timed steps of this K, micro-batch size and remat
     * mode (never and always: the steps the calibration ran), 0 when none.
     * Set after prepare; the points' step_own_s. */
    double (*own_step)(void *ctx, int K, int micro, enum sch_remat remat);
    /* optional, with draws > 0: op times that vary as measured ones do (a
     * pipelined calibration's msr_noise_new for K and the micro-batch size,
     * seeded with seed; NULL *out: none for this point). Set after prepare.
     * Each point is then simulated draws more times with them, and its
     * step_sim_s is the median of those steps (the lower middle one for an
     * even count) and its simulated bubble that step's (the step of the mean
     * op times kept in step_det_s; the op-by-op comparison and the devices'
     * busy times stay those of its trace): the step the model predicts is
     * a median step, as the measured figure is, and the waits that ops
     * varying independently on two devices leave are in it. */
    int (*noise)(void *ctx, int K, int micro, uint64_t seed, struct msr_noise **out);
    int draws;
    const char *profile_desc;          /* where they came from, for the stamp */
    const char *topology_desc;
    uint64_t seed;
    int no_pin;
    FILE *progress;                    /* one line per point, or NULL */
};

/* The model on one measured step's own op times (msr_validate_replay.c):
 * the step's schedule s simulated with each (stage, op kind, re-materialized
 * or not) at the plain mean of meas's ops of that kind, every pair of
 * devices joined by a link free of bandwidth. A measured step's workers
 * copy their messages themselves (the runtime's convention): its devices
 * get the step's mean send and mean receive that did not wait as
 * "messages" (mdl_topology.h), and the links the median over the receives
 * that waited of their end less their send's end less that receive copy;
 * another trace (the engine's) the median hand-off of its receives that
 * waited (a send's start to the end of its receive). Which receives waited
 * is msr_msgwalk.h's rule (more than MSR_MSG_WAIT_NS after the ops before
 * it on its device ended). Then compared with meas as a point is (ana_compare). What
 * it leaves is the model's error apart from any calibration and drift.
 * meas need not be sorted. PS_EINVAL when meas is not a step of s's shape.
 * Cost: one simulated step and one comparison, O(ops log ops). */
struct msr_replay {
    double makespan_err;       /* measured / simulated - 1 */
    double bubble_err;         /* measured - simulated bubble (fraction) */
    double handoff_s;          /* the step's median hand-off (above) */
    double latency_s;          /* the links' latency used: a measured step's
                                  from a send's end, else the hand-off */
    double step_sim_s, step_meas_s, bubble_sim, bubble_meas;
    double msg_send_s, msg_recv_s; /* a measured step's message copies (0 else) */
};
int msr_replay_step(const struct sch_schedule *s, const struct trc_trace *meas,
                    struct msr_replay *out);
/* The same with other op times, to see what the means miss: MSR_REPLAY_OWN
 * gives each compute op its own measured time, MSR_REPLAY_SHUFFLED the
 * times of its (stage, kind, re-materialized or not) shuffled among its
 * ops (the same spread, no order in time; GSL's MT19937 seeded with the
 * low 32 bits of seed, 0 being GSL's default 4357). Through the engine's
 * per-op draw (sim_engine.h), whose table then holds each row's longest
 * op, so the draw's bound (16 x tabled) never cuts an op. */
enum msr_replay_times { MSR_REPLAY_MEANS, MSR_REPLAY_OWN, MSR_REPLAY_SHUFFLED };
int msr_replay_step_with(const struct sch_schedule *s, const struct trc_trace *meas,
                         enum msr_replay_times how, uint64_t seed, struct msr_replay *out);

/* `pipesim compare --replay MEASURED.json` (msr_validate_replay.c; printed
 * by msr_validate_replay_print.c): a measured step (validate --trace)
 * replayed with the means, with each op's own time and with n_shuffles
 * shuffles (seeds seed, seed + 1, ...), its schedule rebuilt from the
 * trace's name, devices, micro-batches and remat mode after checking, before
 * building anything, that the trace holds exactly that schedule's op count
 * and stages and that its lists fit in memory (ps_mem_check, PS_ENOMEM).
 * PS_EINVAL for a trace that is not a measured step pipesim can rebuild (a
 * simulated one, no schedule name, another op set, a size the schedule's
 * generator refuses); PS_EUSAGE for n_shuffles outside [0,
 * MSR_REPLAY_MAX_SHUFFLES]. Ownership: *out to msr_replay_report_free (NULL
 * ok). Cost: n_shuffles + 2 replays. */
#define MSR_REPLAY_MAX_SHUFFLES 1000
struct msr_replay_report {
    char schedule[32], remat[16];
    int K, M;
    struct msr_replay means, own;
    int n_shuffles;
    uint64_t seed;
    struct msr_replay *shuffled;       /* [n_shuffles] */
};
int msr_replay_report_new(const struct trc_trace *meas, int n_shuffles, uint64_t seed,
                          struct msr_replay_report **out);
void msr_replay_report_free(struct msr_replay_report *r);
int msr_replay_report_print(const struct msr_replay_report *r, enum ana_fmt fmt, FILE *f);

struct msr_vpoint {
    char schedule[32];                 /* the run's schedule */
    int K, M, micro;
    enum sch_remat remat;
    double step_sim_s;
    double step_det_s;                 /* with opts.draws: the step of the mean op
                                          times (step_sim_s the drawn median);
                                          else step_sim_s */
    int n_drawn;                       /* draws behind step_sim_s (0: none) */
    double bubble_drawn;               /* with them: the simulated bubble */
    double step_med_s, step_min_s, step_max_s; /* measured steps: the spread */
    double step_own_s;                 /* the median of the calibration's own steps
                                          of this point (opts.own_step), 0 if none:
                                          the model's error apart from the drift */
    double bubble_min, bubble_max;     /* measured bubble fractions, the spread */
    int n_steps;
    long preempt_med, preempt_all;     /* involuntary context switches of the
                                          process in the median step / all
                                          timed steps: other load on the cores */
    double runq_frac;                  /* of the workers' time in the timed steps,
                                          the part runnable but waiting for a CPU
                                          (rt_thread_runq_wait_ns); -1 unknown;
                                          above MSR_BUSY_RUNQ: a busy machine */
    struct ana_compare *cmp;           /* simulated vs the median step */
    struct ana_compare *cmp_min;       /* simulated vs the fastest step */
    double kind_err[SCH_OP_NKINDS];    /* median (meas - sim) / sim duration of
                                          the compute ops of each kind (F, B, R,
                                          W, U; NaN where none), median step */
    double peak_err;                   /* max over devices |meas - sim| / sim */
    int64_t peak_sim, peak_meas;       /* on the device of peak_err */
    struct trc_trace *sim_trace, *meas_trace; /* the median step (owned) */
    struct msr_replay replay, replay_min; /* the model on the median (fastest)
                                          step's own op times (msr_replay_step):
                                          its error apart from the calibration
                                          and the drift */
};

struct msr_vcheck {
    char spec[256], schedule[32], blas[32], stamp[64];
    char profile_desc[512], topology_desc[512];
    int batch, steps, warmup_steps, n_cpus;
    int rounds;                        /* >= 1: each point's timed steps are
                                          rounds x steps (its n_steps) */
    uint64_t seed;
    int n_points;
    int n_skipped;                     /* grid points the schedule has no list
                                          for (PS_EUSAGE from its generator) */
    struct msr_vpoint *pts;
    double wall_s;
};

struct msr_accuracy {
    int n;
    int fastest;               /* 1: figures from the fastest steps */
    double mk_median, mk_max;  /* |relative makespan error| */
    double bubble_max;         /* |error| in percentage points */
    double peak_max;           /* relative */
    int i_mk_max, i_bubble_max, i_peak_max; /* point indices of the worst */
    int n_miss;                /* points whose prediction lies outside the
                                  measured spread of steps (model misses) */
    double miss_max;           /* the largest distance from a spread to its
                                  prediction, relative to the median step */
    int i_miss_max;            /* -1 when no miss */
    int own_n;                 /* points with step_own_s: the prediction against
                                  the calibration's own steps (no drift between
                                  them), and the measured steps against those */
    double own_median, own_max, drift_median, drift_max;
    /* the model on each point's median (fastest) step's own op times
     * (msr_vpoint.replay, replay_min): |makespan error| (relative) and
     * |bubble error| (points), their signed means */
    double replay_median, replay_max, replay_mean;
    double replay_bub_median, replay_bub_max, replay_bub_mean;
    int i_replay_max, i_replay_bub_max;
    int i_own_max;
};

int msr_vcheck_run(const struct msr_vcheck_opts *o, struct msr_vcheck **out);
/* What the options alone decide, before any output is made (msr_vcheck_run
 * checks it again; msr_validate_precheck.c): the net parses (its spec's
 * error); some M divides the batch and every K has a step at one of them in
 * one of the remat modes (PS_EUSAGE with the schedule's reason: dualpipe-v
 * needs M >= 2K); every K's stages have a layer each (PS_ENOFIT); and
 * o->profile, when no prepare calibrates one, is the net's
 * (msr_vcheck_profile_fits). Cost: a net parse, a schedule build per K (and
 * per M and remat mode skipped), the profile's layers. */
int msr_vcheck_precheck(const struct msr_vcheck_opts *o);
/* PS_EINVAL "profile P has L layers, net N has ..." (or a layer whose
 * params or output bytes differ): prof is not net's profile. */
struct rt_net;
int msr_vcheck_profile_fits(const struct mdl_profile *prof, const struct rt_net *net);
/* Drawn op times for msr_vpoint_simulate: draw, n runs; out: the median
 * step and its bubble. */
struct msr_vdraws {
    const struct sim_draw *draw;
    int n;
    double step_s, bubble;
};
/* The step point pt's grid predicts for schedule and batch on prof/topo
 * (its K, M and remat; the lists the runtime replays): *step_s, and with
 * trace non-NULL the simulated trace (the caller's); with dr (NULL: none)
 * also dr->n runs with drawn op times, their median into dr. */
int msr_vpoint_simulate(const char *schedule, int batch, const struct mdl_profile *prof,
                        const struct mdl_topology *topo, const struct msr_vpoint *pt,
                        double *step_s, struct trc_trace **trace, struct msr_vdraws *dr);
/* The seed msr_vcheck_run gives opts.noise for point pt (from opts.seed):
 * one per K, M and remat mode, so that a point's draws do not depend on the
 * others'; a caller re-simulating the point with the same draws pairs its
 * comparison on the same random numbers. */
uint64_t msr_vpoint_seed(uint64_t seed, const struct msr_vpoint *pt);
/* 1 when the predicted step lies inside the measured spread [min, max]:
 * the difference is then within the noise, not a model miss. */
int msr_vpoint_in_spread(const struct msr_vpoint *pt);
void msr_vcheck_free(struct msr_vcheck *v);

/* fastest = 0: the median steps; 1: the fastest steps. */
void msr_vcheck_accuracy(const struct msr_vcheck *v, int fastest, struct msr_accuracy *a);
/* The figures against their targets as ratios; for each missed target the
 * point and the ops (ana_compare's largest discrepancies) that account for
 * the error. */
int msr_accuracy_print(const struct msr_vcheck *v, const struct msr_accuracy *a, FILE *f);
/* validate --check --format: table, the accuracy figures of the median and
 * of the fastest steps (msr_accuracy_print); csv, one row per point; json,
 * both with the targets (msr_validate_print.c). PS_EINVAL without points. */
int msr_vcheck_print(const struct msr_vcheck *v, enum ana_fmt fmt, FILE *f);

/* Before any work: creates the database at path with its schema, or checks
 * that an existing one is a validation database of this schema (stamping
 * one of the previous release). PS_EUSAGE for a name SQLite keeps off disk
 * ("", ":memory:", "file:"), PS_EDB for a sweep database, another
 * program's, another schema version or a lock held too long; PS_EIO for a
 * read-only file or a full disk, PS_ENOMEM when SQLite runs out of memory
 * (base/ps_sqlite.h); a refused file is not modified. */
int msr_vcheck_db_prepare(const char *path);
/* Appends the run (every point, device and discrepancy) to the SQLite
 * database at path, creating it and its schema if needed, with the checks
 * of msr_vcheck_db_prepare. command: the command line, for the stamp. */
int msr_vcheck_store(const struct msr_vcheck *v, const char *path, const char *command,
                     int64_t *run_id);
/* Markdown report at md_path; with png_path, the plot too (gnuplot; the
 * report says so when gnuplot is missing). Both written atomically: now
 * (b NULL), or held in the batch b (ana_plot.h) and published with its set.
 * With timeline_path (written by the caller, msr_plot_timelines_in, before),
 * the report shows the worst point's timelines too; figures are linked as
 * seen from the report's folder. */
struct ana_plot_batch;
int msr_vcheck_report(const struct msr_vcheck *v, const char *md_path, const char *png_path,
                      const char *timeline_path, struct ana_plot_batch *b);

#endif
