/*
 * sim_membudget — one engine run's memory, estimated before it allocates:
 * the schedule's op lists (sch_schedsize.h), the engine's records, build
 * indexes and event queue, and the trace when one is recorded; checked
 * against what is available (ps_memavail.h).
 *
 * No state, no ownership. Cost: O(K) per estimate, a few small file reads
 * per check.
 */
#ifndef SIM_MEMBUDGET_H
#define SIM_MEMBUDGET_H

#include "base/ps_memavail.h"
#include "sched/sch_schedsize.h"

/* One engine run (sim_engine) of that schedule: see sim_membudget.c for what
 * it covers and how it compares with the measured peak RSS. */
struct sim_mem_run {
    struct sch_mem_sched sched;
    double engine_bytes; /* records, build indexes, event queue */
    double trace_bytes;  /* trace events and counters (record_trace) */
    double total;
};
/* compact: the run replays GPipe's compact form (sch_schedule_gpipe_compact:
 * 4 runs per device, no op lists). */
int sim_mem_run_estimate(const char *schedule, int K, int M, enum sch_remat remat,
                         int replicas, int record_trace, int compact, struct sim_mem_run *out);
/* sim_mem_run_estimate then ps_mem_check, naming what ("predict") and
 * the sizes; 0 when the schedule is unknown (its generator reports that). */
int sim_mem_check_run(const char *what, const char *schedule, int K, int M,
                      enum sch_remat remat, int replicas, int record_trace, int compact);

#endif
