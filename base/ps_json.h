/*
 * ps_json — jansson glue: tells an allocation failure inside jansson from
 * bad input. jansson reports a failed malloc in its lexer as a syntax error
 * ("string or '}' expected") and json_pack returns NULL for either, so the
 * loaders and writers route jansson's allocations through a counter and ask
 * afterwards.
 *
 *   ps_json_begin();           installs the hooks once, clears this
 *   ... json_loadb, json_pack   thread's failure flag
 *   if (ps_json_oom()) ...     1 if an allocation failed since then
 *
 * The flag is thread-local (sweep workers parse in parallel). Cost: one
 * branch per jansson allocation.
 */
#ifndef PS_JSON_H
#define PS_JSON_H

#include <stdio.h>

void ps_json_begin(void);
int ps_json_oom(void);
/* jansson's syntax error (line, column, text) for the document `name` of len
 * bytes (after any byte-order mark) as PS_EPARSE: "name:line:col: text", or
 * for a document of no bytes "the file is empty", where jansson said line 1,
 * column 0 (helper-106, helper-126), and of blanks alone "the file holds
 * only blanks" (it said line 2, column 0 after a newline). */
int ps_json_parse_error(const char *name, size_t len, int line, int col, const char *text);

/* The one way pipesim writes JSON for people and tools: numbers that are
 * whole (|x| < 2^53) become integers (batch 128, not 128.0), every other
 * real is printed to 15 significant digits (67.309252046, not
 * 67.309252045999997: what a double holds of a measured or simulated
 * figure), then json_dumpf(root, f, flags). Modifies root in place.
 * Returns json_dumpf's result (0 or -1). Cost: O(values). */
struct json_t;
int ps_json_dumpf(struct json_t *root, FILE *f, unsigned long flags);
#define PS_JSON_REAL_DIGITS 15
/* A printer's last step: root written by ps_json_dumpf (indented, keys in
 * order) and a newline, then freed. PS_ENOMEM (with its message) when bad
 * is set or jansson failed an allocation building or writing root, PS_EIO
 * on a write error, else 0. */
int ps_json_print(struct json_t *root, FILE *f, int bad);
/* s as a JSON string, NULL as null; NULL only when out of memory (for
 * json_pack's "o", which then fails too). jansson takes UTF-8 only, and a
 * file name, a name stored in a database, or a loader's message quoting a
 * file may hold other bytes: those become '?' (json_pack "s" failed on
 * them, which read as out of memory). Cost: O(length). */
struct json_t *ps_json_text(const char *s);

#endif
