/*
 * mdl_unet — torchgpipe's simplified U-Net (B, C) as a per-layer profile,
 * one layer per module in the order its flattened nn.Sequential has them
 * (kakaobrain/torchgpipe benchmarks/models/unet/__init__.py @ a4710261),
 * so torchgpipe's balances index the same layers.
 * Spec: unet:convs=B,channels=C[,depth=5][,image=192][,in=3][,out=1]
 *       [,act_bytes=4]; the speed benchmark's model is unet:convs=5,
 *       channels=64, the memory benchmark's (B, C) its rows.
 *
 * The net: depth encoders, each a cell, a Stash of its output (the long
 * skip) and a 2 x 2 max pool; a bottleneck cell; depth decoders, each a
 * nearest 2x upsample, a PopCat (the skip concatenated after the upsampled
 * input) and a cell; a 1 x 1 segment convolution. A cell is B blocks of
 * conv 3 x 3 (padding 1, no bias), Dropout2d (p = 0.1), InstanceNorm2d (no
 * affine parameters) and LeakyReLU: 4 layers each. Channels: encoder i
 * from in (i = 0) or C 2^(i-1) to C 2^i; the bottleneck from C 2^(depth-1)
 * through C 2^depth back to C 2^(depth-1); decoder i from C 2^(i+1) (its
 * upsampled input and its skip) to C 2^(i-1) (C/2 at i = 0, rounded down
 * as Python's int()); the segment from that to out. Layers: 44 B + 21 at
 * depth 5 (241 for B = 5). Parameters: the convolutions' weights (the
 * memory benchmark's 362.2M, 2.21B, 4.99B, 7.80B and 15.82B at (6, 72),
 * (11, 128), (24, 128), (24, 160), (48, 160)).
 *
 * Counting per sample (FP32 by default), as mdl_resnet.h: a convolution is
 * an implicit GEMM reading its input (the first one has no input
 * gradient: the image); InstanceNorm as batch norm (4 FLOPs per element,
 * 3 tensors forward, 5 backward); LeakyReLU 1 FLOP, 2 and 3 tensors;
 * Dropout2d a multiply by its per-channel mask (2 and 2 tensors); the max
 * pool as AmoebaNet's (4 per output, its input and output forward, output
 * and two inputs backward); the upsample reads its input and writes 4
 * times it (backward: the reverse); the concatenation a copy both ways
 * (2 x its output); the encoder output's gradient, which the pool and the
 * skip both give back, one add (mdl_genwork_grad_sum, in the Stash layer).
 * stash_bytes, as PyTorch's autograd keeps them (tools/autograd/
 * derivatives.yaml): a convolution's input, InstanceNorm's input (its
 * per-instance mean and inverse deviation left out), LeakyReLU's input
 * (leaky_relu_backward reads self), Dropout2d's mask (C elements per
 * sample), the max pool's input and int64 indices (8 bytes per output
 * element whatever act_bytes); Stash, the upsample and PopCat keep nothing
 * (the skip is the max pool's input, kept there). No two modules keep the
 * same tensor.
 * out_bytes: the module's output plus every skip in flight after it: a
 * cut between a Stash and its PopCat carries that skip too, relayed from
 * stage to stage (as torchgpipe's own "tuplify_skips" variant and a GPipe
 * without skip support pass it); right after a Stash its output and its
 * skip are two tensors. torchgpipe's portals copy a skip straight from the
 * stashing partition to the popping one, which pipesim does not model:
 * for more than one stage this is a relayed-skip estimate. The skips in
 * flight are each layer's carry_bytes (models/mdl_profile.h), which the
 * split-backward schedules' W buffer leaves out.
 *
 * Ownership: *out from mdl_profile_free. Cost: O(depth x B).
 */
#ifndef MDL_UNET_H
#define MDL_UNET_H

#include "models/mdl_profile.h"

/* 1: a unet: spec (*out set), 0: not ours, < 0: a bad spec. */
int mdl_unet_from_spec(const char *spec, struct mdl_profile **out);

#endif
