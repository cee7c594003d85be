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

/* An input every rank loads on its own (a file named on the command line:
 * a relative path read from another folder, a stale copy on another
 * machine) or the options that change the results, and its hash there. */
struct ps_mpi_input {
    const char *name;   /* "--model m.csv" (rank 0's is printed) */
    int given;          /* 1: options given, not a file loaded */
    char hex[17];       /* this rank's hash ("": not compared) */
};
/* Every rank's hashes against rank 0's, before any work: one that differs
 * stops the run on every rank, PS_EINVAL on rank 0 naming each input and
 * the ranks ("--model m.csv: rank 1 loaded another file than rank 0 (hash
 * X vs Y)"; options: "... was given other values than rank 0"), the same
 * code silenced on the others (as ps_mpi_agree); 0 when all agree. n and
 * the order of the inputs alike on every rank. Collective. Cost: one
 * gather of 17 bytes per input and rank. */
int ps_mpi_same_inputs(const struct ps_mpi_input *in, int n);
/* FNV-1a of text as 16 hex digits, for options compared as an input. */
void ps_mpi_hash_text(const char *text, char hex[17]);
#endif

#endif
