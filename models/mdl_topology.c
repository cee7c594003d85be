#define MDL_DEVICE_JSON
#include "models/mdl_topology.h"
#include "models/mdl_topology_int.h"
#include "models/mdl_preset.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_jsonpos.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void mdl_topology_free(struct mdl_topology *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n_links; i++)
        free(t->links[i].ends);
    free(t->links);
    free(t->inc_first);
    free(t->inc);
    free(t->switches);
    free(t->devices);
    free(t->path);
    free(t);
}


/* Reads a number field: min_excl = 1 means the value must be > 0, else >= 0. */
static int get_num(const char *path, const char *where, json_t *o, const char *key,
                   int required, double dflt, int positive, double *out)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (required)
            return ps_error(PS_EPARSE, "%s: %s: missing field '%s'", path, where, key);
        *out = dflt;
        return 0;
    }
    if (!json_is_number(v))
        return ps_error(PS_EPARSE, "%s: %s.%s: must be a number", path, where, key);
    double d = json_number_value(v);
    if (!isfinite(d) || d < 0 || (positive && d == 0))
        return ps_error(PS_EINVAL, "%s: %s.%s: must be %s, got %g", path, where, key,
                         positive ? "> 0" : ">= 0", d);
    *out = d;
    return 0;
}

static int get_name(const char *path, const char *where, json_t *o, char *dst)
{
    json_t *v = json_object_get(o, "name");
    if (!v)
        return ps_error(PS_EPARSE, "%s: %s: missing field 'name'", path, where);
    if (!json_is_string(v) || !*json_string_value(v))
        return ps_error(PS_EPARSE, "%s: %s.name: must be a non-empty string", path, where);
    if (strlen(json_string_value(v)) >= MDL_NAME_MAX - 8)
        return ps_error(PS_EPARSE, "%s: %s.name: longer than %d bytes", path, where,
                         MDL_NAME_MAX - 9);
    strcpy(dst, json_string_value(v));
    return 0;
}

/* Device names sorted, for lookups and the duplicate check in O(n log n):
 * `count` may expand one entry into a million devices. */
struct name_ix {
    const char *name;
    int dev;
};

static int ix_cmp(const void *a, const void *b)
{
    const struct name_ix *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->dev > y->dev) - (x->dev < y->dev);
}

static int find_device(const struct name_ix *ix, int n, const char *name)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(ix[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && !strcmp(ix[lo].name, name) ? ix[lo].dev : -1;
}

/* Sorts the node names (devices, then switches); a repeated one is reported
 * at its first repetition in file order, as a scan would find it.
 * entry[d] = the devices[] entry of d. */
static int index_names(const char *path, const struct mdl_topology *t, const int *entry,
                       struct name_ix **out)
{
    int n = t->n_devices + t->n_switches;
    struct name_ix *ix = malloc(sizeof *ix * (size_t)(n ? n : 1));
    if (!ix)
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    for (int d = 0; d < n; d++)
        ix[d] = (struct name_ix){ mdl_topology_node_name(t, d), d };
    qsort(ix, (size_t)n, sizeof *ix, ix_cmp);
    int first_repeat = -1;
    for (int i = 1; i < n; i++) /* ix[i] repeats ix[i-1]: i's device is a repetition */
        if (!strcmp(ix[i].name, ix[i - 1].name) &&
            (first_repeat < 0 || ix[i].dev < first_repeat))
            first_repeat = ix[i].dev;
    if (first_repeat >= t->n_devices) {
        free(ix);
        return ps_error(PS_EINVAL, "%s: switches[%d].name: duplicate node name '%s' (a "
                         "device or an earlier switch has it)", path,
                         first_repeat - t->n_devices, mdl_topology_node_name(t, first_repeat));
    }
    if (first_repeat >= 0) {
        free(ix);
        return ps_error(PS_EINVAL, "%s: devices[%d]: duplicate device name '%s'", path,
                         entry[first_repeat], t->devices[first_repeat].name);
    }
    *out = ix;
    return 0;
}

static int load_device(const char *path, const char *where, json_t *o,
                       const char *const *dkeys, struct mdl_preset_cache *pc,
                       struct mdl_device *dp, json_t **merged);

static int load_devices(const char *path, json_t *arr, struct mdl_topology *t, int **entry_out)
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
            (rc = get_name(path, where, o, d.name)) < 0 ||
            (rc = get_num(path, where, o, "flops", 1, 0, 1, &d.flops)) < 0 ||
            (rc = get_num(path, where, o, "memory", 1, 0, 1, &d.memory)) < 0 ||
            (rc = get_num(path, where, o, "mem_bandwidth", 0, 0, 0, &d.mem_bandwidth)) < 0)
            return rc;
        d.eff_max = 1;
        json_t *e;
        char ew[64], mw[64];
        if ((rc = sub_object(path, where, o, "efficiency", ekeys, ew, sizeof ew, &e)) < 0)
            return rc;
        if (e) {
            if ((rc = get_num(path, ew, e, "max", 0, 1, 1, &d.eff_max)) < 0 ||
                (rc = get_num(path, ew, e, "batch_half", 0, 0, 0, &d.batch_half)) < 0 ||
                (rc = get_num(path, ew, e, "overhead_s", 0, 0, 0, &d.overhead_s)) < 0)
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
            if ((rc = get_num(path, mw, m, "send_s", 0, 0, 0, &d.msg_send_s)) < 0 ||
                (rc = get_num(path, mw, m, "send_bandwidth", 0, 0, 0, &d.msg_send_bw)) < 0 ||
                (rc = get_num(path, mw, m, "recv_s", 0, 0, 0, &d.msg_recv_s)) < 0 ||
                (rc = get_num(path, mw, m, "recv_bandwidth", 0, 0, 0, &d.msg_recv_bw)) < 0)
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

/* "switches": [ { "name": "plx0", "kind": "pcie-switch", "comment": ".." } ]:
 * nodes that route but compute nothing. */
static int load_switches(const char *path, json_t *arr, struct mdl_topology *t)
{
    static const char *const skeys[] = { "name", "kind", "comment", NULL };
    if (!arr)
        return 0;
    if (!json_is_array(arr))
        return ps_error(PS_EPARSE, "%s: switches: must be an array", path);
    size_t n = json_array_size(arr);
    if (n > 1 << 20)
        return ps_error(PS_EINVAL, "%s: switches: more than 1048576 switches", path);
    t->switches = calloc(n ? n : 1, sizeof *t->switches);
    if (!t->switches)
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(arr, i);
        char where[48];
        snprintf(where, sizeof where, "switches[%zu]", i);
        if (!json_is_object(o))
            return ps_error(PS_EPARSE, "%s: %s: must be an object", path, where);
        int rc;
        if ((rc = mdl_json_check_keys(path, where, o, skeys)) < 0 ||
            (rc = get_name(path, where, o, t->switches[i].name)) < 0)
            return rc;
        for (const char *k = "kind"; k; k = k[0] == 'k' ? "comment" : NULL) {
            json_t *v = json_object_get(o, k);
            if (v && !json_is_string(v))
                return ps_error(PS_EPARSE, "%s: %s.%s: must be a string", path, where, k);
        }
        t->n_switches++;
    }
    return 0;
}

static int load_links(const char *path, json_t *arr, struct mdl_topology *t,
                      const struct name_ix *ix, int *seen)
{
    static const char *const lkeys[] = { "name", "endpoints", "bandwidth", "latency",
                                         "overhead_s", "shared", "comment", NULL };
    if (!arr)
        return 0;
    if (!json_is_array(arr))
        return ps_error(PS_EPARSE, "%s: links: must be an array", path);
    size_t n = json_array_size(arr);
    t->links = calloc(n ? n : 1, sizeof *t->links);
    if (!t->links)
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    int star = -1; /* the first "*" link */
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(arr, i);
        char where[48];
        snprintf(where, sizeof where, "links[%zu]", i);
        if (!json_is_object(o))
            return ps_error(PS_EPARSE, "%s: %s: must be an object", path, where);
        struct mdl_link *l = &t->links[t->n_links++];
        int rc;
        if ((rc = mdl_json_check_keys(path, where, o, lkeys)) < 0 ||
            (rc = get_name(path, where, o, l->name)) < 0 ||
            (rc = get_num(path, where, o, "bandwidth", 1, 0, 1, &l->bandwidth)) < 0 ||
            (rc = get_num(path, where, o, "latency", 0, 0, 0, &l->latency)) < 0 ||
            (rc = get_num(path, where, o, "overhead_s", 0, 0, 0, &l->overhead_s)) < 0)
            return rc;
        if (l->latency > MDL_MSG_MAX_S || l->overhead_s > MDL_MSG_MAX_S)
            return ps_error(PS_EINVAL, "%s: %s.%s: must be <= %g s, got %g", path, where,
                            l->latency > MDL_MSG_MAX_S ? "latency" : "overhead_s",
                            MDL_MSG_MAX_S,
                            l->latency > MDL_MSG_MAX_S ? l->latency : l->overhead_s);
        json_t *cm = json_object_get(o, "comment");
        if (cm && !json_is_string(cm))
            return ps_error(PS_EPARSE, "%s: %s.comment: must be a string", path, where);
        json_t *sh = json_object_get(o, "shared");
        if (sh && !json_is_boolean(sh))
            return ps_error(PS_EPARSE, "%s: %s.shared: must be true or false", path, where);
        l->shared = sh && json_is_true(sh);
        json_t *ep = json_object_get(o, "endpoints");
        if (!ep)
            return ps_error(PS_EPARSE, "%s: %s: missing field 'endpoints'", path, where);
        if (json_is_string(ep) && !strcmp(json_string_value(ep), "*")) {
            /* a second joins no two devices the first does not, as the link check
             * says; over many devices said here, before a list of every device a
             * link (helper-98: 400 of them over 1048576 devices took 5.4 GB before
             * being refused); over a few the check says it, in its order of errors */
            if (star >= 0 && t->n_devices > 64)
                return ps_error(PS_EINVAL, "%s: %s.endpoints: earlier links already join "
                                "every two of its %d endpoints (the first: links[%d] '%s'), "
                                "so it would carry no traffic", path, where, t->n_devices,
                                star, t->links[star].name);
            star = t->n_links - 1;
            l->ends = malloc((size_t)t->n_devices * sizeof *l->ends);
            if (!l->ends)
                return ps_error(PS_ENOMEM, "%s: out of memory", path);
            for (int d = 0; d < t->n_devices; d++)
                l->ends[l->n_ends++] = d;
            if (!l->shared && l->n_ends != 2) /* as a list of names: one rule */
                return ps_error(PS_EINVAL, "%s: %s: a dedicated link joins exactly 2 devices "
                                 "(\"*\" names %d); use \"shared\": true for a bus", path,
                                 where, l->n_ends);
            continue;
        }
        if (!json_is_array(ep) || json_array_size(ep) < 2)
            return ps_error(PS_EPARSE, "%s: %s.endpoints: must be \"*\" or an array of at "
                             "least 2 device or switch names", path, where);
        l->ends = malloc(json_array_size(ep) * sizeof *l->ends);
        if (!l->ends)
            return ps_error(PS_ENOMEM, "%s: out of memory", path);
        for (size_t k = 0; k < json_array_size(ep); k++) {
            json_t *s = json_array_get(ep, k);
            if (!json_is_string(s))
                return ps_error(PS_EPARSE, "%s: %s.endpoints[%zu]: must be a device name",
                                 path, where, k);
            int d = find_device(ix, t->n_devices + t->n_switches, json_string_value(s));
            if (d < 0)
                return ps_error(PS_EINVAL, "%s: %s.endpoints[%zu]: unknown device '%s'",
                                 path, where, k, json_string_value(s));
            if (seen[d] == (int)i + 1) /* stamped by this link */
                return ps_error(PS_EINVAL, "%s: %s.endpoints[%zu]: '%s' "
                                 "listed twice", path, where, k, json_string_value(s));
            seen[d] = (int)i + 1;
            l->ends[l->n_ends++] = d;
        }
        if (!l->shared && l->n_ends != 2)
            return ps_error(PS_EINVAL, "%s: %s: a dedicated link joins exactly 2 devices "
                             "(has %d); use \"shared\": true for a bus", path, where,
                             l->n_ends);
    }
    return 0;
}

/* A switch that no link names is a typo (it could carry nothing). seen[]
 * holds, per node, the last link that named it (load_links). */
static int check_switches_used(const char *path, const struct mdl_topology *t,
                               const int *seen)
{
    for (int i = 0; i < t->n_switches; i++)
        if (!seen[t->n_devices + i])
            return ps_error(PS_EINVAL, "%s: switches[%d]: switch '%s' is an endpoint of no "
                             "link", path, i, t->switches[i].name);
    return 0;
}

/* "memory_policy": a name or {"optimizer", "allocator_overhead",
 * "workspace_bytes"}; sets bytes_per_param, which must agree with an
 * explicit "bytes_per_param". */
static int load_mempolicy(const char *path, json_t *root, struct mdl_topology *t)
{
    static const char *const mkeys[] = { "optimizer", "allocator_overhead", "workspace_bytes",
                                         "comment", NULL };
    json_t *v = json_object_get(root, "memory_policy"), *name = v;
    int rc;
    if (!v)
        return 0;
    if (json_is_object(v)) {
        if ((rc = mdl_json_check_keys(path, "memory_policy", v, mkeys)) < 0)
            return rc;
        name = json_object_get(v, "optimizer");
        if (!name)
            return ps_error(PS_EPARSE, "%s: memory_policy: missing field 'optimizer'", path);
    }
    if (!json_is_string(name))
        return ps_error(PS_EPARSE, "%s: memory_policy%s: must be a policy name%s", path,
                        v == name ? "" : ".optimizer", v == name ? " or an object" : "");
    if ((rc = mdl_mempolicy_named(json_string_value(name), &t->mem)) < 0) {
        char msg[PS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", ps_errmsg());
        return ps_error(rc, "%s: memory_policy: %s", path, msg);
    }
    if (json_is_object(v) &&
        ((rc = get_num(path, "memory_policy", v, "allocator_overhead", 0, 0, 0,
                       &t->mem.allocator_overhead)) < 0 ||
         (rc = get_num(path, "memory_policy", v, "workspace_bytes", 0, 0, 0,
                       &t->mem.workspace_bytes)) < 0))
        return rc;
    if (t->mem.allocator_overhead > 10)
        return ps_error(PS_EINVAL, "%s: memory_policy.allocator_overhead: must be in [0, 10], "
                        "got %g", path, t->mem.allocator_overhead);
    if (t->mem.workspace_bytes > 1e15) /* named here, not later as a stage's parameters */
        return ps_error(PS_EINVAL, "%s: memory_policy.workspace_bytes: must be at most 1e15 "
                        "bytes, got %g", path, t->mem.workspace_bytes);
    if (json_object_get(root, "bytes_per_param") && t->bytes_per_param != t->mem.bytes_per_param)
        return ps_error(PS_EINVAL, "%s: bytes_per_param: %g disagrees with memory_policy '%s' "
                        "(%g bytes per parameter)", path, t->bytes_per_param, t->mem.optimizer,
                        t->mem.bytes_per_param);
    t->bytes_per_param = t->mem.bytes_per_param;
    return 0;
}

/* Builds the topology from a parsed document; takes the reference to root. */
static int load_root(json_t *root, const char *path, struct mdl_topology **out)
{
    static const char *const tkeys[] = { "name", "bytes_per_param", "devices", "switches",
                                         "links", "comment", "source", "memory_policy",
                                         NULL };
    int rc, *entry = NULL, *seen = NULL;
    struct name_ix *ix = NULL;
    struct mdl_topology *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        rc = ps_error(PS_ENOMEM, "%s: out of memory", path);
        goto err_free;
    }
    if (!json_is_object(root)) {
        rc = ps_error(PS_EPARSE, "%s: topology: top level must be an object", path);
        goto err_free;
    }
    if ((rc = mdl_json_check_keys(path, "topology", root, tkeys)) < 0)
        goto err_free;
    for (int k = 0; k < 2; k++) { /* free text, but text (helper-137: "comment": 5 loaded) */
        json_t *v = json_object_get(root, k ? "source" : "comment");
        if (v && !json_is_string(v)) {
            rc = ps_error(PS_EPARSE, "%s: topology.%s: must be a string", path,
                          k ? "source" : "comment");
            goto err_free;
        }
    }
    if (json_object_get(root, "name")) {
        if ((rc = get_name(path, "topology", root, t->name)) < 0)
            goto err_free;
    } else {
        snprintf(t->name, sizeof t->name, "unnamed");
    }
    if ((rc = get_num(path, "topology", root, "bytes_per_param", 0, 12, 0,
                      &t->bytes_per_param)) < 0 ||
        (rc = load_mempolicy(path, root, t)) < 0 ||
        (rc = load_devices(path, json_object_get(root, "devices"), t, &entry)) < 0 ||
        (rc = load_switches(path, json_object_get(root, "switches"), t)) < 0 ||
        (rc = index_names(path, t, entry, &ix)) < 0)
        goto err_free;
    if (!(seen = calloc((size_t)(t->n_devices + t->n_switches), sizeof *seen))) {
        rc = ps_error(PS_ENOMEM, "%s: out of memory", path);
        goto err_free;
    }
    /* the incidence index first: the link checks read it */
    if ((rc = load_links(path, json_object_get(root, "links"), t, ix, seen)) < 0 ||
        (rc = mdl_topology_index(t)) < 0 || (rc = mdl_topology_check_links(path, t)) < 0 ||
        (rc = check_switches_used(path, t, seen)) < 0)
        goto err_free;
    free(seen);
    free(ix);
    free(entry);
    json_decref(root);
    seen = NULL;
    ix = NULL;
    entry = NULL;
    root = NULL;
    *out = t;
    return 0;

err_free:
    free(seen);
    free(ix);
    free(entry);
    json_decref(root);
    mdl_topology_free(t);
    return rc;
}

int mdl_topology_load(const char *arg, struct mdl_topology **out)
{
    *out = NULL;
    char path[4096], *text;
    size_t len;
    int rc = mdl_preset_path(MDL_PRESET_TOPOLOGY, arg, path, sizeof path);
    if (rc < 0)
        return rc;
    if ((rc = ps_read_file(path, &text, &len)) < 0)
        return mdl_preset_hint(MDL_PRESET_TOPOLOGY, arg, rc);
    rc = mdl_topology_parse(text, len, path, out);
    free(text);
    return rc;
}

int mdl_topology_parse(const char *text, size_t len, const char *name,
                       struct mdl_topology **out)
{
    *out = NULL;
    json_error_t jerr;
    size_t bom = ps_bom_len(text, len);
    text += bom;
    len -= bom;
    ps_json_begin();
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (ps_json_oom()) { /* a syntax error to jansson, or a document missing a byte */
        json_decref(root);
        return ps_error(PS_ENOMEM, "%s: out of memory parsing JSON", name);
    }
    if (!root)
        return ps_json_parse_error(name, len, jerr.line, jerr.column, jerr.text);
    /* errors name the JSON path; add the line and column it is on */
    return ps_json_error_at(load_root(root, name, out), name, text, len, "topology");
}

int mdl_topology_error_at(int rc, const struct mdl_topology *t)
{
    char msg[PS_ERRMSG_MAX], *text;
    size_t len;
    if (rc >= 0 || -rc == PS_ENOMEM || !t->path || *t->path == '<')
        return rc;
    snprintf(msg, sizeof msg, "%s", ps_errmsg());
    if (ps_read_file(t->path, &text, &len) < 0) /* gone since: the message as it was */
        return ps_error(-rc, "%s", msg);
    ps_error(-rc, "%s", msg);
    size_t bom = ps_bom_len(text, len);
    rc = ps_json_error_at(rc, t->path, text + bom, len - bom, "topology");
    free(text);
    return rc;
}

int mdl_topology_chain(int n, const struct mdl_device *proto, double bandwidth,
                       double latency, struct mdl_topology **out)
{
    *out = NULL;
    struct mdl_topology *t = calloc(1, sizeof *t);
    if (!t)
        return ps_error(PS_ENOMEM, "out of memory");
    t->path = strdup("<chain>");
    t->devices = calloc((size_t)n, sizeof *t->devices);
    t->links = calloc(n > 1 ? (size_t)n - 1 : 1, sizeof *t->links);
    if (!t->path || !t->devices || !t->links)
        goto err_free;
    snprintf(t->name, sizeof t->name, "chain-%d", n);
    t->bytes_per_param = 12;
    for (int i = 0; i < n; i++) {
        t->devices[i] = *proto;
        snprintf(t->devices[i].name, sizeof t->devices[i].name, "dev%d", i);
    }
    for (int i = 0; i + 1 < n; i++) {
        struct mdl_link *l = &t->links[t->n_links++];
        snprintf(l->name, sizeof l->name, "l%d-%d", i, i + 1);
        l->bandwidth = bandwidth;
        l->latency = latency;
        l->n_ends = 2;
        if (!(l->ends = malloc(2 * sizeof *l->ends)))
            goto err_free;
        l->ends[0] = i;
        l->ends[1] = i + 1;
    }
    t->n_devices = n;
    if (mdl_topology_index(t) < 0)
        goto err_free;
    *out = t;
    return 0;

err_free:
    mdl_topology_free(t);
    return ps_error(PS_ENOMEM, "out of memory");
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

const char *mdl_topology_node_name(const struct mdl_topology *t, int i)
{
    return i < t->n_devices ? t->devices[i].name : t->switches[i - t->n_devices].name;
}

int mdl_topology_incidence_new(const struct mdl_topology *t, int **first_out, int **inc_out)
{
    int nn = t->n_devices + t->n_switches;
    size_t ends = 0;
    for (int i = 0; i < t->n_links; i++)
        ends += (size_t)t->links[i].n_ends;
    int *first = calloc((size_t)nn + 1, sizeof *first);
    int *inc = malloc(sizeof *inc * (ends ? ends : 1));
    int *cur = malloc(sizeof *cur * (size_t)(nn ? nn : 1));
    if (!first || !inc || !cur) {
        free(first);
        free(inc);
        free(cur);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int i = 0; i < t->n_links; i++)
        for (int k = 0; k < t->links[i].n_ends; k++)
            first[t->links[i].ends[k] + 1]++;
    for (int v = 0; v < nn; v++) {
        first[v + 1] += first[v];
        cur[v] = first[v];
    }
    for (int i = 0; i < t->n_links; i++) /* in link order: each list ascending */
        for (int k = 0; k < t->links[i].n_ends; k++)
            inc[cur[t->links[i].ends[k]]++] = i;
    free(cur);
    *first_out = first;
    *inc_out = inc;
    return 0;
}

int mdl_topology_index(struct mdl_topology *t)
{
    int *first, *inc, rc = mdl_topology_incidence_new(t, &first, &inc);
    if (rc < 0)
        return rc;
    free(t->inc_first);
    free(t->inc);
    t->inc_first = first;
    t->inc = inc;
    t->inc_links = t->links;
    t->inc_n_links = t->n_links;
    t->inc_nodes = t->n_devices + t->n_switches;
    return 0;
}

const int *mdl_topology_incidence(const struct mdl_topology *t, const int **first)
{
    int ok = t->inc && t->inc_links == t->links && t->inc_n_links == t->n_links &&
             t->inc_nodes == t->n_devices + t->n_switches;
    *first = ok ? t->inc_first : NULL;
    return ok ? t->inc : NULL;
}

int mdl_topology_link_between(const struct mdl_topology *t, int a, int b)
{
    const int *first, *inc = mdl_topology_incidence(t, &first);
    if (inc) { /* the first link in both ascending lists */
        int i = first[a], j = first[b];
        while (i < first[a + 1] && j < first[b + 1]) {
            if (inc[i] == inc[j])
                return inc[i];
            if (inc[i] < inc[j])
                i++;
            else
                j++;
        }
        return -1;
    }
    for (int i = 0; i < t->n_links; i++) {
        int ha = 0, hb = 0;
        for (int k = 0; k < t->links[i].n_ends; k++) {
            ha |= t->links[i].ends[k] == a;
            hb |= t->links[i].ends[k] == b;
        }
        if (ha && hb)
            return i;
    }
    return -1;
}
