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

void ps_json_begin(void);
int ps_json_oom(void);

#endif
