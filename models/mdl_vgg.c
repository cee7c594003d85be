/* mdl_vgg: VGG-11/13/16/19 as a per-module profile (models/mdl_vgg.h). */
#include "models/mdl_vgg.h"
#include "models/mdl_gen.h"
#include "models/mdl_genwork.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <string.h>

struct vg {
    struct mdl_profile *p;
    double ab;
    double kept_b;    /* bytes the next layer keeps whatever act_bytes (indices) */
    double shared_el; /* of the next layer's stash, what the layer before keeps */
};

static int put(struct vg *v, const char *name, const char *kind, double params,
               double out_el, double stash_el, struct mdl_genwork *gw)
{
    struct mdl_layer l;
    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, "%s", name);
    snprintf(l.kind, sizeof l.kind, "%s", kind);
    l.params = params;
    l.out_bytes = out_el * v->ab;
    l.stash_bytes = stash_el * v->ab + v->kept_b;
    l.stash_shared_bytes = v->shared_el * v->ab;
    v->kept_b = v->shared_el = 0;
    mdl_genwork_attach(gw, &l);
    l.fwd = gw->w.mm_fwd + gw->w.vec_fwd;
    l.bwd = mdl_genwork_bwd_flops(gw);
    return mdl_profile_add(v->p, &l);
}

/* ReLU on e elements: keeps its output. */
static int relu(struct vg *v, const char *name, double e)
{
    struct mdl_genwork w;
    mdl_genwork_init(&w);
    mdl_genwork_vec(&w, e, e, 2 * e * v->ab, 3 * e * v->ab, 1);
    return put(v, name, "relu", 0, e, e, &w);
}

/* Configurations A, B, D, E (Table 1): convolutions per stack. */
static const int stacks[4][5] = { { 1, 1, 2, 2, 2 }, { 2, 2, 2, 2, 2 }, { 2, 2, 3, 3, 3 },
                                  { 2, 2, 4, 4, 4 } };

int mdl_vgg_from_spec(const char *spec, struct mdl_profile **out)
{
    if (strncmp(spec, "vgg:", 4))
        return 0;
    static const char *const keys[] = { "depth", "classes", "image", "act_bytes", NULL };
    const char *s = spec + 4;
    long depth, classes, image, ab;
    int rc;
    if ((rc = mdl_spec_check(spec, s, keys)) < 0 ||
        (rc = mdl_spec_long(spec, s, "depth", -1, 11, 19, &depth)) < 0 ||
        (rc = mdl_spec_long(spec, s, "classes", 1000, 1, 10000000, &classes)) < 0 ||
        (rc = mdl_spec_long(spec, s, "image", 224, 32, 8192, &image)) < 0 ||
        (rc = mdl_spec_long(spec, s, "act_bytes", 4, 1, 16, &ab)) < 0)
        return rc;
    int which = depth == 11 ? 0 : depth == 13 ? 1 : depth == 16 ? 2 : depth == 19 ? 3 : -1;
    if (which < 0)
        return ps_error(PS_EUSAGE, "model spec '%s': depth must be 11, 13, 16 or 19, got %ld",
                        spec, depth);
    if (image % 32)
        return ps_error(PS_EINVAL, "model spec '%s': image must be a multiple of 32, got %ld",
                        spec, image);
    char origin[128];
    snprintf(origin, sizeof origin, "vgg:depth=%ld,classes=%ld,image=%ld,act_bytes=%ld", depth,
             classes, image, ab);
    struct vg v = { .p = mdl_profile_new(origin, 0), .ab = (double)ab };
    if (!v.p)
        return ps_error(PS_ENOMEM, "vgg: out of memory");
    char n[MDL_NAME_MAX];
    struct mdl_genwork w;
    int h = (int)image, c = 3;
    for (int st = 0; st < 5; st++) {
        int co = st < 4 ? 64 << st : 512;
        double hw = (double)h * h;
        for (int i = 0; i < stacks[which][st]; i++) {
            double in = c * hw, e = co * hw;
            int first = st == 0 && i == 0;
            mdl_genwork_init(&w);
            mdl_genwork_conv3(&w, hw, c, co, 1, !first, in);
            mdl_genwork_vec(&w, e, e, 2 * e * v.ab, e * v.ab, 1); /* the bias */
            snprintf(n, sizeof n, "conv%d_%d", st + 1, i + 1);
            /* its input: the ReLU before keeps it; a stack's first reads the
             * pool's output, which the pool does not keep */
            v.shared_el = i > 0 ? in : 0;
            if ((rc = put(&v, n, "conv", 9.0 * c * co + co, e, in, &w)) < 0)
                goto err_free_profile;
            snprintf(n, sizeof n, "relu%d_%d", st + 1, i + 1);
            if ((rc = relu(&v, n, e)) < 0)
                goto err_free_profile;
            c = co;
        }
        double x = c * hw, po = x / 4;
        mdl_genwork_init(&w);
        mdl_genwork_vec(&w, 4 * po, 8 * po, (x + po) * v.ab, (po + 2 * x) * v.ab, 1);
        v.kept_b = 8 * po; /* int64 indices */
        v.shared_el = x;   /* its input is the ReLU's output */
        h /= 2;
        snprintf(n, sizeof n, "pool%d", st + 1);
        if ((rc = put(&v, n, "maxpool", 0, po, x, &w)) < 0)
            goto err_free_profile;
    }
    double feat = 512.0 * h * h;
    const double width[3] = { 4096, 4096, (double)classes };
    for (int f = 0; f < 3; f++) {
        double nout = width[f];
        mdl_genwork_init(&w);
        mdl_genwork_gemm(&w, 1, feat, nout, 1, 1, 1);
        mdl_genwork_vec(&w, nout, nout, 2 * nout * v.ab, nout * v.ab, 1); /* the bias */
        snprintf(n, sizeof n, "fc%d", f + 6);
        if ((rc = put(&v, n, "fc", feat * nout + nout, nout, feat, &w)) < 0)
            goto err_free_profile;
        if (f == 2)
            break;
        snprintf(n, sizeof n, "relu%d", f + 6);
        if ((rc = relu(&v, n, nout)) < 0)
            goto err_free_profile;
        mdl_genwork_init(&w);
        mdl_genwork_vec(&w, nout, nout, 2 * nout * v.ab, 2 * nout * v.ab, 1);
        snprintf(n, sizeof n, "drop%d", f + 6);
        if ((rc = put(&v, n, "dropout", 0, nout, nout, &w)) < 0) /* the mask */
            goto err_free_profile;
        feat = nout;
    }
    *out = v.p;
    return 1;

err_free_profile:
    mdl_profile_free(v.p);
    return rc;
}
