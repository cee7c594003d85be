/*
 * ana_sweep_mpi: `mpirun -np P pipesim sweep ...` (see ana_sweep.h). Rank
 * 0 opens the database and finds what it lacks, as one process does, and
 * sends that job list (with the baselines) to every rank; rank r runs the
 * jobs i with i % P == r on its own threads. Rank 0 stores its rows as
 * they finish, then each other rank's, so the database holds exactly the
 * rows one process stores (ids and times aside). A signal to the ranks
 * stops each after its running configurations; the rows finished anywhere
 * are stored and the sweep says how to resume (Open MPI's mpirun answers
 * its own SIGINT by killing the ranks: then only what rank 0 stored stays). Without an MPI
 * launcher (or built without MPI) it is ana_sweep_run.
 * Before any work every rank's --model and --topology are checked against
 * rank 0's (ana_mpi_same_inputs: a row computed from another file would be
 * stored under rank 0's hashes); then rank 0 alone checks --db and makes its
 * folder (taken away again, while empty, if the sweep fails). An error found
 * alike everywhere prints once, from rank 0 (ps_mpi_agree).
 */
#include "analysis/ana_sweep.h"
#include "analysis/ana_sweep_int.h"
#include "analysis/ana_mpi.h"
#include "analysis/ana_dbkind.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PIPESIM_MPI
#include <mpi.h>
#endif

#ifdef PIPESIM_MPI
enum { TAG_COUNT = 21, TAG_ROW, TAG_STAGES, TAG_PARTITION };

/* Rank r > 0: its finished rows to rank 0 (count, then each row, its stages
 * and its partition's length and text: the row's pointers are this rank's,
 * rank 0 puts back its own model and topology). */
static void send_rows(struct ana_sweep_job *jobs, int n, int rank, int size)
{
    int k = 0;
    for (int i = rank; i < n; i += size)
        k += jobs[i].ran;
    MPI_Send(&k, 1, MPI_INT, 0, TAG_COUNT, MPI_COMM_WORLD);
    for (int i = rank; i < n; i += size) {
        if (!jobs[i].ran)
            continue;
        struct ana_sweep_job j = jobs[i];
        int idx = i;
        j.run.stages = NULL;
        j.run.partition = NULL;
        j.run.model = j.run.topology = NULL;
        const char *part = jobs[i].run.partition ? jobs[i].run.partition : "";
        int plen = (int)strlen(part) + 1;
        MPI_Send(&idx, 1, MPI_INT, 0, TAG_ROW, MPI_COMM_WORLD);
        MPI_Send(&j, (int)sizeof j, MPI_BYTE, 0, TAG_ROW, MPI_COMM_WORLD);
        MPI_Send(jobs[i].run.stages, (int)(sizeof *jobs[i].run.stages * (size_t)j.run.n_stages),
                 MPI_BYTE, 0, TAG_STAGES, MPI_COMM_WORLD);
        MPI_Send(&plen, 1, MPI_INT, 0, TAG_PARTITION, MPI_COMM_WORLD);
        MPI_Send(part, plen, MPI_CHAR, 0, TAG_PARTITION, MPI_COMM_WORLD);
    }
}

/* Rank 0: every other rank's rows into the database, committed every 16. */
static int store_rows(const struct ana_sweep_spec *sp, ana_db *db, struct ana_sweep_job *jobs,
                      int n, int size, struct ana_sweep_stats *st)
{
    int rc = ana_db_begin(db), pending = 0;
    for (int r = 1; r < size; r++) {
        int k = 0;
        MPI_Recv(&k, 1, MPI_INT, r, TAG_COUNT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int e = 0; e < k; e++) {
            int idx;
            struct ana_sweep_job j;
            MPI_Recv(&idx, 1, MPI_INT, r, TAG_ROW, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&j, (int)sizeof j, MPI_BYTE, r, TAG_ROW, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (idx < 0 || idx >= n || j.run.n_stages < 0)
                PS_BUG("MPI sweep: rank %d sent row %d of %d", r, idx, n);
            j.run.stages = calloc((size_t)(j.run.n_stages ? j.run.n_stages : 1),
                                  sizeof *j.run.stages);
            if (!j.run.stages) /* the other ranks are blocked sending: abort them */
                MPI_Abort(MPI_COMM_WORLD, ps_exit_status(PS_ENOMEM));
            MPI_Recv(j.run.stages, (int)(sizeof *j.run.stages * (size_t)j.run.n_stages),
                     MPI_BYTE, r, TAG_STAGES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int plen = 0;
            MPI_Recv(&plen, 1, MPI_INT, r, TAG_PARTITION, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (plen < 1)
                PS_BUG("MPI sweep: rank %d sent a partition of %d bytes", r, plen);
            if (!(j.run.partition = malloc((size_t)plen)))
                MPI_Abort(MPI_COMM_WORLD, ps_exit_status(PS_ENOMEM));
            MPI_Recv(j.run.partition, plen, MPI_CHAR, r, TAG_PARTITION, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            j.run.partition[plen - 1] = 0;
            j.run.model = jobs[idx].run.model; /* rank 0's key, the one stored */
            j.run.topology = jobs[idx].run.topology;
            jobs[idx] = j;
            if (rc < 0) /* keep receiving, so no rank blocks */
                continue;
            rc = ana_sweep_store(sp, db, &jobs[idx], st);
            if (rc == 0 && ++pending >= 16 && (rc = ana_db_commit(db)) == 0)
                rc = ana_db_begin(db), pending = 0;
        }
    }
    int c = ana_db_commit(db);
    return rc < 0 ? rc : c;
}
#endif

int ana_sweep_run_mpi(const struct ana_sweep_spec *sp, const char *db_path,
                      struct ana_sweep_stats *stats, int *root)
{
    *root = 1;
#ifndef PIPESIM_MPI
    return ana_sweep_run(sp, db_path, stats);
#else
    if (!ana_mpi_launched())
        return ana_sweep_run(sp, db_path, stats);
    int rank = 0, size = 1, n = 0, rc = ana_mpi_start(&rank, &size);
    if (rc < 0)
        return rc;
    *root = rank == 0;
    struct ana_sweep_stats st = { 0 };
    ana_db *db = NULL;
    struct ana_sweep_job *jobs = NULL;
    struct ps_made made = { 0 };
    if ((rc = ana_mpi_same_inputs(sp->model_arg, sp->profile, sp->topo_arg, sp->topo, NULL,
                                  NULL)) < 0)
        return ps_mpi_finalize(rc, "sweep");
    /* each rank's own environment: a malformed PIPESIM_MEMORY_LIMIT anywhere is
     * refused before any work, not stored as the outcome of its configurations */
    if ((rc = ps_mpi_agree(ana_sweep_check_env())) < 0)
        return ps_mpi_finalize(rc, "sweep");
    /* the signal's notice from rank 0 alone (helper-121: one line per rank) */
    struct ana_sweep_spec own = *sp;
    own.quiet |= rank != 0;
    ana_sweep_begin(&own);
    /* rank 0 alone writes --db: it alone checks the path and makes its folder
     * (cmd_sweep leaves both to it) */
    if (rank == 0 && (rc = ana_db_path_check(db_path, "--db", 1)) == 0 &&
        (rc = ps_io_output(db_path, "--db")) == 0 &&
        (rc = ps_mkdirs_parent_made(db_path, &made)) == 0)
        rc = ana_sweep_prepare(sp, db_path, &db, &jobs, &n, &st);
    /* rank 0's error once, or the job list to every rank */
    if ((rc = ps_mpi_agree(rc)) < 0)
        goto out;
    int head[3] = { n, st.total, st.skipped };
    MPI_Bcast(head, 3, MPI_INT, 0, MPI_COMM_WORLD);
    n = head[0];
    st.total = head[1];
    st.skipped = head[2];
    if (rank && !(jobs = calloc((size_t)(n ? n : 1), sizeof *jobs)))
        MPI_Abort(MPI_COMM_WORLD, ps_exit_status(PS_ENOMEM));
    for (int i = 0; i < n; i++) { /* a row each: the list may pass INT_MAX bytes */
        MPI_Bcast(&jobs[i], (int)sizeof *jobs, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank) { /* rank 0's pointers: this rank's own names (the same inputs) */
            jobs[i].run.model = sp->model_arg;
            jobs[i].run.topology = sp->topo_arg;
        }
    }
    struct ana_sweep_spec local = *sp;
    if (rank)
        local.progress = 0; /* rank 0's bar is the sweep's */
    rc = ana_sweep_pool(&local, rank ? NULL : db, jobs, n, rank, size, &st);
    if (rc < 0) { /* this rank's own failure ends the sweep for all: said first (a
                   * database error on rank 0 ended it with no line: helper-99) */
        if (rank)
            fprintf(stderr, "pipesim sweep: rank %d: %s\n", rank, ps_errmsg());
        else
            fprintf(stderr, "pipesim sweep: %s\n", ps_errmsg());
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, ps_exit_status(-rc));
    }
    if (rank) {
        send_rows(jobs, n, rank, size);
    } else {
        rc = store_rows(sp, db, jobs, n, size, &st);
    }
out:
    if (rank) {
        for (int i = 0; jobs && i < n; i++)
            ana_sweep_job_release(&jobs[i]);
        free(jobs);
        if (sp->handle_signals)
            ana_sweep_end(&(struct ana_sweep_spec){ .handle_signals = 1, .quiet = 1 },
                          db_path, rc < 0 ? rc : 0, NULL, NULL, 0, &st, stats);
    } else {
        rc = ana_sweep_end(sp, db_path, rc, db, jobs, n, &st, stats);
        if (rc < 0) /* its folders, while empty: the database was not made */
            ps_made_undo(&made);
        else
            ps_made_keep(&made);
    }
    return ps_mpi_finalize(rc, "sweep");
#endif
}
