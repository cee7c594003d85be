/*
 * mdl_topology_int — checks shared by the topology loader's files.
 */
#ifndef MDL_TOPOLOGY_INT_H
#define MDL_TOPOLOGY_INT_H

#include "models/mdl_topology.h"

#include <jansson.h>

/* Rejects keys of object o not in the NULL-terminated list: "path: where:
 * unknown field 'k'" (PS_EPARSE). Shared by the topology and device
 * loaders (mdl_device.c). */
int mdl_json_check_keys(const char *path, const char *where, json_t *o,
                        const char *const *keys);

/* Rejects a link of two endpoints whose devices an earlier link already
 * joins (either direction; the first listed link would carry all their
 * traffic) and a repeated link name, naming "links[i].endpoints" or
 * "links[i].name" after path. The earliest offending link in file order is
 * reported. O(L log L + endpoints of the buses) for L links. */
int mdl_topology_check_links(const char *path, const struct mdl_topology *t);

#endif
