/*
 * mdl_profile — per-layer model profiles: the CSV format, its loader and
 * writer.
 *
 * A profile is an ordered list of layers; a stage is a contiguous run of them.
 * CSV (header required, columns by name, any order, '#' comments):
 *   name          layer name (unique, no commas or quotes)
 *   kind          optional layer kind label (dense, attention, cell, ...)
 *   fwd_flops     forward FLOPs per sample            } exactly one of the
 *   fwd_ms        forward milliseconds at at_batch     } two forward columns
 *   bwd_flops / bwd_ms   backward cost, same unit; empty or absent = 2 x fwd
 *   at_batch      micro-batch size fwd_ms/bwd_ms were measured at (ms only)
 *   params        parameter count
 *   out_bytes     output-activation bytes per sample (crosses a stage cut)
 *   stash_bytes   bytes per sample kept from forward for backward (without
 *                 re-materialization), the layer's input included if needed
 *   stash_shared_bytes  optional: of stash_bytes, what the previous layer
 *                 keeps too (one tensor both keep); a stage counts it once
 *                 (struct mdl_layer below); empty or absent = 0
 *   carry_bytes   optional: of out_bytes, tensors the layer passes on
 *                 unchanged (a skip in flight: a ResNet block's input, a
 *                 U-Net's long skips): sent at a cut like the rest, but not
 *                 an output gradient the layer's W needs; in [0, out_bytes],
 *                 empty or absent = 0
 * Every number must be finite and >= 0. The model input is not counted
 * unless the profile starts with a zero-cost layer whose out_bytes it is.
 *
 * Calibrated (measured) profiles may add, all optional (pipesim calibrate
 * writes them; older files load unchanged):
 *   fwd_nostash_ms  forward at at_batch when nothing is stashed (the F of a
 *                   re-materialized micro-batch); absent = fwd_ms
 *   fwd_fixed_ms, bwd_fixed_ms, fwd_nostash_fixed_ms
 *                   per-layer intercept a of an affine fit t(n) = a + b n:
 *                   t(n) = fixed + (t_at - fixed) n / at_batch, replacing the
 *                   device's batch_half rule for this layer (fixed <= t_at)
 *   fwd_ms@N, bwd_ms@N, fwd_nostash_ms@N   (N a positive integer)
 *                   times measured at N samples; a layer's time at n is then
 *                   the piecewise-linear interpolation through its points
 *                   (at_batch included), and beyond the outermost point the
 *                   end point scaled by the affine (or batch_half) rule.
 *                   An empty field = no point for that layer; fwd_ms@N and
 *                   bwd_ms@N come together; N = at_batch must repeat the
 *                   at_batch values. At most MDL_MAX_POINTS sizes.
 *   wgrad_ms@N      W (the weight-gradient part of bwd_ms@N, below) at N:
 *                   needs wgrad_ms; given for every measured size of a layer
 *                   with wgrad_ms, empty for one without. W's share of the
 *                   backward is then interpolated between the sizes (as the
 *                   times are), constant beyond the outermost.
 *   recomp_ms, recomp_ms@N   the recompute R of a re-materialized micro-batch
 *                   (the stashing forward's kernel, run right before its
 *                   backward, where F runs after F); absent = fwd_ms
 *   bwd_remat_ms, bwd_remat_ms@N   the backward of a re-materialized
 *                   micro-batch (right after its recompute, its stash fresh
 *                   in the caches; bwd_ms is the backward of a stashed one);
 *                   absent = bwd_ms
 *                   Both as wgrad_ms@N: the @N fields given for every
 *                   measured size of a layer with the column's value, empty
 *                   for one without; N = at_batch repeats the value. The
 *                   time at n is fwd (bwd) at n times the ratio recomp/fwd
 *                   (bwd_remat/bwd), interpolated between the sizes,
 *                   constant beyond the outermost. W's share of a
 *                   re-materialized backward is the same as of a stashed one.
 * mdl_layer_seconds (models/mdl_topology.h) evaluates all of this.
 *
 * Work by op class (any profile, all optional; a layer that states none of
 * it keeps the fwd/bwd rule above). Per sample unless said otherwise:
 *   wgrad_flops / wgrad_ms   the weight-gradient part W of bwd (the rest is
 *                 the input gradient B); absent = derived from the columns
 *                 below when they are given, else half of bwd
 *   gemms         the forward's matrix products, space-separated, each
 *                 ROWSxKxN[/IN][*COUNT][a|i][c[w]]: a (ROWS x K) by (K x N) product per
 *                 sample, COUNT times (batched heads; default 1; every
 *                 number whole, 1 to 1e15); ROWS
 *                 scales with the micro-batch (tokens, output pixels), K is
 *                 the reduction, N the output features. A trailing 'a' marks
 *                 an activation-by-activation product (attention scores):
 *                 both of its backward products are input gradients, and at
 *                 a micro-batch of n it is COUNT x n products of ROWS x K x N
 *                 (one per sample; ROWS does not grow with n). Without 'a'
 *                 the right operand is a weight: at n samples the product is
 *                 (ROWS n) x K x N, backward has the input gradient
 *                 (ROWS n) x N x K and the weight gradient K x (ROWS n) x N.
 *                 A trailing 'i' instead marks a weight product that reads
 *                 the model's input (the image): the weight gradient only.
 *                 /IN (weight products only): the left operand holds IN
 *                 elements per sample in memory, not ROWS x K: a k x k
 *                 convolution as an implicit GEMM reads its input tensor
 *                 (Cin x H x W), not the im2col matrix (the device model's
 *                 memory time; the FLOPs are ROWS x K x N's).
 *                 A trailing 'c' (weight products only) marks a
 *                 convolution: ROWS are its output pixels and the samples
 *                 a dimension of their own, which a padded device (TPU)
 *                 pads, not ROWS x n (mdl_device.h). 'cw' marks a 3 x 3
 *                 convolution at stride 1 (with /IN; K a multiple of 9, the output
 *                 as large as the input, IN = ROWS x K / 9; square, sqrt(ROWS)
 *                 on a side),
 *                 which a device with "winograd" may run by Winograd's
 *                 minimal filtering (mdl_device.h).
 *                 At most MDL_MAX_GEMMS (64) products per layer.
 *   mm_fwd_flops, mm_dgrad_flops, mm_wgrad_flops
 *                 matrix FLOPs of F, of B (input gradients) and of W; derived
 *                 from gemms (2 per multiply-add) when absent; when both are
 *                 given they must agree within 0.1 %
 *   vec_fwd_flops, vec_bwd_flops   vector/elementwise FLOPs of F and of B
 *   bytes_fwd, bytes_bwd   bytes the vector (memory-bound) kernels of F and
 *                 of B read and write per sample (matrix operands excluded:
 *                 the device model counts those from the shapes)
 *   kernels_fwd, kernels_bwd, kernels_wgrad   kernels launched per op (not
 *                 per sample; whole numbers)
 * mdl_work_* below turns these into per-op figures; the device model
 * (models/mdl_device.h) times them.
 *
 * Ownership: mdl_profile_load allocates; mdl_profile_free (NULL ok) frees.
 * Cost: loading is O(file size + n log n) in the n layers (the duplicate-name
 * check sorts name hashes); a layer record is about 220 bytes.
 */
#ifndef MDL_PROFILE_H
#define MDL_PROFILE_H

#include <stdio.h>

#include <stddef.h>

#define MDL_NAME_MAX 64
#define MDL_MAX_POINTS 24

/* One forward matrix product of a layer, as the `gemms` column gives it. */
struct mdl_gemm {
    double rows, k, n;  /* rows per sample */
    double count;       /* >= 1 */
    int weight;         /* 1: right operand is a weight; 0: an activation ('a');
                         * 2: a weight whose input is the model's input ('i'):
                         * no input gradient */
    double in;          /* weight products: elements per sample of the left
                         * operand as stored (a convolution's input tensor,
                         * read in place of the rows x k im2col matrix:
                         * "/IN"); 0 = rows x k */
    int conv;           /* 1: a convolution ("c"): rows are output pixels per
                         * sample and the samples a tensor dimension of their
                         * own (a padded device pads them, not rows x
                         * samples; mdl_device.h) */
    int wino;           /* 1: a 3 x 3 convolution at stride 1 ("w" after
                         * "c"; K = 9 x Cin, the output as large as the
                         * input and taken as square): a device with
                         * "winograd" may run it by Winograd's minimal
                         * filtering instead (mdl_device.h) */
};

/* A layer's work by op class; per sample unless said otherwise. */
struct mdl_work {
    double mm_fwd, mm_dgrad, mm_wgrad;      /* matrix FLOPs of F, B, W */
    double vec_fwd, vec_bwd;                /* vector FLOPs of F, B */
    double bytes_fwd, bytes_bwd;            /* vector kernels' bytes of F, B */
    double kernels_fwd, kernels_bwd, kernels_wgrad; /* per op */
    int n_gemms;
    struct mdl_gemm *gemms;                 /* [n_gemms], NULL when 0 */
};

struct mdl_layer {
    char name[MDL_NAME_MAX];
    char kind[24];
    double fwd;         /* FLOPs per sample, or seconds at at_batch */
    double bwd;
    double at_batch;    /* measured profiles only, else 0 */
    double params;
    double out_bytes;
    double stash_bytes;
    /* Of stash_bytes, what the previous layer's stash holds too (one tensor
     * both keep: a ReLU's output that this convolution keeps as its input).
     * A stage counts it once: its stash leaves it out for every layer but
     * its first, whose previous layer is on another device with its own
     * copy. 0 <= stash_shared_bytes <= stash_bytes; 0 for a profile's first
     * layer. */
    double stash_shared_bytes;
    /* Of out_bytes, what the layer carries on unchanged (skips in flight):
     * it crosses a cut, but the split-backward schedules' W buffer (the
     * output gradients of a stage's layers, sch_cost.h mem.wgrad) leaves
     * it out. 0 <= carry_bytes <= out_bytes. */
    double carry_bytes;
    /* Calibrated extensions (measured profiles only; zero = absent). Seconds. */
    int has_nostash;    /* fwd_nostash given */
    int has_fixed;      /* *_fixed given */
    double fwd_nostash;
    double fwd_fixed, bwd_fixed, nostash_fixed;
    int n_pts;          /* extra measured sizes, increasing, != at_batch */
    /* n_pts values each (at most MDL_MAX_POINTS), NULL when n_pts is 0. Out of
     * line so that a layer stays small (a million-layer profile). A profile's
     * layers own theirs (one block from pt_batch on); mdl_profile_add copies
     * the points of the layer it is given. */
    double *pt_batch, *pt_fwd, *pt_bwd, *pt_nostash;
    /* W (the weight-gradient part of pt_bwd) at each size, -1 where not
     * given; NULL (mdl_profile_add: all -1) for a layer given without. */
    double *pt_wgrad;
    /* The weight-gradient part of bwd (same unit), when has_wgrad. */
    int has_wgrad;
    double wgrad;
    /* R and the backward of a re-materialized micro-batch (measured
     * profiles; seconds at at_batch), when has_recomp / has_bwd_remat, and
     * at the measured sizes (-1 where not given; NULL as pt_wgrad). */
    int has_recomp, has_bwd_remat;
    double recomp, bwd_remat;
    double *pt_recomp, *pt_bwd_remat;
    /* Work by op class, NULL when the layer states none. Out of line like
     * the points: a profile's layers own theirs, and mdl_profile_add
     * copies the work (and its gemms) of the layer it is given. */
    struct mdl_work *work;
};

struct mdl_profile {
    char *path;          /* where it came from ("<generated>" if none) */
    int measured;        /* 1: fwd/bwd are seconds, 0: FLOPs per sample */
    int n_layers;
    struct mdl_layer *layers;
};

int mdl_profile_load(const char *path, struct mdl_profile **out);
/* The same from memory: text[0..len) (NULs are errors), errors name `name`. */
int mdl_profile_parse(const char *text, size_t len, const char *name,
                      struct mdl_profile **out);
/* Empty profile to fill with mdl_profile_add (generators). */
struct mdl_profile *mdl_profile_new(const char *origin, int measured);
int mdl_profile_add(struct mdl_profile *p, const struct mdl_layer *l);
/* Atomic write (temp + rename); "-" = stdout. */
int mdl_profile_write(const struct mdl_profile *p, const char *path);
/* The same CSV text onto f. */
void mdl_profile_print(FILE *f, const struct mdl_profile *p);
/* FNV-1a 64 of that text, 16 hex digits: equal for profiles that load the
 * same (a generated profile changes it when its generator changes). */
int mdl_profile_hash(const struct mdl_profile *p, char hex[17]);
void mdl_profile_free(struct mdl_profile *p);
double mdl_profile_params(const struct mdl_profile *p);

#endif
