/*
 * mdl_device — the op-level device model: what a device does with a layer's
 * work by op class (models/mdl_profile.h, struct mdl_work).
 *
 * JSON (in a topology's device object, all optional; units FLOP/s, bytes/s,
 * seconds; a device that gives none of them keeps the legacy rule of
 * models/mdl_topology.h exactly):
 *   "preset": "NAME"        take every field of NAME from devices.json in
 *                           the topology file's directory, else from
 *                           the data folder's topologies/devices.json
 *                           (base/ps_data.h); inline keys override
 *   "precision": "fp32" | "tf32" | "bf16" | "fp16"
 *                           what the matrix units run (default fp32); the
 *                           activation element size follows: 4 bytes for
 *                           fp32 and tf32 (tf32 keeps fp32 storage), 2 for
 *                           bf16 and fp16
 *   "matrix_flops": { "fp32": x, "tf32": x, "bf16": x, "fp16": x }
 *                           peak matrix FLOP/s per precision (any subset;
 *                           the running precision's entry absent = "flops")
 *   "vector_flops": { same keys }  peak vector/elementwise FLOP/s (absent =
 *                           "flops")
 *   "mem_efficiency": f     achievable fraction of mem_bandwidth, (0, 1]
 *                           (default 1)
 *   "kernel_overhead_s": t  launch/dispatch cost per kernel (default 0)
 *   "gemm": { "tile": [Tm, Tn] | [[Tm, Tn], ...], "units": U,
 *                                               GPU tile/wave quantization:
 *                           one tile shape, or up to 8 the library picks
 *                           the fastest of for each product
 *             "pad": [Pr, Pf],                  TPU padding
 *             "pad_large": { "from": B, "pad": [Pi, Pf2] }  a convolution of
 *                           B images or more pads them to Pi and its
 *                           features to Pf2 instead (XLA's other layout;
 *                           needs "pad")
 *             "efficiency": e }                 sustained fraction of the
 *                           matrix peak on full tiles/waves, (0, 1]
 *                           (default 1); "tile"/"units" come together and
 *                           exclude "pad"
 *   "combine": "max" | "sum"  memory and math time within a kernel class
 *                           (default "max")
 *   "activation_bytes": s   element size of matrix operands in memory,
 *                           (0, 16] (default: from precision; a TPU keeps
 *                           fp32 tensors in HBM and feeds its MXU bf16)
 *   "winograd": { "tile": m }   the library has fused Winograd kernels
 *                           F(m x m, 3 x 3) for 3 x 3 stride-1
 *                           convolutions (gemms marked "cw"), m a whole
 *                           number in [2, 6], used when the device runs
 *                           fp32 (cuDNN's FP32 kernels; other precisions
 *                           keep the direct product); absent or null:
 *                           none (null turns a preset's off). Not with
 *                           "pad".
 * In devices.json: { "comment": .., "devices": { "NAME": { fields .. } } };
 * a preset may hold any device field but "name", "count" and "preset".
 *
 * The rule. An op of a layer on n samples (F, B or W of mdl_device_work_s):
 *   each matrix product (rows M = ROWS * n, reduction K, output N, COUNT c):
 *     math  = GPU:  waves * 2*Tm*Tn*D / (P*e/U), waves = ceil(T * S / U),
 *                   T = c * ceil(M/Tm) * ceil(N/Tn) tiles, S the split-K
 *                   slices (1 to mdl_device_split_max: 1 unless T < U),
 *                   D = K / S, at least 128 once split
 *                   (mdl_device_split_depth); of every tile shape and S,
 *                   the least time, its math and its memory (the operands
 *                   and its own split-K partial sums) combined by the rule
 *                   below (every shape at the same e: the library's
 *                   heuristic assumed to find the fastest kernel)
 *             TPU:  c * 2 * pad(M,Pr) * pad(K,Pf) * pad(N,Pf) / (P*e); a
 *                   convolution ('c') pads its images and features
 *                   instead, alike in its three products: M = ROWS *
 *                   pad(n,Pr), K and N (and, in its weight gradient, the
 *                   output K and N) to Pf, the reduction over images
 *                   not again; from pad_large.from images on, Pi and Pf2
 *                   for Pr and Pf (XLA tiles a convolution's batch and
 *                   feature dimensions in one of two layouts by the
 *                   module's most common batch: SOURCES.md); its
 *                   operands' bytes count the padded images too
 *             else: c * 2*M*K*N / (P*e)
 *     mem   = (c * (M*K + K*N + M*N) + [S > 1] 2*S*c*M*N) * s / (BW * f)
 *             (s = element bytes; the second term: split-K's partial sums)
 *     t     = max(math, mem)   (or math + mem with "combine": "sum")
 *   the vector class of the op: max(vec_flops*n / V, bytes*n / (BW * f))
 *   op time = sum of its products' t + vector t + kernels * kernel_overhead_s
 * P = matrix_flops[precision], V = vector_flops[precision], BW =
 * mem_bandwidth (0 = memory is free: mem = 0). F's products are the
 * layer's gemms. A weight product (ROWS x K by a K x N weight) has rows
 * M = ROWS * n; its input gradient is M x N x K (in B) and its weight
 * gradient K x M x N (in W). An activation product ('a', attention scores)
 * is c * n products of ROWS x K x N (one per sample and head); its two
 * backward products, ROWS x N x K and K x ROWS x N, are both in B. A layer
 * that gives mm_* FLOPs but no gemms has its matrix FLOPs timed at P*e
 * with no shape effects and no operand traffic.
 * Why max within a class and a sum across kernels: NVIDIA's "GPU
 * Performance Background User's Guide" gives a kernel's time as
 * max(T_mem, T_math) when its memory and math overlap; the kernels of one
 * stream run one after another, so their times add, and each pays its
 * launch. "sum" is the no-overlap upper bound.
 *
 * Fast 3 x 3 convolutions. On a device with "winograd" { "tile": m }, each
 * pass (F, B, W) of a "cw" product (Cin = K/9, Cout = N, output side q =
 * sqrt(ROWS)) also has a Winograd time, and the pass takes the smaller of
 * the two (the library's choice among its algorithms, assumed to find the
 * faster one, as with tile shapes). Winograd's minimal filtering (Lavin and
 * Gray, "Fast Algorithms for Convolutional Neural Networks", arXiv
 * 1509.09308) computes an m x m output tile from an (m+2) x (m+2) input
 * tile with (m+2)^2 multiplies per (input, output) channel pair, against
 * 9 m^2 direct (F(2 x 2, 3 x 3): 16 against 36): the products become
 * (m+2)^2 independent products of P x Cin by Cin x Cout, P = n *
 * ceil(q/m)^2 tiles (B: P x Cout by Cout x Cin; W: Cin x P by P x Cout),
 * timed by the product rule above (tiles, waves, efficiency). Fused: the
 * transforms run inside the kernel, so its memory traffic is the direct
 * product's (input, filter, output) and their additions (for m = 2, 32
 * per input tile and channel against 16 Cout multiply-adds) are not
 * timed.
 *
 * Each product is its own kernel: its waves are not shared with another
 * product's (one tile per unit per wave). B of a layer is the sum of its
 * input-gradient products + vec_bwd/bytes_bwd + kernels_bwd; W the weight-
 * gradient products + kernels_wgrad (no vector work of its own).
 *
 * A device with these fields and a layer without work (only fwd_flops /
 * bwd_flops) keeps the legacy rule with "flops" and "efficiency" (presets
 * set "flops" to the running precision's matrix peak): all of its work is
 * matrix work at that rule. A measured profile (fwd_ms) keeps its measured
 * times on any device; its work columns only split B from W (the FLOP
 * share, mdl_layer_bwd_split in models/mdl_topology.h).
 * A value in a preset that fails validation is reported at the topology's
 * device (devices[i].FIELD) with the topology's path; a bad preset file,
 * a missing preset and a preset that sets name/count/preset name
 * devices.json.
 *
 * Ownership: none (plain values inside struct mdl_device). Cost: O(gemms)
 * per op; parsing O(keys).
 */
#ifndef MDL_DEVICE_H
#define MDL_DEVICE_H

#include "models/mdl_profile.h"

enum mdl_prec { MDL_FP32, MDL_TF32, MDL_BF16, MDL_FP16, MDL_PREC_N };

enum mdl_combine { MDL_COMBINE_MAX, MDL_COMBINE_SUM };

/* The op-level fields of a device; on = 0: none given (legacy rule). */
#define MDL_TILES_MAX 8
struct mdl_devmodel {
    int on;
    int precision;                  /* enum mdl_prec */
    double mm_peak[MDL_PREC_N];     /* 0 = not given */
    double vec_peak[MDL_PREC_N];
    double mem_eff;                 /* (0, 1] */
    double kernel_s;
    int tiled;                      /* tiles, units given */
    double tile_m, tile_n, units;   /* tile_m, tile_n: the first shape */
    int n_tiles;                    /* shapes the library chooses among */
    double tiles[MDL_TILES_MAX][2];
    int padded;                     /* pad_rows, pad_feat given */
    double pad_rows, pad_feat;
    double pad_large_from;          /* 0: none; else a convolution of as many images
                                       or more pads them to pad_large_imgs and its
                                       features to pad_large_feat */
    double pad_large_imgs, pad_large_feat;
    double gemm_eff;                /* (0, 1] */
    int combine;                    /* enum mdl_combine */
    double elem_bytes;              /* activation_bytes; 0 = from precision */
    double wino_m;                  /* winograd.tile: F(m x m, 3 x 3); 0 = none */
};

struct mdl_device;

/* Device keys this module reads, NULL-terminated, for the loader's unknown-
 * key check. */
extern const char *const mdl_device_keys[];
/* The names of the precisions ("fp32", ...). */
/* Where the time of a layer's F (times `forwards`: 2 with a recompute), B
 * and W goes on device d at n samples, added to cls: matrix products and
 * vector kernels bound by their math, kernels bound by memory, per-kernel
 * overhead. The classes sum to forwards*F + B + W of mdl_device_work_s
 * (within rounding). For reports (studies/stu_breakdown.c). */
enum { MDL_SPLIT_MATRIX, MDL_SPLIT_VECTOR, MDL_SPLIT_MEMORY, MDL_SPLIT_OVERHEAD, MDL_SPLIT_N };
void mdl_device_work_split(const struct mdl_device *d, const struct mdl_work *w, double n,
                           double forwards, double cls[MDL_SPLIT_N]);
extern const char *const mdl_prec_names[MDL_PREC_N + 1]; /* NULL-terminated */
/* Split-K (NVIDIA CUTLASS, docs "Efficient GEMM in CUDA", Parallelized
 * Reductions: "Split K - reduction across threadblocks"; example
 * 06_splitK_gemm: M = N = 128, K = 4096 as one tile would occupy one SM of
 * 84): a tiled product whose `tiles` output tiles leave units idle may have
 * its reduction K cut into S slices, S up to floor(units / tiles)
 * (mdl_device_split_max; 1 for an untiled device or tiles >= units), run as
 * extra tiles; the partial sums are written and read back once more. A
 * slice costs at least MDL_SPLIT_K_MIN of K (an assumption: one tile edge
 * of K per slice, its pipeline's fill; mdl_device_split_depth), and the
 * product takes the fastest S, math and memory combined (the library's
 * heuristic assumed to find it, as the tile shape), so its time never
 * falls as K grows. The weight gradient of a convolution (K = batch x H x
 * W, M x N the small filter) is the case it serves. */
#define MDL_SPLIT_K_MIN 128.0
double mdl_device_split_max(const struct mdl_device *d, double tiles);
/* The K one slice of S costs: K / S, at least MDL_SPLIT_K_MIN once split. */
double mdl_device_split_depth(double k, double split);
/* One sentence naming the rule and figures that time ops on d (the op-level
 * model's peaks, memory, per-kernel cost, GEMM rule; or the legacy rule's),
 * for reports. snprintf's contract: the length it needed. */
int mdl_device_describe(const struct mdl_device *d, char *buf, size_t n);

#ifdef MDL_DEVICE_JSON
#include <jansson.h>
/* devices.json as one topology load read it: parsed on the first device
 * that names a preset, then shared by the others (it was read and parsed
 * again for each). Zeroed before the load; mdl_preset_cache_free after. */
struct mdl_preset_cache {
    json_t *root;
    char file[4096];
    char *text;   /* the file's text (after a byte-order mark), for error positions */
    size_t len;
};
void mdl_preset_cache_free(struct mdl_preset_cache *pc);
/* When o has "preset", *merged = a new object: the preset's fields from
 * devices.json (see above; read into pc once), then o's own keys over them
 * (the caller decrefs); else *merged = NULL. topo_path names the topology. */
int mdl_device_resolve(const char *topo_path, const char *where, json_t *o,
                       struct mdl_preset_cache *pc, json_t **merged);
/* The preset o names as a device of its own (a new object: the preset's
 * fields, o's name; the caller decrefs), with *where its place in the presets
 * file, "devices.NAME"; NULL when o names none or out of memory. For an error
 * of a merged device: the checks that fail on this alone are the preset's. */
json_t *mdl_device_preset_alone(const struct mdl_preset_cache *pc, json_t *o, char *where,
                                size_t n);
/* ps_json_error_at for a message about the presets file: its line and column. */
int mdl_preset_error_at(const struct mdl_preset_cache *pc, int rc);
/* Reads the op-level fields of o into d->model (after the legacy fields). */
int mdl_device_parse(const char *path, const char *where, json_t *o, struct mdl_device *d);
#endif

/* The devices.json a topology at topo_path takes its presets from: beside
 * it, else the data folder's topologies/ (base/ps_data.h); one error when
 * neither exists. */
int mdl_device_presets_file(const char *topo_path, char *file, size_t fsz);
/* FNV-1a 64 of the topology file and, when one of its devices takes a
 * "preset", of the devices.json it resolves to: what a topology's
 * predictions depend on, for stamps and caches (a preset changed alone
 * changes it). A preset without a devices.json to resolve it: that error,
 * as the loader's; a file that is not JSON hashes alone (the loader
 * refuses it). */
int mdl_topology_input_hash(const char *topo_path, char hex[17]);

/* Element bytes of the device's precision (4 or 2). */
double mdl_device_elem_bytes(const struct mdl_device *d);
/* Seconds of one matrix product of M x K by K x N, c times, on d. */
double mdl_device_gemm_s(const struct mdl_device *d, double m, double k, double n, double c);
/* The same for a convolution's forward as an implicit GEMM whose left
 * operand is its input tensor of `in` elements (0: m x k). */
double mdl_device_conv_s(const struct mdl_device *d, double m, double k, double n, double c,
                         double in);
/* Seconds of a vector class: flops and bytes in total. */
double mdl_device_vec_s(const struct mdl_device *d, double flops, double bytes);
/* F, B and W seconds of a layer's work on n samples (d->model.on). */
void mdl_device_work_s(const struct mdl_device *d, const struct mdl_work *w, double n,
                       double *f, double *b, double *wg);

#endif
