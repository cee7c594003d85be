/* The engine replaying GPipe: exact answers on uniform stages. */
#include "helpers.h"

#include <math.h>

Test(engine, bubble_formula_on_uniform_stages, .timeout = 60)
{
    for (int K = 1; K <= 16; K++) {
        struct mdl_profile *p = th_uniform(K, 3000, 7000, 4, 0, 0, 1000);
        struct mdl_topology *t = th_chain(K, 1e9, 1e300, 0);
        for (int M = 1; M <= 64; M++) {
            struct th_run run;
            th_simulate(&run, "gpipe", p, t, K, M, SCH_REMAT_NEVER, 4, 0);
            const struct sch_stage_cost *c = &run.c->st[0];
            cr_assert_eq(c->fwd, 3000);
            cr_assert_eq(c->bwd, 7000);
            cr_assert_eq(c->update, 24000); /* 2 * 1000 params * 12 B / 1e9 B/s */
            sch_time expect = (sch_time)(M + K - 1) * (c->fwd + c->bwd) + c->update;
            cr_assert_eq(run.r->makespan, expect, "K=%d M=%d: %lld != %lld", K, M,
                         (long long)run.r->makespan, (long long)expect);
            double analytic = (double)(K - 1) / (M + K - 1);
            cr_assert(fabs(run.r->bubble - analytic) < 1e-12, "K=%d M=%d bubble %.15f vs %.15f",
                      K, M, run.r->bubble, analytic);
            for (int d = 0; d < K; d++)
                cr_assert_eq(run.r->busy[d], (sch_time)M * (c->fwd + c->bwd));
            th_release(&run);
        }
        mdl_topology_free(t);
        mdl_profile_free(p);
    }
}

static int count_kind(const struct sch_schedule *s, int d, enum sch_op_kind k)
{
    int n = 0;
    for (int i = 0; i < s->n_ops[d]; i++)
        n += s->ops[d][i].kind == k;
    return n;
}

Test(engine, remat_adds_one_forward_per_rematerialized_microbatch)
{
    const int K = 4, M = 8;
    struct mdl_profile *p = th_uniform(K, 2000, 5000, 2, 0, 0, 1000);
    struct mdl_topology *t = th_chain(K, 0, 1e300, 0);
    const enum sch_remat modes[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST, SCH_REMAT_ALWAYS };
    const int n_remat[] = { 0, M - 1, M };
    for (int i = 0; i < 3; i++) {
        struct th_run run;
        th_simulate(&run, "gpipe", p, t, K, M, modes[i], 2, 0);
        for (int d = 0; d < K; d++) {
            cr_assert_eq(count_kind(run.s, d, SCH_OP_RECOMP), n_remat[i]);
            cr_assert_eq(run.r->busy_recomp[d], (sch_time)n_remat[i] * 2000);
            cr_assert_eq(run.r->busy[d], (sch_time)M * 7000 + (sch_time)n_remat[i] * 2000);
        }
        th_release(&run);
    }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* 3 layers, 2 stages (layers 0-1 | layer 2), M = 2, micro-batch 2, no
 * transfer time. Per sample: out of layer 1 = 100 B, stash 1000 + 2000 on
 * stage 0, 5000 on stage 1. So S0 = 6000, O0 = I1 = 200, S1 = 10000. Walking
 * the ledger rules through the fill-drain order gives:
 *   never:        stage 0: 2*S0 + O0 = 12200   stage 1: 2*S1 + I1 = 20200
 *   except_last:  stage 0:   S0 + O0 =  6200   stage 1: S1 + 2*I1 = 10400
 *   always:       stage 0:   S0 + O0 =  6200   stage 1: S1 + 2*I1 = 10400
 * plus parameters: (2 layers * 10 params * 12 B) and (1 * 10 * 12). */
Test(engine, memory_peaks_match_hand_computed_totals)
{
    double f[] = { 500, 500, 1000 }, b[] = { 1000, 1000, 2000 };
    double out[] = { 50, 100, 70 }, stash[] = { 1000, 2000, 5000 };
    struct mdl_profile *p = th_profile(3, f, b, 2, out, stash, 10);
    struct mdl_topology *t = th_chain(2, 0, 1e300, 0);
    struct sch_partition *part;
    cr_assert_eq(sch_partition_parse("2,1", 2, 3, &part), 0);
    const enum sch_remat modes[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST, SCH_REMAT_ALWAYS };
    const int64_t peak0[] = { 12200, 6200, 6200 }, peak1[] = { 20200, 10400, 10400 };
    for (int i = 0; i < 3; i++) {
        struct sch_schedule *s;
        struct sch_costs *c;
        sim_engine *e;
        cr_assert_eq(sch_schedule_gpipe(2, 2, modes[i], &s), 0);
        cr_assert_eq(sch_costs_new(p, t, part, NULL, 2, &c), 0);
        cr_assert_eq(c->st[0].mem.stash, 6000);
        cr_assert_eq(c->st[0].mem.out, 200);
        cr_assert_eq(c->st[1].mem.in, 200);
        cr_assert_eq(c->st[1].mem.stash, 10000);
        cr_assert_eq(sim_simulate(s, c, t, 1, &e), 0, "%s", ps_errmsg());
        const struct sim_result *r = sim_engine_result(e);
        cr_assert_eq(r->peak_act[0], peak0[i], "mode %d stage 0: %lld", i,
                     (long long)r->peak_act[0]);
        cr_assert_eq(r->peak_act[1], peak1[i], "mode %d stage 1: %lld", i,
                     (long long)r->peak_act[1]);
        cr_assert_eq(r->static_mem[0], 240);
        cr_assert_eq(r->static_mem[1], 120);
        cr_assert_eq(r->peak_mem[1], 120 + peak1[i]);
        /* every buffer is freed by the end of the step */
        const struct trc_trace *tr = sim_engine_trace(e);
        for (int d = 0; d < 2; d++) {
            int64_t last = -1;
            for (size_t k = 0; k < tr->n_counters; k++)
                if (tr->counters[k].device == d)
                    last = tr->counters[k].bytes;
            cr_assert_eq(last, 0);
        }
        sim_engine_free(e);
        sch_costs_free(c);
        sch_schedule_free(s);
    }
    sch_partition_free(part);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* With a transfer of x ns between neighbours (x below the op times), every
 * stage boundary is crossed once forward and once backward on the critical
 * path: makespan = (M+K-1)(tf+tb) + 2(K-1)x + update. */
Test(engine, link_latency_and_bandwidth_shift_makespan)
{
    const int K = 4, M = 6;
    struct mdl_profile *p = th_uniform(K, 5000, 9000, 2, 500, 0, 0);
    /* 1000 B per micro-batch at 1e9 B/s = 1000 ns, plus 250 ns latency */
    struct mdl_topology *t = th_chain(K, 0, 1e9, 250e-9);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, K, M, SCH_REMAT_NEVER, 2, 0);
    sch_time x = 1250;
    cr_assert_eq(run.r->makespan, (sch_time)(M + K - 1) * 14000 + 2 * (K - 1) * x);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

static const struct trc_event *find(const struct trc_trace *tr, int kind, int stage, int mb)
{
    for (size_t i = 0; i < tr->n_events; i++)
        if (tr->events[i].kind == kind && tr->events[i].stage == stage && tr->events[i].mb == mb)
            return &tr->events[i];
    cr_assert_fail("event not found");
    return NULL;
}

/* Stage 1's forward is shorter than stage 0's by the transfer time, so at
 * t = 2*f0 stage 0 sends micro-batch 1 and stage 1 sends micro-batch 0 at
 * the same instant. On dedicated links both go at once; on a shared bus the
 * second waits for the first (FIFO: stage 0 asked first). */
Test(engine, transfers_on_a_shared_link_serialize)
{
    double f[3] = { 4000, 3000, 4000 }, b[3] = { 8000, 8000, 8000 };
    double out[3] = { 500, 500, 500 };
    struct mdl_profile *p = th_profile(3, f, b, 2, out, NULL, 0);
    struct mdl_topology *ded = th_chain(3, 0, 1e9, 0); /* 1000 B -> 1000 ns */
    struct mdl_topology *bus = th_chain(3, 0, 1e9, 0);
    bus->links[0].shared = 1;
    bus->links[0].n_ends = 3;
    bus->links[0].ends = realloc(bus->links[0].ends, 3 * sizeof(int));
    bus->links[0].ends[2] = 2;
    free(bus->links[1].ends);
    bus->n_links = 1;
    struct th_run a, s;
    th_simulate(&a, "gpipe", p, ded, 3, 2, SCH_REMAT_NEVER, 2, 1);
    th_simulate(&s, "gpipe", p, bus, 3, 2, SCH_REMAT_NEVER, 2, 1);
    const struct trc_trace *ta = sim_engine_trace(a.e), *ts = sim_engine_trace(s.e);
    cr_assert_eq(find(ta, SCH_OP_SEND_ACT, 0, 1)->start_ns, 8000);
    cr_assert_eq(find(ta, SCH_OP_SEND_ACT, 1, 0)->start_ns, 8000);
    cr_assert_eq(find(ts, SCH_OP_SEND_ACT, 0, 1)->start_ns, 8000);
    cr_assert_eq(find(ts, SCH_OP_SEND_ACT, 0, 1)->end_ns, 9000);
    cr_assert_eq(find(ts, SCH_OP_SEND_ACT, 1, 0)->start_ns, 9000);
    cr_assert_eq(find(ts, SCH_OP_SEND_ACT, 1, 0)->end_ns, 10000);
    cr_assert_gt(s.r->makespan, a.r->makespan);
    /* the receive spans the transfer on the receiver's receive thread */
    cr_assert_eq(find(ts, SCH_OP_RECV_ACT, 2, 0)->start_ns, 9000);
    cr_assert_eq(find(ts, SCH_OP_RECV_ACT, 2, 0)->end_ns, 10000);
    th_release(&a);
    th_release(&s);
    mdl_topology_free(ded);
    mdl_topology_free(bus);
    mdl_profile_free(p);
}

Test(engine, step_and_run_until_expose_the_clock)
{
    struct mdl_profile *p = th_uniform(2, 1000, 2000, 1, 0, 0, 1000);
    struct mdl_topology *t = th_chain(2, 0, 1e300, 0);
    struct sch_schedule *s;
    struct sch_partition *part;
    struct sch_costs *c;
    sim_engine *e;
    cr_assert_eq(sch_schedule_gpipe(2, 3, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(sch_partition_uniform(2, 2, &part), 0);
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 1, &c), 0);
    cr_assert_eq(sim_engine_new(s, c, t, NULL, &e), 0);
    cr_assert_eq(sim_engine_run_until(e, 2500), 1);
    cr_assert_leq(sim_engine_now(e), 2500);
    cr_assert_null(sim_engine_result(e));
    sch_time last = sim_engine_now(e);
    int rc;
    while ((rc = sim_engine_step(e)) > 0) {
        cr_assert_geq(sim_engine_now(e), last);
        last = sim_engine_now(e);
    }
    cr_assert_eq(rc, 0);
    cr_assert_eq(sim_engine_result(e)->makespan, 4 * 3000);
    sim_engine_free(e);
    sch_costs_free(c);
    sch_partition_free(part);
    sch_schedule_free(s);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

Test(engine, missing_link_is_an_error)
{
    struct mdl_profile *p = th_uniform(2, 1000, 2000, 1, 0, 0, 1000);
    struct mdl_topology *t = th_chain(2, 0, 1e9, 0);
    t->n_links = 0;
    struct sch_schedule *s;
    struct sch_partition *part;
    struct sch_costs *c;
    sim_engine *e;
    cr_assert_eq(sch_schedule_gpipe(2, 2, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(sch_partition_uniform(2, 2, &part), 0);
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 1, &c), 0);
    cr_assert_eq(sim_engine_new(s, c, t, NULL, &e), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "no link between"));
    t->n_links = 1;
    sch_costs_free(c);
    sch_partition_free(part);
    sch_schedule_free(s);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* The engine on GPipe's compact form (runs) and on its lists: the same
 * result and the same trace, event for event. */
Test(engine, compact_gpipe_replays_exactly_as_its_lists, .timeout = 60)
{
    double f[8], b[8], o[8], st[8];
    for (int i = 0; i < 8; i++) { /* stages alike in nothing */
        f[i] = 1000 + 137 * ((i * 7) % 11);
        b[i] = 2 * f[i] + 311 * ((i * 5) % 7);
        o[i] = 500 + 97 * ((i * 3) % 13);
        st[i] = 4000 + 1013 * ((i * 11) % 5);
    }
    struct mdl_profile *p = th_profile(8, f, b, 2, o, st, 2000);
    const int Ks[] = { 1, 2, 4, 8 }, Ms[] = { 1, 3, 8, 13 };
    for (int ti = 0; ti < 2; ti++)
        for (int ki = 0; ki < 4; ki++)
            for (int mi = 0; mi < 4; mi++)
                for (int r = 0; r < 3; r++) {
                    int K = Ks[ki], M = Ms[mi];
                    struct mdl_topology *t = th_chain(K, 1e9, 2e9, ti ? 0 : 300e-9);
                    struct th_run run;
                    th_simulate(&run, "gpipe", p, t, K, M, (enum sch_remat)r, 2, 1);
                    struct sch_schedule *c;
                    sim_engine *e;
                    cr_assert_eq(sch_schedule_gpipe_compact(K, M, (enum sch_remat)r, &c), 0);
                    cr_assert_eq(sim_simulate(c, run.c, t, 1, &e), 0, "%s", ps_errmsg());
                    const struct sim_result *a = run.r, *x = sim_engine_result(e);
                    cr_assert_eq(x->makespan, a->makespan, "K=%d M=%d remat %d", K, M, r);
                    cr_assert(x->fb_end == a->fb_end && x->n_ops == a->n_ops &&
                              x->n_events == a->n_events && x->peak_queue == a->peak_queue &&
                              x->bubble == a->bubble && x->fits == a->fits);
                    for (int d = 0; d < K; d++)
                        cr_assert(x->busy[d] == a->busy[d] &&
                                  x->busy_recomp[d] == a->busy_recomp[d] &&
                                  x->busy_update[d] == a->busy_update[d] &&
                                  x->peak_act[d] == a->peak_act[d]);
                    const struct trc_trace *ta = sim_engine_trace(run.e), *tx = sim_engine_trace(e);
                    cr_assert_eq(tx->n_events, ta->n_events);
                    cr_assert_eq(tx->n_counters, ta->n_counters);
                    for (size_t i = 0; i < ta->n_events; i++) {
                        const struct trc_event *u = &ta->events[i], *v = &tx->events[i];
                        cr_assert(u->device == v->device && u->stage == v->stage &&
                                  u->mb == v->mb && u->peer == v->peer && u->kind == v->kind &&
                                  u->stream == v->stream && u->start_ns == v->start_ns &&
                                  u->end_ns == v->end_ns && u->bytes == v->bytes,
                                  "K=%d M=%d remat %d event %zu", K, M, r, i);
                    }
                    for (size_t i = 0; i < ta->n_counters; i++)
                        cr_assert(ta->counters[i].device == tx->counters[i].device &&
                                  ta->counters[i].t_ns == tx->counters[i].t_ns &&
                                  ta->counters[i].bytes == tx->counters[i].bytes);
                    sim_engine_free(e);
                    sch_schedule_free(c);
                    th_release(&run);
                    mdl_topology_free(t);
                }
    mdl_profile_free(p);
}
