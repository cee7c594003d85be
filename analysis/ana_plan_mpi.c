/*
 * ana_plan_mpi: `mpirun -np P pipesim plan ...` (see ana_plan.h). Rank r
 * searches shard r of P (ana_plan_shard_of) with its own bounds (what
 * a rank has found is a subset of what one process finds, so it prunes
 * less, never a configuration one process would keep); rank 0 gathers
 * every rank's configurations and ranks the union exactly as one process
 * does. Without an MPI launcher (or built without MPI) it is ana_plan_run.
 * Before the search every rank's --model and --topology, and the options
 * that change the search, are checked against rank 0's (ana_mpi_same_inputs:
 * a rank that loaded another file would rank configurations of another
 * model); an error found alike everywhere prints once, from rank 0, and a
 * rank's own failure is named by rank 0 (ps_mpi_agree).
 */
#include "analysis/ana_plan.h"
#include "analysis/ana_mpi.h"
#include "base/ps_error.h"
#include "base/ps_mpi.h"
#include "base/ps_strbuf.h"

#include <stdlib.h>
#include <string.h>

#ifdef PIPESIM_MPI
#include <mpi.h>

/* The options that change what a rank searches, as text to hash. */
static int search_options(const struct ana_plan_spec *sp, struct ps_strbuf *b)
{
    ps_strbuf_printf(b, "%d %ld %d %.17g %d %d %d %d", sp->devices, sp->batch, sp->cap_mode,
                     sp->cap, sp->top, (int)sp->objective, sp->frontier_found, sp->brute_force);
    for (int i = 0; sp->schedules && i < sp->nsched; i++)
        ps_strbuf_printf(b, " s:%s", sp->schedules[i]);
    for (int i = 0; sp->remats && i < sp->nremat; i++)
        ps_strbuf_printf(b, " r:%d", (int)sp->remats[i]);
    return ps_strbuf_error(b);
}
#endif

int ana_plan_run_mpi(const struct ana_plan_spec *sp, struct ana_plan **out, int *root)
{
    *root = 1;
#ifndef PIPESIM_MPI
    return ana_plan_run(sp, out);
#else
    if (!ana_mpi_launched())
        return ana_plan_run(sp, out);
    *out = NULL;
    int rank = 0, size = 1, rc = ana_mpi_start(&rank, &size);
    if (rc < 0)
        return rc;
    *root = rank == 0;
    struct ps_strbuf opts = PS_STRBUF_INIT;
    rc = search_options(sp, &opts);
    if ((rc = ps_mpi_agree(rc)) == 0)
        rc = ana_mpi_same_inputs(sp->model_arg, sp->profile, sp->topo_arg, sp->topo,
                                 ps_strbuf_str(&opts), "the search options (--devices, "
                                 "--batch, --mem-cap, --top, --objective, --schedules, "
                                 "--remat, --frontier, --brute-force)");
    ps_strbuf_release(&opts);
    if (rc < 0)
        goto out;
    struct ana_plan_spec s = *sp;
    s.shard = rank;
    s.nshards = size;
    struct ana_plan *p = NULL;
    rc = ana_plan_run(&s, &p);
    /* every rank enumerates alike, so errors are alike too (printed once);
     * but a rank may run out of memory alone: no gather then */
    if ((rc = ps_mpi_agree(rc)) < 0) {
        ana_plan_free(p);
        goto out;
    }
    /* this rank's configurations, then its counters */
    int mine = 0;
    for (int i = 0; i < p->n; i++)
        mine += ana_plan_shard_of(&p->c[i], size) == rank;
    struct ana_plan_cfg *buf = malloc(sizeof *buf * (size_t)(mine ? mine : 1));
    if ((rc = ps_mpi_agree(buf ? 0 : ps_error(PS_ENOMEM, "out of memory gathering the "
                                                "ranks' results"))) < 0) {
        free(buf);
        ana_plan_free(p);
        goto out;
    }
    for (int i = 0, j = 0; i < p->n; i++)
        if (ana_plan_shard_of(&p->c[i], size) == rank)
            buf[j++] = p->c[i];
    int counters[2] = { p->simulated, p->partitions }, sums[2] = { 0, 0 };
    MPI_Reduce(counters, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            int n = 0;
            for (int i = 0; i < p->n; i++)
                n += ana_plan_shard_of(&p->c[i], size) == r;
            struct ana_plan_cfg *in = malloc(sizeof *in * (size_t)(n ? n : 1));
            if (!in) {
                MPI_Abort(MPI_COMM_WORLD, ps_exit_status(PS_ENOMEM));
                return ps_error(PS_ENOMEM, "out of memory");
            }
            MPI_Recv(in, (int)(sizeof *in * (size_t)n), MPI_BYTE, r, 16, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            for (int i = 0, j = 0; i < p->n; i++)
                if (ana_plan_shard_of(&p->c[i], size) == r)
                    p->c[i] = in[j++];
            free(in);
        }
        p->simulated = sums[0];
        p->partitions = sums[1];
        p->spec = *sp; /* one search, as one process's */
        rc = ana_plan_rerank(p);
        if (rc == 0)
            *out = p;
        else
            ana_plan_free(p);
    } else {
        MPI_Send(buf, (int)(sizeof *buf * (size_t)mine), MPI_BYTE, 0, 16, MPI_COMM_WORLD);
        ana_plan_free(p);
    }
    free(buf);
out:
    return ps_mpi_finalize(rc, "plan");
#endif
}
