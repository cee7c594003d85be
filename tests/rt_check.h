/* One pipelined CPU-runtime step checked against the single-threaded
 * reference (loss, every gradient and weight within RT_TOL) and its
 * measured activation peaks against the ledger, for any schedule: shared
 * by test_runtime.c and test_new_schedules.c. */
#ifndef TESTS_RT_CHECK_H
#define TESTS_RT_CHECK_H

#include "helpers.h"

#include <math.h>
#include <unistd.h>

#include "runtime/rt_pipe.h"

/* Gradient/weight agreement: for every parameter tensor,
 *   max_i |pipe_i - ref_i| <= RT_TOL * max_i |ref_i|
 * (normwise relative error 1e-5: FP32 sums over micro-batches in another
 * order than one whole-batch GEMM; the worst observed here is 2.5e-7). */
#define RT_TOL 1e-5

static inline double tensor_err(const float *a, const float *b, size_t n)
{
    double emax = 0, bmax = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        emax = e > emax ? e : emax;
        bmax = fabs(b[i]) > bmax ? fabs(b[i]) : bmax;
    }
    return bmax > 0 ? emax / bmax : emax;
}

/* Worst normwise error over all gradients (grads = 1) or weights (0). */
static inline double net_err(const struct rt_net *a, const struct rt_net *b, int grads)
{
    double worst = 0;
    for (int l = 0; l < a->n_layers; l++) {
        const struct rt_layer *x = &a->layers[l], *y = &b->layers[l];
        size_t nw = (size_t)(x->n_params - x->out);
        double e1 = tensor_err(grads ? x->dw : x->w, grads ? y->dw : y->w, nw);
        double e2 = tensor_err(grads ? x->db : x->b, grads ? y->db : y->b, (size_t)x->out);
        worst = fmax(worst, fmax(e1, e2));
    }
    return worst;
}

static inline struct rt_net *net_of(const char *spec, uint64_t seed)
{
    struct rt_net *n;
    cr_assert_eq(rt_net_parse(spec, &n), 0, "%s", ps_errmsg());
    cr_assert_eq(rt_net_init_params(n, seed), 0);
    return n;
}

/* One pipelined step against the reference; returns the pipe's stats. */
static inline void check_step(const char *spec, struct sch_schedule *s, int batch, const char *part)
{
    struct rt_net *pn = net_of(spec, 7), *rn = net_of(spec, 7);
    struct rt_data *d;
    cr_assert_eq(rt_data_new(pn, batch, 11, &d), 0);
    char what[96];
    snprintf(what, sizeof what, "%s K=%d S=%d M=%d remat=%s wgrad=%d", s->name, s->n_devices,
             s->n_stages, s->n_micro, sch_remat_name(s->remat), s->has_wgrad);
    rt_pipe *p;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    cr_assert_eq(rt_pipe_new_schedule(pn, s, batch, part, 0.05f, s->n_devices > ncpu, &p), 0,
                 "%s: %s", what, ps_errmsg());
    struct rt_step_stats st;
    cr_assert_eq(rt_pipe_step(p, d, &st, NULL), 0, "%s: %s", what, ps_errmsg());
    double ref_loss;
    cr_assert_eq(rt_net_reference_step(rn, d, 0.05f, &ref_loss), 0);
    cr_assert(fabs(st.loss - ref_loss) <= 1e-5 * fabs(ref_loss), "%s: loss %g vs %g", what,
              st.loss, ref_loss);
    double eg = net_err(pn, rn, 1), ew = net_err(pn, rn, 0);
    cr_assert(eg <= RT_TOL, "%s: gradient error %g", what, eg);
    cr_assert(ew <= RT_TOL, "%s: weight error %g", what, ew);
    for (int dv = 0; dv < st.n_devices; dv++)
        cr_assert_eq(st.dev[dv].peak_act, st.dev[dv].expected_peak,
                     "%s: device %d measured peak %lld, ledger %lld", what, dv,
                     (long long)st.dev[dv].peak_act, (long long)st.dev[dv].expected_peak);
    rt_pipe_free(p);
    rt_data_free(d);
    rt_net_free(pn);
    rt_net_free(rn);
}

#endif
