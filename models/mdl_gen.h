/*
 * mdl_gen — model generators and the one way the CLI opens a model.
 *
 * mdl_model_open(arg): arg is a profile CSV path, or a generator spec:
 *   mlp:layers=L,width=W[,norm=N]   L dense layers W x W with bias and ReLU
 *                                   (FP32), a layer norm after every N-th
 *                                   dense layer when N > 0
 *   amoebanet:L=18,D=256 and transformer:L=48,... (models/mdl_paper.h)
 * Ownership: *out from mdl_profile_free. Cost: O(layers).
 */
#ifndef MDL_GEN_H
#define MDL_GEN_H

#include "models/mdl_profile.h"

#include <stdio.h>
#include "models/mdl_topology.h"

int mdl_model_open(const char *arg, struct mdl_profile **out);

/* The generator specs, one table for the help text (`pipesim gen --help`,
 * `pipesim predict --help`) and the "did you mean" of an unknown prefix.
 * tests/test_models.c checks that every key listed is accepted and that
 * spelling every default out gives the same model as leaving it out, so the
 * table and the parsers cannot drift apart. */
struct mdl_gen_key {
    const char *name;
    const char *dflt; /* NULL: required */
    const char *doc;
};
struct mdl_generator {
    const char *prefix; /* "mlp", spec "mlp:key=value,..." */
    const char *summary;
    const struct mdl_gen_key *keys; /* ends with a NULL name */
};
extern const struct mdl_generator mdl_generators[]; /* ends with a NULL prefix */
/* Every generator, its keys, defaults and meaning, for a help text. */
void mdl_generators_help(FILE *f);
int mdl_gen_mlp(int layers, int width, int norm_every, struct mdl_profile **out);
/* Writes a topology as JSON (atomic; "-" = stdout). */
int mdl_topology_write(const struct mdl_topology *t, const char *path);
/* The same into an open ps_afile, not committed (one of a set the caller
 * publishes together; it aborts them on an error). */
struct ps_afile;
int mdl_topology_write_af(const struct mdl_topology *t, struct ps_afile *af);

/* "key=value,key=value" helper for generator specs: returns the value of
 * key as a long in [lo, hi] (dflt if absent, or error if dflt < 0). */
int mdl_spec_long(const char *spec, const char *params, const char *key, long dflt,
                  long lo, long hi, long *out);
/* Rejects keys of params not in the NULL-terminated list. */
int mdl_spec_check(const char *spec, const char *params, const char *const *keys);

#endif
