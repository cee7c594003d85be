/*
 * A sweep stopped mid-way, end to end: `pipesim sweep --jobs 2` is sent
 * SIGINT, SIGTERM, SIGHUP or SIGKILL after some rows are committed (early,
 * and about half way), then
 *   - `pipesim report` reads the database as it was left (read-only open,
 *     hot journal and all) and SQLite's integrity check passes,
 *   - every stored run is whole: an "ok" run has one stage row per stage, a
 *     failed one none, and no stage row is orphaned,
 *   - SIGINT, SIGTERM and SIGHUP exit with status 10 (PS_EINTR) and one
 *     line naming the signal and saying how to resume; SIGKILL leaves a
 *     database the next run repairs; a second signal stops the sweep at once
 *     (killed by it, the rows committed before kept),
 *   - the same command run again completes the grid (twice killed, too), and
 *     the database then reports byte for byte what an uninterrupted sweep
 *     reports.
 */
#include "helpers.h"

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOPO "models/topologies/pcie-8gpu.json"
#define GRID 96 /* 8 K x 3 M x 2 remat x 2 strategies */

static char dir[64];
static char *const sweep_args[] = {
    "pipesim", "sweep", "--model", "mlp:layers=64,width=256", "--topology", TOPO, "-K",
    "1,2,3,4,5,6,7,8", "-M", "8192,16384,32768", "--batch", "32768", "--remat", "never,always",
    "--strategy", "uniform,gpipe", "--jobs", "2", "--quiet", "--db", NULL, NULL,
};

static void teardown(void);

static void setup(void)
{
    th_teardown_at_exit(teardown); /* its tests may skip */
    th_tmpdir(dir, sizeof dir, "kill");
}

static void teardown(void)
{
    th_sh("rm -rf %s", dir);
}

/* The sweep command line for a database, for th_sh. */
static void sweep_cmd(const char *db, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "%s", th_pipesim());
    for (int i = 1; sweep_args[i]; i++)
        k += (size_t)snprintf(buf + k, n - k, " %s", sweep_args[i]);
    snprintf(buf + k, n - k, " %s", db);
}

/* -1 if the database cannot be read (yet). */
static int count(const char *db, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    int n = -1;
    if (access(db, R_OK) || sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return -1;
    sqlite3_busy_timeout(h, 2000);
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

static void check_consistent(const char *db)
{
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    sqlite3_close(h);
    cr_assert_eq(count(db, "SELECT count(*) FROM stages WHERE run_id NOT IN (SELECT id FROM "
                           "runs)"), 0, "orphaned stage rows");
    /* gpipe: K stages; a run that could not run has none */
    cr_assert_eq(count(db, "SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM stages s "
                           "WHERE s.run_id = r.id) != CASE WHEN r.status = 'ok' THEN r.K "
                           "ELSE 0 END"), 0, "a run with missing or extra stage rows");
}

static void report(const char *db, const char *csv)
{
    cr_assert_eq(th_sh("%s report --db %s --csv %s --metric normalized,speedup,step,bubble,"
                       "memory >%s.txt 2>%s.err", th_pipesim(), db, csv, csv, csv), 0,
                 "report on %s failed", db);
}

/* The child's stop signals back to their defaults, whatever the test
 * runner left them at (nohup ignores SIGHUP). */
static void default_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
}

static const char *sig_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" :
                                                                                  "SIGKILL";
}

/* Starts the sweep, waits until at least `rows` rows are committed, sends
 * sig; returns the wait status and the rows committed before the signal. */
static int interrupt(const char *db, int rows, int sig, int *seen)
{
    char err[128];
    snprintf(err, sizeof err, "%s/sweep.err", dir);
    char *argv[sizeof sweep_args / sizeof *sweep_args];
    memcpy(argv, sweep_args, sizeof argv);
    argv[sizeof argv / sizeof *argv - 2] = (char *)db;
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        default_signals();
        if (!freopen(err, "w", stderr))
            _exit(126);
        execv(th_pipesim(), argv);
        _exit(127);
    }
    *seen = 0;
    for (int i = 0; i < 60000 && *seen < rows; i++) {
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
        *seen = count(db, "SELECT count(*) FROM runs");
        if (waitpid(pid, NULL, WNOHANG) == pid)
            cr_assert_fail("the sweep ended before %d rows were stored", rows);
    }
    kill(pid, sig);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

TestSuite(sweep_kill, .init = setup, .fini = teardown, .timeout = 600);

Test(sweep_kill, interrupted_sweeps_stay_consistent_and_resume)
{
    char ref_db[128], ref_csv[128], cmd[1024];
    snprintf(ref_db, sizeof ref_db, "%s/ref.db", dir);
    snprintf(ref_csv, sizeof ref_csv, "%s/ref.csv", dir);
    sweep_cmd(ref_db, cmd, sizeof cmd);
    cr_assert_eq(th_sh("%s 2>/dev/null", cmd), 0);
    cr_assert_eq(count(ref_db, "SELECT count(*) FROM runs"), GRID);
    report(ref_db, ref_csv);

    static const struct { int sig, rows; } cases[] = {
        { SIGINT, 1 },  { SIGINT, GRID / 2 },  { SIGKILL, 1 }, { SIGKILL, GRID / 2 },
        { SIGTERM, 1 }, { SIGHUP, GRID / 2 },
    };
    int exercised = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char db[128], csv[128];
        snprintf(db, sizeof db, "%s/k%zu.db", dir, c);
        snprintf(csv, sizeof csv, "%s/k%zu.csv", dir, c);
        int seen, st = interrupt(db, cases[c].rows, cases[c].sig, &seen);
        cr_assert_geq(seen, cases[c].rows);
        int kept = count(db, "SELECT count(*) FROM runs");
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            cr_assert_eq(kept, GRID); /* it finished first: nothing to interrupt */
            cr_log_warn("case %zu: the sweep finished before the signal", c);
        } else if (cases[c].sig != SIGKILL) {
            exercised++;
            cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == ps_exit_status(PS_EINTR),
                      "case %zu: %s gave status %d", c, sig_name(cases[c].sig), st);
            cr_assert_eq(th_sh("test $(wc -l < %s/sweep.err) -eq 1 && grep -q 'interrupted by "
                               "%s: [0-9]* of [0-9]* configurations stored in .*; run the same "
                               "command again to resume' %s/sweep.err", dir,
                               sig_name(cases[c].sig), dir), 0, "case %zu", c);
        } else {
            exercised++;
            cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        }
        cr_assert_geq(kept, seen, "case %zu: committed rows were lost", c);
        cr_assert_leq(kept, GRID);
        report(db, csv); /* readable as left, before any writer touched it */
        check_consistent(db);
        if (cases[c].sig == SIGKILL && kept < GRID) { /* killed again while resuming */
            st = interrupt(db, kept + 1, SIGKILL, &seen);
            check_consistent(db);
            cr_assert_geq(count(db, "SELECT count(*) FROM runs"), seen);
        }
        sweep_cmd(db, cmd, sizeof cmd);
        cr_assert_eq(th_sh("%s 2>/dev/null", cmd), 0, "case %zu: resuming failed", c);
        cr_assert_eq(count(db, "SELECT count(*) FROM runs"), GRID);
        check_consistent(db);
        report(db, csv);
        cr_assert_eq(th_sh("cmp -s %s %s", csv, ref_csv), 0,
                     "case %zu: the resumed database reports differently", c);
    }
    cr_assert_gt(exercised, 0, "no sweep was ever interrupted");
}

/* A field of /proc/<pid>/status read with fmt (-1: no such process). */
static long long proc_status(pid_t pid, const char *fmt)
{
    char p[64], line[256];
    snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
    FILE *f = fopen(p, "r");
    long long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, fmt, &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

/* Whether a thread of pid is a sweep worker (named by ana_sweep). */
static int has_worker(pid_t pid)
{
    return th_sh("cat /proc/%d/task/*/comm 2>/dev/null | grep -qx pipesim-sweep", (int)pid) == 0;
}

/* The signals whose handler is installed. */
static long long caught(pid_t pid)
{
    return proc_status(pid, "SigCgt: %llx");
}

Test(sweep_kill, a_second_sigint_stops_at_once)
{
    if (access("/proc/self/status", R_OK))
        cr_skip_test("needs /proc/<pid>/status to see when the first signal was handled");
    char db[128], err[128];
    snprintf(db, sizeof db, "%s/twice.db", dir);
    snprintf(err, sizeof err, "%s/twice.err", dir);
    /* one configuration of a few seconds: still running when the second
     * signal comes */
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        default_signals();
        if (!freopen(err, "w", stderr))
            _exit(126);
        execl(th_pipesim(), "pipesim", "sweep", "--model", "mlp:layers=64,width=256",
              "--topology", TOPO, "-K", "8", "-M", "262144", "--batch", "262144", "--jobs",
              "1", "--db", db, (char *)NULL);
        _exit(127);
    }
    const long long bit = 1LL << (SIGINT - 1);
    struct timespec ts = { 0, 2000000 };
    /* the sweep's handler is installed and its worker thread started (on the
     * configuration) */
    int i;
    for (i = 0; i < 60000 && (!(caught(pid) & bit) || !has_worker(pid));
         i++) {
        cr_assert_neq(waitpid(pid, NULL, WNOHANG), pid, "the sweep ended first");
        nanosleep(&ts, NULL);
    }
    cr_assert_lt(i, 60000, "the sweep never started its worker");
    kill(pid, SIGINT);
    /* the first signal was handled: its handler printed the notice (and put
     * back the previous disposition: the default one, or main()'s temporary
     * file cleanup, which re-raises) */
    int status = 0, ended = 0;
    for (i = 0; i < 60000; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            ended = 1;
            break;
        }
        if (th_sh("grep -q 'stopping after the running configurations' %s", err) == 0)
            break;
        nanosleep(&ts, NULL);
    }
    cr_assert_lt(i, 60000, "the first SIGINT was never handled");
    if (!ended) {
        kill(pid, SIGINT);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
    }
    int first = WIFEXITED(status); /* the running configuration finished first */
    if (first)
        cr_assert(WEXITSTATUS(status) == ps_exit_status(PS_EINTR) || WEXITSTATUS(status) == 0,
                  "status %d", status);
    else
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "status %d", status);
    cr_assert_eq(th_sh("grep -q 'stopping after the running configurations (a second signal "
                       "stops at once)' %s", err), 0, "no notice of the first signal");
    check_consistent(db);
    if (first)
        cr_skip_test("the sweep stopped before the second SIGINT: that signal not exercised");
}
