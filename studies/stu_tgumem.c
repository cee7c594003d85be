/* torchgpipe's U-Net (B, C) memory benchmark (stu_tgumem.h): the reference
 * rows, their predictions, unet-memory.md and .csv. */
#include "studies/stu_tgumem.h"
#include "studies/stu_tgmem.h"
#include "studies/stu_csv.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C_EXP, C_N, C_B, C_C, C_BATCH, C_CHUNKS, C_BALANCE, C_CKPT, C_PARAMS, C_MEM, NCOL };
static const char *const cols[NCOL] = { "experiment", "n", "B", "C", "batch", "chunks",
                                        "balance", "checkpoint", "params_millions",
                                        "memory_gib" };
/* Bounds a reference row must keep, so that a row the loader accepts is
 * one the generator and the engine take (the benchmark's own rows are far
 * inside them). */
#define MAX_N 8
#define MAX_BATCH 4096
#define MAX_B 100
#define MAX_C 1024

static int row(const struct stu_csv *c, struct stu_tgu_ref *r)
{
    if (r->n_rows == STU_TGU_MAXROW)
        return ps_error(PS_EPARSE, "%s:%d: more than %d rows", c->path, c->line, STU_TGU_MAXROW);
    struct stu_tgu_row *w = &r->row[r->n_rows];
    memset(w, 0, sizeof *w);
    w->line = c->line;
    int rc, k, total;
    if ((rc = stu_csv_whole(c, C_N, 1, MAX_N, &w->n)) < 0 ||
        (rc = stu_csv_whole(c, C_B, 1, MAX_B, &w->B)) < 0 ||
        (rc = stu_csv_whole(c, C_C, 2, MAX_C, &w->C)) < 0 ||
        (rc = stu_csv_whole(c, C_BATCH, 1, MAX_BATCH, &w->batch)) < 0 ||
        (rc = stu_csv_whole(c, C_CHUNKS, 1, MAX_BATCH, &w->chunks)) < 0 ||
        (rc = stu_csv_key(c, C_CKPT, stu_tg_ckpt_names, 3, &k)) < 0 ||
        (rc = stu_csv_range(c, C_PARAMS, 1e-3, 1e6, &w->params_m)) < 0 ||
        (rc = stu_csv_range(c, C_MEM, 1e-3, 1e4, &w->mem_gib)) < 0 ||
        (rc = stu_tg_balance(c, C_BALANCE, w->n, "n", w->balance, sizeof w->balance,
                                   &total)) < 0)
        return rc;
    w->remat = stu_tg_ckpt_modes[k];
    int size, count;
    stu_tg_chunks(w->batch, w->chunks, &size, &count);
    if (w->batch % size)
        return stu_csv_bad(c, C_CHUNKS, "%d chunks cut %d samples into chunks of %d and a "
                           "smaller last one (the engine runs equal micro-batches)", w->chunks,
                           w->batch, size);
    if (total != 44 * w->B + 21)
        return stu_csv_bad(c, C_BALANCE, "%d layers; U-Net (%d, %d) has 44 B + 21 = %d",
                           total, w->B, w->C, 44 * w->B + 21);
    if ((rc = stu_tgm_exp_check(c, C_EXP, w->n, w->chunks, k, w->exp, sizeof w->exp)) < 0)
        return rc;
    for (int i = 0; i < r->n_rows; i++)
        if (!strcmp(r->row[i].exp, w->exp))
            return stu_csv_bad(c, C_EXP, "a second row %s (line %d)", w->exp, r->row[i].line);
    r->n_rows++;
    return 0;
}

int stu_tgu_ref_load(const char *dir, struct stu_tgu_ref *r)
{
    memset(r, 0, sizeof *r);
    struct stu_csv c;
    int rc = stu_csv_open(&c, dir, STU_TGU_FILE ".csv", cols, NCOL);
    if (rc < 0)
        return rc;
    snprintf(r->path, sizeof r->path, "%s", c.path);
    while ((rc = stu_csv_row(&c)) > 0)
        if ((rc = row(&c, r)) < 0)
            break;
    if (rc == 0 && r->n_rows == 0)
        rc = ps_error(PS_EPARSE, "%s:%d: no rows", c.path, c.line);
    stu_csv_close(&c);
    return rc;
}

void stu_tgu_run_free(struct stu_tgu_run *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n; i++)
        ana_prediction_free(r->cell[i].p);
    mdl_topology_free(r->topo);
    free(r);
}

static int predict_row(struct stu_tgu_run *r, int i)
{
    const struct stu_tgu_row *w = &r->ref.row[i];
    struct stu_tgu_cell *c = &r->cell[i];
    c->ref = w;
    stu_tg_chunks(w->batch, w->chunks, &c->size, &c->M); /* equal: the loader checked */
    char model[96];
    snprintf(model, sizeof model, "unet:convs=%d,channels=%d", w->B, w->C);
    c->remat = stu_tg_remat_run(w->remat, w->chunks, c->M);
    int rc = stu_tgm_predict_one(r->topo, r->ref.path, w->line, w->exp, model, w->balance,
                                 w->n, c->M, w->batch, c->remat, &c->p);
    if (rc < 0)
        return rc;
    double total, fullest;
    stu_tgm_peaks(c->p, &total, &fullest);
    c->params = c->p->model_params;
    c->model_gib = r->topo->bytes_per_param * c->params / PS_GIB;
    c->mem_gib = total / PS_GIB;
    c->fullest_gib = fullest / PS_GIB;
    c->err_params = c->params / (w->params_m * 1e6) - 1;
    c->err_mem = c->mem_gib / w->mem_gib - 1;
    return 0;
}

int stu_tgu_predict(const struct stu_tg_opts *o, struct stu_tgu_run **out)
{
    *out = NULL;
    struct stu_tgu_run *r = calloc(1, sizeof *r);
    if (!r)
        return ps_error(PS_ENOMEM, "out of memory");
    char ref[4096];
    int rc = stu_tg_topology(o, STU_TGU_BYTES_PER_PARAM, &r->topo, r->h_topo);
    if (rc < 0)
        goto err_free_run;
    if ((rc = stu_tg_data_sub(o, "reference", ref, sizeof ref)) < 0 ||
        (rc = stu_tgu_ref_load(ref, &r->ref)) < 0 ||
        (rc = ps_file_hash(r->ref.path, r->h_ref)) < 0)
        goto err_free_run;
    for (r->n = 0; r->n < r->ref.n_rows; r->n++)
        if ((rc = predict_row(r, r->n)) < 0) {
            r->n++; /* its prediction, if any, is freed with the others */
            goto err_free_run;
        }
    *out = r;
    return 0;
err_free_run:
    stu_tgu_run_free(r);
    return rc;
}

/* ---- the outputs ------------------------------------------------------ */

const struct stu_tmpl_sect stu_tgu_text[STU_TGU_NTEXT] = {
    { "intro", "topo_name memory bpp" },
    { "rows", "" },
    { "per_gpu", "" },
    { "deviations", "" },
    { "deviations_none", "" },
    { "notes", "" },
};

static void stamp(FILE *f, const struct stu_tgu_run *r, const char *open, const char *cont,
                  const char *close)
{
    stu_tg_stamp(f, open, cont, close, r->h_topo, STU_TGU_FILE, r->h_ref,
                 "models unet:convs=B,channels=C generated from their architecture "
                 "(models/mdl_unet.h)", "unet-memory", "a4710261");
}

static void rows(FILE *f, const struct stu_tgu_run *r)
{
    char e1[32], e2[32];
    fprintf(f, "| experiment | n (K) | U-Net (B, C) | layers | balance | chunks: M x size | "
               "checkpoint | parameters measured | predicted | error | memory usage measured "
               "(GiB) | predicted | error | of it, parameters and gradients (GiB) | fullest "
               "GPU / capacity (GiB) | fits |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgu_cell *c = &r->cell[i];
        const struct stu_tgu_row *w = c->ref;
        char ck[64];
        if (c->remat != w->remat) /* stu_tg_remat_run */
            snprintf(ck, sizeof ck, "%s (as run: %s)", stu_tg_remat_name(w->remat),
                     stu_tg_remat_name(c->remat));
        else
            snprintf(ck, sizeof ck, "%s", stu_tg_remat_name(w->remat));
        fprintf(f, "| %s | %d | (%d, %d) | %d | %s | %d: %d x %d | %s | %.1fM | %.1fM | %s | "
                   "%.1f | %.2f | %s | %.2f | %.2f / %.2f | %s |\n", w->exp, w->n, w->B, w->C,
                44 * w->B + 21, w->balance, w->chunks, c->M, c->size, ck, w->params_m,
                c->params / 1e6,
                stu_tg_pct(c->err_params, e1, sizeof e1), w->mem_gib, c->mem_gib,
                stu_tg_pct(c->err_mem, e2, sizeof e2), c->model_gib, c->fullest_gib,
                c->p->stages[0].capacity / PS_GIB, c->p->fits ? "yes" : "**no**");
    }
}

static void per_gpu(FILE *f, const struct stu_tgu_run *r)
{
    fprintf(f, "| experiment | per GPU, predicted: parameters and gradients + activations = "
               "peak (GiB) | measured - predicted, per GPU (GiB) |\n|---|---|---|\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgu_cell *c = &r->cell[i];
        fprintf(f, "| %s | ", c->ref->exp);
        stu_tgm_stage_list(f, c->p);
        fprintf(f, " | %+.2f |\n", (c->ref->mem_gib - c->mem_gib) / c->ref->n);
    }
}

static void md(FILE *f, const struct stu_tgu_run *r, const stu_tmpl *tx)
{
    stamp(f, r, "<!-- ", "     ", " -->");
    fprintf(f, "\n# torchgpipe — U-Net (B, C) memory on Tesla P40s\n\n");
    struct stu_vals v;
    stu_vals_init(&v);
    stu_vals_set(&v, "topo_name", "%s", r->topo->name);
    stu_vals_set(&v, "memory", "%.2f", r->topo->devices[0].memory / PS_GIB);
    stu_vals_set(&v, "bpp", "%g", r->topo->bytes_per_param);
    stu_tmpl_put(f, tx, "intro", &v);
    stu_tmpl_put(f, tx, "rows", NULL);
    rows(f, r);
    stu_tmpl_put(f, tx, "per_gpu", NULL);
    per_gpu(f, r);
    int n_dev = 0;
    for (int i = 0; i < r->n; i++)
        n_dev += (fabs(r->cell[i].err_params) > 0.10) + (fabs(r->cell[i].err_mem) > 0.10) +
                 !r->cell[i].p->fits;
    stu_tmpl_put(f, tx, "deviations", NULL);
    if (!n_dev) {
        stu_tmpl_put(f, tx, "deviations_none", NULL);
    } else {
        fprintf(f, "| experiment | figure | measured | predicted | error | note |\n"
                   "|---|---|---|---|---|---|\n");
        for (int i = 0; i < r->n; i++) {
            const struct stu_tgu_cell *c = &r->cell[i];
            const struct stu_tgu_row *w = c->ref;
            if (fabs(c->err_params) > 0.10)
                fprintf(f, "| %s | parameters | %.1fM | %.1fM | %+.1f %% | B |\n", w->exp,
                        w->params_m, c->params / 1e6, 100 * c->err_params);
            if (fabs(c->err_mem) > 0.10)
                fprintf(f, "| %s | memory usage | %.1f GiB | %.2f GiB | %+.1f %% | %s |\n",
                        w->exp, w->mem_gib, c->mem_gib, 100 * c->err_mem,
                        c->err_mem < 0 ? "A" : (w->n > 1 ? "C, D" : "C"));
            if (!c->p->fits)
                fprintf(f, "| %s | fits its P40s | yes | no | - | C |\n", w->exp);
        }
    }
    stu_tmpl_put(f, tx, "notes", NULL);
}

static void csv(FILE *f, const struct stu_tgu_run *r)
{
    stamp(f, r, "# ", "# ", "");
    fprintf(f, "experiment,n,B,C,batch,chunks,micro_batches,micro_batch_size,balance,"
               "checkpoint,checkpoint_run,measured_params_millions,predicted_params_millions,params_error_pct,"
               "measured_memory_gib,predicted_memory_gib,memory_error_pct,"
               "predicted_param_grad_gib,fullest_gib,fits\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgu_cell *c = &r->cell[i];
        const struct stu_tgu_row *w = c->ref;
        char bal[128];
        stu_tg_balance_csv(w->balance, bal, sizeof bal);
        fprintf(f, "%s,%d,%d,%d,%d,%d,%d,%d,%s,%s,%s,%.1f,%.3f,%.2f,%.1f,%.4f,%.2f,%.4f,%.4f,"
                   "%d\n", w->exp, w->n, w->B, w->C, w->batch, w->chunks, c->M, c->size, bal,
                stu_tg_remat_name(w->remat), stu_tg_remat_name(c->remat), w->params_m, c->params / 1e6,
                100 * c->err_params, w->mem_gib, c->mem_gib, 100 * c->err_mem, c->model_gib,
                c->fullest_gib, c->p->fits);
    }
}

static void md_fn(FILE *f, const void *arg)
{
    const void *const *a = arg;
    md(f, a[0], a[1]);
}

static void csv_fn(FILE *f, const void *arg)
{
    csv(f, ((const void *const *)arg)[0]);
}

int stu_tgu_write(const struct stu_tg_opts *o, const struct stu_tgu_run *r, const stu_tmpl *tx)
{
    const void *arg[2] = { r, tx };
    return stu_tgm_write_pair(o, STU_TGU_FILE, md_fn, csv_fn, arg);
}
