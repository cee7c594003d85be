/*
 * ana_schedules — several schedules side by side on one model, topology,
 * K, M, batch and re-materialization mode: step time, throughput, speedup,
 * simulated bubble beside the schedule's uniform-stage formula, and peak
 * activation / total memory per device (interleaved schedules put v stages
 * on a device, so memory is reported per device; for the others device d
 * holds stage d).
 *
 * Each schedule is one ana_predict run (uniform partition over the
 * schedule's S stages). A schedule that cannot run here (interleaved with
 * M % K != 0, a topology without the link interleaving needs, ...) gets a
 * row with its error instead of figures; an unknown schedule name is a
 * PS_EUSAGE error for the whole comparison.
 *
 * Ownership: ana_schedules_compare allocates *out; ana_sched_cmp_free
 * (NULL ok). Cost: one prediction per schedule plus one K = 1 baseline.
 */
#ifndef ANA_SCHEDULES_H
#define ANA_SCHEDULES_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/ana_predict.h"
#include "base/ps_error.h"

struct ana_sched_row {
    char schedule[32];
    enum sch_remat remat;     /* the mode this row ran with */
    char error[PS_ERRMSG_MAX]; /* "" when the schedule ran */
    int n_stages;
    double step_s, samples_per_s, speedup;
    double bubble_sim;
    double bubble_formula;    /* NaN where no closed form applies */
    int64_t peak_act_max, peak_mem_max;
    int fits;
    int64_t short_ops, compute_ops; /* ana_prediction's: ops under the 1 ns tick */
    int64_t *static_mem;      /* [K] per device */
    int64_t *peak_act;        /* [K] */
    int64_t *peak_mem;        /* [K] */
    double *capacity;         /* [K] */
};

struct ana_sched_cmp {
    char model[256], topology[256];
    int K, M;
    double batch, micro_batch;
    enum sch_remat remat;
    int remat_per_schedule;   /* rows chose their own mode (ana_schedules_compare_auto) */
    double baseline_step_s;
    int baseline_fits;            /* the K = 1 baseline fits one device */
    double baseline_peak;         /* its peak bytes */
    char baseline_skipped[320];   /* why the baseline was not simulated (the whole
                                   * model on one device is beyond the engine's
                                   * range): speedups are NaN; "" when it ran */
    int n;
    struct ana_sched_row *rows;   /* [n] */
};

/* base: everything but the schedule (base->schedule and base->partition are
 * ignored: every schedule gets the uniform partition of its own stages). */
int ana_schedules_compare(const struct ana_config *base, const char *const *names, int n,
                          struct ana_sched_cmp **out);
/* The same, each schedule with the re-materialization mode that suits it:
 * of never, except_last and always, the fastest whose every device fits
 * (ties: that order), else the one with the least peak memory. Three
 * comparisons; the rows say which mode each took. */
int ana_schedules_compare_auto(const struct ana_config *base, const char *const *names, int n,
                               struct ana_sched_cmp **out);
void ana_sched_cmp_free(struct ana_sched_cmp *c);
/* The warning of a comparison some of whose rows have short_ops > 0, for
 * stderr: "gpipe 22 of 24, 1f1b 22 of 24 compute ops are shorter than ...
 * lower bounds" (no newline) in buf (n bytes); 0 (buf empty) when none has. */
int ana_sched_cmp_short_ops(const struct ana_sched_cmp *c, char *buf, size_t n);
/* fmt: any of table, csv, json. */
int ana_sched_cmp_print(const struct ana_sched_cmp *c, enum ana_fmt fmt, FILE *f);

/* The schedule's bubble on uniform stages without communication, from the
 * per-stage forward tf and backward tb (seconds, any unit) of one
 * micro-batch on one device's share of the model:
 *   gpipe, 1f1b, eager-1f1b, breadth-first   (K-1) / (M+K-1)
 *   interleaved:v    (K-1) / (vM+K-1)                     (M % K == 0)
 *   breadth-first:v  (K-1) / (vM+K-1)                     (M >= K)
 *   zb-h1            (K-1)c / (M(tf+tb) + (K-1)c), c = max(tf, tb - tw), M >= K
 *   zb-h2            (K-1) / (3M+K-1)              (tf = tb/2, M >= K)
 *   zb-v, dualpipe-v (K-1) / (6M+K-1)              (tf = tb/2; M >= K, M >= 2K)
 * tw is the weight-gradient part W of tb (split-backward schedules): the
 * zero-bubble forms hold for the paper's equal halves only, so zb-h1 and
 * zb-h2 give NaN when tw differs from tb/2 (a profile that states its
 * work by op class has B != W).
 * NaN where none applies (zb-h1 with M < K, unknown names). These are the
 * figures tests/test_schedules.c asserts against the engine. */
double ana_bubble_formula(const char *schedule, int K, int M, double tf, double tb,
                          double tw);
/* The formula ana_bubble_formula takes for schedule, as printed beside its
 * figure: "(K-1)/(M+K-1)" (gpipe, 1f1b, eager-1f1b, breadth-first),
 * "(K-1)/(vM+K-1)" (interleaved:v, breadth-first:v), "(K-1)/(3M+K-1)"
 * (zb-h2), "(K-1)/(6M+K-1)" (zb-v, dualpipe-v), else "on uniform stages". */
const char *ana_bubble_formula_name(const char *schedule);

#endif
