#include "runtime/rt_stage.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t rt_net_layer_stash(const struct rt_net *n, int l)
{
    const struct rt_layer *ly = &n->layers[l];
    int64_t b = 4 * (rt_layer_needs_input(ly) ? ly->in : 0) + 4 * rt_layer_aux_floats(ly) +
                rt_layer_mask_bytes(ly);
    if (l == n->n_layers - 1)
        b += 4LL * ly->out; /* dL/dy of the loss */
    return b;
}

int rt_net_profile(const struct rt_net *n, struct mdl_profile **out)
{
    *out = NULL;
    struct mdl_profile *p = mdl_profile_new(n->spec, 0);
    if (!p)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int l = 0; l < n->n_layers; l++) {
        const struct rt_layer *ly = &n->layers[l];
        int head = l == n->n_layers - 1;
        struct mdl_layer m = { .params = (double)ly->n_params, .out_bytes = 4.0 * ly->out,
                               .stash_bytes = (double)rt_net_layer_stash(n, l) };
        m.fwd = rt_layer_fwd_flops(ly) + (head ? 3.0 * ly->out : 0);
        /* the net input needs no gradient: layer 0 only masks, then W */
        m.bwd = rt_layer_wgrad_flops(ly) +
                (l > 0 ? rt_layer_bgrad_flops(ly) : (double)rt_layer_mask_bytes(ly));
        snprintf(m.name, sizeof m.name, "%s%d", rt_layer_kind_name(ly->kind), l);
        snprintf(m.kind, sizeof m.kind, "%s%s",
                 ly->kind == RT_LAYER_DENSE ? "dense" : "layernorm", head ? "+mse" : "");
        int rc = mdl_profile_add(p, &m);
        if (rc < 0) {
            mdl_profile_free(p);
            return rc;
        }
    }
    *out = p;
    return 0;
}

int rt_stage_plan(const struct rt_net *n, int index, int n_stages, int first,
                  int n_layers, int rows, struct rt_stage *st)
{
    memset(st, 0, sizeof *st);
    if (first < 0 || n_layers < 1 || first + n_layers > n->n_layers || rows < 1)
        return ps_error(PS_EINVAL, "stage %d: bad layer range %d+%d of %d or rows %d",
                         index, first, n_layers, n->n_layers, rows);
    st->index = index;
    st->n_stages = n_stages;
    st->first = first;
    st->n_layers = n_layers;
    st->rows = rows;
    st->is_last_layer_head = first + n_layers == n->n_layers;
    size_t L = (size_t)n_layers;
    st->x_off = malloc(L * sizeof(int64_t));
    st->aux_off = malloc(L * sizeof(int64_t));
    st->mask_off = malloc(L * sizeof(int64_t));
    st->wg_off = malloc(L * sizeof(int64_t));
    if (!st->x_off || !st->aux_off || !st->mask_off || !st->wg_off) {
        rt_stage_release(st);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    /* floats first (layer order, then dL/dy), bytes (masks) last: no padding */
    int64_t off = 0, r = rows, wg = 0;
    for (int l = 0; l < n_layers; l++) {
        const struct rt_layer *ly = &n->layers[first + l];
        st->x_off[l] = rt_layer_needs_input(ly) ? off : -1;
        off += rt_layer_needs_input(ly) ? 4 * r * ly->in : 0;
        st->aux_off[l] = rt_layer_aux_floats(ly) ? off : -1;
        off += 4 * r * rt_layer_aux_floats(ly);
        st->wg_off[l] = l + 1 < n_layers ? wg : -1;
        wg += l + 1 < n_layers ? 4 * r * ly->out : 0;
    }
    st->dy_off = -1;
    if (st->is_last_layer_head) {
        st->dy_off = off;
        off += 4 * r * n->layers[n->n_layers - 1].out;
    }
    for (int l = 0; l < n_layers; l++) {
        const struct rt_layer *ly = &n->layers[first + l];
        st->mask_off[l] = rt_layer_mask_bytes(ly) ? off : -1;
        off += r * rt_layer_mask_bytes(ly);
    }
    st->mem.stash = off;
    st->mem.in = index > 0 ? 4 * r * rt_net_width(n, first) : 0;
    st->mem.out = index + 1 < n_stages ? 4 * r * rt_net_width(n, first + n_layers) : 0;
    st->wgrad_bytes = wg;
    st->mem.wgrad = wg; /* the ledger counts W's deferred inputs (sch_memory.c) */
    return 0;
}

void rt_stage_release(struct rt_stage *st)
{
    free(st->x_off);
    free(st->aux_off);
    free(st->mask_off);
    free(st->wg_off);
    st->x_off = st->aux_off = st->mask_off = st->wg_off = NULL;
}

int rt_work_init(struct rt_work *w, const struct rt_net *net, const struct rt_stage *st,
                 int n)
{
    memset(w, 0, sizeof *w);
    int64_t big = 1;
    for (int i = 0; i < n; i++)
        for (int l = st[i].first; l <= st[i].first + st[i].n_layers; l++) {
            int64_t v = (int64_t)st[i].rows * rt_net_width(net, l);
            if (v > big)
                big = v;
        }
    int64_t rows = 1;
    for (int i = 0; i < n; i++)
        rows = st[i].rows > rows ? st[i].rows : rows;
    int64_t aux = big + rows;
    w->a = malloc((size_t)big * sizeof(float));
    w->b = malloc((size_t)big * sizeof(float));
    w->aux = malloc((size_t)aux * sizeof(float));
    if (!w->a || !w->b || !w->aux) {
        rt_work_release(w);
        return ps_error(PS_ENOMEM, "out of memory for a %lld-float workspace", (long long)big);
    }
    w->bytes = (2 * big + aux) * (int64_t)sizeof(float);
    return 0;
}

void rt_work_release(struct rt_work *w)
{
    free(w->a);
    free(w->b);
    free(w->aux);
    w->a = w->b = w->aux = NULL;
}

static void *at(void *base, int64_t off)
{
    return off < 0 ? NULL : (char *)base + off;
}

static float *other(struct rt_work *w, const float *cur)
{
    return cur == w->a ? w->b : w->a;
}

const float *rt_stage_forward(const struct rt_stage *st, struct rt_net *net,
                              const float *x, void *stash, const float *targets,
                              int n_total, double *loss, struct rt_work *w)
{
    const float *cur = x;
    int L = st->n_layers, r = st->rows;
    for (int l = 0; l < L; l++) {
        const struct rt_layer *ly = &net->layers[st->first + l];
        if (stash && st->x_off[l] >= 0) {
            float *xs = at(stash, st->x_off[l]);
            if (cur != xs)
                memcpy(xs, cur, (size_t)r * ly->in * sizeof *xs);
            cur = xs;
        }
        float *dst = stash && l + 1 < L && st->x_off[l + 1] >= 0
                         ? at(stash, st->x_off[l + 1]) : other(w, cur);
        float *aux = ly->kind == RT_LAYER_NORM ? (stash ? at(stash, st->aux_off[l]) : w->aux)
                                               : NULL;
        rt_layer_forward(ly, r, cur, dst, aux, stash ? at(stash, st->mask_off[l]) : NULL);
        cur = dst;
    }
    if (st->is_last_layer_head) {
        int o = net->layers[net->n_layers - 1].out;
        double v = rt_loss(r, o, n_total, cur, targets, stash ? at(stash, st->dy_off) : NULL);
        if (loss)
            *loss = v;
    }
    return cur;
}

const float *rt_stage_backward(const struct rt_stage *st, struct rt_net *net,
                               void *stash, float *gout, int split, void *wgrad,
                               struct rt_work *w)
{
    int L = st->n_layers, r = st->rows;
    float *g = st->is_last_layer_head ? at(stash, st->dy_off) : gout;
    for (int l = L - 1; l >= 0; l--) {
        struct rt_layer *ly = &net->layers[st->first + l];
        const float *aux = at(stash, st->aux_off[l]);
        rt_layer_grad_prep(ly, r, at(stash, st->mask_off[l]), g);
        if (!split)
            rt_layer_grad_weight(ly, r, at(stash, st->x_off[l]), aux, g);
        if (l == 0 && st->index == 0)
            return NULL;
        float *dst = split && l > 0 ? at(wgrad, st->wg_off[l - 1]) : other(w, g);
        rt_layer_grad_input(ly, r, aux, g, dst);
        g = dst;
    }
    return g;
}

void rt_stage_wgrad(const struct rt_stage *st, struct rt_net *net, const void *stash,
                    const float *gout, const void *wgrad)
{
    int L = st->n_layers;
    for (int l = 0; l < L; l++) {
        const float *g = l + 1 < L ? at((void *)wgrad, st->wg_off[l])
                         : st->is_last_layer_head ? at((void *)stash, st->dy_off) : gout;
        rt_layer_grad_weight(&net->layers[st->first + l], st->rows,
                             at((void *)stash, st->x_off[l]), at((void *)stash, st->aux_off[l]), g);
    }
}

void rt_stage_update(const struct rt_stage *st, struct rt_net *net, float lr)
{
    for (int l = st->first; l < st->first + st->n_layers; l++)
        rt_layer_sgd(&net->layers[l], lr);
}

int64_t rt_stage_param_bytes(const struct rt_stage *st, const struct rt_net *net)
{
    int64_t p = 0;
    for (int l = st->first; l < st->first + st->n_layers; l++)
        p += net->layers[l].n_params;
    return 8 * p; /* FP32 weights and gradients */
}
