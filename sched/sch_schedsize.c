/* sch_schedsize — op counts of the schedule generators, before they run
 * (see sch_schedsize.h). */
#include "sched/sch_schedsize.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What the generators of sch_schedule_build would make of the name, without
 * building: stages per device v, split backward, the growth rule of the
 * op arrays. 0, or 1 if a generator would refuse. */
static int parse_v(const char *arg, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(arg, &end, 10);
    if (end == arg || *end || errno || x < 1 || x > 64 || !isdigit((unsigned char)*arg))
        return 1;
    *v = (int)x;
    return 0;
}

/* *vee: zb-v's and dualpipe-v's placement (device d holds stages d and 2K-1-d). */
static int parse_schedule(const char *name, int K, int M, int *v, int *wgrad, int *exact,
                          int *vee)
{
    *v = 1;
    *wgrad = 0;
    *exact = 0;
    *vee = 0;
    if (K < 1 || M < 1)
        return 1;
    if (!strcmp(name, "gpipe")) {
        *exact = 1;
    } else if (!strcmp(name, "zb-h1") || !strcmp(name, "zb-h2") || !strcmp(name, "zb-auto")) {
        *wgrad = 1;
    } else if (!strcmp(name, "zb-v") || !strcmp(name, "dualpipe-v")) {
        *wgrad = *vee = 1;
        *v = 2;
        if (name[0] == 'd' && M < 2 * K)
            return 1; /* the generator refuses */
    } else if (!strncmp(name, "interleaved:", 12)) {
        if (parse_v(name + 12, v))
            return 1;
        if (*v > 1 && M % K)
            return 1;
    } else if (!strncmp(name, "breadth-first:", 14)) {
        if (parse_v(name + 14, v))
            return 1;
    } else if (strcmp(name, "1f1b") && strcmp(name, "eager-1f1b") &&
               strcmp(name, "breadth-first")) {
        return 1; /* zb-auto:L is built (its limit may refuse) */
    }
    return (int64_t)K * M * *v > 1LL << 28 || (int64_t)K * *v > SCH_STAGES_MAX;
}

static int stage_dev(int st, int K, int vee)
{
    return vee && st >= K ? 2 * K - 1 - st : st % K;
}

int sch_mem_sched_estimate(const char *schedule, int K, int M, enum sch_remat remat,
                           int replicas, struct sch_mem_sched *out)
{
    memset(out, 0, sizeof *out);
    int v, wg, exact, vee;
    if (!schedule)
        schedule = "gpipe";
    if (parse_schedule(schedule, K, M, &v, &wg, &exact, &vee) || replicas < 0)
        return 1;
    int S = v * K, cross = K > 1, ar = replicas > 1;
    int64_t rc = remat == SCH_REMAT_ALWAYS ? M : remat == SCH_REMAT_EXCEPT_LAST ? M - 1 : 0;
    out->n_stages = S;
    double cap_total = 0;
    for (int d = 0; d < K; d++) {
        int64_t n = 0, cap = 0;
        /* device d's stages only: d, d + K, ... (V placements: d and 2K-1-d),
         * so the whole estimate is linear in the stages, not K x stages */
        for (int j = 0, st = d; j < v && st < S; j++, st = vee ? 2 * K - 1 - d : st + K) {
            int bounds = cross ? (st > 0 && stage_dev(st - 1, K, vee) != d) +
                                 (st + 1 < S && stage_dev(st + 1, K, vee) != d)
                               : 0;
            n += (int64_t)M * (2 + wg) + rc + 2LL * bounds * M + 1;
            if (exact) /* gpipe reserves its stage's ops up front */
                cap = (int64_t)(2 + 2 * bounds + (remat != SCH_REMAT_NEVER)) * M + 1;
        }
        if (!exact) /* sch_schedule_push: 16, then doubling */
            for (cap = 16; cap < n; cap *= 2)
                ;
        int nu = (S - d + K - 1) / K; /* stages on device d */
        if (ar && n + nu > cap)
            cap = n + nu;
        out->n_ops += n + (ar ? nu : 0);
        cap_total += (double)cap;
    }
    out->bytes = cap_total * (double)sizeof(struct sch_op) +
                 (double)S * sizeof(int) + (double)K * (2 * sizeof(int) + sizeof(void *));
    return 0;
}


int sch_schedule_stages(const char *schedule, int K, int M, enum sch_remat remat, int *n_stages)
{
    struct sch_mem_sched est;
    if (!sch_mem_sched_estimate(schedule, K, M, remat, 1, &est)) {
        *n_stages = est.n_stages;
        return 0;
    }
    struct sch_schedule *probe;
    int rc = sch_schedule_build(schedule, K, M, remat, &probe);
    if (rc < 0)
        return rc;
    *n_stages = probe->n_stages;
    sch_schedule_free(probe);
    return 0;
}
