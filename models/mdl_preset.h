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
 * mdl_preset_list(f): `pipesim presets`: the data folder, then one line per
 * bundled topology (devices with their peak and memory, links, the first
 * sentence of the file's own description), per bundled profile (layers,
 * parameters, the generator that wrote it) and per model generator (an
 * example spec, built to count its layers and parameters). Everything is
 * read from the files; a file that does not load is an error naming it.
 * Cost: loads every bundled file once.
 */
#ifndef MDL_PRESET_H
#define MDL_PRESET_H

#include <stddef.h>
#include <stdio.h>

enum mdl_preset_kind { MDL_PRESET_TOPOLOGY, MDL_PRESET_PROFILE };

int mdl_preset_path(enum mdl_preset_kind kind, const char *arg, char *out, size_t n);
int mdl_preset_hint(enum mdl_preset_kind kind, const char *arg, int rc);
int mdl_preset_list(FILE *f);

#endif
