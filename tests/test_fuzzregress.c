/*
 * Every input a fuzz target ever failed on (tests/fuzz/regress/<target>/),
 * replayed through the gcc builds too (plain and `make asan`), so the fixes
 * stay fixed without clang: each must load, or fail with one clean message
 * naming the file; what loads must also simulate or fail cleanly.
 */
#include "helpers.h"

#include "analysis/ana_db.h"
#include "analysis/ana_predict.h"
#include "analysis/ana_report.h"
#include "models/mdl_gen.h"
#include "sched/sch_partitioner.h"
#include "traces/trc_trace.h"

#include "base/ps_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void clean_error(int rc, const char *path)
{
    cr_assert(rc < 0 && -rc < PS_NERR, "%s: rc %d", path, rc);
    cr_assert(*ps_errmsg() && !strchr(ps_errmsg(), '\n'), "%s: '%s'", path, ps_errmsg());
    cr_assert(strstr(ps_errmsg(), path), "%s: message '%s' lacks the file", path, ps_errmsg());
}

static void predict(const struct mdl_profile *p, const struct mdl_topology *t, int K)
{
    struct ana_config c = { .profile = p, .topo = t, .K = K, .M = 2, .batch = 4,
                            .remat = SCH_REMAT_EXCEPT_LAST };
    struct ana_prediction *pr;
    int rc = ana_predict(&c, &pr);
    if (rc == 0) {
        cr_assert(pr->step_s >= 0 && pr->step_s < 1e10);
        ana_prediction_free(pr);
    } else {
        cr_assert(*ps_errmsg() && !strchr(ps_errmsg(), '\n'));
    }
}

/* Every partition strategy: a partition or a clean error. */
static void partition(const struct mdl_profile *p, const struct mdl_topology *t, int S)
{
    struct sch_part_opts o = { .n_stages = S, .n_micro = 3, .micro_batch = 2,
                               .remat = SCH_REMAT_EXCEPT_LAST, .cap_mode = 1 };
    sch_part_model *m;
    if (sch_part_model_new(p, t, &o, &m) < 0) {
        cr_assert(*ps_errmsg() && !strchr(ps_errmsg(), '\n'));
        return;
    }
    for (int k = 0; k < SCH_PART_NSTRATEGIES; k++) {
        struct sch_partition *part;
        if (sch_part_strategy_run(m, (enum sch_part_strategy)k, &part) == 0)
            sch_partition_free(part);
        else
            cr_assert(*ps_errmsg() && !strchr(ps_errmsg(), '\n'));
    }
    sch_part_model_free(m);
}

/* Calls fn on every file of tests/fuzz/regress/<name>; returns the count. */
static int each(const char *name, void (*fn)(const char *path))
{
    char d[256];
    snprintf(d, sizeof d, "tests/fuzz/regress/%s", name);
    DIR *dir = opendir(d);
    if (!dir)
        return 0;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", d, e->d_name);
        fn(p);
        n++;
    }
    closedir(dir);
    return n;
}

static void profile(const char *path)
{
    struct mdl_profile *p;
    int rc = mdl_profile_load(path, &p);
    if (rc < 0) {
        clean_error(rc, path);
        return;
    }
    struct mdl_device d = { .flops = 1e12, .memory = 1e10, .eff_max = 0.5, .batch_half = 4 };
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_chain(2, &d, 1e10, 1e-6, &t), 0);
    predict(p, t, p->n_layers > 1 ? 2 : 1);
    partition(p, t, p->n_layers > 1 ? 2 : 1);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

static void topology(const char *path)
{
    struct mdl_topology *t;
    int rc = mdl_topology_load(path, &t);
    if (rc < 0) {
        clean_error(rc, path);
        return;
    }
    struct mdl_profile *p;
    cr_assert_eq(mdl_gen_mlp(4, 16, 0, &p), 0);
    predict(p, t, t->n_devices < 4 ? t->n_devices : 4);
    mdl_profile_free(p);
    mdl_topology_free(t);
}

static void trace(const char *path)
{
    struct trc_trace *t;
    int rc = trc_read_chrome(path, &t);
    if (rc < 0)
        clean_error(rc, path);
    else
        trc_trace_free(t);
}

static void results(const char *path)
{
    /* a copy: opening may touch the file */
    char tmp[] = "/tmp/pipesim-regress-XXXXXX";
    int fd = mkstemp(tmp);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(th_sh("cp '%s' %s", path, tmp), 0);
    ana_db *db;
    int rc = ana_db_open(tmp, 0, &db);
    if (rc < 0) {
        clean_error(rc, tmp);
        unlink(tmp);
        return;
    }
    struct ana_run *runs;
    int n;
    if ((rc = ana_db_load(db, &runs, &n)) == 0) {
        FILE *f = fopen("/dev/null", "w");
        struct ana_report_opts o = {
            .metrics = "normalized,speedup,throughput,step,bubble,memory" };
        cr_assert(ana_report_print(runs, n, &o, f) == 0 || *ps_errmsg());
        cr_assert(ana_report_csv(runs, n, &o, f) == 0 || *ps_errmsg());
        cr_assert(ana_report_grid_csv(runs, n, &o, f) == 0 || *ps_errmsg());
        fclose(f);
        ana_runs_free(runs, n);
    }
    ana_db_close(db);
    unlink(tmp);
}

static void cli(const char *path)
{
    /* one argument per line, '/' made '_', as fuzz_cli does; in a scratch dir
     * holding its fixtures m.csv and t.json */
    char *buf;
    size_t len;
    cr_assert_eq(ps_read_file(path, &buf, &len), 0);
    char *argv[26] = { (char *)th_pipesim() };
    int argc = 1;
    char *s = buf;
    for (size_t i = 0; i <= len && argc < 25; i++)
        if (i == len || buf[i] == '\n' || buf[i] == 0) {
            buf[i] = 0;
            argv[argc++] = s;
            s = buf + i + 1;
        } else if (buf[i] == '/') {
            buf[i] = '_';
        }
    char dir[64];
    th_tmpdir(dir, sizeof dir, "regress");
    cr_assert_eq(th_sh("cp models/profiles/mlp-uniform.csv %s/m.csv && cp "
                       "models/topologies/pcie-8gpu.json %s/t.json", dir, dir), 0);
    char bin[PATH_MAX];
    cr_assert(realpath(th_pipesim(), bin));
    argv[0] = bin;
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        if (chdir(dir) == 0)
            execv(bin, argv);
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    th_sh("rm -rf %s", dir);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) <= 10, "%s: pipesim %s %d", path,
              WIFEXITED(st) ? "exited" : "died of signal",
              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    free(buf);
}

Test(fuzzregress, every_finding_stays_fixed, .timeout = 60)
{
    int n = each("profile", profile) + each("topology", topology) + each("trace", trace) +
            each("results", results) + each("cli", cli);
    cr_assert_geq(n, 7, "only %d regression inputs found (run from the repository root)", n);
}
