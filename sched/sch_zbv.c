/*
 * zb-v — ZB-V, the zero-bubble V schedule of Qi et al., "Zero Bubble
 * Pipeline Parallelism" (arXiv 2401.10241, the revision with ZB-V; the
 * ICLR 2024 version has ZB-H1/H2 only), its ZB-V section and figure; the
 * phases follow the authors' hand-built order in
 * sail-sg/zero-bubble-pipeline-parallelism
 * (megatron/core/pipeline_parallel/handcrafted_zb_v, read through the search
 * tool; no code copied). Only an op-list generator (helpers in sch_gen.h).
 *
 * S = 2K stages in a V: device d holds chunk 0 = stage d and chunk 1 =
 * stage 2K-1-d, so device 0 computes both the first stage and the loss and
 * device K-1 hands stage K-1's output to stage K in place. Each chunk takes
 * micro-batches 0, 1, ... in order. The order of F and B on device d, with
 * F0/F1 a forward of chunk 0/1, B0/B1 a backward, for n = max(M, 2K-1)
 * micro-batches (those >= M then dropped):
 *
 *   warm-up    2(K-d)-1 x F0,  d x F1 F0,  (K-d) x F1 B1
 *   steady     F0 B0 F1 B1 until every F is issued (F0 left out once the
 *              n chunk-0 forwards are)
 *   cool-down  d x B0 B1,  (K-d) x B0
 *
 * The W's are placed by one replay of that order in unit time slots (every
 * F, B and W one slot, no communication): in each slot a device runs
 *   1. the W of its oldest finished B when K B's await their W (so at most
 *      K deferred W inputs, sch_stage_mem.wgrad, are held at once), else
 *   2. its next F or B when that op's inputs are there (an F only while
 *      the device holds fewer than 2K stashes: F issued, W not ended), else
 *   3. the W of its oldest finished B, else nothing.
 * So W's fill the slots in which a device would wait (the warm-up's gaps
 * where M < 2K-1 drops micro-batches, the cool-down), as in the paper's
 * figure, and the lists, written in the replay's time order, are a
 * topological order: one in-order thread per device replays them without
 * deadlock (an F held back for memory always has a W to run first: the
 * source's order stays within 2K stashes with its own W places, and every B
 * before that F is done here too). With the paper's own W places (each W
 * right after its B in the steady phase) M < 2K-1 leaves bubbles; with
 * rule 1 at K-1 instead of K the step misses the bound by up to T.
 *
 * On uniform chunks with T_F = T_B = T_W = T and no communication:
 *   M >= K   the step is (6M + K - 1) T, the lower bound (device K-1's
 *            first op waits for K-1 forwards; it has 6M ops), so device d
 *            idles at most K-1-d slots after its first op (at slot d);
 *            every device holds at most 2K chunk stashes (K micro-batches
 *            of a 1F1B stage of two chunks: 1F1B's stage-0 peak), reached
 *            on every device, and at most K deferred W inputs.
 *   M < K    the bound cannot be met: device 0 cannot start the loss stage
 *            before (2K-1) T, and 5M of its ops follow it, so the step is at
 *            least (5M + 2K - 1) T > (6M + K - 1) T. This order takes
 *            max(4K + 2M - 1, 3K + 4M - 1) T (measured, K <= 24; M = 1 is
 *            the one micro-batch's path through 4K ops and its last W);
 *            each device peaks at 2M chunk stashes, all it has.
 * (tests/test_new_schedules.c.) Re-materialization puts R before B as in
 * every generator; the order is the same in every remat mode.
 *
 * Cost: O(ops) for the F/B order; the replay O(step slots x K), step slots
 * < 6M + 4K; O(S x M) memory.
 */
#include "base/ps_error.h"
#include "sched/sch_gen.h"
#include "sched/sch_schedule.h"
#include "sched/sch_zb.h"

#include <stdlib.h>

struct zbv {
    struct sch_schedule *s;
    int K, M;
    struct sch_op *fb;  /* [K][4M] F/B order of each device */
    int *nfb;           /* [K] length of each device's order */
    int *ef, *eb;       /* [S*M] end slot of F, B; -1 not started */
    int *wq;            /* [K][2M] finished B's (stage * M + mb), oldest first */
    int *wh, *wt;       /* [K] W queue head, tail */
    int *pc, *held;     /* [K] next op of fb; stashes held */
};

/* Appends (kind, st, m) to device d's order unless m is padding. */
static void zbv_add(struct zbv *z, int d, int kind, int st, int m)
{
    if (m >= z->M)
        return;
    struct sch_op *o = &z->fb[(size_t)d * 4 * z->M + z->nfb[d]++];
    o->kind = (uint8_t)kind;
    o->stage = st;
    o->mb = m;
}

/* The source's F/B order of device d (phases in the header). */
static void zbv_order(struct zbv *z, int d)
{
    int K = z->K, n = z->M > 2 * K - 1 ? z->M : 2 * K - 1;
    int lo = d, hi = 2 * K - 1 - d, f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    for (int i = 0; i < 2 * (K - d) - 1; i++)
        zbv_add(z, d, SCH_OP_FWD, lo, f0++);
    for (int i = 0; i < d; i++) {
        zbv_add(z, d, SCH_OP_FWD, hi, f1++);
        zbv_add(z, d, SCH_OP_FWD, lo, f0++);
    }
    for (int i = 0; i < K - d; i++) {
        zbv_add(z, d, SCH_OP_FWD, hi, f1++);
        zbv_add(z, d, SCH_OP_BWD, hi, b1++);
    }
    while (f1 < n) {
        if (f0 < n)
            zbv_add(z, d, SCH_OP_FWD, lo, f0++);
        zbv_add(z, d, SCH_OP_BWD, lo, b0++);
        zbv_add(z, d, SCH_OP_FWD, hi, f1++);
        zbv_add(z, d, SCH_OP_BWD, hi, b1++);
    }
    for (int i = 0; i < d; i++) {
        zbv_add(z, d, SCH_OP_BWD, lo, b0++);
        zbv_add(z, d, SCH_OP_BWD, hi, b1++);
    }
    for (int i = 0; i < K - d; i++)
        zbv_add(z, d, SCH_OP_BWD, lo, b0++);
    if (f0 != n || f1 != n || b0 != n || b1 != n)
        PS_BUG("zb-v order of device %d: %d %d %d %d of %d", d, f0, f1, b0, b1, n);
}

static int done_by(int end, int tau) { return end >= 0 && end <= tau; }

/* Whether device d's next F/B, o, can start in slot tau. */
static int zbv_ready(const struct zbv *z, int d, const struct sch_op *o, int tau)
{
    int S = 2 * z->K, M = z->M, i = o->stage * M + o->mb;
    if (o->kind == SCH_OP_FWD)
        return (o->stage == 0 || done_by(z->ef[i - M], tau)) && z->held[d] < 2 * z->K;
    return done_by(z->ef[i], tau) && (o->stage + 1 == S || done_by(z->eb[i + M], tau));
}

/* Runs the oldest deferred W of device d. */
static int zbv_wgrad(struct zbv *z, int d)
{
    int M = z->M, i = z->wq[(size_t)d * 2 * M + z->wh[d]++];
    z->held[d]--; /* freed at W's end, before the next slot */
    int rc = sch_gen_push_wgrad(z->s, i / M, i % M);
    return rc < 0 ? rc : 1;
}

/* Starts device d's op of slot tau: 1 if one started, 0 if none, <0. */
static int zbv_slot(struct zbv *z, int d, int tau)
{
    int M = z->M, rc;
    int w_ok = z->wh[d] < z->wt[d] && done_by(z->eb[z->wq[(size_t)d * 2 * M + z->wh[d]]], tau);
    if (w_ok && z->wt[d] - z->wh[d] >= z->K)
        return zbv_wgrad(z, d);
    const struct sch_op *o = z->pc[d] < z->nfb[d] ? &z->fb[(size_t)d * 4 * M + z->pc[d]] : NULL;
    if (o && zbv_ready(z, d, o, tau)) {
        int i = o->stage * M + o->mb;
        z->pc[d]++;
        if (o->kind == SCH_OP_FWD) {
            z->ef[i] = tau + 1;
            z->held[d]++;
            rc = sch_gen_push_fwd(z->s, o->stage, o->mb);
        } else {
            z->eb[i] = tau + 1;
            z->wq[(size_t)d * 2 * M + z->wt[d]++] = i;
            rc = sch_gen_push_bwd(z->s, o->stage, o->mb);
        }
        return rc < 0 ? rc : 1;
    }
    return w_ok ? zbv_wgrad(z, d) : 0;
}

static int zbv_lists(struct zbv *z)
{
    int K = z->K, rc = 0;
    int64_t left = 6LL * K * z->M;
    for (int d = 0; d < K; d++)
        zbv_order(z, d);
    for (int tau = 0; left > 0; tau++) {
        int started = 0;
        for (int d = 0; d < K; d++) {
            if ((rc = zbv_slot(z, d, tau)) < 0)
                return rc;
            started += rc;
        }
        if (!started) /* nothing ends later: no slot would start anything */
            PS_BUG("zb-v K=%d M=%d: stuck at slot %d", K, z->M, tau);
        left -= started;
    }
    rc = 0;
    for (int d = 0; d < K && !rc; d++)
        rc = sch_gen_push_updates(z->s, d);
    return rc;
}

int sch_schedule_zbv(int K, int M, enum sch_remat remat, struct sch_schedule **out)
{
    *out = NULL;
    struct sch_schedule *s;
    int rc = sch_gen_check_sizes(K, M, 2);
    if (rc < 0 || (rc = sch_gen_new("zb-v", K, 2 * K, M, remat, &s)) < 0)
        return rc;
    s->has_wgrad = 1;
    for (int st = 0; st < 2 * K; st++)
        s->stage_device[st] = st < K ? st : 2 * K - 1 - st;
    size_t SM = (size_t)2 * K * M;
    struct zbv z = { .s = s, .K = K, .M = M };
    z.fb = malloc(SM * 2 * sizeof *z.fb); /* K devices x 4M ops */
    z.nfb = calloc((size_t)K, sizeof *z.nfb);
    z.ef = malloc(SM * sizeof *z.ef);
    z.eb = malloc(SM * sizeof *z.eb);
    z.wq = malloc(SM * sizeof *z.wq);
    z.wh = calloc((size_t)K, sizeof *z.wh);
    z.wt = calloc((size_t)K, sizeof *z.wt);
    z.pc = calloc((size_t)K, sizeof *z.pc);
    z.held = calloc((size_t)K, sizeof *z.held);
    if (!z.fb || !z.nfb || !z.ef || !z.eb || !z.wq || !z.wh || !z.wt || !z.pc || !z.held) {
        rc = ps_error(PS_ENOMEM, "out of memory building schedule");
        goto err_free;
    }
    for (size_t i = 0; i < SM; i++)
        z.ef[i] = z.eb[i] = -1;
    rc = zbv_lists(&z);
err_free:
    free(z.fb);
    free(z.nfb);
    free(z.ef);
    free(z.eb);
    free(z.wq);
    free(z.wh);
    free(z.wt);
    free(z.pc);
    free(z.held);
    return sch_gen_finish(s, rc, out);
}

int sch_gen_zbv(const char *arg, int K, int M, enum sch_remat remat,
                struct sch_schedule **out)
{
    *out = NULL;
    if (arg)
        return ps_error(PS_EUSAGE, "--schedule zb-v takes no parameter");
    return sch_schedule_zbv(K, M, remat, out);
}
