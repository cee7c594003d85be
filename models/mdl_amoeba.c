#include "models/mdl_amoeba.h"
#include "models/mdl_genwork.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdio.h>
#include <string.h>

/* AmoebaNet-D genotype: 10 operations applied pairwise to hidden states
 * (0 = prev mapped, 1 = prev_prev mapped, 2.. = earlier pair sums), and the
 * states concatenated into the cell output. Normal concat [0, 3, 4, 6] is
 * the TensorFlow reference's, which GPipe's Table 1 counts follow. */
enum op { OP_NONE, OP_CONV1, OP_CONV17, OP_CONV3, OP_MAX2, OP_MAX3, OP_AVG3 };

struct genotype {
    int n_ops;
    struct { int in; enum op op; } ops[10];
    int n_concat;
    int concat[4];
};

static const struct genotype normal_cell = {
    10,
    { { 1, OP_CONV1 }, { 1, OP_MAX3 }, { 1, OP_NONE }, { 0, OP_CONV17 },
      { 0, OP_CONV1 }, { 0, OP_CONV17 }, { 2, OP_MAX3 }, { 2, OP_NONE },
      { 1, OP_AVG3 }, { 5, OP_CONV1 } },
    4, { 0, 3, 4, 6 },
};

static const struct genotype reduction_cell = {
    10,
    { { 0, OP_MAX2 }, { 0, OP_MAX3 }, { 2, OP_NONE }, { 1, OP_CONV3 },
      { 2, OP_CONV17 }, { 2, OP_MAX3 }, { 3, OP_NONE }, { 1, OP_MAX2 },
      { 2, OP_AVG3 }, { 3, OP_CONV1 } },
    3, { 4, 5, 6 },
};

/* Running totals of one layer; stash counts elements. gw states the same
 * work op by op (mdl_genwork.h), ab bytes per element; no_dgrad: the ops
 * see the image (no input gradient, no ReLU backward). */
struct acc {
    double flops, params, stash;
    double stash_b; /* kept bytes whatever act_bytes (a max pool's int64 indices) */
    struct mdl_genwork gw;
    double ab;
    int no_dgrad;
    int fused; /* keep=fused (mdl_amoeba.h): no ReLU outputs kept */
    int pool3_avg; /* pool3=avg: max_pool_3x3 is an average pool (torchgpipe's) */
};

static void acc_init(struct acc *a, double ab)
{
    memset(a, 0, sizeof *a);
    mdl_genwork_init(&a->gw);
    a->ab = ab;
}

/* Work rules: ReLU reads and writes (backward: dy, output, dx), or under
 * keep=fused runs inside the convolution it feeds (mdl_genwork_vec_fused:
 * backward reads its input once); BN reads its
 * input twice and writes (backward 5 tensors); a concatenation is a copy
 * kernel of no FLOPs both ways (backward: its slices of the gradient made
 * contiguous for the cuDNN and pooling kernels that read them); a pair's
 * sum reads two states and writes one, and its backward is free; a tensor
 * that several ops read has its gradient contributions summed
 * (mdl_genwork_grad_sum: PyTorch's pairwise adds under keep=unfused,
 * TensorFlow's one AddN under keep=fused). */
static void w_relu(struct acc *a, double in)
{
    if (a->fused) { /* into the convolution that reads it (mdl_genwork.h) */
        mdl_genwork_vec_fused(&a->gw, in, a->no_dgrad ? 0 : 2 * in,
                              a->no_dgrad ? 0 : in * a->ab);
        return;
    }
    if (a->no_dgrad)
        mdl_genwork_vec(&a->gw, in, 0, 2 * in * a->ab, 0, 0);
    else
        mdl_genwork_vec(&a->gw, in, 2 * in, 2 * in * a->ab, 3 * in * a->ab, 1);
}

static void w_bn(struct acc *a, double out)
{
    mdl_genwork_vec(&a->gw, 4 * out, 8 * out, 3 * out * a->ab, 5 * out * a->ab, 1);
}

static void w_copy(struct acc *a, double out)
{
    mdl_genwork_vec(&a->gw, 0, 0, 2 * out * a->ab, 2 * out * a->ab, 1);
}

/* Spatial extent after a k-wide window with stride s and padding p. */
static int out_dim(int h, int k, int s, int p) { return (h + 2 * p - k) / s + 1; }

/* ReLU -> kh x kw conv (no bias, stride sh x sw, "same" padding) -> BN on an
 * input of cin x h x w; returns the output extent through *ho / *wo. */
static void relu_conv_bn(struct acc *a, int cin, int cout, int kh, int kw, int sh,
                         int sw, int h, int w, int *ho, int *wo)
{
    int oh = out_dim(h, kh, sh, kh / 2), ow = out_dim(w, kw, sw, kw / 2);
    double in = (double)cin * h * w, out = (double)cout * oh * ow;
    double conv = 2.0 * cin * cout * kh * kw * oh * ow;
    a->flops += in + conv + 4 * out;
    a->params += (double)cin * cout * kh * kw + 2.0 * cout;
    /* ReLU output (conv input; fused: recomputed, except from the image) and
     * conv output (BN input) */
    a->stash += (a->fused && !a->no_dgrad ? 0 : in) + out;
    w_relu(a, in);
    /* An implicit GEMM: a k x k convolution reads its input, not im2col. */
    if (kh == 3 && kw == 3 && sh == 1 && sw == 1)
        mdl_genwork_conv3(&a->gw, (double)oh * ow, cin, cout, 1, !a->no_dgrad, in);
    else
        mdl_genwork_conv(&a->gw, (double)oh * ow, (double)cin * kh * kw, cout, 1,
                         !a->no_dgrad, kh * kw > 1 ? in : 0);
    w_bn(a, out);
    *ho = oh;
    *wo = ow;
}

/* ReLU, two 1x1 stride-2 convs (the second on the input shifted by one
 * pixel) each to cout/2 channels, concatenated, BN. Halves h and w. */
static void factorized_reduce(struct acc *a, int cin, int cout, int h, int w)
{
    int oh = out_dim(h, 1, 2, 0), ow = out_dim(w, 1, 2, 0);
    double in = (double)cin * h * w, out = (double)cout * oh * ow;
    double conv = 2.0 * 2.0 * cin * (cout / 2) * oh * ow;
    a->flops += in + conv + 4 * out;
    a->params += 2.0 * cin * (cout / 2) + 2.0 * cout;
    /* kept: the ReLU output (conv1's input) and the padded copy (conv2's),
     * both recomputed under fused, and the BN input */
    a->stash += (a->fused ? 0 : 2 * in) + out;
    w_relu(a, in);
    /* The second conv reads the ReLU output shifted by one pixel: a slice
     * (a view), zero-padded back to h x w (a copy: reads and writes it).
     * Backward, the pad's gradient is the inner part of conv2's input
     * gradient (a copy), and the slice's a zeroed h x w tensor with that
     * copied in (write, then read and write): 5 tensors in all. */
    mdl_genwork_vec(&a->gw, 0, 0, 2 * in * a->ab, 5 * in * a->ab, 1);
    mdl_genwork_conv(&a->gw, (double)oh * ow, cin, cout / 2, 2, 1, 0); /* 1 x 1 convs */
    mdl_genwork_grad_sum(&a->gw, in, 2, a->ab, a->fused); /* the ReLU output, read twice */
    w_copy(a, out); /* the concatenation */
    w_bn(a, out);
}

/* One operation of a cell on c channels of h x w with stride s; *stashed
 * says whether its input state is already kept (max pools share it). */
static void cell_op(struct acc *a, enum op op, int c, int s, int h, int w,
                    int *stashed, int *ho, int *wo)
{
    int q = c / 4, t1, t2;
    switch (op) {
    case OP_NONE:
        if (s == 1) {
            *ho = h;
            *wo = w;
        } else {
            factorized_reduce(a, c, c, h, w);
            *ho = out_dim(h, 1, 2, 0);
            *wo = out_dim(w, 1, 2, 0);
        }
        return;
    case OP_CONV1:
        relu_conv_bn(a, c, c, 1, 1, s, s, h, w, ho, wo);
        return;
    case OP_CONV17: /* 1x1 squeeze to c/4, 1x7, 7x1, 1x1 back to c */
        relu_conv_bn(a, c, q, 1, 1, 1, 1, h, w, &t1, &t2);
        relu_conv_bn(a, q, q, 1, 7, 1, s, t1, t2, &t1, &t2);
        relu_conv_bn(a, q, q, 7, 1, s, 1, t1, t2, &t1, &t2);
        relu_conv_bn(a, q, c, 1, 1, 1, 1, t1, t2, ho, wo);
        return;
    case OP_CONV3: /* 1x1 squeeze to c/4, 3x3 (strided), 1x1 back to c */
        relu_conv_bn(a, c, q, 1, 1, 1, 1, h, w, &t1, &t2);
        relu_conv_bn(a, q, q, 3, 3, s, s, t1, t2, &t1, &t2);
        relu_conv_bn(a, q, c, 1, 1, 1, 1, t1, t2, ho, wo);
        return;
    case OP_MAX3:
        if (a->pool3_avg)
            op = OP_AVG3;
        /* fall through */
    case OP_MAX2:
    case OP_AVG3: {
        int k = op == OP_MAX2 ? 2 : 3, p = op == OP_MAX2 ? 0 : 1;
        *ho = out_dim(h, k, s, p);
        *wo = out_dim(w, k, s, p);
        double pin = (double)c * h * w, pout = (double)c * *ho * *wo;
        a->flops += (double)k * k * pout;
        mdl_genwork_vec(&a->gw, k * k * pout, 2.0 * k * k * pout, (pin + pout) * a->ab,
                        (pout + (op == OP_AVG3 ? 1 : 2) * pin) * a->ab, 1);
        /* Kept for backward: a max pool's input, once per state (its
         * argmax); under keep=unfused, PyTorch's as its autograd formulas
         * give them (max_pool2d_with_indices: the input and the int64
         * indices, 8 bytes per output element; avg_pool2d: the input),
         * under fused TensorFlow's (an average pool keeps nothing). */
        int keep_in = op != OP_AVG3 || !a->fused;
        if (keep_in && !*stashed) {
            a->stash += pin;
            *stashed = 1;
        }
        if (op != OP_AVG3 && !a->fused)
            a->stash_b += pout * 8;
        return;
    }
    }
    PS_BUG("unknown AmoebaNet operation %d", (int)op);
}

/* Geometry of the tensors flowing between layers. */
struct flow {
    int c_pp, h_pp;   /* prev_prev: channels, extent */
    int c_p, h_p;     /* prev */
    int red_prev;     /* the previous layer was a reduction cell */
};

/* One cell with c filters; updates f to this cell's output. in_uses: the
 * readers of the cell's input, whose gradient sums what each gives back:
 * its reduce1, the next cell as that cell's prev_prev (every cell but the
 * last), and in the first cell its own reduce2 too (the stem's output is
 * both of its states). */
static void cell(struct acc *a, struct flow *f, int c, int reduction, int in_uses)
{
    const struct genotype *g = reduction ? &reduction_cell : &normal_cell;
    int hs[7], ws[7], stashed[7] = { 0 }, uses[7] = { 0 }, t1, t2;
    mdl_genwork_grad_sum(&a->gw, (double)f->c_p * f->h_p * f->h_p, in_uses, a->ab, a->fused);
    if (a->fused) /* the chains start from the cell's two inputs: keep them */
        a->stash += (double)f->c_p * f->h_p * f->h_p + (double)f->c_pp * f->h_pp * f->h_pp;
    relu_conv_bn(a, f->c_p, c, 1, 1, 1, 1, f->h_p, f->h_p, &hs[0], &ws[0]);
    if (f->red_prev) {
        factorized_reduce(a, f->c_pp, c, f->h_pp, f->h_pp);
        hs[1] = out_dim(f->h_pp, 1, 2, 0);
        ws[1] = hs[1];
    } else if (f->c_pp != c) {
        relu_conv_bn(a, f->c_pp, c, 1, 1, 1, 1, f->h_pp, f->h_pp, &hs[1], &ws[1]);
    } else {
        hs[1] = ws[1] = f->h_pp;
        stashed[1] = a->fused; /* prev_prev itself, kept above */
    }
    PS_ASSERT(hs[0] == hs[1] && ws[0] == ws[1]);
    for (int i = 0; i < g->n_ops; i += 2) {
        int ho[2], wo[2];
        for (int j = 0; j < 2; j++) {
            int in = g->ops[i + j].in, s = reduction && in < 2 ? 2 : 1;
            cell_op(a, g->ops[i + j].op, c, s, hs[in], ws[in], &stashed[in], &ho[j], &wo[j]);
        }
        PS_ASSERT(ho[0] == ho[1] && wo[0] == wo[1]);
        int st = 2 + i / 2;
        hs[st] = ho[0];
        ws[st] = wo[0];
        double sum = (double)c * ho[0] * wo[0];
        if (a->fused) /* a state a later operation reads: kept once */
            for (int k = i + 2; k < g->n_ops && !stashed[st]; k++)
                if (g->ops[k].in == st) {
                    a->stash += sum;
                    stashed[st] = 1;
                }
        a->flops += sum; /* the pair's sum: its backward passes the gradient on */
        mdl_genwork_vec(&a->gw, sum, 0, 3 * sum * a->ab, 0, 0);
    }
    /* Each hidden state's gradient sums what its readers give back: the
     * operations that take it and the concatenation. */
    for (int i = 0; i < g->n_ops; i++)
        uses[g->ops[i].in]++;
    for (int k = 0; k < g->n_concat; k++)
        uses[g->concat[k]]++;
    for (int st = 0; st < 2 + g->n_ops / 2; st++)
        mdl_genwork_grad_sum(&a->gw, (double)c * hs[st] * ws[st], uses[st], a->ab, a->fused);
    t1 = hs[g->concat[0]];
    t2 = ws[g->concat[0]];
    for (int k = 1; k < g->n_concat; k++)
        PS_ASSERT(hs[g->concat[k]] == t1 && ws[g->concat[k]] == t2);
    w_copy(a, (double)c * g->n_concat * t1 * t2);
    f->c_pp = f->c_p;
    f->h_pp = f->h_p;
    f->c_p = c * g->n_concat;
    f->h_p = t1;
    f->red_prev = reduction;
}

/* The layer's backward FLOPs are its work's: input and weight gradients
 * and the vector kernels' backward (sums of fanned-out gradients included;
 * the image's stem has no input gradient and no ReLU backward). */
static int add_layer(struct mdl_profile *p, const char *name, const char *kind,
                     struct acc *a, double out_elems, double ab)
{
    struct mdl_layer l;
    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, "%s", name);
    snprintf(l.kind, sizeof l.kind, "%s", kind);
    l.fwd = a->flops;
    l.bwd = mdl_genwork_bwd_flops(&a->gw);
    l.params = a->params;
    l.out_bytes = out_elems * ab;
    l.stash_bytes = a->stash * ab + a->stash_b;
    mdl_genwork_attach(&a->gw, &l);
    return mdl_profile_add(p, &l);
}

void mdl_amoeba_defaults(struct mdl_amoeba_cfg *c)
{
    c->L = 18;
    c->D = 256;
    c->classes = 1000;
    c->image = 224;
    c->act_bytes = 4;
    c->fused = 0;
    c->pool3_avg = 0;
}

static int check_cfg(const struct mdl_amoeba_cfg *c)
{
    if (c->L < MDL_AMOEBA_L_MIN || c->L % 3 || c->L > MDL_AMOEBA_L_MAX)
        return ps_error(PS_EINVAL, "amoebanet: field 'L' must be a multiple of 3 in "
                         "[%d, %d] (L/3 normal cells per stack), got %d", MDL_AMOEBA_L_MIN,
                         MDL_AMOEBA_L_MAX, c->L);
    if (c->D < MDL_AMOEBA_D_MIN || c->D % 8 || c->D > MDL_AMOEBA_D_MAX)
        return ps_error(PS_EINVAL, "amoebanet: field 'D' must be a multiple of 8 in "
                         "[%d, %d], got %d", MDL_AMOEBA_D_MIN, MDL_AMOEBA_D_MAX, c->D);
    if (c->classes < 1 || c->classes > MDL_AMOEBA_CLASSES_MAX)
        return ps_error(PS_EINVAL, "amoebanet: field 'classes' must be in [1, %d], "
                         "got %d", MDL_AMOEBA_CLASSES_MAX, c->classes);
    if (c->image < MDL_AMOEBA_IMAGE_MIN || c->image % 32 || c->image > MDL_AMOEBA_IMAGE_MAX)
        return ps_error(PS_EINVAL, "amoebanet: field 'image' must be a multiple of 32 in "
                         "[%d, %d] (five halvings), got %d", MDL_AMOEBA_IMAGE_MIN,
                         MDL_AMOEBA_IMAGE_MAX, c->image);
    if (!(c->act_bytes > 0 && c->act_bytes <= 16))
        return ps_error(PS_EINVAL, "amoebanet: field 'act_bytes' must be in (0, 16], "
                         "got %s", PS_DBL(c->act_bytes));
    if (c->fused != 0 && c->fused != 1)
        return ps_error(PS_EINVAL, "amoebanet: field 'keep' must be unfused or fused");
    if (c->pool3_avg != 0 && c->pool3_avg != 1)
        return ps_error(PS_EINVAL, "amoebanet: field 'pool3' must be max or avg");
    return 0;
}

int mdl_amoeba_profile(const struct mdl_amoeba_cfg *c, struct mdl_profile **out)
{
    *out = NULL;
    int rc = check_cfg(c);
    if (rc < 0)
        return rc;
    char origin[160];
    snprintf(origin, sizeof origin, "amoebanet:L=%d,D=%d,classes=%d,image=%d,act_bytes=%s%s%s",
             c->L, c->D, c->classes, c->image, PS_DBL(c->act_bytes), c->fused ? ",keep=fused" : "",
             c->pool3_avg ? ",pool3=avg" : "");
    struct mdl_profile *p = mdl_profile_new(origin, 0);
    if (!p)
        return ps_error(PS_ENOMEM, "amoebanet: out of memory");
    double ab = c->act_bytes;
    int ch = c->D / 4, hw;
    struct acc a;
    acc_init(&a, ab);
    a.no_dgrad = 1;
    a.fused = c->fused;
    a.pool3_avg = c->pool3_avg;
    relu_conv_bn(&a, 3, ch, 3, 3, 2, 2, c->image, c->image, &hw, &hw);
    /* The image needs no gradient: no data-gradient conv, no ReLU backward. */
    if ((rc = add_layer(p, "stem1", "stem", &a, (double)ch * hw * hw, ab)) < 0)
        goto err_free_profile;
    struct flow f = { ch, hw, ch, hw, 0 };
    int per_stack = c->L / 3, n_cells = c->L + 4, k = 0;
    char name[MDL_NAME_MAX];
    /* Layer plan: stem2 R, stem3 R, normals, R, normals, R, normals. */
    for (int part = 0; part < 7; part++) {
        int reduction = part != 2 && part != 4 && part != 6;
        int reps = reduction ? 1 : per_stack;
        if (reduction)
            ch *= 2;
        for (int r = 0; r < reps; r++) {
            struct acc ca;
            acc_init(&ca, ab);
            ca.fused = c->fused;
            ca.pool3_avg = c->pool3_avg;
            double skip = (double)f.c_p * f.h_p * f.h_p; /* this cell's input */
            cell(&ca, &f, ch, reduction, 1 + (k + 1 < n_cells) + (k == 0));
            k++;
            if (part < 2)
                snprintf(name, sizeof name, "stem%d", part + 2);
            else if (reduction)
                snprintf(name, sizeof name, "cell%d_reduction", part - 1);
            else
                snprintf(name, sizeof name, "cell%d_normal%d", part - 1, r + 1);
            double outb = (double)f.c_p * f.h_p * f.h_p + (k < n_cells ? skip : 0);
            rc = add_layer(p, name, reduction ? "reduction" : "normal", &ca, outb, ab);
            if (rc < 0)
                goto err_free_profile;
        }
    }
    PS_ASSERT(k == n_cells);
    struct acc ca;
    acc_init(&ca, ab);
    double feat = f.c_p, area = (double)f.h_p * f.h_p, nc = c->classes;
    mdl_genwork_vec(&ca.gw, feat * area, 2 * feat * area, (feat * area + feat) * ab,
                    (feat * area + feat) * ab, 1); /* global average pool */
    mdl_genwork_gemm(&ca.gw, 1, feat, nc, 1, 1, 1);
    mdl_genwork_vec(&ca.gw, nc, 2 * nc, 2 * nc * ab, nc * ab, 1); /* bias */
    mdl_genwork_vec(&ca.gw, 5 * nc, 10 * nc, 3 * nc * ab, 3 * nc * ab, 1); /* loss */
    ca.flops = feat * area                        /* global average pool */
               + 2 * feat * c->classes + c->classes /* FC with bias */
               + 5.0 * c->classes;                /* softmax cross-entropy */
    ca.params = feat * c->classes + c->classes;
    /* the FC input and the class probabilities; under keep=unfused also
     * the global pool's input (PyTorch's avg_pool2d keeps it; torchgpipe's
     * classifier is nn.AvgPool2d(7)), not under fused (a mean's backward
     * needs only the shape) */
    ca.stash = feat + c->classes + (c->fused ? 0 : feat * area);
    if ((rc = add_layer(p, "classify", "classifier", &ca, c->classes, ab)) < 0)
        goto err_free_profile;
    *out = p;
    return 0;

err_free_profile:
    mdl_profile_free(p);
    return rc;
}
