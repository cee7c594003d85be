/*
 * mdl_genwork — how the generators state a layer's work by op class (the
 * struct mdl_work of models/mdl_profile.h): an accumulator on the caller's
 * stack that the generator feeds op by op while it counts FLOPs.
 *
 * Counting rules, shared by every generator (per sample):
 *   GEMM / convolution (an implicit GEMM: ROWS = output H*W, K = Cin*kh*kw,
 *       N = Cout): forward 2*ROWS*K*N*COUNT matrix FLOPs, one kernel per
 *       product (COUNT batched heads are one kernel). With a weight operand
 *       backward has an input-gradient product (the same FLOPs, one kernel,
 *       omitted where no gradient is needed: the image) and a weight-gradient
 *       product (same FLOPs, one kernel). An activation-by-activation product
 *       (attention) has two input-gradient products, two kernels.
 *   Vector op (bias, ReLU, add, scale, BN, LN, softmax, pooling, ...): the
 *       generator's FLOPs, one forward and one backward kernel as an unfused
 *       framework launches them, and the bytes the kernel reads plus writes at
 *       the activation precision.
 *   Fused vector op (mdl_genwork_vec_fused; the keep=fused generators, what
 *       XLA does on a TPU): an element-wise op applied directly to a matrix
 *       product's input or output (a ReLU before a convolution; a bias, a
 *       scale or an activation after a matmul) runs inside that product.
 *       Cloud TPU, "Profile TensorFlow workloads", TensorFlow function
 *       performance notes: tf.matmul "supports fusing into its input and
 *       output. This means that activation functions or biases applied
 *       directly to the output of tf.matmul have low overhead";
 *       tf.nn.conv_n_d "supports fusion into its result, the activations,
 *       and the kernel". So forward it has no kernel and no memory traffic
 *       of its own (its FLOPs stay); backward, its derivative is applied
 *       inside the product that makes the gradient, which reads only what
 *       the derivative needs besides that gradient (a ReLU's input, once),
 *       and a bias's gradient is the one reduction of dy (one read).
 *       Layer norm, softmax, batch norm statistics, pooling, residual adds
 *       and gradient sums stay their own kernels.
 *   Gradient fan-in: the gradient of a tensor that u ops read is the sum of
 *       their u contributions (mdl_genwork_grad_sum). An add's own backward
 *       hands its gradient to both operands, and an identity's to its input,
 *       without a kernel (PyTorch's derivatives of add and of a view; TF's
 *       AddGrad), so an add states no backward work: what a residual or a
 *       cell's state costs in backward is the sum where its input fans out.
 *   W is the matrix weight gradient alone: the weight gradients of vector
 *       ops (bias, BN/LN scale and shift, embedding scatter-add) are small
 *       reductions counted in B's vector work.
 * Identical gemm shapes are merged into one entry (COUNT added up), which
 * changes no FLOP and keeps the list short.
 *
 * Ownership: everything lives in the struct; mdl_genwork_attach points a
 * layer at it, and mdl_profile_add deep-copies it. Cost: O(gemms) per op.
 */
#ifndef MDL_GENWORK_H
#define MDL_GENWORK_H

#include "models/mdl_profile.h"

#define MDL_GENWORK_GEMMS 48

struct mdl_genwork {
    struct mdl_work w;
    struct mdl_gemm g[MDL_GENWORK_GEMMS];
};

void mdl_genwork_init(struct mdl_genwork *gw);
/* A forward product rows x k by k x n, count times per sample; weight: the
 * right operand is a weight; dgrad: 0 when no input gradient is computed. */
void mdl_genwork_gemm(struct mdl_genwork *gw, double rows, double k, double n, double count,
                      int weight, int dgrad);
/* A convolution as an implicit GEMM (mdl_gemm.conv): a weight product rows
 * x k (rows = output pixels, k = Cin x kh x kw) by k x n whose left operand
 * is read from its input tensor of `in` elements per sample (mdl_gemm.in;
 * 0 = rows x k, as a 1 x 1 convolution reads it). */
void mdl_genwork_conv(struct mdl_genwork *gw, double rows, double k, double n, double count,
                      int dgrad, double in);
/* A 3 x 3 convolution at stride 1 (padding 1: rows = the input's pixels):
 * mdl_genwork_conv with k = 9 x cin, marked for fast algorithms
 * (mdl_gemm.wino). */
void mdl_genwork_conv3(struct mdl_genwork *gw, double rows, double cin, double cout,
                       double count, int dgrad, double in);
/* A vector op: FLOPs and bytes of its forward and backward kernels, and
 * whether it has a backward kernel at all (kb = 0: none). */
void mdl_genwork_vec(struct mdl_genwork *gw, double flops_f, double flops_b, double bytes_f,
                     double bytes_b, int kb);
/* A vector op fused into a matrix product (the rule above): its FLOPs, no
 * kernel and no bytes forward, bytes_b read backward. */
void mdl_genwork_vec_fused(struct mdl_genwork *gw, double flops_f, double flops_b,
                           double bytes_b);
/* The gradient of a tensor of `elems` elements per sample read by `uses`
 * ops, at `ab` bytes per element: its uses contributions summed. addn = 0:
 * as PyTorch's autograd does it, each further contribution added to the
 * running sum when it arrives (torch/csrc/autograd/input_buffer.cpp,
 * InputBuffer::add: `old_var + var`), uses - 1 kernels each reading two
 * tensors and writing one; addn = 1: as TensorFlow's gradients do it by
 * default, one AddN over all of them (gradients_util.py, _AggregatedGrads,
 * AggregationMethod.ADD_N: "All of the gradient terms are summed as part of
 * one operation using the AddN op"), one kernel reading uses tensors and
 * writing one. (uses - 1) x elems FLOPs either way; nothing for uses < 2. */
void mdl_genwork_grad_sum(struct mdl_genwork *gw, double elems, int uses, double ab, int addn);
/* The backward FLOPs of gw's work: input and weight gradients and the
 * vector kernels' backward (a layer's bwd_flops). */
double mdl_genwork_bwd_flops(const struct mdl_genwork *gw);
/* Adds another accumulator's work (a sub-block) to gw. */
void mdl_genwork_merge(struct mdl_genwork *gw, const struct mdl_genwork *o);
/* l->work = &gw->w (gemms set), l->has_wgrad = 1, l->wgrad = W's FLOPs. */
void mdl_genwork_attach(struct mdl_genwork *gw, struct mdl_layer *l);

#endif
