/*
 * mdl_transformer — the Transformer-L generator of GPipe's Table 1 (d_model
 * 2048, feed-forward 8192, 32 heads, vocabulary 32k, sequence 1024): a
 * per-layer profile computed from the architecture.
 *
 * What the paper's counts include: 282.2M at L = 3 and 785.8M at L = 13 give
 * 50.36M per layer = one self-attention block (Q, K, V, output projections
 * with biases: 4(d^2 + d) = 16.79M) + one ReLU feed-forward block (2 d ff +
 * ff + d = 33.56M) + two layer norms (4d). An encoder-decoder layer with
 * cross-attention would be 67.1M, so the L layers are identical
 * self-attention layers. The remaining 131.1M are two separate (unshared)
 * V x d matrices, input embedding and output softmax (2 x 65.5M with
 * V = 32000; V = 32768 would give 134.2M and miss L = 13 by 0.4 %), plus the
 * softmax bias and a final layer norm; positions are sinusoidal (a learned
 * 1024 x 2048 table would add 2.1M). With these, the counts land within
 * 0.35 % of every Table 1 value (282.18M, 785.77M, 5.318B, 21.03B, 83.88B;
 * the paper rounds to 2-4 digits).
 *
 * Layers: "embed" (lookup, scale by sqrt(d), add positions), "layer1" ..
 * "layerL" (pre-norm: x + Attn(LN(x)), then x + FFN(LN(x))), "softmax"
 * (final LN, logits, softmax cross-entropy). Counting, per sample of `seq`
 * tokens: matmuls 2 FLOPs per multiply-add, attention dense over all seq^2
 * pairs (masking saves no FLOPs in a dense kernel); layer norm 8 and softmax
 * 5 FLOPs per element, bias, ReLU, residual add, score scaling 1. Dropout is
 * not modelled. Backward = 2 x forward, except the embedding (no data
 * gradient: scaled-gradient + scatter-add, 2 per element = 1 x forward).
 * out_bytes: the seq x d hidden state (softmax layer: one loss per token).
 * stash_bytes: LN inputs and outputs, Q, K, V, the attention probabilities
 * (heads x seq^2), the attention context, the ReLU output, the softmax
 * probabilities (seq x V); token ids as 4-byte integers. With fused
 * (keep=fused: what a fusing compiler such as XLA keeps) a layer norm keeps
 * its input only (backward recomputes its output from the input and the
 * statistics) and the feed-forward keeps the ReLU's input in place of its
 * output (the same size): 2 x seq x d fewer elements per layer, seq x d
 * fewer in the softmax layer; and its biases, the attention scaling and
 * the ReLU run inside the matmuls they follow (mdl_genwork_vec_fused: no
 * pass forward; backward the biases' reductions and the ReLU's input read).
 *
 * Ownership: mdl_transformer_profile allocates *out (mdl_profile_free).
 * Cost: O(L).
 */
#ifndef MDL_TRANSFORMER_H
#define MDL_TRANSFORMER_H

#include "models/mdl_profile.h"

struct mdl_transformer_cfg {
    int L;            /* transformer layers */
    int d_model, ff, heads, vocab, seq;
    double act_bytes; /* bytes per activation element (4 = FP32) */
    int fused;        /* 1: keep=fused (above) */
};

/* The ranges mdl_transformer_profile accepts, each from 1 (a spec's parser
 * states them too). */
enum {
    MDL_TRANSFORMER_L_MAX = 100000, MDL_TRANSFORMER_D_MODEL_MAX = 1 << 20,
    MDL_TRANSFORMER_FF_MAX = 1 << 22, MDL_TRANSFORMER_HEADS_MAX = 1 << 16,
    MDL_TRANSFORMER_VOCAB_MAX = 1 << 24, MDL_TRANSFORMER_SEQ_MAX = 1 << 22
};

/* L = 48 (GPipe Table 2's model), 2048, 8192, 32 heads, 32000, 1024, FP32, unfused. */
void mdl_transformer_defaults(struct mdl_transformer_cfg *c);
/* PS_EINVAL naming the field on a bad configuration. */
int mdl_transformer_profile(const struct mdl_transformer_cfg *c,
                            struct mdl_profile **out);

#endif
