/* Work by op class from the generators (models/mdl_genwork.h): the FLOP
 * identities on every layer, and small layers counted by hand. */
#include "helpers.h"

#include <math.h>

#include "models/mdl_gen.h"
#include "models/mdl_genwork.h"


static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

/* fwd = mm_fwd + vec_fwd; bwd = B + W with W = mm_wgrad = wgrad; the gemms'
 * 2 R K N C sum to mm_fwd, their weight products to W. */
static void check_identities(const char *spec)
{
    struct mdl_profile *p = th_model(spec);
    for (int i = 0; i < p->n_layers; i++) {
        const struct mdl_layer *l = &p->layers[i];
        const struct mdl_work *w = l->work;
        cr_assert_not_null(w, "%s %s: no work", spec, l->name);
        cr_expect(close_to(l->fwd, w->mm_fwd + w->vec_fwd), "%s %s: fwd %.17g vs %.17g", spec,
                  l->name, l->fwd, w->mm_fwd + w->vec_fwd);
        cr_expect(close_to(l->bwd, w->mm_dgrad + w->mm_wgrad + w->vec_bwd),
                  "%s %s: bwd %.17g vs %.17g", spec, l->name, l->bwd,
                  w->mm_dgrad + w->mm_wgrad + w->vec_bwd);
        cr_expect(l->has_wgrad && l->wgrad == w->mm_wgrad, "%s %s: wgrad", spec, l->name);
        double mm = 0, mw = 0;
        for (int g = 0; g < w->n_gemms; g++) {
            const struct mdl_gemm *m = &w->gemms[g];
            double f = 2 * m->rows * m->k * m->n * m->count;
            mm += f;
            mw += m->weight ? f : 0;
        }
        cr_expect(close_to(mm, w->mm_fwd), "%s %s: gemms %.17g vs mm_fwd %.17g", spec, l->name,
                  mm, w->mm_fwd);
        cr_expect(close_to(mw, w->mm_wgrad), "%s %s: weight gemms vs W", spec, l->name);
        if (strncmp(spec, "resnet:", 7)) /* resnet: a conv per layer, views */
            cr_expect(w->kernels_fwd >= 1 && w->bytes_fwd > 0, "%s %s: kernels/bytes", spec,
                      l->name);
    }
    mdl_profile_free(p);
}

Test(gen_work, identities_every_generator)
{
    static const char *const specs[] = {
        "mlp:layers=3,width=32,norm=2", "transformer:L=2", "transformer:L=1,seq=16,d_model=64,"
        "ff=128,heads=4,vocab=50", "amoebanet:L=18,D=256", "amoebanet:L=6,D=64,image=64",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        check_identities(specs[i]);
}

/* A dense layer of width 8, counted by hand: one 1 x 8 x 8 weight GEMM
 * (128 FLOPs each of F, B and W), bias and ReLU 8 FLOPs each; bytes FP32:
 * bias reads and writes 8 (64 B), ReLU the same; backward bias reads dy
 * (32 B), ReLU dy, y, writes dx (96 B). Kernels: GEMM + bias + ReLU = 3
 * forward, dgrad + bias + ReLU = 3 backward, 1 weight gradient. */
Test(gen_work, mlp_dense_by_hand)
{
    struct mdl_profile *p = th_model("mlp:layers=1,width=8");
    const struct mdl_work *w = p->layers[0].work;
    cr_assert_not_null(w);
    cr_expect_eq(w->n_gemms, 1);
    cr_expect(w->gemms[0].rows == 1 && w->gemms[0].k == 8 && w->gemms[0].n == 8 &&
              w->gemms[0].count == 1 && w->gemms[0].weight == 1);
    cr_expect(w->mm_fwd == 128 && w->mm_dgrad == 128 && w->mm_wgrad == 128);
    cr_expect(w->vec_fwd == 16 && w->vec_bwd == 16);
    cr_expect(w->bytes_fwd == 128 && w->bytes_bwd == 128, "%g %g", w->bytes_fwd, w->bytes_bwd);
    cr_expect(w->kernels_fwd == 3 && w->kernels_bwd == 3 && w->kernels_wgrad == 1);
    mdl_profile_free(p);
}

/* One transformer layer, seq 4, d 8, ff 16, 2 heads: its gemms are Q/K/V and
 * the output projection (4 x 8 x 8, 4 in all), scores 4 x 4 x 4 per head
 * and context 4 x 4 x 4 per head (activation products, 2 x 2 = 4 heads'
 * worth merged), 4 x 8 x 16 and 4 x 16 x 8. Attention products are input
 * gradients both ways: B's matrix FLOPs = W's + 2 x attention's. */
Test(gen_work, transformer_layer_by_hand)
{
    struct mdl_profile *p = th_model("transformer:L=1,seq=4,d_model=8,ff=16,heads=2,vocab=10");
    const struct mdl_work *w = p->layers[1].work;
    double proj = 2.0 * 4 * 8 * 8, attn = 2.0 * 4 * 4 * 4 * 2, ffn = 2.0 * 4 * 8 * 16;
    cr_expect_eq(w->mm_fwd, 4 * proj + 2 * attn + 2 * ffn);
    cr_expect_eq(w->mm_wgrad, 4 * proj + 2 * ffn);
    cr_expect_eq(w->mm_dgrad, 4 * proj + 2 * ffn + 4 * attn);
    int seen_a = 0;
    for (int g = 0; g < w->n_gemms; g++)
        if (!w->gemms[g].weight) {
            seen_a++;
            cr_expect(w->gemms[g].rows == 4 && w->gemms[g].k == 4 && w->gemms[g].n == 4 &&
                      w->gemms[g].count == 4, "scores and context merged: x%g",
                      w->gemms[g].count);
        }
    cr_expect_eq(seen_a, 1);
    /* Forward kernels: 2 LN, 6 weight GEMMs + 2 batched products, 6 biases,
     * scale, softmax, ReLU, 2 residual adds = 21; backward: 6 dgrads + 4 for
     * the two activation products, 13 vector backward kernels, and 2 adds
     * summing the three gradients of LN1's output (read by Q, K and V) = 25;
     * keep=fused sums them in one AddN (24). */
    cr_expect_eq(w->kernels_fwd, 2 + 8 + 6 + 1 + 1 + 1 + 2, "%g", w->kernels_fwd);
    cr_expect_eq(w->kernels_bwd, 6 + 4 + 13 + 2, "%g", w->kernels_bwd);
    struct mdl_profile *pf =
        th_model("transformer:L=1,seq=4,d_model=8,ff=16,heads=2,vocab=10,keep=fused");
    const struct mdl_work *wf = pf->layers[1].work;
    /* keep=fused also runs the 6 biases, the scaling and the ReLU inside the
     * matmuls (mdl_genwork_vec_fused): 8 kernels fewer each way, and AddN */
    cr_expect_eq(wf->kernels_fwd, 21 - 8, "%g", wf->kernels_fwd);
    cr_expect_eq(wf->kernels_bwd, 6 + 4 + 13 - 8 + 1, "%g", wf->kernels_bwd);
    /* E = 4 x 8, F = 4 x 16, A = 2 x 4 x 4 elements, FP32. Forward: a bias
     * reads and writes (2 E x 5, 2 F), the scaling (2 A) and the ReLU (2 F)
     * too; fused, none. Backward: the scaling's 2 A and the ReLU's 3 F
     * become 0 and F (its input read where the gradient is made), the
     * biases' reductions stay; and the gradient sum, pairwise 2 x 3 E
     * against AddN's 4 E. */
    double E = 32, F = 64, A = 32;
    cr_expect_eq(w->bytes_fwd - wf->bytes_fwd, (2 * E * 5 + 2 * F + 2 * A + 2 * F) * 4.0);
    cr_expect_eq(w->bytes_bwd - wf->bytes_bwd, (2 * A + 2 * F + 2 * E) * 4.0);
    cr_expect_eq(w->vec_bwd, wf->vec_bwd);
    cr_expect_eq(w->vec_fwd, wf->vec_fwd);
    mdl_profile_free(pf);
    cr_expect_eq(w->kernels_wgrad, 6);
    mdl_profile_free(p);
}

/* GPT-2's released weights (the counts of the checkpoints: GPT-2 small,
 * medium, large, XL with V = 50257, s = 1024, tied embedding, biases and
 * a final LN): 124,439,808, 354,823,168, 774,030,080, 1,557,611,200. The
 * GPT-2 paper (Radford et al. 2019, Table 2) prints 117M, 345M, 762M,
 * 1542M; its smallest count is known to be low, so the paper is checked to
 * 7 % and the released weights exactly. */
Test(gen_work, gpt2_param_counts)
{
    static const struct { const char *spec; double exact, paper; } m[] = {
        { "gpt:layers=12,hidden=768,heads=12,seq=1024,vocab=50257", 124439808, 117e6 },
        { "gpt:layers=24,hidden=1024,heads=16,seq=1024,vocab=50257", 354823168, 345e6 },
        { "gpt:layers=36,hidden=1280,heads=20,seq=1024,vocab=50257", 774030080, 762e6 },
        { "gpt:layers=48,hidden=1600,heads=25,seq=1024,vocab=50257", 1557611200, 1542e6 },
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        struct mdl_profile *p = th_model(m[i].spec);
        double got = mdl_profile_params(p);
        cr_expect_eq(got, m[i].exact, "%s: %.0f", m[i].spec, got);
        cr_expect(fabs(got / m[i].paper - 1) < 0.07, "%s: %.0f vs paper %.0f", m[i].spec, got,
                  m[i].paper);
        mdl_profile_free(p);
        check_identities(m[i].spec);
    }
}

/* Narayanan et al. 2021 (arXiv 2104.04473), Table 1 (V = 51200, s = 2048):
 * the count is their formula 12 L h^2 (1 + 13/(12h) + (V+s)/(12Lh)) plus
 * the final layer norm (2h), and lands within 3 % of the table. */
Test(gen_work, megatron_table1_counts)
{
    static const struct { int L, h, a; double paper; } m[] = {
        { 24, 2304, 24, 1.7e9 },   { 30, 3072, 32, 3.6e9 },   { 36, 4096, 32, 7.5e9 },
        { 40, 6144, 48, 18.4e9 },  { 48, 8192, 64, 39.1e9 },  { 60, 10240, 80, 76.1e9 },
        { 80, 12288, 96, 145.6e9 }, { 96, 16384, 128, 310.1e9 },
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        char spec[128];
        snprintf(spec, sizeof spec, "gpt:layers=%d,hidden=%d,heads=%d,seq=2048,vocab=51200",
                 m[i].L, m[i].h, m[i].a);
        struct mdl_profile *p = th_model(spec);
        double L = m[i].L, h = m[i].h, got = mdl_profile_params(p);
        double formula = 12 * L * h * h * (1 + 13 / (12 * h) + (51200 + 2048) / (12 * L * h));
        cr_expect(fabs(got - (formula + 2 * h)) < 1e-6 * got, "%s: %.0f vs %.0f", spec, got,
                  formula + 2 * h);
        cr_expect(fabs(got / m[i].paper - 1) < 0.03, "%s: %.4g vs %.4g", spec, got, m[i].paper);
        mdl_profile_free(p);
    }
}

/* Korthikanti et al. 2022: 34 sbh + 5 a s^2 b bytes per layer at 16 bits,
 * of which dropout (not modelled) is 2 sbh + 3 a s^2 b: the rest here. */
Test(gen_work, gpt_stash_korthikanti)
{
    struct mdl_profile *p = th_model("gpt:layers=2,hidden=64,heads=4,seq=32,vocab=100");
    double s = 32, h = 64, a = 4;
    cr_expect_eq(p->layers[1].stash_bytes, 32 * s * h + 2 * a * s * s);
    mdl_profile_free(p);
}

Test(gen_work, gpt_spec_errors)
{
    static const char *const bad[] = {
        "gpt:layers=2,hidden=8,heads=2,seq=4", "gpt:layers=2,hidden=8,heads=3,seq=4,vocab=5",
        "gpt:layers=2,hidden=8,heads=2,seq=4,vocab=5,bogus=1",
        "gpt:layers=0,hidden=8,heads=2,seq=4,vocab=5", "gpt:layers=x,hidden=8,heads=2,seq=4,vocab=5",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct mdl_profile *p = NULL;
        cr_expect_lt(mdl_model_open(bad[i], &p), 0, "%s accepted", bad[i]);
        cr_expect_null(p);
    }
}

/* torchvision's counts (sum of p.numel() of resnet50/101/152): 25,557,032,
 * 44,549,160, 60,192,808; one profile layer per module as torchgpipe
 * flattens it: 4 stem + 11 per bottleneck + avgpool, flat, fc. */
Test(gen_work, resnet_param_counts)
{
    static const struct { const char *spec; double n; int layers; } m[] = {
        { "resnet:depth=50", 25557032, 4 + 11 * 16 + 3 },
        { "resnet:depth=101", 44549160, 4 + 11 * 33 + 3 },
        { "resnet:depth=152", 60192808, 4 + 11 * 50 + 3 },
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        struct mdl_profile *p = th_model(m[i].spec);
        cr_expect_eq(mdl_profile_params(p), m[i].n, "%s: %.0f", m[i].spec,
                     mdl_profile_params(p));
        cr_expect_eq(p->n_layers, m[i].layers, "%s: %d layers", m[i].spec, p->n_layers);
        mdl_profile_free(p);
        check_identities(m[i].spec);
    }
    struct mdl_profile *p = NULL;
    cr_expect_lt(mdl_model_open("resnet:depth=34", &p), 0);
    cr_expect_lt(mdl_model_open("resnet:depth=101,width=2", &p), 0);
    cr_expect_null(p);
}

/* The first bottleneck's conv2 at 224: 64 -> 64 channels, 3 x 3 on 56 x 56:
 * an implicit GEMM 3136 x 576 x 64. */
Test(gen_work, resnet_conv_shape)
{
    struct mdl_profile *p = th_model("resnet:depth=50");
    const struct mdl_layer *l = NULL;
    for (int i = 0; i < p->n_layers; i++)
        if (!strcmp(p->layers[i].name, "layer1.0.conv2"))
            l = &p->layers[i];
    cr_assert_not_null(l);
    const struct mdl_gemm *g = &l->work->gemms[0];
    cr_expect(g->rows == 3136 && g->k == 576 && g->n == 64 && g->weight == 1);
    cr_expect_eq(g->conv, 1);
    cr_expect_eq(l->fwd, 2.0 * 3136 * 576 * 64);
    mdl_profile_free(p);
}

static double stash_of(const char *spec, const char *layer);

/* The pools keep what PyTorch's autograd keeps: the max pool (3 x 3/2 on
 * the stem's 64 x 112 x 112) its input and its int64 indices, 8 bytes per
 * output element (64 x 56 x 56); the average pool its input (2048 x 7 x 7);
 * FP32. */
Test(gen_work, resnet_pools_stash_by_hand)
{
    double e = 64.0 * 112 * 112, po = 64.0 * 56 * 56;
    cr_expect_eq(stash_of("resnet:depth=50", "maxpool"), 4 * e + 8 * po);
    cr_expect_eq(stash_of("resnet:depth=50", "avgpool"), 4 * 2048.0 * 7 * 7);
    /* what each keeps with the ReLU before it, which a stage counts once:
     * the pools' inputs, and conv2's and conv3's (relu1's and relu2's
     * outputs: 64 x 56 x 56 in the first block) */
    struct mdl_profile *p = th_model("resnet:depth=50");
    double sh[4] = { -1, -1, -1, -1 };
    static const char *const names[4] = { "maxpool", "avgpool", "layer1.0.conv2",
                                          "layer1.0.conv1" };
    for (int i = 0; i < p->n_layers; i++)
        for (int k = 0; k < 4; k++)
            if (!strcmp(p->layers[i].name, names[k]))
                sh[k] = p->layers[i].stash_shared_bytes;
    cr_expect_eq(sh[0], 4 * e);
    cr_expect_eq(sh[1], 4 * 2048.0 * 7 * 7);
    cr_expect_eq(sh[2], 4 * po);
    /* conv1 shares the block input with the identity before it, which
     * carries it (the first block's input, the max pool's output, is kept
     * by no layer before) */
    cr_expect_eq(sh[3], 4 * po);
    mdl_profile_free(p);
}

/* A block input kept by relu3 and by the next block's conv1, with the
 * identity module between them, counts once in a stage whichever of the
 * three the stage starts at (the ledger's stage stash, sch_cost), and a
 * stage of relu3, the identity and conv1 holds 256 x 56 x 56 FP32 (ResNet-50
 * layer1.0.relu3 .. layer1.1.conv1), as one starting at either of the
 * other two does. */
Test(gen_work, resnet_block_input_counts_once_per_stage)
{
    struct mdl_profile *p = th_model("resnet:depth=50");
    int r3 = -1;
    for (int i = 0; i < p->n_layers; i++)
        if (!strcmp(p->layers[i].name, "layer1.0.relu3"))
            r3 = i;
    cr_assert(r3 > 0 && !strcmp(p->layers[r3 + 1].name, "layer1.1.identity") &&
              !strcmp(p->layers[r3 + 2].name, "layer1.1.conv1"));
    double in = 4 * 256.0 * 56 * 56;
    struct mdl_topology *t = th_chain(3, 0, 1e9, 0);
    /* three stages: [0, a), [a, r3 + 3), the rest; conv1's stage ends after
     * it, so it holds relu3's, the identity's and conv1's stashes (the
     * block input, at most once) and no more */
    for (int a = r3; a <= r3 + 2; a++) {
        char bal[64];
        snprintf(bal, sizeof bal, "%d,%d,%d", a, r3 + 3 - a, p->n_layers - r3 - 3);
        struct sch_partition *part;
        cr_assert_eq(sch_partition_parse(bal, 3, p->n_layers, &part), 0, "%s", ps_errmsg());
        struct sch_costs *c;
        cr_assert_eq(sch_costs_new(p, t, part, NULL, 1, &c), 0, "%s", ps_errmsg());
        /* relu3 keeps its output (the block input); the identity and conv1
         * keep the same tensor */
        cr_expect_eq((double)c->st[1].mem.stash, in, "stage from %s: %lld",
                     p->layers[a].name, (long long)c->st[1].mem.stash);
        sch_costs_free(c);
        sch_partition_free(part);
    }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* Convolutions are marked as such (their images padded on a TPU); dense
 * products (classifiers, Transformer and GPT layers) are not. */
Test(gen_work, convolutions_marked)
{
    const char *conv_nets[] = { "resnet:depth=50", "amoebanet:L=6,D=64,image=64" };
    for (size_t s = 0; s < sizeof conv_nets / sizeof *conv_nets; s++) {
        struct mdl_profile *p = th_model(conv_nets[s]);
        int convs = 0, dense = 0;
        for (int i = 0; i < p->n_layers; i++) {
            const struct mdl_work *w = p->layers[i].work;
            for (int j = 0; w && j < w->n_gemms; j++) {
                const struct mdl_gemm *g = &w->gemms[j];
                /* a classifier's product has one row per sample */
                if (g->rows == 1) {
                    cr_expect_eq(g->conv, 0, "%s %s: a dense product", conv_nets[s],
                                 p->layers[i].name);
                    dense++;
                } else {
                    cr_expect_eq(g->conv, 1, "%s %s: %gx%gx%g", conv_nets[s],
                                 p->layers[i].name, g->rows, g->k, g->n);
                    convs++;
                }
            }
        }
        cr_expect_gt(convs, 10, "%s", conv_nets[s]);
        cr_expect_eq(dense, 1, "%s: one classifier", conv_nets[s]);
        mdl_profile_free(p);
    }
    const char *dense_nets[] = { "transformer:L=2", "gpt:layers=2,hidden=256,heads=4,seq=64,vocab=1000",
                                 "mlp:layers=3,width=64" };
    for (size_t s = 0; s < sizeof dense_nets / sizeof *dense_nets; s++) {
        struct mdl_profile *p = th_model(dense_nets[s]);
        for (int i = 0; i < p->n_layers; i++) {
            const struct mdl_work *w = p->layers[i].work;
            for (int j = 0; w && j < w->n_gemms; j++)
                cr_expect_eq(w->gemms[j].conv, 0, "%s %s", dense_nets[s], p->layers[i].name);
        }
        mdl_profile_free(p);
    }
}

static double stash_of(const char *spec, const char *layer)
{
    struct mdl_profile *p = th_model(spec);
    double v = -1;
    for (int i = 0; i < p->n_layers; i++)
        if (!strcmp(p->layers[i].name, layer))
            v = p->layers[i].stash_bytes;
    mdl_profile_free(p);
    cr_assert_geq(v, 0, "%s has no layer %s", spec, layer);
    return v;
}

/* keep=fused by hand. An AmoebaNet normal cell whose two inputs are normal
 * cells (4c channels, h x h; here c = 64, h = 8, FP32) keeps, unfused, per
 * c h^2: reduce1 and reduce2 4 + 1 each, conv_1x1 2 (x3), conv_1x7_7x1
 * 2 + 6/4 (x2), one max-pool input per pooled state (s1, s2), and each of
 * the two max pools' int64 indices (PyTorch's max_pool2d_with_indices: 8
 * bytes per output element, 2 FP32 elements each): 29; fused:
 * the two inputs 4 each, the conv outputs (1 + 1, 1 x 3, (3/4 + 1) x 2),
 * s1's pool input, the states later ops read (s2, s5): 19.5. */
Test(gen_work, keep_fused_by_hand)
{
    double c = 64, h = 8, ab = 4;
    cr_expect_eq(stash_of("amoebanet:L=9,D=64,image=64", "cell1_normal3"), 29 * c * h * h * ab);
    cr_expect_eq(stash_of("amoebanet:L=9,D=64,image=64,keep=unfused", "cell1_normal3"),
                 29 * c * h * h * ab);
    cr_expect_eq(stash_of("amoebanet:L=9,D=64,image=64,keep=fused", "cell1_normal3"),
                 19.5 * c * h * h * ab);
    /* stem1 reads the image: its ReLU output is kept either way */
    cr_expect_eq(stash_of("amoebanet:L=9,D=64,image=64,keep=fused", "stem1"),
                 stash_of("amoebanet:L=9,D=64,image=64", "stem1"));
    /* Transformer: a layer norm keeps its input only, 2 S d fewer per
     * layer and S d fewer in the softmax layer. */
    const char *t = "transformer:L=1,seq=16,d_model=64,ff=128,heads=4,vocab=50";
    char tf[160];
    snprintf(tf, sizeof tf, "%s,keep=fused", t);
    double S = 16, d = 64, ff = 128, hd = 4, V = 50;
    double unf = (2 * S * d + 3 * S * d + hd * S * S + S * d + 2 * S * d + S * ff) * ab;
    cr_expect_eq(stash_of(t, "layer1"), unf);
    cr_expect_eq(stash_of(tf, "layer1"), unf - 2 * S * d * ab);
    cr_expect_eq(stash_of(t, "softmax"), (2 * S * d + S * V) * ab);
    cr_expect_eq(stash_of(tf, "softmax"), (S * d + S * V) * ab);
    /* FLOPs, parameters and work do not change */
    struct mdl_profile *a = th_model(t), *b = th_model(tf);
    cr_assert_eq(a->n_layers, b->n_layers);
    for (int i = 0; i < a->n_layers; i++) {
        cr_expect_eq(a->layers[i].fwd, b->layers[i].fwd);
        cr_expect_eq(a->layers[i].params, b->layers[i].params);
    }
    mdl_profile_free(a);
    mdl_profile_free(b);
}

Test(gen_work, keep_errors)
{
    struct mdl_profile *p = NULL;
    cr_expect_lt(mdl_model_open("amoebanet:keep=fusd", &p), 0);
    cr_expect(strstr(ps_errmsg(), "key 'keep': 'fusd' is not one of unfused, fused"), "%s",
              ps_errmsg());
    cr_expect(strstr(ps_errmsg(), "did you mean 'fused'"), "%s", ps_errmsg());
    cr_expect_lt(mdl_model_open("transformer:keep=", &p), 0);
    cr_expect_lt(mdl_model_open("transformer:keep=fused,keep=fused", &p), 0);
    cr_expect(strstr(ps_errmsg(), "given twice"), "%s", ps_errmsg());
}

/* The sum of a fanned-out gradient by hand: E = 10 elements, 4 readers, 4 B
 * each. PyTorch's pairwise adds: 3 kernels, each reading 2 E and writing E
 * (3 x 3 E x 4 B = 360 B); TensorFlow's AddN: one kernel reading 4 E and
 * writing E (200 B). 3 E FLOPs either way; one reader sums nothing. */
Test(gen_work, grad_sum_by_hand)
{
    for (int addn = 0; addn < 2; addn++) {
        struct mdl_genwork gw;
        mdl_genwork_init(&gw);
        mdl_genwork_grad_sum(&gw, 10, 1, 4, addn);
        mdl_genwork_grad_sum(&gw, 10, 0, 4, addn);
        cr_expect(gw.w.vec_bwd == 0 && gw.w.bytes_bwd == 0 && gw.w.kernels_bwd == 0);
        mdl_genwork_grad_sum(&gw, 10, 4, 4, addn);
        cr_expect_eq(gw.w.vec_bwd, 30);
        cr_expect_eq(gw.w.bytes_bwd, addn ? 200 : 360, "%g", gw.w.bytes_bwd);
        cr_expect_eq(gw.w.kernels_bwd, addn ? 1 : 3);
        cr_expect(gw.w.vec_fwd == 0 && gw.w.bytes_fwd == 0 && gw.w.kernels_fwd == 0);
    }
}

static const struct mdl_work *work_of(const struct mdl_profile *p, const char *layer)
{
    for (int i = 0; i < p->n_layers; i++)
        if (!strcmp(p->layers[i].name, layer))
            return p->layers[i].work;
    cr_assert_fail("no layer %s", layer);
    return NULL;
}

/* An AmoebaNet normal cell's gradient sums by hand (c = 64, h = 8, FP32).
 * Readers, from the genotype (torchgpipe's and TensorFlow's AmoebaNet-D):
 * state 0 is read by three operations and the concatenation (4), state 1
 * by four operations (4), state 2 by two (2), the others once; the cell's
 * input (4c channels) by reduce1 and, but in the last cell, by the next
 * cell (2). Unfused (PyTorch, pairwise): (3 + 3 + 1) c h^2 + 4 c h^2
 * elements added, 3 elements moved each: 33 c h^2 x 4 B, 7 + 1 kernels.
 * Fused (TensorFlow's AddN): states 5 + 5 + 3, input 3 x 4: 25 c h^2 x 4 B,
 * 3 + 1 kernels. Everything else is the same work, so the two keep modes
 * differ by 8 c h^2 x 4 B and 4 kernels; the last cell's input has one
 * reader, one backward kernel fewer than its neighbour's. */
Test(gen_work, amoebanet_grad_sums_by_hand)
{
    double c = 64, h = 8, ab = 4;
    struct mdl_profile *u = th_model("amoebanet:L=9,D=64,image=64");
    struct mdl_profile *f = th_model("amoebanet:L=9,D=64,image=64,keep=fused");
    const struct mdl_work *wu = work_of(u, "cell1_normal3"), *wf = work_of(f, "cell1_normal3");
    /* keep=fused: the gradient sums (8 c h^2: AddN against pairwise) and the
     * 13 ReLUs run inside the convolutions they feed (mdl_genwork_vec_fused):
     * reduce1 and reduce2 on the 4 c-channel inputs, three conv_1x1 on c, two
     * conv_1x7_7x1 on c, c/4, c/4, c/4: 14.5 c h^2 elements; forward each
     * read and write gone (2 x), backward 3 passes become 1 (2 x) */
    cr_expect_eq(wu->bytes_bwd - wf->bytes_bwd, (8 + 2 * 14.5) * c * h * h * ab, "%g",
                 (wu->bytes_bwd - wf->bytes_bwd) / (c * h * h * ab));
    cr_expect_eq(wu->bytes_fwd - wf->bytes_fwd, 2 * 14.5 * c * h * h * ab, "%g",
                 (wu->bytes_fwd - wf->bytes_fwd) / (c * h * h * ab));
    cr_expect_eq(wu->kernels_bwd - wf->kernels_bwd, 4 + 13);
    cr_expect_eq(wu->kernels_fwd - wf->kernels_fwd, 13);
    cr_expect_eq(wu->vec_bwd, wf->vec_bwd);
    /* stem1's ReLU on the 3 x 64 x 64 image: fused, no forward pass; no
     * backward either way (no gradient for the image) */
    cr_expect_eq(work_of(u, "stem1")->bytes_fwd - work_of(f, "stem1")->bytes_fwd,
                 2 * 3 * 64 * 64 * ab);
    cr_expect_eq(work_of(u, "stem1")->bytes_bwd, work_of(f, "stem1")->bytes_bwd);
    /* the last cell (cell5_normal3) and the one before it: same genotype and
     * reduce2, one reader fewer of the input */
    cr_expect_eq(work_of(u, "cell5_normal2")->kernels_bwd - work_of(u, "cell5_normal3")->kernels_bwd,
                 1);
    /* stem2, the first cell (a reduction cell of 32 filters): its input, the
     * stem's 16 x 32 x 32 output E_in, has three readers (reduce1, reduce2
     * and the next cell), pairwise 2 x 3 E_in against AddN's 4 E_in; state
     * 2 (32 x 16 x 16, E_2) four (pairwise 3 x 3 E_2 against 5 E_2); states 0,
     * 1 and 3 two (3 E either way). stem3 (64 filters, input 16 x 16): only
     * its state 2 (64 x 8 x 8) has more than two readers. */
    double e_in = 16 * 32 * 32, e2 = 32 * 16 * 16, e3 = 64 * 8 * 8;
    /* fused, each ReLU also saves as many bytes backward as forward (3
     * passes to 1, 2 to 0) and a kernel each way: stem2's 10 ReLUs on
     * 98304 elements (reduce1 and reduce2 on the 16 x 32 x 32 input, the
     * conv_3x3 chain on 32, 8 and 8 channels of 32^2, 32^2 and 16^2, the
     * conv_1x7_7x1 chain on 32, 8, 8, 8 channels of 16^2, conv_1x1 on 32 of
     * 16^2); the gradient sums are what is left */
    const struct mdl_work *u2 = work_of(u, "stem2"), *f2 = work_of(f, "stem2");
    cr_expect_eq(u2->bytes_fwd - f2->bytes_fwd, 2 * 98304 * ab);
    cr_expect_eq(u2->kernels_fwd - f2->kernels_fwd, 10);
    cr_expect_eq((u2->bytes_bwd - f2->bytes_bwd) - (u2->bytes_fwd - f2->bytes_fwd),
                 (2 * e_in + 4 * e2) * ab);
    cr_expect_eq((u2->kernels_bwd - f2->kernels_bwd) - (u2->kernels_fwd - f2->kernels_fwd),
                 1 + 2);
    const struct mdl_work *u3 = work_of(u, "stem3"), *f3 = work_of(f, "stem3");
    cr_expect_eq((u3->bytes_bwd - f3->bytes_bwd) - (u3->bytes_fwd - f3->bytes_fwd),
                 4 * e3 * ab);
    cr_expect_eq((u3->kernels_bwd - f3->kernels_bwd) - (u3->kernels_fwd - f3->kernels_fwd), 2);
    mdl_profile_free(u);
    mdl_profile_free(f);
}
