/* mdl_unet: torchgpipe's simplified U-Net as a per-module profile
 * (models/mdl_unet.h). */
#include "models/mdl_unet.h"
#include "models/mdl_gen.h"
#include "models/mdl_genwork.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <string.h>

#define UNET_MAX_DEPTH 10

struct un {
    struct mdl_profile *p;
    double ab;
    double skips;  /* elements per sample of the skips in flight (relayed) */
    double kept_b; /* bytes the next layer keeps whatever act_bytes (indices) */
    int h;         /* the current extent */
};

static int put(struct un *u, const char *name, const char *kind, double params, double out_el,
               double stash_el, struct mdl_genwork *gw)
{
    struct mdl_layer l;
    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, "%s", name);
    snprintf(l.kind, sizeof l.kind, "%s", kind);
    l.params = params;
    l.out_bytes = (out_el + u->skips) * u->ab;
    l.carry_bytes = u->skips * u->ab; /* the skips in flight */
    l.stash_bytes = stash_el * u->ab + u->kept_b;
    u->kept_b = 0;
    mdl_genwork_attach(gw, &l);
    l.fwd = gw->w.mm_fwd + gw->w.vec_fwd;
    l.bwd = mdl_genwork_bwd_flops(gw);
    return mdl_profile_add(u->p, &l);
}

/* One block of a cell: conv 3 x 3, Dropout2d, InstanceNorm2d, LeakyReLU,
 * from cin to cout channels at the current extent. dgrad = 0: the image. */
static int block(struct un *u, const char *pre, int cin, int cout, int dgrad)
{
    char n[MDL_NAME_MAX];
    double hw = (double)u->h * u->h, in = cin * hw, e = cout * hw;
    struct mdl_genwork w;
    int rc;
    mdl_genwork_init(&w);
    mdl_genwork_conv3(&w, hw, cin, cout, 1, dgrad, in);
    snprintf(n, sizeof n, "%s.conv", pre);
    if ((rc = put(u, n, "conv", 9.0 * cin * cout, e, in, &w)) < 0)
        return rc;
    mdl_genwork_init(&w);
    mdl_genwork_vec(&w, e, e, 2 * e * u->ab, 2 * e * u->ab, 1); /* x * mask */
    snprintf(n, sizeof n, "%s.dropout", pre);
    if ((rc = put(u, n, "dropout", 0, e, cout, &w)) < 0) /* the mask */
        return rc;
    mdl_genwork_init(&w);
    mdl_genwork_vec(&w, 4 * e, 8 * e, 3 * e * u->ab, 5 * e * u->ab, 1);
    snprintf(n, sizeof n, "%s.norm", pre);
    if ((rc = put(u, n, "instancenorm", 0, e, e, &w)) < 0)
        return rc;
    mdl_genwork_init(&w);
    mdl_genwork_vec(&w, e, e, 2 * e * u->ab, 3 * e * u->ab, 1);
    snprintf(n, sizeof n, "%s.relu", pre);
    return put(u, n, "leakyrelu", 0, e, e, &w);
}

/* A cell of B blocks: in -> mid, mid -> mid (B - 2 times), mid -> out (one
 * block in -> out when B = 1). */
static int cell(struct un *u, const char *pre, int B, int cin, int mid, int cout, int image)
{
    char n[MDL_NAME_MAX];
    int rc;
    for (int b = 0; b < B; b++) {
        int ci = b == 0 ? cin : mid, co = b + 1 == B ? cout : mid;
        snprintf(n, sizeof n, "%s.%d", pre, b);
        if ((rc = block(u, n, ci, co, !(image && b == 0))) < 0)
            return rc;
    }
    return 0;
}

int mdl_unet_from_spec(const char *spec, struct mdl_profile **out)
{
    if (strncmp(spec, "unet:", 5))
        return 0;
    static const char *const keys[] = { "convs", "channels", "depth", "image", "in", "out",
                                        "act_bytes", NULL };
    const char *s = spec + 5;
    long B, C, depth, image, cin, cout, ab;
    int rc;
    if ((rc = mdl_spec_check(spec, s, keys)) < 0 ||
        (rc = mdl_spec_long(spec, s, "convs", -1, 1, 10000, &B)) < 0 ||
        (rc = mdl_spec_long(spec, s, "channels", -1, 2, 65536, &C)) < 0 ||
        (rc = mdl_spec_long(spec, s, "depth", 5, 1, UNET_MAX_DEPTH, &depth)) < 0 ||
        (rc = mdl_spec_long(spec, s, "image", 192, 2, 8192, &image)) < 0 ||
        (rc = mdl_spec_long(spec, s, "in", 3, 1, 65536, &cin)) < 0 ||
        (rc = mdl_spec_long(spec, s, "out", 1, 1, 65536, &cout)) < 0 ||
        (rc = mdl_spec_long(spec, s, "act_bytes", 4, 1, 16, &ab)) < 0)
        return rc;
    if (image % (1L << depth))
        return ps_error(PS_EINVAL, "model spec '%s': image must be a multiple of 2^depth = %ld "
                        "(every pool halves it), got %ld", spec, 1L << depth, image);
    if (C << depth > 1L << 20)
        return ps_error(PS_EINVAL, "model spec '%s': channels x 2^depth must be at most "
                        "1048576 (the bottleneck's width), got %ld", spec, C << depth);
    char origin[160];
    snprintf(origin, sizeof origin, "unet:convs=%ld,channels=%ld,depth=%ld,image=%ld,in=%ld,"
             "out=%ld,act_bytes=%ld", B, C, depth, image, cin, cout, ab);
    struct un u = { .p = mdl_profile_new(origin, 0), .ab = (double)ab, .h = (int)image };
    if (!u.p)
        return ps_error(PS_ENOMEM, "unet: out of memory");
    double skip[UNET_MAX_DEPTH];
    char n[MDL_NAME_MAX];
    struct mdl_genwork w;
    int c = (int)cin;
    for (int i = 0; i < depth; i++) { /* encoders: cell, Stash, max pool */
        int co = (int)(C << i);
        snprintf(n, sizeof n, "encoder%d", i);
        if ((rc = cell(&u, n, (int)B, c, co, co, i == 0)) < 0)
            goto err_free_profile;
        double x = co * (double)u.h * u.h, po = x / 4;
        skip[i] = x;
        mdl_genwork_init(&w); /* the gradient of x: the pool's and the skip's */
        mdl_genwork_grad_sum(&w, x, 2, u.ab, 0);
        snprintf(n, sizeof n, "encoder%d.skip", i);
        u.skips += x; /* after it, x travels twice: as output and as skip */
        if ((rc = put(&u, n, "stash", 0, x, 0, &w)) < 0)
            goto err_free_profile;
        mdl_genwork_init(&w);
        mdl_genwork_vec(&w, 4 * po, 8 * po, (x + po) * u.ab, (po + 2 * x) * u.ab, 1);
        u.kept_b = 8 * po; /* int64 indices */
        u.h /= 2;
        snprintf(n, sizeof n, "encoder%d.down", i);
        if ((rc = put(&u, n, "maxpool", 0, po, x, &w)) < 0)
            goto err_free_profile;
        c = co;
    }
    if ((rc = cell(&u, "bottleneck", (int)B, c, (int)(C << depth), c, 0)) < 0)
        goto err_free_profile;
    for (int i = (int)depth - 1; i >= 0; i--) { /* decoders: upsample, PopCat, cell */
        double up = 4.0 * c * u.h * u.h;
        mdl_genwork_init(&w);
        mdl_genwork_vec(&w, 0, up, (up / 4 + up) * u.ab, (up + up / 4) * u.ab, 1);
        u.h *= 2;
        snprintf(n, sizeof n, "decoder%d.up", i);
        if ((rc = put(&u, n, "upsample", 0, up, 0, &w)) < 0)
            goto err_free_profile;
        double cat = up + skip[i];
        mdl_genwork_init(&w);
        mdl_genwork_vec(&w, 0, 0, 2 * cat * u.ab, 2 * cat * u.ab, 1);
        u.skips -= skip[i];
        snprintf(n, sizeof n, "decoder%d.skip", i);
        if ((rc = put(&u, n, "popcat", 0, cat, 0, &w)) < 0)
            goto err_free_profile;
        int ci = (int)(C << (i + 1)), co = i ? (int)(C << (i - 1)) : (int)(C / 2);
        snprintf(n, sizeof n, "decoder%d", i);
        if ((rc = cell(&u, n, (int)B, ci, co, co, 0)) < 0)
            goto err_free_profile;
        c = co;
    }
    double hw = (double)u.h * u.h;
    mdl_genwork_init(&w);
    mdl_genwork_conv(&w, hw, c, (double)cout, 1, 1, 0);
    if ((rc = put(&u, "segment", "conv", (double)c * cout, cout * hw, c * hw, &w)) < 0)
        goto err_free_profile;
    *out = u.p;
    return 1;

err_free_profile:
    mdl_profile_free(u.p);
    return rc;
}
