#include "models/mdl_paper.h"
#include "models/mdl_amoeba.h"
#include "models/mdl_transformer.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"

#include <stdlib.h>
#include <string.h>

/* One spec key: an int field (ival), a double field (dval) or a choice of
 * names (eval: the index in names, NULL-terminated). */
struct key {
    const char *name;
    int *ival;
    double *dval;
    int seen;
    int *eval;
    const char *const *names;
    long lo, hi; /* an integer key's range, the generator's own */
};

static const char *const keep_names[] = { "unfused", "fused", NULL };
static const char *const pool3_names[] = { "max", "avg", NULL };

/* Parses "k=v,k=v" (NUL-terminated, modified in place) into keys. */
static int parse_keys(const char *spec, char *s, struct key *keys, int n)
{
    while (s && *s) {
        char *comma = strchr(s, ',');
        if (comma)
            *comma = 0;
        char *eq = strchr(s, '=');
        if (!eq || eq == s)
            return ps_error(PS_EUSAGE, "model spec '%s': '%s' is not key=value", spec, s);
        *eq = 0;
        struct key *k = NULL;
        for (int i = 0; i < n; i++)
            if (!strcmp(keys[i].name, s))
                k = &keys[i];
        if (!k) {
            char known[160] = "";
            struct ps_suggest sg;
            ps_suggest_init(&sg, s);
            for (int i = 0; i < n; i++) {
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                         i ? ", " : "", keys[i].name);
                ps_suggest_add(&sg, keys[i].name);
            }
            return ps_error(PS_EUSAGE, "model spec '%s': unknown key '%s'%s (known: %s)", spec,
                             s, ps_suggest_hint(&sg), known);
        }
        if (k->seen++)
            return ps_error(PS_EUSAGE, "model spec '%s': key '%s' given twice", spec, s);
        char what[200];
        snprintf(what, sizeof what, "model spec '%s': key '%s'", spec, s);
        int rc;
        if (k->eval) {
            int found = -1;
            struct ps_suggest sg;
            ps_suggest_init(&sg, eq + 1);
            for (int i = 0; k->names[i]; i++) {
                if (!strcmp(k->names[i], eq + 1))
                    found = i;
                ps_suggest_add(&sg, k->names[i]);
            }
            if (found < 0)
                return ps_error(PS_EUSAGE, "%s: '%s' is not one of %s, %s%s", what, eq + 1,
                                 k->names[0], k->names[1], ps_suggest_hint(&sg));
            *k->eval = found;
        } else if (k->ival) {
            long v;
            if ((rc = ps_parse_long(eq + 1, what, k->lo, k->hi, &v)) < 0)
                return rc;
            *k->ival = (int)v;
        } else if ((rc = ps_parse_double(eq + 1, what, k->dval)) < 0) {
            return rc;
        }
        if (!comma)
            break;
        s = comma + 1;
        if (!*s)
            return ps_error(PS_EUSAGE, "model spec '%s': trailing comma", spec);
    }
    return 0;
}

/* Splits "prefix[:rest]"; returns the rest (maybe "") or NULL if not prefix. */
static const char *after_prefix(const char *spec, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(spec, prefix, n))
        return NULL;
    if (spec[n] == 0)
        return spec + n;
    return spec[n] == ':' ? spec + n + 1 : NULL;
}

int mdl_paper_from_spec(const char *spec, struct mdl_profile **out)
{
    const char *ra = after_prefix(spec, "amoebanet");
    const char *rt = ra ? NULL : after_prefix(spec, "transformer");
    if (!ra && !rt)
        return 0;
    char *copy = strdup(ra ? ra : rt);
    if (!copy)
        return ps_error(PS_ENOMEM, "out of memory");
    int rc;
    if (ra) {
        struct mdl_amoeba_cfg c;
        mdl_amoeba_defaults(&c);
        struct key keys[] = {
            { "L", &c.L, NULL, 0, NULL, NULL, MDL_AMOEBA_L_MIN, MDL_AMOEBA_L_MAX },
            { "D", &c.D, NULL, 0, NULL, NULL, MDL_AMOEBA_D_MIN, MDL_AMOEBA_D_MAX },
            { "classes", &c.classes, NULL, 0, NULL, NULL, 1, MDL_AMOEBA_CLASSES_MAX },
            { "image", &c.image, NULL, 0, NULL, NULL, MDL_AMOEBA_IMAGE_MIN, MDL_AMOEBA_IMAGE_MAX },
            { "act_bytes", NULL, &c.act_bytes, 0, NULL, NULL, 0, 0 },
            { "keep", NULL, NULL, 0, &c.fused, keep_names, 0, 0 },
            { "pool3", NULL, NULL, 0, &c.pool3_avg, pool3_names, 0, 0 },
        };
        rc = parse_keys(spec, copy, keys, (int)(sizeof keys / sizeof keys[0]));
        if (rc == 0)
            rc = mdl_amoeba_profile(&c, out);
    } else {
        struct mdl_transformer_cfg c;
        mdl_transformer_defaults(&c);
        struct key keys[] = {
            { "L", &c.L, NULL, 0, NULL, NULL, 1, MDL_TRANSFORMER_L_MAX },
            { "d_model", &c.d_model, NULL, 0, NULL, NULL, 1, MDL_TRANSFORMER_D_MODEL_MAX },
            { "ff", &c.ff, NULL, 0, NULL, NULL, 1, MDL_TRANSFORMER_FF_MAX },
            { "heads", &c.heads, NULL, 0, NULL, NULL, 1, MDL_TRANSFORMER_HEADS_MAX },
            { "vocab", &c.vocab, NULL, 0, NULL, NULL, 1, MDL_TRANSFORMER_VOCAB_MAX },
            { "seq", &c.seq, NULL, 0, NULL, NULL, 1, MDL_TRANSFORMER_SEQ_MAX },
            { "act_bytes", NULL, &c.act_bytes, 0, NULL, NULL, 0, 0 },
            { "keep", NULL, NULL, 0, &c.fused, keep_names, 0, 0 },
        };
        rc = parse_keys(spec, copy, keys, (int)(sizeof keys / sizeof keys[0]));
        if (rc == 0)
            rc = mdl_transformer_profile(&c, out);
    }
    free(copy);
    return rc < 0 ? rc : 1;
}
