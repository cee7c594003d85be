/*
 * ana_plan_db: a whole plan search into SQLite, and its frontier figure
 * (see ana_plan.h).
 *
 * The plan database (kind "plan" of analysis/ana_dbkind.h, application_id
 * 'PSPL', schema version 1):
 *   plans    one row per search: inputs as given and their hashes, devices,
 *            batch, capacity, objective, top, counts (configurations,
 *            simulated, pruned, partitions), seconds taken, command line,
 *            pipesim version, time.
 *   configs  one row per configuration enumerated: K, R, M, stages,
 *            schedule, remat, status (fit, pruned, memory-bound, memory-sim,
 *            error), the bounds it was judged by, the partition, and when
 *            simulated the step, throughput, speedup, bubble, imbalance,
 *            communication share, peak and capacity, what limits it; rank
 *            (1.. for the top N) and frontier (1.. on the Pareto frontier).
 * Each search appends one plan (a new id); earlier searches stay.
 */
#include "analysis/ana_dbkind.h"
#include "analysis/ana_db.h"
#include "analysis/ana_plan.h"
#include "analysis/ana_plot.h"
#include "analysis/ana_plot_util.h"
#include "base/ps_error.h"
#include "base/ps_gnuplot.h"
#include "base/ps_sqlite.h"
#include "base/ps_util.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char schema[] =
    "CREATE TABLE plans ("
    " id INTEGER PRIMARY KEY,"
    " model TEXT NOT NULL, model_hash TEXT NOT NULL,"
    " topology TEXT NOT NULL, topology_hash TEXT NOT NULL,"
    " devices INTEGER NOT NULL, batch INTEGER NOT NULL, mem_cap TEXT NOT NULL,"
    " objective TEXT NOT NULL, top INTEGER NOT NULL, configurations INTEGER NOT NULL,"
    " simulated INTEGER NOT NULL, pruned INTEGER NOT NULL, partitions INTEGER NOT NULL,"
    " elapsed_s REAL, command TEXT NOT NULL, version TEXT NOT NULL,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));"
    "CREATE TABLE configs ("
    " plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, K INTEGER NOT NULL, R INTEGER NOT NULL, M INTEGER NOT NULL,"
    " stages INTEGER NOT NULL, schedule TEXT NOT NULL, remat TEXT NOT NULL,"
    " status TEXT NOT NULL, lb_step_s REAL, mem_lb_bytes INTEGER, capped INTEGER,"
    " partition TEXT, step_s REAL, samples_per_s REAL, speedup REAL, bubble REAL,"
    " imbalance REAL, comm_share REAL, peak_bytes INTEGER, capacity_bytes REAL,"
    " limited_by TEXT, rank INTEGER, frontier INTEGER, error TEXT,"
    " PRIMARY KEY (plan_id, idx));";

static int open_db(const char *path, sqlite3 **out)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        rc = ps_sqlite_error(db, rc, path, "cannot open");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 2000);
    *out = db;
    return 0;
}

static int insert_plan(sqlite3 *db, const char *path, const struct ana_plan *p,
                       sqlite3_int64 *id)
{
    const struct ana_plan_spec *sp = &p->spec;
    char mh[17], th[17], cap[32];
    const char *model = sp->model_arg ? sp->model_arg : sp->profile->path;
    const char *topo = sp->topo_arg ? sp->topo_arg : sp->topo->path;
    int rc;
    if ((rc = ana_db_input_hash(MDL_PRESET_PROFILE, model, sp->profile, mh)) < 0 ||
        (rc = ana_db_input_hash(MDL_PRESET_TOPOLOGY, topo, NULL, th)) < 0)
        return rc;
    if (sp->cap_mode == 2)
        ps_fmt_double(sp->cap, cap, sizeof cap);
    else
        snprintf(cap, sizeof cap, "device");
    sqlite3_stmt *st;
    if ((rc = ps_sqlite_prepare(db, path, "INSERT INTO plans (model, model_hash, topology,"
                                " topology_hash, devices, batch, mem_cap, objective, top,"
                                " configurations, simulated, pruned, partitions, elapsed_s,"
                                " command, version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
                                " ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)", &st,
                                "storing the plan")) < 0)
        return rc;
    sqlite3_bind_text(st, 1, model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, mh, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, topo, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, th, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 5, sp->devices);
    sqlite3_bind_int64(st, 6, sp->batch);
    sqlite3_bind_text(st, 7, cap, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 8, sp->objective == ANA_PLAN_MEMORY ? "memory" : "throughput", -1,
                      SQLITE_STATIC);
    sqlite3_bind_int(st, 9, sp->top);
    sqlite3_bind_int(st, 10, p->n);
    sqlite3_bind_int(st, 11, p->simulated);
    sqlite3_bind_int(st, 12, p->counts[ANA_PLAN_PRUNED]);
    sqlite3_bind_int(st, 13, p->partitions);
    sqlite3_bind_double(st, 14, p->elapsed_s);
    sqlite3_bind_text(st, 15, sp->command ? sp->command : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 16, PS_VERSION, -1, SQLITE_STATIC);
    rc = ps_sqlite_step_done(db, path, st, "storing the plan");
    sqlite3_finalize(st);
    *id = sqlite3_last_insert_rowid(db);
    return rc;
}

static int insert_configs(sqlite3 *db, const char *path, const struct ana_plan *p,
                          sqlite3_int64 id)
{
    int *rank = calloc((size_t)(p->n ? p->n : 1), sizeof *rank);
    int *front = calloc((size_t)(p->n ? p->n : 1), sizeof *front);
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (!rank || !front) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < p->n_rank; i++)
        rank[p->rank[i]] = i + 1;
    for (int i = 0; i < p->n_front; i++)
        front[p->front[i]] = i + 1;
    if ((rc = ps_sqlite_prepare(db, path, "INSERT INTO configs VALUES (?1, ?2, ?3, ?4, ?5,"
                                " ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
                                " ?19, ?20, ?21, ?22, ?23, ?24, ?25)", &st,
                                "storing configurations")) < 0)
        goto out;
    for (int i = 0; i < p->n && rc == 0; i++) {
        const struct ana_plan_cfg *g = &p->c[i];
        if (g->status >= ANA_PLAN_NSTATUS)
            continue; /* another shard's, not gathered */
        int sim = g->status == ANA_PLAN_FIT || g->status == ANA_PLAN_MEM_SIM;
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int(st, 2, i);
        sqlite3_bind_int(st, 3, g->K);
        sqlite3_bind_int(st, 4, g->R);
        sqlite3_bind_int(st, 5, g->M);
        sqlite3_bind_int(st, 6, g->S);
        sqlite3_bind_text(st, 7, g->schedule, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 8, sch_remat_name(g->remat), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 9, ana_plan_status_name(g->status), -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 10, g->lb_s);
        if (g->mem_lb)
            sqlite3_bind_int64(st, 11, g->mem_lb);
        if (g->partition[0]) {
            sqlite3_bind_int(st, 12, g->capped);
            sqlite3_bind_text(st, 13, g->partition, -1, SQLITE_TRANSIENT);
        }
        if (sim) {
            sqlite3_bind_double(st, 14, g->step_s);
            sqlite3_bind_double(st, 15, g->samples_per_s);
            if (ana_plan_speedup(p, g) > 0) /* else NULL: no baseline */
                sqlite3_bind_double(st, 16, ana_plan_speedup(p, g));
            else
                sqlite3_bind_null(st, 16);
            sqlite3_bind_double(st, 17, g->bubble);
            sqlite3_bind_double(st, 18, g->imbalance);
            sqlite3_bind_double(st, 19, g->comm);
            sqlite3_bind_int64(st, 20, g->peak_mem);
            sqlite3_bind_double(st, 21, g->capacity);
            sqlite3_bind_text(st, 22, ana_plan_limit_name(g->limit), -1, SQLITE_STATIC);
        }
        if (rank[i])
            sqlite3_bind_int(st, 23, rank[i]);
        if (front[i])
            sqlite3_bind_int(st, 24, front[i]);
        if (g->status == ANA_PLAN_ERROR)
            sqlite3_bind_text(st, 25, g->error, -1, SQLITE_TRANSIENT);
        rc = ps_sqlite_step_done(db, path, st, "storing a configuration");
    }
out:
    sqlite3_finalize(st);
    free(rank);
    free(front);
    return rc;
}

int ana_plan_db_precheck(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0; /* none yet (or what ana_db_path_check already refused) */
    sqlite3 *db = NULL;
    /* read-write, as ana_db_open's readers: a killed writer's journal is rolled back */
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
    if (rc != SQLITE_OK) {
        rc = ps_sqlite_error(db, rc, path, "cannot open");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 2000);
    enum ana_dbstate state;
    rc = ana_dbkind_check(db, path, ANA_DBKIND_PLAN, &state);
    sqlite3_close(db);
    return rc;
}

int ana_plan_store(const struct ana_plan *p, const char *path)
{
    sqlite3 *db = NULL;
    enum ana_dbstate state;
    sqlite3_int64 id = 0;
    int rc = ana_db_path_check(path, "--db", 1);
    if (rc < 0 || (rc = open_db(path, &db)) < 0)
        return rc;
    if ((rc = ps_sqlite_begin(db, path, "starting a transaction")) < 0)
        goto out;
    if ((rc = ana_dbkind_check(db, path, ANA_DBKIND_PLAN, &state)) < 0 ||
        (state == ANA_DB_EMPTY &&
         (rc = ps_sqlite_exec(db, path, schema, "creating the schema")) < 0) ||
        (state != ANA_DB_CURRENT && (rc = ana_dbkind_stamp(db, path, ANA_DBKIND_PLAN)) < 0) ||
        (rc = ps_sqlite_exec(db, path, "PRAGMA foreign_keys = ON", "setting up")) < 0 ||
        (rc = insert_plan(db, path, p, &id)) < 0 || (rc = insert_configs(db, path, p, id)) < 0 ||
        (rc = ps_sqlite_commit(db, path, "committing")) < 0) {
        ps_sqlite_rollback(db);
        goto out;
    }
out:
    sqlite3_close(db);
    return rc;
}

/* ---- the frontier figure ---- */

int ana_plan_plot(const struct ana_plan *p, const char *out_dir, const char *gnuplot,
                  struct ana_plot_batch *batch)
{
    struct tmp t;
    struct ana_plot_opts o = { .out_dir = out_dir, .gnuplot = gnuplot, .batch = batch };
    int rc = ana_tmp_new(&t);
    if (rc < 0)
        return rc;
    char path[320];
    FILE *f = ana_tmp_file(&t, "plan.dat", path, sizeof path);
    if (!f) {
        ana_tmp_free(&t);
        return ps_error(PS_EIO, "%s: cannot write", t.dir);
    }
    double cap = 0;
    /* blocks: 0 fitting, 1 simulated but over capacity, 2 rejected by the
     * memory bound (at the bounds: lower memory, upper throughput), 3 frontier */
    for (int blk = 0; blk < 4; blk++) {
        int any = 0;
        if (blk == 3) {
            for (int i = 0; i < p->n_front; i++) {
                const struct ana_plan_cfg *g = &p->c[p->front[i]];
                fprintf(f, "%.9g %.9g\n", (double)g->peak_mem / 1e9, g->samples_per_s);
                any = 1;
            }
        }
        for (int i = 0; blk < 3 && i < p->n; i++) {
            const struct ana_plan_cfg *g = &p->c[i];
            enum ana_plan_status want = blk == 0 ? ANA_PLAN_FIT : blk == 1 ? ANA_PLAN_MEM_SIM
                                                                           : ANA_PLAN_MEM_BOUND;
            if (g->status != want)
                continue;
            if (blk == 2) {
                if (g->lb_s > 0)
                    fprintf(f, "%.9g %.9g\n", (double)g->mem_lb / 1e9,
                            (double)p->spec.batch / g->lb_s);
                else
                    continue;
            } else {
                fprintf(f, "%.9g %.9g\n", (double)g->peak_mem / 1e9, g->samples_per_s);
                cap = g->capacity > cap ? g->capacity : cap;
            }
            any = 1;
        }
        if (!any)
            fprintf(f, "NaN NaN\n"); /* an empty block would shift the indices */
        fprintf(f, "\n\n");
    }
    if (fclose(f) != 0) {
        ana_tmp_free(&t);
        return ps_error(PS_EIO, "%s: write failed", path);
    }
    struct ps_strbuf b = PS_STRBUF_INIT;
    char m[256], tp[256];
    ana_plot_clean(m, sizeof m, p->spec.model_arg ? p->spec.model_arg : p->spec.profile->path);
    ana_plot_clean(tp, sizeof tp, p->spec.topo_arg ? p->spec.topo_arg : p->spec.topo->path);
    ps_strbuf_printf(&b, "set title \"throughput against peak memory\\n%s\\non %s, %d devices, "
                     "batch %ld\" noenhanced\nset xlabel \"peak memory per device (GB)\"\n"
                     "set ylabel \"samples/s\"\nset key outside right top\nset grid\n",
                     m, tp, p->spec.devices, p->spec.batch);
    if (cap > 0)
        ps_strbuf_printf(&b, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dt 2 "
                         "lc rgb 'red'\n", cap / 1e9, cap / 1e9);
    ps_strbuf_printf(&b, "plot 'plan.dat' index 0 with points pt 7 ps 0.6 lc rgb '#4477aa' "
                     "title 'fits (simulated)', \\\n"
                     "  '' index 1 with points pt 2 ps 0.9 lc rgb '#cc3311' "
                     "title 'does not fit (simulated)', \\\n"
                     "  '' index 2 with points pt 1 ps 0.6 lc rgb '#ee7733' "
                     "title 'does not fit (memory bound; at its bounds, not simulated)', \\\n"
                     "  '' index 3 with linespoints pt 6 lw 2 lc rgb '#228833' "
                     "title 'Pareto frontier'\n");
    if ((rc = ps_strbuf_error(&b)) == 0)
        rc = ana_plot_render(&o, &t, "frontier", 1400, 600, ps_strbuf_str(&b));
    ps_strbuf_release(&b);
    ana_tmp_free(&t);
    return rc;
}
