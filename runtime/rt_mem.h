/*
 * rt_mem — the runtime's activation-memory accounting: every activation
 * buffer of a device (received inputs, outputs, stashes, gradients) is a
 * real malloc made through rt_mem_alloc and released through rt_mem_free,
 * which keep the device's current and peak byte counts and, when asked,
 * a timeline of (time, bytes) samples for the trace's memory counter.
 *
 * One rt_mem per device, touched only by that device's worker thread (no
 * locking). A second class ("extra") counts buffers the ledger rule has no
 * term for, apart from the activation total; none is left since the ledger
 * counts the split-backward buffers kept from B to W (sch_stage_mem.wgrad). Ownership: rt_mem_init / rt_mem_release; the samples
 * array is preallocated (rt_mem_reserve) so recording never allocates.
 * Cost: O(1) per call plus malloc/free.
 */
#ifndef RT_MEM_H
#define RT_MEM_H

#include <stdint.h>

struct rt_mem_sample { int64_t t_ns, bytes; };

struct rt_mem {
    int64_t cur, peak;          /* activation bytes */
    int64_t extra_cur, extra_peak;
    int64_t n_allocs;
    struct rt_mem_sample *samples;
    int64_t n_samples, cap_samples;
};

void rt_mem_init(struct rt_mem *m);
void rt_mem_release(struct rt_mem *m);
/* Room for cap samples; PS_ENOMEM. */
int rt_mem_reserve(struct rt_mem *m, int64_t cap);
/* Clears counts and samples (keeps the reservation). */
void rt_mem_reset(struct rt_mem *m);
/* bytes == 0 gives NULL without counting; NULL on malloc failure. */
void *rt_mem_alloc(struct rt_mem *m, int64_t bytes);
void rt_mem_free(struct rt_mem *m, void *p, int64_t bytes);
void *rt_mem_alloc_extra(struct rt_mem *m, int64_t bytes);
void rt_mem_free_extra(struct rt_mem *m, void *p, int64_t bytes);
/* Appends (t_ns, cur) if it differs from the last sample (0 before the
 * first); silently drops samples beyond the reservation. */
void rt_mem_sample(struct rt_mem *m, int64_t t_ns);

#endif
