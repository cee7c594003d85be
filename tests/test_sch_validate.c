/* sch_schedule_validate against an independent oracle (tests/oracle_sched.h,
 * a naive simulation written from sch_schedule.h's definition): they agree
 * on every generated schedule, on every single edit of small ones (a swap,
 * a deletion, a duplicate, an op moved to another micro-batch), and on
 * hand-made broken lists both must reject. */
#include "helpers.h"
#include "oracle_sched.h"

TestSuite(sch_validate, .timeout = 120);

static const char *const gens[] = {
    "gpipe", "1f1b", "zb-h1", "interleaved:1", "interleaved:2", "interleaved:3",
};
#define N_GENS (int)(sizeof gens / sizeof *gens)

/* The named schedule with R replicas, or NULL where the generator refuses
 * (interleaving with v > 1 needs M % K == 0). */
static struct sch_schedule *build(const char *name, int K, int M, int r, int R)
{
    struct sch_schedule *s;
    int rc = sch_schedule_build(name, K, M, (enum sch_remat)r, &s);
    if (!strncmp(name, "interleaved:", 12) && name[12] != '1' && M % K) {
        cr_assert_eq(rc, -PS_EUSAGE, "%s K=%d M=%d", name, K, M);
        return NULL;
    }
    cr_assert_eq(rc, 0, "%s K=%d M=%d: %s", name, K, M, ps_errmsg());
    cr_assert_eq(sch_schedule_add_allreduce(s, R), 0, "%s", ps_errmsg());
    return s;
}

static struct sch_schedule *copy(const struct sch_schedule *s)
{
    struct sch_schedule *c = sch_schedule_new(s->name, s->n_devices, s->n_stages, s->n_micro,
                                              s->remat);
    cr_assert(c);
    c->has_wgrad = s->has_wgrad;
    c->n_replicas = s->n_replicas;
    memcpy(c->stage_device, s->stage_device, (size_t)s->n_stages * sizeof *c->stage_device);
    for (int d = 0; d < s->n_devices; d++)
        for (int i = 0; i < s->n_ops[d]; i++)
            cr_assert_eq(sch_schedule_push(c, d, s->ops[d][i].kind, s->ops[d][i].stage,
                                           s->ops[d][i].mb), 0);
    return c;
}

/* Both verdicts on s; fails unless they agree. Returns 1 when valid. */
static int agree(const struct sch_schedule *s, const char *what)
{
    char why[256];
    int ok = oracle_schedule_ok(s, why, sizeof why);
    int rc = sch_schedule_validate(s);
    cr_assert(rc == 0 || rc == -PS_EINVAL, "%s: validate returned %d", what, rc);
    cr_assert_eq(rc == 0, ok, "%s: validate says %s, the oracle says %s", what,
                 rc ? ps_errmsg() : "valid", ok ? "valid" : why);
    return ok;
}

Test(sch_validate, every_generated_schedule_is_valid_by_both)
{
    int n = 0;
    for (int K = 1; K <= 6; K++)
        for (int M = 1; M <= 8; M++)
            for (int g = 0; g < N_GENS; g++)
                for (int r = 0; r < 3; r++)
                    for (int R = 1; R <= 3; R++) {
                        struct sch_schedule *s = build(gens[g], K, M, r, R);
                        if (!s)
                            continue;
                        char what[96];
                        snprintf(what, sizeof what, "%s K=%d M=%d remat %d replicas %d",
                                 gens[g], K, M, r, R);
                        cr_assert(agree(s, what), "%s is invalid", what);
                        cr_assert(oracle_streams_finish(s), "%s: streams deadlock", what);
                        sch_schedule_free(s);
                        n++;
                    }
    cr_assert_gt(n, 6 * 8 * 3 * 3 * 3);
}

/* Every single edit of small generated schedules: both accept it or both
 * reject it, and edits of both kinds occur (a harmless swap of independent
 * ops stays valid). */
Test(sch_validate, every_single_edit_gets_the_same_verdict)
{
    int valid = 0, invalid = 0;
    for (int K = 1; K <= 3; K++)
        for (int M = 1; M <= 3; M++)
            for (int g = 0; g < N_GENS; g++)
                for (int r = 0; r < 3; r++)
                    for (int R = 1; R <= 2; R++) {
                        struct sch_schedule *s = build(gens[g], K, M, r, R);
                        if (!s)
                            continue;
                        char what[160];
                        for (int d = 0; d < s->n_devices; d++)
                            for (int i = 0; i < s->n_ops[d]; i++) {
                                /* swap i and j */
                                for (int j = i + 1; j < s->n_ops[d]; j++) {
                                    struct sch_schedule *c = copy(s);
                                    struct sch_op t = c->ops[d][i];
                                    c->ops[d][i] = c->ops[d][j];
                                    c->ops[d][j] = t;
                                    snprintf(what, sizeof what, "%s K=%d M=%d remat %d R=%d, "
                                             "device %d ops %d and %d swapped", gens[g], K, M,
                                             r, R, d, i, j);
                                    agree(c, what) ? valid++ : invalid++;
                                    sch_schedule_free(c);
                                }
                                /* delete i */
                                struct sch_schedule *c = copy(s);
                                memmove(&c->ops[d][i], &c->ops[d][i + 1],
                                        (size_t)(c->n_ops[d] - i - 1) * sizeof *c->ops[d]);
                                c->n_ops[d]--;
                                snprintf(what, sizeof what, "%s K=%d M=%d remat %d R=%d, "
                                         "device %d op %d deleted", gens[g], K, M, r, R, d, i);
                                cr_assert_not(agree(c, what));
                                invalid++;
                                sch_schedule_free(c);
                                /* duplicate i at the end of its list */
                                c = copy(s);
                                struct sch_op op = c->ops[d][i];
                                cr_assert_eq(sch_schedule_push(c, d, op.kind, op.stage, op.mb), 0);
                                snprintf(what, sizeof what, "%s K=%d M=%d remat %d R=%d, "
                                         "device %d op %d duplicated", gens[g], K, M, r, R, d,
                                         i);
                                cr_assert_not(agree(c, what));
                                invalid++;
                                sch_schedule_free(c);
                                /* i moved to the next micro-batch (or stage) */
                                c = copy(s);
                                if (c->ops[d][i].mb >= 0)
                                    c->ops[d][i].mb = (c->ops[d][i].mb + 1) % (M + 1);
                                else
                                    c->ops[d][i].stage = (c->ops[d][i].stage + 1) % (K + 1);
                                snprintf(what, sizeof what, "%s K=%d M=%d remat %d R=%d, "
                                         "device %d op %d renumbered", gens[g], K, M, r, R, d,
                                         i);
                                cr_assert_not(agree(c, what));
                                invalid++;
                                sch_schedule_free(c);
                            }
                        sch_schedule_free(s);
                    }
    cr_assert_gt(valid, 100, "only %d edits kept a schedule valid", valid);
    cr_assert_gt(invalid, 1000, "only %d edits broke a schedule", invalid);
}

static struct sch_op *find(struct sch_schedule *s, int d, int kind, int st, int mb)
{
    for (int i = 0; i < s->n_ops[d]; i++)
        if (s->ops[d][i].kind == kind && s->ops[d][i].stage == st && s->ops[d][i].mb == mb)
            return &s->ops[d][i];
    cr_assert_fail("no %s of stage %d mb %d on device %d", sch_op_kind_name(kind), st, mb, d);
    return NULL;
}

static void both_reject(struct sch_schedule *s, const char *what)
{
    cr_assert_not(agree(s, what), "%s: accepted", what);
    sch_schedule_free(s);
}

static void remove_op(struct sch_schedule *s, int d, struct sch_op *op)
{
    int i = (int)(op - s->ops[d]);
    memmove(op, op + 1, (size_t)(s->n_ops[d] - i - 1) * sizeof *op);
    s->n_ops[d]--;
}

Test(sch_validate, broken_lists_are_rejected_by_both)
{
    struct sch_schedule *s;
    struct sch_op t, *a, *b;

    /* a swapped pair that deadlocks two devices: device 0 waits for the
     * gradient of micro-batch 1 before sending its activations */
    s = build("gpipe", 2, 2, SCH_REMAT_NEVER, 1);
    a = find(s, 0, SCH_OP_SEND_ACT, 0, 1);
    b = find(s, 0, SCH_OP_RECV_GRAD, 0, 1);
    t = *a, *a = *b, *b = t;
    char why[256];
    cr_assert_not(oracle_schedule_ok(s, why, sizeof why));
    cr_assert(strstr(why, "deadlock"), "%s", why);
    both_reject(s, "gpipe: recvB1 before sendF1");

    /* a gradient receive before the forward that leads to it: the engine's
     * streams finish it, one thread per device does not */
    s = build("1f1b", 2, 2, SCH_REMAT_NEVER, 1);
    a = find(s, 0, SCH_OP_FWD, 0, 0);
    b = find(s, 0, SCH_OP_RECV_GRAD, 0, 0);
    t = *a, *a = *b, *b = t;
    cr_assert(oracle_streams_finish(s));
    both_reject(s, "1f1b: recvB0 before F0");

    /* a backward before its forward on one device */
    s = build("zb-h1", 1, 2, SCH_REMAT_NEVER, 1);
    a = find(s, 0, SCH_OP_FWD, 0, 1);
    b = find(s, 0, SCH_OP_BWD, 0, 1);
    t = *a, *a = *b, *b = t;
    both_reject(s, "zb-h1: B1 before F1");

    /* a missing op: the last stage's backward of micro-batch 0 */
    s = build("1f1b", 3, 3, SCH_REMAT_NEVER, 1);
    remove_op(s, 2, find(s, 2, SCH_OP_BWD, 2, 0));
    both_reject(s, "1f1b: B0 of stage 2 missing");

    /* a duplicate op */
    s = build("interleaved:2", 2, 2, SCH_REMAT_ALWAYS, 1);
    cr_assert_eq(sch_schedule_push(s, 1, SCH_OP_RECOMP, 3, 1), 0);
    both_reject(s, "interleaved:2: R1 of stage 3 twice");

    /* a receive with no send: the send removed */
    s = build("gpipe", 2, 3, SCH_REMAT_EXCEPT_LAST, 1);
    remove_op(s, 0, find(s, 0, SCH_OP_SEND_ACT, 0, 2));
    both_reject(s, "gpipe: recvF2 without sendF2");

    /* a receive with no send: stage 0 receives activations */
    s = build("gpipe", 2, 1, SCH_REMAT_NEVER, 1);
    cr_assert_eq(sch_schedule_reserve(s, 0, 1), 0);
    memmove(&s->ops[0][1], &s->ops[0][0], (size_t)s->n_ops[0] * sizeof *s->ops[0]);
    s->ops[0][0] = (struct sch_op){ SCH_OP_RECV_ACT, 0, 0 };
    s->n_ops[0]++;
    both_reject(s, "gpipe: stage 0 receives activations");

    /* a receive within one device (stages 0 and 1 both on device 0) */
    s = build("interleaved:2", 1, 1, SCH_REMAT_NEVER, 1);
    cr_assert_eq(sch_schedule_push(s, 0, SCH_OP_RECV_GRAD, 0, 0), 0);
    both_reject(s, "interleaved:2 K=1: a receive between stages on one device");

    /* the update before the last weight gradient */
    s = build("zb-h1", 2, 2, SCH_REMAT_NEVER, 1);
    a = find(s, 1, SCH_OP_UPDATE, 1, -1);
    b = find(s, 1, SCH_OP_WGRAD, 1, 1);
    t = *a, *a = *b, *b = t;
    both_reject(s, "zb-h1: U before W1");

    /* the all-reduce after the update it feeds */
    s = build("1f1b", 2, 2, SCH_REMAT_NEVER, 2);
    a = find(s, 0, SCH_OP_ALLREDUCE, 0, -1);
    b = find(s, 0, SCH_OP_UPDATE, 0, -1);
    t = *a, *a = *b, *b = t;
    both_reject(s, "1f1b replicas 2: AR after U");

    /* the all-reduce missing with replicas */
    s = build("gpipe", 2, 2, SCH_REMAT_NEVER, 2);
    remove_op(s, 1, find(s, 1, SCH_OP_ALLREDUCE, 1, -1));
    both_reject(s, "gpipe replicas 2: no AR of stage 1");

    /* an op on another device than its stage's */
    s = build("gpipe", 2, 1, SCH_REMAT_NEVER, 1);
    cr_assert_eq(sch_schedule_push(s, 1, SCH_OP_WGRAD, 0, 0), 0);
    s->has_wgrad = 1;
    cr_assert_eq(sch_schedule_push(s, 0, SCH_OP_WGRAD, 1, 0), 0);
    both_reject(s, "gpipe: W ops of stages 0 and 1 on each other's device");

    /* a recompute where the mode has none, and one missing where it has */
    s = build("1f1b", 2, 2, SCH_REMAT_NEVER, 1);
    s->remat = SCH_REMAT_EXCEPT_LAST;
    both_reject(s, "1f1b: except_last without its recompute");
    s = build("1f1b", 2, 2, SCH_REMAT_EXCEPT_LAST, 1);
    s->remat = SCH_REMAT_NEVER;
    both_reject(s, "1f1b: a recompute under never");

    /* out of range: a stage, a micro-batch, a kind, an update's mb */
    s = build("gpipe", 2, 2, SCH_REMAT_NEVER, 1);
    s->ops[1][0].stage = 2;
    both_reject(s, "stage 2 of 2");
    s = build("gpipe", 2, 2, SCH_REMAT_NEVER, 1);
    s->ops[0][0].mb = -1;
    both_reject(s, "F of mb -1");
    s = build("gpipe", 2, 2, SCH_REMAT_NEVER, 1);
    s->ops[0][0].kind = SCH_OP_NKINDS;
    both_reject(s, "kind NKINDS");
    s = build("gpipe", 2, 2, SCH_REMAT_NEVER, 1);
    find(s, 0, SCH_OP_UPDATE, 0, -1)->mb = 0;
    both_reject(s, "U with mb 0");
}
