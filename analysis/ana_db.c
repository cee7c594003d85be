/* ana_db: the sweep results database (see ana_db.h): the file, its schema
 * (made, checked, upgraded from version 1), open and close, and the
 * transactions, whose commit waits for readers. Its rows are stored and
 * loaded in ana_db_rows.c (ana_db_int.h). */
#include "analysis/ana_db.h"
#include "analysis/ana_db_int.h"
#include "analysis/ana_dbkind.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_sqlite.h"

#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long a statement waits for another process's lock: 2 s, so a second
 * writer holding the database (an EXCLUSIVE lock, another sweep's open
 * schema transaction) is refused soon; but COMMIT, which we run holding the
 * write lock (BEGIN IMMEDIATE), can only be waiting for readers (an open
 * sqlite3 shell, a long pipesim report) to finish: it waits up to 10
 * minutes, where a reader holding its transaction 2 s ended the sweep, in
 * steps of COMMIT_STEP_MS between which a stop request (ana_db_stop_on)
 * ends the wait. While it waits, SQLite's pending lock keeps new readers
 * out (they are refused after their own 2 s). */
#define LOCK_WAIT_MS 2000
#define COMMIT_WAIT_MS (10 * 60 * 1000)
#define COMMIT_STEP_MS 20

static int commit_wait(ana_db *d);

/* The runs table of the current schema (version 2), under a name: "runs",
 * or the new table of the upgrade from version 1. */
#define RUNS_DDL(name)                                                                     \
    "CREATE TABLE " name " ("                                                              \
    " id INTEGER PRIMARY KEY,"                                                             \
    " model TEXT NOT NULL, model_hash TEXT NOT NULL,"                                      \
    " topology TEXT NOT NULL, topology_hash TEXT NOT NULL,"                                \
    " schedule TEXT NOT NULL, K INTEGER NOT NULL, M INTEGER NOT NULL,"                     \
    " batch INTEGER NOT NULL, replicas INTEGER NOT NULL DEFAULT 1,"                        \
    " remat TEXT NOT NULL, strategy TEXT NOT NULL,"                                        \
    " status TEXT NOT NULL, message TEXT, partition TEXT, micro_batch REAL,"               \
    " step_s REAL, samples_per_s REAL, baseline_step_s REAL, speedup REAL,"                \
    " bubble_sim REAL, bubble_analytic REAL, fits INTEGER, n_ops INTEGER,"                 \
    " command TEXT NOT NULL, version TEXT NOT NULL,"                                       \
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"              \
    " UNIQUE (model, model_hash, topology, topology_hash, schedule, K, M, batch, replicas," \
    "         remat, strategy));"

static const char schema[] =
    RUNS_DDL("runs")
    "CREATE TABLE stages ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " stage INTEGER NOT NULL, device INTEGER, first_layer INTEGER, n_layers INTEGER,"
    " busy_frac REAL, fwd_s REAL, bwd_s REAL, recomp_s REAL, static_bytes INTEGER,"
    " peak_act_bytes INTEGER, peak_bytes INTEGER, capacity_bytes REAL, fits INTEGER,"
    " PRIMARY KEY (run_id, stage));";

/* Version 1 -> 2: the runs table rebuilt with replicas (1 for every old run)
 * in its UNIQUE key, which ALTER TABLE cannot change; the ids are kept, so
 * every stage keeps its run. Runs before PRAGMA foreign_keys is turned on,
 * so dropping the old table cascades nothing. */
#define V1_COLS                                                                            \
    "id, model, model_hash, topology, topology_hash, schedule, K, M, batch, remat,"       \
    " strategy, status, message, partition, micro_batch, step_s, samples_per_s,"          \
    " baseline_step_s, speedup, bubble_sim, bubble_analytic, fits, n_ops, command,"       \
    " version, created"
static const char upgrade_v1[] =
    RUNS_DDL("runs_v2")
    "INSERT INTO runs_v2 (" V1_COLS ", replicas) SELECT " V1_COLS ", 1 FROM runs;"
    "DROP TABLE runs;"
    "ALTER TABLE runs_v2 RENAME TO runs;";

void ana_db_close(ana_db *d)
{
    if (!d)
        return;
    sqlite3_finalize(d->ins_run);
    sqlite3_finalize(d->ins_stage);
    sqlite3_finalize(d->has);
    sqlite3_close(d->db);
    free(d->path);
    free(d);
}

/* Every column of the schema, "table.column" (version 1: all but
 * runs.replicas), NULL-terminated. */
static const char *const schema_cols[] = {
    "runs.id", "runs.model", "runs.model_hash", "runs.topology", "runs.topology_hash",
    "runs.schedule", "runs.K", "runs.M", "runs.batch", "runs.replicas", "runs.remat",
    "runs.strategy", "runs.status", "runs.message", "runs.partition", "runs.micro_batch",
    "runs.step_s", "runs.samples_per_s", "runs.baseline_step_s", "runs.speedup",
    "runs.bubble_sim", "runs.bubble_analytic", "runs.fits", "runs.n_ops", "runs.command",
    "runs.version", "runs.created", "stages.run_id", "stages.stage", "stages.device",
    "stages.first_layer", "stages.n_layers", "stages.busy_frac", "stages.fwd_s",
    "stages.bwd_s", "stages.recomp_s", "stages.static_bytes", "stages.peak_act_bytes",
    "stages.peak_bytes", "stages.capacity_bytes", "stages.fits", NULL,
};

/* The tables hold every column of d->version's schema: a file with tables
 * of these names but other columns (another program's, with
 * user_version 2) is refused here, before anything is written to it (it
 * was stamped, and then preparing the statements failed). Reads only. */
static int check_columns(ana_db *d)
{
    sqlite3_stmt *st;
    int rc = ps_sqlite_prepare(d->db, d->path, "SELECT count(*) FROM pragma_table_info(?1)"
                               " WHERE name = ?2 COLLATE NOCASE", &st, "reading the schema");
    if (rc < 0)
        return rc;
    for (int i = 0; schema_cols[i] && rc == 0; i++) {
        const char *tc = schema_cols[i], *dot = strchr(tc, '.');
        if (d->version == 1 && !strcmp(tc, "runs.replicas"))
            continue;
        sqlite3_bind_text(st, 1, tc, (int)(dot - tc), SQLITE_STATIC);
        sqlite3_bind_text(st, 2, dot + 1, -1, SQLITE_STATIC);
        int step = sqlite3_step(st);
        if (step != SQLITE_ROW)
            rc = ps_sqlite_error(d->db, step, d->path, "reading the schema");
        else if (sqlite3_column_int(st, 0) == 0)
            rc = ps_error(PS_EDB, "%s: not a pipesim sweep database: table %.*s has no "
                          "column %s (another program's file?); left as it is", d->path,
                          (int)(dot - tc), tc, dot + 1);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* The kind of database the file holds (ana_dbkind.h); with create, the
 * schema made in an empty file and a legacy one stamped, in one write
 * transaction taken before the check, so two sweeps starting on a new file
 * do not both create it. */
static int check_schema(ana_db *d, int create)
{
    static const char what[] = "reading the schema version";
    enum ana_dbstate state;
    int rc;
    if (!create) {
        if ((rc = ana_dbkind_check(d->db, d->path, ANA_DBKIND_SWEEP, &state)) < 0)
            return rc;
        if (state == ANA_DB_EMPTY)
            return ps_error(PS_EDB, "%s: empty database, no pipesim results in it", d->path);
        if ((rc = ps_sqlite_int(d->db, d->path, "PRAGMA user_version", what,
                                &d->version)) < 0)
            return rc;
        return check_columns(d);
    }
    if ((rc = ps_sqlite_begin(d->db, d->path, what)) < 0)
        return rc;
    if ((rc = ana_dbkind_check(d->db, d->path, ANA_DBKIND_SWEEP, &state)) < 0 ||
        (rc = ps_sqlite_int(d->db, d->path, "PRAGMA user_version", what, &d->version)) < 0 ||
        (state != ANA_DB_EMPTY && (rc = check_columns(d)) < 0))
        goto rollback;
    if (state == ANA_DB_EMPTY &&
        (rc = ps_sqlite_exec(d->db, d->path, schema, "creating the schema")) < 0)
        goto rollback;
    if (state != ANA_DB_EMPTY && d->version == 1 &&
        (rc = ps_sqlite_exec(d->db, d->path, upgrade_v1, "upgrading the schema from "
                             "version 1")) < 0)
        goto rollback;
    if (state != ANA_DB_CURRENT && (rc = ana_dbkind_stamp(d->db, d->path,
                                                          ANA_DBKIND_SWEEP)) < 0)
        goto rollback;
    /* a current file had nothing written: rolled back, so that no commit waits
     * here for a reader's transaction (it held the open 10 minutes, helper-110) */
    if (state == ANA_DB_CURRENT)
        ps_sqlite_rollback(d->db);
    else if ((rc = commit_wait(d)) < 0)
        goto rollback;
    d->version = ANA_DB_SCHEMA;
    return 0;

rollback:
    ps_sqlite_rollback(d->db);
    return rc;
}

/* The file a creating open makes. */
struct made {
    char *path;   /* path, or where a dangling link leads; NULL: none made */
    dev_t dev;
    ino_t ino;
};

/* With create, makes the file the database is to be (path, or where a
 * dangling link leads) itself, empty, and remembers which it is: SQLite
 * then opens it as an empty database. Nothing when it is there already (or
 * cannot be named, or made: SQLite's open says why). */
static struct made make_file(const char *path)
{
    struct made m = { 0 };
    char *to = NULL;
    struct stat sb;
    if (ps_afile_resolve(path, &to) != 0)
        return m;
    int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); /* SQLite's mode */
    if (fd < 0 || fstat(fd, &sb) != 0) {
        if (fd >= 0) {
            close(fd);
            unlink(to);
        }
        free(to);
        return m;
    }
    close(fd);
    m.path = to, m.dev = sb.st_dev, m.ino = sb.st_ino;
    return m;
}

/* Whether another process holds one of SQLite's locks on the file (the
 * pending, reserved and shared bytes at 1 GiB of its unix VFS): a writer
 * in its first transaction, whose file is still empty. */
static int locked_by_other(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0x40000000,
                        .l_len = 512 };
    int other = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    close(fd); /* this process holds no lock on it: ana_db_close came first */
    return other;
}

/* A failed open takes away the file it made (a full disk), so that the
 * command can take away the folders it made; only that very file, still
 * empty and locked by no one: another sweep that opened the same new path
 * meanwhile writes nothing to it before its first commit (helper-110: an
 * open that gave up on its lock removed that sweep's database). */
static void unmake(struct made *m)
{
    struct stat sb;
    if (m->path && stat(m->path, &sb) == 0 && sb.st_dev == m->dev && sb.st_ino == m->ino &&
        S_ISREG(sb.st_mode) && sb.st_size == 0 && !locked_by_other(m->path))
        unlink(m->path);
    free(m->path);
    m->path = NULL;
}

int ana_db_open(const char *path, int create, ana_db **out)
{
    *out = NULL;
    int rc = ana_db_path_check(path, "--db", create);
    if (rc < 0)
        return rc;
    if (!create && access(path, R_OK) != 0)
        return ps_error(PS_EIO, "%s: cannot read the results database (run pipesim sweep "
                         "--db %s first)", path, path);
    ana_db *d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    struct made made = create ? make_file(path) : (struct made){ 0 };
    /* A reader opens read-write too (never creating): a sweep killed in a commit
     * leaves a hot journal, which SQLite rolls back at the first read only for a
     * connection that may write (read-only, report and plot failed with "the
     * database is read-only"); a file the OS write-protects is opened read-only. */
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    rc = sqlite3_open_v2(path, &d->db, flags, NULL);
    if (rc != SQLITE_OK) {
        rc = ps_sqlite_error(d->db, rc, d->path, "cannot open");
        goto err_close;
    }
    sqlite3_busy_timeout(d->db, LOCK_WAIT_MS);
    if ((rc = check_schema(d, create)) < 0)
        goto err_close;
    if ((rc = ps_sqlite_exec(d->db, d->path, "PRAGMA foreign_keys = ON", "setting up")) < 0)
        goto err_close;
    if (create) {
        static const char ins_run[] =
            "INSERT INTO runs (" KEY_COLS ", status, message, partition, micro_batch, step_s,"
            " samples_per_s, baseline_step_s, speedup, bubble_sim, bubble_analytic, fits,"
            " n_ops, command, version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
            " ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)";
        static const char ins_stage[] =
            "INSERT INTO stages VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
            " ?14)";
        static const char has[] =
            "SELECT 1 FROM runs WHERE model = ?1 AND model_hash = ?2 AND topology = ?3 AND"
            " topology_hash = ?4 AND schedule = ?5 AND K = ?6 AND M = ?7 AND batch = ?8 AND"
            " replicas = ?9 AND remat = ?10 AND strategy = ?11";
        static const char what[] = "preparing statements";
        if ((rc = ps_sqlite_prepare(d->db, d->path, ins_run, &d->ins_run, what)) < 0 ||
            (rc = ps_sqlite_prepare(d->db, d->path, ins_stage, &d->ins_stage, what)) < 0 ||
            (rc = ps_sqlite_prepare(d->db, d->path, has, &d->has, what)) < 0)
            goto err_close;
    }
    free(made.path);
    *out = d;
    return 0;

err_close:
    ana_db_close(d);
    unmake(&made);
    return rc;
}

int ana_db_begin(ana_db *d)
{
    d->changes = sqlite3_total_changes(d->db);
    return ps_sqlite_begin(d->db, d->path, "starting a transaction");
}

void ana_db_stop_on(ana_db *d, const atomic_int *stop)
{
    d->stop = stop;
}

/* SQLite's busy handler while COMMIT waits for readers: a step, again,
 * until COMMIT_WAIT_MS or a stop request. */
static int commit_busy(void *arg, int tries)
{
    ana_db *d = arg;
    if (d->stop && atomic_load(d->stop)) {
        d->stopped = 1;
        return 0;
    }
    if ((long)tries * COMMIT_STEP_MS >= COMMIT_WAIT_MS)
        return 0;
    struct timespec ts = { 0, COMMIT_STEP_MS * 1000000L };
    nanosleep(&ts, NULL);
    return 1;
}

static int commit_wait(ana_db *d)
{
    d->stopped = 0;
    sqlite3_busy_handler(d->db, commit_busy, d);
    int rc = ps_sqlite_commit(d->db, d->path, "committing");
    sqlite3_busy_timeout(d->db, LOCK_WAIT_MS);
    if (rc < 0 && d->stopped) /* the rows since the last commit are not stored */
        rc = ps_error(PS_EINTR, "%s: stopped while waiting for another program reading the "
                      "database (the rows since its last commit are not stored); run the "
                      "same command again to resume", d->path);
    return rc;
}

int ana_db_commit(ana_db *d)
{
    /* no row written: nothing to keep, and a COMMIT of a write transaction
     * takes the exclusive lock even then, waiting for every reader */
    if (sqlite3_total_changes(d->db) == d->changes) {
        ps_sqlite_rollback(d->db);
        return 0;
    }
    return commit_wait(d);
}
