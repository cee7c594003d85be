/*
 * mdl_topology_int — what the topology loader's files share: field readers
 * (mdl_topology.c), the devices loader (mdl_topology_devices.c) and the
 * link checks (mdl_topology_check.c).
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

/* Reads a number field: positive = 1 means the value must be > 0, else >= 0. */
int mdl_json_num(const char *path, const char *where, json_t *o, const char *key,
                 int required, double dflt, int positive, double *out);
/* o's "name" into dst: a non-empty string shorter than MDL_NAME_MAX - 8
 * bytes (room for the index `count` appends), else PS_EPARSE. */
int mdl_json_name(const char *path, const char *where, json_t *o, char *dst);

/* The "devices" array into t->devices, each entry's preset merged in and
 * `count` expanded (at most 1048576 devices); *entry_out gets, per device,
 * its index in the array (the caller frees it, on error too, once set).
 * O(devices). */
int mdl_topology_load_devices(const char *path, json_t *arr, struct mdl_topology *t,
                              int **entry_out);

/* Rejects a link of two endpoints whose devices an earlier link already
 * joins (either direction; the first listed link would carry all their
 * traffic) and a repeated link name, naming "links[i].endpoints" or
 * "links[i].name" after path. The earliest offending link in file order is
 * reported. O(L log L + endpoints of the buses) for L links. */
int mdl_topology_check_links(const char *path, const struct mdl_topology *t);

#endif
