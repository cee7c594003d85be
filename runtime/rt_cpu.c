#include "runtime/rt_cpu.h"
#include "base/ps_error.h"

#include <pthread.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

int rt_cpus_allowed(int **cpus, int *n)
{
    *cpus = NULL;
    *n = 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set))
        return ps_error(PS_ERUNTIME, "sched_getaffinity failed");
    int cnt = CPU_COUNT(&set);
    if (cnt < 1)
        return ps_error(PS_ERUNTIME, "no CPU in this process's affinity mask");
    int *v = malloc((size_t)cnt * sizeof *v);
    if (!v)
        return ps_error(PS_ENOMEM, "out of memory");
    int k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < cnt; c++)
        if (CPU_ISSET(c, &set))
            v[k++] = c;
    *cpus = v;
    *n = k;
    return 0;
}

int rt_pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (e)
        return ps_error(PS_ERUNTIME, "pthread_setaffinity_np(cpu %d): %s", cpu, strerror(e));
    return 0;
}

int rt_cpu_current(void) { return sched_getcpu(); }

long long rt_thread_runq_wait_ns(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return -1;
    unsigned long long run, wait;
    int n = fscanf(f, "%llu %llu", &run, &wait);
    fclose(f);
    return n == 2 ? (long long)wait : -1;
}

int rt_flush_denormals(void)
{
#if defined(__SSE__)
    /* FTZ (bit 15) and DAZ (bit 6) of MXCSR */
    _mm_setcsr(_mm_getcsr() | 0x8040);
    return 1;
#else
    return 0;
#endif
}
