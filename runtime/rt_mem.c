#include "runtime/rt_mem.h"
#include "base/ps_error.h"

#include <stdlib.h>
#include <string.h>

void rt_mem_init(struct rt_mem *m) { memset(m, 0, sizeof *m); }

void rt_mem_release(struct rt_mem *m)
{
    free(m->samples);
    memset(m, 0, sizeof *m);
}

int rt_mem_reserve(struct rt_mem *m, int64_t cap)
{
    if (cap <= m->cap_samples)
        return 0;
    struct rt_mem_sample *s = realloc(m->samples, (size_t)cap * sizeof *s);
    if (!s)
        return ps_error(PS_ENOMEM, "out of memory for %lld memory samples", (long long)cap);
    m->samples = s;
    m->cap_samples = cap;
    return 0;
}

void rt_mem_reset(struct rt_mem *m)
{
    m->cur = m->peak = m->extra_cur = m->extra_peak = m->n_allocs = 0;
    m->n_samples = 0;
}

static void *alloc(int64_t bytes)
{
    PS_ASSERT(bytes >= 0);
    return bytes ? malloc((size_t)bytes) : NULL;
}

void *rt_mem_alloc(struct rt_mem *m, int64_t bytes)
{
    void *p = alloc(bytes);
    if (p) {
        m->cur += bytes;
        m->n_allocs++;
        if (m->cur > m->peak)
            m->peak = m->cur;
    }
    return p;
}

void rt_mem_free(struct rt_mem *m, void *p, int64_t bytes)
{
    if (!p)
        return;
    m->cur -= bytes;
    PS_ASSERT(m->cur >= 0);
    free(p);
}

void *rt_mem_alloc_extra(struct rt_mem *m, int64_t bytes)
{
    void *p = alloc(bytes);
    if (p && (m->extra_cur += bytes) > m->extra_peak)
        m->extra_peak = m->extra_cur;
    return p;
}

void rt_mem_free_extra(struct rt_mem *m, void *p, int64_t bytes)
{
    if (!p)
        return;
    m->extra_cur -= bytes;
    free(p);
}

void rt_mem_sample(struct rt_mem *m, int64_t t_ns)
{
    int64_t prev = m->n_samples ? m->samples[m->n_samples - 1].bytes : 0;
    if (prev == m->cur)
        return;
    if (m->n_samples < m->cap_samples)
        m->samples[m->n_samples++] = (struct rt_mem_sample){ t_ns, m->cur };
}
