/* torchgpipe's AmoebaNet-D (18, 256) speed benchmark, predicted row by row
 * (stu_torchgpipe.h): the predictions, then speed.md and speed.csv. */
#include "studies/stu_torchgpipe.h"
#include "studies/stu_out.h"
#include "studies/stu_tgneed.h"
#include "studies/stu_tgmem.h"
#include "studies/stu_tgumem.h"
#include "studies/stu_breakdown.h"
#include "studies/stu_data.h"
#include "studies/stu_tmpl.h"
#include "models/mdl_device.h"
#include "models/mdl_gen.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The sections of text/speed.md and the placeholders each may use. */
static const struct stu_tmpl_sect speed_text[] = {
    { "intro", "topo_name device memory links bpp model layers dataset" },
    { "absolute", "" },
    { "ratios", "base" },
    { "detail", "" },
    { "deviations", "" },
    { "deviations_none", "" },
    { "notes", "" },
    { "needs", "matrix_frac memory_frac" },
};
#define NTEXT (int)(sizeof speed_text / sizeof *speed_text)

int stu_tg_data_sub(const struct stu_tg_opts *o, const char *sub, char *buf, size_t n)
{
    char dir[4096];
    int rc = stu_data_dir(o->data_dir, STU_TG_DATA, dir, sizeof dir);
    return rc < 0 ? rc : stu_join(dir, sub, buf, n);
}

void stu_tg_run_free(struct stu_tg_run *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n; i++)
        ana_prediction_free(r->cell[i].p);
    mdl_profile_free(r->prof);
    mdl_topology_free(r->topo);
    free(r);
}

void stu_tg_chunks(int batch, int m, int *size, int *count)
{
    *size = (batch + m - 1) / m;
    *count = (batch + *size - 1) / *size;
}

enum sch_remat stu_tg_remat_run(enum sch_remat asked, int chunks, int count)
{
    /* torchgpipe's gpipe.py: checkpoint_stop = {'always': self.chunks,
     * 'except_last': self.chunks-1, 'never': 0}, micro-batch j checkpointed
     * when j < checkpoint_stop, with self.chunks the chunks asked for */
    return asked == SCH_REMAT_EXCEPT_LAST && count < chunks ? SCH_REMAT_ALWAYS : asked;
}

/* One mini-batch of `batch` samples as the row runs it on t: count equal
 * chunks of size (stu_torchgpipe.h: an uneven last chunk runs full). */
static int predict_batch(const struct stu_tg_run *r, const struct mdl_topology *t,
                         const struct stu_tg_row *w, const struct sch_partition *part,
                         int batch, int *size, int *count, struct ana_prediction **out)
{
    stu_tg_chunks(batch, w->m, size, count);
    struct ana_config cfg = { .profile = r->prof, .topo = t, .schedule = "gpipe",
                              .K = w->n, .M = *count, .batch = (double)*size * *count,
                              .remat = stu_tg_remat_run(w->remat, w->m, *count),
                              .partition = part, .no_baseline = 1 };
    return ana_predict(&cfg, out);
}

/* Row i's balance as a partition of the profile, with file:line errors. */
int stu_tg_partition(const char *path, int line, const struct mdl_topology *t,
                     const struct mdl_profile *p, const char *model, int n, const char *balance,
                     struct sch_partition **part)
{
    if (n > t->n_devices)
        return ps_error(PS_EPARSE, "%s:%d: field 'n': %d partitions, %s has %d devices", path,
                        line, n, t->name, t->n_devices);
    /* the sum checked here, in the file's words (sch_partition_parse's
     * message names --partition, an option reproduce does not have) */
    long sum = 0;
    for (const char *q = balance; *q; q += strcspn(q, ","), q += *q == ',')
        sum += strtol(q, NULL, 10);
    if (sum != p->n_layers)
        return ps_error(PS_EPARSE, "%s:%d: field 'balance': %ld layers, %s has %d", path, line,
                        sum, model, p->n_layers);
    int rc = sch_partition_parse(balance, n, p->n_layers, part);
    if (rc < 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", ps_errmsg());
        return ps_error(PS_EPARSE, "%s:%d: field 'balance': %s (%s has %d layers)", path, line,
                        why, model, p->n_layers);
    }
    return 0;
}

static int row_partition(const struct stu_tg_run *r, int i, struct sch_partition **part)
{
    const struct stu_tg_row *w = &r->ref.row[i];
    return stu_tg_partition(r->ref.path, w->line, r->topo, r->prof, r->ref.bench->model, w->n,
                            w->balance, part);
}

/* main.py's epoch of row i on t: dataset / batch full mini-batches, then
 * the rest. Fills c's chunking and epoch_s; its prediction of a full
 * mini-batch goes to c->p when keep, else is freed. */
static int row_epoch(const struct stu_tg_run *r, int i, const struct mdl_topology *t, int keep,
                     struct stu_tg_cell *c)
{
    const struct stu_tg_row *w = &r->ref.row[i];
    const struct stu_tg_bench *b = r->ref.bench;
    struct sch_partition *part;
    struct ana_prediction *p = NULL, *lp = NULL;
    int rc = row_partition(r, i, &part);
    if (rc < 0)
        return rc;
    c->n_full = b->dataset / w->batch;
    c->last = b->dataset % w->batch;
    rc = predict_batch(r, t, w, part, w->batch, &c->size, &c->count, &p);
    if (rc == 0 && c->last)
        rc = predict_batch(r, t, w, part, c->last, &c->last_size, &c->last_count, &lp);
    sch_partition_free(part);
    if (rc == 0)
        c->epoch_s = c->n_full * p->step_s + (lp ? lp->step_s : 0);
    ana_prediction_free(lp);
    if (rc == 0 && keep)
        c->p = p;
    else
        ana_prediction_free(p);
    return rc;
}

static int predict_row(struct stu_tg_run *r, int i)
{
    struct stu_tg_cell *c = &r->cell[i];
    c->ref = &r->ref.row[i];
    int rc = row_epoch(r, i, r->topo, 1, c);
    if (rc < 0)
        return rc;
    c->pred = r->ref.bench->dataset / c->epoch_s;
    c->meas = c->ref->samples_s;
    c->err = c->pred / c->meas - 1;
    return 0;
}

int stu_tg_row_samples(const struct stu_tg_run *r, int i, const struct mdl_topology *t,
                       double *samples_s)
{
    struct stu_tg_cell c = { 0 };
    if (i < 0 || i >= r->n)
        return ps_error(PS_EINVAL, "row %d of %d", i, r->n);
    int rc = row_epoch(r, i, t, 0, &c);
    if (rc == 0)
        *samples_s = r->ref.bench->dataset / c.epoch_s;
    return rc;
}

int stu_tg_topo_path(const struct stu_tg_opts *o, char *buf, size_t n)
{
    char topo[4096];
    int rc = stu_data_dir(o->topo_dir, "topologies", topo, sizeof topo);
    return rc < 0 ? rc : stu_join(topo, STU_TG_TOPOLOGY, buf, n);
}

int stu_tg_topology(const struct stu_tg_opts *o, double bpp, struct mdl_topology **t,
                    char hash[17])
{
    char path[4096];
    int rc;
    *t = NULL;
    if ((rc = stu_tg_topo_path(o, path, sizeof path)) < 0 || (rc = mdl_topology_load(path, t)) < 0)
        return rc;
    if ((rc = mdl_topology_input_hash(path, hash)) < 0) {
        mdl_topology_free(*t);
        *t = NULL;
        return rc;
    }
    (*t)->bytes_per_param = bpp;
    return 0;
}

int stu_tg_predict(const struct stu_tg_opts *o, struct stu_tg_run **out)
{
    *out = NULL;
    struct stu_tg_run *r = calloc(1, sizeof *r);
    if (!r)
        return ps_error(PS_ENOMEM, "out of memory");
    char ref[4096];
    /* The benchmark's optimizer, whatever the preset keeps for another. */
    int rc = stu_tg_topology(o, STU_TG_BYTES_PER_PARAM, &r->topo, r->h_topo);
    if (rc < 0)
        goto err_free_run;
    const struct stu_tg_bench *b = o->bench ? o->bench : &stu_tg_bench[0];
    if ((rc = stu_tg_data_sub(o, "reference", ref, sizeof ref)) < 0 ||
        (rc = stu_tg_ref_load(ref, b, &r->ref)) < 0 ||
        (rc = ps_file_hash(r->ref.path, r->h_ref)) < 0)
        goto err_free_run;
    if ((rc = mdl_model_open(b->model, &r->prof)) < 0)
        goto err_free_run;
    for (r->n = 0; r->n < r->ref.n_rows; r->n++)
        if ((rc = predict_row(r, r->n)) < 0) {
            r->n++; /* its prediction, if any, is freed with the others */
            goto err_free_run;
        }
    const struct stu_tg_cell *bc = &r->cell[r->ref.base];
    for (int i = 0; i < r->n; i++) {
        struct stu_tg_cell *c = &r->cell[i];
        c->ratio_pred = c->pred / bc->pred;
        c->ratio_meas = c->meas / bc->meas;
        c->ratio_err = c->ratio_pred / c->ratio_meas - 1;
    }
    *out = r;
    return 0;

err_free_run:
    stu_tg_run_free(r);
    return rc;
}

/* ---- the outputs ------------------------------------------------------ */

const char *const stu_tg_ckpt_names[3] = { "always", "except_last", "never" };
const enum sch_remat stu_tg_ckpt_modes[3] = { SCH_REMAT_ALWAYS, SCH_REMAT_EXCEPT_LAST,
                                              SCH_REMAT_NEVER };

const char *stu_tg_remat_name(enum sch_remat m)
{
    return stu_tg_ckpt_names[m == SCH_REMAT_ALWAYS ? 0 : m == SCH_REMAT_NEVER ? 2 : 1];
}

const char *stu_tg_balance_csv(const char *balance, char *buf, size_t n)
{
    snprintf(buf, n, "%s", balance);
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = ' ';
    return buf;
}

const char *stu_tg_pct(double e, char *buf, size_t n)
{
    /* exponent notation past 7 digits: a cell of 32 bytes is never cut */
    snprintf(buf, n, fabs(e) < 1e5 ? "%s%+.1f %%%s" : "%s%+.2e %%%s", fabs(e) > 0.10 ? "**" : "",
             100 * e, fabs(e) > 0.10 ? "**" : "");
    return buf;
}

void stu_tg_stamp(FILE *f, const char *open, const char *cont, const char *close,
                  const char *h_topo, const char *file, const char *h_ref, const char *model,
                  const char *bench, const char *commit)
{
    fprintf(f, "%sGenerated by `pipesim reproduce torchgpipe` (pipesim %s); do not edit, rerun "
               "it.\n%sInputs: %s %s (with the device presets it takes), reference/%s.csv %s\n"
               "%s(FNV-1a 64); %s;\n"
               "%smeasured figures from kakaobrain/torchgpipe docs/benchmarks.rst @ fe52c4dc\n"
               "%sand benchmarks/%s/main.py @ %s.%s\n", open, PS_VERSION, cont, STU_TG_TOPOLOGY,
            h_topo, file, h_ref, cont, model, cont, cont, bench, commit, close);
}

static void stamp(FILE *f, const struct stu_tg_run *r, const char *open, const char *cont,
                  const char *close)
{
    const struct stu_tg_bench *b = r->ref.bench;
    char model[256];
    snprintf(model, sizeof model, "model %s generated from its architecture (%s)", b->model,
             b->model_h);
    stu_tg_stamp(f, open, cont, close, r->h_topo, b->file, r->h_ref, model, b->name, b->commit);
}

/* The fact the source does not give, by what deviates and which way
 * (the letters of text/speed.md's notes). */
static const char *note(int ratio, double e)
{
    if (!ratio)
        return e > 0 ? "A" : "B";
    return e > 0 ? "C" : "D";
}

static void md(FILE *f, const struct stu_tg_run *r, const stu_tmpl *tx)
{
    char e[48], e2[32];
    stamp(f, r, "<!-- ", "     ", " -->");
    fprintf(f, "\n# torchgpipe — %s speed on 8 x Tesla P40\n\n", r->ref.bench->title);
    const struct mdl_device *d = &r->topo->devices[0];
    struct stu_vals v;
    stu_vals_init(&v);
    stu_vals_set(&v, "topo_name", "%s", r->topo->name);
    char dev[512];
    mdl_device_describe(d, dev, sizeof dev);
    stu_vals_set(&v, "device", "%s", dev);
    stu_vals_set(&v, "memory", "%.4g", d->memory / 1e9);
    char links[1024] = "";
    for (int k = 0; k < r->topo->n_links && strlen(links) + 160 < sizeof links; k++) {
        const struct mdl_link *l = &r->topo->links[k];
        snprintf(links + strlen(links), sizeof links - strlen(links),
                 "%s`%s` %.5g GB/s, latency %g us, %s, %d endpoints", k ? "; " : "", l->name,
                 l->bandwidth / 1e9, l->latency * 1e6,
                 l->shared ? "shared (one FIFO for all its transfers)" : "dedicated", l->n_ends);
    }
    if (r->topo->n_links > 0 && strlen(links) + 160 >= sizeof links)
        snprintf(links + strlen(links), sizeof links - strlen(links), "; ... (%d links)",
                 r->topo->n_links);
    stu_vals_set(&v, "links", "%s", links);
    stu_vals_set(&v, "bpp", "%g", STU_TG_BYTES_PER_PARAM);
    stu_vals_set(&v, "model", "%s", r->ref.bench->model);
    stu_vals_set(&v, "dataset", "%d", r->ref.bench->dataset);
    stu_vals_set(&v, "layers", "%d", r->prof->n_layers);
    stu_tmpl_put(f, tx, "intro", &v);
    stu_tmpl_put(f, tx, "absolute", NULL);
    fprintf(f, "| experiment | n (K) | m (M) | batch | chunks x size | balance | checkpoint | "
               "epoch: full mini-batches + last (chunks x size) | measured samples/s | "
               "predicted | error |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tg_cell *c = &r->cell[i];
        char last[64] = "none";
        if (c->last)
            snprintf(last, sizeof last, "%d (%d x %d)", c->last, c->last_count, c->last_size);
        fprintf(f, "| %s | %d | %d | %d | %d x %d | %s | %s | %d + %s | %.3f | %.3f | %s |\n",
                c->ref->exp, c->ref->n, c->ref->m, c->ref->batch, c->count, c->size,
                c->ref->balance, stu_tg_remat_name(c->ref->remat), c->n_full, last, c->meas,
                c->pred, stu_tg_pct(c->err, e, sizeof e));
    }
    stu_vals_init(&v);
    stu_vals_set(&v, "base", "%s", r->cell[r->ref.base].ref->exp);
    stu_tmpl_put(f, tx, "ratios", &v);
    fprintf(f, "| experiment | measured (published) | predicted | error |\n|---|---|---|---|\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tg_cell *c = &r->cell[i];
        fprintf(f, "| %s | %.3f (%g) | %.3f | %s |\n", c->ref->exp, c->ratio_meas,
                c->ref->speedup, c->ratio_pred, stu_tg_pct(c->ratio_err, e, sizeof e));
    }
    stu_tmpl_put(f, tx, "detail", NULL);
    fprintf(f, "| experiment | step (ms) | bubble simulated / (K-1)/(M+K-1) | busiest stage | "
               "its compute (ms) | matrix / vector / memory / overhead (ms) | its update (ms) | "
               "its transfers (ms) | its idle (ms) | fits |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tg_cell *c = &r->cell[i];
        struct stu_breakdown *b;
        if (stu_breakdown_new(c->p, r->prof, r->topo, &b) < 0) {
            fprintf(f, "| %s | out of memory |\n", c->ref->exp);
            continue;
        }
        int s = stu_breakdown_busiest(b);
        const struct stu_bd_stage *st = &b->st[s];
        char cls[96] = "not given";
        if (b->have_classes)
            snprintf(cls, sizeof cls, "%.0f / %.0f / %.0f / %.0f", st->cls[STU_BD_MATRIX] * 1e3,
                     st->cls[STU_BD_VECTOR] * 1e3, st->cls[STU_BD_MEMORY] * 1e3,
                     st->cls[STU_BD_OVERHEAD] * 1e3);
        fprintf(f, "| %s | %.2f | %.1f %% / %.1f %% | %d (layers %d-%d) | %.2f | %s | %.2f | "
                   "%.2f | %.2f | %s |\n", c->ref->exp, c->p->step_s * 1e3,
                100 * c->p->bubble_sim, 100 * c->p->bubble_analytic, s, st->first_layer,
                st->first_layer + st->n_layers - 1, st->compute_s * 1e3, cls,
                st->update_s * 1e3, st->transfer_s * 1e3, st->idle_s * 1e3,
                c->p->fits ? "yes" : "**no**");
        stu_breakdown_free(b);
    }
    int n_dev = 0;
    for (int i = 0; i < r->n; i++)
        n_dev += (fabs(r->cell[i].err) > 0.10) + (fabs(r->cell[i].ratio_err) > 0.10);
    stu_tmpl_put(f, tx, "deviations", NULL);
    if (!n_dev) {
        stu_tmpl_put(f, tx, "deviations_none", NULL);
    } else {
        fprintf(f, "| experiment | figure | measured | predicted | error | note |\n"
                   "|---|---|---|---|---|---|\n");
        for (int ratio = 0; ratio < 2; ratio++)
            for (int i = 0; i < r->n; i++) {
                const struct stu_tg_cell *c = &r->cell[i];
                double er = ratio ? c->ratio_err : c->err;
                if (fabs(er) <= 0.10)
                    continue;
                snprintf(e2, sizeof e2, "%+.1f %%", 100 * er);
                fprintf(f, "| %s | %s | %.3f | %.3f | %s | %s%s |\n", c->ref->exp,
                        ratio ? "speed-up" : "samples/s", ratio ? c->ratio_meas : c->meas,
                        ratio ? c->ratio_pred : c->pred, e2, note(ratio, er),
                        r->ref.bench->relayed && c->ref->n > 1 ? ", E" : "");
            }
    }
    stu_tmpl_put(f, tx, "notes", NULL);
    /* What one figure alone would have to be for each row whose samples/s
     * deviate by over 10 % (stu_tgneed.h; computed before writing). */
    for (int i = 0, shown = 0; i < r->n; i++) {
        const struct stu_tg_cell *c = &r->cell[i];
        if (!c->has_need)
            continue;
        if (!shown++) {
            stu_vals_init(&v);
            stu_vals_set(&v, "matrix_frac", "%.2f", stu_tg_need_frac(d, ANA_KNOB_MATRIX));
            stu_vals_set(&v, "memory_frac", "%.2f", stu_tg_need_frac(d, ANA_KNOB_MEMORY));
            stu_tmpl_put(f, tx, "needs", &v);
            fprintf(f, "| experiment | error |");
            for (int k = 0; k < ANA_KNOB_N; k++)
                fprintf(f, " %s |", ana_knob_titles[k]);
            fprintf(f, "\n|---|---|");
            for (int k = 0; k < ANA_KNOB_N; k++)
                fprintf(f, "---|");
            fprintf(f, "\n");
        }
        fprintf(f, "| %s | %+.1f %% |", c->ref->exp, 100 * c->err);
        for (int k = 0; k < ANA_KNOB_N; k++) {
            stu_tg_need_cell(d, &c->need, k, e, sizeof e);
            fprintf(f, " %s |", e);
        }
        fprintf(f, "\n");
    }
}

static void csv(FILE *f, const struct stu_tg_run *r)
{
    stamp(f, r, "# ", "# ", "");
    fprintf(f, "experiment,n,m,batch,balance,checkpoint,measured_samples_per_s,"
               "predicted_samples_per_s,error_pct,measured_speedup,predicted_speedup,"
               "speedup_error_pct,chunks,chunk_size,step_ms,full_batches,last_batch,epoch_s,"
               "bubble_sim,fits\n");
    for (int i = 0; i < r->n; i++) {
        const struct stu_tg_cell *c = &r->cell[i];
        char bal[128];
        stu_tg_balance_csv(c->ref->balance, bal, sizeof bal);
        fprintf(f, "%s,%d,%d,%d,%s,%s,%.3f,%.3f,%.2f,%.4f,%.4f,%.2f,%d,%d,%.4f,%d,%d,%.4f,%.4f,"
                   "%d\n", c->ref->exp, c->ref->n, c->ref->m, c->ref->batch, bal,
                stu_tg_remat_name(c->ref->remat), c->meas, c->pred, 100 * c->err, c->ratio_meas,
                c->ratio_pred, 100 * c->ratio_err, c->count, c->size, c->p->step_s * 1e3,
                c->n_full, c->last, c->epoch_s, c->p->bubble_sim, c->p->fits);
    }
}

int stu_tg_write(const struct stu_tg_opts *o, const char *name,
                 void (*fn)(FILE *f, const void *arg), const void *arg)
{
    char path[4096];
    struct ps_afile af;
    int rc = stu_join(o->out_dir, name, path, sizeof path);
    if (rc < 0 || (rc = ps_afile_open(&af, path)) < 0)
        return stu_out_shown(o->out, rc);
    fn(af.f, arg);
    return stu_out_file(o->out, &af, name);
}

/* A bench's markdown (its template with it) and CSV, for stu_tg_write. */
struct tg_out {
    const struct stu_tg_run *r;
    const stu_tmpl *tx;
};

static void md_fn(FILE *f, const void *arg)
{
    const struct tg_out *t = arg;
    md(f, t->r, t->tx);
}

static void csv_fn(FILE *f, const void *arg)
{
    csv(f, ((const struct tg_out *)arg)->r);
}

/* Every file the run reads and writes declared (base/ps_afile.h), so that
 * an --out-dir that holds an input (the reference folder) is refused
 * before anything is written. One run is one command: the registry starts
 * empty. */
static int declare_io(const struct stu_tg_opts *o, struct stu_tg_run *const *r,
                      const struct stu_tgm_run *mem, const struct stu_tgu_run *umem,
                      const char *text)
{
    static const char *const ext[2] = { "md", "csv" };
    char path[4096], name[160];
    int rc;
    ps_io_reset();
    if ((rc = stu_tg_topo_path(o, path, sizeof path)) < 0 ||
        (rc = ps_io_input(path, "--topologies")) < 0 ||
        (rc = ps_io_input(mem->ref.path, "--data")) < 0 ||
        (rc = ps_io_input(umem->ref.path, "--data")) < 0)
        return rc;
    for (int k = 0; k <= STU_TG_NBENCH + 1 && rc == 0; k++) {
        const char *file = k < STU_TG_NBENCH ? stu_tg_bench[k].file
                           : k == STU_TG_NBENCH ? STU_TGM_FILE : STU_TGU_FILE;
        if (k < STU_TG_NBENCH && (rc = ps_io_input(r[k]->ref.path, "--data")) < 0)
            break;
        snprintf(name, sizeof name, "%s.md", file);
        if ((rc = stu_join(text, name, path, sizeof path)) < 0 ||
            (rc = ps_io_input(path, "--data")) < 0)
            break;
        for (int e = 0; e < 2 && rc == 0; e++) {
            snprintf(name, sizeof name, "%s.%s", file, ext[e]);
            if ((rc = stu_join(o->out_dir, name, path, sizeof path)) == 0)
                rc = ps_io_output(path, "--out-dir");
        }
    }
    return rc;
}

int stu_torchgpipe_run(const struct stu_tg_opts *o)
{
    struct stu_tg_run *r[STU_TG_NBENCH] = { NULL };
    stu_tmpl *tx[STU_TG_NBENCH] = { NULL }, *mtx = NULL, *utx = NULL;
    struct stu_tgm_run *mem = NULL;
    struct stu_tgu_run *umem = NULL;
    char dir[4096], name[160];
    int rc = stu_tg_data_sub(o, "text", dir, sizeof dir);
    /* Every benchmark's inputs read and checked before anything is written. */
    for (int k = 0; rc == 0 && k < STU_TG_NBENCH; k++) {
        struct stu_tg_opts ok = *o;
        ok.bench = &stu_tg_bench[k];
        snprintf(name, sizeof name, "%s.md", stu_tg_bench[k].file);
        if ((rc = stu_tg_predict(&ok, &r[k])) == 0)
            rc = stu_tmpl_load(dir, name, speed_text, NTEXT, &tx[k]);
    }
    /* What one figure would have to be, for the rows off by over 10 %. */
    for (int k = 0; rc == 0 && k < STU_TG_NBENCH; k++)
        for (int i = 0; rc == 0 && i < r[k]->n; i++)
            if (fabs(r[k]->cell[i].err) > 0.10 &&
                (rc = stu_tg_need(r[k], i, &r[k]->cell[i].need)) == 0)
                r[k]->cell[i].has_need = 1;
    if (rc == 0 && (rc = stu_tgm_predict(o, &mem)) == 0)
        rc = stu_tmpl_load(dir, STU_TGM_FILE ".md", stu_tgm_text, STU_TGM_NTEXT, &mtx);
    if (rc == 0 && (rc = stu_tgu_predict(o, &umem)) == 0)
        rc = stu_tmpl_load(dir, STU_TGU_FILE ".md", stu_tgu_text, STU_TGU_NTEXT, &utx);
    if (rc == 0)
        rc = declare_io(o, r, mem, umem, dir);
    /* staged, then published together (studies/stu_out.h) */
    struct stu_out out = { .stage_slot = -1 };
    struct stu_tg_opts so = *o;
    if (rc == 0 && (rc = stu_out_begin(&out, o->out_dir, o->log)) == 0) {
        so.out_dir = out.stage;
        so.out = &out;
    }
    for (int k = 0; rc == 0 && k < STU_TG_NBENCH; k++) {
        struct tg_out t = { r[k], tx[k] };
        snprintf(name, sizeof name, "%s.md", stu_tg_bench[k].file);
        if ((rc = stu_tg_write(&so, name, md_fn, &t)) < 0)
            break;
        snprintf(name, sizeof name, "%s.csv", stu_tg_bench[k].file);
        rc = stu_tg_write(&so, name, csv_fn, &t);
    }
    if (rc == 0)
        rc = stu_tgm_write(&so, mem, mtx);
    if (rc == 0)
        rc = stu_tgu_write(&so, umem, utx);
    if (rc == 0)
        rc = stu_out_commit(&out);
    stu_out_abort(&out);
    for (int k = 0; k < STU_TG_NBENCH; k++) {
        stu_tmpl_free(tx[k]);
        stu_tg_run_free(r[k]);
    }
    stu_tmpl_free(mtx);
    stu_tgm_run_free(mem);
    stu_tmpl_free(utx);
    stu_tgu_run_free(umem);
    return rc;
}
