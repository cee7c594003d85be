#include "models/mdl_genwork.h"
#include "base/ps_error.h"

#include <string.h>

void mdl_genwork_init(struct mdl_genwork *gw)
{
    memset(gw, 0, sizeof *gw);
    gw->w.gemms = gw->g;
}

static void put_gemm(struct mdl_genwork *gw, const struct mdl_gemm *g)
{
    for (int i = 0; i < gw->w.n_gemms; i++) {
        struct mdl_gemm *o = &gw->g[i];
        if (o->rows == g->rows && o->k == g->k && o->n == g->n && o->weight == g->weight &&
            o->in == g->in && o->conv == g->conv && o->wino == g->wino) {
            o->count += g->count;
            return;
        }
    }
    PS_ASSERT(gw->w.n_gemms < MDL_GENWORK_GEMMS);
    gw->g[gw->w.n_gemms++] = *g;
}

static void product(struct mdl_genwork *gw, double rows, double k, double n, double count,
                    int dgrad, double in, int conv, int wino);

void mdl_genwork_gemm(struct mdl_genwork *gw, double rows, double k, double n, double count,
                      int weight, int dgrad)
{
    product(gw, rows, k, n, count, dgrad, weight ? 0 : -1, 0, 0);
}

void mdl_genwork_conv(struct mdl_genwork *gw, double rows, double k, double n, double count,
                      int dgrad, double in)
{
    product(gw, rows, k, n, count, dgrad, in, 1, 0);
}

void mdl_genwork_conv3(struct mdl_genwork *gw, double rows, double cin, double cout,
                       double count, int dgrad, double in)
{
    product(gw, rows, 9 * cin, cout, count, dgrad, in, 1, 1);
}

static void product(struct mdl_genwork *gw, double rows, double k, double n, double count,
                    int dgrad, double in, int conv, int wino)
{
    int weight = in >= 0; /* -1: an activation product (mdl_genwork_gemm) */
    struct mdl_gemm g = { rows, k, n, count, weight ? (dgrad ? 1 : 2) : 0, weight ? in : 0,
                          conv, wino };
    double f = 2 * rows * k * n * count;
    put_gemm(gw, &g);
    gw->w.mm_fwd += f;
    gw->w.kernels_fwd += 1;
    if (weight) {
        gw->w.mm_wgrad += f;
        gw->w.kernels_wgrad += 1;
        if (dgrad) {
            gw->w.mm_dgrad += f;
            gw->w.kernels_bwd += 1;
        }
    } else {
        gw->w.mm_dgrad += 2 * f;
        gw->w.kernels_bwd += 2;
    }
}

void mdl_genwork_vec(struct mdl_genwork *gw, double flops_f, double flops_b, double bytes_f,
                     double bytes_b, int kb)
{
    gw->w.vec_fwd += flops_f;
    gw->w.vec_bwd += flops_b;
    gw->w.bytes_fwd += bytes_f;
    gw->w.bytes_bwd += bytes_b;
    gw->w.kernels_fwd += 1;
    gw->w.kernels_bwd += kb ? 1 : 0;
}

void mdl_genwork_vec_fused(struct mdl_genwork *gw, double flops_f, double flops_b,
                           double bytes_b)
{
    gw->w.vec_fwd += flops_f;
    gw->w.vec_bwd += flops_b;
    gw->w.bytes_bwd += bytes_b;
}

void mdl_genwork_grad_sum(struct mdl_genwork *gw, double elems, int uses, double ab, int addn)
{
    if (uses < 2)
        return;
    double extra = uses - 1;
    gw->w.vec_bwd += extra * elems;
    gw->w.bytes_bwd += (addn ? uses + 1 : 3 * extra) * elems * ab;
    gw->w.kernels_bwd += addn ? 1 : extra;
}

double mdl_genwork_bwd_flops(const struct mdl_genwork *gw)
{
    return gw->w.mm_dgrad + gw->w.mm_wgrad + gw->w.vec_bwd;
}

void mdl_genwork_merge(struct mdl_genwork *gw, const struct mdl_genwork *o)
{
    for (int i = 0; i < o->w.n_gemms; i++)
        put_gemm(gw, &o->g[i]);
    gw->w.mm_fwd += o->w.mm_fwd;
    gw->w.mm_dgrad += o->w.mm_dgrad;
    gw->w.mm_wgrad += o->w.mm_wgrad;
    gw->w.vec_fwd += o->w.vec_fwd;
    gw->w.vec_bwd += o->w.vec_bwd;
    gw->w.bytes_fwd += o->w.bytes_fwd;
    gw->w.bytes_bwd += o->w.bytes_bwd;
    gw->w.kernels_fwd += o->w.kernels_fwd;
    gw->w.kernels_bwd += o->w.kernels_bwd;
    gw->w.kernels_wgrad += o->w.kernels_wgrad;
}

void mdl_genwork_attach(struct mdl_genwork *gw, struct mdl_layer *l)
{
    gw->w.gemms = gw->w.n_gemms ? gw->g : NULL;
    l->work = &gw->w;
    l->has_wgrad = 1;
    l->wgrad = gw->w.mm_wgrad;
}
