/* ana_predict: GPipe without a trace is simulated in its compact form
 * (ana_config_compact), and gives, field for field and bit for bit, the
 * prediction of its op lists (op_lists); the printed table, CSV and JSON
 * are the same bytes. */
#include "analysis/ana_predict.h"
#include "models/mdl_gen.h"
#include "helpers.h"

#include <math.h>
#include <stdint.h>

/* Bit-identical doubles (NaN included: the analytic bubble of a schedule
 * without a formula). */
#define SAME_BITS(a, b, what)                                                                \
    do {                                                                                     \
        double a_ = (a), b_ = (b);                                                           \
        cr_assert(!memcmp(&a_, &b_, sizeof a_), "%s: %s %.17g vs %.17g", tag, what, a_, b_); \
    } while (0)
#define SAME(a, b, what) cr_assert((a) == (b), "%s: %s differs", tag, what)

static void same_prediction(const struct ana_prediction *x, const struct ana_prediction *y,
                            const char *tag)
{
    cr_assert_str_eq(x->schedule, y->schedule, "%s", tag);
    cr_assert_str_eq(x->model, y->model, "%s", tag);
    cr_assert_str_eq(x->partition, y->partition, "%s", tag);
    SAME(x->model_layers, y->model_layers, "model_layers");
    SAME_BITS(x->model_params, y->model_params, "model_params");
    SAME(x->K, y->K, "K");
    SAME(x->M, y->M, "M");
    SAME(x->n_stages, y->n_stages, "n_stages");
    SAME(x->replicas, y->replicas, "replicas");
    SAME_BITS(x->batch, y->batch, "batch");
    SAME_BITS(x->micro_batch, y->micro_batch, "micro_batch");
    SAME(x->remat, y->remat, "remat");
    SAME_BITS(x->step_s, y->step_s, "step_s");
    SAME_BITS(x->samples_per_s, y->samples_per_s, "samples_per_s");
    SAME_BITS(x->allreduce_s, y->allreduce_s, "allreduce_s");
    SAME_BITS(x->baseline_step_s, y->baseline_step_s, "baseline_step_s");
    SAME_BITS(x->speedup, y->speedup, "speedup");
    SAME(x->baseline_fits, y->baseline_fits, "baseline_fits");
    SAME_BITS(x->baseline_peak, y->baseline_peak, "baseline_peak");
    SAME_BITS(x->bubble_sim, y->bubble_sim, "bubble_sim");
    SAME_BITS(x->bubble_analytic, y->bubble_analytic, "bubble_analytic");
    SAME(x->fits, y->fits, "fits");
    SAME(x->n_ops, y->n_ops, "n_ops");
    SAME(x->short_ops, y->short_ops, "short_ops");
    SAME(x->compute_ops, y->compute_ops, "compute_ops");
    SAME(x->short_kinds, y->short_kinds, "short_kinds");
    cr_assert(!x->trace && !y->trace && !x->sched && !y->sched && !x->costs && !y->costs,
              "%s: no trace asked for", tag);
    for (int s = 0; s < x->n_stages; s++) {
        const struct ana_stage *a = &x->stages[s], *b = &y->stages[s];
        SAME(a->device, b->device, "device");
        SAME(a->first_layer, b->first_layer, "first_layer");
        SAME(a->n_layers, b->n_layers, "n_layers");
        SAME_BITS(a->busy_frac, b->busy_frac, "busy_frac");
        SAME_BITS(a->fwd_s, b->fwd_s, "fwd_s");
        SAME_BITS(a->bwd_s, b->bwd_s, "bwd_s");
        SAME_BITS(a->recomp_s, b->recomp_s, "recomp_s");
        SAME_BITS(a->wgrad_s, b->wgrad_s, "wgrad_s");
        SAME(a->static_mem, b->static_mem, "static_mem");
        SAME(a->peak_act, b->peak_act, "peak_act");
        SAME(a->peak_mem, b->peak_mem, "peak_mem");
        SAME_BITS(a->capacity, b->capacity, "capacity");
        SAME(a->fits, b->fits, "stage fits");
    }
    for (int f = 0; f < 3; f++) { /* table, csv, json: the same bytes */
        static const enum ana_fmt fmts[] = { ANA_FMT_TABLE, ANA_FMT_CSV, ANA_FMT_JSON };
        char *bx = NULL, *by = NULL;
        size_t nx = 0, ny = 0;
        FILE *fx = open_memstream(&bx, &nx), *fy = open_memstream(&by, &ny);
        cr_assert(fx && fy);
        cr_assert_eq(ana_prediction_print(x, fmts[f], fx), 0, "%s", ps_errmsg());
        cr_assert_eq(ana_prediction_print(y, fmts[f], fy), 0, "%s", ps_errmsg());
        fclose(fx);
        fclose(fy);
        cr_assert(nx > 0 && nx == ny && !memcmp(bx, by, nx), "%s: format %d printed\n%s\nvs\n%s",
                  tag, f, bx, by);
        free(bx);
        free(by);
    }
}

/* One configuration both ways: compact (what ana_predict picks) and lists. */
static void both_ways(struct ana_config c, const char *what)
{
    char tag[256];
    snprintf(tag, sizeof tag, "%s K=%d M=%d remat %s batch %g%s%s", what, c.K, c.M,
             sch_remat_name(c.remat), c.batch, c.no_baseline ? " no baseline" : "",
             c.partition ? " own partition" : "");
    c.op_lists = 0;
    cr_assert(ana_config_compact(&c), "%s: GPipe without a trace is compact", tag);
    struct ana_prediction *x, *y;
    cr_assert_eq(ana_predict(&c, &x), 0, "%s: %s", tag, ps_errmsg());
    c.op_lists = 1;
    cr_assert(!ana_config_compact(&c));
    cr_assert_eq(ana_predict(&c, &y), 0, "%s: %s", tag, ps_errmsg());
    same_prediction(x, y, tag);
    ana_prediction_free(x);
    ana_prediction_free(y);
}

Test(predict, compact_gpipe_predicts_exactly_as_its_lists, .timeout = 120)
{
    static const char *topos[] = { "models/topologies/pcie-8gpu.json",
                                   "models/topologies/dgx-a100.json",
                                   "models/topologies/p100-pcie-dual-root.json" };
    static const char *models[] = { "transformer:L=24", "mlp:layers=40,width=256,norm=3",
                                    "models/profiles/transformer-small.csv" };
    const int Ks[] = { 1, 2, 3, 4, 8 }, Ms[] = { 1, 2, 5, 8, 32 };
    for (int ti = 0; ti < 3; ti++) {
        struct mdl_topology *t;
        cr_assert_eq(mdl_topology_load(topos[ti], &t), 0, "%s", ps_errmsg());
        struct mdl_profile *p;
        cr_assert_eq(mdl_model_open(models[ti], &p), 0, "%s", ps_errmsg());
        for (int ki = 0; ki < 5; ki++)
            for (int mi = 0; mi < 5; mi++)
                for (int r = 0; r < 3; r++) {
                    if (Ks[ki] > p->n_layers || Ks[ki] > t->n_devices)
                        continue;
                    struct ana_config c = { .profile = p, .topo = t, .K = Ks[ki],
                                            .M = Ms[mi], .batch = 4.0 * Ms[mi],
                                            .remat = (enum sch_remat)r,
                                            .no_baseline = (ki + mi) % 4 == 3 };
                    if (mi == 2)
                        c.schedule = "gpipe"; /* spelled out: the same as NULL */
                    char what[160];
                    snprintf(what, sizeof what, "%s on %s", models[ti], topos[ti]);
                    both_ways(c, what);
                }
        mdl_profile_free(p);
        mdl_topology_free(t);
    }
}

/* Stages alike in nothing, an uneven partition, latency on the links, and
 * memory tight enough that some stages do not fit. */
/* Ops under the 1 ns tick (sch_costs_short_ops) count the same in both
 * forms: a tiny MLP, picoseconds per layer. */
Test(predict, compact_gpipe_counts_short_ops_as_its_lists)
{
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load("models/topologies/chain-8-ideal.json", &t), 0, "%s",
                 ps_errmsg());
    struct mdl_profile *p;
    cr_assert_eq(mdl_model_open("mlp:layers=4,width=8", &p), 0, "%s", ps_errmsg());
    for (int K = 1; K <= 4; K *= 2)
        for (int M = 1; M <= 3; M += 2)
            for (int r = 0; r < 3; r++) {
                struct ana_config c = { .profile = p, .topo = t, .K = K, .M = M,
                                        .batch = M, .remat = (enum sch_remat)r };
                both_ways(c, "mlp:layers=4,width=8");
                struct ana_prediction *x;
                cr_assert_eq(ana_predict(&c, &x), 0, "%s", ps_errmsg());
                /* every F, R and B; no U (the devices give no memory bandwidth) */
                int R = r == SCH_REMAT_ALWAYS ? M : r == SCH_REMAT_EXCEPT_LAST ? M - 1 : 0;
                cr_expect_eq(x->short_ops, (int64_t)K * (2 * M + R), "K=%d M=%d", K, M);
                cr_expect_eq(x->compute_ops, (int64_t)K * (2 * M + R + 1));
                ana_prediction_free(x);
            }
    mdl_profile_free(p);
    mdl_topology_free(t);
}

Test(predict, compact_gpipe_uneven_stages_and_partition, .timeout = 60)
{
    double f[12], b[12], o[12], st[12];
    for (int i = 0; i < 12; i++) {
        f[i] = 1000 + 137 * ((i * 7) % 11);
        b[i] = 2 * f[i] + 311 * ((i * 5) % 7);
        o[i] = 500 + 97 * ((i * 3) % 13);
        st[i] = 4000 + 1013 * ((i * 11) % 5);
    }
    struct mdl_profile *p = th_profile(12, f, b, 2, o, st, 2000);
    static const char *parts[] = { "1,11", "5,4,3", "1,2,3,6" };
    for (int k = 2; k <= 4; k++)
        for (int tight = 0; tight < 2; tight++) {
            struct mdl_topology *t = th_chain(k, 1e9, 2e9, 300e-9);
            if (tight)
                for (int d = 0; d < k; d++)
                    t->devices[d].memory = 60000;
            struct sch_partition *part;
            cr_assert_eq(sch_partition_parse(parts[k - 2], k, 12, &part), 0, "%s",
                         ps_errmsg());
            for (int m = 1; m <= 13; m += 4)
                for (int r = 0; r < 3; r++) {
                    struct ana_config c = { .profile = p, .topo = t, .K = k, .M = m,
                                            .batch = 2.0 * m, .remat = (enum sch_remat)r,
                                            .partition = part };
                    both_ways(c, tight ? "uneven chain, tight memory" : "uneven chain");
                    c.partition = NULL;
                    both_ways(c, "uneven chain, uniform");
                }
            sch_partition_free(part);
            mdl_topology_free(t);
        }
    mdl_profile_free(p);
}

/* Where the lists are needed, they are built: a trace (export-chakra reads
 * the lists it keeps), data-parallel replicas (all-reduce ops go into
 * lists), any other schedule. */
Test(predict, lists_where_lists_are_needed)
{
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load("models/topologies/pcie-8gpu.json", &t), 0, "%s",
                 ps_errmsg());
    struct mdl_profile *p;
    cr_assert_eq(mdl_model_open("transformer:L=24", &p), 0, "%s", ps_errmsg());
    struct ana_config c = { .profile = p, .topo = t, .K = 4, .M = 8, .batch = 32,
                            .remat = SCH_REMAT_EXCEPT_LAST };
    cr_assert(ana_config_compact(&c));
    c.replicas = 1;
    cr_assert(ana_config_compact(&c));
    c.replicas = 2;
    cr_assert(!ana_config_compact(&c));
    c.replicas = 0;
    c.schedule = "1f1b";
    cr_assert(!ana_config_compact(&c));
    c.schedule = "gpipe";
    c.record_trace = 1;
    cr_assert(!ana_config_compact(&c));
    struct ana_prediction *x;
    cr_assert_eq(ana_predict(&c, &x), 0, "%s", ps_errmsg());
    cr_assert(x->trace && x->sched && x->costs);
    cr_assert(!x->sched->runs && x->sched->ops[0], "the kept schedule has its op lists");
    cr_assert_eq(sch_schedule_validate(x->sched), 0, "%s", ps_errmsg());
    /* and the trace's run predicts what the compact one does */
    c.record_trace = 0;
    struct ana_prediction *y;
    cr_assert_eq(ana_predict(&c, &y), 0, "%s", ps_errmsg());
    cr_assert(!memcmp(&x->step_s, &y->step_s, sizeof x->step_s));
    cr_assert(!memcmp(&x->bubble_sim, &y->bubble_sim, sizeof x->bubble_sim));
    for (int s = 0; s < x->n_stages; s++)
        cr_assert_eq(x->stages[s].peak_mem, y->stages[s].peak_mem);
    ana_prediction_free(x);
    ana_prediction_free(y);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

/* One speedup rule for predict, sweeps, compare-schedules and the ranking:
 * replicas x baseline / step, NaN without a baseline, 0 for no time. */
Test(predict, speedup_rule)
{
    cr_expect_float_eq(ana_speedup(3.0, 1.5, 1), 2.0, 1e-15);
    cr_expect_float_eq(ana_speedup(3.0, 1.5, 4), 8.0, 1e-15);
    cr_expect(isnan(ana_speedup(NAN, 1.5, 2)));
    cr_expect_eq(ana_speedup(3.0, 0, 1), 0);
}
