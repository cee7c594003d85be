/*
 * rt_mpi — the validation runtime's MPI backend: `mpirun -np K pipesim
 * validate --backend mpi ...` runs one pipeline device per rank (rank d
 * replays device d's op list, the same list the thread backend and the
 * simulator replay) with real MPI messages for activations and gradients.
 *
 * Every rank builds the same net, data and stage plans from the same seed
 * (rt_pipe_new), then runs only its own device: compute ops exactly as the
 * thread backend's worker does (rt_stage kernels, every activation buffer
 * through rt_mem in the ledger's order), transfers as MPI messages:
 *   send: copy the output into a per-(boundary, micro-batch) slot buffer
 *         (a link buffer, as the thread backend's channel slots), stamp it
 *         with the send time on rank 0's clock and MPI_Isend it; the op
 *         never blocks and the activation buffer is released at once;
 *   recv: MPI_Recv into a slot buffer, copy into the activation buffer.
 *         Tag = 2 (s M + m) + g for the transfer stage s sends for
 *         micro-batch m (g = 0 activations, 1 gradients).
 * Pending sends complete (MPI_Waitall) at the end of the step.
 *
 * Clocks: before the first step each rank's CLOCK_MONOTONIC offset to rank
 * 0 is estimated by ping-pong (the round trip with the least delay of 16,
 * offset = remote time - midpoint; error at most half that round trip,
 * reported as clock_skew_ns). Trace times are on rank 0's clock, from the
 * earliest rank's step start (after a barrier). A receive is recorded from
 * when both sides were ready (the later of its start and the send's stamp)
 * to the end of its copy, as in the thread backend. Rank 0 gathers every
 * rank's events, memory samples and statistics and writes the same trace
 * format and summary as the thread backend.
 *
 * Errors: configuration errors are found alike on every rank before any
 * message and returned normally, printed once by rank 0 (the other ranks'
 * silenced with the same code: base/ps_mpi.h); an error during a step on one rank (its
 * peers would wait forever) prints that rank's message and calls
 * MPI_Abort with the error's exit status.
 *
 * Built only when pkg-config finds Open MPI (ompi-c) or MPICH (mpich); else
 * rt_mpi_validate says so (PS_EUSAGE). Ownership: everything is the
 * call's own. Cost per step: the kernels, two memcpys and one message per
 * transfer, gathers of O(ops) records to rank 0.
 */
#ifndef RT_MPI_H
#define RT_MPI_H

#include <stdio.h>

#include "runtime/rt_pipe.h"

struct rt_mpi_args {
    const char *spec;          /* net spec */
    struct rt_pipe_config cfg; /* K, M, batch, schedule, remat, partition, lr, no_pin */
    long steps;
    unsigned long seed;
    const char *trace_path, *csv_path, *grads_path; /* written by rank 0; NULL = none */
    /* With any of them (required then), rank 0 calls publish(trace, net, publish_ctx)
     * once the trace (NULL without trace_path and csv_path) and every layer's gradients
     * (in net) are gathered, to write them as one set. */
    int (*publish)(const struct trc_trace *trace, const struct rt_net *net, void *ctx);
    void *publish_ctx;
};

/* 1 if this build has the MPI backend. */
int rt_mpi_available(void);
/* Initializes MPI, runs the steps, finalizes MPI. Needs K ranks. */
int rt_mpi_validate(const struct rt_mpi_args *a);

/* Gradients file ("PSGRADS1", then per layer: int32 kind, in, out; int64
 * count of dw, of db; the float32 arrays), host byte order, to an open stream
 * (one output of a set, cli_write_outputs: either backend writes it after a
 * step, so runs can be compared byte for byte); -PS_EIO "write error" when
 * the stream has one. */
int rt_grads_print(const struct rt_net *net, FILE *f);

#endif
