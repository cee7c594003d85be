/* sim_membudget — the estimate of one engine run, checked against the
 * memory available (see sim_membudget.h). */
#include "sim/sim_membudget.h"
#include "sim/sim_engine.h"
#include "sim/sim_heap.h"
#include "traces/trc_trace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/*
 * One engine run, while the schedule is alive: the op lists (exact, above),
 * the engine's own (exact: sim_engine_bytes, two bits per transfer, a
 * transfer start per transfer with a trace; it keeps no record per op), the
 * device index it validates with (stages x kinds x micro-batches), the event queue (one
 * event per stream at most, ring plus heap), and with a trace one event
 * record per op and one counter per memory change (about one per op,
 * measured below) plus the sort
 * index of the counters. Not covered: the process's own ~10 MiB (libraries,
 * OpenBLAS buffers), malloc overhead, the small per-stage tables.
 *
 * Measured against the peak RSS with the engine of before issue 16, which
 * kept a 16-byte record per op (both figures are lower without them; the
 * ratio is what the check relies on) (/usr/bin/time -f %M, pipesim predict
 * --model mlp:layers=2048,width=64 on a 1024-device `pipesim gen chain`,
 * remat except_last, --batch M):
 *   gpipe K=64 M=4096      estimate  43.9 MiB, RSS  54.4 MiB (0.81)
 *   gpipe K=256 M=4096     estimate 175.9 MiB, RSS 191.1 MiB (0.92)
 *   gpipe K=1024 M=4096    estimate 704.0 MiB, RSS 722.0 MiB (0.98)
 *   1f1b K=256 M=4096      estimate 188.1 MiB, RSS 192.3 MiB (0.98)
 *   zb-h1 K=256 M=4096     estimate 200.1 MiB, RSS 215.1 MiB (0.93)
 *   gpipe K=256 M=4096 --trace  1006.9 MiB vs 1172.3 MiB (0.86)
 * (the trace there held 7 319 555 counters for 7 323 648 ops). The estimate
 * stays below the real peak, so the check refuses only runs that could not
 * have fitted; the ~10 MiB of the process itself is what it misses most.
 * A compact run (GPipe without a trace or replicas: ana_config_compact)
 * has no op lists, only 4 runs per device (gpipe K=1024 M=4096: estimate
 * 7.6 MiB, RSS 20 MiB with the process's own ~10 MiB).
 */
int sim_mem_run_estimate(const char *schedule, int K, int M, enum sch_remat remat,
                         int replicas, int record_trace, int compact, struct sim_mem_run *out)
{
    memset(out, 0, sizeof *out);
    if (sch_mem_sched_estimate(schedule, K, M, remat, replicas, &out->sched))
        return 1;
    if (compact) /* sch_schedule_gpipe_compact's runs and their index */
        out->sched.bytes = 4.0 * K * sizeof(struct sch_run) + (K + 1.0) * sizeof(int);
    else if (!strcmp(schedule, "zb-auto")) /* zb-auto:L is not estimated (sch_schedsize.c) */
        /* zb-auto builds candidates beside its best (sch_zb.c zbauto_build, and
         * ZB-H1/H2 against it in ana_predict's zbauto_keep_promise): two lists at
         * once, the second's last doubling holding its old array beside the new
         * (half a list more), and sch_zbauto.c's timing of a list, 3 ops of 8
         * bytes and two times a stage micro-batch (helper-148: one list
         * estimated, 1.5 GiB, against 5.28 GiB of RSS at K=1024, M=16384; now
         * 4.4 GiB; K=256, M=4096: 280 MiB against 346 MiB) */
        out->sched.bytes = 2.5 * out->sched.bytes +
                           (double)K * M * (3.0 * 8 + 2.0 * sizeof(sch_time));
    double N = (double)out->sched.n_ops, S = out->sched.n_stages;
    double devindex = ceil(S / K) * SCH_OP_NKINDS * (double)M * sizeof(int32_t);
    out->engine_bytes = (double)sim_engine_bytes((int)S, M, record_trace) + devindex +
                        2.0 * K * SCH_NSTREAMS * sizeof(struct sim_event);
    if (record_trace) {
        double cap = 256;
        while (cap < N)
            cap *= 2;
        out->trace_bytes = cap * sizeof(struct trc_event) +
                           N * (sizeof(struct trc_counter) + sizeof(struct trc_counter) + 8);
    }
    out->total = out->sched.bytes + out->engine_bytes + out->trace_bytes;
    return 0;
}

int sim_mem_check_run(const char *what, const char *schedule, int K, int M,
                      enum sch_remat remat, int replicas, int record_trace, int compact)
{
    struct sim_mem_run r;
    if (!schedule)
        schedule = "gpipe";
    if (sim_mem_run_estimate(schedule, K, M, remat, replicas, record_trace, compact, &r))
        return 0;
    /* beyond the schedules' size caps the build refuses it on every machine
     * (exit 4), not this check by the memory of this one */
    if (r.sched.n_stages > SCH_STAGES_MAX || r.sched.n_stages * (double)M > (double)SCH_KM_MAX)
        return 0;
    char w[160], detail[256], a[32], b[32], c[32];
    snprintf(w, sizeof w, "%s: schedule %s with K=%d, M=%d", what, schedule, K, M);
    ps_mem_format(r.sched.bytes, a, sizeof a);
    ps_mem_format(r.engine_bytes, b, sizeof b);
    ps_mem_format(r.trace_bytes, c, sizeof c);
    snprintf(detail, sizeof detail, "%lld ops: %s %s, engine %s%s%s",
             (long long)r.sched.n_ops, compact ? "compact runs" : "op lists", a, b,
             record_trace ? ", trace " : "", record_trace ? c : "");
    return ps_mem_check(r.total, w, detail,
                         "use a smaller -K or -M, or set " PS_MEM_ENV " to override the check");
}
