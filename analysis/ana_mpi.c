/* ana_mpi: see ana_mpi.h. */
#include "analysis/ana_mpi.h"
#include "analysis/ana_db.h"
#include "base/ps_error.h"
#include "base/ps_mpi.h"

#include <stdio.h>
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

/* The launcher's rank of this process, -1 when it names none. */
static int launcher_rank(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}

int ana_mpi_writer(void)
{
    if (!ana_mpi_launched())
        return 1;
    int r = launcher_rank();
    return r < 0 || r == 0; /* a launcher that names no rank: every process checks */
}

int ana_mpi_refuse_rank(int rc, const char *cmd)
{
    if (rc >= 0 || !ana_mpi_launched())
        return rc;
    int r = launcher_rank();
    if (r >= 0) {
        char m[PS_ERRMSG_MAX];
        snprintf(m, sizeof m, "%s", ps_errmsg());
        ps_error(-rc, "rank %d: %s", r, m);
    }
    return ana_mpi_refuse(rc, cmd);
}

int ana_mpi_refuse(int rc, const char *cmd)
{
#ifdef PIPESIM_MPI
    if (rc >= 0 || !ana_mpi_launched())
        return rc;
    fprintf(stderr, "pipesim %s: %s\n", cmd, ps_errmsg());
    fflush(stderr);
    int inited = 0;
    MPI_Initialized(&inited);
    if (inited || MPI_Init(NULL, NULL) == MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, ps_exit_status(rc));
#else
    (void)cmd;
#endif
    return rc;
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

int ana_mpi_same_inputs(const char *model_arg, const struct mdl_profile *prof,
                        const char *topo_arg, const struct mdl_topology *topo,
                        const char *options, const char *what)
{
    const char *model = model_arg ? model_arg : prof->path;
    const char *tp = topo_arg ? topo_arg : topo->path;
    char name[2][600];
    snprintf(name[0], sizeof name[0], "--model %s", model);
    snprintf(name[1], sizeof name[1], "--topology %s", tp);
    struct ps_mpi_input in[3] = { { .name = name[0] }, { .name = name[1] },
                                  { .name = what, .given = 1 } };
    int rc;
    if ((rc = ana_db_input_hash(MDL_PRESET_PROFILE, model, prof, in[0].hex)) == 0 &&
        (rc = ana_db_input_hash(MDL_PRESET_TOPOLOGY, tp, NULL, in[1].hex)) == 0 && options)
        ps_mpi_hash_text(options, in[2].hex);
    if ((rc = ps_mpi_agree(rc)) < 0)
        return rc;
    return ps_mpi_same_inputs(in, 3);
}
#endif
