/*
 * mdl_torch — a measured layer profile from a PyTorch profiler trace.
 *
 * Input: the Chrome Trace JSON that torch.profiler's export_chrome_trace
 * writes (a bare event array from the legacy profiler, or an object with
 * "traceEvents" from Kineto builds); only complete ("ph": "X") events are
 * read. Layers are the ranges named "<prefix><name>" (prefix "layer:") that a
 * training script opens with record_function around each layer's forward.
 *
 * Forward: a layer range is a forward range when no autograd function
 * ("autograd::engine::evaluate_function: ...") starts inside it and it does
 * not lie inside one (ranges inside an autograd function are activation
 * re-computation, ignored and counted). fwd = the sum of its forward ranges
 * divided by the number of steps, the fewest forward ranges of a layer;
 * every layer has a whole number of forward ranges per step (a module called
 * k times a step has k: its sum is its time per step, reported), and as
 * many backward ranges as forward ones when backward is by ranges, else
 * PS_EPARSE naming the layer and its counts (a trace cut inside a step).
 * Layers keep the order of their first forward range.
 * Layer ranges of one direction on one thread may touch but neither nest
 * nor overlap (PS_EPARSE: their common time would count in both layers).
 *
 * Backward, by the first method that applies:
 *   1. ranges: a layer range inside which autograd functions start is the
 *      layer's backward (scripts/make_torch_trace.py opens it when the
 *      gradient of the layer's output arrives, closes it when the gradient
 *      of its input is done). Needed with Debian's torch 1.13, whose legacy
 *      profiler export carries no sequence numbers.
 *   2. sequence: (Kineto traces) each outermost autograd function carries,
 *      itself or in the first event inside it, the "Sequence number" of the
 *      forward op that created it; that op lies in a forward layer range.
 *      Functions without one (AccumulateGrad) run right after the function
 *      that produced their gradient and are charged to its layer.
 *   3. none: no backward in the trace; bwd = 2 x fwd (the profile default).
 * Either way bwd = attributed time / steps; unattributed time is reported.
 *
 * Sizes (params, out_bytes, stash_bytes per sample, kind, at_batch) come from
 * a sidecar CSV the script writes beside the trace (<trace>.layers.csv with
 * columns name,kind,params,out_bytes,stash_bytes,at_batch), because the
 * legacy export has no shapes. Without a sidecar they are 0 and the batch
 * must be given.
 *
 * Ownership: mdl_torch_import allocates *out (mdl_profile_free). Cost:
 * O(E log E) for E trace events; the whole JSON is held while reading.
 */
#ifndef MDL_TORCH_H
#define MDL_TORCH_H

#include "models/mdl_profile.h"

enum mdl_torch_bwd { MDL_TORCH_BWD_RANGES, MDL_TORCH_BWD_SEQUENCE, MDL_TORCH_BWD_NONE };

struct mdl_torch_opts {
    const char *prefix;       /* layer range prefix; NULL = "layer:" */
    const char *sizes_path;   /* sidecar CSV; NULL = <trace>.layers.csv if present */
    double batch;             /* samples per step in the trace; 0 = sidecar's at_batch */
};

struct mdl_torch_report {
    int steps;
    int n_layers;
    enum mdl_torch_bwd method;
    double fwd_us, bwd_us;    /* per step, summed over layers */
    double unattributed_us;   /* per step, backward time charged to no layer */
    int n_recompute;          /* ignored layer ranges inside autograd functions */
    int n_ambiguous;          /* backward functions whose number several forward
                               * threads carried: charged to the latest maker */
    int repeated;             /* layers run more than once a step */
    char repeated_name[MDL_NAME_MAX]; /* the first of them, */
    int repeated_times;       /* run that many times a step */
    char sizes[512];          /* sidecar used, "" if none */
};

int mdl_torch_import(const char *trace_path, const struct mdl_torch_opts *o,
                     struct mdl_profile **out, struct mdl_torch_report *rep);
const char *mdl_torch_bwd_name(enum mdl_torch_bwd m);

/* Sidecar sizes: one row per layer. Internal to mdl_torch, exposed for tests. */
struct mdl_torch_size {
    char name[MDL_NAME_MAX];
    char kind[24];
    double params, out_bytes, stash_bytes, at_batch; /* at_batch 0 = absent */
    double stash_shared_bytes;                        /* 0 = absent */
};
int mdl_torch_sizes_load(const char *path, struct mdl_torch_size **rows, int *n);

#endif
