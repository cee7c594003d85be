/*
 * sch_zb — zero-bubble generators beyond ZB-H1 (ZB-H2, ZB-V, zb-auto) and
 * the two measures the automatic scheduler ranks lists by. See sch_zb.c
 * for the sources and the rules.
 *
 * Ownership: generators return a heap schedule (sch_schedule_free).
 * Cost: list time O(total ops) (O(ops x devices) at worst); peak O(ops).
 */
#ifndef SCH_ZB_H
#define SCH_ZB_H

#include "models/mdl_topology.h"
#include "sched/sch_cost.h"
#include "sched/sch_schedule.h"

/* ZB-H2: K stages, extra warm-up forwards, W deferred into the tail. */
int sch_schedule_zbh2(int K, int M, enum sch_remat remat, struct sch_schedule **out);
/* sch_zbv.c: ZB-V, 2K stages, device d holds stages d and 2K-1-d; the
 * paper's hand-built order with W's filling the waits (see there). */
int sch_schedule_zbv(int K, int M, enum sch_remat remat, struct sch_schedule **out);
/* What zb-auto orders for (sch_zbauto.c): per stage s, ns. */
struct sch_zb_costs {
    const sch_time *f, *b, *w; /* F, B (input gradient), W (weight gradient) */
    const sch_time *r;         /* R of a re-materialized micro-batch; NULL: f */
    const sch_time *fn;        /* F of a re-materialized micro-batch (it keeps no
                                * stash); NULL: f */
    const sch_time *u;         /* the update after a device's last op; NULL: 0 */
    const sch_time *act;       /* act[s]: the activation's hand-off from stage s
                                * to s + 1 (latency + bytes / bandwidth); NULL: 0 */
    const sch_time *grad;      /* grad[s]: the gradient's from s + 1 to s; NULL: 0 */
    const sch_time *br, *wr;   /* B and W of a re-materialized micro-batch (right
                                * after its R); NULL: b, w */
};
/* zb-auto by name (first phase only): K stages; per-stage F, B, W times
 * (NULL: 1 each; R costs F) and at most limit stashes per device, no
 * hand-off times; the greedy, ZB-H1 or ZB-H2, whichever is fastest and
 * fits. PS_EUSAGE for limit < 1. */
int sch_schedule_zbauto(int K, int M, const sch_time *cf, const sch_time *cb,
                        const sch_time *cw, int limit, enum sch_remat remat,
                        struct sch_schedule **out);
/* Both phases for costs c (every array [K]): the greedy, ZB-H1 and ZB-H2
 * (when they fit the limit) timed by sch_zb_seq_time with the hand-offs,
 * the fastest improved by sch_zb_improve. */
int sch_schedule_zbauto_for(int K, int M, const struct sch_zb_costs *c, int limit,
                            enum sch_remat remat, struct sch_schedule **out);
/* zb-auto's own costs: when s is a zb-auto schedule, *s is replaced by
 * zb-auto ordered for the stage costs c and the hand-offs over t's routes
 * (stage s on device s; bytes: c's per-micro-batch output of each stage);
 * any other schedule is left as it is. */
int sch_schedule_fit_costs(struct sch_schedule **s, const struct sch_costs *c,
                           const struct mdl_topology *t);
/* The stash limit L of a zb-auto schedule (its name "zb-auto:L"), 0 for any
 * other schedule. */
int sch_zbauto_limit(const struct sch_schedule *s);
/* sch_zbauto.c: the step of s's compute order (K stages on K devices,
 * split backward, each kind in micro-batch order) with the hand-offs of c;
 * -1 when it does not run to the end (or on ENOMEM). */
sch_time sch_zb_seq_time(const struct sch_schedule *s, const struct sch_zb_costs *c);
/* Local search from s (see sch_zbauto.c): *out the improved lists (never
 * slower than s by sch_zb_seq_time, at most limit stashes per device when
 * s holds at most limit), *step their time. */
int sch_zb_improve(const struct sch_schedule *s, const struct sch_zb_costs *c, int limit,
                   struct sch_schedule **out, sch_time *step);
/* The step of the lists replayed in order with these compute times and no
 * communication (sends, receives, updates cost nothing); -1 on ENOMEM or
 * lists that do not run to the end. */
sch_time sch_zb_list_time(const struct sch_schedule *s, const sch_time *cf,
                          const sch_time *cb, const sch_time *cw);
/* The same replay, writing each compute op's start to start[d][i] (i its
 * place in device d's list; -1 for the ops that cost nothing: transfers,
 * updates) when start is not NULL, for drawing a schedule. */
sch_time sch_zb_list_replay(const struct sch_schedule *s, const sch_time *cf,
                            const sch_time *cb, const sch_time *cw, sch_time *const *start);
/* The most micro-batch stashes any device holds (F issued, its backward's
 * last op not yet) counted in list order. */
int sch_zb_peak_stashes(const struct sch_schedule *s);

int sch_gen_zbh2(const char *arg, int K, int M, enum sch_remat remat,
                 struct sch_schedule **out);
int sch_gen_zbv(const char *arg, int K, int M, enum sch_remat remat,
                struct sch_schedule **out);
int sch_gen_zbauto(const char *arg, int K, int M, enum sch_remat remat,
                   struct sch_schedule **out);
/* sch_dualpipe.c: DualPipeV, 2K stages in zb-v's V; M >= 2K (PS_EUSAGE). */
int sch_schedule_dualpipev(int K, int M, enum sch_remat remat, struct sch_schedule **out);
int sch_gen_dualpipev(const char *arg, int K, int M, enum sch_remat remat,
                      struct sch_schedule **out);
/* sch_looping.c: eager 1F1B and breadth-first (looping) pipelines. */
int sch_schedule_eager_1f1b(int K, int M, enum sch_remat remat, struct sch_schedule **out);
int sch_schedule_breadth_first(int K, int M, int v, enum sch_remat remat,
                               struct sch_schedule **out);
int sch_gen_eager_1f1b(const char *arg, int K, int M, enum sch_remat remat,
                       struct sch_schedule **out);
int sch_gen_breadth_first(const char *arg, int K, int M, enum sch_remat remat,
                          struct sch_schedule **out);

#endif
