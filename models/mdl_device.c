/* mdl_device: the op-level device model (models/mdl_device.h): the timing
 * of a layer's work; its JSON fields and presets are mdl_device_json.c's. */
#include "models/mdl_device.h"
#include "models/mdl_topology.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double mdl_device_elem_bytes(const struct mdl_device *d)
{
    if (d->model.elem_bytes > 0)
        return d->model.elem_bytes;
    return d->model.precision >= MDL_BF16 ? 2 : 4;
}

static double mm_peak(const struct mdl_device *d)
{
    double p = d->model.mm_peak[d->model.precision];
    return p > 0 ? p : d->flops;
}

static double vec_peak(const struct mdl_device *d)
{
    double p = d->model.vec_peak[d->model.precision];
    return p > 0 ? p : d->flops;
}

static double pad_up(double x, double q) { return ceil(x / q) * q; }

double mdl_device_split_max(const struct mdl_device *d, double tiles)
{
    const struct mdl_devmodel *dm = &d->model;
    if (!dm->tiled || tiles <= 0 || tiles >= dm->units)
        return 1;
    return floor(dm->units / tiles);
}

double mdl_device_split_depth(double k, double split)
{
    return split > 1 && k / split < MDL_SPLIT_K_MIN ? MDL_SPLIT_K_MIN : k / split;
}

static double combine(const struct mdl_device *d, double math, double mem)
{
    return d->model.combine == MDL_COMBINE_SUM ? math + mem : fmax(math, mem);
}

static double mem_s(const struct mdl_device *d, double bytes)
{
    return d->mem_bandwidth > 0 ? bytes / (d->mem_bandwidth * d->model.mem_eff) : 0;
}

/* One product's math and memory times (before combining). `elems`: the
 * elements its three operands hold in memory, per product (0: m*k + k*n +
 * m*n; a convolution's implicit GEMM reads its input tensor, not the m x k
 * im2col matrix). */
static void gemm_parts3(const struct mdl_device *d, double m, double k, double n, double c,
                        double elems, const double pad[3], double *math_out, double *mem_out)
{
    const struct mdl_devmodel *dm = &d->model;
    *math_out = *mem_out = 0;
    if (m <= 0 || k <= 0 || n <= 0 || c <= 0)
        return;
    double rate = mm_peak(d) * dm->gemm_eff, math;
    double partials = 0; /* bytes of split-K partial sums, written and read back */
    if (!(elems > 0))
        elems = m * k + k * n + m * n;
    double bytes = c * elems * mdl_device_elem_bytes(d);
    if (dm->tiled) {
        /* The fastest of the tile shapes (the library's choice; the first
         * on a tie), each with its split-K: its math and its memory (the
         * operands and its own partial sums) combined, not its math alone
         * (a shape whose split-K partials made it memory-bound was kept
         * over a faster one) */
        double best = INFINITY;
        math = INFINITY;
        for (int t = 0; t < dm->n_tiles; t++) {
            double tm = dm->tiles[t][0], tn = dm->tiles[t][1];
            double tiles = c * ceil(m / tm) * ceil(n / tn);
            /* each split from none to the most the idle units take, the
             * fastest (fewer slices on a tie): a time that never falls as
             * K grows (helper-137: the most slices of at least 128 made K =
             * 256 twice as fast as K = 255) */
            double most = mdl_device_split_max(d, tiles);
            for (double split = 1; split <= most; split++) {
                double waves = ceil(tiles * split / dm->units);
                double tt = waves * 2 * tm * tn * mdl_device_split_depth(k, split) /
                            (rate / dm->units);
                double part = split > 1 ? 2 * split * c * m * n * mdl_device_elem_bytes(d) : 0;
                double time = combine(d, tt, mem_s(d, bytes + part));
                if (time < best) {
                    best = time;
                    math = tt;
                    partials = part;
                }
            }
        }
    } else if (dm->padded) {
        math = c * 2 * pad_up(m, pad[0]) * pad_up(k, pad[1]) * pad_up(n, pad[2]) / rate;
    } else {
        math = c * 2 * m * k * n / rate;
    }
    *math_out = math;
    *mem_out = mem_s(d, bytes + partials);
}

/* A product with the device's own padding: rows to pad_rows, reduction and
 * output to pad_feat. */
static void gemm_parts(const struct mdl_device *d, double m, double k, double n, double c,
                       double elems, double *math_out, double *mem_out)
{
    const double pad[3] = { d->model.pad_rows, d->model.pad_feat, d->model.pad_feat };
    gemm_parts3(d, m, k, n, c, elems, pad, math_out, mem_out);
}

/* One kernel's math and memory time. */
struct gpass {
    double math, mem;
};

static void keep_faster(const struct mdl_device *d, struct gpass *p, double math, double mem)
{
    if (combine(d, math, mem) < combine(d, p->math, p->mem)) {
        p->math = math;
        p->mem = mem;
    }
}

/* A 3 x 3 stride-1 convolution's passes by fused Winograd F(m x m, 3 x 3)
 * (mdl_device.h), each kept where it is faster than the direct one. */
static void wino_passes(const struct mdl_device *d, const struct mdl_gemm *g, double n,
                        struct gpass *f, struct gpass b[2], struct gpass *w)
{
    double m = d->model.wino_m, a2 = (m + 2) * (m + 2);
    double side = ceil(sqrt(g->rows) / m), p = n * side * side;
    double cin = g->k / 9, c = g->count * a2;
    /* the direct product's operands (input, filter, output), per product */
    double in = g->in > 0 ? g->in : g->rows * cin;
    double elems = (in * n + g->k * g->n + g->rows * n * g->n) / a2;
    double math, mem;
    gemm_parts(d, p, cin, g->n, c, elems, &math, &mem);
    keep_faster(d, f, math, mem);
    if (g->weight == 1) {
        gemm_parts(d, p, g->n, cin, c, elems, &math, &mem);
        keep_faster(d, &b[0], math, mem);
    }
    gemm_parts(d, cin, p, g->n, c, elems, &math, &mem);
    keep_faster(d, w, math, mem);
}

/* The kernels of product g on n samples: its forward, its input
 * gradient(s) (b[0], and an activation product's second one b[1]) and its
 * weight gradient; a kernel that does not exist is zero. The operands of a
 * weight product with `in` (a convolution) are its input tensor, the weight
 * and the output, in every pass. */
static void gemm_passes(const struct mdl_device *d, const struct mdl_gemm *g, double n,
                        struct gpass *f, struct gpass b[2], struct gpass *w)
{
    memset(b, 0, 2 * sizeof *b);
    memset(w, 0, sizeof *w);
    if (g->weight) {
        /* A convolution's images are a tiled dimension of their own: a
         * padded device pads them (mdl_device.h). */
        const struct mdl_devmodel *dm = &d->model;
        double imgs = n, m, c = g->count, elems;
        if (g->conv && dm->padded) {
            /* XLA pads a convolution's images and features alike in its
             * three products (mdl_device.h): images to pi, the features
             * (the reduction Cin x kh x kw and Cout) to pf, from
             * pad_large.from images on with pad_large.pad */
            int large = dm->pad_large_from > 0 && n >= dm->pad_large_from;
            double pi = large ? dm->pad_large_imgs : dm->pad_rows;
            double pf = large ? dm->pad_large_feat : dm->pad_feat;
            imgs = pad_up(n, pi);
            m = g->rows * imgs;
            elems = g->in > 0 ? g->in * imgs + g->k * g->n + m * g->n : 0;
            const double pfw[3] = { 1, pf, pf }, pw[3] = { pf, 1, pf };
            gemm_parts3(d, m, g->k, g->n, c, elems, pfw, &f->math, &f->mem);
            if (g->weight == 1) /* 2: reads the model's input, no input gradient */
                gemm_parts3(d, m, g->n, g->k, c, elems, pfw, &b[0].math, &b[0].mem);
            gemm_parts3(d, g->k, m, g->n, c, elems, pw, &w->math, &w->mem);
            return; /* no Winograd with "pad" */
        }
        m = g->rows * imgs;
        elems = g->in > 0 ? g->in * imgs + g->k * g->n + m * g->n : 0;
        gemm_parts(d, m, g->k, g->n, c, elems, &f->math, &f->mem);
        if (g->weight == 1) /* 2: reads the model's input, no input gradient */
            gemm_parts(d, m, g->n, g->k, c, elems, &b[0].math, &b[0].mem);
        gemm_parts(d, g->k, m, g->n, c, elems, &w->math, &w->mem);
        if (g->wino && d->model.wino_m > 0 && d->model.precision == MDL_FP32)
            wino_passes(d, g, n, f, b, w);
    } else {
        double c = g->count * n;
        gemm_parts(d, g->rows, g->k, g->n, c, 0, &f->math, &f->mem);
        gemm_parts(d, g->rows, g->n, g->k, c, 0, &b[0].math, &b[0].mem);
        gemm_parts(d, g->k, g->rows, g->n, c, 0, &b[1].math, &b[1].mem);
    }
}

double mdl_device_conv_s(const struct mdl_device *d, double m, double k, double n, double c,
                         double in)
{
    double math, mem;
    gemm_parts(d, m, k, n, c, in > 0 ? in + k * n + m * n : 0, &math, &mem);
    return combine(d, math, mem);
}

double mdl_device_gemm_s(const struct mdl_device *d, double m, double k, double n, double c)
{
    double math, mem;
    gemm_parts(d, m, k, n, c, 0, &math, &mem);
    return combine(d, math, mem);
}

/* Adds one kernel's time to its class: math to `k` (matrix or vector) when
 * it bounds the kernel, else to memory; with "sum" each part to its own. */
static void split_add(const struct mdl_device *d, double math, double mem, int k,
                      double cls[MDL_SPLIT_N], double times)
{
    if (d->model.combine == MDL_COMBINE_SUM) {
        cls[k] += times * math;
        cls[MDL_SPLIT_MEMORY] += times * mem;
    } else if (math >= mem) {
        cls[k] += times * math;
    } else {
        cls[MDL_SPLIT_MEMORY] += times * mem;
    }
}

void mdl_device_work_split(const struct mdl_device *d, const struct mdl_work *w, double n,
                           double forwards, double cls[MDL_SPLIT_N])
{
    double rate = mm_peak(d) * d->model.gemm_eff;
    for (int i = 0; i < w->n_gemms; i++) {
        struct gpass f, b[2], wg;
        gemm_passes(d, &w->gemms[i], n, &f, b, &wg);
        split_add(d, f.math, f.mem, MDL_SPLIT_MATRIX, cls, forwards);
        split_add(d, b[0].math, b[0].mem, MDL_SPLIT_MATRIX, cls, 1);
        split_add(d, b[1].math, b[1].mem, MDL_SPLIT_MATRIX, cls, 1);
        split_add(d, wg.math, wg.mem, MDL_SPLIT_MATRIX, cls, 1);
    }
    if (w->n_gemms == 0)
        cls[MDL_SPLIT_MATRIX] += (forwards * w->mm_fwd + w->mm_dgrad + w->mm_wgrad) * n / rate;
    if (w->vec_fwd > 0 || w->bytes_fwd > 0)
        split_add(d, w->vec_fwd * n / vec_peak(d), mem_s(d, w->bytes_fwd * n),
                  MDL_SPLIT_VECTOR, cls, forwards);
    if (w->vec_bwd > 0 || w->bytes_bwd > 0)
        split_add(d, w->vec_bwd * n / vec_peak(d), mem_s(d, w->bytes_bwd * n),
                  MDL_SPLIT_VECTOR, cls, 1);
    cls[MDL_SPLIT_OVERHEAD] += (forwards * w->kernels_fwd + w->kernels_bwd + w->kernels_wgrad) *
                               d->model.kernel_s;
}

double mdl_device_vec_s(const struct mdl_device *d, double flops, double bytes)
{
    if (flops <= 0 && bytes <= 0)
        return 0;
    return combine(d, flops / vec_peak(d), mem_s(d, bytes));
}

void mdl_device_work_s(const struct mdl_device *d, const struct mdl_work *w, double n,
                       double *f, double *b, double *wg)
{
    double tf = 0, tb = 0, tw = 0;
    double rate = mm_peak(d) * d->model.gemm_eff;
    if (w->n_gemms > 0) {
        for (int i = 0; i < w->n_gemms; i++) {
            struct gpass pf, pb[2], pw;
            gemm_passes(d, &w->gemms[i], n, &pf, pb, &pw);
            tf += combine(d, pf.math, pf.mem);
            tb += combine(d, pb[0].math, pb[0].mem) + combine(d, pb[1].math, pb[1].mem);
            tw += combine(d, pw.math, pw.mem);
        }
    } else {
        tf = w->mm_fwd * n / rate;
        tb = w->mm_dgrad * n / rate;
        tw = w->mm_wgrad * n / rate;
    }
    tf += mdl_device_vec_s(d, w->vec_fwd * n, w->bytes_fwd * n) +
          w->kernels_fwd * d->model.kernel_s;
    tb += mdl_device_vec_s(d, w->vec_bwd * n, w->bytes_bwd * n) +
          w->kernels_bwd * d->model.kernel_s;
    tw += w->kernels_wgrad * d->model.kernel_s;
    *f = tf;
    *b = tb;
    *wg = tw;
}

int mdl_device_describe(const struct mdl_device *d, char *buf, size_t n)
{
    const struct mdl_devmodel *dm = &d->model;
    if (!dm->on)
        return snprintf(buf, n, "%.4g TFLOP/s at every op, efficiency max %g, batch_half %g, "
                        "%g s overhead per op, %.4g GB/s memory (the device rule of "
                        "models/mdl_topology.h)", d->flops / 1e12, d->eff_max, d->batch_half,
                        d->overhead_s, d->mem_bandwidth / 1e9);
    const char *prec = mdl_prec_names[dm->precision];
    int k = snprintf(buf, n, "the op-level model (models/mdl_device.h) in %s: matrix %.4g "
                     "TFLOP/s, vector %.4g TFLOP/s, memory %.4g GB/s x %g sustained, "
                     "%g us per kernel, ", prec, mm_peak(d) / 1e12, vec_peak(d) / 1e12,
                     d->mem_bandwidth / 1e9, dm->mem_eff, dm->kernel_s * 1e6);
    if (k < 0 || (size_t)k >= n)
        return k;
    int m;
    if (dm->tiled) {
        char shapes[160] = "";
        for (int t = 0; t < dm->n_tiles; t++)
            snprintf(shapes + strlen(shapes), sizeof shapes - strlen(shapes), "%s%gx%g",
                     t ? (t + 1 == dm->n_tiles ? " or " : ", ") : "", dm->tiles[t][0],
                     dm->tiles[t][1]);
        m = snprintf(buf + k, n - (size_t)k, "products in %s%s tiles over %g units (waves, "
                     "split-K)", dm->n_tiles > 1 ? "the fastest of " : "", shapes, dm->units);
    }
    else if (dm->padded && dm->pad_large_from > 0)
        m = snprintf(buf + k, n - (size_t)k, "products padded to %g rows and %g features (a "
                     "convolution's images to %g and its features to %g, from %g images on "
                     "to %g and %g)", dm->pad_rows, dm->pad_feat, dm->pad_rows, dm->pad_feat,
                     dm->pad_large_from, dm->pad_large_imgs, dm->pad_large_feat);
    else if (dm->padded)
        m = snprintf(buf + k, n - (size_t)k, "products padded to %g rows (a convolution's "
                     "images to %g) and %g features", dm->pad_rows, dm->pad_rows,
                     dm->pad_feat);
    else
        m = snprintf(buf + k, n - (size_t)k, "products at their exact shape");
    if (m < 0 || (size_t)(k + m) >= n)
        return m < 0 ? m : k + m;
    k += m;
    m = snprintf(buf + k, n - (size_t)k, " at %g of the peak, math and memory combined by %s",
                 dm->gemm_eff, dm->combine == MDL_COMBINE_SUM ? "sum" : "max (roofline)");
    if (m < 0 || (size_t)(k + m) >= n || !(dm->wino_m > 0))
        return m < 0 ? m : k + m;
    k += m;
    m = snprintf(buf + k, n - (size_t)k, ", 3 x 3 stride-1 convolutions by fused Winograd "
                 "F(%gx%g, 3x3) where faster", dm->wino_m, dm->wino_m);
    return m < 0 ? m : k + m;
}
