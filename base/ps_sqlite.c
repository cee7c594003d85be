/* ps_sqlite: SQLite result codes as pipesim errors, and the common calls (see ps_sqlite.h). */
#include "base/ps_sqlite.h"
#include "base/ps_error.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

int ps_sqlite_error(sqlite3 *db, int rc, const char *path, const char *what)
{
    const char *why;
    int code = PS_EDB;
    switch (rc & 0xff) {
    case SQLITE_NOMEM: /* SQLite's allocation failed: not the database's fault */
        return ps_error(PS_ENOMEM, "%s: %s: out of memory", path, what);
    case SQLITE_FULL:
        code = PS_EIO;
        why = "disk full";
        break;
    case SQLITE_READONLY:
        if (db && sqlite3_extended_errcode(db) == SQLITE_READONLY_ROLLBACK) {
            /* a writer killed in a transaction left its journal; only a
             * connection that may write the file can roll it back */
            why = "a writer killed in a transaction left its journal (the file beside it "
                  "ending in -journal), which only a process that may write the database "
                  "can roll back: make the file writable and rerun";
            break;
        }
        code = PS_EIO;
        why = "the database is read-only";
        break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        why = "the database is locked by another process (another program reading it, or "
              "another pipesim writing to it?)";
        break;
    case SQLITE_CANTOPEN: { /* the file system's refusal, as a write's: exit 5 with the
                             * reason (helper-125: root passes access(W_OK) on /proc,
                             * then this read "unable to open database file", exit 8) */
        int e = db ? sqlite3_system_errno(db) : 0;
        /* SQLite makes the path absolute first (helper-133: a relative one in a deep
         * folder read as a stale "No such file or directory") */
        char cwd[4096];
        size_t abs = strlen(path); /* a cwd that cannot be read adds nothing known
                                    * (helper-135: a deleted one read as too long) */
        if (path[0] != '/' && getcwd(cwd, sizeof cwd))
            abs += strlen(cwd) + 1;
        else if (path[0] != '/' && errno == ERANGE)
            abs += sizeof cwd;
        code = PS_EIO;
        why = abs >= 512 ? "the path, made absolute, is longer than SQLite takes (511 bytes)"
              : e ? strerror(e) : "cannot create or open the file there";
        break;
    }
    case SQLITE_NOTADB: why = "not an SQLite database"; break;
    case SQLITE_CORRUPT: why = "the database file is corrupt"; break;
    default: why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc); break;
    }
    return ps_error(code, "%s: %s: %s", path, what, why);
}

int ps_sqlite_exec(sqlite3 *db, const char *path, const char *sql, const char *what)
{
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : ps_sqlite_error(db, rc, path, what);
}

int ps_sqlite_prepare(sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **st,
                      const char *what)
{
    int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
    return rc == SQLITE_OK ? 0 : ps_sqlite_error(db, rc, path, what);
}

int ps_sqlite_step_done(sqlite3 *db, const char *path, sqlite3_stmt *st, const char *what)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    /* the message is the step's: taken before the reset */
    int err = rc == SQLITE_DONE ? 0 : ps_sqlite_error(db, rc, path, what);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return err;
}

int ps_sqlite_begin(sqlite3 *db, const char *path, const char *what)
{
    return ps_sqlite_exec(db, path, "BEGIN IMMEDIATE", what);
}

int ps_sqlite_commit(sqlite3 *db, const char *path, const char *what)
{
    return ps_sqlite_exec(db, path, "COMMIT", what);
}

void ps_sqlite_rollback(sqlite3 *db)
{
    if (db && !sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

int ps_sqlite_int(sqlite3 *db, const char *path, const char *sql, const char *what,
                  sqlite3_int64 *out)
{
    sqlite3_stmt *st;
    int rc = ps_sqlite_prepare(db, path, sql, &st, what);
    if (rc < 0)
        return rc;
    *out = 0;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = SQLITE_DONE;
    }
    int err = rc == SQLITE_DONE ? 0 : ps_sqlite_error(db, rc, path, what);
    sqlite3_finalize(st);
    return err;
}
