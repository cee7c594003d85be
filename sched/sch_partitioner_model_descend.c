/*
 * The partitioner's model, a device's stages summed: sch_part_model_descend
 * and its walk (dwalk_*).
 *
 * Where a device holds several stages (interleaved, V layouts) its step is
 * bounded by their summed time, not by its largest stage's, which is what
 * sch_part_solve minimizes: the per-stage optimum could leave one device
 * with two heavy stages (GPT-48 on a DGX-1, K = 8, interleaved:2: its
 * busiest device 11.33 s against gpipe's cut's 9.92 s, simulated 11.85 s
 * against 10.54 s). sch_part_model_descend lowers the busiest device's sum
 * from a feasible cut by moving one cut a layer at a time while that sum
 * falls (or stays and the sum of squares of the devices' loads falls),
 * keeping every stage within the memory cap; from the given cut and each
 * other strategy's that meets it, the least. A local optimum of the device
 * bound, not a proven one; a caller simulates it (ana_partition_optimal).
 * A pass tries each of the K - 1 cuts a layer either way, O(D) a move for
 * D devices; at most 4 L passes from each start.
 */
#include "sched/sch_partitioner_model_int.h"
#include "base/ps_error.h"

#include <stdlib.h>
#include <string.h>

struct dwalk {
    const sch_part_model *m;
    struct sch_part_problem tp; /* each stage's own time costs */
    const int64_t *limit;       /* [S] or NULL: each stage's peak at most */
    int dev_sums;               /* a device's stages' peaks summed within its memory */
    int64_t *t, *need, *load, *dmem; /* [S] [S] [n_dev] [n_dev] */
};

static int64_t stage_time(const struct dwalk *w, int s, int a, int e)
{
    return sch_part_cost_eval(&w->tp.time[w->tp.same ? 0 : s], w->m->L, a, e);
}

static int64_t stage_need(const struct dwalk *w, int s, int a, int e)
{
    struct sch_part_cost mc = w->m->mem[s];
    mc.bias = 0;
    return sch_part_cost_eval(&mc, w->m->L, a, e);
}

static int stage_ok(const struct dwalk *w, int s, int64_t need)
{
    return (!w->m->o.cap_mode || (double)need <= w->m->cap[s]) &&
           (!w->limit || need <= w->limit[s]);
}

/* Loads and memory of part into w; 1 when it meets the constraints. */
static int dwalk_load(struct dwalk *w, const struct sch_partition *part)
{
    const sch_part_model *m = w->m;
    int ok = 1;
    memset(w->load, 0, sizeof *w->load * (size_t)m->topo->n_devices);
    memset(w->dmem, 0, sizeof *w->dmem * (size_t)m->topo->n_devices);
    for (int s = 0; s < m->S; s++) {
        int a = part->first[s], e = part->first[s + 1];
        w->t[s] = stage_time(w, s, a, e);
        w->need[s] = stage_need(w, s, a, e);
        w->load[m->dev[s]] += w->t[s];
        w->dmem[m->dev[s]] += w->need[s];
        ok &= stage_ok(w, s, w->need[s]);
    }
    for (int s = 0; s < m->S && w->dev_sums && m->o.cap_mode; s++)
        ok &= (double)w->dmem[m->dev[s]] <= m->cap[s];
    return ok;
}

static void dwalk_objective(const struct dwalk *w, int64_t *mx, long double *sq)
{
    *mx = 0;
    *sq = 0;
    for (int d = 0; d < w->m->topo->n_devices; d++) {
        *mx = w->load[d] > *mx ? w->load[d] : *mx;
        *sq += (long double)w->load[d] * (long double)w->load[d];
    }
}

/* Moves part's cuts while the objective falls; part must meet the
 * constraints (dwalk_load). */
static void dwalk_descend(struct dwalk *w, struct sch_partition *part, int64_t *mx,
                          long double *sq)
{
    const sch_part_model *m = w->m;
    dwalk_objective(w, mx, sq);
    for (int improved = 1, passes = 0; improved && passes < 4 * m->L; passes++) {
        improved = 0;
        for (int j = 1; j < m->S; j++)
            for (int delta = -1; delta <= 1; delta += 2) {
                int lo = part->first[j - 1], a = part->first[j] + delta, hi = part->first[j + 1];
                if (a <= lo || a >= hi)
                    continue;
                int dl = m->dev[j - 1], dr = m->dev[j];
                int64_t tl = stage_time(w, j - 1, lo, a), tr = stage_time(w, j, a, hi);
                int64_t nl = stage_need(w, j - 1, lo, a), nr = stage_need(w, j, a, hi);
                if (!stage_ok(w, j - 1, nl) || !stage_ok(w, j, nr))
                    continue;
                int64_t ml = w->dmem[dl] - w->need[j - 1] + nl, mr = w->dmem[dr] - w->need[j] + nr;
                if (dl == dr)
                    ml = mr = w->dmem[dl] - w->need[j - 1] - w->need[j] + nl + nr;
                if (w->dev_sums && m->o.cap_mode &&
                    ((double)ml > m->cap[j - 1] || (double)mr > m->cap[j]))
                    continue;
                int64_t old_l = w->load[dl], old_r = w->load[dr];
                w->load[dl] += tl - w->t[j - 1];
                w->load[dr] += tr - w->t[j];
                int64_t nmx;
                long double nsq;
                dwalk_objective(w, &nmx, &nsq);
                if (nmx < *mx || (nmx == *mx && nsq < *sq)) {
                    part->first[j] = a;
                    w->t[j - 1] = tl;
                    w->t[j] = tr;
                    w->need[j - 1] = nl;
                    w->need[j] = nr;
                    w->dmem[dl] = ml;
                    w->dmem[dr] = mr;
                    *mx = nmx;
                    *sq = nsq;
                    improved = 1;
                } else {
                    w->load[dl] = old_l;
                    w->load[dr] = old_r;
                }
            }
    }
}

int sch_part_model_shared(const sch_part_model *m) { return shared_devices(m); }

int sch_part_model_descend(const sch_part_model *m, struct sch_partition **part)
{
    /* each stage under the cap; a device's stages summed are left to the
     * engine, whose peak lies far under that sum (helper-82: 19.6 GiB summed,
     * 11.96 GiB simulated), so a start or a move is not refused for it */
    const int64_t *limit = NULL;
    int dev_sums = 0;
    if (!shared_devices(m))
        return 0;
    int nd = m->topo->n_devices, rc = 0;
    struct dwalk w = { m, own_problem(m, NULL), limit, dev_sums, NULL, NULL, NULL, NULL };
    int64_t *buf = malloc(sizeof *buf * (2 * (size_t)m->S + 2 * (size_t)nd));
    if (!buf)
        return ps_error(PS_ENOMEM, "out of memory");
    w.t = buf;
    w.need = buf + m->S;
    w.load = w.need + m->S;
    w.dmem = w.load + nd;
    int64_t best_mx = INT64_MAX;
    long double best_sq = 0;
    if (dwalk_load(&w, *part))
        dwalk_descend(&w, *part, &best_mx, &best_sq);
    for (int k = 0; k < SCH_PART_NSTRATEGIES; k++) {
        struct sch_partition *q = NULL;
        if (k == SCH_PART_OPTIMAL)
            continue;
        if ((rc = sch_part_strategy_run(m, (enum sch_part_strategy)k, &q)) < 0) {
            sch_partition_free(q);
            if (rc == -PS_ENOMEM)
                break;
            ps_error_clear(); /* a strategy with no cut here (lingvo's costs): skipped */
            rc = 0;
            continue;
        }
        int64_t mx;
        long double sq;
        if (dwalk_load(&w, q)) {
            dwalk_descend(&w, q, &mx, &sq);
            if (mx < best_mx || (mx == best_mx && sq < best_sq)) {
                sch_partition_free(*part);
                *part = q;
                q = NULL;
                best_mx = mx;
                best_sq = sq;
            }
        }
        sch_partition_free(q);
    }
    free(buf);
    return rc;
}
