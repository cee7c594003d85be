/*
 * ana_sweep — every combination of schedule x K x M x batch x replicas x
 * remat x partition strategy, simulated in parallel and stored in the results
 * database (analysis/ana_db.h), one row per configuration. Each row is what
 * ana_predict says of that configuration (replicas: R data-parallel copies
 * of the K-stage pipeline on K x R devices, the batch per replica, the
 * gradient all-reduce simulated; throughput and speedup of all replicas).
 *
 * Workers: a pool of `jobs` pthreads (default: the online CPUs), each taking
 * the next configuration and running the partitioner and ana_predict on it
 * (ps_error messages are thread-local). Results go back to the calling
 * thread through a queue; only it touches SQLite, inside transactions
 * committed every few rows, so an interruption loses no finished row.
 * Resume: configurations already in the database (same inputs and input
 * hashes) are skipped. Interrupt (SIGINT, SIGTERM or SIGHUP with
 * handle_signals, or ana_sweep_interrupt()): no new configuration starts,
 * the running ones finish and are stored, and the sweep returns PS_EINTR
 * with a message naming the signal, the rows kept and how to resume. The
 * first signal puts back the actions the signals had before the sweep (the
 * default, or main's temporary-file cleanup), so a second one stops the
 * process at once; a signal ignored at the start (nohup) stays ignored.
 * A configuration that cannot run (M does not divide the batch, K x replicas
 * above the devices, K above the layers) is stored with its error as status,
 * so it is not retried; a replica count with which not even the smallest K
 * fits the devices is refused before any work (PS_EUSAGE naming it). Rows are keyed and read back sorted: the database contents do not
 * depend on jobs (the row ids and times do).
 *
 * Speedup baseline: ana_predict's (K = 1, M = 1, no remat, same batch; with
 * R replicas one device doing all R batches, R x its step), simulated once
 * per batch size.
 * Cost: one simulation per configuration; O(configurations) rows.
 */
#ifndef ANA_SWEEP_H
#define ANA_SWEEP_H

#include "base/ps_error.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_partitioner.h"
#include "sched/sch_schedule.h"

struct ana_sweep_spec {
    const struct mdl_profile *profile;
    const struct mdl_topology *topo;
    const char *model_arg, *topo_arg;  /* as given: stored, and hashed
                                          (ana_db_input_hash) */
    const char *command;               /* the command line, stored with each row */
    const char *schedule;              /* NULL = "gpipe"; ignored with schedules */
    const char *const *schedules; int nschedule; /* several schedules (NULL: schedule) */
    const long *Ks; int nK;
    const long *Ms; int nM;
    const long *batches; int nbatch;  /* samples per step of each replica */
    const long *replicas; int nreplica; /* data-parallel replicas (NULL: 1 only) */
    const enum sch_remat *remats; int nremat;
    const enum sch_part_strategy *strategies; int nstrategy;
    int jobs;                          /* <= 0: online CPUs */
    int progress;                      /* progress bar with ETA on stderr */
    int quiet;                         /* no summary line either */
    int handle_signals;                /* SIGINT, SIGTERM and SIGHUP interrupt
                                          (the previous actions restored after) */
    /* called on the calling thread after each stored row (NULL ok) */
    void (*on_row)(void *ctx, int stored, int pending);
    /* called on a worker thread before it looks for its next job, with the
     * number of jobs handed out so far (NULL ok); the job is not taken
     * while it runs, so a test can order a signal before a given job */
    void (*before_job)(void *ctx, int taken);
    void *ctx;
};

struct ana_sweep_stats {
    int total;        /* configurations in the grid */
    int skipped;      /* already in the database */
    int done;         /* stored by this run */
    int raced;        /* simulated, but another sweep into the database stored it first */
    int failed;       /* of those, stored with an error status */
    int unstored;     /* simulated, refused by this moment's memory (SIM_ENOMEM): not
                       * stored, so that the next run retries them */
    char unstored_first[PS_ERRMSG_MAX + 128]; /* the first of those and its message */
};

int ana_sweep_run(const struct ana_sweep_spec *sp, const char *db_path,
                  struct ana_sweep_stats *stats);
/* Under `mpirun -np P` (more than one rank; an MPI build): the
 * configurations sharded over the ranks, rank 0 alone writing db_path (it
 * checks the path and makes its folder, which the caller then leaves to
 * it), the same rows one process stores (ana_sweep_mpi.c); first every
 * rank's model and topology against rank 0's (PS_EINVAL, ana_mpi.h). *root: whether this
 * process is rank 0 (1 without MPI), the one to print. Otherwise
 * ana_sweep_run. */
int ana_sweep_run_mpi(const struct ana_sweep_spec *sp, const char *db_path,
                      struct ana_sweep_stats *stats, int *root);
/* Async-signal-safe: asks the running sweep to stop after what is running. */
void ana_sweep_interrupt(void);

#endif
