/*
 * ps_memavail — the memory available to this process, and the one check
 * that refuses a run needing more, before it allocates.
 *
 * Available memory is the least of: MemAvailable (/proc/meminfo); for the
 * process's own cgroup and each ancestor (from /proc/self/cgroup), the
 * cgroup v2 memory.max minus memory.current ("max" = no limit) and the
 * cgroup v1 memory.limit_in_bytes minus memory.usage_in_bytes; RLIMIT_AS
 * minus VmSize and RLIMIT_DATA minus VmData when set. The environment
 * variable PIPESIM_MEMORY_LIMIT=BYTES (ps_parse_bytes's units, as --mem-cap:
 * 2G = 2e9, 2GiB = 2^31) replaces all of them: a way to cap a run, and what the tests use.
 *
 * Callers estimate their needs from sizes known up front (K, M, schedule,
 * net shapes: sch_schedsize.h, sim_membudget.h, rt_net, mdl_torch), covering
 * the big arrays only; ps_mem_check refuses (PS_ENOMEM, exit 6) only when
 * the estimate exceeds 0.9 x what is available, so a run that may fit is
 * never refused.
 *
 * No state, no ownership. Cost: a few small file reads per check (none
 * below PS_MEM_FLOOR bytes).
 */
#ifndef PS_MEMAVAIL_H
#define PS_MEMAVAIL_H

#include <stddef.h>
#include <stdint.h>

#define PS_MEM_ENV "PIPESIM_MEMORY_LIMIT"
#define PS_MEM_MARGIN 0.9          /* refuse when need > margin x available */
#define PS_MEM_FLOOR (16.0 * 1024 * 1024) /* needs below this are never checked */

struct ps_mem_avail {
    double bytes;        /* INFINITY when nothing limits (or nothing could be read) */
    char source[48];     /* where the figure came from: "MemAvailable", ... */
};

/* The files the figure comes from; the tests point them at a temp dir. */
struct ps_mem_paths {
    const char *meminfo;      /* /proc/meminfo */
    const char *self_cgroup;  /* /proc/self/cgroup */
    const char *cgroup_root;  /* /sys/fs/cgroup: v2 there or under unified/, v1 under memory/ */
};

/* From the files alone (no environment, no rlimits); missing or unreadable
 * files are skipped. Never fails. */
void ps_mem_available_at(const struct ps_mem_paths *p, struct ps_mem_avail *out);
/* PIPESIM_MEMORY_LIMIT if set (PS_EUSAGE if malformed), else the real
 * files and the rlimits. */
int ps_mem_available(struct ps_mem_avail *out);
/* 0, or PS_EUSAGE when PIPESIM_MEMORY_LIMIT is set and malformed: every
 * command checks it before any work (helper-119: gen, plot, presets and a
 * small predict took any value, which was read only when a check needed it). */
int ps_mem_env_check(void);
/* A byte count as ps_parse_bytes reads one ("1073741824", "512M" = 512e6,
 * "2GiB" = 2^31; the units of --mem-cap and every size): whole bytes, at
 * least one. PS_EUSAGE naming what. */
int ps_mem_parse_size(const char *s, const char *what, double *out);
/* "2.9 GiB", "512.0 MiB", "12 B". */
void ps_mem_format(double bytes, char *buf, size_t n);

/* PS_ENOMEM with one line when need > PS_MEM_MARGIN x available:
 *   "<what> needs about 2.9 GiB (<detail>) but only 0.9 GiB is available
 *    (<source>); <hint>"
 * detail and hint may be NULL (hint then: "set PIPESIM_MEMORY_LIMIT to
 * override the check"). */
int ps_mem_check(double need_bytes, const char *what, const char *detail, const char *hint);

#endif
