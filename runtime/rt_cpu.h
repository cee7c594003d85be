/*
 * rt_cpu — the cores a worker may be pinned to, and pinning.
 *
 * rt_cpus_allowed lists the CPUs of this process's affinity mask
 * (sched_getaffinity) in increasing order; worker d is pinned to the
 * (d mod n)-th, so K > n shares cores (the caller warns: timings are
 * oversubscribed). Ownership: *cpus is malloc'd. Cost: O(CPU_SETSIZE).
 */
#ifndef RT_CPU_H
#define RT_CPU_H

int rt_cpus_allowed(int **cpus, int *n);
/* Pins the calling thread to cpu (pthread_setaffinity_np); PS_ERUNTIME. */
int rt_pin_self(int cpu);
/* The calling thread's float arithmetic flushes subnormal results to zero
 * and reads subnormal inputs as zero (x86 MXCSR FTZ and DAZ), as GPU
 * kernels and inference runtimes do: a subnormal operand costs a CPU a
 * microcode assist of about a hundred cycles, so without this a kernel's
 * time would depend on its values (the weights after a few SGD steps
 * made every step 20 % slower than the first). Returns 1 if set, 0 where
 * the CPU has no such mode. Every runtime worker and calibration thread
 * calls it. */
int rt_flush_denormals(void);
/* The CPU the calling thread runs on now (sched_getcpu), -1 if unknown. */
int rt_cpu_current(void);
/* Nanoseconds the calling thread has spent runnable but waiting for a CPU
 * (the second field of /proc/thread-self/schedstat): how busy the machine
 * was, which involuntary context switches undercount (a worker that blocks
 * in a receive and then waits for its core is never preempted). -1 where
 * the kernel does not report it. Cost: one small file read. */
long long rt_thread_runq_wait_ns(void);

#endif
