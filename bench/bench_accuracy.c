/* bench_accuracy — how close the calibrated simulator comes to real runs on
 * this machine: the validate --check grid of mlp:layers=8,width=512 (K 1,2;
 * M 1..64; never, except_last, always; batch 256; 1 warm-up + 3 timed steps
 * per point), twice: run 1 calibrates in one stage just before each K's
 * points, run 2 in K stages on K cores. For each run the four accuracy
 * figures against the targets as ratios (<= 1 met): median
 * |makespan error| <= 2 %, max <= 5 %, bubble-fraction error <= 1 point,
 * peak activation memory error <= 1 %, for the median step and for the
 * fastest step of each point; where a target is missed, the ops that
 * account for the error (the comparisons' largest discrepancies). Then the
 * repeatability: how far the measured step times of the same points moved
 * between the two runs, the floor under the figures. Not a test: the
 * figures depend on what else runs on the cores; the involuntary context
 * switches are printed as the noise indicator.
 * Measures under SCHED_FIFO when permitted (other jobs' time slices would
 * otherwise land inside the timed steps); BENCH_ACCURACY_NORT=1 measures
 * at normal priority.
 * Usage: bench_accuracy [NET [BATCH]]. */
#include "measure/msr_calib.h"
#include "measure/msr_validate.h"
#include "runtime/rt_layer.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void pr_cal(const struct msr_calib *cal)
{
    printf("calibration     stages %s, %.1f s: hand-off %.2f us, link %.2f us + B / %.2f GB/s, "
           "GEMM %.1f GFLOP/s, update %.3f ms\n", cal->partition, cal->wall_s,
           cal->handoff_spin.med * 1e6, cal->link_latency * 1e6, cal->link_bandwidth * 1e-9,
           cal->gemm_flops * 1e-9, cal->update_s * 1e3);
}

static int summary(const struct msr_vcheck *v, const char *what)
{
    long pre = 0;
    for (int i = 0; i < v->n_points; i++)
        pre += v->pts[i].preempt_all;
    printf("\n%s: %d points in %.1f s; %ld involuntary context switches in the timed steps "
           "(other load on the cores)\n", what, v->n_points, v->wall_s, pre);
    int rc = 0;
    for (int fast = 0; fast < 2 && !rc; fast++) {
        struct msr_accuracy a;
        msr_vcheck_accuracy(v, fast, &a);
        rc = msr_accuracy_print(v, &a, stdout);
    }
    return rc;
}

struct cal_ctx {
    const char *net;
    const int *sizes;
    int n_sizes;
    struct msr_calib *cal[4];
    struct mdl_profile *prof[4];
    struct mdl_topology *topo[4];
    int n, per_K;
};

/* Calibrates in K stages just before K's points are measured. */
static int calibrate_K(void *ctx, int K, const struct mdl_profile **prof,
                       const struct mdl_topology **topo)
{
    struct cal_ctx *c = ctx;
    if (c->n == 4)
        return ps_error(PS_EINVAL, "bench: two values of K");
    struct msr_calib_opts co = { .spec = c->net, .sizes = c->sizes, .n_sizes = c->n_sizes,
                                 .repeats = 5, .warmup = 1, .n_stages = c->per_K ? K : 1,
                                 .cpu = -1,
                                 .peer_cpu = -1, .seed = 1 };
    int k = c->n++, rc;
    if ((rc = msr_calib_run(&co, &c->cal[k])) < 0 ||
        (rc = msr_calib_profile(c->cal[k], &c->prof[k])) < 0 ||
        (rc = msr_calib_topology(c->cal[k], &c->topo[k])) < 0)
        return rc;
    pr_cal(c->cal[k]);
    *prof = c->prof[k];
    *topo = c->topo[k];
    return 0;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* How much the measured step times of the same points moved between two
 * runs: the floor under any accuracy figure. */
static void repeatability(const struct msr_vcheck *a, const struct msr_vcheck *b)
{
    double d[64];
    int n = 0;
    for (int i = 0; i < a->n_points && i < b->n_points && n < 64; i++)
        d[n++] = fabs(b->pts[i].step_med_s / a->pts[i].step_med_s - 1);
    if (!n)
        return;
    qsort(d, (size_t)n, sizeof *d, dcmp);
    printf("\nrepeatability   measured median step of the same %d points, run 2 vs run 1: "
           "|change| median %.2f%%, max %.2f%% (the noise floor of the figures above)\n", n,
           100 * (n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2), 100 * d[n - 1]);
}

int main(int argc, char **argv)
{
    const char *net = argc > 1 ? argv[1] : "mlp:layers=8,width=512";
    int batch = argc > 2 ? atoi(argv[2]) : 256;
    static const int Ks[] = { 1, 2 }, Ms[] = { 1, 2, 4, 8, 16, 32, 64 };
    static const enum sch_remat rm[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                         SCH_REMAT_ALWAYS };
    int sizes[7], n = 0;
    for (int i = 0; i < 7; i++)
        if (batch % Ms[i] == 0)
            sizes[n++] = batch / Ms[i];
    printf("bench_accuracy: %s, batch %d, OpenBLAS %s\n", net, batch, rt_blas_corename());
    struct cal_ctx cc = { .net = net, .sizes = sizes, .n_sizes = n };
    struct msr_vcheck *v = NULL, *v1 = NULL;
    int rc = 0, rt = !getenv("BENCH_ACCURACY_NORT");
    if (rt && msr_realtime(1) < 0) {
        printf("scheduling      normal (%s)\n", ps_errmsg());
        rt = 0;
    } else {
        printf("scheduling      %s\n", rt ? "SCHED_FIFO (BENCH_ACCURACY_NORT=1: normal)"
                                            : "normal (BENCH_ACCURACY_NORT set)");
    }
    struct msr_vcheck_opts o = { .spec = net, .batch = batch, .steps = 3, .warmup_steps = 1,
                                 .Ks = Ks, .n_K = 2, .Ms = Ms, .n_M = 7, .remats = rm,
                                 .n_remat = 3, .prepare = calibrate_K, .prepare_ctx = &cc,
                                 .profile_desc = "calibrated in K stages before K's points",
                                 .topology_desc = "calibrated in this run", .seed = 1,
                                 .progress = stdout };
    if ((rc = msr_vcheck_run(&o, &v)) < 0 ||
        (rc = summary(v, "run 1: each K predicted with a profile calibrated in one stage just "
                         "before its points")) < 0)
        goto out;
    /* run 2: the same grid, each K calibrated in K stages on K cores: does
     * timing a layer beside its stage's others, with the other cores busy,
     * predict better? And how far do the measurements themselves move? */
    printf("\nrun 2: the same grid, each K calibrated in K stages on K cores just before:\n");
    cc.per_K = 1;
    if ((rc = msr_vcheck_run(&o, &v1)) < 0 ||
        (rc = summary(v1, "run 2: profiles calibrated in K stages")) < 0)
        goto out;
    repeatability(v, v1);
out:
    if (rt)
        msr_realtime(0);
    if (rc < 0)
        fprintf(stderr, "bench_accuracy: %s\n", ps_errmsg());
    msr_vcheck_free(v);
    msr_vcheck_free(v1);
    for (int k = 0; k < 4; k++) {
        mdl_profile_free(cc.prof[k]);
        mdl_topology_free(cc.topo[k]);
        msr_calib_free(cc.cal[k]);
    }
    return rc < 0 ? 1 : 0;
}
