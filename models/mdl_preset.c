/* mdl_preset: bundled topologies and profiles by name; `pipesim presets`. */
#include "models/mdl_preset.h"
#include "models/mdl_gen.h"
#include "models/mdl_topology.h"
#include "base/ps_data.h"
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "base/ps_suggest.h"

#include <dirent.h>
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
    if (ps_data_find(kinds[kind].dir, NULL, dir, sizeof dir) < 0)
        snprintf(dir, sizeof dir, "the data folder");
    else
        preset_suggest(kind, dir, arg, hint, sizeof hint);
    return ps_error(PS_EIO, "%s (nor the name of a bundled %s in %s: `pipesim presets` lists "
                    "them)%s", why, kinds[kind].what, dir, hint);
}

/* ---- pipesim presets ---- */

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in folder dir ending in ext (not `skip`), sorted; *out malloc'd. */
static int list_dir(const char *dir, const char *ext, const char *skip, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return ps_error(PS_EIO, "%s: cannot open the folder", dir);
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
    if (rc == 0 && *n)
        qsort(v, (size_t)*n, sizeof *v, name_cmp);
    *out = v;
    return rc;
}

static void free_names(char **v, int n);

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

/* The first sentence of text (up to ". " or the end), at most max bytes. */
static void first_sentence(FILE *f, const char *text, int max)
{
    const char *end = strstr(text, ". ");
    int len = end ? (int)(end - text) + 1 : (int)strlen(text);
    if (len > max)
        fprintf(f, "%.*s...", max - 3, text);
    else
        fprintf(f, "%.*s", len, text);
}

/* v in decimal units: "100.00 TFLOP/s", "15.75 GB/s", "1.34 G parameters"
 * (a count: word apart from the prefix). Memory is not printed with it but
 * with ps_human_bytes (binary units, as every table prints memory). */
static void put_human(FILE *f, double v, const char *unit, int count)
{
    static const char *const pre[] = { "", "k", "M", "G", "T", "P", "E" };
    int i = 0;
    while (fabs(v) >= 1000 && i < 6) {
        v /= 1000;
        i++;
    }
    if (i)
        fprintf(f, "%.2f %s%s%s", v, pre[i], count ? " " : "", unit);
    else
        fprintf(f, "%.0f %s", v, unit);
}

/* Runs of equal devices: "8 x gpu 15.7 TFLOP/s 16.0 GB" (name without its
 * trailing digits, peak, memory); a run with a preset names it. */
static void put_devices(FILE *f, const struct mdl_topology *t, json_t *root)
{
    json_t *jd = json_object_get(root, "devices");
    for (int i = 0; i < t->n_devices;) {
        const struct mdl_device *a = &t->devices[i];
        int j = i + 1;
        while (j < t->n_devices && t->devices[j].flops == a->flops &&
               t->devices[j].memory == a->memory)
            j++;
        size_t nl = strcspn(a->name, "0123456789");
        fprintf(f, "%s%d x %.*s ", i ? ", " : "", j - i, (int)(nl ? nl : strlen(a->name)),
                a->name);
        put_human(f, a->flops, "FLOP/s, ", 0);
        char mem[32];
        ps_human_bytes(a->memory, mem, sizeof mem);
        fputs(mem, f);
        /* the preset of the file's first device object of the run, if any */
        const char *preset = NULL;
        size_t k;
        json_t *o;
        json_array_foreach(jd, k, o) {
            const char *nm = json_string_value(json_object_get(o, "name"));
            if (nm && !strncmp(nm, a->name, strlen(nm)))
                preset = json_string_value(json_object_get(o, "preset"));
            if (preset)
                break;
        }
        if (preset)
            fprintf(f, " (%s)", preset);
        i = j;
    }
}

/* Links by (bandwidth, shared): "7 x 100 GB/s", "1 shared 12.0 GB/s". */
static void put_links(FILE *f, const struct mdl_topology *t)
{
    char *done = calloc((size_t)t->n_links + 1, 1);
    if (!done)
        return;
    int first = 1;
    for (int i = 0; i < t->n_links; i++) {
        if (done[i])
            continue;
        int c = 0;
        for (int j = i; j < t->n_links; j++)
            if (!done[j] && t->links[j].bandwidth == t->links[i].bandwidth &&
                t->links[j].shared == t->links[i].shared) {
                done[j] = 1;
                c++;
            }
        fprintf(f, "%s%d%s ", first ? "" : ", ", c, t->links[i].shared ? " shared" : " x");
        put_human(f, t->links[i].bandwidth, "B/s", 0);
        first = 0;
    }
    if (!t->n_links)
        fputs("none", f);
    if (t->n_switches)
        fprintf(f, "; %d switch%s", t->n_switches, t->n_switches > 1 ? "es" : "");
    free(done);
}

static int list_topologies(FILE *f)
{
    char dir[4096], path[4608];
    int rc = ps_data_find("topologies", NULL, dir, sizeof dir);
    char **names;
    int n;
    if (rc == -PS_EIO) { /* the folder, named in the message, is not there */
        fprintf(f, "topologies: none (%s)\n", ps_errmsg());
        return 0;
    }
    if (rc < 0 || (rc = list_dir(dir, ".json", "devices.json", &names, &n)) < 0)
        return rc;
    fprintf(f, "topologies (--topology NAME), %s:\n", dir);
    for (int i = 0; i < n && rc == 0; i++) {
        struct mdl_topology *t;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if ((rc = mdl_topology_load(path, &t)) < 0)
            break;
        json_t *root = json_load_file(path, 0, NULL);
        fprintf(f, "  %-20.*s ", (int)(strlen(names[i]) - 5), names[i]);
        put_devices(f, t, root);
        fputs("; links: ", f);
        put_links(f, t);
        const char *comment = json_string_value(json_object_get(root, "comment"));
        if (comment) {
            fputs(". ", f);
            first_sentence(f, comment, 200);
        }
        fputc('\n', f);
        json_decref(root);
        mdl_topology_free(t);
    }
    free_names(names, n);
    return rc;
}

static void put_profile(FILE *f, const struct mdl_profile *p)
{
    fprintf(f, "%d layers, ", p->n_layers);
    put_human(f, mdl_profile_params(p), "parameters", 1);
}

static int list_profiles(FILE *f)
{
    char dir[4096], path[4608];
    int rc = ps_data_find("profiles", NULL, dir, sizeof dir);
    char **names;
    int n;
    if (rc == -PS_EIO) {
        fprintf(f, "profiles: none (%s)\n", ps_errmsg());
        return 0;
    }
    if (rc < 0 || (rc = list_dir(dir, ".csv", NULL, &names, &n)) < 0)
        return rc;
    fprintf(f, "profiles (--model NAME), %s:\n", dir);
    for (int i = 0; i < n && rc == 0; i++) {
        struct mdl_profile *p;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if ((rc = mdl_profile_load(path, &p)) < 0)
            break;
        fprintf(f, "  %-20.*s ", (int)(strlen(names[i]) - 4), names[i]);
        put_profile(f, p);
        /* the generator spec its header names: "# pipesim layer profile (SPEC); ..." */
        char *text;
        size_t len;
        if (ps_read_file(path, &text, &len) == 0) {
            const char *o = strchr(text, '('), *nl = strchr(text, '\n');
            const char *c = o ? strchr(o, ')') : NULL;
            if (text[0] == '#' && o && c && (!nl || c < nl))
                fprintf(f, ", %s %.*s", p->measured ? "measured" : "from", (int)(c - o - 1), o + 1);
            free(text);
        }
        fputc('\n', f);
        mdl_profile_free(p);
    }
    free_names(names, n);
    return rc;
}

/* One example of each generator; the counts are the built model's. */
static const char *const generator_examples[] = {
    "mlp:layers=16,width=1024", "transformer:L=24", "amoebanet:L=18,D=256",
    "gpt:layers=24,hidden=1024,heads=16,seq=1024,vocab=50257", "resnet:depth=50",
};

/* The list into f (a memory stream: nothing reaches the output on error). */
static int list(FILE *f)
{
    const char *how;
    char root[4096];
    int rc = ps_data_root(&how, root, sizeof root);
    if (rc < 0)
        return rc;
    fprintf(f, "data folder: %s (%s)\n\n", root, how);
    if ((rc = list_topologies(f)) < 0)
        return rc;
    fputc('\n', f);
    if ((rc = list_profiles(f)) < 0)
        return rc;
    fputs("\nmodel generators (--model SPEC; pipesim gen --help for the keys):\n", f);
    for (size_t i = 0; i < sizeof generator_examples / sizeof *generator_examples; i++) {
        struct mdl_profile *p;
        if ((rc = mdl_model_open(generator_examples[i], &p)) < 0)
            return rc;
        fprintf(f, "  %-24s ", generator_examples[i]);
        put_profile(f, p);
        fputc('\n', f);
        mdl_profile_free(p);
    }
    return 0;
}

int mdl_preset_list(FILE *out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return ps_error(PS_ENOMEM, "out of memory");
    int rc = list(f);
    if (fclose(f) != 0 && rc == 0)
        rc = ps_error(PS_ENOMEM, "out of memory");
    if (rc == 0 && fwrite(text, 1, len, out) != len)
        rc = ps_error(PS_EIO, "cannot write the list");
    free(text);
    return rc;
}
