/*
 * rt_net — the network the validation runtime trains: a layer list parsed
 * from a spec, its seeded initialization, the synthetic regression data,
 * the loss, and a single-threaded reference step (whole batch, no
 * micro-batches) that the pipelined step must agree with.
 *
 * Spec forms:
 *   mlp:layers=L,width=W[,in=I][,out=O][,norm=N|everyN]
 *       L dense layers I -> W -> ... -> W -> O (I, O default W); every dense
 *       layer has ReLU except the last (linear regression head); with
 *       norm=N (N > 0) a layer norm follows every N-th dense layer but the
 *       last. (models/mdl_gen's mlp: cost model has ReLU everywhere; the
 *       runtime's own profile comes from rt_net_profile.)
 *   file:PATH
 *       one item per line, '#' comments: first "input WIDTH", then
 *       "dense WIDTH [relu|linear]" (relu by default) or "norm".
 * Tensor t_0 is the net input, t_l the output of layer l (1-based).
 *
 * Loss: L = 1/(2 N O) * sum over the N samples and O outputs of (y - t)^2,
 * so a micro-batch's gradient (y - t) / (N O) sums over micro-batches to the
 * whole batch's gradient.
 *
 * Data: x ~ U(-1, 1); targets t = tanh(x A) with a fixed teacher A whose
 * entries are N(0, 1/I); weights He-uniform, biases 0, norm gamma 1 beta 0.
 * All from gsl_rng mt19937 seeded explicitly (the seed is the caller's to
 * print).
 *
 * Ownership: rt_net_parse / rt_net_free, rt_data_new / rt_data_free (NULL
 * ok). Cost: parse O(layers); reference step = one forward and backward
 * over the whole batch (see rt_layer.h).
 */
#ifndef RT_NET_H
#define RT_NET_H

#include <stdint.h>

#include "runtime/rt_layer.h"

#define RT_MAX_LAYERS 4096
#define RT_MAX_WIDTH 65536

struct rt_net {
    char spec[256];
    int in_width;
    int n_layers;
    struct rt_layer *layers;   /* [n_layers] */
};

int rt_net_parse(const char *spec, struct rt_net **out);
void rt_net_free(struct rt_net *n);
/* Width of tensor t_l, l in [0, n_layers]. */
int rt_net_width(const struct rt_net *n, int l);
int64_t rt_net_params(const struct rt_net *n);
/* Deterministic initialization from seed. */
int rt_net_init_params(struct rt_net *n, uint64_t seed);
/* Copies parameters (same spec required). */
void rt_net_copy_params(struct rt_net *dst, const struct rt_net *src);
void rt_net_zero_grad(struct rt_net *n);

struct rt_data {
    int n, in, out;
    uint64_t seed;
    float *x;   /* [n][in] */
    float *t;   /* [n][out] */
};

int rt_data_new(const struct rt_net *net, int n, uint64_t seed,
                struct rt_data **out);
void rt_data_free(struct rt_data *d);

/* Loss contribution of rows samples (of a batch of n_total) and, if dy is
 * not NULL, dL/dy for them. */
double rt_loss(int rows, int width, int n_total, const float *y,
               const float *t, float *dy);

/* Training diverged? PS_EINVAL naming the step (1-based) and suggesting a
 * smaller --lr when the loss is not finite, or when net (NULL: not
 * checked) holds a non-finite parameter or gradient after the step's update
 * (the gradient overflowed before the loss showed it); else 0. O(params). */
int rt_check_diverged(const struct rt_net *net, long step, double loss, double lr);

/* Zeroes the gradients, runs forward and backward over the whole batch,
 * leaving the gradients in the layers; *loss gets the loss before any
 * update. Then, if lr > 0, applies SGD. */
int rt_net_reference_step(struct rt_net *n, const struct rt_data *d, float lr,
                          double *loss);

#endif
