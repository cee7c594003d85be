/*
 * ps_mpi — one failure, one line, for every MPI rank (the MPI forms of plan,
 * sweep and validate). Errors found alike on every rank (a bad option, what
 * rank 0 found in the database) would otherwise print once per rank, and a
 * rank that did not fail would add a "see its message" line of its own.
 *
 * ps_mpi_agree, called by every rank after a step each ran on its own,
 * says whether any failed: the first failing rank's code and message go to
 * every rank; rank 0 returns that error (its own message, or "rank r: " and
 * rank r's), every other rank the same code silenced (ps_error_silent), so
 * main prints one line and every rank exits with the same status.
 * Collective over MPI_COMM_WORLD (MPI initialized, not finalized). Cost: one
 * reduction, and on a failure two broadcasts (the second PS_ERRMSG_MAX bytes).
 */
#ifndef PS_MPI_H
#define PS_MPI_H

#ifdef PIPESIM_MPI
/* rc: this rank's result (0, or a negative code after ps_error). Returns 0
 * when every rank's was 0, else the agreed error as above. */
int ps_mpi_agree(int rc);
/* The end of the MPI part of `pipesim cmd`: rank 0 prints its error now,
 * "pipesim <cmd>: <message>" as main would, and returns it silenced; then
 * MPI_Barrier and MPI_Finalize. A rank that exits with a failure makes
 * mpirun kill the others, so rank 0's line must be out before any rank can
 * leave. Returns rc (silenced on rank 0 when printed). Collective. */
int ps_mpi_finalize(int rc, const char *cmd);

#endif

#endif
