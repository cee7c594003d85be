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
 *                  "efficiency": { "max": 0.5, "batch_half": 8, "overhead_s": 1e-5 },
 *                  "messages": { "send_s": 1e-6, "send_bandwidth": 8e9,    optional:
 *                                "recv_s": 1e-6, "recv_bandwidth": 8e9 } } ],  below
 *   "switches": [ { "name": "plx0",                 optional: fabric nodes that
 *                   "kind": "pcie-switch",          route but compute nothing
 *                   "comment": ".." } ],            (kind, comment: free text)
 *   "links": [ { "name": "pcie", "endpoints": ["gpu0", ..] or "*",
 *                "bandwidth": 1.2e10,              bytes/s per direction
 *                "latency": 5e-6,                  s, propagation (default 0)
 *                "overhead_s": 1e-6,               s per message (default 0)
 *                "shared": true,                   one resource for all
 *                "comment": ".." } ]
 * }
 * Messages (optional, all 0 by default): a device whose compute thread
 * copies each message it sends or receives (the CPU runtime's workers,
 * runtime/rt_chan.h) spends send_s + bytes / send_bandwidth of its compute
 * stream right after the op that made a message's data, and recv_s + bytes
 * / recv_bandwidth right before the op that reads one (every schedule's
 * lists put a send right after its producer and a receive right before its
 * consumer); that time is not busy (sched/sch_cost.h: pre and post parts of
 * F and B). A bandwidth of 0 means no per-byte part. The link's transfer
 * then starts when the send's copy ends.
 * Efficiency model: a layer of f FLOPs/sample on n samples takes
 *   overhead_s + f*n / (flops * max * n/(n + batch_half))
 * i.e. a fixed per-op overhead plus a throughput that saturates in batch size
 * (half of max at n = batch_half). Measured profiles (seconds at batch b)
 * scale as t(n) = t_b * (n + batch_half) / (b + batch_half), no extra overhead.
 * Nodes: the devices (index 0..n_devices-1, in file order after `count`
 * expands them), then the switches (n_devices + i). Endpoints name nodes;
 * "*" means every device (not the switches). Node names are unique across
 * both; a switch that no link names is an error.
 * Links: a dedicated link (two endpoints) is full duplex: one FIFO resource
 * per direction. A shared link (a PCIe host bus, any number of endpoints)
 * is one FIFO resource for all of its endpoints and both directions, so
 * concurrent transfers on it serialize.
 * Routes: devices a and b talk over the fewest-hop path of links, each link
 * one hop (a bus too), that passes through switches only (devices never
 * forward; model a TPU chip's ICI router as a switch with its cores on
 * it). Ties: hop by hop from a, the smallest link index (file order) that
 * gets one hop closer to b, to the lowest-index node it offers. So a link
 * that joins a and b directly always wins, and among those the first
 * listed: the old "first listed link" rule, unchanged. A link of two
 * endpoints whose nodes an earlier link already joins (either direction)
 * is an error, as is a repeated link name (a bus of more endpoints may
 * overlap earlier links: it still serves its other pairs). Pairs no route
 * joins load (a file may hold two machines); the engine reports "no link
 * between X and Y" only when a schedule puts neighbouring stages on them.
 * A route holds at most MDL_ROUTE_MAX hops.
 * Transfers (sim_engine.c), one exact model, cut-through: a transfer of B
 * bytes on route h1..hn holds every hop's resource at once for
 * B / min(bandwidth) (the bytes stream through at the slowest hop), and
 * the receiver has the data sum(latency + overhead_s) after the bytes
 * finished crossing: latency never holds a link, so back-to-back messages
 * on one link take latency + 2 B/bandwidth. Acquisition is all at once and
 * FIFO on every resource: a transfer that cannot start joins the queue of
 * each of its resources at the same instant and starts when it heads all
 * of them and all are free. Queues are thus ordered by one global request
 * order, so no cycle of waits (deadlock) can form; the price is
 * head-of-line blocking (a free resource waits for the queued transfer at
 * its head). Equal times resolve in event order (the engine's seq), so
 * runs repeat bit for bit.
 *
 * A device may also give the op-level fields of models/mdl_device.h
 * ("preset", "precision", "matrix_flops", ...); a FLOP profile's layer with
 * work by op class is then timed by that model, every other layer by the
 * rule above.
 *
 * Ownership: mdl_topology_load allocates, mdl_topology_free (NULL ok) frees.
 */
#ifndef MDL_TOPOLOGY_H
#define MDL_TOPOLOGY_H

#include "models/mdl_device.h"
#include "models/mdl_profile.h"
#include "models/mdl_mempolicy.h"

/* Above this a message's fixed cost is a typo (seconds). */
#define MDL_MSG_MAX_S 1.0

struct mdl_device {
    char name[MDL_NAME_MAX];
    double flops;
    double memory;
    double mem_bandwidth;
    double eff_max;
    double batch_half;
    double overhead_s;
    double msg_send_s, msg_send_bw, msg_recv_s, msg_recv_bw; /* "messages" (above) */
    struct mdl_devmodel model; /* op-level fields (models/mdl_device.h) */
};

struct mdl_link {
    char name[MDL_NAME_MAX];
    int n_ends;
    int *ends;          /* node indices: devices 0..n_devices-1, then switches */
    double bandwidth;   /* bytes/s */
    double latency;     /* seconds: propagation */
    double overhead_s;  /* seconds per message (0 when absent) */
    int shared;
};

/* A non-compute node of the fabric: PCIe switch, root complex / CPU socket,
 * NVSwitch, host memory, a TPU chip's ICI router. Node index n_devices + i. */
struct mdl_switch {
    char name[MDL_NAME_MAX];
};

/* One hop of a route: a link and the resource it holds (0 for a shared
 * link; for a dedicated one 0 from ends[0] to ends[1], 1 the other way). */
struct mdl_hop {
    int link, dir;
};

#define MDL_ROUTE_MAX 32
/* The route between two devices (mdl_topology_route). */
struct mdl_route {
    int n_hops;
    struct mdl_hop hops[MDL_ROUTE_MAX];
    double bandwidth;   /* least bandwidth of the hops */
    double latency;     /* sum of the hops' latency + overhead_s */
    int too_long;       /* on failure: 1 when a route joins them but takes more
                         * than MDL_ROUTE_MAX hops, 0 when none does */
};

struct mdl_topology {
    char *path;
    char name[MDL_NAME_MAX];
    double bytes_per_param;
    int n_devices;
    struct mdl_device *devices;
    int n_links;
    struct mdl_link *links;
    int n_switches;                 /* 0 unless "switches" is given */
    struct mdl_switch *switches;
    /* "memory_policy" (models/mdl_mempolicy.h): optimizer empty when the
     * file gives none; bytes_per_param above is the policy's when it does.
     * Overheads 0 unless given. */
    struct mdl_mempolicy mem;
    /* Incidence index (built by the loaders, mdl_topology_index): each
     * node's links in link order, inc[inc_first[v] .. inc_first[v + 1]).
     * Used only while links, n_links and the node count are those it was
     * built for; a topology edited after (tests, calibration) falls back
     * to scanning the links. */
    int *inc_first, *inc;
    const struct mdl_link *inc_links;
    int inc_n_links, inc_nodes;
};

/* path: a file, or a bundled topology's name (models/mdl_preset.h). */
int mdl_topology_load(const char *path, struct mdl_topology **out);
/* The same from memory: text[0..len), errors name `name`. */
int mdl_topology_parse(const char *text, size_t len, const char *name,
                       struct mdl_topology **out);
/* For an error found after loading (the engine's): rc, with the current
 * message "<t->path>: <JSON path>: rest" given the line and column of that
 * JSON path in the file (re-read, only now) when t came from one. */
int mdl_topology_error_at(int rc, const struct mdl_topology *t);
/* A chain of n identical devices with a dedicated link between neighbours. */
int mdl_topology_chain(int n, const struct mdl_device *proto, double bandwidth,
                       double latency, struct mdl_topology **out);
void mdl_topology_free(struct mdl_topology *t);
/* (Re)builds the incidence index above: 0, or PS_ENOMEM. O(ends). */
int mdl_topology_index(struct mdl_topology *t);
/* The same lists, new (the caller frees both), for a topology as it is. */
int mdl_topology_incidence_new(const struct mdl_topology *t, int **first, int **inc);
/* The index when it matches the topology as it is now, else NULL (and
 * *first NULL). */
const int *mdl_topology_incidence(const struct mdl_topology *t, const int **first);
/* Index of the first listed link joining nodes a and b, or -1.
 * O(degree(a) + degree(b)) with the index, else O(links * ends). */
int mdl_topology_link_between(const struct mdl_topology *t, int a, int b);
/* The first field in which devices a and b differ, as the topology file
 * names it ("flops", "memory", ...; "op-level model" for the preset's
 * fields), or NULL when they are alike in all but the name. */
const char *mdl_device_differs(const struct mdl_device *a, const struct mdl_device *b);
/* Name of node i: a device (i < n_devices) or a switch. */
const char *mdl_topology_node_name(const struct mdl_topology *t, int i);
/* The route from device a to device b (a != b) by the rule above: 0, or
 * -PS_EINVAL naming both devices when none joins them ("no link or route
 * between") or the route is longer than MDL_ROUTE_MAX hops (r->too_long). Computed from
 * the links on each call (tests edit topologies in memory): a direct link
 * in O(links * ends), else a breadth-first search in O(nodes + ends). */
int mdl_topology_route(const struct mdl_topology *t, int a, int b, struct mdl_route *r);
/* The transfer from device a to b of a pipeline of D devices and its copies
 * in R replicas (replica r's from r * D + a to r * D + b), all at one
 * moment (replicas run alike, tied by their all-reduce): the copies that
 * cross one link (a shared link, or a direction of a dedicated one) go
 * over it back to back, so they take *occ, the busiest link's sum of
 * bytes / each copy's route bandwidth, and deliver after *lat, the longest
 * copy's route latency. rts[R] gets each copy's route. 0; the router's
 * error (PS_EINVAL naming both devices and the replica), or PS_ENOMEM.
 * With R = 1: replica 0's bytes / bandwidth and latency. */
int mdl_route_copies(const struct mdl_topology *t, int D, int R, int a, int b, double bytes,
                     struct mdl_route *rts, double *occ, double *lat);
/* The hop of r whose link has the least bandwidth (the first such): the
 * link a too slow transfer is named by (it sets r->bandwidth). */
const struct mdl_link *mdl_route_slowest(const struct mdl_topology *t,
                                         const struct mdl_route *r);
/* Seconds for one layer op of `cost` (FLOPs/sample or seconds at at_batch)
 * on n samples. */
double mdl_device_op_seconds(const struct mdl_device *d, int measured,
                             double cost, double at_batch, double n);

/* Which time of a layer: forward, backward, or of a re-materialized
 * micro-batch its forward (nothing stashed), its recompute and its
 * backward (each = forward, forward, backward unless the profile measured
 * it: fwd_nostash_ms, recomp_ms, bwd_remat_ms). */
enum mdl_op { MDL_OP_FWD, MDL_OP_BWD, MDL_OP_FWD_NOSTASH, MDL_OP_RECOMP, MDL_OP_BWD_REMAT };
/* Seconds for one op of layer l on n samples on device d: FLOP profiles as
 * mdl_device_op_seconds; measured profiles with the calibrated extensions
 * of mdl_profile.h (fixed intercept, points) when present, else
 * mdl_device_op_seconds. O(points). */
double mdl_layer_seconds(const struct mdl_device *d, int measured,
                         const struct mdl_layer *l, enum mdl_op op, double n);
/* The ratio of a layer's recompute to its forward (op MDL_OP_RECOMP), or
 * of its backward after a recompute to its backward (MDL_OP_BWD_REMAT), at
 * n samples (models/mdl_profile.h: interpolated between the measured sizes,
 * constant beyond); 1 for a layer that gives none. */
double mdl_layer_remat_ratio(const struct mdl_layer *l, enum mdl_op op, double n);
/* The time of op MDL_OP_RECOMP (MDL_OP_BWD_REMAT) of layer l at n samples
 * given its forward (backward) there, t: t times that ratio in a measured
 * profile, else t. mdl_layer_seconds of those ops without timing the
 * forward or backward again (the device model is the costly part of a
 * search). */
double mdl_layer_remat_seconds(int measured, const struct mdl_layer *l, enum mdl_op op,
                               double t, double n);
/* The backward of mdl_layer_seconds(.., MDL_OP_BWD, ..) split into the input
 * gradient *b and the weight gradient *w (*b + *w = that backward): the
 * device model's B and W for a layer with work on a device with the
 * op-level fields (models/mdl_device.h); else the wgrad_flops/wgrad_ms
 * share of bwd; else, for a layer with work, the FLOP share
 * mm_wgrad / (mm_dgrad + mm_wgrad + vec_bwd). Returns 1 when one of these
 * set the split, 0 when nothing says (then half and half). O(gemms). */
int mdl_layer_bwd_split(const struct mdl_device *d, int measured, const struct mdl_layer *l,
                        double n, double *b, double *w);
/* The same for op MDL_OP_BWD or MDL_OP_BWD_REMAT (the backward of a
 * re-materialized micro-batch, split in the same shares). */
int mdl_layer_bwd_split_op(const struct mdl_device *d, int measured, const struct mdl_layer *l,
                           enum mdl_op op, double n, double *b, double *w);

#endif
