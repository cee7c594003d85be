/* Partitions: AmoebaNet-D (18, 256) on 8 TPUv2 cores, the candidate
 * partitions side by side, each with the step time and speedup the
 * simulator predicts for it. */
#include "studies/stu_paper_int.h"
#include "studies/stu_paper_text.h"
#include "base/ps_error.h"

#include <stdlib.h>
#include <string.h>

#define PK 8
#define NPM 3
static const int p_Ms[NPM] = { 1, 4, 32 };

static const char *const cand_name[STU_NCAND] = {
    "uniform (equal layer counts)",
    "GPipe's library (Lingvo): equal shares of forward FLOPs",
    "GPipe heuristic: minimum variance of stage compute (partitioner)",
    "prefix heuristic (cut where running compute passes s/K)",
    "torchgpipe's published balance",
    "min-max compute per micro-batch (stu_part_time)",
    "optimal: minimum bottleneck bound (partitioner)",
    "best simulated of the optimum and its neighbours (partitioner, ana_rank)",
};

static int candidate(const struct stu_paper_ctx *c, int which, const struct mdl_profile *p,
                     const struct mdl_topology *t, int M, double batch,
                     struct sch_partition **out)
{
    double mb = batch / M;
    switch (which) {
    case STU_P_UNIFORM: return sch_partition_uniform(PK, p->n_layers, out);
    case STU_P_LINGVO:
        return stu_paper_strategy(p, t, PK, M, mb, SCH_REMAT_ALWAYS, SCH_PART_LINGVO, 0, out);
    case STU_P_GPIPE:
        return stu_paper_strategy(p, t, PK, M, mb, SCH_REMAT_ALWAYS, SCH_PART_GPIPE, 0, out);
    case STU_P_PREFIX: return stu_part_prefix(p, t, PK, mb, SCH_REMAT_ALWAYS, out);
    case STU_P_TORCHGPIPE: {
        /* torchgpipe's published balance at K = 8 (reference/torchgpipe.csv). */
        int j = M == 1 ? 0 : M == 4 ? 1 : 2;
        return sch_partition_parse(c->ref.tg_balance[2][j], PK, p->n_layers, out);
    }
    case STU_P_MINMAX: return stu_part_time(p, t, PK, mb, SCH_REMAT_ALWAYS, out);
    case STU_P_OPTIMAL: {
        int rc = stu_paper_strategy(p, t, PK, M, mb, SCH_REMAT_ALWAYS, SCH_PART_OPTIMAL, 1, out);
        if (rc == -PS_ENOFIT)
            rc = stu_paper_strategy(p, t, PK, M, mb, SCH_REMAT_ALWAYS, SCH_PART_OPTIMAL, 0, out);
        return rc;
    }
    default: return stu_paper_ranked(p, t, PK, M, batch, SCH_REMAT_ALWAYS, out);
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
static void layer_table(FILE *f, const stu_tmpl *tx, const struct mdl_profile *p,
                        const struct mdl_topology *t, double mb)
{
    const struct mdl_device *d = &t->devices[0];
    double total = 0, ms[256];
    int n = p->n_layers < 256 ? p->n_layers : 256;
    for (int l = 0; l < n; l++) {
        const struct mdl_layer *ly = &p->layers[l];
        ms[l] = (2 * mdl_layer_seconds(d, p->measured, ly, MDL_OP_FWD, mb) +
                 mdl_layer_seconds(d, p->measured, ly, MDL_OP_BWD, mb)) * 1e3;
        total += ms[l];
    }
    struct stu_vals v;
    stu_vals_init(&v);
    stu_vals_set(&v, "mb", "%g", mb);
    stu_tmpl_put(f, tx, "layers", &v);
    for (int l = 0; l < n; l++)
        fprintf(f, "| %s | %s | %.2f | %.3f | %.1f %% |\n", p->layers[l].name, p->layers[l].kind,
                p->layers[l].fwd / 1e9, ms[l], 100 * ms[l] / total);
}

int stu_paper_partitions(const struct stu_paper_ctx *c)
{
    struct mdl_profile *p;
    int rc = stu_paper_amoeba(18, 256, 1, &p);
    if (rc < 0)
        return rc;
    struct ana_prediction *res[NPM][STU_NCAND] = { { 0 } };
    struct stu_parts_facts facts = { 0 };
    for (int j = 0; j < NPM && rc == 0; j++) {
        /* The batch of Table 2's policy for this cell, then every candidate
         * at that batch so that only the partition differs. */
        struct ana_prediction *ref;
        if ((rc = stu_paper_fit_batch(p, c->tpu2, PK, p_Ms[j], 128, 0, &ref)) < 0)
            break;
        double batch = ref->batch;
        ana_prediction_free(ref);
        for (int k = 0; k < STU_NCAND && rc == 0; k++) {
            struct sch_partition *part;
            if ((rc = candidate(c, k, p, c->tpu2, p_Ms[j], batch, &part)) < 0)
                break;
            rc = stu_paper_eval(p, c->tpu2, PK, p_Ms[j], batch, SCH_REMAT_ALWAYS, part, 1,
                                &res[j][k]);
            sch_partition_free(part);
        }
    }
    struct ps_afile af;
    if (rc < 0 || (rc = stu_paper_md_open(c, "partitions.md", "Partitions — AmoebaNet-D "
                                          "(18, 256) on 8 TPUv2 cores", &af)) < 0)
        goto out_free;
    FILE *f = af.f;
    stu_tmpl_put(f, c->tx[STU_TX_PARTS], "intro", NULL);
    fprintf(f, "| M | batch | partition | layers per stage | slowest stage F+R+B (ms per "
               "micro-batch) | step (ms) | speedup over 1 core | vs uniform | bubble | fits |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int j = 0; j < NPM; j++)
        for (int k = 0; k < STU_NCAND; k++) {
            const struct ana_prediction *r = res[j][k];
            fprintf(f, "| %d | %g | %s | %s | %.2f | %.2f | %.3f | %.3f | %.1f %% | %s |\n",
                    r->M, r->batch, cand_name[k], r->partition, bottleneck(r) * 1e3,
                    r->step_s * 1e3, r->speedup, res[j][STU_P_UNIFORM]->step_s / r->step_s,
                    r->bubble_sim * 100, r->fits ? "yes" : "**no**");
            facts.speedup[j][k] = r->speedup;
            facts.bottleneck_ms[j][k] = bottleneck(r) * 1e3;
            facts.step_ms[j][k] = r->step_s * 1e3;
            snprintf(facts.spec[j][k], sizeof facts.spec[j][k], "%s", r->partition);
        }
    fputc('\n', f);
    stu_paper_parts_notes(f, c->tx[STU_TX_PARTS], &facts);
    layer_table(f, c->tx[STU_TX_PARTS], p, c->tpu2, res[NPM - 1][STU_P_UNIFORM]->micro_batch);
    rc = stu_paper_md_close(c, &af, 0);
out_free:
    for (int j = 0; j < NPM; j++)
        for (int k = 0; k < STU_NCAND; k++)
            ana_prediction_free(res[j][k]);
    mdl_profile_free(p);
    return rc;
}
