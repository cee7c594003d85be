/*
 * The partitioner's model, its named strategies (sch_part_strategy_parse,
 * _name, _run: optimal is sch_part_model_solve, the others one solve, DP or
 * split on the model's arrays) and the messages when no partition fits: the
 * least-overflowing partition's worst stage, or the device whose stages
 * together overflow it. Each message costs one solve.
 */
#include "sched/sch_partitioner_model_int.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = { "optimal", "uniform", "gpipe", "balance-by-size",
                                      "lingvo" };

int sch_part_strategy_parse(const char *s, enum sch_part_strategy *out)
{
    for (int i = 0; i < SCH_PART_NSTRATEGIES; i++)
        if (!strcmp(s, names[i])) {
            *out = (enum sch_part_strategy)i;
            return 0;
        }
    struct ps_suggest sg;
    ps_suggest_init(&sg, s);
    for (int i = 0; i < SCH_PART_NSTRATEGIES; i++)
        ps_suggest_add(&sg, names[i]);
    return ps_error(PS_EUSAGE, "--strategy: unknown strategy '%s'%s (optimal, uniform, gpipe, "
                     "balance-by-size, lingvo)", s, ps_suggest_hint(&sg));
}

const char *sch_part_strategy_name(enum sch_part_strategy s)
{
    return s >= 0 && s < SCH_PART_NSTRATEGIES ? names[s] : "?";
}

/* "--remat always, " unless it is the mode already (helper-128: it was suggested
 * to a run at always). */
static const char *remat_hint(const sch_part_model *m)
{
    return m->o.remat == SCH_REMAT_ALWAYS ? "" : "--remat always, ";
}

int sch_part_model_explain_nofit(const sch_part_model *m)
{
    struct sch_part_problem over = m->size_pb;
    struct sch_part_cost *c = calloc((size_t)m->S, sizeof *c);
    struct sch_part_stage_info *info = calloc((size_t)m->S, sizeof *info);
    struct sch_partition *part = NULL;
    int rc;
    if (!c || !info) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int s = 0; s < m->S; s++)
        c[s] = m->mem[s]; /* overflow = memory - capacity */
    over.time = c;
    int64_t worst_over;
    if ((rc = sch_part_solve(&over, &part, &worst_over)) < 0)
        goto out;
    int w = 0;
    sch_part_bottleneck(&over, part, &w, NULL);
    sch_part_model_stages(m, part, info);
    char spec[256], need[32], cap[32], ov[32]; /* in the unit that reads (helper-138: */
    sch_partition_format(part, spec, sizeof spec); /* "0.0009313 GiB") */
    ps_human_bytes((double)info[w].mem, need, sizeof need);
    ps_human_bytes(info[w].capacity, cap, sizeof cap);
    ps_human_bytes((double)worst_over, ov, sizeof ov);
    rc = ps_error(PS_ENOFIT, "no partition of %d layers into %d stages fits in memory: the "
                   "closest, %s, still has stage %d (layers %d-%d on %s) needing %s for "
                   "%s of memory, %s over (try %smore stages or a "
                   "smaller micro-batch)", m->L, m->S, spec, w, info[w].first,
                   info[w].first + info[w].n_layers - 1, m->topo->devices[m->dev[w]].name,
                   need, cap, ov, remat_hint(m));
out:
    sch_partition_free(part);
    free(c);
    free(info);
    return rc;
}

/* sch_part_model_explain_nofit, or, where every stage fits its device alone
 * but no cut found fits a device holding several, that device's need. */
static int explain_device_nofit(const sch_part_model *m)
{
    struct sch_partition *part = NULL;
    int64_t bn;
    if (sch_part_solve(&m->pb, &part, &bn) < 0)
        return sch_part_model_explain_nofit(m);
    int64_t *mem = malloc(sizeof *mem * 2 * (size_t)m->S);
    if (!mem) {
        sch_partition_free(part);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    int64_t *sum = mem + m->S;
    device_sums(m, part, mem, sum);
    int w = 0;
    for (int s = 1; s < m->S; s++)
        if ((double)sum[s] - m->cap[s] > (double)sum[w] - m->cap[w])
            w = s;
    char spec[256], stages[256] = "";
    sch_partition_format(part, spec, sizeof spec);
    size_t n = 0;
    for (int s = 0; s < m->S && n < sizeof stages; s++)
        if (m->dev[s] == m->dev[w])
            n += (size_t)snprintf(stages + n, sizeof stages - n, "%s%d", n ? ", " : "", s);
    char need[32], cap[32];
    ps_human_bytes((double)sum[w], need, sizeof need);
    ps_human_bytes(m->cap[w], cap, sizeof cap);
    int rc = ps_error(PS_ENOFIT, "no partition of %d layers into %d stages fits in memory: "
                      "each stage fits its device alone, but the cut that does best, %s, has "
                      "device %s holding stages %s needing %s for %s (no share of "
                      "its memory among them that was tried fits; try %smore "
                      "devices or a smaller micro-batch)", m->L, m->S, spec,
                      m->topo->devices[m->dev[w]].name, stages, need, cap, remat_hint(m));
    free(mem);
    sch_partition_free(part);
    return rc;
}

int sch_part_strategy_run(const sch_part_model *m, enum sch_part_strategy s,
                          struct sch_partition **out)
{
    int rc;
    switch (s) {
    case SCH_PART_OPTIMAL:
        rc = sch_part_model_solve(m, out);
        if (rc == -PS_ENOFIT && m->pb.mem)
            return explain_device_nofit(m);
        return rc;
    case SCH_PART_UNIFORM: return sch_partition_uniform(m->S, m->L, out);
    case SCH_PART_GPIPE: return sch_part_min_sq_sum(&m->pb, out);
    case SCH_PART_BALANCE_SIZE: {
        int64_t bn;
        return sch_part_solve(&m->size_pb, out, &bn);
    }
    case SCH_PART_LINGVO: { /* the layers' forward cost: FLOPs per sample, or
                               a measured profile's seconds */
        double *cost = malloc((size_t)m->L * sizeof *cost);
        if (!cost)
            return ps_error(PS_ENOMEM, "out of memory");
        for (int l = 0; l < m->L; l++)
            cost[l] = m->prof->layers[l].fwd;
        rc = sch_partition_lingvo(m->S, cost, m->L, out);
        free(cost);
        return rc;
    }
    default: return ps_error(PS_EUSAGE, "unknown partition strategy %d", (int)s);
    }
}
