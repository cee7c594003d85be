/* Schedule op lists: GPipe structure and the validator's checks. */
#include "helpers.h"

Test(schedule, gpipe_lists_are_valid_and_ordered)
{
    for (int K = 1; K <= 6; K++)
        for (int M = 1; M <= 9; M++)
            for (int r = 0; r < 3; r++) {
                struct sch_schedule *s;
                cr_assert_eq(sch_schedule_gpipe(K, M, (enum sch_remat)r, &s), 0);
                cr_assert_eq(sch_schedule_validate(s), 0, "%s", ps_errmsg());
                /* every forward precedes every backward on a device (fill-drain) */
                for (int d = 0; d < K; d++) {
                    int seen_b = 0;
                    for (int i = 0; i < s->n_ops[d]; i++) {
                        if (s->ops[d][i].kind == SCH_OP_BWD)
                            seen_b = 1;
                        cr_assert(!(seen_b && s->ops[d][i].kind == SCH_OP_FWD));
                    }
                    cr_assert_eq(s->ops[d][s->n_ops[d] - 1].kind, SCH_OP_UPDATE);
                }
                /* ops: F, B per (s,m); sends/recvs per boundary; R; U */
                int64_t want = 2LL * K * M + 4LL * (K - 1) * M + K +
                               (int64_t)K * (r == 2 ? M : r == 1 ? M - 1 : 0);
                cr_assert_eq(sch_schedule_total_ops(s), want);
                sch_schedule_free(s);
            }
}

Test(schedule, backward_runs_in_reverse_microbatch_order)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_gpipe(3, 4, SCH_REMAT_NEVER, &s), 0);
    int expect = 3;
    for (int i = 0; i < s->n_ops[1]; i++)
        if (s->ops[1][i].kind == SCH_OP_BWD)
            cr_assert_eq(s->ops[1][i].mb, expect--);
    cr_assert_eq(expect, -1);
    sch_schedule_free(s);
}

Test(schedule, recompute_is_issued_before_its_gradient_arrives)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_gpipe(2, 3, SCH_REMAT_ALWAYS, &s), 0);
    for (int i = 0; i + 1 < s->n_ops[0]; i++)
        if (s->ops[0][i].kind == SCH_OP_RECOMP)
            cr_assert_eq(s->ops[0][i + 1].kind, SCH_OP_RECV_GRAD);
    sch_schedule_free(s);
}

static void expect_invalid(struct sch_schedule *s, const char *what)
{
    cr_assert_eq(sch_schedule_validate(s), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), what), "message '%s' lacks '%s'", ps_errmsg(), what);
    sch_schedule_free(s);
}

Test(schedule, validator_rejects_broken_lists)
{
    struct sch_schedule *s;
    /* a backward moved before its forward */
    cr_assert_eq(sch_schedule_gpipe(1, 2, SCH_REMAT_NEVER, &s), 0);
    struct sch_op tmp = s->ops[0][0];
    s->ops[0][0] = s->ops[0][2];
    s->ops[0][2] = tmp;
    expect_invalid(s, "which it needs");
    /* a duplicated op */
    cr_assert_eq(sch_schedule_gpipe(1, 2, SCH_REMAT_NEVER, &s), 0);
    s->ops[0][1] = s->ops[0][0];
    expect_invalid(s, "twice");
    /* a missing op */
    cr_assert_eq(sch_schedule_gpipe(2, 2, SCH_REMAT_NEVER, &s), 0);
    s->n_ops[1]--;
    expect_invalid(s, "missing");
    /* an op on the wrong device */
    cr_assert_eq(sch_schedule_gpipe(2, 1, SCH_REMAT_NEVER, &s), 0);
    s->ops[0][0].stage = 1;
    expect_invalid(s, "device");
    /* a recompute where the mode has none */
    cr_assert_eq(sch_schedule_gpipe(1, 1, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(sch_schedule_push(s, 0, SCH_OP_RECOMP, 0, 0), 0);
    expect_invalid(s, "should not exist");
    /* update before the last backward */
    cr_assert_eq(sch_schedule_gpipe(1, 2, SCH_REMAT_NEVER, &s), 0);
    tmp = s->ops[0][3];
    s->ops[0][3] = s->ops[0][4];
    s->ops[0][4] = tmp;
    expect_invalid(s, "update");
}

Test(schedule, unknown_names_and_bad_sizes)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("pipedream-9000", 2, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "unknown schedule"));
    cr_assert_eq(sch_schedule_build("gpipe", 2, 0, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_build("gpipe", 0, 2, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    enum sch_remat r;
    cr_assert_eq(sch_remat_parse("sometimes", &r), -PS_EUSAGE);
    cr_assert_eq(sch_remat_parse("except_last", &r), 0);
    cr_assert_eq(r, SCH_REMAT_EXCEPT_LAST);
}

/* The ledger rule leaves nothing allocated once a micro-batch is done. */
Test(schedule, memory_rule_balances_over_a_step)
{
    struct sch_stage_mem m = { .in = 7, .out = 11, .stash = 13 };
    for (int r = 0; r < 3; r++) {
        struct sch_schedule *s;
        cr_assert_eq(sch_schedule_gpipe(4, 5, (enum sch_remat)r, &s), 0);
        for (int d = 0; d < 4; d++) {
            struct sch_stage_mem sm = m;
            if (d == 0)
                sm.in = 0;
            if (d == 3)
                sm.out = 0;
            int64_t cur = 0;
            for (int i = 0; i < s->n_ops[d]; i++) {
                int64_t a, e;
                sch_mem_effect(s, &s->ops[d][i], &sm, &a, &e);
                int send = sch_op_stream(s->ops[d][i].kind) == SCH_STREAM_SEND;
                cr_assert(send ? a <= 0 : a >= 0); /* only sends give memory back at start */
                cur += a;
                cr_assert_geq(cur, 0);
                cur += e;
                cr_assert_geq(cur, 0);
            }
            cr_assert_eq(cur, 0, "remat %d device %d leaks %lld", r, d, (long long)cur);
        }
        sch_schedule_free(s);
    }
}

/* The ends of a transfer, from the definition: the activations of (s, m)
 * leave stage s for stage s + 1, its input gradient leaves for stage s - 1;
 * a send and the receive of the same data share a tag that no other send
 * has, 2 (s M + m) + (gradient) of the sending stage; nothing else is a
 * transfer. Every op of every device, every generator, with all-reduce ops. */
Test(schedule, transfer_peer_and_tag)
{
    static const char *names[] = { "gpipe", "1f1b", "interleaved:2", "zb-h1" };
    for (size_t n = 0; n < sizeof names / sizeof *names; n++)
        for (int K = 1; K <= 4; K++)
            for (int M = K; M <= 2 * K; M += K) {
                struct sch_schedule *s;
                cr_assert_eq(sch_schedule_build(names[n], K, M, SCH_REMAT_EXCEPT_LAST, &s), 0,
                             "%s", ps_errmsg());
                cr_assert_eq(sch_schedule_add_allreduce(s, 2), 0);
                int64_t ntag = 2LL * s->n_stages * M;
                int *sends = calloc((size_t)ntag, sizeof *sends);
                int *recvs = calloc((size_t)ntag, sizeof *recvs);
                cr_assert(sends && recvs);
                for (int d = 0; d < s->n_devices; d++)
                    for (int i = 0; i < s->n_ops[d]; i++) {
                        const struct sch_op *op = &s->ops[d][i];
                        struct sch_op o;
                        int st = op->stage, m = op->mb, want_peer = -1;
                        int64_t want_tag = -1;
                        struct sch_op want = { 0, 0, 0 };
                        switch (op->kind) {
                        case SCH_OP_SEND_ACT:
                            want = (struct sch_op){ SCH_OP_RECV_ACT, st + 1, m };
                            want_tag = 2LL * (st * M + m);
                            break;
                        case SCH_OP_RECV_ACT:
                            want = (struct sch_op){ SCH_OP_SEND_ACT, st - 1, m };
                            want_tag = 2LL * ((st - 1) * M + m);
                            break;
                        case SCH_OP_SEND_GRAD:
                            want = (struct sch_op){ SCH_OP_RECV_GRAD, st - 1, m };
                            want_tag = 2LL * (st * M + m) + 1;
                            break;
                        case SCH_OP_RECV_GRAD:
                            want = (struct sch_op){ SCH_OP_SEND_GRAD, st + 1, m };
                            want_tag = 2LL * ((st + 1) * M + m) + 1;
                            break;
                        default:
                            cr_assert_eq(sch_op_partner(op, &o), 0);
                            cr_assert_eq(sch_op_peer(s, op), -1);
                            cr_assert_eq(sch_op_tag(s, op), -1);
                            continue;
                        }
                        want_peer = s->stage_device[want.stage];
                        cr_assert_eq(sch_op_partner(op, &o), 1);
                        cr_assert(o.kind == want.kind && o.stage == want.stage && o.mb == m,
                                  "%s K=%d M=%d", names[n], K, M);
                        cr_assert_eq(sch_op_peer(s, op), want_peer, "%s K=%d M=%d dev %d op %d",
                                     names[n], K, M, d, i);
                        cr_assert_neq(want_peer, d, "a transfer crosses devices");
                        int64_t tag = sch_op_tag(s, op);
                        cr_assert_eq(tag, want_tag, "%s K=%d M=%d", names[n], K, M);
                        cr_assert(tag >= 0 && tag < ntag);
                        if (sch_op_stream(op->kind) == SCH_STREAM_SEND)
                            sends[tag]++;
                        else
                            recvs[tag]++;
                        /* the partner's own partner is this op, on this device */
                        struct sch_op back;
                        cr_assert_eq(sch_op_partner(&o, &back), 1);
                        cr_assert(back.kind == op->kind && back.stage == st && back.mb == m);
                        cr_assert_eq(sch_op_peer(s, &o), d);
                        cr_assert_eq(sch_op_tag(s, &o), tag);
                    }
                for (int64_t t = 0; t < ntag; t++) /* one send and one receive per tag used */
                    cr_assert(sends[t] == recvs[t] && sends[t] <= 1, "%s K=%d M=%d tag %lld",
                              names[n], K, M, (long long)t);
                free(sends);
                free(recvs);
                sch_schedule_free(s);
            }
}

Test(schedule, gpipe_compact_form_expands_to_the_gpipe_lists)
{
    for (int K = 1; K <= 6; K++)
        for (int M = 1; M <= 9; M++)
            for (int r = 0; r < 3; r++) {
                struct sch_schedule *s, *c;
                cr_assert_eq(sch_schedule_gpipe(K, M, (enum sch_remat)r, &s), 0);
                cr_assert_eq(sch_schedule_gpipe_compact(K, M, (enum sch_remat)r, &c), 0);
                cr_assert(c->runs && c->run_first);
                cr_assert_eq(c->run_first[K], c->run_first[0] + (r == 1 && M > 1 ? 4 : 3) * K);
                for (int d = 0; d < K; d++) {
                    cr_assert_eq(c->n_ops[d], s->n_ops[d], "K=%d M=%d remat %d dev %d", K, M, r, d);
                    cr_assert_null(c->ops[d]);
                }
                cr_assert_eq(sch_schedule_materialize(c), 0);
                cr_assert_null(c->runs);
                cr_assert_eq(sch_schedule_materialize(c), 0); /* lists: left as they are */
                for (int d = 0; d < K; d++) {
                    cr_assert_eq(c->n_ops[d], s->n_ops[d]);
                    for (int i = 0; i < s->n_ops[d]; i++) {
                        const struct sch_op *a = &s->ops[d][i], *b = &c->ops[d][i];
                        cr_assert(a->kind == b->kind && a->stage == b->stage && a->mb == b->mb,
                                  "K=%d M=%d remat %d dev %d op %d", K, M, r, d, i);
                    }
                }
                cr_assert_eq(sch_schedule_validate(c), 0, "%s", ps_errmsg());
                sch_schedule_free(s);
                sch_schedule_free(c);
            }
}

Test(schedule, gpipe_compact_rejects_what_gpipe_rejects)
{
    struct sch_schedule *s = (void *)1;
    cr_assert_eq(sch_schedule_gpipe_compact(0, 4, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_null(s);
    cr_assert_eq(sch_schedule_gpipe_compact(4, 0, SCH_REMAT_NEVER, &s), -PS_EUSAGE);
    cr_assert_eq(sch_schedule_gpipe_compact(1 << 15, 1 << 14, SCH_REMAT_NEVER, &s), -PS_EINVAL);
}

Test(schedule, allreduce_on_a_compact_schedule_materializes_it)
{
    struct sch_schedule *s, *c;
    cr_assert_eq(sch_schedule_gpipe(3, 4, SCH_REMAT_EXCEPT_LAST, &s), 0);
    cr_assert_eq(sch_schedule_gpipe_compact(3, 4, SCH_REMAT_EXCEPT_LAST, &c), 0);
    cr_assert_eq(sch_schedule_add_allreduce(s, 2), 0);
    cr_assert_eq(sch_schedule_add_allreduce(c, 2), 0);
    cr_assert_null(c->runs);
    for (int d = 0; d < 3; d++) {
        cr_assert_eq(c->n_ops[d], s->n_ops[d]);
        for (int i = 0; i < s->n_ops[d]; i++)
            cr_assert(c->ops[d][i].kind == s->ops[d][i].kind &&
                      c->ops[d][i].stage == s->ops[d][i].stage && c->ops[d][i].mb == s->ops[d][i].mb);
    }
    sch_schedule_free(s);
    sch_schedule_free(c);
}
