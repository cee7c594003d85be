#include "models/mdl_gpt.h"
#include "models/mdl_gen.h"
#include "models/mdl_genwork.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <string.h>

#define LN_FLOPS 8.0
#define SOFTMAX_FLOPS 5.0
#define GELU_FLOPS 8.0 /* tanh form: cube, 2 multiply-adds, tanh, 1 +, 2 x */

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

static void ln(struct mdl_genwork *w, double E, double ab)
{
    mdl_genwork_vec(w, LN_FLOPS * E, 2 * LN_FLOPS * E, 3 * E * ab, 5 * E * ab, 1);
}

/* A bias (or other unary elementwise op of `fl` FLOPs per element). */
static void bias(struct mdl_genwork *w, double E, double ab)
{
    mdl_genwork_vec(w, E, 2 * E, 2 * E * ab, E * ab, 1);
}

int mdl_gpt_profile(const struct mdl_gpt_cfg *c, struct mdl_profile **out)
{
    *out = NULL;
    int ffn = c->ffn ? c->ffn : 4 * c->hidden;
    if (c->hidden % c->heads)
        return ps_error(PS_EINVAL, "gpt: field 'heads' (%d) must divide hidden (%d)",
                        c->heads, c->hidden);
    if (!(c->act_bytes > 0 && c->act_bytes <= 16))
        return ps_error(PS_EINVAL, "gpt: field 'act_bytes' must be in (0, 16], got %g",
                        c->act_bytes);
    char origin[160];
    snprintf(origin, sizeof origin, "gpt:layers=%d,hidden=%d,heads=%d,seq=%d,vocab=%d,ffn=%d,"
             "act_bytes=%g", c->layers, c->hidden, c->heads, c->seq, c->vocab, ffn,
             c->act_bytes);
    struct mdl_profile *p = mdl_profile_new(origin, 0);
    if (!p)
        return ps_error(PS_ENOMEM, "gpt: out of memory");
    const double S = c->seq, h = c->hidden, a = c->heads, V = c->vocab, F = ffn;
    const double ab = c->act_bytes, E = S * h, FF = S * F, A = a * S * S;
    int rc;

    /* Embedding: two lookups and their sum (positions learned). */
    struct mdl_genwork ew;
    mdl_genwork_init(&ew);
    mdl_genwork_vec(&ew, 0, E, 2 * E * ab, 3 * E * ab, 1); /* token gather; scatter-add */
    mdl_genwork_vec(&ew, 0, 0, 2 * E * ab, 2 * E * ab, 1); /* position gather; its grad */
    mdl_genwork_vec(&ew, E, 0, 3 * E * ab, 0, 0);          /* sum */
    if ((rc = add(p, "embed", "embedding", E, E, (V + S) * h, E * ab, S * 4.0, &ew)) < 0)
        goto err_free_profile;

    struct mdl_genwork lw;
    mdl_genwork_init(&lw);
    ln(&lw, E, ab);
    /* Q, K and V: Megatron's one query_key_value projection (its FLOPs as
     * three h x h products), so the layer norm's output has one reader and
     * no gradient sum (mdl_genwork_grad_sum) */
    for (int q = 0; q < 3; q++) {
        mdl_genwork_gemm(&lw, S, h, h, 1, 1, 1);
        bias(&lw, E, ab);
    }
    mdl_genwork_gemm(&lw, S, h / a, S, a, 0, 1);                 /* scores */
    mdl_genwork_vec(&lw, A, 2 * A, 2 * A * ab, 2 * A * ab, 1);   /* scaling */
    mdl_genwork_vec(&lw, SOFTMAX_FLOPS * A, 2 * SOFTMAX_FLOPS * A, 3 * A * ab, 3 * A * ab, 1);
    mdl_genwork_gemm(&lw, S, S, h / a, a, 0, 1);                 /* context */
    mdl_genwork_gemm(&lw, S, h, h, 1, 1, 1);                     /* projection */
    bias(&lw, E, ab);
    mdl_genwork_vec(&lw, E, 0, 3 * E * ab, 0, 0);                /* residual add */
    mdl_genwork_grad_sum(&lw, E, 2, ab, 0); /* its fork: LN and the add (PyTorch's sum) */
    ln(&lw, E, ab);
    mdl_genwork_gemm(&lw, S, h, F, 1, 1, 1);
    bias(&lw, FF, ab);
    mdl_genwork_vec(&lw, GELU_FLOPS * FF, 2 * GELU_FLOPS * FF, 2 * FF * ab, 3 * FF * ab, 1);
    mdl_genwork_gemm(&lw, S, F, h, 1, 1, 1);
    bias(&lw, E, ab);
    mdl_genwork_vec(&lw, E, 0, 3 * E * ab, 0, 0);                /* residual add */
    mdl_genwork_grad_sum(&lw, E, 2, ab, 0); /* its fork: LN and the add (PyTorch's sum) */
    double lf = lw.w.mm_fwd + lw.w.vec_fwd, lb = mdl_genwork_bwd_flops(&lw);
    double lparams = 12 * h * h + 13 * h - 8 * h * h + 2 * h * F + F - 4 * h;
    double lstash = (8 * E + A + 2 * FF) * ab;
    char name[MDL_NAME_MAX];
    for (int i = 0; i < c->layers; i++) {
        snprintf(name, sizeof name, "layer%d", i + 1);
        if ((rc = add(p, name, "transformer", lf, lb, lparams, E * ab, lstash, &lw)) < 0)
            goto err_free_profile;
    }

    struct mdl_genwork hw;
    mdl_genwork_init(&hw);
    ln(&hw, E, ab);
    mdl_genwork_gemm(&hw, S, h, V, 1, 1, 1); /* tied logits */
    mdl_genwork_vec(&hw, SOFTMAX_FLOPS * S * V, 2 * SOFTMAX_FLOPS * S * V, 3 * S * V * ab,
                    3 * S * V * ab, 1);
    double hf = hw.w.mm_fwd + hw.w.vec_fwd;
    if ((rc = add(p, "head", "softmax", hf, 2 * hf, 2 * h, S * ab, (2 * E + S * V) * ab,
                  &hw)) < 0)
        goto err_free_profile;
    *out = p;
    return 0;

err_free_profile:
    mdl_profile_free(p);
    return rc;
}

int mdl_gpt_from_spec(const char *spec, struct mdl_profile **out)
{
    if (strncmp(spec, "gpt:", 4))
        return 0;
    static const char *const keys[] = { "layers", "hidden", "heads", "seq", "vocab", "ffn",
                                        "act_bytes", NULL };
    const char *s = spec + 4;
    long L, h, a, sq, V, F, ab;
    int rc;
    if ((rc = mdl_spec_check(spec, s, keys)) < 0 ||
        (rc = mdl_spec_long(spec, s, "layers", -1, 1, 100000, &L)) < 0 ||
        (rc = mdl_spec_long(spec, s, "hidden", -1, 1, 1 << 20, &h)) < 0 ||
        (rc = mdl_spec_long(spec, s, "heads", -1, 1, 1 << 16, &a)) < 0 ||
        (rc = mdl_spec_long(spec, s, "seq", -1, 1, 1 << 22, &sq)) < 0 ||
        (rc = mdl_spec_long(spec, s, "vocab", -1, 1, 1 << 24, &V)) < 0 ||
        (rc = mdl_spec_long(spec, s, "ffn", 0, 0, 1 << 24, &F)) < 0 ||
        (rc = mdl_spec_long(spec, s, "act_bytes", 2, 1, 16, &ab)) < 0)
        return rc;
    struct mdl_gpt_cfg c = { (int)L, (int)h, (int)a, (int)sq, (int)V, (int)F, (double)ab };
    rc = mdl_gpt_profile(&c, out);
    return rc < 0 ? rc : 1;
}
