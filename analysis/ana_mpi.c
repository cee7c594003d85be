/* ana_mpi: see ana_mpi.h. */
#include "analysis/ana_mpi.h"
#include "base/ps_error.h"

#include <stdlib.h>

#ifdef PIPESIM_MPI
#include <mpi.h>
#endif

int ana_mpi_launched(void)
{
#ifdef PIPESIM_MPI
    static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) > 1)
            return 1;
    }
#endif
    return 0; /* without MPI each process runs alone, as without a launcher */
}

#ifdef PIPESIM_MPI
int ana_mpi_start(int *rank, int *size)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return ps_error(PS_ERUNTIME, "MPI_Init failed"); /* main names the command */
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}
#endif
