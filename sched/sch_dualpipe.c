/*
 * dualpipe-v — DualPipeV, the "cut-in-half" V-shape variant of DeepSeek's
 * DualPipe (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", arXiv
 * 2412.19437, sec. 3.2.1; the order follows deepseek-ai/DualPipe's
 * dualpipev.py DualPipeV.step(), read through the search tool in a stored
 * copy of that repository; no code copied). Only an op-list generator
 * (placement helpers in sch_gen.h).
 *
 * S = 2K stages in a V, as zb-v: device r holds chunk 0 = stage r and
 * chunk 1 = stage 2K-1-r, so device 0 computes both the first stage and the
 * loss, and device K-1 hands stage K-1's output to stage K in place.
 * Micro-batches go through each chunk in order (F and B of chunk c take
 * micro-batches 0, 1, ... in turn). Device r runs, with F0/F1 a forward of
 * chunk 0/1, B0/B1 a backward, W a weight gradient:
 *
 *   1  2(K-r-1) x F0
 *   2  (r+1)    x F0 F1
 *   3  (K-r-1)  x B1 W F1           (B1 split: its W right after)
 *   4  (M-2K+r+1) x (F0 & B1) (F1 & B0)
 *   5  (K-r-1)  x B1 (F1 & B0)
 *   6  (r+1)    x B1 B0             (the later half split: from i =
 *                                    (r+1)/2 on, before B1 when r is odd,
 *                                    before B0 when r is even)
 *   7  (K-r-1)  x W B0              (B0 split)
 *   8  (r+1)    x W
 *
 * A split backward's W goes into a FIFO and the W steps take the oldest (the
 * source's WeightGradStore). Every other backward is whole, modelled as its B
 * immediately followed by its W (has_wgrad is one flag per schedule: the
 * pair costs the whole backward and frees the stash at W's end, as the
 * unsplit backward does).
 *
 * What is and is not modelled. "(F & B)" is DualPipe's overlapped pair: one
 * micro-batch's forward and another's backward run together on the device,
 * so that one's communication (MoE all-to-all, pipeline sends) hides behind
 * the other's compute. The engine has one compute stream per device and
 * runs F and B of the pair one after the other, in the source's fallback
 * order for the pair without overlap (forward, then backward); its pipeline
 * sends already overlap compute on their own streams. So the step counts
 * the pair as T_F + T_B (the source's kernels, overlapped, take about as
 * long: the overlap hides communication, not compute), and the forward's
 * send leaves when F ends rather than when the pair does. Memory: F's stash
 * is counted before B frees its own, the upper bound of the overlapped
 * pair. No all-to-all (expert parallelism) is modelled at all.
 *
 * Needs M >= 2K (the source's assertion: step 4 must run). On uniform
 * chunks with T_F = T_B = T_W and no communication each device holds at
 * most 2K + 1 chunk stashes (2K after step 2, one more for F of each pair
 * in step 4) and the step is given in tests/test_new_schedules.c.
 *
 * Cost: O(total ops) time, O(M) for the W queue.
 */
#include "base/ps_error.h"
#include "sched/sch_gen.h"
#include "sched/sch_schedule.h"
#include "sched/sch_zb.h"

#include <stdlib.h>

struct dpv {
    struct sch_schedule *s;
    int st[2];      /* the device's chunks: stage r, stage 2K-1-r */
    int nf[2], nb[2];
    int *wq;        /* deferred W: stage * M + mb, FIFO */
    int wq_head, wq_tail;
};

static int dpv_f(struct dpv *x, int c)
{
    return sch_gen_push_fwd(x->s, x->st[c], x->nf[c]++);
}

/* B of chunk c; split: its W waits in the queue, else it follows at once. */
static int dpv_b(struct dpv *x, int c, int split)
{
    int st = x->st[c], m = x->nb[c]++;
    int rc = sch_gen_push_bwd(x->s, st, m);
    if (rc < 0)
        return rc;
    if (!split)
        return sch_gen_push_wgrad(x->s, st, m);
    x->wq[x->wq_tail++] = st * x->s->n_micro + m;
    return 0;
}

static int dpv_w(struct dpv *x)
{
    if (x->wq_head == x->wq_tail)
        PS_BUG("dualpipe-v: a W step with no deferred weight gradient");
    int e = x->wq[x->wq_head++], M = x->s->n_micro;
    return sch_gen_push_wgrad(x->s, e / M, e % M);
}

static int dpv_device(struct dpv *x, int K, int r)
{
    int M = x->s->n_micro, rc = 0, i;
    for (i = 0; i < 2 * (K - r - 1) && !rc; i++) /* 1 */
        rc = dpv_f(x, 0);
    for (i = 0; i < r + 1 && !rc; i++) /* 2 */
        if (!(rc = dpv_f(x, 0)))
            rc = dpv_f(x, 1);
    for (i = 0; i < K - r - 1 && !rc; i++) /* 3 */
        if (!(rc = dpv_b(x, 1, 1)) && !(rc = dpv_w(x)))
            rc = dpv_f(x, 1);
    for (i = 0; i < M - 2 * K + r + 1 && !rc; i++) /* 4 */
        if (!(rc = dpv_f(x, 0)) && !(rc = dpv_b(x, 1, 0)) && !(rc = dpv_f(x, 1)))
            rc = dpv_b(x, 0, 0);
    for (i = 0; i < K - r - 1 && !rc; i++) /* 5 */
        if (!(rc = dpv_b(x, 1, 0)) && !(rc = dpv_f(x, 1)))
            rc = dpv_b(x, 0, 0);
    int split = 0;
    for (i = 0; i < r + 1 && !rc; i++) { /* 6 */
        if (i == (r + 1) / 2 && r % 2 == 1)
            split = 1;
        if ((rc = dpv_b(x, 1, split)) < 0)
            break;
        if (i == (r + 1) / 2 && r % 2 == 0)
            split = 1;
        rc = dpv_b(x, 0, split);
    }
    for (i = 0; i < K - r - 1 && !rc; i++) /* 7 */
        if (!(rc = dpv_w(x)))
            rc = dpv_b(x, 0, 1);
    for (i = 0; i < r + 1 && !rc; i++) /* 8 */
        rc = dpv_w(x);
    if (rc < 0)
        return rc;
    if (x->nf[0] != M || x->nf[1] != M || x->nb[0] != M || x->nb[1] != M ||
        x->wq_head != x->wq_tail)
        PS_BUG("dualpipe-v: device %d ends with F %d/%d, B %d/%d, %d W left", r, x->nf[0],
               x->nf[1], x->nb[0], x->nb[1], x->wq_tail - x->wq_head);
    return sch_gen_push_updates(x->s, r);
}

int sch_schedule_dualpipev(int K, int M, enum sch_remat remat, struct sch_schedule **out)
{
    *out = NULL;
    struct sch_schedule *s;
    int rc = sch_gen_check_sizes(K, M, 2);
    if (rc < 0)
        return rc;
    if (M < 2 * K)
        return ps_error(PS_EUSAGE, "--schedule dualpipe-v needs -M >= 2K (its warm-up fills "
                         "both chunks of every device), got K=%d M=%d", K, M);
    if ((rc = sch_gen_new("dualpipe-v", K, 2 * K, M, remat, &s)) < 0)
        return rc;
    s->has_wgrad = 1;
    for (int st = 0; st < 2 * K; st++)
        s->stage_device[st] = st < K ? st : 2 * K - 1 - st;
    struct dpv x = { .s = s };
    if (!(x.wq = malloc((size_t)2 * M * sizeof *x.wq)))
        rc = ps_error(PS_ENOMEM, "out of memory building schedule dualpipe-v");
    for (int r = 0; r < K && !rc; r++) {
        x.st[0] = r;
        x.st[1] = 2 * K - 1 - r;
        x.nf[0] = x.nf[1] = x.nb[0] = x.nb[1] = 0;
        x.wq_head = x.wq_tail = 0;
        rc = dpv_device(&x, K, r);
    }
    free(x.wq);
    return sch_gen_finish(s, rc, out);
}

int sch_gen_dualpipev(const char *arg, int K, int M, enum sch_remat remat,
                      struct sch_schedule **out)
{
    *out = NULL;
    if (arg)
        return ps_error(PS_EUSAGE, "--schedule dualpipe-v takes no parameter");
    return sch_schedule_dualpipev(K, M, remat, out);
}
