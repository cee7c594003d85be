/* models/mdl_unet.h: torchgpipe's simplified U-Net. Parameter counts
 * against the five published in torchgpipe's memory benchmark (to the
 * digits printed), layer counts against main.py's balances, one tiny net
 * counted by hand (every layer's parameters, outputs with the relayed
 * skip, stash, the image's missing input gradient), and the spec's
 * refusals. */
#include "helpers.h"

#include <math.h>

TestSuite(unet, .timeout = 60);

/* kakaobrain/torchgpipe docs/benchmarks.rst @ fe52c4dc, "U-Net (B, C)
 * Memory Benchmark", Parameters: 362.2M, 2.21B, 4.99B, 7.80B, 15.82B; the
 * layers main.py's balances sum to (unet-memory/main.py: 505, 526 + 551,
 * 472 + 54 + 36 + 515, 800 + ... + 987; unet-speed/main.py: 241). */
Test(unet, parameters_and_layers_as_published)
{
    static const struct { int B, C; double published, unit; int layers; } rows[] = {
        { 6, 72, 362.2, 1e6, 285 },    { 11, 128, 2.21, 1e9, 505 },
        { 24, 128, 4.99, 1e9, 1077 },  { 24, 160, 7.80, 1e9, 1077 },
        { 48, 160, 15.82, 1e9, 2133 }, { 5, 64, 0, 1, 241 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "unet:convs=%d,channels=%d", rows[i].B, rows[i].C);
        struct mdl_profile *p = th_model(spec);
        cr_expect_eq(p->n_layers, rows[i].layers, "%s: %d layers", spec, p->n_layers);
        if (rows[i].published > 0) { /* to the digits printed */
            double digits = rows[i].unit == 1e6 ? 10 : 100; /* 362.2M, 2.21B ... 15.82B */
            cr_expect_eq(round(mdl_profile_params(p) / rows[i].unit * digits) / digits,
                         rows[i].published, "%s: %.0f parameters", spec, mdl_profile_params(p));
        }
        mdl_profile_free(p);
    }
}

/* depth 1, B = 1, C = 2, a 1 x 4 x 4 image to 1 channel, FP32. By hand:
 * encoder0.0 conv 1 -> 2 at 4 x 4 (18 weights, output 32 elements, keeps
 * its 16-element input, no input gradient), dropout (keeps its 2-element
 * mask), norm and relu (keep 32); the Stash's output and skip (64); the
 * pool (output 8 + the skip 32; keeps 32 elements and 8 int64 indices);
 * the bottleneck's one block 2 -> 2 at 2 x 2 (36 weights, output 8 + 32);
 * the upsample (32 + 32); PopCat (the 64-element concatenation, the skip
 * landed); decoder0.0 conv 4 -> 1 at 4 x 4 (36 weights, keeps 64), the
 * segment 1 -> 1 (1 weight, output 16). 17 layers, 91 parameters. */
Test(unet, tiny_net_by_hand)
{
    struct mdl_profile *p = th_model("unet:convs=1,channels=2,depth=1,image=4,in=1,out=1");
    cr_expect_eq(p->n_layers, 17);
    cr_expect_eq(mdl_profile_params(p), 91);
    const struct mdl_layer *l = th_layer(p, "encoder0.0.conv");
    cr_expect_eq(l->params, 18);
    cr_expect_eq(l->fwd, 2.0 * 16 * 9 * 2);
    cr_expect_eq(l->out_bytes, 4 * 32.0);
    cr_expect_eq(l->stash_bytes, 4 * 16.0);
    cr_expect_eq(l->bwd, 2.0 * 16 * 9 * 2, "the image has no input gradient: W alone");
    cr_expect_eq(th_layer(p, "encoder0.0.dropout")->stash_bytes, 4 * 2.0);
    cr_expect_eq(th_layer(p, "encoder0.0.norm")->stash_bytes, 4 * 32.0);
    cr_expect_eq(th_layer(p, "encoder0.0.relu")->stash_bytes, 4 * 32.0);
    l = th_layer(p, "encoder0.skip");
    cr_expect_eq(l->out_bytes, 4 * 64.0);
    cr_expect_eq(l->stash_bytes, 0);
    l = th_layer(p, "encoder0.down");
    cr_expect_eq(l->out_bytes, 4 * (8.0 + 32));
    cr_expect_eq(l->stash_bytes, 4 * 32.0 + 8 * 8);
    l = th_layer(p, "bottleneck.0.conv");
    cr_expect_eq(l->params, 36);
    cr_expect_eq(l->out_bytes, 4 * (8.0 + 32));
    cr_expect_eq(l->bwd, 2 * 2.0 * 4 * 18 * 2, "input and weight gradients");
    cr_expect_eq(th_layer(p, "decoder0.up")->out_bytes, 4 * (32.0 + 32));
    cr_expect_eq(th_layer(p, "decoder0.up")->stash_bytes, 0);
    l = th_layer(p, "decoder0.skip");
    cr_expect_eq(l->out_bytes, 4 * 64.0, "the concatenation; no skip in flight");
    cr_expect_eq(l->stash_bytes, 0);
    l = th_layer(p, "decoder0.0.conv");
    cr_expect_eq(l->params, 36);
    cr_expect_eq(l->stash_bytes, 4 * 64.0);
    l = th_layer(p, "segment");
    cr_expect_eq(l->params, 1);
    cr_expect_eq(l->out_bytes, 4 * 16.0);
    cr_expect_eq(l->stash_bytes, 4 * 16.0);
    for (int i = 0; i < p->n_layers; i++)
        cr_expect_eq(p->layers[i].stash_shared_bytes, 0, "%s", p->layers[i].name);
    /* what each layer carries on unchanged: the skip, from its Stash
     * (which sends x twice) to its PopCat */
    cr_expect_eq(th_layer(p, "encoder0.0.relu")->carry_bytes, 0);
    cr_expect_eq(th_layer(p, "encoder0.skip")->carry_bytes, 4 * 32.0);
    cr_expect_eq(th_layer(p, "encoder0.down")->carry_bytes, 4 * 32.0);
    cr_expect_eq(th_layer(p, "decoder0.up")->carry_bytes, 4 * 32.0);
    cr_expect_eq(th_layer(p, "decoder0.skip")->carry_bytes, 0);
    mdl_profile_free(p);
}

/* The max pool keeps its int64 indices at 8 bytes whatever act_bytes: at
 * 2-byte activations the tiny net's pool keeps 2 x 32 + 8 x 8 bytes. */
Test(unet, pool_indices_are_int64_whatever_act_bytes)
{
    struct mdl_profile *p =
        th_model("unet:convs=1,channels=2,depth=1,image=4,in=1,out=1,act_bytes=2");
    cr_expect_eq(th_layer(p, "encoder0.down")->stash_bytes, 2 * 32.0 + 8 * 8);
    cr_expect_eq(th_layer(p, "encoder0.down")->out_bytes, 2 * (8.0 + 32));
    mdl_profile_free(p);
}

/* The vector kernels of the tiny net, by hand (4-byte elements): the
 * Stash's backward sums the pool's and the skip's gradients of its
 * 32-element input (one add: 32 FLOPs, reads two, writes one); the pool
 * (4 per output, reads 32 + writes 8, backward reads 8 and 2 x 32); the
 * upsample (writes 4 x its 8-element input, backward sums 4 per input);
 * PopCat a copy of its 64 elements both ways. */
Test(unet, vector_work_by_hand)
{
    struct mdl_profile *p = th_model("unet:convs=1,channels=2,depth=1,image=4,in=1,out=1");
    const struct mdl_work *w = th_layer(p, "encoder0.skip")->work;
    cr_assert(w);
    cr_expect_eq(w->vec_fwd, 0);
    cr_expect_eq(w->vec_bwd, 32);
    cr_expect_eq(w->bytes_bwd, 4 * 3 * 32.0);
    cr_expect_eq(w->kernels_fwd, 0);
    cr_expect_eq(w->kernels_bwd, 1);
    w = th_layer(p, "encoder0.down")->work;
    cr_expect_eq(w->vec_fwd, 4 * 8.0);
    cr_expect_eq(w->bytes_fwd, 4 * (32.0 + 8));
    cr_expect_eq(w->bytes_bwd, 4 * (8.0 + 2 * 32));
    w = th_layer(p, "decoder0.up")->work;
    cr_expect_eq(w->vec_bwd, 32);
    cr_expect_eq(w->bytes_fwd, 4 * (8.0 + 32));
    cr_expect_eq(w->bytes_bwd, 4 * (32.0 + 8));
    w = th_layer(p, "decoder0.skip")->work;
    cr_expect_eq(w->bytes_fwd, 4 * 2 * 64.0);
    cr_expect_eq(w->bytes_bwd, 4 * 2 * 64.0);
    cr_expect_eq(w->vec_fwd + w->vec_bwd, 0);
    mdl_profile_free(p);
}

/* Layer positions as main.py's balances index them (unet-speed/main.py:
 * pipeline-4 cuts after 30, 96 and 180 layers): at (5, 64) encoder0's cell
 * is layers 0-19, its Stash 20 and pool 21; encoder1 starts at 22, so the
 * first cut falls inside encoder1's cell; the segment is the last. */
Test(unet, layers_where_main_py_balances_count_them)
{
    struct mdl_profile *p = th_model("unet:convs=5,channels=64");
    cr_expect_str_eq(p->layers[19].name, "encoder0.4.relu");
    cr_expect_str_eq(p->layers[20].name, "encoder0.skip");
    cr_expect_str_eq(p->layers[21].name, "encoder0.down");
    cr_expect_str_eq(p->layers[22].name, "encoder1.0.conv");
    cr_expect_str_eq(p->layers[30].name, "encoder1.2.conv");
    cr_expect_str_eq(p->layers[110].name, "bottleneck.0.conv");
    cr_expect_str_eq(p->layers[130].name, "decoder4.up");
    cr_expect_str_eq(p->layers[131].name, "decoder4.skip");
    cr_expect_str_eq(p->layers[240].name, "segment");
    mdl_profile_free(p);
}

/* At the speed benchmark's size, the skips in flight after each encoder's
 * Stash: encoder i's output, 64 2^i channels at (192 / 2^i)^2, rides every
 * cut until decoder i's PopCat. */
Test(unet, skips_ride_every_cut_between_stash_and_popcat)
{
    struct mdl_profile *p = th_model("unet:convs=5,channels=64");
    double sk[5], sum = 0;
    for (int i = 0; i < 5; i++)
        sk[i] = 64.0 * (1 << i) * (192 >> i) * (192 >> i) * 4;
    for (int i = 0; i < 5; i++)
        sum += sk[i];
    const struct mdl_layer *b = th_layer(p, "bottleneck.4.relu");
    cr_expect_eq(b->out_bytes, 1024.0 * 6 * 6 * 4 + sum);
    const struct mdl_layer *d = th_layer(p, "decoder2.skip");
    cr_expect_eq(d->out_bytes, (2 * 256.0) * 48 * 48 * 4 + sk[0] + sk[1]);
    mdl_profile_free(p);
}

Test(unet, bad_specs_are_refused_with_one_line)
{
    static const struct { const char *spec, *want; } bad[] = {
        { "unet:convs=5,channels=64,image=100", "image must be a multiple of 2^depth = 32" },
        { "unet:convs=0,channels=64", "convs" },
        { "unet:convs=5,channels=1", "channels" },
        { "unet:channels=64", "convs" },
        { "unet:convs=5,channels=64,width=3", "width" },
        { "unet:convs=5,channels=65536,depth=10,image=1024", "at most 1048576" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct mdl_profile *p = NULL;
        cr_expect_lt(mdl_model_open(bad[i].spec, &p), 0, "%s", bad[i].spec);
        cr_expect_null(p);
        cr_expect(strstr(ps_errmsg(), bad[i].want), "%s: %s", bad[i].spec, ps_errmsg());
        cr_expect(!strchr(ps_errmsg(), '\n'), "%s", ps_errmsg());
    }
}

/* The largest input the keys allow is written by gen and read back: its
 * first convolution's input of 8192^2 x 16384 elements passed 1e12, the
 * loader's bound then, so the profile gen wrote was refused (helper-119). */
Test(unet, the_largest_input_gen_writes_loads_back)
{
    cr_expect_eq(th_sh("d=$(mktemp -d) && %s gen model unet:convs=1,channels=8,image=8192,"
                       "in=16384 -o $d/u.csv && %s predict --model $d/u.csv --topology "
                       "chain-8-ideal -K 1 -M 1 --batch 1 > $d/a.txt && %s predict --model "
                       "unet:convs=1,channels=8,image=8192,in=16384 --topology chain-8-ideal "
                       "-K 1 -M 1 --batch 1 > $d/b.txt && grep '^step' $d/a.txt > $d/a2 && "
                       "grep '^step' $d/b.txt > $d/b2 && cmp $d/a2 $d/b2; s=$?; rm -rf $d; "
                       "exit $s", th_pipesim(), th_pipesim(), th_pipesim()), 0);
}
