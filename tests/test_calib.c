/* Calibration: the GSL fits recover known coefficients from synthetic
 * timings; the calibrated profile columns (fwd_nostash, fixed intercepts,
 * points) load, evaluate, round-trip and reject bad input; the simulator
 * uses the forward without stash for re-materialized micro-batches;
 * pipesim calibrate end to end on a tiny net (files only, no timing
 * figures asserted). */
#include "helpers.h"

#include <jansson.h>
#include <math.h>
#include <sched.h>
#include <unistd.h>

#include "measure/msr_calib.h"
#include "models/mdl_gen.h"
#include "sim/sim_engine.h"

static char dir[64];

static void setup(void)
{
    th_tmpdir(dir, sizeof dir, "calib");
}

static void teardown(void) { th_sh("rm -rf %s", dir); }

TestSuite(calib, .init = setup, .fini = teardown, .timeout = 120);

static const char *write_file(const char *name, const char *text)
{
    static char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    th_put(dir, name, text);
    return path;
}

/* ---- the pipelined calibration's statistics ---- */

Test(calib, median_standard_error_is_the_normal_rule)
{
    double v[5] = { 5, 1, 4, 2, 3 }; /* median 3, quartiles 2 and 4 (GSL's rule) */
    double want = 1.2533 * (2 / 1.349) / sqrt(5.0) / 3;
    cr_expect_float_eq(msr_median_rel_se(v, 5), want, 1e-12);
    double one[1] = { 2 }, neg[3] = { -1, -1, -1 };
    cr_expect_eq(msr_median_rel_se(one, 1), 1);
    cr_expect_eq(msr_median_rel_se(neg, 3), 1);
    double same[4] = { 2, 2, 2, 2 };
    cr_expect_eq(msr_median_rel_se(same, 4), 0);
}

Test(calib, rescale_makes_the_medians_sum_to_the_target)
{
    struct msr_stat a = { .med = 1, .p25 = 0.5, .p75 = 1.5, .min = 0.25, .max = 2, .mean = 1.25,
                          .n = 3 };
    struct msr_stat b = { .med = 3, .p25 = 2, .p75 = 4, .min = 1, .max = 5, .n = 3 };
    struct msr_stat *st[2] = { &a, &b };
    cr_expect_float_eq(msr_stat_rescale(st, 2, 8), 2, 1e-15);
    cr_expect(a.med == 2 && a.p25 == 1 && a.p75 == 3 && a.min == 0.5 && a.max == 4);
    cr_expect_eq(a.mean, 2.5);
    cr_expect(b.med == 6 && b.p25 == 4 && b.p75 == 8 && b.min == 2 && b.max == 10);
    cr_expect_eq(a.n, 3);
    /* nothing to scale, or no target: unchanged */
    struct msr_stat z = { 0 };
    struct msr_stat *zz[1] = { &z };
    cr_expect_eq(msr_stat_rescale(zz, 1, 5), 1);
    cr_expect_eq(msr_stat_rescale(st, 2, NAN), 1);
    cr_expect_eq(b.med, 6);
}

/* A pipelined calibration on a tiny net: each stage's layer medians sum to
 * the trimmed mean (or, by_median, the median) of its ops inside the steps
 * (F with R pooled; B of both modes pooled), the scale is recorded, the update is one per step, and a
 * hand-off link is fitted at K = 2. No timing value is asserted. */
/* warm_each: the untimed step before each timed one adds no samples;
 * by_mean (the default) the layers sum to the pooled trimmed mean (inside
 * the samples' range), else (opts.by_median) to the pooled median (between
 * the two classes' medians). */
static void pipelined_sums(int warm_each, int by_mean)
{
    static const int sizes[] = { 2, 4 };
    struct msr_calib_opts o = { .spec = "mlp:layers=4,width=16", .sizes = sizes, .n_sizes = 2,
                                .repeats = 2, .warmup = 1, .n_stages = 2, .cpu = -1,
                                .peer_cpu = -1, .seed = 1, .batch = 8, .pipelined = 1,
                                .max_rounds = 3, .warm_each = warm_each,
                                .by_median = !by_mean };
    struct msr_calib *c;
    cr_assert_eq(msr_calib_run(&o, &c), 0, "%s", ps_errmsg());
    cr_expect(c->pipelined);
    cr_expect_str_eq(c->pipe_schedule, "gpipe");
    cr_expect(c->pipe_rounds >= 2 && c->pipe_rounds <= 3, "%d", c->pipe_rounds);
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 2; i++) {
            const struct msr_pipe_point *f = MSR_PIPE_AT(c, s, i, MSR_PIPE_F);
            const struct msr_pipe_point *bb = MSR_PIPE_AT(c, s, i, MSR_PIPE_BB);
            const struct msr_pipe_point *u = MSR_PIPE_AT(c, s, i, MSR_PIPE_U);
            int M = 8 / sizes[i];
            cr_expect_eq(f->t.n, c->pipe_rounds * M, "stage %d size %d", s, sizes[i]);
            cr_expect_eq(bb->t.n, c->pipe_rounds * M);
            cr_expect_eq(MSR_PIPE_AT(c, s, i, MSR_PIPE_R)->t.n, c->pipe_rounds * M);
            cr_expect_eq(u->t.n, 2 * c->pipe_rounds); /* one per step, two steps a round */
            cr_expect_gt(f->scale, 0);
            /* each class apart: the stashing forward (the kept kernel), the
             * recompute, B of a stashed micro-batch and B after a recompute
             * each sum to their own centre */
            double kept = 0, bwd = 0, rec = 0, bwr = 0;
            for (int l = 2 * s; l < 2 * s + 2; l++) {
                kept += c->layers[l].kept[i].med;
                bwd += c->layers[l].t[MSR_CALIB_BWD][i].med;
                rec += c->layers[l].t[MSR_CALIB_RECOMP][i].med;
                bwr += c->layers[l].bwd_remat[i].med;
            }
            const struct msr_stat *rt = &MSR_PIPE_AT(c, s, i, MSR_PIPE_R)->t;
            const struct msr_stat *brt = &MSR_PIPE_AT(c, s, i, MSR_PIPE_BR)->t;
            cr_expect_float_eq(kept, by_mean ? f->t.mean : f->t.med, 1e-12 * kept);
            cr_expect_float_eq(rec, by_mean ? rt->mean : rt->med, 1e-12 * rec);
            cr_expect_float_eq(bwd, by_mean ? bb->t.mean : bb->t.med, 1e-12 * bwd);
            cr_expect_float_eq(bwr, by_mean ? brt->mean : brt->med, 1e-12 * bwr);
            /* F-nostash, a class alone: its layers sum to its own centre */
            const struct msr_stat *fn = &MSR_PIPE_AT(c, s, i, MSR_PIPE_FN)->t;
            double nostash = 0;
            for (int l = 2 * s; l < 2 * s + 2; l++)
                nostash += c->layers[l].t[MSR_CALIB_FWD_NOSTASH][i].med;
            if (fn->n)
                cr_expect_float_eq(nostash, by_mean ? fn->mean : fn->med, 1e-12 * nostash);
            /* each class's spread inside a step (msr_pipe_point.rq): quantiles
             * that never fall, positive, around 1 (each sample over its step's
             * mean), spanning a distribution of mean 1 exactly; none without
             * samples */
            for (int k = 0; k < MSR_PIPE_NCLASS; k++) {
                const struct msr_pipe_point *pp = MSR_PIPE_AT(c, s, i, k);
                const double *rq = pp->rq;
                if (!pp->t.n) {
                    for (int j = 0; j < MSR_PIPE_NQ; j++)
                        cr_expect_eq(rq[j], 0);
                    continue;
                }
                double area = 0;
                for (int j = 0; j + 1 < MSR_PIPE_NQ; j++) {
                    cr_expect_leq(rq[j], rq[j + 1], "stage %d size %d class %d", s, sizes[i], k);
                    area += (rq[j] + rq[j + 1]) / 2;
                }
                cr_expect_gt(rq[0], 0);
                cr_expect(rq[0] <= 1 + 1e-12 && rq[MSR_PIPE_NQ - 1] >= 1 - 1e-12,
                          "class %d: [%g, %g]", k, rq[0], rq[MSR_PIPE_NQ - 1]);
                cr_expect_float_eq(area / (MSR_PIPE_NQ - 1), 1, 1e-12);
                /* the update, one a step: alone in its step, so its spread
                 * inside a step is nil however much it varied between steps */
                if (k == MSR_PIPE_U)
                    for (int j = 0; j < MSR_PIPE_NQ; j++)
                        cr_expect_float_eq(rq[j], 1, 1e-12, "U rq[%d] = %.17g", j, rq[j]);
            }
        }
    /* the steps themselves: one per round, size and mode, each at least as
     * long as the ops of its busiest stage (one core runs them in turn) */
    for (int i = 0; i < 2; i++)
        for (int a = 0; a < 2; a++) {
            const struct msr_stat *st = &c->pipe_step[i][a];
            cr_expect_eq(st->n, c->pipe_rounds, "size %d mode %d", sizes[i], a);
            cr_expect(st->min > 0 && st->min <= st->med && st->med <= st->max);
            int M = 8 / sizes[i];
            for (int s = 0; s < 2; s++) {
                const struct msr_stat *f = &MSR_PIPE_AT(c, s, i, a ? MSR_PIPE_FN : MSR_PIPE_F)->t;
                const struct msr_stat *b = &MSR_PIPE_AT(c, s, i, a ? MSR_PIPE_BR : MSR_PIPE_BB)->t;
                cr_expect_geq(st->max, M * (f->min + b->min), "size %d mode %d stage %d",
                              sizes[i], a, s);
            }
        }
    cr_expect_eq(c->pipe_step[0][0].n + c->pipe_step[1][1].n, 2 * c->pipe_rounds);
    for (int i = 2; i < MSR_CALIB_MAX_SIZES; i++)
        cr_expect_eq(c->pipe_step[i][0].n + c->pipe_step[i][1].n, 0);
    cr_expect_gt(c->n_handoff, 0);
    cr_expect_gt(c->link_bandwidth, 0);
    /* the workers' copies: every send of every timed step (2 M a step, the
     * activations and the gradients), and the topology that models them */
    int sends = 0;
    for (int i = 0; i < 2; i++)
        for (int a = 0; a < 2; a++)
            sends += c->pipe_step[i][a].n * 2 * (8 / sizes[i]);
    cr_expect_eq(c->n_msg_send, sends);
    cr_expect_eq(c->msg_send_fit.n, 2); /* two message sizes, a point each */
    struct mdl_topology *t;
    cr_assert_eq(msr_calib_topology(c, &t), 0, "%s", ps_errmsg());
    if (msr_calib_messages(c)) {
        cr_expect_eq(t->links[0].bandwidth, MSR_FREE_LINK);
        cr_expect_eq(t->links[0].latency, c->msg_latency);
        cr_expect(t->devices[0].msg_send_s > 0 || t->devices[0].msg_send_bw > 0);
    } else {
        cr_expect_eq(c->n_msg_recv, 0); /* every receive waited */
        cr_expect_eq(t->devices[0].msg_send_s, 0);
    }
    mdl_topology_free(t);
    msr_calib_free(c);
}

/* A split-backward schedule's W ops are a class of their own: one per
 * micro-batch and step, and the layers' W (timed inside their backward)
 * sum to its centre, while B with W still counts as the one backward. */
Test(calib, pipelined_zero_bubble_sets_w_apart)
{
    static const int sizes[] = { 2, 4 };
    struct msr_calib_opts o = { .spec = "mlp:layers=4,width=16", .sizes = sizes, .n_sizes = 2,
                                .repeats = 2, .warmup = 1, .n_stages = 2, .cpu = -1,
                                .peer_cpu = -1, .seed = 1, .batch = 8, .pipelined = 1,
                                .max_rounds = 3, .schedule = "zb-h1" };
    struct msr_calib *c;
    cr_assert_eq(msr_calib_run(&o, &c), 0, "%s", ps_errmsg());
    cr_expect_str_eq(c->pipe_schedule, "zb-h1");
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 2; i++) {
            const struct msr_pipe_point *w = MSR_PIPE_AT(c, s, i, MSR_PIPE_W);
            const struct msr_pipe_point *bb = MSR_PIPE_AT(c, s, i, MSR_PIPE_BB);
            int M = 8 / sizes[i];
            /* W of both steps of a round (remat never and always) */
            cr_expect_eq(w->t.n, 2 * c->pipe_rounds * M, "stage %d size %d", s, sizes[i]);
            cr_expect_eq(bb->t.n, c->pipe_rounds * M);
            cr_assert_gt(w->centre_med, 0);
            double wsum = 0;
            for (int l = 2 * s; l < 2 * s + 2; l++) {
                const struct msr_calib_layer *cl = &c->layers[l];
                wsum += cl->t[MSR_CALIB_WGRAD][i].med;
                cr_expect_geq(cl->t[MSR_CALIB_WGRAD][i].med, 0);
            }
            double want = c->pipe_by_mean ? w->centre_mean : w->centre_med;
            cr_expect_float_eq(wsum, want, 1e-12 * want, "stage %d size %d", s, sizes[i]);
        }
    struct mdl_profile *p;
    cr_assert_eq(msr_calib_profile(c, &p), 0, "%s", ps_errmsg());
    for (int l = 0; l < p->n_layers; l++) {
        const struct mdl_layer *ml = &p->layers[l];
        cr_expect(ml->has_wgrad);
        cr_expect(ml->wgrad >= 0 && ml->wgrad <= ml->bwd, "layer %d", l);
        for (int k = 0; k < ml->n_pts; k++)
            cr_expect(ml->pt_wgrad[k] >= 0 && ml->pt_wgrad[k] <= ml->pt_bwd[k]);
    }
    mdl_profile_free(p);
    msr_calib_free(c);
}

/* The layers' sums of stage s at size i for each class (F, B, F-nostash,
 * the update, R, B after R). */
static void pool_sums(const struct msr_calib *c, int s, int i, double out[6])
{
    int per = c->n_layers / c->pipe_stages;
    for (int q = 0; q < 6; q++)
        out[q] = 0;
    for (int l = per * s; l < per * (s + 1); l++) {
        out[0] += c->layers[l].kept[i].med;
        out[1] += c->layers[l].t[MSR_CALIB_BWD][i].med;
        out[2] += c->layers[l].t[MSR_CALIB_FWD_NOSTASH][i].med;
        out[3] += c->layers[l].update.med;
        out[4] += c->layers[l].t[MSR_CALIB_RECOMP][i].med;
        out[5] += c->layers[l].bwd_remat[i].med;
    }
}

/* msr_calib_recentre moves the layers from the pools' medians to their
 * trimmed means and back on the same samples: each sum equals the centre it
 * names, the forward and recompute kernels follow the kept one, the scales
 * follow the sums, and a second call with the same rule changes nothing. */
Test(calib, recentre_moves_the_layers_between_medians_and_means)
{
    static const int sizes[] = { 2, 4 };
    struct msr_calib_opts o = { .spec = "mlp:layers=4,width=16", .sizes = sizes, .n_sizes = 2,
                                .repeats = 2, .warmup = 1, .n_stages = 2, .cpu = -1,
                                .peer_cpu = -1, .seed = 1, .batch = 8, .pipelined = 1,
                                .max_rounds = 3, .by_median = 1 };
    struct msr_calib *c;
    cr_assert_eq(msr_calib_run(&o, &c), 0, "%s", ps_errmsg());
    cr_expect_eq(c->pipe_by_mean, 0);
    static const int cls[6] = { MSR_PIPE_F, MSR_PIPE_BB, MSR_PIPE_FN, MSR_PIPE_U, MSR_PIPE_R,
                                MSR_PIPE_BR };
    double fwd0 = c->layers[0].t[MSR_CALIB_FWD][0].med, kept0 = c->layers[0].kept[0].med;
    double sc0 = MSR_PIPE_AT(c, 0, 0, MSR_PIPE_F)->scale;
    for (int rule = 1; rule >= 0; rule--) {
        cr_assert_eq(msr_calib_recentre(c, rule), 0);
        cr_expect_eq(c->pipe_by_mean, rule);
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < 2; i++) {
                double sum[6];
                pool_sums(c, s, i, sum);
                for (int q = 0; q < 6; q++) {
                    const struct msr_pipe_point *pp = MSR_PIPE_AT(c, s, i, cls[q]);
                    if (!(pp->centre_med > 0))
                        continue;
                    double want = rule ? pp->centre_mean : pp->centre_med;
                    cr_expect_float_eq(sum[q], want, 1e-12 * want, "stage %d size %d pool %d",
                                       s, sizes[i], q);
                }
            }
        double f = c->layers[0].kept[0].med / kept0; /* the forward kernel moved alike */
        cr_expect_float_eq(c->layers[0].t[MSR_CALIB_FWD][0].med, fwd0 * f, 1e-12 * fwd0);
        cr_expect_float_eq(MSR_PIPE_AT(c, 0, 0, MSR_PIPE_F)->scale, sc0 * f, 1e-12 * sc0);
    }
    /* pooled (opts.pool_remat) on the same samples: F with R and B of both
     * modes sum to the pools' centres, each partner moved by the same factor
     * (one kernel); and back */
    for (int pooled = 1; pooled >= 0; pooled--) {
        double r0 = c->layers[0].t[MSR_CALIB_RECOMP][0].med, k0 = c->layers[0].kept[0].med;
        cr_assert_eq(msr_calib_repool(c, pooled), 0);
        cr_expect_eq(c->pipe_pooled, pooled);
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < 2; i++) {
                double sum[6];
                pool_sums(c, s, i, sum);
                const struct msr_pipe_point *f = MSR_PIPE_AT(c, s, i, MSR_PIPE_F);
                const struct msr_pipe_point *bb = MSR_PIPE_AT(c, s, i, MSR_PIPE_BB);
                double wf = pooled ? f->pool_med : f->centre_med;
                double wb = pooled ? bb->pool_med : bb->centre_med;
                cr_expect_float_eq(sum[0], wf, 1e-12 * wf, "stage %d size %d", s, sizes[i]);
                cr_expect_float_eq(sum[1], wb, 1e-12 * wb);
            }
        if (pooled) /* the recompute followed the kept kernel */
            cr_expect_float_eq(c->layers[0].t[MSR_CALIB_RECOMP][0].med,
                               r0 * c->layers[0].kept[0].med / k0, 1e-12 * r0);
        struct mdl_profile *p;
        cr_assert_eq(msr_calib_profile(c, &p), 0, "%s", ps_errmsg());
        cr_expect_eq(p->layers[0].has_recomp, !pooled);
        cr_expect_eq(p->layers[0].has_bwd_remat, !pooled);
        mdl_profile_free(p);
    }
    /* back at the medians: the same rule again is a no-op */
    double before = c->layers[1].t[MSR_CALIB_BWD][1].med;
    cr_expect_eq(msr_calib_recentre(c, 0), 0);
    cr_expect_eq(c->layers[1].t[MSR_CALIB_BWD][1].med, before);
    msr_calib_free(c);
    /* not pipelined: nothing to do */
    struct msr_calib_opts p = o;
    p.pipelined = 0;
    cr_assert_eq(msr_calib_run(&p, &c), 0, "%s", ps_errmsg());
    double b2 = c->layers[0].t[MSR_CALIB_BWD][0].med;
    cr_expect_eq(msr_calib_recentre(c, 1), 0);
    cr_expect_eq(c->layers[0].t[MSR_CALIB_BWD][0].med, b2);
    cr_expect_eq(c->pipe_by_mean, 0);
    msr_calib_free(c);
}

Test(calib, pipelined_layers_sum_to_the_stage_ops) { pipelined_sums(0, 1); }
Test(calib, pipelined_warm_each_times_the_same_ops) { pipelined_sums(1, 1); }
Test(calib, pipelined_by_median_sums_to_the_medians) { pipelined_sums(0, 0); }

Test(calib, pipelined_needs_the_batch)
{
    static const int sizes[] = { 2 };
    struct msr_calib_opts o = { .spec = "mlp:layers=2,width=8", .sizes = sizes, .n_sizes = 1,
                                .n_stages = 1, .cpu = -1, .peer_cpu = -1, .pipelined = 1 };
    struct msr_calib *c;
    cr_expect_eq(msr_calib_run(&o, &c), -PS_EUSAGE);
    cr_expect(strstr(ps_errmsg(), "batch"), "%s", ps_errmsg());
}

/* ---- fits ---- */

Test(calib, line_fit_recovers_known_coefficients)
{
    double x[7] = { 4, 8, 16, 32, 64, 128, 256 }, y[7];
    for (int i = 0; i < 7; i++)
        y[i] = 31e-6 + 2.5e-6 * x[i];
    for (int rel = 0; rel < 2; rel++) {
        struct msr_fit f;
        cr_assert_eq(msr_fit_line(x, y, 7, rel, &f), 0, "%s", ps_errmsg());
        cr_expect_float_eq(f.a, 31e-6, 1e-15, "a = %.17g", f.a);
        cr_expect_float_eq(f.b, 2.5e-6, 1e-17, "b = %.17g", f.b);
        cr_expect_float_eq(f.r2, 1.0, 1e-12);
        cr_expect_leq(f.max_rel, 1e-10);
        for (int i = 0; i < 7; i++)
            cr_expect_leq(fabs(f.resid[i]), 1e-15);
        cr_expect_eq(f.n, 7);
    }
}

Test(calib, line_fit_residuals_and_r2_are_exact)
{
    /* y = 1 + 2x except the middle point, 1 too high: least squares gives
     * a = 1 + 1/3, b = 2 (x symmetric), residuals -1/3, 2/3, -1/3 */
    double x[3] = { 0, 1, 2 }, y[3] = { 1, 4, 5 };
    struct msr_fit f;
    cr_assert_eq(msr_fit_line(x, y, 3, 0, &f), 0);
    cr_expect_float_eq(f.a, 4.0 / 3, 1e-12);
    cr_expect_float_eq(f.b, 2.0, 1e-12);
    cr_expect_float_eq(f.resid[0], -1.0 / 3, 1e-12);
    cr_expect_float_eq(f.resid[1], 2.0 / 3, 1e-12);
    cr_expect_float_eq(f.resid[2], -1.0 / 3, 1e-12);
    /* SS_res = 2/3, SS_tot = (1-10/3)^2 + (4-10/3)^2 + (5-10/3)^2 = 26/3 */
    cr_expect_float_eq(f.r2, 1 - (2.0 / 3) / (26.0 / 3), 1e-12);
    cr_expect_float_eq(f.max_rel, 1.0 / 3, 1e-12); /* -1/3 at y = 1 */
}

Test(calib, line_fit_edge_cases)
{
    struct msr_fit f;
    double x1[1] = { 8 }, y1[1] = { 4e-3 };
    cr_assert_eq(msr_fit_line(x1, y1, 1, 1, &f), 0);
    cr_expect_eq(f.a, 0);
    cr_expect_float_eq(f.b, 5e-4, 1e-18);
    double xs[2] = { 8, 8 }, ys[2] = { 1, 3 };
    cr_assert_eq(msr_fit_line(xs, ys, 2, 0, &f), 0); /* one abscissa: through 0 */
    cr_expect_float_eq(f.b, 0.25, 1e-15);
    cr_expect_eq(msr_fit_line(x1, y1, 0, 0, &f), -PS_EINVAL);
    double yneg[2] = { 1, -1 }, x2[2] = { 1, 2 };
    cr_expect_eq(msr_fit_line(x2, yneg, 2, 1, &f), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "not usable"));
    double z[2] = { 0, 0 };
    cr_expect_eq(msr_fit_line(z, ys, 2, 0, &f), -PS_EINVAL);
}

Test(calib, flop_fit_recovers_rate_batch_half_and_overhead)
{
    /* two layer shapes: t = overhead + f (n + h) / rate */
    double rate = 8.5e10, h = 6, ov = 3e-6, f[14], n[14], t[14];
    int k = 0;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 7; i++, k++) {
            f[k] = s ? 2.1e6 : 5.2e5;
            n[k] = 4 << i;
            t[k] = ov + f[k] * (n[k] + h) / rate;
        }
    double r, bh, o, r2;
    cr_assert_eq(msr_fit_flops(f, n, t, 14, &r, &bh, &o, &r2), 0, "%s", ps_errmsg());
    cr_expect_float_eq(r, rate, rate * 1e-9);
    cr_expect_float_eq(bh, h, 1e-7);
    cr_expect_float_eq(o, ov, 1e-13);
    cr_expect_float_eq(r2, 1, 1e-12);
    /* one shape: overhead and batch_half are one column; fit without overhead */
    for (int i = 0; i < 7; i++)
        t[i] = f[i] * (n[i] + h) / rate;
    cr_assert_eq(msr_fit_flops(f, n, t, 7, &r, &bh, &o, &r2), 0, "%s", ps_errmsg());
    cr_expect_float_eq(r, rate, rate * 1e-9);
    cr_expect_float_eq(bh, h, 1e-7);
    cr_expect_eq(o, 0);
    cr_expect_eq(msr_fit_flops(f, n, t, 2, &r, &bh, &o, &r2), -PS_EINVAL);
}

Test(calib, stat_median_and_quartiles)
{
    double v[5] = { 5, 1, 4, 2, 3 };
    struct msr_stat s;
    msr_stat_of(v, 5, &s);
    cr_expect_eq(s.med, 3);
    cr_expect_eq(s.min, 1);
    cr_expect_eq(s.max, 5);
    cr_expect_eq(s.p25, 2);
    cr_expect_eq(s.p75, 4);
    cr_expect_eq(s.mean, 3);
    double w[4] = { 4, 1, 3, 2 };
    msr_stat_of(w, 4, &s);
    cr_expect_eq(s.med, 2.5);
    cr_expect_eq(s.n, 4);
    cr_expect_eq(s.mean, 2.5);
}

/* The trimmed mean keeps the right skew and drops what lies past Tukey's
 * outer fences, 3 IQR beyond the quartiles: here p25 2, p75 4, fences -4
 * and 10, so 100 goes and 10 stays. */
Test(calib, stat_trimmed_mean_drops_only_far_outliers)
{
    double v[5] = { 1, 2, 3, 4, 100 };
    struct msr_stat s;
    msr_stat_of(v, 5, &s);
    cr_expect_eq(s.p25, 2);
    cr_expect_eq(s.p75, 4);
    cr_expect_eq(s.mean, 2.5);
    cr_expect_eq(s.max, 100);
    double w[5] = { 1, 2, 3, 4, 10 };
    msr_stat_of(w, 5, &s);
    cr_expect_eq(s.mean, 4);
    double skew[8] = { 10, 10, 10, 10, 11, 12, 13, 14 }; /* right skew: mean above median */
    msr_stat_of(skew, 8, &s);
    cr_expect_eq(s.med, 10.5);
    cr_expect_eq(s.mean, 11.25);
    double one = 7;
    msr_stat_of(&one, 1, &s);
    cr_expect_eq(s.mean, 7);
}

/* ---- the calibrated profile columns ---- */

static const char calibrated[] =
    "# calibrated\n"
    "name,kind,fwd_ms,bwd_ms,at_batch,params,out_bytes,stash_bytes,fwd_nostash_ms,"
    "fwd_fixed_ms,bwd_fixed_ms,fwd_nostash_fixed_ms,fwd_ms@16,bwd_ms@16,fwd_nostash_ms@16,"
    "fwd_ms@4,bwd_ms@4,fwd_nostash_ms@4\n"
    "a,dense,2,4,32,10,8,16,1.5,0.2,0.4,0.1,1.2,2.2,0.9,0.5,0.9,0.4\n"
    "b,dense,1,2,32,10,8,16,0.8,0.1,0.2,0.1,,,,0.3,0.5,0.2\n";

Test(calib, profile_extension_loads_sorted_points)
{
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(write_file("c.csv", calibrated), &p), 0, "%s", ps_errmsg());
    cr_assert_eq(p->n_layers, 2);
    const struct mdl_layer *a = &p->layers[0], *b = &p->layers[1];
    cr_expect_eq(a->has_nostash, 1);
    cr_expect_eq(a->has_fixed, 1);
    cr_expect_float_eq(a->fwd_nostash, 1.5e-3, 1e-18);
    cr_expect_float_eq(a->fwd_fixed, 0.2e-3, 1e-18);
    cr_expect_float_eq(a->bwd_fixed, 0.4e-3, 1e-18);
    cr_expect_float_eq(a->nostash_fixed, 0.1e-3, 1e-18);
    cr_assert_eq(a->n_pts, 2);
    cr_expect_eq(a->pt_batch[0], 4); /* sorted although the columns list 16 first */
    cr_expect_eq(a->pt_batch[1], 16);
    cr_expect_float_eq(a->pt_fwd[1], 1.2e-3, 1e-18);
    cr_expect_float_eq(a->pt_nostash[0], 0.4e-3, 1e-18);
    cr_expect_eq(b->n_pts, 1); /* empty fields: no point at 16 */
    cr_expect_eq(b->pt_batch[0], 4);
    mdl_profile_free(p);
}

Test(calib, layer_seconds_interpolates_and_extrapolates)
{
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(write_file("c.csv", calibrated), &p), 0, "%s", ps_errmsg());
    struct mdl_device d = { .flops = 1e12, .memory = 1, .eff_max = 1, .batch_half = 8 };
    const struct mdl_layer *a = &p->layers[0];
    /* at the points exactly */
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, a, MDL_OP_FWD, 4), 0.5e-3, 1e-15);
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, a, MDL_OP_FWD, 16), 1.2e-3, 1e-15);
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, a, MDL_OP_FWD, 32), 2e-3, 1e-15);
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, a, MDL_OP_BWD, 16), 2.2e-3, 1e-15);
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, a, MDL_OP_FWD_NOSTASH, 16), 0.9e-3, 1e-15);
    /* between: linear, 8 is a third of the way from 4 to 16 */
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, a, MDL_OP_FWD, 8), 0.5e-3 + 0.7e-3 / 3, 1e-15);
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, a, MDL_OP_BWD, 24), 2.2e-3 + 1.8e-3 / 2, 1e-15);
    /* beyond: the end point scaled by the affine rule fixed + (t_at - fixed) n / at */
    double base64 = 0.2e-3 + 1.8e-3 * 64 / 32, base32 = 2e-3;
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, a, MDL_OP_FWD, 64), 2e-3 * base64 / base32,
                       1e-15);
    double base2 = 0.2e-3 + 1.8e-3 * 2 / 32, base4 = 0.2e-3 + 1.8e-3 * 4 / 32;
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, a, MDL_OP_FWD, 2), 0.5e-3 * base2 / base4,
                       1e-15);
    /* FLOP profiles and plain measured rows are unchanged */
    struct mdl_layer plain = { .fwd = 2e-3, .bwd = 4e-3, .at_batch = 32 };
    cr_expect_eq(mdl_layer_seconds(&d, 1, &plain, MDL_OP_FWD, 12),
                 mdl_device_op_seconds(&d, 1, 2e-3, 32, 12));
    cr_expect_eq(mdl_layer_seconds(&d, 1, &plain, MDL_OP_FWD_NOSTASH, 12),
                 mdl_device_op_seconds(&d, 1, 2e-3, 32, 12));
    struct mdl_layer fl = { .fwd = 1e9, .bwd = 3e9 };
    cr_expect_eq(mdl_layer_seconds(&d, 0, &fl, MDL_OP_BWD, 4),
                 mdl_device_op_seconds(&d, 0, 3e9, 0, 4));
    /* fixed only: exactly affine */
    struct mdl_layer af = { .fwd = 2e-3, .bwd = 4e-3, .at_batch = 32, .has_fixed = 1,
                            .fwd_fixed = 0.4e-3, .bwd_fixed = 1e-3 };
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, &af, MDL_OP_FWD, 16), 0.4e-3 + 1.6e-3 / 2,
                       1e-15);
    cr_expect_float_eq(mdl_layer_seconds(&d, 1, &af, MDL_OP_BWD, 64), 1e-3 + 3e-3 * 2, 1e-15);
    mdl_profile_free(p);
}

Test(calib, profile_extension_round_trips)
{
    struct mdl_profile *p, *q;
    cr_assert_eq(mdl_profile_load(write_file("c.csv", calibrated), &p), 0, "%s", ps_errmsg());
    char out[160];
    snprintf(out, sizeof out, "%s/rt.csv", dir);
    cr_assert_eq(mdl_profile_write(p, out), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_profile_load(out, &q), 0, "%s", ps_errmsg());
    cr_assert_eq(q->n_layers, p->n_layers);
    for (int i = 0; i < p->n_layers; i++) {
        const struct mdl_layer *a = &p->layers[i], *b = &q->layers[i];
        cr_expect_eq(a->fwd, b->fwd);
        cr_expect_eq(a->bwd, b->bwd);
        cr_expect_eq(a->fwd_nostash, b->fwd_nostash);
        cr_expect_eq(a->fwd_fixed, b->fwd_fixed);
        cr_expect_eq(a->bwd_fixed, b->bwd_fixed);
        cr_expect_eq(a->nostash_fixed, b->nostash_fixed);
        cr_expect_eq(a->has_fixed, b->has_fixed);
        cr_assert_eq(a->n_pts, b->n_pts);
        for (int k = 0; k < a->n_pts; k++) {
            cr_expect_eq(a->pt_batch[k], b->pt_batch[k]);
            cr_expect_eq(a->pt_fwd[k], b->pt_fwd[k]);
            cr_expect_eq(a->pt_bwd[k], b->pt_bwd[k]);
            cr_expect_eq(a->pt_nostash[k], b->pt_nostash[k]);
        }
    }
    mdl_profile_free(p);
    mdl_profile_free(q);
}

static void bad_profile(const char *text, int code, const char *what)
{
    struct mdl_profile *p = NULL;
    int rc = mdl_profile_load(write_file("bad.csv", text), &p);
    cr_expect_eq(rc, -code, "%s: rc %d (%s)", what, rc, ps_errmsg());
    cr_expect(strstr(ps_errmsg(), what), "message '%s' lacks '%s'", ps_errmsg(), what);
    cr_expect_null(p);
    mdl_profile_free(p);
}

#define H "name,fwd_ms,bwd_ms,at_batch,params,out_bytes,stash_bytes"
Test(calib, profile_extension_rejects_bad_input)
{
    bad_profile(H ",fwd_fixed_ms,bwd_fixed_ms\na,1,2,8,0,0,0,1.5,0.1\n", PS_EINVAL,
                ":2:15: field 'fwd_fixed_ms' (1.5 ms) must be <= fwd_ms (1 ms)");
    bad_profile(H ",fwd_fixed_ms\na,1,2,8,0,0,0,0.5\n", PS_EPARSE, "come together");
    bad_profile(H ",fwd_ms@4\na,1,2,8,0,0,0,0.5\n", PS_EPARSE, "'bwd_ms@4' is missing");
    bad_profile(H ",fwd_ms@x,bwd_ms@x\na,1,2,8,0,0,0,0.5,1\n", PS_EPARSE,
                "the batch size after '@' must be a whole number from 1 to 2^30");
    /* past the range, the range said (helper-134: "a positive integer" of 2^30 + 1) */
    bad_profile(H ",fwd_ms@1073741825,bwd_ms@1073741825\na,1,2,8,0,0,0,0.5,1\n", PS_EPARSE,
                "column 'fwd_ms@1073741825': the batch size after '@' must be a whole number "
                "from 1 to 2^30");
    bad_profile(H ",fwd_ms@4,bwd_ms@4,fwd_ms@4\n", PS_EPARSE, "duplicate column 'fwd_ms@4'");
    bad_profile(H ",fwd_ms@4,bwd_ms@4\na,1,2,8,0,0,0,0.5,\n", PS_EPARSE,
                "all given or all empty");
    bad_profile(H ",fwd_ms@8,bwd_ms@8\na,1,2,8,0,0,0,1,3\n", PS_EINVAL,
                "field 'bwd_ms@8' differs from the value at at_batch 8");
    bad_profile(H ",fwd_ms@4,bwd_ms@4\na,1,2,8,0,0,0,-1,1\n", PS_EINVAL, "must be >= 0");
    bad_profile("name,fwd_flops,params,out_bytes,stash_bytes,fwd_ms@4,bwd_ms@4\n", PS_EPARSE,
                "need 'fwd_ms', not 'fwd_flops'");
    bad_profile("name,fwd_flops,params,out_bytes,stash_bytes,fwd_nostash_ms\n", PS_EPARSE,
                "column 'fwd_nostash_ms' needs 'fwd_ms'");
    bad_profile(H ",fwd_nostash_ms,fwd_fixed_ms,bwd_fixed_ms\n", PS_EPARSE,
                "need 'fwd_nostash_fixed_ms'");
    bad_profile(H ",fwd_ms@4,bwd_ms@4,fwd_nostash_ms@4\n", PS_EPARSE,
                "needs column 'fwd_nostash_ms'");
    bad_profile(H ",fwd_fixed_ms,bwd_fixed_ms\na,1,2,8,0,0,0,0.5,\n", PS_EPARSE,
                "all given or all empty");
}

/* A one-layer profile (8 samples) simulated as GPipe on one device, M = 2,
 * in each remat mode: every F, R and B takes the time of its kind and its
 * micro-batch's mode (the keeping forward f, without stash fn, recompute
 * r, backward b of a stashed micro-batch, br after its recompute;
 * except_last keeps micro-batch 1), and the step is their sum. */
static void remat_times(const char *csv, int64_t f, int64_t fn, int64_t r, int64_t b,
                        int64_t br)
{
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(write_file("n.csv", csv), &p), 0, "%s", ps_errmsg());
    struct mdl_topology *t = th_chain(1, 0, 1e9, 0);
    enum sch_remat modes[3] = { SCH_REMAT_NEVER, SCH_REMAT_ALWAYS, SCH_REMAT_EXCEPT_LAST };
    for (int m = 0; m < 3; m++) {
        struct th_run run;
        th_simulate(&run, "gpipe", p, t, 1, 2, modes[m], 8, 1);
        const struct trc_trace *tr = sim_engine_trace(run.e);
        int n[SCH_OP_NKINDS] = { 0 };
        int64_t sum = 0;
        for (size_t i = 0; i < tr->n_events; i++) {
            const struct trc_event *e = &tr->events[i];
            int rm = m == 1 || (m == 2 && e->mb == 0), k = e->kind;
            int64_t d = e->end_ns - e->start_ns,
                    want = k == SCH_OP_FWD ? (rm ? fn : f) : k == SCH_OP_RECOMP ? r
                         : k == SCH_OP_BWD ? (rm ? br : b) : d;
            cr_expect_eq(d, want, "mode %d kind %d mb %d", m, k, e->mb);
            n[k]++;
            sum += k == SCH_OP_FWD || k == SCH_OP_RECOMP || k == SCH_OP_BWD ? d : 0;
        }
        cr_expect_eq(n[SCH_OP_FWD], 2);
        cr_expect_eq(n[SCH_OP_BWD], 2);
        cr_expect_eq(n[SCH_OP_RECOMP], m == 0 ? 0 : m == 1 ? 2 : 1);
        cr_expect_eq(sim_engine_result(run.e)->makespan, sum, "mode %d", m); /* U: 0 */
        th_release(&run);
    }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* F keeps 3 ms, F without stash 2 ms; R keeps (the forward), B 5 ms */
Test(calib, remat_forwards_take_the_nostash_time)
{
    remat_times(H ",fwd_nostash_ms\na,3,5,8,0,4,4,2\n", 3000000, 2000000, 3000000, 5000000,
                5000000);
}

/* ---- outputs of a calibration (no timing) ---- */

/* recomp_ms and bwd_remat_ms: R and the backward of a re-materialized
 * micro-batch apart, in every mode, the split backward's W in the same
 * share; their @N ratios interpolated; and what the loader refuses. */
Test(calib, remat_ops_take_their_own_times)
{
    /* one layer at 8 samples: F 3 ms, B 5 ms (W 2 ms), R 2.5 ms, B after R 4 ms;
     * the K = 1, M = 2 steps by hand: never 2 x 3 + 2 x 5, always 2 x 3 +
     * 2 x (2.5 + 4), except_last 2 x 3 + 5 + 2.5 + 4 ms */
    static const char csv[] = H ",wgrad_ms,recomp_ms,bwd_remat_ms\na,3,5,8,0,4,4,2,2.5,4\n";
    remat_times(csv, 3000000, 3000000, 2500000, 5000000, 4000000);
    /* the split backward: W keeps its share (2 of 5) of either backward */
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(write_file("r.csv", csv), &p), 0, "%s", ps_errmsg());
    struct mdl_topology *t = th_chain(1, 0, 1e9, 0);
    const struct mdl_device *d = &t->devices[0];
    double b, w;
    cr_expect_eq(mdl_layer_bwd_split_op(d, 1, &p->layers[0], MDL_OP_BWD_REMAT, 8, &b, &w), 1);
    cr_expect_float_eq(w, 4e-3 * 2 / 5, 1e-15);
    cr_expect_float_eq(b, 4e-3 * 3 / 5, 1e-15);
    mdl_topology_free(t);
    mdl_profile_free(p);
    /* points: the ratio to the forward interpolated, constant beyond */
    cr_assert_eq(mdl_profile_load(write_file("r2.csv", H ",recomp_ms,recomp_ms@4,fwd_ms@4,"
                                                       "bwd_ms@4\n"
                                                       "a,2,4,8,0,4,4,1.8,0.8,1,2\n"), &p), 0,
                 "%s", ps_errmsg());
    struct mdl_device dv = { .flops = 1e12, .memory = 1, .eff_max = 1, .batch_half = 0 };
    const struct mdl_layer *a = &p->layers[0];
    /* at 4: 0.8 of 1 ms; at 8: 0.9 of 2 ms; at 6: 0.85 of 1.5 ms; at 16: 0.9 of F(16) */
    cr_expect_float_eq(mdl_layer_seconds(&dv, 1, a, MDL_OP_RECOMP, 4), 0.8e-3, 1e-15);
    cr_expect_float_eq(mdl_layer_seconds(&dv, 1, a, MDL_OP_RECOMP, 8), 1.8e-3, 1e-15);
    cr_expect_float_eq(mdl_layer_seconds(&dv, 1, a, MDL_OP_RECOMP, 6), 0.85 * 1.5e-3, 1e-15);
    cr_expect_float_eq(mdl_layer_seconds(&dv, 1, a, MDL_OP_RECOMP, 16),
                       0.9 * mdl_layer_seconds(&dv, 1, a, MDL_OP_FWD, 16), 1e-15);
    /* no bwd_remat_ms: the backward's own time */
    cr_expect_eq(mdl_layer_seconds(&dv, 1, a, MDL_OP_BWD_REMAT, 6),
                 mdl_layer_seconds(&dv, 1, a, MDL_OP_BWD, 6));
    /* written and read back the same */
    char out[160];
    snprintf(out, sizeof out, "%s/rr.csv", dir);
    struct mdl_profile *q;
    cr_assert_eq(mdl_profile_write(p, out), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_profile_load(out, &q), 0, "%s", ps_errmsg());
    cr_expect_eq(q->layers[0].has_recomp, 1);
    cr_expect_eq(q->layers[0].has_bwd_remat, 0);
    cr_expect_eq(q->layers[0].recomp, a->recomp);
    cr_expect_eq(q->layers[0].pt_recomp[0], a->pt_recomp[0]);
    mdl_profile_free(q);
    mdl_profile_free(p);
    /* a file with recomp_ms but without its @N columns: written back with the
     * points the ratio rule puts there, and loaded again unchanged */
    cr_assert_eq(mdl_profile_load(write_file("r3.csv", H ",recomp_ms,fwd_ms@4,bwd_ms@4\n"
                                                       "a,2,4,8,0,4,4,1.6,1,2\n"), &p), 0,
                 "%s", ps_errmsg());
    cr_assert_eq(mdl_profile_write(p, out), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_profile_load(out, &q), 0, "%s", ps_errmsg());
    cr_expect_float_eq(q->layers[0].pt_recomp[0], 0.8e-3, 1e-15); /* 0.8 of fwd_ms@4 */
    cr_expect_float_eq(mdl_layer_seconds(&dv, 1, &q->layers[0], MDL_OP_RECOMP, 6),
                       mdl_layer_seconds(&dv, 1, &p->layers[0], MDL_OP_RECOMP, 6), 1e-18);
    mdl_profile_free(q);
    mdl_profile_free(p);
    /* every column at the most sizes a profile holds writes and loads back */
    p = mdl_profile_new("wide", 1);
    struct mdl_layer wl = { .name = "w", .fwd = 2e-3, .bwd = 4e-3, .at_batch = 1000,
                            .has_nostash = 1, .fwd_nostash = 1.5e-3, .has_fixed = 1,
                            .has_wgrad = 1, .wgrad = 1e-3, .has_recomp = 1, .recomp = 1.8e-3,
                            .has_bwd_remat = 1, .bwd_remat = 3.5e-3, .n_pts = MDL_MAX_POINTS };
    double pts[7][MDL_MAX_POINTS];
    for (int k = 0; k < MDL_MAX_POINTS; k++)
        for (int c = 0; c < 7; c++)
            pts[c][k] = c == 0 ? k + 1 : (k + 1) * 1e-5 * (c + 1);
    wl.pt_batch = pts[0];
    wl.pt_fwd = pts[1];
    wl.pt_bwd = pts[2];
    wl.pt_nostash = pts[3];
    wl.pt_wgrad = pts[4];
    wl.pt_recomp = pts[5];
    wl.pt_bwd_remat = pts[6];
    for (int k = 0; k < MDL_MAX_POINTS; k++) /* W at most its backward */
        pts[4][k] = pts[2][k] / 2;
    cr_assert_eq(mdl_profile_add(p, &wl), 0);
    cr_assert_eq(mdl_profile_write(p, out), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_profile_load(out, &q), 0, "%s", ps_errmsg());
    cr_expect_eq(q->layers[0].n_pts, MDL_MAX_POINTS);
    cr_expect_eq(q->layers[0].pt_bwd_remat[MDL_MAX_POINTS - 1],
                 p->layers[0].pt_bwd_remat[MDL_MAX_POINTS - 1]);
    mdl_profile_free(q);
    mdl_profile_free(p);
    bad_profile("name,fwd_flops,params,out_bytes,stash_bytes,recomp_ms\n", PS_EPARSE,
                "column 'recomp_ms' needs 'fwd_ms'");
    bad_profile(H ",fwd_ms@4,bwd_ms@4,bwd_remat_ms@4\n", PS_EPARSE,
                "needs column 'bwd_remat_ms'");
    bad_profile(H ",recomp_ms,fwd_ms@4,bwd_ms@4,recomp_ms@4\na,1,2,8,0,0,0,1,0.5,1,\n",
                PS_EPARSE, "field 'recomp_ms@4' is empty");
    bad_profile(H ",recomp_ms,fwd_ms@4,bwd_ms@4,recomp_ms@4\na,1,2,8,0,0,0,,0.5,1,0.4\n",
                PS_EPARSE, "field 'recomp_ms@4' needs the layer's value at at_batch");
    bad_profile(H ",recomp_ms,fwd_ms@8,bwd_ms@8,recomp_ms@8\na,1,2,8,0,0,0,1,1,2,0.9\n",
                PS_EINVAL, "field 'recomp_ms@8' differs from the value at at_batch");
}

Test(calib, profile_and_topology_from_a_calibration)
{
    struct msr_calib c;
    memset(&c, 0, sizeof c);
    struct msr_calib_layer layer;
    memset(&layer, 0, sizeof layer);
    cr_assert_eq(mdl_gen_mlp(1, 16, 0, &c.net_profile), 0);
    c.n_layers = 1;
    c.layers = &layer;
    c.n_sizes = 3;
    c.sizes[0] = 2, c.sizes[1] = 4, c.sizes[2] = 8;
    c.ref_batch = 4;
    c.n_cores = 2;
    c.gemm_flops = 1e11;
    c.fit_rate = 5e10;
    c.fit_batch_half = 3;
    c.memory_per_core = 4e9;
    c.update_bw = 2e10;
    c.link_latency = 2e-6;
    c.link_bandwidth = 5e9;
    for (int i = 0; i < 3; i++) {
        layer.kept[i].med = 1e-4 * (i + 1);
        layer.t[MSR_CALIB_BWD][i].med = 2e-4 * (i + 1);
        layer.t[MSR_CALIB_FWD_NOSTASH][i].med = 0.9e-4 * (i + 1);
        layer.t[MSR_CALIB_WGRAD][i].med = 0.8e-4 * (i + 1);
    }
    layer.t[MSR_CALIB_WGRAD][2].med = 1; /* above B: clamped to it */
    layer.kept_fit.a = 5e-5;
    layer.fit[MSR_CALIB_BWD].a = -1e-6;   /* negative: clamped to 0 */
    layer.fit[MSR_CALIB_FWD_NOSTASH].a = 1; /* above t_at: clamped to it */
    struct mdl_profile *p;
    cr_assert_eq(msr_calib_profile(&c, &p), 0, "%s", ps_errmsg());
    cr_assert_eq(p->n_layers, 1);
    cr_expect_eq(p->measured, 1);
    const struct mdl_layer *l = &p->layers[0];
    cr_expect_eq(l->at_batch, 4);
    cr_expect_eq(l->fwd, 2e-4);
    cr_expect_eq(l->bwd, 4e-4);
    cr_expect_eq(l->fwd_nostash, 1.8e-4);
    cr_expect_eq(l->fwd_fixed, 5e-5);
    cr_expect_eq(l->bwd_fixed, 0);
    cr_expect_eq(l->nostash_fixed, 1.8e-4);
    cr_assert_eq(l->n_pts, 2);
    cr_expect_eq(l->pt_batch[0], 2);
    cr_expect_eq(l->pt_batch[1], 8);
    cr_expect_float_eq(l->pt_fwd[1], 3e-4, 1e-18);
    cr_expect(l->has_wgrad); /* W as timed inside B */
    cr_expect_eq(l->wgrad, 1.6e-4);
    cr_expect_float_eq(l->pt_wgrad[0], 0.8e-4, 1e-18);
    cr_expect_float_eq(l->pt_wgrad[1], l->pt_bwd[1], 1e-18);
    cr_expect_eq(l->params, c.net_profile->layers[0].params);
    char path[160];
    snprintf(path, sizeof path, "%s/p.csv", dir);
    cr_assert_eq(mdl_profile_write(p, path), 0, "%s", ps_errmsg());
    struct mdl_profile *q;
    cr_assert_eq(mdl_profile_load(path, &q), 0, "%s", ps_errmsg());
    cr_expect_eq(q->layers[0].wgrad, l->wgrad);
    cr_expect_eq(q->layers[0].pt_wgrad[1], l->pt_wgrad[1]);
    mdl_profile_free(q);
    struct mdl_topology *t, *t2;
    cr_assert_eq(msr_calib_topology(&c, &t), 0, "%s", ps_errmsg());
    cr_expect_eq(t->n_devices, 2);
    cr_expect_eq(t->bytes_per_param, 8);
    cr_expect_eq(t->devices[1].flops, 1e11);
    cr_expect_eq(t->devices[1].eff_max, 0.5);
    cr_expect_eq(t->devices[0].batch_half, 3);
    cr_expect_eq(t->devices[0].mem_bandwidth, 2e10);
    cr_expect_eq(t->devices[0].memory, 4e9);
    cr_assert_eq(t->n_links, 1);
    cr_expect_eq(t->links[0].shared, 0); /* full duplex: no send waits for another */
    cr_expect_eq(t->links[0].latency, 2e-6);
    cr_expect_eq(t->links[0].bandwidth, 5e9);
    snprintf(path, sizeof path, "%s/t.json", dir);
    cr_assert_eq(mdl_topology_write(t, path), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_topology_load(path, &t2), 0, "%s", ps_errmsg());
    cr_expect_eq(t2->n_devices, 2);
    cr_expect_eq(mdl_topology_link_between(t2, 0, 1), 0);
    mdl_topology_free(t);
    mdl_topology_free(t2);
    mdl_profile_free(p);
    mdl_profile_free(c.net_profile);
}

/* ---- pipesim calibrate end to end ---- */

Test(calib, calibrate_writes_what_predict_accepts)
{
    if (th_sh("cd %s && %s calibrate --net mlp:layers=3,width=16 --micro-batches 2,4 "
              "--repeats 3 --warmup 1 --out c/net > out.txt 2> err.txt", dir, th_pipesim())) {
        th_sh("cat %s/err.txt >&2", dir);
        cr_assert_fail("calibrate failed (its stderr above)");
    }
    char p[160];
    snprintf(p, sizeof p, "%s/c/net.csv", dir);
    struct mdl_profile *prof;
    cr_assert_eq(mdl_profile_load(p, &prof), 0, "%s", ps_errmsg());
    cr_expect_eq(prof->n_layers, 3);
    cr_expect_eq(prof->measured, 1);
    cr_expect_eq(prof->layers[0].at_batch, 4);
    cr_expect_eq(prof->layers[0].n_pts, 1);
    cr_expect_eq(prof->layers[0].has_nostash, 1);
    cr_expect_eq(prof->layers[0].has_fixed, 1);
    cr_expect_gt(prof->layers[1].fwd, 0);
    mdl_profile_free(prof);
    snprintf(p, sizeof p, "%s/c/net.json", dir);
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load(p, &t), 0, "%s", ps_errmsg());
    cr_expect_geq(t->n_devices, 1);
    mdl_topology_free(t);
    cr_expect_eq(th_sh("cd %s && test -s c/net-fit.csv && grep -q '^layer,dense0,F,2,' "
                       "c/net-fit.csv && grep -q 'hand-off' out.txt", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s predict --model c/net.csv --topology c/net.json -K 1 -M 2 "
                       "--batch 8 > pred.txt", dir, th_pipesim()), 0);
    /* in 3 stages, each on its core, concurrently */
    if (th_sh("cd %s && %s calibrate --net mlp:layers=3,width=16 --micro-batches 2,4 "
              "--repeats 2 --stages 3 --out c/k3 > out3.txt 2> err3.txt", dir, th_pipesim())) {
        th_sh("cat %s/err3.txt >&2", dir);
        cr_assert_fail("calibrate --stages 3 failed (its stderr above)");
    }
    cr_expect_eq(th_sh("cd %s && grep -q 'in 3 stages of 1,1,1 layers' c/k3.csv", dir), 0);
    /* more stages than layers: exit 7, as validate's K > layers (helper-66: 2) */
    cr_expect_eq(th_sh("cd %s && %s calibrate --net mlp:layers=3,width=16 --micro-batches 2 "
                       "--stages 4 --out c/k4 2> err4.txt; test $? -eq 7 && grep -qx 'pipesim "
                       "calibrate: 4 stages but the net has 3 layers' err4.txt", dir,
                       th_pipesim()), 0);
    /* the three files are one set: one that cannot be written leaves the others as they
     * were (helper-66: a new profile beside the old fits); nor are they written when the
     * report on stdout fails */
    cr_assert_eq(th_sh("cd %s && mkdir s && echo old > s/x.csv && echo old > s/x-fit.csv && "
                       "ln -s /dev/full s/x.json", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s calibrate --net mlp:layers=3,width=16 --micro-batches 2 "
                       "--repeats 2 --out s/x >/dev/null 2>&1", dir, th_pipesim()), 5);
    cr_expect_eq(th_sh("cd %s && test \"$(cat s/x.csv s/x-fit.csv)\" = \"$(printf "
                       "'old\\nold')\" && test $(ls -A s | wc -l) -eq 3", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s calibrate --net mlp:layers=3,width=16 --micro-batches 2 "
                       "--repeats 2 --out t/x >/dev/full 2>/dev/null", dir, th_pipesim()), 5);
    cr_expect_neq(th_sh("cd %s && ls t/x* >/dev/null 2>&1", dir), 0, "written after stdout "
                  "failed");
}

/* --format json: the fit file's rows, one object each, and the summary;
 * counts as integers. */
Test(calib, calibrate_json_has_the_fit_rows)
{
    if (th_sh("cd %s && %s calibrate --net mlp:layers=2,width=8 --micro-batches 2,4 "
              "--repeats 2 --warmup 0 --out j/net --format json > out.json 2> err.txt", dir,
              th_pipesim())) {
        th_sh("cat %s/err.txt >&2", dir);
        cr_assert_fail("calibrate --format json failed (its stderr above)");
    }
    char p[160], n[64];
    snprintf(p, sizeof p, "%s/out.json", dir);
    json_error_t err;
    json_t *o = json_load_file(p, 0, &err);
    cr_assert(o, "%s: %s", p, err.text);
    cr_expect_str_eq(json_string_value(json_object_get(o, "spec")), "mlp:layers=2,width=8");
    cr_expect(json_is_integer(json_object_get(o, "layers")));
    cr_expect_eq(json_array_size(json_object_get(o, "micro_batches")), 2);
    cr_expect(json_is_number(json_object_get(json_object_get(o, "link"),
                                             "bandwidth_bytes_per_s")));
    /* the fit file: a comment, a header, then the rows */
    cr_assert_eq(th_capture(n, sizeof n, "tail -n +3 %s/j/net-fit.csv | wc -l", dir), 0);
    cr_expect_eq((int)json_array_size(json_object_get(o, "rows")), atoi(n));
    json_t *r0 = json_array_get(json_object_get(o, "rows"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(r0, "scope")), "layer");
    cr_expect(json_is_integer(json_object_get(r0, "n")));
    json_decref(o);
    /* the fit CSV is exact (errors-and-outputs.md): every figure, to the
     * JSON's 15 digits, is the JSON's (fixed %.6f cut a_us 0.174540396662176
     * to 0.174540) */
    cr_expect_eq(th_sh("cd %s && python3 -c '\n"
                       "import csv, json\n"
                       "rows = json.load(open(\"out.json\"))[\"rows\"]\n"
                       "lines = [l for l in open(\"j/net-fit.csv\") if not l.startswith(\"#\")]\n"
                       "got = list(csv.DictReader(lines))\n"
                       "assert len(got) == len(rows)\n"
                       "for g, w in zip(got, rows):\n"
                       "    for k, v in w.items():\n"
                       "        if isinstance(v, float) or (isinstance(v, int) and k != \"n\"):\n"
                       "            assert \"%%.15g\" %% float(g[k]) == \"%%.15g\" %% v, (k, g[k], v)\n"
                       "'", dir), 0, "fit CSV against JSON");
    /* --format csv: one header row first, every row parses (a comment line with
     * the spec's commas came first) */
    cr_expect_eq(th_sh("cd %s && %s calibrate --net mlp:layers=2,width=8 --batch 4 -M 1,2 "
                       "--repeats 1 --warmup 0 --out k/net --format csv > out.csv 2>/dev/null && "
                       "head -1 out.csv | grep -q '^scope,name,op,n,' && head -1 k/net-fit.csv | "
                       "grep -q '^# pipesim calibrate' && python3 -c 'import csv; rows = list("
                       "csv.DictReader(open(\"out.csv\"))); assert rows and all(len(r) == 14 for r "
                       "in rows)'", dir, th_pipesim()), 0, "calibrate --format csv");
}

/* The summary's transfer bandwidth is 1 / the fitted slope; a slope that is
 * not positive has none: null in JSON (errors-and-outputs.md, missing
 * values), as the table prints "(not positive)" (it was 0). A synthetic fit:
 * a measured slope's sign is noise. */
static json_t *calib_json(double slope)
{
    static struct msr_calib c;
    memset(&c, 0, sizeof c);
    snprintf(c.spec, sizeof c.spec, "mlp:layers=1,width=8");
    c.xfer_fit.a = 2e-6;
    c.xfer_fit.b = slope;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    cr_assert_eq(msr_calib_print(&c, ANA_FMT_JSON, f), 0, "%s", ps_errmsg());
    fclose(f);
    json_error_t err;
    json_t *o = json_loads(buf, 0, &err);
    cr_assert(o, "%s: %s", err.text, buf);
    free(buf);
    return o;
}

Test(calib, json_transfer_bandwidth_is_null_without_a_positive_slope)
{
    for (int k = 0; k < 3; k++) {
        double slope = k == 0 ? 0 : k == 1 ? -1e-10 : 1e-10;
        json_t *o = calib_json(slope);
        json_t *bw = json_object_get(json_object_get(o, "transfer"), "bandwidth_bytes_per_s");
        cr_assert(bw, "no transfer.bandwidth_bytes_per_s");
        if (slope > 0)
            cr_expect_float_eq(json_number_value(bw), 1e10, 1e-3);
        else
            cr_expect(json_is_null(bw), "slope %g: bandwidth %g, not null", slope,
                      json_number_value(bw));
        cr_expect_float_eq(json_number_value(json_object_get(json_object_get(o, "transfer"),
                                                             "latency_s")), 2e-6, 1e-18);
        json_decref(o);
    }
}

static void bad_cli(const char *args, int status, const char *what)
{
    int rc = th_sh("cd %s && %s calibrate %s > /dev/null 2> err.txt", dir, th_pipesim(), args);
    cr_expect_eq(rc, status, "'%s' exited %d", args, rc);
    char p[160], msg[512] = "";
    snprintf(p, sizeof p, "%s/err.txt", dir);
    FILE *f = fopen(p, "r");
    if (f) {
        size_t n = fread(msg, 1, sizeof msg - 1, f);
        msg[n] = 0;
        fclose(f);
    }
    cr_expect(strstr(msg, what), "'%s': '%s' lacks '%s'", args, msg, what);
}

Test(calib, calibrate_rejects_bad_options)
{
    bad_cli("", 2, "--net is required");
    bad_cli("--net mlp:layers=2,width=8 --micro-batches 4,x", 2, "--micro-batches");
    bad_cli("--net mlp:layers=2,width=8 --micro-batches 4,8 --at-batch 16", 2,
            "not one of the measured sizes");
    bad_cli("--net mlp:layers=2,width=8 --batch 10 -M 4", 2, "must divide by -M 4");
    bad_cli("--net mlp:layers=2,width=8 --colour", 2, "unknown option '--colour'");
    bad_cli("--net mlp:layers=2,width=8 --format xml", 2, "unknown format 'xml'");
    bad_cli("--net nonsense:1 --micro-batches 2 --out x", 2, "nonsense");
    cr_expect_eq(th_sh("cd %s && test ! -e x.csv && test ! -e results", dir), 0);
    cr_expect_eq(th_sh("%s calibrate --help | grep -q 'PREFIX.csv'", th_pipesim()), 0);
    /* what the timing allocates is checked before it is (helper-127: 131072-sample
     * micro-batches grew to GiBs before failing): exit 6, nothing written; the
     * link's messages dominate (29 x 4 x 4096 x 256 bytes) */
    cr_expect_eq(th_sh("cd %s && PIPESIM_MEMORY_LIMIT=64MiB %s calibrate --net "
                       "mlp:layers=2,width=256 --micro-batches 4096 --repeats 1 --out big "
                       "> /dev/null 2> err.txt; test $? -eq 6 && grep -q 'needs about 124.0 "
                       "MiB (stashes 13.0 MiB, .* the link.s messages 124.0 MiB)' err.txt && "
                       "test ! -e big.csv", dir, th_pipesim()), 0);
}

/* The RT-throttling files, in a folder of the test's own: read, written
 * (the value before returned), described, and refused when malformed. */
Test(calib, rt_throttle_reads_sets_and_describes)
{
    char tdir[256], line[256], buf[64];
    long rt = 0, period = 0, old = 0;
    th_tmpdir(tdir, sizeof tdir, "rtthrottle");
    th_put(tdir, "sched_rt_runtime_us", "950000\n");
    th_put(tdir, "sched_rt_period_us", "1000000\n");
    cr_assert_eq(msr_rt_throttle_read(tdir, &rt, &period), 0);
    cr_assert_eq(rt, 950000);
    cr_assert_eq(period, 1000000);
    cr_assert_eq(msr_rt_throttle_describe(tdir, line, sizeof line), 1);
    cr_assert_str_eq(line, "RT throttling: FIFO threads may use 950 of every 1000 ms "
                           "(kernel.sched_rt_runtime_us)");
    cr_assert_eq(msr_rt_throttle_set(tdir, -1, &old), 0);
    cr_assert_eq(old, 950000);
    th_slurp(tdir, "sched_rt_runtime_us", buf, sizeof buf);
    cr_assert_str_eq(buf, "-1\n");
    cr_assert_eq(msr_rt_throttle_describe(tdir, line, sizeof line), 0);
    cr_assert_str_eq(line, "RT throttling: off (kernel.sched_rt_runtime_us = -1)");
    cr_assert_eq(msr_rt_throttle_set(tdir, 950000, &old), 0);
    cr_assert_eq(old, -1);
    cr_assert_eq(msr_rt_throttle_set(tdir, -2, NULL), -PS_EINVAL);
    th_put(tdir, "sched_rt_period_us", "1000000x\n");
    cr_assert_eq(msr_rt_throttle_read(tdir, &rt, &period), -PS_EIO);
    cr_assert(strstr(ps_errmsg(), "sched_rt_period_us:1: not one integer"), "%s", ps_errmsg());
    th_put(tdir, "sched_rt_period_us", "");
    cr_assert_eq(msr_rt_throttle_read(tdir, &rt, &period), -PS_EIO);
    cr_assert_eq(msr_rt_throttle_describe(tdir, line, sizeof line), -1);
    cr_assert(!strncmp(line, "RT throttling: unknown (", 24), "%s", line);
    th_sh("rm -rf '%s'", tdir);
}

/* The runtime's worker frees and allocates its buffers in list order
 * (runtime/rt_pipe.h), so its measured peak is the ledger summed over each
 * device's list (sch_mem_effect, at an op's start then its end). The
 * simulator replaying the same lists on the calibrated topology must reach
 * the same peak whatever the ops cost, as long as a message's bytes cross
 * before the op after its send ends (the runtime's worker copies a message
 * before it goes on; the simulator's send stream does not hold the worker,
 * so a transfer longer than the next op would keep its buffer longer; in
 * the validation grid transfers take microseconds, ops milliseconds):
 * every schedule, K = 2 on two cores and K = 3 on four (stages on every
 * pair of cores), each remat mode, random stage times (a fixed LCG),
 * transfers of 0.2-1 us against ops of 2 us and more, with the other
 * direction's transfers in flight. On the one shared link the calibration
 * used to write, a send could wait behind the other direction's transfer
 * and keep its buffer past its place in the list. */
static int64_t list_order_peak(const struct sch_schedule *s, const struct sch_costs *c, int d)
{
    int64_t cur = 0, peak = 0, a, e;
    for (int i = 0; i < s->n_ops[d]; i++) {
        const struct sch_op *op = &s->ops[d][i];
        sch_mem_effect(s, op, &c->st[op->stage].mem, &a, &e);
        cur += a;
        peak = cur > peak ? cur : peak;
        cur += e;
        peak = cur > peak ? cur : peak;
    }
    return peak;
}

Test(calib, calibrated_topology_peaks_follow_the_list_order, .timeout = 120)
{
    static const char *const names[] = { "gpipe", "1f1b", "eager-1f1b", "interleaved:2",
                                         "breadth-first:2", "zb-h1", "zb-h2", "zb-v",
                                         "zb-auto", "dualpipe-v" };
    uint64_t seed = 12345;
    int cases = 0;
    for (int cores = 2; cores <= 4; cores += 2) {
        struct msr_calib c;
        memset(&c, 0, sizeof c);
        c.n_cores = cores;
        c.gemm_flops = 1e11;
        c.memory_per_core = 4e9;
        c.update_bw = 2e10;
        c.link_latency = 1e-6;
        c.link_bandwidth = 1e9; /* 1000 B in 1 us */
        struct mdl_topology *t;
        cr_assert_eq(msr_calib_topology(&c, &t), 0, "%s", ps_errmsg());
        cr_assert_eq(t->n_links, cores == 2 ? 1 : 6);
        for (size_t n = 0; n < sizeof names / sizeof *names; n++)
            for (int M = 2; M <= 16; M *= 2)
                for (int r = 0; r < 3; r++)
                    for (int trial = 0; trial < 8; trial++) {
                        struct sch_schedule *s;
                        int K = cores == 2 ? 2 : 3;
                        if (sch_schedule_build(names[n], K, M, (enum sch_remat)r, &s) < 0)
                            continue; /* M not a multiple of what the schedule needs */
                        struct sch_costs sc = { .n_stages = s->n_stages, .micro_batch = 1 };
                        sc.st = calloc((size_t)s->n_stages, sizeof *sc.st);
                        cr_assert_not_null(sc.st);
                        for (int st = 0; st < s->n_stages; st++) {
                            struct sch_stage_cost *x = &sc.st[st];
                            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                            x->device = s->stage_device[st];
                            x->fwd = x->recomp = x->fwd_nostash = 2000 + (int)((seed >> 40) % 5000);
                            x->bwd = 2 * x->fwd + (int)((seed >> 20) % 3000);
                            x->bwd_input = x->bwd / 2;
                            x->bwd_weight = x->bwd - x->bwd_input;
                            x->bwd_remat = x->bwd; /* a re-materialized one alike */
                            x->bwd_input_remat = x->bwd_input;
                            x->bwd_weight_remat = x->bwd_weight;
                            x->update = 2000;
                            x->mem.in = st ? sc.st[st - 1].mem.out : 0;
                            x->mem.out = st + 1 < s->n_stages ? 200 + (int)((seed >> 50) % 800) : 0;
                            x->mem.stash = 2000 + (int)((seed >> 30) % 7000);
                            x->mem.wgrad = s->has_wgrad ? 700 : 0;
                        }
                        sim_engine *e;
                        cr_assert_eq(sim_engine_new(s, &sc, t, NULL, &e), 0, "%s", ps_errmsg());
                        cr_assert_eq(sim_engine_run(e), 0, "%s", ps_errmsg());
                        const struct sim_result *res = sim_engine_result(e);
                        for (int d = 0; d < s->n_devices; d++)
                            cr_expect_eq(res->peak_act[d], list_order_peak(s, &sc, d),
                                         "%s K=%d M=%d remat %d trial %d device %d", names[n],
                                         K, M, r, trial, d);
                        cases++;
                        sim_engine_free(e);
                        free(sc.st);
                        sch_schedule_free(s);
                    }
        mdl_topology_free(t);
    }
    cr_expect_gt(cases, 400, "%d cases", cases);
}

/* One core: no link. Beyond 64 cores one switch with a full-duplex link per
 * core, each with half the fitted latency: 100 cores, 100 links, every pair
 * routed through the switch (data-parallel rings pair cores far apart) in
 * two hops of the fitted latency in all; the file round-trips. */
Test(calib, calibrated_topology_of_one_and_of_many_cores)
{
    struct msr_calib c;
    memset(&c, 0, sizeof c);
    c.link_latency = 2e-6;
    c.link_bandwidth = 5e9;
    struct mdl_topology *t, *t2;
    c.n_cores = 1;
    cr_assert_eq(msr_calib_topology(&c, &t), 0, "%s", ps_errmsg());
    cr_expect(t->n_devices == 1 && t->n_links == 0 && t->n_switches == 0);
    mdl_topology_free(t);
    c.n_cores = 100;
    cr_assert_eq(msr_calib_topology(&c, &t), 0, "%s", ps_errmsg());
    cr_expect(t->n_devices == 100 && t->n_links == 100 && t->n_switches == 1);
    struct mdl_route r;
    cr_assert_eq(mdl_topology_route(t, 1, 57, &r), 0, "%s", ps_errmsg());
    cr_expect_eq(r.n_hops, 2);
    cr_expect_float_eq(r.latency, 2e-6, 1e-15);
    cr_expect_eq(r.bandwidth, 5e9);
    char path[160];
    snprintf(path, sizeof path, "%s/many.json", dir);
    cr_assert_eq(mdl_topology_write(t, path), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_topology_load(path, &t2), 0, "%s", ps_errmsg());
    cr_expect(t2->n_devices == 100 && t2->n_links == 100 && t2->n_switches == 1);
    cr_assert_eq(mdl_topology_route(t2, 99, 0, &r), 0, "%s", ps_errmsg());
    cr_expect_eq(r.n_hops, 2);
    mdl_topology_free(t);
    mdl_topology_free(t2);
}

/* msr_calib_size_round: after the warm-up round, the two steps of one size
 * alone, as many times as asked; a size not calibrated runs nothing; the
 * steps count as the most any size took (no full timed round ran). */
Test(calib, size_rounds_time_one_size_at_a_time)
{
    static const int sizes[] = { 2, 4 };
    struct msr_calib_opts o = { .spec = "mlp:layers=4,width=16", .sizes = sizes, .n_sizes = 2,
                                .repeats = 2, .warmup = 1, .n_stages = 2, .cpu = -1,
                                .peer_cpu = -1, .seed = 1, .batch = 8, .pipelined = 1,
                                .max_rounds = 8, .rel_se = 1e-12 };
    msr_calib_session *s;
    cr_assert_eq(msr_calib_begin(&o, &s), 0, "%s", ps_errmsg());
    cr_expect_eq(msr_calib_size_round(s, 2), -PS_EINVAL); /* before the warm-up round */
    cr_expect(strstr(ps_errmsg(), "before the 1 warm-up round ran"), "%s", ps_errmsg());
    ps_error_clear();
    cr_assert_eq(msr_calib_rounds(s, 1), 0); /* the warm-up round: nothing timed */
    cr_assert_eq(msr_calib_size_round(s, 2), 0);
    cr_assert_eq(msr_calib_size_round(s, 2), 0);
    cr_assert_eq(msr_calib_size_round(s, 4), 0);
    cr_assert_eq(msr_calib_size_round(s, 3), 0); /* not calibrated */
    struct msr_calib *c;
    cr_assert_eq(msr_calib_end(s, &c), 0, "%s", ps_errmsg());
    for (int a = 0; a < 2; a++) {
        cr_expect_eq(c->pipe_step[0][a].n, 2, "size 2 mode %d", a);
        cr_expect_eq(c->pipe_step[1][a].n, 1, "size 4 mode %d", a);
    }
    cr_expect_eq(c->pipe_rounds, 2);
    /* size 2 is M = 4: four F per step and stage, two steps */
    cr_expect_eq(MSR_PIPE_AT(c, 0, 0, MSR_PIPE_F)->t.n, 2 * 4);
    cr_expect_eq(MSR_PIPE_AT(c, 1, 1, MSR_PIPE_F)->t.n, 1 * 2);
    msr_calib_free(c);
}

/* The cores a calibration picks: a default is an allowed core the other end is
 * not on (helper-111: --cpu 1 alone put the peer on the second allowed core, 1
 * again, and the hand-off was timed on one core with no note); one allowed
 * core gives both ends it. The affinity is this test process's own. */
Test(calib, default_cores_are_not_the_other_ends)
{
    cpu_set_t set;
    int c0, c1, n;
    CPU_ZERO(&set);
    CPU_SET(1, &set);
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || sched_setaffinity(0, sizeof set, &set) != 0)
        cr_skip_test("needs CPUs 0 and 1");
    cr_assert_eq(msr_calib_pick_cpus(-1, -1, &c0, &c1, &n), 0, "%s", ps_errmsg());
    cr_expect(c0 == 1 && c1 == 1 && n == 1, "%d %d %d", c0, c1, n);
    cr_expect_eq(msr_calib_pick_cpus(0, -1, &c0, &c1, &n), -PS_EUSAGE);
    CPU_SET(0, &set);
    cr_assert_eq(sched_setaffinity(0, sizeof set, &set), 0);
    const int want[][4] = { { -1, -1, 0, 1 }, { 1, -1, 1, 0 }, { -1, 0, 1, 0 },
                            { 0, -1, 0, 1 }, { 1, 1, 1, 1 } };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        cr_assert_eq(msr_calib_pick_cpus(want[i][0], want[i][1], &c0, &c1, &n), 0);
        cr_expect(c0 == want[i][2] && c1 == want[i][3] && n == 2,
                  "--cpu %d --peer-cpu %d: cores %d and %d", want[i][0], want[i][1], c0, c1);
    }
}

/* A transfer is a copy on send and one on receive: a fitted slope whose rate
 * beats memcpy's is noise, and the link takes memcpy / 2, saying why
 * (helper-127: 10.7 TB/s was written beside memcpy's 51 GB/s). */
Test(calib, a_transfer_faster_than_memcpy_is_noise)
{
    static struct msr_calib c;
    memset(&c, 0, sizeof c);
    c.memcpy_bw = 5e10;
    c.xfer_fit.b = 1 / 1.07e13;
    cr_expect_not(msr_calib_xfer_slope_ok(&c));
    c.xfer_fit.b = 1 / 1e10;
    cr_expect(msr_calib_xfer_slope_ok(&c));
    c.xfer_fit.b = -1e-12;
    cr_expect_not(msr_calib_xfer_slope_ok(&c));
    c.memcpy_bw = 0; /* no memcpy figure: a positive slope stands */
    c.xfer_fit.b = 1 / 1.07e13;
    cr_expect(msr_calib_xfer_slope_ok(&c));
}
