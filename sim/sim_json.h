/*
 * sim_json — jansson glue: tells an allocation failure inside jansson from
 * bad input. jansson reports a failed malloc in its lexer as a syntax error
 * ("string or '}' expected") and json_pack returns NULL for either, so the
 * loaders and writers route jansson's allocations through a counter and ask
 * afterwards.
 *
 *   sim_json_begin();           installs the hooks once, clears this
 *   ... json_loadb, json_pack   thread's failure flag
 *   if (sim_json_oom()) ...     1 if an allocation failed since then
 *
 * The flag is thread-local (sweep workers parse in parallel). Cost: one
 * branch per jansson allocation.
 */
#ifndef SIM_JSON_H
#define SIM_JSON_H

void sim_json_begin(void);
int sim_json_oom(void);

#endif
