/* mdl_device: the op-level device model (models/mdl_device.h): its JSON
 * fields, presets from devices.json, and the timing of a layer's work. */
#define MDL_DEVICE_JSON
#include "models/mdl_device.h"
#include "models/mdl_topology.h"
#include "models/mdl_topology_int.h"
#include "base/ps_data.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const mdl_device_keys[] = { "precision", "matrix_flops", "vector_flops",
                                        "mem_efficiency", "kernel_overhead_s", "gemm",
                                        "combine", "activation_bytes", "winograd", "preset",
                                        NULL };
const char *const mdl_prec_names[MDL_PREC_N + 1] = { "fp32", "tf32", "bf16", "fp16", NULL };

int mdl_json_check_keys(const char *path, const char *where, json_t *o,
                        const char *const *keys)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        int ok = 0;
        for (const char *const *p = keys; *p; p++)
            ok |= !strcmp(*p, k);
        if (!ok)
            return ps_error(PS_EPARSE, "%s: %s: unknown field '%s'", path, where, k);
    }
    return 0;
}

/* A number in (0, max] (max 0: no upper bound). */
static int pos_num(const char *path, const char *where, const char *key, json_t *v,
                   double max, double *out)
{
    if (!json_is_number(v))
        return ps_error(PS_EPARSE, "%s: %s.%s: must be a number", path, where, key);
    double d = json_number_value(v);
    if (!isfinite(d) || d <= 0 || (max > 0 && d > max)) {
        if (max > 0)
            return ps_error(PS_EINVAL, "%s: %s.%s: must be in (0, %g], got %g", path, where,
                             key, max, d);
        return ps_error(PS_EINVAL, "%s: %s.%s: must be > 0, got %g", path, where, key, d);
    }
    *out = d;
    return 0;
}

static int prec_table(const char *path, const char *where, const char *key, json_t *o,
                      double *peak)
{
    char w[96];
    snprintf(w, sizeof w, "%s.%s", where, key);
    if (!json_is_object(o))
        return ps_error(PS_EPARSE, "%s: %s: must be an object of precisions", path, w);
    int rc;
    if ((rc = mdl_json_check_keys(path, w, o, mdl_prec_names)) < 0)
        return rc;
    for (int p = 0; p < MDL_PREC_N; p++) {
        json_t *v = json_object_get(o, mdl_prec_names[p]);
        if (v && (rc = pos_num(path, w, mdl_prec_names[p], v, 0, &peak[p])) < 0)
            return rc;
    }
    return 0;
}

/* An array of two numbers >= 1. */
static int pair(const char *path, const char *where, const char *key, json_t *v, double *a,
                double *b)
{
    if (!json_is_array(v) || json_array_size(v) != 2 ||
        !json_is_number(json_array_get(v, 0)) || !json_is_number(json_array_get(v, 1)))
        return ps_error(PS_EPARSE, "%s: %s.%s: must be an array of two numbers", path,
                         where, key);
    *a = json_number_value(json_array_get(v, 0));
    *b = json_number_value(json_array_get(v, 1));
    if (!(*a >= 1 && *b >= 1 && *a <= 1e6 && *b <= 1e6 && *a == floor(*a) && *b == floor(*b)))
        return ps_error(PS_EINVAL, "%s: %s.%s: must be whole numbers in [1, 1e6]", path,
                         where, key);
    return 0;
}

static int parse_gemm(const char *path, const char *where, json_t *g, struct mdl_devmodel *m)
{
    static const char *const gkeys[] = { "tile", "units", "pad", "efficiency", NULL };
    char w[96];
    snprintf(w, sizeof w, "%s.gemm", where);
    if (!json_is_object(g))
        return ps_error(PS_EPARSE, "%s: %s: must be an object", path, w);
    int rc;
    if ((rc = mdl_json_check_keys(path, w, g, gkeys)) < 0)
        return rc;
    json_t *tile = json_object_get(g, "tile"), *units = json_object_get(g, "units");
    json_t *pad = json_object_get(g, "pad"), *eff = json_object_get(g, "efficiency");
    if (!tile != !units)
        return ps_error(PS_EPARSE, "%s: %s: 'tile' and 'units' come together", path, w);
    if (tile && pad)
        return ps_error(PS_EPARSE, "%s: %s: 'pad' (TPU) excludes 'tile'/'units' (GPU)",
                         path, w);
    if (tile) {
        /* One tile shape [Tm, Tn], or the shapes the library chooses among. */
        if (json_is_array(tile) && json_array_size(tile) > 0 &&
            json_is_array(json_array_get(tile, 0))) {
            size_t nt = json_array_size(tile);
            if (nt > MDL_TILES_MAX)
                return ps_error(PS_EINVAL, "%s: %s.tile: at most %d shapes, got %zu", path, w,
                                MDL_TILES_MAX, nt);
            for (size_t i = 0; i < nt; i++) {
                char wi[128];
                snprintf(wi, sizeof wi, "%s.tile[%zu]", w, i);
                if ((rc = pair(path, wi, "shape", json_array_get(tile, i), &m->tiles[i][0],
                               &m->tiles[i][1])) < 0)
                    return rc;
            }
            m->n_tiles = (int)nt;
        } else {
            if ((rc = pair(path, w, "tile", tile, &m->tiles[0][0], &m->tiles[0][1])) < 0)
                return rc;
            m->n_tiles = 1;
        }
        m->tile_m = m->tiles[0][0];
        m->tile_n = m->tiles[0][1];
        if ((rc = pos_num(path, w, "units", units, 1e6, &m->units)) < 0)
            return rc;
        if (m->units != floor(m->units))
            return ps_error(PS_EINVAL, "%s: %s.units: must be a whole number", path, w);
        m->tiled = 1;
    }
    if (pad) {
        if ((rc = pair(path, w, "pad", pad, &m->pad_rows, &m->pad_feat)) < 0)
            return rc;
        m->padded = 1;
    }
    if (eff && (rc = pos_num(path, w, "efficiency", eff, 1, &m->gemm_eff)) < 0)
        return rc;
    return 0;
}

static int parse_wino(const char *path, const char *where, json_t *o,
                      struct mdl_devmodel *m)
{
    static const char *const wkeys[] = { "tile", NULL };
    char w[96];
    snprintf(w, sizeof w, "%s.winograd", where);
    if (!json_is_object(o))
        return ps_error(PS_EPARSE, "%s: %s: must be an object", path, w);
    int rc;
    if ((rc = mdl_json_check_keys(path, w, o, wkeys)) < 0)
        return rc;
    json_t *t = json_object_get(o, "tile");
    if (!t)
        return ps_error(PS_EPARSE, "%s: %s: missing field 'tile'", path, w);
    double v = json_is_number(t) ? json_number_value(t) : NAN;
    if (!(v >= 2 && v <= 6) || v != floor(v))
        return ps_error(PS_EINVAL, "%s: %s.tile: must be a whole number in [2, 6]", path, w);
    if (m->padded)
        return ps_error(PS_EPARSE, "%s: %s: excludes gemm 'pad' (TPU)", path, w);
    m->wino_m = v;
    return 0;
}

static int choice(const char *path, const char *where, const char *key, json_t *v,
                  const char *const *names, int n, int *out)
{
    if (json_is_string(v))
        for (int i = 0; i < n; i++)
            if (!strcmp(json_string_value(v), names[i])) {
                *out = i;
                return 0;
            }
    char list[96] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"",
                 i ? (i + 1 == n ? " or " : ", ") : "", names[i]);
    return ps_error(PS_EINVAL, "%s: %s.%s: must be %s", path, where, key, list);
}

int mdl_device_parse(const char *path, const char *where, json_t *o, struct mdl_device *d)
{
    static const char *const comb[] = { "max", "sum" };
    struct mdl_devmodel *m = &d->model;
    memset(m, 0, sizeof *m);
    m->mem_eff = 1;
    m->gemm_eff = 1;
    int rc;
    for (const char *const *k = mdl_device_keys; *k; k++)
        m->on |= strcmp(*k, "preset") && json_object_get(o, *k) != NULL;
    json_t *v;
    if ((v = json_object_get(o, "precision")) &&
        (rc = choice(path, where, "precision", v, mdl_prec_names, MDL_PREC_N,
                     &m->precision)) < 0)
        return rc;
    if ((v = json_object_get(o, "combine")) &&
        (rc = choice(path, where, "combine", v, comb, 2, &m->combine)) < 0)
        return rc;
    if ((v = json_object_get(o, "matrix_flops")) &&
        (rc = prec_table(path, where, "matrix_flops", v, m->mm_peak)) < 0)
        return rc;
    if ((v = json_object_get(o, "vector_flops")) &&
        (rc = prec_table(path, where, "vector_flops", v, m->vec_peak)) < 0)
        return rc;
    if ((v = json_object_get(o, "mem_efficiency")) &&
        (rc = pos_num(path, where, "mem_efficiency", v, 1, &m->mem_eff)) < 0)
        return rc;
    if ((v = json_object_get(o, "kernel_overhead_s"))) {
        if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
            json_number_value(v) < 0 || json_number_value(v) > 1)
            return ps_error(PS_EINVAL, "%s: %s.kernel_overhead_s: must be a number in [0, 1]",
                             path, where);
        m->kernel_s = json_number_value(v);
    }
    if ((v = json_object_get(o, "gemm")) && (rc = parse_gemm(path, where, v, m)) < 0)
        return rc;
    if ((v = json_object_get(o, "activation_bytes")) &&
        (rc = pos_num(path, where, "activation_bytes", v, 16, &m->elem_bytes)) < 0)
        return rc;
    if ((v = json_object_get(o, "winograd")) && !json_is_null(v) &&
        (rc = parse_wino(path, where, v, m)) < 0)
        return rc;
    return 0;
}

/* devices.json: the preset directory's file, parsed. */
static int load_presets(const char *topo_path, json_t **out, char *file, size_t fsz)
{
    const char *slash = strrchr(topo_path, '/');
    int dirlen = slash ? (int)(slash - topo_path) : 0;
    if (slash)
        snprintf(file, fsz, "%.*s/devices.json", dirlen, topo_path);
    else
        snprintf(file, fsz, "devices.json");
    /* Beside the topology, then in the data folder (base/ps_data.h) */
    FILE *probe = fopen(file, "r");
    if (!probe) {
        int rc = ps_data_find("topologies", "devices.json", file, fsz);
        if (rc < 0) {
            char why[PS_ERRMSG_MAX];
            snprintf(why, sizeof why, "%s", ps_errmsg());
            return ps_error(rc, "%s: no devices.json beside it (needed for \"preset\"), and %s",
                            topo_path, why);
        }
    } else {
        fclose(probe);
    }
    char *text;
    size_t len;
    int rc = ps_read_file(file, &text, &len);
    if (rc < 0)
        return rc;
    json_error_t jerr;
    size_t bom = ps_bom_len(text, len);
    json_t *root = json_loadb(text + bom, len - bom, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!root)
        return ps_error(PS_EPARSE, "%s:%d:%d: %s", file, jerr.line, jerr.column, jerr.text);
    static const char *const rkeys[] = { "comment", "source", "devices", NULL };
    if (!json_is_object(root) || !json_is_object(json_object_get(root, "devices"))) {
        json_decref(root);
        return ps_error(PS_EPARSE, "%s: must be an object with \"devices\": { NAME: {..} }",
                         file);
    }
    if ((rc = mdl_json_check_keys(file, "presets", root, rkeys)) < 0) {
        json_decref(root);
        return rc;
    }
    *out = root;
    return 0;
}

int mdl_device_resolve(const char *topo_path, const char *where, json_t *o, json_t **merged)
{
    *merged = NULL;
    json_t *name = json_object_get(o, "preset");
    if (!name)
        return 0;
    if (!json_is_string(name))
        return ps_error(PS_EPARSE, "%s: %s.preset: must be a preset name", topo_path, where);
    char file[4096];
    json_t *root;
    int rc = load_presets(topo_path, &root, file, sizeof file);
    if (rc < 0)
        return rc;
    json_t *pre = json_object_get(json_object_get(root, "devices"), json_string_value(name));
    if (!pre) {
        struct ps_suggest sg;
        const char *k;
        json_t *v;
        ps_suggest_init(&sg, json_string_value(name));
        json_object_foreach(json_object_get(root, "devices"), k, v)
            ps_suggest_add(&sg, k);
        rc = ps_error(PS_EINVAL, "%s: %s.preset: no device '%s' in %s%s", topo_path, where,
                      json_string_value(name), file, ps_suggest_hint(&sg));
        goto out;
    }
    char pw[160];
    snprintf(pw, sizeof pw, "devices.%s", json_string_value(name));
    if (!json_is_object(pre)) {
        rc = ps_error(PS_EPARSE, "%s: %s: must be an object", file, pw);
        goto out;
    }
    for (const char *k = "name"; k; k = !strcmp(k, "name") ? "count" :
                                        !strcmp(k, "count") ? "preset" : NULL)
        if (json_object_get(pre, k)) {
            rc = ps_error(PS_EPARSE, "%s: %s: a preset cannot set '%s'", file, pw, k);
            goto out;
        }
    json_t *m = json_deep_copy(pre);
    if (m) {
        json_object_del(m, "comment");
        json_object_del(m, "source");
    }
    if (!m || json_object_update(m, o) < 0) {
        json_decref(m);
        rc = ps_error(PS_ENOMEM, "%s: out of memory", topo_path);
        goto out;
    }
    json_object_del(m, "preset");
    *merged = m;
out:
    json_decref(root);
    return rc;
}

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

double mdl_device_split_k(const struct mdl_device *d, double tiles, double k)
{
    const struct mdl_devmodel *dm = &d->model;
    if (!dm->tiled || tiles <= 0 || tiles >= dm->units)
        return 1;
    double split = floor(dm->units / tiles);
    double most = floor(k / MDL_SPLIT_K_MIN); /* slices of at least MDL_SPLIT_K_MIN */
    if (split > most)
        split = most;
    return split > 1 ? split : 1;
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
static void gemm_parts(const struct mdl_device *d, double m, double k, double n, double c,
                       double elems, double *math_out, double *mem_out)
{
    const struct mdl_devmodel *dm = &d->model;
    *math_out = *mem_out = 0;
    if (m <= 0 || k <= 0 || n <= 0 || c <= 0)
        return;
    double rate = mm_peak(d) * dm->gemm_eff, math;
    double partials = 0; /* bytes of split-K partial sums, written and read back */
    if (dm->tiled) {
        /* The fastest of the tile shapes (the library's choice; the first
         * on a tie), each with its split-K. */
        math = INFINITY;
        for (int t = 0; t < dm->n_tiles; t++) {
            double tm = dm->tiles[t][0], tn = dm->tiles[t][1];
            double tiles = c * ceil(m / tm) * ceil(n / tn);
            double split = mdl_device_split_k(d, tiles, k);
            double waves = ceil(tiles * split / dm->units);
            double tt = waves * 2 * tm * tn * (k / split) / (rate / dm->units);
            if (tt < math) {
                math = tt;
                partials = split > 1 ? 2 * split * c * m * n * mdl_device_elem_bytes(d) : 0;
            }
        }
    } else if (dm->padded) {
        math = c * 2 * pad_up(m, dm->pad_rows) * pad_up(k, dm->pad_feat) *
               pad_up(n, dm->pad_feat) / rate;
    } else {
        math = c * 2 * m * k * n / rate;
    }
    *math_out = math;
    if (!(elems > 0))
        elems = m * k + k * n + m * n;
    *mem_out = mem_s(d, c * elems * mdl_device_elem_bytes(d) + partials);
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
        double imgs = g->conv && d->model.padded ? pad_up(n, d->model.pad_rows) : n;
        double m = g->rows * imgs, c = g->count;
        double elems = g->in > 0 ? g->in * imgs + g->k * g->n + m * g->n : 0;
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
