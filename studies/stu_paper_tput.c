/* Tables 2 and 3: normalized training throughput of AmoebaNet-D and the
 * Transformer under GPipe, predicted beside the paper's, with the batch-size
 * policy of stu_paper_fit_batch. */
#include "studies/stu_paper_int.h"
#include "studies/stu_paper_text.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NK 3
#define NM 3
static const int Ks[NK] = { 2, 4, 8 };

struct tp_model {
    const char *name, *spec;
    int amoeba, L, D;
    double start;                 /* batch the policy starts from */
    const struct mdl_topology *t;
    const char *topo_name;
    int fused; /* keep=fused: what XLA keeps (the TPU table) */
};

struct tp_cell {
    struct ana_prediction *p;
    double norm, paper, recomp_share, imbalance;
};

static int build(const struct tp_model *m, struct mdl_profile **p)
{
    return m->amoeba ? stu_paper_amoeba(m->L, m->D, m->fused, p)
                     : stu_paper_transformer(m->L, m->fused, p);
}

/* Largest share of the step one device spends re-materializing, and the
 * load imbalance max/mean - 1 of per-stage compute. */
static void shares(struct tp_cell *c)
{
    const struct ana_prediction *p = c->p;
    double mx = 0, sum = 0;
    c->recomp_share = 0;
    for (int s = 0; s < p->n_stages; s++) {
        const struct ana_stage *st = &p->stages[s];
        double share = st->recomp_s * p->M / p->step_s;
        if (share > c->recomp_share)
            c->recomp_share = share;
        double w = st->fwd_s + st->bwd_s + st->recomp_s;
        sum += w;
        if (w > mx)
            mx = w;
    }
    c->imbalance = sum > 0 ? mx / (sum / p->n_stages) - 1 : 0;
}

static void detail_header(FILE *f)
{
    fprintf(f, "| model | K | M | batch | micro-batch | partition (layers per stage) | step (ms) "
               "| samples/s | bubble simulated / (K-1)/(M+K-1) | largest re-computation share "
               "| load imbalance | fits |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

static void detail_row(FILE *f, const char *model, const struct tp_cell *c)
{
    const struct ana_prediction *p = c->p;
    double worst = 0, cap = 0;
    for (int s = 0; s < p->n_stages; s++)
        if (!cap || (double)p->stages[s].peak_mem / p->stages[s].capacity > worst / cap) {
            worst = (double)p->stages[s].peak_mem;
            cap = p->stages[s].capacity;
        }
    fprintf(f, "| %s | %d | %d | %g | %g | %s | %.2f | %.1f | %.1f %% / %.1f %% | %.1f %% | "
               "%.1f %% | %s (%.2f / %.2f GiB) |\n", model, p->K, p->M, p->batch, p->micro_batch,
            p->partition, p->step_s * 1e3, p->samples_per_s, p->bubble_sim * 100,
            p->bubble_analytic * 100, c->recomp_share * 100, c->imbalance * 100,
            p->fits ? "yes" : "**no**", worst / 1073741824.0, cap / 1073741824.0);
}

static void cell_text(FILE *f, const struct tp_cell *c)
{
    char e[32];
    const char *b = stu_paper_flag(c->norm, c->paper);
    if (isnan(c->paper))
        fprintf(f, " — | %.2f | n/a |", c->norm);
    else
        fprintf(f, " %g | %.2f | %s%s%s |", c->paper, c->norm, b,
                stu_paper_err(c->norm, c->paper, e, sizeof e), b);
}

static void free_cells(struct tp_cell *c, int n)
{
    for (int i = 0; i < n; i++)
        ana_prediction_free(c[i].p);
}

/* ---- Table 2 ---------------------------------------------------------- */

static const int t2_Ms[NM] = { 1, 4, 32 };

static void t2_data(FILE *f, const struct tp_cell cells[2][NM][NK])
{
    fprintf(f, "# K, then per model (AmoebaNet-D (18,256), Transformer-48) and M = 1, 4, 32:\n"
               "# predicted normalized throughput, the paper's\n");
    for (int k = 0; k < NK; k++) {
        fprintf(f, "%d", Ks[k]);
        for (int m = 0; m < 2; m++)
            for (int j = 0; j < NM; j++)
                fprintf(f, " %.4f %g", cells[m][j][k].norm, cells[m][j][k].paper);
        fputc('\n', f);
    }
}

static void t2_models(const struct stu_paper_ctx *c, struct tp_model models[2])
{
    models[0] = (struct tp_model){ "AmoebaNet-D (18, 256)", "amoebanet:L=18,D=256,keep=fused", 1,
                                   18, 256, 128, c->tpu2, "tpu-v2", 1 };
    models[1] = (struct tp_model){ "Transformer-48", "transformer:L=48,keep=fused", 0, 48, 0, 32,
                                   c->tpu3, "tpu-v3", 1 };
}

/* Every cell of Table 2 under the batch policy, normalized to K = 2, M = 1. */
static int t2_cells(const struct stu_paper_ctx *c, const struct tp_model models[2],
                    struct tp_cell cells[2][NM][NK])
{
    int rc = 0;
    for (int m = 0; m < 2 && rc == 0; m++) {
        struct mdl_profile *p;
        if ((rc = build(&models[m], &p)) < 0)
            break;
        for (int j = 0; j < NM && rc == 0; j++)
            for (int k = 0; k < NK && rc == 0; k++) {
                struct tp_cell *cl = &cells[m][j][k];
                rc = stu_paper_fit_batch(p, models[m].t, Ks[k], t2_Ms[j], models[m].start, 0,
                                         &cl->p);
                if (rc == 0) {
                    shares(cl);
                    cl->paper = c->ref.t2[m][j][k]; /* reference/table2.csv */
                }
            }
        mdl_profile_free(p);
        if (rc < 0)
            break;
        for (int j = 0; j < NM; j++)
            for (int k = 0; k < NK; k++)
                cells[m][j][k].norm = cells[m][j][k].p->samples_per_s /
                                      cells[m][0][0].p->samples_per_s;
    }
    return rc;
}

int stu_paper_t2_figures(const struct stu_paper_ctx *c, struct stu_t2_fig *f)
{
    struct tp_model models[2];
    static struct tp_cell cells[2][NM][NK];
    memset(cells, 0, sizeof cells);
    memset(f, 0, sizeof *f);
    t2_models(c, models);
    int rc = t2_cells(c, models, cells);
    for (int m = 0; m < 2; m++) {
        f->model[m] = models[m].name;
        f->spec[m] = models[m].spec;
        f->topo[m] = models[m].t;
        for (int j = 0; j < NM; j++)
            for (int k = 0; k < NK; k++) {
                f->K[k] = Ks[k];
                f->M[j] = t2_Ms[j];
                f->pred[m][j][k] = cells[m][j][k].norm;
                f->paper[m][j][k] = cells[m][j][k].paper;
                f->p[m][j][k] = cells[m][j][k].p; /* now f's */
            }
    }
    if (rc < 0)
        stu_t2_fig_release(f);
    return rc;
}

void stu_t2_fig_release(struct stu_t2_fig *f)
{
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < NM; j++)
            for (int k = 0; k < NK; k++) {
                ana_prediction_free(f->p[m][j][k]);
                f->p[m][j][k] = NULL;
            }
}

int stu_paper_table2(const struct stu_paper_ctx *c)
{
    struct tp_model models[2];
    static struct tp_cell cells[2][NM][NK];
    memset(cells, 0, sizeof cells);
    t2_models(c, models);
    int rc = t2_cells(c, models, cells);
    struct ps_afile af;
    if (rc < 0 || (rc = stu_paper_md_open(c, "table2.md", "Table 2 — normalized training "
                                          "throughput on TPUs", &af)) < 0)
        goto out_free_cells;
    FILE *f = af.f;
    stu_tmpl_put(f, c->tx[STU_TX_T2], "intro", NULL);
    fprintf(f, "| model | M | K=2 paper | predicted | error | K=4 paper | predicted | error | "
               "K=8 paper | predicted | error |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < NM; j++) {
            fprintf(f, "| %s | %d |", models[m].name, t2_Ms[j]);
            for (int k = 0; k < NK; k++)
                cell_text(f, &cells[m][j][k]);
            fputc('\n', f);
        }
    stu_tmpl_put(f, c->tx[STU_TX_T2], "plot", NULL);
    detail_header(f);
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < NM; j++)
            for (int k = 0; k < NK; k++)
                detail_row(f, models[m].name, &cells[m][j][k]);
    struct stu_t2_facts facts = { 0 };
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < NM; j++)
            for (int k = 0; k < NK; k++) {
                const struct tp_cell *cl = &cells[m][j][k];
                if (cl->recomp_share > facts.recomp_max[m])
                    facts.recomp_max[m] = cl->recomp_share;
                facts.norm[m][j][k] = cl->norm;
                facts.paper[m][j][k] = cl->paper;
                facts.batch[m][j][k] = cl->p->batch;
                facts.fits[m][j][k] = cl->p->fits;
                facts.imbalance[m][k] = j == NM - 1 ? cl->imbalance : facts.imbalance[m][k];
            }
    stu_paper_t2_notes(f, c->tx[STU_TX_T2], &facts);
    if ((rc = stu_paper_md_close(c, &af, 0)) < 0)
        goto out_free_cells;
    char *dat = NULL;
    size_t len = 0;
    FILE *mf = ps_memstream_open(&dat, &len);
    if (!mf) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out_free_cells;
    }
    t2_data(mf, (const struct tp_cell(*)[NM][NK])cells);
    if (ps_memstream_close(mf, &dat, &len) < 0)
        rc = ps_error(PS_ENOMEM, "out of memory");
    else if ((rc = stu_paper_write_text(c, "table2.dat", dat)) == 0 &&
        (rc = stu_paper_write_tmpl(c, "table2.gp", c->tx[STU_TX_T2GP], "script", NULL)) == 0)
        rc = stu_paper_plot(c, "table2.gp", "table2.png");
    free(dat);
out_free_cells:
    for (int m = 0; m < 2; m++)
        free_cells(&cells[m][0][0], NM * NK);
    return rc;
}

/* ---- Table 3 ---------------------------------------------------------- */

/* Seconds all of a step's activation and gradient transfers take one after
 * another (what a shared bus does with them). */
static double link_seconds(const struct mdl_profile *p, const struct mdl_topology *t,
                           const struct ana_prediction *r)
{
    double sum = 0;
    for (int s = 0; s + 1 < r->n_stages; s++) {
        int l = mdl_topology_link_between(t, r->stages[s].device, r->stages[s + 1].device);
        if (l < 0)
            continue;
        const struct ana_stage *st = &r->stages[s];
        double bytes = p->layers[st->first_layer + st->n_layers - 1].out_bytes * r->micro_batch;
        sum += 2.0 * r->M * (t->links[l].latency + bytes / t->links[l].bandwidth);
    }
    return sum;
}

static const struct tp_model t3_models[2] = {
    { "AmoebaNet-D (18, 128)", "amoebanet:L=18,D=128", 1, 18, 128, 128, NULL, "p100", 0 },
    { "Transformer-24", "transformer:L=24", 0, 24, 0, 32, NULL, "p100", 0 },
};

/* Every cell of Table 3 under the batch policy on c's P100 host, and on the
 * same GPUs with a dedicated link per stage pair (alt), normalized to
 * K = 2; the bus and normalization facts into x. */
static int t3_cells(const struct stu_paper_ctx *c, struct tp_cell cells[2][NK],
                    struct tp_cell alt[2][NK], struct stu_t3_facts *x)
{
    /* The same GPUs with a dedicated PCIe link between neighbouring stages:
     * how much the shared bus costs. */
    struct mdl_topology *chain;
    const struct mdl_link *bus = &c->p100->links[0];
    int rc = mdl_topology_chain(c->p100->n_devices, &c->p100->devices[0], bus->bandwidth,
                                bus->latency, &chain);
    if (rc < 0)
        return rc;
    chain->bytes_per_param = c->p100->bytes_per_param;
    for (int m = 0; m < 2 && rc == 0; m++) {
        struct tp_model md = t3_models[m];
        md.t = c->p100;
        struct mdl_profile *p;
        if ((rc = build(&md, &p)) < 0)
            break;
        for (int k = 0; k < NK && rc == 0; k++) {
            rc = stu_paper_fit_batch(p, md.t, Ks[k], 32, md.start, 0, &cells[m][k].p);
            if (rc == 0)
                rc = stu_paper_fit_batch(p, chain, Ks[k], 32, md.start, 0, &alt[m][k].p);
            if (rc == 0) {
                shares(&cells[m][k]);
                cells[m][k].paper = c->ref.t3[m][k]; /* table3.csv; NA: "—" */
                x->link_s[m][k] = link_seconds(p, md.t, cells[m][k].p);
            }
        }
        mdl_profile_free(p);
        if (rc < 0)
            break;
        for (int k = 0; k < NK; k++) {
            cells[m][k].norm = cells[m][k].p->samples_per_s / cells[m][0].p->samples_per_s;
            x->norm_dedicated[m][k] = alt[m][k].p->samples_per_s / alt[m][0].p->samples_per_s;
        }
    }
    for (int m = 0; m < 2 && rc == 0; m++)
        for (int k = 0; k < NK; k++) {
            const struct tp_cell *cl = &cells[m][k];
            x->norm[m][k] = cl->norm;
            x->paper[m][k] = cl->paper;
            x->bubble[m][k] = cl->p->bubble_sim;
            x->analytic[m][k] = cl->p->bubble_analytic;
            x->step_s[m][k] = cl->p->step_s;
            x->fits[m][k] = cl->p->fits;
            x->imbalance[m][k] = cl->imbalance;
        }
    mdl_topology_free(chain);
    return rc;
}

int stu_paper_t3_figures(const struct stu_paper_ctx *c, struct stu_t3_fig *f)
{
    static struct tp_cell cells[2][NK], alt[2][NK];
    memset(cells, 0, sizeof cells);
    memset(alt, 0, sizeof alt);
    memset(f, 0, sizeof *f);
    struct stu_t3_facts x = { 0 };
    int rc = t3_cells(c, cells, alt, &x);
    for (int m = 0; m < 2 && rc == 0; m++) {
        f->model[m] = t3_models[m].name;
        for (int k = 0; k < NK; k++) {
            f->K[k] = Ks[k];
            f->pred[m][k] = x.norm[m][k];
            f->paper[m][k] = x.paper[m][k];
            f->dedicated[m][k] = x.norm_dedicated[m][k];
            f->imbalance[m][k] = x.imbalance[m][k];
        }
    }
    free_cells(&cells[0][0], 2 * NK);
    free_cells(&alt[0][0], 2 * NK);
    return rc;
}

int stu_paper_table3(const struct stu_paper_ctx *c)
{
    static struct tp_cell cells[2][NK], alt[2][NK];
    memset(cells, 0, sizeof cells);
    memset(alt, 0, sizeof alt);
    struct stu_t3_facts facts = { 0 };
    int rc = t3_cells(c, cells, alt, &facts);
    struct ps_afile af;
    if (rc < 0 || (rc = stu_paper_md_open(c, "table3.md", "Table 3 — normalized training "
                                          "throughput on GPUs without a high-speed "
                                          "interconnect", &af)) < 0)
        goto out_free_cells;
    FILE *f = af.f;
    stu_tmpl_put(f, c->tx[STU_TX_T3], "intro", NULL);
    int with_paper = 0;
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < NK; k++)
            with_paper |= !isnan(c->ref.t3[m][k]);
    if (!with_paper)
        stu_tmpl_put(f, c->tx[STU_TX_T3], "no_paper", NULL);
    stu_tmpl_put(f, c->tx[STU_TX_T3], "policy", NULL);
    fprintf(f, "| model | M | K=2 paper | predicted | error | K=4 paper | predicted | error | "
               "K=8 paper | predicted | error |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < 2; m++) {
        fprintf(f, "| %s | 32 |", t3_models[m].name);
        for (int k = 0; k < NK; k++)
            cell_text(f, &cells[m][k]);
        fputc('\n', f);
    }
    stu_tmpl_put(f, c->tx[STU_TX_T3], "plot", NULL);
    detail_header(f);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < NK; k++)
            detail_row(f, t3_models[m].name, &cells[m][k]);
    stu_paper_t3_notes(f, c->tx[STU_TX_T3], &facts);
    if ((rc = stu_paper_md_close(c, &af, 0)) < 0)
        goto out_free_cells;
    char dat[1024];
    int n = snprintf(dat, sizeof dat, "# K, AmoebaNet-D (18,128) predicted, paper, "
                                      "Transformer-24 predicted, paper (? = not available)\n");
    for (int k = 0; k < NK; k++) {
        n += snprintf(dat + n, sizeof dat - (size_t)n, "%d", Ks[k]);
        for (int m = 0; m < 2; m++) {
            n += snprintf(dat + n, sizeof dat - (size_t)n, " %.4f", cells[m][k].norm);
            if (isnan(cells[m][k].paper))
                n += snprintf(dat + n, sizeof dat - (size_t)n, " ?");
            else
                n += snprintf(dat + n, sizeof dat - (size_t)n, " %g", cells[m][k].paper);
        }
        n += snprintf(dat + n, sizeof dat - (size_t)n, "\n");
    }
    const stu_tmpl *gp = c->tx[STU_TX_T3GP];
    struct stu_vals v;
    stu_vals_init(&v);
    stu_vals_set(&v, "paper_lines", "%s", "");
    stu_vals_set(&v, "paper_note", "%s", "");
    if (with_paper)
        stu_vals_text(&v, "paper_lines", gp, "paper_lines", NULL);
    else
        stu_vals_text(&v, "paper_note", gp, "no_paper_note", NULL);
    if ((rc = stu_paper_write_text(c, "table3.dat", dat)) == 0 &&
        (rc = stu_paper_write_tmpl(c, "table3.gp", gp, "script", &v)) == 0)
        rc = stu_paper_plot(c, "table3.gp", "table3.png");
out_free_cells:
    free_cells(&cells[0][0], 2 * NK);
    free_cells(&alt[0][0], 2 * NK);
    return rc;
}
