/*
 * ana_db — the SQLite results database of `pipesim sweep`, read back by
 * `pipesim report` and `pipesim plot`.
 *
 * PRAGMA application_id ANA_DB_APPLICATION_ID (0x50535357, 'PSSW'), schema
 * version 2 (PRAGMA user_version), both set at creation and checked on every
 * open before any work (analysis/ana_dbkind.h: a validation database or
 * another program's file is refused, as is one whose runs and stages
 * tables lack a column of the schema, before anything is written to it;
 * one of the previous release, without application_id, is read as it is
 * and stamped by the next sweep). Version 1
 * (before data-parallel replicas) is read with replicas = 1 for every run;
 * the next sweep into it upgrades it to version 2 in its first transaction
 * (the runs table rebuilt with the replicas column in its key, ids kept, so
 * the stages stay attached), after which older pipesim releases refuse it.
 *   runs    one row per configuration: the inputs (model and topology as
 *           given plus a 64-bit FNV-1a hash of each file, a topology's with
 *           the device presets it takes, or of the profile a generator spec
 *           makes), schedule, K, M, batch (per replica, as
 *           pipesim predict takes it), replicas, remat, partition
 *           strategy; the outputs (partition, step time, throughput, speedup
 *           over one device, simulated and analytic bubble, fits); status
 *           ("ok" or the error name, with its message); the command line,
 *           pipesim version and time of the run. UNIQUE on the input tuple
 *           with the hashes, so a resumed sweep skips what is done.
 *   stages  one row per (run, stage): device, layers, busy fraction,
 *           per-micro-batch fwd/bwd/recompute time, static/activation/peak
 *           memory, capacity, fits.
 * One connection per process, used by one thread. Errors: a name SQLite
 * keeps off disk ("", ":memory:", "file:" URIs) -> PS_EUSAGE; a file that
 * is not SQLite, a database of another kind, schema or version, or one
 * locked by another writer for more than 2 s (a commit waits up to 10
 * minutes: only readers can hold it back), or ana_db_load's row holding
 * a value sweep could not have written (a K beyond -K's range, an infinite
 * throughput, a NULL step time: analysis/ana_db_check.h) -> PS_EDB naming
 * the file (and the table, row and column);
 * a read-only file or a full disk -> PS_EIO, SQLite out of memory ->
 * PS_ENOMEM (base/ps_sqlite.h). A create that fails takes away the file
 * it made (path, or where a dangling link leads) while it is still empty.
 *
 * Ownership: ana_db_open / ana_db_close (NULL ok); ana_db_load allocates the
 * run array and each run's strings (ana_runs_free). Names and partitions
 * are stored and read whole, however long. Cost: insert O(stages), has O(log rows), load
 * O(rows log rows).
 */
#ifndef ANA_DB_H
#define ANA_DB_H

#include "models/mdl_preset.h"
#include "models/mdl_profile.h"
#include <stdint.h>
#include <stdatomic.h>

#include "base/ps_error.h"

#define ANA_DB_SCHEMA 2        /* 2: runs.replicas in the key */
#define ANA_DB_SCHEMA_OLDEST 1 /* the oldest version read (replicas = 1) */
#define ANA_DB_APPLICATION_ID 0x50535357 /* 'PSSW': PipeSim SWeep */
/* The largest K, M, batch and replicas sweep takes (its -K, -M, --batch,
 * --replicas); a stored row beyond them is refused on load (ana_db_check.h). */
#define ANA_DB_K_MAX (1 << 16)
#define ANA_DB_M_MAX (1 << 20)
#define ANA_DB_BATCH_MAX (1LL << 40)
#define ANA_DB_REPLICAS_MAX (1 << 16)

struct ana_run_stage {
    int device, first_layer, n_layers, fits;
    double busy_frac, fwd_s, bwd_s, recomp_s, capacity;
    int64_t static_mem, peak_act, peak_mem;
};

struct ana_run {
    /* key; model and topology as given, whole (never cut: two long paths with
     * the same start were one key): a loaded run owns them (ana_runs_free), a
     * sweep's job points at its spec's */
    const char *model, *topology;
    char model_hash[17], topology_hash[17];
    char schedule[32], remat[16], strategy[24];
    int K, M;
    long batch;                /* per replica */
    int replicas;              /* data-parallel pipelines, >= 1 (K x replicas devices) */
    /* outputs */
    char status[16], message[PS_ERRMSG_MAX];
    char *partition;           /* layers per stage, "3,3,2", whole; owned (malloc: a loaded
                                  run's by ana_runs_free); NULL or "" for a run not ok */
    double micro_batch, step_s, samples_per_s, baseline_step_s, speedup; /* samples/s and
                                  speedup: of all replicas, as ana_predict's; baseline_step_s
                                  one device's step for one replica's batch (speedup =
                                  replicas x baseline_step_s / step_s) */
    double bubble_sim, bubble_analytic;
    int fits;
    int64_t n_ops;
    int n_stages;
    struct ana_run_stage *stages;
};

typedef struct ana_db ana_db;

/* create: make the schema in a new or empty file (or stamp a legacy one),
 * in one transaction; else the file must exist and hold it (opened
 * read-only, a legacy file is read as it is). */
int ana_db_open(const char *path, int create, ana_db **out);
void ana_db_close(ana_db *db);
int ana_db_begin(ana_db *db);
/* COMMIT, waiting up to 10 minutes for readers holding the database; a stop
 * flag given by ana_db_stop_on ends the wait (PS_EINTR: the rows since the
 * last commit are not stored). A transaction that wrote no row is rolled
 * back instead: nothing to wait for. */
int ana_db_commit(ana_db *db);
void ana_db_stop_on(ana_db *db, const atomic_int *stop);
int ana_db_has(ana_db *db, const struct ana_run *key, int *found);
/* 0 stored; 1 when another writer stored the same key meanwhile (a second
 * sweep into the database: its row stands, ours is dropped). */
int ana_db_insert(ana_db *db, const struct ana_run *r, const char *command);
/* All runs in key order (model, its hash, topology, its hash, schedule,
 * remat, strategy, batch, replicas, K, M), stages attached. */
int ana_db_load(ana_db *db, struct ana_run **runs, int *n);
void ana_runs_free(struct ana_run *runs, int n);
/* The hash stored beside an input: FNV-1a of the file's bytes when arg is a
 * readable file or the name of a bundled one of `kind` (its file's bytes;
 * a topology's continued over the devices.json presets it takes,
 * mdl_topology_input_hash in models/mdl_device.h);
 * for a generator spec (kind PROFILE) of the profile it generates as CSV
 * text (mdl_profile_hash), so a changed generator changes it: prof, the
 * one the caller built from arg, or NULL to build it here; else of the
 * text itself. */
int ana_db_input_hash(enum mdl_preset_kind kind, const char *arg,
                      const struct mdl_profile *prof, char hex[17]);
/* -1/0/1 by the key order above. */
int ana_run_cmp(const struct ana_run *a, const struct ana_run *b);

#endif
