/*
 * mdl_vgg — VGG-11/13/16/19 (Simonyan and Zisserman, "Very Deep
 * Convolutional Networks for Large-Scale Image Recognition", ICLR 2015,
 * Table 1, configurations A, B, D and E; no local response normalization)
 * as a per-layer profile, one layer per module in the order the Caffe
 * model, torchvision's vgg and the Torch7 conversion that
 * jcjohnson/cnn-benchmarks times have them: per stack of 3 x 3
 * convolutions (padding 1, stride 1, with bias) conv and ReLU, then a
 * 2 x 2 max pool of stride 2; then fc6, relu6, drop6, fc7, relu7, drop7,
 * fc8 (no softmax or loss: the benchmark times the network's forward and
 * backward alone).
 * Spec: vgg:depth=11|13|16|19[,classes=1000][,image=224][,act_bytes=4];
 *       image a multiple of 32 (fc6 reads 512 x (image/32)^2 features).
 *
 * Counting per sample (FP32 by default), as models/mdl_resnet.h: a
 * convolution an implicit GEMM reading its input, marked as a 3 x 3
 * stride-1 convolution (gemm "cw": a device with "winograd" may run it
 * by Winograd's algorithm, models/mdl_device.h), the first one without an
 * input gradient (the image); its bias a vector kernel (1 FLOP per output,
 * reads and writes it; backward a reduction reading the output gradient);
 * ReLU 1 FLOP, 2 tensors forward, 3 backward; the max pool as ResNet's and
 * U-Net's (4 FLOPs per output; its input and output forward, its output
 * and twice its input backward); dropout a multiply by its mask (2 and 2
 * tensors); fc a weight product of 1 row and its bias. Parameters: weights
 * and biases, VGG-16 138,357,544 and VGG-19 143,667,240 (torchvision's).
 * stash_bytes as PyTorch's autograd keeps them (tools/autograd/
 * derivatives.yaml): a convolution's and an fc's input, a ReLU's output,
 * the max pool's input and int64 indices (8 bytes per output element),
 * dropout's mask; a ReLU's output that the next convolution or pool keeps
 * as its input is that layer's stash_shared_bytes (models/mdl_profile.h).
 *
 * Ownership: *out from mdl_profile_free. Cost: O(depth).
 */
#ifndef MDL_VGG_H
#define MDL_VGG_H

#include "models/mdl_profile.h"

/* 1: a vgg: spec (*out set), 0: not ours, < 0: a bad spec. */
int mdl_vgg_from_spec(const char *spec, struct mdl_profile **out);

#endif
