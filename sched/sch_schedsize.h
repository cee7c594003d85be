/*
 * sch_schedsize — the op lists of a schedule before it is built: the exact
 * op count and the bytes of its per-device arrays as the generators
 * allocate them, so a run too big for memory is refused before any work
 * (checked against what is available with ps_mem_check, ps_memavail.h).
 *
 * No state, no ownership. Cost: O(K) per estimate.
 */
#ifndef SCH_SCHEDSIZE_H
#define SCH_SCHEDSIZE_H

#include <stdint.h>

#include "sched/sch_schedule.h"

/* The op lists of a schedule before it is built: exact op count and the
 * bytes of its per-device arrays as the generators allocate them (capacity).
 * Returns 0, or 1 for a name or size the generators would refuse (they then
 * report it; nothing is estimated). */
struct sch_mem_sched {
    int n_stages;
    int64_t n_ops;
    double bytes;        /* op arrays (capacity x sizeof(struct sch_op)) */
};
int sch_mem_sched_estimate(const char *schedule, int K, int M, enum sch_remat remat,
                           int replicas, struct sch_mem_sched *out);
/* The stage count sch_schedule_build would give, without building when the
 * estimate knows the name and size; one it does not know is built (and
 * freed), so a generator's refusal is reported exactly as by the build.
 * 0 or the build's error. O(K), or one build. */
int sch_schedule_stages(const char *schedule, int K, int M, enum sch_remat remat, int *n_stages);

#endif
