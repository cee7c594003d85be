/* mdl_preset: bundled topologies and profiles by name; `pipesim presets`. */
#include "models/mdl_preset.h"
#include "models/mdl_gen.h"
#include "models/mdl_topology.h"
#include "base/ps_data.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_util.h"
#include "base/ps_suggest.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
    const char *dir, *ext, *what;
} kinds[] = {
    [MDL_PRESET_TOPOLOGY] = { "topologies", ".json", "topology" },
    [MDL_PRESET_PROFILE] = { "profiles", ".csv", "profile" },
};

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

int mdl_preset_path(enum mdl_preset_kind kind, const char *arg, char *out, size_t n)
{
    struct stat st;
    if (stat(arg, &st) == 0 || strchr(arg, '/') || !*arg) {
        if ((size_t)snprintf(out, n, "%s", arg) >= n)
            return ps_error(PS_EUSAGE, "%s: path too long", arg);
        return 0;
    }
    char file[512];
    if ((size_t)snprintf(file, sizeof file, "%s%s", arg,
                         ends_with(arg, kinds[kind].ext) ? "" : kinds[kind].ext) >= sizeof file)
        return ps_error(PS_EUSAGE, "%s: name too long", arg);
    int rc = ps_data_find(kinds[kind].dir, file, out, n);
    if (rc == -PS_EIO) { /* not bundled either: the loader's own error names arg */
        ps_error_clear();
        snprintf(out, n, "%s", arg);
        return 0;
    }
    return rc;
}

static void preset_suggest(enum mdl_preset_kind kind, const char *dir, const char *arg,
                           char *hint, size_t n);

int mdl_preset_hint(enum mdl_preset_kind kind, const char *arg, int rc)
{
    struct stat st;
    if (rc != -PS_EIO || strchr(arg, '/') || stat(arg, &st) == 0)
        return rc;
    char why[PS_ERRMSG_MAX], dir[4096];
    snprintf(why, sizeof why, "%s", ps_errmsg());
    char hint[128] = "";
    if (ps_data_find(kinds[kind].dir, NULL, dir, sizeof dir) < 0) { /* say why there is none */
        char none[PS_ERRMSG_MAX];
        snprintf(none, sizeof none, "%s", ps_errmsg()); /* ps_error rewrites its buffer */
        return ps_error(PS_EIO, "%s (nor the name of a bundled %s: %s)", why,
                        kinds[kind].what, none);
    }
    preset_suggest(kind, dir, arg, hint, sizeof hint);
    return ps_error(PS_EIO, "%s (nor the name of a bundled %s in %s: `pipesim presets` lists "
                    "them)%s", why, kinds[kind].what, dir, hint);
}

/* ---- pipesim presets ---- */

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **v, int n);

/* The names in folder dir ending in ext (not `skip`), sorted; *out malloc'd
 * (NULL, *n 0, on an error: nothing for the caller to free). */
static int list_dir(const char *dir, const char *ext, const char *skip, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d && errno == ENOMEM) /* opendir's own buffer */
        return ps_error(PS_ENOMEM, "out of memory");
    if (!d)
        return ps_error(PS_EIO, "%s: cannot open the folder: %s", dir, strerror(errno));
    struct dirent *e;
    char **v = NULL;
    int cap = 0, rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ext) || (skip && !strcmp(e->d_name, skip)))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nv = realloc(v, (size_t)cap * sizeof *v);
            if (!nv) {
                rc = ps_error(PS_ENOMEM, "out of memory");
                break;
            }
            v = nv;
        }
        if (!(v[*n] = strdup(e->d_name))) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (rc < 0) { /* the names listed so far leaked with the error (helper-60) */
        free_names(v, *n);
        v = NULL;
        *n = 0;
    } else if (*n) {
        qsort(v, (size_t)*n, sizeof *v, name_cmp);
    }
    *out = v;
    return rc;
}

/* "; did you mean 'NAME'?" for the bundled name of this kind closest to arg
 * (names without their extension), else "" (a failed listing, too: the
 * hint is a courtesy, the error is the loader's). */
static void preset_suggest(enum mdl_preset_kind kind, const char *dir, const char *arg,
                           char *hint, size_t n)
{
    char **names;
    int k;
    if (list_dir(dir, kinds[kind].ext, kind == MDL_PRESET_TOPOLOGY ? "devices.json" : NULL,
                 &names, &k) < 0) {
        ps_error_clear();
        return;
    }
    for (int i = 0; i < k; i++)
        names[i][strlen(names[i]) - strlen(kinds[kind].ext)] = 0;
    char typed[128];
    snprintf(typed, sizeof typed, "%s", arg);
    if (ends_with(typed, kinds[kind].ext))
        typed[strlen(typed) - strlen(kinds[kind].ext)] = 0;
    struct ps_suggest sg;
    ps_suggest_init(&sg, typed);
    for (int i = 0; i < k; i++)
        ps_suggest_add(&sg, names[i]);
    snprintf(hint, n, "%s", ps_suggest_hint(&sg));
    free_names(names, k);
}

static void free_names(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- the catalog ---- */

static char *dup_or_null(const char *s, int *bad)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *bad = 1;
    return d;
}

/* A new zeroed item at the end of c->items, or NULL (out of memory). */
static struct mdl_preset_item *add_item(struct mdl_preset_catalog *c, int *cap,
                                        enum mdl_preset_section sec)
{
    if (c->n == *cap) {
        int ncap = *cap ? 2 * *cap : 32;
        struct mdl_preset_item *v = realloc(c->items, (size_t)ncap * sizeof *v);
        if (!v)
            return NULL;
        c->items = v;
        *cap = ncap;
    }
    struct mdl_preset_item *it = &c->items[c->n++];
    memset(it, 0, sizeof *it);
    it->section = sec;
    return it;
}

/* The length of name's kind: the name without its trailing index, the
 * digits at its end and any groups of digits joined to them by '_' ("gpu"
 * of gpu7, "core" of core31_0, "a100-" of a100-0); a name of digits alone
 * is its own kind. It cut at the first digit, and a100-0 and a7 were
 * listed as "2 x a", node1-gpu0 and node2-gpu0 as "2 x node". */
static size_t kind_len(const char *name)
{
    size_t n = strlen(name), k = n;
    while (k && isdigit((unsigned char)name[k - 1]))
        k--;
    while (k >= 2 && name[k - 1] == '_' && isdigit((unsigned char)name[k - 2])) {
        k--;
        while (k && isdigit((unsigned char)name[k - 1]))
            k--;
    }
    return k ? k : n;
}

/* Runs of equal devices; a run names the preset of the file's device
 * object whose name starts its first device's name, if any. */
static int topo_runs(struct mdl_preset_item *it, const struct mdl_topology *t, json_t *root)
{
    json_t *jd = json_object_get(root, "devices");
    it->runs = calloc((size_t)t->n_devices + 1, sizeof *it->runs);
    const char **pre = calloc((size_t)t->n_devices + 1, sizeof *pre);
    if (!it->runs || !pre) {
        free(pre);
        return -1;
    }
    /* each device's preset from its own entry of the file: entries expand
     * to their count of devices, in order (a name prefix matched "g" to
     * "gpu0" and gave gpu the preset of g) */
    size_t k;
    json_t *o;
    int d = 0;
    json_array_foreach(jd, k, o) {
        json_t *c = json_object_get(o, "count");
        int n = json_is_number(c) ? (int)json_number_value(c) : 1; /* 8.0 is 8 */
        const char *pr = json_string_value(json_object_get(o, "preset"));
        for (int m = 0; m < n && d < t->n_devices; m++)
            pre[d++] = pr;
    }
    /* a run: consecutive devices of one kind (kind_len), peak, memory and
     * preset (c and d alike were listed as "2 x c") */
    for (int i = 0; i < t->n_devices;) {
        const struct mdl_device *a = &t->devices[i];
        size_t nl = kind_len(a->name);
        int j = i + 1;
        while (j < t->n_devices && t->devices[j].flops == a->flops &&
               t->devices[j].memory == a->memory && kind_len(t->devices[j].name) == nl &&
               !strncmp(t->devices[j].name, a->name, nl) &&
               (pre[j] == pre[i] || (pre[j] && pre[i] && !strcmp(pre[j], pre[i]))))
            j++;
        struct mdl_preset_devrun *r = &it->runs[it->n_runs++];
        snprintf(r->kind, sizeof r->kind, "%.*s", (int)nl, a->name);
        r->count = j - i;
        r->flops = a->flops;
        r->memory = a->memory;
        if (pre[i])
            snprintf(r->preset, sizeof r->preset, "%s", pre[i]);
        i = j;
    }
    free(pre);
    return 0;
}

/* Links grouped by (bandwidth, shared), in the order first seen. */
static int topo_groups(struct mdl_preset_item *it, const struct mdl_topology *t)
{
    char *done = calloc((size_t)t->n_links + 1, 1);
    it->groups = calloc((size_t)t->n_links + 1, sizeof *it->groups);
    if (!done || !it->groups) {
        free(done);
        return -1;
    }
    for (int i = 0; i < t->n_links; i++) {
        if (done[i])
            continue;
        struct mdl_preset_linkgroup *g = &it->groups[it->n_groups++];
        g->bandwidth = t->links[i].bandwidth;
        g->shared = t->links[i].shared;
        for (int j = i; j < t->n_links; j++)
            if (!done[j] && t->links[j].bandwidth == g->bandwidth &&
                t->links[j].shared == g->shared) {
                done[j] = 1;
                g->count++;
            }
    }
    free(done);
    return 0;
}

/* A file that does not load: its item keeps the loader's message, and the
 * listing goes on (0); out of memory stops it (rc). */
static int load_error(struct mdl_preset_catalog *c, struct mdl_preset_item *it, int rc)
{
    if (rc == -PS_ENOMEM || !(it->error = strdup(ps_errmsg())))
        return rc == -PS_ENOMEM ? rc : ps_error(PS_ENOMEM, "out of memory");
    c->n_errors++;
    ps_error_clear();
    return 0;
}

/* The bundled files of one kind, or a note when the folder is not there. */
static int add_files(struct mdl_preset_catalog *c, int *cap, enum mdl_preset_kind kind)
{
    char dir[4096], path[4608];
    char **dst_dir = kind == MDL_PRESET_TOPOLOGY ? &c->topo_dir : &c->profile_dir;
    char **dst_note = kind == MDL_PRESET_TOPOLOGY ? &c->topo_note : &c->profile_note;
    int rc = ps_data_find(kinds[kind].dir, NULL, dir, sizeof dir);
    if (rc == -PS_EIO) { /* the folder, named in the message, is not there */
        if (!(*dst_note = strdup(ps_errmsg())))
            return ps_error(PS_ENOMEM, "out of memory");
        ps_error_clear();
        return 0;
    }
    char **names;
    int n;
    if (rc < 0 || (rc = list_dir(dir, kinds[kind].ext,
                                 kind == MDL_PRESET_TOPOLOGY ? "devices.json" : NULL, &names,
                                 &n)) < 0)
        return rc;
    if (!(*dst_dir = strdup(dir)))
        rc = ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; i < n && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct mdl_preset_item *it = add_item(c, cap, kind == MDL_PRESET_TOPOLOGY
                                                          ? MDL_PRESET_SEC_TOPOLOGY
                                                          : MDL_PRESET_SEC_PROFILE);
        if (!it) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            break;
        }
        int bad = 0;
        names[i][strlen(names[i]) - strlen(kinds[kind].ext)] = 0;
        it->name = dup_or_null(names[i], &bad);
        it->path = dup_or_null(path, &bad);
        if (kind == MDL_PRESET_TOPOLOGY) {
            struct mdl_topology *t;
            if ((rc = mdl_topology_load(path, &t)) < 0) {
                rc = bad ? ps_error(PS_ENOMEM, "out of memory") : load_error(c, it, rc);
                continue;
            }
            /* jansson may drop a failed allocation inside a string and still return the
             * document (a comment read back as "uiform" for "uniform"): ask it */
            ps_json_begin();
            json_t *root = json_load_file(path, 0, NULL);
            bad |= !root || ps_json_oom(); /* it loaded just now: out of memory */
            it->n_devices = t->n_devices;
            it->n_links = t->n_links;
            it->n_switches = t->n_switches;
            bad |= topo_runs(it, t, root) < 0 || topo_groups(it, t) < 0;
            it->description =
                dup_or_null(json_string_value(json_object_get(root, "comment")), &bad);
            json_decref(root);
            mdl_topology_free(t);
        } else {
            struct mdl_profile *p;
            if ((rc = mdl_profile_load(path, &p)) < 0) {
                rc = bad ? ps_error(PS_ENOMEM, "out of memory") : load_error(c, it, rc);
                continue;
            }
            it->layers = p->n_layers;
            it->params = mdl_profile_params(p);
            it->measured = p->measured;
            mdl_profile_free(p);
            /* the generator spec its header names: "# pipesim layer profile (SPEC); ..." */
            char *text;
            size_t len;
            int rrc = ps_read_file(path, &text, &len);
            bad |= rrc == -PS_ENOMEM;
            if (rrc == 0) {
                const char *o = strchr(text, '('), *nl = strchr(text, '\n');
                const char *e = o ? strchr(o, ')') : NULL;
                if (text[0] == '#' && o && e && (!nl || e < nl)) {
                    it->spec = strndup(o + 1, (size_t)(e - o - 1));
                    bad |= !it->spec;
                }
                free(text);
            } else {
                ps_error_clear();
            }
        }
        if (bad)
            rc = ps_error(PS_ENOMEM, "out of memory");
    }
    free_names(names, n);
    return rc;
}

/* One example of each generator; the counts are the built model's. */
static const char *const generator_examples[] = {
    "mlp:layers=16,width=1024", "transformer:L=24", "amoebanet:L=18,D=256",
    "gpt:layers=24,hidden=1024,heads=16,seq=1024,vocab=50257", "resnet:depth=50",
    "unet:convs=5,channels=64", "vgg:depth=16",
};

int mdl_preset_catalog_new(struct mdl_preset_catalog **out)
{
    *out = NULL;
    struct mdl_preset_catalog *c = calloc(1, sizeof *c);
    if (!c)
        return ps_error(PS_ENOMEM, "out of memory");
    char root[4096];
    int cap = 0, rc = ps_data_root(&c->how, root, sizeof root);
    if (rc < 0)
        goto err_free;
    if (!(c->root = strdup(root))) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err_free;
    }
    if ((rc = add_files(c, &cap, MDL_PRESET_TOPOLOGY)) < 0 ||
        (rc = add_files(c, &cap, MDL_PRESET_PROFILE)) < 0)
        goto err_free;
    for (size_t i = 0; i < sizeof generator_examples / sizeof *generator_examples; i++) {
        struct mdl_profile *p;
        if ((rc = mdl_model_open(generator_examples[i], &p)) < 0)
            goto err_free;
        struct mdl_preset_item *it = add_item(c, &cap, MDL_PRESET_SEC_GENERATOR);
        int bad = !it;
        if (it) {
            it->name = dup_or_null(generator_examples[i], &bad);
            it->spec = dup_or_null(generator_examples[i], &bad);
            it->layers = p->n_layers;
            it->params = mdl_profile_params(p);
        }
        mdl_profile_free(p);
        if (bad) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto err_free;
        }
    }
    *out = c;
    return 0;
err_free:
    mdl_preset_catalog_free(c);
    return rc;
}

void mdl_preset_catalog_free(struct mdl_preset_catalog *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n; i++) {
        struct mdl_preset_item *it = &c->items[i];
        free(it->name);
        free(it->path);
        free(it->runs);
        free(it->groups);
        free(it->description);
        free(it->spec);
        free(it->error);
    }
    free(c->items);
    free(c->root);
    free(c->topo_dir);
    free(c->profile_dir);
    free(c->topo_note);
    free(c->profile_note);
    free(c);
}
