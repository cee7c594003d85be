/* ps_mpi: see ps_mpi.h. */
#include "base/ps_mpi.h"

#ifdef PIPESIM_MPI
#include "base/ps_error.h"

#include <mpi.h>
#include <stdio.h>

int ps_mpi_agree(int rc)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = rc < 0 ? rank : size, first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first >= size)
        return 0;
    /* collectives only: a message with a tag could meet one the caller left
     * in flight */
    char msg[PS_ERRMSG_MAX] = "";
    int code = rc < 0 ? -rc : 0;
    if (rank == first)
        snprintf(msg, sizeof msg, "%s", ps_errmsg());
    MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD);
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD);
    if (rank != 0)
        return ps_error_silent(code);
    if (first == 0)
        return rc;
    return ps_error(code, "rank %d: %s", first, msg);
}

int ps_mpi_finalize(int rc, const char *cmd)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && rc < 0 && !ps_error_silenced()) {
        fprintf(stderr, "pipesim %s: %s\n", cmd, ps_errmsg());
        fflush(stderr);
        rc = ps_error_silent(rc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
#else
typedef int ps_mpi_unused; /* ISO C: no empty translation unit */
#endif
