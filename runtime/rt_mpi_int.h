/*
 * rt_mpi_int — state shared by rt_mpi.c (setup, clocks, steps, gathers) and
 * rt_mpi_replay.c (one rank replaying its device's list with MPI
 * transfers). Only compiled with MPI; not for use outside runtime/.
 */
#ifndef RT_MPI_INT_H
#define RT_MPI_INT_H

#ifdef PIPESIM_MPI
#include <mpi.h>

#include "runtime/rt_mpi.h"
#include "runtime/rt_pipe_int.h"

struct rt_mpi {
    rt_pipe *p;
    struct rt_worker *w;    /* p->w[rank]: this rank's ledger, workspace, records */
    int rank, size;
    int64_t off;            /* this rank's clock minus rank 0's, ns */
    int64_t skew;           /* half the best round trip: the offset's error bound */
    uint8_t **slot;         /* [n_ops of this device]: send slot of each send op */
    MPI_Request *req;       /* [n_ops]: its pending MPI_Isend */
    uint8_t *stage;         /* receive staging buffer, largest message */
};

/* Slot buffers for this rank's sends and the receive staging buffer. */
int rt_mpi_buffers(struct rt_mpi *x);
void rt_mpi_buffers_free(struct rt_mpi *x);
/* Replays this rank's list once (the caller reset the step); waits for its
 * sends to complete. */
int rt_mpi_replay(struct rt_mpi *x, const struct rt_data *data);

#endif
#endif
