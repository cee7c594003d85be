#include "analysis/ana_predict.h"
#include "analysis/ana_schedules.h"
#include "sched/sch_cost.h"
#include "sched/sch_zb.h"
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "sim/sim_engine.h"
#include "sim/sim_membudget.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double ana_speedup(double baseline_s, double step_s, int replicas)
{
    if (isnan(baseline_s))
        return NAN;
    return step_s > 0 ? replicas * baseline_s / step_s : 0;
}

void ana_prediction_free(struct ana_prediction *p)
{
    if (!p)
        return;
    free(p->stages);
    trc_trace_free(p->trace);
    sch_schedule_free(p->sched);
    sch_costs_free(p->costs);
    free(p);
}

/* *step: the engine's step of s on costs c (no trace). */
static int engine_step(const struct sch_schedule *s, const struct sch_costs *c,
                       const struct mdl_topology *t, sch_time *step)
{
    sim_engine *e = NULL;
    int rc = sim_simulate(s, c, t, 0, &e);
    if (rc == 0)
        *step = sim_engine_result(e)->makespan;
    sim_engine_free(e);
    return rc;
}

/* zb-auto orders its ops by a timing of its own (sch_zbauto.c) that leaves
 * out what the engine adds (a device's sends share one stream, a link is
 * first in, first out), so its order can be slower in the engine than
 * ZB-H1's. Its promise, never slower than ZB-H1 (nor ZB-H2 when that fits
 * its stash limit), is kept here with the engine's own steps, each with the
 * all-reduce of its R replicas (the order changes when a stage's gradients
 * are ready): the faster of them, under zb-auto's name; ties keep
 * zb-auto's order. *s is a zb-auto schedule already fitted to c; whatever
 * it is, *s leaves with R replicas' all-reduce ops
 * (sch_schedule_add_allreduce). */
static int zbauto_keep_promise(struct sch_schedule **s, const struct sch_costs *c,
                               const struct mdl_topology *t, int R)
{
    int limit = sch_zbauto_limit(*s);
    if (!limit)
        return sch_schedule_add_allreduce(*s, R);
    sch_time best, step;
    int rc = sch_schedule_add_allreduce(*s, R);
    if (rc == 0)
        rc = engine_step(*s, c, t, &best);
    for (int h = 0; rc == 0 && h < 2; h++) {
        struct sch_schedule *o = NULL;
        rc = h ? sch_schedule_zbh2((*s)->n_devices, (*s)->n_micro, (*s)->remat, &o)
               : sch_schedule_zbh1((*s)->n_devices, (*s)->n_micro, (*s)->remat, &o);
        step = best;
        if (rc == 0 && sch_zb_peak_stashes(o) <= limit &&
            (rc = sch_schedule_add_allreduce(o, R)) == 0)
            rc = engine_step(o, c, t, &step);
        if (rc == 0 && step < best) {
            snprintf(o->name, sizeof o->name, "%s", (*s)->name);
            sch_schedule_free(*s);
            *s = o;
            best = step;
        } else {
            sch_schedule_free(o);
        }
    }
    return rc;
}

int ana_schedule_fit(struct sch_schedule **s, const struct sch_costs *c,
                     const struct mdl_topology *t, int R)
{
    int rc = sch_schedule_fit_costs(s, c, t);
    return rc < 0 ? rc : zbauto_keep_promise(s, c, t, R);
}

/* One simulation of a configuration on its built schedule: the stage costs
 * of part made, the schedule fitted to them (zb-auto orders its ops for the
 * costs: sch_schedule_fit_costs, and keeps the engine's fastest of that and
 * ZB-H1/H2: zbauto_keep_promise, so *sched may be replaced), the all-reduce
 * ops added, the engine run. On error *costs and *eng are NULL; *sched
 * stays the caller's to free either way. */
static int run_one(const struct ana_config *c, const struct sch_partition *part,
                   struct sch_schedule **sched, int record, struct sch_costs **costs,
                   sim_engine **eng)
{
    *costs = NULL;
    *eng = NULL;
    int rc;
    if ((*sched)->n_stages != part->n_stages)
        return ps_error(PS_EINVAL, "schedule %s has %d stages, partition %d", (*sched)->name,
                         (*sched)->n_stages, part->n_stages);
    if ((rc = sch_costs_new(c->profile, c->topo, part, (*sched)->stage_device, c->batch / c->M,
                            costs)) < 0)
        return rc;
    int R = c->replicas > 0 ? c->replicas : 1;
    if ((rc = c->lists_as_built ? sch_schedule_add_allreduce(*sched, R)
                                : ana_schedule_fit(sched, *costs, c->topo, R)) < 0 ||
        (rc = sim_simulate(*sched, *costs, c->topo, record, eng)) < 0) {
        sch_costs_free(*costs);
        *costs = NULL;
    }
    return rc;
}

int ana_config_check(const struct ana_config *c)
{
    if (c->K < 1)
        return ps_error(PS_EUSAGE, "-K must be >= 1, got %d", c->K);
    if (c->M < 1)
        return ps_error(PS_EUSAGE, "-M must be >= 1, got %d", c->M);
    if (!(c->batch >= 1) || c->batch != floor(c->batch))
        return ps_error(PS_EUSAGE, "--batch must be a positive integer (>= 1), got %s",
                         PS_DBL(c->batch));
    if (c->batch > 1099511627776.0) /* 2^40, as the command line takes it */
        return ps_error(PS_EUSAGE, "--batch %s is out of range: at most 1099511627776 "
                         "samples per step", PS_DBL(c->batch));
    if (fmod(c->batch, c->M) != 0)
        return ps_error(PS_EUSAGE, "--batch %.0f is not divisible by -M %d (micro-batches "
                         "must be equal)", c->batch, c->M);
    int R = c->replicas > 0 ? c->replicas : 1;
    if ((int64_t)c->K * R > c->topo->n_devices) {
        char rep[48] = ""; /* "x 1 replica(s)" said nothing at one replica */
        if (R > 1)
            snprintf(rep, sizeof rep, " x %d replica(s)", R);
        return ps_error(PS_ENOFIT, "-K %d%s: topology %s has only %d devices", c->K, rep,
                         c->topo->path, c->topo->n_devices);
    }
    if (c->K > c->profile->n_layers)
        return ps_error(PS_ENOFIT, "-K %d: model %s has only %d layers", c->K,
                         c->profile->path, c->profile->n_layers);
    return 0;
}

int ana_config_compact(const struct ana_config *c)
{
    return !c->record_trace && !c->op_lists && c->replicas <= 1 &&
           (!c->schedule || !strcmp(c->schedule, "gpipe"));
}

/* The schedule c simulates: GPipe's compact form where ana_config_compact
 * says so, the named generator's lists otherwise. */
static int build_schedule(const struct ana_config *c, struct sch_schedule **out)
{
    if (ana_config_compact(c))
        return sch_schedule_gpipe_compact(c->K, c->M, c->remat, out);
    return sch_schedule_build(c->schedule ? c->schedule : "gpipe", c->K, c->M, c->remat, out);
}

void ana_short_ops_describe(int64_t short_ops, int64_t compute_ops, unsigned kinds, char *buf,
                            size_t n)
{
    char names[64] = "";
    for (int k = 0; k < SCH_OP_NKINDS; k++)
        if (kinds & (1u << k))
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     *names ? ", " : "", sch_op_kind_name((enum sch_op_kind)k));
    snprintf(buf, n, "%lld of %lld compute ops (%s) are " ANA_SHORT_OPS_WHAT ": the step time "
             "is an upper bound and the throughput a lower bound", (long long)short_ops,
             (long long)compute_ops, names);
}

struct drawn {
    sch_time makespan;
    double bubble;
};

static int drawn_cmp(const void *a, const void *b)
{
    sch_time x = ((const struct drawn *)a)->makespan, y = ((const struct drawn *)b)->makespan;
    return x < y ? -1 : x > y;
}

/* c->draws more runs of the simulated schedule with drawn op times; the
 * median step and its bubble into p. */
static int run_drawn(const struct ana_config *c, const struct sch_schedule *s,
                     const struct sch_costs *costs, struct ana_prediction *p)
{
    struct drawn *v = malloc((size_t)c->draws * sizeof *v);
    if (!v)
        return ps_error(PS_ENOMEM, "out of memory");
    struct sim_engine_opts o = { .draw = c->draw };
    int rc = 0;
    for (int i = 0; i < c->draws && !rc; i++) {
        sim_engine *e;
        if ((rc = sim_engine_new(s, costs, c->topo, &o, &e)) < 0)
            break;
        if ((rc = sim_engine_run(e)) >= 0) {
            const struct sim_result *r = sim_engine_result(e);
            v[i].makespan = r->makespan;
            v[i].bubble = r->bubble;
            rc = 0;
        }
        sim_engine_free(e);
    }
    if (!rc) {
        qsort(v, (size_t)c->draws, sizeof *v, drawn_cmp);
        const struct drawn *m = &v[(c->draws - 1) / 2];
        p->n_drawn = c->draws;
        p->step_drawn_s = sch_time_to_seconds(m->makespan);
        p->bubble_drawn = m->bubble;
    }
    free(v);
    return rc;
}

int ana_predict(const struct ana_config *c, struct ana_prediction **out)
{
    *out = NULL;
    int rc = ana_config_check(c);
    if (rc < 0)
        return rc;
    /* refuse before building anything that cannot fit */
    if ((rc = sim_mem_check_run("simulation", c->schedule, c->K, c->M, c->remat, c->replicas,
                                c->record_trace, ana_config_compact(c))) < 0)
        return rc;
    struct sch_schedule *sched = NULL;
    struct sch_costs *costs = NULL;
    struct sch_partition *own = NULL;
    sim_engine *eng = NULL;
    struct ana_prediction *p = calloc(1, sizeof *p);
    if (!p)
        return ps_error(PS_ENOMEM, "out of memory");
    /* Built once: it decides the number of stages (interleaved has v per
     * device) and is the one simulated. */
    if ((rc = build_schedule(c, &sched)) < 0)
        goto err_free;
    int S = sched->n_stages;
    const struct sch_partition *part = c->partition;
    if (!part) {
        if ((rc = sch_partition_uniform(S, c->profile->n_layers, &own)) < 0)
            goto err_free;
        part = own;
    }
    if ((rc = run_one(c, part, &sched, c->record_trace, &costs, &eng)) < 0)
        goto err_free;
    const struct sim_result *r = sim_engine_result(eng);
    snprintf(p->schedule, sizeof p->schedule, "%s", sched->name);
    snprintf(p->model, sizeof p->model, "%s", c->profile->path ? c->profile->path : "");
    p->model_layers = c->profile->n_layers;
    p->model_params = mdl_profile_params(c->profile);
    p->K = c->K;
    p->M = c->M;
    p->n_stages = S;
    p->batch = c->batch;
    p->micro_batch = c->batch / c->M;
    p->remat = c->remat;
    sch_partition_format(part, p->partition, sizeof p->partition);
    p->step_s = sch_time_to_seconds(r->makespan);
    p->replicas = c->replicas > 0 ? c->replicas : 1;
    p->samples_per_s = p->step_s > 0 ? p->replicas * c->batch / p->step_s : 0;
    p->allreduce_s = sch_time_to_seconds(r->allreduce_max);
    p->bubble_sim = r->bubble;
    p->fits = r->fits;
    p->n_ops = r->n_ops;
    if (c->draw && c->draw->fn && c->draws > 0 && (rc = run_drawn(c, sched, costs, p)) < 0)
        goto err_free;
    p->short_ops = sch_costs_short_ops(costs, sched, &p->compute_ops, &p->short_kinds);
    if (!(p->stages = calloc((size_t)S, sizeof *p->stages))) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err_free;
    }
    for (int s = 0; s < S; s++) {
        struct ana_stage *as = &p->stages[s];
        int d = costs->st[s].device;
        as->device = d;
        as->first_layer = part->first[s];
        as->n_layers = sch_partition_layers(part, s);
        as->busy_frac = r->makespan ? (double)r->busy[d] / (double)r->makespan : 0;
        const struct sch_stage_cost *sc = &costs->st[s]; /* without the copies */
        as->fwd_s = sch_time_to_seconds(sc->fwd - sc->fwd_pre - sc->fwd_post);
        as->bwd_s = sch_time_to_seconds(sc->bwd - sc->bwd_pre - sc->bwd_post);
        as->recomp_s = sch_time_to_seconds(costs->st[s].recomp);
        as->wgrad_s = sch_time_to_seconds(costs->st[s].bwd_weight);
        as->static_mem = r->static_mem[d];
        as->peak_act = r->peak_act[d];
        as->peak_mem = r->peak_mem[d];
        as->capacity = r->capacity[d];
        as->fits = (double)r->peak_mem[d] <= r->capacity[d];
    }
    /* the schedule's uniform-stage formula at one device's mean share of a
     * micro-batch's op times (without the device's message copies,
     * sch_cost.h), as compare-schedules takes it: it took stage 0's alone,
     * which with an embedding alone there was nothing like the others
     * (zb-h1 on transformer-small, K=8: 17.95 % against 12.73 %; helper-85) */
    double tf = 0, tb = 0, tw = 0;
    for (int s = 0; s < S; s++) {
        tf += p->stages[s].fwd_s;
        tb += p->stages[s].bwd_s;
        tw += p->stages[s].wgrad_s;
    }
    p->bubble_analytic = ana_bubble_formula(p->schedule, c->K, c->M, tf / c->K, tb / c->K,
                                            tw / c->K);
    if (c->record_trace) { /* the trace, and the op lists and costs it replays */
        p->trace = sim_engine_take_trace(eng);
        p->sched = sched;
        p->costs = costs;
    } else {
        sch_schedule_free(sched);
        sch_costs_free(costs);
    }
    sim_engine_free(eng);
    eng = NULL;
    sched = NULL;
    costs = NULL;
    if (!c->no_baseline) {
        struct ana_config b = *c;
        struct sch_partition *one;
        b.schedule = "gpipe";
        b.K = 1;
        b.M = 1;
        b.remat = SCH_REMAT_NEVER;
        b.replicas = 1;
        b.record_trace = 0;
        if ((rc = sch_partition_uniform(1, c->profile->n_layers, &one)) < 0)
            goto err_free;
        if ((rc = build_schedule(&b, &sched)) == 0)
            rc = run_one(&b, one, &sched, 0, &costs, &eng);
        sch_partition_free(one);
        if (rc == -PS_EINVAL) {
            /* the whole model on one device is beyond the engine's range
             * (the run asked for fits on K): no speedup, and why */
            snprintf(p->baseline_skipped, sizeof p->baseline_skipped, "%s", ps_errmsg());
            rc = 0;
        } else if (rc < 0) {
            goto err_free;
        } else {
            const struct sim_result *br = sim_engine_result(eng);
            p->baseline_step_s = sch_time_to_seconds(br->makespan);
            p->baseline_fits = br->fits;
            p->baseline_peak = br->n_devices > 0 ? (double)br->peak_mem[0] : 0;
            p->speedup = ana_speedup(p->baseline_step_s, p->step_s, p->replicas);
        }
    }
    sim_engine_free(eng);
    sch_schedule_free(sched);
    sch_costs_free(costs);
    sch_partition_free(own);
    *out = p;
    return 0;

err_free:
    sim_engine_free(eng);
    sch_schedule_free(sched);
    sch_costs_free(costs);
    sch_partition_free(own);
    ana_prediction_free(p);
    return rc;
}

/* cut as predict runs it (no baseline, trace or draws) into *out, and
 * whether every stage's simulated peak is within the capacity the search
 * used (--mem-cap BYTES or the device's memory): info[S] gets the cut's
 * closed-form figures (sch_part_model_stages). */
static int simulate_cut(const struct ana_config *cfg, const sch_part_model *m,
                        const struct sch_partition *cut, struct sch_part_stage_info *info,
                        struct ana_prediction **out, int *fits)
{
    struct ana_config c = *cfg;
    c.partition = (struct sch_partition *)cut;
    c.no_baseline = 1;
    c.record_trace = 0;
    c.draws = 0;
    int rc = ana_predict(&c, out);
    if (rc < 0)
        return rc;
    sch_part_model_stages(m, cut, info);
    *fits = 1;
    for (int s = 0; s < cut->n_stages; s++)
        *fits &= (double)(*out)->stages[s].peak_mem <= info[s].capacity;
    return 0;
}

/* ana_partition_fit's rounds; sums: each re-solve holds a device to its
 * stages' sum (sch_part_model_solve_caps), else each stage alone
 * (sch_part_model_solve_stages); *fitted: whether *part fits by the engine. */
static int fit_loop(const struct ana_config *cfg, const sch_part_model *m,
                    struct sch_partition **part, int sums, int *fitted)
{
    int S = (*part)->n_stages, rc = 0;
    *fitted = 0;
    int64_t *limit = malloc(sizeof *limit * (size_t)S);
    struct sch_part_stage_info *info = malloc(sizeof *info * (size_t)S);
    struct sch_partition *cur = *part;
    if (!limit || !info) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    sch_part_model_stages(m, cur, info);
    for (int s = 0; s < S; s++)
        limit[s] = info[s].capacity >= 9e18 ? INT64_MAX : (int64_t)floor(info[s].capacity);
    for (int round = 0; round < 8; round++) {
        struct ana_prediction *p = NULL;
        int fits, lowered = 0;
        if ((rc = simulate_cut(cfg, m, cur, info, &p, &fits)) < 0)
            break;
        if (fits && cur != *part) { /* the last cut that fits */
            sch_partition_free(*part);
            *part = cur;
        }
        *fitted |= fits;
        /* each device over: its largest stage (by the closed form) by the overflow */
        for (int s = 0; !fits && s < S; s++) {
            const struct ana_stage *a = &p->stages[s];
            if ((double)a->peak_mem <= info[s].capacity)
                continue;
            int big = s;
            for (int t = 0; t < S; t++)
                if (p->stages[t].device == a->device && info[t].mem > info[big].mem)
                    big = t;
            int64_t over = a->peak_mem - (int64_t)floor(info[s].capacity);
            int64_t want = info[big].mem - (over > 0 ? over : 1);
            if (want < limit[big]) {
                limit[big] = want > 0 ? want : 0;
                lowered = 1;
            }
        }
        ana_prediction_free(p);
        if (fits || !lowered)
            break;
        struct sch_partition *next = NULL;
        if ((rc = sums ? sch_part_model_solve_caps(m, limit, &next)
                       : sch_part_model_solve_stages(m, limit, &next)) < 0) {
            if (rc == -PS_ENOFIT) { /* none under those limits: the first cut stands */
                ps_error_clear();
                rc = 0;
            }
            break;
        }
        if (cur != *part)
            sch_partition_free(cur);
        cur = next;
    }
out:
    if (cur != *part)
        sch_partition_free(cur);
    free(limit);
    free(info);
    return rc;
}

int ana_partition_fit(const struct ana_config *cfg, const sch_part_model *m,
                      struct sch_partition **part)
{
    int fitted;
    return fit_loop(cfg, m, part, 1, &fitted);
}

/* The step of cut and whether it fits (simulate_cut). */
static int step_of_cut(const struct ana_config *cfg, const sch_part_model *m,
                       const struct sch_partition *cut, double *step, int *fits)
{
    struct sch_part_stage_info *info = malloc(sizeof *info * (size_t)cut->n_stages);
    if (!info)
        return ps_error(PS_ENOMEM, "out of memory");
    struct ana_prediction *p = NULL;
    int rc = simulate_cut(cfg, m, cut, info, &p, fits);
    if (rc == 0)
        *step = p->step_s;
    ana_prediction_free(p);
    free(info);
    return rc;
}

/* *no = 1 when cut cannot fit: some device holds its stages' parameters and,
 * of one stage, one class of buffer (stashes, inputs, outputs or W's) at the
 * most of it the schedule's list order holds at once (cnt: sch_part_stage_counts,
 * [stage][4]) beyond its capacity; each is in the ledger at some instant. cnt
 * NULL: one stash, which every micro-batch allocates at its F or its R
 * (sch_memory.c) whatever the order. The stage's costs, no simulation. */
static int cut_cannot_fit(const struct ana_config *cfg, const sch_part_model *m,
                          const struct sch_partition *cut, const int64_t *cnt, int *no)
{
    int S = cut->n_stages, D = cfg->topo->n_devices, rc = 0;
    struct sch_part_stage_info *info = malloc(sizeof *info * (size_t)S);
    int *dev = malloc(sizeof *dev * (size_t)S);
    double *need = calloc((size_t)D * 2, sizeof *need), *stash = need + D;
    struct sch_costs *c = NULL;
    *no = 0;
    if (!info || !dev || !need) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    sch_part_model_stages(m, cut, info);
    for (int s = 0; s < S; s++)
        dev[s] = info[s].device;
    if ((rc = sch_costs_new(cfg->profile, cfg->topo, cut, dev, cfg->batch / cfg->M, &c)) < 0)
        goto out;
    for (int s = 0; s < S; s++) {
        const struct sch_stage_mem *b = &c->st[s].mem;
        const int64_t *k = cnt ? cnt + 4 * s : NULL;
        double one = !k ? (double)b->stash
                        : fmax(fmax((double)k[0] * b->stash, (double)k[1] * b->in),
                               fmax((double)k[2] * b->out, (double)k[3] * b->wgrad));
        need[dev[s]] += (double)c->st[s].param_bytes;
        stash[dev[s]] = fmax(stash[dev[s]], one);
    }
    for (int s = 0; s < S; s++)
        *no |= need[dev[s]] + stash[dev[s]] > info[s].capacity;
out:
    sch_costs_free(c);
    free(need);
    free(dev);
    free(info);
    return rc;
}

/* With several stages a device (interleaved, V layouts) the least largest
 * stage is not the fastest step: a device runs its stages' sum, and where
 * the heavy stages fall in the schedule's order sets its critical path
 * (GPT-48 on dgx1-v100, K = 8, M = 32, interleaved:2: the per-stage
 * optimum 11.85 s, gpipe's cut 10.54 s). So *part (the fitted optimum, or
 * NULL when none fits) is replaced by the fastest simulated cut that fits,
 * or failing that the fastest, of it, the cut of least busiest-device time
 * (sch_part_model_descend) and each other strategy's cut; the engine's
 * ledger judges the fit, not the closed form's sum of a device's stage
 * peaks, which lies far above it (helper-82: gpipe's cut summed 19.6 GiB on
 * a device the engine found holding 11.96, and was dropped, its 9.11 s step
 * against the optimum's 13.52 s). A tie keeps the earlier.
 * need_fit: only a cut that fits is wanted (the caller exits 7 otherwise),
 * so a cut that cannot fit (cut_cannot_fit) is not simulated (helper-152: a
 * sweep over a grid that mostly does not fit ran 5 times as long). The
 * schedule's buffer counts bound only where the lists built by name are what
 * the engine runs, one stage a device: zb-auto runs lists fitted to the
 * costs or ZB-H1/H2 (ana_schedule_fit), and a device holding two stages of
 * a V frees a hand-over the counts hold (helper-153: zb-auto's cut that fit
 * was dropped, its step 22.96 -> 32.65 ms); elsewhere one stash bounds. A
 * cut two strategies share is simulated once. */
static int fastest_simulated(const struct ana_config *cfg, const sch_part_model *m,
                             struct sch_partition **part, int need_fit, int *fits_out)
{
    double best = 0;
    int best_fits = -1, rc, n_tried = 0;
    struct sch_partition *tried[SCH_PART_NSTRATEGIES + 1];
    int64_t *cnt = NULL;
    *fits_out = 0;
    if (*part && (rc = step_of_cut(cfg, m, *part, &best, &best_fits)) < 0)
        return rc;
    const char *name = cfg->schedule ? cfg->schedule : "gpipe";
    if (need_fit && !sch_part_model_shared(m) && strncmp(name, "zb-auto", 7)) {
        struct sch_schedule *sc; /* its counts, once (the cut does not change them) */
        if ((rc = sch_schedule_build(name, cfg->K, cfg->M, cfg->remat, &sc)) < 0)
            return rc;
        if (!(cnt = malloc(sizeof *cnt * 4 * (size_t)sc->n_stages))) {
            sch_schedule_free(sc);
            return ps_error(PS_ENOMEM, "out of memory");
        }
        sch_part_stage_counts(sc, cnt);
        sch_schedule_free(sc);
    }
    for (int k = -1; k < SCH_PART_NSTRATEGIES; k++) {
        struct sch_partition *q = NULL;
        if (k == SCH_PART_OPTIMAL || (k < 0 && !*part))
            continue;
        if (k < 0) { /* the descent from the optimum */
            if (!(q = sch_partition_copy(*part))) {
                rc = ps_error(PS_ENOMEM, "out of memory");
                goto err_free_tried;
            }
            rc = sch_part_model_descend(m, &q);
        } else {
            rc = sch_part_strategy_run(m, (enum sch_part_strategy)k, &q);
        }
        if (rc == -PS_ENOMEM) {
            sch_partition_free(q);
            goto err_free_tried;
        }
        int seen = rc == 0 && *part && sch_partition_equal(q, *part);
        for (int i = 0; rc == 0 && i < n_tried && !seen; i++)
            seen = sch_partition_equal(q, tried[i]);
        if (rc < 0 || seen) {
            ps_error_clear(); /* a strategy without a cut here: not a candidate */
            sch_partition_free(q);
            continue;
        }
        tried[n_tried++] = q;
        int no = 0;
        if (need_fit && (rc = cut_cannot_fit(cfg, m, q, cnt, &no)) < 0) {
            if (rc == -PS_ENOMEM)
                goto err_free_tried;
            ps_error_clear(); /* its costs are beyond the engine's range */
            continue;
        }
        double step;
        int fits;
        if (no)
            continue;
        if ((rc = step_of_cut(cfg, m, q, &step, &fits)) < 0) {
            if (rc == -PS_ENOMEM)
                goto err_free_tried;
            ps_error_clear(); /* the engine refuses this cut (a stage beyond its range) */
            continue;
        }
        if (fits > best_fits || (fits == best_fits && step < best)) {
            struct sch_partition *b = sch_partition_copy(q);
            if (!b) {
                rc = ps_error(PS_ENOMEM, "out of memory");
                goto err_free_tried;
            }
            sch_partition_free(*part);
            *part = b;
            best = step;
            best_fits = fits;
        }
    }
    *fits_out = best_fits > 0;
    rc = 0;
err_free_tried:
    for (int i = 0; i < n_tried; i++)
        sch_partition_free(tried[i]);
    free(cnt);
    return rc;
}

int ana_partition_optimal(const struct ana_config *cfg, const sch_part_model *m,
                          struct sch_partition **part)
{
    *part = NULL;
    int rc = sch_part_strategy_run(m, SCH_PART_OPTIMAL, part), fits;
    if (rc == -PS_ENOFIT) {
        char msg[PS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", ps_errmsg());
        struct sch_partition *p = NULL;
        int64_t bn;
        if (sch_part_solve(sch_part_model_problem(m), &p, &bn) == 0) {
            /* each stage under the cap alone, the devices judged by the engine */
            int fitted = 0, frc = fit_loop(cfg, m, &p, 0, &fitted);
            if (frc < 0 && frc != -PS_ENOFIT) { /* not "none fits": its own error */
                sch_partition_free(p);
                return frc;
            }
            if (frc == 0 && fitted) {
                *part = p;
                p = NULL;
                rc = 0;
            }
        }
        sch_partition_free(p);
        if (rc < 0)
            rc = ps_error(PS_ENOFIT, "%s", msg);
    }
    if (rc == 0)
        rc = ana_partition_fit(cfg, m, part);
    if (rc == 0 && sch_part_model_shared(m))
        rc = fastest_simulated(cfg, m, part, 0, &fits);
    else if (rc == -PS_ENOFIT) {
        /* no cut the closed form holds: another strategy's may fit by the
         * engine (helper-82: zb-v K=8 on dgx-a100, balance-by-size's; with
         * one stage a device too, the closed form adding each class at its
         * own maximum: helper-150, 1f1b's optimum 1.52 MiB over by it, the
         * engine's peak of balance-by-size's cut 15.97 of 16 GiB) */
        char msg[PS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", ps_errmsg());
        int frc = fastest_simulated(cfg, m, part, 1, &fits);
        if (frc == 0 && fits)
            return 0;
        sch_partition_free(*part);
        *part = NULL;
        if (frc < 0)
            return frc;
        rc = ps_error(PS_ENOFIT, "%s", msg);
    }
    return rc;
}

int ana_partition_for(const struct ana_config *cfg, enum sch_part_strategy st, int cap_mode,
                      double cap, struct sch_partition **out)
{
    *out = NULL;
    if (st == SCH_PART_UNIFORM)
        return 0;
    struct sch_schedule *sched = NULL;
    int rc = sch_schedule_build(cfg->schedule ? cfg->schedule : "gpipe", cfg->K, cfg->M,
                                cfg->remat, &sched);
    if (rc < 0)
        return rc;
    /* the schedule's own op order sets each stage's memory, as in `partition`
     * (without it, fill-drain's M stashes: 1f1b's optimum was refused as not
     * fitting, balance-by-size balanced the wrong bytes), every stage under
     * the cap (without it optimal cut where nothing fits while a cut did) */
    struct sch_part_opts o = { .n_stages = sched->n_stages, .stage_device = sched->stage_device,
                               .n_micro = cfg->M, .micro_batch = cfg->batch / cfg->M,
                               .remat = cfg->remat, .cap_mode = cap_mode, .cap = cap,
                               .sched = sched };
    sch_part_model *m = NULL;
    if ((rc = sch_part_model_new(cfg->profile, cfg->topo, &o, &m)) == 0)
        rc = st == SCH_PART_OPTIMAL ? ana_partition_optimal(cfg, m, out)
                                    : sch_part_strategy_run(m, st, out);
    sch_part_model_free(m);
    sch_schedule_free(sched);
    return rc;
}
