/* msr_validate_db: validate --check results in SQLite (see msr_validate.h).
 *
 * Schema (PRAGMA application_id ANA_VCHECK_APPLICATION_ID, 'PSVC'; version
 * ANA_VCHECK_SCHEMA in PRAGMA user_version; checked by ana_dbkind.h):
 *   runs(id, started, command, version, net, schedule, batch, steps,
 *        warmup_steps, seed, cpus, blas, profile, topology, wall_s)
 *   points(run, K, M, remat, micro_batch, step_sim_ms, step_meas_ms,
 *          step_meas_min_ms, step_meas_max_ms, n_steps, makespan_err,
 *          makespan_err_fastest, bubble_sim, bubble_meas, bubble_err_pts,
 *          bubble_err_pts_fastest, peak_act_sim, peak_act_meas, peak_act_err,
 *          dur_err_median, dur_err_p95, drift_median_us, drift_max_us,
 *          preempt_med, preempt_all, step_calib_own_ms, own_times_err,
 *          own_times_bubble_err_pts)  (preempt_*: involuntary context
 *          switches, the noise; step_calib_own_ms: the median of the
 *          pipelined calibration's own steps of the point, NULL where none;
 *          own_times_*: the model on the median step's own op times,
 *          msr_replay_step, NULL in rows stored before version 3)
 *   devices(run, K, M, remat, device, busy_sim, busy_meas, peak_act_sim,
 *           peak_act_meas, static_sim, static_meas)
 *   discrepancies(run, K, M, remat, rank, op, stage, device, error_us, cause)
 * Errors are measured - simulated; fractions are 0..1, bubble errors in
 * percentage points. One transaction per run. Versions 1 (without
 * step_calib_own_ms) and 2 (without own_times_*) are upgraded when a writer
 * opens them (msr_vcheck_db_prepare before the grid, or the store), in that
 * open's transaction: the columns added, NULL in the rows already there.
 */
#include "measure/msr_validate.h"
#include "analysis/ana_dbkind.h"
#include "base/ps_error.h"
#include "base/ps_sqlite.h"
#include "base/ps_util.h"

#include <sqlite3.h>
#include <string.h>

static const char schema[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, started TEXT NOT NULL, command TEXT, "
    "  version TEXT, net TEXT NOT NULL, schedule TEXT, batch INTEGER, steps INTEGER, "
    "  warmup_steps INTEGER, seed INTEGER, cpus INTEGER, blas TEXT, profile TEXT, "
    "  topology TEXT, wall_s REAL);"
    "CREATE TABLE points(run INTEGER NOT NULL REFERENCES runs(id), K INTEGER, M INTEGER, "
    "  remat TEXT, micro_batch INTEGER, step_sim_ms REAL, step_meas_ms REAL, "
    "  step_meas_min_ms REAL, step_meas_max_ms REAL, n_steps INTEGER, makespan_err REAL, "
    "  makespan_err_fastest REAL, bubble_sim REAL, bubble_meas REAL, bubble_err_pts REAL, "
    "  bubble_err_pts_fastest REAL, peak_act_sim INTEGER, peak_act_meas INTEGER, "
    "  peak_act_err REAL, dur_err_median REAL, dur_err_p95 REAL, drift_median_us REAL, "
    "  drift_max_us REAL, preempt_med INTEGER, preempt_all INTEGER, "
    "  step_calib_own_ms REAL, own_times_err REAL, own_times_bubble_err_pts REAL, "
    "  PRIMARY KEY(run, K, M, remat));"
    "CREATE TABLE devices(run INTEGER NOT NULL REFERENCES runs(id), K INTEGER, M INTEGER, "
    "  remat TEXT, device INTEGER, busy_sim REAL, busy_meas REAL, peak_act_sim INTEGER, "
    "  peak_act_meas INTEGER, static_sim INTEGER, static_meas INTEGER);"
    "CREATE TABLE discrepancies(run INTEGER NOT NULL REFERENCES runs(id), K INTEGER, "
    "  M INTEGER, remat TEXT, rank INTEGER, op TEXT, stage INTEGER, device INTEGER, "
    "  error_us REAL, cause TEXT);";

/* Version 1 -> 2: the calibration's own steps of each point; 2 -> 3: the
 * model on each point's own op times. */
static const char upgrade_v1[] = "ALTER TABLE points ADD COLUMN step_calib_own_ms REAL;";
static const char upgrade_v2[] = "ALTER TABLE points ADD COLUMN own_times_err REAL;"
                                 "ALTER TABLE points ADD COLUMN own_times_bubble_err_pts REAL;";

/* Inside a write transaction: creates and stamps the schema in an empty
 * database, upgrades a version 1 or 2 one (current or legacy), stamps a
 * legacy one, refuses any other kind (ana_dbkind.h). */
static int prepare_schema(sqlite3 *db, const char *path)
{
    enum ana_dbstate state;
    sqlite3_int64 version = 0;
    int rc = ana_dbkind_check(db, path, ANA_DBKIND_VCHECK, &state);
    if (rc < 0 || state == ANA_DB_CURRENT)
        return rc;
    if (state == ANA_DB_EMPTY && (rc = ps_sqlite_exec(db, path, schema, "writing")) < 0)
        return rc;
    if (state != ANA_DB_EMPTY &&
        ((rc = ps_sqlite_int(db, path, "PRAGMA user_version", "reading the schema version",
                             &version)) < 0 ||
         (version == 1 && (rc = ps_sqlite_exec(db, path, upgrade_v1, "upgrading the schema "
                                               "from version 1")) < 0) ||
         (version <= 2 && (rc = ps_sqlite_exec(db, path, upgrade_v2, "upgrading the schema "
                                               "from version 2")) < 0)))
        return rc;
    return ana_dbkind_stamp(db, path, ANA_DBKIND_VCHECK);
}

/* Opens (creating) path and takes the write lock; prepare_schema's checks. */
static int open_db(const char *path, sqlite3 **out)
{
    sqlite3 *db = NULL;
    int rc = ana_db_path_check(path, "--db", 1);
    if (rc < 0)
        return rc;
    if ((rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)) !=
        SQLITE_OK) {
        rc = ps_sqlite_error(db, rc, path, "cannot open");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 10000);
    if ((rc = ps_sqlite_begin(db, path, "writing")) < 0)
        goto err_close;
    if ((rc = prepare_schema(db, path)) < 0)
        goto err_rollback;
    *out = db;
    return 0;

err_rollback:
    ps_sqlite_rollback(db);
err_close:
    sqlite3_close(db);
    return rc;
}

int msr_vcheck_db_prepare(const char *path)
{
    sqlite3 *db;
    int rc = open_db(path, &db);
    if (rc < 0)
        return rc;
    if ((rc = ps_sqlite_commit(db, path, "writing")) < 0)
        ps_sqlite_rollback(db);
    sqlite3_close(db);
    return rc;
}

static void bind_key(sqlite3_stmt *st, int64_t run, const struct msr_vpoint *pt)
{
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, pt->K);
    sqlite3_bind_int(st, 3, pt->M);
    sqlite3_bind_text(st, 4, sch_remat_name(pt->remat), -1, SQLITE_STATIC);
}

static int insert_point(sqlite3 *db, const char *path, sqlite3_stmt *const *st, int64_t run,
                        const struct msr_vpoint *pt)
{
    const struct ana_compare *c = pt->cmp, *f = pt->cmp_min;
    sqlite3_stmt *p = st[0];
    bind_key(p, run, pt);
    double vals[] = { pt->micro, pt->step_sim_s * 1e3, pt->step_med_s * 1e3,
                      pt->step_min_s * 1e3, pt->step_max_s * 1e3, pt->n_steps,
                      c->makespan_err, f->makespan_err, c->bubble_sim, c->bubble_meas,
                      100 * (c->bubble_meas - c->bubble_sim),
                      100 * (f->bubble_meas - f->bubble_sim), (double)pt->peak_sim,
                      (double)pt->peak_meas, pt->peak_err, c->dur_err_median, c->dur_err_p95,
                      (double)c->drift_median_ns * 1e-3, (double)c->drift_max_ns * 1e-3,
                      (double)pt->preempt_med, (double)pt->preempt_all };
    int nv = (int)(sizeof vals / sizeof *vals);
    for (int i = 0; i < nv; i++)
        sqlite3_bind_double(p, 5 + i, vals[i]);
    if (pt->step_own_s > 0)
        sqlite3_bind_double(p, 5 + nv, pt->step_own_s * 1e3);
    else
        sqlite3_bind_null(p, 5 + nv);
    sqlite3_bind_double(p, 6 + nv, pt->replay.makespan_err);
    sqlite3_bind_double(p, 7 + nv, 100 * pt->replay.bubble_err);
    int rc = ps_sqlite_step_done(db, path, p, "insert failed");
    for (int d = 0; !rc && d < c->n_devices; d++) {
        bind_key(st[1], run, pt);
        sqlite3_bind_int(st[1], 5, d);
        sqlite3_bind_double(st[1], 6, c->busy_sim[d]);
        sqlite3_bind_double(st[1], 7, c->busy_meas[d]);
        sqlite3_bind_int64(st[1], 8, c->peak_act_sim[d]);
        sqlite3_bind_int64(st[1], 9, c->peak_act_meas[d]);
        sqlite3_bind_int64(st[1], 10, c->static_sim[d]);
        sqlite3_bind_int64(st[1], 11, c->static_meas[d]);
        rc = ps_sqlite_step_done(db, path, st[1], "insert failed");
    }
    for (int k = 0; !rc && k < c->n_top; k++) {
        const struct ana_discrepancy *d = &c->top[k];
        struct sch_op op = { d->sim.kind, d->sim.stage, d->sim.mb };
        char lab[32];
        sch_op_label(&op, lab, sizeof lab);
        bind_key(st[2], run, pt);
        sqlite3_bind_int(st[2], 5, k + 1);
        sqlite3_bind_text(st[2], 6, lab, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st[2], 7, d->sim.stage);
        sqlite3_bind_int(st[2], 8, d->sim.device);
        sqlite3_bind_double(st[2], 9, (double)d->error_ns * 1e-3);
        sqlite3_bind_text(st[2], 10, ana_cause_name(d->cause, d->error_ns), -1, SQLITE_STATIC);
        rc = ps_sqlite_step_done(db, path, st[2], "insert failed");
    }
    return rc;
}

int msr_vcheck_store(const struct msr_vcheck *v, const char *path, const char *command,
                     int64_t *run_id)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st[4] = { NULL, NULL, NULL, NULL };
    int rc = open_db(path, &db);
    if (rc < 0)
        return rc;
    static const char *const sql[4] = {
        "INSERT INTO points VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO devices VALUES(?,?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO discrepancies VALUES(?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO runs(started, command, version, net, schedule, batch, steps, "
        "warmup_steps, seed, cpus, blas, profile, topology, wall_s) "
        "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    };
    for (int i = 0; i < 4; i++)
        if ((rc = ps_sqlite_prepare(db, path, sql[i], &st[i], "wrong schema")) < 0)
            goto rollback;
    sqlite3_stmt *r = st[3];
    const char *txt[] = { v->stamp, command ? command : "", PS_VERSION, v->spec, v->schedule };
    for (int i = 0; i < 5; i++)
        sqlite3_bind_text(r, i + 1, txt[i], -1, SQLITE_STATIC);
    sqlite3_bind_int(r, 6, v->batch);
    sqlite3_bind_int(r, 7, v->steps);
    sqlite3_bind_int(r, 8, v->warmup_steps);
    sqlite3_bind_int64(r, 9, (sqlite3_int64)v->seed);
    sqlite3_bind_int(r, 10, v->n_cpus);
    sqlite3_bind_text(r, 11, v->blas, -1, SQLITE_STATIC);
    sqlite3_bind_text(r, 12, v->profile_desc, -1, SQLITE_STATIC);
    sqlite3_bind_text(r, 13, v->topology_desc, -1, SQLITE_STATIC);
    sqlite3_bind_double(r, 14, v->wall_s);
    if ((rc = ps_sqlite_step_done(db, path, r, "insert failed")) < 0)
        goto rollback;
    int64_t run = sqlite3_last_insert_rowid(db);
    for (int i = 0; i < v->n_points && !rc; i++)
        rc = insert_point(db, path, st, run, &v->pts[i]);
    if (rc < 0)
        goto rollback;
    if ((rc = ps_sqlite_commit(db, path, "writing")) < 0)
        goto rollback;
    if (run_id)
        *run_id = run;
    goto out;
rollback:
    ps_sqlite_rollback(db);
out:
    for (int i = 0; i < 4; i++)
        sqlite3_finalize(st[i]);
    sqlite3_close(db);
    return rc;
}
