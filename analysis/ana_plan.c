/* ana_plan: the configuration search with exact bounds (see ana_plan.h):
 * the default schedules, the status and limit names, the enumeration of
 * configurations, the progress line, the ranking and frontier, and the run
 * (one thread, or shards on --jobs threads). The search itself is in
 * ana_plan_search.c, the bounds and caches it uses in ana_plan_bounds.c and
 * ana_plan_cache.c (ana_plan_int.h). */
#include "analysis/ana_plan.h"
#include "analysis/ana_plan_int.h"
#include "base/ps_error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Searched by default. zb-auto only where --schedules names it: the engine
 * runs its order fitted to each configuration's stage costs (as predict
 * does), a local search of up to thousands of timings per configuration,
 * and no bound short of that fit holds its memory (its first phase's lists
 * held 14.22 GiB where the fitted order predict runs held 16.69 GiB). */
const char *const ana_plan_schedules[] = {
    "gpipe", "1f1b", "eager-1f1b", "interleaved:2", "interleaved:4", "breadth-first:2",
    "zb-h1", "zb-h2", "zb-v",
};
const int ana_plan_nschedules = (int)(sizeof ana_plan_schedules / sizeof *ana_plan_schedules);

static const char *const status_names[] = {
#define X(id, name, desc) name,
    ANA_PLAN_STATUS(X)
#undef X
};
static const char *const status_descs[] = {
#define X(id, name, desc) desc,
    ANA_PLAN_STATUS(X)
#undef X
};
const char *ana_plan_status_name(enum ana_plan_status s) { return status_names[s]; }
const char *ana_plan_status_desc(enum ana_plan_status s) { return status_descs[s]; }

const char *ana_plan_limit_name(enum ana_plan_limit l)
{
    static const char *const n[] = { "bubble", "imbalance", "link", "memory", "compute" };
    return n[l];
}

/* No (K, R, M) lets any schedule named run: each one's condition, named.
 * A schedule of one stage a device runs at K = M = 1, so each of these
 * holds several stages a device or needs several micro-batches. */
static int nothing_to_search(const struct ana_plan_spec *sp, const char *const *names, int nn)
{
    char why[512];
    size_t at = 0;
    why[0] = 0;
    for (int s = 0; s < nn && at < sizeof why; s++) {
        struct ana_plan_layout l = ana_plan_layout_of(names[s]);
        int r = snprintf(why + at, sizeof why - at, "%s%s needs %d x K <= layers%s", s ? "; " : "",
                         names[s], l.v,
                         !strncmp(names[s], "interleaved:", 12) ? " and M a multiple of K"
                         : !strcmp(names[s], "dualpipe-v") ? " and M >= 2K" : "");
        at += r > 0 ? (size_t)r : 0;
    }
    return ps_error(PS_ENOFIT, "no configuration to search: %d layer%s, %d devices, global "
                    "batch %ld: %s", sp->profile->n_layers, sp->profile->n_layers == 1 ? "" : "s",
                    sp->devices, sp->batch, why);
}

static int enumerate(const struct ana_plan_spec *sp, struct ana_plan *p)
{
    static const enum sch_remat all_remat[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                                SCH_REMAT_ALWAYS };
    const char *const *names = sp->schedules ? sp->schedules : ana_plan_schedules;
    int nn = sp->schedules ? sp->nsched : ana_plan_nschedules;
    const enum sch_remat *rm = sp->remats ? sp->remats : all_remat;
    int nr = sp->remats ? sp->nremat : 3, L = sp->profile->n_layers, cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        for (int K = 1; K <= sp->devices && K <= L; K++)
            for (int R = 1; (int64_t)K * R <= sp->devices; R++) {
                if (sp->batch % R)
                    continue;
                long Bp = sp->batch / R;
                for (long M = 1; M <= Bp && M <= ANA_PLAN_M_MAX; M++) {
                    if (Bp % M)
                        continue;
                    for (int s = 0; s < nn; s++) {
                        if (!ana_plan_schedule_valid(names[s], K, (int)M, L))
                            continue;
                        for (int r = 0; r < nr; r++, n++) {
                            if (M == 1 && rm[r] == SCH_REMAT_EXCEPT_LAST && nr > 1) {
                                n--; /* = never with one micro-batch */
                                continue;
                            }
                            if (!pass)
                                continue;
                            struct ana_plan_cfg *g = &p->c[n];
                            g->K = K;
                            g->R = R;
                            g->M = (int)M;
                            g->S = ana_plan_layout_of(names[s]).v * K;
                            snprintf(g->schedule, sizeof g->schedule, "%s", names[s]);
                            g->remat = rm[r];
                            g->index = n;
                            g->status = ANA_PLAN_PRUNED;
                        }
                    }
                }
            }
        if (!pass) {
            if (n == 0)
                return nothing_to_search(sp, names, nn);
            if (n > 50000000)
                return ps_error(PS_EUSAGE, "%d configurations are too many (at most "
                                 "50 000 000); give fewer --devices, --schedules or --remat", n);
            cap = n;
            if (!(p->c = calloc((size_t)cap, sizeof *p->c)))
                return ps_error(PS_ENOMEM, "out of memory");
        }
        p->n = n;
    }
    return 0;
}

/* The progress line (spec.progress): counts of every shard's thread, drawn by
 * whichever passes the next tenth of a second first (helper-109: a search of
 * minutes printed nothing until it ended). One search a process. */
static struct {
    atomic_llong visits, simulated, last_ms;
    atomic_int drawn;
    struct timespec t0;
} prog;

static long long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A visit (visit 1) or a simulation (ran) of a configuration of n. */
void ana_plan_progress_tick(const struct ana_plan_spec *sp, int n, int visit, int ran)
{
    if (!sp->progress)
        return;
    long long v = atomic_fetch_add(&prog.visits, visit) + visit;
    long long sim = atomic_fetch_add(&prog.simulated, ran) + ran;
    long long ms = ms_since(&prog.t0), last = atomic_load(&prog.last_ms);
    if (ms - last < 100 || !atomic_compare_exchange_strong(&prog.last_ms, &last, ms))
        return;
    atomic_store(&prog.drawn, 1);
    fprintf(stderr, "\rplan: %lld visits of %d configurations, %lld simulated, %lld s ", v, n,
            sim, ms / 1000);
    fflush(stderr);
}

void ana_plan_progress_end(void)
{
    if (atomic_exchange(&prog.drawn, 0))
        fputc('\n', stderr);
}

static int by_memory(const void *a, const void *b, void *ctx)
{
    const struct ana_plan_cfg *sort_cfgs = ctx;
    const struct ana_plan_cfg *x = &sort_cfgs[*(const int *)a], *y = &sort_cfgs[*(const int *)b];
    if (x->peak_mem != y->peak_mem)
        return x->peak_mem < y->peak_mem ? -1 : 1;
    return ana_plan_better(x, y, ANA_PLAN_THROUGHPUT);
}

static int by_objective_tp(const void *a, const void *b, void *ctx)
{
    const struct ana_plan_cfg *sort_cfgs = ctx;
    return ana_plan_better(&sort_cfgs[*(const int *)a], &sort_cfgs[*(const int *)b],
                           ANA_PLAN_THROUGHPUT);
}

static int by_objective_mem(const void *a, const void *b, void *ctx)
{
    const struct ana_plan_cfg *sort_cfgs = ctx;
    return ana_plan_better(&sort_cfgs[*(const int *)a], &sort_cfgs[*(const int *)b],
                           ANA_PLAN_MEMORY);
}

int ana_plan_rerank(struct ana_plan *p)
{
    free(p->rank);
    free(p->front);
    p->rank = p->front = NULL;
    p->n_rank = p->n_front = 0;
    p->baseline = -1;
    memset(p->counts, 0, sizeof p->counts);
    int *fit = malloc(sizeof *fit * (size_t)(p->n ? p->n : 1)), nf = 0;
    if (!fit)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; i < p->n; i++) {
        const struct ana_plan_cfg *g = &p->c[i];
        if (g->status < ANA_PLAN_NSTATUS)
            p->counts[g->status]++;
        if (g->status != ANA_PLAN_FIT)
            continue;
        fit[nf++] = i;
        if (ana_plan_is_single(g) &&
            (p->baseline < 0 || ana_plan_better(g, &p->c[p->baseline], ANA_PLAN_THROUGHPUT) < 0))
            p->baseline = i;
    }
    qsort_r(fit, (size_t)nf, sizeof *fit,
            p->spec.objective == ANA_PLAN_MEMORY ? by_objective_mem : by_objective_tp, p->c);
    p->n_rank = nf < p->spec.top ? nf : p->spec.top;
    p->rank = malloc(sizeof *p->rank * (size_t)(p->n_rank ? p->n_rank : 1));
    p->front = malloc(sizeof *p->front * (size_t)(nf ? nf : 1));
    if (!p->rank || !p->front) {
        free(fit);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    memcpy(p->rank, fit, sizeof *fit * (size_t)p->n_rank);
    /* frontier: by peak memory, keep each strictly faster than all before, and
     * one that ties the last kept in both (no other beats it either: helper-128,
     * interleaved:2 and breadth-first:2 at one step and peak listed one); the
     * bounds prune no exact tie (dominated) */
    qsort_r(fit, (size_t)nf, sizeof *fit, by_memory, p->c);
    int64_t best = INT64_MAX, best_peak = -1;
    for (int j = 0; j < nf; j++) {
        const struct ana_plan_cfg *g = &p->c[fit[j]];
        if (g->step_ns < best || (g->step_ns == best && g->peak_mem == best_peak)) {
            best = g->step_ns;
            best_peak = g->peak_mem;
            p->front[p->n_front++] = fit[j];
        }
    }
    free(fit);
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int ana_plan_shard_of(const struct ana_plan_cfg *g, int n)
{
    if (n <= 1)
        return 0;
    uint64_t h = ((uint64_t)(uint32_t)g->K << 32 | (uint32_t)g->M) * 0x9E3779B97F4A7C15ULL;
    return (int)((h >> 32) % (uint64_t)n);
}

struct shard_job {
    struct ana_plan_spec spec;
    struct ana_plan *p;
    int rc;
    char msg[PS_ERRMSG_MAX];
};

static void *shard_main(void *arg)
{
    struct shard_job *j = arg;
    j->rc = ana_plan_run(&j->spec, &j->p);
    if (j->rc < 0)
        snprintf(j->msg, sizeof j->msg, "%s", ps_errmsg());
    return NULL;
}

/* jobs shards in threads, merged as ana_plan_mpi's ranks are. */
static int run_threads(const struct ana_plan_spec *sp, struct ana_plan **out)
{
    int n = sp->jobs, rc = 0, started = 0;
    struct shard_job *j = calloc((size_t)n, sizeof *j);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    double t0 = now();
    if (!j || !th) {
        free(j);
        free(th);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int t = 0; t < n; t++) {
        j[t].spec = *sp;
        j[t].spec.jobs = 1;
        j[t].spec.shard = t;
        j[t].spec.nshards = n;
    }
    for (; started < n; started++)
        if (pthread_create(&th[started], NULL, shard_main, &j[started]) != 0) {
            rc = ps_error(PS_ENOMEM, "plan --jobs: cannot start thread %d of %d", started + 1,
                          n);
            break;
        }
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < started && rc == 0; t++) /* the first shard's error, as one process */
        if (j[t].rc < 0)
            rc = ps_error(-j[t].rc, "%s", j[t].msg);
    struct ana_plan *p = rc == 0 ? j[0].p : NULL;
    if (rc == 0) {
        for (int t = 1; t < n; t++) {
            for (int i = 0; i < p->n; i++)
                if (ana_plan_shard_of(&p->c[i], n) == t)
                    p->c[i] = j[t].p->c[i];
            p->simulated += j[t].p->simulated;
            p->partitions += j[t].p->partitions;
        }
        p->spec = *sp; /* one search, as one process's */
        if ((rc = ana_plan_rerank(p)) < 0)
            p = NULL;
    }
    for (int t = 0; t < started; t++)
        if (!(rc == 0 && t == 0))
            ana_plan_free(j[t].p);
    free(j);
    free(th);
    if (rc < 0)
        return rc;
    p->elapsed_s = now() - t0;
    *out = p;
    return 0;
}

int ana_plan_run(const struct ana_plan_spec *sp, struct ana_plan **out)
{
    *out = NULL;
    if (sp->progress && sp->nshards <= 1) { /* the whole search's start, not a shard's */
        atomic_store(&prog.visits, 0);
        atomic_store(&prog.simulated, 0);
        atomic_store(&prog.last_ms, -1000); /* the first visit draws it */
        clock_gettime(CLOCK_MONOTONIC, &prog.t0);
    }
    if (sp->jobs > 1 && sp->nshards <= 1)
        return run_threads(sp, out);
    if (sp->devices < 1 || sp->devices > sp->topo->n_devices)
        return ps_error(PS_EUSAGE, "--devices %d: topology %s has %d devices", sp->devices,
                         sp->topo->path, sp->topo->n_devices);
    if (sp->batch < 1)
        return ps_error(PS_EUSAGE, "--batch must be >= 1, got %ld", sp->batch);
    if (sp->top < 1)
        return ps_error(PS_EUSAGE, "--top must be >= 1, got %d", sp->top);
    if (sp->cap_mode == 2 && !(sp->cap > 0))
        return ps_error(PS_EUSAGE, "--mem-cap must be > 0 bytes, got %g", sp->cap);
    struct ana_plan *p = calloc(1, sizeof *p);
    if (!p)
        return ps_error(PS_ENOMEM, "out of memory");
    p->spec = *sp;
    p->baseline = -1;
    double t0 = now();
    int rc;
    if ((rc = enumerate(sp, p)) < 0 || (rc = ana_plan_search(sp, p)) < 0 ||
        (rc = ana_plan_rerank(p)) < 0) {
        ana_plan_free(p);
        return rc;
    }
    p->elapsed_s = now() - t0;
    *out = p;
    return 0;
}

void ana_plan_free(struct ana_plan *p)
{
    if (!p)
        return;
    free(p->c);
    free(p->rank);
    free(p->front);
    free(p);
}

double ana_plan_speedup(const struct ana_plan *p, const struct ana_plan_cfg *c)
{
    if (p->baseline < 0 || !(c->step_s > 0))
        return 0;
    return p->c[p->baseline].step_s / c->step_s;
}
