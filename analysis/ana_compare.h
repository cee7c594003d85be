/*
 * ana_compare — a simulated trace against a measured one.
 *
 * Ops are aligned by (device, kind, stage, micro-batch); both traces must
 * hold the same set (else PS_EINVAL listing what differs). Reported:
 * makespan error, bubble-fraction error, per-device busy error, per-op
 * duration error (median, p95 of |relative error| and the op at the p95),
 * start-time drift, peak
 * memory per device side by side, and the largest discrepancies with their
 * likely cause. A discrepancy is either an op's own duration error
 * ("compute slower than modelled", "transfer slower than modelled", or
 * faster) or the extra time an op waited beyond what its stream
 * predecessor explains ("waiting on a dependency"); ties rank duration
 * causes first. Errors are measured minus simulated.
 * Ownership: ana_compare_new / ana_compare_free (NULL ok). Cost:
 * O(events log events).
 */
#ifndef ANA_COMPARE_H
#define ANA_COMPARE_H

#include <stdio.h>

#include "analysis/ana_format.h"
#include "traces/trc_trace.h"

enum ana_cause { ANA_CAUSE_COMPUTE, ANA_CAUSE_TRANSFER, ANA_CAUSE_WAIT };

struct ana_discrepancy {
    struct trc_event sim, meas;
    int64_t error_ns;          /* signed: measured - simulated */
    enum ana_cause cause;
};

struct ana_compare {
    int n_devices, n_stages, n_micro;
    size_t n_ops;
    int64_t makespan_sim, makespan_meas;
    double makespan_err;       /* relative */
    double bubble_sim, bubble_meas;
    double *busy_sim, *busy_meas;      /* [dev] busy fraction of makespan */
    int64_t *peak_act_sim, *peak_act_meas, *static_sim, *static_meas; /* [dev] */
    double dur_err_median, dur_err_p95; /* |relative| over ops with sim dur > 0; NAN
                                           when none has (n_dur 0): no figure */
    size_t n_dur;
    struct trc_event p95_sim, p95_meas; /* the op at the p95 (zeroed when none):
                                           a large p95 is often a short op's */
    int64_t drift_median_ns, drift_max_ns; /* |start_meas - start_sim| */
    int n_top;
    struct ana_discrepancy top[10];
};

/* Whether the two traces are of one configuration: the same devices, stages and
 * micro-batches, and where both headers name them the same schedule, replicas and
 * batch (partitions may differ); PS_EINVAL naming the field otherwise. */
int ana_compare_same_run(const struct trc_trace *sim, const struct trc_trace *meas);
int ana_compare_new(const struct trc_trace *sim, const struct trc_trace *meas,
                    struct ana_compare **out);
void ana_compare_free(struct ana_compare *c);
/* Compares against another simulated step time (ns) than the trace's: sets
 * makespan_sim and makespan_err from it (the op-by-op figures stay the
 * trace's). */
void ana_compare_set_makespan_sim(struct ana_compare *c, int64_t ns);
/* The same for the measured makespan: a runtime's own step time (from its
 * step's start to its last worker's end), which the trace's last op end
 * falls short of by the workers' closing bookkeeping. */
void ana_compare_set_makespan_meas(struct ana_compare *c, int64_t ns);
/* fmt: any of table, csv, json. */
int ana_compare_print(const struct ana_compare *c, enum ana_fmt fmt, FILE *f);
const char *ana_cause_name(enum ana_cause c, int64_t error_ns);

#endif
