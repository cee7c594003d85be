/* bench_runtime: the validation runtime against its bounds.
 *   1. K=2 vs K=1 speedup of a balanced net at M=32 (GPipe, no
 *      re-materialization), against the ideal 2M/(M+1); target >= 0.95.
 *   2. The runtime's dense-layer GEMM (rt_layer_forward) in GFLOP/s beside a
 *      direct cblas_sgemm of the same shape; target >= 0.8.
 *   3. Channel hand-off latency between two pinned workers (ping-pong).
 * Timings are the best of 4 alternating repetitions (other processes share
 * the cores). Prints which OpenBLAS kernel ran and the OPENBLAS_* settings. */
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_chan.h"
#include "runtime/rt_cpu.h"
#include "runtime/rt_pipe.h"
#include "base/ps_error.h"

/* Setup failures end the benchmark (a statement, not a hidden return). */
#define CHECK(x)                                                                  \
    do {                                                                          \
        if ((x) < 0) {                                                            \
            fprintf(stderr, "bench_runtime: %s: %s\n", #x, ps_errmsg());          \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

struct run { struct rt_net *n; struct rt_data *d; rt_pipe *p; double best; };

static void run_open(struct run *r, const char *spec, int K, int M, int batch)
{
    CHECK(rt_net_parse(spec, &r->n));
    CHECK(rt_net_init_params(r->n, 1));
    CHECK(rt_data_new(r->n, batch, 1, &r->d));
    struct rt_pipe_config c = { .K = K, .M = M, .batch = batch, .remat = SCH_REMAT_NEVER,
                                .lr = 1e-3f };
    CHECK(rt_pipe_new(r->n, &c, &r->p));
    r->best = 1e30;
}

static void run_step(struct run *r, struct rt_step_stats *st)
{
    CHECK(rt_pipe_step(r->p, r->d, st, NULL));
    double t = st->step_ns * 1e-9;
    r->best = t < r->best ? t : r->best;
}

static void run_close(struct run *r)
{
    rt_pipe_free(r->p);
    rt_data_free(r->d);
    rt_net_free(r->n);
}

static double gemm_gflops(int rows, int in, int out, int runtime, int reps)
{
    struct rt_layer l;
    CHECK(rt_layer_init(&l, RT_LAYER_DENSE, in, out, 1));
    float *x = malloc((size_t)rows * in * sizeof *x), *y = malloc((size_t)rows * out * sizeof *y);
    for (size_t i = 0; i < (size_t)rows * in; i++)
        x[i] = (float)(i % 17) * 0.01f;
    for (size_t i = 0; i < (size_t)in * out; i++)
        l.w[i] = (float)(i % 13) * 0.001f;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        int64_t t0 = rt_now_ns();
        for (int k = 0; k < 20; k++) {
            if (runtime)
                rt_layer_forward(&l, rows, x, y, NULL, NULL);
            else
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, out, in, 1.0f, x, in,
                            l.w, in, 0.0f, y, out);
        }
        double t = (rt_now_ns() - t0) * 1e-9 / 20;
        best = t < best ? t : best;
    }
    free(x);
    free(y);
    rt_layer_release(&l);
    return 2.0 * rows * in * out / best * 1e-9;
}

struct pong { struct rt_chan *ping, *pong; int cpu, n; };

static void *pong_main(void *arg)
{
    struct pong *q = arg;
    rt_pin_self(q->cpu);
    int64_t ts, tr;
    char b[64];
    for (int i = 0; i < q->n; i++) {
        CHECK(rt_chan_recv(q->ping, i, b, sizeof b, &ts, &tr, "ping"));
        rt_chan_send(q->pong, i, b, sizeof b, &ts);
    }
    return NULL;
}

static double handoff_us(int cpu0, int cpu1, int64_t spin_ns)
{
    enum { N = 2000 };
    struct rt_chan *ch[2];
    struct rt_watch w;
    CHECK(rt_watch_init(&w, 2, ch, 2));
    w.spin_ns = spin_ns;
    CHECK(rt_chan_new(N, 64, &w, &ch[0]));
    CHECK(rt_chan_new(N, 64, &w, &ch[1]));
    struct pong q = { ch[0], ch[1], cpu1, N };
    pthread_t t;
    pthread_create(&t, NULL, pong_main, &q);
    CHECK(rt_pin_self(cpu0));
    char b[64] = { 0 };
    int64_t ts, tr, t0 = rt_now_ns();
    for (int i = 0; i < N; i++) {
        rt_chan_send(ch[0], i, b, sizeof b, &ts);
        CHECK(rt_chan_recv(ch[1], i, b, sizeof b, &ts, &tr, "pong"));
    }
    double us = (rt_now_ns() - t0) * 1e-3 / N / 2;
    pthread_join(t, NULL);
    rt_chan_free(ch[0]);
    rt_chan_free(ch[1]);
    rt_watch_release(&w);
    return us;
}

int main(void)
{
    rt_blas_single_thread();
    const char *ct = getenv("OPENBLAS_CORETYPE"), *l2 = getenv("OPENBLAS_L2_SIZE");
    printf("bench_runtime: OpenBLAS kernel %s (OPENBLAS_CORETYPE=%s, OPENBLAS_L2_SIZE=%s), "
           "single-threaded per worker\n", rt_blas_corename(), ct ? ct : "(unset)",
           l2 ? l2 : "(unset)");
    int *cpus, n_cpus;
    CHECK(rt_cpus_allowed(&cpus, &n_cpus));

    /* 1. pipeline speedup: 16 dense layers, 8 per stage (the first layer's
     * skipped input gradient is 1 GEMM in 24 of imbalance) */
    const char *spec = "mlp:layers=16,width=512";
    int M = 32, batch = 32 * 32;
    if (n_cpus < 2) {
        printf("speedup: skipped, only %d core\n", n_cpus);
    } else {
        /* alternate the two so that other load on the cores hits both alike */
        struct run one, two;
        struct rt_step_stats st;
        run_open(&one, spec, 1, M, batch);
        run_open(&two, spec, 2, M, batch);
        for (int i = 0; i < 4; i++) {
            run_step(&one, &st);
            run_step(&two, &st);
        }
        printf("  K=2 last step: bubble %.2f%%, busy %.1f%% / %.1f%%\n", st.bubble * 100,
               100.0 * st.dev[0].busy_ns / st.step_ns, 100.0 * st.dev[1].busy_ns / st.step_ns);
        double t1 = one.best, t2 = two.best;
        run_close(&one);
        run_close(&two);
        double sp = t1 / t2, ideal = 2.0 * M / (M + 1);
        printf("speedup K=2/K=1, %s, M=%d, batch %d: %.3fx (K=1 %.1f ms, K=2 %.1f ms); ideal "
               "2M/(M+1) = %.3f; ratio %.3f (target >= 0.95)\n", spec, M, batch, sp, t1 * 1e3,
               t2 * 1e3, ideal, sp / ideal);
    }

    /* 2. GEMM rate of the runtime's dense layer vs the direct call */
    int rows = 32, in = 1024, out = 1024;
    CHECK(rt_pin_self(cpus[0]));
    double g_direct = gemm_gflops(rows, in, out, 0, 5), g_rt = gemm_gflops(rows, in, out, 1, 5);
    printf("GEMM %dx%d * %dx%d: runtime dense forward %.1f GFLOP/s, direct cblas_sgemm %.1f "
           "GFLOP/s; ratio %.3f (target >= 0.8)\n", rows, in, in, out, g_rt, g_direct,
           g_rt / g_direct);

    /* 3. hand-off latency */
    if (n_cpus >= 2)
        printf("channel hand-off (64 B, pinned cores %d and %d), one way: %.1f us sleeping, "
               "%.1f us polling first (what the pipeline uses)\n", cpus[0], cpus[1],
               handoff_us(cpus[0], cpus[1], 0), handoff_us(cpus[0], cpus[1], 50000));
    free(cpus);
    return 0;
}
