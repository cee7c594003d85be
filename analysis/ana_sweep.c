/* ana_sweep: the parallel sweep into SQLite (see ana_sweep.h). */
#include "analysis/ana_sweep.h"
#include "analysis/ana_mpi.h"
#include "analysis/ana_sweep_int.h"
#include "analysis/ana_db.h"
#include "analysis/ana_predict.h"
#include "models/mdl_preset.h"
#include "base/ps_error.h"
#include "base/ps_memavail.h"
#include "base/ps_util.h"

#include <math.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The stop request, read by the worker threads: an atomic set from signal
 * handlers and ana_sweep_interrupt (lock-free, so async-signal-safe), and
 * the signal that asked (0: ana_sweep_interrupt). */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "signal handlers need lock-free atomic ints");
static atomic_int stop_flag, stop_sig;

/* The signals that stop a sweep, and the actions they had before it. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP ((int)(sizeof stop_signals / sizeof *stop_signals))
static struct sigaction old_action[NSTOP];
static int installed[NSTOP];
static const char *stop_notice; /* written by the handler (NULL: --quiet) */
static size_t stop_notice_len;

void ana_sweep_interrupt(void)
{
    atomic_store(&stop_flag, 1);
}

/* The first signal asks the sweep to stop after the running configurations
 * and puts back the previous actions (the default, or main's handler that
 * removes temporary files), so that a second signal stops the process at
 * once. sigaction is async-signal-safe; the arrays are written before the
 * handler is installed and only read here. */
static void on_stop_signal(int sig)
{
    int expected = 0;
    atomic_compare_exchange_strong(&stop_sig, &expected, sig);
    atomic_store(&stop_flag, 1);
    for (int i = 0; i < NSTOP; i++)
        if (installed[i])
            sigaction(stop_signals[i], &old_action[i], NULL);
    if (stop_notice && expected == 0) {
        ssize_t w = write(2, stop_notice, stop_notice_len);
        (void)w;
    }
}

/* Installs on_stop_signal for the stop signals not ignored (a sweep started
 * under nohup keeps ignoring SIGHUP). */
static void signals_install(const char *notice)
{
    struct sigaction sa;
    stop_notice = notice;
    stop_notice_len = notice ? strlen(notice) : 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NSTOP; i++)
        sigaddset(&sa.sa_mask, stop_signals[i]);
    for (int i = 0; i < NSTOP; i++) {
        installed[i] = 0;
        if (sigaction(stop_signals[i], NULL, &old_action[i]) != 0 ||
            old_action[i].sa_handler == SIG_IGN)
            continue;
        installed[i] = 1;
        sigaction(stop_signals[i], &sa, NULL);
    }
}

/* Puts back the actions of before the sweep (again, if a signal already
 * did: the same actions). */
static void signals_restore(void)
{
    for (int i = 0; i < NSTOP; i++)
        if (installed[i]) {
            sigaction(stop_signals[i], &old_action[i], NULL);
            installed[i] = 0;
        }
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: /* under mpirun: another rank's signal (helper-121: "a request") */
        return ana_mpi_launched() ? "a signal to another rank" : "a request";
    }
}

#define job ana_sweep_job

struct pool {
    const struct ana_sweep_spec *sp;
    struct job *jobs;
    int n, next, step, running, abort; /* next += step: this shard's jobs */
    int taken;                    /* jobs handed to workers so far */
    int *ready, head, tail;       /* finished job indices, FIFO */
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Partition of the job's strategy (NULL for uniform: ana_predict's default);
 * the configuration is checked already. Replicas are copies of replica 0,
 * so its partition serves them all. */
static int job_partition(const struct ana_sweep_spec *sp, const struct job *j,
                         struct sch_partition **out)
{
    /* every stage under its device's memory, as `predict --partition` cuts it
     * (without the cap optimal stored a cut that does not fit where one fits) */
    struct ana_config c = { .profile = sp->profile, .topo = sp->topo,
                            .schedule = j->run.schedule, .K = j->run.K, .M = j->run.M,
                            .batch = (double)j->run.batch, .remat = j->remat,
                            .replicas = j->run.replicas };
    return ana_partition_for(&c, j->strategy, 1, 0, out);
}

/* r's partition, whole, from its stages' layer counts (the prediction's is
 * cut at 255 bytes: K=200 stored "10,10,...,... (200 stages)"). */
static int partition_text(struct ana_run *r)
{
    size_t n = (size_t)r->n_stages * 12 + 1, at = 0;
    if (!(r->partition = malloc(n)))
        return ps_error(PS_ENOMEM, "out of memory");
    r->partition[0] = 0;
    for (int s = 0; s < r->n_stages; s++)
        at += (size_t)snprintf(r->partition + at, n - at, "%s%d", s ? "," : "",
                               r->stages[s].n_layers);
    return 0;
}

static void run_job(const struct ana_sweep_spec *sp, struct job *j)
{
    struct ana_run *r = &j->run;
    struct sch_partition *part = NULL;
    struct ana_prediction *p = NULL;
    int rc;
    ps_error_clear();
    struct ana_config cfg = { .profile = sp->profile, .topo = sp->topo,
                              .schedule = r->schedule, .K = r->K,
                              .M = r->M, .batch = (double)r->batch, .remat = j->remat,
                              .replicas = r->replicas, .no_baseline = 1 };
    if ((rc = ana_config_check(&cfg)) < 0 || (rc = job_partition(sp, j, &part)) < 0)
        goto out;
    cfg.partition = part;
    if ((rc = ana_predict(&cfg, &p)) < 0)
        goto out;
    snprintf(r->status, sizeof r->status, "ok");
    r->micro_batch = p->micro_batch;
    r->step_s = p->step_s;
    r->samples_per_s = p->samples_per_s;
    r->baseline_step_s = j->baseline_s;
    r->speedup = ana_speedup(j->baseline_s, p->step_s, p->replicas);
    r->bubble_sim = p->bubble_sim;
    r->bubble_analytic = p->bubble_analytic;
    r->fits = p->fits;
    r->n_ops = p->n_ops;
    if (!(r->stages = calloc((size_t)p->n_stages, sizeof *r->stages))) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    r->n_stages = p->n_stages;
    for (int s = 0; s < p->n_stages; s++) {
        const struct ana_stage *a = &p->stages[s];
        r->stages[s] = (struct ana_run_stage){
            .device = a->device, .first_layer = a->first_layer, .n_layers = a->n_layers,
            .fits = a->fits, .busy_frac = a->busy_frac, .fwd_s = a->fwd_s, .bwd_s = a->bwd_s,
            .recomp_s = a->recomp_s, .capacity = a->capacity, .static_mem = a->static_mem,
            .peak_act = a->peak_act, .peak_mem = a->peak_mem };
    }
    rc = partition_text(r);
out:
    if (rc < 0) {
        snprintf(r->status, sizeof r->status, "%s", ps_errname(rc));
        snprintf(r->message, sizeof r->message, "%s", ps_errmsg());
    }
    ana_prediction_free(p);
    sch_partition_free(part);
}

static void *worker(void *arg)
{
    struct pool *p = arg;
    pthread_setname_np(pthread_self(), "pipesim-sweep"); /* top -H, /proc/<pid>/task */
    for (;;) {
        if (p->sp->before_job) {
            pthread_mutex_lock(&p->mu);
            int taken = p->taken;
            pthread_mutex_unlock(&p->mu);
            p->sp->before_job(p->sp->ctx, taken);
        }
        pthread_mutex_lock(&p->mu);
        if (atomic_load(&stop_flag) || p->abort || p->next >= p->n) {
            p->running--;
            pthread_cond_broadcast(&p->cv);
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        int i = p->next;
        p->next += p->step;
        p->taken++;
        pthread_mutex_unlock(&p->mu);
        run_job(p->sp, &p->jobs[i]);
        p->jobs[i].ran = 1;
        pthread_mutex_lock(&p->mu);
        p->ready[p->tail++] = i;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

static void progress(int done, int n, double t0, int final)
{
    static double last;
    double t = now();
    if (!final && t - last < 0.1)
        return;
    last = t;
    int w = 30, fill = n ? (int)((double)done / n * w) : w;
    char bar[32];
    for (int i = 0; i < w; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[w] = 0;
    double el = t - t0, rate = el > 0 ? done / el : 0;
    int eta = rate > 0 ? (int)ceil((n - done) / rate) : 0;
    fprintf(stderr, "\rsweep [%s] %d/%d %3d%%  %.1f cfg/s  ETA %d:%02d ", bar, done, n,
            n ? (int)(100.0 * done / n) : 100, rate, eta / 60, eta % 60);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

/* The configurations in the grid (a double: the product of the list lengths
 * can pass any integer type's range), and that product spelt out. */
static double grid_size(const struct ana_sweep_spec *sp, char *how, size_t n)
{
    const int f[] = { sp->schedules ? sp->nschedule : 1, sp->nstrategy, sp->nremat,
                      sp->nbatch, sp->replicas ? sp->nreplica : 1, sp->nK, sp->nM };
    static const char *const name[] = { "schedule", "strateg", "remat", "batch", "replica",
                                        "K", "M" };
    static const char *const plural[][2] = { { "", "s" }, { "y", "ies" }, { "", "s" },
                                             { "", "es" }, { "", "s" }, { "", "" },
                                             { "", "" } };
    double size = 1;
    size_t at = 0;
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        size *= f[i];
        if (how && at < n)
            at += (size_t)snprintf(how + at, n - at, "%s%d %s%s", i ? " x " : "", f[i],
                                   name[i], plural[i][f[i] != 1]);
    }
    return size;
}

/* A grid of more configurations than a sweep counts (an int) is a usage
 * error naming its size, before any work: the count wrapped (2048 values
 * of -K, -M and --batch made 2^33 a 0) and the job list was written past
 * its end. */
static int check_grid(const struct ana_sweep_spec *sp)
{
    char how[256];
    double size = grid_size(sp, how, sizeof how);
    if (size > INT_MAX)
        return ps_error(PS_EUSAGE, "the grid has %.0f configurations (%s), more than the %d "
                        "one sweep takes: split it into several sweeps into the same --db",
                        size, how, INT_MAX);
    return 0;
}

/* The grid, minus what the database already has (its size checked by
 * check_grid). */
static int plan(const struct ana_sweep_spec *sp, ana_db *db, struct job **out, int *n,
                struct ana_sweep_stats *st)
{
    struct ana_run key = { 0 };
    int rc;
    key.model = sp->model_arg;
    key.topology = sp->topo_arg;
    const char *one = sp->schedule ? sp->schedule : "gpipe";
    const char *const *names = sp->schedules ? sp->schedules : &one;
    int nsched = sp->schedules ? sp->nschedule : 1;
    if ((rc = ana_db_input_hash(MDL_PRESET_PROFILE, sp->model_arg, sp->profile,
                                key.model_hash)) < 0 ||
        (rc = ana_db_input_hash(MDL_PRESET_TOPOLOGY, sp->topo_arg, NULL, key.topology_hash)) < 0)
        return rc;
    static const long one_replica = 1;
    const long *Rs = sp->replicas ? sp->replicas : &one_replica;
    int nR = sp->replicas ? sp->nreplica : 1;
    int total = (int)grid_size(sp, NULL, 0);
    int cnt = 0;
    struct job *jobs = calloc((size_t)(total ? total : 1), sizeof *jobs);
    if (!jobs)
        return ps_error(PS_ENOMEM, "out of memory for the list of the grid's %d "
                        "configurations (%.1f GiB)", total,
                        (double)total * (double)sizeof *jobs / (1 << 30));
    st->total = total;
    for (int qa = 0; qa < nsched * sp->nstrategy; qa++) /* schedule, then strategy */
        for (int b = 0, q = qa / sp->nstrategy, a = qa % sp->nstrategy; b < sp->nremat; b++)
            for (int cr = 0; cr < sp->nbatch * nR; cr++) /* batch, then replicas */
                for (int k = 0, c = cr / nR; k < sp->nK; k++)
                    for (int m = 0; m < sp->nM; m++) {
                        struct job *j = &jobs[cnt];
                        j->run = key;
                        snprintf(j->run.schedule, sizeof j->run.schedule, "%s", names[q]);
                        j->run.K = (int)sp->Ks[k];
                        j->run.M = (int)sp->Ms[m];
                        j->run.batch = sp->batches[c];
                        j->run.replicas = (int)Rs[cr % nR];
                        j->remat = sp->remats[b];
                        j->strategy = sp->strategies[a];
                        snprintf(j->run.remat, sizeof j->run.remat, "%s",
                                 sch_remat_name(j->remat));
                        snprintf(j->run.strategy, sizeof j->run.strategy, "%s",
                                 sch_part_strategy_name(j->strategy));
                        int found;
                        if ((rc = ana_db_has(db, &j->run, &found)) < 0) {
                            free(jobs);
                            return rc;
                        }
                        if (found)
                            st->skipped++;
                        else
                            cnt++;
                    }
    *out = jobs;
    *n = cnt;
    return 0;
}

static int baselines(const struct ana_sweep_spec *sp, struct job *jobs, int n)
{
    for (int c = 0; c < sp->nbatch; c++) {
        int need = 0;
        for (int i = 0; i < n && !need; i++)
            need = jobs[i].run.batch == sp->batches[c];
        if (!need)
            continue;
        struct ana_config b = { .profile = sp->profile, .topo = sp->topo, .schedule = "gpipe",
                                .K = 1, .M = 1, .batch = (double)sp->batches[c],
                                .remat = SCH_REMAT_NEVER, .no_baseline = 1 };
        struct ana_prediction *p;
        double t = NAN; /* not simulated (beyond the engine's range): no speedups */
        int rc = ana_predict(&b, &p);
        if (rc < 0 && rc != -PS_EINVAL) /* only out of range is a run without speedup */
            return rc;
        if (rc == 0) {
            t = p->step_s;
            ana_prediction_free(p);
        }
        ps_error_clear();
        for (int i = 0; i < n; i++)
            if (jobs[i].run.batch == sp->batches[c])
                jobs[i].baseline_s = t;
    }
    return 0;
}

/* Stores finished jobs until the workers are gone; commits every 16 rows
 * or 0.2 s. */
static int drain(struct pool *p, ana_db *db, struct ana_sweep_stats *st, double t0, int mine)
{
    const struct ana_sweep_spec *sp = p->sp;
    int rc = db ? ana_db_begin(db) : 0, pending = 0;
    double last_commit = now();
    while (rc == 0) {
        pthread_mutex_lock(&p->mu);
        while (p->head == p->tail && p->running > 0)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->head == p->tail && p->running == 0) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        int i = p->ready[p->head++];
        pthread_mutex_unlock(&p->mu);
        struct job *j = &p->jobs[i];
        if (!db) { /* kept for rank 0 */
            st->done++;
            continue;
        }
        if ((rc = ana_sweep_store(sp, db, j, st)) < 0)
            break;
        pending++;
        if (pending >= 16 || now() - last_commit > 0.2) {
            if ((rc = ana_db_commit(db)) < 0 || (rc = ana_db_begin(db)) < 0)
                break;
            pending = 0;
            last_commit = now();
        }
        if (sp->progress)
            progress(st->done + st->raced, mine, t0, 0);
        if (sp->on_row)
            sp->on_row(sp->ctx, st->done + st->raced, mine);
    }
    if (rc == 0 && db)
        rc = ana_db_commit(db);
    return rc;
}

void ana_sweep_job_release(struct ana_sweep_job *j)
{
    free(j->run.stages);
    free(j->run.partition);
    j->run.stages = NULL;
    j->run.partition = NULL;
}

int ana_sweep_store(const struct ana_sweep_spec *sp, ana_db *db, struct ana_sweep_job *j,
                    struct ana_sweep_stats *st)
{
    /* Out of memory, or past the memory budget (sim/sim_membudget.h), depends
     * on the machine at that moment, not on the configuration: a stored row
     * would never be retried, and its advice (PIPESIM_MEMORY_LIMIT) never be
     * taken. */
    if (!strcmp(j->run.status, ps_errname(PS_ENOMEM))) {
        if (!st->unstored++)
            snprintf(st->unstored_first, sizeof st->unstored_first, "K=%d M=%d %s %s %s: %s",
                     j->run.K, j->run.M, j->run.schedule, j->run.remat, j->run.strategy,
                     j->run.message);
        ana_sweep_job_release(j);
        return 0;
    }
    int rc = ana_db_insert(db, &j->run, sp->command ? sp->command : "");
    if (rc < 0)
        return rc;
    if (rc == 1) { /* another sweep stored it first: its row stands */
        st->raced++;
    } else {
        st->done++;
        st->failed += strcmp(j->run.status, "ok") != 0;
    }
    ana_sweep_job_release(j);
    return 0;
}

/* A replica count with which no K of the list fits the devices would only
 * store failures: a usage error, before the database is touched. */
static int check_replicas(const struct ana_sweep_spec *sp)
{
    long kmin = 0;
    for (int k = 0; k < sp->nK; k++)
        if (!kmin || sp->Ks[k] < kmin)
            kmin = sp->Ks[k];
    for (int i = 0; sp->replicas && i < sp->nreplica; i++) {
        long R = sp->replicas[i];
        if (R < 1)
            return ps_error(PS_EUSAGE, "--replicas must be >= 1, got %ld", R);
        if (kmin && R > 1 && kmin * R > sp->topo->n_devices)
            return ps_error(PS_EUSAGE, "--replicas %ld: even the smallest -K %ld needs %ld "
                             "devices (K x replicas), topology %s has %d", R, kmin, kmin * R,
                             sp->topo->path, sp->topo->n_devices);
    }
    return 0;
}

int ana_sweep_check_env(void)
{
    struct ps_mem_avail a;
    return ps_mem_available(&a);
}

void ana_sweep_begin(const struct ana_sweep_spec *sp)
{
    atomic_store(&stop_flag, 0);
    atomic_store(&stop_sig, 0);
    if (sp->handle_signals)
        signals_install(sp->quiet ? NULL : sp->progress ?
                        "\nsweep: stopping after the running configurations (a second signal "
                        "stops at once)\n" :
                        "sweep: stopping after the running configurations (a second signal "
                        "stops at once)\n");
}

int ana_sweep_prepare(const struct ana_sweep_spec *sp, const char *db_path, ana_db **db,
                      struct ana_sweep_job **jobs, int *n, struct ana_sweep_stats *st)
{
    *db = NULL;
    *jobs = NULL;
    *n = 0;
    int rc;
    if ((rc = check_grid(sp)) < 0 || (rc = check_replicas(sp)) < 0 ||
        (rc = ana_sweep_check_env()) < 0 || (rc = ana_db_open(db_path, 1, db)) < 0)
        return rc;
    ana_db_stop_on(*db, &stop_flag); /* a stop ends a commit's wait for readers */
    if ((rc = plan(sp, *db, jobs, n, st)) < 0 || (rc = baselines(sp, *jobs, *n)) < 0) {
        ana_db_close(*db);
        *db = NULL;
        free(*jobs);
        *jobs = NULL;
        *n = 0;
    }
    return rc;
}

int ana_sweep_pool(const struct ana_sweep_spec *sp, ana_db *db, struct ana_sweep_job *jobs,
                   int n, int shard, int nshards, struct ana_sweep_stats *st)
{
    struct pool p = { .sp = sp, .jobs = jobs, .n = n, .next = shard, .step = nshards };
    pthread_t *th = NULL;
    int started = 0, rc = 0, mine = shard < n ? (n - shard + nshards - 1) / nshards : 0;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = sp->jobs > 0 ? sp->jobs : (nproc > 0 ? (int)nproc : 1);
    if (nt > mine)
        nt = mine;
    if (!(p.ready = malloc(sizeof *p.ready * (size_t)(n ? n : 1))) ||
        !(th = malloc(sizeof *th * (size_t)(nt ? nt : 1)))) {
        free(p.ready);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    double t0 = now();
    for (; started < nt; started++) {
        pthread_mutex_lock(&p.mu);
        p.running++;
        pthread_mutex_unlock(&p.mu);
        int terr = pthread_create(&th[started], NULL, worker, &p);
        if (terr != 0) {
            pthread_mutex_lock(&p.mu);
            p.running--;
            pthread_mutex_unlock(&p.mu);
            if (!started) { /* no memory for a thread's stack, as plan --jobs says it */
                rc = ps_error(terr == EAGAIN || terr == ENOMEM ? PS_ENOMEM : PS_ERUNTIME,
                              "cannot start sweep worker threads: %s", strerror(terr));
                goto out;
            }
            break; /* fewer workers than asked */
        }
    }
    rc = drain(&p, db, st, t0, mine);
    if (rc < 0) { /* stop the workers, then wait for them */
        pthread_mutex_lock(&p.mu);
        p.abort = 1;
        while (p.running > 0)
            pthread_cond_wait(&p.cv, &p.mu);
        pthread_mutex_unlock(&p.mu);
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (sp->progress && mine)
        progress(st->done + st->raced, mine, t0, 1);
out:
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
    free(p.ready);
    free(th);
    return rc;
}

int ana_sweep_end(const struct ana_sweep_spec *sp, const char *db_path, int rc, ana_db *db,
                  struct ana_sweep_job *jobs, int n, const struct ana_sweep_stats *st,
                  struct ana_sweep_stats *stats)
{
    if (rc == 0 && st->done + st->raced + st->unstored < n)
        rc = ps_error(PS_EINTR, "interrupted by %s: %d of %d configuration%s stored in %s "
                       "(%d were there already); run the same command again to resume",
                       signal_name(atomic_load(&stop_sig)), st->done, n, n == 1 ? "" : "s",
                       db_path, st->skipped + st->raced);
    else if (rc == 0 && st->unstored)
        rc = ps_error(PS_ENOMEM, "%d of %d configuration%s did not fit this machine's memory "
                      "at the time and %s not stored (first, %s); %d stored in %s; run the same "
                      "command again to retry %s", st->unstored, n, n == 1 ? "" : "s",
                      st->unstored == 1 ? "was" : "were", st->unstored_first,
                      st->done + st->raced, db_path, st->unstored == 1 ? "it" : "them");
    if (sp->handle_signals)
        signals_restore();
    for (int i = 0; jobs && i < n; i++)
        ana_sweep_job_release(&jobs[i]);
    free(jobs);
    ana_db_close(db);
    if (rc == 0 && !sp->quiet) {
        fprintf(stderr, "sweep: %d configuration%s: %d simulated (%d could not run), %d "
                "already in ", st->total, st->total == 1 ? "" : "s", st->done, st->failed,
                st->skipped + st->raced);
        ps_put_printable(stderr, db_path, -1); /* one line (helper-125) */
        fputc('\n', stderr);
    }
    if (stats)
        *stats = *st;
    return rc;
}

int ana_sweep_run(const struct ana_sweep_spec *sp, const char *db_path,
                  struct ana_sweep_stats *stats)
{
    struct ana_sweep_stats st = { 0 };
    ana_db *db = NULL;
    struct job *jobs = NULL;
    int n = 0;
    ana_sweep_begin(sp);
    int rc = ana_sweep_prepare(sp, db_path, &db, &jobs, &n, &st);
    if (rc == 0)
        rc = ana_sweep_pool(sp, db, jobs, n, 0, 1, &st);
    return ana_sweep_end(sp, db_path, rc, db, jobs, n, &st, stats);
}
