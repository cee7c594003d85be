/* Fast 3 x 3 convolutions: the profile's "cw" products (loaded, checked,
 * written back, merged apart by the generators), the device's "winograd"
 * field and its timing rule on hand-computed products (models/mdl_device.h:
 * (m+2)^2 products of P x Cin by Cin x Cout, P = images x ceil(side/m)^2,
 * each pass the faster of Winograd and direct), and the VGG generator
 * (models/mdl_vgg.h) that marks every convolution. Oracles by hand. */
#include "helpers.h"
#include "models/mdl_device.h"
#include "models/mdl_genwork.h"

#include <math.h>

/* 1e12 FLOP/s, memory free (no mem_bandwidth), products at their exact
 * shape: a product's time is 2 M K N c / 1e12. */
#define DEV(extra)                                                                         \
    "{\"devices\": [{\"name\": \"d\", \"flops\": 1e12, \"memory\": 1e9" extra "}]}"
#define WINO(m) DEV(", \"winograd\": {\"tile\": " #m "}")

static long long ns(double s) { return llround(s * 1e9); }

/* A 3 x 3 stride-1 convolution of cin to cout channels on side x side,
 * as a profile's one gemm (dgrad: it has an input gradient). */
static struct mdl_gemm conv3(double side, double cin, double cout, int wino)
{
    struct mdl_gemm g = { .rows = side * side, .k = 9 * cin, .n = cout, .count = 1,
                          .weight = 1, .in = cin * side * side, .conv = 1, .wino = wino };
    return g;
}

static void times(const char *json, struct mdl_gemm g, double n, long long out[3])
{
    struct mdl_topology *t = th_topo(json);
    struct mdl_work w = { .n_gemms = 1, .gemms = &g };
    double f, b, wg;
    mdl_device_work_s(&t->devices[0], &w, n, &f, &b, &wg);
    out[0] = ns(f * 1e3); /* picoseconds: the oracles are whole */
    out[1] = ns(b * 1e3);
    out[2] = ns(wg * 1e3);
    mdl_topology_free(t);
}

Test(winograd, f2x2_on_an_even_side)
{
    /* 8 x 8, 4 -> 8 channels, 2 images. Direct: 2 x (64 x 2) x 36 x 8 =
     * 73728 FLOPs = 73728 ps per pass. F(2x2, 3x3): 16 products of P = 2 x
     * (8/2)^2 = 32 rows x 4 x 8: 16 x 2 x 32 x 4 x 8 = 32768 ps (2.25x
     * fewer); B 32 x 8 x 4 and W 4 x 32 x 8, the same. */
    long long t[3];
    times(WINO(2), conv3(8, 4, 8, 1), 2, t);
    cr_expect_eq(t[0], 32768);
    cr_expect_eq(t[1], 32768);
    cr_expect_eq(t[2], 32768);
    /* unmarked, or on a device without the field: direct */
    times(WINO(2), conv3(8, 4, 8, 0), 2, t);
    cr_expect_eq(t[0], 73728);
    cr_expect_eq(t[2], 73728);
    times(DEV(""), conv3(8, 4, 8, 1), 2, t);
    cr_expect_eq(t[0], 73728);
    cr_expect_eq(t[1], 73728);
}

Test(winograd, tiles_cover_an_odd_side)
{
    /* 7 x 7: ceil(7/2)^2 = 16 tiles per image, as for 8 x 8: P = 32,
     * 32768 ps; direct 2 x 98 x 36 x 8 = 56448. F(4x4): ceil(7/4)^2 = 4
     * tiles, P = 8, 36 products: 36 x 2 x 8 x 4 x 8 = 18432. */
    long long t[3];
    times(WINO(2), conv3(7, 4, 8, 1), 2, t);
    cr_expect_eq(t[0], 32768);
    times(WINO(4), conv3(7, 4, 8, 1), 2, t);
    cr_expect_eq(t[0], 18432);
    cr_expect_eq(t[2], 18432);
}

Test(winograd, direct_where_it_is_faster)
{
    /* 1 x 1 output: F(6x6) spends 64 multiplies on one tile where direct
     * spends 9: direct 2 x 2 x 36 x 8 = 1152 ps, Winograd 64 x 2 x 2 x 4 x 8
     * = 8192: the direct time stands, in every pass. */
    long long t[3];
    times(WINO(6), conv3(1, 4, 8, 1), 2, t);
    cr_expect_eq(t[0], 1152);
    cr_expect_eq(t[1], 1152);
    cr_expect_eq(t[2], 1152);
}

Test(winograd, image_input_has_no_input_gradient)
{
    struct mdl_gemm g = conv3(8, 4, 8, 1);
    g.weight = 2; /* reads the model's input */
    long long t[3];
    times(WINO(2), g, 2, t);
    cr_expect_eq(t[0], 32768);
    cr_expect_eq(t[1], 0);
    cr_expect_eq(t[2], 32768);
}

Test(winograd, memory_traffic_is_the_direct_products)
{
    /* mem_bandwidth 1e6 B/s: memory-bound either way. 8 x 8, 4 -> 8, 1
     * image: input 256 + filter 288 + output 512 = 1056 elements x 4 B =
     * 4224 B = 4.224 ms, fused Winograd the same: the tie keeps direct. */
    long long t[3];
    times(DEV(", \"mem_bandwidth\": 1e6, \"winograd\": {\"tile\": 2}"), conv3(8, 4, 8, 1), 1,
          t);
    cr_expect_eq(t[0], 4224000000LL);
    times(DEV(", \"mem_bandwidth\": 1e6"), conv3(8, 4, 8, 1), 1, t);
    cr_expect_eq(t[0], 4224000000LL);
}

Test(winograd, op_class_split_matches_the_times)
{
    struct mdl_topology *t = th_topo(WINO(2));
    struct mdl_gemm g = conv3(8, 4, 8, 1);
    struct mdl_work w = { .n_gemms = 1, .gemms = &g };
    double cls[MDL_SPLIT_N] = { 0 };
    mdl_device_work_split(&t->devices[0], &w, 2, 2, cls);
    cr_expect_eq(ns(cls[MDL_SPLIT_MATRIX] * 1e3), 4 * 32768); /* 2 F + B + W */
    mdl_topology_free(t);
}

Test(winograd, json_field)
{
    struct mdl_topology *t = th_topo(WINO(4));
    cr_expect_eq(t->devices[0].model.wino_m, 4);
    char buf[512];
    mdl_device_describe(&t->devices[0], buf, sizeof buf);
    cr_expect(strstr(buf, "Winograd F(4x4, 3x3)"), "%s", buf);
    mdl_topology_free(t);
    th_topo_fails(WINO(1), "winograd.tile: must be a whole number in [2, 6]");
    th_topo_fails(WINO(7), "winograd.tile");
    th_topo_fails(WINO(2.5), "winograd.tile");
    th_topo_fails(WINO("2"), "winograd.tile");
    th_topo_fails(DEV(", \"winograd\": 2"), "winograd: must be an object");
    th_topo_fails(DEV(", \"winograd\": {}"), "missing field 'tile'");
    th_topo_fails(DEV(", \"winograd\": {\"tile\": 2, \"fused\": true}"), "unknown field 'fused'");
    th_topo_fails(DEV(", \"gemm\": {\"pad\": [8, 128]}, \"winograd\": {\"tile\": 2}"),
                  "excludes gemm 'pad'");
}

Test(winograd, fp32_only_and_null_turns_it_off)
{
    long long t[3];
    /* fp16 at the same peak: the direct product, 2-byte operands */
    times(DEV(", \"precision\": \"fp16\", \"matrix_flops\": {\"fp16\": 1e12}, "
              "\"winograd\": {\"tile\": 2}"), conv3(8, 4, 8, 1), 2, t);
    cr_expect_eq(t[0], 73728);
    cr_assert_eq(setenv("PIPESIM_DATA", "models/topologies", 1), 0);
    struct mdl_topology *tp = th_topo("{\"devices\": [{\"name\": \"x\", \"preset\": "
                                      "\"tesla-p40\", \"winograd\": null}]}");
    cr_expect_eq(tp->devices[0].model.wino_m, 0);
    mdl_topology_free(tp);
}

Test(winograd, presets)
{
    cr_assert_eq(setenv("PIPESIM_DATA", "models/topologies", 1), 0);
    static const struct { const char *name; double m; } want[] = {
        { "tesla-p40", 2 }, { "titan-x-pascal", 2 }, { "gtx-1080", 2 }, { "gtx-1080-ti", 2 },
        { "p100-pcie-16gb", 2 },
        { "v100-pcie", 2 }, { "v100-sxm2", 2 }, { "a100-sxm-80gb", 0 }, { "h100-sxm", 0 },
        { "tpu-v2-core", 0 }, { "tpu-v3-core", 0 }, { "cpu-epyc-zen3-core", 0 },
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char j[160];
        snprintf(j, sizeof j, "{\"devices\": [{\"name\": \"x\", \"preset\": \"%s\"}]}",
                 want[i].name);
        struct mdl_topology *t = th_topo(j);
        cr_expect_eq(t->devices[0].model.wino_m, want[i].m, "%s", want[i].name);
        mdl_topology_free(t);
    }
}

static const char *const HDR = "name,fwd_flops,params,out_bytes,stash_bytes,gemms\n";

Test(winograd, profile_column)
{
    char csv[256];
    snprintf(csv, sizeof csv, "%sc,1,0,0,0,64x36x8/256cw 64x36x8/256c 10x20x30\n", HDR);
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_parse(csv, strlen(csv), "<p>", &p), 0, "%s", ps_errmsg());
    const struct mdl_work *w = p->layers[0].work;
    cr_assert_eq(w->n_gemms, 3);
    cr_expect(w->gemms[0].conv && w->gemms[0].wino);
    cr_expect(w->gemms[1].conv && !w->gemms[1].wino);
    cr_expect(!w->gemms[2].conv && !w->gemms[2].wino);
    /* written back as read */
    char dir[64], path[96], buf[2048];
    th_tmpdir(dir, sizeof dir, "wino");
    snprintf(path, sizeof path, "%s/p.csv", dir);
    cr_assert_eq(mdl_profile_write(p, path), 0, "%s", ps_errmsg());
    th_slurp(dir, "p.csv", buf, sizeof buf);
    cr_expect(strstr(buf, "64x36x8/256cw 64x36x8/256c 10x20x30"), "%s", buf);
    remove(path);
    rmdir(dir);
    mdl_profile_free(p);
}

static void profile_fails(const char *gemms, const char *needle)
{
    char csv[256];
    snprintf(csv, sizeof csv, "%sc,1,0,0,0,%s\n", HDR, gemms);
    struct mdl_profile *p;
    cr_assert_lt(mdl_profile_parse(csv, strlen(csv), "<p>", &p), 0, "accepted %s", gemms);
    cr_expect(strstr(ps_errmsg(), needle), "message '%s' lacks '%s'", ps_errmsg(), needle);
}

Test(winograd, profile_errors)
{
    /* K not a multiple of 9; w without c; w on an activation product */
    profile_fails("64x32x8/256cw", "<p>:2:11: field 'gemms': '64x32x8/256cw'");
    profile_fails("64x36x8w", "'64x36x8w' is not");
    profile_fails("64x36x8cw", "'64x36x8cw' is not"); /* no /IN */
    profile_fails("64x36x8acw", "'64x36x8acw' is not");
    profile_fails("64x36x8cww", "'64x36x8cww' is not");
}

Test(winograd, genwork_keeps_marked_products_apart)
{
    struct mdl_genwork gw;
    mdl_genwork_init(&gw);
    mdl_genwork_conv3(&gw, 64, 4, 8, 1, 1, 256);
    mdl_genwork_conv(&gw, 64, 36, 8, 1, 1, 256); /* the same shape, unmarked */
    mdl_genwork_conv3(&gw, 64, 4, 8, 2, 1, 256);
    cr_assert_eq(gw.w.n_gemms, 2);
    cr_expect(gw.g[0].wino && gw.g[0].conv);
    cr_expect_eq(gw.g[0].count, 3);
    cr_expect_eq(gw.g[0].k, 36);
    cr_expect(!gw.g[1].wino);
    cr_expect_eq(gw.w.mm_fwd, 4 * 2 * 64 * 36 * 8);
}

Test(winograd, vgg_generator)
{
    /* torchvision's counts: 138,357,544 and 143,667,240; layers: per conv
     * a ReLU, 5 pools, fc6-fc8 with two ReLUs and dropouts */
    static const struct { const char *spec; double params; int layers, convs; } want[] = {
        { "vgg:depth=11", 132863336, 8 * 2 + 5 + 7, 8 },
        { "vgg:depth=16", 138357544, 13 * 2 + 5 + 7, 13 },
        { "vgg:depth=19", 143667240, 16 * 2 + 5 + 7, 16 },
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        struct mdl_profile *p = th_model(want[i].spec);
        cr_expect_eq(mdl_profile_params(p), want[i].params, "%s", want[i].spec);
        cr_expect_eq(p->n_layers, want[i].layers, "%s", want[i].spec);
        int convs = 0;
        for (int l = 0; l < p->n_layers; l++) {
            const struct mdl_layer *ly = &p->layers[l];
            if (strcmp(ly->kind, "conv"))
                continue;
            convs++;
            cr_assert_eq(ly->work->n_gemms, 1);
            const struct mdl_gemm *g = &ly->work->gemms[0];
            cr_expect(g->conv && g->wino, "%s", ly->name);
            cr_expect_eq(g->weight, convs == 1 ? 2 : 1, "%s: the image has no gradient",
                         ly->name);
            cr_expect_eq(g->in * 9, g->rows * g->k, "%s: stride 1, padding 1", ly->name);
        }
        cr_expect_eq(convs, want[i].convs);
        mdl_profile_free(p);
    }
    /* VGG-16's forward: 15.47 G multiply-adds per 224 x 224 image, to 0.1 % */
    struct mdl_profile *p = th_model("vgg:depth=16");
    double mm = 0;
    for (int l = 0; l < p->n_layers; l++)
        mm += p->layers[l].work->mm_fwd;
    cr_expect_float_eq(mm / 2, 15.47e9, 15.47e6, "%g", mm / 2);
    /* conv3_1 reads pool2's output, which the pool does not keep; conv3_2
     * reads relu3_1's, which the ReLU keeps */
    cr_expect_eq(th_layer(p, "conv3_1")->stash_shared_bytes, 0);
    cr_expect_eq(th_layer(p, "conv3_2")->stash_shared_bytes, 256.0 * 56 * 56 * 4);
    cr_expect_eq(th_layer(p, "pool3")->stash_shared_bytes, 256.0 * 56 * 56 * 4);
    mdl_profile_free(p);
}

Test(winograd, vgg_bad_specs)
{
    struct mdl_profile *p = NULL;
    cr_expect_lt(mdl_model_open("vgg:depth=17", &p), 0);
    cr_expect(strstr(ps_errmsg(), "depth must be 11, 13, 16 or 19"), "%s", ps_errmsg());
    cr_expect_lt(mdl_model_open("vgg:depth=16,image=100", &p), 0);
    cr_expect(strstr(ps_errmsg(), "multiple of 32"), "%s", ps_errmsg());
    cr_expect_lt(mdl_model_open("vgg:depth=16,width=3", &p), 0);
    cr_expect_lt(mdl_model_open("vgg:", &p), 0);
    cr_expect_null(p);
}
