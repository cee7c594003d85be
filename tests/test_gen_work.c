/* Work by op class from the generators (models/mdl_genwork.h): the FLOP
 * identities on every layer, and small layers counted by hand. */
#include "helpers.h"

#include <math.h>

#include "models/mdl_gen.h"

static struct mdl_profile *open_spec(const char *spec)
{
    struct mdl_profile *p = NULL;
    int rc = mdl_model_open(spec, &p);
    cr_assert_eq(rc, 0, "%s: rc %d: %s", spec, rc, ps_errmsg());
    return p;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

/* fwd = mm_fwd + vec_fwd; bwd = B + W with W = mm_wgrad = wgrad; the gemms'
 * 2 R K N C sum to mm_fwd, their weight products to W. */
static void check_identities(const char *spec)
{
    struct mdl_profile *p = open_spec(spec);
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
    struct mdl_profile *p = open_spec("mlp:layers=1,width=8");
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
    struct mdl_profile *p = open_spec("transformer:L=1,seq=4,d_model=8,ff=16,heads=2,vocab=10");
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
     * the two activation products, 13 vector backward kernels = 23. */
    cr_expect_eq(w->kernels_fwd, 2 + 8 + 6 + 1 + 1 + 1 + 2, "%g", w->kernels_fwd);
    cr_expect_eq(w->kernels_bwd, 6 + 4 + 13, "%g", w->kernels_bwd);
    cr_expect_eq(w->kernels_wgrad, 6);
    mdl_profile_free(p);
}
