/*
 * mdl_paper — name specs for the GPipe paper's generated models, so a user
 * can say `amoebanet:L=18,D=208` or `transformer:L=24` wherever a profile is
 * expected.
 *
 *   amoebanet[:key=value,...]    keys L (18), D (256), classes (1000),
 *                                image (224), act_bytes (4)
 *   transformer[:key=value,...]  keys L (48), d_model (2048), ff (8192),
 *                                heads (32), vocab (32000), seq (1024),
 *                                act_bytes (4)
 * Defaults in parentheses are the models of the paper's Table 2. Keys are
 * case-sensitive, each at most once; unknown keys and bad numbers are errors
 * naming the key. See mdl_amoeba.h / mdl_transformer.h for what is counted.
 *
 * Ownership: *out is allocated on success (mdl_profile_free).
 * Cost: O(length of the spec + layers).
 */
#ifndef MDL_PAPER_H
#define MDL_PAPER_H

#include "models/mdl_profile.h"

/* 1: the prefix is ours and *out holds the profile; 0: not an amoebanet: or
 * transformer: spec (*out untouched); < 0: our prefix with a bad spec
 * (PS_EUSAGE for syntax and unknown keys, PS_EINVAL for values). */
int mdl_paper_from_spec(const char *spec, struct mdl_profile **out);

#endif
