/* The op-level device model (models/mdl_device.h): the combining rule on
 * hand-computed ops, TPU padding, wave quantization, kernel overhead, B and
 * W through sch_costs, the JSON fields and presets, and devices without the
 * new fields keeping the legacy rule. Oracles are computed here by hand
 * from the rule as the header states it. */
#include "helpers.h"
#include "models/mdl_device.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>

#define DEV(extra)                                                                         \
    "{\"devices\": [{\"name\": \"d\", \"flops\": 1e12, \"memory\": 1e9, "                  \
    "\"mem_bandwidth\": 1e11" extra "}]}"

/* ns, rounded: the exact nanoseconds the engine would see */
static long long ns(double s) { return llround(s * 1e9); }

Test(device, roofline_memory_bound)
{
    /* 100x100x100, fp32: math 2e6 / 1e12 = 2000 ns; operands 3e4 x 4 B =
     * 1.2e5 B at 1e11 x 0.5 = 2400 ns: memory-bound, max = 2400, sum = 4400 */
    struct mdl_topology *t = th_topo(DEV(", \"mem_efficiency\": 0.5"));
    cr_assert(t->devices[0].model.on);
    cr_expect_eq(ns(mdl_device_gemm_s(&t->devices[0], 100, 100, 100, 1)), 2400);
    mdl_topology_free(t);
    t = th_topo(DEV(", \"mem_efficiency\": 0.5, \"combine\": \"sum\""));
    cr_expect_eq(ns(mdl_device_gemm_s(&t->devices[0], 100, 100, 100, 1)), 4400);
    mdl_topology_free(t);
}

Test(device, roofline_math_bound)
{
    /* 1000^3: math 2e9 / 1e12 = 2 ms; memory 1.2e7 B / 5e10 = 0.24 ms */
    struct mdl_topology *t = th_topo(DEV(", \"mem_efficiency\": 0.5"));
    cr_expect_eq(ns(mdl_device_gemm_s(&t->devices[0], 1000, 1000, 1000, 1)), 2000000);
    /* bf16 peak 4e12 and 2-byte operands: math 500 us, memory 120 us */
    mdl_topology_free(t);
    t = th_topo(DEV(", \"mem_efficiency\": 0.5, \"precision\": \"bf16\", "
                    "\"matrix_flops\": {\"bf16\": 4e12}"));
    cr_expect_eq(ns(mdl_device_gemm_s(&t->devices[0], 1000, 1000, 1000, 1)), 500000);
    cr_expect_eq(mdl_device_elem_bytes(&t->devices[0]), 2);
    mdl_topology_free(t);
}

Test(device, vector_roofline)
{
    /* vector peak 1e11: 1e6 FLOPs = 10 us; 4e6 B at 1e11 = 40 us -> 40 us */
    struct mdl_topology *t = th_topo(DEV(", \"vector_flops\": {\"fp32\": 1e11}"));
    cr_expect_eq(ns(mdl_device_vec_s(&t->devices[0], 1e6, 4e6)), 40000);
    cr_expect_eq(ns(mdl_device_vec_s(&t->devices[0], 1e7, 4e5)), 100000);
    mdl_topology_free(t);
}

Test(device, tpu_padding)
{
    /* memory free (no mem_bandwidth): 10x100x200 pads to 16x128x256:
     * 2 x 16 x 128 x 256 = 1048576 FLOPs at 1e12 = 1048.576 ns */
    const char *j = "{\"devices\": [{\"name\": \"t\", \"flops\": 1e12, \"memory\": 1e9, "
                    "\"gemm\": {\"pad\": [8, 128]}}]}";
    struct mdl_topology *t = th_topo(j);
    cr_expect_float_eq(mdl_device_gemm_s(&t->devices[0], 10, 100, 200, 1), 1048576e-12, 1e-18);
    /* already aligned: no padding */
    cr_expect_float_eq(mdl_device_gemm_s(&t->devices[0], 8, 128, 256, 1), 2 * 8 * 128 * 256e-12,
                       1e-18);
    mdl_topology_free(t);
}

Test(device, tpu_pads_a_convolutions_images)
{
    /* A convolution's images are padded to 8, not its rows x images: 49
     * output pixels x 128 channels to 128 filters on 4 images is 49 x 8 =
     * 392 rows (a product of 196 rows would pad to 200). Memory free. */
    const char *j = "{\"devices\": [{\"name\": \"t\", \"flops\": 1e12, \"memory\": 1e9, "
                    "\"gemm\": {\"pad\": [8, 128]}}]}";
    struct mdl_topology *t = th_topo(j);
    const struct mdl_device *d = &t->devices[0];
    struct mdl_gemm g = { .rows = 49, .k = 128, .n = 128, .count = 1, .weight = 1 };
    struct mdl_work w = { .n_gemms = 1, .gemms = &g };
    double f, b, wg, one = 2.0 * 128 * 128 / 1e12; /* s per row of a 128 x 128 product */
    mdl_device_work_s(d, &w, 4, &f, &b, &wg);
    cr_expect_float_eq(f, 200 * one, 1e-18);  /* a dense product: 196 rows pad to 200 */
    cr_expect_float_eq(b, 200 * one, 1e-18);
    cr_expect_float_eq(wg, 256 * one, 1e-18); /* W reduces over the rows: 196 pad to 256 */
    g.conv = 1;
    mdl_device_work_s(d, &w, 4, &f, &b, &wg);
    cr_expect_float_eq(f, 392 * one, 1e-18);
    cr_expect_float_eq(b, 392 * one, 1e-18);
    /* W reduces over those 392 rows: the images are padded once, in every
     * product alike, the reduction not again (a dense product's W pads it) */
    cr_expect_float_eq(wg, 392 * one, 1e-18);
    /* 8 images: nothing to pad, the same as a dense product */
    mdl_device_work_s(d, &w, 8, &f, &b, &wg);
    cr_expect_float_eq(f, 392 * one, 1e-18);
    /* A GPU device (no "pad") ignores the mark. */
    const char *gj = "{\"devices\": [{\"name\": \"g\", \"flops\": 1e12, \"memory\": 1e9}]}";
    struct mdl_topology *gt = th_topo(gj);
    mdl_device_work_s(&gt->devices[0], &w, 4, &f, &b, &wg);
    cr_expect_float_eq(f, 2.0 * 196 * 128 * 128 / 1e12, 1e-18);
    mdl_topology_free(gt);
    mdl_topology_free(t);
}

Test(device, wave_quantization)
{
    /* 4 units at 4e12 (1e12 each), 128x128 tiles, K = 64: a tile takes
     * 2 x 128 x 128 x 64 / 1e12 = 2097.152 ns. 256 x 384 -> 2 x 3 = 6 tiles,
     * 2 waves; 129 x 128 -> 2 tiles, 1 wave; count 2 -> 12 tiles, 3 waves */
    const char *j = "{\"devices\": [{\"name\": \"g\", \"flops\": 4e12, \"memory\": 1e9, "
                    "\"gemm\": {\"tile\": [128, 128], \"units\": 4}}]}";
    struct mdl_topology *t = th_topo(j);
    const struct mdl_device *d = &t->devices[0];
    double tile = 2.0 * 128 * 128 * 64 / 1e12;
    cr_expect_float_eq(mdl_device_gemm_s(d, 256, 64, 384, 1), 2 * tile, 1e-18);
    cr_expect_float_eq(mdl_device_gemm_s(d, 129, 64, 128, 1), tile, 1e-18);
    cr_expect_float_eq(mdl_device_gemm_s(d, 256, 64, 384, 2), 3 * tile, 1e-18);
    cr_expect_float_eq(mdl_device_gemm_s(d, 1, 64, 1, 1), tile, 1e-18);
    mdl_topology_free(t);
}

Test(device, split_k_fills_idle_units)
{
    /* 4 units at 1e12 each, 128x128 tiles, no memory term. One 128 x 128
     * output tile with K = 4096 leaves 3 units idle: K is cut into
     * floor(4/1) = 4 slices of 1024, one wave of 4 tiles, a quarter of the
     * unsplit time. K = 256: 2 slices of 128 (3 or 4 cost 128 each too, and
     * the fewer is taken). Two tiles: 2 slices each. Four tiles fill the
     * units: no split. */
    const char *j = "{\"devices\": [{\"name\": \"g\", \"flops\": 4e12, \"memory\": 1e9, "
                    "\"gemm\": {\"tile\": [128, 128], \"units\": 4}}]}";
    struct mdl_topology *t = th_topo(j);
    const struct mdl_device *d = &t->devices[0];
    double tk = 2.0 * 128 * 128 / 1e12; /* one tile on one unit, per unit of K */
    cr_expect_float_eq(mdl_device_split_max(d, 1), 4, 0);
    cr_expect_float_eq(mdl_device_gemm_s(d, 128, 4096, 128, 1), tk * 1024, 1e-18);
    cr_expect_float_eq(mdl_device_gemm_s(d, 128, 256, 128, 1), tk * 128, 1e-18);
    cr_expect_float_eq(mdl_device_split_max(d, 2), 2, 0);
    cr_expect_float_eq(mdl_device_gemm_s(d, 256, 4096, 128, 1), tk * 2048, 1e-18);
    cr_expect_float_eq(mdl_device_split_max(d, 4), 1, 0);
    cr_expect_float_eq(mdl_device_gemm_s(d, 256, 4096, 256, 1), tk * 4096, 1e-18);
    /* a slice costs at least 128 of K: K = 255 in 2 slices is 128 (it was
     * not split, at 255, while K = 256 was: the larger product twice as
     * fast, helper-137), K = 100 is not split (any slice would cost 128) */
    cr_expect_float_eq(mdl_device_gemm_s(d, 128, 255, 128, 1), tk * 128, 1e-18);
    cr_expect_float_eq(mdl_device_gemm_s(d, 128, 100, 128, 1), tk * 100, 1e-18);
    cr_expect_float_eq(mdl_device_split_depth(100, 2), 128, 0);
    cr_expect_float_eq(mdl_device_split_depth(100, 1), 100, 0);
    /* A weight gradient's shape: 576 x 64 output (5 tiles) over K = 200704
     * rows on 28 units: 5 slices, one wave of 25 tiles. */
    const char *j28 = "{\"devices\": [{\"name\": \"g\", \"flops\": 28e12, \"memory\": 1e9, "
                      "\"gemm\": {\"tile\": [128, 128], \"units\": 28}}]}";
    struct mdl_topology *t28 = th_topo(j28);
    const struct mdl_device *d28 = &t28->devices[0];
    cr_expect_float_eq(mdl_device_split_max(d28, 5), 5, 0);
    cr_expect_float_eq(mdl_device_gemm_s(d28, 576, 200704, 64, 1), tk * 200704 / 5, 1e-15);
    /* Untiled devices never split. */
    const char *jp = "{\"devices\": [{\"name\": \"g\", \"flops\": 4e12, \"memory\": 1e9, "
                     "\"gemm\": {\"pad\": [8, 128]}}]}";
    struct mdl_topology *tp = th_topo(jp);
    cr_expect_float_eq(mdl_device_split_max(&tp->devices[0], 1), 1, 0);
    mdl_topology_free(tp);
    mdl_topology_free(t28);
    mdl_topology_free(t);
}

/* Every device preset of devices.json (a test below checks each loads). */
static const char *const presets[] = { "tpu-v2-core", "tpu-v3-core", "p100-pcie-16gb",
                                       "v100-pcie", "v100-sxm2", "a100-sxm-80gb",
                                       "h100-sxm", "tesla-p40", "titan-x-pascal", "gtx-1080",
                                       "gtx-1080-ti", "cpu-epyc-zen3-core" };

/* A topology of one device, the bundled preset name. */
static struct mdl_topology *preset_topo(const char *name)
{
    cr_assert_eq(setenv("PIPESIM_DATA", "models/topologies", 1), 0);
    char j[256];
    snprintf(j, sizeof j, "{\"devices\": [{\"name\": \"x\", \"preset\": \"%s\"}]}", name);
    return th_topo(j);
}

/* More work is never faster: a product's time never falls as its rows M or
 * its reduction K grow, on every tiled GPU preset (helper-137: split-K's
 * most slices of at least 128 made K = 256 twice as fast as K = 255, and
 * a batch of 4 faster than one of 3 on a generated GPT). */
Test(device, a_product_never_gets_faster_with_more_work)
{
    int tiled = 0;
    for (size_t f = 0; f < sizeof presets / sizeof *presets; f++) {
        struct mdl_topology *t = preset_topo(presets[f]);
        const struct mdl_device *d = &t->devices[0];
        if (!d->model.tiled) {
            mdl_topology_free(t);
            continue;
        }
        tiled++;
        static const double mn[][2] = { { 128, 128 }, { 64, 64 }, { 576, 64 }, { 2048, 256 },
                                        { 96, 1000 } };
        for (size_t i = 0; i < sizeof mn / sizeof *mn; i++) {
            double prev = 0;
            for (double k = 1; k <= 3000; k++) { /* K grows */
                double s = mdl_device_gemm_s(d, mn[i][0], k, mn[i][1], 1);
                cr_assert_geq(s, prev, "%s: %gx%gx%g took %g s, K - 1 %g s", presets[f],
                              mn[i][0], k, mn[i][1], s, prev);
                prev = s;
            }
            prev = 0;
            for (double m = 1; m <= 3000; m++) { /* M grows, K = 196 */
                double s = mdl_device_gemm_s(d, m, 196, mn[i][1], 1);
                cr_assert_geq(s, prev, "%s: %gx196x%g took %g s, M - 1 %g s", presets[f], m,
                              mn[i][1], s, prev);
                prev = s;
            }
        }
        mdl_topology_free(t);
    }
    cr_expect_eq(tiled, 9, "the GPU presets");
}

Test(device, the_fastest_tile_shape)
{
    /* 4 units at 1e12 each, 128x128 or 128x32 tiles, no memory term. An
     * output of 512 x 32 at K = 64: one 128x128 tile per 128 rows wastes
     * 3/4 of it (4 tiles, one wave of 2 x 128 x 128 x 64 / 1e12 s); 128x32
     * tiles: 4 tiles, one wave a quarter as long. 512 x 128: 128x128 is 4
     * tiles in one wave; 128x32 is 16 tiles in 4 waves, the same time, and
     * the first shape wins the tie. */
    const char *j = "{\"devices\": [{\"name\": \"g\", \"flops\": 4e12, \"memory\": 1e9, "
                    "\"gemm\": {\"tile\": [[128, 128], [128, 32]], \"units\": 4}}]}";
    struct mdl_topology *t = th_topo(j);
    const struct mdl_device *d = &t->devices[0];
    cr_assert_eq(d->model.n_tiles, 2);
    cr_expect_eq(d->model.tile_m, 128);
    cr_expect_eq(d->model.tile_n, 128);
    double full = 2.0 * 128 * 128 * 64 / 1e12;
    cr_expect_float_eq(mdl_device_gemm_s(d, 512, 64, 32, 1), full / 4, 1e-18);
    cr_expect_float_eq(mdl_device_gemm_s(d, 512, 64, 128, 1), full, 1e-18);
    char buf[512];
    mdl_device_describe(d, buf, sizeof buf);
    cr_expect(strstr(buf, "the fastest of 128x128 or 128x32 tiles"), "%s", buf);
    mdl_topology_free(t);
    /* The fastest by its whole time, memory included. 30 units at 1e12,
     * 5e10 B/s, fp32; 128 x 128 output at K = 3840. 128x128: one tile, K
     * split in 30, one wave: math 2*128*128*128/(1e12/30) = 125.8 us, but
     * 30 partial sums of 128 x 128 written and read (2*30*65536 B) beside
     * the operands ((128*3840*2 + 128*128)*4 B): 158.6 us of memory. 128x32:
     * four tiles, split 7, one wave: math 2*128*32*(3840/7)/(1e12/30) =
     * 134.8 us, memory 98.3 us. The second is faster; math alone picked the
     * first (158.6 us). 128x128's own best split is 26 (math 145.2 us,
     * memory 148.1 us), still slower. */
    t = th_topo("{\"devices\": [{\"name\": \"g\", \"flops\": 1e12, \"memory\": 1e9, "
                "\"mem_bandwidth\": 5e10, \"precision\": \"fp32\", \"gemm\": {\"tile\": "
                "[[128, 128], [128, 32]], \"units\": 30}}]}");
    d = &t->devices[0];
    cr_expect_float_eq(mdl_device_split_max(d, 1), 30, 0);
    cr_expect_float_eq(mdl_device_split_max(d, 4), 7, 0);
    double operands = (128.0 * 3840 * 2 + 128 * 128) * 4;
    double m1 = 2.0 * 128 * 128 * 128 / (1e12 / 30);
    double b1 = (operands + 2 * 30 * 128 * 128 * 4) / 5e10;
    double m2 = 2.0 * 128 * 32 * (3840.0 / 7) / (1e12 / 30);
    double b2 = (operands + 2 * 7 * 128 * 128 * 4) / 5e10;
    cr_assert_gt(b1, m2);
    cr_assert_gt(m2, b2);
    cr_assert_lt(m1, m2);
    double m26 = 2.0 * 128 * 128 * (3840.0 / 26) / (1e12 / 30);
    double b26 = (operands + 2 * 26 * 128 * 128 * 4) / 5e10;
    cr_assert(m26 < b26 && b26 > m2);
    cr_expect_float_eq(mdl_device_gemm_s(d, 128, 3840, 128, 1), m2, 1e-15);
    mdl_topology_free(t);
    th_topo_fails(DEV(", \"gemm\": {\"tile\": [[128, 128], [0, 32]], \"units\": 4}"),
                  "gemm.tile[1]");
    th_topo_fails(DEV(", \"gemm\": {\"tile\": [[1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], "
                      "[1, 1], [1, 1], [1, 1]], \"units\": 4}"), "at most 8 shapes");
}

Test(device, convolution_reads_its_input_not_im2col)
{
    /* Memory-bound device (1e18 FLOP/s, 1e9 B/s, fp32): a 3 x 3
     * convolution's forward as a 100 x 90 by 90 x 10 product reads an
     * input of 1000 elements, not the 100 x 90 im2col matrix: (1000 + 900 +
     * 1000) x 4 B against (9000 + 900 + 1000) x 4 B. */
    const char *j = "{\"devices\": [{\"name\": \"g\", \"flops\": 1e18, \"memory\": 1e9, "
                    "\"mem_bandwidth\": 1e9, \"precision\": \"fp32\"}]}";
    struct mdl_topology *t = th_topo(j);
    const struct mdl_device *d = &t->devices[0];
    cr_expect_float_eq(mdl_device_conv_s(d, 100, 90, 10, 1, 1000), 2900 * 4 / 1e9, 1e-15);
    cr_expect_float_eq(mdl_device_conv_s(d, 100, 90, 10, 1, 0), 10900 * 4 / 1e9, 1e-15);
    cr_expect_float_eq(mdl_device_gemm_s(d, 100, 90, 10, 1), 10900 * 4 / 1e9, 1e-15);
    /* In a layer's work, every pass of the product reads the input: F, B
     * (dX is the input's size) and W, per sample. */
    struct mdl_gemm g = { .rows = 100, .k = 90, .n = 10, .count = 1, .weight = 1, .in = 1000 };
    struct mdl_work w = { .n_gemms = 1, .gemms = &g };
    double f, b, wg;
    mdl_device_work_s(d, &w, 2, &f, &b, &wg);
    double per = (2 * 1000 + 900 + 200 * 10) * 4 / 1e9;
    cr_expect_float_eq(f, per, 1e-15);
    cr_expect_float_eq(b, per, 1e-15);
    cr_expect_float_eq(wg, per, 1e-15);
    mdl_topology_free(t);
}

Test(device, efficiency_scales_math)
{
    const char *j = "{\"devices\": [{\"name\": \"g\", \"flops\": 1e12, \"memory\": 1e9, "
                    "\"gemm\": {\"efficiency\": 0.5}}]}";
    struct mdl_topology *t = th_topo(j);
    cr_expect_eq(ns(mdl_device_gemm_s(&t->devices[0], 1000, 1000, 1000, 1)), 4000000);
    mdl_topology_free(t);
}

static struct mdl_profile *work_profile(const char *csv)
{
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_parse(csv, strlen(csv), "<p>", &p), 0, "%s", ps_errmsg());
    return p;
}

Test(device, layer_ops_and_kernel_overhead)
{
    /* gemms 10x20x30 at n = 2 (M = 20), memory free, 1e12:
     * F = 20x20x30 = 24 ns, B = 20x30x20 = 24 ns, W = 20x20x30 = 24 ns;
     * + vec_fwd 1000 x 2 / 1e12 = 2 ns; kernels 3/1/2 x 1 us */
    struct mdl_topology *t = th_topo("{\"devices\": [{\"name\": \"g\", \"flops\": 1e12, "
                                     "\"memory\": 1e9, \"kernel_overhead_s\": 1e-6}]}");
    struct mdl_profile *p = work_profile(
        "name,fwd_flops,params,out_bytes,stash_bytes,gemms,vec_fwd_flops,kernels_fwd,"
        "kernels_bwd,kernels_wgrad\n"
        "l,1,0,0,0,10x20x30,1000,3,1,2\n");
    const struct mdl_device *d = &t->devices[0];
    const struct mdl_layer *l = &p->layers[0];
    cr_expect_eq(ns(mdl_layer_seconds(d, 0, l, MDL_OP_FWD, 2)), 24 + 2 + 3000);
    cr_expect_eq(ns(mdl_layer_seconds(d, 0, l, MDL_OP_BWD, 2)), 24 + 1000 + 24 + 2000);
    double b, w;
    cr_expect_eq(mdl_layer_bwd_split(d, 0, l, 2, &b, &w), 1);
    cr_expect_eq(ns(b), 1024);
    cr_expect_eq(ns(w), 2024);
    /* through sch_costs: B and W apart */
    struct sch_partition *part;
    cr_assert_eq(sch_partition_uniform(1, 1, &part), 0);
    struct sch_costs *c;
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 2, &c), 0, "%s", ps_errmsg());
    cr_expect_eq(c->st[0].bwd, 3048);
    cr_expect_eq(c->st[0].bwd_input, 1024);
    cr_expect_eq(c->st[0].bwd_weight, 2024);
    sch_costs_free(c);
    sch_partition_free(part);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

Test(device, activation_product_backward_is_input_gradients)
{
    /* 'a': c x n products of ROWS x K x N; B has two, W none. 4x8x4*2a at
     * n = 3: 6 products; F = 6 x 2 x 4 x 8 x 4 = 1536 FLOPs; B = 2 x 1536 */
    struct mdl_topology *t = th_topo("{\"devices\": [{\"name\": \"g\", \"flops\": 1e12, "
                                     "\"memory\": 1e9, \"precision\": \"fp32\"}]}");
    struct mdl_profile *p = work_profile("name,fwd_flops,params,out_bytes,stash_bytes,gemms\n"
                                         "attn,1,0,0,0,4x8x4*2a\n");
    double f, b, w;
    mdl_device_work_s(&t->devices[0], p->layers[0].work, 3, &f, &b, &w);
    cr_expect_float_eq(f, 1536e-12, 1e-20);
    cr_expect_float_eq(b, 3072e-12, 1e-20);
    cr_expect_eq(w, 0);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

Test(device, wgrad_column_share)
{
    /* legacy device (th_chain: 1e12, efficiency 1): bwd 2e9 FLOPs at n = 1 =
     * 2 ms; wgrad_flops 0.5e9 -> W = 0.5 ms, B = 1.5 ms */
    struct mdl_topology *t = th_chain(1, 0, 1e10, 0);
    struct mdl_profile *p = work_profile("name,fwd_flops,bwd_flops,wgrad_flops,params,"
                                         "out_bytes,stash_bytes\n"
                                         "l,1e9,2e9,0.5e9,0,0,0\n");
    struct sch_partition *part;
    cr_assert_eq(sch_partition_uniform(1, 1, &part), 0);
    struct sch_costs *c;
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 1, &c), 0, "%s", ps_errmsg());
    cr_expect_eq(c->st[0].bwd, 2000000);
    cr_expect_eq(c->st[0].bwd_input, 1500000);
    cr_expect_eq(c->st[0].bwd_weight, 500000);
    sch_costs_free(c);
    mdl_profile_free(p);
    /* measured: wgrad_ms 0.25 of bwd_ms 1 at at_batch 4 */
    p = work_profile("name,fwd_ms,bwd_ms,wgrad_ms,at_batch,params,out_bytes,stash_bytes\n"
                     "l,0.5,1,0.25,4,0,0,0\n");
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 4, &c), 0, "%s", ps_errmsg());
    cr_expect_eq(c->st[0].bwd_input, 750000);
    cr_expect_eq(c->st[0].bwd_weight, 250000);
    sch_costs_free(c);
    mdl_profile_free(p);
    /* work on a legacy device: the FLOP share mm_wgrad / (dgrad + wgrad + vec) */
    p = work_profile("name,fwd_flops,bwd_flops,params,out_bytes,stash_bytes,mm_dgrad_flops,"
                     "mm_wgrad_flops,vec_bwd_flops\n"
                     "l,1e9,2e9,0,0,0,1e9,0.5e9,0.5e9\n");
    cr_assert_eq(sch_costs_new(p, t, part, NULL, 1, &c), 0, "%s", ps_errmsg());
    cr_expect_eq(c->st[0].bwd_weight, 500000);
    cr_expect_eq(c->st[0].bwd_input, 1500000);
    sch_costs_free(c);
    mdl_profile_free(p);
    sch_partition_free(part);
    mdl_topology_free(t);
}

Test(device, no_work_keeps_legacy_rule)
{
    /* a model device and a layer without work: overhead + f n / (flops max) */
    struct mdl_topology *t = th_topo("{\"devices\": [{\"name\": \"g\", \"flops\": 1e12, "
                                     "\"memory\": 1e9, \"kernel_overhead_s\": 1, "
                                     "\"efficiency\": {\"max\": 0.5, \"overhead_s\": 1e-6}}]}");
    struct mdl_profile *p = work_profile("name,fwd_flops,params,out_bytes,stash_bytes\n"
                                         "l,1e6,0,0,0\n");
    const struct mdl_device *d = &t->devices[0];
    cr_expect_eq(mdl_layer_seconds(d, 0, &p->layers[0], MDL_OP_FWD, 4),
                 mdl_device_op_seconds(d, 0, 1e6, 0, 4));
    cr_expect_eq(ns(mdl_layer_seconds(d, 0, &p->layers[0], MDL_OP_FWD, 4)), 1000 + 8000);
    double b, w;
    cr_expect_eq(mdl_layer_bwd_split(d, 0, &p->layers[0], 4, &b, &w), 0);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

Test(device, legacy_device_has_no_model)
{
    /* Files whose devices give only the legacy fields keep the legacy rule;
     * those that name a preset of devices.json use the model. */
    const char *files[] = { "models/topologies/cpu-2core.json",
                            "models/topologies/pcie-8gpu.json",
                            "models/topologies/chain-8-ideal.json",
                            "models/topologies/tpu-v3.json",
                            "models/topologies/p100-pcie-8.json",
                            "models/topologies/v100-nvlink-8.json" };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        struct mdl_topology *t;
        cr_assert_eq(mdl_topology_load(files[i], &t), 0, "%s", ps_errmsg());
        for (int d = 0; d < t->n_devices; d++)
            cr_expect_eq(t->devices[d].model.on, i >= 3, "%s", files[i]);
        mdl_topology_free(t);
    }
}

/* pad_large: from 64 images a convolution takes XLA's other layout, images
 * to 128 and features to 8; below, images to 8 and features to 128 (the
 * features are the reduction Cin x kh x kw and the filters, in all three
 * products). 49 pixels, K = 100, N = 100. Memory free. */
Test(device, tpu_pads_a_large_batch_convolution_the_other_way)
{
    const char *j = "{\"devices\": [{\"name\": \"t\", \"flops\": 1e12, \"memory\": 1e9, "
                    "\"gemm\": {\"pad\": [8, 128], \"pad_large\": {\"from\": 64, "
                    "\"pad\": [128, 8]}}}]}";
    struct mdl_topology *t = th_topo(j);
    const struct mdl_device *d = &t->devices[0];
    struct mdl_gemm g = { .rows = 49, .k = 100, .n = 100, .count = 1, .weight = 1, .conv = 1 };
    struct mdl_work w = { .n_gemms = 1, .gemms = &g };
    double f, b, wg;
    mdl_device_work_s(d, &w, 64, &f, &b, &wg); /* 64 images -> 128, 100 -> 104 */
    double large = 2.0 * 49 * 128 * 104 * 104 / 1e12;
    cr_expect_float_eq(f, large, 1e-18);
    cr_expect_float_eq(b, large, 1e-18);
    cr_expect_float_eq(wg, large, 1e-18);
    mdl_device_work_s(d, &w, 63, &f, &b, &wg); /* 63 images -> 64, 100 -> 128 */
    double small = 2.0 * 49 * 64 * 128 * 128 / 1e12;
    cr_expect_float_eq(f, small, 1e-18);
    cr_expect_float_eq(b, small, 1e-18);
    cr_expect_float_eq(wg, small, 1e-18);
    g.conv = 0; /* a dense product keeps [8, 128] at any batch: 49 x 64 = 3136 rows */
    mdl_device_work_s(d, &w, 64, &f, &b, &wg);
    cr_expect_float_eq(f, 2.0 * 3136 * 128 * 128 / 1e12, 1e-18);
    char desc[512];
    cr_assert_gt(mdl_device_describe(d, desc, sizeof desc), 0);
    cr_expect(strstr(desc, "from 64 images on to 128 and 8"), "%s", desc);
    mdl_topology_free(t);
    th_topo_fails(DEV(", \"gemm\": {\"pad_large\": {\"from\": 64, \"pad\": [128, 8]}}"),
                  "'pad_large' needs 'pad'");
    th_topo_fails(DEV(", \"gemm\": {\"pad\": [8, 128], \"pad_large\": {\"from\": 0, "
                      "\"pad\": [128, 8]}}"), "pad_large.from: must be a whole number");
    th_topo_fails(DEV(", \"gemm\": {\"pad\": [8, 128], \"pad_large\": {\"pad\": [128, 8]}}"),
                  "needs 'from' and 'pad'");
    th_topo_fails(DEV(", \"gemm\": {\"pad\": [8, 128], \"pad_large\": {\"from\": 64, "
                      "\"pad\": [128]}}"), "pad_large.pad");
    th_topo_fails(DEV(", \"gemm\": {\"pad\": [8, 128], \"pad_large\": {\"from\": 64, "
                      "\"pad\": [128, 8], \"to\": 1}}"), "unknown field 'to'");
}

Test(device, json_errors)
{
    th_topo_fails(DEV(", \"precision\": \"fp8\""), "precision");
    th_topo_fails(DEV(", \"matrix_flops\": {\"int8\": 1}"), "unknown field 'int8'");
    th_topo_fails(DEV(", \"matrix_flops\": {\"fp32\": -1}"), "matrix_flops.fp32");
    th_topo_fails(DEV(", \"mem_efficiency\": 1.5"), "mem_efficiency");
    th_topo_fails(DEV(", \"gemm\": {\"tile\": [128, 128]}"), "'tile' and 'units'");
    th_topo_fails(DEV(", \"gemm\": {\"tile\": [128, 128], \"units\": 4, \"pad\": [8, 128]}"),
                  "excludes");
    th_topo_fails(DEV(", \"gemm\": {\"pad\": [8]}"), "gemm.pad");
    th_topo_fails(DEV(", \"gemm\": {\"waves\": 1}"), "unknown field 'waves'");
    th_topo_fails(DEV(", \"combine\": \"min\""), "combine");
    th_topo_fails(DEV(", \"kernel_overhead\": 1"), "unknown field 'kernel_overhead'");
    th_topo_fails(DEV(", \"kernel_overhead_s\": -1"), "kernel_overhead_s");
}

Test(device, presets_load)
{
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++) {
        struct mdl_topology *t = preset_topo(presets[i]);
        const struct mdl_device *d = &t->devices[0];
        cr_expect(d->model.on, "%s", presets[i]);
        cr_expect_gt(d->flops, 0);
        cr_expect_gt(d->memory, 0);
        cr_expect_eq(d->flops, d->model.mm_peak[d->model.precision], "%s: flops is the "
                     "running precision's matrix peak", presets[i]);
        mdl_topology_free(t);
    }
    /* inline keys override the preset's */
    struct mdl_topology *t = th_topo("{\"devices\": [{\"name\": \"x\", \"preset\": "
                                     "\"a100-sxm-80gb\", \"precision\": \"tf32\", "
                                     "\"memory\": 4e10}]}");
    cr_expect_eq(t->devices[0].model.precision, MDL_TF32);
    cr_expect_eq(t->devices[0].memory, 4e10);
    cr_expect_eq(t->devices[0].model.units, 108);
    /* a precision set over the preset's brings its own matrix peak as "flops",
     * which times layers without work (it kept the bf16 312 TFLOP/s) */
    cr_expect_eq(t->devices[0].flops, 156e12);
    mdl_topology_free(t);
    static const struct { const char *preset, *prec, *flops; double want; } over[] = {
        { "a100-sxm-80gb", "fp32", NULL, 19.5e12 },
        { "p100-pcie-16gb", "fp16", NULL, 18.7e12 },
        { "a100-sxm-80gb", "fp32", "1e12", 1e12 }, /* a flops of its own stays */
    };
    for (size_t i = 0; i < sizeof over / sizeof *over; i++) {
        char j[256];
        snprintf(j, sizeof j, "{\"devices\": [{\"name\": \"x\", \"preset\": \"%s\", "
                 "\"precision\": \"%s\"%s%s}]}", over[i].preset, over[i].prec,
                 over[i].flops ? ", \"flops\": " : "", over[i].flops ? over[i].flops : "");
        t = th_topo(j);
        cr_expect_eq(t->devices[0].flops, over[i].want, "%s at %s", over[i].preset,
                     over[i].prec);
        mdl_topology_free(t);
    }
    /* a precision the preset has no peak for is refused, unless the topology
     * gives one (helper-115: a P40, FP16 at 1:64, set to fp16 ran at its FP32
     * peak; a V100, no bf16, likewise) */
    th_topo_fails("{\"devices\": [{\"name\": \"x\", \"preset\": \"tesla-p40\", "
                  "\"precision\": \"fp16\"}]}",
                  "devices[0].precision: preset 'tesla-p40' has no fp16 matrix peak "
                  "(matrix_flops gives fp32): set matrix_flops.fp16, or flops, beside it");
    th_topo_fails("{\"devices\": [{\"name\": \"x\", \"preset\": \"v100-pcie\", "
                  "\"precision\": \"bf16\"}]}", "has no bf16 matrix peak");
    /* an unknown precision is named as one (helper-117: it got the advice above) */
    th_topo_fails("{\"devices\": [{\"name\": \"x\", \"preset\": \"a100-sxm-80gb\", "
                  "\"precision\": \"fp8\"}]}",
                  "devices[0].precision: must be \"fp32\", \"tf32\", \"bf16\" or \"fp16\"");
    t = th_topo("{\"devices\": [{\"name\": \"x\", \"preset\": \"tesla-p40\", "
                "\"precision\": \"fp16\", \"matrix_flops\": {\"fp16\": 1.8e11}}]}");
    cr_expect_eq(t->devices[0].flops, 1.8e11);
    mdl_topology_free(t);
    t = th_topo("{\"devices\": [{\"name\": \"x\", \"preset\": \"tesla-p40\", "
                "\"precision\": \"fp16\", \"flops\": 1.8e11}]}");
    cr_expect_eq(t->devices[0].flops, 1.8e11);
    mdl_topology_free(t);
    /* a nested object merges key by key (helper-89: gemm.efficiency alone dropped
     * the preset's tiles, matrix_flops.bf16 alone its fp32 peak) */
    t = th_topo("{\"devices\": [{\"name\": \"x\", \"preset\": \"titan-x-pascal\", "
                "\"gemm\": {\"efficiency\": 0.5}}]}");
    cr_expect_eq(t->devices[0].model.gemm_eff, 0.5);
    cr_expect_eq(t->devices[0].model.n_tiles, 3, "the preset's tiles were dropped");
    cr_expect_eq(t->devices[0].model.units, 28);
    mdl_topology_free(t);
    t = th_topo("{\"devices\": [{\"name\": \"x\", \"preset\": \"a100-sxm-80gb\", "
                "\"precision\": \"fp32\", \"matrix_flops\": {\"bf16\": 300e12}}]}");
    cr_expect_eq(t->devices[0].model.mm_peak[MDL_FP32], 19.5e12);
    cr_expect_eq(t->devices[0].model.mm_peak[MDL_BF16], 300e12);
    cr_expect_eq(t->devices[0].flops, 19.5e12);
    mdl_topology_free(t);
    /* one that is not a number is named as the topology wrote it (helper-96: it was
     * copied to "flops" and named devices[0].flops, a key the file does not hold) */
    th_topo_fails("{\"devices\": [{\"name\": \"x\", \"preset\": \"a100-sxm-80gb\", "
                  "\"matrix_flops\": {\"bf16\": \"x\"}}]}",
                  "devices[0].matrix_flops.bf16: must be a number");
    /* nor one that is not > 0 (helper-98: 0 was named devices[0].flops) */
    th_topo_fails("{\"devices\": [{\"name\": \"x\", \"preset\": \"a100-sxm-80gb\", "
                  "\"matrix_flops\": {\"bf16\": 0}}]}",
                  "devices[0].matrix_flops.bf16: must be > 0, got 0");
    /* the device's own name is never the preset's error (helper-98: a device without
     * one was reported as devices.json's "devices.tesla-p40: missing field 'name'") */
    th_topo_fails("{\"devices\": [{\"preset\": \"tesla-p40\"}]}",
                  "devices[0]: missing field 'name'");
    th_topo_fails("{\"devices\": [{\"name\": \"\", \"preset\": \"tesla-p40\"}]}",
                  "devices[0].name: must be a non-empty string");
    /* the running precision's peak set over the preset's is "flops" too */
    t = th_topo("{\"devices\": [{\"name\": \"x\", \"preset\": \"a100-sxm-80gb\", "
                "\"matrix_flops\": {\"bf16\": 250e12}}]}");
    cr_expect_eq(t->devices[0].flops, 250e12);
    cr_expect_eq(t->devices[0].model.mm_peak[MDL_TF32], 156e12);
    mdl_topology_free(t);
    th_topo_fails("{\"devices\": [{\"name\": \"x\", \"preset\": \"tpu-v9\"}]}",
                  "no device 'tpu-v9'");
}

Test(device, preset_beside_topology)
{
    char dir[128];
    th_tmpdir(dir, sizeof dir, "device");
    th_put(dir, "devices.json", "{\"devices\": {\"mine\": {\"flops\": 2e12, \"memory\": 1e9, "
                                "\"kernel_overhead_s\": 3e-6}}}");
    th_put(dir, "t.json", "{\"devices\": [{\"name\": \"x\", \"count\": 2, \"preset\": "
                          "\"mine\"}]}");
    char path[256];
    snprintf(path, sizeof path, "%s/t.json", dir);
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load(path, &t), 0, "%s", ps_errmsg());
    cr_expect_eq(t->n_devices, 2);
    cr_expect_eq(t->devices[1].flops, 2e12);
    cr_expect_eq(t->devices[1].model.kernel_s, 3e-6);
    mdl_topology_free(t);
    th_put(dir, "devices.json", "{\"devices\": {\"mine\": {\"flops\": 2e12, \"memory\": 1e9, "
                                "\"name\": \"y\"}}}");
    cr_expect_lt(mdl_topology_load(path, &t), 0);
    /* at its line and column, as a preset's other field errors (helper-89) */
    cr_expect(strstr(ps_errmsg(), "devices.json:1:53: devices.mine.name: a preset cannot set "
                                  "'name'"), "%s", ps_errmsg());
    th_put(dir, "devices.json", "{\"devices\": {\"mine\": [1]}}");
    cr_expect_eq(mdl_topology_load(path, &t), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), "devices.json:1:14: devices.mine: must be an object"), "%s",
              ps_errmsg());
    th_put(dir, "devices.json", "{\n  \"devices\": []}");
    cr_expect_eq(mdl_topology_load(path, &t), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), "devices.json:2:3: devices: must be an object"), "%s",
              ps_errmsg());
    th_put(dir, "devices.json", "[]");
    cr_expect_eq(mdl_topology_load(path, &t), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), "devices.json:1:1: must be an object with"), "%s",
              ps_errmsg());
    th_put(dir, "devices.json", "{\"devices\": {\"mine\": {\"flops\": 2e12, \"memory\": 1e9, "
                                "\"gemm\": {\"units\": 3}}}}");
    cr_expect_lt(mdl_topology_load(path, &t), 0);
    th_sh("rm -rf %s", dir);
}

Test(device, op_class_split_adds_up)
{
    /* One math-bound weight product (1000x1000x1000 per sample at n = 1),
     * one 'i' product (no input gradient), one activation product, a
     * memory-bound vector part and kernels: the classes add up to
     * 2F + B + W (a re-computed forward counts twice), and each part lands
     * in its class by hand: the big product's three GEMMs are matrix. */
    struct mdl_topology *t = th_topo(DEV(", \"mem_efficiency\": 0.5, \"kernel_overhead_s\": 1e-6"));
    const struct mdl_device *d = &t->devices[0];
    struct mdl_gemm g[3] = { { 1000, 1000, 1000, 1, 1, 0, 0, 0 }, { 10, 30, 20, 1, 2, 0, 0, 0 },
                             { 64, 32, 64, 4, 0, 0, 0, 0 } };
    struct mdl_work w = { .vec_fwd = 1e3, .vec_bwd = 2e3, .bytes_fwd = 1e6, .bytes_bwd = 3e6,
                          .kernels_fwd = 3, .kernels_bwd = 4, .kernels_wgrad = 2,
                          .n_gemms = 3, .gemms = g };
    double f, b, wg, cls[MDL_SPLIT_N] = { 0 };
    mdl_device_work_s(d, &w, 2, &f, &b, &wg);
    mdl_device_work_split(d, &w, 2, 2, cls);
    double sum = 0;
    for (int k = 0; k < MDL_SPLIT_N; k++)
        sum += cls[k];
    cr_expect(fabs(sum - (2 * f + b + wg)) <= 1e-12 * sum, "%.17g vs %.17g", sum,
              2 * f + b + wg);
    cr_expect_eq(ns(cls[MDL_SPLIT_OVERHEAD]), 2 * 3000 + 4000 + 2000);
    /* vector: memory-bound (1e6 B / 5e10 = 20 us vs 1e3 FLOPs / 1e12) */
    cr_expect_eq(cls[MDL_SPLIT_VECTOR], 0);
    /* the 2000x1000x1000 products at n = 2: 4 ms each, F twice + B + W */
    cr_expect_geq(cls[MDL_SPLIT_MATRIX], 4 * 4e-3);
    mdl_topology_free(t);
}

/* A topology's input hash (stamps, sweep caches) covers the presets it
 * takes: a devices.json changed alone changes it; a topology without a
 * preset hashes as its file. */
Test(device, input_hash_covers_presets)
{
    char dir[64], topo[128], plain[128], h1[17], h2[17], h3[17];
    th_tmpdir(dir, sizeof dir, "inhash");
    th_put(dir, "t.json", "{\"devices\": [{\"name\": \"x\", \"preset\" : \"tesla-p40\"}]}");
    th_put(dir, "p.json", DEV(""));
    cr_assert_eq(th_sh("cp models/topologies/devices.json %s/", dir), 0);
    snprintf(topo, sizeof topo, "%s/t.json", dir);
    snprintf(plain, sizeof plain, "%s/p.json", dir);
    cr_assert_eq(mdl_topology_input_hash(topo, h1), 0, "%s", ps_errmsg());
    cr_assert_eq(th_sh("sed -i 's/\"tile\": 2/\"tile\": 4/' %s/devices.json", dir), 0);
    cr_assert_eq(mdl_topology_input_hash(topo, h2), 0, "%s", ps_errmsg());
    cr_expect_str_neq(h1, h2, "a changed preset left the hash as it was");
    cr_assert_eq(mdl_topology_input_hash(plain, h3), 0);
    cr_assert_eq(ps_file_hash(plain, h1), 0);
    cr_expect_str_eq(h1, h3);
    /* the key as the loader reads it, escapes decoded */
    char esc[128];
    th_put(dir, "e.json", "{\"devices\": [{\"name\": \"x\", \"pr\\u0065set\": \"tesla-p40\"}]}");
    snprintf(esc, sizeof esc, "%s/e.json", dir);
    cr_assert_eq(mdl_topology_input_hash(esc, h1), 0, "%s", ps_errmsg());
    cr_assert_eq(ps_file_hash(esc, h3), 0);
    cr_expect_str_neq(h1, h3, "the escaped preset key was not seen");
    /* without a devices.json beside it or in the data folder: the loader's
     * error; the plain topology still hashes */
    cr_assert_eq(th_sh("rm %s/devices.json", dir), 0);
    cr_assert_eq(setenv("PIPESIM_DATA", dir, 1), 0);
    cr_expect_lt(mdl_topology_input_hash(topo, h3), 0);
    cr_expect(strstr(ps_errmsg(), "no devices.json beside it"), "%s", ps_errmsg());
    cr_expect_eq(mdl_topology_input_hash(plain, h3), 0);
    cr_expect_lt(mdl_topology_input_hash("/nonexistent/t.json", h3), 0);
    th_sh("rm -rf %s", dir);
}

/* Memory figures written in words are the files' numbers: cpu-2core.json's comment names
 * the per-worker memory its devices have (it said "24 GiB split between the two workers"
 * beside 12.8e9 B each, 23.84 GiB in all), and SOURCES.md's MemTotal for the
 * cpu-epyc-zen3-core preset, in /proc/meminfo's kB (KiB), halves to the preset's memory
 * (it read "24.7 GB", the kB count taken for bytes). */
Test(device, memory_figures_in_the_words_are_the_files)
{
    json_t *f = json_load_file("models/topologies/cpu-2core.json", 0, NULL);
    cr_assert(f);
    const char *c = json_string_value(json_object_get(f, "comment"));
    cr_assert(c);
    const char *m = strstr(c, "; memory ");
    cr_assert(m, "%s", c);
    json_t *dev = json_array_get(json_object_get(f, "devices"), 0);
    double per = json_number_value(json_object_get(dev, "memory"));
    cr_expect_eq(strtod(m + 9, NULL), per, "'%.40s' for %g", m, per);
    json_decref(f);
    static char src[1 << 20];
    th_slurp("models/topologies", "SOURCES.md", src, sizeof src);
    const char *row = strstr(src, "\n| cpu-epyc-zen3-core |");
    cr_assert(row);
    const char *mt = strstr(row, "MemTotal ");
    cr_assert(mt && mt < strchr(row + 1, '\n'), "no MemTotal in the row");
    double kb = 0;
    char unit[8] = "";
    cr_assert_eq(sscanf(mt + 9, "%lf %7s", &kb, unit), 2, "'%.40s'", mt);
    cr_expect_str_eq(unit, "kB");
    cr_assert_eq(setenv("PIPESIM_DATA", "models/topologies", 1), 0);
    struct mdl_topology *t = th_topo("{\"devices\": [{\"name\": \"x\", \"preset\": "
                                     "\"cpu-epyc-zen3-core\"}]}");
    cr_expect_lt(fabs(kb * 1024 / 2 - t->devices[0].memory), 0.01 * t->devices[0].memory,
                 "half of %.0f KiB is not %g B", kb, t->devices[0].memory);
    mdl_topology_free(t);
}
