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

#include "sched/sch_schedule.h"

/* ZB-H2: K stages, extra warm-up forwards, W deferred into the tail. */
int sch_schedule_zbh2(int K, int M, enum sch_remat remat, struct sch_schedule **out);
/* sch_zbv.c: ZB-V, 2K stages, device d holds stages d and 2K-1-d; the
 * paper's hand-built order with W's filling the waits (see there). */
int sch_schedule_zbv(int K, int M, enum sch_remat remat, struct sch_schedule **out);
/* zb-auto: K stages; per-stage F, B, W times (NULL: 1 each; R costs F) and
 * at most limit stashes per device. PS_EUSAGE for limit < 1. */
int sch_schedule_zbauto(int K, int M, const sch_time *cf, const sch_time *cb,
                        const sch_time *cw, int limit, enum sch_remat remat,
                        struct sch_schedule **out);
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
