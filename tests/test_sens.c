/* analysis/ana_sens.h: each knob scales its figure and no other, the
 * knobs together cover every figure that times a step (all rates x f and
 * all fixed costs / f give the step / f exactly), elasticities against
 * hand-worked steps, the solver's factor and its refusals, the torchgpipe
 * diagnostic against its definition, and `predict --sensitivity` in all
 * three formats. */
#include "helpers.h"
#include "analysis/ana_sens.h"
#include "studies/stu_tgneed.h"

#include <math.h>

TestSuite(sens, .timeout = 120);

static struct mdl_profile *profile(const char *csv)
{
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_parse(csv, strlen(csv), "<p>", &p), 0, "%s", ps_errmsg());
    return p;
}

static double step_of(const struct ana_config *c, const struct mdl_topology *t)
{
    double s;
    cr_assert_eq(ana_sens_step((void *)c, t, &s), 0, "%s", ps_errmsg());
    return s;
}

/* One legacy device, 1e12 FLOP/s at efficiency 1: a layer of 1e9 + 2e9
 * FLOPs per sample on 1000 samples is 3 s of matrix work and nothing else
 * (no parameters, no links at K = 1). */
#define LEGACY "{\"devices\": [{\"name\": \"g\", \"count\": 2, \"flops\": 1e12, \"memory\": 1e15}]}"
#define ONE_LAYER "name,fwd_flops,bwd_flops,params,out_bytes,stash_bytes\nl,1e9,2e9,0,0,0\n"

Test(sens, all_matrix_step_has_elasticity_minus_one_and_no_other)
{
    struct mdl_topology *t = th_topo(LEGACY);
    struct mdl_profile *p = profile(ONE_LAYER);
    struct ana_config c = { .profile = p, .topo = t, .K = 1, .M = 1, .batch = 1000,
                            .remat = SCH_REMAT_NEVER };
    cr_assert_float_eq(step_of(&c, t), 3.0, 1e-9);
    double e[ANA_KNOB_N];
    cr_assert_eq(ana_sensitivity(&c, e), 0, "%s", ps_errmsg());
    cr_expect_float_eq(e[ANA_KNOB_MATRIX], -1.0, 1e-6, "matrix %g", e[ANA_KNOB_MATRIX]);
    for (int k = 1; k < ANA_KNOB_N; k++)
        cr_expect_eq(e[k], 0.0, "%s %g", ana_knob_names[k], e[k]);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* The same layer plus an update: 1e9 parameters x 12 B, read and written
 * (2 x 12e9 B) at 24e9 B/s is 1 s. Step 4 s: d ln step / d ln flops =
 * -3/4, d ln step / d ln mem_bandwidth = -1/4 (the central difference
 * is within O(rel^2) of them). */
Test(sens, update_shares_the_step_with_the_matrix_work)
{
    struct mdl_topology *t = th_topo("{\"bytes_per_param\": 12, \"devices\": [{\"name\": \"g\", "
                                     "\"count\": 2, \"flops\": 1e12, \"memory\": 1e15, "
                                     "\"mem_bandwidth\": 24e9}]}");
    struct mdl_profile *p = profile("name,fwd_flops,bwd_flops,params,out_bytes,stash_bytes\n"
                                    "l,1e9,2e9,1e9,0,0\n");
    struct ana_config c = { .profile = p, .topo = t, .K = 1, .M = 1, .batch = 1000,
                            .remat = SCH_REMAT_NEVER };
    cr_assert_float_eq(step_of(&c, t), 4.0, 1e-9);
    double e[ANA_KNOB_N];
    cr_assert_eq(ana_sensitivity(&c, e), 0, "%s", ps_errmsg());
    cr_expect_float_eq(e[ANA_KNOB_MATRIX], -0.75, 1e-4, "%g", e[ANA_KNOB_MATRIX]);
    cr_expect_float_eq(e[ANA_KNOB_MEMORY], -0.25, 1e-4, "%g", e[ANA_KNOB_MEMORY]);
    cr_expect_eq(e[ANA_KNOB_LINK_BW], 0.0);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* K = 2, M = 1 on a chain: F0 1 s, send 1e9 B at 1e9 B/s (1 s) + 0.5 s
 * latency, F1 1 s + B1 2 s, gradient back (1 s + 0.5 s), B0 2 s: 9 s, of
 * which 2 s are bytes / bandwidth and 1 s latency. */
Test(sens, link_bandwidth_and_latency_on_the_critical_path)
{
    struct mdl_topology *t = th_topo("{\"devices\": [{\"name\": \"g\", \"count\": 2, "
                                     "\"flops\": 1e12, \"memory\": 1e15}], \"links\": [{\"name\": "
                                     "\"l\", \"endpoints\": [\"g0\", \"g1\"], \"bandwidth\": 1e9, "
                                     "\"latency\": 0.5}]}");
    struct mdl_profile *p = profile("name,fwd_flops,bwd_flops,params,out_bytes,stash_bytes\n"
                                    "a,1e9,2e9,0,1e6,0\nb,1e9,2e9,0,0,0\n");
    struct ana_config c = { .profile = p, .topo = t, .K = 2, .M = 1, .batch = 1000,
                            .remat = SCH_REMAT_NEVER };
    cr_assert_float_eq(step_of(&c, t), 9.0, 1e-9);
    double e[ANA_KNOB_N];
    cr_assert_eq(ana_sensitivity(&c, e), 0, "%s", ps_errmsg());
    cr_expect_float_eq(e[ANA_KNOB_MATRIX], -6.0 / 9, 1e-4, "%g", e[ANA_KNOB_MATRIX]);
    cr_expect_float_eq(e[ANA_KNOB_LINK_BW], -2.0 / 9, 1e-4, "%g", e[ANA_KNOB_LINK_BW]);
    cr_expect_float_eq(e[ANA_KNOB_LATENCY], 1.0 / 9, 1e-4, "%g", e[ANA_KNOB_LATENCY]);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* Every rate x f and every fixed cost / f: each duration the engine
 * times is divided by f, so the step is. Fails when a figure that times
 * ops is left out of every knob. On the op-level P40 (matrix, memory,
 * per-kernel cost, PCIe tree) and on host-driven messages. */
static double all_scaled(const struct mdl_topology *t, double f, const struct ana_config *c)
{
    struct ana_topo_scaled s[ANA_KNOB_N];
    const struct mdl_topology *cur = t;
    for (int k = 0; k < ANA_KNOB_N; k++) {
        int cost = k == ANA_KNOB_OVERHEAD || k == ANA_KNOB_LATENCY;
        cr_assert_eq(ana_topo_scaled(cur, (enum ana_knob)k, cost ? 1 / f : f, &s[k]), 0, "%s",
                     ps_errmsg());
        cur = &s[k].t;
    }
    double step = step_of(c, cur);
    for (int k = 0; k < ANA_KNOB_N; k++)
        ana_topo_scaled_free(&s[k]);
    return step;
}

Test(sens, knobs_together_cover_every_figure_that_times_a_step)
{
    struct mdl_topology *t;
    struct mdl_profile *p;
    cr_assert_eq(mdl_topology_load("p40-pcie-8", &t), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_model_open("amoebanet:L=6,D=64,pool3=avg", &p), 0, "%s", ps_errmsg());
    struct ana_config c = { .profile = p, .topo = t, .K = 4, .M = 4, .batch = 64,
                            .remat = SCH_REMAT_EXCEPT_LAST };
    double s0 = step_of(&c, t);
    for (double f = 0.5; f <= 4; f *= 4) {
        double sf = all_scaled(t, f, &c) * f;
        cr_expect_float_eq(sf, s0, 1e-6 * s0, "f %g: %g vs %g", f, sf, s0);
    }
    mdl_topology_free(t);
    /* Legacy devices with a per-op overhead and host-driven copies on a
     * chain: their fixed parts and bytes too. */
    t = th_topo("{\"devices\": [{\"name\": \"g\", \"count\": 4, \"flops\": 1e12, "
                "\"memory\": 1e15, \"mem_bandwidth\": 1e11, \"efficiency\": {\"max\": 0.5, "
                "\"batch_half\": 8, \"overhead_s\": 2e-4}}], \"links\": [{\"name\": \"l\", "
                "\"endpoints\": [\"g0\", \"g1\", \"g2\", \"g3\"], \"bandwidth\": 1e10, "
                "\"latency\": 1e-5, \"overhead_s\": 3e-6, \"shared\": true}]}");
    th_messages(t, 2e-5, 5e9, 3e-5, 4e9);
    c.topo = t;
    s0 = step_of(&c, t);
    cr_expect_float_eq(all_scaled(t, 2, &c) * 2, s0, 1e-6 * s0);
    mdl_topology_free(t);
    mdl_profile_free(p);
    /* Vector work bound by its math (no memory figure): the vector peak. */
    t = th_topo("{\"devices\": [{\"name\": \"g\", \"count\": 2, \"flops\": 1e12, "
                "\"memory\": 1e15, \"precision\": \"fp32\", \"vector_flops\": {\"fp32\": 1e11}, "
                "\"kernel_overhead_s\": 1e-5}]}");
    p = profile("name,fwd_flops,params,out_bytes,stash_bytes,gemms,vec_fwd_flops,vec_bwd_flops,"
                "kernels_fwd,kernels_bwd\nv,1,0,0,0,64x64x64,1e7,2e7,3,4\n");
    c = (struct ana_config){ .profile = p, .topo = t, .K = 1, .M = 2, .batch = 64,
                             .remat = SCH_REMAT_NEVER };
    s0 = step_of(&c, t);
    cr_expect_float_eq(all_scaled(t, 2, &c) * 2, s0, 1e-6 * s0);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* An oracle from the definition, on real predictions: a step is
 * homogeneous of degree -1 in the rates and +1 in the fixed costs (above),
 * so its elasticities to the rates less those to the fixed costs sum to -1
 * wherever it is smooth (Euler), within O(rel^2). */
Test(sens, rate_elasticities_less_cost_elasticities_sum_to_minus_one)
{
    static const struct { const char *model, *topo; int K, M; double batch; } cases[] = {
        { "amoebanet:L=6,D=64,pool3=avg", "p40-pcie-8", 4, 4, 64 },
        { "transformer:L=8,d_model=512,ff=2048,heads=8,seq=256,vocab=8000", "tpu-v3", 4, 8,
          32 },
        { "resnet:depth=50", "dgx1-v100", 2, 8, 64 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct mdl_topology *t;
        struct mdl_profile *p;
        cr_assert_eq(mdl_topology_load(cases[i].topo, &t), 0, "%s", ps_errmsg());
        cr_assert_eq(mdl_model_open(cases[i].model, &p), 0, "%s", ps_errmsg());
        struct ana_config c = { .profile = p, .topo = t, .K = cases[i].K, .M = cases[i].M,
                                .batch = cases[i].batch, .remat = SCH_REMAT_EXCEPT_LAST };
        double e[ANA_KNOB_N], sum = 0;
        cr_assert_eq(ana_sensitivity(&c, e), 0, "%s", ps_errmsg());
        for (int k = 0; k < ANA_KNOB_N; k++)
            sum += k == ANA_KNOB_OVERHEAD || k == ANA_KNOB_LATENCY ? -e[k] : e[k];
        cr_expect_float_eq(sum, -1.0, 2e-3, "%s on %s: %g", cases[i].model, cases[i].topo, sum);
        mdl_profile_free(p);
        mdl_topology_free(t);
    }
}

/* A knob moves its figure only: the vector peak, absent in the file
 * (it falls back to "flops"), stays when the matrix peak moves; a layer
 * of vector work alone answers to the vector knob and not the matrix one.
 * The source topology is left as it was. */
Test(sens, a_knob_moves_its_figure_only)
{
    struct mdl_topology *t = th_topo("{\"devices\": [{\"name\": \"g\", \"count\": 2, "
                                     "\"flops\": 1e12, \"memory\": 1e15, \"precision\": \"fp32\", "
                                     "\"matrix_flops\": {\"fp32\": 4e12}}]}");
    struct mdl_profile *p = profile("name,fwd_flops,params,out_bytes,stash_bytes,"
                                    "vec_fwd_flops,vec_bwd_flops\nv,1,0,0,0,1e9,2e9\n");
    struct ana_config c = { .profile = p, .topo = t, .K = 1, .M = 1, .batch = 1000,
                            .remat = SCH_REMAT_NEVER };
    cr_assert_float_eq(step_of(&c, t), 3.0, 1e-9);
    struct ana_topo_scaled s;
    cr_assert_eq(ana_topo_scaled(t, ANA_KNOB_MATRIX, 2, &s), 0);
    cr_expect_float_eq(s.t.devices[0].model.mm_peak[MDL_FP32], 8e12, 1);
    cr_expect_float_eq(s.t.devices[0].model.vec_peak[MDL_FP32], 1e12, 1);
    cr_expect_float_eq(step_of(&c, &s.t), 3.0, 1e-9);
    ana_topo_scaled_free(&s);
    cr_assert_eq(ana_topo_scaled(t, ANA_KNOB_VECTOR, 2, &s), 0);
    cr_expect_float_eq(step_of(&c, &s.t), 1.5, 1e-9);
    cr_expect_float_eq(s.t.devices[0].model.mm_peak[MDL_FP32], 4e12, 1);
    ana_topo_scaled_free(&s);
    cr_expect_eq(t->devices[0].model.vec_peak[MDL_FP32], 0.0);
    cr_expect_eq(t->devices[0].flops, 1e12);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* A value that jumps from 10 to 5 where the matrix peak doubles: the
 * bisection brackets 7 but lands on the jump, which is no crossing. */
static int jump(void *ctx, const struct mdl_topology *t, double *v)
{
    *v = t->devices[0].flops < 2e12 ? 10 : 5;
    return 0;
}

Test(sens, solve_refuses_a_jump_over_the_target)
{
    struct mdl_topology *t = th_topo(LEGACY);
    double f;
    cr_assert_eq(ana_knob_solve(t, ANA_KNOB_MATRIX, 7, jump, NULL, &f), 0);
    cr_expect(isnan(f), "%g", f);
    cr_assert_eq(ana_knob_solve(t, ANA_KNOB_MATRIX, 5, jump, NULL, &f), 0);
    cr_expect(f >= 2 - 1e-5, "%g", f);
    mdl_topology_free(t);
}

/* A step of no work on one device takes no time: every elasticity 0, not
 * an error. */
Test(sens, a_step_of_no_time_has_elasticities_of_zero)
{
    struct mdl_topology *t = th_topo(LEGACY);
    struct mdl_profile *p = profile("name,fwd_flops,params,out_bytes,stash_bytes\na,0,0,0,0\n");
    struct ana_config c = { .profile = p, .topo = t, .K = 1, .M = 1, .batch = 4,
                            .remat = SCH_REMAT_NEVER };
    cr_assert_eq(step_of(&c, t), 0.0);
    double e[ANA_KNOB_N];
    cr_assert_eq(ana_sensitivity(&c, e), 0, "%s", ps_errmsg());
    for (int k = 0; k < ANA_KNOB_N; k++)
        cr_expect_eq(e[k], 0.0, "%s %g", ana_knob_names[k], e[k]);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

Test(sens, solve_gives_the_factor_or_nan_and_refuses_bad_input)
{
    struct mdl_topology *t = th_topo(LEGACY);
    struct mdl_profile *p = profile(ONE_LAYER);
    struct ana_config c = { .profile = p, .topo = t, .K = 1, .M = 1, .batch = 1000,
                            .remat = SCH_REMAT_NEVER };
    double f;
    cr_assert_eq(ana_knob_solve(t, ANA_KNOB_MATRIX, 1.5, ana_sens_step, &c, &f), 0);
    cr_expect_float_eq(f, 2.0, 2e-6, "%g", f);
    cr_assert_eq(ana_knob_solve(t, ANA_KNOB_MATRIX, 12.0, ana_sens_step, &c, &f), 0);
    cr_expect_float_eq(f, 0.25, 1e-6, "%g", f);
    /* 300 s would need 1/100 of the peak: outside [1/64, 64] */
    cr_assert_eq(ana_knob_solve(t, ANA_KNOB_MATRIX, 300.0, ana_sens_step, &c, &f), 0);
    cr_expect(isnan(f));
    /* a knob the step does not depend on reaches no other step */
    cr_assert_eq(ana_knob_solve(t, ANA_KNOB_MEMORY, 1.5, ana_sens_step, &c, &f), 0);
    cr_expect(isnan(f));
    cr_expect_eq(ana_knob_solve(t, ANA_KNOB_MATRIX, NAN, ana_sens_step, &c, &f), -PS_EINVAL);
    cr_expect_eq(ana_knob_solve(t, ANA_KNOB_MATRIX, -1, ana_sens_step, &c, &f), -PS_EINVAL);
    struct ana_topo_scaled s;
    cr_expect_eq(ana_topo_scaled(t, ANA_KNOB_MATRIX, 0, &s), -PS_EINVAL);
    cr_expect_eq(ana_topo_scaled(t, ANA_KNOB_MATRIX, INFINITY, &s), -PS_EINVAL);
    cr_expect_eq(ana_topo_scaled(t, ANA_KNOB_N, 2, &s), -PS_EINVAL);
    double e;
    cr_expect_eq(ana_elasticity(t, ANA_KNOB_MATRIX, 0.5, ana_sens_step, &c, &e), -PS_EINVAL);
    cr_expect_eq(t->devices[0].flops, 1e12);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* The torchgpipe diagnostic: on the bundled data, each factor it gives
 * makes the row's samples/s its measurement, and each elasticity is the
 * central difference of the row's samples/s. */
Test(sens, torchgpipe_need_meets_the_measurement)
{
    struct stu_tg_opts o = { .topo_dir = "models/topologies" };
    struct stu_tg_run *r;
    cr_assert_eq(stu_tg_predict(&o, &r), 0, "%s", ps_errmsg());
    for (int i = 0; i < r->n; i += 4) {
        struct stu_tg_need nd;
        cr_assert_eq(stu_tg_need(r, i, &nd), 0, "%s", ps_errmsg());
        for (int k = 0; k < ANA_KNOB_N; k++) {
            double v, up, down;
            if (isfinite(nd.factor[k])) {
                struct ana_topo_scaled s;
                cr_assert_eq(ana_topo_scaled(r->topo, (enum ana_knob)k, nd.factor[k], &s), 0);
                cr_assert_eq(stu_tg_row_samples(r, i, &s.t, &v), 0, "%s", ps_errmsg());
                ana_topo_scaled_free(&s);
                cr_expect_float_eq(v, r->cell[i].meas, 1e-4 * v, "row %d %s: %g vs %g", i,
                                   ana_knob_names[k], v, r->cell[i].meas);
            }
            struct ana_topo_scaled s;
            cr_assert_eq(ana_topo_scaled(r->topo, (enum ana_knob)k, 1 + ANA_SENS_REL, &s), 0);
            cr_assert_eq(stu_tg_row_samples(r, i, &s.t, &up), 0);
            ana_topo_scaled_free(&s);
            cr_assert_eq(ana_topo_scaled(r->topo, (enum ana_knob)k, 1 - ANA_SENS_REL, &s), 0);
            cr_assert_eq(stu_tg_row_samples(r, i, &s.t, &down), 0);
            ana_topo_scaled_free(&s);
            cr_expect_float_eq(nd.elasticity[k], log(up / down) /
                               (log1p(ANA_SENS_REL) - log1p(-ANA_SENS_REL)), 1e-12);
        }
        /* the row's own samples/s on its own topology */
        double v;
        cr_assert_eq(stu_tg_row_samples(r, i, r->topo, &v), 0);
        cr_expect_eq(v, r->cell[i].pred);
    }
    stu_tg_run_free(r);
}

/* The CLI: --sensitivity adds a table section, six CSV columns and a JSON
 * object; without it the output has none of them. */
Test(sens, predict_prints_it_in_every_format)
{
    char out[16384];
    const char *base = "%s predict --model amoebanet:L=6,D=64 --topology p40-pcie-8 -K 2 -M 4 "
                       "--batch 32 %s --format %s";
    cr_assert_eq(th_capture(out, sizeof out, base, th_pipesim(), "--sensitivity", "table"), 0,
                 "%s", out);
    cr_expect(strstr(out, "sensitivity"), "%s", out);
    for (int k = 0; k < ANA_KNOB_N; k++)
        cr_expect(strstr(out, ana_knob_titles[k]), "%s lacks %s", out, ana_knob_titles[k]);
    cr_assert_eq(th_capture(out, sizeof out, base, th_pipesim(), "--sensitivity", "csv"), 0);
    const char *hdr = ",sens_matrix,sens_vector,sens_memory,sens_overhead,sens_link_bw,"
                      "sens_latency\n";
    char *row = strstr(out, hdr);
    cr_assert(row, "%s", out);
    /* the values are the library's, in the header's order, on every stage's row */
    struct mdl_topology *t;
    struct mdl_profile *p;
    cr_assert_eq(mdl_topology_load("p40-pcie-8", &t), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_model_open("amoebanet:L=6,D=64", &p), 0, "%s", ps_errmsg());
    struct ana_config c = { .profile = p, .topo = t, .K = 2, .M = 4, .batch = 32,
                            .remat = SCH_REMAT_EXCEPT_LAST };
    double e[ANA_KNOB_N];
    cr_assert_eq(ana_sensitivity(&c, e), 0, "%s", ps_errmsg());
    row += strlen(hdr);
    for (int r = 0; r < 2; r++) {
        char *end = strchr(row, '\n'), *q = end;
        cr_assert(end);
        for (int k = ANA_KNOB_N - 1; k >= 0; k--) {
            while (q > row && q[-1] != ',')
                q--;
            cr_expect_eq(strtod(q, NULL), e[k], "stage %d %s: %.17g vs %.17g", r,
                         ana_knob_names[k], strtod(q, NULL), e[k]);
            q--;
        }
        row = end + 1;
    }
    mdl_profile_free(p);
    mdl_topology_free(t);
    cr_assert_eq(th_capture(out, sizeof out, base, th_pipesim(), "--sensitivity", "json"), 0);
    cr_expect(strstr(out, "\"sensitivity\": {"), "%s", out);
    cr_expect(strstr(out, "\"link_bw\":"), "%s", out);
    for (int f = 0; f < 3; f++) {
        static const char *fmts[] = { "table", "csv", "json" };
        cr_assert_eq(th_capture(out, sizeof out, base, th_pipesim(), "", fmts[f]), 0);
        cr_expect(!strstr(out, "sensitivity") && !strstr(out, "sens_"), "%s", out);
    }
}

/* A run in range whose neighbour 1 % away is not (a per-op overhead of
 * 9.999e8 s: +1 % passes the engine's 1e9 s per op) has that elasticity
 * left out ('-', empty, null) instead of failing the command, which
 * predict without --sensitivity runs (it was exit 4 naming the perturbed
 * time). */
Test(sens, a_neighbour_out_of_range_leaves_its_elasticity_out)
{
    char dir[64], out[8192];
    th_tmpdir(dir, sizeof dir, "sens");
    const char *ps = th_pipesim();
    /* a backward of 1 s + 72 FLOPs at 7.2e-8 FLOP/s: 0.005 s under the engine's 1e9 s a
     * op, so 1 % more of the per-op cost (0.01 s) is beyond it */
    cr_assert_eq(th_sh("cd %s && %s gen chain -n 2 --overhead 1 --flops 7.200000007236e-08 "
                       "-o ov.json", dir, ps), 0);
    const char *base = "cd %s && %s predict --model mlp:layers=2,width=4 --topology ov.json "
                       "-K 2 -M 1 --batch 1 --sensitivity --format %s";
    cr_assert_eq(th_capture(out, sizeof out, base, dir, ps, "table"), 0, "%s", out);
    cr_expect(strstr(out, "  per-kernel cost        -\n") &&
              strstr(out, "  -: the run with that figure 1 % away is beyond the engine's "
                          "range\n") && strstr(out, "  link bandwidth    +"), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, base, dir, ps, "json"), 0);
    cr_expect(strstr(out, "\"overhead\": null") && strstr(out, "\"matrix\": "), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, base, dir, ps, "csv"), 0);
    cr_expect(strstr(out, ",sens_overhead,") && strstr(out, ",,"), "%s", out);
    th_sh("rm -rf %s", dir);
}

/* +-1 % of an op under 100 ns is under the engine's 1 ns tick: predict says its figures are
 * rounding there (helper-134: the knobs summed to -1.09, no word), and not for longer ops. */
Test(sens, ops_under_the_tick_resolution_are_warned_of)
{
    char err[2048];
    cr_assert_eq(th_capture(err, sizeof err, "%s predict --model mlp:layers=8,width=512 "
                            "--topology models/topologies/chain-8-ideal.json -K 4 -M 8 --batch "
                            "8 --sensitivity 2>&1 >/dev/null", th_pipesim()), 0, "%s", err);
    cr_expect(strstr(err, "warning: --sensitivity's figures sum to -1.089 where they sum to -1 "
                          "(rates less fixed costs): at +-1 % some ops move by under the "
                          "engine's 1 ns tick"), "%s", err);
    cr_assert_eq(th_capture(err, sizeof err, "%s predict --model mlp:layers=8,width=512 "
                            "--topology models/topologies/chain-8-ideal.json -K 4 -M 8 --batch "
                            "8192 --sensitivity 2>&1 >/dev/null", th_pipesim()), 0, "%s", err);
    cr_expect_str_eq(err, "");
    /* nor for a measured profile, whose times do not move with the figures (helper-135: a
     * test of the shortest op warned there) */
    char dir[64];
    th_tmpdir(dir, sizeof dir, "sens-tick");
    th_put(dir, "m.csv", "name,fwd_ms,bwd_ms,at_batch,params,out_bytes,stash_bytes\n"
           "a,0.00005,0.0001,1,0,0,0\nb,0.00005,0.0001,1,0,0,0\n");
    cr_assert_eq(th_capture(err, sizeof err, "%s predict --model %s/m.csv --topology "
                            "models/topologies/chain-8-ideal.json -K 2 -M 2 --batch 2 "
                            "--sensitivity 2>&1 >/dev/null", th_pipesim(), dir), 0, "%s", err);
    cr_expect_eq(strstr(err, "--sensitivity's figures"), NULL, "%s", err);
    th_sh("rm -rf %s", dir);
}
