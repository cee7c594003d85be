/*
 * ana_sweep_int — the sweep's pieces, for its MPI form (ana_sweep_mpi.c):
 * begin (the stop signals), prepare (the database opened, the grid minus
 * what it holds, the baselines), the pool over one shard of the jobs (rows
 * stored as they finish, or, with db NULL, kept in the jobs for rank 0),
 * store (one kept row into the database) and end (the interrupt message,
 * the summary line, everything freed). ana_sweep_run is begin, prepare,
 * pool over every job, end.
 */
#ifndef ANA_SWEEP_INT_H
#define ANA_SWEEP_INT_H

#include "analysis/ana_db.h"
#include "analysis/ana_sweep.h"

struct ana_sweep_job {
    struct ana_run run;
    enum sch_remat remat;
    enum sch_part_strategy strategy;
    double baseline_s;
    int ran;              /* run_job done: run holds its row */
};

void ana_sweep_begin(const struct ana_sweep_spec *sp);
/* The environment a configuration's outcome must not depend on, checked
 * once before any work: PIPESIM_MEMORY_LIMIT malformed is PS_EUSAGE (as
 * predict says it), where each configuration read it on its own and the
 * sweep stored the error as that configuration's, never retried. Part of
 * prepare; under MPI every rank's own. */
int ana_sweep_check_env(void);
int ana_sweep_prepare(const struct ana_sweep_spec *sp, const char *db_path, ana_db **db,
                      struct ana_sweep_job **jobs, int *n, struct ana_sweep_stats *st);
/* Runs jobs shard, shard + nshards, ... (0 <= shard < nshards). */
int ana_sweep_pool(const struct ana_sweep_spec *sp, ana_db *db, struct ana_sweep_job *jobs,
                   int n, int shard, int nshards, struct ana_sweep_stats *st);
/* Frees j's stages and partition (NULL after). */
void ana_sweep_job_release(struct ana_sweep_job *j);
/* Inserts j's row (inside the caller's transaction), counts it in st and
 * frees its stages and partition. */
int ana_sweep_store(const struct ana_sweep_spec *sp, ana_db *db, struct ana_sweep_job *j,
                    struct ana_sweep_stats *st);
/* PS_EINTR when fewer than n rows were stored; frees jobs, closes db. */
int ana_sweep_end(const struct ana_sweep_spec *sp, const char *db_path, int rc, ana_db *db,
                  struct ana_sweep_job *jobs, int n, const struct ana_sweep_stats *st,
                  struct ana_sweep_stats *stats);

#endif
