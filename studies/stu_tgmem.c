/* torchgpipe's AmoebaNet-D (L, D) memory benchmark (stu_tgmem.h): the
 * reference rows, their predictions, amoebanetd-memory.md and .csv. */
#include "studies/stu_tgmem.h"
#include "studies/stu_csv.h"
#include "studies/stu_data.h"
#include "models/mdl_gen.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_util.h"
#include "base/ps_afile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C_EXP, C_N, C_L, C_D, C_BATCH, C_CHUNKS, C_BALANCE, C_CKPT, C_PARAMS, C_MODEL, C_ACT,
       NCOL };
static const char *const cols[NCOL] = { "experiment", "n", "L", "D", "batch", "chunks",
                                        "balance", "checkpoint", "params_millions",
                                        "model_memory_gib", "peak_activation_gib" };
/* Bounds a reference row must keep, so that a row the loader accepts is
 * one the generator and the engine take (the benchmark's own rows are far
 * inside them): 8 GPUs, batch and chunks as main.py sets them. */
#define MAX_N 8
#define MAX_BATCH 4096
#define MAX_L 300
#define MAX_D 4096

/* peak_activation_gib: a figure in (1e-3, 1e4] GiB, or oom. */
static int activation(const struct stu_csv *c, double *v, int *oom)
{
    *oom = !strcmp(stu_csv_field(c, C_ACT), "oom");
    *v = 0;
    if (*oom)
        return 0;
    int rc = stu_csv_num(c, C_ACT, 0, v);
    if (rc == 0 && !(*v > 1e-3 && *v <= 1e4))
        rc = stu_csv_bad(c, C_ACT, "%g is not in (0.001, 10000] GiB, nor oom", *v);
    return rc;
}

static int row(const struct stu_csv *c, struct stu_tgm_ref *r)
{
    if (r->n_rows == STU_TGM_MAXROW)
        return ps_error(PS_EPARSE, "%s:%d: more than %d rows", c->path, c->line, STU_TGM_MAXROW);
    struct stu_tgm_row *w = &r->row[r->n_rows];
    memset(w, 0, sizeof *w);
    w->line = c->line;
    int rc, k, total;
    if ((rc = stu_csv_whole(c, C_N, 1, MAX_N, &w->n)) < 0 ||
        (rc = stu_csv_whole(c, C_L, 3, MAX_L, &w->L)) < 0 ||
        (rc = stu_csv_whole(c, C_D, 8, MAX_D, &w->D)) < 0 ||
        (rc = stu_csv_whole(c, C_BATCH, 1, MAX_BATCH, &w->batch)) < 0 ||
        (rc = stu_csv_whole(c, C_CHUNKS, 1, MAX_BATCH, &w->chunks)) < 0 ||
        (rc = stu_csv_key(c, C_CKPT, stu_tg_ckpt_names, 3, &k)) < 0 ||
        (rc = stu_csv_range(c, C_PARAMS, 1e-3, 1e6, &w->params_m)) < 0 ||
        (rc = stu_csv_range(c, C_MODEL, 1e-3, 1e4, &w->model_gib)) < 0 ||
        (rc = activation(c, &w->act_gib, &w->oom)) < 0 ||
        (rc = stu_tg_balance(c, C_BALANCE, w->n, "n", w->balance, sizeof w->balance,
                                   &total)) < 0)
        return rc;
    w->remat = stu_tg_ckpt_modes[k];
    if (w->L % 3)
        return stu_csv_bad(c, C_L, "must be a multiple of 3 (AmoebaNet-D's normal cells)");
    if (w->D % 8)
        return stu_csv_bad(c, C_D, "must be a multiple of 8");
    if (w->batch % w->chunks)
        return stu_csv_bad(c, C_CHUNKS, "must divide the batch (the engine runs equal "
                           "micro-batches)");
    if (total != w->L + 6)
        return stu_csv_bad(c, C_BALANCE, "%d layers; AmoebaNet-D (%d, %d) has L + 6 = %d",
                           total, w->L, w->D, w->L + 6);
    if ((rc = stu_tgm_exp_check(c, C_EXP, w->n, w->chunks, k, w->exp, sizeof w->exp)) < 0)
        return rc;
    for (int i = 0; i < r->n_rows; i++)
        if (!strcmp(r->row[i].exp, w->exp))
            return stu_csv_bad(c, C_EXP, "a second row %s (line %d)", w->exp, r->row[i].line);
    r->n_rows++;
    return 0;
}

int stu_tgm_exp_check(const struct stu_csv *c, int col, int n, int chunks, int ckpt,
                      char *exp, size_t expn)
{
    char want[32];
    if (n == 1 && chunks == 1 && stu_tg_ckpt_modes[ckpt] == SCH_REMAT_NEVER)
        snprintf(want, sizeof want, "baseline");
    else
        snprintf(want, sizeof want, "pipeline-%d", n);
    if (strcmp(stu_csv_field(c, col), want))
        return stu_csv_bad(c, col, "'%.40s' is not %s (n = %d, chunks = %d, checkpoint %s)",
                           stu_csv_field(c, col), want, n, chunks, stu_tg_ckpt_names[ckpt]);
    snprintf(exp, expn, "%s", want);
    return 0;
}

void stu_tgm_peaks(const struct ana_prediction *p, double *total, double *fullest)
{
    *total = *fullest = 0;
    for (int s = 0; s < p->n_stages; s++) {
        *total += (double)p->stages[s].peak_mem;
        *fullest = fmax(*fullest, (double)p->stages[s].peak_mem);
    }
}

void stu_tgm_stage_list(FILE *f, const struct ana_prediction *p)
{
    for (int s = 0; s < p->n_stages; s++) {
        const struct ana_stage *st = &p->stages[s];
        fprintf(f, "%s%.2f + %.2f = %.2f", s ? "; " : "", (double)st->static_mem / PS_GIB,
                (double)(st->peak_mem - st->static_mem) / PS_GIB, (double)st->peak_mem / PS_GIB);
    }
}

int stu_tgm_write_pair(const struct stu_tg_opts *o, const char *stem,
                       void (*md)(FILE *f, const void *arg),
                       void (*csv)(FILE *f, const void *arg), const void *arg)
{
    char name[160];
    snprintf(name, sizeof name, "%s.md", stem);
    int rc = stu_tg_write(o, name, md, arg);
    snprintf(name, sizeof name, "%s.csv", stem);
    return rc < 0 ? rc : stu_tg_write(o, name, csv, arg);
}

int stu_tgm_ref_load(const char *dir, struct stu_tgm_ref *r)
{
    memset(r, 0, sizeof *r);
    struct stu_csv c;
    int rc = stu_csv_open(&c, dir, STU_TGM_FILE ".csv", cols, NCOL);
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

void stu_tgm_run_free(struct stu_tgm_run *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n; i++)
        ana_prediction_free(r->cell[i].p);
    mdl_topology_free(r->topo);
    free(r);
}

static void spec(const struct stu_tgm_row *w, char *buf, size_t n)
{
    snprintf(buf, n, "amoebanet:L=%d,D=%d,pool3=avg", w->L, w->D);
}

int stu_tgm_predict_one(const struct mdl_topology *t, const char *ref_path, int line,
                        const char *exp, const char *model, const char *balance, int n, int M,
                        int batch, enum sch_remat remat, struct ana_prediction **out)
{
    *out = NULL;
    struct mdl_profile *prof = NULL;
    struct sch_partition *part = NULL;
    int rc = mdl_model_open(model, &prof);
    if (rc == 0 && (rc = stu_tg_partition(ref_path, line, t, prof, model, n, balance,
                                          &part)) < 0) {
        mdl_profile_free(prof);
        return rc;
    }
    if (rc == 0) {
        struct ana_config cfg = { .profile = prof, .topo = t, .schedule = "gpipe", .K = n,
                                  .M = M, .batch = batch, .remat = remat, .partition = part,
                                  .no_baseline = 1 };
        rc = ana_predict(&cfg, out);
    }
    sch_partition_free(part);
    mdl_profile_free(prof);
    if (rc < 0 && rc != -PS_ENOMEM) { /* the row the engine refused */
        char why[512];
        snprintf(why, sizeof why, "%s", ps_errmsg());
        return ps_error(PS_EPARSE, "%s:%d: experiment %s: %s", ref_path, line, exp, why);
    }
    return rc;
}

static int predict_row(struct stu_tgm_run *r, int i)
{
    const struct stu_tgm_row *w = &r->ref.row[i];
    struct stu_tgm_cell *c = &r->cell[i];
    c->ref = w;
    char model[128];
    spec(w, model, sizeof model);
    int rc = stu_tgm_predict_one(r->topo, r->ref.path, w->line, w->exp, model, w->balance,
                                 w->n, w->chunks, w->batch, w->remat, &c->p);
    if (rc < 0)
        return rc;
    const double bpp = r->topo->bytes_per_param;
    double total, fullest;
    stu_tgm_peaks(c->p, &total, &fullest);
    c->params = c->p->model_params;
    c->model_gib = bpp * c->params / PS_GIB;
    c->act_gib = (total - bpp * c->params) / PS_GIB;
    c->fullest_gib = fullest / PS_GIB;
    c->err_params = c->params / (w->params_m * 1e6) - 1;
    c->err_model = c->model_gib / w->model_gib - 1;
    c->err_act = w->oom ? 0 : c->act_gib / w->act_gib - 1;
    c->agrees = w->oom ? !c->p->fits : c->p->fits;
    return 0;
}

int stu_tgm_predict(const struct stu_tg_opts *o, struct stu_tgm_run **out)
{
    *out = NULL;
    struct stu_tgm_run *r = calloc(1, sizeof *r);
    if (!r)
        return ps_error(PS_ENOMEM, "out of memory");
    char ref[4096];
    int rc = stu_tg_topology(o, STU_TGM_BYTES_PER_PARAM, &r->topo, r->h_topo);
    if (rc < 0)
        goto err;
    if ((rc = stu_tg_data_sub(o, "reference", ref, sizeof ref)) < 0 ||
        (rc = stu_tgm_ref_load(ref, &r->ref)) < 0 ||
        (rc = ps_file_hash(r->ref.path, r->h_ref)) < 0)
        goto err;
    for (r->n = 0; r->n < r->ref.n_rows; r->n++)
        if ((rc = predict_row(r, r->n)) < 0) {
            r->n++; /* its prediction, if any, is freed with the others */
            goto err;
        }
    *out = r;
    return 0;
err:
    stu_tgm_run_free(r);
    return rc;
}

/* ---- the outputs ------------------------------------------------------ */

const struct stu_tmpl_sect stu_tgm_text[STU_TGM_NTEXT] = {
    { "intro", "topo_name memory bpp" },
    { "rows", "" },
    { "per_gpu", "" },
    { "deviations", "" },
    { "deviations_none", "" },
    { "notes", "excess ratio" },
};

static void stamp(FILE *f, const struct stu_tgm_run *r, const char *open, const char *cont,
                  const char *close)
{
    stu_tg_stamp(f, open, cont, close, r->h_topo, STU_TGM_FILE, r->h_ref,
                 "models amoebanet:L=..,D=..,pool3=avg generated from their architecture "
                 "(models/mdl_amoeba.h)", "amoebanetd-memory", "a4710261");
}

static void rows(FILE *f, const struct stu_tgm_run *r)
{
    char e1[32], e2[32], e3[32];
    fprintf(f, "| experiment | n (K) | AmoebaNet-D (L, D) | balance | chunks x size | checkpoint "
               "| parameters measured | predicted | error | model memory measured (GiB) | "
               "predicted | error | peak activation memory measured (GiB) | predicted | error "
               "| fullest GPU / capacity (GiB) | fits |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgm_cell *c = &r->cell[i];
        const struct stu_tgm_row *w = c->ref;
        char act[48];
        if (w->oom)
            snprintf(act, sizeof act, "out of memory | %.2f | %s", c->act_gib,
                     c->agrees ? "agrees" : "**does not agree**");
        else
            snprintf(act, sizeof act, "%.2f | %.2f | %s", w->act_gib, c->act_gib,
                     stu_tg_pct(c->err_act, e3, sizeof e3));
        fprintf(f, "| %s | %d | (%d, %d) | %s | %d x %d | %s | %.1fM | %.1fM | %s | %.2f | %.2f "
                   "| %s | %s | %.2f / %.2f | %s |\n", w->exp, w->n, w->L, w->D, w->balance,
                w->chunks, w->batch / w->chunks, stu_tg_remat_name(w->remat), w->params_m,
                c->params / 1e6, stu_tg_pct(c->err_params, e1, sizeof e1), w->model_gib,
                c->model_gib, stu_tg_pct(c->err_model, e2, sizeof e2), act, c->fullest_gib,
                c->p->stages[0].capacity / PS_GIB,
                c->p->fits ? "yes" : c->agrees ? "no (as measured)" : "**no**");
    }
}

static void per_gpu(FILE *f, const struct stu_tgm_run *r)
{
    fprintf(f, "| experiment | per GPU, predicted: parameters and optimizer + activations = "
               "peak (GiB) | measured - predicted activation memory, per GPU (GiB) |\n"
               "|---|---|---|\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgm_cell *c = &r->cell[i];
        fprintf(f, "| %s | ", c->ref->exp);
        stu_tgm_stage_list(f, c->p);
        if (c->ref->oom)
            fprintf(f, " | (out of memory) |\n");
        else
            fprintf(f, " | %.2f |\n", (c->ref->act_gib - c->act_gib) / c->ref->n);
    }
}

void stu_tgm_md(FILE *f, const struct stu_tgm_run *r, const stu_tmpl *tx)
{
    stamp(f, r, "<!-- ", "     ", " -->");
    fprintf(f, "\n# torchgpipe — AmoebaNet-D (L, D) memory on Tesla P40s\n\n");
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
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgm_cell *c = &r->cell[i];
        n_dev += (fabs(c->err_params) > 0.10) + (fabs(c->err_model) > 0.10) +
                 (fabs(c->err_act) > 0.10) + !c->agrees;
    }
    stu_tmpl_put(f, tx, "deviations", NULL);
    if (!n_dev) {
        stu_tmpl_put(f, tx, "deviations_none", NULL);
    } else {
        fprintf(f, "| experiment | figure | measured | predicted | error | note |\n"
                   "|---|---|---|---|---|---|\n");
        for (int i = 0; i < r->n; i++) {
            const struct stu_tgm_cell *c = &r->cell[i];
            const struct stu_tgm_row *w = c->ref;
            if (fabs(c->err_params) > 0.10)
                fprintf(f, "| %s | parameters | %.1fM | %.1fM | %+.1f %% | B |\n", w->exp,
                        w->params_m, c->params / 1e6, 100 * c->err_params);
            if (fabs(c->err_model) > 0.10)
                fprintf(f, "| %s | model memory | %.2f GiB | %.2f GiB | %+.1f %% | B |\n",
                        w->exp, w->model_gib, c->model_gib, 100 * c->err_model);
            if (fabs(c->err_act) > 0.10)
                fprintf(f, "| %s | peak activation memory | %.2f GiB | %.2f GiB | %+.1f %% | "
                           "%s |\n", w->exp, w->act_gib, c->act_gib, 100 * c->err_act,
                        c->err_act < 0 ? "A" : "C");
            if (!c->agrees)
                fprintf(f, "| %s | fits one P40 | %s | %s | - | C |\n", w->exp,
                        w->oom ? "no" : "yes", c->p->fits ? "yes" : "no");
        }
    }
    /* Note A's range over the measured rows: the excess per GPU, and the
     * measured over the predicted activation memory. */
    double lo = INFINITY, hi = -INFINITY, qlo = INFINITY, qhi = -INFINITY;
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgm_cell *c = &r->cell[i];
        if (c->ref->oom || !(c->act_gib > 0))
            continue;
        double x = (c->ref->act_gib - c->act_gib) / c->ref->n, q = c->ref->act_gib / c->act_gib;
        lo = fmin(lo, x), hi = fmax(hi, x), qlo = fmin(qlo, q), qhi = fmax(qhi, q);
    }
    stu_vals_init(&v);
    if (lo > hi) {
        stu_vals_set(&v, "excess", "(no measured row)");
        stu_vals_set(&v, "ratio", "(no measured row)");
    } else {
        stu_vals_set(&v, "excess", "%.2f to %.2f", lo, hi);
        stu_vals_set(&v, "ratio", "%.1f to %.1f", qlo, qhi);
    }
    stu_tmpl_put(f, tx, "notes", &v);
}

void stu_tgm_csv(FILE *f, const struct stu_tgm_run *r)
{
    stamp(f, r, "# ", "# ", "");
    fprintf(f, "experiment,n,L,D,batch,chunks,balance,checkpoint,measured_params_millions,"
               "predicted_params_millions,params_error_pct,measured_model_gib,"
               "predicted_model_gib,model_error_pct,measured_activation_gib,"
               "predicted_activation_gib,activation_error_pct,fullest_gib,fits\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgm_cell *c = &r->cell[i];
        const struct stu_tgm_row *w = c->ref;
        char bal[128], meas[32], err[32];
        stu_tg_balance_csv(w->balance, bal, sizeof bal);
        if (w->oom) {
            snprintf(meas, sizeof meas, "oom");
            snprintf(err, sizeof err, "NA");
        } else {
            snprintf(meas, sizeof meas, "%.2f", w->act_gib);
            snprintf(err, sizeof err, "%.2f", 100 * c->err_act);
        }
        fprintf(f, "%s,%d,%d,%d,%d,%d,%s,%s,%.1f,%.3f,%.2f,%.2f,%.4f,%.2f,%s,%.4f,%s,%.4f,%d\n",
                w->exp, w->n, w->L, w->D, w->batch, w->chunks, bal, stu_tg_remat_name(w->remat),
                w->params_m, c->params / 1e6, 100 * c->err_params, w->model_gib, c->model_gib,
                100 * c->err_model, meas, c->act_gib, err, c->fullest_gib, c->p->fits);
    }
}

static void md_fn(FILE *f, const void *arg)
{
    const void *const *a = arg;
    stu_tgm_md(f, a[0], a[1]);
}

static void csv_fn(FILE *f, const void *arg)
{
    stu_tgm_csv(f, ((const void *const *)arg)[0]);
}

int stu_tgm_write(const struct stu_tg_opts *o, const struct stu_tgm_run *r, const stu_tmpl *tx)
{
    const void *arg[2] = { r, tx };
    return stu_tgm_write_pair(o, STU_TGM_FILE, md_fn, csv_fn, arg);
}
