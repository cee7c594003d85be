/* The model on a step's own op times (measure/msr_validate.h,
 * msr_replay_step): a measured step replayed through the engine with each
 * (stage, op kind, re-materialized or not) at its mean. Exact answers: a
 * step the engine made itself (every op of a row the same time, free
 * links of latency L) replays to the nanosecond with hand-off L; on one
 * device any op times replay to their sum; and a slow op where two paths
 * meet lengthens the measured step by exactly what the hand computation
 * says, which the means cannot see. And a step in the runtime's own
 * convention (a receive recorded from when its data is there; the worker's
 * sends on its own thread) replays as hand-computed. And the walk over a
 * measured step's messages that the replay and the pipelined calibration
 * share (measure/msr_msgwalk.h) classifies and pairs them as by hand. */
#include "helpers.h"

#include "measure/msr_msgwalk.h"
#include "measure/msr_validate.h"

#include <math.h>
#include <string.h>

TestSuite(replay, .timeout = 60);

/* Ops of re-materialized micro-batches twice their tabled time: under
 * except_last the last micro-batch's F and B are of another row than the
 * others'. */
static sch_time remat_twice(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)ctx;
    return remat && op->kind != SCH_OP_UPDATE ? 2 * tabled : tabled;
}

/* The engine's own trace of every schedule and remat mode at K = 2 (links
 * of 40 us and no bandwidth limit), with tabled times and with the ops of
 * re-materialized micro-batches twice as long (each row still one time):
 * its replay is the same step, error 0 and bubble error 0 exactly, at the
 * links' latency. */
Test(replay, the_engines_own_step_replays_exactly)
{
    static const char *const sched[] = { "gpipe", "1f1b", "interleaved:2", "zb-h1",
                                         "eager-1f1b", "zb-v" };
    static const enum sch_remat rm[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                         SCH_REMAT_ALWAYS };
    struct mdl_profile *p = th_uniform(8, 1.5e6, 2.7e6, 1, 3000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 40e-6);
    for (size_t i = 0; i < sizeof sched / sizeof *sched; i++)
        for (int r = 0; r < 3; r++) {
            for (int twice = 0; twice < 2; twice++) {
                struct th_run run;
                th_simulate(&run, sched[i], p, t, 2, 4, rm[r], 1, 1);
                struct sim_draw d = { remat_twice, NULL };
                sim_engine *e = th_drawn(&run, t, twice ? &d : NULL);
                if (twice && r)
                    cr_assert(sim_engine_result(e)->makespan > run.r->makespan);
                struct msr_replay out;
                cr_assert_eq(msr_replay_step(run.s, sim_engine_trace(e), &out), 0, "%s",
                             ps_errmsg());
                cr_expect_eq(out.makespan_err, 0.0, "%s remat %d twice %d: %g", sched[i], r,
                             twice, out.makespan_err);
                cr_expect_eq(out.bubble_err, 0.0, "%s remat %d twice %d: %g", sched[i], r,
                             twice, out.bubble_err);
                cr_expect(fabs(out.handoff_s - 40e-6) < 1e-12, "%s: hand-off %g", sched[i],
                          out.handoff_s);
                sim_engine_free(e);
                th_release(&run);
            }
        }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* Op times drawn per micro-batch: the (m+1)-th of a row takes m+1 times
 * its tabled time. */
static sch_time by_mb(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)ctx;
    (void)remat;
    return op->mb >= 0 ? tabled * (op->mb + 1) : tabled;
}

/* On one device the step is the sum of its ops, whatever their times: the
 * means give the same sum (to the rounding of each mean to a ns). */
Test(replay, one_device_replays_to_the_sum_of_its_ops)
{
    struct mdl_profile *p = th_uniform(4, 1.5e6, 2.7e6, 1, 3000, 100, 1000);
    struct mdl_topology *t = th_chain(1, 1e9, 1e300, 0);
    static const enum sch_remat rm[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                         SCH_REMAT_ALWAYS };
    for (int r = 0; r < 3; r++) {
        struct th_run run;
        th_simulate(&run, "gpipe", p, t, 1, 8, rm[r], 1, 0);
        struct sim_draw d = { by_mb, NULL };
        sim_engine *e = th_drawn(&run, t, &d);
        cr_assert(sim_engine_result(e)->makespan > 2 * run.r->makespan); /* drawn, not tabled */
        struct msr_replay out;
        cr_assert_eq(msr_replay_step(run.s, sim_engine_trace(e), &out), 0, "%s", ps_errmsg());
        cr_expect(fabs(out.makespan_err) < 1e-8, "remat %d: %g", r, out.makespan_err);
        cr_expect(fabs(out.bubble_err) < 1e-8, "remat %d: %g", r, out.bubble_err);
        sim_engine_free(e);
        th_release(&run);
    }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* Stage 1's forwards take 1 and 3 ms (tabled 2) after stage 0's of 2 ms,
 * free links, GPipe K = 2, M = 2, remat never. Measured: stage 1 runs F0
 * at [2, 3], waits for F1's input until 4, runs F1 at [4, 7]; with the
 * mean (2 ms each) F0 at [2, 4] and F1 at [4, 6]: the measured forward
 * phase ends 1 ms later, and everything after it is the same ops, so the
 * measured step is exactly 1 ms longer than its replay. */
static sch_time slow_second(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)ctx;
    (void)remat;
    if (op->kind == SCH_OP_FWD && op->stage == 1)
        return op->mb == 0 ? 1000000 : 3000000;
    return tabled;
}

Test(replay, a_slow_op_where_paths_meet_is_what_the_means_miss)
{
    /* two layers a stage, 1 ms forward each: stages of 2 ms forward */
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 3000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 1);
    cr_assert_eq(run.c->st[1].fwd, 2000000);
    struct sim_draw d = { slow_second, NULL };
    sim_engine *e = th_drawn(&run, t, &d);
    sch_time meas = sim_engine_result(e)->makespan, mean = run.r->makespan;
    cr_assert_eq(meas - mean, 1000000, "measured %lld, the means' %lld", (long long)meas,
                 (long long)mean);
    struct msr_replay out;
    cr_assert_eq(msr_replay_step(run.s, sim_engine_trace(e), &out), 0, "%s", ps_errmsg());
    cr_expect(fabs(out.makespan_err - 1e6 / (double)mean) < 1e-12, "%g vs %g", out.makespan_err,
              1e6 / (double)mean);
    cr_expect(out.bubble_err > 0, "%g", out.bubble_err); /* the same busy time, a longer step */
    sim_engine_free(e);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

static void ev(struct trc_trace *t, int dev, int kind, int stage, int mb, int64_t s_us,
               int64_t e_us)
{
    struct trc_event e = { .device = dev, .stage = stage, .mb = mb, .kind = kind,
                           .stream = (uint8_t)sch_op_stream((enum sch_op_kind)kind),
                           .start_ns = s_us * 1000, .end_ns = e_us * 1000,
                           .bytes = kind >= SCH_OP_SEND_ACT ? 64 : 0 };
    e.peer = kind == SCH_OP_SEND_ACT || kind == SCH_OP_RECV_GRAD ? 1
             : kind == SCH_OP_SEND_GRAD || kind == SCH_OP_RECV_ACT ? 0 : -1;
    cr_assert_eq(trc_add_event(t, &e), 0);
}

/* GPipe K = 2, M = 1, remat never, as the runtime records it (times in us):
 * device 0 runs F [0, 1000] and its send [1000, 1001]; device 1's receive
 * starts when the data is there (1000, its record starting at the send's
 * publish) and ends with its copy at 1002, then F [1002, 2002], B
 * [2002, 4002], the send [4002, 4003] and U [4003, 4103]; device 0's
 * receive, waiting since 1001, runs [4003, 4004], then B [4004, 6004] and
 * U [6004, 6104]. A measured step's workers copy their messages: each send
 * 1 us (their mean), no receive that did not wait (device 1's is its
 * device's first op: no op before it tells), so receive copies 0; the
 * latency from device 0's receive: its end less its send's end, 1 us. The
 * engine, with those copies around F and B and a 1 us link: device 0's F
 * [0, 1001] (its send's copy last), device 1's F from the delivery at 1002
 * to 2002, B [2002, 4003], U [4003, 4103]; device 0's B from 4004 to 6004,
 * U to 6104: the measured step to the ns, busy time and all. */
Test(replay, a_step_in_the_runtimes_convention_replays_as_computed)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("gpipe", 2, 1, SCH_REMAT_NEVER, &s), 0, "%s", ps_errmsg());
    struct trc_trace *t = trc_trace_new("measured", 2, 2, 1);
    cr_assert(t);
    snprintf(t->schedule, sizeof t->schedule, "gpipe");
    snprintf(t->remat, sizeof t->remat, "never");
    t->batch = 4;
    ev(t, 0, SCH_OP_FWD, 0, 0, 0, 1000);
    ev(t, 0, SCH_OP_SEND_ACT, 0, 0, 1000, 1001);
    ev(t, 1, SCH_OP_RECV_ACT, 1, 0, 1000, 1002);
    ev(t, 1, SCH_OP_FWD, 1, 0, 1002, 2002);
    ev(t, 1, SCH_OP_BWD, 1, 0, 2002, 4002);
    ev(t, 1, SCH_OP_SEND_GRAD, 1, 0, 4002, 4003);
    ev(t, 1, SCH_OP_UPDATE, 1, -1, 4003, 4103);
    ev(t, 0, SCH_OP_RECV_GRAD, 0, 0, 4003, 4004);
    ev(t, 0, SCH_OP_BWD, 0, 0, 4004, 6004);
    ev(t, 0, SCH_OP_UPDATE, 0, -1, 6004, 6104);
    struct msr_replay out;
    cr_assert_eq(msr_replay_step(s, t, &out), 0, "%s", ps_errmsg());
    cr_expect(fabs(out.latency_s - 1e-6) < 1e-12, "latency %g", out.latency_s);
    cr_expect(fabs(out.handoff_s - 2e-6) < 1e-12, "hand-off %g", out.handoff_s);
    cr_expect(fabs(out.msg_send_s - 1e-6) < 1e-12, "send %g", out.msg_send_s);
    cr_expect_eq(out.msg_recv_s, 0.0);
    cr_expect_eq(out.makespan_err, 0.0, "%g", out.makespan_err);
    cr_expect_eq(out.bubble_err, 0.0, "%g", out.bubble_err);
    /* each op its own time: the same here (one op a row), copies and all */
    struct msr_replay own;
    cr_assert_eq(msr_replay_step_with(s, t, MSR_REPLAY_OWN, 0, &own), 0, "%s", ps_errmsg());
    cr_expect_eq(own.makespan_err, 0.0, "%g", own.makespan_err);
    cr_expect_eq(own.bubble_err, 0.0, "%g", own.bubble_err);
    /* device 1's receive 3 us: not counted; device 0's ending 3 us after
     * its send: the latency */
    struct trc_event *ra = &t->events[2], *rg = &t->events[7];
    cr_assert(ra->kind == SCH_OP_RECV_ACT && rg->kind == SCH_OP_RECV_GRAD);
    ra->end_ns = 1003000;
    rg->end_ns = 4006000;
    cr_assert_eq(msr_replay_step(s, t, &out), 0, "%s", ps_errmsg());
    cr_expect(fabs(out.latency_s - 3e-6) < 1e-12, "latency %g", out.latency_s);
    /* device 0's receive recorded from 1 us after the op before it ends
     * (its data was there when the worker got to it): it did not wait, its
     * 3004 us the receive copy, and no receive sets a latency */
    rg->start_ns = 1002000;
    cr_assert_eq(msr_replay_step(s, t, &out), 0, "%s", ps_errmsg());
    cr_expect_eq(out.latency_s, 0.0, "latency %g", out.latency_s);
    cr_expect(fabs(out.msg_recv_s - 3004e-6) < 1e-12, "receive %g", out.msg_recv_s);
    trc_trace_free(t);
    sch_schedule_free(s);
}

/* A trace of another shape than the schedule's is refused, not replayed. */
Test(replay, a_trace_of_another_shape_is_refused)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 3000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0);
    struct th_run a, b;
    th_simulate(&a, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 1);
    th_simulate(&b, "gpipe", p, t, 1, 2, SCH_REMAT_NEVER, 1, 1);
    struct msr_replay out;
    cr_expect_eq(msr_replay_step(a.s, sim_engine_trace(b.e), &out), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "a trace of 1 stage(s) on 1 device(s) for a schedule of 2 on 2"),
              "%s", ps_errmsg());
    th_release(&a);
    th_release(&b);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* Each op its own time: the engine's drawn step (times that differ by
 * micro-batch, links of 40 us free of bandwidth) replays to the ns. And
 * shuffled on one device: the same times in another order, the same sum,
 * and the same seed the same step. */
Test(replay, own_times_replay_exactly_and_shuffles_keep_one_devices_sum)
{
    struct mdl_profile *p = th_uniform(8, 1.5e6, 2.7e6, 1, 3000, 100, 1000);
    static const char *const sched[] = { "gpipe", "1f1b", "zb-h1", "interleaved:2", "zb-v",
                                         "dualpipe-v" };
    for (int K = 1; K <= 2; K++) {
        struct mdl_topology *t = th_chain(K, 1e9, 1e300, 40e-6);
        for (size_t i = 0; i < (K == 1 ? 1 : sizeof sched / sizeof *sched); i++) {
            struct th_run run;
            th_simulate(&run, sched[i], p, t, K, 4, SCH_REMAT_EXCEPT_LAST, 1, 0);
            struct sim_draw d = { by_mb, NULL };
            sim_engine *e = th_drawn(&run, t, &d);
            const struct trc_trace *tr = sim_engine_trace(e);
            struct msr_replay own, means, sh1, sh2;
            cr_assert_eq(msr_replay_step_with(run.s, tr, MSR_REPLAY_OWN, 0, &own), 0, "%s",
                         ps_errmsg());
            cr_expect_eq(own.makespan_err, 0.0, "%s K=%d: %g", sched[i], K, own.makespan_err);
            cr_expect_eq(own.bubble_err, 0.0, "%s K=%d: %g", sched[i], K, own.bubble_err);
            cr_assert_eq(msr_replay_step(run.s, tr, &means), 0);
            if (K == 2 && !strcmp(sched[i], "1f1b")) { /* devices that wait on each other */
                cr_expect_neq(means.makespan_err, 0.0, "%s: the means are not the op times",
                              sched[i]);
                int moved = 0; /* some order in time is not the measured one */
                for (uint64_t seed = 1; seed <= 20 && !moved; seed++) {
                    struct msr_replay x;
                    cr_assert_eq(msr_replay_step_with(run.s, tr, MSR_REPLAY_SHUFFLED, seed, &x),
                                 0);
                    moved = x.makespan_err != own.makespan_err;
                }
                cr_expect(moved, "20 shuffles all gave the measured step");
            }
            cr_assert_eq(msr_replay_step_with(run.s, tr, MSR_REPLAY_SHUFFLED, 7, &sh1), 0);
            cr_assert_eq(msr_replay_step_with(run.s, tr, MSR_REPLAY_SHUFFLED, 7, &sh2), 0);
            cr_expect_eq(sh1.makespan_err, sh2.makespan_err, "%s: seed 7 twice", sched[i]);
            if (K == 1)
                cr_expect_eq(sh1.makespan_err, 0.0, "one device: %g", sh1.makespan_err);
            sim_engine_free(e);
            th_release(&run);
        }
        mdl_topology_free(t);
    }
    mdl_profile_free(p);
}

/* Shuffles stay inside their (stage, kind, re-materialized or not) row: with
 * every row one time (re-materialized micro-batches' ops twice as long, so
 * under except_last a stage's F and B have two rows), any shuffle is the
 * step itself, to the ns; mixing the rows would move it. */
Test(replay, shuffles_stay_in_their_row)
{
    struct mdl_profile *p = th_uniform(8, 1.5e6, 2.7e6, 1, 3000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 40e-6);
    static const char *const sched[] = { "gpipe", "1f1b", "zb-h1", "interleaved:2", "zb-v" };
    for (size_t i = 0; i < sizeof sched / sizeof *sched; i++) {
        struct th_run run;
        th_simulate(&run, sched[i], p, t, 2, 4, SCH_REMAT_EXCEPT_LAST, 1, 0);
        struct sim_draw d = { remat_twice, NULL };
        sim_engine *e = th_drawn(&run, t, &d);
        for (uint64_t seed = 1; seed <= 5; seed++) {
            struct msr_replay x;
            cr_assert_eq(msr_replay_step_with(run.s, sim_engine_trace(e), MSR_REPLAY_SHUFFLED,
                                              seed, &x), 0, "%s", ps_errmsg());
            cr_expect_eq(x.makespan_err, 0.0, "%s seed %d: %g", sched[i], (int)seed,
                         x.makespan_err);
        }
        sim_engine_free(e);
        th_release(&run);
    }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* The CLI: a measured step replayed three ways; a simulated trace, a trace
 * whose header names a huge schedule or one its generator refuses, and the
 * shuffle options without --replay refused. */
Test(replay, cli_replays_a_measured_step)
{
    char dir[64];
    th_tmpdir(dir, sizeof dir, "replay");
    cr_assert_eq(th_sh("%s predict --model mlp:layers=2,width=8 --topology "
                       "models/topologies/chain-8-ideal.json -K 2 -M 2 --batch 4 --trace "
                       "%s/s.json > /dev/null 2>&1 && cd %s && %s validate --net "
                       "mlp:layers=2,width=8 --batch 4 -K 2 -M 2 --remat never --steps 1 "
                       "--trace m.json > /dev/null 2>&1", th_pipesim(), dir, dir, th_pipesim()),
                 0);
    cr_expect_eq(th_sh("cd %s && %s compare --replay m.json > out.txt && grep -q '^measured "
                       "step   gpipe K=2 M=2 remat never' out.txt && grep -q 'each op its own' "
                       "out.txt && grep -q 'shuffled in each kind (20, mean)' out.txt",
                       dir, th_pipesim()), 0);
    cr_expect_eq(th_sh("cd %s && %s compare --replay m.json --format csv --shuffles 3 "
                       "--seed 9 > r.csv && test $(wc -l < r.csv) -eq 6 && grep -q "
                       "'^shuffled,9,' r.csv && grep -q '^shuffled,10,' r.csv && grep -q "
                       "'^shuffled,11,' r.csv && grep -q '^means,,' r.csv && grep -q '^own,,' "
                       "r.csv", dir, th_pipesim()), 0);
    char out[256];
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s compare --replay m.json --format json "
                            "--shuffles 2 --seed 4 | python3 -c 'import json,sys; "
                            "d=json.load(sys.stdin); print(d[\"schedule\"], d[\"K\"], "
                            "d[\"M\"], sorted(d[\"means\"]), [x[\"seed\"] for x in "
                            "d[\"shuffled\"]])'", dir, th_pipesim()), 0);
    cr_expect_str_eq(out, "gpipe 2 2 ['bubble_meas', 'bubble_sim', 'handoff_s', "
                          "'latency_s', 'makespan_err', 'msg_recv_s', 'msg_send_s', "
                          "'step_meas_s', 'step_sim_s'] [4, 5]\n");
    /* hostile headers: 2^24 micro-batches and no ops (refused as a trace of no
     * compute ops, helper-106); a size the generator refuses (interleaved:2
     * needs M a multiple of K), on one op that the header's counts allow */
    cr_assert_eq(th_sh("cd %s && printf '%%s' '{\"pipesim\":{\"version\":\"0.1.0\",\"source\":"
                       "\"measured\",\"schedule\":\"gpipe\",\"remat\":\"never\",\"devices\":1,"
                       "\"stages\":1,\"micro_batches\":16777216,\"batch\":16777216},"
                       "\"traceEvents\":[]}' > huge.json && sed 's/\"gpipe\"/\"interleaved:2\"/; "
                       "s/\"devices\":1,\"stages\":1,\"micro_batches\":16777216/\"devices\":2,"
                       "\"stages\":4,\"micro_batches\":3/; s/\\[\\]/[{\"ph\":\"X\",\"pid\":1,"
                       "\"tid\":0,\"ts\":0,\"dur\":1,\"args\":{\"kind\":\"F\",\"stage\":3,"
                       "\"mb\":2}}]/' huge.json > odd.json", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s compare --replay huge.json 2> e.txt; test $? -eq 3 && "
                       "grep -q 'huge.json: the trace holds no compute ops' e.txt",
                       dir, th_pipesim()), 0);
    cr_expect_eq(th_sh("cd %s && %s compare --replay odd.json 2> e.txt; test $? -eq 4 && "
                       "grep -q \"odd.json: the trace's schedule interleaved:2 with K=2, M=3: \" "
                       "e.txt", dir, th_pipesim()), 0);
    /* a schedule no generator knows is the trace's field, not an option */
    cr_expect_eq(th_sh("cd %s && sed 's/\"interleaved:2\"/\"bogus\"/' odd.json > bogus.json && "
                       "%s compare --replay bogus.json 2> e.txt; test $? -eq 4 && grep -q "
                       "\"bogus.json: the trace's schedule bogus with K=2, M=3: field "
                       "'schedule': unknown schedule 'bogus'\" e.txt", dir, th_pipesim()), 0);
    /* op times the engine cannot run are the trace's, not a profile's and topology's,
     * which replay takes none of (helper-106): the last op lasting 3e14 us, 16 x that
     * when drawn */
    cr_assert_eq(th_sh("cd %s && python3 -c '\n"
                       "import json\n"
                       "d = json.load(open(\"m.json\"))\n"
                       "x = max((e for e in d[\"traceEvents\"] if e[\"ph\"] == \"X\"),\n"
                       "        key=lambda e: e[\"ts\"] + e[\"dur\"])\n"
                       "x[\"dur\"] = 3e14\n"
                       "d[\"pipesim\"][\"step_ns\"] = int((x[\"ts\"] + x[\"dur\"]) * 1000) + 1000\n"
                       "json.dump(d, open(\"long.json\", \"w\"))'", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s compare --replay long.json 2> e.txt; test $? -eq 4 && "
                       "grep -q '^pipesim compare: long.json: schedule gpipe: its ops add up to "
                       ".*; check the trace.s op times for huge figures$' e.txt", dir,
                       th_pipesim()), 0);
    cr_expect_eq(th_sh("cd %s && %s compare --replay s.json 2> e.txt; test $? -eq 4 && "
                       "grep -q 's.json: the trace is simulated, not a measured step' e.txt",
                       dir, th_pipesim()), 0);
    cr_expect_eq(th_sh("cd %s && %s compare --shuffles 3 s.json m.json 2> e.txt; test $? -eq 2 "
                       "&& grep -q -- '--shuffles and --seed go with --replay' e.txt", dir,
                       th_pipesim()), 0);
    th_sh("rm -rf %s", dir);
}

/* ---- msr_msg_walk: the messages of a measured step --------------------- */

struct walked {
    int n, stop_at;
    enum msr_msg_kind kind[16];
    const struct trc_event *ev[16], *send[16];
};

static int walk_cb(void *ctx, const struct msr_msg *m)
{
    struct walked *w = ctx;
    cr_assert_lt(w->n, 16);
    w->kind[w->n] = m->kind;
    w->ev[w->n] = m->ev;
    w->send[w->n] = m->send;
    return ++w->n == w->stop_at ? -1 : 0;
}

static void add(struct trc_trace *t, int dev, int kind, int stage, int mb, int64_t a,
                int64_t b)
{
    struct trc_event e = { .device = dev, .stage = stage, .mb = mb, .kind = kind,
                           .stream = (uint8_t)sch_op_stream(kind), .start_ns = a, .end_ns = b };
    if (e.stream != SCH_STREAM_COMPUTE)
        e.bytes = 64;
    cr_assert_eq(trc_add_event(t, &e), 0);
}

/* A GPipe K = 2, M = 2 step in the runtime's convention, its events added
 * out of order (times in us): each send is a send; device 0's gradient
 * receive of micro-batch 1 starts 97.5 us after its last op ended (waited,
 * paired with stage 1's send), that of micro-batch 0 0.5 us after (a copy);
 * device 1's first receive is its first event (left out), its second
 * starts 52.5 us after F0 (waited, paired with device 0's second send).
 * The walk goes device by device in start order and stops at a negative
 * return. */
Test(replay, msg_walk_classifies_and_pairs_messages)
{
    struct trc_trace *t = trc_trace_new("measured", 2, 2, 2);
    cr_assert(t);
    const int64_t u = 1000;
    add(t, 1, SCH_OP_SEND_GRAD, 1, 0, 390 * u, 391 * u);
    add(t, 0, SCH_OP_FWD, 0, 0, 0, 100 * u);
    add(t, 0, SCH_OP_SEND_ACT, 0, 0, 100 * u, 102 * u);
    add(t, 0, SCH_OP_FWD, 0, 1, 102 * u, 200 * u);
    add(t, 0, SCH_OP_SEND_ACT, 0, 1, 200 * u, 202500);
    add(t, 0, SCH_OP_RECV_GRAD, 0, 1, 300 * u, 301 * u);
    add(t, 0, SCH_OP_BWD, 0, 1, 301 * u, 400 * u);
    add(t, 0, SCH_OP_RECV_GRAD, 0, 0, 400500, 401500);
    add(t, 0, SCH_OP_BWD, 0, 0, 401500, 500 * u);
    add(t, 1, SCH_OP_RECV_ACT, 1, 0, 102 * u, 104 * u);
    add(t, 1, SCH_OP_FWD, 1, 0, 104 * u, 150 * u);
    add(t, 1, SCH_OP_RECV_ACT, 1, 1, 202500, 203500);
    add(t, 1, SCH_OP_FWD, 1, 1, 203500, 280 * u);
    add(t, 1, SCH_OP_BWD, 1, 1, 280 * u, 298 * u);
    add(t, 1, SCH_OP_SEND_GRAD, 1, 1, 298 * u, 299 * u);
    add(t, 1, SCH_OP_BWD, 1, 0, 299 * u, 390 * u);
    const struct trc_event *ev = t->events;
    struct walked w = { .stop_at = -1 };
    cr_assert_eq(msr_msg_walk(t, walk_cb, &w), 0);
    static const enum msr_msg_kind want[] = { MSR_MSG_SEND, MSR_MSG_SEND, MSR_MSG_RECV_WAITED,
                                              MSR_MSG_RECV_COPY, MSR_MSG_RECV_WAITED,
                                              MSR_MSG_SEND, MSR_MSG_SEND };
    /* the events, by their index in the order added */
    static const int at[] = { 2, 4, 5, 7, 11, 14, 0 };
    cr_assert_eq(w.n, 7);
    for (int i = 0; i < 7; i++) {
        cr_expect_eq(w.kind[i], want[i], "call %d", i);
        cr_expect_eq(w.ev[i], &ev[at[i]], "call %d", i);
    }
    cr_expect_eq(w.send[2], &ev[14], "device 0's waited receive pairs with sendB1");
    cr_expect_eq(w.send[4], &ev[4], "device 1's waited receive pairs with sendF1");
    cr_expect_null(w.send[0]);
    cr_expect_null(w.send[3]);
    struct walked s = { .stop_at = 2 };
    cr_expect_eq(msr_msg_walk(t, walk_cb, &s), -1);
    cr_expect_eq(s.n, 2, "the walk stops at the first negative return");
    trc_trace_free(t);
}
