/* mdl_topology_devices — a topology's "devices" entries (count expanded,
 * presets merged in, every field checked) and the comparison of two devices
 * (models/mdl_topology_int.h, models/mdl_topology.h). */
#define MDL_DEVICE_JSON
#include "models/mdl_topology.h"
#include "models/mdl_topology_int.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int load_device(const char *path, const char *where, json_t *o,
                       const char *const *dkeys, struct mdl_preset_cache *pc,
                       struct mdl_device *dp, json_t **merged);

int mdl_topology_load_devices(const char *path, json_t *arr, struct mdl_topology *t,
                              int **entry_out)
{
    static const char *const base_keys[] = { "name", "count", "flops", "memory",
                                             "mem_bandwidth", "efficiency", "messages", NULL };
    const char *dkeys[32];
    int nk = 0;
    for (const char *const *k = base_keys; *k; k++)
        dkeys[nk++] = *k;
    for (const char *const *k = mdl_device_keys; *k; k++)
        dkeys[nk++] = *k;
    dkeys[nk] = NULL;
    if (json_is_object(arr)) /* "devices": { NAME: {..} }: the presets file (helper-67) */
        return ps_error(PS_EPARSE, "%s: devices: must be a non-empty array (an object of named "
                        "devices is the device presets file, devices.json, not a topology: a "
                        "topology's device names one with \"preset\")", path);
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return ps_error(PS_EPARSE, "%s: devices: must be a non-empty array", path);
    size_t total = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *c = json_object_get(json_array_get(arr, i), "count");
        if (c && !json_is_number(c)) /* a type error, as "must be a number" is */
            return ps_error(PS_EPARSE, "%s: devices[%zu].count: must be an integer in "
                             "[1, 1048576]", path, i);
        /* any other number is a value: 2.5 and 1e18 were type errors (exit 3),
         * 0 and 4294967298 out of range (exit 4); 8.0 is 8 */
        double v = c ? json_number_value(c) : 1;
        if (!(v >= 1 && v <= 1 << 20 && v == floor(v)))
            return ps_error(PS_EINVAL, "%s: devices[%zu].count: must be an integer in "
                             "[1, 1048576], got %s", path, i, PS_DBL(v));
        total += (size_t)v;
    }
    if (total > 1 << 20)
        return ps_error(PS_EINVAL, "%s: devices: more than 1048576 devices", path);
    t->devices = calloc(total, sizeof *t->devices);
    int *entry = malloc(sizeof *entry * total);
    *entry_out = entry;
    if (!t->devices || !entry)
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    struct mdl_preset_cache pc = { 0 };
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *o = json_array_get(arr, i), *merged = NULL;
        char where[48];
        snprintf(where, sizeof where, "devices[%zu]", i);
        if (!json_is_object(o)) {
            mdl_preset_cache_free(&pc);
            return ps_error(PS_EPARSE, "%s: %s: must be an object", path, where);
        }
        struct mdl_device d;
        memset(&d, 0, sizeof d);
        int rc = load_device(path, where, o, dkeys, &pc, &d, &merged);
        json_decref(merged);
        if (rc < 0) {
            mdl_preset_cache_free(&pc);
            return rc;
        }
        json_t *c = json_object_get(o, "count");
        int count = c ? (int)json_number_value(c) : 1;
        for (int k = 0; k < count; k++) {
            struct mdl_device dk = d;
            if (c)
                /* the whole name: get_name keeps it under MDL_NAME_MAX - 8, room
                 * for the 7 digits of an index below 2^20 (it was cut to 50) */
                snprintf(dk.name, sizeof dk.name, "%.*s%d", MDL_NAME_MAX - 9, d.name,
                         k & 0xfffff);
            entry[t->n_devices] = (int)i;
            t->devices[t->n_devices++] = dk;
        }
    }
    mdl_preset_cache_free(&pc);
    return 0;
}

/* o's optional object `key` into *out (NULL when absent), its keys
 * checked, its place (WHERE.key) in w. */
static int sub_object(const char *path, const char *where, json_t *o, const char *key,
                      const char *const *keys, char *w, size_t n, json_t **out)
{
    *out = json_object_get(o, key);
    snprintf(w, n, "%s.%s", where, key);
    if (!*out)
        return 0;
    if (!json_is_object(*out))
        return ps_error(PS_EPARSE, "%s: %s: must be an object", path, w);
    return mdl_json_check_keys(path, w, *out, keys);
}

/* One device object o (a preset merged in already) into *dp. */
static int check_device(const char *path, const char *where, json_t *o,
                        const char *const *dkeys, struct mdl_device *dp)
{
    static const char *const ekeys[] = { "max", "batch_half", "overhead_s", NULL };
    struct mdl_device d;
    memset(&d, 0, sizeof d);
    int rc;
    {
        if ((rc = mdl_json_check_keys(path, where, o, dkeys)) < 0 ||
            (rc = mdl_json_name(path, where, o, d.name)) < 0 ||
            (rc = mdl_json_num(path, where, o, "flops", 1, 0, 1, &d.flops)) < 0 ||
            (rc = mdl_json_num(path, where, o, "memory", 1, 0, 1, &d.memory)) < 0 ||
            (rc = mdl_json_num(path, where, o, "mem_bandwidth", 0, 0, 0, &d.mem_bandwidth)) < 0)
            return rc;
        d.eff_max = 1;
        json_t *e;
        char ew[64], mw[64];
        if ((rc = sub_object(path, where, o, "efficiency", ekeys, ew, sizeof ew, &e)) < 0)
            return rc;
        if (e) {
            if ((rc = mdl_json_num(path, ew, e, "max", 0, 1, 1, &d.eff_max)) < 0 ||
                (rc = mdl_json_num(path, ew, e, "batch_half", 0, 0, 0, &d.batch_half)) < 0 ||
                (rc = mdl_json_num(path, ew, e, "overhead_s", 0, 0, 0, &d.overhead_s)) < 0)
                return rc;
            if (d.eff_max > 1)
                return ps_error(PS_EINVAL, "%s: %s.max: must be in (0, 1], got %g", path,
                                 ew, d.eff_max);
            if (d.overhead_s > MDL_MSG_MAX_S) /* per op: a typo, as a link's (gen chain
                                               * wrote 1e9 s, which predict refused) */
                return ps_error(PS_EINVAL, "%s: %s.overhead_s: must be <= %g s, got %g", path,
                                ew, MDL_MSG_MAX_S, d.overhead_s);
        }
        static const char *const mkeys[] = { "send_s", "send_bandwidth", "recv_s",
                                              "recv_bandwidth", NULL };
        json_t *m;
        if ((rc = sub_object(path, where, o, "messages", mkeys, mw, sizeof mw, &m)) < 0)
            return rc;
        if (m) {
            if ((rc = mdl_json_num(path, mw, m, "send_s", 0, 0, 0, &d.msg_send_s)) < 0 ||
                (rc = mdl_json_num(path, mw, m, "send_bandwidth", 0, 0, 0, &d.msg_send_bw)) < 0 ||
                (rc = mdl_json_num(path, mw, m, "recv_s", 0, 0, 0, &d.msg_recv_s)) < 0 ||
                (rc = mdl_json_num(path, mw, m, "recv_bandwidth", 0, 0, 0, &d.msg_recv_bw)) < 0)
                return rc;
            if (d.msg_send_s > MDL_MSG_MAX_S || d.msg_recv_s > MDL_MSG_MAX_S)
                return ps_error(PS_EINVAL, "%s: %s.%s: must be <= %g s, got %g", path, mw,
                                 d.msg_send_s > MDL_MSG_MAX_S ? "send_s" : "recv_s",
                                 MDL_MSG_MAX_S,
                                 d.msg_send_s > MDL_MSG_MAX_S ? d.msg_send_s : d.msg_recv_s);
        }
        if ((rc = mdl_device_parse(path, where, o, &d)) < 0)
            return rc;
    }
    *dp = d;
    return 0;
}

/* One devices[] entry (its preset merged in first) into *dp. A merged device
 * that fails a check the preset alone fails too is the preset's error: it
 * names the presets file, its line and the preset's field (helper-67: a
 * preset's "memory": 0 was reported at the topology's device line). */
static int load_device(const char *path, const char *where, json_t *o,
                       const char *const *dkeys, struct mdl_preset_cache *pc,
                       struct mdl_device *dp, json_t **merged)
{
    int rc;
    if ((rc = mdl_json_check_keys(path, where, o, dkeys)) < 0 ||
        (rc = mdl_device_resolve(path, where, o, pc, merged)) < 0)
        return rc;
    if (!*merged)
        return check_device(path, where, o, dkeys, dp);
    if ((rc = check_device(path, where, *merged, dkeys, dp)) >= 0 || rc == -PS_ENOMEM)
        return rc;
    char msg[PS_ERRMSG_MAX], pw[200];
    snprintf(msg, sizeof msg, "%s", ps_errmsg());
    json_t *alone = mdl_device_preset_alone(pc, o, pw, sizeof pw);
    struct mdl_device d;
    int prc = alone ? check_device(pc->file, pw, alone, dkeys, &d) : 0;
    json_decref(alone);
    /* the preset's only when it fails alone the same way: the same field, the same
     * complaint (helper-68: a preset lacking "memory" the topology supplies was blamed
     * for the topology's own bad "mem_bandwidth") */
    const char *a = strstr(msg, where), *b = prc < 0 ? strstr(ps_errmsg(), pw) : NULL;
    if (prc < 0 && prc != -PS_ENOMEM && a && b && !strcmp(a + strlen(where), b + strlen(pw)))
        return mdl_preset_error_at(pc, prc);
    return ps_error(-rc, "%s", msg); /* the topology's own field */
}

const char *mdl_device_differs(const struct mdl_device *a, const struct mdl_device *b)
{
    static const struct {
        const char *name;
        size_t off;
    } f[] = {
#define F(n, x) { n, offsetof(struct mdl_device, x) }
        F("flops", flops), F("memory", memory), F("mem_bandwidth", mem_bandwidth),
        F("efficiency.max", eff_max), F("efficiency.batch_half", batch_half),
        F("efficiency.overhead_s", overhead_s), F("messages.send_s", msg_send_s),
        F("messages.send_bandwidth", msg_send_bw), F("messages.recv_s", msg_recv_s),
        F("messages.recv_bandwidth", msg_recv_bw),
#undef F
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        double x, y;
        memcpy(&x, (const char *)a + f[i].off, sizeof x);
        memcpy(&y, (const char *)b + f[i].off, sizeof y);
        if (!(x == y) && !(isnan(x) && isnan(y)))
            return f[i].name;
    }
    const struct mdl_devmodel *p = &a->model, *q = &b->model;
    int same = p->on == q->on && p->precision == q->precision &&
               !memcmp(p->mm_peak, q->mm_peak, sizeof p->mm_peak) &&
               !memcmp(p->vec_peak, q->vec_peak, sizeof p->vec_peak) &&
               p->mem_eff == q->mem_eff && p->kernel_s == q->kernel_s && p->tiled == q->tiled &&
               p->tile_m == q->tile_m && p->tile_n == q->tile_n && p->units == q->units &&
               p->n_tiles == q->n_tiles && !memcmp(p->tiles, q->tiles, sizeof p->tiles) &&
               p->padded == q->padded && p->pad_rows == q->pad_rows &&
               p->pad_feat == q->pad_feat && p->pad_large_from == q->pad_large_from &&
               p->pad_large_imgs == q->pad_large_imgs && p->pad_large_feat == q->pad_large_feat &&
               p->gemm_eff == q->gemm_eff && p->combine == q->combine &&
               p->elem_bytes == q->elem_bytes && p->wino_m == q->wino_m;
    return same ? NULL : "op-level model (preset, precision or its figures)";
}
