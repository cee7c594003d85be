#include "models/mdl_resnet.h"
#include "models/mdl_gen.h"
#include "models/mdl_genwork.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <string.h>

struct rn {
    struct mdl_profile *p;
    double ab;
    double skip;  /* elements of the skip tensor in flight, 0 outside a block */
    double kept_b; /* bytes the next layer keeps whatever act_bytes (int64 indices) */
    double shared_el; /* elements of the next layer's stash the layer before it keeps too */
};

static int put(struct rn *r, const char *name, const char *kind, double fwd, double bwd,
               double params, double out_el, double stash_el, struct mdl_genwork *gw)
{
    struct mdl_layer l;
    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, "%s", name);
    snprintf(l.kind, sizeof l.kind, "%s", kind);
    l.fwd = fwd;
    l.bwd = bwd;
    l.params = params;
    l.out_bytes = (out_el + r->skip) * r->ab;
    l.stash_bytes = stash_el * r->ab + r->kept_b;
    l.stash_shared_bytes = r->shared_el * r->ab;
    l.carry_bytes = r->skip * r->ab; /* the block input on its way to the residual */
    r->kept_b = r->shared_el = 0;
    mdl_genwork_attach(gw, &l);
    return mdl_profile_add(r->p, &l);
}

/* k x k conv, stride s, padding k/2, on c x h x h; *h becomes the output. */
static int conv(struct rn *r, const char *name, int cin, int cout, int k, int s, int *h,
                int dgrad)
{
    int ho = (*h + 2 * (k / 2) - k) / s + 1;
    double rows = (double)ho * ho, in = (double)cin * *h * *h, f = 2 * rows * cin * k * k * cout;
    struct mdl_genwork w;
    mdl_genwork_init(&w);
    /* An implicit GEMM: a k x k convolution reads its input, not im2col. */
    if (k == 3 && s == 1)
        mdl_genwork_conv3(&w, rows, cin, cout, 1, dgrad, in);
    else
        mdl_genwork_conv(&w, rows, (double)cin * k * k, cout, 1, dgrad, k > 1 ? in : 0);
    *h = ho; /* a GEMM's operand bytes are the device model's to count */
    return put(r, name, "conv", f, dgrad ? 2 * f : f, (double)cin * cout * k * k, rows * cout,
               in, &w);
}

static int vec(struct rn *r, const char *name, const char *kind, double fl, double bytes_f,
               double bytes_b, double params, double out_el, double stash_el)
{
    struct mdl_genwork w;
    mdl_genwork_init(&w);
    mdl_genwork_vec(&w, fl, 2 * fl, bytes_f * r->ab, bytes_b * r->ab, 1);
    return put(r, name, kind, fl, 2 * fl, params, out_el, stash_el, &w);
}

static int bn(struct rn *r, const char *name, double c, double e)
{
    return vec(r, name, "bn", 4 * e, 3 * e, 5 * e, 2 * c, e, e);
}

static int relu(struct rn *r, const char *name, double e)
{
    return vec(r, name, "relu", e, 2 * e, 3 * e, 0, e, e);
}

/* A block: identity (torchgpipe's twin of the input), conv1 .. bn3, the
 * residual, relu3. conv1 keeps the block input, which the layer before the
 * identity keeps too when it is the previous block's relu3 (in_kept). The
 * identity module keeps nothing itself, so that a stage counts the tensor
 * once whichever of the three it starts at, the identity is given it as
 * its stash, shared with the layer before (when that one keeps it) and
 * with conv1 after: a stage holding relu3 counts it there, one starting at
 * the identity or at conv1 counts it there. Only a stage of the identity
 * alone counts a tensor it does not need. */
static int bottleneck(struct rn *r, const char *pre, int inpl, int planes, int s, int *h,
                      int in_kept)
{
    char n[MDL_NAME_MAX];
    int rc, hin = *h, h1 = *h;
    double in_el = (double)inpl * hin * hin;
    struct mdl_genwork none;
    mdl_genwork_init(&none);
    r->skip = in_el;
    snprintf(n, sizeof n, "%s.identity", pre);
    r->shared_el = in_kept ? in_el : 0;
    if ((rc = put(r, n, "identity", 0, 0, 0, in_el, in_el, &none)) < 0)
        return rc;
#define STEP(expr) if ((rc = (expr)) < 0) return rc
    snprintf(n, sizeof n, "%s.conv1", pre);
    r->shared_el = in_el; /* the block input, which the identity carries */
    STEP(conv(r, n, inpl, planes, 1, 1, &h1, 1));
    double e1 = (double)planes * h1 * h1;
    snprintf(n, sizeof n, "%s.bn1", pre);
    STEP(bn(r, n, planes, e1));
    snprintf(n, sizeof n, "%s.relu1", pre);
    STEP(relu(r, n, e1));
    snprintf(n, sizeof n, "%s.conv2", pre);
    r->shared_el = e1; /* its input is relu1's output, which relu1 keeps */
    STEP(conv(r, n, planes, planes, 3, s, &h1, 1));
    double e2 = (double)planes * h1 * h1, e3 = 4.0 * e2;
    snprintf(n, sizeof n, "%s.bn2", pre);
    STEP(bn(r, n, planes, e2));
    snprintf(n, sizeof n, "%s.relu2", pre);
    STEP(relu(r, n, e2));
    snprintf(n, sizeof n, "%s.conv3", pre);
    r->shared_el = e2; /* relu2's output */
    STEP(conv(r, n, planes, 4 * planes, 1, 1, &h1, 1));
    snprintf(n, sizeof n, "%s.bn3", pre);
    STEP(bn(r, n, 4 * planes, e3));
    r->skip = 0;
    /* residual: the downsample conv + BN when the shape changes, then add */
    struct mdl_genwork w;
    mdl_genwork_init(&w);
    double f = e3, params = 0, stash = 0;
    if (s != 1 || inpl != 4 * planes) {
        double rows = (double)h1 * h1, cf = 2 * rows * inpl * 4 * planes;
        mdl_genwork_conv(&w, rows, inpl, 4 * planes, 1, 1, 0); /* the 1 x 1 downsample */
        mdl_genwork_vec(&w, 4 * e3, 8 * e3, 3 * e3 * r->ab, 5 * e3 * r->ab, 1);
        f += cf + 4 * e3;
        params = (double)inpl * 4 * planes + 8.0 * planes;
        stash = in_el + e3;
    }
    /* the add (its backward is free) and the sum of the block input's two
     * gradients (conv1 and the shortcut read it), PyTorch's one add */
    mdl_genwork_vec(&w, e3, 0, 3 * e3 * r->ab, 0, 0);
    mdl_genwork_grad_sum(&w, in_el, 2, r->ab, 0);
    snprintf(n, sizeof n, "%s.residual", pre);
    STEP(put(r, n, "residual", f, mdl_genwork_bwd_flops(&w), params, e3, stash, &w));
    snprintf(n, sizeof n, "%s.relu3", pre);
    STEP(relu(r, n, e3));
#undef STEP
    *h = h1;
    return 0;
}

int mdl_resnet_from_spec(const char *spec, struct mdl_profile **out)
{
    if (strncmp(spec, "resnet:", 7))
        return 0;
    static const char *const keys[] = { "depth", "classes", "image", "act_bytes", NULL };
    const char *s = spec + 7;
    long depth, classes, image, ab;
    int rc;
    if ((rc = mdl_spec_check(spec, s, keys)) < 0 ||
        (rc = mdl_spec_long(spec, s, "depth", -1, 1, 100000, &depth)) < 0 || /* named below */
        (rc = mdl_spec_long(spec, s, "classes", 1000, 1, 10000000, &classes)) < 0 ||
        (rc = mdl_spec_long(spec, s, "image", 224, 32, 8192, &image)) < 0 ||
        (rc = mdl_spec_long(spec, s, "act_bytes", 4, 1, 16, &ab)) < 0)
        return rc;
    static const int blocks[3][4] = { { 3, 4, 6, 3 }, { 3, 4, 23, 3 }, { 3, 8, 36, 3 } };
    int which = depth == 50 ? 0 : depth == 101 ? 1 : depth == 152 ? 2 : -1;
    if (which < 0)
        return ps_error(PS_EUSAGE, "model spec '%s': depth must be 50, 101 or 152, got %ld",
                        spec, depth);
    if (image % 32)
        return ps_error(PS_EINVAL, "model spec '%s': image must be a multiple of 32, got %ld",
                        spec, image);
    char origin[128];
    snprintf(origin, sizeof origin, "resnet:depth=%ld,classes=%ld,image=%ld,act_bytes=%ld",
             depth, classes, image, ab);
    struct rn r = { .p = mdl_profile_new(origin, 0), .ab = (double)ab };
    if (!r.p)
        return ps_error(PS_ENOMEM, "resnet: out of memory");
    int h = (int)image, inpl = 64;
    double e;
    if ((rc = conv(&r, "conv1", 3, 64, 7, 2, &h, 0)) < 0)
        goto err_free_profile;
    e = 64.0 * h * h;
    if ((rc = bn(&r, "bn1", 64, e)) < 0 || (rc = relu(&r, "relu", e)) < 0)
        goto err_free_profile;
    int hp = (h + 2 - 3) / 2 + 1;
    double po = 64.0 * hp * hp;
    /* kept: its input and, as PyTorch's max_pool2d_with_indices keeps them,
     * its int64 indices, 8 bytes per output element */
    r.kept_b = po * 8;
    r.shared_el = e; /* its input is the stem ReLU's output, which the ReLU keeps */
    if ((rc = vec(&r, "maxpool", "pool", 9 * po, e + po, po + 2 * e, 0, po, e)) < 0)
        goto err_free_profile;
    h = hp;
    for (int st = 0; st < 4; st++) {
        int planes = 64 << st;
        for (int b = 0; b < blocks[which][st]; b++) {
            char pre[32];
            snprintf(pre, sizeof pre, "layer%d.%d", st + 1, b);
            /* the first block's input is the max pool's output, which the
             * pool does not keep; every other one is a relu3's output */
            if ((rc = bottleneck(&r, pre, inpl, planes, b == 0 && st > 0 ? 2 : 1, &h,
                                 st > 0 || b > 0)) < 0)
                goto err_free_profile;
            inpl = 4 * planes;
        }
    }
    double feat = inpl, area = (double)h * h, nc = (double)classes;
    /* kept: its input (PyTorch's average pools, adaptive or not, keep it),
     * the last relu3's output, which that ReLU keeps too */
    r.shared_el = feat * area;
    if ((rc = vec(&r, "avgpool", "pool", feat * area, feat * area + feat, feat * area + feat,
                  0, feat, feat * area)) < 0)
        goto err_free_profile;
    struct mdl_genwork none, fw;
    mdl_genwork_init(&none); /* a view: no work, no kernel */
    if ((rc = put(&r, "flat", "flatten", 0, 0, 0, feat, 0, &none)) < 0)
        goto err_free_profile;
    mdl_genwork_init(&fw);
    mdl_genwork_gemm(&fw, 1, feat, nc, 1, 1, 1);
    mdl_genwork_vec(&fw, nc, 2 * nc, 2 * nc * r.ab, nc * r.ab, 1); /* bias */
    double ff = 2 * feat * nc + nc;
    if ((rc = put(&r, "fc", "fc", ff, 2 * ff, feat * nc + nc, nc, feat, &fw)) < 0)
        goto err_free_profile;
    *out = r.p;
    return 1;

err_free_profile:
    mdl_profile_free(r.p);
    return rc;
}
