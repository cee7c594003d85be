/*
 * trc_chakra — simulated schedules as Chakra execution traces (MLCommons
 * Chakra, schema ChakraProtoMsg in et_def.proto), one file per rank.
 *
 * File format (protobuf wire format, written by the small encoder in
 * trc_chakra.c, no protobuf library): a stream of messages each preceded by
 * its byte length as a varint; first a GlobalMetadata (version "0.0.4" and
 * pipesim_* attributes: schedule, K, M, replicas, batch, remat, rank,
 * n_ranks), then one Node per op of the rank's op list, in list order.
 *
 * Ranks: replica r's device d is rank r * D + d (D = schedule devices, R =
 * replicas). Replicas are symmetric, so every replica gets replica 0's
 * simulated times (the engine simulates replica 0 only).
 *
 * Node, per op at list position i (id = i):
 *   name      "s<stage>:<label>" (s1:F3, s0:sendF3, s2:AR, s2:U)
 *   type      COMP_NODE for F, B, R, W, U; COMM_SEND_NODE / COMM_RECV_NODE
 *             for transfers; COMM_COLL_NODE for the all-reduce AR
 *   start_time_micros, duration_micros   simulated, rounded to microseconds
 *   ctrl_deps the previous op of the same stream (compute, send or receive)
 *             in the rank's list: the engine runs its two streams (compute
 *             with the receives, and send) in list order and concurrently;
 *             a receive's span starts with its transfer, which may begin
 *             before the receive it follows ends: the chain orders when
 *             receives complete
 *   data_deps the ops sch_schedule_deps names that live on the same rank;
 *             U and AR also on every B (W when split) of their stage.
 *             Cross-rank dependencies are the send/recv pairs
 *   attr      is_cpu_op (bool, false); pipesim_kind (string), pipesim_stage,
 *             pipesim_mb, pipesim_start_ns, pipesim_duration_ns (int64: exact
 *             simulated time, as the simulated trace records it: a
 *             send's is the time its bytes hold the route, the receiver
 *             has them the route's latency later; with host-driven
 *             messages (a topology device's "messages") a send and a
 *             receive whose device copies them span that copy too, as the
 *             runtime's workers record theirs (sim/sim_engine.h), and
 *             pipesim_copy_ns (int64) gives the copy; F and B are their
 *             own time either way);
 *             transfers: comm_src, comm_dst, comm_tag (int32),
 *             comm_size (int64 bytes); AR: comm_type (int64 ALL_REDUCE = 0),
 *             comm_size (the stage's gradient bytes: the memory policy's
 *             per parameter, 4 without one), pg_name (d + 1, the number of
 *             the communicator group of device d's replicas).
 * comm_tag pairs a send with its receive (sch_op_tag, as the MPI runtime
 * tags its messages): 2 (s M + m) + g for the transfer
 * sent by stage s for micro-batch m, g = 0 activations, 1 gradients.
 *
 * Ownership: borrows everything. Cost: O(ops x replicas) time, one rank's
 * nodes in memory at a time; all files are written to temporaries and
 * renamed only when every rank succeeded, and an earlier, larger export's
 * further ranks removed with signals held, so a signal leaves one set.
 */
#ifndef TRC_CHAKRA_H
#define TRC_CHAKRA_H

#include "sched/sch_cost.h"
#include "sched/sch_schedule.h"
#include "traces/trc_trace.h"

/* Chakra NodeType and CollectiveCommType values used here. */
enum { TRC_CHAKRA_COMP = 4, TRC_CHAKRA_SEND = 5, TRC_CHAKRA_RECV = 6, TRC_CHAKRA_COLL = 7 };
enum { TRC_CHAKRA_ALL_REDUCE = 0 };

struct trc_chakra_opts {
    const char *dir;         /* output directory (created if missing) */
    const char *prefix;      /* file names <dir>/<prefix>.<rank>.et; NULL = "pipesim" */
    double batch;            /* for the metadata */
    int *stale;              /* NULL, or gets the number of <prefix>.<rank>.et files of
                                ranks from *n_files up (an earlier, larger export) removed */
};

/* Before the work: the outputs of an export of n_ranks ranks (with their
 * communicator groups when groups) can be written: at most 4096 ranks, the
 * folder a folder or creatable, no rank an input and no two ranks one file
 * (symbolic links). Creates nothing. 0, or the error trc_chakra_write would
 * give after the simulation. */
int trc_chakra_check(const struct trc_chakra_opts *o, int n_ranks, int groups);
/* Writes one file per rank of s (with s->n_replicas replicas) from the
 * simulated trace t of replica 0; c gives the all-reduce sizes. *n_files
 * gets the number of ranks written. The files of ranks n_files, n_files + 1,
 * ... up to the first missing one (an earlier export with more ranks) are
 * removed once the new ones are in place. */
int trc_chakra_write(const struct sch_schedule *s, const struct sch_costs *c,
                     const struct trc_trace *t, const struct trc_chakra_opts *o,
                     int *n_files);

#endif
