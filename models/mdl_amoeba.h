/*
 * mdl_amoeba — the AmoebaNet-D(L, D) generator: a per-layer profile computed
 * from the architecture (no measurements, nothing fitted).
 *
 * Architecture (Real et al., arXiv 1802.01548, AmoebaNet-D genotype as in
 * tensorflow/tpu models/official/amoeba_net and torchgpipe's benchmark
 * model, whose parameter counts match GPipe Table 1):
 *   stem1      ReLU, 3x3/2 conv 3 -> D/4, BN                    (112 x 112)
 *   stem2,3    two reduction cells, D/2 and D filters            (56, 28)
 *   3 stacks of L/3 normal cells, with filters D, 2D, 4D, separated by two
 *   reduction cells that double the filters and halve H and W    (28, 14, 7)
 *   classify   global average pool, fully connected to `classes` logits
 * A cell takes the two previous cell outputs (prev, prev_prev), maps each to
 * its filter count with ReLU-1x1 conv-BN (a factorized stride-2 reduction
 * when prev_prev is twice the resolution), combines them pairwise through 10
 * operations into 5 new hidden states and concatenates 4 (normal) or 3
 * (reduction) of them. So a profile has L + 6 layers, named as torchgpipe's
 * nn.Sequential (stem1..3, cell1_normal1.., cell2_reduction, .., classify),
 * so published balances (e.g. [7,17] for L = 18) index the same layers.
 *
 * Counting conventions (per sample, 224 x 224 unless image= says otherwise):
 *   params       conv weights (no bias) + BN scale and shift; FC weight+bias
 *   fwd_flops    conv/FC: 2 per multiply-add; ReLU 1, add 1, BN 4 (statistics
 *                2 + scale-shift 2), k x k pooling k^2 per output element
 *   bwd_flops    the work's backward (data + weight gradients and the vector
 *                kernels'): 2 x fwd but for the pair sums, whose backward
 *                passes the gradient on for free, and for the sums of the
 *                gradients of tensors several ops read (each state, read up
 *                to four times; a cell's input, read by its reduce1 and the
 *                next cell; FactorizedReduce's ReLU output); stem1 needs no
 *                gradient for the image: its conv costs 1 x, its ReLU 0
 *   work         models/mdl_genwork.h; those gradient sums as PyTorch's
 *                autograd runs them (pairwise adds) unless keep=fused, where
 *                as TensorFlow's (one AddN per tensor), and each ReLU runs
 *                inside the convolution it feeds (mdl_genwork_vec_fused: no
 *                pass forward, its input read once backward)
 *   out_bytes    what the next layers read: a cell's concatenated output and,
 *                when another cell follows, its input (the next cell's
 *                prev_prev), at act_bytes per element (4 = FP32)
 *   stash_bytes  tensors kept for backward, as PyTorch's autograd keeps
 *                them (tools/autograd/derivatives.yaml): each ReLU's output
 *                (= the conv input), each conv's output (= the BN input),
 *                each pooled state once (max_pool2d_with_indices and
 *                avg_pool2d keep their input) and each max pool's int64
 *                indices (8 bytes per output element, whatever act_bytes);
 *                adds and concat keep nothing; the classifier keeps its
 *                global pool's input, its FC input and the class
 *                probabilities of the loss
 *                With fused (keep=fused: what a fusing compiler such as XLA
 *                keeps): no ReLU output; a ReLU-conv-BN chain keeps its
 *                conv outputs, from which backward recomputes each BN
 *                output (with the batch statistics) and the ReLU after it;
 *                instead, the tensors a chain starts from are kept: the
 *                cell's two inputs and every hidden state a later operation
 *                reads (once each); max pools keep their input as above
 *                unless that state is kept already, but no indices (the
 *                backward finds the maxima again), average pools and the
 *                global pool nothing (their backward needs only shapes);
 *                stem1 (whose conv reads the image) keeps its ReLU output
 *                either way
 * Operations follow the architecture, max_pool_3x3 a 3 x 3 max pool as in
 * TensorFlow's reference model. pool3=avg makes it what torchgpipe's
 * benchmark model runs (benchmarks/models/amoebanet/operations.py:
 * max_pool_3x3 returns nn.AvgPool2d(3, stride, padding=1,
 * count_include_pad=False)): the same FLOPs and forward bytes, a backward
 * that reads the output gradient and writes the input gradient (a max pool
 * also reads its input to find the maxima), and no indices kept. It
 * changes no parameter.
 *
 * Ownership: mdl_amoeba_profile allocates *out (mdl_profile_free).
 * Cost: O(L) time, one profile of L + 6 layers.
 */
#ifndef MDL_AMOEBA_H
#define MDL_AMOEBA_H

#include "models/mdl_profile.h"

struct mdl_amoeba_cfg {
    int L;            /* normal cells in all, a multiple of 3 (>= 3) */
    int D;            /* filters of the first stack; D/8 must be a whole number */
    int classes;      /* classifier outputs (ImageNet: 1000) */
    int image;        /* input height = width, a multiple of 32 */
    double act_bytes; /* bytes per activation element (4 = FP32) */
    int fused;        /* 1: keep=fused, what a fusing compiler keeps (above) */
    int pool3_avg;    /* 1: pool3=avg, max_pool_3x3 as an average pool (above) */
};

/* The ranges mdl_amoeba_profile accepts (a spec's parser states them too). */
enum {
    MDL_AMOEBA_L_MIN = 3, MDL_AMOEBA_L_MAX = 30000,
    MDL_AMOEBA_D_MIN = 8, MDL_AMOEBA_D_MAX = 65536,
    MDL_AMOEBA_CLASSES_MAX = 10000000,
    MDL_AMOEBA_IMAGE_MIN = 32, MDL_AMOEBA_IMAGE_MAX = 8192
};

/* L = 18, D = 256 (GPipe Table 2's model), 1000 classes, 224, FP32, unfused,
 * max pools. */
void mdl_amoeba_defaults(struct mdl_amoeba_cfg *c);
/* PS_EINVAL naming the field on a bad configuration. */
int mdl_amoeba_profile(const struct mdl_amoeba_cfg *c, struct mdl_profile **out);

#endif
