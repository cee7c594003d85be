#include "models/mdl_transformer.h"
#include "models/mdl_genwork.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

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
    c->fused = 0;
}

static int check_cfg(const struct mdl_transformer_cfg *c)
{
    static const struct { const char *name; long lo, hi; } lim[] = {
        { "L", 1, MDL_TRANSFORMER_L_MAX },         { "d_model", 1, MDL_TRANSFORMER_D_MODEL_MAX },
        { "ff", 1, MDL_TRANSFORMER_FF_MAX },       { "heads", 1, MDL_TRANSFORMER_HEADS_MAX },
        { "vocab", 1, MDL_TRANSFORMER_VOCAB_MAX }, { "seq", 1, MDL_TRANSFORMER_SEQ_MAX },
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
                         "got %s", PS_DBL(c->act_bytes));
    if (c->fused != 0 && c->fused != 1)
        return ps_error(PS_EINVAL, "transformer: field 'keep' must be unfused or fused");
    return 0;
}

static int add(struct mdl_profile *p, const char *name, const char *kind, double fwd,
               double bwd, double params, double out_bytes, double stash_bytes,
               struct mdl_genwork *gw)
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
    mdl_genwork_attach(gw, &l);
    return mdl_profile_add(p, &l);
}

/* A bias on a matmul's output, e elements per sample: a read and a write
 * forward and its gradient's reduction (one read of dy) backward, or under
 * keep=fused inside the matmul (mdl_genwork_vec_fused): the reduction only. */
static void bias(struct mdl_genwork *gw, double e, double ab, int fused)
{
    if (fused)
        mdl_genwork_vec_fused(gw, e, 2 * e, e * ab);
    else
        mdl_genwork_vec(gw, e, 2 * e, 2 * e * ab, e * ab, 1);
}

int mdl_transformer_profile(const struct mdl_transformer_cfg *c, struct mdl_profile **out)
{
    *out = NULL;
    int rc = check_cfg(c);
    if (rc < 0)
        return rc;
    char origin[176];
    snprintf(origin, sizeof origin,
             "transformer:L=%d,d_model=%d,ff=%d,heads=%d,vocab=%d,seq=%d,act_bytes=%s%s", c->L,
             c->d_model, c->ff, c->heads, c->vocab, c->seq, PS_DBL(c->act_bytes),
             c->fused ? ",keep=fused" : "");
    struct mdl_profile *p = mdl_profile_new(origin, 0);
    if (!p)
        return ps_error(PS_ENOMEM, "transformer: out of memory");
    const double S = c->seq, d = c->d_model, ff = c->ff, h = c->heads, V = c->vocab;
    const double ab = c->act_bytes, hidden = S * d * ab;

    /* Embedding: lookup (no FLOPs), scale by sqrt(d), add the position. */
    double efwd = 2 * S * d, E = S * d, F = S * ff, A = h * S * S;
    struct mdl_genwork ew;
    mdl_genwork_init(&ew);
    mdl_genwork_vec(&ew, 0, E, 2 * E * ab, 3 * E * ab, 1); /* gather; scatter-add */
    mdl_genwork_vec(&ew, E, E, 2 * E * ab, 2 * E * ab, 1); /* scale by sqrt(d) */
    mdl_genwork_vec(&ew, E, 0, 3 * E * ab, 0, 0);          /* + positions */
    if ((rc = add(p, "embed", "embedding", efwd, efwd, V * d, hidden, S * 4.0, &ew)) < 0)
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
    const double ln = c->fused ? 1 : 2; /* fused: a layer norm keeps its input only */
    double stash = ln * S * d   /* LN1 input and output */
                   + 3 * S * d  /* Q, K, V */
                   + h * S * S  /* attention probabilities */
                   + S * d      /* attention context (output-projection input) */
                   + ln * S * d /* LN2 input and output */
                   + S * ff;    /* ReLU output (second matmul input; fused: its input) */
    /* The same op by op (mdl_genwork.h's rules; bytes: LN reads its input
     * twice and writes once, 5 tensors backward; a bias reads and writes,
     * its gradient is a reduction of dy; ReLU backward reads dy and the
     * output; a residual add's backward is free, and the fork before it,
     * read by the layer norm and the add, sums two gradients; the first
     * layer norm's output, read by the Q, K and V projections, sums three:
     * mdl_genwork_grad_sum). */
    struct mdl_genwork lw;
    mdl_genwork_init(&lw);
    const int fz = c->fused;
    mdl_genwork_vec(&lw, LN_FLOPS * E, 2 * LN_FLOPS * E, 3 * E * ab, 5 * E * ab, 1);
    for (int q = 0; q < 3; q++) { /* Q, K, V projections and biases */
        mdl_genwork_gemm(&lw, S, d, d, 1, 1, 1);
        bias(&lw, E, ab, fz);
    }
    mdl_genwork_grad_sum(&lw, E, 3, ab, c->fused);
    mdl_genwork_gemm(&lw, S, d / h, S, h, 0, 1); /* scores Q K^T per head */
    if (fz) /* the scaling, on the scores product's output (mdl_genwork.h) */
        mdl_genwork_vec_fused(&lw, A, 2 * A, 0);
    else
        mdl_genwork_vec(&lw, A, 2 * A, 2 * A * ab, 2 * A * ab, 1);
    mdl_genwork_vec(&lw, SOFTMAX_FLOPS * A, 2 * SOFTMAX_FLOPS * A, 3 * A * ab, 3 * A * ab, 1);
    mdl_genwork_gemm(&lw, S, S, d / h, h, 0, 1); /* probabilities x V */
    mdl_genwork_gemm(&lw, S, d, d, 1, 1, 1);     /* output projection */
    bias(&lw, E, ab, fz);
    mdl_genwork_vec(&lw, E, 0, 3 * E * ab, 0, 0); /* residual add */
    mdl_genwork_grad_sum(&lw, E, 2, ab, c->fused); /* its fork: LN and the add */
    mdl_genwork_vec(&lw, LN_FLOPS * E, 2 * LN_FLOPS * E, 3 * E * ab, 5 * E * ab, 1);
    mdl_genwork_gemm(&lw, S, d, ff, 1, 1, 1);
    bias(&lw, F, ab, fz);
    if (fz) /* the ReLU on the first matmul's output; backward reads its input */
        mdl_genwork_vec_fused(&lw, F, 2 * F, F * ab);
    else
        mdl_genwork_vec(&lw, F, 2 * F, 2 * F * ab, 3 * F * ab, 1);
    mdl_genwork_gemm(&lw, S, ff, d, 1, 1, 1);
    bias(&lw, E, ab, fz);
    mdl_genwork_vec(&lw, E, 0, 3 * E * ab, 0, 0); /* residual add */
    mdl_genwork_grad_sum(&lw, E, 2, ab, c->fused); /* its fork: LN and the add */
    char name[MDL_NAME_MAX];
    double f = matmul + elem, b = mdl_genwork_bwd_flops(&lw);
    for (int i = 0; i < c->L; i++) {
        snprintf(name, sizeof name, "layer%d", i + 1);
        if ((rc = add(p, name, "transformer", f, b, params, hidden, stash * ab, &lw)) < 0)
            goto err_free_profile;
    }

    /* Final layer norm, logits with bias, softmax cross-entropy. */
    double sfwd = LN_FLOPS * S * d + 2 * S * d * V + S * V + SOFTMAX_FLOPS * S * V;
    double sstash = (ln * S * d + S * V) * ab, SV = S * V;
    struct mdl_genwork sw;
    mdl_genwork_init(&sw);
    mdl_genwork_vec(&sw, LN_FLOPS * E, 2 * LN_FLOPS * E, 3 * E * ab, 5 * E * ab, 1);
    mdl_genwork_gemm(&sw, S, d, V, 1, 1, 1);
    bias(&sw, SV, ab, c->fused); /* the logits' */
    mdl_genwork_vec(&sw, SOFTMAX_FLOPS * SV, 2 * SOFTMAX_FLOPS * SV, 3 * SV * ab,
                    3 * SV * ab, 1); /* softmax cross-entropy */
    if ((rc = add(p, "softmax", "softmax", sfwd, 2 * sfwd, d * V + V + 2 * d, S * ab,
                  sstash, &sw)) < 0)
        goto err_free_profile;
    *out = p;
    return 0;

err_free_profile:
    mdl_profile_free(p);
    return rc;
}
