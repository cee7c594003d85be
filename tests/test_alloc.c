/*
 * Allocation failure, end to end: a small `pipesim predict` (profile CSV,
 * topology JSON, simulation, Chrome and CSV traces, JSON result), a
 * `pipesim gen chain` (jansson writer) and a `pipesim report` (SQLite) run
 * once to count their allocations, then once per N with the N-th allocation failing
 * (tests/alloc_fail.c, LD_PRELOAD): every N = 1..count under `make alloc`
 * (PIPESIM_ALLOC_ALL=1), a fixed sample of them in `make test` (in_sample). Every run must either succeed with the
 * reference output or fail cleanly: exit status 6 (PS_ENOMEM), one line
 * saying "out of memory", no signal, no sanitizer report (under `make asan`
 * the binary is the ASan build, so LeakSanitizer checks every exit for
 * leaks), no temporary file, and any result file present complete.
 */
#include "helpers.h"

#include "traces/trc_trace.h"

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], shim[PATH_MAX];

static void put(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/pipesim-alloc-XXXXXX");
    cr_assert(mkdtemp(dir));
    put("m.csv", "name,kind,fwd_flops,params,out_bytes,stash_bytes\n"
                 "in,input,0,0,64,0\na,dense,1e6,100,64,128\nb,dense,1e6,100,64,128\n"
                 "c,dense,1e6,100,64,128\n");
    put("t.json", "{\"name\":\"two\",\"devices\":[{\"name\":\"d\",\"count\":2,\"flops\":1e12,"
                  "\"memory\":1e9,\"mem_bandwidth\":1e11}],\"links\":[{\"name\":\"l\","
                  "\"endpoints\":[\"d0\",\"d1\"],\"bandwidth\":1e10,\"latency\":1e-6}]}");
    cr_assert_eq(th_sh("cp tests/fuzz/corpus/results/small.db %s/r.db", dir), 0);
    const char *env = getenv("ALLOC_FAIL_SO");
    if (env) {
        snprintf(shim, sizeof shim, "%s", env);
    } else { /* beside the binary: build[/asan]/tests/alloc_fail.so */
        char bin[1024];
        snprintf(bin, sizeof bin, "%s", th_pipesim());
        snprintf(shim, sizeof shim, "%s/tests/alloc_fail.so", dirname(bin));
    }
    char *abs = realpath(shim, NULL); /* the runs cd into dir */
    cr_assert(abs, "no shim at %s (make builds it)", shim);
    snprintf(shim, sizeof shim, "%s", abs);
    free(abs);
    cr_assert_eq(access(shim, R_OK), 0, "no shim at %s (make builds it)", shim);
}

static void teardown(void)
{
    th_sh("rm -rf %s", dir);
}

/* Runs cmd (in dir) with the shim; n = 0 only counts. Returns the status. */
static int run(const char *cmd, unsigned long n)
{
    char pipesim[1024];
    if (th_pipesim()[0] == '/') {
        snprintf(pipesim, sizeof pipesim, "%s", th_pipesim());
    } else {
        char cwd[512];
        cr_assert(getcwd(cwd, sizeof cwd));
        snprintf(pipesim, sizeof pipesim, "%s/%s", cwd, th_pipesim());
    }
    /* OpenBLAS threads (linked into some builds) allocate concurrently and
     * would make the count differ from run to run */
    return th_sh("cd %s && rm -f out.* && OPENBLAS_NUM_THREADS=1 "
                 "ASAN_OPTIONS=verify_asan_link_order=0:allocator_may_return_null=1:"
                 "detect_leaks=1:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:exitcode=98 "
                 "ALLOC_FAIL_N=%lu ALLOC_FAIL_REPORT=count LD_PRELOAD=%s %s %s >stdout 2>stderr",
                 dir, n, shim, pipesim, cmd);
}

static int temp_files(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        n += (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) ||
             strstr(e->d_name, ".tmp.") != NULL; /* ps_afile's ".<name>.XXXXXX", the old names */
    closedir(d);
    return n;
}

/* A result file after a run: absent, or the reference bytes (the trace may
 * also be a valid unsorted trace with the same events if sorting lacked
 * memory: trc_trace_sort keeps recording order then). */
static void check_output(unsigned long n, const char *name, const char *ref)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    if (access(p, F_OK) != 0)
        return;
    if (th_sh("cmp -s %s/%s %s/%s", dir, name, dir, ref) == 0)
        return;
    cr_assert(strstr(name, ".json") && strstr(name, "trace"), "N=%lu: %s differs from the "
              "reference", n, name);
    struct trc_trace *a, *b;
    char q[256];
    snprintf(q, sizeof q, "%s/%s", dir, ref);
    cr_assert_eq(trc_read_chrome(p, &a), 0, "N=%lu: %s: %s", n, name, ps_errmsg());
    cr_assert_eq(trc_read_chrome(q, &b), 0);
    cr_assert_eq(a->n_events, b->n_events, "N=%lu: %s lost events", n, name);
    trc_trace_free(a);
    trc_trace_free(b);
}

/* Which N to fail. Every N when there are few allocations or when
 * PIPESIM_ALLOC_ALL is set (`make alloc`); else a fixed, deterministic sample
 * of about ALLOC_SAMPLE: the first and last 64 (start-up, output, teardown)
 * and an even stride through the rest. The full sweep of a long command takes
 * minutes under ASan on a busy machine; the sample keeps `make test` far
 * inside the timeout, which then only catches hangs. */
#define ALLOC_SAMPLE 256UL
static int in_sample(unsigned long n, unsigned long total)
{
    if (getenv("PIPESIM_ALLOC_ALL") || total <= ALLOC_SAMPLE)
        return 1;
    if (n <= 64 || n > total - 64)
        return 1;
    unsigned long stride = (total - 128) / (ALLOC_SAMPLE - 128) + 1;
    return n % stride == 1 % stride;
}

static void fail_each(const char *cmd, const char *const *outputs)
{
    cr_assert_eq(run(cmd, 0), 0, "reference run of '%s' failed", cmd);
    char buf[4096];
    th_slurp(dir, "count", buf, sizeof buf);
    unsigned long total = strtoul(buf, NULL, 10);
    cr_assert_gt(total, 10, "'%s': only %lu allocations counted: is the shim loaded?", cmd, total);
    for (const char *const *o = outputs; *o; o++)
        cr_assert_eq(th_sh("cd %s && mv %s ref.%s", dir, *o, *o), 0);
    th_sh("cd %s && mv stdout ref.stdout", dir);
    unsigned long failed = 0, tried = 0;
    for (unsigned long n = 1; n <= total; n++) {
        if (!in_sample(n, total))
            continue;
        tried++;
        int st = run(cmd, n);
        char err[4096];
        th_slurp(dir, "stderr", err, sizeof err);
        cr_assert(st == 0 || st == ps_exit_status(PS_ENOMEM), "'%s' with allocation %lu of "
                  "%lu failing: status %d (128 = signal): %s", cmd, n, total, st, err);
        cr_assert(!strstr(err, "Sanitizer") && !strstr(err, "runtime error"),
                  "'%s' N=%lu: %s", cmd, n, err);
        if (st) {
            failed++;
            cr_assert(strstr(err, "out of memory"), "'%s' N=%lu: '%s'", cmd, n, err);
            cr_assert(!strncmp(err, "pipesim ", 8) && strchr(err, '\n') == err + strlen(err) - 1,
                      "'%s' N=%lu: not one line: '%s'", cmd, n, err);
        } else {
            cr_assert_eq(th_sh("cmp -s %s/stdout %s/ref.stdout", dir, dir), 0,
                         "'%s' N=%lu succeeded with different output", cmd, n);
        }
        cr_assert_eq(temp_files(), 0, "'%s' N=%lu left a temporary file", cmd, n);
        for (const char *const *o = outputs; *o; o++) {
            char ref[128];
            snprintf(ref, sizeof ref, "ref.%s", *o);
            check_output(n, *o, ref);
            char path[256];
            snprintf(path, sizeof path, "%s/%s", dir, *o);
            cr_assert(st || access(path, F_OK) == 0, "'%s' N=%lu succeeded without %s", cmd, n,
                      *o);
        }
    }
    cr_log_info("'%s': %lu allocations, %lu failed in turn: %lu failed cleanly, %lu tolerated",
                cmd, total, tried, failed, tried - failed);
    cr_assert_geq(failed, tried / 2, "'%s': only %lu of %lu failures were reported", cmd, failed,
                  tried);
}

/* The timeout catches a hang only: a sampled run takes about a minute under
 * ASan on a loaded 2-core machine, `make alloc`'s full sweep a few. */
TestSuite(alloc, .init = setup, .fini = teardown, .timeout = 900);

Test(alloc, predict_fails_cleanly_at_every_allocation)
{
    static const char *const outputs[] = { "out.trace.json", "out.trace.csv", "out.json", NULL };
    fail_each("predict --model m.csv --topology t.json -K 2 -M 2 --batch 4 --remat always "
              "--trace out.trace.json --trace-csv out.trace.csv --format json --out out.json",
              outputs);
}

Test(alloc, gen_fails_cleanly_at_every_allocation)
{
    static const char *const outputs[] = { "out.chain.json", NULL };
    fail_each("gen chain -n 3 -o out.chain.json", outputs);
}

Test(alloc, table_output_fails_cleanly_at_every_allocation)
{
    static const char *const outputs[] = { NULL };
    /* width 32: no op under the 1 ns tick, whose warning would make two lines */
    fail_each("predict --model mlp:layers=3,width=32,norm=2 --topology t.json -K 2 -M 2 "
              "--batch 2", outputs);
}

Test(alloc, report_from_sqlite_fails_cleanly_at_every_allocation)
{
    static const char *const outputs[] = { "out.csv", NULL };
    fail_each("report --db r.db --metric normalized,bubble,memory --csv out.csv", outputs);
}

/* presets lists the bundled folders: a listing cut short by a failed allocation kept its
 * names (LeakSanitizer, helper-60's scan-build triage). */
Test(alloc, presets_fails_cleanly_at_every_allocation)
{
    static const char *const outputs[] = { NULL };
    fail_each("presets", outputs);
}
