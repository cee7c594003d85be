/* Tests for the GPipe paper's generated models (mdl_amoeba, mdl_transformer,
 * mdl_paper specs) and the preset topologies under models/topologies/. */
#include "helpers.h"

#include <jansson.h>
#include <unistd.h>
#include <math.h>
#include <string.h>

#include "models/mdl_amoeba.h"
#include "models/mdl_paper.h"
#include "models/mdl_topology.h"
#include "models/mdl_transformer.h"
#include "base/ps_error.h"

static struct mdl_profile *gen(const char *spec)
{
    struct mdl_profile *p = NULL;
    int rc = mdl_paper_from_spec(spec, &p);
    cr_assert_eq(rc, 1, "%s: rc %d: %s", spec, rc, ps_errmsg());
    cr_assert_not_null(p);
    return p;
}


/* GPipe Table 1 parameter counts; the generators must land within 3 %. */
static const struct { const char *spec; double paper; } table1[] = {
    { "amoebanet:L=18,D=208", 82e6 },    { "amoebanet:L=18,D=416", 318e6 },
    { "amoebanet:L=18,D=544", 542e6 },   { "amoebanet:L=36,D=544", 1.05e9 },
    { "amoebanet:L=72,D=512", 1.8e9 },   { "transformer:L=3", 282.2e6 },
    { "transformer:L=13", 785.8e6 },     { "transformer:L=103", 5.3e9 },
    { "transformer:L=415", 21.0e9 },     { "transformer:L=1663", 83.9e9 },
};

Test(paper_models, table1_params_within_3pct)
{
    for (size_t i = 0; i < sizeof table1 / sizeof table1[0]; i++) {
        struct mdl_profile *p = gen(table1[i].spec);
        double got = mdl_profile_params(p), err = fabs(got / table1[i].paper - 1);
        cr_expect(err <= 0.03, "%s: %.0f params vs paper %.3g (%.2f %%)", table1[i].spec, got,
                  table1[i].paper, 100 * err);
        mdl_profile_free(p);
    }
}

/* Exact counts of the architecture as built (torchgpipe's amoebanetd gives
 * the same numbers: 81.5M, 319.0M, 542.7M, 1.06B, 1.84B). */
Test(paper_models, exact_param_counts)
{
    static const struct { const char *spec; double n; } exact[] = {
        { "amoebanet:L=18,D=208", 81505540 },   { "amoebanet:L=72,D=512", 1844858344 },
        { "transformer:L=3", 282182912 },       { "transformer:L=13", 785765632 },
    };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        struct mdl_profile *p = gen(exact[i].spec);
        cr_expect_eq(mdl_profile_params(p), exact[i].n, "%s: %.0f", exact[i].spec,
                     mdl_profile_params(p));
        mdl_profile_free(p);
    }
}

Test(paper_models, layer_structure)
{
    struct mdl_profile *p = gen("amoebanet:L=18,D=256");
    cr_assert_eq(p->n_layers, 24); /* torchgpipe's balance [7, 17] sums to 24 */
    cr_expect_str_eq(p->layers[0].name, "stem1");
    cr_expect_str_eq(p->layers[2].name, "stem3");
    cr_expect_str_eq(p->layers[3].name, "cell1_normal1");
    cr_expect_str_eq(p->layers[9].name, "cell2_reduction");
    cr_expect_str_eq(p->layers[16].name, "cell4_reduction");
    cr_expect_str_eq(p->layers[22].name, "cell5_normal6");
    cr_expect_str_eq(p->layers[23].name, "classify");
    mdl_profile_free(p);
    p = gen("transformer:L=24");
    cr_assert_eq(p->n_layers, 26);
    cr_expect_str_eq(p->layers[0].name, "embed");
    cr_expect_str_eq(p->layers[24].name, "layer24");
    cr_expect_str_eq(p->layers[25].name, "softmax");
    mdl_profile_free(p);
}

/* cell1_normal3 of AmoebaNet-D(18, 208): prev = prev_prev = 4D = 832
 * channels at 28 x 28, c = 208 filters, squeeze c/4 = 52. Counted by hand
 * from the genotype: 2 input maps, 3 conv_1x1, 2 conv_1x7_7x1, 2 max pools,
 * 1 average pool, 2 identities, 5 pair sums. */
Test(paper_models, amoeba_cell_by_hand)
{
    struct mdl_profile *p = gen("amoebanet:L=18,D=208");
    const struct mdl_layer *l = th_layer(p, "cell1_normal3");
    const double hw = 28 * 28, cin = 832, c = 208, q = 52;
    /* ReLU 1/elem, conv 2 per MAC, BN 4/elem, k x k pool 9, add 1 */
    double map = cin * hw + 2 * cin * c * hw + 4 * c * hw;
    double conv1 = c * hw + 2 * c * c * hw + 4 * c * hw;
    double conv17 = (c * hw + 2 * c * q * hw + 4 * q * hw)
                    + 2 * (q * hw + 2 * q * q * 7 * hw + 4 * q * hw)
                    + (q * hw + 2 * q * c * hw + 4 * c * hw);
    double pools = 3 * 9 * c * hw, adds = 5 * c * hw;
    double flops = 2 * map + 3 * conv1 + 2 * conv17 + pools + adds;
    cr_expect_eq(l->fwd, flops, "fwd %.0f, hand %.0f", l->fwd, flops);
    /* backward: twice the forward, but for the pair sums, whose backward is
     * free, and the sums of fanned-out gradients: states 0 and 1 have four
     * readers each, state 2 two (3 + 3 + 1 adds of c maps), the input two
     * (one add of cin maps) */
    double bwd = 2 * flops - 2 * adds + 7 * c * hw + cin * hw;
    cr_expect(fabs(l->bwd - bwd) <= 1e-12 * bwd, "bwd %.0f, hand %.0f", l->bwd, bwd);
    /* conv weights + BN scale/shift */
    double params = 2 * (cin * c + 2 * c) + 3 * (c * c + 2 * c)
                    + 2 * (c * q + 2 * q + 2 * (q * q * 7 + 2 * q) + q * c + 2 * c);
    cr_expect_eq(l->params, params);
    /* stash: ReLU outputs + conv outputs of every relu-conv-bn, the two
     * max-pooled states (state 1 and state 2), FP32, and, as PyTorch's
     * max_pool2d_with_indices keeps them (keep=unfused), each max pool's
     * int64 indices, one per output element (stride 1: c x hw), 8 bytes =
     * two FP32 elements; the average pool's input is state 1, kept already */
    double stash = 2 * (cin * hw + c * hw) + 3 * (2 * c * hw)
                   + 2 * ((c * hw + q * hw) + 2 * (2 * q * hw) + (q * hw + c * hw))
                   + 2 * c * hw + 2 * (2 * c * hw);
    cr_expect_eq(l->stash_bytes, 4 * stash);
    /* out: 4 concatenated states (832 ch) + this cell's input (832 ch) */
    cr_expect_eq(l->out_bytes, 4 * (4 * c * hw + cin * hw));
    /* the last cell feeds only the classifier: no skip tensor crosses */
    const struct mdl_layer *last = th_layer(p, "cell5_normal6");
    cr_expect_eq(last->out_bytes, 4.0 * 16 * 208 * 7 * 7);
    /* stem: 3x3/2 conv on the image, its backward has no data gradient */
    const struct mdl_layer *s = th_layer(p, "stem1");
    double sconv = 2.0 * 3 * 52 * 9 * 112 * 112, srelu = 3.0 * 224 * 224;
    cr_expect_eq(s->fwd, srelu + sconv + 4.0 * 52 * 112 * 112);
    cr_expect_eq(s->bwd, sconv + 2 * 4.0 * 52 * 112 * 112);
    cr_expect_eq(s->params, 3.0 * 52 * 9 + 2 * 52);
    mdl_profile_free(p);
}

/* pool3=avg (torchgpipe's max_pool_3x3 is nn.AvgPool2d): the normal cell's
 * two 3 x 3 max pools (on states 1 and 2) become average pools. Same FLOPs,
 * parameters, forward bytes and kernels; each pool's backward reads the
 * output gradient and writes the input gradient without reading its input
 * (one c x hw tensor less each). Under keep=unfused (PyTorch) both keep
 * their input (avg_pool2d's backward takes it), but no int64 indices (8
 * bytes per output element, c x hw each). */
Test(paper_models, amoeba_pool3_avg_by_hand)
{
    struct mdl_profile *mx = gen("amoebanet:L=18,D=208");
    struct mdl_profile *av = gen("amoebanet:L=18,D=208,pool3=avg");
    const struct mdl_layer *a = th_layer(mx, "cell1_normal3"), *b = th_layer(av, "cell1_normal3");
    const double hw = 28 * 28, c = 208;
    cr_expect_eq(b->fwd, a->fwd);
    cr_expect_eq(b->bwd, a->bwd);
    cr_expect_eq(b->params, a->params);
    cr_expect_eq(b->out_bytes, a->out_bytes);
    cr_expect_eq(b->stash_bytes, a->stash_bytes - 8 * 2 * c * hw);
    cr_expect_eq(b->work->bytes_fwd, a->work->bytes_fwd);
    cr_expect_eq(b->work->bytes_bwd, a->work->bytes_bwd - 4 * 2 * c * hw);
    cr_expect_eq(b->work->kernels_fwd, a->work->kernels_fwd);
    cr_expect_eq(b->work->kernels_bwd, a->work->kernels_bwd);
    cr_expect_eq(mdl_profile_params(av), mdl_profile_params(mx));
    cr_expect(strstr(av->path, "pool3=avg") != NULL, "origin %s", av->path);
    mdl_profile_free(mx);
    mdl_profile_free(av);
}

/* One Transformer-L layer at the paper's sizes, by hand:
 * matmuls 2 S (4 d^2 + 2 d ff) + 4 S^2 d, plus element-wise work. */
Test(paper_models, transformer_layer_by_hand)
{
    struct mdl_profile *p = gen("transformer:L=3");
    const struct mdl_layer *l = th_layer(p, "layer2");
    const double S = 1024, d = 2048, ff = 8192, h = 32;
    double matmul = 2 * S * (4 * d * d + 2 * d * ff) + 4 * S * S * d; /* 111,669,149,696 */
    double elem = 16 * S * d + S * (5 * d + ff) + 6 * h * S * S + S * ff + 2 * S * d;
    cr_expect_eq(matmul, 111669149696.0);
    cr_expect_eq(l->fwd, matmul + elem, "fwd %.0f", l->fwd);
    cr_expect_eq(l->fwd, 111935488000.0);
    /* twice the forward: the two residual adds' backward is free (their
     * 2 S d x 2 forward-doubled FLOPs gone), the two forks they close each
     * sum two gradients (S d each) and the first layer norm's output, read
     * by Q, K and V, sums three (2 S d) */
    cr_expect_eq(l->bwd, 2 * l->fwd - 4 * S * d + 2 * S * d + 2 * S * d);
    cr_expect_eq(l->params, 50358272.0); /* (785.8M - 282.2M) / 10 = 50.36M */
    cr_expect_eq(l->out_bytes, 4 * S * d);
    cr_expect_eq(l->stash_bytes, 4 * (8 * S * d + h * S * S + S * ff));
    const struct mdl_layer *e = th_layer(p, "embed"), *o = th_layer(p, "softmax");
    cr_expect_eq(e->params, 32000.0 * 2048);
    cr_expect_eq(o->params, 32000.0 * 2048 + 32000 + 2 * 2048);
    cr_expect_eq(o->fwd, 8 * S * d + 2 * S * d * 32000 + 6 * S * 32000);
    mdl_profile_free(p);
}

Test(paper_models, every_field_finite_and_nonnegative)
{
    static const char *specs[] = { "amoebanet", "amoebanet:L=3,D=8,classes=10,image=32",
                                   "amoebanet:L=72,D=512,act_bytes=2", "transformer",
                                   "transformer:L=1,d_model=8,ff=16,heads=2,vocab=11,seq=3" };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        struct mdl_profile *p = gen(specs[i]);
        cr_expect_eq(p->measured, 0);
        cr_expect_gt(p->n_layers, 2);
        for (int k = 0; k < p->n_layers; k++) {
            const struct mdl_layer *l = &p->layers[k];
            const double v[] = { l->fwd, l->bwd, l->params, l->out_bytes, l->stash_bytes };
            for (size_t j = 0; j < 5; j++)
                cr_expect(isfinite(v[j]) && v[j] >= 0, "%s %s field %zu = %g", specs[i],
                          l->name, j, v[j]);
            cr_expect_gt(l->fwd, 0, "%s %s", specs[i], l->name);
            cr_expect_gt(l->out_bytes, 0, "%s %s", specs[i], l->name);
            cr_expect_eq(l->at_batch, 0);
            cr_expect(strlen(l->name) > 0 && strlen(l->kind) > 0);
        }
        mdl_profile_free(p);
    }
}

/* act_bytes scales every activation, not a max pool's int64 indices
 * (keep=unfused: 8 bytes per output element whatever the precision). */
Test(paper_models, act_bytes_scales_activations_only)
{
    struct mdl_profile *a = gen("amoebanet:L=6,D=64,keep=fused"),
                       *b = gen("amoebanet:L=6,D=64,keep=fused,act_bytes=2");
    cr_assert_eq(a->n_layers, b->n_layers);
    for (int k = 0; k < a->n_layers; k++) {
        cr_expect_eq(a->layers[k].fwd, b->layers[k].fwd);
        cr_expect_eq(a->layers[k].params, b->layers[k].params);
        cr_expect_eq(a->layers[k].out_bytes, 2 * b->layers[k].out_bytes);
        cr_expect_eq(a->layers[k].stash_bytes, 2 * b->layers[k].stash_bytes);
    }
    mdl_profile_free(a);
    mdl_profile_free(b);
    /* unfused: a normal cell of 64 filters at 28 x 28 has two stride-1 max
     * pools, c x hw indices each, which do not halve */
    a = gen("amoebanet:L=6,D=64");
    b = gen("amoebanet:L=6,D=64,act_bytes=2");
    const struct mdl_layer *la = th_layer(a, "cell1_normal1"), *lb = th_layer(b, "cell1_normal1");
    const double idx = 8.0 * 2 * 64 * 28 * 28;
    cr_expect_eq(la->stash_bytes - idx, 2 * (lb->stash_bytes - idx));
    cr_expect_eq(la->out_bytes, 2 * lb->out_bytes);
    /* any precision: 3-byte activations, the indices still 8 bytes, exact */
    struct mdl_profile *t = gen("amoebanet:L=6,D=64,act_bytes=3");
    cr_expect_eq(th_layer(t, "cell1_normal1")->stash_bytes, (la->stash_bytes - idx) / 4 * 3 + idx);
    mdl_profile_free(t);
    mdl_profile_free(a);
    mdl_profile_free(b);
}

/* The classifier keeps its FC input and the class probabilities; under
 * keep=unfused also its global pool's input (PyTorch's avg_pool2d keeps
 * it; torchgpipe's classifier is nn.AvgPool2d(7)). AmoebaNet-D (18, 208)
 * ends with 4 x 832 = 3328 channels at 7 x 7, 1000 classes, FP32. */
Test(paper_models, amoeba_classifier_stash_by_hand)
{
    struct mdl_profile *u = gen("amoebanet:L=18,D=208"), *f = gen("amoebanet:L=18,D=208,keep=fused");
    cr_expect_eq(th_layer(u, "classify")->stash_bytes, 4.0 * (3328 + 1000 + 3328 * 49));
    cr_expect_eq(th_layer(f, "classify")->stash_bytes, 4.0 * (3328 + 1000));
    mdl_profile_free(u);
    mdl_profile_free(f);
}

Test(paper_models, spec_errors)
{
    struct mdl_profile *p = NULL;
    cr_expect_eq(mdl_paper_from_spec("mlp:layers=4", &p), 0);
    cr_expect_eq(mdl_paper_from_spec("amoebanetx:L=18", &p), 0);
    cr_expect_eq(mdl_paper_from_spec("transformers", &p), 0);
    cr_expect_null(p);
    static const struct { const char *spec; int code; const char *needle; } bad[] = {
        { "amoebanet:L=17", PS_EINVAL, "'L'" },
        { "amoebanet:D=100", PS_EINVAL, "'D'" },
        { "amoebanet:image=200", PS_EINVAL, "'image'" },
        { "amoebanet:L=18,L=36", PS_EUSAGE, "twice" },
        { "amoebanet:X=1", PS_EUSAGE, "unknown key 'X'" },
        { "amoebanet:L", PS_EUSAGE, "key=value" },
        { "amoebanet:L=18,", PS_EUSAGE, "trailing comma" },
        { "amoebanet:L=abc", PS_EUSAGE, "'L'" },
        { "amoebanet:act_bytes=0", PS_EINVAL, "act_bytes" },
        { "amoebanet:pool3=min", PS_EUSAGE, "not one of max, avg" },
        { "transformer:L=0", PS_EUSAGE, "'L'" },
        { "transformer:heads=3", PS_EINVAL, "'heads'" },
        { "transformer:d_model=2048,ff=x", PS_EUSAGE, "'ff'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = mdl_paper_from_spec(bad[i].spec, &p);
        cr_expect_eq(rc, -bad[i].code, "%s: rc %d (%s)", bad[i].spec, rc, ps_errmsg());
        cr_expect(strstr(ps_errmsg(), bad[i].needle), "%s: message '%s'", bad[i].spec,
                  ps_errmsg());
        cr_expect_null(p);
    }
}

/* The presets load, and the links a pipeline needs (stage s -> s + 1 and the
 * wrap-around of interleaved schedules) exist. */
Test(paper_models, topologies_load)
{
    static const struct { const char *path; int n; double flops, mem; } topo[] = {
        { "models/topologies/tpu-v2.json", 8, 22.5e12, 8.0 * (1 << 30) },
        { "models/topologies/tpu-v3.json", 128, 61.5e12, 16.0 * (1 << 30) },
        { "models/topologies/p100-pcie-8.json", 8, 9.3e12, 16.0 * (1 << 30) },
        { "models/topologies/v100-nvlink-8.json", 8, 15.7e12, 16.0 * (1 << 30) },
    };
    for (size_t i = 0; i < sizeof topo / sizeof topo[0]; i++) {
        struct mdl_topology *t = NULL;
        int rc = mdl_topology_load(topo[i].path, &t);
        cr_assert_eq(rc, 0, "%s: %s", topo[i].path, ps_errmsg());
        cr_expect_eq(t->n_devices, topo[i].n, "%s", topo[i].path);
        cr_expect_eq(t->bytes_per_param, 12);
        for (int d = 0; d < t->n_devices; d++) {
            cr_expect_eq(t->devices[d].flops, topo[i].flops);
            cr_expect_eq(t->devices[d].memory, topo[i].mem);
            cr_expect_eq(t->devices[d].eff_max, 1);
            cr_expect_eq(t->devices[d].batch_half, 0);
            cr_expect_eq(t->devices[d].overhead_s, 0);
            int nb = (d + 1) % t->n_devices;
            cr_expect_geq(mdl_topology_link_between(t, d, nb), 0, "%s: %d-%d", topo[i].path,
                          d, nb);
        }
        mdl_topology_free(t);
    }
}

Test(paper_models, p100_shares_one_bus_v100_ring_is_nvlink)
{
    struct mdl_topology *t = NULL;
    cr_assert_eq(mdl_topology_load("models/topologies/p100-pcie-8.json", &t), 0, "%s",
                 ps_errmsg());
    cr_assert_eq(t->n_links, 1);
    cr_expect(t->links[0].shared);
    cr_expect_eq(t->links[0].n_ends, 8);
    mdl_topology_free(t);

    cr_assert_eq(mdl_topology_load("models/topologies/v100-nvlink-8.json", &t), 0, "%s",
                 ps_errmsg());
    int nvlinks[8] = { 0 };
    for (int k = 0; k < t->n_links; k++) {
        const struct mdl_link *l = &t->links[k];
        if (l->shared)
            continue;
        cr_assert_eq(l->n_ends, 2);
        double n = l->bandwidth / 25e9; /* NVLink 2.0 links in the pair */
        cr_expect(n == 1 || n == 2, "%s: %g GB/s", l->name, l->bandwidth / 1e9);
        nvlinks[l->ends[0]] += (int)n;
        nvlinks[l->ends[1]] += (int)n;
    }
    for (int d = 0; d < 8; d++) {
        cr_expect_eq(nvlinks[d], 6, "%s has %d NVLinks", t->devices[d].name, nvlinks[d]);
        int l = mdl_topology_link_between(t, d, (d + 1) % 8);
        cr_expect(l >= 0 && !t->links[l].shared, "%s-%s not NVLink", t->devices[d].name,
                  t->devices[(d + 1) % 8].name);
    }
    /* physical gpu3 (device 3) and gpu4 (device 7) have no NVLink */
    int l = mdl_topology_link_between(t, 3, 7);
    cr_expect(l >= 0 && t->links[l].shared);
    mdl_topology_free(t);
}

/* End to end: the binary resolves paper specs (mdl_gen's weak hook) and
 * gen-paper prints one row per Table 1 configuration. */
static int run(const char *args, char *out, size_t cap)
{
    const char *bin = getenv("PIPESIM");
    cr_assert_not_null(bin, "PIPESIM must point at build/pipesim");
    return th_capture(out, cap, "%s %s 2>&1", bin, args);
}

Test(paper_models, cli_gen_model_and_gen_paper, .timeout = 20)
{
    char path[] = "/tmp/pipesim-paper-XXXXXX", cmd[256];
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    static char out[1 << 16];
    snprintf(cmd, sizeof cmd, "gen model amoebanet:L=18,D=208 -o %s", path);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
    struct mdl_profile *p = NULL;
    cr_assert_eq(mdl_profile_load(path, &p), 0, "%s", ps_errmsg());
    cr_expect_eq(p->n_layers, 24);
    cr_expect_eq(mdl_profile_params(p), 81505540);
    mdl_profile_free(p);
    unlink(path);

    cr_assert_eq(run("gen-paper --format csv", out, sizeof out), 0, "%s", out);
    int lines = 0;
    for (char *s = out; *s; s++)
        lines += *s == '\n';
    cr_expect_eq(lines, 11, "%s", out);
    cr_expect(strstr(out, "AmoebaNet Pipeline-8,\"amoebanet:L=72,D=512\",78,1844858344,"), "%s", out);
    cr_expect(strstr(out, "Transformer Naive-1,\"transformer:L=3\",5,282182912,"), "%s", out);
    /* json: the same ten rows, counts as integers, no float noise in the error */
    cr_assert_eq(th_capture(out, sizeof out, "%s gen-paper --format json", getenv("PIPESIM")),
                 0, "%s", out);
    json_error_t jerr;
    json_t *a = json_loads(out, 0, &jerr);
    cr_assert(json_is_array(a), "%s: %s", jerr.text, out);
    cr_expect_eq(json_array_size(a), 10);
    json_t *r0 = json_array_get(a, 0);
    cr_expect_str_eq(json_string_value(json_object_get(r0, "spec")), "amoebanet:L=18,D=208");
    cr_expect(json_is_integer(json_object_get(r0, "params")));
    cr_expect_eq(json_integer_value(json_object_get(r0, "params")), 81505540);
    cr_expect(json_is_integer(json_object_get(r0, "batch")));
    cr_expect(strstr(out, "\"params_err_pct\": -0.603,\n"), "%s", out);
    json_decref(a);
    cr_expect_eq(run("gen-paper --format xml", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--format"), "%s", out);
    cr_expect_eq(run("gen model amoebanet:L=19", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "'L'"), "%s", out);
}

/* The spec a profile records is the one that made it: act_bytes printed to
 * every digit (%g wrote 1.0000001 as 1, so the recorded spec made another
 * profile), and a refusal names the value given (16.0000001 read "16"). */
Test(paper_models, the_recorded_spec_remakes_the_profile)
{
    static const char *specs[] = {
        "transformer:L=1,d_model=8,ff=16,heads=2,vocab=10,seq=4,act_bytes=1.0000001",
        "amoebanet:L=3,D=8,classes=10,image=32,act_bytes=2.0000003",
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        struct mdl_profile *p = gen(specs[i]);
        cr_expect_str_eq(p->path, specs[i]);
        struct mdl_profile *q = gen(p->path);
        for (int k = 0; k < p->n_layers; k++)
            cr_expect_eq(p->layers[k].out_bytes, q->layers[k].out_bytes);
        mdl_profile_free(q);
        mdl_profile_free(p);
    }
    struct mdl_profile *p = NULL;
    cr_expect_lt(mdl_paper_from_spec("transformer:L=1,act_bytes=16.0000001", &p), 0);
    cr_expect(strstr(ps_errmsg(), "got 16.0000001"), "%s", ps_errmsg());
}
