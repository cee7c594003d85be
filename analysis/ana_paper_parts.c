/* Partitions: AmoebaNet-D (18, 256) on 8 TPUv2 cores, the candidate
 * partitions side by side, each with the step time and speedup the
 * simulator predicts for it. */
#include "analysis/ana_paper_int.h"
#include "analysis/ana_paper_text.h"
#include "sim/sim_error.h"

#include <stdlib.h>
#include <string.h>

#define PK 8
#define NPM 3
static const int p_Ms[NPM] = { 1, 4, 32 };
/* torchgpipe's published balances for this model at K = 8
 * (/work/shared/paper-tables.md): M = 1, and M = 4 and 32. */
static const char *const tg_balance[NPM] = { "2,2,2,2,2,3,4,7", "2,2,2,3,3,4,4,4",
                                             "2,2,2,3,3,4,4,4" };

static const char *const cand_name[ANA_NCAND] = {
    "uniform (equal layer counts)",
    "GPipe heuristic: minimum variance of stage compute (partitioner)",
    "prefix heuristic (cut where running compute passes s/K)",
    "torchgpipe's published balance",
    "min-max compute per micro-batch (ana_part_time)",
    "optimal: minimum bottleneck bound (partitioner)",
    "best simulated of the optimum and its neighbours (partitioner, ana_rank)",
};

static int candidate(int which, const struct mdl_profile *p, const struct mdl_topology *t,
                     int M, double batch, struct sim_partition **out)
{
    double mb = batch / M;
    switch (which) {
    case ANA_P_UNIFORM: return sim_partition_uniform(PK, p->n_layers, out);
    case ANA_P_GPIPE:
        return ana_paper_strategy(p, t, PK, M, mb, SIM_REMAT_ALWAYS, SIM_PART_GPIPE, 0, out);
    case ANA_P_PREFIX: return ana_part_prefix(p, t, PK, mb, SIM_REMAT_ALWAYS, out);
    case ANA_P_TORCHGPIPE: {
        int j = M == 1 ? 0 : M == 4 ? 1 : 2;
        return sim_partition_parse(tg_balance[j], PK, p->n_layers, out);
    }
    case ANA_P_MINMAX: return ana_part_time(p, t, PK, mb, SIM_REMAT_ALWAYS, out);
    case ANA_P_OPTIMAL: {
        int rc = ana_paper_strategy(p, t, PK, M, mb, SIM_REMAT_ALWAYS, SIM_PART_OPTIMAL, 1, out);
        if (rc == -SIM_ENOFIT)
            rc = ana_paper_strategy(p, t, PK, M, mb, SIM_REMAT_ALWAYS, SIM_PART_OPTIMAL, 0, out);
        return rc;
    }
    default: return ana_paper_ranked(p, t, PK, M, batch, SIM_REMAT_ALWAYS, out);
    }
}

/* Largest per-micro-batch stage compute (F + R + B), seconds. */
static double bottleneck(const struct ana_prediction *r)
{
    double mx = 0;
    for (int s = 0; s < r->n_stages; s++) {
        double w = r->stages[s].fwd_s + r->stages[s].recomp_s + r->stages[s].bwd_s;
        mx = w > mx ? w : mx;
    }
    return mx;
}

/* Each layer's cost at micro-batch mb, the numbers the partitions balance. */
static void layer_table(FILE *f, const struct mdl_profile *p, const struct mdl_topology *t,
                        double mb)
{
    const struct mdl_device *d = &t->devices[0];
    double total = 0, ms[256];
    int n = p->n_layers < 256 ? p->n_layers : 256;
    for (int l = 0; l < n; l++) {
        const struct mdl_layer *ly = &p->layers[l];
        ms[l] = (2 * mdl_device_op_seconds(d, p->measured, ly->fwd, ly->at_batch, mb) +
                 mdl_device_op_seconds(d, p->measured, ly->bwd, ly->at_batch, mb)) * 1e3;
        total += ms[l];
    }
    fprintf(f, "Per-layer compute F + R + B at micro-batch %g (M = 32), from FLOPs at the "
               "core's peak:\n\n| layer | kind | GFLOP forward per image | F+R+B (ms) | share "
               "|\n|---|---|---|---|---|\n", mb);
    for (int l = 0; l < n; l++)
        fprintf(f, "| %s | %s | %.2f | %.3f | %.1f %% |\n", p->layers[l].name, p->layers[l].kind,
                p->layers[l].fwd / 1e9, ms[l], 100 * ms[l] / total);
}

int ana_paper_partitions(const struct ana_paper_ctx *c)
{
    struct mdl_profile *p;
    int rc = ana_paper_amoeba(18, 256, &p);
    if (rc < 0)
        return rc;
    struct ana_prediction *res[NPM][ANA_NCAND] = { { 0 } };
    struct ana_parts_facts facts = { 0 };
    for (int j = 0; j < NPM && rc == 0; j++) {
        /* The batch of Table 2's policy for this cell, then every candidate
         * at that batch so that only the partition differs. */
        struct ana_prediction *ref;
        if ((rc = ana_paper_fit_batch(p, c->tpu2, PK, p_Ms[j], 128, 0, &ref)) < 0)
            break;
        double batch = ref->batch;
        ana_prediction_free(ref);
        for (int k = 0; k < ANA_NCAND && rc == 0; k++) {
            struct sim_partition *part;
            if ((rc = candidate(k, p, c->tpu2, p_Ms[j], batch, &part)) < 0)
                break;
            rc = ana_paper_eval(p, c->tpu2, PK, p_Ms[j], batch, SIM_REMAT_ALWAYS, part, 1,
                                &res[j][k]);
            sim_partition_free(part);
        }
    }
    struct sim_afile af;
    if (rc < 0 || (rc = ana_paper_md_open(c, "partitions.md", "Partitions — AmoebaNet-D "
                                          "(18, 256) on 8 TPUv2 cores", &af)) < 0)
        goto out_free;
    FILE *f = af.f;
    ana_paper_parts_intro(f);
    fprintf(f, "| M | batch | partition | layers per stage | slowest stage F+R+B (ms per "
               "micro-batch) | step (ms) | speedup over 1 core | vs uniform | bubble | fits |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int j = 0; j < NPM; j++)
        for (int k = 0; k < ANA_NCAND; k++) {
            const struct ana_prediction *r = res[j][k];
            fprintf(f, "| %d | %g | %s | %s | %.2f | %.2f | %.3f | %.3f | %.1f %% | %s |\n",
                    r->M, r->batch, cand_name[k], r->partition, bottleneck(r) * 1e3,
                    r->step_s * 1e3, r->speedup, res[j][ANA_P_UNIFORM]->step_s / r->step_s,
                    r->bubble_sim * 100, r->fits ? "yes" : "**no**");
            facts.speedup[j][k] = r->speedup;
            facts.bottleneck_ms[j][k] = bottleneck(r) * 1e3;
            facts.step_ms[j][k] = r->step_s * 1e3;
            snprintf(facts.spec[j][k], sizeof facts.spec[j][k], "%s", r->partition);
        }
    fputc('\n', f);
    ana_paper_parts_notes(f, &facts);
    layer_table(f, p, c->tpu2, res[NPM - 1][ANA_P_UNIFORM]->micro_batch);
    rc = ana_paper_md_close(c, &af, 0);
out_free:
    for (int j = 0; j < NPM; j++)
        for (int k = 0; k < ANA_NCAND; k++)
            ana_prediction_free(res[j][k]);
    mdl_profile_free(p);
    return rc;
}
