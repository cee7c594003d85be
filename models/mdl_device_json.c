/* mdl_device_json: the op-level device model's JSON fields (models/
 * mdl_device.h), the presets of devices.json a topology takes, and the
 * input hash that covers them. The timing rule is mdl_device.c's. */
#define MDL_DEVICE_JSON
#include "models/mdl_device.h"
#include "models/mdl_topology.h"
#include "models/mdl_topology_int.h"
#include "base/ps_data.h"
#include "base/ps_error.h"
#include "base/ps_jsonpos.h"
#include "base/ps_json.h"
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
    static const char *const gkeys[] = { "tile", "units", "pad", "pad_large", "efficiency",
                                         NULL };
    char w[96];
    snprintf(w, sizeof w, "%s.gemm", where);
    if (!json_is_object(g))
        return ps_error(PS_EPARSE, "%s: %s: must be an object", path, w);
    int rc;
    if ((rc = mdl_json_check_keys(path, w, g, gkeys)) < 0)
        return rc;
    json_t *tile = json_object_get(g, "tile"), *units = json_object_get(g, "units");
    json_t *pad = json_object_get(g, "pad"), *eff = json_object_get(g, "efficiency");
    json_t *large = json_object_get(g, "pad_large");
    if (large && !pad)
        return ps_error(PS_EPARSE, "%s: %s: 'pad_large' needs 'pad'", path, w);
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
    if (large) { /* { "from": B, "pad": [images, features] } */
        static const char *const lkeys[] = { "from", "pad", NULL };
        char wl[128];
        snprintf(wl, sizeof wl, "%s.pad_large", w);
        if (!json_is_object(large))
            return ps_error(PS_EPARSE, "%s: %s: must be an object", path, wl);
        if ((rc = mdl_json_check_keys(path, wl, large, lkeys)) < 0)
            return rc;
        json_t *from = json_object_get(large, "from"), *lp = json_object_get(large, "pad");
        if (!from || !lp)
            return ps_error(PS_EPARSE, "%s: %s: needs 'from' and 'pad'", path, wl);
        double fv = json_is_number(from) ? json_number_value(from) : NAN;
        if (!(fv >= 1 && fv <= 1e6 && fv == floor(fv)))
            return ps_error(PS_EINVAL, "%s: %s.from: must be a whole number in [1, 1e6]", path,
                             wl);
        if ((rc = pair(path, wl, "pad", lp, &m->pad_large_imgs, &m->pad_large_feat)) < 0)
            return rc;
        m->pad_large_from = fv;
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

/* The devices.json beside the topology at topo_path (the current folder's
 * for a path without one). */
static void beside_path(const char *topo_path, char *file, size_t fsz)
{
    const char *slash = strrchr(topo_path, '/');
    if (slash)
        snprintf(file, fsz, "%.*s/devices.json", (int)(slash - topo_path), topo_path);
    else
        snprintf(file, fsz, "devices.json");
}

/* devices.json: the preset directory's file, parsed. */
int mdl_device_presets_file(const char *topo_path, char *file, size_t fsz)
{
    beside_path(topo_path, file, fsz);
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
    return 0;
}

int mdl_topology_input_hash(const char *topo_path, char hex[17])
{
    char *text;
    size_t len;
    int rc = ps_read_file(topo_path, &text, &len);
    if (rc < 0)
        return rc;
    uint64_t h = ps_fnv1a(text, len, PS_FNV_INIT);
    /* A device object with a "preset" key, as the loader reads the JSON
     * (escapes decoded); a file that does not parse is the loader's to
     * refuse, and hashes alone. */
    size_t bom = ps_bom_len(text, len), i;
    json_error_t jerr;
    ps_json_begin();
    json_t *root = json_loadb(text + bom, len - bom, 0, &jerr), *devs, *d;
    free(text);
    if (ps_json_oom()) { /* not a file that does not parse (nor one missing a byte): a
                          * hash would be wrong */
        json_decref(root);
        return ps_error(PS_ENOMEM, "%s: out of memory parsing JSON", topo_path);
    }
    int uses = 0;
    devs = json_is_object(root) ? json_object_get(root, "devices") : NULL;
    if (json_is_array(devs))
        json_array_foreach(devs, i, d)
            uses |= json_is_object(d) && json_object_get(d, "preset") != NULL;
    json_decref(root);
    char file[4096];
    if (uses) {
        if ((rc = mdl_device_presets_file(topo_path, file, sizeof file)) < 0 ||
            (rc = ps_read_file(file, &text, &len)) < 0)
            return rc;
        h = ps_fnv1a(text, len, h);
        free(text);
    }
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
    return 0;
}

/* Where file is the devices.json beside the topology (which replaces the
 * bundled presets, every one of them): the words an error about it ends
 * with, so that a user's own presets file, or an unrelated file of that name,
 * is named as the reason (helper-112); "" for the data folder's. */
static const char *beside_note(const char *topo_path, const char *file, char *buf, size_t n)
{
    char here[4096];
    beside_path(topo_path, here, sizeof here);
    char data[4096], *a = NULL, *b = NULL;
    int bundled = strcmp(here, file) != 0 ||
                  (ps_data_find("topologies", "devices.json", data, sizeof data) == 0 &&
                   (a = realpath(here, NULL)) && (b = realpath(data, NULL)) && !strcmp(a, b));
    free(a);
    free(b);
    if (bundled) /* or the data folder's own, beside a bundled topology */
        return "";
    snprintf(buf, n, " (the devices.json beside %s, read in place of the bundled presets: "
             "every preset comes from it)", topo_path);
    return buf;
}

static int load_presets(const char *topo_path, json_t **out, char *file, size_t fsz,
                        char **keep, size_t *keep_len)
{
    int rc = mdl_device_presets_file(topo_path, file, fsz);
    if (rc < 0)
        return rc;
    char *text;
    size_t len;
    rc = ps_read_file(file, &text, &len);
    if (rc < 0)
        return rc;
    json_error_t jerr;
    size_t bom = ps_bom_len(text, len);
    ps_json_begin();
    json_t *root = json_loadb(text + bom, len - bom, JSON_REJECT_DUPLICATES, &jerr);
    if (root && ps_json_oom()) { /* a document missing a byte: not the file */
        json_decref(root);
        root = NULL;
    }
    if (root && bom)
        memmove(text, text + bom, len - bom);
    if (root) {
        *keep = text;
        *keep_len = len - bom;
    } else {
        free(text);
    }
    if (!root && ps_json_oom()) /* jansson reports it as a syntax error */
        return ps_error(PS_ENOMEM, "%s: out of memory parsing JSON", file);
    if (!root)
        return ps_json_parse_error(file, len - bom, jerr.line, jerr.column, jerr.text);
    static const char *const rkeys[] = { "comment", "source", "devices", NULL };
    if (!json_is_object(root) || !json_is_object(json_object_get(root, "devices"))) {
        /* at the devices member, or where the document starts */
        rc = json_object_get(root, "devices")
                 ? ps_json_error_at(ps_error(PS_EPARSE, "%s: devices: must be an object "
                                             "{ NAME: {..} }", file), file, *keep, *keep_len,
                                    NULL)
                 : ps_error(PS_EPARSE, "%s:1:1: must be an object with \"devices\": "
                            "{ NAME: {..} }", file);
        json_decref(root);
        free(*keep);
        *keep = NULL;
        return rc;
    }
    if ((rc = mdl_json_check_keys(file, "presets", root, rkeys)) < 0) {
        /* at file:line:column, as a topology's (helper-115: no position) */
        rc = ps_json_error_at(rc, file, *keep, *keep_len, "presets");
        json_decref(root);
        free(*keep);
        *keep = NULL;
        return rc;
    }
    *out = root;
    return 0;
}

void mdl_preset_cache_free(struct mdl_preset_cache *pc)
{
    json_decref(pc->root);
    pc->root = NULL;
    free(pc->text);
    pc->text = NULL;
}

json_t *mdl_device_preset_alone(const struct mdl_preset_cache *pc, json_t *o, char *where,
                                size_t n)
{
    json_t *name = json_object_get(o, "preset");
    json_t *pre = pc->root && json_is_string(name)
                      ? json_object_get(json_object_get(pc->root, "devices"),
                                        json_string_value(name))
                      : NULL;
    if (!json_is_object(pre))
        return NULL;
    json_t *m = json_deep_copy(pre);
    if (!m)
        return NULL;
    json_object_del(m, "comment");
    json_object_del(m, "source");
    /* a name of its own, valid: the name is the topology's field alone, so that an
     * error in it is never the preset's (helper-98: a device without one was reported
     * as the preset's "missing field 'name'", in devices.json) */
    if (json_object_set_new(m, "name", json_string("preset")) < 0) {
        json_decref(m);
        return NULL;
    }
    snprintf(where, n, "devices.%s", json_string_value(name));
    return m;
}

int mdl_preset_error_at(const struct mdl_preset_cache *pc, int rc)
{
    return pc->text ? ps_json_error_at(rc, pc->file, pc->text, pc->len, NULL) : rc;
}

int mdl_device_resolve(const char *topo_path, const char *where, json_t *o,
                       struct mdl_preset_cache *pc, json_t **merged)
{
    *merged = NULL;
    json_t *name = json_object_get(o, "preset");
    if (!name)
        return 0;
    if (!json_is_string(name))
        return ps_error(PS_EPARSE, "%s: %s.preset: must be a preset name", topo_path, where);
    int rc = 0;
    char note[4200];
    if (!pc->root && (rc = load_presets(topo_path, &pc->root, pc->file, sizeof pc->file,
                                        &pc->text, &pc->len)) < 0) {
        char why[PS_ERRMSG_MAX]; /* before beside_note: its data-folder lookup may say */
        snprintf(why, sizeof why, "%s", ps_errmsg());
        if (rc != -PS_ENOMEM && *beside_note(topo_path, pc->file, note, sizeof note))
            rc = ps_error(-rc, "%s%s", why, note);
        else
            rc = ps_error(-rc, "%s", why);
        return rc;
    }
    json_t *root = pc->root;
    const char *file = pc->file;
    json_t *pre = json_object_get(json_object_get(root, "devices"), json_string_value(name));
    if (!pre) {
        struct ps_suggest sg;
        const char *k;
        json_t *v;
        ps_suggest_init(&sg, json_string_value(name));
        json_object_foreach(json_object_get(root, "devices"), k, v)
            ps_suggest_add(&sg, k);
        rc = ps_error(PS_EINVAL, "%s: %s.preset: no device '%s' in %s%s%s", topo_path, where,
                      json_string_value(name), file, ps_suggest_hint(&sg),
                      beside_note(topo_path, file, note, sizeof note));
        goto out;
    }
    char pw[160];
    snprintf(pw, sizeof pw, "devices.%s", json_string_value(name));
    if (!json_is_object(pre)) {
        rc = mdl_preset_error_at(pc, ps_error(PS_EPARSE, "%s: %s: must be an object", file,
                                              pw));
        goto out;
    }
    for (const char *k = "name"; k; k = !strcmp(k, "name") ? "count" :
                                        !strcmp(k, "count") ? "preset" : NULL)
        if (json_object_get(pre, k)) {
            rc = mdl_preset_error_at(pc, ps_error(PS_EPARSE, "%s: %s.%s: a preset cannot set "
                                                  "'%s'", file, pw, k, k));
            goto out;
        }
    json_t *m = json_deep_copy(pre);
    if (m) {
        json_object_del(m, "comment");
        json_object_del(m, "source");
    }
    /* key by key, into nested objects too: a topology that sets gemm.efficiency
     * keeps the preset's tiles, one that sets matrix_flops.bf16 its fp32 peak
     * (helper-89: the whole object was replaced, tile quantization and the
     * other precisions' peaks silently dropped) */
    if (!m || json_object_update_recursive(m, o) < 0) {
        json_decref(m);
        rc = ps_error(PS_ENOMEM, "%s: out of memory", topo_path);
        goto out;
    }
    json_object_del(m, "preset");
    /* "flops" is the preset's precision's matrix peak, which times layers
     * without work: a topology that changes the precision but not "flops"
     * gets the new precision's peak (an A100 set to fp32 timed such layers
     * at its bf16 312 TFLOP/s), as one that sets its precision's peak */
    json_t *prec = json_object_get(m, "precision");
    const char *pn = json_is_string(prec) ? json_string_value(prec) : NULL;
    int changed = json_object_get(o, "precision") ||
                  (pn && json_object_get(json_object_get(o, "matrix_flops"), pn));
    json_t *peak = pn && changed && !json_object_get(o, "flops")
                       ? json_object_get(json_object_get(m, "matrix_flops"), pn)
                       : NULL;
    json_t *mf = json_object_get(m, "matrix_flops");
    int known = 0; /* an unknown name is the parse's error, not this one (helper-117) */
    for (int k = 0; pn && mdl_prec_names[k]; k++)
        known |= !strcmp(pn, mdl_prec_names[k]);
    if (json_object_get(o, "precision") && known && !json_object_get(o, "flops") &&
        json_is_object(mf) && json_object_size(mf) && !json_object_get(mf, pn)) {
        /* a precision the preset has no peak for ran at its own precision's
         * flops (helper-115: a Tesla P40, FP16 at 1:64, set to fp16 ran at its
         * FP32 peak; a V100, which has no bf16, set to bf16 likewise) */
        char have[128] = "";
        const char *k;
        json_t *v;
        json_object_foreach(mf, k, v) {
            size_t len = strlen(have);
            snprintf(have + len, sizeof have - len, "%s%s", len ? ", " : "", k);
        }
        rc = ps_error(PS_EINVAL, "%s: %s.precision: preset '%s' has no %s matrix peak "
                      "(matrix_flops gives %s): set matrix_flops.%s, or flops, beside it",
                      topo_path, where, json_string_value(name), pn, have, pn);
        json_decref(m);
        goto out;
    }
    if (!json_is_number(peak) || !(json_number_value(peak) > 0) ||
        !isfinite(json_number_value(peak))) /* the parse names matrix_flops' own field */
        peak = NULL;
    if (peak && json_object_set(m, "flops", peak) < 0) {
        json_decref(m);
        rc = ps_error(PS_ENOMEM, "%s: out of memory", topo_path);
        goto out;
    }
    *merged = m;
out:
    return rc;
}
