/*
 * ana_mpi — what the MPI forms of plan and sweep (ana_plan_mpi.c,
 * ana_sweep_mpi.c) share: whether an MPI launcher started this process
 * with more than one rank, and MPI's start-up.
 */
#ifndef ANA_MPI_H
#define ANA_MPI_H

/* 1 when this build has MPI and OMPI_COMM_WORLD_SIZE, PMI_SIZE or
 * PMIX_SIZE says more than one rank, else 0 (a plain run, mpirun -np 1, or
 * a build without MPI: then each process runs alone). */
int ana_mpi_launched(void);

#ifdef PIPESIM_MPI
/* MPI_Init unless done already, then this rank and the world's size.
 * PS_ERUNTIME "MPI_Init failed". */
int ana_mpi_start(int *rank, int *size);

#endif

#endif
