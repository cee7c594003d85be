/*
 * An independent validity check for schedules, written from the definition
 * in sched/sch_schedule.h rather than from sched/sch_validate.c: it calls
 * nothing of the validator (no sch_schedule_deps, no sch_devindex, no
 * sch_schedule_remat_mb), so the two can be checked against each other.
 *
 * The definition, as a naive simulation:
 *  - presence: every op names a stage of the schedule, sits on that stage's
 *    device, and each (kind, stage, mb) occurs exactly once where required:
 *    F and B for every stage and micro-batch; R where re-materialized
 *    (always: every micro-batch, except_last: all but the last one, never:
 *    none); W iff the backward is split; at a device boundary between stages
 *    s and s+1 the activations of (s,m) are sent by s and received by s+1,
 *    the gradient of (s+1,m) sent by s+1 and received by s; one U per stage
 *    and, with more than one replica, one AR per stage; nothing else.
 *  - what each op waits for: F(s,m) the activations of (s-1,m) (F(s-1,m)
 *    done, and its receive when s-1 lives elsewhere); R(s,m) F(s,m); B(s,m)
 *    F(s,m), R(s,m) if re-materialized, and the gradient of (s+1,m) (B(s+1,m)
 *    done, and its receive when s+1 lives elsewhere); W(s,m) B(s,m); a send
 *    the op that produced what it sends; a receive its matching send; AR(s)
 *    every B (and W) of s; U(s) those and AR(s) when there are replicas.
 *  - running: one in-order thread per device (the validation runtime) with
 *    non-blocking sends: scan every device again and again, running its next
 *    op when everything it waits for is done, one op per device per scan,
 *    until all lists are done (valid) or a scan runs nothing (a deadlock).
 *    An op that waits for one listed after it on its own device can never
 *    run, so "same-device dependencies come first" needs no rule of its own.
 *
 * O(scans * devices * M) for a schedule: test sizes only.
 */
#ifndef TESTS_ORACLE_SCHED_H
#define TESTS_ORACLE_SCHED_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sch_schedule.h"

struct oracle {
    const struct sch_schedule *s;
    char *done;   /* [kind][stage][mb] */
    int *count;   /* [kind][stage][mb] occurrences */
    char *why;
    size_t why_n;
};

static inline int oracle_fail(struct oracle *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int oracle_fail(struct oracle *o, const char *fmt, ...)
{
    if (o->why && o->why_n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(o->why, o->why_n, fmt, ap);
        va_end(ap);
    }
    return 0;
}

static inline size_t oracle_at(const struct oracle *o, int kind, int st, int mb)
{
    return ((size_t)kind * (size_t)o->s->n_stages + (size_t)st) * (size_t)o->s->n_micro +
           (size_t)(mb < 0 ? 0 : mb);
}

static inline int oracle_done(const struct oracle *o, int kind, int st, int mb)
{
    return o->done[oracle_at(o, kind, st, mb)];
}

static inline int oracle_remat(const struct sch_schedule *s, int m)
{
    switch (s->remat) {
    case SCH_REMAT_ALWAYS: return 1;
    case SCH_REMAT_EXCEPT_LAST: return m < s->n_micro - 1;
    default: return 0;
    }
}

/* How many times (kind, st, m) must occur: 0 or 1. */
static inline int oracle_wanted(const struct sch_schedule *s, int kind, int st, int m)
{
    int S = s->n_stages, d = s->stage_device[st];
    int sends_on = st + 1 < S && s->stage_device[st + 1] != d; /* boundary st | st+1 */
    int recvs_from = st > 0 && s->stage_device[st - 1] != d;   /* boundary st-1 | st */
    int per_stage = kind == SCH_OP_UPDATE || kind == SCH_OP_ALLREDUCE;
    if (per_stage && m != 0)
        return 0;
    switch (kind) {
    case SCH_OP_FWD: return 1;
    case SCH_OP_BWD: return 1;
    case SCH_OP_RECOMP: return oracle_remat(s, m);
    case SCH_OP_WGRAD: return s->has_wgrad != 0;
    case SCH_OP_SEND_ACT: return sends_on;   /* activations of (st,m) to st+1 */
    case SCH_OP_RECV_GRAD: return sends_on;  /* gradient of (st+1,m) from st+1 */
    case SCH_OP_RECV_ACT: return recvs_from; /* activations of (st-1,m) */
    case SCH_OP_SEND_GRAD: return recvs_from;/* gradient of (st,m) to st-1 */
    case SCH_OP_UPDATE: return 1;
    case SCH_OP_ALLREDUCE: return s->n_replicas > 1;
    }
    return 0;
}

/* Every backward op of stage st done: B, and W when the backward is split. */
static inline int oracle_stage_grads_done(const struct oracle *o, int st)
{
    for (int m = 0; m < o->s->n_micro; m++)
        if (!oracle_done(o, SCH_OP_BWD, st, m) ||
            (o->s->has_wgrad && !oracle_done(o, SCH_OP_WGRAD, st, m)))
            return 0;
    return 1;
}

static inline int oracle_ready(const struct oracle *o, const struct sch_op *op)
{
    const struct sch_schedule *s = o->s;
    int st = op->stage, m = op->mb, S = s->n_stages, d = s->stage_device[st];
    switch (op->kind) {
    case SCH_OP_FWD:
        return st == 0 || (oracle_done(o, SCH_OP_FWD, st - 1, m) &&
                           (s->stage_device[st - 1] == d ||
                            oracle_done(o, SCH_OP_RECV_ACT, st, m)));
    case SCH_OP_RECOMP: return oracle_done(o, SCH_OP_FWD, st, m);
    case SCH_OP_BWD:
        return oracle_done(o, SCH_OP_FWD, st, m) &&
               (!oracle_remat(s, m) || oracle_done(o, SCH_OP_RECOMP, st, m)) &&
               (st == S - 1 || (oracle_done(o, SCH_OP_BWD, st + 1, m) &&
                                (s->stage_device[st + 1] == d ||
                                 oracle_done(o, SCH_OP_RECV_GRAD, st, m))));
    case SCH_OP_WGRAD: return oracle_done(o, SCH_OP_BWD, st, m);
    case SCH_OP_SEND_ACT: return oracle_done(o, SCH_OP_FWD, st, m);
    case SCH_OP_RECV_ACT: return oracle_done(o, SCH_OP_SEND_ACT, st - 1, m);
    case SCH_OP_SEND_GRAD: return oracle_done(o, SCH_OP_BWD, st, m);
    case SCH_OP_RECV_GRAD: return oracle_done(o, SCH_OP_SEND_GRAD, st + 1, m);
    case SCH_OP_ALLREDUCE: return oracle_stage_grads_done(o, st);
    case SCH_OP_UPDATE:
        return oracle_stage_grads_done(o, st) &&
               (s->n_replicas <= 1 || oracle_done(o, SCH_OP_ALLREDUCE, st, -1));
    }
    return 0;
}

static inline int oracle_presence(struct oracle *o)
{
    const struct sch_schedule *s = o->s;
    for (int d = 0; d < s->n_devices; d++)
        for (int i = 0; i < s->n_ops[d]; i++) {
            const struct sch_op *op = &s->ops[d][i];
            int per_stage = op->kind == SCH_OP_UPDATE || op->kind == SCH_OP_ALLREDUCE;
            if (op->kind >= SCH_OP_NKINDS || op->stage < 0 || op->stage >= s->n_stages ||
                (per_stage ? op->mb != -1 : op->mb < 0 || op->mb >= s->n_micro))
                return oracle_fail(o, "device %d op %d: kind %d stage %d mb %d out of range",
                                   d, i, op->kind, op->stage, op->mb);
            if (s->stage_device[op->stage] != d)
                return oracle_fail(o, "device %d op %d: stage %d lives on device %d", d, i,
                                   op->stage, s->stage_device[op->stage]);
            o->count[oracle_at(o, op->kind, op->stage, op->mb)]++;
        }
    for (int k = 0; k < SCH_OP_NKINDS; k++)
        for (int st = 0; st < s->n_stages; st++)
            for (int m = 0; m < s->n_micro; m++) {
                int n = o->count[oracle_at(o, k, st, m)], want = oracle_wanted(s, k, st, m);
                if (n != want)
                    return oracle_fail(o, "%s of stage %d mb %d: listed %d times, wanted %d",
                                       sch_op_kind_name((enum sch_op_kind)k), st, m, n, want);
            }
    return 1;
}

/* 1 when s is a valid schedule by the definition above; 0 with the reason
 * in why (when why is not NULL) otherwise. */
static inline int oracle_schedule_ok(const struct sch_schedule *s, char *why, size_t why_n)
{
    struct oracle o = { .s = s, .why = why, .why_n = why_n };
    if (why && why_n)
        why[0] = 0;
    if (s->n_devices < 1 || s->n_stages < 1 || s->n_micro < 1)
        return oracle_fail(&o, "empty schedule");
    for (int st = 0; st < s->n_stages; st++)
        if (s->stage_device[st] < 0 || s->stage_device[st] >= s->n_devices)
            return oracle_fail(&o, "stage %d on device %d of %d", st, s->stage_device[st],
                               s->n_devices);
    size_t n = (size_t)SCH_OP_NKINDS * (size_t)s->n_stages * (size_t)s->n_micro;
    o.done = calloc(n, 1);
    o.count = calloc(n, sizeof *o.count);
    int *next = calloc((size_t)s->n_devices, sizeof *next);
    int ok = o.done && o.count && next ? oracle_presence(&o)
                                       : oracle_fail(&o, "out of memory");
    for (int ran = ok; ran;) {
        ran = 0;
        for (int d = 0; d < s->n_devices; d++)
            if (next[d] < s->n_ops[d] && oracle_ready(&o, &s->ops[d][next[d]])) {
                const struct sch_op *op = &s->ops[d][next[d]++];
                o.done[oracle_at(&o, op->kind, op->stage, op->mb)] = 1;
                ran = 1;
            }
    }
    for (int d = 0; d < s->n_devices && ok; d++)
        if (next[d] < s->n_ops[d]) {
            char lab[32];
            sch_op_label(&s->ops[d][next[d]], lab, sizeof lab);
            ok = oracle_fail(&o, "deadlock: device %d waits forever at op %d (%s of stage %d)",
                             d, next[d], lab, s->ops[d][next[d]].stage);
        }
    free(next);
    free(o.count);
    free(o.done);
    return ok;
}

/* The engine's view: three streams per device (compute, send, receive),
 * each running its own ops in list order, the same waits. Every list one
 * thread per device can run, these streams can run too (they are never
 * stricter); the converse fails for a receive listed before the compute
 * that leads to it. Assumes the presence rules hold. 1 when all finish. */
static inline int oracle_streams_finish(const struct sch_schedule *s)
{
    struct oracle o = { .s = s };
    size_t n = (size_t)SCH_OP_NKINDS * (size_t)s->n_stages * (size_t)s->n_micro;
    o.done = calloc(n, 1);
    int *next = calloc((size_t)s->n_devices * SCH_NSTREAMS, sizeof *next);
    if (!o.done || !next) {
        free(o.done);
        free(next);
        return 0;
    }
    for (int ran = 1; ran;) {
        ran = 0;
        for (int d = 0; d < s->n_devices; d++)
            for (int k = 0; k < SCH_NSTREAMS; k++) {
                int *i = &next[d * SCH_NSTREAMS + k];
                while (*i < s->n_ops[d] &&
                       sch_op_stream((enum sch_op_kind)s->ops[d][*i].kind) != (enum sch_stream)k)
                    ++*i;
                if (*i < s->n_ops[d] && oracle_ready(&o, &s->ops[d][*i])) {
                    const struct sch_op *op = &s->ops[d][(*i)++];
                    o.done[oracle_at(&o, op->kind, op->stage, op->mb)] = 1;
                    ran = 1;
                }
            }
    }
    int all = 1;
    for (int d = 0; d < s->n_devices; d++)
        for (int k = 0; k < SCH_NSTREAMS; k++)
            all &= next[d * SCH_NSTREAMS + k] >= s->n_ops[d];
    free(next);
    free(o.done);
    return all;
}

#endif
