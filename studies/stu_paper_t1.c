/* Table 1: for each K the largest model whose every stage fits device
 * memory under GPipe, and the paper's own configurations evaluated, beside
 * the paper's parameters, parameter memory and peak activation memory. */
#include "studies/stu_paper_int.h"
#include "studies/stu_paper_text.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The paper's Table 1, from <data>/reference/table1.csv (stu_ref.h): memory
 * in bytes, AmoebaNet's printed in GB (1e9), the Transformer's in GiB. */
#define GB 1e9
#define GIB 1073741824.0
#define NCOL STU_REF_NCOL
#define t1_col stu_ref_t1

struct t1_res {
    int L, D, M, fits, capped;
    double params, pmem, act, worst, cap; /* worst: largest stage peak */
};

/* Micro-batches: the largest divisor of the mini-batch not above 4K (or,
 * with all, the whole mini-batch: micro-batches of one sample). */
static int policy_m(int K, int naive, int all, int batch)
{
    if (naive)
        return 1;
    if (all)
        return batch;
    int m = 4 * K < batch ? 4 * K : batch;
    while (batch % m)
        m--;
    return m;
}

/* One configuration: generate, partition by memory, simulate, sum. */
static int eval_cfg(const struct mdl_topology *t, int amoeba, int L, int D, int K, int naive,
                    int all, int batch, struct t1_res *r)
{
    memset(r, 0, sizeof *r);
    struct mdl_profile *p = NULL;
    struct sch_partition *part = NULL;
    struct ana_prediction *pred = NULL;
    int rc = amoeba ? stu_paper_amoeba(L, D, 1, &p) : stu_paper_transformer(L, 1, &p);
    if (rc < 0)
        return rc;
    r->L = L;
    r->D = D;
    r->M = policy_m(K, naive, all, batch);
    enum sch_remat remat = naive ? SCH_REMAT_NEVER : SCH_REMAT_ALWAYS;
    rc = stu_paper_gpipe_part(p, t, K, r->M, (double)batch / r->M, remat, &part);
    if (rc < 0)
        goto out_free;
    if ((rc = stu_paper_eval(p, t, K, r->M, batch, remat, part, 0, &pred)) < 0)
        goto out_free;
    r->params = mdl_profile_params(p);
    r->fits = pred->fits;
    for (int s = 0; s < pred->n_stages; s++) {
        const struct ana_stage *st = &pred->stages[s];
        r->pmem += (double)st->static_mem;
        r->act += (double)st->peak_act;
        if ((double)st->peak_mem / st->capacity > r->worst / (r->cap ? r->cap : 1)) {
            r->worst = (double)st->peak_mem;
            r->cap = st->capacity;
        }
    }
out_free:
    ana_prediction_free(pred);
    sch_partition_free(part);
    mdl_profile_free(p);
    return rc;
}

/* The configuration of search step v: D = 8v for AmoebaNet (L from the
 * column), L = v for the Transformer. */
static int eval_step(const struct mdl_topology *t, const struct t1_col *col, int amoeba, int all,
                     int batch, int v, struct t1_res *r)
{
    return eval_cfg(t, amoeba, amoeba ? col->L : v, amoeba ? 8 * v : 0, col->K, col->naive, all,
                    batch, r);
}

/* The largest step v in [lo, cap] whose model fits; memory grows with v, so
 * double until one does not fit, then bisect. best->fits = 0 if none does. */
static int search(const struct mdl_topology *t, const struct t1_col *col, int amoeba,
                  int all, int batch, struct t1_res *best)
{
    int lo = amoeba ? 1 : (col->K > 3 ? col->K - 2 : 1); /* a layer per stage */
    int cap = amoeba ? 1024 : 1 << 16, hi;
    struct t1_res r;
    int rc = eval_step(t, col, amoeba, all, batch, lo, &r);
    if (rc < 0)
        return rc;
    *best = r;
    if (!r.fits)
        return 0;
    for (hi = lo * 2;; hi *= 2) {
        if (hi > cap) {
            hi = cap + 1;
            break;
        }
        if ((rc = eval_step(t, col, amoeba, all, batch, hi, &r)) < 0)
            return rc;
        if (!r.fits)
            break;
        lo = hi;
        *best = r;
    }
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if ((rc = eval_step(t, col, amoeba, all, batch, mid, &r)) < 0)
            return rc;
        if (r.fits) {
            lo = mid;
            *best = r;
        } else {
            hi = mid;
        }
    }
    best->capped = lo == cap;
    return 0;
}

static const char *count(double v, char *buf, size_t n)
{
    if (v >= 1e9)
        snprintf(buf, n, "%.2fB", v / 1e9);
    else
        snprintf(buf, n, "%.1fM", v / 1e6);
    return buf;
}

static const char *mem(double v, double unit, char *buf, size_t n)
{
    snprintf(buf, n, "%.2f", v / unit);
    return buf;
}

static const char *cfg(int L, int D, char *buf, size_t n)
{
    if (D)
        snprintf(buf, n, "(%d, %d)", L, D);
    else
        snprintf(buf, n, "L = %d", L);
    return buf;
}

/* One "paper | predicted | error" triple, the error bold past 10 %. */
static void triple(FILE *f, const char *paper, const char *pred, double pv, double vv)
{
    char e[32];
    const char *b = stu_paper_flag(pv, vv);
    fprintf(f, " %s | %s | %s%s%s |", paper, pred, b, stu_paper_err(pv, vv, e, sizeof e), b);
}

struct t1_model {
    const char *title, *unit_name;
    const struct t1_col *cols;
    const struct mdl_topology *t;
    int amoeba, batch;
    double unit;
    struct t1_res best[NCOL], at[NCOL], best_all[NCOL];
};

static void write_tables(FILE *f, const struct t1_model *m)
{
    char a[64], b[64], c[64], d[64];
    const char *u = m->unit_name;
    fprintf(f, "### %s: largest model that fits\n\n", m->title);
    fprintf(f, "| column | K | M | paper config | predicted config | params paper | predicted | "
               "error | param memory paper (%s) | predicted | error | peak activation paper (%s)"
               " | predicted | error |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
            u, u);
    for (int i = 0; i < NCOL; i++) {
        const struct t1_col *col = &m->cols[i];
        const struct t1_res *r = &m->best[i];
        fprintf(f, "| %s | %d | %d | %s |", col->name, col->K, r->M, cfg(col->L, col->D, a, 64));
        if (!r->fits) { /* the header's 14 cells: the paper's figures, none predicted */
            fprintf(f, " none fits | %s | n/a | n/a | %s | n/a | n/a | %s | n/a | n/a |\n",
                    count(col->params, a, 64), mem(col->pmem, m->unit, c, 64),
                    mem(col->act, m->unit, d, 64));
            continue;
        }
        fprintf(f, " %s%s |", r->capped ? ">= " : "", cfg(r->L, r->D, b, 64));
        triple(f, count(col->params, a, 64), count(r->params, b, 64), r->params, col->params);
        triple(f, mem(col->pmem, m->unit, c, 64), mem(r->pmem, m->unit, d, 64), r->pmem,
               col->pmem);
        triple(f, mem(col->act, m->unit, c, 64), mem(r->act, m->unit, d, 64), r->act, col->act);
        fputc('\n', f);
    }
    fprintf(f, "\n### %s: the paper's configurations\n\n", m->title);
    fprintf(f, "| column | config | M | params paper | predicted | error | param memory paper "
               "(%s) | predicted | error | peak activation paper (%s) | predicted | error | "
               "fullest stage / capacity | fits |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n", u, u);
    for (int i = 0; i < NCOL; i++) {
        const struct t1_col *col = &m->cols[i];
        const struct t1_res *r = &m->at[i];
        fprintf(f, "| %s | %s | %d |", col->name, cfg(col->L, col->D, a, 64), r->M);
        triple(f, count(col->params, a, 64), count(r->params, b, 64), r->params, col->params);
        triple(f, mem(col->pmem, m->unit, c, 64), mem(r->pmem, m->unit, d, 64), r->pmem,
               col->pmem);
        triple(f, mem(col->act, m->unit, c, 64), mem(r->act, m->unit, d, 64), r->act, col->act);
        fprintf(f, " %.2f / %.2f GiB | %s |\n", r->worst / GIB, r->cap / GIB,
                r->fits ? "yes" : "no");
    }
    fputc('\n', f);
}

/* Activation bytes per sample kept without re-materialization. */
static int stash_per_sample(int amoeba, int L, int D, double *out)
{
    struct mdl_profile *p;
    int rc = amoeba ? stu_paper_amoeba(L, D, 1, &p) : stu_paper_transformer(L, 1, &p);
    if (rc < 0)
        return rc;
    *out = 0;
    for (int l = 0; l < p->n_layers; l++) /* one stage: shared tensors once */
        *out += p->layers[l].stash_bytes - p->layers[l].stash_shared_bytes;
    mdl_profile_free(p);
    return 0;
}

static void sensitivity(FILE *f, const struct t1_model *m)
{
    char a[64], b[64], c[64], d[64];
    fprintf(f, "| %s | largest, M per the policy | params | largest, micro-batches of 1 "
               "(M = %d) | params |\n|---|---|---|---|---|\n", m->amoeba ? "AmoebaNet-D"
               : "Transformer", m->batch);
    for (int i = 1; i < NCOL; i++) {
        const struct t1_res *r = &m->best[i], *q = &m->best_all[i];
        fprintf(f, "| %s | %s | %s | %s | %s |\n", m->cols[i].name,
                r->fits ? cfg(r->L, r->D, a, 64) : "none", r->fits ? count(r->params, b, 64) : "",
                q->fits ? cfg(q->L, q->D, c, 64) : "none", q->fits ? count(q->params, d, 64) : "");
    }
    fputc('\n', f);
}

/* One deviations row per cell past 10 %, with the note that explains it. */
static void deviation_rows(FILE *f, const struct t1_model *m)
{
    static const char *const qname[3] = { "parameters", "parameter memory",
                                          "peak activation memory" };
    char e[32];
    for (int which = 0; which < 2; which++)
        for (int i = 0; i < NCOL; i++) {
            const struct t1_col *col = &m->cols[i];
            const struct t1_res *r = which ? &m->at[i] : &m->best[i];
            if (!r->fits && !which)
                continue;
            double pv[3] = { r->params, r->pmem, r->act };
            double vv[3] = { col->params, col->pmem, col->act };
            for (int q = 0; q < 3; q++) {
                if (!*stu_paper_flag(pv[q], vv[q]))
                    continue;
                const char *note;
                if (which == 0)
                    note = q < 2 ? "D" : "E";
                else if (q == 0)
                    note = "-";
                else if (q == 1)
                    note = "C";
                else
                    note = pv[q] > vv[q] ? "A" : "B";
                fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", m->amoeba ? "AmoebaNet-D"
                        : "Transformer", which ? "paper's configuration" : "largest that fits",
                        col->name, qname[q], stu_paper_err(pv[q], vv[q], e, sizeof e), note);
            }
        }
}

static void notes(FILE *f, const stu_tmpl *tx, const struct t1_model *ms, double s_amoeba,
                  double s_tf)
{
    const struct t1_model *am = &ms[0], *tf = &ms[1];
    const struct t1_col *acol = am->cols, *tcol = tf->cols;
    double pa = acol[0].act / 128, pt = tcol[0].act / 32;
    struct stu_vals v;
    stu_tmpl_put(f, tx, "deviations", NULL);
    deviation_rows(f, am);
    deviation_rows(f, tf);
    stu_vals_init(&v);
    stu_vals_set(&v, "a_stash_mb", "%.1f", s_amoeba / 1e6);
    stu_vals_set(&v, "t_stash_mib", "%.1f", s_tf / 1048576);
    stu_vals_set(&v, "a_paper_mb", "%.1f", pa / 1e6);
    stu_vals_set(&v, "t_paper_mib", "%.1f", pt / 1048576);
    stu_vals_set(&v, "a_ratio", "%.1f", s_amoeba / pa);
    stu_vals_set(&v, "t_ratio", "%.1f", s_tf / pt);
    stu_vals_set(&v, "a_bf16", "%.2f", s_amoeba / pa / 2);
    stu_vals_set(&v, "t_bf16", "%.2f", s_tf / pt / 2);
    stu_vals_set(&v, "b_images", "%d", 128 / am->at[4].M);
    stu_vals_set(&v, "b_amoeba", "%.2f", am->at[4].act / 8 / GB);
    stu_vals_set(&v, "b_amoeba_paper", "%.2f", acol[4].act / 8 / GB);
    stu_vals_set(&v, "b_tf", "%.2f", tf->at[2].act / 8 / GIB);
    stu_vals_set(&v, "b_tf_paper", "%.2f", tcol[2].act / 8 / GIB);
    stu_vals_set(&v, "b_tf_p1", "%.2f", tcol[1].act / GIB);
    char cols[512] = "";
    for (int i = 0; i < NCOL; i++)
        snprintf(cols + strlen(cols), sizeof cols - strlen(cols), "%s %s %.2f GB (paper %.2f GB)",
                 i ? "," : "", acol[i].name, 12 * acol[i].params / GB, acol[i].pmem / GB);
    stu_vals_set(&v, "c_columns", "%s", cols);
    stu_vals_set(&v, "c_ratio", "%.2f", acol[4].pmem / (12 * acol[4].params));
    stu_tmpl_put(f, tx, "notes", &v);
    sensitivity(f, am);
    sensitivity(f, tf);
}

/* Every cell of Table 1: the search for the largest model that fits (with
 * the micro-batch policy and with micro-batches of one) and the paper's
 * configurations evaluated. */
static int t1_cells(const struct stu_paper_ctx *c, struct t1_model models[2])
{
    models[0] = (struct t1_model){ "AmoebaNet-D (L, D), TPUv2 8 GiB per core, mini-batch 128",
                                   "GB", c->ref.t1[0], c->tpu2, 1, 128, GB, { { 0 } }, { { 0 } },
                                   { { 0 } } };
    models[1] = (struct t1_model){ "Transformer-L, TPUv3 16 GiB per core, mini-batch 32", "GiB",
                                   c->ref.t1[1], c->tpu3, 0, 32, GIB, { { 0 } }, { { 0 } },
                                   { { 0 } } };
    int rc;
    for (int m = 0; m < 2; m++) {
        struct t1_model *md = &models[m];
        for (int i = 0; i < NCOL; i++) {
            const struct t1_col *col = &md->cols[i];
            const char *mname = md->amoeba ? "AmoebaNet-D" : "Transformer";
            /* what the row's figures cannot run (more stages than the topology's
             * devices): the reference file's error, with its line (it named a -K
             * the user never gave) */
            if (col->K > md->t->n_devices)
                return ps_error(PS_EPARSE, "%s:%d: %s %s (K = %d, L = %d): cannot be "
                                "predicted: %d stages, %s has %d devices", c->ref.t1_path,
                                col->line, mname, col->name, col->K, col->L, col->K,
                                md->t->name, md->t->n_devices);
            if ((rc = search(md->t, col, md->amoeba, 0, md->batch, &md->best[i])) < 0 ||
                (rc = search(md->t, col, md->amoeba, 1, md->batch, &md->best_all[i])) < 0 ||
                (rc = eval_cfg(md->t, md->amoeba, col->L, col->D, col->K, col->naive, 0,
                               md->batch, &md->at[i])) < 0) {
                if (rc == -PS_ENOMEM)
                    return rc;
                /* the row's figures were checked on load, and K against the
                 * devices above: what the engine refuses now is the topology's
                 * (a device's figures, helper-103: a flops of 1e-3 was blamed on
                 * table1.csv, exit 3), with its own code, the row as context */
                char msg[PS_ERRMSG_MAX];
                snprintf(msg, sizeof msg, "%s", ps_errmsg());
                return ps_error(ps_errcode(), "%s: %s (predicting %s %s, K = %d, L = %d, of "
                                "%s:%d)", md->t->path ? md->t->path : md->t->name, msg, mname,
                                col->name, col->K, col->L, c->ref.t1_path, col->line);
            }
        }
    }
    return 0;
}

int stu_paper_t1_figures(const struct stu_paper_ctx *c, struct stu_t1_fig *f)
{
    static struct t1_model models[2];
    memset(f, 0, sizeof *f);
    int rc = t1_cells(c, models);
    if (rc < 0)
        return rc;
    static const char *const names[2] = { "AmoebaNet-D", "Transformer" };
    for (int m = 0; m < 2; m++) {
        f->model[m] = names[m];
        for (int i = 0; i < NCOL; i++) {
            const struct t1_col *col = &models[m].cols[i];
            const struct t1_res *b = &models[m].best[i];
            struct stu_t1_col_fig *w = &f->col[m][i];
            snprintf(w->name, sizeof w->name, "%s", col->name);
            w->K = col->K;
            w->L = col->L;
            w->D = col->D;
            w->params_paper = col->params;
            w->params_at = models[m].at[i].params;
            w->largest_fits = b->fits;
            w->largest_capped = b->capped;
            w->largest_L = b->L;
            w->largest_D = b->D;
            w->params_largest = b->params;
        }
    }
    return 0;
}

int stu_paper_table1(const struct stu_paper_ctx *c)
{
    static struct t1_model models[2];
    int rc = t1_cells(c, models);
    if (rc < 0)
        return rc;
    double s_amoeba, s_tf;
    if ((rc = stash_per_sample(1, 18, 208, &s_amoeba)) < 0 ||
        (rc = stash_per_sample(0, 3, 0, &s_tf)) < 0)
        return rc;
    struct ps_afile af;
    if ((rc = stu_paper_md_open(c, "table1.md", "Table 1 — maximum model size", &af)) < 0)
        return rc;
    stu_tmpl_put(af.f, c->tx[STU_TX_T1], "intro", NULL);
    for (int m = 0; m < 2; m++)
        write_tables(af.f, &models[m]);
    notes(af.f, c->tx[STU_TX_T1], models, s_amoeba, s_tf);
    return stu_paper_md_close(c, &af, 0);
}
