/*
 * sch_gpipe: GPipe's fill-drain schedule, as op lists (sch_schedule_gpipe)
 * and in the compact form the engine replays as it is (runs of a repeated
 * pattern, sch_schedule_gpipe_compact), and sch_schedule_materialize, which
 * turns runs into the op lists every other reader needs. The container and
 * the generators by name are in sch_schedule.c. Cost: O(K M) ops listed,
 * O(K) runs in the compact form.
 */
#include "sched/sch_schedule.h"
#include "base/ps_error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int check_km(int K, int M)
{
    if (K < 1)
        return ps_error(PS_EUSAGE, "-K must be >= 1, got %d", K);
    if (M < 1)
        return ps_error(PS_EUSAGE, "-M must be >= 1, got %d", M);
    if (K > SCH_STAGES_MAX)
        return ps_error(PS_EINVAL, "-K %d is too many stages (at most %d)", K, SCH_STAGES_MAX);
    if ((int64_t)K * M > SCH_KM_MAX)
        return ps_error(PS_EINVAL, "K*M = %lld is too large (at most %lld stage micro-batches)",
                         (long long)K * M, (long long)SCH_KM_MAX);
    return 0;
}

/* Op list of one stage with GPipe's fill-drain order: forwards 0..M-1, then
 * backwards M-1..0. A re-materialized micro-batch's R comes right before its
 * gradient receive, so it runs as soon as the previous backward is done. */
static int gpipe_per_mb(const struct sch_schedule *s, int st)
{
    return 2 + (st > 0) * 2 + (st + 1 < s->n_stages) * 2 + (s->remat != SCH_REMAT_NEVER);
}

static void gpipe_stage(struct sch_schedule *s, int st)
{
    int d = s->stage_device[st], M = s->n_micro, S = s->n_stages;
    struct sch_op *o = s->ops[d] + s->n_ops[d], *o0 = o; /* reserved by the caller */
    for (int m = 0; m < M; m++) {
        if (st > 0)
            *o++ = (struct sch_op){ SCH_OP_RECV_ACT, st, m };
        *o++ = (struct sch_op){ SCH_OP_FWD, st, m };
        if (st + 1 < S)
            *o++ = (struct sch_op){ SCH_OP_SEND_ACT, st, m };
    }
    for (int m = M - 1; m >= 0; m--) {
        if (sch_schedule_remat_mb(s, m))
            *o++ = (struct sch_op){ SCH_OP_RECOMP, st, m };
        if (st + 1 < S)
            *o++ = (struct sch_op){ SCH_OP_RECV_GRAD, st, m };
        *o++ = (struct sch_op){ SCH_OP_BWD, st, m };
        if (st > 0)
            *o++ = (struct sch_op){ SCH_OP_SEND_GRAD, st, m };
    }
    *o++ = (struct sch_op){ SCH_OP_UPDATE, st, -1 };
    s->n_ops[d] += (int)(o - o0);
}

/* The empty "gpipe" schedule both forms start from (*out NULL on error). */
static int gpipe_new(int K, int M, enum sch_remat remat, struct sch_schedule **out)
{
    *out = NULL;
    int rc = check_km(K, M);
    if (rc < 0)
        return rc;
    if (!(*out = sch_schedule_new("gpipe", K, K, M, remat)))
        return ps_error(PS_ENOMEM, "out of memory building schedule");
    return 0;
}

int sch_schedule_gpipe(int K, int M, enum sch_remat remat, struct sch_schedule **out)
{
    struct sch_schedule *s;
    int rc = gpipe_new(K, M, remat, &s);
    *out = NULL;
    if (rc < 0)
        return rc;
    int *n = calloc((size_t)K, sizeof *n);
    if (!n) {
        sch_schedule_free(s);
        return ps_error(PS_ENOMEM, "out of memory building schedule");
    }
    for (int st = 0; st < K; st++) /* fill-drain lists have an exact size */
        n[s->stage_device[st]] += gpipe_per_mb(s, st) * M + 1;
    rc = sch_schedule_reserve_all(s, n);
    free(n);
    if (rc < 0) {
        sch_schedule_free(s);
        return rc;
    }
    for (int st = 0; st < K; st++)
        gpipe_stage(s, st);
    *out = s;
    return 0;
}

static struct sch_run *add_run(struct sch_run *u, int stage, int mb0, int dmb, int count,
                               int n, const uint8_t *kind)
{
    *u = (struct sch_run){ .n = (uint8_t)n, .stage = stage, .mb0 = mb0, .dmb = dmb,
                           .count = count };
    memcpy(u->kind, kind, (size_t)n);
    return u + 1;
}

/* The runs of gpipe_stage's list: the forward run (R?, F, S?) over
 * micro-batches 0..M-1, the backward run(s) over M-1..0 (under except_last
 * the last micro-batch's B without its R, then the others with theirs), U. */
int sch_schedule_gpipe_compact(int K, int M, enum sch_remat remat, struct sch_schedule **out)
{
    struct sch_schedule *s;
    int rc = gpipe_new(K, M, remat, &s);
    *out = NULL;
    if (rc < 0)
        return rc;
    s->runs = malloc((size_t)K * 4 * sizeof *s->runs);
    s->run_first = malloc(((size_t)K + 1) * sizeof *s->run_first);
    if (!s->runs || !s->run_first) {
        sch_schedule_free(s);
        return ps_error(PS_ENOMEM, "out of memory building schedule");
    }
    struct sch_run *u = s->runs;
    for (int st = 0; st < K; st++) { /* stage st on device st */
        int first = st == 0, last = st == K - 1, n;
        uint8_t k[4];
        s->run_first[st] = (int)(u - s->runs);
        n = 0;
        if (!first)
            k[n++] = SCH_OP_RECV_ACT;
        k[n++] = SCH_OP_FWD;
        if (!last)
            k[n++] = SCH_OP_SEND_ACT;
        u = add_run(u, st, 0, 1, M, n, k);
        for (int rm = 0; rm < 2; rm++) { /* backward without R, then with */
            int count = remat == SCH_REMAT_NEVER ? (rm ? 0 : M)
                        : remat == SCH_REMAT_ALWAYS ? (rm ? M : 0) : (rm ? M - 1 : 1);
            if (!count)
                continue;
            n = 0;
            if (rm)
                k[n++] = SCH_OP_RECOMP;
            if (!last)
                k[n++] = SCH_OP_RECV_GRAD;
            k[n++] = SCH_OP_BWD;
            if (!first)
                k[n++] = SCH_OP_SEND_GRAD;
            u = add_run(u, st, M - 1 - (remat == SCH_REMAT_EXCEPT_LAST && rm), -1, count, n, k);
        }
        k[0] = SCH_OP_UPDATE;
        u = add_run(u, st, -1, 0, 1, 1, k);
        for (const struct sch_run *r = s->runs + s->run_first[st]; r < u; r++)
            s->n_ops[st] += r->count * r->n;
    }
    s->run_first[K] = (int)(u - s->runs);
    *out = s;
    return 0;
}

int sch_schedule_materialize(struct sch_schedule *s)
{
    if (!s->runs)
        return 0;
    int *n = malloc((size_t)s->n_devices * sizeof *n);
    if (!n)
        return ps_error(PS_ENOMEM, "out of memory building schedule");
    for (int d = 0; d < s->n_devices; d++) {
        n[d] = s->n_ops[d];
        s->n_ops[d] = 0;
    }
    int rc = sch_schedule_reserve_all(s, n);
    if (rc < 0) {
        memcpy(s->n_ops, n, (size_t)s->n_devices * sizeof *n);
        free(n);
        return rc;
    }
    free(n);
    for (int d = 0; d < s->n_devices; d++) {
        struct sch_op *o = s->ops[d];
        for (int r = s->run_first[d]; r < s->run_first[d + 1]; r++) {
            const struct sch_run *u = &s->runs[r];
            for (int i = 0; i < u->count; i++)
                for (int j = 0; j < u->n; j++)
                    *o++ = (struct sch_op){ u->kind[j], u->stage, u->mb0 + i * u->dmb };
        }
        s->n_ops[d] = (int)(o - s->ops[d]);
    }
    free(s->runs);
    free(s->run_first);
    s->runs = NULL;
    s->run_first = NULL;
    return 0;
}
