/*
 * rt_layer — the real FP32 kernels of the validation runtime: one layer's
 * forward, its backward split into input gradient (B) and weight gradient
 * (W), and its SGD update.
 *
 * Layouts are row-major with one row per sample. Kinds:
 *   dense  y = x W^T + b, then ReLU unless linear. W is [out][in]. Backward
 *          needs its input x (for dW) and, with ReLU, the output's sign: a
 *          one-byte mask per output element (y > 0) written by forward.
 *          GEMMs go through cblas_sgemm (OpenBLAS; the caller sets it
 *          single-threaded, see rt_blas_single_thread).
 *   norm   layer norm over the row: xhat = (x - mean) * rstd,
 *          y = gamma * xhat + beta. Backward needs xhat and rstd (its own
 *          aux buffer, width + 1 floats per sample), not x or y.
 * Backward in three calls: rt_layer_grad_prep turns dy into the gradient
 * the weights see (dense ReLU: dy * mask, in place); rt_layer_grad_input
 * computes dx; rt_layer_grad_weight accumulates dW/db (+=), so micro-batch
 * gradients sum into one step's gradient.
 *
 * Ownership: a layer owns its parameter and gradient arrays
 * (rt_layer_init / rt_layer_release). Cost: dense forward 2*rows*in*out
 * FLOPs, input and weight gradients the same each; norm O(rows*width).
 */
#ifndef RT_LAYER_H
#define RT_LAYER_H

#include <stdint.h>

enum rt_layer_kind { RT_LAYER_DENSE, RT_LAYER_NORM };

struct rt_layer {
    enum rt_layer_kind kind;
    int in, out;        /* widths; norm has in == out */
    int relu;           /* dense only */
    int64_t n_params;
    float *w, *b;       /* dense: W[out][in], b[out]; norm: gamma, beta */
    float *dw, *db;     /* gradients, same shapes */
};

/* Allocates parameters (zeroed) and gradients. PS_ENOMEM/PS_EINVAL. */
int rt_layer_init(struct rt_layer *l, enum rt_layer_kind kind, int in, int out,
                  int relu);
void rt_layer_release(struct rt_layer *l);
const char *rt_layer_kind_name(enum rt_layer_kind k);

/* What backward keeps per sample: floats of aux (norm: xhat + rstd), whether
 * it reads its input (dense), bytes of mask (dense ReLU: out). */
int64_t rt_layer_aux_floats(const struct rt_layer *l);
int rt_layer_needs_input(const struct rt_layer *l);
int64_t rt_layer_mask_bytes(const struct rt_layer *l);
/* Per-sample FLOPs of forward and of backward: input gradient (B) and
 * weight gradient (W); B + W is the whole backward. */
double rt_layer_fwd_flops(const struct rt_layer *l);
double rt_layer_bgrad_flops(const struct rt_layer *l);
double rt_layer_wgrad_flops(const struct rt_layer *l);

/* y[rows][out] from x[rows][in]; aux[rows][aux_floats] (norm, must not be
 * NULL); mask[rows][out] (dense ReLU; NULL = not kept). */
void rt_layer_forward(const struct rt_layer *l, int rows, const float *x,
                      float *y, float *aux, uint8_t *mask);
/* In place on dy[rows][out]: dense ReLU zeroes where mask is 0; others no-op. */
void rt_layer_grad_prep(const struct rt_layer *l, int rows, const uint8_t *mask,
                        float *dy);
/* dx[rows][in] from the prepared dy. */
void rt_layer_grad_input(const struct rt_layer *l, int rows, const float *aux,
                         const float *dy, float *dx);
/* dW += ..., db += ... from the prepared dy and the input x (dense) or aux
 * (norm). */
void rt_layer_grad_weight(struct rt_layer *l, int rows, const float *x,
                          const float *aux, const float *dy);
/* w -= lr * dw (gradients kept, so tests can read them after a step). */
void rt_layer_sgd(struct rt_layer *l, float lr);
void rt_layer_zero_grad(struct rt_layer *l);

/* openblas_set_num_threads(1): every worker runs single-threaded GEMMs. */
void rt_blas_single_thread(void);
/* First thing in main(): when the address space or the data segment is
 * limited (RLIMIT_AS, RLIMIT_DATA: ulimit -v, -d) and OPENBLAS_NUM_THREADS
 * is not 1, executes this program again (/proc/self/exe, the same argv)
 * with OPENBLAS_NUM_THREADS=1. OpenBLAS's pthread build starts its thread
 * pool when it is loaded, before main; under such a limit a pool thread
 * cannot allocate its buffer and retries forever, spinning a core, and
 * exit() waits for it: every command hung, --help too. With the variable
 * set no pool is started (every GEMM here runs single-threaded anyway).
 * Only where /proc/self/exe is this program's file: not when it was started
 * through the dynamic loader (ld.so PROGRAM) or under valgrind, where that
 * would execute ld.so or the tool (set OPENBLAS_NUM_THREADS=1 there).
 * Returns when it did not execute again (no limit, the variable already 1,
 * another /proc/self/exe, or the exec failed). */
void rt_blas_reexec_single_thread(char **argv);
/* The OpenBLAS kernel name ("Haswell", ...). */
const char *rt_blas_corename(void);

#endif
