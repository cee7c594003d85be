/* ana_presets: `pipesim presets` as a table, a CSV or JSON. */
#include "analysis/ana_presets.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_strbuf.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const section_names[] = {
    [MDL_PRESET_SEC_TOPOLOGY] = "topology",
    [MDL_PRESET_SEC_PROFILE] = "profile",
    [MDL_PRESET_SEC_GENERATOR] = "generator",
};

/* The catalog and, per item, its devices and links as the table words
 * them (topologies only; built once, so a failed allocation is reported
 * before anything is printed). */
struct view {
    const struct mdl_preset_catalog *c;
    struct ps_strbuf *devices, *links;
};

/* v in decimal units: "100.00 TFLOP/s", "15.75 GB/s"; from 1000 E on, in
 * exponent notation ("1.00e+300 FLOP/s": as digits it cut the unit off).
 * Memory is not printed with it but with ps_human_bytes (binary units, as
 * every table prints memory), parameter counts with ps_human_count
 * ("1.34 billion"). */
static void human(char *buf, size_t n, double v, const char *unit)
{
    static const char *const pre[] = { "", "k", "M", "G", "T", "P", "E" };
    double w = v;
    int i = 0;
    while (fabs(v) >= 1000 && i < 6) {
        v /= 1000;
        i++;
    }
    if (fabs(v) >= 1000)
        snprintf(buf, n, "%.2e %s", w, unit);
    else if (i)
        snprintf(buf, n, "%.2f %s%s", v, pre[i], unit);
    else
        snprintf(buf, n, "%.0f %s", v, unit);
}

/* s into buf (n bytes), control characters as '?': a file's name or a
 * loader's message for a table line (a newline in a file name would break
 * the line), as messages show them. CSV and JSON keep the name whole. */
static const char *clean(const char *s, char *buf, size_t n)
{
    snprintf(buf, n, "%s", s);
    return ps_printable_in_place(buf);
}

/* "8 x gpu 15.70 TFLOP/s, 16.00 GiB (v100-sxm2), ...": the table's words,
 * the CSV's device_summary, so a device's name or preset is one line
 * ('?' for a control character; JSON's device_runs keep them whole). */
static void put_devices(struct ps_strbuf *b, const struct mdl_preset_item *it)
{
    for (int i = 0; i < it->n_runs; i++) {
        const struct mdl_preset_devrun *r = &it->runs[i];
        char peak[64], mem[32], kind[sizeof r->kind], pre[sizeof r->preset];
        human(peak, sizeof peak, r->flops, "FLOP/s, ");
        ps_human_bytes(r->memory, mem, sizeof mem);
        ps_strbuf_printf(b, "%s%d x %s %s%s", i ? ", " : "", r->count,
                         clean(r->kind, kind, sizeof kind), peak, mem);
        if (r->preset[0])
            ps_strbuf_printf(b, " (%s)", clean(r->preset, pre, sizeof pre));
    }
}

/* "7 x 100.00 GB/s", "1 shared 12.00 GB/s", "none"; "; 6 switches" */
static void put_links(struct ps_strbuf *b, const struct mdl_preset_item *it)
{
    for (int i = 0; i < it->n_groups; i++) {
        char bw[64];
        human(bw, sizeof bw, it->groups[i].bandwidth, "B/s");
        ps_strbuf_printf(b, "%s%d%s %s", i ? ", " : "", it->groups[i].count,
                         it->groups[i].shared ? " shared" : " x", bw);
    }
    if (!it->n_groups)
        ps_strbuf_puts(b, "none");
    if (it->n_switches)
        ps_strbuf_printf(b, "; %d switch%s", it->n_switches, it->n_switches > 1 ? "es" : "");
}

/* The first sentence of text (up to ". " or the end), at most max bytes,
 * on the line ('?' for a newline or an escape: the file's comment is
 * quoted input, which CSV and JSON keep whole). */
static void first_sentence(FILE *f, const char *text, int max)
{
    const char *end = strstr(text, ". ");
    int len = end ? (int)(end - text) + 1 : (int)strlen(text);
    if (len > max) {
        ps_put_printable(f, text, max - 3);
        fputs("...", f);
    } else {
        ps_put_printable(f, text, len);
    }
}

static void put_model(FILE *f, const struct mdl_preset_item *it)
{
    char params[64];
    ps_human_count(it->params, params, sizeof params);
    fprintf(f, "%d layer%s, %s parameter%s", it->layers, /* helper-137: "1 parameters" */
            it->layers == 1 ? "" : "s", params, it->params == 1 ? "" : "s");
}

static void print_table(const void *obj, FILE *f)
{
    const struct view *v = obj;
    const struct mdl_preset_catalog *c = v->c;
    fprintf(f, "data folder: %s (%s)\n\n", c->root, c->how);
    if (c->topo_dir)
        fprintf(f, "topologies (--topology NAME), %s:\n", c->topo_dir);
    else
        fprintf(f, "topologies: none (%s)\n", c->topo_note);
    for (int i = 0; i < c->n; i++) {
        const struct mdl_preset_item *it = &c->items[i];
        if (it->section != MDL_PRESET_SEC_TOPOLOGY)
            continue;
        char nm[256], why[PS_ERRMSG_MAX];
        if (it->error) {
            fprintf(f, "  %-20s does not load: %s\n", clean(it->name, nm, sizeof nm),
                    clean(it->error, why, sizeof why));
            continue;
        }
        fprintf(f, "  %-20s %s; links: %s", clean(it->name, nm, sizeof nm),
                ps_strbuf_str(&v->devices[i]), ps_strbuf_str(&v->links[i]));
        if (it->description) {
            fputs(". ", f);
            first_sentence(f, it->description, 200);
        }
        fputc('\n', f);
    }
    fputc('\n', f);
    if (c->profile_dir)
        fprintf(f, "profiles (--model NAME), %s:\n", c->profile_dir);
    else
        fprintf(f, "profiles: none (%s)\n", c->profile_note);
    for (int i = 0; i < c->n; i++) {
        const struct mdl_preset_item *it = &c->items[i];
        if (it->section != MDL_PRESET_SEC_PROFILE)
            continue;
        char nm[256], why[PS_ERRMSG_MAX];
        fprintf(f, "  %-20s ", clean(it->name, nm, sizeof nm));
        if (it->error) {
            fprintf(f, "does not load: %s\n", clean(it->error, why, sizeof why));
            continue;
        }
        put_model(f, it);
        if (it->spec) {
            fprintf(f, ", %s ", it->measured ? "measured" : "from");
            ps_put_printable(f, it->spec, (int)strlen(it->spec));
        }
        fputc('\n', f);
    }
    fputs("\nmodel generators (--model SPEC; pipesim gen --help for the keys):\n", f);
    for (int i = 0; i < c->n; i++) {
        const struct mdl_preset_item *it = &c->items[i];
        if (it->section != MDL_PRESET_SEC_GENERATOR)
            continue;
        fprintf(f, "  %-24s ", it->name);
        put_model(f, it);
        fputc('\n', f);
    }
}

/* A quoted CSV field, or an empty one for NULL. */
static void csv_opt(FILE *f, const char *s)
{
    if (s)
        ps_csv_str(f, s);
}

static void print_csv(const void *obj, FILE *f)
{
    const struct view *v = obj;
    const struct mdl_preset_catalog *c = v->c;
    fputs("section,name,file,devices,device_flops,device_memory_bytes,device_preset,"
          "device_summary,links,link_summary,switches,layers,parameters,spec,measured,"
          "description,error\n", f);
    for (int i = 0; i < c->n; i++) {
        const struct mdl_preset_item *it = &c->items[i];
        fprintf(f, "%s,", section_names[it->section]);
        ps_csv_str(f, it->name);
        fputc(',', f);
        csv_opt(f, it->path);
        if (it->error) { /* only its name, file and why */
            fputs(",,,,,,,,,,,,,,", f);
            ps_csv_str(f, it->error);
        } else if (it->section == MDL_PRESET_SEC_TOPOLOGY) {
            const struct mdl_preset_devrun *r = it->n_runs ? &it->runs[0] : NULL;
            fprintf(f, ",%d,", it->n_devices);
            if (r)
                fprintf(f, "%s,%s,", PS_DBL(r->flops), PS_DBL(r->memory));
            else
                fputs(",,", f);
            if (r && r->preset[0])
                ps_csv_str(f, r->preset);
            fputc(',', f);
            ps_csv_str(f, ps_strbuf_str(&v->devices[i]));
            fprintf(f, ",%d,", it->n_links);
            ps_csv_str(f, ps_strbuf_str(&v->links[i]));
            fprintf(f, ",%d,,,,,", it->n_switches);
            csv_opt(f, it->description);
            fputc(',', f);
        } else {
            fprintf(f, ",,,,,,,,,%d,%s,", it->layers, PS_DBL(it->params));
            csv_opt(f, it->spec);
            fputc(',', f);
            if (it->section == MDL_PRESET_SEC_PROFILE)
                fprintf(f, "%d", it->measured);
            fputs(",,", f);
        }
        fputc('\n', f);
    }
}

static json_t *topology_json(const struct mdl_preset_item *it, int *bad)
{
    json_t *runs = json_array(), *groups = json_array();
    for (int i = 0; runs && i < it->n_runs; i++) {
        const struct mdl_preset_devrun *r = &it->runs[i];
        *bad |= json_array_append_new(runs, json_pack("{s:i, s:s, s:f, s:f, s:o}", "count",
                                                      r->count, "kind", r->kind, "flops",
                                                      r->flops, "memory_bytes", r->memory,
                                                      "preset", ps_json_text(r->preset[0]
                                                                            ? r->preset
                                                                            : NULL)));
    }
    for (int i = 0; groups && i < it->n_groups; i++)
        *bad |= json_array_append_new(groups, json_pack("{s:i, s:f, s:b}", "count",
                                                        it->groups[i].count,
                                                        "bandwidth_bytes_per_s",
                                                        it->groups[i].bandwidth, "shared",
                                                        it->groups[i].shared));
    if (!runs || !groups) {
        json_decref(runs);
        json_decref(groups);
        *bad = 1;
        return NULL;
    }
    return json_pack("{s:o, s:o, s:i, s:o, s:i, s:o, s:i, s:o}", "name", ps_json_text(it->name),
                     "file", ps_json_text(it->path), "devices", it->n_devices, "device_runs",
                     runs, "links", it->n_links, "link_groups", groups, "switches",
                     it->n_switches, "description", ps_json_text(it->description));
}

static int print_json(const void *obj, FILE *f)
{
    const struct view *v = obj;
    const struct mdl_preset_catalog *c = v->c;
    ps_json_begin(); /* a NULL from json_pack or a failed dump may be out of memory */
    json_t *topo = json_array(), *prof = json_array(), *gen = json_array();
    json_t *o = json_pack("{s:o, s:s, s:o, s:o, s:o, s:o}", "data_folder", ps_json_text(c->root),
                          "data_folder_source", c->how, "topologies_folder",
                          ps_json_text(c->topo_dir), "profiles_folder",
                          ps_json_text(c->profile_dir), "topologies_note",
                          ps_json_text(c->topo_note), "profiles_note",
                          ps_json_text(c->profile_note));
    int bad = !topo || !prof || !gen || !o;
    for (int i = 0; !bad && i < c->n; i++) {
        const struct mdl_preset_item *it = &c->items[i];
        if (it->error) { /* a file that does not load: its name, file and why */
            bad |= json_array_append_new(it->section == MDL_PRESET_SEC_TOPOLOGY ? topo : prof,
                                         json_pack("{s:o, s:o, s:o}", "name",
                                                   ps_json_text(it->name), "file",
                                                   ps_json_text(it->path), "error",
                                                   ps_json_text(it->error)));
            continue;
        }
        switch (it->section) {
        case MDL_PRESET_SEC_TOPOLOGY:
        {
            json_t *t = topology_json(it, &bad);
            bad |= json_array_append_new(topo, t);
        }
            break;
        case MDL_PRESET_SEC_PROFILE:
            bad |= json_array_append_new(prof, json_pack("{s:o, s:o, s:i, s:f, s:o, s:b}",
                                                         "name", ps_json_text(it->name),
                                                         "file", ps_json_text(it->path),
                                                         "layers", it->layers, "parameters",
                                                         it->params, "spec",
                                                         ps_json_text(it->spec), "measured",
                                                         it->measured));
            break;
        case MDL_PRESET_SEC_GENERATOR:
            bad |= json_array_append_new(gen, json_pack("{s:s, s:i, s:f}", "spec", it->name,
                                                        "layers", it->layers, "parameters",
                                                        it->params));
            break;
        }
    }
    if (o) {
        bad |= json_object_set_new(o, "topologies", topo);
        bad |= json_object_set_new(o, "profiles", prof);
        bad |= json_object_set_new(o, "generators", gen);
    } else {
        json_decref(topo);
        json_decref(prof);
        json_decref(gen);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    return ps_json_print(o, f, bad);
}

int ana_presets_print(const struct mdl_preset_catalog *c, enum ana_fmt fmt, FILE *f)
{
    static const struct ana_printers pr = { print_table, print_csv, print_json };
    struct view v = { c, calloc((size_t)c->n + 1, sizeof *v.devices),
                      calloc((size_t)c->n + 1, sizeof *v.links) };
    int rc = v.devices && v.links ? 0 : ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < c->n; i++)
        if (c->items[i].section == MDL_PRESET_SEC_TOPOLOGY && !c->items[i].error) {
            put_devices(&v.devices[i], &c->items[i]);
            put_links(&v.links[i], &c->items[i]);
            if ((rc = ps_strbuf_error(&v.devices[i])) == 0)
                rc = ps_strbuf_error(&v.links[i]);
        }
    if (rc == 0)
        rc = ana_print_as(fmt, &pr, &v, f);
    for (int i = 0; i < c->n && v.devices && v.links; i++) {
        ps_strbuf_release(&v.devices[i]);
        ps_strbuf_release(&v.links[i]);
    }
    free(v.devices);
    free(v.links);
    return rc;
}
