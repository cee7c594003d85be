/* sim_membudget — memory available to this process, and the estimates of
 * the big runs checked against it (see sim_membudget.h). */
#include "sim/sim_membudget.h"
#include "sim/sim_engine.h"
#include "sim/sim_error.h"
#include "sim/sim_heap.h"
#include "traces/trc_trace.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* ---- what is available ---- */

/* Keeps the smaller of the two figures, and its source. */
static void take(struct sim_mem_avail *a, double bytes, const char *source)
{
    if (bytes < 0)
        bytes = 0;
    if (bytes < a->bytes) {
        a->bytes = bytes;
        snprintf(a->source, sizeof a->source, "%s", source);
    }
}

/* The first line of a small file, without its newline; 0 if unreadable. */
static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = 0;
    return ok;
}

/* A file holding one byte count; -1 if absent, malformed or "max". */
static double read_bytes(const char *path)
{
    char buf[64], *end;
    if (!read_line(path, buf, sizeof buf))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (end == buf || *end || errno)
        return -1;
    return (double)v;
}

/* "Key:   N kB" of a /proc file (meminfo, self/status); -1 if absent. */
static double proc_kb(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    size_t kl = strlen(key);
    double v = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            unsigned long long kb;
            if (sscanf(line + kl + 1, "%llu", &kb) == 1)
                v = (double)kb * 1024;
            break;
        }
    fclose(f);
    return v;
}

/* Limits at dir/<cg> and every ancestor up to dir: limit minus usage. v1
 * reports "no limit" as a huge page-rounded number. */
static void cgroup_walk(struct sim_mem_avail *a, const char *dir, const char *cg,
                        const char *limit_file, const char *usage_file, const char *source)
{
    char path[8192], rel[2048];
    snprintf(rel, sizeof rel, "%s", cg);
    for (;;) {
        snprintf(path, sizeof path, "%s%s%s/%s", dir, *rel == '/' ? "" : "/", rel, limit_file);
        double limit = read_bytes(path);
        if (limit >= 0 && limit < 0x1p60) {
            snprintf(path, sizeof path, "%s%s%s/%s", dir, *rel == '/' ? "" : "/", rel,
                     usage_file);
            double usage = read_bytes(path);
            take(a, limit - (usage > 0 ? usage : 0), source);
        }
        char *slash = strrchr(rel, '/');
        if (!slash || !*rel || !strcmp(rel, "/"))
            break;
        if (slash == rel)
            rel[1] = 0; /* "/a" -> "/" */
        else
            *slash = 0;
    }
}

static int is_dir_with(const char *dir, const char *file)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

void sim_mem_available_at(const struct sim_mem_paths *p, struct sim_mem_avail *out)
{
    out->bytes = INFINITY;
    snprintf(out->source, sizeof out->source, "no limit found");
    double v = proc_kb(p->meminfo, "MemAvailable");
    if (v >= 0)
        take(out, v, "MemAvailable");
    FILE *f = fopen(p->self_cgroup, "r");
    if (!f)
        return;
    char line[4096], dir[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        /* id:controllers:path */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = 0;
        const char *ctl = c1 + 1, *cg = c2 + 1;
        if (!strcmp(line, "0") && !*ctl) {
            /* v2: the unified hierarchy at the root, or under unified/ (hybrid) */
            snprintf(dir, sizeof dir, "%s", p->cgroup_root);
            if (!is_dir_with(dir, "cgroup.controllers"))
                snprintf(dir, sizeof dir, "%s/unified", p->cgroup_root);
            cgroup_walk(out, dir, cg, "memory.max", "memory.current", "cgroup memory.max");
        } else {
            char ctls[256], *save = NULL;
            snprintf(ctls, sizeof ctls, "%s", ctl);
            for (char *t = strtok_r(ctls, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (!strcmp(t, "memory")) {
                    snprintf(dir, sizeof dir, "%s/memory", p->cgroup_root);
                    cgroup_walk(out, dir, cg, "memory.limit_in_bytes", "memory.usage_in_bytes",
                                "cgroup memory.limit_in_bytes");
                }
        }
    }
    fclose(f);
}

int sim_mem_parse_size(const char *s, const char *what, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || !(v > 0) || isspace((unsigned char)*s))
        goto bad;
    double mul = 1;
    if (*end) {
        const char *u = "KMGT", *q = strchr(u, toupper((unsigned char)*end));
        if (!q)
            goto bad;
        mul = pow(1024, (double)(q - u + 1));
        end++;
        if (!strcmp(end, "iB") || !strcmp(end, "ib"))
            end += 2;
        else if (*end == 'B' || *end == 'b')
            end++;
    }
    if (*end || !isfinite(v * mul) || v * mul < 1)
        goto bad;
    *out = floor(v * mul);
    return 0;
bad:
    return sim_error(SIM_EUSAGE, "%s: '%s' is not a byte count (e.g. 1073741824, 512M, 2G)",
                     what, s);
}

/* RLIMIT_AS and RLIMIT_DATA, less what the process already uses of them. */
static void take_rlimit(struct sim_mem_avail *a, int res, const char *status_key,
                        const char *source)
{
    struct rlimit rl;
    if (getrlimit(res, &rl) || rl.rlim_cur == RLIM_INFINITY)
        return;
    double used = proc_kb("/proc/self/status", status_key);
    take(a, (double)rl.rlim_cur - (used > 0 ? used : 0), source);
}

int sim_mem_available(struct sim_mem_avail *out)
{
    const char *env = getenv(SIM_MEM_ENV);
    if (env && *env) {
        int rc = sim_mem_parse_size(env, SIM_MEM_ENV, &out->bytes);
        if (rc < 0)
            return rc;
        snprintf(out->source, sizeof out->source, "%s", SIM_MEM_ENV);
        return 0;
    }
    const struct sim_mem_paths real = { "/proc/meminfo", "/proc/self/cgroup", "/sys/fs/cgroup" };
    sim_mem_available_at(&real, out);
    take_rlimit(out, RLIMIT_AS, "VmSize", "RLIMIT_AS");
    take_rlimit(out, RLIMIT_DATA, "VmData", "RLIMIT_DATA");
    return 0;
}

void sim_mem_format(double bytes, char *buf, size_t n)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    int u = 0;
    while (fabs(bytes) >= 1024 && u < 6) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.0f B", bytes);
    else
        snprintf(buf, n, "%.1f %s", bytes, units[u]);
}

int sim_mem_check(double need, const char *what, const char *detail, const char *hint)
{
    if (!(need >= SIM_MEM_FLOOR))
        return 0;
    struct sim_mem_avail a;
    int rc = sim_mem_available(&a);
    if (rc < 0)
        return rc;
    if (!(need > SIM_MEM_MARGIN * a.bytes))
        return 0;
    char nb[32], ab[32];
    sim_mem_format(need, nb, sizeof nb);
    sim_mem_format(a.bytes, ab, sizeof ab);
    return sim_error(SIM_ENOMEM, "%s needs about %s%s%s%s but only %s is available (%s); %s",
                     what, nb, detail ? " (" : "", detail ? detail : "", detail ? ")" : "", ab,
                     a.source, hint ? hint : "set " SIM_MEM_ENV " to override the check");
}

/* ---- estimates ---- */

/* What the generators of sim_schedule_build would make of the name, without
 * building: stages per device v, split backward, the growth rule of the
 * op arrays. 0, or 1 if a generator would refuse. */
static int parse_schedule(const char *name, int K, int M, int *v, int *wgrad, int *exact)
{
    *v = 1;
    *wgrad = 0;
    *exact = 0;
    if (K < 1 || M < 1)
        return 1;
    if (!strcmp(name, "gpipe")) {
        *exact = 1;
    } else if (!strcmp(name, "zb-h1")) {
        *wgrad = 1;
    } else if (!strncmp(name, "interleaved:", 12)) {
        char *end;
        errno = 0;
        long x = strtol(name + 12, &end, 10);
        if (end == name + 12 || *end || errno || x < 1 || x > 64 || !isdigit((unsigned char)name[12]))
            return 1;
        *v = (int)x;
        if (*v > 1 && M % K)
            return 1;
    } else if (strcmp(name, "1f1b")) {
        return 1;
    }
    return (int64_t)K * M * *v > 1LL << 28;
}

int sim_mem_sched_estimate(const char *schedule, int K, int M, enum sim_remat remat,
                           int replicas, struct sim_mem_sched *out)
{
    memset(out, 0, sizeof *out);
    int v, wg, exact;
    if (!schedule)
        schedule = "gpipe";
    if (parse_schedule(schedule, K, M, &v, &wg, &exact) || replicas < 0)
        return 1;
    int S = v * K, cross = K > 1, ar = replicas > 1;
    int64_t rc = remat == SIM_REMAT_ALWAYS ? M : remat == SIM_REMAT_EXCEPT_LAST ? M - 1 : 0;
    out->n_stages = S;
    double cap_total = 0;
    for (int d = 0; d < K; d++) {
        int64_t n = 0, cap = 0;
        for (int st = d; st < S; st += K) {
            int bounds = cross ? (st > 0) + (st + 1 < S) : 0;
            n += (int64_t)M * (2 + wg) + rc + 2LL * bounds * M + 1;
            if (exact) /* gpipe reserves its stage's ops up front */
                cap = (int64_t)(2 + 2 * bounds + (remat != SIM_REMAT_NEVER)) * M + 1;
        }
        if (!exact) /* sim_schedule_push: 16, then doubling */
            for (cap = 16; cap < n; cap *= 2)
                ;
        int nu = (S - d + K - 1) / K; /* stages on device d */
        if (ar && n + nu > cap)
            cap = n + nu;
        out->n_ops += n + (ar ? nu : 0);
        cap_total += (double)cap;
    }
    out->bytes = cap_total * (double)sizeof(struct sim_op) +
                 (double)S * sizeof(int) + (double)K * (2 * sizeof(int) + sizeof(void *));
    return 0;
}

/*
 * One engine run, while the schedule is alive: the op lists (exact, above),
 * the engine's records (exact: sim_engine_op_bytes per op, a transfer start
 * per op with a trace), the build-time indexes of build_recs (one int32 per
 * op of the longest device list, two per (stage, micro-batch) for sends,
 * the device index of stages x kinds x micro-batches), the event queue (one
 * event per stream at most, ring plus heap), and with a trace one event
 * record per op and one counter per memory change (about one per op,
 * measured below) plus the sort
 * index of the counters. Not covered: the process's own ~10 MiB (libraries,
 * OpenBLAS buffers), malloc overhead, the small per-stage tables.
 *
 * Measured against the peak RSS (/usr/bin/time -f %M, pipesim predict
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
 */
int sim_mem_run_estimate(const char *schedule, int K, int M, enum sim_remat remat,
                         int replicas, int record_trace, struct sim_mem_run *out)
{
    memset(out, 0, sizeof *out);
    if (sim_mem_sched_estimate(schedule, K, M, remat, replicas, &out->sched))
        return 1;
    double N = (double)out->sched.n_ops, S = out->sched.n_stages;
    double longest = N / K; /* a lower bound of the longest device list */
    double devindex = ceil(S / K) * SIM_OP_NKINDS * (double)M * sizeof(int32_t);
    out->engine_bytes = (N + 1) * (double)sim_engine_op_bytes(record_trace) +
                        longest * sizeof(int32_t) + 2 * S * M * sizeof(int32_t) + devindex +
                        2.0 * K * SIM_NSTREAMS * sizeof(struct sim_event);
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
                      enum sim_remat remat, int replicas, int record_trace)
{
    struct sim_mem_run r;
    if (!schedule)
        schedule = "gpipe";
    if (sim_mem_run_estimate(schedule, K, M, remat, replicas, record_trace, &r))
        return 0;
    char w[160], detail[256], a[32], b[32], c[32];
    snprintf(w, sizeof w, "%s: schedule %s with K=%d, M=%d", what, schedule, K, M);
    sim_mem_format(r.sched.bytes, a, sizeof a);
    sim_mem_format(r.engine_bytes, b, sizeof b);
    sim_mem_format(r.trace_bytes, c, sizeof c);
    snprintf(detail, sizeof detail, "%lld ops: op lists %s, engine records %s%s%s",
             (long long)r.sched.n_ops, a, b, record_trace ? ", trace " : "",
             record_trace ? c : "");
    return sim_mem_check(r.total, w, detail,
                         "use a smaller -K or -M, or set " SIM_MEM_ENV " to override the check");
}
