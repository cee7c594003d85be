/* Table 1: for each K the largest model whose every stage fits device
 * memory under GPipe, and the paper's own configurations evaluated, beside
 * the paper's parameters, parameter memory and peak activation memory. */
#include "studies/stu_paper_int.h"
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
    int rc = amoeba ? stu_paper_amoeba(L, D, &p) : stu_paper_transformer(L, &p);
    if (rc < 0)
        return rc;
    r->L = L;
    r->D = D;
    r->M = policy_m(K, naive, all, batch);
    enum sch_remat remat = naive ? SCH_REMAT_NEVER : SCH_REMAT_ALWAYS;
    rc = stu_paper_strategy(p, t, K, r->M, (double)batch / r->M, remat, SCH_PART_BALANCE_SIZE, 1,
                            &part);
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
        if (!r->fits) {
            fprintf(f, " none fits |%s n/a | | | n/a | | | n/a |\n", count(col->params, a, 64));
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
    int rc = amoeba ? stu_paper_amoeba(L, D, &p) : stu_paper_transformer(L, &p);
    if (rc < 0)
        return rc;
    *out = 0;
    for (int l = 0; l < p->n_layers; l++)
        *out += p->layers[l].stash_bytes;
    mdl_profile_free(p);
    return 0;
}

static void intro(FILE *f)
{
    fputs("The paper's Table 1: for each number of partitions K, the largest AmoebaNet-D (L, D) "
          "and Transformer-L that GPipe trains, with parameters, parameter memory and peak "
          "activation memory. Setup as in the reference table (`studies/gpipe/reference/table1.csv`): "
          "AmoebaNet at 224 x 224, mini-batch 128, 8 GB per TPUv2 core; Transformer-L with "
          "d_model 2048, feed-forward 8192, 32 heads, vocabulary 32k, sequence 1024, batch 32, "
          "16 GB per TPUv3 core; the paper: \"each parameter needs 12 bytes since we applied "
          "RMSProp\".\n\n"
          "How each cell is predicted (every one is an `ana_predict` run):\n\n"
          "- **Naive-1**: one core, M = 1, no re-materialization: the whole mini-batch's "
          "activations are kept for the backward pass.\n"
          "- **Pipeline-K**: the GPipe fill-drain schedule on K cores, every micro-batch "
          "re-materialized (recomputed before its backward pass), M = the largest divisor of "
          "the mini-batch not above 4K. The paper finds the bubble overhead (K-1)/(M+K-1) "
          "negligible when M >= 4K, so 4K is the fewest micro-batches it calls efficient; "
          "fewer, larger micro-batches need more activation memory, so this is the "
          "conservative choice. AmoebaNet: K = 1, 2, 4, 8 -> M = 4, 8, 16, 32 (micro-batches "
          "of 32, 16, 8, 4 images); Transformer: K = 1 -> M = 4 (8 sequences), K >= 8 -> "
          "M = 32 (1 sequence). The reference table does not give the paper's M for Table 1; "
          "the last table shows how much M matters.\n"
          "- **Fit**: the engine's memory ledger (`sched/sch_memory.c`): on every core, "
          "parameters x 12 B plus the peak of stashed or recomputed activations, the stage "
          "inputs kept for re-materialization and the send, receive and gradient buffers "
          "must not exceed the core's memory (8 GiB TPUv2, 16 GiB TPUv3: "
          "`models/topologies/SOURCES.md`).\n"
          "- **Partition**: the partitioner's balance-by-size partition (issue 3, "
          "`sched/sch_partitioner.h`): the exact minimum of the largest stage's closed-form "
          "GPipe peak memory; the engine's ledger, not the closed form, decides the fit.\n"
          "- **Search**: AmoebaNet keeps the paper column's L and takes the largest D, a "
          "multiple of 8 (the generator needs D/8 whole), that fits; the Transformer takes "
          "the largest L. Memory grows with D and L, so the search doubles until a model "
          "does not fit, then bisects.\n"
          "- **Totals**: parameter and activation memory are summed over the K cores, as the "
          "paper's cells are (its Pipeline-8 Transformer has 59.5 G of parameter memory on "
          "16 GB cores). AmoebaNet memory is in GB = 1e9 B (the paper's 318M x 12 B = 3.8 "
          "GB), Transformer memory in GiB (282.2M x 12 B = 3.15 GiB). The paper prints the "
          "Transformer Naive-1 memory cells the other way round (11.7G parameters, 3.15G "
          "activations); they are compared here as 3.15 GiB parameters, 11.7 GiB "
          "activations.\n\n"
          "Errors are predicted / paper - 1; **bold** past 10 %, each explained under "
          "*Deviations*.\n\n", f);
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

static void notes(FILE *f, const struct t1_model *ms, double s_amoeba, double s_tf)
{
    const struct t1_model *am = &ms[0], *tf = &ms[1];
    const struct t1_col *amoeba_cols = am->cols, *tf_cols = tf->cols;
    double pa = amoeba_cols[0].act / 128, pt = tf_cols[0].act / 32;
    fprintf(f, "## Deviations over 10 %%\n\n"
               "| model | table | column | quantity | error | note |\n"
               "|---|---|---|---|---|---|\n");
    deviation_rows(f, am);
    deviation_rows(f, tf);
    fprintf(f, "\n**A. Activation bytes per sample (more than the paper's).** Without "
               "re-materialization the generator keeps %.1f MB per image for AmoebaNet-D (18, "
               "208) and %.1f MiB per sequence for Transformer-3; the paper's Naive-1 cells "
               "imply %.1f MB (6.26 GB / 128) and %.1f MiB (11.7 GiB / 32): %.1fx and %.1fx "
               "more here. The generators count every tensor a framework that does not fuse "
               "operations keeps for the backward pass, in FP32 (`models/mdl_amoeba.h`, "
               "`models/mdl_transformer.h`): for AmoebaNet each ReLU output and each conv output "
               "(the batch-norm input) of every separable and 1x1 convolution; for the "
               "Transformer the layer-norm inputs and outputs, Q, K, V, the attention "
               "probabilities (32 heads x 1024^2 per layer) and the softmax probabilities over "
               "the 32k vocabulary. The paper ran TensorFlow/XLA on TPUs: XLA fuses "
               "ReLU-conv-batch-norm chains and recomputes cheap element-wise results instead of "
               "keeping them, and the reference table does not say in what precision the "
               "activations were kept (2-byte bfloat16 would halve every count here: x%.2f and "
               "x%.2f). These are framework details the paper does not give; the generators' "
               "counting is not tuned to match.\n\n",
            s_amoeba / 1e6, s_tf / 1048576, pa / 1e6, pt / 1048576, s_amoeba / pa, s_tf / pt,
            s_amoeba / pa / 2, s_tf / pt / 2);
    fprintf(f, "**B. Activation memory with many small micro-batches (less than the "
               "paper's).** With the M = 4K policy a Pipeline-8 AmoebaNet core holds one "
               "micro-batch of %d images in flight and a Transformer core one sequence; the "
               "paper-configuration runs then need %.2f GB of activations per AmoebaNet core "
               "(paper: %.2f GB) and %.2f GiB per Transformer core at Pipeline-8 (paper: %.2f "
               "GiB, the same per core as its Pipeline-1, %.2f GiB). The paper's per-core "
               "figures stay near the whole core's spare memory, which suggests fewer, larger "
               "micro-batches than 4K or memory the simulator does not model (XLA workspace, "
               "padding); the reference table gives neither, so the policy is kept.\n\n",
            128 / am->at[4].M, am->at[4].act / 8 / GB, amoeba_cols[4].act / 8 / GB,
            tf->at[2].act / 8 / GIB, tf_cols[2].act / 8 / GIB, tf_cols[1].act / GIB);
    fprintf(f, "**C. Parameter memory of the paper's own cells.** 12 B x the paper's parameter "
               "count gives, per AmoebaNet column:");
    for (int i = 0; i < NCOL; i++)
        fprintf(f, "%s %s %.2f GB (paper %.2f GB)", i ? "," : "", amoeba_cols[i].name,
                12 * amoeba_cols[i].params / GB, amoeba_cols[i].pmem / GB);
    fprintf(f, ". The simulator's parameter memory is exactly 12 B x its parameter count, so "
               "where the paper's cell is not (Pipeline-8: %.2f x), the error is the paper's "
               "own inconsistency, not the parameter count (within 2.5 %% in every column).\n\n",
            amoeba_cols[4].pmem / (12 * amoeba_cols[4].params));
    fputs("**D. The largest model's size follows the activation model.** Parameters and "
          "activations share a core's memory. Where the generator needs more activation bytes "
          "than the paper (note A: Naive-1 and Pipeline-1, whose micro-batches are large), "
          "less room is left for parameters and a smaller model fits; where one small "
          "micro-batch per core is in flight (note B: K >= 4 AmoebaNet, K >= 8 Transformer), "
          "the activations take less room than in the paper and a larger model fits. The "
          "parameter count of a given configuration is right (the paper's configurations: "
          "within 2.5 %), so these cells measure the activation model and the M policy, not "
          "the parameter count.\n\n"
          "**E. The largest model's activation memory** is what its parameters leave of the "
          "cores' memory (less the buffers), so its error follows note D.\n\n"
          "## How much M matters\n\nThe same search with micro-batches of one sample (the "
          "least activation memory GPipe can reach for a mini-batch; batch normalization over "
          "one image is of little use, so this is a bound, not a recommendation):\n\n", f);
    sensitivity(f, am);
    sensitivity(f, tf);
}

int stu_paper_table1(const struct stu_paper_ctx *c)
{
    static struct t1_model models[2];
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
            if ((rc = search(md->t, col, md->amoeba, 0, md->batch, &md->best[i])) < 0 ||
                (rc = search(md->t, col, md->amoeba, 1, md->batch, &md->best_all[i])) < 0)
                return rc;
            if ((rc = eval_cfg(md->t, md->amoeba, col->L, col->D, col->K, col->naive, 0,
                               md->batch, &md->at[i])) < 0)
                return rc;
        }
    }
    double s_amoeba, s_tf;
    if ((rc = stash_per_sample(1, 18, 208, &s_amoeba)) < 0 ||
        (rc = stash_per_sample(0, 3, 0, &s_tf)) < 0)
        return rc;
    struct ps_afile af;
    if ((rc = stu_paper_md_open(c, "table1.md", "Table 1 — maximum model size", &af)) < 0)
        return rc;
    intro(af.f);
    for (int m = 0; m < 2; m++)
        write_tables(af.f, &models[m]);
    notes(af.f, models, s_amoeba, s_tf);
    return stu_paper_md_close(c, &af, 0);
}
