/* ps_sqlite: each result code's pipesim error and message, and real failures
 * on temporary files (not a database, a read-only connection written to, a
 * database another connection holds locked, a full one), and the helpers. */
#include "helpers.h"

#include "base/ps_error.h"
#include "base/ps_sqlite.h"

static char dir[64];

static void setup(void)
{
    th_tmpdir(dir, sizeof dir, "sqlite");
}

static void teardown(void)
{
    th_sh("rm -rf %s", dir);
}

TestSuite(ps_sqlite, .init = setup, .fini = teardown, .timeout = 20);

static void path(char *p, size_t n, const char *name)
{
    snprintf(p, n, "%s/%s", dir, name);
}

/* The mapper called with rc directly, no connection: code and message. */
static void expect_map(int rc, int code, const char *msg)
{
    ps_error_clear();
    cr_expect_eq(ps_sqlite_error(NULL, rc, "p.db", "doing"), -code, "rc %d: %s", rc,
                 ps_errmsg());
    cr_expect_eq(ps_errcode(), code, "rc %d", rc);
    cr_expect_str_eq(ps_errmsg(), msg, "rc %d", rc);
}

#define LOCKED "the database is locked by another process (another program reading it, or " \
               "another pipesim writing to it?)"

Test(ps_sqlite, each_result_code_maps_to_its_pipesim_error)
{
    expect_map(SQLITE_NOMEM, PS_ENOMEM, "p.db: doing: out of memory");
    expect_map(SQLITE_FULL, PS_EIO, "p.db: doing: disk full");
    expect_map(SQLITE_READONLY, PS_EIO, "p.db: doing: the database is read-only");
    expect_map(SQLITE_BUSY, PS_EDB, "p.db: doing: " LOCKED);
    expect_map(SQLITE_LOCKED, PS_EDB, "p.db: doing: " LOCKED);
    expect_map(SQLITE_NOTADB, PS_EDB, "p.db: doing: not an SQLite database");
    expect_map(SQLITE_CORRUPT, PS_EDB, "p.db: doing: the database file is corrupt");
    /* the others: SQLite's own words */
    /* the file system's refusal: an I/O error with its reason (helper-125) */
    expect_map(SQLITE_CANTOPEN, PS_EIO, "p.db: doing: cannot create or open the file there");
    expect_map(SQLITE_IOERR, PS_EDB, "p.db: doing: disk I/O error");
    expect_map(SQLITE_ERROR, PS_EDB, "p.db: doing: SQL logic error");
    expect_map(SQLITE_CONSTRAINT, PS_EDB, "p.db: doing: constraint failed");
}

Test(ps_sqlite, extended_codes_map_as_their_primary_code)
{
    expect_map(SQLITE_BUSY_SNAPSHOT, PS_EDB, "p.db: doing: " LOCKED);
    expect_map(SQLITE_LOCKED_SHAREDCACHE, PS_EDB, "p.db: doing: " LOCKED);
    expect_map(SQLITE_READONLY_DBMOVED, PS_EIO, "p.db: doing: the database is read-only");
    expect_map(SQLITE_CORRUPT_INDEX, PS_EDB, "p.db: doing: the database file is corrupt");
    expect_map(SQLITE_IOERR_SHORT_READ, PS_EDB, "p.db: doing: disk I/O error");
    cr_expect_eq(ps_sqlite_error(NULL, SQLITE_CANTOPEN_ISDIR, "p.db", "doing"), -PS_EIO);
}

Test(ps_sqlite, other_errors_carry_the_connections_message)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    cr_expect_eq(ps_sqlite_exec(db, "m.db", "SELEC 1", "querying"), -PS_EDB);
    cr_expect_str_eq(ps_errmsg(), "m.db: querying: near \"SELEC\": syntax error");
    sqlite3_stmt *st = (sqlite3_stmt *)&st;
    cr_expect_eq(ps_sqlite_prepare(db, "m.db", "SELECT * FROM missing", &st, "preparing"),
                 -PS_EDB);
    cr_expect_null(st);
    cr_expect_str_eq(ps_errmsg(), "m.db: preparing: no such table: missing");
    sqlite3_close(db);
}

/* A database at dir/name holding t(x) with one row. */
static void make_db(char *p, size_t n, const char *name)
{
    path(p, n, name);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(p, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1)", NULL, NULL,
                              NULL), SQLITE_OK);
    sqlite3_close(db);
}

Test(ps_sqlite, a_file_that_is_not_a_database)
{
    char p[128];
    th_put(dir, "text.db", "this is not a database, just text long enough to have a header "
                           "......\n");
    path(p, sizeof p, "text.db");
    sqlite3 *db;
    cr_assert_eq(sqlite3_open_v2(p, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_int64 v = 7;
    cr_expect_eq(ps_sqlite_int(db, p, "PRAGMA application_id", "reading the schema version",
                               &v), -PS_EDB);
    char want[256];
    snprintf(want, sizeof want, "%s: reading the schema version: not an SQLite database", p);
    cr_expect_str_eq(ps_errmsg(), want);
    sqlite3_close(db);
}

Test(ps_sqlite, writing_through_a_read_only_connection)
{
    char p[128];
    make_db(p, sizeof p, "ro.db");
    sqlite3 *db;
    cr_assert_eq(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    cr_expect_eq(ps_sqlite_exec(db, p, "INSERT INTO t VALUES (2)", "writing"), -PS_EIO);
    char want[256];
    snprintf(want, sizeof want, "%s: writing: the database is read-only", p);
    cr_expect_str_eq(ps_errmsg(), want);
    sqlite3_int64 n = 0;
    cr_expect_eq(ps_sqlite_int(db, p, "SELECT count(*) FROM t", "reading", &n), 0, "%s",
                 ps_errmsg());
    cr_expect_eq(n, 1, "nothing was written");
    sqlite3_close(db);
}

Test(ps_sqlite, a_database_another_connection_holds_locked)
{
    char p[128];
    make_db(p, sizeof p, "locked.db");
    sqlite3 *holder, *db;
    cr_assert_eq(sqlite3_open(p, &holder), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_open(p, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 0);
    char want[512];
    cr_expect_eq(ps_sqlite_begin(db, p, "starting a transaction"), -PS_EDB);
    snprintf(want, sizeof want, "%s: starting a transaction: " LOCKED, p);
    cr_expect_str_eq(ps_errmsg(), want);
    sqlite3_int64 v;
    cr_expect_eq(ps_sqlite_int(db, p, "PRAGMA user_version", "reading the schema version", &v),
                 -PS_EDB);
    snprintf(want, sizeof want, "%s: reading the schema version: " LOCKED, p);
    cr_expect_str_eq(ps_errmsg(), want);
    /* released: the same calls go through */
    cr_assert_eq(sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    cr_expect_eq(ps_sqlite_begin(db, p, "starting a transaction"), 0, "%s", ps_errmsg());
    cr_expect_eq(ps_sqlite_commit(db, p, "committing"), 0, "%s", ps_errmsg());
    sqlite3_close(db);
    sqlite3_close(holder);
}

Test(ps_sqlite, a_full_database)
{
    char p[128];
    make_db(p, sizeof p, "full.db");
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(p, &db), SQLITE_OK);
    sqlite3_int64 pages = 0;
    cr_assert_eq(ps_sqlite_int(db, p, "PRAGMA page_count", "reading", &pages), 0);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld", (long long)pages);
    cr_assert_eq(ps_sqlite_exec(db, p, sql, "setting up"), 0, "%s", ps_errmsg());
    cr_expect_eq(ps_sqlite_exec(db, p, "INSERT INTO t VALUES (zeroblob(100000))", "writing"),
                 -PS_EIO);
    char want[256];
    snprintf(want, sizeof want, "%s: writing: disk full", p);
    cr_expect_str_eq(ps_errmsg(), want);
    sqlite3_close(db);
}

Test(ps_sqlite, step_done_resets_and_clears_the_statement)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    cr_assert_eq(ps_sqlite_exec(db, "m.db", "CREATE TABLE t(x NOT NULL)", "setting up"), 0);
    cr_assert_eq(ps_sqlite_prepare(db, "m.db", "INSERT INTO t VALUES (?1)", &st, "preparing"),
                 0);
    for (int i = 1; i <= 3; i++) {
        sqlite3_bind_int(st, 1, i);
        cr_expect_eq(ps_sqlite_step_done(db, "m.db", st, "inserting"), 0, "%s", ps_errmsg());
    }
    /* the binding was cleared: NULL violates NOT NULL, reported by the step */
    cr_expect_eq(ps_sqlite_step_done(db, "m.db", st, "inserting"), -PS_EDB);
    cr_expect_str_eq(ps_errmsg(), "m.db: inserting: NOT NULL constraint failed: t.x");
    sqlite3_finalize(st);
    /* a statement with rows is stepped through */
    cr_assert_eq(ps_sqlite_prepare(db, "m.db", "SELECT x FROM t", &st, "preparing"), 0);
    cr_expect_eq(ps_sqlite_step_done(db, "m.db", st, "reading"), 0);
    sqlite3_finalize(st);
    sqlite3_int64 n = -1;
    cr_expect_eq(ps_sqlite_int(db, "m.db", "SELECT sum(x) FROM t", "reading", &n), 0);
    cr_expect_eq(n, 6);
    cr_expect_eq(ps_sqlite_int(db, "m.db", "SELECT x FROM t WHERE x > 9", "reading", &n), 0);
    cr_expect_eq(n, 0, "no row reads as 0");
    sqlite3_close(db);
}

Test(ps_sqlite, rollback_undoes_and_keeps_the_error)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    cr_assert_eq(ps_sqlite_exec(db, "m.db", "CREATE TABLE t(x)", "setting up"), 0);
    cr_assert_eq(ps_sqlite_begin(db, "m.db", "starting"), 0);
    cr_assert_eq(ps_sqlite_exec(db, "m.db", "INSERT INTO t VALUES (1)", "writing"), 0);
    cr_expect_eq(ps_sqlite_exec(db, "m.db", "INSERT INTO nowhere VALUES (1)", "writing"),
                 -PS_EDB);
    ps_sqlite_rollback(db);
    cr_expect_str_eq(ps_errmsg(), "m.db: writing: no such table: nowhere");
    cr_expect(sqlite3_get_autocommit(db), "the transaction is closed");
    ps_sqlite_rollback(db); /* none open: nothing to do */
    ps_sqlite_rollback(NULL);
    sqlite3_int64 n = -1;
    cr_expect_eq(ps_sqlite_int(db, "m.db", "SELECT count(*) FROM t", "reading", &n), 0);
    cr_expect_eq(n, 0);
    cr_expect_str_eq(ps_errmsg(), "m.db: writing: no such table: nowhere");
    sqlite3_close(db);
}

/* A file that cannot be made: exit 5 with the system's reason, which a root
 * process meets where access(W_OK) passed (/proc), as anyone meets under a
 * missing folder (helper-125: "unable to open database file", exit 8). */
Test(ps_sqlite, a_file_that_cannot_be_made_says_why)
{
    char p[160];
    path(p, sizeof p, "no/such/folder.db");
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(p, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    cr_assert_neq(rc, SQLITE_OK);
    cr_expect_eq(ps_sqlite_error(db, rc, p, "cannot open"), -PS_EIO);
    cr_expect(strstr(ps_errmsg(), "cannot open: No such file or directory"), "%s", ps_errmsg());
    sqlite3_close(db);
}
