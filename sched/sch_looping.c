/*
 * Two schedules that reorder GPipe's and 1F1B's ops, each only an op-list
 * generator (placement helpers in sch_gen.h):
 *
 *   eager-1f1b       1F1B with one extra warm-up forward per stage: stage s
 *                    runs w = min(K-s, M) forwards before its first backward
 *                    (1F1B: K-s-1), so the forward that feeds the next stage
 *                    is already computed while a backward runs, and its send
 *                    overlaps compute. Source: ailzhang/minPP's eager1f1b
 *                    schedule (read through its drawings of the schedules;
 *                    no code copied). Stage s holds at most min(K-s+1, M)
 *                    micro-batches, one more than 1F1B.
 *   breadth-first:v  Breadth-first (looping) pipeline parallelism (Lamy-
 *                    Poirier 2022, arXiv 2211.05953): S = v*K stages looped
 *                    over the devices (stage s on device s % K, as
 *                    interleaved:v), and each device runs every micro-batch
 *                    through one of its chunks before the next chunk: all
 *                    forwards chunk by chunk (micro-batches in order), then
 *                    the backwards chunk by chunk in reverse (micro-batches
 *                    in reverse, as GPipe). Each stage's gradients are then
 *                    complete early (its data-parallel reduction overlaps the
 *                    rest), at GPipe's memory: device d holds v*M chunk
 *                    stashes at the turn. breadth-first:1 is gpipe op for
 *                    op. Any M (no M % K requirement: the loop back from
 *                    device K-1 to device 0 only ever waits on ops listed
 *                    earlier).
 *
 * Cost: O(total ops) time and memory.
 */
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "sched/sch_gen.h"
#include "sched/sch_schedule.h"

#include <stdio.h>

/* ---- eager 1F1B ---- */

int sch_schedule_eager_1f1b(int K, int M, enum sch_remat remat, struct sch_schedule **out)
{
    *out = NULL;
    struct sch_schedule *s;
    int rc = sch_gen_check_sizes(K, M, 1);
    if (rc < 0 || (rc = sch_gen_new("eager-1f1b", K, K, M, remat, &s)) < 0)
        return rc;
    for (int st = 0; st < K && !rc; st++)
        rc = sch_gen_1f1b_stage(s, st, K - st < M ? K - st : M); /* one more warm-up F */
    return sch_gen_finish(s, rc, out);
}

/* ---- breadth-first (looping) ---- */

static int breadth_first_device(struct sch_schedule *s, int K, int v, int d)
{
    int M = s->n_micro, rc = 0;
    for (int c = 0; c < v && !rc; c++)
        for (int m = 0; m < M && !rc; m++)
            rc = sch_gen_push_fwd(s, c * K + d, m);
    for (int c = v - 1; c >= 0 && !rc; c--)
        for (int m = M - 1; m >= 0 && !rc; m--)
            rc = sch_gen_push_bwd(s, c * K + d, m);
    return rc ? rc : sch_gen_push_updates(s, d);
}

int sch_schedule_breadth_first(int K, int M, int v, enum sch_remat remat,
                               struct sch_schedule **out)
{
    *out = NULL;
    char name[32];
    int rc;
    if (v < 1)
        return ps_error(PS_EUSAGE, "--schedule breadth-first:v needs v >= 1, got %d", v);
    if ((rc = sch_gen_check_sizes(K, M, v)) < 0)
        return rc;
    snprintf(name, sizeof name, "breadth-first:%d", v);
    struct sch_schedule *s;
    if ((rc = sch_gen_new(name, K, v * K, M, remat, &s)) < 0)
        return rc;
    for (int d = 0; d < K && !rc; d++)
        rc = breadth_first_device(s, K, v, d);
    return sch_gen_finish(s, rc, out);
}

/* ---- registry entries ---- */

int sch_gen_eager_1f1b(const char *arg, int K, int M, enum sch_remat remat,
                       struct sch_schedule **out)
{
    *out = NULL;
    if (arg)
        return ps_error(PS_EUSAGE, "--schedule eager-1f1b takes no parameter");
    return sch_schedule_eager_1f1b(K, M, remat, out);
}

int sch_gen_breadth_first(const char *arg, int K, int M, enum sch_remat remat,
                          struct sch_schedule **out)
{
    *out = NULL;
    long v = 1;
    int rc = arg ? sch_gen_arg(arg, "--schedule breadth-first:v", 1, 64, &v) : 0;
    return rc < 0 ? rc : sch_schedule_breadth_first(K, M, (int)v, remat, out);
}
