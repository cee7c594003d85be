/*
 * sch_gen — the op-placement helpers every schedule generator shares
 * (sch_schedules.c, sch_zb.c, sch_looping.c), internal to sched/.
 *
 * A receive comes right before the op that consumes it, a send right after
 * the op that produces it, a re-materialized micro-batch's R right before
 * its gradient receive, the updates of a device's stages last (see
 * sch_schedules.c). No state; each push is amortized O(1).
 */
#ifndef SCH_GEN_H
#define SCH_GEN_H

#include "sched/sch_schedule.h"

/* PS_EUSAGE for K < 1 or M < 1, PS_EINVAL when K*M*v is too large. */
int sch_gen_check_sizes(int K, int M, int v);
/* [recv-act] F [send-act] of (st, m) on st's device. */
int sch_gen_push_fwd(struct sch_schedule *s, int st, int m);
/* [R] [recv-grad] B [send-grad] of (st, m). */
int sch_gen_push_bwd(struct sch_schedule *s, int st, int m);
int sch_gen_push_wgrad(struct sch_schedule *s, int st, int m);
/* 1F1B's order on stage st: w warm-up forwards (w <= M), then one forward
 * and one backward alternately, the w remaining backwards, the updates
 * (1f1b: w = min(K-st-1, M); eager-1f1b: one more). */
int sch_gen_1f1b_stage(struct sch_schedule *s, int st, int w);
/* The updates of device d's stages, in stage order. */
int sch_gen_push_updates(struct sch_schedule *s, int d);
/* A heap schedule of K devices and S stages (stage s on device s % K). */
/* A schedule's numeric argument ("interleaved:2"): ps_parse_long in
 * [lo, hi], written as the schedule's name writes it ("02", "+2" or " 2"
 * would name the same schedule twice in a list, a database or a table):
 * PS_EUSAGE "WHAT: write 'arg' as N". */
int sch_gen_arg(const char *arg, const char *what, long lo, long hi, long *v);
int sch_gen_new(const char *name, int K, int S, int M, enum sch_remat remat,
                struct sch_schedule **out);
/* Frees s when rc < 0, else hands it to *out; returns rc < 0 ? rc : 0. */
int sch_gen_finish(struct sch_schedule *s, int rc, struct sch_schedule **out);

#endif
