/*
 * mdl_preset — the bundled topologies and profiles by name, and their list.
 *
 * mdl_preset_path(kind, arg, out, n): what a --topology (kind
 * MDL_PRESET_TOPOLOGY) or --model profile (MDL_PRESET_PROFILE) argument
 * names. An existing file, or any argument with a '/', is itself; else arg
 * is a bundled name, with or without its extension (".json", ".csv"), in
 * the data folder (base/ps_data.h): `--topology pcie-8gpu` is
 * <data>/topologies/pcie-8gpu.json. A name found nowhere is itself again,
 * so the loader's error names it ("t.json: cannot open: No such file or
 * directory"); mdl_preset_hint(kind, arg, rc) then adds, to a PS_EIO for
 * an arg without '/', "(nor the name of a bundled topology in <folder>:
 * `pipesim presets` lists them)" and returns rc.
 *
 * mdl_preset_catalog_new(&c): what `pipesim presets` lists, as data: the
 * data folder, then one item per bundled topology (runs of equal devices
 * with their peak, memory and preset, link groups by bandwidth, switches,
 * the file's whole description), per bundled profile (layers, parameters,
 * the generator spec its header names) and per model generator (an example
 * spec, built to count its layers and parameters), in that order, each
 * section sorted by name. Everything is read from the files; a file that
 * does not load is listed with its loader's message (error; n_errors
 * counts them), so one malformed file in a data folder hides none of the
 * others; a missing folder is no error but a note (the folder's *_dir
 * NULL, *_note the reason). Out of memory is an error. The printers are
 * analysis/ana_presets.h. Cost: loads every bundled file once.
 */
#ifndef MDL_PRESET_H
#define MDL_PRESET_H

#include <stddef.h>
#include <stdio.h>

enum mdl_preset_kind { MDL_PRESET_TOPOLOGY, MDL_PRESET_PROFILE };

int mdl_preset_path(enum mdl_preset_kind kind, const char *arg, char *out, size_t n);
int mdl_preset_hint(enum mdl_preset_kind kind, const char *arg, int rc);
enum mdl_preset_section { MDL_PRESET_SEC_TOPOLOGY, MDL_PRESET_SEC_PROFILE,
                          MDL_PRESET_SEC_GENERATOR };

/* A run of consecutive equal devices (same kind, peak, memory and preset).
 * kind is the first one's name without its trailing digits ("gpu" of
 * gpu0..gpu7, "node1-gpu" of node1-gpu0), and without groups of digits
 * joined to them by '_' ("core" of core00_0..core33_1); a name of digits
 * alone is its own kind. preset is the "preset" the file names for it, ""
 * if none. */
struct mdl_preset_devrun {
    int count;
    char kind[64], preset[64];
    double flops, memory; /* FLOP/s, bytes */
};

/* Links of one bandwidth, shared or dedicated, in the order first seen. */
struct mdl_preset_linkgroup {
    int count, shared;
    double bandwidth; /* bytes/s */
};

struct mdl_preset_item {
    enum mdl_preset_section section;
    char *name;        /* file name without extension; a generator's spec */
    char *path;        /* the file; NULL for a generator */
    /* topologies */
    int n_devices, n_links, n_switches;
    int n_runs, n_groups;
    struct mdl_preset_devrun *runs;
    struct mdl_preset_linkgroup *groups;
    char *description; /* the file's "comment", whole; NULL if none */
    /* profiles and generators */
    int layers;
    double params;
    char *spec;        /* a profile's generator spec from its header; NULL if none */
    int measured;      /* a measured (calibrated or imported) profile */
    char *error;       /* a file that does not load: why (file:line:col: ...),
                        * every field above but name and path empty; else NULL */
};

struct mdl_preset_catalog {
    char *root;              /* the data folder */
    const char *how;         /* why it was chosen (static) */
    char *topo_dir, *profile_dir;   /* NULL when the folder is not there ... */
    char *topo_note, *profile_note; /* ... and why */
    int n, n_errors;
    struct mdl_preset_item *items;
};

int mdl_preset_catalog_new(struct mdl_preset_catalog **out);
void mdl_preset_catalog_free(struct mdl_preset_catalog *c);

#endif
