/*
 * Schedules beyond GPipe, each only an op-list generator (see sch_schedule.h
 * for the data model; the simulator and the CPU runtime replay the lists):
 *
 *   1f1b           PipeDream-flush (Narayanan et al. 2021): stage s runs
 *                  w = min(K-s-1, M) warm-up forwards, then alternates one
 *                  forward and one backward, then the w remaining backwards.
 *                  At most min(K-s, M) micro-batches are in flight on stage s.
 *   interleaved:v  Megatron-LM's interleaved 1F1B (Narayanan et al. 2021,
 *                  sec. 2.2): S = v*K stages, stage s on device s % K, so
 *                  device d holds model chunks d, d+K, ... Micro-batches go
 *                  through the chunks in groups of K; device d runs
 *                  min(2(K-d-1) + (v-1)K, vM) warm-up forwards, then one
 *                  forward and one backward alternately. M % K == 0 is
 *                  required for v > 1; interleaved:1 is 1f1b op for op.
 *   zb-h1          Zero Bubble's ZB-H1 (Qi et al. 2024, sec. 2.1): backward
 *                  split into B (input gradient, on the critical path) and
 *                  W (weight gradient). Stage s follows 1F1B's order of F and
 *                  B but defers W: the W of micro-batch j runs once the
 *                  forward of micro-batch j+K-1 has been issued, and the
 *                  W's left at the end fill the cool-down. Every stage then
 *                  holds at most min(K, M) micro-batches (stash is freed at
 *                  W's end), stage 0's 1F1B figure.
 *
 * Placement of the other ops, shared by all generators: a receive comes
 * right before the op that consumes it and a send right after the op that
 * produces it; a re-materialized micro-batch's R comes right before its
 * gradient receive (so it overlaps the gradient's flight), B after both;
 * the updates of a device's stages come last. One worker thread per device
 * running its list strictly in order, with non-blocking sends, never
 * deadlocks on these lists (tests/test_schedules.c replays them so).
 *
 * Cost: O(total ops) time and memory.
 */
#include "base/ps_error.h"
#include "sched/sch_schedule.h"
#include "sched/sch_gen.h"
#include "base/ps_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sch_gen_check_sizes(int K, int M, int v)
{
    if (K < 1)
        return ps_error(PS_EUSAGE, "-K must be >= 1, got %d", K);
    if (M < 1)
        return ps_error(PS_EUSAGE, "-M must be >= 1, got %d", M);
    if ((int64_t)K * M * v > 1LL << 28)
        return ps_error(PS_EINVAL, "K*M*v = %lld is too large", (long long)K * M * v);
    return 0;
}

/* [recv-act] F [send-act] of (st, m). */
int sch_gen_push_fwd(struct sch_schedule *s, int st, int m)
{
    int d = s->stage_device[st], rc = 0;
    if (st > 0 && s->stage_device[st - 1] != d)
        rc = sch_schedule_push(s, d, SCH_OP_RECV_ACT, st, m);
    if (!rc)
        rc = sch_schedule_push(s, d, SCH_OP_FWD, st, m);
    if (!rc && st + 1 < s->n_stages && s->stage_device[st + 1] != d)
        rc = sch_schedule_push(s, d, SCH_OP_SEND_ACT, st, m);
    return rc;
}

/* [R] [recv-grad] B [send-grad] of (st, m); B is the input-gradient half
 * when the schedule has W ops. */
int sch_gen_push_bwd(struct sch_schedule *s, int st, int m)
{
    int d = s->stage_device[st], rc = 0;
    if (sch_schedule_remat_mb(s, m))
        rc = sch_schedule_push(s, d, SCH_OP_RECOMP, st, m);
    if (!rc && st + 1 < s->n_stages && s->stage_device[st + 1] != d)
        rc = sch_schedule_push(s, d, SCH_OP_RECV_GRAD, st, m);
    if (!rc)
        rc = sch_schedule_push(s, d, SCH_OP_BWD, st, m);
    if (!rc && st > 0 && s->stage_device[st - 1] != d)
        rc = sch_schedule_push(s, d, SCH_OP_SEND_GRAD, st, m);
    return rc;
}

int sch_gen_push_wgrad(struct sch_schedule *s, int st, int m)
{
    return sch_schedule_push(s, s->stage_device[st], SCH_OP_WGRAD, st, m);
}

/* The updates of device d's stages, in stage order, after everything else. */
int sch_gen_push_updates(struct sch_schedule *s, int d)
{
    int rc = 0;
    for (int st = 0; st < s->n_stages && !rc; st++)
        if (s->stage_device[st] == d)
            rc = sch_schedule_push(s, d, SCH_OP_UPDATE, st, -1);
    return rc;
}

int sch_gen_arg(const char *arg, const char *what, long lo, long hi, long *v)
{
    int rc = ps_parse_long(arg, what, lo, hi, v);
    if (rc < 0)
        return rc;
    char canon[32];
    snprintf(canon, sizeof canon, "%ld", *v);
    if (strcmp(canon, arg))
        return ps_error(PS_EUSAGE, "%s: write '%s' as %s", what, arg, canon);
    return 0;
}

int sch_gen_new(const char *name, int K, int S, int M, enum sch_remat remat,
                        struct sch_schedule **out)
{
    *out = NULL;
    if (S > SCH_STAGES_MAX)
        return ps_error(PS_EINVAL, "%s: %d stages is too many (at most %d)", name, S,
                        SCH_STAGES_MAX);
    if ((int64_t)S * M > SCH_KM_MAX)
        return ps_error(PS_EINVAL, "%s: %d stages x %d micro-batches = %lld is too large (at "
                         "most %lld stage micro-batches)", name, S,
                         M, (long long)S * M, (long long)SCH_KM_MAX);
    if (!(*out = sch_schedule_new(name, K, S, M, remat)))
        return ps_error(PS_ENOMEM, "out of memory building schedule");
    return 0;
}

int sch_gen_finish(struct sch_schedule *s, int rc, struct sch_schedule **out)
{
    if (rc < 0) {
        sch_schedule_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- 1F1B ---- */

int sch_gen_1f1b_stage(struct sch_schedule *s, int st, int w)
{
    int M = s->n_micro, rc = 0;
    for (int m = 0; m < w && !rc; m++)
        rc = sch_gen_push_fwd(s, st, m);
    for (int j = 0; j < M - w && !rc; j++)
        if (!(rc = sch_gen_push_fwd(s, st, w + j)))
            rc = sch_gen_push_bwd(s, st, j);
    for (int j = M - w; j < M && !rc; j++)
        rc = sch_gen_push_bwd(s, st, j);
    return rc ? rc : sch_gen_push_updates(s, st);
}

int sch_schedule_1f1b(int K, int M, enum sch_remat remat, struct sch_schedule **out)
{
    *out = NULL;
    struct sch_schedule *s;
    int rc = sch_gen_check_sizes(K, M, 1);
    if (rc < 0 || (rc = sch_gen_new("1f1b", K, K, M, remat, &s)) < 0)
        return rc;
    for (int st = 0; st < K && !rc; st++)
        rc = sch_gen_1f1b_stage(s, st, K - st - 1 < M ? K - st - 1 : M);
    return sch_gen_finish(s, rc, out);
}

/* ---- interleaved 1F1B ---- */

/* The k-th forward (bwd = 0) or backward (bwd = 1) of device d: micro-batches
 * run in groups of K through chunk 0, 1, ..., v-1 (backwards in reverse). */
static void interleaved_op(int K, int v, int d, int k, int bwd, int *st, int *m)
{
    int group = k / (K * v), in_group = k % (K * v);
    int chunk = in_group / K;
    if (bwd)
        chunk = v - 1 - chunk;
    *m = group * K + in_group % K;
    *st = chunk * K + d;
}

static int interleaved_device(struct sch_schedule *s, int K, int v, int d)
{
    int total = v * s->n_micro, rc = 0, st, m;
    int warm = 2 * (K - d - 1) + (v - 1) * K;
    if (warm > total)
        warm = total;
    for (int k = 0; k < warm && !rc; k++) {
        interleaved_op(K, v, d, k, 0, &st, &m);
        rc = sch_gen_push_fwd(s, st, m);
    }
    for (int i = 0; i < total - warm && !rc; i++) {
        interleaved_op(K, v, d, warm + i, 0, &st, &m);
        if ((rc = sch_gen_push_fwd(s, st, m)) < 0)
            break;
        interleaved_op(K, v, d, i, 1, &st, &m);
        rc = sch_gen_push_bwd(s, st, m);
    }
    for (int i = total - warm; i < total && !rc; i++) {
        interleaved_op(K, v, d, i, 1, &st, &m);
        rc = sch_gen_push_bwd(s, st, m);
    }
    return rc ? rc : sch_gen_push_updates(s, d);
}

int sch_schedule_interleaved(int K, int M, int v, enum sch_remat remat,
                             struct sch_schedule **out)
{
    *out = NULL;
    char name[32];
    int rc;
    if (v < 1)
        return ps_error(PS_EUSAGE, "--schedule interleaved:v needs v >= 1, got %d", v);
    if ((rc = sch_gen_check_sizes(K, M, v)) < 0)
        return rc;
    snprintf(name, sizeof name, "interleaved:%d", v);
    if (v == 1) { /* one chunk per device: plain 1F1B */
        if ((rc = sch_schedule_1f1b(K, M, remat, out)) == 0)
            snprintf((*out)->name, sizeof (*out)->name, "%s", name);
        return rc;
    }
    if (M % K)
        return ps_error(PS_EUSAGE, "--schedule %s: -M %d must be a multiple of -K %d "
                         "(interleaving runs micro-batches in groups of K)", name, M, K);
    struct sch_schedule *s;
    if ((rc = sch_gen_new(name, K, v * K, M, remat, &s)) < 0)
        return rc;
    for (int d = 0; d < K && !rc; d++)
        rc = interleaved_device(s, K, v, d);
    return sch_gen_finish(s, rc, out);
}

/* ---- ZB-H1 ---- */

static int zbh1_stage(struct sch_schedule *s, int st)
{
    int K = s->n_stages, M = s->n_micro, rc = 0;
    int w = K - st - 1 < M ? K - st - 1 : M;
    int f = 0, b = 0, wg = 0;
    while (f < w && !rc)
        rc = sch_gen_push_fwd(s, st, f++);
    for (int j = 0; j < M - w && !rc; j++) {
        if ((rc = sch_gen_push_fwd(s, st, f)) < 0 || (rc = sch_gen_push_bwd(s, st, b++)) < 0)
            break;
        if (f - wg >= K - 1)
            rc = sch_gen_push_wgrad(s, st, wg++);
        f++;
    }
    while (b < M && !rc)
        if (!(rc = sch_gen_push_bwd(s, st, b++)))
            rc = sch_gen_push_wgrad(s, st, wg++);
    while (wg < M && !rc)
        rc = sch_gen_push_wgrad(s, st, wg++);
    return rc ? rc : sch_gen_push_updates(s, st);
}

int sch_schedule_zbh1(int K, int M, enum sch_remat remat, struct sch_schedule **out)
{
    *out = NULL;
    struct sch_schedule *s;
    int rc = sch_gen_check_sizes(K, M, 1);
    if (rc < 0 || (rc = sch_gen_new("zb-h1", K, K, M, remat, &s)) < 0)
        return rc;
    s->has_wgrad = 1;
    for (int st = 0; st < K && !rc; st++)
        rc = zbh1_stage(s, st);
    return sch_gen_finish(s, rc, out);
}

/* ---- registry entries (sch_schedule.c's generators[]) ---- */

int sch_gen_1f1b(const char *arg, int K, int M, enum sch_remat remat,
                 struct sch_schedule **out)
{
    *out = NULL;
    if (arg)
        return ps_error(PS_EUSAGE, "--schedule 1f1b takes no parameter");
    return sch_schedule_1f1b(K, M, remat, out);
}

int sch_gen_interleaved(const char *arg, int K, int M, enum sch_remat remat,
                        struct sch_schedule **out)
{
    *out = NULL;
    long v;
    if (!arg)
        return ps_error(PS_EUSAGE, "--schedule interleaved needs the chunks per device, "
                         "e.g. interleaved:2");
    int rc = sch_gen_arg(arg, "--schedule interleaved:v", 1, 64, &v);
    return rc < 0 ? rc : sch_schedule_interleaved(K, M, (int)v, remat, out);
}

int sch_gen_zbh1(const char *arg, int K, int M, enum sch_remat remat,
                 struct sch_schedule **out)
{
    *out = NULL;
    if (arg)
        return ps_error(PS_EUSAGE, "--schedule zb-h1 takes no parameter");
    return sch_schedule_zbh1(K, M, remat, out);
}
