/* Host-driven messages (models/mdl_topology.h "messages"): a device whose
 * compute thread copies each message it sends or receives. Exact answers:
 * the costs' pre and post parts, a hand-computed GPipe step (its makespan,
 * busy time, bubble and the recorded spans), the JSON fields and their
 * refusals, and the topology writer's round trip. */
#include "helpers.h"

#include "analysis/ana_predict.h"
#include "analysis/ana_plan_int.h"
#include "sched/sch_partitioner.h"
#include "models/mdl_gen.h"

#include <math.h>
#include <string.h>

TestSuite(messages, .timeout = 60);

/* Stages of 2 ms forward, 3 ms backward; sends 10 us, receives 20 us plus
 * 4000 B at 1e9 B/s (4 us); free links. */
Test(messages, costs_carry_the_copies_around_f_and_b)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0);
    th_messages(t, 10e-6, 0, 20e-6, 1e9);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 0);
    const struct sch_stage_cost *a = &run.c->st[0], *b = &run.c->st[1];
    cr_expect_eq(a->fwd_pre, 0);
    cr_expect_eq(a->fwd_post, 10000);      /* sends its activations */
    cr_expect_eq(a->bwd_pre, 24000);       /* receives their gradient */
    cr_expect_eq(a->bwd_post, 0);
    cr_expect_eq(b->fwd_pre, 24000);
    cr_expect_eq(b->fwd_post, 0);
    cr_expect_eq(b->bwd_pre, 0);
    cr_expect_eq(b->bwd_post, 10000);
    cr_expect_eq(a->fwd, 2010000);
    cr_expect_eq(a->fwd_nostash, 2010000);
    cr_expect_eq(a->bwd, 3024000);
    cr_expect_eq(b->fwd, 2024000);
    cr_expect_eq(b->bwd, 3010000);
    th_release(&run);
    /* one device: no message, no copy */
    struct mdl_topology *one = th_chain(1, 1e9, 1e300, 0);
    th_messages(one, 10e-6, 0, 20e-6, 1e9);
    th_simulate(&run, "gpipe", p, one, 1, 2, SCH_REMAT_NEVER, 1, 0);
    cr_expect_eq(run.c->st[0].fwd, 4000000);
    cr_expect_eq(run.c->st[0].fwd_pre + run.c->st[0].fwd_post + run.c->st[0].bwd_pre +
                     run.c->st[0].bwd_post, 0);
    th_release(&run);
    mdl_topology_free(one);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* GPipe K = 2, M = 2, remat never, sends 10 us and receives 20 us (no
 * per-byte part), free links (times in us):
 *   device 0: F0 [0, 2010] (its compute to 2000, then the send's copy),
 *             F1 [2010, 4020];
 *   device 1: F0 [2010, 4030] (the receive's copy to 2030), F1 [4030, 6050],
 *             then its two B [6050, 9060] and [9060, 12070] (each 3000 and
 *             a send's copy);
 *   device 0: B [9060, 12080] (a receive's copy, then 3000), B [12080, 15100];
 * then each device's update. So F and B end 15100 us in (fb_end), busy 10 ms
 * a device (the copies not counted), the bubble 1 - 20 / (2 x 15.1), and the
 * recorded spans leave the copies out. Sends and receives are recorded as
 * the runtime's workers record theirs: device 0's first send is its copy
 * [2000, 2010] (the link takes no time); a receive runs from when both its
 * message was sent and its device was free to the end of its copy: device
 * 1's first [2010, 2030] (the message came last), its second [4030, 4050]
 * (the device came last: F0's end); device 0's first gradient receive
 * [9060, 9080] after the gradient's send [9050, 9060]. */
Test(messages, a_gpipe_step_by_hand)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0);
    th_messages(t, 10e-6, 0, 20e-6, 0);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 1);
    const struct sim_result *r = run.r;
    cr_expect_eq(r->fb_end, 15100000);
    cr_expect_eq(r->makespan, 15100000 + run.c->st[0].update);
    cr_expect_eq(r->busy[0], 10000000);
    cr_expect_eq(r->busy[1], 10000000);
    cr_expect(fabs(r->bubble - (1 - 20.0 / 30.2)) < 1e-12, "bubble %g", r->bubble);
    const struct trc_trace *tr = sim_engine_trace(run.e);
    int seen = 0;
    for (size_t i = 0; i < tr->n_events; i++) {
        const struct trc_event *e = &tr->events[i];
        if (e->kind == SCH_OP_FWD && e->stage == 0 && e->mb == 0) {
            cr_expect_eq(e->start_ns, 0);
            cr_expect_eq(e->end_ns, 2000000);
            seen++;
        }
        if (e->kind == SCH_OP_FWD && e->stage == 1 && e->mb == 0) {
            cr_expect_eq(e->start_ns, 2030000);
            cr_expect_eq(e->end_ns, 4030000);
            seen++;
        }
        if (e->kind == SCH_OP_BWD && e->stage == 0 && e->end_ns == 12080000) {
            cr_expect_eq(e->start_ns, 9080000);
            seen++;
        }
        static const struct {
            int kind, stage, mb;
            int64_t start, end;
        } io[] = {
            { SCH_OP_SEND_ACT, 0, 0, 2000000, 2010000 },
            { SCH_OP_RECV_ACT, 1, 0, 2010000, 2030000 },
            { SCH_OP_RECV_ACT, 1, 1, 4030000, 4050000 },
            { SCH_OP_RECV_GRAD, 0, 1, 9060000, 9080000 },
            { SCH_OP_SEND_GRAD, 1, 1, 9050000, 9060000 },
        };
        for (size_t k = 0; k < sizeof io / sizeof *io; k++)
            if (e->kind == io[k].kind && e->stage == io[k].stage && e->mb == io[k].mb) {
                cr_expect_eq(e->start_ns, io[k].start, "event %zu starts at %lld", k,
                             (long long)e->start_ns);
                cr_expect_eq(e->end_ns, io[k].end, "event %zu ends at %lld", k,
                             (long long)e->end_ns);
                seen++;
            }
    }
    cr_expect_eq(seen, 8);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* A mixed step: only device 0 copies its messages (sends 10 us, receives
 * 20 us), device 1 none; the link takes 4000 B in 4 us and delivers 5 us
 * later (times in us). Device 0's sends span its copy and the transfer
 * ([2000, 2014], [4010, 4024]); device 1's receives, which it does not
 * copy, keep the engine's span, the transfer's start until the device
 * takes the data ([2010, 2019], [4020, 4029]), and so does its send
 * ([9029, 9033]); device 0's gradient receives run from when the
 * transfer had ended and the device was free to the end of its copy:
 * [9033, 9058] (the message came last), [12058, 12078] (the device did). */
Test(messages, a_mixed_step_with_link_time)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e9, 5e-6);
    t->devices[0].msg_send_s = 10e-6;
    t->devices[0].msg_recv_s = 20e-6;
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 1);
    static const struct {
        int kind, stage, mb;
        int64_t start, end;
    } want[] = {
        { SCH_OP_SEND_ACT, 0, 0, 2000, 2014 },   { SCH_OP_SEND_ACT, 0, 1, 4010, 4024 },
        { SCH_OP_RECV_ACT, 1, 0, 2010, 2019 },   { SCH_OP_RECV_ACT, 1, 1, 4020, 4029 },
        { SCH_OP_SEND_GRAD, 1, 1, 9029, 9033 },  { SCH_OP_RECV_GRAD, 0, 1, 9033, 9058 },
        { SCH_OP_RECV_GRAD, 0, 0, 12058, 12078 }, { SCH_OP_BWD, 0, 1, 9058, 12058 },
        { SCH_OP_FWD, 1, 1, 4029, 6029 },
    };
    const struct trc_trace *tr = sim_engine_trace(run.e);
    int seen = 0;
    for (size_t i = 0; i < tr->n_events; i++) {
        const struct trc_event *e = &tr->events[i];
        for (size_t k = 0; k < sizeof want / sizeof *want; k++)
            if (e->kind == want[k].kind && e->stage == want[k].stage && e->mb == want[k].mb) {
                cr_expect_eq(e->start_ns, want[k].start * 1000, "row %zu starts at %lld", k,
                             (long long)e->start_ns);
                cr_expect_eq(e->end_ns, want[k].end * 1000, "row %zu ends at %lld", k,
                             (long long)e->end_ns);
                seen++;
            }
    }
    cr_expect_eq(seen, (int)(sizeof want / sizeof *want));
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* Every schedule at K = 2 (two chunks where it has them) with copies on a
 * link slower than the ops (a transfer of 4 ms against 2 ms forwards, so
 * sends queue), each remat mode: on every device the compute spans and
 * the send spans never overlap, a copied send starts no earlier than the
 * op that made its data ended, and a copied receive ends exactly where
 * its reader's own time starts. */
Test(messages, recorded_spans_keep_their_order)
{
    static const char *const sched[] = { "gpipe", "1f1b", "interleaved:2", "zb-h1", "zb-v",
                                         "eager-1f1b", "dualpipe-v", "breadth-first:2" };
    struct mdl_profile *p = th_uniform(8, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e6, 5e-6);
    th_messages(t, 10e-6, 0, 20e-6, 1e9);
    for (size_t i = 0; i < sizeof sched / sizeof *sched; i++)
        for (int rm = 0; rm < 3; rm++) {
            struct th_run run;
            th_simulate(&run, sched[i], p, t, 2, 4, (enum sch_remat)rm, 1, 1);
            const struct trc_trace *tr = sim_engine_trace(run.e);
            int64_t end[2][2] = { { -1, -1 }, { -1, -1 } };
            const struct trc_event **ev = malloc(tr->n_events * sizeof *ev);
            cr_assert(ev);
            for (size_t k = 0; k < tr->n_events; k++)
                ev[k] = &tr->events[k];
            qsort(ev, tr->n_events, sizeof *ev, trc_event_ptr_by_device_start);
            int copied = 0;
            for (size_t k = 0; k < tr->n_events; k++) {
                const struct trc_event *e = ev[k];
                int lane = e->stream == SCH_STREAM_COMPUTE ? 0
                           : e->stream == SCH_STREAM_SEND  ? 1 : -1;
                if (lane >= 0) {
                    cr_expect_geq(e->start_ns, end[e->device][lane], "%s rm %d: overlap",
                                  sched[i], rm);
                    end[e->device][lane] = e->end_ns;
                }
                if (e->stream == SCH_STREAM_COMPUTE)
                    continue;
                /* the op at the other end of the message on this device */
                int reader = e->kind == SCH_OP_RECV_ACT ? SCH_OP_FWD : SCH_OP_BWD;
                int maker = e->kind == SCH_OP_SEND_ACT ? SCH_OP_FWD : SCH_OP_BWD;
                int want = e->stream == SCH_STREAM_RECV ? reader : maker;
                for (size_t q = 0; q < tr->n_events; q++) {
                    const struct trc_event *o = ev[q];
                    if (o->kind != want || o->stage != e->stage || o->mb != e->mb)
                        continue;
                    if (e->stream == SCH_STREAM_RECV) {
                        cr_expect_eq(e->end_ns, o->start_ns, "%s rm %d: receive's end",
                                     sched[i], rm);
                    } else {
                        cr_expect_geq(e->start_ns, o->end_ns, "%s rm %d: send's start",
                                      sched[i], rm);
                    }
                    copied++;
                }
            }
            cr_expect_gt(copied, 0, "%s: messages between the devices", sched[i]);
            free(ev);
            th_release(&run);
        }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

static const char TOPO[] =
    "{\"name\": \"m\", \"devices\": [{\"name\": \"c\", \"count\": 2, \"flops\": 1e9, "
    "\"memory\": 1e9, \"messages\": %s}], \"links\": [{\"name\": \"l\", \"endpoints\": "
    "[\"c0\", \"c1\"], \"bandwidth\": 1e9}]}";

static int parse(const char *messages, struct mdl_topology **t)
{
    char buf[512];
    snprintf(buf, sizeof buf, TOPO, messages);
    return mdl_topology_parse(buf, strlen(buf), "m.json", t);
}

/* The fields load, every one checked; the writer writes them back. */
Test(messages, json_fields_load_check_and_write_back)
{
    struct mdl_topology *t;
    cr_assert_eq(parse("{\"send_s\": 1e-6, \"send_bandwidth\": 8e9, \"recv_s\": 2e-6, "
                       "\"recv_bandwidth\": 4e9}", &t), 0, "%s", ps_errmsg());
    cr_expect_eq(t->devices[1].msg_send_s, 1e-6);
    cr_expect_eq(t->devices[1].msg_send_bw, 8e9);
    cr_expect_eq(t->devices[1].msg_recv_s, 2e-6);
    cr_expect_eq(t->devices[1].msg_recv_bw, 4e9);
    char dir[64], path[128];
    th_tmpdir(dir, sizeof dir, "messages");
    snprintf(path, sizeof path, "%s/t.json", dir);
    cr_assert_eq(mdl_topology_write(t, path), 0, "%s", ps_errmsg());
    struct mdl_topology *back;
    cr_assert_eq(mdl_topology_load(path, &back), 0, "%s", ps_errmsg());
    cr_expect_eq(back->devices[0].msg_send_s, 1e-6);
    cr_expect_eq(back->devices[0].msg_send_bw, 8e9);
    cr_expect_eq(back->devices[0].msg_recv_s, 2e-6);
    cr_expect_eq(back->devices[0].msg_recv_bw, 4e9);
    mdl_topology_free(back);
    /* a device without copies is written without "messages" */
    struct mdl_topology *plain = th_chain(2, 1e9, 1e9, 0);
    cr_assert_eq(mdl_topology_write(plain, path), 0, "%s", ps_errmsg());
    cr_expect_eq(th_sh("! grep -q messages %s", path), 0);
    mdl_topology_free(plain);
    mdl_topology_free(t);
    th_sh("rm -rf %s", dir);
    static const struct {
        const char *m, *want;
        int rc;
    } bad[] = {
        { "{\"send_s\": -1}", "devices[0].messages.send_s: must be >= 0, got -1",
          -PS_EINVAL },
        { "{\"recv_bandwidth\": \"x\"}", "devices[0].messages.recv_bandwidth: must "
                                          "be a number", -PS_EPARSE },
        { "{\"send_ms\": 1}", "send_ms", -PS_EPARSE },
        { "{\"recv_s\": 5}", "devices[0].messages.recv_s: must be <= 1 s, got 5",
          -PS_EINVAL },
        { "[1]", "devices[0].messages: must be an object", -PS_EPARSE },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(parse(bad[i].m, &t), bad[i].rc, "%s", bad[i].m);
        cr_expect(strstr(ps_errmsg(), bad[i].want), "%s: %s", bad[i].m, ps_errmsg());
    }
}

/* A copy longer than the engine's bound is refused where the costs are
 * made, naming the device. */
Test(messages, a_copy_past_the_bound_is_refused)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0);
    th_messages(t, 0, 1e-300, 0, 0);
    struct sch_schedule *s;
    struct sch_partition *part;
    struct sch_costs *c;
    cr_assert_eq(sch_schedule_build("gpipe", 2, 2, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(sch_partition_uniform(2, 4, &part), 0);
    cr_expect_eq(sch_costs_new(p, t, part, s->stage_device, 1, &c), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "a sent activation of 4000 bytes takes"), "%s", ps_errmsg());
    sch_partition_free(part);
    sch_schedule_free(s);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* What the copies' placement relies on: in every schedule's lists (each
 * remat mode, K = 2 and 4) each send directly follows the op that made its
 * data and each receive directly precedes the op that reads it. */
Test(messages, sends_follow_their_producer_and_receives_precede_their_consumer)
{
    static const char *const sc[] = { "gpipe", "1f1b", "eager-1f1b", "interleaved:2",
                                      "breadth-first:2", "zb-h1", "zb-h2", "zb-v", "zb-auto",
                                      "dualpipe-v" };
    static const enum sch_remat rm[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                         SCH_REMAT_ALWAYS };
    for (size_t i = 0; i < sizeof sc / sizeof *sc; i++)
        for (int r = 0; r < 3; r++)
            for (int K = 2; K <= 4; K += 2) {
                struct sch_schedule *s;
                cr_assert_eq(sch_schedule_build(sc[i], K, 16, rm[r], &s), 0, "%s",
                             ps_errmsg());
                cr_assert_eq(sch_schedule_materialize(s), 0);
                int checked = 0;
                for (int d = 0; d < s->n_devices; d++) {
                    const struct sch_op *o = s->ops[d];
                    for (int j = 0; j < s->n_ops[d]; j++) {
                        int k = o[j].kind;
                        if (k == SCH_OP_SEND_ACT || k == SCH_OP_SEND_GRAD) {
                            int want = k == SCH_OP_SEND_ACT ? SCH_OP_FWD : SCH_OP_BWD;
                            cr_expect(j > 0 && o[j - 1].kind == want &&
                                          o[j - 1].stage == o[j].stage && o[j - 1].mb == o[j].mb,
                                      "%s remat %d K=%d device %d op %d", sc[i], r, K, d, j);
                            checked++;
                        }
                        if (k == SCH_OP_RECV_ACT || k == SCH_OP_RECV_GRAD) {
                            int want = k == SCH_OP_RECV_ACT ? SCH_OP_FWD : SCH_OP_BWD;
                            cr_expect(j + 1 < s->n_ops[d] && o[j + 1].kind == want &&
                                          o[j + 1].stage == o[j].stage &&
                                          o[j + 1].mb == o[j].mb,
                                      "%s remat %d K=%d device %d op %d", sc[i], r, K, d, j);
                            checked++;
                        }
                    }
                }
                cr_expect_gt(checked, 0);
                sch_schedule_free(s);
            }
}

/* A split backward: the copies are the input-gradient half's (B sends the
 * gradient), none of the weight half's; and the costs end the same however
 * often the copies are added. */
Test(messages, split_backward_and_a_second_call)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0);
    th_messages(t, 10e-6, 0, 20e-6, 0);
    struct th_run run, plain;
    th_simulate(&run, "zb-h1", p, t, 2, 4, SCH_REMAT_NEVER, 1, 0);
    struct mdl_topology *t0 = th_chain(2, 1e9, 1e300, 0);
    th_simulate(&plain, "zb-h1", p, t0, 2, 4, SCH_REMAT_NEVER, 1, 0);
    for (int s = 0; s < 2; s++) {
        const struct sch_stage_cost *a = &run.c->st[s], *b = &plain.c->st[s];
        cr_expect_eq(a->bwd_input, b->bwd_input + a->bwd_pre + a->bwd_post, "stage %d", s);
        cr_expect_eq(a->bwd_weight, b->bwd_weight, "stage %d", s);
        cr_expect_eq(a->bwd_pre + a->bwd_post, s == 0 ? 20000 : 10000);
    }
    struct sch_stage_cost before = run.c->st[1];
    cr_assert_eq(sch_costs_messages(t, run.c), 0);
    cr_expect_eq(run.c->st[1].fwd, before.fwd);
    cr_expect_eq(run.c->st[1].bwd_input, before.bwd_input);
    th_messages(t, 0, 0, 0, 0); /* and taken off again */
    cr_assert_eq(sch_costs_messages(t, run.c), 0);
    cr_expect_eq(run.c->st[1].fwd, plain.c->st[1].fwd);
    cr_expect_eq(run.c->st[1].bwd, plain.c->st[1].bwd);
    th_release(&run);
    th_release(&plain);
    mdl_topology_free(t0);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

static sch_time twice(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)ctx;
    (void)op;
    (void)remat;
    return 2 * tabled;
}

static sch_time same(void *ctx, const struct sch_op *op, int remat, sch_time tabled)
{
    (void)ctx;
    (void)op;
    (void)remat;
    return tabled;
}

/* Drawn op times are the ops' own: a draw of the tabled time changes
 * nothing, and one that doubles it doubles the compute, not the copies
 * (device 0's first F: 4000 us of its own, then its 10 us send copy). */
Test(messages, draws_leave_the_copies_alone)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0);
    th_messages(t, 10e-6, 0, 20e-6, 0);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 1);
    for (int k = 0; k < 2; k++) {
        struct sim_draw d = { k ? twice : same, NULL };
        sim_engine *e = th_drawn(&run, t, &d);
        const struct sim_result *r = sim_engine_result(e);
        if (!k) {
            cr_expect_eq(r->makespan, run.r->makespan);
            cr_expect_eq(r->busy[0], run.r->busy[0]);
        } else {
            cr_expect_eq(r->busy[0], 2 * run.r->busy[0]);
            const struct trc_trace *tr = sim_engine_trace(e);
            for (size_t i = 0; i < tr->n_events; i++) {
                const struct trc_event *ev = &tr->events[i];
                if (ev->kind == SCH_OP_SEND_ACT && ev->stage == 0 && ev->mb == 0) {
                    cr_expect_eq(ev->start_ns, 4000000, "the send's copy after 4000 us");
                    cr_expect_eq(ev->end_ns, 4010000, "a copy of 10 us, a free link");
                }
                if (ev->kind == SCH_OP_FWD && ev->stage == 0 && ev->mb == 0)
                    cr_expect_eq(ev->end_ns, 4000000);
            }
        }
        sim_engine_free(e);
    }
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* predict reports the ops' own times: fwd_s and bwd_s, and the closed-form
 * bubble from them, are those without messages; the step is longer. */
Test(messages, predict_reports_the_ops_own_times)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0), *t0 = th_chain(2, 1e9, 1e300, 0);
    th_messages(t, 10e-6, 0, 20e-6, 0);
    struct ana_config c = { .profile = p, .topo = t, .K = 2, .M = 2, .batch = 2,
                            .remat = SCH_REMAT_NEVER, .no_baseline = 1 };
    struct ana_prediction *a, *b;
    cr_assert_eq(ana_predict(&c, &a), 0, "%s", ps_errmsg());
    c.topo = t0;
    cr_assert_eq(ana_predict(&c, &b), 0, "%s", ps_errmsg());
    for (int s = 0; s < 2; s++) {
        cr_expect_eq(a->stages[s].fwd_s, b->stages[s].fwd_s, "stage %d", s);
        cr_expect_eq(a->stages[s].bwd_s, b->stages[s].bwd_s, "stage %d", s);
    }
    cr_expect_eq(a->stages[0].fwd_s, 2e-3);
    cr_expect_eq(a->bubble_analytic, b->bubble_analytic);
    cr_expect_gt(a->step_s, b->step_s);
    ana_prediction_free(a);
    ana_prediction_free(b);
    mdl_topology_free(t0);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* The partitioner prices a cut with the copies across it: each side sends
 * one message and receives one per micro-batch (M = 2: 2 x (10 + 20) us),
 * on free links of no latency. */
Test(messages, the_partitioner_prices_the_copies_of_a_cut)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0);
    for (int with = 0; with < 2; with++) {
        th_messages(t, with ? 10e-6 : 0, 0, with ? 20e-6 : 0, 0);
        struct sch_part_opts o = { .n_stages = 2, .n_micro = 2, .micro_batch = 1,
                                   .remat = SCH_REMAT_NEVER };
        sch_part_model *m;
        cr_assert_eq(sch_part_model_new(p, t, &o, &m), 0, "%s", ps_errmsg());
        struct sch_partition *part;
        cr_assert_eq(sch_partition_uniform(2, 4, &part), 0);
        struct sch_part_stage_info info[2];
        sch_part_model_stages(m, part, info);
        for (int s = 0; s < 2; s++)
            cr_expect(fabs(info[s].time_s - info[s].compute_s - (with ? 60e-6 : 0)) < 1e-12,
                      "with %d stage %d: %g", with, s, info[s].time_s - info[s].compute_s);
        sch_partition_free(part);
        sch_part_model_free(m);
    }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* plan counts a device's message copies as its communication: per step, M
 * x (its stages' copies) on top of the links' time (here free and of no
 * latency, so the copies alone: 2 x (10 + 20) us). */
Test(messages, plan_counts_the_copies_as_communication)
{
    struct mdl_profile *p = th_uniform(4, 1e6, 1.5e6, 1, 4000, 100, 1000);
    struct mdl_topology *t = th_chain(2, 1e9, 1e300, 0);
    th_messages(t, 10e-6, 0, 20e-6, 0);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_NEVER, 1, 0);
    struct ana_plan_spec sp = { .profile = p, .topo = t };
    for (int d = 0; d < 2; d++)
        cr_expect(fabs(ana_plan_send_seconds(&sp, run.s, run.c, d) - 60e-6) < 1e-12,
                  "device %d: %g", d, ana_plan_send_seconds(&sp, run.s, run.c, d));
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}
