/* Validation runtime: pipelined steps equal the single-threaded reference,
 * measured activation peaks equal the ledger, training makes progress. */
#include "helpers.h"

#include <unistd.h>

/* A scratch file name private to this process (tests may run from a tree
 * where build/tests does not exist yet). */
static const char *scratch(const char *name)
{
    static char buf[4][128];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, 128, "/tmp/pipesim-rt-%d-%s", (int)getpid(), name);
    return b;
}

#include <math.h>

#include "rt_check.h"
#include "runtime/rt_pipe.h"
#include "traces/trc_trace.h"

/* One suite-wide timeout: per-test timeouts of different lengths running in
 * parallel make Criterion 2.4 leak 48 bytes in its runner under ASan. */
TestSuite(runtime, .timeout = 120);

#define NET "mlp:layers=4,width=24,in=16,out=8,norm=1"

Test(runtime, gpipe_step_equals_reference_every_K_M_remat)
{
    static const int Ks[] = { 1, 2, 4 }, Ms[] = { 1, 2, 4, 8 };
    for (int ki = 0; ki < 3; ki++)
        for (int mi = 0; mi < 4; mi++)
            for (int r = 0; r < 3; r++) {
                struct sch_schedule *s;
                cr_assert_eq(sch_schedule_build("gpipe", Ks[ki], Ms[mi], (enum sch_remat)r, &s),
                             0);
                check_step(NET, s, 16, NULL);
            }
}

/* The later generators run unchanged: 1F1B, interleaved (two stages per
 * device), zero-bubble ZB-H1 (split backward). */
Test(runtime, other_schedules_equal_reference)
{
    static const char *const names[] = { "1f1b", "interleaved:2", "zb-h1" };
    static const int Ks[] = { 2, 4 }, Ms[] = { 4, 8 };
    for (int i = 0; i < 3; i++)
        for (int ki = 0; ki < 2; ki++)
            for (int mi = 0; mi < 2; mi++)
                for (int r = 0; r < 3; r++) {
                    struct sch_schedule *s;
                    cr_assert_eq(sch_schedule_build(names[i], Ks[ki], Ms[mi], (enum sch_remat)r,
                                                    &s), 0, "%s", ps_errmsg());
                    check_step("mlp:layers=8,width=24,in=16,out=8,norm=2", s, 16, NULL);
                }
}

Test(runtime, uneven_partition_and_file_net)
{
    const char *path = scratch("net.txt");
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "# a net\ninput 12\ndense 20\nnorm\ndense 20 relu\n\ndense 6 linear # head\n");
    fclose(f);
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("gpipe", 2, 3, SCH_REMAT_EXCEPT_LAST, &s), 0);
    char spec[160];
    snprintf(spec, sizeof spec, "file:%s", path);
    check_step(spec, s, 12, "1,3");
    unlink(path);
}

/* Interleaved placement: 4 stages on 2 devices (stage s on s % 2), stage-major
 * fill-drain lists; and 2 stages on one device (in-place hand-over). */
static struct sch_schedule *interleaved(int D, int S, int M, enum sch_remat remat, int wgrad)
{
    struct sch_schedule *s = sch_schedule_new("test-interleaved", D, S, M, remat);
    cr_assert(s);
    s->has_wgrad = wgrad;
    for (int d = 0; d < D; d++) {
        for (int st = d; st < S; st += D)
            for (int m = 0; m < M; m++) {
                if (st > 0 && s->stage_device[st - 1] != d)
                    cr_assert_eq(sch_schedule_push(s, d, SCH_OP_RECV_ACT, st, m), 0);
                cr_assert_eq(sch_schedule_push(s, d, SCH_OP_FWD, st, m), 0);
                if (st + 1 < S && s->stage_device[st + 1] != d)
                    cr_assert_eq(sch_schedule_push(s, d, SCH_OP_SEND_ACT, st, m), 0);
            }
        int top = d + (S - 1 - d) / D * D;
        for (int st = top; st >= 0; st -= D)
            for (int m = M - 1; m >= 0; m--) {
                if (sch_schedule_remat_mb(s, m))
                    cr_assert_eq(sch_schedule_push(s, d, SCH_OP_RECOMP, st, m), 0);
                if (st + 1 < S && s->stage_device[st + 1] != d)
                    cr_assert_eq(sch_schedule_push(s, d, SCH_OP_RECV_GRAD, st, m), 0);
                cr_assert_eq(sch_schedule_push(s, d, SCH_OP_BWD, st, m), 0);
                if (st > 0 && s->stage_device[st - 1] != d)
                    cr_assert_eq(sch_schedule_push(s, d, SCH_OP_SEND_GRAD, st, m), 0);
                if (wgrad)
                    cr_assert_eq(sch_schedule_push(s, d, SCH_OP_WGRAD, st, m), 0);
            }
        for (int st = d; st < S; st += D)
            cr_assert_eq(sch_schedule_push(s, d, SCH_OP_UPDATE, st, -1), 0);
    }
    cr_assert_eq(sch_schedule_validate(s), 0, "%s", ps_errmsg());
    return s;
}

Test(runtime, interleaved_and_split_backward_equal_reference)
{
    for (int r = 0; r < 3; r++)
        for (int wg = 0; wg < 2; wg++) {
            check_step(NET, interleaved(2, 4, 4, (enum sch_remat)r, wg), 16, NULL);
            check_step(NET, interleaved(1, 2, 2, (enum sch_remat)r, wg), 16, NULL);
        }
}

/* Hand-counted peaks for GPipe without re-materialization, from the layer
 * shapes alone (independent of sch_mem_effect). */
Test(runtime, peak_memory_matches_hand_count)
{
    /* dense 16->24 relu | dense 24->8 linear (head) ; r = 4 rows, M = 4 */
    struct rt_net *n = net_of("mlp:layers=2,width=24,in=16,out=8", 1);
    struct rt_data *d;
    cr_assert_eq(rt_data_new(n, 16, 2, &d), 0);
    struct rt_pipe_config c = { .K = 2, .M = 4, .batch = 16, .remat = SCH_REMAT_NEVER,
                                .lr = 0.01f };
    rt_pipe *p;
    cr_assert_eq(rt_pipe_new(n, &c, &p), 0, "%s", ps_errmsg());
    int r = 4;
    int64_t stash0 = 4 * r * 16 + r * 24, out0 = 4 * r * 24;   /* input copy + ReLU mask */
    int64_t stash1 = 4 * r * 24 + 4 * r * 8, in1 = 4 * r * 24; /* input copy + dL/dy */
    cr_assert_eq(rt_pipe_stage(p, 0)->mem.stash, stash0);
    cr_assert_eq(rt_pipe_stage(p, 0)->mem.out, out0);
    cr_assert_eq(rt_pipe_stage(p, 1)->mem.stash, stash1);
    cr_assert_eq(rt_pipe_stage(p, 1)->mem.in, in1);
    struct rt_step_stats st;
    cr_assert_eq(rt_pipe_step(p, d, &st, NULL), 0, "%s", ps_errmsg());
    cr_assert_eq(st.dev[0].peak_act, 4 * stash0 + out0);
    /* stage 1: F frees its input after stashing; the 4th F starts with 3
     * stashes and the received input, and adds its stash */
    cr_assert_eq(st.dev[1].peak_act, 4 * stash1 + in1);
    rt_pipe_free(p);
    rt_data_free(d);
    rt_net_free(n);
}

Test(runtime, loss_decreases_over_steps)
{
    struct rt_net *n = net_of("mlp:layers=4,width=32,in=16,out=4,norm=2", 3);
    struct rt_data *d;
    cr_assert_eq(rt_data_new(n, 32, 5, &d), 0);
    struct rt_pipe_config c = { .K = 2, .M = 4, .batch = 32, .remat = SCH_REMAT_EXCEPT_LAST,
                                .lr = 0.1f };
    rt_pipe *p;
    cr_assert_eq(rt_pipe_new(n, &c, &p), 0, "%s", ps_errmsg());
    double first = 0, prev = INFINITY;
    for (int i = 0; i < 8; i++) {
        struct rt_step_stats st;
        cr_assert_eq(rt_pipe_step(p, d, &st, NULL), 0, "%s", ps_errmsg());
        cr_assert(st.loss < prev, "step %d: loss %g did not go below %g", i, st.loss, prev);
        if (i == 0)
            first = st.loss;
        prev = st.loss;
    }
    cr_assert(prev < 0.8 * first, "loss %g -> %g", first, prev);
    rt_pipe_free(p);
    rt_data_free(d);
    rt_net_free(n);
}
