/*
 * mdl_mempolicy — named policies for the memory a stage holds besides its
 * activations: parameter, gradient and optimizer-state bytes per parameter,
 * plus allocator and workspace overhead.
 *
 *   fp32-rmsprop    12  weights 4, gradients 4, RMSProp mean square 4 (the
 *                       GPipe paper's setting, Huang et al. 2019)
 *   fp32-sgd         8  weights 4, gradients 4 (no momentum)
 *   fp32-momentum   12  the same plus a momentum buffer 4
 *   fp32-adam       16  weights, gradients, Adam's momentum and variance
 *   mixed-adam      16  fp16 weights 2 + fp16 gradients 2 + fp32 master
 *                       weights, momentum and variance 12 (ZeRO's K = 12,
 *                       Rajbhandari et al. 2019, arXiv 1910.02054, sec. 3.1)
 *   mixed-adam-fp32grad 18  the same with fp32 gradients (2 + 4 + 12)
 * grad_bytes is the gradients' share (2 of mixed-adam, 4 of the others):
 * what a data-parallel all-reduce moves per parameter.
 * allocator_overhead is a fraction added to activation memory (fragmentation
 * of a caching allocator), workspace_bytes a fixed amount per stage (cuDNN /
 * cuBLAS workspaces); both default to 0, so a policy changes nothing but
 * bytes_per_param unless asked.
 *
 * Ownership: plain values, no allocation. Cost: O(policies) per lookup.
 */
#ifndef MDL_MEMPOLICY_H
#define MDL_MEMPOLICY_H

struct mdl_mempolicy {
    char optimizer[32];       /* a name from the table above */
    double bytes_per_param;   /* weights + gradients + optimizer state */
    double grad_bytes;        /* the gradients' bytes per parameter (0: no policy) */
    double allocator_overhead; /* fraction of activation memory, >= 0 */
    double workspace_bytes;   /* per stage, >= 0 */
};

/* Fills *out from a policy name (overheads 0); PS_EINVAL naming the known
 * ones when the name is not one of them. */
int mdl_mempolicy_named(const char *name, struct mdl_mempolicy *out);
/* Activation bytes a stage holds under the policy: act x (1 + overhead). */
double mdl_mempolicy_act_bytes(const struct mdl_mempolicy *m, double act);
/* Static bytes of a stage with `params` parameters. */
double mdl_mempolicy_static_bytes(const struct mdl_mempolicy *m, double params);

#endif
