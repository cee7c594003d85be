/*
 * ps_sqlite — the one SQLite layer of pipesim: a result code as a pipesim
 * error, and the few calls every database module makes (the sweep's
 * analysis/ana_db.c, the kind check analysis/ana_dbkind.c, validate --check's
 * measure/msr_validate_db.c), so all of them report a failure the same way.
 *
 * ps_sqlite_error(db, rc, path, what) formats one message "path: what: why"
 * and returns the negative code:
 *   SQLITE_NOMEM                   PS_ENOMEM "out of memory" (SQLite's
 *                                  allocation failed, not the database)
 *   SQLITE_FULL                    PS_EIO    "disk full"
 *   SQLITE_READONLY                PS_EIO    "the database is read-only"
 *   SQLITE_BUSY, SQLITE_LOCKED     PS_EDB    "the database is locked by another
 *                                  process (another program reading it, or
 *                                  another pipesim writing to it?)"
 *   SQLITE_NOTADB                  PS_EDB    "not an SQLite database"
 *   SQLITE_CORRUPT                 PS_EDB    "the database file is corrupt"
 *   anything else (SQLITE_CANTOPEN PS_EDB    SQLite's own message for db
 *   among them)                              (sqlite3_errmsg), or for rc when
 *                                            db is NULL (sqlite3_errstr)
 * Extended codes map as their primary code (rc & 0xff).
 *
 * The helpers return 0 or that error for the statement they ran, with what
 * naming the step in the message ("writing", "reading the schema"):
 *   ps_sqlite_exec      runs sql (one or more statements, rows discarded)
 *   ps_sqlite_prepare   compiles one statement into *st (NULL on error)
 *   ps_sqlite_step_done steps st until SQLITE_DONE (an INSERT: once), then
 *                       resets it and clears its bindings for the next use
 *   ps_sqlite_begin     BEGIN IMMEDIATE: the write lock taken now, so a
 *                       second writer waits (busy timeout) or fails here
 *   ps_sqlite_commit    COMMIT
 *   ps_sqlite_rollback  ROLLBACK when a transaction is open; its result is
 *                       ignored, so the error that led to it is the one kept
 *   ps_sqlite_int       the first column of the first row of sql as an
 *                       integer (a PRAGMA such as application_id, a count);
 *                       0 when there is no row
 *
 * Ownership: the caller owns db and every statement (sqlite3_finalize);
 * nothing here allocates or keeps state. Thread safety: that of the
 * connection (pipesim uses one per thread). Cost: that of the statement;
 * the mapping is O(length of the message).
 */
#ifndef PS_SQLITE_H
#define PS_SQLITE_H

#include <sqlite3.h>

int ps_sqlite_error(sqlite3 *db, int rc, const char *path, const char *what);

int ps_sqlite_exec(sqlite3 *db, const char *path, const char *sql, const char *what);
int ps_sqlite_prepare(sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **st,
                      const char *what);
int ps_sqlite_step_done(sqlite3 *db, const char *path, sqlite3_stmt *st, const char *what);
int ps_sqlite_begin(sqlite3 *db, const char *path, const char *what);
int ps_sqlite_commit(sqlite3 *db, const char *path, const char *what);
void ps_sqlite_rollback(sqlite3 *db);
int ps_sqlite_int(sqlite3 *db, const char *path, const char *sql, const char *what,
                  sqlite3_int64 *out);

#endif
