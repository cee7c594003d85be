/*
 * ana_presets — `pipesim presets` printed: the catalog of bundled
 * topologies, profiles and generators (models/mdl_preset.h) as a table
 * (one line each, descriptions cut to their first sentence), a CSV (one
 * header, one row per item, a `section` column: topology, profile or
 * generator; descriptions whole) or JSON (the data folder and one array per
 * section; numbers as numbers, counts as integers). The catalog stays the
 * caller's. Cost: O(items).
 */
#ifndef ANA_PRESETS_H
#define ANA_PRESETS_H

#include "analysis/ana_format.h"
#include "models/mdl_preset.h"

#include <stdio.h>

int ana_presets_print(const struct mdl_preset_catalog *c, enum ana_fmt fmt, FILE *f);

#endif
