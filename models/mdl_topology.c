/* mdl_topology — a topology from its JSON file, or a chain built in memory
 * (models/mdl_topology.h): the document, its fields, switches, links and
 * memory policy. Devices are read in mdl_topology_devices.c, the incidence
 * index is in mdl_topology_index.c, link checks in mdl_topology_check.c and
 * routes in mdl_route.c. */
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

int mdl_json_num(const char *path, const char *where, json_t *o, const char *key,
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

int mdl_json_name(const char *path, const char *where, json_t *o, char *dst)
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
            (rc = mdl_json_name(path, where, o, t->switches[i].name)) < 0)
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
            (rc = mdl_json_name(path, where, o, l->name)) < 0 ||
            (rc = mdl_json_num(path, where, o, "bandwidth", 1, 0, 1, &l->bandwidth)) < 0 ||
            (rc = mdl_json_num(path, where, o, "latency", 0, 0, 0, &l->latency)) < 0 ||
            (rc = mdl_json_num(path, where, o, "overhead_s", 0, 0, 0, &l->overhead_s)) < 0)
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
        ((rc = mdl_json_num(path, "memory_policy", v, "allocator_overhead", 0, 0, 0,
                            &t->mem.allocator_overhead)) < 0 ||
         (rc = mdl_json_num(path, "memory_policy", v, "workspace_bytes", 0, 0, 0,
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
        if ((rc = mdl_json_name(path, "topology", root, t->name)) < 0)
            goto err_free;
    } else {
        snprintf(t->name, sizeof t->name, "unnamed");
    }
    if ((rc = mdl_json_num(path, "topology", root, "bytes_per_param", 0, 12, 0,
                           &t->bytes_per_param)) < 0 ||
        (rc = load_mempolicy(path, root, t)) < 0 ||
        (rc = mdl_topology_load_devices(path, json_object_get(root, "devices"), t, &entry)) < 0 ||
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
