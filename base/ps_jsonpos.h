/*
 * ps_jsonpos — line and column of a value inside JSON text, so that errors
 * found after parsing (jansson keeps no positions) can still name
 * file:line:column beside the JSON path.
 *
 * Paths are what the loaders print: `devices[2].efficiency.max`,
 * `links[0].endpoints[1]`, `traceEvents[17]`; a component that is absent
 * resolves to its innermost enclosing container, so a missing field points
 * at the object that lacks it. The text must be valid JSON (it was parsed).
 * No allocation. Cost: O(bytes before the value).
 */
#ifndef PS_JSONPOS_H
#define PS_JSONPOS_H

#include <stddef.h>

/* Position (1-based) of path in text; key, if not NULL, is one more object
 * member below path (a raw key that may contain '.' or '['). Returns 0 when
 * the whole path was found, 1 when it stopped at an enclosing container,
 * -1 if path is malformed. */
int ps_json_locate(const char *text, size_t len, const char *path, const char *key,
                    int *line, int *col);

/* Rewrites the current error message "<name>: <path>: rest" (path after an
 * optional alias prefix such as "topology") to "<name>:<line>:<col>: <path>:
 * rest" and returns rc. The alias names the root: it is dropped before a '.'
 * or '[' ("traceEvents[3].dur" locates "[3].dur" in a bare event array).
 * Messages in any other shape, and out-of-memory errors, are left as they
 * are. */
int ps_json_error_at(int rc, const char *name, const char *text, size_t len,
                      const char *alias);

#endif
