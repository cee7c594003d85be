/*
 * ana_mpi — what the MPI forms of plan and sweep (ana_plan_mpi.c,
 * ana_sweep_mpi.c) share: whether an MPI launcher started this process
 * with more than one rank, MPI's start-up, and the check that every rank
 * loaded the same inputs as rank 0.
 */
#ifndef ANA_MPI_H
#define ANA_MPI_H

#include "models/mdl_profile.h"
#include "models/mdl_topology.h"

/* 1 when this build has MPI and OMPI_COMM_WORLD_SIZE, PMI_SIZE or
 * PMIX_SIZE says more than one rank, else 0 (a plain run, mpirun -np 1, or
 * a build without MPI: then each process runs alone). */
int ana_mpi_launched(void);
/* 1 unless ana_mpi_launched and the launcher's rank (OMPI_COMM_WORLD_RANK,
 * PMI_RANK or PMIX_RANK) is not 0: whether this process writes the outputs,
 * known before MPI starts, so that only rank 0 checks them (helper-121: every
 * rank checked rank 0's paths from its own folder, and failed the run). */
int ana_mpi_writer(void);
/* rc, a refusal rank 0 found alone before MPI started (its outputs, which
 * only it checks): under mpirun (ana_mpi_launched) it prints "pipesim cmd:
 * message" and stops every rank with MPI_Abort, exit ps_exit_status(rc), so
 * that none waits for it in MPI_Init under a launcher that does not end a
 * job when one rank exits (helper-123: srun without --kill-on-bad-exit). A
 * plain run: returns rc. */
int ana_mpi_refuse(int rc, const char *cmd);
/* The same for a failure any rank may find alone, before MPI starts (its own
 * --model or --topology, which each rank loads from its own file system):
 * the message names the rank ("rank 1: m.csv: cannot open ..."), and every
 * rank stops (helper-141: the rank that failed exited, and under a launcher
 * that does not end the job the others waited in MPI forever). */
int ana_mpi_refuse_rank(int rc, const char *cmd);

#ifdef PIPESIM_MPI
/* MPI_Init unless done already, then this rank and the world's size.
 * PS_ERUNTIME "MPI_Init failed". */
int ana_mpi_start(int *rank, int *size);

/* Each rank loads --model and --topology from its own file system (a
 * relative path from another folder, a stale copy on another machine):
 * before any work every rank hashes what it loaded as the databases store
 * it (ana_db_input_hash: model_hash, topology_hash; arg NULL: the loaded
 * one's path) and, when options is not NULL, the text of the options that
 * change its results (what: their names), and compares them with rank 0's
 * (ps_mpi_same_inputs: PS_EINVAL on rank 0, "--model m.csv: rank 1 loaded
 * another file than rank 0 (hash X vs Y)", the others silenced; a rank's
 * own failure to hash is agreed as ps_mpi_agree does). 0 when every rank
 * agrees. Collective. Cost: hashing the inputs, one small gather. */
int ana_mpi_same_inputs(const char *model_arg, const struct mdl_profile *prof,
                        const char *topo_arg, const struct mdl_topology *topo,
                        const char *options, const char *what);
#endif

#endif
