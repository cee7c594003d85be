/* mdl_device: the op-level device model (models/mdl_device.h): its JSON
 * fields, presets from devices.json, and the timing of a layer's work. */
#define MDL_DEVICE_JSON
#ifndef PIPESIM_SHARE_DIR
#define PIPESIM_SHARE_DIR "/usr/local/share/pipesim"
#endif
#ifndef PIPESIM_SRC_DIR
#define PIPESIM_SRC_DIR "."
#endif
#include "models/mdl_device.h"
#include "models/mdl_topology.h"
#include "models/mdl_topology_int.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const mdl_device_keys[] = { "precision", "matrix_flops", "vector_flops",
                                        "mem_efficiency", "kernel_overhead_s", "gemm",
                                        "combine", "activation_bytes", "preset", NULL };
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
        if ((rc = pair(path, w, "tile", tile, &m->tile_m, &m->tile_n)) < 0 ||
            (rc = pos_num(path, w, "units", units, 1e6, &m->units)) < 0)
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
    /* Beside the topology, then $PIPESIM_DATA (or its topologies/), then
     * the installed presets, then the source tree's (the build's own). */
    const char *data = getenv("PIPESIM_DATA");
    const char *dirs[] = { data && *data ? data : NULL, data && *data ? data : NULL,
                           PIPESIM_SHARE_DIR "/topologies", PIPESIM_SRC_DIR "/models/topologies" };
    const char *sub[] = { "", "/topologies", "", "" };
    FILE *probe = fopen(file, "r");
    for (size_t i = 0; !probe && i < sizeof dirs / sizeof *dirs; i++)
        if (dirs[i]) {
            snprintf(file, fsz, "%s%s/devices.json", dirs[i], sub[i]);
            probe = fopen(file, "r");
        }
    if (!probe)
        return ps_error(PS_EIO, "%s: no devices.json beside it, in $PIPESIM_DATA, in "
                         PIPESIM_SHARE_DIR "/topologies or in the source tree (needed for "
                         "\"preset\")", topo_path);
    fclose(probe);
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

static double combine(const struct mdl_device *d, double math, double mem)
{
    return d->model.combine == MDL_COMBINE_SUM ? math + mem : fmax(math, mem);
}

static double mem_s(const struct mdl_device *d, double bytes)
{
    return d->mem_bandwidth > 0 ? bytes / (d->mem_bandwidth * d->model.mem_eff) : 0;
}

/* One product's math and memory times (before combining). */
static void gemm_parts(const struct mdl_device *d, double m, double k, double n, double c,
                       double *math_out, double *mem_out)
{
    const struct mdl_devmodel *dm = &d->model;
    *math_out = *mem_out = 0;
    if (m <= 0 || k <= 0 || n <= 0 || c <= 0)
        return;
    double rate = mm_peak(d) * dm->gemm_eff, math;
    if (dm->tiled) {
        double tiles = ceil(m / dm->tile_m) * ceil(n / dm->tile_n);
        double waves = ceil(c * tiles / dm->units);
        math = waves * 2 * dm->tile_m * dm->tile_n * k / (rate / dm->units);
    } else if (dm->padded) {
        math = c * 2 * pad_up(m, dm->pad_rows) * pad_up(k, dm->pad_feat) *
               pad_up(n, dm->pad_feat) / rate;
    } else {
        math = c * 2 * m * k * n / rate;
    }
    *math_out = math;
    *mem_out = mem_s(d, c * (m * k + k * n + m * n) * mdl_device_elem_bytes(d));
}

double mdl_device_gemm_s(const struct mdl_device *d, double m, double k, double n, double c)
{
    double math, mem;
    gemm_parts(d, m, k, n, c, &math, &mem);
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
    double rate = mm_peak(d) * d->model.gemm_eff, math, mem;
    for (int i = 0; i < w->n_gemms; i++) {
        const struct mdl_gemm *g = &w->gemms[i];
        double m = g->weight ? g->rows * n : g->rows, c = g->weight ? g->count : g->count * n;
        gemm_parts(d, m, g->k, g->n, c, &math, &mem);
        split_add(d, math, mem, MDL_SPLIT_MATRIX, cls, forwards);
        if (g->weight != 2) { /* input gradient(s) */
            gemm_parts(d, m, g->n, g->k, c, &math, &mem);
            split_add(d, math, mem, MDL_SPLIT_MATRIX, cls, 1);
        }
        if (g->weight) /* weight gradient; an activation product's second input gradient */
            gemm_parts(d, g->k, m, g->n, c, &math, &mem);
        else
            gemm_parts(d, g->k, g->rows, g->n, c, &math, &mem);
        split_add(d, math, mem, MDL_SPLIT_MATRIX, cls, 1);
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
            const struct mdl_gemm *g = &w->gemms[i];
            if (g->weight) {
                double m = g->rows * n;
                tf += mdl_device_gemm_s(d, m, g->k, g->n, g->count);
                if (g->weight == 1) /* 2: reads the model's input, no input gradient */
                    tb += mdl_device_gemm_s(d, m, g->n, g->k, g->count);
                tw += mdl_device_gemm_s(d, g->k, m, g->n, g->count);
            } else {
                double c = g->count * n;
                tf += mdl_device_gemm_s(d, g->rows, g->k, g->n, c);
                tb += mdl_device_gemm_s(d, g->rows, g->n, g->k, c) +
                      mdl_device_gemm_s(d, g->k, g->rows, g->n, c);
            }
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
