/* Runtime kernels, net specs and the emitted profile: naive loops and
 * finite differences as oracles. */
#include "helpers.h"

#include <unistd.h>

/* A scratch file name private to this process (tests may run from a tree
 * where build/tests does not exist yet). */
static const char *scratch(const char *name)
{
    static char buf[4][128];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, 128, "/tmp/pipesim-rt-%d-%s", (int)getpid(), name);
    return b;
}

#include <math.h>

#include "runtime/rt_stage.h"

static void fill(float *v, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
    }
}

/* Suite-wide timeout (see test_runtime.c). */
TestSuite(rt_kernels, .timeout = 60);

Test(rt_kernels, dense_matches_naive_loops)
{
    struct rt_layer l;
    int R = 5, I = 7, O = 6;
    cr_assert_eq(rt_layer_init(&l, RT_LAYER_DENSE, I, O, 1), 0);
    float x[35], y[30], dy[30], dx[35];
    uint8_t mask[30];
    fill(l.w, (size_t)I * O, 1);
    fill(l.b, (size_t)O, 2);
    fill(x, 35, 3);
    fill(dy, 30, 4);
    rt_blas_single_thread();
    rt_layer_forward(&l, R, x, y, NULL, mask);
    double z[30];
    for (int r = 0; r < R; r++)
        for (int o = 0; o < O; o++) {
            double s = l.b[o];
            for (int i = 0; i < I; i++)
                s += (double)x[r * I + i] * l.w[o * I + i];
            z[r * O + o] = s;
            cr_assert_float_eq(y[r * O + o], s > 0 ? s : 0, 1e-5);
            cr_assert_eq(mask[r * O + o], s > 0);
        }
    float g[30];
    memcpy(g, dy, sizeof g);
    rt_layer_grad_prep(&l, R, mask, g);
    rt_layer_grad_input(&l, R, NULL, g, dx);
    rt_layer_grad_weight(&l, R, x, NULL, g);
    rt_layer_grad_weight(&l, R, x, NULL, g); /* accumulates */
    for (int r = 0; r < R; r++)
        for (int i = 0; i < I; i++) {
            double s = 0;
            for (int o = 0; o < O; o++)
                s += (z[r * O + o] > 0 ? dy[r * O + o] : 0) * l.w[o * I + i];
            cr_assert_float_eq(dx[r * I + i], s, 1e-5);
        }
    for (int o = 0; o < O; o++) {
        double sb = 0;
        for (int r = 0; r < R; r++)
            sb += z[r * O + o] > 0 ? dy[r * O + o] : 0;
        cr_assert_float_eq(l.db[o], 2 * sb, 1e-5);
        for (int i = 0; i < I; i++) {
            double s = 0;
            for (int r = 0; r < R; r++)
                s += (z[r * O + o] > 0 ? dy[r * O + o] : 0) * x[r * I + i];
            cr_assert_float_eq(l.dw[o * I + i], 2 * s, 1e-5);
        }
    }
    rt_layer_release(&l);
}

/* f(x) = sum c * norm(x): analytic dx, dgamma, dbeta against central
 * differences. */
static double norm_f(const struct rt_layer *l, int R, const float *x, const float *c)
{
    float y[64], aux[80];
    rt_layer_forward(l, R, x, y, aux, NULL);
    double s = 0;
    for (int i = 0; i < R * l->in; i++)
        s += (double)c[i] * y[i];
    return s;
}

Test(rt_kernels, layer_norm_gradients_match_finite_differences)
{
    struct rt_layer l;
    int R = 3, W = 8;
    cr_assert_eq(rt_layer_init(&l, RT_LAYER_NORM, W, W, 0), 0);
    float x[24], c[24], y[24], aux[27], dx[24];
    fill(x, 24, 5);
    fill(c, 24, 6);
    fill(l.w, (size_t)W, 7);
    fill(l.b, (size_t)W, 8);
    rt_layer_forward(&l, R, x, y, aux, NULL);
    rt_layer_grad_input(&l, R, aux, c, dx);
    rt_layer_grad_weight(&l, R, NULL, aux, c);
    const float h = 1e-2f;
    for (int i = 0; i < R * W; i++) {
        float s = x[i];
        x[i] = s + h;
        double fp = norm_f(&l, R, x, c);
        x[i] = s - h;
        double fm = norm_f(&l, R, x, c);
        x[i] = s;
        cr_assert(fabs((fp - fm) / (2 * h) - dx[i]) < 2e-3, "dx[%d] %g vs %g", i, dx[i],
                  (fp - fm) / (2 * h));
    }
    for (int i = 0; i < W; i++) {
        float s = l.w[i];
        l.w[i] = s + h;
        double fp = norm_f(&l, R, x, c);
        l.w[i] = s - h;
        double fm = norm_f(&l, R, x, c);
        l.w[i] = s;
        cr_assert(fabs((fp - fm) / (2 * h) - l.dw[i]) < 2e-3, "dgamma[%d]", i);
        double sb = 0;
        for (int r = 0; r < R; r++)
            sb += c[r * W + i];
        cr_assert_float_eq(l.db[i], sb, 1e-5);
    }
    rt_layer_release(&l);
}

/* The reference step's gradient (which the pipelined step is checked
 * against) against central differences of the loss. */
Test(rt_kernels, reference_gradient_matches_finite_differences)
{
    struct rt_net *n;
    cr_assert_eq(rt_net_parse("mlp:layers=3,width=6,in=4,out=3,norm=1", &n), 0);
    cr_assert_eq(n->n_layers, 5);
    cr_assert_eq(rt_net_init_params(n, 9), 0);
    struct rt_data *d;
    cr_assert_eq(rt_data_new(n, 8, 10, &d), 0);
    double loss;
    cr_assert_eq(rt_net_reference_step(n, d, 0, &loss), 0);
    struct rt_net *m;
    cr_assert_eq(rt_net_parse(n->spec, &m), 0);
    rt_net_copy_params(m, n);
    const float h = 1e-3f;
    int checked = 0;
    for (int l = 0; l < n->n_layers; l++)
        for (int k = 0; k < 3; k++) {
            struct rt_layer *ly = &m->layers[l];
            float *p = k < 2 ? &ly->w[k] : &ly->b[0];
            float g = k < 2 ? n->layers[l].dw[k] : n->layers[l].db[0];
            float s = *p;
            double fp, fm;
            *p = s + h;
            cr_assert_eq(rt_net_reference_step(m, d, 0, &fp), 0);
            *p = s - h;
            cr_assert_eq(rt_net_reference_step(m, d, 0, &fm), 0);
            *p = s;
            double fd = (fp - fm) / (2 * h);
            cr_assert(fabs(fd - g) <= 1e-3 * fabs(g) + 2e-5, "layer %d param %d: %g vs %g", l,
                      k, g, fd);
            checked++;
        }
    cr_assert_eq(checked, 15);
    rt_data_free(d);
    rt_net_free(m);
    rt_net_free(n);
}

Test(rt_kernels, mlp_spec_shapes)
{
    struct rt_net *n;
    cr_assert_eq(rt_net_parse("mlp:layers=4,width=32,in=10,out=2,norm=every2", &n), 0);
    /* d d n d d */
    int kinds[] = { 0, 0, 1, 0, 0 }, outs[] = { 32, 32, 32, 32, 2 }, relu[] = { 1, 1, 0, 1, 0 };
    cr_assert_eq(n->n_layers, 5);
    cr_assert_eq(n->in_width, 10);
    for (int i = 0; i < 5; i++) {
        cr_assert_eq((int)n->layers[i].kind, kinds[i]);
        cr_assert_eq(n->layers[i].out, outs[i]);
        cr_assert_eq(n->layers[i].relu, relu[i]);
    }
    cr_assert_eq(rt_net_params(n), 10 * 32 + 32 + 2 * (32 * 32 + 32) + 2 * 32 + 32 * 2 + 2);
    rt_net_free(n);
    cr_assert_eq(rt_net_parse("mlp:width=8,layers=1", &n), 0);
    cr_assert_eq(n->n_layers, 1);
    cr_assert_eq(n->layers[0].relu, 0);
    rt_net_free(n);
}

static void bad_spec(const char *spec, int code, const char *what)
{
    struct rt_net *n = (void *)1;
    cr_assert_eq(rt_net_parse(spec, &n), -code, "spec %s", spec);
    cr_assert_null(n);
    cr_assert(strstr(ps_errmsg(), what), "'%s': message '%s' lacks '%s'", spec, ps_errmsg(),
              what);
}

Test(rt_kernels, bad_specs_are_named_errors)
{
    /* an mlp: spec is a command-line value: a usage error, as gen's specs */
    bad_spec("mlp:layers=4", PS_EUSAGE, "'layers' and 'width' are required");
    bad_spec("mlp:layers=4,width=0", PS_EUSAGE, "width");
    bad_spec("mlp:layers=4,width=8,depth=3", PS_EUSAGE, "unknown field 'depth'");
    bad_spec("mlp:layers=x,width=8", PS_EUSAGE, "layers");
    bad_spec("mlp:layers=0,width=8", PS_EUSAGE, "field 'layers': 0 is out of range");
    bad_spec("mlp:layers=2,width=8,norm=sometimes", PS_EUSAGE, "norm");
    bad_spec("mlp:layers", PS_EUSAGE, "not key=value");
    bad_spec("resnet:50", PS_EUSAGE, "want mlp:");
    bad_spec("file:/nonexistent/net.txt", PS_EIO, "/nonexistent/net.txt");
    const char *path = scratch("bad_net.txt");
    static const struct { const char *text, *msg; } cases[] = {
        { "dense 4\n", ":1: first item must be 'input WIDTH'" },
        { "input 4\ndense 4\nconv 3\n", ":3: unknown layer kind 'conv'" },
        { "input 4\n\n# c\ndense 4 tanh\n", ":4: activation 'tanh'" },
        { "input 4\ndense -2\n", ":2: width" },
        { "input 4\nnorm 3\n", ":2: 'norm' takes no arguments" },
        { "input 4\ninput 5\n", ":2: second 'input'" },
        { "input 4\n", "no layers" },
        { "# empty\n", "no 'input WIDTH' line" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        cr_assert(f);
        fputs(cases[i].text, f);
        fclose(f);
        char spec[160];
        snprintf(spec, sizeof spec, "file:%s", path);
        bad_spec(spec, PS_EPARSE, cases[i].msg);
    }
    /* a NUL byte: the lines after it were dropped, a smaller net run (helper-111) */
    static const char nul[] = "input 16\ndense 32 relu\n\0dense 8 linear\n";
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fwrite(nul, 1, sizeof nul - 1, f);
    fclose(f);
    char spec[160];
    snprintf(spec, sizeof spec, "file:%s", path);
    bad_spec(spec, PS_EPARSE, ":3:1: a NUL byte: not a text file");
    unlink(path);
}

/* The emitted profile gives sch_costs the runtime's exact in/out/stash. */
Test(rt_kernels, profile_matches_stage_plan)
{
    struct rt_net *n;
    cr_assert_eq(rt_net_parse("mlp:layers=5,width=40,in=12,out=3,norm=2", &n), 0);
    struct mdl_profile *p;
    cr_assert_eq(rt_net_profile(n, &p), 0);
    cr_assert_eq(p->n_layers, n->n_layers);
    const char *csv = scratch("profile.csv");
    cr_assert_eq(mdl_profile_write(p, csv), 0, "%s", ps_errmsg());
    struct mdl_profile *q;
    cr_assert_eq(mdl_profile_load(csv, &q), 0, "%s", ps_errmsg());
    unlink(csv);
    struct mdl_topology *t = th_chain(4, 1e11, 1e10, 1e-6);
    for (int K = 1; K <= 4; K++) {
        struct sch_partition *part;
        cr_assert_eq(sch_partition_uniform(K, n->n_layers, &part), 0);
        struct sch_costs *c;
        cr_assert_eq(sch_costs_new(q, t, part, NULL, 6, &c), 0, "%s", ps_errmsg());
        for (int s = 0; s < K; s++) {
            struct rt_stage st;
            cr_assert_eq(rt_stage_plan(n, s, K, part->first[s],
                                       part->first[s + 1] - part->first[s], 6, &st), 0);
            cr_assert_eq(c->st[s].mem.in, st.mem.in, "K=%d s=%d", K, s);
            cr_assert_eq(c->st[s].mem.out, st.mem.out, "K=%d s=%d", K, s);
            cr_assert_eq(c->st[s].mem.stash, st.mem.stash, "K=%d s=%d", K, s);
            rt_stage_release(&st);
        }
        sch_costs_free(c);
        sch_partition_free(part);
    }
    /* FLOPs: dense 12->40 relu forward = GEMM + bias + ReLU */
    cr_assert_float_eq(q->layers[0].fwd, 2.0 * 12 * 40 + 2 * 40, 1e-9);
    cr_assert_float_eq(q->layers[0].params, 12 * 40 + 40, 1e-9);
    cr_assert_float_eq(q->layers[0].stash_bytes, 4 * 12 + 40, 1e-9);
    cr_assert_float_eq(q->layers[2].stash_bytes, 4 * 41, 1e-9); /* norm: xhat + rstd */
    mdl_topology_free(t);
    mdl_profile_free(q);
    mdl_profile_free(p);
    rt_net_free(n);
}

/* A parameter the update made non-finite is named with its layer, as the
 * command says it (--lr now stays within a float's range, so a run no longer
 * reaches it from the command line with an infinite rate). */
Test(rt_kernels, divergence_names_the_layer)
{
    struct rt_net *n;
    cr_assert_eq(rt_net_parse("mlp:layers=2,width=4", &n), 0, "%s", ps_errmsg());
    cr_assert_eq(rt_net_init_params(n, 1), 0, "%s", ps_errmsg());
    cr_expect_eq(rt_check_diverged(n, 1, 0.5, 0.1), 0, "%s", ps_errmsg());
    n->layers[1].w[0] = INFINITY;
    cr_expect_eq(rt_check_diverged(n, 3, 0.5, 0.1), -PS_EINVAL);
    cr_expect_str_eq(ps_errmsg(), "step 3: layer 1 (dense) has non-finite parameters after the "
                                  "update: training diverged; try a smaller --lr (now 0.1)");
    cr_expect_eq(rt_check_diverged(n, 2, NAN, 0.1), -PS_EINVAL);
    cr_expect_str_eq(ps_errmsg(), "step 2: the loss is NaN: training diverged; try a smaller "
                                  "--lr (now 0.1)");
    rt_net_free(n);
}
