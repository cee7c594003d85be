/*
 * sch_partitioner_model_int — private to sched/sch_partitioner_model*.c: the
 * model's state (the cost arrays sch_partitioner_model.c builds) and the
 * small helpers its solver, descent and strategy files share, inline here
 * (they were static in one file): shared_devices and device_sums O(S^2),
 * own_problem O(1). Not for use outside sched/.
 */
#ifndef SCH_PARTITIONER_MODEL_INT_H
#define SCH_PARTITIONER_MODEL_INT_H

#include <stdint.h>

#include "sched/sch_partitioner.h"

#define MAXCLASS 64

struct sch_part_model {
    const struct mdl_profile *prof;
    const struct mdl_topology *topo;
    struct sch_part_opts o;
    int *dev;                      /* [S] */
    int L, S, R;
    int n_tpre, n_x;
    int64_t *tpre[MAXCLASS];       /* per device class, [L+1] */
    int64_t *xs[MAXCLASS];         /* per link class, [L+1] */
    double xbw[MAXCLASS], xlat[MAXCLASS]; /* the route of each class */
    const struct mdl_device *xdev[MAXCLASS]; /* and its sender's message copies */
    int64_t *mpre, *min_, *mout;   /* [L+1] */
    int64_t *spre, *sin, *sout;    /* [S][L+1] per stage (o.sched), else NULL */
    struct sch_part_cost *time, *mem, *size;  /* [S] */
    struct sch_part_cost *time_own;  /* [S] each stage's own time costs, kept when the
                                      * fast path (pb.same) gives every stage stage 0's:
                                      * for sch_part_model_solve's shares; else NULL */
    double *cap;                   /* [S] capacity the search uses */
    struct sch_part_problem pb, size_pb;
};

/* Whether some device holds more than one stage. */
static inline int shared_devices(const sch_part_model *m)
{
    for (int s = 0; s < m->S; s++)
        for (int t = 0; t < s; t++)
            if (m->dev[t] == m->dev[s])
                return 1;
    return 0;
}

/* Each stage's closed-form peak for part (mem[S]) and, per stage, the sum over
 * the stages of its device (sum[S]). */
static inline void device_sums(const sch_part_model *m, const struct sch_partition *part,
                               int64_t *mem, int64_t *sum)
{
    for (int s = 0; s < m->S; s++) {
        struct sch_part_cost mc = m->mem[s];
        mc.bias = 0;
        mem[s] = sch_part_cost_eval(&mc, m->L, part->first[s], part->first[s + 1]);
    }
    for (int s = 0; s < m->S; s++) {
        sum[s] = 0;
        for (int t = 0; t < m->S; t++)
            if (m->dev[t] == m->dev[s])
                sum[s] += mem[t];
    }
}

/* The model's problem on each stage's own time costs (what per-stage caps
 * need: the fast path reads stage 0's alone) and with memory costs mem. */
static inline struct sch_part_problem own_problem(const sch_part_model *m,
                                                  const struct sch_part_cost *mem)
{
    struct sch_part_problem pb = m->pb;
    pb.mem = mem;
    if (m->time_own) {
        pb.time = m->time_own;
        pb.same = 0;
    }
    return pb;
}

#endif
