/*
 * mdl_gpt — a GPT-style decoder (GPT-2 / Megatron-LM) as a per-layer
 * profile: spec gpt:layers=L,hidden=h,heads=a,seq=s,vocab=V[,ffn=F]
 * [,act_bytes=B] with Megatron-LM's names (ffn defaults to 4h, act_bytes to
 * 2: 16-bit activations as in Megatron).
 *
 * Architecture (Radford et al. 2019, GPT-2; Shoeybi et al. 2019,
 * Megatron-LM): learned token and position embeddings, L pre-LN layers
 * x + Attn(LN(x)), x + MLP(LN(x)) with biases everywhere and a GELU MLP of
 * F units, a final layer norm, and logits through the token embedding
 * (tied, as GPT-2 and Megatron do: no separate output matrix). Parameters:
 * 12 L h^2 + 13 L h + (V + s) h + 2 h, which is Narayanan et al. 2021
 * (arXiv 2104.04473) eq. 12 L h^2 (1 + 13/(12h) + (V+s)/(12Lh)) plus the
 * final layer norm the formula leaves out; GPT-2 small (L 12, h 768,
 * V 50257, s 1024) is then 124,439,808, the count of the released weights.
 *
 * Layers: "embed", "layer1".."layerL", "head" (final LN, tied logits,
 * softmax cross-entropy). Counting per sample of s tokens as in
 * mdl_transformer.h (matmul 2 FLOPs per multiply-add, dense s^2 attention,
 * LN 8, softmax 5, GELU 8 per element, bias, add and scaling 1) and
 * mdl_genwork.h for the work by op class; backward FLOPs are the products'
 * input and weight gradients (2 x their forward) plus each vector op's own
 * backward count (mdl_genwork.h: a residual add's none, a gradient sum's
 * one add per element), so close to but not exactly 2 x forward (17408 of
 * 2 x 8736 for gpt:layers=1,hidden=8,heads=2,seq=4,vocab=10); the
 * embedding's is 1 x (gradient scatter-add). The head's logits product's weight
 * gradient adds into the embedding table. stash_bytes per layer are
 * Korthikanti et al. 2022 (arXiv 2205.05198, sec. 4.1) without dropout,
 * which is not modelled: LN inputs 2sh, QKV input sh, Q, K, V 3sh, softmax
 * output a s^2, projection input sh, MLP input sh, GELU input and output
 * 2sF: with F = 4h, 16 sh + a s^2 elements = 32 sbh + 2 a s^2 b bytes at
 * 16 bits (their 34 sbh + 5 a s^2 b less the dropout masks and output).
 *
 * Ownership: mdl_gpt_profile allocates *out (mdl_profile_free). Cost: O(L).
 */
#ifndef MDL_GPT_H
#define MDL_GPT_H

#include "models/mdl_profile.h"

struct mdl_gpt_cfg {
    int layers, hidden, heads, seq, vocab, ffn; /* ffn 0 = 4 x hidden */
    double act_bytes;
};

/* PS_EINVAL naming the field on a bad configuration. */
int mdl_gpt_profile(const struct mdl_gpt_cfg *c, struct mdl_profile **out);
/* 1: a gpt: spec (*out set), 0: not ours, < 0: a bad gpt: spec. */
int mdl_gpt_from_spec(const char *spec, struct mdl_profile **out);

#endif
