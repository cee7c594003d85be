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
 * mdl_layer_seconds (models/mdl_topology.h) evaluates all of this.
 *
 * Ownership: mdl_profile_load allocates; mdl_profile_free (NULL ok) frees.
 * Cost: loading is O(file size + n log n) in the n layers (the duplicate-name
 * check sorts name hashes); a layer record is about 220 bytes.
 */
#ifndef MDL_PROFILE_H
#define MDL_PROFILE_H

#include <stddef.h>

#define MDL_NAME_MAX 64
#define MDL_MAX_POINTS 24

struct mdl_layer {
    char name[MDL_NAME_MAX];
    char kind[24];
    double fwd;         /* FLOPs per sample, or seconds at at_batch */
    double bwd;
    double at_batch;    /* measured profiles only, else 0 */
    double params;
    double out_bytes;
    double stash_bytes;
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
void mdl_profile_free(struct mdl_profile *p);
double mdl_profile_params(const struct mdl_profile *p);

#endif
