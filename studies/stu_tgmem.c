/* torchgpipe's AmoebaNet-D (L, D) memory benchmark (stu_tgmem.h): the
 * reference rows, their predictions, amoebanetd-memory.md and .csv. */
#include "studies/stu_tgmem.h"
#include "studies/stu_csv.h"
#include "studies/stu_data.h"
#include "models/mdl_gen.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0

enum { C_EXP, C_N, C_L, C_D, C_BATCH, C_CHUNKS, C_BALANCE, C_CKPT, C_PARAMS, C_MODEL, C_ACT,
       NCOL };
static const char *const cols[NCOL] = { "experiment", "n", "L", "D", "batch", "chunks",
                                        "balance", "checkpoint", "params_millions",
                                        "model_memory_gib", "peak_activation_gib" };
static const char *const ckpt[3] = { "always", "except_last", "never" };
static const enum sch_remat remat[3] = { SCH_REMAT_ALWAYS, SCH_REMAT_EXCEPT_LAST,
                                         SCH_REMAT_NEVER };

static int col(const struct stu_csv *c, int k) { return c->colno[c->idx[k]]; }

static int bad(const struct stu_csv *c, int k, const char *why)
{
    return ps_error(PS_EPARSE, "%s:%d:%d: field '%s': %s", c->path, c->line, col(c, k), cols[k],
                    why);
}

/* A figure > 0 (oom_ok: "oom" sets *oom). */
static int figure(const struct stu_csv *c, int k, int oom_ok, double *v, int *oom)
{
    if (oom_ok && !strcmp(stu_csv_field(c, k), "oom")) {
        *oom = 1;
        *v = 0;
        return 0;
    }
    int rc = stu_csv_num(c, k, 0, v);
    if (rc == 0 && !(*v > 0))
        rc = bad(c, k, oom_ok ? "must be > 0 or oom" : "must be > 0");
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
    if ((rc = stu_csv_whole(c, C_N, 1, 1024, &w->n)) < 0 ||
        (rc = stu_csv_whole(c, C_L, 3, 3000, &w->L)) < 0 ||
        (rc = stu_csv_whole(c, C_D, 8, 1 << 16, &w->D)) < 0 ||
        (rc = stu_csv_whole(c, C_BATCH, 1, 1 << 20, &w->batch)) < 0 ||
        (rc = stu_csv_whole(c, C_CHUNKS, 1, 1 << 20, &w->chunks)) < 0 ||
        (rc = stu_csv_key(c, C_CKPT, ckpt, 3, &k)) < 0 ||
        (rc = figure(c, C_PARAMS, 0, &w->params_m, NULL)) < 0 ||
        (rc = figure(c, C_MODEL, 0, &w->model_gib, NULL)) < 0 ||
        (rc = figure(c, C_ACT, 1, &w->act_gib, &w->oom)) < 0 ||
        (rc = stu_tg_balance(c, C_BALANCE, w->n, w->balance, sizeof w->balance, &total)) < 0)
        return rc;
    w->remat = remat[k];
    if (w->L % 3)
        return bad(c, C_L, "must be a multiple of 3 (AmoebaNet-D's normal cells)");
    if (w->D % 8)
        return bad(c, C_D, "must be a multiple of 8");
    if (w->batch % w->chunks)
        return bad(c, C_CHUNKS, "must divide the batch (the engine runs equal micro-batches)");
    if (total != w->L + 6) {
        char why[128];
        snprintf(why, sizeof why, "%d layers; AmoebaNet-D (%d, %d) has L + 6 = %d", total, w->L,
                 w->D, w->L + 6);
        return bad(c, C_BALANCE, why);
    }
    char want[32];
    if (w->n == 1 && w->chunks == 1 && w->remat == SCH_REMAT_NEVER)
        snprintf(want, sizeof want, "baseline");
    else
        snprintf(want, sizeof want, "pipeline-%d", w->n);
    if (strcmp(stu_csv_field(c, C_EXP), want)) {
        char why[192];
        snprintf(why, sizeof why, "'%s' is not %s (n = %d, chunks = %d, checkpoint %s)",
                 stu_csv_field(c, C_EXP), want, w->n, w->chunks, ckpt[k]);
        return bad(c, C_EXP, why);
    }
    snprintf(w->exp, sizeof w->exp, "%s", want);
    for (int i = 0; i < r->n_rows; i++)
        if (!strcmp(r->row[i].exp, w->exp))
            return ps_error(PS_EPARSE, "%s:%d: a second row %s (line %d)", c->path, c->line,
                            w->exp, r->row[i].line);
    r->n_rows++;
    return 0;
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

static int predict_row(struct stu_tgm_run *r, int i)
{
    const struct stu_tgm_row *w = &r->ref.row[i];
    struct stu_tgm_cell *c = &r->cell[i];
    c->ref = w;
    if (w->n > r->topo->n_devices)
        return ps_error(PS_EPARSE, "%s:%d: field 'n': %d partitions, %s has %d devices",
                        r->ref.path, w->line, w->n, r->topo->name, r->topo->n_devices);
    char model[128];
    spec(w, model, sizeof model);
    struct mdl_profile *prof;
    struct sch_partition *part = NULL;
    int rc = mdl_model_open(model, &prof);
    if (rc < 0)
        return rc;
    if ((rc = sch_partition_parse(w->balance, w->n, prof->n_layers, &part)) == 0) {
        struct ana_config cfg = { .profile = prof, .topo = r->topo, .schedule = "gpipe",
                                  .K = w->n, .M = w->chunks, .batch = w->batch,
                                  .remat = w->remat, .partition = part, .no_baseline = 1 };
        rc = ana_predict(&cfg, &c->p);
    }
    sch_partition_free(part);
    mdl_profile_free(prof);
    if (rc < 0)
        return rc;
    const double bpp = r->topo->bytes_per_param;
    double total = 0, fullest = 0;
    for (int s = 0; s < c->p->n_stages; s++) {
        total += (double)c->p->stages[s].peak_mem;
        fullest = fmax(fullest, (double)c->p->stages[s].peak_mem);
    }
    c->params = c->p->model_params;
    c->model_gib = bpp * c->params / GIB;
    c->act_gib = (total - bpp * c->params) / GIB;
    c->fullest_gib = fullest / GIB;
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
    char topo[4096], path[4096], ref[4096];
    int rc;
    if ((rc = stu_data_dir(o->topo_dir, "topologies", topo, sizeof topo)) < 0)
        goto err;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", topo, STU_TG_TOPOLOGY) >= sizeof path) {
        rc = ps_error(PS_EUSAGE, "path too long: %s/%s", topo, STU_TG_TOPOLOGY);
        goto err;
    }
    if ((rc = mdl_topology_load(path, &r->topo)) < 0 || (rc = ps_file_hash(path, r->h_topo)) < 0)
        goto err;
    r->topo->bytes_per_param = STU_TGM_BYTES_PER_PARAM;
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
    fprintf(f, "%sGenerated by `pipesim reproduce torchgpipe` (pipesim %s); do not edit, rerun "
               "it.\n%sInputs: %s %s, reference/%s.csv %s (FNV-1a 64);\n"
               "%smodels amoebanet:L=..,D=..,pool3=avg generated from their architecture "
               "(models/mdl_amoeba.h);\n"
               "%smeasured figures from kakaobrain/torchgpipe docs/benchmarks.rst @ fe52c4dc\n"
               "%sand benchmarks/amoebanetd-memory/main.py @ a4710261.%s\n", open, PS_VERSION,
            cont, STU_TG_TOPOLOGY, r->h_topo, STU_TGM_FILE, r->h_ref, cont, cont, cont, close);
}

static const char *pct(double e, char *buf, size_t n)
{
    snprintf(buf, n, "%s%+.1f %%%s", fabs(e) > 0.10 ? "**" : "", 100 * e,
             fabs(e) > 0.10 ? "**" : "");
    return buf;
}

static const char *remat_name(enum sch_remat m)
{
    return ckpt[m == SCH_REMAT_ALWAYS ? 0 : m == SCH_REMAT_NEVER ? 2 : 1];
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
                     pct(c->err_act, e3, sizeof e3));
        fprintf(f, "| %s | %d | (%d, %d) | %s | %d x %d | %s | %.1fM | %.1fM | %s | %.2f | %.2f "
                   "| %s | %s | %.2f / %.2f | %s |\n", w->exp, w->n, w->L, w->D, w->balance,
                w->chunks, w->batch / w->chunks, remat_name(w->remat), w->params_m,
                c->params / 1e6, pct(c->err_params, e1, sizeof e1), w->model_gib, c->model_gib,
                pct(c->err_model, e2, sizeof e2), act, c->fullest_gib,
                c->p->stages[0].capacity / GIB, c->p->fits ? "yes" : "**no**");
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
        for (int s = 0; s < c->p->n_stages; s++) {
            const struct ana_stage *st = &c->p->stages[s];
            fprintf(f, "%s%.2f + %.2f = %.2f", s ? "; " : "",
                    (double)st->static_mem / GIB, (double)(st->peak_mem - st->static_mem) / GIB,
                    (double)st->peak_mem / GIB);
        }
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
    stu_vals_set(&v, "memory", "%.2f", r->topo->devices[0].memory / GIB);
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
        snprintf(bal, sizeof bal, "%s", w->balance);
        for (char *p = bal; *p; p++)
            if (*p == ',')
                *p = ' ';
        if (w->oom) {
            snprintf(meas, sizeof meas, "oom");
            snprintf(err, sizeof err, "NA");
        } else {
            snprintf(meas, sizeof meas, "%.2f", w->act_gib);
            snprintf(err, sizeof err, "%.2f", 100 * c->err_act);
        }
        fprintf(f, "%s,%d,%d,%d,%d,%d,%s,%s,%.1f,%.3f,%.2f,%.2f,%.4f,%.2f,%s,%.4f,%s,%.4f,%d\n",
                w->exp, w->n, w->L, w->D, w->batch, w->chunks, bal, remat_name(w->remat),
                w->params_m, c->params / 1e6, 100 * c->err_params, w->model_gib, c->model_gib,
                100 * c->err_model, meas, c->act_gib, err, c->fullest_gib, c->p->fits);
    }
}
