/*
 * ana_db_int — what the files of the sweep results database share
 * (analysis/ana_db.h): not a public interface.
 *   ana_db.c        the file: schema, version checks and upgrade, open and
 *                   close, transactions and the commit that waits for readers
 *   ana_db_rows.c   the rows: a run looked up, stored and loaded with its
 *                   stages, the key order and the hashes stored beside inputs
 * Ownership: a struct ana_db owns its connection, path and statements
 * (ana_db_close).
 */
#ifndef ANA_DB_INT_H
#define ANA_DB_INT_H

#include "analysis/ana_db.h"

#include <sqlite3.h>
#include <stdatomic.h>

struct ana_db {
    sqlite3 *db;
    char *path;
    sqlite3_int64 version;   /* the file's schema version, once checked */
    sqlite3_stmt *ins_run, *ins_stage, *has;
    const atomic_int *stop;  /* set: a commit waiting for readers gives up */
    int stopped;             /* the last commit gave up for it */
    sqlite3_int64 changes;   /* rows changed before ana_db_begin's transaction */
};

/* The key of the current schema, and of version 1 (R: "1 AS replicas", as
 * it has no replicas column), in the order of the UNIQUE constraint. */
#define KEY_COLS_OF(R)                                                                     \
    "model, model_hash, topology, topology_hash, schedule, K, M, batch, " R ", remat, strategy"
#define KEY_COLS KEY_COLS_OF("replicas")

#endif
