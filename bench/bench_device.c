/* bench_device — the op-level device model alone (models/mdl_device.h),
 * no pipeline: published single-GPU training times of whole networks
 * (studies/devices/reference/cnn-benchmarks.csv, with the targets:
 * each row within +-15 %, median |error| <= 8 %), and, for each row whose
 * device runs 3 x 3 convolutions by Winograd's algorithm, the same
 * prediction with every product direct; NVIDIA's published ResNet-50
 * training throughput on V100 and A100 at FP32, TF32 and mixed precision
 * (dle-resnet50.csv, beside the targets); the one published TPU training
 * step of an AmoebaNet (dawnbench-tpu.csv); single kernels against
 * DeepBench (deepbench.csv, no target). Deterministic predictions, not
 * timings; a missed target is reported, not failed: the exit status is 1
 * only on an error (a missing or malformed input). Runs from the
 * repository root (models/topologies, studies/devices). */
#include "studies/stu_csv.h"
#include "analysis/ana_sens.h"
#include "studies/stu_tgneed.h"
#include "models/mdl_device.h"
#include "models/mdl_topology.h"
#include "models/mdl_gen.h"
#include "models/mdl_genwork.h"
#include "base/ps_error.h"
#include "bench/bench_verdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEVICE_ROWS 64

/* The median of n |errors| (a sorted copy) against the median target. */
static void print_median(const char *what, const double *err, int n)
{
    if (n <= 0)
        return;
    double v[DEVICE_ROWS];
    memcpy(v, err, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, dcmp);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    printf("  %s: median |error| %.1f %% over %d rows (target <= 8 %%: %.2fx) %s\n", what,
           100 * med, n, med / MEDIAN_TARGET, verdict(med <= MEDIAN_TARGET));
}

/* One device's forward (*f) and backward with its weight gradients (*b)
 * of a mini-batch by the op-level model (mdl_device_work_s, no pipeline,
 * no optimizer step), seconds, over the layers that state their work, and
 * their split by op class added into cls (NULL: none); whether every layer
 * states its work. */
static int work_sums(const struct mdl_device *d, const struct mdl_profile *p, double batch,
                     double *f, double *b, double *cls)
{
    int all = 1;
    *f = *b = 0;
    for (int l = 0; l < p->n_layers; l++) {
        const struct mdl_work *w = p->layers[l].work;
        if (!w) {
            all = 0;
            continue;
        }
        double tf, tb, tw;
        mdl_device_work_s(d, w, batch, &tf, &tb, &tw);
        *f += tf;
        *b += tb + tw;
        if (cls)
            mdl_device_work_split(d, w, batch, 1, cls);
    }
    return all;
}

/* One GPU's forward + backward of a mini-batch on t's first device: the
 * value ana_knob_solve moves a figure for. */
struct one_gpu {
    const struct mdl_profile *p;
    double batch;
};

static int one_gpu_eval(void *ctx, const struct mdl_topology *t, double *v)
{
    const struct one_gpu *g = ctx;
    double f, b;
    work_sums(&t->devices[0], g->p, g->batch, &f, &b, NULL);
    *v = f + b;
    return 0;
}

/* For a row off by over 15 %: the factor on one figure of the device
 * (analysis/ana_sens.h) that alone makes the prediction equal the
 * measurement, and the sustained fraction it implies: a diagnostic, never
 * applied. */
static int row_needs(const struct mdl_topology *t, const struct mdl_profile *p, double batch,
                     double measured_s)
{
    static const enum ana_knob knobs[3] = { ANA_KNOB_MATRIX, ANA_KNOB_MEMORY,
                                            ANA_KNOB_OVERHEAD };
    const struct mdl_device *d = &t->devices[0];
    struct one_gpu g = { p, batch };
    printf("    what one figure alone would have to be (a diagnostic, never applied):");
    for (int i = 0; i < 3; i++) {
        double f;
        int rc = ana_knob_solve(t, knobs[i], measured_s, one_gpu_eval, &g, &f);
        if (rc < 0)
            return rc;
        double frac = stu_tg_need_frac(d, knobs[i]); /* the preset's sustained fraction */
        printf("%s %s ", i ? ";" : "", ana_knob_titles[knobs[i]]);
        if (isnan(f))
            printf("none in [1/64, 64]");
        else if (frac > 0)
            printf("x%.3g (%.2f of %s)", f, f * frac, knobs[i] == ANA_KNOB_MATRIX
                   ? "the peak on whole tiles" : "the datasheet bandwidth");
        else
            printf("x%.3g", f);
    }
    printf("\n");
    return 0;
}

/* The TPU device model against the only published TPU training step of an
 * AmoebaNet found (studies/devices/reference/dawnbench-tpu.csv):
 * AmoebaNet-D (L, D) at the row's image size, what XLA keeps for backward
 * (keep=fused, as the GPipe tables), on the first device of the row's
 * topology, with FP32 activations and, beside it, bfloat16 ones
 * (act_bytes=2, what Google's TPU AmoebaNet code keeps when its use_bp16
 * flag is set; the entry does not record it). Beside the targets. */
static int tpu_check(void)
{
    static const char *const cols[] = { "L", "D", "image", "topology", "batch", "step_ms" };
    struct stu_csv c;
    int rc = stu_csv_open(&c, "studies/devices/reference", "dawnbench-tpu.csv", cols, 6);
    if (rc < 0)
        return rc;
    printf("\nDevice model against a published TPU training step (%s; forward + backward "
           "of one core's mini-batch, no pipeline; the measured step is an upper bound)\n",
           c.path);
    int rows = 0;
    while (rc >= 0 && (rc = stu_csv_row(&c)) > 0) {
        int L, D, image, batch;
        double step_ms;
        if ((rc = stu_csv_whole(&c, 0, 3, 999, &L)) < 0 ||
            (rc = stu_csv_whole(&c, 1, 8, 99999, &D)) < 0 ||
            (rc = stu_csv_whole(&c, 2, 32, 9999, &image)) < 0 ||
            (rc = stu_csv_whole(&c, 4, 1, 1 << 20, &batch)) < 0 ||
            (rc = stu_csv_num(&c, 5, 0, &step_ms)) < 0)
            break;
        if (!(step_ms > 0)) {
            rc = ps_error(PS_EPARSE, "%s:%d: field 'step_ms': must be > 0", c.path, c.line);
            break;
        }
        rows++;
        char topo_path[256], spec[2][128];
        snprintf(topo_path, sizeof topo_path, "models/topologies/%s", stu_csv_field(&c, 3));
        for (int k = 0; k < 2; k++)
            snprintf(spec[k], sizeof spec[k], "amoebanet:L=%d,D=%d,image=%d,keep=fused,"
                     "act_bytes=%d", L, D, image, k ? 2 : 4);
        struct mdl_profile *p = NULL, *q = NULL;
        struct mdl_topology *t = NULL;
        if ((rc = mdl_model_open(spec[0], &p)) < 0 || (rc = mdl_model_open(spec[1], &q)) < 0 ||
            (rc = mdl_topology_load(topo_path, &t)) < 0) {
            mdl_profile_free(p);
            mdl_profile_free(q);
            break;
        }
        const struct mdl_device *dv = &t->devices[0];
        double pf, pb, qf, qb;
        int all = work_sums(dv, p, batch, &pf, &pb, NULL);
        all = work_sums(dv, q, batch, &qf, &qb, NULL) && all;
        double a = (pf + pb) * 1e3, b = (qf + qb) * 1e3;
        if (!dv->model.on || !all) {
            rc = ps_error(PS_EINVAL, "%s:%d: %s's first device has no op-level model or a "
                          "layer states no work", c.path, c.line, topo_path);
            mdl_topology_free(t);
            mdl_profile_free(p);
            mdl_profile_free(q);
            break;
        }
        double ea = a / step_ms - 1, eb = b / step_ms - 1;
        printf("  AmoebaNet-D (%d, %d) at %d on %s (%s) batch %d  measured %.1f ms  "
               "predicted %.1f ms (FP32 activations) error %+.1f %% (%.2fx of +-15 %%) %s;  "
               "bfloat16 activations %.1f ms error %+.1f %%\n", L, D, image,
               t->devices[0].name, stu_csv_field(&c, 3), batch, step_ms, a, 100 * ea,
               fabs(ea) / CELL_TARGET, verdict(fabs(ea) <= CELL_TARGET), b, 100 * eb);
        mdl_topology_free(t);
        mdl_profile_free(p);
        mdl_profile_free(q);
    }
    if (rc >= 0)
        rc = stu_csv_rows_end(&c, rows ? rows : 1, "the TPU training steps");
    stu_csv_close(&c);
    return rc < 0 ? rc : 0;
}

/* The device model against NVIDIA's published single-GPU training
 * throughput of ResNet-50 on the V100 and A100 presets
 * (studies/devices/reference/dle-resnet50.csv): each row's model at its
 * activation bytes on the first device of its topology, run at the row's
 * precision (FP32, TF32 or FP16 mixed precision: what the matrix units
 * run), one mini-batch forward + backward (no optimizer step, no data
 * loading, both in the measured img/s), as samples/s; with the split by op
 * class and, off by over 15 %, what one figure alone would need. Beside the
 * targets, like the other single-GPU rows. */
static int dle_check(double *err, int *n_err, int max_err)
{
    static const char *const cols[] = { "model", "act_bytes", "topology", "precision",
                                        "layout", "batch", "samples_per_s" };
    static const char *const layouts[] = { "nchw", "nhwc" };
    struct stu_csv c;
    int rc = stu_csv_open(&c, "studies/devices/reference", "dle-resnet50.csv", cols, 7);
    if (rc < 0)
        return rc;
    printf("\nDevice model against NVIDIA's published single-GPU training throughput (%s; "
           "forward + backward of one mini-batch at the row's precision; the measured img/s "
           "also pays the data loader and the optimizer)\n", c.path);
    int rows = 0;
    while (rc >= 0 && (rc = stu_csv_row(&c)) > 0) {
        int ab, batch, prec, layout;
        double sps;
        if ((rc = stu_csv_whole(&c, 1, 1, 16, &ab)) < 0 ||
            (rc = stu_csv_key(&c, 3, mdl_prec_names, MDL_PREC_N, &prec)) < 0 ||
            (rc = stu_csv_key(&c, 4, layouts, 2, &layout)) < 0 ||
            (rc = stu_csv_whole(&c, 5, 1, 1 << 20, &batch)) < 0 ||
            (rc = stu_csv_pos(&c, 6, 0, &sps)) < 0)
            break;
        if (*n_err == max_err) {
            rc = ps_error(PS_EPARSE, "%s:%d: more than %d rows", c.path, c.line, max_err);
            break;
        }
        rows++;
        char spec[160], topo_path[256];
        snprintf(spec, sizeof spec, "%s,act_bytes=%d", stu_csv_field(&c, 0), ab);
        snprintf(topo_path, sizeof topo_path, "models/topologies/%s", stu_csv_field(&c, 2));
        struct mdl_profile *p = NULL;
        struct mdl_topology *t = NULL;
        if ((rc = mdl_model_open(spec, &p)) < 0 || (rc = mdl_topology_load(topo_path, &t)) < 0) {
            mdl_profile_free(p);
            break;
        }
        struct mdl_device *d = &t->devices[0];
        d->model.precision = prec;
        double f, b, cls[MDL_SPLIT_N] = { 0 };
        int all = work_sums(d, p, batch, &f, &b, cls);
        if (!d->model.on || !all || !(f + b > 0)) {
            rc = ps_error(PS_EINVAL, "%s:%d: %s's first device has no op-level model or a "
                          "layer states no work", c.path, c.line, topo_path);
            mdl_topology_free(t);
            mdl_profile_free(p);
            break;
        }
        double pred = batch / (f + b), e = pred / sps - 1;
        printf("  %-16s %-4s %-5s on %s of %-15s batch %3d  measured %7.1f samples/s "
               "predicted %7.1f samples/s error %+6.1f %%  (%.2fx of +-15 %%) %s\n",
               stu_csv_field(&c, 0), stu_csv_field(&c, 3), layouts[layout], d->name,
               stu_csv_field(&c, 2), batch, sps, pred, 100 * e, fabs(e) / CELL_TARGET,
               verdict(fabs(e) <= CELL_TARGET));
        printf("    predicted forward + backward %.2f ms by op class: matrix %.2f ms, vector "
               "%.2f ms, memory %.2f ms, per-kernel overhead %.2f ms\n", (f + b) * 1e3,
               cls[MDL_SPLIT_MATRIX] * 1e3, cls[MDL_SPLIT_VECTOR] * 1e3,
               cls[MDL_SPLIT_MEMORY] * 1e3, cls[MDL_SPLIT_OVERHEAD] * 1e3);
        if (fabs(e) > CELL_TARGET && (rc = row_needs(t, p, batch, batch / sps)) < 0) {
            mdl_topology_free(t);
            mdl_profile_free(p);
            break;
        }
        err[(*n_err)++] = fabs(e);
        mdl_topology_free(t);
        mdl_profile_free(p);
    }
    if (rc >= 0)
        rc = stu_csv_rows_end(&c, rows ? rows : 1, "the training throughputs");
    stu_csv_close(&c);
    return rc < 0 ? rc : 0;
}

/* The device model alone against published single-GPU training times
 * (studies/devices/reference/cnn-benchmarks.csv): each row's model from
 * its generator on one device of the row's preset (the topology
 * models/topologies/<preset>-1.json), forward and forward + backward of one
 * mini-batch summed over the layers (mdl_device_work_s; no pipeline, no
 * optimizer step, as the benchmark times them), with the split by op
 * class. Not a target of the issue: it says how far the device model is
 * from real kernels before any pipeline is simulated. */
static int device_check(double *err, int *n_err)
{
    static const char *const cols[] = { "model", "device", "batch", "forward_ms",
                                        "backward_ms", "total_ms" };
    struct stu_csv c;
    int rc = stu_csv_open(&c, "studies/devices/reference", "cnn-benchmarks.csv", cols, 6);
    if (rc < 0)
        return rc;
    printf("\nDevice model against single-GPU measurements (%s; forward and forward + "
           "backward of one mini-batch, no pipeline)\n", c.path);
    int n = 0;
    while (rc >= 0 && (rc = stu_csv_row(&c)) > 0) {
        if (n == DEVICE_ROWS) {
            rc = ps_error(PS_EPARSE, "%s:%d: more than %d rows", c.path, c.line, DEVICE_ROWS);
            break;
        }
        double batch, fwd_ms, bwd_ms, tot_ms;
        if ((rc = stu_csv_num(&c, 2, 0, &batch)) < 0 || (rc = stu_csv_num(&c, 3, 0, &fwd_ms)) < 0 ||
            (rc = stu_csv_num(&c, 4, 0, &bwd_ms)) < 0 || (rc = stu_csv_num(&c, 5, 0, &tot_ms)) < 0)
            break;
        char topo_path[256];
        snprintf(topo_path, sizeof topo_path, "models/topologies/%s-1.json",
                 stu_csv_field(&c, 1));
        struct mdl_profile *prof = NULL;
        struct mdl_topology *t = NULL;
        if ((rc = mdl_model_open(stu_csv_field(&c, 0), &prof)) < 0 ||
            (rc = mdl_topology_load(topo_path, &t)) < 0) {
            mdl_profile_free(prof);
            break;
        }
        const struct mdl_device *d = &t->devices[0];
        double f, b, cls[MDL_SPLIT_N] = { 0 };
        int have = work_sums(d, prof, batch, &f, &b, cls) && d->model.on;
        if (!have || !(f + b > 0)) { /* a verdict on part of the sum is none (as dle_check) */
            rc = ps_error(PS_EINVAL, "%s:%d: %s's device has no op-level model or a layer "
                          "states no work", c.path, c.line, topo_path);
            mdl_topology_free(t);
            mdl_profile_free(prof);
            break;
        }
        double ef = f * 1e3 / fwd_ms - 1, et = (f + b) * 1e3 / tot_ms - 1;
        printf("  %-18s on %-15s batch %3.0f  forward: measured %7.2f ms predicted %7.2f ms "
               "error %+6.1f %%;  forward + backward: measured %7.2f ms predicted %7.2f ms "
               "error %+6.1f %%  (%.2fx of +-15 %%) %s\n", stu_csv_field(&c, 0),
               stu_csv_field(&c, 1), batch, fwd_ms, f * 1e3, 100 * ef, tot_ms, (f + b) * 1e3,
               100 * et, fabs(et) / CELL_TARGET, verdict(fabs(et) <= CELL_TARGET));
        printf("    predicted forward + backward by op class: matrix %.2f ms, vector %.2f "
                   "ms, memory %.2f ms, per-kernel overhead %.2f ms\n",
                   cls[MDL_SPLIT_MATRIX] * 1e3, cls[MDL_SPLIT_VECTOR] * 1e3,
                   cls[MDL_SPLIT_MEMORY] * 1e3, cls[MDL_SPLIT_OVERHEAD] * 1e3);
        if (d->model.wino_m > 0) { /* what the Winograd rule changes */
            struct mdl_device direct = *d;
            double df, db;
            direct.model.wino_m = 0;
            work_sums(&direct, prof, batch, &df, &db, NULL);
            printf("    every product direct (no Winograd): forward %.2f ms error %+.1f %%, "
                   "forward + backward %.2f ms error %+.1f %%\n", df * 1e3,
                   100 * (df * 1e3 / fwd_ms - 1), (df + db) * 1e3,
                   100 * ((df + db) * 1e3 / tot_ms - 1));
        }
        if (fabs(et) > CELL_TARGET &&
            (rc = row_needs(t, prof, batch, tot_ms / 1e3)) < 0) {
            mdl_topology_free(t);
            mdl_profile_free(prof);
            break;
        }
        err[n++] = fabs(et);
        mdl_topology_free(t);
        mdl_profile_free(prof);
    }
    stu_csv_close(&c);
    if (rc < 0)
        return rc;
    *n_err = n;
    print_median("single-GPU forward + backward (these rows)", err, n);
    return 0;
}

/* Single kernels against DeepBench's published Titan X (Pascal) times
 * (studies/devices/reference/deepbench.csv): each product's time by the
 * preset's tile and wave rule (mdl_device_gemm_s), and the convolution's
 * forward + data and filter gradients (conv-train: the row's total time,
 * which set nothing). No target (the targets are for whole steps). */
static int kernel_check(void)
{
    static const char *const cols[] = { "kind", "m", "n", "k", "in", "measured_ms",
                                        "source_row" };
    struct stu_csv c;
    struct mdl_topology *t = NULL;
    int rc = mdl_topology_load("models/topologies/titan-x-pascal-1.json", &t);
    if (rc < 0)
        return rc;
    if ((rc = stu_csv_open(&c, "studies/devices/reference", "deepbench.csv", cols, 7)) < 0) {
        mdl_topology_free(t);
        return rc;
    }
    char how[512];
    mdl_device_describe(&t->devices[0], how, sizeof how);
    printf("\nSingle kernels on titan-x-pascal against DeepBench (%s; predicted by %s)\n",
           c.path, how);
    while ((rc = stu_csv_row(&c)) > 0) {
        double m, n, k, in, ms;
        if ((rc = stu_csv_num(&c, 1, 0, &m)) < 0 || (rc = stu_csv_num(&c, 2, 0, &n)) < 0 ||
            (rc = stu_csv_num(&c, 3, 0, &k)) < 0 || (rc = stu_csv_num(&c, 4, 0, &in)) < 0 ||
            (rc = stu_csv_num(&c, 5, 0, &ms)) < 0)
            break;
        int train = !strcmp(stu_csv_field(&c, 0), "conv-train");
        double p = mdl_device_conv_s(&t->devices[0], m, k, n, 1, in) * 1e3, flops = 2 * m * n * k;
        if (train) { /* forward, data gradient and filter gradient of one convolution */
            struct mdl_genwork gw;
            double f, b, w;
            mdl_genwork_init(&gw);
            mdl_genwork_conv(&gw, m, k, n, 1, 1, in);
            mdl_device_work_s(&t->devices[0], &gw.w, 1, &f, &b, &w);
            p = (f + b + w) * 1e3;
            flops *= 3;
        }
        printf("  %-10s M=%-6.0f N=%-4.0f K=%-5.0f measured %7.4f ms (%5.2f TFLOP/s) predicted "
               "%7.4f ms (%5.2f TFLOP/s)  predicted/measured %.2f  [%s]\n", stu_csv_field(&c, 0),
               m, n, k, ms, flops / ms / 1e9, p, flops / p / 1e9, p / ms, stu_csv_field(&c, 6));
    }
    stu_csv_close(&c);
    mdl_topology_free(t);
    return rc;
}

int main(void)
{
    printf("bench_device: the device model alone vs published measurements (deterministic "
           "predictions, not timings)\n");
    double err[DEVICE_ROWS];
    int n = 0, n_cnn;
    int rc = device_check(err, &n);
    n_cnn = n;
    if (rc >= 0 && (rc = dle_check(err, &n, DEVICE_ROWS)) >= 0) {
        print_median("NVIDIA's ResNet-50 training throughputs", err + n_cnn, n - n_cnn);
        print_median("every single-GPU row (both files)", err, n);
    }
    if (rc < 0 || (rc = tpu_check()) < 0 || (rc = kernel_check()) < 0) {
        fprintf(stderr, "bench_device: %s\n", ps_errmsg());
        return 1;
    }
    printf("\nbench_device: %d figures PASS, %d MISS (a miss is reported, not failed)\n",
           n_pass, n_miss);
    return 0;
}
