#include "models/mdl_transformer.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <string.h>

#define LN_FLOPS 8.0      /* mean, variance, normalize, scale and shift */
#define SOFTMAX_FLOPS 5.0 /* max, subtract, exp, sum, divide */

void mdl_transformer_defaults(struct mdl_transformer_cfg *c)
{
    c->L = 48;
    c->d_model = 2048;
    c->ff = 8192;
    c->heads = 32;
    c->vocab = 32000;
    c->seq = 1024;
    c->act_bytes = 4;
}

static int check_cfg(const struct mdl_transformer_cfg *c)
{
    static const struct { const char *name; long lo, hi; } lim[] = {
        { "L", 1, 100000 },     { "d_model", 1, 1 << 20 }, { "ff", 1, 1 << 22 },
        { "heads", 1, 1 << 16 }, { "vocab", 1, 1 << 24 },   { "seq", 1, 1 << 22 },
    };
    const int v[] = { c->L, c->d_model, c->ff, c->heads, c->vocab, c->seq };
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
        if (v[i] < lim[i].lo || v[i] > lim[i].hi)
            return ps_error(PS_EINVAL, "transformer: field '%s' must be in [%ld, %ld], "
                             "got %d", lim[i].name, lim[i].lo, lim[i].hi, v[i]);
    if (c->d_model % c->heads)
        return ps_error(PS_EINVAL, "transformer: field 'heads' (%d) must divide d_model "
                         "(%d)", c->heads, c->d_model);
    if (!(c->act_bytes > 0 && c->act_bytes <= 16))
        return ps_error(PS_EINVAL, "transformer: field 'act_bytes' must be in (0, 16], "
                         "got %g", c->act_bytes);
    return 0;
}

static int add(struct mdl_profile *p, const char *name, const char *kind, double fwd,
               double bwd, double params, double out_bytes, double stash_bytes)
{
    struct mdl_layer l;
    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, "%s", name);
    snprintf(l.kind, sizeof l.kind, "%s", kind);
    l.fwd = fwd;
    l.bwd = bwd;
    l.params = params;
    l.out_bytes = out_bytes;
    l.stash_bytes = stash_bytes;
    return mdl_profile_add(p, &l);
}

int mdl_transformer_profile(const struct mdl_transformer_cfg *c, struct mdl_profile **out)
{
    *out = NULL;
    int rc = check_cfg(c);
    if (rc < 0)
        return rc;
    char origin[160];
    snprintf(origin, sizeof origin,
             "transformer:L=%d,d_model=%d,ff=%d,heads=%d,vocab=%d,seq=%d,act_bytes=%g", c->L,
             c->d_model, c->ff, c->heads, c->vocab, c->seq, c->act_bytes);
    struct mdl_profile *p = mdl_profile_new(origin, 0);
    if (!p)
        return ps_error(PS_ENOMEM, "transformer: out of memory");
    const double S = c->seq, d = c->d_model, ff = c->ff, h = c->heads, V = c->vocab;
    const double ab = c->act_bytes, hidden = S * d * ab;

    /* Embedding: lookup (no FLOPs), scale by sqrt(d), add the position. */
    double efwd = 2 * S * d;
    if ((rc = add(p, "embed", "embedding", efwd, efwd, V * d, hidden, S * 4.0)) < 0)
        goto err_free_profile;

    double params = 4 * (d * d + d)  /* Q, K, V, output projections + biases */
                    + 2 * d * ff + ff + d /* two feed-forward matmuls + biases */
                    + 2 * 2 * d;     /* two layer norms: scale and shift */
    double matmul = 2 * S * d * 3 * d /* Q, K, V */
                    + 2 * S * S * d   /* scores, all heads */
                    + 2 * S * S * d   /* probabilities x V */
                    + 2 * S * d * d   /* output projection */
                    + 2 * S * d * ff * 2; /* feed-forward */
    double elem = 2 * LN_FLOPS * S * d      /* two layer norms */
                  + S * (3 * d + d + ff + d) /* biases */
                  + h * S * S                /* score scaling */
                  + SOFTMAX_FLOPS * h * S * S
                  + S * ff                   /* ReLU */
                  + 2 * S * d;               /* two residual adds */
    double stash = 2 * S * d    /* LN1 input and output */
                   + 3 * S * d  /* Q, K, V */
                   + h * S * S  /* attention probabilities */
                   + S * d      /* attention context (output-projection input) */
                   + 2 * S * d  /* LN2 input and output */
                   + S * ff;    /* ReLU output (second matmul input) */
    char name[MDL_NAME_MAX];
    for (int i = 0; i < c->L; i++) {
        snprintf(name, sizeof name, "layer%d", i + 1);
        double f = matmul + elem;
        if ((rc = add(p, name, "transformer", f, 2 * f, params, hidden, stash * ab)) < 0)
            goto err_free_profile;
    }

    /* Final layer norm, logits with bias, softmax cross-entropy. */
    double sfwd = LN_FLOPS * S * d + 2 * S * d * V + S * V + SOFTMAX_FLOPS * S * V;
    double sstash = (2 * S * d + S * V) * ab;
    if ((rc = add(p, "softmax", "softmax", sfwd, 2 * sfwd, d * V + V + 2 * d, S * ab,
                  sstash)) < 0)
        goto err_free_profile;
    *out = p;
    return 0;

err_free_profile:
    mdl_profile_free(p);
    return rc;
}
