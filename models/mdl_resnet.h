/*
 * mdl_resnet — ResNet-50/101/152 (He et al. 2016, torchvision's v1.5:
 * stride on the 3x3 convolution) as a per-layer profile with one layer per
 * module, in the order torchgpipe's benchmark model flattens it
 * (kakaobrain/torchgpipe benchmarks/models/resnet: conv1, bn1, relu,
 * maxpool; per bottleneck identity, conv1, bn1, relu1, conv2, bn2, relu2,
 * conv3, bn3, residual (with the downsample conv + BN), relu3; avgpool,
 * flat, fc), so torchgpipe's balances index the same layers.
 * Spec: resnet:depth=50|101|152[,classes=1000][,image=224][,act_bytes=4].
 *
 * Counting per sample (FP32 by default): conv 2 FLOPs per multiply-add, an
 * implicit GEMM (ROWS = output H*W, K = Cin*kh*kw, N = Cout); BN 4, ReLU 1,
 * add 1 per element; 3x3 max pool 9 per output; average pool 1 per input;
 * fc 2 per multiply-add + bias. Backward by the rules of models/mdl_genwork.h:
 * a product's input and weight gradients (2 x its forward; the first conv
 * has no image gradient, its weight gradient only), each vector op's own
 * backward count (a residual add's backward is free: its module's backward
 * is the sum of the block input's two gradients, so a plain block's
 * residual costs 1 x its forward). params: conv weights (no
 * bias), BN scale and shift, fc weight and bias: depth 101 gives
 * torchvision's 44,549,160. out_bytes: the module's output plus, inside a
 * bottleneck, the skip tensor torchgpipe carries to the residual.
 * stash_bytes: per module, what PyTorch's autograd keeps for it (tools/
 * autograd/derivatives.yaml): a conv's and a BN's input, a ReLU's output,
 * the max pool's input and int64 indices (8 bytes per output element,
 * whatever act_bytes), the average pool's input, the residual's downsample
 * input and BN input, the fc input. A tensor a module and the one before
 * it both keep (a ReLU's output that the next conv or pool keeps as its
 * input) is its stash_shared_bytes, which a stage counts once
 * (models/mdl_profile.h). A block's input, which the previous block's
 * relu3 and this block's conv1 keep with the identity module between
 * them, is given to the identity as its stash, shared with relu3 and with
 * conv1, so a stage counts it once whichever of the three it starts at
 * (a stage of the identity alone counts it without needing it). Still
 * counted twice inside a stage: the block input the downsample keeps
 * (first block of each stack, 4 per net).
 *
 * Ownership: *out from mdl_profile_free. Cost: O(depth).
 */
#ifndef MDL_RESNET_H
#define MDL_RESNET_H

#include "models/mdl_profile.h"

/* 1: a resnet: spec (*out set), 0: not ours, < 0: a bad spec. */
int mdl_resnet_from_spec(const char *spec, struct mdl_profile **out);

#endif
