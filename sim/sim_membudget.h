/*
 * sim_membudget — refuse a run that cannot fit in memory before allocating.
 *
 * Available memory is the least of: MemAvailable (/proc/meminfo); for the
 * process's own cgroup and each ancestor (from /proc/self/cgroup), the
 * cgroup v2 memory.max minus memory.current ("max" = no limit) and the
 * cgroup v1 memory.limit_in_bytes minus memory.usage_in_bytes; RLIMIT_AS
 * minus VmSize and RLIMIT_DATA minus VmData when set. The environment
 * variable PIPESIM_MEMORY_LIMIT=BYTES (suffix K, M, G or T, powers of 1024)
 * replaces all of them: a way to cap a run, and what the tests use.
 *
 * Estimates are computed from sizes known up front (K, M, schedule, net
 * shapes) and cover the big arrays only; sim_mem_check refuses (SIM_ENOMEM,
 * exit 6) only when the estimate exceeds 0.9 x what is available, so a
 * run that may fit is never refused.
 *
 * No state, no ownership. Cost: a few small file reads per check (none
 * below SIM_MEM_FLOOR bytes).
 */
#ifndef SIM_MEMBUDGET_H
#define SIM_MEMBUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim_schedule.h"

#define SIM_MEM_ENV "PIPESIM_MEMORY_LIMIT"
#define SIM_MEM_MARGIN 0.9          /* refuse when need > margin x available */
#define SIM_MEM_FLOOR (16.0 * 1024 * 1024) /* needs below this are never checked */

struct sim_mem_avail {
    double bytes;        /* INFINITY when nothing limits (or nothing could be read) */
    char source[48];     /* where the figure came from: "MemAvailable", ... */
};

/* The files the figure comes from; the tests point them at a temp dir. */
struct sim_mem_paths {
    const char *meminfo;      /* /proc/meminfo */
    const char *self_cgroup;  /* /proc/self/cgroup */
    const char *cgroup_root;  /* /sys/fs/cgroup: v2 there or under unified/, v1 under memory/ */
};

/* From the files alone (no environment, no rlimits); missing or unreadable
 * files are skipped. Never fails. */
void sim_mem_available_at(const struct sim_mem_paths *p, struct sim_mem_avail *out);
/* PIPESIM_MEMORY_LIMIT if set (SIM_EUSAGE if malformed), else the real
 * files and the rlimits. */
int sim_mem_available(struct sim_mem_avail *out);
/* "1073741824", "512M", "1.5G", "64k", "2GiB" -> bytes (> 0). SIM_EUSAGE
 * naming what. */
int sim_mem_parse_size(const char *s, const char *what, double *out);
/* "2.9 GiB", "512.0 MiB", "12 B". */
void sim_mem_format(double bytes, char *buf, size_t n);

/* SIM_ENOMEM with one line when need > SIM_MEM_MARGIN x available:
 *   "<what> needs about 2.9 GiB (<detail>) but only 0.9 GiB is available
 *    (<source>); <hint>"
 * detail and hint may be NULL (hint then: "set PIPESIM_MEMORY_LIMIT to
 * override the check"). */
int sim_mem_check(double need_bytes, const char *what, const char *detail, const char *hint);

/* ---- estimates ---- */

/* The op lists of a schedule before it is built: exact op count and the
 * bytes of its per-device arrays as the generators allocate them (capacity).
 * Returns 0, or 1 for a name or size the generators would refuse (they then
 * report it; nothing is estimated). */
struct sim_mem_sched {
    int n_stages;
    int64_t n_ops;
    double bytes;        /* op arrays (capacity x sizeof(struct sim_op)) */
};
int sim_mem_sched_estimate(const char *schedule, int K, int M, enum sim_remat remat,
                           int replicas, struct sim_mem_sched *out);

/* One engine run (sim_engine) of that schedule: see sim_membudget.c for what
 * it covers and how it compares with the measured peak RSS. */
struct sim_mem_run {
    struct sim_mem_sched sched;
    double engine_bytes; /* records, build indexes, event queue */
    double trace_bytes;  /* trace events and counters (record_trace) */
    double total;
};
int sim_mem_run_estimate(const char *schedule, int K, int M, enum sim_remat remat,
                         int replicas, int record_trace, struct sim_mem_run *out);
/* sim_mem_run_estimate then sim_mem_check, naming what ("predict") and
 * the sizes; 0 when the schedule is unknown (its generator reports that). */
int sim_mem_check_run(const char *what, const char *schedule, int K, int M,
                      enum sim_remat remat, int replicas, int record_trace);

#endif
