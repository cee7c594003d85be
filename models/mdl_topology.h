/*
 * mdl_topology — accelerator topologies: devices and links, loaded from JSON
 * with jansson; every field validated, unknown keys rejected.
 *
 * {
 *   "name": "pcie-8gpu",
 *   "bytes_per_param": 12,          weights + optimizer state (paper: 12, RMSProp)
 *   "memory_policy": "mixed-adam"   or {"optimizer": NAME, "allocator_overhead": 0.05,
 *                                   "workspace_bytes": B}: models/mdl_mempolicy.h; sets
 *                                   bytes_per_param (an explicit one must agree);
 *                                   stage memory adds the overheads (sched/sch_cost.c)
 *   "devices": [ { "name": "gpu", "count": 8,      count expands to gpu0..gpu7
 *                  "flops": 9.3e12,                peak FLOP/s
 *                  "memory": 16e9,                 bytes
 *                  "mem_bandwidth": 7.32e11,       bytes/s (weight update); 0 = free
 *                  "efficiency": { "max": 0.5, "batch_half": 8, "overhead_s": 1e-5 } } ],
 *   "links": [ { "name": "pcie", "endpoints": ["gpu0", ..] or "*",
 *                "bandwidth": 1.2e10, "latency": 5e-6, "shared": true } ]
 * }
 * Efficiency model: a layer of f FLOPs/sample on n samples takes
 *   overhead_s + f*n / (flops * max * n/(n + batch_half))
 * i.e. a fixed per-op overhead plus a throughput that saturates in batch size
 * (half of max at n = batch_half). Measured profiles (seconds at batch b)
 * scale as t(n) = t_b * (n + batch_half) / (b + batch_half), no extra overhead.
 * Links: a transfer of B bytes occupies the link for latency + B/bandwidth.
 * A dedicated link is full duplex: one FIFO resource per direction. A shared
 * link (a PCIe host bus) is one FIFO resource for all of its endpoints and
 * both directions, so concurrent transfers serialize. Two devices talk over
 * the first listed link that has both as endpoints; so a link of two
 * endpoints whose devices an earlier link already joins (either direction)
 * is an error, as is a repeated link name (a bus of more endpoints may
 * overlap earlier links: it still serves its other pairs).
 *
 * Ownership: mdl_topology_load allocates, mdl_topology_free (NULL ok) frees.
 */
#ifndef MDL_TOPOLOGY_H
#define MDL_TOPOLOGY_H

#include "models/mdl_profile.h"
#include "models/mdl_mempolicy.h"

struct mdl_device {
    char name[MDL_NAME_MAX];
    double flops;
    double memory;
    double mem_bandwidth;
    double eff_max;
    double batch_half;
    double overhead_s;
};

struct mdl_link {
    char name[MDL_NAME_MAX];
    int n_ends;
    int *ends;          /* device indices */
    double bandwidth;   /* bytes/s */
    double latency;     /* seconds */
    int shared;
};

struct mdl_topology {
    char *path;
    char name[MDL_NAME_MAX];
    double bytes_per_param;
    int n_devices;
    struct mdl_device *devices;
    int n_links;
    struct mdl_link *links;
    /* "memory_policy" (models/mdl_mempolicy.h): optimizer empty when the
     * file gives none; bytes_per_param above is the policy's when it does.
     * Overheads 0 unless given. */
    struct mdl_mempolicy mem;
};

int mdl_topology_load(const char *path, struct mdl_topology **out);
/* The same from memory: text[0..len), errors name `name`. */
int mdl_topology_parse(const char *text, size_t len, const char *name,
                       struct mdl_topology **out);
/* A chain of n identical devices with a dedicated link between neighbours. */
int mdl_topology_chain(int n, const struct mdl_device *proto, double bandwidth,
                       double latency, struct mdl_topology **out);
void mdl_topology_free(struct mdl_topology *t);
/* Index of the link joining devices a and b, or -1. O(links * ends). */
int mdl_topology_link_between(const struct mdl_topology *t, int a, int b);
/* Seconds for one layer op of `cost` (FLOPs/sample or seconds at at_batch)
 * on n samples. */
double mdl_device_op_seconds(const struct mdl_device *d, int measured,
                             double cost, double at_batch, double n);

/* Which time of a layer: forward, backward, or the forward of a
 * re-materialized micro-batch (nothing stashed; = forward unless the
 * profile measured it). */
enum mdl_op { MDL_OP_FWD, MDL_OP_BWD, MDL_OP_FWD_NOSTASH };
/* Seconds for one op of layer l on n samples on device d: FLOP profiles as
 * mdl_device_op_seconds; measured profiles with the calibrated extensions
 * of mdl_profile.h (fixed intercept, points) when present, else
 * mdl_device_op_seconds. O(points). */
double mdl_layer_seconds(const struct mdl_device *d, int measured,
                         const struct mdl_layer *l, enum mdl_op op, double n);

#endif
