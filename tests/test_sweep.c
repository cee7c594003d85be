/* The sweep database: expected rows, resume without duplicates, interrupts
 * keep finished rows, results independent of --jobs, corrupt / locked /
 * foreign databases get a clear error; the report's tables. */
#include "helpers.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <semaphore.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/ana_db.h"
#include "analysis/ana_predict.h"
#include "analysis/ana_report.h"
#include "analysis/ana_sweep.h"
#include "models/mdl_gen.h"
#include "base/ps_util.h"

#define TOPO "models/topologies/chain-8-ideal.json"
#define MODEL "mlp:layers=8,width=64"

static char dir[64];
static struct mdl_profile *prof;
static struct mdl_topology *topo;

static void teardown(void);

static void setup(void)
{
    th_teardown_at_exit(teardown); /* its tests may skip */
    th_tmpdir(dir, sizeof dir, "sweep");
    cr_assert_eq(mdl_model_open(MODEL, &prof), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_topology_load(TOPO, &topo), 0, "%s", ps_errmsg());
}

static void teardown(void)
{
    mdl_profile_free(prof);
    mdl_topology_free(topo);
    prof = NULL, topo = NULL; /* it runs again at the worker's exit */
    th_sh("rm -rf %s", dir);
}

TestSuite(sweep, .init = setup, .fini = teardown, .timeout = 60);

static long Ks[] = { 1, 2, 4 }, Ms[] = { 1, 2, 4 }, batches[] = { 8, 6, 12 }, M8[] = { 1, 2, 4, 8 };
static enum sch_remat remats[] = { SCH_REMAT_EXCEPT_LAST };
static enum sch_part_strategy strats[] = { SCH_PART_UNIFORM };

static struct ana_sweep_spec spec(int jobs)
{
    return (struct ana_sweep_spec){
        .profile = prof, .topo = topo, .model_arg = MODEL, .topo_arg = TOPO,
        .command = "test_sweep", .Ks = Ks, .nK = 3, .Ms = Ms, .nM = 3, .batches = batches,
        .nbatch = 3, .remats = remats, .nremat = 1, .strategies = strats, .nstrategy = 1,
        .jobs = jobs, .quiet = 1 };
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

static void path(char *buf, const char *name)
{
    snprintf(buf, 128, "%s/%s", dir, name);
}

Test(sweep, small_sweep_creates_the_expected_rows)
{
    char db[128];
    path(db, "s.db");
    struct ana_sweep_spec sp = spec(2);
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0, "%s", ps_errmsg());
    cr_assert_eq(st.total, 27);
    cr_assert_eq(st.done, 27);
    cr_assert_eq(st.failed, 3, "batch 6 with M=4, for each K");
    cr_assert_eq(count(db, "SELECT count(*) FROM runs"), 27);
    cr_assert_eq(count(db, "SELECT count(*) FROM runs WHERE status = 'SIM_EUSAGE' AND batch = 6 "
                           "AND M = 4 AND message LIKE '%not divisible%'"), 3);
    cr_assert_eq(count(db, "SELECT count(*) FROM stages"), 8 * (1 + 2 + 4));
    cr_assert_eq(count(db, "SELECT count(*) FROM runs WHERE command = 'test_sweep' AND "
                           "version = '" PS_VERSION "' AND length(model_hash) = 16 AND "
                           "length(topology_hash) = 16"), 27);
    cr_assert_eq(count(db, "PRAGMA user_version"), ANA_DB_SCHEMA);
    /* a stored row is what ana_predict says */
    struct ana_config cfg = { .profile = prof, .topo = topo, .K = 4, .M = 2, .batch = 12,
                              .remat = SCH_REMAT_EXCEPT_LAST };
    struct ana_prediction *p;
    cr_assert_eq(ana_predict(&cfg, &p), 0);
    ana_db *h;
    struct ana_run *runs;
    int n;
    cr_assert_eq(ana_db_open(db, 0, &h), 0, "%s", ps_errmsg());
    cr_assert_eq(ana_db_load(h, &runs, &n), 0);
    cr_assert_eq(n, 27);
    int found = 0;
    for (int i = 0; i < n; i++) {
        if (i)
            cr_assert_lt(ana_run_cmp(&runs[i - 1], &runs[i]), 0, "sorted, no duplicates");
        if (runs[i].K == 4 && runs[i].M == 2 && runs[i].batch == 12) {
            found++;
            cr_assert_eq(runs[i].step_s, p->step_s);
            cr_assert_eq(runs[i].speedup, p->speedup);
            cr_assert_eq(runs[i].bubble_sim, p->bubble_sim);
            cr_assert_eq(runs[i].n_stages, 4);
            for (int s = 0; s < 4; s++)
                cr_assert_eq(runs[i].stages[s].peak_mem, p->stages[s].peak_mem);
        }
    }
    cr_assert_eq(found, 1);
    /* A run another sweep stored between our look-up and our insert (two
     * sweeps into one database): the insert says so (1) and the row stands,
     * where SQLite's UNIQUE constraint used to end the sweep (exit 8). */
    ana_db *w;
    cr_assert_eq(ana_db_open(db, 1, &w), 0, "%s", ps_errmsg());
    cr_assert_eq(ana_db_begin(w), 0);
    struct ana_run again = runs[0];
    again.step_s *= 2;
    cr_expect_eq(ana_db_insert(w, &again, "raced"), 1, "%s", ps_errmsg());
    cr_assert_eq(ana_db_commit(w), 0);
    ana_db_close(w);
    struct ana_run *after;
    int n2;
    cr_assert_eq(ana_db_load(h, &after, &n2), 0);
    cr_expect_eq(n2, n);
    cr_expect_eq(after[0].step_s, runs[0].step_s, "the first row stands");
    ana_runs_free(after, n2);
    ana_runs_free(runs, n);
    ana_db_close(h);
    ana_prediction_free(p);
}

Test(sweep, rerun_resumes_without_duplicates)
{
    char db[128];
    path(db, "r.db");
    struct ana_sweep_spec sp = spec(2);
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0);
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0);
    cr_assert_eq(st.skipped, 27);
    cr_assert_eq(st.done, 0);
    sp.Ms = M8;
    sp.nM = 4;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0);
    cr_assert_eq(st.skipped, 27);
    cr_assert_eq(st.done, 9, "only the new M=8 column");
    cr_assert_eq(count(db, "SELECT count(*) FROM runs"), 36);
    cr_assert_eq(count(db, "SELECT count(*) FROM (SELECT DISTINCT K, M, batch FROM runs)"), 36);
}

/* The worker does not take job `at` before the drain thread has stored
 * `at` rows and done what the test's on_row does then (post): the signal
 * always comes between two jobs, however the machine schedules the threads,
 * so the rows kept are exactly `at`. */
struct gate {
    sem_t posted;
    int at;
};

static void gate_wait(void *ctx, int taken)
{
    struct gate *g = ctx;
    if (taken != g->at)
        return;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 60; /* a missed post fails the counts below, never hangs */
    while (sem_timedwait(&g->posted, &t) < 0 && errno == EINTR)
        ;
}

static void stop_after_two(void *ctx, int stored, int pending)
{
    (void)pending;
    if (stored == 2) {
        ana_sweep_interrupt();
        sem_post(&((struct gate *)ctx)->posted);
    }
}

Test(sweep, interrupt_keeps_finished_rows_and_resumes)
{
    char db[128];
    path(db, "i.db");
    static long K[] = { 2, 4, 6, 8 }, M[] = { 4096, 8192 }, B[] = { 8192 };
    struct gate g = { .at = 2 };
    cr_assert_eq(sem_init(&g.posted, 0, 0), 0);
    struct ana_sweep_spec sp = spec(1);
    sp.ctx = &g;
    sp.before_job = gate_wait;
    sp.Ks = K;
    sp.Ms = M;
    sp.batches = B;
    sp.nK = 4;
    sp.nM = 2;
    sp.nbatch = 1;
    sp.on_row = stop_after_two;
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), -PS_EINTR);
    cr_assert(strstr(ps_errmsg(), "run the same command again"), "%s", ps_errmsg());
    int kept = count(db, "SELECT count(*) FROM runs");
    cr_assert_eq(kept, 2, "kept %d rows (the third job is not taken after the interrupt)", kept);
    cr_assert_eq(st.done, kept);
    sp.on_row = NULL;
    sp.before_job = NULL;
    sem_destroy(&g.posted);
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0);
    cr_assert_eq(st.skipped, kept);
    cr_assert_eq(count(db, "SELECT count(*) FROM runs"), 8);
}

static char *report(const char *db, const struct ana_report_opts *o, int csv)
{
    ana_db *h;
    struct ana_run *runs;
    int n;
    cr_assert_eq(ana_db_open(db, 0, &h), 0, "%s", ps_errmsg());
    cr_assert_eq(ana_db_load(h, &runs, &n), 0);
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(csv ? ana_report_csv(runs, n, o, f) : ana_report_print(runs, n, o, f), 0);
    fclose(f);
    ana_runs_free(runs, n);
    ana_db_close(h);
    return buf;
}

Test(sweep, results_do_not_depend_on_jobs)
{
    char a[128], b[128];
    path(a, "j1.db");
    path(b, "j2.db");
    struct ana_sweep_spec s1 = spec(1), s2 = spec(2);
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&s1, a, &st), 0);
    cr_assert_eq(ana_sweep_run(&s2, b, &st), 0);
    struct ana_report_opts o = { .metrics = "normalized,speedup,step,bubble,memory" };
    for (int csv = 0; csv < 2; csv++) {
        char *x = report(a, &o, csv), *y = report(b, &o, csv);
        cr_assert_str_eq(x, y);
        free(x);
        free(y);
    }
}

/* The same topology name swept from two versions of its file: report's two
 * groups show their input hashes, where their headers read the same; a
 * database of one version each shows none. */
Test(sweep, report_tells_apart_the_same_names_from_other_files)
{
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_sh("cd %s && cp %s/models/topologies/chain-8-ideal.json t.json && "
                       "%s sweep --model mlp:layers=4,width=8 --topology t.json -K 1,2 -M 1,2 "
                       "--batch 4 --quiet --db h.db && %s report --db h.db --metric step > "
                       "one.txt && sed -i 's/\"bandwidth\": [0-9.e+]*/\"bandwidth\": 1e9/' t.json && "
                       "%s sweep --model mlp:layers=4,width=8 --topology t.json -K 1,2 -M 1,2 "
                       "--batch 4 --quiet --db h.db && %s report --db h.db --metric step > "
                       "two.txt", dir, wd, ps, ps, ps, ps), 0);
    cr_expect_eq(th_sh("grep -c '^== .*, inputs [0-9a-f]*/[0-9a-f]* (model/topology hash' "
                       "%s/two.txt | grep -qx 2", dir), 0, "two groups, both with hashes");
    cr_expect_eq(th_sh("grep -q 'inputs ' %s/one.txt", dir), 1, "one version: no hashes");
    /* the grid CSV and JSON carry the hashes too: two topology hashes, each
     * on its own four cells (they had the names alone, two identical keys) */
    cr_expect_eq(th_sh("cd %s && %s report --db h.db --metric step --format csv | python3 -c "
                       "'import csv,sys,collections; print(sorted(collections.Counter(r[\"topology_"
                       "hash\"] for r in csv.DictReader(sys.stdin)).values()))' | grep -qx "
                       "'\\[4, 4\\]'", dir, ps), 0, "grid CSV by topology_hash");
    cr_expect_eq(th_sh("cd %s && %s report --db h.db --metric step --format json | python3 -c "
                       "'import json,sys; print(len({c[\"topology_hash\"] for c in "
                       "json.load(sys.stdin)}))' | grep -qx 2", dir, ps), 0, "grid JSON hashes");
    /* --topology-hash selects one of them in report and plot (plot drew the
     * first group, and no option could reach the second); plot's note on
     * several groups names the hashes and the options */
    cr_expect_eq(th_sh("cd %s && %s plot --db h.db --kind speedup --out-dir p0 2> note.txt && "
                       "grep -q 'inputs [0-9a-f]\\{8\\}/[0-9a-f]\\{8\\} (model/topology hash) "
                       "(select with .*--model-hash, --topology-hash)' note.txt", dir, ps), 0,
                 "plot's note names the hashes");
    cr_assert_eq(th_sh("cd %s && %s report --db h.db --csv all.csv > /dev/null && python3 -c "
                       "'import csv; print(*sorted({r[\"topology_hash\"] for r in "
                       "csv.DictReader(open(\"all.csv\"))}))' > hashes.txt", dir, ps), 0);
    char hashes[2][32], hf[160];
    snprintf(hf, sizeof hf, "%s/hashes.txt", dir);
    FILE *f = fopen(hf, "r");
    cr_assert(f);
    cr_assert_eq(fscanf(f, "%31s %31s", hashes[0], hashes[1]), 2);
    fclose(f);
    /* the check of one group's plot: its speedup per (K, M) equals its runs' */
    snprintf(hf, sizeof hf, "%s/same.py", dir);
    f = fopen(hf, "w");
    cr_assert(f);
    fputs("import csv, sys\n"
          "rs = list(csv.DictReader(open(sys.argv[1])))\n"
          "assert len(rs) == 4 and {r['topology_hash'] for r in rs} == {sys.argv[3]}, rs\n"
          "want = {(int(r['K']), int(r['M'])): float(r['speedup']) for r in rs}\n"
          "got, K = {}, None\n"
          "for l in open(sys.argv[2]):\n"
          "    if l.startswith('# K='):\n"
          "        K = int(l[4:])\n"
          "    elif l.strip():\n"
          "        m, v = l.split()[:2]\n"
          "        got[(K, int(m))] = float(v)\n"
          "assert got.keys() == want.keys(), (got, want)\n"
          "assert all(abs(got[k] - want[k]) <= 1e-9 * want[k] for k in want), (got, want)\n",
          f);
    fclose(f);
    for (int i = 0; i < 2; i++) {
        /* a prefix of 8 in capitals: the group's 4 runs alone, and its plot */
        char pre[9];
        snprintf(pre, sizeof pre, "%.8s", hashes[i]);
        for (char *c = pre; *c; c++)
            *c = (char)toupper((unsigned char)*c);
        cr_expect_eq(th_sh("cd %s && %s report --db h.db --topology-hash %s --csv r%d.csv "
                           "> /dev/null && %s plot --db h.db --kind speedup --out-dir p%d "
                           "--topology-hash %s 2> err%d.txt && test ! -s err%d.txt && "
                           "python3 same.py r%d.csv p%d/speedup.dat %s", dir, ps, pre, i, ps,
                           i + 1, pre, i, i, i, i + 1, hashes[i]), 0, "group %d", i);
    }
    cr_expect_eq(th_sh("cd %s && cmp -s p1/speedup.dat p2/speedup.dat", dir), 1,
                 "the two groups' plots differ");
    cr_expect_eq(th_sh("cd %s && %s report --db h.db --topology-hash 12g4 >/dev/null 2>&1",
                       dir, ps), 2, "not hex: usage");
    cr_expect_eq(th_sh("cd %s && %s plot --db h.db --model-hash 0123456789abcdef0 "
                       "--out-dir p9 >/dev/null 2>&1", dir, ps), 2, "17 digits: usage");
}

Test(sweep, report_tables)
{
    char db[128];
    path(db, "t.db");
    struct ana_sweep_spec sp = spec(2);
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0);
    struct ana_report_opts o = { .metrics = "normalized", .batch = 12, .base_K = 2,
                                 .base_M = 1 };
    char *t = report(db, &o, 0);
    cr_assert(strstr(t, "== model " MODEL ", topology " TOPO ", schedule gpipe, remat "
                        "except_last, strategy uniform, batch 12\n"), "%s", t);
    cr_assert(strstr(t, "baseline K=2 M=1"), "%s", t);
    /* row M=1: the K=2 column is the baseline itself */
    char *row = strstr(t, "\n       1 ");
    cr_assert(row, "%s", t);
    double v1, v2, v4;
    cr_assert_eq(sscanf(row, " %*d %lf %lf %lf", &v1, &v2, &v4), 3, "%s", row);
    cr_assert_float_eq(v2, 1.0, 1e-12);
    cr_assert_eq(strstr(strstr(t, "== model") + 1, "== model"), NULL, "one group: %s", t);
    free(t);
    o.batch = 6; /* the M=4 row could not run */
    o.base_K = o.base_M = 0;
    t = report(db, &o, 0);
    cr_assert(strstr(t, "- 3 configurations could not run; first, K=1 M=4: --batch 6 is not "
                        "divisible by -M 4"), "%s", t);
    free(t);
    o.batch = 0;
    char *c = report(db, &o, 1);
    int lines = 0;
    for (char *p = c; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 28, "header + 27 runs");
    free(c);
}

/* The bubble grid names each schedule's own formula, and the grid CSV and
 * JSON carry its analytic figure (helper-114: every group was titled
 * (K-1)/(M+K-1), interleaved:2's 27.3 % among them, and the exports dropped
 * the analytic column the table prints). */
Test(sweep, the_bubble_grid_names_each_schedule_s_formula_and_exports_it)
{
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_sh("cd %s && %s sweep --model mlp:layers=16,width=1024 --topology %s/"
                       "models/topologies/v100-nvlink-8.json -K 4 -M 4 --batch 8 --schedule gpipe,interleaved:2,zb-auto "
                       "--remat never --quiet --jobs 1 --db b.db && %s report --db b.db "
                       "--metric bubble > b.txt", dir, ps, wd, ps), 0);
    cr_expect_eq(th_sh("grep -A3 'schedule gpipe,' %s/b.txt | grep -qx 'bubble %%, "
                       "simulated/analytic (K-1)/(M+K-1)'", dir), 0, "gpipe");
    cr_expect_eq(th_sh("grep -A3 'schedule interleaved:2,' %s/b.txt | grep -qx 'bubble %%, "
                       "simulated/analytic (K-1)/(vM+K-1)'", dir), 0, "interleaved:2");
    cr_expect_eq(th_sh("grep -A3 'schedule zb-auto,' %s/b.txt | grep -qx 'bubble %%, "
                       "simulated/analytic (-: no closed form for this schedule or these stages)'", dir), 0,
                 "zb-auto");
    /* interleaved:2 at K = 4, M = 4: 3/(8+3) = 27.27 % */
    cr_expect_eq(th_sh("cd %s && %s report --db b.db --metric bubble,step --format csv | "
                       "python3 -c 'import csv,sys; r={(x[\"schedule\"],x[\"metric\"]):"
                       "x[\"analytic\"] for x in csv.DictReader(sys.stdin)}; "
                       "assert abs(float(r[\"interleaved:2\",\"bubble\"])-300/11)<1e-9; "
                       "assert r[\"zb-auto\",\"bubble\"]==\"\"; "
                       "assert r[\"gpipe\",\"step\"]==\"\"'", dir, ps), 0,
                 "grid CSV's analytic column");
    cr_expect_eq(th_sh("cd %s && %s report --db b.db --metric bubble,step --format json | "
                       "python3 -c 'import json,sys; r={(x[\"schedule\"],x[\"metric\"]):"
                       "x for x in json.load(sys.stdin)}; "
                       "assert abs(r[\"interleaved:2\",\"bubble\"][\"analytic\"]"
                       "-300/11)<1e-9; "
                       "assert r[\"zb-auto\",\"bubble\"][\"analytic\"] is None; "
                       "assert \"analytic\" not in r[\"gpipe\",\"step\"]'", dir, ps),
                 0, "grid JSON's analytic");
}

static void expect_cli(const char *args, int status, const char *what)
{
    char err[128];
    path(err, "err.txt");
    int rc = th_sh("%s %s 2>%s >/dev/null", th_pipesim(), args, err);
    char msg[2048] = "";
    FILE *f = fopen(err, "r");
    size_t n = fread(msg, 1, sizeof msg - 1, f);
    msg[n] = 0;
    fclose(f);
    cr_expect_eq(rc, status, "'%s' exited %d, not %d: %s", args, rc, status, msg);
    cr_expect(strstr(msg, what), "'%s': message '%s' lacks '%s'", args, msg, what);
}

#define SWEEP "sweep --model " MODEL " --topology " TOPO " -K 1,2 -M 1,2 --batch 4 --quiet "

Test(sweep, corrupt_foreign_and_locked_databases)
{
    char db[128], args[512];
    path(db, "garbage.db");
    FILE *f = fopen(db, "w");
    for (int i = 0; i < 200; i++)
        fputs("this is not a database at all\n", f);
    fclose(f);
    snprintf(args, sizeof args, SWEEP "--db %s", db);
    expect_cli(args, 8, "garbage.db");
    expect_cli(args, 8, "not an SQLite database");
    snprintf(args, sizeof args, "report --db %s", db);
    expect_cli(args, 8, "not an SQLite database");
    snprintf(args, sizeof args, "report --db %s/missing.db", dir);
    expect_cli(args, 5, "missing.db");

    /* a truncated results database */
    char good[128];
    path(good, "good.db");
    snprintf(args, sizeof args, SWEEP "--db %s", good);
    expect_cli(args, 0, "");
    cr_assert_eq(th_sh("head -c 3000 %s > %s/trunc.db", good, dir), 0);
    snprintf(args, sizeof args, "report --db %s/trunc.db", dir);
    expect_cli(args, 8, "trunc.db");

    /* somebody else's SQLite file, and a future schema */
    sqlite3 *h;
    path(db, "foreign.db");
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "CREATE TABLE t (x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    snprintf(args, sizeof args, SWEEP "--db %s", db);
    expect_cli(args, 8, "not a pipesim sweep database");
    path(db, "future.db");
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "CREATE TABLE runs (x); PRAGMA user_version = 7", NULL, NULL,
                              NULL), SQLITE_OK);
    sqlite3_close(h);
    snprintf(args, sizeof args, "report --db %s", db);
    expect_cli(args, 8, "schema version 7");

    /* locked by another writer */
    cr_assert_eq(sqlite3_open(good, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    snprintf(args, sizeof args, "sweep --model " MODEL " --topology " TOPO " -K 1,2 -M 1,2,4 "
             "--batch 4 --quiet --db %s", good);
    expect_cli(args, 8, "locked");
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(h);
    expect_cli(args, 0, "");
    cr_assert_eq(count(good, "SELECT count(*) FROM runs"), 6);
}

/* A grid of 2^33 configurations wrapped the int count to 0 and the sweep wrote
 * its job list past the end (exit 139): a usage error naming the size, before
 * the database is made. */
Test(sweep, a_grid_beyond_int_is_a_usage_error_before_any_work)
{
    char db[128], args[512];
    path(db, "new/ovf.db");
    snprintf(args, sizeof args, "sweep --model " MODEL " --topology " TOPO " -K \"$L\" "
             "-M \"$L\" --batch \"$L\" --quiet --db %s", db);
    char err[128];
    path(err, "err.txt");
    int rc = th_sh("L=$(seq -s, 1 2048); %s %s 2>%s >/dev/null", th_pipesim(), args, err);
    char msg[2048];
    th_slurp(dir, "err.txt", msg, sizeof msg);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, msg);
    cr_assert(strstr(msg, "the grid has 8589934592 configurations (1 schedule x 1 strategy x "
                          "1 remat x 2048 batches x 1 replica x 2048 K x 2048 M)"), "%s", msg);
    struct stat sb;
    cr_assert(stat(db, &sb) != 0, "the database was made");
    path(db, "new");
    cr_assert(stat(db, &sb) != 0, "its folder was made");
}

/* PIPESIM_MEMORY_LIMIT is the machine's, not a configuration's: malformed, the
 * sweep stored every configuration as SIM_EUSAGE and never ran them again; now
 * exit 2 before any work, as predict, and the next sweep stores what ran. */
Test(sweep, a_malformed_memory_limit_is_refused_not_stored)
{
    char db[128], args[512];
    path(db, "envt.db");
    snprintf(args, sizeof args, SWEEP "--db %s", db);
    char env[640];
    snprintf(env, sizeof env, "-c 'PIPESIM_MEMORY_LIMIT=abc exec %s %s'", th_pipesim(), args);
    char err[128];
    path(err, "err.txt");
    int rc = th_sh("sh %s 2>%s >/dev/null", env, err);
    char msg[2048];
    th_slurp(dir, "err.txt", msg, sizeof msg);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, msg);
    cr_assert(strstr(msg, "PIPESIM_MEMORY_LIMIT: 'abc' is not a positive byte count"), "%s",
              msg);
    struct stat sb;
    cr_assert(stat(db, &sb) != 0, "the database was made");
    expect_cli(args, 0, "");
    cr_assert_eq(count(db, "SELECT count(*) FROM runs WHERE status = 'ok'"), 4);
}

/* Names and partitions were cut at 255 bytes in the database: two copies of a
 * topology under long paths alike in their first 255 bytes were one key (the
 * second never simulated), report --topology with the whole path matched
 * nothing, and K=200's partition was stored "10,10,...,... (200 stages)". */
Test(sweep, long_names_and_partitions_are_stored_whole, .timeout = 120)
{
    char longdir[512], t1[640], t2[640], db[128], args[2048], csv[128];
    char seg[201];
    memset(seg, 'a', 200);
    seg[200] = 0;
    snprintf(longdir, sizeof longdir, "%s/%s/%s", dir, seg, seg);
    snprintf(t1, sizeof t1, "%s/one/t.json", longdir);
    snprintf(t2, sizeof t2, "%s/two/t.json", longdir);
    cr_assert_eq(th_sh("mkdir -p %s/one %s/two && cp " TOPO " %s && cp " TOPO " %s", longdir,
                       longdir, t1, t2), 0);
    path(db, "long.db");
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "sweep --model " MODEL " --topology %s -K 1,2 -M 1 "
                 "--batch 4 --quiet --db %s", i ? t2 : t1, db);
        expect_cli(args, 0, "");
    }
    cr_assert_eq(count(db, "SELECT count(*) FROM runs"), 4, "each path its own rows");
    path(csv, "long.csv");
    snprintf(args, sizeof args, "report --db %s --topology %s --csv %s", db, t2, csv);
    expect_cli(args, 0, "");
    char text[8192];
    th_slurp(dir, "long.csv", text, sizeof text);
    int lines = 0;
    for (char *p = text; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 3, "header + the two runs of the whole path: %s", text);
    cr_assert(strstr(text, t2), "%s", text);

    /* K=200 on 200 devices: 10 layers a stage, the partition in the CSV whole */
    th_put(dir, "t200.json",
             "{ \"name\": \"t200\", \"bytes_per_param\": 12, \"devices\": [ { \"name\": \"d\","
             " \"count\": 200, \"flops\": 1e14, \"memory\": 16e9, \"mem_bandwidth\": 0,"
             " \"efficiency\": { \"max\": 1.0, \"batch_half\": 0, \"overhead_s\": 0 } } ],"
             " \"links\": [ { \"name\": \"bus\", \"endpoints\": \"*\", \"shared\": true,"
             " \"bandwidth\": 1e11, \"latency\": 1e-6 } ] }\n");
    path(db, "k200.db");
    snprintf(args, sizeof args, "sweep --model mlp:layers=2000,width=16 --topology %s/t200.json"
             " -K 200 -M 1 --batch 1 --quiet --db %s", dir, db);
    expect_cli(args, 0, "");
    path(csv, "k200.csv");
    snprintf(args, sizeof args, "report --db %s --csv %s", db, csv);
    expect_cli(args, 0, "");
    char want[1024] = "\"";
    for (int s = 0; s < 200; s++)
        strcat(want, s ? ",10" : "10");
    strcat(want, "\"");
    char *big = malloc(1 << 16);
    cr_assert(big);
    th_slurp(dir, "k200.csv", big, 1 << 16);
    cr_assert(strstr(big, want), "the partition is not whole: %s", big);
    free(big);
}

/* Another program's file with tables named runs and stages and user_version 2
 * passed the kind check as a legacy sweep database: the sweep stamped its
 * application_id and committed, and only then failed preparing its
 * statements (exit 8, the file changed). Its columns are checked first: the
 * file is left byte for byte as it was. */
Test(sweep, another_programs_runs_table_is_refused_untouched)
{
    char db[128], args[512];
    path(db, "leg.db");
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "CREATE TABLE runs (a, b); CREATE TABLE stages (c);"
                              " PRAGMA user_version = 2", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    cr_assert_eq(th_sh("cp %s %s.orig", db, db), 0);
    snprintf(args, sizeof args, SWEEP "--db %s", db);
    expect_cli(args, 8, "table runs has no column id");
    cr_assert_eq(th_sh("cmp -s %s %s.orig", db, db), 0, "the file was written");
    snprintf(args, sizeof args, "report --db %s", db);
    expect_cli(args, 8, "not a pipesim sweep database");
    cr_assert_eq(th_sh("cmp -s %s %s.orig", db, db), 0, "the file was written");
}

/* A database of SWEEP's runs with a reader holding a transaction on it, as an
 * open sqlite3 shell in BEGIN does; the caller commits and closes it. */
static sqlite3 *held_by_a_reader(const char *db)
{
    char args[512];
    snprintf(args, sizeof args, SWEEP "--db %s", db);
    expect_cli(args, 0, "");
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "BEGIN; SELECT count(*) FROM runs", NULL, NULL, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(h));
    return h;
}

/* A sweep of 6 configurations into db, started in the background, its
 * stderr in errname (under the suite's folder). */
static pid_t sweep_behind(const char *db, const char *errname)
{
    char err[128], args[512];
    path(err, errname);
    snprintf(args, sizeof args, "exec %s sweep --model " MODEL " --topology " TOPO " -K 1,2 "
             "-M 1,2,4 --batch 4 --quiet --db %s 2>%s", th_pipesim(), db, err);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", args, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* A reader holding its transaction (an open sqlite3 shell, a long report) for
 * more than 2 s made the sweep's commit fail, exit 8 "locked ... (another
 * pipesim writing to it?)": a commit now waits for readers. The reader lets
 * go 3 s after the sweep began writing (its journal is there). */
Test(sweep, a_reader_holding_the_database_does_not_end_the_sweep, .timeout = 120)
{
    char db[128], journal[160];
    path(db, "read.db");
    sqlite3 *h = held_by_a_reader(db);
    snprintf(journal, sizeof journal, "%s-journal", db);
    pid_t pid = sweep_behind(db, "read.err");
    struct stat sb;
    int waited = 0, status = 0, reaped = 0;
    while (stat(journal, &sb) != 0 && !(reaped = waitpid(pid, &status, WNOHANG) == pid) &&
           waited++ < 6000)
        usleep(10000);
    if (!reaped)
        sleep(3);
    sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(h);
    if (!reaped && waitpid(pid, &status, 0) != pid)
        cr_assert_fail("waitpid: %s", strerror(errno));
    char msg[2048];
    th_slurp(dir, "read.err", msg, sizeof msg);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d: %s", status, msg);
    cr_assert_eq(count(db, "SELECT count(*) FROM runs"), 6);
}

/* A reader's transaction neither holds a sweep at its open (a current file's
 * schema check wrote nothing, yet its COMMIT waited for the reader: up to 10
 * minutes, helper-110) nor keeps a stopped sweep waiting: SIGTERM while a
 * commit waits for the reader ends the wait, exit 10, the rows since the
 * last commit not stored (a rerun resumes). */
Test(sweep, a_reader_neither_holds_the_open_nor_a_stopped_sweep, .timeout = 120)
{
    char db[128], args[512], journal[160];
    path(db, "hold.db");
    sqlite3 *h = held_by_a_reader(db);
    snprintf(args, sizeof args, SWEEP "--db %s", db);
    expect_cli(args, 0, ""); /* all there already: done with the reader still holding */
    snprintf(journal, sizeof journal, "%s-journal", db);
    pid_t pid = sweep_behind(db, "hold.err");
    struct stat sb; /* its first rows written: a commit is, or will be, waiting */
    int status = 0, reaped = 0;
    for (int i = 0; i < 6000 && stat(journal, &sb) != 0; i++) {
        if ((reaped = waitpid(pid, &status, WNOHANG) == pid))
            break;
        usleep(10000);
    }
    if (!reaped) {
        kill(pid, SIGTERM);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
    }
    sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(h);
    char msg[2048];
    th_slurp(dir, "hold.err", msg, sizeof msg);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 10, "status %d: %s", status, msg);
    cr_assert(strstr(msg, "stopped while waiting for another program reading the database"),
              "%s", msg);
    snprintf(args, sizeof args, "sweep --model " MODEL " --topology " TOPO " -K 1,2 -M 1,2,4 "
             "--batch 4 --quiet --db %s", db);
    expect_cli(args, 0, ""); /* the rerun resumes: every configuration stored */
    cr_assert_eq(count(db, "SELECT count(*) FROM runs"), 6);
}

/* A sweep that could not make its new database (here no byte may be written:
 * a full disk) left the empty file SQLite made and so the folders made for it:
 * both are taken away again. */
Test(sweep, a_database_that_cannot_be_made_leaves_no_file_or_folder)
{
    char db[128], args[640];
    path(db, "new/sub/x.db");
    snprintf(args, sizeof args, "trap '' XFSZ; ulimit -f 0; exec %s " SWEEP "--db %s",
             th_pipesim(), db);
    char q[700];
    snprintf(q, sizeof q, "sh -c \"%s\" 2>/dev/null", args);
    int rc = th_sh("%s", q);
    cr_assert(rc == 8 || rc == 5, "exit %d", rc); /* SQLite's write error, or disk full */
    char folder[128];
    path(folder, "new");
    struct stat sb;
    cr_assert(stat(db, &sb) != 0, "the empty database file is left");
    cr_assert(stat(folder, &sb) != 0, "its folders are left");
}

/* A run's stages rows not matching it (a row deleted: report printed 0.000;
 * an extra stage 7 of a K=2 run: report --metric memory printed its value)
 * are a damaged database, exit 8 naming the file and the run. */
Test(sweep, stage_rows_that_do_not_match_the_run_are_refused)
{
    char good[128], db[128], args[512];
    path(good, "st.db");
    snprintf(args, sizeof args, SWEEP "--db %s", good);
    expect_cli(args, 0, "");
    const char *edits[] = {
        "DELETE FROM stages WHERE run_id = (SELECT id FROM runs WHERE K = 2 AND M = 2)",
        "INSERT INTO stages SELECT run_id, 7, device, first_layer, n_layers, busy_frac, fwd_s,"
        " bwd_s, recomp_s, static_bytes, peak_act_bytes, peak_bytes * 100, capacity_bytes,"
        " fits FROM stages WHERE stage = 0 AND run_id = (SELECT id FROM runs WHERE K = 2 AND"
        " M = 2)",
        "DELETE FROM stages WHERE stage = 1 AND run_id = (SELECT id FROM runs WHERE K = 2 AND"
        " M = 2)",
    };
    const char *what[] = { "0 stages rows where its partition has 2 stages",
                           "a stages row with stage 7 out of place",
                           "1 stages row where its partition has 2 stages" };
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "st%d.db", i);
        path(db, name);
        cr_assert_eq(th_sh("cp %s %s", good, db), 0);
        sqlite3 *h;
        cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
        cr_assert_eq(sqlite3_exec(h, edits[i], NULL, NULL, NULL), SQLITE_OK, "%s",
                     sqlite3_errmsg(h));
        sqlite3_close(h);
        snprintf(args, sizeof args, "report --db %s --metric memory", db);
        expect_cli(args, 8, what[i]);
        expect_cli(args, 8, "(schedule gpipe, K=2, M=2, batch 4, replicas 1)");
        expect_cli(args, 8, name);
        snprintf(args, sizeof args, "plot --db %s --out-dir %s/p%d", db, dir, i);
        expect_cli(args, 8, what[i]);
    }
}

Test(sweep, ctrl_c_keeps_rows_and_exits_10, .timeout = 120)
{
    char db[128];
    path(db, "c.db");
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(126);
        execl(th_pipesim(), "pipesim", "sweep", "--model", "mlp:layers=64,width=256",
              "--topology", TOPO, "-K", "1,2,3,4,5,6,7,8", "-M", "8192,16384", "--batch",
              "16384", "--strategy", "uniform,gpipe,balance-by-size", "--jobs", "1", "--quiet",
              "--db", db, (char *)NULL);
        _exit(127);
    }
    /* wait until a row is committed, then interrupt */
    int rows = 0;
    for (int i = 0; i < 3000 && rows == 0; i++) {
        usleep(10000);
        sqlite3 *h;
        sqlite3_stmt *st;
        if (access(db, R_OK) || sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
            continue;
        if (sqlite3_prepare_v2(h, "SELECT count(*) FROM runs", -1, &st, NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW)
                rows = sqlite3_column_int(st, 0);
            sqlite3_finalize(st);
        }
        sqlite3_close(h);
    }
    cr_assert_gt(rows, 0, "no row was committed");
    kill(pid, SIGINT);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "killed by a signal instead of exiting");
    int kept = count(db, "SELECT count(*) FROM runs");
    if (kept == 48) {
        cr_assert_eq(WEXITSTATUS(status), 0); /* finished before the signal came */
        cr_skip_test("the sweep finished before SIGINT: the interruption not exercised");
    }
    cr_assert_eq(WEXITSTATUS(status), 10, "exit status %d", WEXITSTATUS(status));
    cr_assert_geq(kept, rows);
    cr_assert_eq(count(db, "SELECT count(*) FROM stages WHERE run_id NOT IN (SELECT id FROM "
                           "runs)"), 0);
}

Test(sweep, cli_usage_errors)
{
    char args[512];
    expect_cli("sweep --help", 0, "");
    expect_cli("report --help", 0, "");
    expect_cli("plot --help", 0, "");
    expect_cli("sweep --model " MODEL " --topology " TOPO " -K 1 -M 1", 2, "--batch");
    expect_cli("sweep --bogus", 2, "unknown option '--bogus'");
    expect_cli("sweep --model " MODEL " --topology " TOPO " -K 1,x -M 1 --batch 4", 2, "-K");
    expect_cli("sweep --model " MODEL " --topology " TOPO " -K 1 -M 1 --batch 4 --remat often",
               2, "often");
    expect_cli("sweep --model " MODEL " --topology " TOPO " -K 1 -M 1 --batch 4 --strategy "
               "best", 2, "best");
    expect_cli("sweep --model " MODEL " --topology " TOPO " -K 1 -M 1 --batch 4 --schedule "
               "nope", 2, "nope");
    expect_cli("report --db", 2, "--db");
    char db[128];
    path(db, "u.db");
    snprintf(args, sizeof args, SWEEP "--db %s", db);
    expect_cli(args, 0, "");
    snprintf(args, sizeof args, "report --db %s --metric nonsense", db);
    expect_cli(args, 2, "nonsense");
    snprintf(args, sizeof args, "report --db %s --baseline 2", db);
    expect_cli(args, 2, "K,M");
    snprintf(args, sizeof args, "report --db %s --out %s/r.txt --csv %s/r.csv", db, dir, dir);
    expect_cli(args, 0, "");
    cr_assert_eq(th_sh("grep -q 'normalized throughput, baseline K=1 M=1' %s/r.txt", dir), 0);
    cr_assert_eq(th_sh("test $(wc -l < %s/r.csv) -eq 5", dir), 0, "header + 4 runs");
}

/* report says when the grid's baseline does not fit (a 24-layer Transformer
 * on one 16 GiB V100 does not), and --best gives its step in the unit that
 * reads (seconds here, not 64627.000000 ms). */
Test(sweep, report_says_the_baseline_does_not_fit)
{
    char db[128], out[4096];
    path(db, "nofit.db");
    cr_assert_eq(th_sh("%s sweep --model transformer:L=24 --topology models/topologies/"
                       "pcie-8gpu.json -K 1,4 -M 1,4 --batch 128 --db %s --quiet", th_pipesim(),
                       db), 0);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s --metric normalized",
                            th_pipesim(), db), 0);
    cr_expect(strstr(out, "baseline K=1 M=1 (") &&
              strstr(out, "; it does not fit in device memory, so the ratios are over a "
                          "configuration that cannot run)"), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s --best", th_pipesim(), db), 0);
    cr_expect(strstr(out, "\nstep 64.627 s, 1.98 samples/s"), "%s", out);
}

/* A whole model beyond the engine's range (the K=1 baseline) while each
 * stage is within it: the runs are stored, their speedup is NULL, and the
 * report says n/a and why (it stored 0: a grid of 0.000, "speedup 0.00x",
 * zeros in the plot's data). Values that do not exist read back as such:
 * zb-auto's analytic bubble is '-', not 0.0. */
Test(sweep, a_baseline_out_of_range_is_no_speedup_not_zero)
{
    char db[128], out[4096];
    th_put(dir, "huge.csv", "name,fwd_flops,params,out_bytes,stash_bytes\n"
                            "a,1e6,3e15,64,128\nb,1e6,3e15,64,128\nc,1e6,3e15,64,128\n"
                            "d,1e6,3e15,64,128\n");
    path(db, "huge.db");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s sweep --model %s/huge.csv --topology " TOPO " -K 2,4 -M 4 --batch 4 "
                       "--db %s --quiet", ps, dir, db), 0);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s --metric speedup", ps, db), 0);
    cr_expect(strstr(out, "       4        n/a*        n/a*\n") &&
              strstr(out, "n/a: the one-device baseline (K=1, M=1) is beyond the engine's "
                          "range"), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s --best", ps, db), 0);
    cr_expect(strstr(out, ", speedup not simulated (the one-device baseline is out of range)"),
              "%s", out);
    /* a column is as wide as its widest cell: 64 PiB in GiB keeps its line */
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s --metric memory", ps, db), 0);
    cr_expect(strstr(out, "   M \\ K             2             4\n"
                          "       4 67055225.372* 33527612.686*\n"), "%s", out);
    /* CSV: baseline_step_s and speedup empty (fields 17 and 18 of the header) */
    cr_assert_eq(th_sh("cd %s && %s report --db huge.db --csv r.csv --out /dev/null && "
                       "head -1 r.csv | cut -d, -f17,18 | grep -qx 'baseline_step_s,speedup' && "
                       "sed -n 2p r.csv | grep -q ',[0-9.e+-]*,[0-9.e+-]*,,,[0-9.e+-]*,'",
                       dir, ps), 0);
    /* grid cells: no speedup cell at all */
    cr_assert_eq(th_sh("cd %s && %s report --db huge.db --format csv --metric speedup,step | "
                       "grep -c ',speedup,' | grep -qx 0", dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && %s report --db huge.db --format json --metric speedup | "
                       "grep -qx '\\[\\]'", dir, ps), 0);
    /* the plot leaves the speedup figure out, and alone it is an error */
    cr_assert_eq(th_sh("cd %s && %s plot --db huge.db --kind speedup --out-dir figs 2>err.txt",
                       dir, ps), 4);
    cr_assert_eq(th_sh("cd %s && grep -q 'no speedup figure: the one-device baseline' err.txt "
                       "&& test ! -e figs", dir), 0);
    /* a database written before stored such a speedup as 0: read as none */
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "UPDATE runs SET speedup = 0, baseline_step_s = 0", NULL, NULL,
                              NULL), SQLITE_OK);
    sqlite3_close(h);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s --metric speedup", ps, db), 0);
    cr_expect(strstr(out, "n/a*") && !strstr(out, "0.000"), "%s", out);
    char zb[128];
    path(zb, "zb.db");
    cr_assert_eq(th_sh("%s sweep --model " MODEL " --topology " TOPO " -K 2 -M 4 --batch 8 "
                       "--schedule zb-auto --db %s --quiet", ps, zb), 0);
    cr_assert_eq(th_capture(out, sizeof out, "%s report --db %s --metric bubble", ps, zb), 0);
    cr_expect(strstr(out, "/-\n") && !strstr(out, "/0.0"), "%s", out);
}

/* ---- databases that never lose work (issue 12) ---- */

/* The bytes and modification time of a file, to check it was left alone. */
struct snap {
    char *bytes;
    size_t n;
    struct timespec mtime;
};

static void snap_take(const char *p, struct snap *s)
{
    struct stat sb;
    cr_assert_eq(stat(p, &sb), 0, "%s", p);
    s->mtime = sb.st_mtim;
    s->n = (size_t)sb.st_size;
    s->bytes = malloc(s->n + 1);
    FILE *f = fopen(p, "rb");
    cr_assert(s->bytes && f);
    cr_assert_eq(fread(s->bytes, 1, s->n, f), s->n);
    fclose(f);
}

static void expect_unchanged(const char *p, struct snap *s)
{
    struct snap now;
    snap_take(p, &now);
    cr_expect_eq(now.n, s->n, "%s: size changed", p);
    cr_expect(now.n == s->n && !memcmp(now.bytes, s->bytes, s->n), "%s: bytes changed", p);
    cr_expect(now.mtime.tv_sec == s->mtime.tv_sec && now.mtime.tv_nsec == s->mtime.tv_nsec,
              "%s: modified", p);
    cr_expect_eq(th_sh("ls %s-journal %s-wal 2>/dev/null | grep -q .", p, p), 1,
                 "%s: a journal was left", p);
    free(now.bytes);
    free(s->bytes);
    s->bytes = NULL;
}

static void make_db(const char *p, const char *sql)
{
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(p, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_close(h);
}

Test(sweep, db_names_sqlite_keeps_off_disk_are_usage_errors)
{
    static const struct { const char *db, *why; } cases[] = {
        { "''", "--db '': an empty name is SQLite's temporary database, deleted on exit, so "
                "the results would vanish" },
        { ":memory:", "--db ':memory:': SQLite's in-memory database is lost on exit, so the "
                      "results would vanish" },
        { "file::memory:", "--db 'file::memory:': SQLite may read a 'file:' name as a URI" },
        { "'file:r.db?mode=memory'", "SQLite may read a 'file:' name as a URI" },
    };
    char args[512];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(args, sizeof args, SWEEP "--db %s", cases[i].db);
        expect_cli(args, 2, cases[i].why);
        snprintf(args, sizeof args, "report --db %s", cases[i].db);
        expect_cli(args, 2, cases[i].why);
        snprintf(args, sizeof args, "plot --db %s --out-dir %s/p", cases[i].db, dir);
        expect_cli(args, 2, cases[i].why);
    }
    /* nothing was created under those names, here or in the working directory */
    cr_expect_eq(th_sh("ls %s | grep -v err.txt | grep -q .", dir), 1, "a file was created");
    cr_expect_eq(th_sh("test -e :memory: || test -e file::memory:"), 1);
    struct ana_sweep_spec sp = spec(1);
    cr_expect_eq(ana_sweep_run(&sp, ":memory:", NULL), -PS_EUSAGE);
    ana_db *h;
    cr_expect_eq(ana_db_open("", 0, &h), -PS_EUSAGE);
    cr_expect_eq(h, NULL);
}

Test(sweep, repeated_list_values_are_usage_errors_before_any_work)
{
    static const struct { const char *opts, *msg; } cases[] = {
        { "-K 2,2 -M 1 --batch 4", "-K: 2 given twice" },
        { "-K 1,2,4,2 -M 1 --batch 4", "-K: 2 given twice" },
        { "-K 1 -M 4,8,4 --batch 8", "-M: 4 given twice" },
        { "-K 1 -M 1 --batch 4,8,4", "--batch: 4 given twice" },
        { "-K 1 -M 1 --batch 4 --remat never,always,never", "--remat: 'never' given twice" },
        { "-K 1 -M 1 --batch 4 --strategy uniform,gpipe,uniform",
          "--strategy: 'uniform' given twice" },
        { "-K 1 -M 1 --batch 4 --schedule gpipe,1f1b,gpipe", "--schedule: 'gpipe' given twice" },
        /* an option twice: the second list replaced the first */
        { "-K 2 -K 4 -M 1 --batch 4", "option '-K' given twice (each option once)" },
        { "-K 2 -M 1 --batch 4 --remat never --remat always",
          "option '--remat' given twice" },
        /* stored under two names, the same runs twice */
        { "-K 1 -M 1 --batch 4 --schedule breadth-first,zb-auto,breadth-first:1",
          "--schedule: 'breadth-first' and 'breadth-first:1' are the same schedule" },
        /* one parser of schedule lists (cli_schedule_list): an empty name was skipped */
        { "-K 1 -M 1 --batch 4 --schedule gpipe,,1f1b",
          "--schedule: 'gpipe,,1f1b': an empty name in the list" },
    };
    char args[512];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(args, sizeof args, "sweep --model " MODEL " --topology " TOPO " %s --quiet "
                 "--db %s/dup.db", cases[i].opts, dir);
        expect_cli(args, 2, cases[i].msg);
    }
    cr_expect_eq(th_sh("test -e %s/dup.db", dir), 1, "the database was created");
}

/* The order of the options does not matter: --replicas before --batch
 * (the batch case freed the replica list, which was then read and freed
 * again: a use after free, found by fuzz_cli under ASan). */
Test(sweep, replicas_before_batch)
{
    char db[128];
    path(db, "rb.db");
    cr_assert_eq(th_sh("%s sweep --model " MODEL " --topology models/topologies/pcie-8gpu.json "
                       "-K 2 -M 2 --replicas 1,2 --batch 4,8 --quiet --db %s", th_pipesim(), db),
                 0);
    cr_expect_eq(count(db, "SELECT COUNT(*) FROM runs"), 4);
    cr_expect_eq(count(db, "SELECT COUNT(DISTINCT replicas) FROM runs"), 2);
}

Test(sweep, application_id_is_set_on_creation_and_checked_on_open)
{
    char db[128], args[512];
    path(db, "a.db");
    struct ana_sweep_spec sp = spec(2);
    cr_assert_eq(ana_sweep_run(&sp, db, NULL), 0, "%s", ps_errmsg());
    cr_expect_eq(count(db, "PRAGMA application_id"), ANA_DB_APPLICATION_ID);
    cr_expect_eq(count(db, "PRAGMA application_id"), 0x50535357);
    cr_expect_eq(count(db, "PRAGMA user_version"), ANA_DB_SCHEMA);

    static const struct { const char *name, *sql, *msg; } refused[] = {
        { "vcheck.db", "CREATE TABLE runs(x); CREATE TABLE points(x); CREATE TABLE devices(x);"
          "CREATE TABLE discrepancies(x); PRAGMA user_version = 1;"
          "PRAGMA application_id = 1347638851", /* 0x50535643 "PSVC" */
          "a pipesim validation database (made by pipesim validate --check), not a sweep "
          "one" },
        { "vcheck-legacy.db", "CREATE TABLE runs(x); CREATE TABLE points(x);"
          "CREATE TABLE devices(x); CREATE TABLE discrepancies(x); PRAGMA user_version = 1",
          "a pipesim validation database (made by pipesim validate --check of an earlier "
          "release), not a sweep one" },
        { "other-id.db", "CREATE TABLE runs(x); CREATE TABLE stages(x);"
          "PRAGMA user_version = 1; PRAGMA application_id = 305419896",
          "not a pipesim sweep database: application_id 0x12345678 belongs to another "
          "program" },
        { "extra-table.db", "CREATE TABLE runs(x); CREATE TABLE stages(x);"
          "CREATE TABLE mine(x); PRAGMA user_version = 1",
          "not a pipesim sweep database (schema version 1 but tables 'mine,runs,stages'" },
        { "no-version.db", "CREATE TABLE runs(x); CREATE TABLE stages(x)",
          "not a pipesim sweep database (no schema version, other tables: 'runs,stages')" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        path(db, refused[i].name);
        make_db(db, refused[i].sql);
        struct snap s;
        snap_take(db, &s);
        snprintf(args, sizeof args, SWEEP "--db %s", db);
        expect_cli(args, 8, refused[i].msg);
        expect_cli(args, 8, refused[i].name);
        snprintf(args, sizeof args, "report --db %s", db);
        expect_cli(args, 8, refused[i].msg);
        struct ana_sweep_stats st = { 0 };
        sp = spec(1);
        cr_expect_eq(ana_sweep_run(&sp, db, &st), -PS_EDB);
        cr_expect_eq(st.done, 0);
        expect_unchanged(db, &s);
    }
}

Test(sweep, legacy_database_without_application_id_is_read_and_stamped)
{
    char db[128], args[512];
    path(db, "legacy.db");
    struct ana_sweep_spec sp = spec(2);
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0, "%s", ps_errmsg());
    make_db(db, "PRAGMA application_id = 0"); /* as the previous release left it */
    cr_assert_eq(count(db, "PRAGMA application_id"), 0);
    /* read as it is: report opens it read-only and does not touch it */
    struct snap s;
    snap_take(db, &s);
    snprintf(args, sizeof args, "report --db %s --metric step", db);
    expect_cli(args, 0, "");
    expect_unchanged(db, &s);
    /* the next sweep resumes it and stamps it */
    sp.Ms = M8;
    sp.nM = 4;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0, "%s", ps_errmsg());
    cr_expect_eq(st.skipped, 27);
    cr_expect_eq(st.done, 9);
    cr_expect_eq(count(db, "PRAGMA application_id"), ANA_DB_APPLICATION_ID);
    cr_expect_eq(count(db, "SELECT count(*) FROM runs"), 36);
}

static int term_seen;

static void count_term(int sig)
{
    (void)sig;
    term_seen++;
}

static void term_twice(void *ctx, int stored, int pending)
{
    (void)pending;
    if (stored == 1) {
        raise(SIGTERM); /* the sweep's handler: stop, and put the previous one back */
        raise(SIGTERM); /* the previous handler (main's temporary-file cleanup) */
        sem_post(&((struct gate *)ctx)->posted);
    }
}

Test(sweep, sigterm_stops_and_a_second_signal_reaches_the_previous_handler)
{
    char db[128];
    path(db, "term.db");
    struct sigaction sa = { .sa_handler = count_term }, old, now;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGTERM, &sa, &old), 0);
    static long K[] = { 2, 4, 6, 8 }, M[] = { 4096, 8192 }, B[] = { 8192 };
    struct ana_sweep_spec sp = spec(1);
    sp.Ks = K;
    sp.Ms = M;
    sp.batches = B;
    sp.nK = 4;
    sp.nM = 2;
    sp.nbatch = 1;
    struct gate g = { .at = 1 };
    cr_assert_eq(sem_init(&g.posted, 0, 0), 0);
    sp.ctx = &g;
    sp.before_job = gate_wait;
    sp.on_row = term_twice;
    sp.handle_signals = 1;
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), -PS_EINTR, "%s", ps_errmsg());
    cr_expect(strstr(ps_errmsg(), "interrupted by SIGTERM: "), "%s", ps_errmsg());
    cr_expect(strstr(ps_errmsg(), "run the same command again to resume"), "%s", ps_errmsg());
    cr_expect_eq(term_seen, 1, "the previous handler ran %d times", term_seen);
    int kept = count(db, "SELECT count(*) FROM runs");
    cr_expect(kept == 1 && st.done == kept, "kept %d, stored %d", kept, st.done);
    cr_assert_eq(sigaction(SIGTERM, NULL, &now), 0);
    cr_expect(now.sa_handler == count_term, "the previous handler is back");
    sigaction(SIGTERM, &old, NULL);
    sp.on_row = NULL;
    sp.before_job = NULL;
    sem_destroy(&g.posted);
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0, "%s", ps_errmsg());
    cr_expect_eq(count(db, "SELECT count(*) FROM runs"), 8);
}

static void hup(void *ctx, int stored, int pending)
{
    (void)ctx;
    (void)pending;
    if (stored == 1)
        raise(SIGHUP);
}

Test(sweep, an_ignored_signal_stays_ignored)
{
    char db[128];
    path(db, "nohup.db");
    signal(SIGHUP, SIG_IGN); /* as nohup leaves it */
    struct ana_sweep_spec sp = spec(1);
    sp.on_row = hup;
    sp.handle_signals = 1;
    struct ana_sweep_stats st;
    cr_assert_eq(ana_sweep_run(&sp, db, &st), 0, "%s", ps_errmsg());
    cr_expect_eq(st.done, 27);
    struct sigaction now;
    cr_assert_eq(sigaction(SIGHUP, NULL, &now), 0);
    cr_expect(now.sa_handler == SIG_IGN);
}

/* A generator spec's stored hash is its generated profile's (the CSV text
 * the profile writes), not the spec's text: a row computed before the
 * generator changed is not taken for a current one. Any other text keeps
 * the hash of the text. */
Test(sweep, a_spec_is_hashed_by_the_profile_it_generates)
{
    const char *spec = "resnet:depth=50";
    char h[17], want[17], text[17];
    struct mdl_profile *p;
    cr_assert_eq(ana_db_input_hash(MDL_PRESET_PROFILE, spec, NULL, h), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_model_open(spec, &p), 0, "%s", ps_errmsg());
    cr_assert_eq(mdl_profile_hash(p, want), 0);
    cr_expect_str_eq(h, want);
    snprintf(text, sizeof text, "%016llx",
             (unsigned long long)ps_fnv1a(spec, strlen(spec), PS_FNV_INIT));
    cr_expect_str_neq(h, text);
    /* the profile's text changes it: one layer's stash */
    p->layers[3].stash_bytes += 1;
    cr_assert_eq(mdl_profile_hash(p, want), 0);
    cr_expect_str_neq(h, want);
    mdl_profile_free(p);
    const char *other = "nosuch:thing";
    cr_assert_eq(ana_db_input_hash(MDL_PRESET_PROFILE, other, NULL, h), 0);
    snprintf(text, sizeof text, "%016llx",
             (unsigned long long)ps_fnv1a(other, strlen(other), PS_FNV_INIT));
    cr_expect_str_eq(h, text);
}

/* --strategy optimal cuts under each device's memory, as predict --partition optimal does
 * (helper-56: the sweep cut with no cap and stored 10,14, fits 0, where 8,16 fits, so
 * report --best --fits recommended a slower balance-by-size); where no cut fits, the row
 * is stored with predict's error. */
Test(sweep, optimal_cuts_under_device_memory_as_predict_does, .timeout = 120)
{
    const char *ps = th_pipesim();
    const char *m = "--model amoebanet:L=18,D=256 --topology models/topologies/p100-pcie-8.json "
                    "--remat never";
    cr_assert_eq(th_sh("%s sweep %s -K 2 -M 4 --batch 128 --schedule zb-auto,1f1b "
                       "--strategy optimal --db %s/o.db --quiet", ps, m, dir), 0);
    const char *sch[] = { "zb-auto", "1f1b" };
    for (int i = 0; i < 2; i++) {
        char want[256], got[256];
        cr_assert_eq(th_sh("%s predict %s -K 2 -M 4 --batch 128 --schedule %s --partition "
                           "optimal --format csv | sed -n 2p | cut -d'\"' -f2 > %s/want.txt",
                           ps, m, sch[i], dir), 0);
        th_slurp(dir, "want.txt", want, sizeof want);
        cr_assert(strlen(want) > 2, "predict printed no partition");
        snprintf(got, sizeof got, "select count(*) from runs where schedule = '%s' and "
                 "partition = '%.*s' and fits = 1", sch[i], (int)strlen(want) - 1, want);
        char db[128];
        path(db, "o.db");
        cr_expect_eq(count(db, got), 1, "%s: the sweep's optimal is not predict's %s", sch[i],
                     want);
    }
    /* batch 512 at M = 1: no cut fits (predict exits 7) */
    cr_assert_eq(th_sh("%s predict %s -K 2 -M 1 --batch 512 --partition optimal "
                       ">/dev/null 2>&1", ps, m), 7);
    cr_assert_eq(th_sh("%s sweep %s -K 2 -M 1 --batch 512 --schedule gpipe --strategy optimal "
                       "--db %s/o.db --quiet", ps, m, dir), 0);
    char db[128];
    path(db, "o.db");
    cr_expect_eq(count(db, "select count(*) from runs where M = 1 and status = 'SIM_ENOFIT' "
                           "and message like 'no partition of 24 layers into 2 stages fits%'"),
                 1);
}

/* A configuration refused by the memory budget of the moment (SIM_ENOMEM) is not stored:
 * the sweep says so (exit 6) and the next run simulates it (helper-56: the row was stored,
 * advising PIPESIM_MEMORY_LIMIT, and never retried). */
Test(sweep, a_memory_budget_refusal_is_not_stored_and_the_next_run_retries_it, .timeout = 120)
{
    const char *ps = th_pipesim();
    const char *a = "--model " MODEL " --topology " TOPO " -K 8 -M 65536,1 --batch 65536 "
                    "--schedule 1f1b";
    cr_assert_eq(th_sh("PIPESIM_MEMORY_LIMIT=20MiB %s sweep %s --db %s/m.db 2>%s/err.txt", ps, a,
                       dir, dir), 6);
    cr_assert_eq(th_sh("grep -q '^pipesim sweep: 1 of 2 configurations did not fit this "
                       "machine.s memory at the time and was not stored (first, K=8 M=65536 "
                       "1f1b .*PIPESIM_MEMORY_LIMIT.*); 1 stored in .*m.db; run the same "
                       "command again to retry it$' %s/err.txt", dir), 0);
    char db[128];
    path(db, "m.db");
    cr_expect_eq(count(db, "select count(*) from runs"), 1);
    cr_expect_eq(count(db, "select count(*) from runs where status != 'ok'"), 0);
    cr_assert_eq(th_sh("%s sweep %s --db %s/m.db 2>%s/err.txt", ps, a, dir, dir), 0);
    cr_assert_eq(th_sh("grep -q '1 simulated (0 could not run), 1 already in' %s/err.txt",
                       dir), 0);
    cr_expect_eq(count(db, "select count(*) from runs where M = 65536 and status = 'ok'"), 1);
}

/* A writer killed in a transaction leaves a hot journal: report and plot roll it back and
 * read the rows committed before (helper-56: both failed, "the database is read-only", exit
 * 5, because a read-only connection cannot roll a journal back). */
Test(sweep, report_reads_a_database_whose_writer_was_killed_mid_transaction)
{
    char db[128], args[512];
    path(db, "hot.db");
    snprintf(args, sizeof args, SWEEP "--db %s", db);
    expect_cli(args, 0, "");
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) { /* the killed writer: pages spilled, never committed */
        sqlite3 *h;
        if (sqlite3_open(db, &h) != SQLITE_OK ||
            sqlite3_exec(h, "PRAGMA cache_size = 1; BEGIN; DELETE FROM stages; "
                            "DELETE FROM runs;", NULL, NULL, NULL) != SQLITE_OK)
            _exit(1);
        _exit(0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    cr_assert_eq(th_sh("test -s %s-journal", db), 0, "no hot journal was left");
    snprintf(args, sizeof args, "report --db %s --out %s/r.txt --csv %s/r.csv", db, dir, dir);
    expect_cli(args, 0, "");
    cr_assert_eq(th_sh("test $(wc -l < %s/r.csv) -eq 5", dir), 0, "header + the 4 runs");
    cr_assert_eq(th_sh("test ! -s %s-journal", db), 0, "the journal was not rolled back");
    cr_expect_eq(count(db, "select count(*) from runs"), 4);
}

/* A --db that is a file the command read by name (a bundled topology, the devices.json of
 * its presets) is refused as an input would be, exit 2, the file kept (helper-56: sweep
 * and plan read it as SQLite, "not an SQLite database", exit 8). */
Test(sweep, a_db_that_is_an_input_found_by_name_is_refused_as_an_input)
{
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cp -r models %s/data && cp %s/data/topologies/devices.json %s/d0.json",
                       dir, dir, dir), 0);
    const char *cases[] = {
        "sweep --model mlp:layers=8,width=64 --topology chain-8-ideal -K 1 -M 1 --batch 4 "
        "--db topologies/chain-8-ideal.json",
        "sweep --model mlp:layers=8,width=64 --topology p40-pcie-8 -K 1 -M 1 --batch 4 "
        "--db topologies/devices.json",
        "plan --model mlp:layers=8,width=64 --topology p40-pcie-8 --devices 2 --batch 4 "
        "--db topologies/devices.json",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_expect_eq(th_sh("cd %s/data && PIPESIM_DATA=$PWD %s %s >/dev/null 2>../err.txt",
                           dir, ps, cases[i]), 2, "%s", cases[i]);
        cr_expect_eq(th_sh("grep -q 'is the same file as input .*: the output would overwrite "
                           "an input' %s/err.txt", dir), 0, "%s", cases[i]);
    }
    cr_expect_eq(th_sh("cmp -s %s/data/topologies/devices.json %s/d0.json", dir, dir), 0);
}

/* helper-56's small ones: report prints a name's control characters as '?' (a newline in a
 * swept file's name broke its header in two); plot's note names the replica count it drew
 * when the groups differ in replicas alone; a --kind given twice says so. */
Test(sweep, names_notes_and_repeated_kinds)
{
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s gen model " MODEL " -o m.csv && cp m.csv \"$(printf "
                       "'a\\nb\\tc.csv')\" && %s sweep --model \"$(printf 'a\\nb\\tc.csv')\" "
                       "--topology %s/" TOPO " -K 1,2 -M 1 --batch 2 --db n.db --quiet", dir, ps,
                       ps, getenv("PWD") ? getenv("PWD") : "."), 0);
    cr_expect_eq(th_sh("cd %s && %s report --db n.db | grep -q '^== model a?b?c.csv, "
                       "topology' && %s report --db n.db --best | grep -q '^model a?b?c.csv, "
                       "topology'", dir, ps, ps), 0);
    cr_assert_eq(th_sh("cd %s && %s sweep --model m.csv --topology %s/" TOPO " -K 1,2 -M 1,2 "
                       "--batch 4 --replicas 1,2 --db r.db --quiet", dir, ps,
                       getenv("PWD") ? getenv("PWD") : "."), 0);
    cr_expect_eq(th_sh("cd %s && %s plot --db r.db --out-dir p --kind speedup 2>err.txt "
                       ">/dev/null; grep -q 'groups match; plotting the first: .*, 1 replica ' "
                       "err.txt", dir, ps), 0);
    cr_expect_eq(th_sh("cd %s && %s plot --db r.db --out-dir p --kind speedup,bubble,speedup "
                       "2>err.txt; test $? = 2 && grep -q \"^pipesim plot: --kind: 'speedup' "
                       "given twice$\" err.txt", dir, ps), 0);
}

/* ---- what report refuses and says (helper-75) ---- */

/* pipesim ARGS run in dir: its exit status is status and its stderr exactly
 * the line want. */
static void expect_exact(const char *args, int status, const char *want)
{
    char err[4096] = "";
    int rc = th_sh("cd %s && %s %s 2>err.txt >/dev/null", dir, th_pipesim(), args);
    char p[128];
    path(p, "err.txt");
    FILE *f = fopen(p, "r");
    cr_assert(f);
    size_t n = fread(err, 1, sizeof err - 1, f);
    err[n] = 0;
    fclose(f);
    char line[4096];
    snprintf(line, sizeof line, "%s%s", want, *want ? "\n" : "");
    cr_expect_eq(rc, status, "'%s' exited %d, not %d: %s", args, rc, status, err);
    cr_expect_str_eq(err, line, "'%s': got\n%swanted\n%s", args, err, line);
}

/* A value JSON cannot hold (inf) or a name that is not UTF-8 was "out of
 * memory", exit 6: json_pack's NULL read as an allocation failure. */
Test(sweep, report_json_names_a_value_it_cannot_write_not_out_of_memory)
{
    static struct ana_run runs[2];
    for (int i = 0; i < 2; i++) {
        struct ana_run *r = &runs[i];
        r->model = "m.csv";
        r->topology = "t.json";
        snprintf(r->schedule, sizeof r->schedule, "gpipe");
        snprintf(r->remat, sizeof r->remat, "except_last");
        snprintf(r->strategy, sizeof r->strategy, "uniform");
        snprintf(r->status, sizeof r->status, "ok");
        r->K = i + 1;
        r->M = r->replicas = r->fits = 1;
        r->batch = 8;
        r->samples_per_s = i ? INFINITY : 10;
    }
    struct ana_report_opts o = { .metrics = "throughput" };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    cr_expect_eq(ana_report_grid_json(runs, 2, &o, f), -PS_EINVAL, "%s", ps_errmsg());
    cr_expect_str_eq(ps_errmsg(), "--format json: throughput at K=2 M=1 (schedule gpipe, "
                                  "batch 8, replicas 1) is inf, a number JSON cannot hold");
    fclose(f);
    free(buf);
    /* through the command: a normalized ratio of two finite throughputs that overflows */
    cr_assert_eq(th_sh("cd %s && %s sweep --model " MODEL " --topology %s/" TOPO " -K 1,2 -M 1 "
                       "--batch 8 --db n.db --quiet", dir, th_pipesim(),
                       getenv("PWD") ? getenv("PWD") : "."), 0);
    char db[128];
    path(db, "n.db");
    make_db(db, "UPDATE runs SET samples_per_s = CASE K WHEN 1 THEN 1e-300 ELSE 1e300 END");
    expect_exact("report --db n.db --format json --metric normalized", 4,
                 "pipesim report: --format json: normalized at K=2 M=1 (schedule gpipe, batch 8, "
                 "replicas 1) is inf, a number JSON cannot hold");
    /* a model file whose name is not UTF-8: its bytes as '?' */
    cr_assert_eq(th_sh("cd %s && %s gen model " MODEL " -o \"$(printf 'm\\377.csv')\" && %s sweep "
                       "--model \"$(printf 'm\\377.csv')\" --topology %s/" TOPO " -K 1,2 -M 1 "
                       "--batch 8 --db u.db --quiet", dir, th_pipesim(), th_pipesim(),
                       getenv("PWD") ? getenv("PWD") : "."), 0);
    char out[16384];
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && %s report --db u.db --format json "
                            "--metric throughput 2>&1", dir, th_pipesim()), 0, "%s", out);
    cr_expect(strstr(out, "\"model\": \"m?.csv\""), "%s", out);
}

/* A stored value sweep could not have written is refused on load, exit 8, one line naming
 * the file, the table, the row and the column: sqlite3_column_int truncated K=4294967298
 * to 2 (and K=2^62 to 0, then the normalization baseline), K=2^31+5 printed negative,
 * replicas=0 read as "replicas 1", a NULL throughput as 0, an infinite one was ranked best
 * ("inf samples/s"). The same check guards report's every format and plot. */
Test(sweep, report_refuses_values_sweep_could_not_have_written, .timeout = 120)
{
    char good[128], db[128], args[512];
    path(good, "good.db");
    snprintf(args, sizeof args, SWEEP "--db %s", good);
    expect_cli(args, 0, "");
    int id = count(good, "SELECT id FROM runs WHERE K = 2 AND M = 1");
    int id22 = count(good, "SELECT id FROM runs WHERE K = 2 AND M = 2");
    static const struct { const char *sql, *row, *why; } cases[] = {
        { "UPDATE runs SET samples_per_s = 9e999 WHERE K = 2", "K=2, M=1, batch 4, replicas 1",
          "samples_per_s: inf is not a finite number" },
        { "UPDATE runs SET step_s = -9e999 WHERE K = 2", "K=2, M=1, batch 4, replicas 1",
          "step_s: -inf is not a finite number" },
        { "UPDATE runs SET K = 4294967298 WHERE K = 2 AND M = 1",
          "K=4294967298, M=1, batch 4, replicas 1",
          "K: 4294967298 is out of range (1 to 65536, what sweep -K takes)" },
        { "UPDATE runs SET K = 4611686018427387904, M = 1099511627776 WHERE K = 2 AND M = 1",
          "K=4611686018427387904, M=1099511627776, batch 4, replicas 1",
          "K: 4611686018427387904 is out of range (1 to 65536, what sweep -K takes)" },
        { "UPDATE runs SET K = 2147483653 WHERE K = 2 AND M = 1",
          "K=2147483653, M=1, batch 4, replicas 1",
          "K: 2147483653 is out of range (1 to 65536, what sweep -K takes)" },
        { "UPDATE runs SET M = 2.5 WHERE K = 2 AND M = 1", "K=2, M=2.5, batch 4, replicas 1",
          "M: 2.5 is not an integer" },
        { "UPDATE runs SET replicas = 0 WHERE K = 2 AND M = 1", "K=2, M=1, batch 4, replicas 0",
          "replicas: 0 is out of range (1 to 65536, what sweep --replicas takes)" },
        { "UPDATE runs SET batch = 0 WHERE K = 2 AND M = 1", "K=2, M=1, batch 0, replicas 1",
          "batch: 0 is out of range (1 to 1099511627776, what sweep --batch takes)" },
        { "UPDATE runs SET samples_per_s = NULL WHERE K = 2 AND M = 1",
          "K=2, M=1, batch 4, replicas 1",
          "samples_per_s: missing (NULL) in a run with status ok" },
        { "UPDATE runs SET speedup = 'fast' WHERE K = 2 AND M = 1", "K=2, M=1, batch 4, replicas 1",
          "speedup: 'fast' is not a number" },
        { "UPDATE runs SET fits = 2 WHERE K = 2 AND M = 1", "K=2, M=1, batch 4, replicas 1",
          "fits: 2 is out of range (0 or 1)" },
        { "UPDATE runs SET status = 'EINVAL', message = NULL WHERE K = 2 AND M = 1",
          "K=2, M=1, batch 4, replicas 1",
          "message: missing (NULL) in a run that could not run (status EINVAL)" },
    };
    char want[1024];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        path(db, "e.db");
        cr_assert_eq(th_sh("cp %s %s", good, db), 0);
        make_db(db, cases[i].sql);
        snprintf(want, sizeof want, "pipesim report: e.db: runs row %d (schedule gpipe, %s): %s",
                 id, cases[i].row, cases[i].why);
        expect_exact("report --db e.db", 8, want);
        expect_exact("report --db e.db --metric throughput --format json", 8, want);
        expect_exact("report --db e.db --format csv", 8, want);
        expect_exact("report --db e.db --best", 8, want);
    }
    /* a stage's bytes, and plot, which reads through the same loader */
    path(db, "e.db");
    cr_assert_eq(th_sh("cp %s %s", good, db), 0);
    snprintf(args, sizeof args, "UPDATE stages SET peak_bytes = -5 WHERE run_id = %d AND "
             "stage = 1", id22);
    make_db(db, args);
    snprintf(want, sizeof want, "pipesim report: e.db: stages row (run_id %d, stage 1): "
             "peak_bytes: -5 is below 0", id22);
    expect_exact("report --db e.db --metric memory", 8, want);
    snprintf(want, sizeof want, "pipesim plot: e.db: stages row (run_id %d, stage 1): "
             "peak_bytes: -5 is below 0", id22);
    expect_exact("plot --db e.db --kind memory --out-dir p", 8, want);
    cr_expect_eq(th_sh("test -e %s/p", dir), 1, "plot wrote figures");
    /* what sweep stores for a run without a baseline or a formula (NULL), and a run that
     * could not run (its outputs NULL), are read as before */
    make_db(good, "UPDATE runs SET speedup = NULL, baseline_step_s = NULL, bubble_analytic = "
                  "NULL WHERE K = 2 AND M = 2");
    expect_exact("report --db good.db --metric speedup", 0, "");
}

/* --db naming a dangling symbolic link: sweep creates the file it leads to, as a write
 * through a link does, where that file's folder exists; where it is missing, exit 5 with
 * the reason, as for other paths a sweep cannot create (it was exit 8, SQLite's "unable to
 * open database file"), and nothing is made. */
Test(sweep, db_through_a_dangling_link)
{
    const char *ps = th_pipesim(), *pwd = getenv("PWD") ? getenv("PWD") : ".";
    cr_assert_eq(th_sh("cd %s && ln -s missing/x.db dl.db && mkdir there && "
                       "ln -s there/y.db dl2.db", dir), 0);
    char args[512];
    snprintf(args, sizeof args, "sweep --model " MODEL " --topology %s/" TOPO " -K 1,2 -M 1 "
             "--batch 4 --quiet --db dl.db", pwd);
    expect_exact(args, 5, "pipesim sweep: --db 'dl.db': cannot create the database where the "
                          "symbolic link leads ('missing/x.db'): No such file or directory");
    cr_expect_eq(th_sh("test -e %s/missing", dir), 1, "a folder was made");
    expect_exact("report --db dl.db", 5, "pipesim report: dl.db: cannot read the results "
                                         "database (run pipesim sweep --db dl.db first)");
    snprintf(args, sizeof args, "sweep --model " MODEL " --topology %s/" TOPO " -K 1,2 -M 1 "
             "--batch 4 --quiet --db dl2.db", pwd);
    expect_exact(args, 0, "");
    cr_expect_eq(th_sh("cd %s && test -L dl2.db && test -f there/y.db", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s report --db dl2.db | grep -q '^== model'", dir, ps), 0);
}

/* One configuration is "1 configuration", in the summary and in the interrupted and
 * refused-for-memory messages (they said "1 configurations"). */
Test(sweep, one_configuration_is_singular)
{
    char args[512];
    snprintf(args, sizeof args, "sweep --model " MODEL " --topology %s/" TOPO " -K 1 -M 1 "
             "--batch 4 --db one.db", getenv("PWD") ? getenv("PWD") : ".");
    expect_exact(args, 0, "sweep: 1 configuration: 1 simulated (0 could not run), 0 already "
                          "in one.db");
    expect_exact(args, 0, "sweep: 1 configuration: 0 simulated (0 could not run), 1 already "
                          "in one.db");
    snprintf(args, sizeof args, "sweep --model " MODEL " --topology %s/" TOPO " -K 1,2 -M 1 "
             "--batch 4 --db one.db", getenv("PWD") ? getenv("PWD") : ".");
    expect_exact(args, 0, "sweep: 2 configurations: 1 simulated (0 could not run), 1 already "
                          "in one.db");
}

/* A --baseline the database does not hold is said in the title, the grid '-' (a NULL run
 * was read for its throughput: a crash the results fuzzer's seed found). */
Test(sweep, a_baseline_not_in_the_database_is_said)
{
    char out[4096];
    cr_assert_eq(th_sh("cd %s && %s sweep --model mlp:layers=4,width=64 --topology "
                       "chain-8-ideal -K 1,2 -M 1,2 --batch 4 --db b.db --quiet", dir,
                       th_pipesim()), 0);
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s report --db b.db --metric normalized "
                            "--baseline 4,4 2>&1", dir, th_pipesim()), 0, "%s", out);
    cr_expect(strstr(out, "baseline K=4 M=4: not in the database or could not run"), "%s", out);
}
