/*
 * rt_stage — one pipeline stage of an rt_net: which layers it holds, the
 * exact bytes it keeps per micro-batch (the ledger's in/out/stash), and its
 * micro-batch kernels: forward (F, or transient when re-materialized),
 * recompute (R = forward into the stash), backward (B, optionally without
 * the weight gradient), weight gradient (W) and SGD update (U). The
 * pipeline (rt_pipe) calls these per op; a calibration run can call them
 * directly on a pinned thread to time one stage at a micro-batch size.
 *
 * What a stage keeps, per micro-batch of r samples (FP32 = 4 bytes):
 *   in     its input tensor, 4 r width(first)        (0 for stage 0)
 *   out    its output tensor, 4 r width(last)        (0 for the last stage)
 *   stash  per layer: dense -> a copy of its input (4 r in) and, with
 *          ReLU, a one-byte output mask (r out); norm -> xhat and rstd
 *          (4 r (width + 1)); the net's last layer also keeps dL/dy
 *          (4 r out). Nothing else survives a forward, so a stage's input
 *          buffer can be released after F (sch_memory.c's rule).
 * Intermediate tensors of a forward or backward live in a per-device
 * workspace (rt_work), sized once; it is not activation memory.
 * With a split backward (B then W) the gradients of all but the stage's last
 * layer must survive from B to W: the "wgrad" block (4 r sum of those
 * layers' widths), the ledger's sch_stage_mem.wgrad (sch_cost.c sets the same
 * from a profile's out_bytes).
 *
 * rt_net_profile writes the same numbers per sample as a profile
 * (out_bytes, stash_bytes), so sch_costs gives these in/out/stash exactly.
 *
 * Ownership: rt_stage_plan fills a struct owning its offset arrays
 * (rt_stage_release); rt_work_init / rt_work_release. Cost: kernels as in
 * rt_layer.h; planning O(layers).
 */
#ifndef RT_STAGE_H
#define RT_STAGE_H

#include <stdint.h>

#include "models/mdl_profile.h"
#include "runtime/rt_net.h"
#include "sched/sch_schedule.h"

struct rt_stage {
    int index, n_stages;
    int first, n_layers;     /* layers [first, first + n_layers) of the net */
    int rows;                /* micro-batch samples */
    int is_last_layer_head;  /* holds the net's last layer (loss) */
    struct sch_stage_mem mem;
    int64_t wgrad_bytes;
    /* byte offsets into the stash / wgrad blocks, -1 where absent */
    int64_t *x_off, *aux_off, *mask_off, *wg_off; /* [n_layers] */
    int64_t dy_off;
};

struct rt_work {
    float *a, *b, *aux;      /* [rows * max width] x 2, [rows * (max width + 1)] */
    int64_t bytes;
};

/* Per-sample stash bytes of layer l of the net (see above). */
int64_t rt_net_layer_stash(const struct rt_net *n, int l);
/* The net's profile (FLOPs per sample, params, out/stash bytes) named by
 * its spec; *out from mdl_profile_free. */
int rt_net_profile(const struct rt_net *n, struct mdl_profile **out);

int rt_stage_plan(const struct rt_net *n, int index, int n_stages, int first,
                  int n_layers, int rows, struct rt_stage *st);
void rt_stage_release(struct rt_stage *st);

/* Workspace for the stages st[0..n) run by one thread. */
int rt_work_init(struct rt_work *w, const struct rt_net *net,
                 const struct rt_stage *st, int n);
void rt_work_release(struct rt_work *w);

/* Forward of one micro-batch from x (r x width(first)). stash: the stash
 * block to fill (F without re-materialization, or R), or NULL (F of a
 * re-materialized micro-batch: nothing kept). On the head stage, targets
 * (r x out) give the loss (*loss, scaled for a batch of n_total) and, with
 * a stash, dL/dy. Returns the stage output inside w (valid until the next
 * kernel call on w). */
const float *rt_stage_forward(const struct rt_stage *st, struct rt_net *net,
                              const float *x, void *stash, const float *targets,
                              int n_total, double *loss, struct rt_work *w);
/* Backward of one micro-batch. gout: gradient of the output (not the head
 * stage; prepared in place, so keep it until W when split). split 0:
 * weight gradients accumulate here too; 1: they are left for
 * rt_stage_wgrad, with the prepared gradients in wgrad (wgrad_bytes; NULL
 * when that is 0). Returns the input gradient inside w, or NULL on stage 0
 * (the net input needs none). */
const float *rt_stage_backward(const struct rt_stage *st, struct rt_net *net,
                               void *stash, float *gout, int split, void *wgrad,
                               struct rt_work *w);
void rt_stage_wgrad(const struct rt_stage *st, struct rt_net *net,
                    const void *stash, const float *gout, const void *wgrad);
void rt_stage_update(const struct rt_stage *st, struct rt_net *net, float lr);
/* Weights + gradients bytes of the stage (static memory). */
int64_t rt_stage_param_bytes(const struct rt_stage *st, const struct rt_net *net);

#endif
