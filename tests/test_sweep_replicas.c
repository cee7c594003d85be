/* sweep --replicas (issue 16): each row is what ana_predict says of that
 * configuration with R data-parallel replicas; K x R above the devices is a
 * stored error, a replica count no K fits a usage error; report groups and
 * names the replicas; a database of schema version 1 (before replicas) is
 * read as replicas 1 and upgraded by the next sweep. */
#include "helpers.h"

#include <sqlite3.h>
#include <unistd.h>

#include "analysis/ana_db.h"
#include "analysis/ana_predict.h"
#include "analysis/ana_report.h"
#include "analysis/ana_sweep.h"
#include "models/mdl_gen.h"
#include "base/ps_util.h"

#define TOPO "models/topologies/pcie-8gpu.json" /* 8 devices, every pair routed */
#define MODEL "mlp:layers=8,width=64"

static char dir[64];
static struct mdl_profile *prof;
static struct mdl_topology *topo;

static void setup(void)
{
    th_tmpdir(dir, sizeof dir, "sweep-replicas");
    cr_assert_eq(mdl_model_open(MODEL, &prof), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_topology_load(TOPO, &topo), 0, "%s", ps_errmsg());
}

static void teardown(void)
{
    mdl_profile_free(prof);
    mdl_topology_free(topo);
    th_sh("rm -rf %s", dir);
}

TestSuite(sweep_replicas, .init = setup, .fini = teardown, .timeout = 60);

static long Ks[] = { 1, 2, 4, 8 }, Ms[] = { 1, 4 }, batches[] = { 8 }, Rs[] = { 1, 2 };
static enum sch_remat remats[] = { SCH_REMAT_EXCEPT_LAST };
static enum sch_part_strategy strats[] = { SCH_PART_UNIFORM, SCH_PART_OPTIMAL };

static struct ana_sweep_spec spec(void)
{
    return (struct ana_sweep_spec){
        .profile = prof, .topo = topo, .model_arg = MODEL, .topo_arg = TOPO,
        .command = "test_sweep_replicas", .Ks = Ks, .nK = 4, .Ms = Ms, .nM = 2,
        .batches = batches, .nbatch = 1, .replicas = Rs, .nreplica = 2, .remats = remats,
        .nremat = 1, .strategies = strats, .nstrategy = 1, .jobs = 2, .quiet = 1 };
}

static int count(const char *db, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

static void load(const char *db, struct ana_run **runs, int *n)
{
    ana_db *h;
    cr_assert_eq(ana_db_open(db, 0, &h), 0, "%s", ps_errmsg());
    cr_assert_eq(ana_db_load(h, runs, n), 0, "%s", ps_errmsg());
    ana_db_close(h);
}

static const struct ana_run *find(const struct ana_run *runs, int n, const char *strategy,
                                  int K, int M, int R)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(runs[i].strategy, strategy) && runs[i].K == K && runs[i].M == M &&
            runs[i].replicas == R)
            return &runs[i];
    return NULL;
}

/* The stored row against ana_predict of the same configuration (its own
 * baseline and speedup: the formula is predict's). */
static void expect_predicted(const struct ana_run *r, const struct sch_partition *part)
{
    struct ana_config cfg = { .profile = prof, .topo = topo, .K = r->K, .M = r->M,
                              .batch = (double)r->batch, .remat = SCH_REMAT_EXCEPT_LAST,
                              .replicas = r->replicas, .partition = part };
    struct ana_prediction *p;
    cr_assert_eq(ana_predict(&cfg, &p), 0, "%s", ps_errmsg());
    cr_expect_str_eq(r->status, "ok");
    cr_expect_eq(r->step_s, p->step_s, "K=%d R=%d", r->K, r->replicas);
    cr_expect_eq(r->samples_per_s, p->samples_per_s, "K=%d R=%d", r->K, r->replicas);
    cr_expect_eq(r->speedup, p->speedup, "K=%d R=%d", r->K, r->replicas);
    cr_expect_eq(r->baseline_step_s, p->baseline_step_s);
    cr_expect_str_eq(r->partition, p->partition);
    cr_assert_eq(r->n_stages, p->n_stages);
    for (int s = 0; s < r->n_stages; s++)
        cr_expect_eq(r->stages[s].peak_mem, p->stages[s].peak_mem);
    ana_prediction_free(p);
}

Test(sweep_replicas, rows_are_predictions_with_replicas)
{
    char db[128];
    snprintf(db, sizeof db, "%s/r.db", dir);
    struct ana_sweep_spec sp = spec();
    sp.nstrategy = 2;
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0, "%s", ps_errmsg());
    cr_assert_eq(st.total, 2 * 2 * 4 * 2, "strategies x replicas x K x M");
    cr_assert_eq(st.done, 32);
    cr_assert_eq(st.failed, 4, "K=8 R=2 on 8 devices, each M and strategy");
    cr_expect_eq(count(db, "PRAGMA user_version"), 2);
    cr_expect_eq(count(db, "SELECT count(*) FROM runs WHERE K = 8 AND replicas = 2 AND "
                           "status = 'SIM_ENOFIT' AND message LIKE '%-K 8 x 2 replica(s): "
                           "topology " TOPO " has only 8 devices%'"), 4);
    cr_expect_eq(count(db, "SELECT count(*) FROM (SELECT DISTINCT K, M, replicas, strategy "
                           "FROM runs)"), 32);
    struct ana_run *runs;
    int n;
    load(db, &runs, &n);
    cr_assert_eq(n, 32);
    for (int i = 1; i < n; i++)
        cr_assert_lt(ana_run_cmp(&runs[i - 1], &runs[i]), 0, "sorted, no duplicates");
    /* K=4 R=1 and K=2 R=2: the same 8 devices' worth of pipelines */
    expect_predicted(find(runs, n, "uniform", 4, 4, 1), NULL);
    expect_predicted(find(runs, n, "uniform", 2, 4, 2), NULL);
    expect_predicted(find(runs, n, "uniform", 4, 1, 2), NULL);
    const struct ana_run *r2 = find(runs, n, "uniform", 2, 4, 2);
    cr_expect_neq(r2->step_s, find(runs, n, "uniform", 2, 4, 1)->step_s,
                  "the all-reduce of the second replica costs time");
    /* an optimal partition is replica 0's, and the row what predict says with it */
    const struct ana_run *o = find(runs, n, "optimal", 2, 4, 2);
    cr_assert(o);
    struct sch_partition *part;
    cr_assert_eq(sch_partition_parse(o->partition, 2, prof->n_layers, &part), 0, "%s",
                 ps_errmsg());
    expect_predicted(o, part);
    sch_partition_free(part);
    ana_runs_free(runs, n);
    /* resumed: nothing again; a new replica count only adds its rows */
    static long R3[] = { 1, 2, 4 };
    sp.replicas = R3;
    sp.nreplica = 3;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0, "%s", ps_errmsg());
    cr_expect_eq(st.skipped, 32);
    cr_expect_eq(st.done, 16);
    cr_expect_eq(count(db, "SELECT count(*) FROM runs WHERE replicas = 4 AND status = 'ok'"),
                 2 * 2 * 2, "K = 1, 2 fit 8 devices four times");
}

/* A NULL replicas list is one replica: the rows of a sweep without it. */
Test(sweep_replicas, no_list_is_one_replica)
{
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.db", dir);
    snprintf(b, sizeof b, "%s/b.db", dir);
    struct ana_sweep_spec sp = spec();
    sp.replicas = NULL;
    sp.nreplica = 0;
    cr_assert_eq(ana_sweep_run(&sp, a, NULL), 0, "%s", ps_errmsg());
    sp.replicas = Rs;
    sp.nreplica = 1; /* { 1 } */
    cr_assert_eq(ana_sweep_run(&sp, b, NULL), 0, "%s", ps_errmsg());
    cr_expect_eq(count(a, "SELECT count(*) FROM runs WHERE replicas = 1"), 8);
    char x[8192], y[8192];
    cr_assert_eq(th_capture(x, sizeof x, "%s report --db %s --csv - --out /dev/null",
                            th_pipesim(), a), 0);
    cr_assert_eq(th_capture(y, sizeof y, "%s report --db %s --csv - --out /dev/null",
                            th_pipesim(), b), 0);
    cr_expect_str_eq(x, y);
}

#define SWEEP "sweep --model " MODEL " --topology " TOPO " -M 1,4 --batch 8 --quiet "

static void expect_cli(const char *args, int status, const char *what)
{
    char out[8192];
    int rc = th_capture(out, sizeof out, "%s %s 2>&1", th_pipesim(), args);
    cr_expect_eq(rc, status, "'%s' exited %d, not %d: %s", args, rc, status, out);
    cr_expect(strstr(out, what), "'%s': '%s' lacks '%s'", args, out, what);
}

Test(sweep_replicas, usage_errors_before_any_work)
{
    char args[512];
    snprintf(args, sizeof args, SWEEP "-K 2,4 --replicas 1,5 --db %s/u.db", dir);
    expect_cli(args, 2, "--replicas 5: even the smallest -K 2 needs 10 devices (K x replicas), "
                        "topology " TOPO " has 8");
    snprintf(args, sizeof args, SWEEP "-K 2 --replicas 2,1,2 --db %s/u.db", dir);
    expect_cli(args, 2, "--replicas: 2 given twice");
    snprintf(args, sizeof args, SWEEP "-K 2 --replicas 0 --db %s/u.db", dir);
    expect_cli(args, 2, "--replicas");
    snprintf(args, sizeof args, SWEEP "-K 2 --replicas 2,x --db %s/u.db", dir);
    expect_cli(args, 2, "--replicas");
    cr_expect_eq(th_sh("test -e %s/u.db", dir), 1, "the database was created");
    /* K=4 R=2 fits, K=4 R=3 does not: stored, not refused */
    snprintf(args, sizeof args, SWEEP "-K 1,4 --replicas 2,3 --db %s/ok.db", dir);
    expect_cli(args, 0, "");
    snprintf(args, sizeof args, "%s/ok.db", dir);
    cr_expect_eq(count(args, "SELECT count(*) FROM runs WHERE status != 'ok'"), 2,
                 "K=4 R=3, M=1 and 4");
}

Test(sweep_replicas, report_groups_names_and_filters_replicas)
{
    char args[512], out[65536];
    snprintf(args, sizeof args, SWEEP "-K 2,4 --replicas 1,2 --db %s/g.db", dir);
    expect_cli(args, 0, "");
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s/g.db --metric speedup",
                            th_pipesim(), dir), 0);
    cr_expect(strstr(out, "strategy uniform, batch 8 per replica, replicas 1 (K devices)\n"),
              "%s", out);
    cr_expect(strstr(out, "strategy uniform, batch 8 per replica, replicas 2 (2 x K "
                          "devices)\n"), "%s", out);
    char *two = strstr(out, "replicas 2 (");
    cr_assert(two);
    cr_expect_eq(strstr(two + 1, "== model"), NULL, "two groups, replicas 2 last: %s", out);
    /* the filter: one group, of replicas 2 */
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s/g.db --metric speedup "
                            "--replicas 2", th_pipesim(), dir), 0);
    cr_expect(strstr(out, "replicas 2 (2 x K devices)"), "%s", out);
    cr_expect_eq(strstr(out, "replicas 1 ("), NULL, "%s", out);
    /* --best among replicas 2 names them and the devices */
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s/g.db --best --replicas 2",
                            th_pipesim(), dir), 0);
    cr_expect(strstr(out, "replicas 2 data-parallel pipelines, "), "%s", out);
    cr_expect(strstr(out, " devices (batch per replica)\n"), "%s", out);
    /* a best of one replica beside runs of two says so too, as the tables do
     * (the line was printed only for R > 1); a selection of one replica alone
     * prints as before. A slow shared bus makes the all-reduce lose. */
    th_put(dir, "slowbus.json", "{\"name\": \"slowbus\", \"devices\": [{\"name\": \"d\", "
           "\"count\": 4, \"flops\": 1e12, \"memory\": 1e10}], \"links\": [{\"name\": "
           "\"bus\", \"endpoints\": \"*\", \"bandwidth\": 1e6, \"latency\": 1e-2, "
           "\"shared\": true}]}");
    snprintf(args, sizeof args, "sweep --model " MODEL " --topology %s/slowbus.json -K 1,2 "
             "-M 1,4 --batch 8 --replicas 1,2 --quiet --db %s/s.db", dir, dir);
    expect_cli(args, 0, "");
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s/s.db --best", th_pipesim(),
                            dir), 0);
    cr_expect(strstr(out, "schedule gpipe, K=1, M=1, "), "%s", out);
    cr_expect(strstr(out, "\nreplicas 1 data-parallel pipeline, 1 device (batch per "
                          "replica)\n"), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s/s.db --best --replicas 1",
                            th_pipesim(), dir), 0);
    cr_expect_eq(strstr(out, "\nreplicas "), NULL, "%s", out);
    /* the run CSV: a replicas column after batch, one line per run */
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s/g.db --csv - --out /dev/null",
                            th_pipesim(), dir), 0);
    cr_expect_eq(strncmp(out, "model,model_hash,topology,topology_hash,schedule,remat,"
                              "strategy,batch,replicas,K,M,status,", 73), 0, "%s", out);
    cr_expect_eq(th_sh("test $(%s report --db %s/g.db --csv - --out /dev/null | grep -c "
                       "',uniform,8,2,[24],[14],ok,') -eq 4", th_pipesim(), dir), 0,
                 "K=2,4 x M=1,4 of replicas 2: %s", out);
    cr_expect_eq(th_sh("test $(%s report --db %s/g.db --csv - --out /dev/null | wc -l) -eq 9",
                       th_pipesim(), dir), 0, "header + 8 runs: %s", out);
    /* grid CSV and JSON carry replicas too */
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s/g.db --metric speedup "
                            "--format csv", th_pipesim(), dir), 0);
    cr_expect_eq(strncmp(out, "model,model_hash,topology,topology_hash,schedule,remat,strategy,"
                              "batch,replicas,metric,M,K,value,fits,analytic\n", 110), 0, "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s/g.db --metric speedup "
                            "--format json --replicas 2", th_pipesim(), dir), 0);
    cr_expect(strstr(out, "\"replicas\": 2,"), "%s", out);
    cr_expect_eq(strstr(out, "\"replicas\": 1,"), NULL, "%s", out);
}

/* A sweep without --replicas reports as before: no replicas in the headers. */
Test(sweep_replicas, one_replica_reports_as_before)
{
    char args[512], out[16384];
    snprintf(args, sizeof args, SWEEP "-K 2,4 --db %s/one.db", dir);
    expect_cli(args, 0, "");
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s/one.db --metric speedup",
                            th_pipesim(), dir), 0);
    cr_expect(strstr(out, "strategy uniform, batch 8\n"), "%s", out);
    cr_expect_eq(strstr(out, "replica"), NULL, "%s", out);
}

/* The runs table of schema version 1, as pipesim wrote it before replicas. */
static const char v1_ddl[] =
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY,"
    " model TEXT NOT NULL, model_hash TEXT NOT NULL,"
    " topology TEXT NOT NULL, topology_hash TEXT NOT NULL,"
    " schedule TEXT NOT NULL, K INTEGER NOT NULL, M INTEGER NOT NULL,"
    " batch INTEGER NOT NULL, remat TEXT NOT NULL, strategy TEXT NOT NULL,"
    " status TEXT NOT NULL, message TEXT, partition TEXT, micro_batch REAL,"
    " step_s REAL, samples_per_s REAL, baseline_step_s REAL, speedup REAL,"
    " bubble_sim REAL, bubble_analytic REAL, fits INTEGER, n_ops INTEGER,"
    " command TEXT NOT NULL, version TEXT NOT NULL,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"
    " UNIQUE (model, model_hash, topology, topology_hash, schedule, K, M, batch, remat,"
    "         strategy));"
    "CREATE TABLE stages ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " stage INTEGER NOT NULL, device INTEGER, first_layer INTEGER, n_layers INTEGER,"
    " busy_frac REAL, fwd_s REAL, bwd_s REAL, recomp_s REAL, static_bytes INTEGER,"
    " peak_act_bytes INTEGER, peak_bytes INTEGER, capacity_bytes REAL, fits INTEGER,"
    " PRIMARY KEY (run_id, stage));";

/* A version-1 database holding the one-replica rows of a current sweep
 * (so its keys and hashes are what a sweep of the same inputs makes), ids
 * shifted so that a kept id is visible. app_id: 0 for the release before
 * application_id, else 'PSSW'. */
static void make_v1(const char *v1, const char *from, int app_id)
{
    sqlite3 *h;
    char sql[2048];
    cr_assert_eq(sqlite3_open(v1, &h), SQLITE_OK);
    snprintf(sql, sizeof sql, "%s ATTACH '%s' AS cur;"
             "INSERT INTO runs SELECT id + 100, model, model_hash, topology, topology_hash,"
             " schedule, K, M, batch, remat, strategy, status, message, partition, micro_batch,"
             " step_s, samples_per_s, baseline_step_s, speedup, bubble_sim, bubble_analytic,"
             " fits, n_ops, command, version, created FROM cur.runs WHERE replicas = 1;"
             "INSERT INTO stages SELECT run_id + 100, stage, device, first_layer, n_layers,"
             " busy_frac, fwd_s, bwd_s, recomp_s, static_bytes, peak_act_bytes, peak_bytes,"
             " capacity_bytes, fits FROM cur.stages WHERE run_id IN"
             " (SELECT id FROM cur.runs WHERE replicas = 1);"
             "DETACH cur; PRAGMA user_version = 1; PRAGMA application_id = %d;", v1_ddl, from,
             app_id);
    cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_close(h);
}

static void expect_v1_read_then_upgraded(int app_id)
{
    char cur[128], v1[128], out[65536], want[65536];
    snprintf(cur, sizeof cur, "%s/cur.db", dir);
    snprintf(v1, sizeof v1, "%s/v1-%d.db", dir, app_id);
    struct ana_sweep_spec sp = spec();
    sp.nreplica = 1; /* { 1 } */
    if (access(cur, R_OK))
        cr_assert_eq(ana_sweep_run(&sp, cur, NULL), 0, "%s", ps_errmsg());
    make_v1(v1, cur, app_id);
    cr_assert_eq(count(v1, "SELECT count(*) FROM runs"), 8);
    cr_assert_eq(count(v1, "SELECT count(*) FROM stages"), 2 * (1 + 2 + 4 + 8));
    /* read as it is, every run of one replica, the same report as the current file's */
    struct ana_run *runs;
    int n;
    load(v1, &runs, &n);
    cr_assert_eq(n, 8);
    for (int i = 0; i < n; i++) {
        cr_expect_eq(runs[i].replicas, 1);
        cr_expect_eq(runs[i].n_stages, runs[i].K, "stages attached");
    }
    ana_runs_free(runs, n);
    cr_assert_eq(th_capture(want, sizeof want, "%s report --db %s --metric speedup,memory "
                            "--csv - --out /dev/null", th_pipesim(), cur), 0);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s --metric speedup,memory "
                            "--csv - --out /dev/null", th_pipesim(), v1), 0, "%s", out);
    cr_expect_str_eq(out, want);
    cr_expect_eq(count(v1, "PRAGMA user_version"), 1, "report left it as it was");
    /* the next sweep upgrades it, keeps its rows (resumed, not redone) and adds R = 2 */
    sp.nreplica = 2;
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&sp, v1, &st), 0, "%s", ps_errmsg());
    cr_expect_eq(st.skipped, 8);
    cr_expect_eq(st.done, 8);
    cr_expect_eq(count(v1, "PRAGMA user_version"), ANA_DB_SCHEMA);
    cr_expect_eq(count(v1, "PRAGMA application_id"), ANA_DB_APPLICATION_ID);
    cr_expect_eq(count(v1, "SELECT count(*) FROM runs WHERE replicas = 1 AND id > 100"), 8,
                 "the old rows, ids kept");
    cr_expect_eq(count(v1, "SELECT count(*) FROM stages WHERE run_id NOT IN (SELECT id FROM "
                           "runs)"), 0);
    cr_expect_eq(count(v1, "SELECT count(*) FROM stages s JOIN runs r ON s.run_id = r.id "
                           "WHERE r.replicas = 1"), 2 * (1 + 2 + 4 + 8));
    cr_expect_eq(count(v1, "SELECT count(*) FROM sqlite_master WHERE name = 'runs_v2'"), 0);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s --metric speedup,memory "
                            "--csv - --out /dev/null --replicas 1", th_pipesim(), v1), 0);
    cr_expect_str_eq(out, want);
}

Test(sweep_replicas, version_1_database_is_read_and_upgraded)
{
    expect_v1_read_then_upgraded(ANA_DB_APPLICATION_ID);
}

Test(sweep_replicas, version_1_database_without_application_id_too)
{
    expect_v1_read_then_upgraded(0);
}

Test(sweep_replicas, a_newer_schema_is_refused_in_one_line)
{
    char db[128], out[4096];
    snprintf(db, sizeof db, "%s/v3.db", dir);
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "CREATE TABLE runs(x); CREATE TABLE stages(x); "
                              "PRAGMA user_version = 3; PRAGMA application_id = 1347638103",
                              NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    int rc = th_capture(out, sizeof out, "%s report --db %s 2>&1", th_pipesim(), db);
    cr_expect_eq(rc, 8, "%s", out);
    cr_expect(strstr(out, "v3.db: a pipesim sweep database of schema version 3; this pipesim "
                          "reads versions 1 to 2 (use another --db)\n"), "%s", out);
    cr_expect_eq(strchr(out, '\n'), out + strlen(out) - 1, "one line: %s", out);
}
