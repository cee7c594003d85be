/* sim_membudget: the /proc/meminfo and cgroup parsers on synthetic files,
 * PIPESIM_MEMORY_LIMIT parsing, the op-list estimate against the real
 * generators (exact op counts, bytes >= what they allocate), and end to end:
 * runs that cannot fit are refused with exit 6 before writing anything,
 * small ones still run. */
#include "helpers.h"

#include "sim/sim_membudget.h"

#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(membudget, .timeout = 60);

/* ---- synthetic /proc and /sys/fs/cgroup ---- */

static char root[256];

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void make_root(void)
{
    snprintf(root, sizeof root, "/tmp/test_membudget.XXXXXX"); /* fresh, as make_out's */
    cr_assert_not_null(mkdtemp(root));
}

static void remove_root(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

static struct ps_mem_avail avail_at(void)
{
    char mi[300], cg[300], sys[300];
    snprintf(mi, sizeof mi, "%s/meminfo", root);
    snprintf(cg, sizeof cg, "%s/self_cgroup", root);
    snprintf(sys, sizeof sys, "%s/sys", root);
    struct ps_mem_paths p = { mi, cg, sys };
    struct ps_mem_avail a;
    ps_mem_available_at(&p, &a);
    return a;
}

static const char meminfo[] = "MemTotal:       24683628 kB\n"
                              "MemFree:        23035404 kB\n"
                              "MemAvailable:    2000000 kB\n"
                              "Buffers:           12345 kB\n";

Test(membudget, meminfo_alone, .init = make_root, .fini = remove_root)
{
    put("meminfo", meminfo);
    struct ps_mem_avail a = avail_at();
    cr_assert_eq(a.bytes, 2000000.0 * 1024);
    cr_assert_str_eq(a.source, "MemAvailable");
}

Test(membudget, nothing_readable, .init = make_root, .fini = remove_root)
{
    struct ps_mem_avail a = avail_at();
    cr_assert(isinf(a.bytes));
}

/* v2: the own cgroup's memory.max minus memory.current; an ancestor's
 * tighter limit wins; "max" is no limit. */
Test(membudget, cgroup_v2, .init = make_root, .fini = remove_root)
{
    put("meminfo", meminfo);
    put("self_cgroup", "0::/user.slice/job\n");
    put("sys/cgroup.controllers", "cpu memory\n");
    put("sys/user.slice/job/memory.max", "1073741824\n");
    put("sys/user.slice/job/memory.current", "73741824\n");
    put("sys/user.slice/memory.max", "max\n");
    put("sys/user.slice/memory.current", "5000000000\n");
    struct ps_mem_avail a = avail_at();
    cr_assert_eq(a.bytes, 1000000000.0);
    cr_assert_str_eq(a.source, "cgroup memory.max");
    put("sys/user.slice/memory.max", "600000000\n");
    put("sys/user.slice/memory.current", "100000000\n");
    a = avail_at();
    cr_assert_eq(a.bytes, 500000000.0);
    /* MemAvailable smaller than every limit */
    put("meminfo", "MemAvailable:     100000 kB\n");
    a = avail_at();
    cr_assert_eq(a.bytes, 100000.0 * 1024);
    cr_assert_str_eq(a.source, "MemAvailable");
}

/* A namespaced container: path "/" and the limit at the mount's root. */
Test(membudget, cgroup_v2_namespace_root, .init = make_root, .fini = remove_root)
{
    put("self_cgroup", "0::/\n");
    put("sys/cgroup.controllers", "memory\n");
    put("sys/memory.max", "2147483648\n");
    put("sys/memory.current", "1073741824\n");
    cr_assert_eq(avail_at().bytes, 1073741824.0);
    put("sys/memory.max", "max\n");
    cr_assert(isinf(avail_at().bytes));
}

/* Hybrid hierarchy: v2 under unified/ (no memory files there), v1 memory
 * controller under memory/, its "unlimited" huge value ignored. */
Test(membudget, cgroup_v1, .init = make_root, .fini = remove_root)
{
    put("self_cgroup", "9:name=systemd:/\n4:memory:/api/box\n0::/\n");
    put("sys/unified/cgroup.controllers", "\n");
    put("sys/memory/memory.limit_in_bytes", "9223372036854771712\n");
    put("sys/memory/api/box/memory.limit_in_bytes", "9223372036854771712\n");
    put("sys/memory/api/box/memory.usage_in_bytes", "13557760\n");
    cr_assert(isinf(avail_at().bytes));
    put("sys/memory/api/memory.limit_in_bytes", "1000000000\n");
    put("sys/memory/api/memory.usage_in_bytes", "250000000\n");
    struct ps_mem_avail a = avail_at();
    cr_assert_eq(a.bytes, 750000000.0);
    cr_assert_str_eq(a.source, "cgroup memory.limit_in_bytes");
    /* over the limit already: nothing left, not negative */
    put("sys/memory/api/memory.usage_in_bytes", "1200000000\n");
    cr_assert_eq(avail_at().bytes, 0.0);
}

Test(membudget, malformed_files_are_skipped, .init = make_root, .fini = remove_root)
{
    put("meminfo", "MemAvailable: lots\n");
    put("self_cgroup", "garbage\n0::/x\n");
    put("sys/cgroup.controllers", "memory\n");
    put("sys/x/memory.max", "12abc\n");
    cr_assert(isinf(avail_at().bytes));
}

/* ---- PIPESIM_MEMORY_LIMIT ---- */

Test(membudget, parse_size)
{
    /* the units of --mem-cap and every size (ps_parse_bytes): G = 1e9, GiB = 2^30;
     * it read G as 2^30 here alone */
    struct { const char *s; double v; } ok[] = {
        { "1073741824", 1073741824.0 }, { "1G", 1e9 },      { "1GiB", 1073741824.0 },
        { "512M", 512e6 },              { "64K", 64000.0 }, { "1.5G", 1.5e9 },
        { "2GiB", 2147483648.0 },       { "3MB", 3e6 },     { "1T", 1e12 },
        { "0.1KiB", 102.0 },            { "512MiB", 536870912.0 }, { "16KB", 16e3 },
        /* blanks around, as every number (ps_parse_long, ps_parse_double) */
        { " 1G", 1e9 },                 { "1G ", 1e9 },     { "\t2GiB\t", 2147483648.0 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        double v = 0;
        cr_assert_eq(ps_mem_parse_size(ok[i].s, "X", &v), 0, "%s: %s", ok[i].s, ps_errmsg());
        cr_assert_eq(v, ok[i].v, "%s", ok[i].s);
    }
    const char *bad[] = { "", "G", "-1G", "0", "1Q", "1GG", "1 G", "nan", "inf", "0.1", "1g",
                          "1.5", "1.5B", /* whole bytes: 1.5G meant? (was 1 byte) */
                          "1e400", "0x10", "1GiBGiB", " " };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double v;
        cr_assert_eq(ps_mem_parse_size(bad[i], "PIPESIM_MEMORY_LIMIT", &v), -PS_EUSAGE,
                     "'%s' accepted", bad[i]);
        cr_assert(strstr(ps_errmsg(), "PIPESIM_MEMORY_LIMIT"));
    }
}

Test(membudget, env_overrides_and_check)
{
    setenv(PS_MEM_ENV, "1GiB", 1);
    struct ps_mem_avail a;
    cr_assert_eq(ps_mem_available(&a), 0);
    cr_assert_eq(a.bytes, 1073741824.0);
    cr_assert_str_eq(a.source, PS_MEM_ENV);
    /* refused only above 0.9 x available */
    cr_assert_eq(ps_mem_check(0.9 * 1073741824.0, "x", NULL, NULL), 0);
    cr_assert_eq(ps_mem_check(0.91 * 1073741824.0, "thing", "detail", "hint"), -PS_ENOMEM);
    cr_assert_str_eq(ps_errmsg(), "thing needs about 931.8 MiB (detail) but only 1.0 GiB is "
                                   "available (PIPESIM_MEMORY_LIMIT); hint");
    /* under the floor: never refused */
    setenv(PS_MEM_ENV, "1K", 1);
    cr_assert_eq(ps_mem_check(PS_MEM_FLOOR / 2, "x", NULL, NULL), 0);
    setenv(PS_MEM_ENV, "lots", 1);
    cr_assert_eq(ps_mem_check(1e12, "x", NULL, NULL), -PS_EUSAGE);
    unsetenv(PS_MEM_ENV);
}

/* ---- estimates against the generators ---- */

static const char *const scheds[] = { "gpipe", "1f1b", "zb-h1", "interleaved:1",
                                      "interleaved:2", "interleaved:3" };

/* Bytes the schedule's op arrays hold, from the schedule itself. */
static double sched_alloc(const struct sch_schedule *s)
{
    double b = 0;
    for (int d = 0; d < s->n_devices; d++)
        b += (double)s->cap_ops[d] * sizeof(struct sch_op);
    return b;
}

Test(membudget, op_counts_exact)
{
    int Ks[] = { 1, 2, 3, 4, 8 }, Ms[] = { 1, 4, 8, 24 };
    for (size_t i = 0; i < sizeof scheds / sizeof *scheds; i++)
        for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++)
            for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++)
                for (int remat = 0; remat < 3; remat++)
                    for (int R = 1; R <= 2; R++) {
                        int K = Ks[k], M = Ms[m];
                        struct sch_schedule *s;
                        struct sch_mem_sched e;
                        int built = sch_schedule_build(scheds[i], K, M, remat, &s) == 0;
                        int est = sch_mem_sched_estimate(scheds[i], K, M, remat, R, &e) == 0;
                        cr_assert_eq(built, est, "%s K=%d M=%d: built %d, estimated %d",
                                     scheds[i], K, M, built, est);
                        if (!built)
                            continue;
                        cr_assert_eq(sch_schedule_add_allreduce(s, R), 0);
                        cr_assert_eq(e.n_ops, sch_schedule_total_ops(s), "%s K=%d M=%d "
                                     "remat %d R=%d", scheds[i], K, M, remat, R);
                        cr_assert_eq(e.n_stages, s->n_stages);
                        cr_assert_geq(e.bytes, sched_alloc(s), "%s K=%d M=%d", scheds[i], K, M);
                        sch_schedule_free(s);
                    }
}

/* sch_schedule_stages answers as the build does: the built schedule's stage
 * count, or the build's own error code and message for a name, parameter or
 * size the generators refuse. */
Test(membudget, stages_as_built)
{
    static const char *names[] = { "gpipe", "1f1b", "zb-h1", "interleaved:1", "interleaved:2",
                                   "interleaved:3", "nope", "gpipe:2", "interleaved:x",
                                   "interleaved", "interleaved:0", "1f1b:", "" };
    int Ks[] = { 1, 2, 3, 4 }, Ms[] = { 1, 4, 6, 8 };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++)
            for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++) {
                int K = Ks[k], M = Ms[m], S = -1;
                struct sch_schedule *s;
                int rb = sch_schedule_build(names[i], K, M, SCH_REMAT_EXCEPT_LAST, &s);
                char msg[512];
                snprintf(msg, sizeof msg, "%s", rb < 0 ? ps_errmsg() : "");
                ps_error_clear();
                int rs = sch_schedule_stages(names[i], K, M, SCH_REMAT_EXCEPT_LAST, &S);
                cr_assert_eq(rs, rb, "'%s' K=%d M=%d: %d, built %d", names[i], K, M, rs, rb);
                if (rb < 0)
                    cr_assert_str_eq(ps_errmsg(), msg, "'%s' K=%d M=%d", names[i], K, M);
                else
                    cr_assert_eq(S, s->n_stages, "'%s' K=%d M=%d", names[i], K, M);
                sch_schedule_free(s);
            }
}

/* A mid-size run: the estimate covers at least the op arrays the schedule
 * and the engine really allocate (exact, from sizeof), with and without a
 * trace. (interleaved:v > 1 needs a ring, not th_chain; its op arrays are
 * checked above.) */
Test(membudget, run_estimate_covers_op_arrays)
{
    struct mdl_profile *p = mdl_profile_new("<test>", 1);
    for (int i = 0; i < 16; i++) {
        struct mdl_layer l = { .fwd = 1e-3, .bwd = 2e-3, .at_batch = 1, .params = 10,
                               .out_bytes = 100, .stash_bytes = 100 };
        snprintf(l.name, sizeof l.name, "l%d", i);
        cr_assert_eq(mdl_profile_add(p, &l), 0);
    }
    struct mdl_topology *t = th_chain(16, 1e11, 1e10, 1e-6);
    for (size_t i = 0; i < 4; i++)
        for (int trace = 0; trace <= 1; trace++) {
            struct th_run r;
            th_simulate(&r, scheds[i], p, t, 8, 64, SCH_REMAT_EXCEPT_LAST, 1, trace);
            struct sim_mem_run e;
            cr_assert_eq(sim_mem_run_estimate(scheds[i], 8, 64, SCH_REMAT_EXCEPT_LAST, 1, trace,
                                              0, &e), 0);
            double ops = (double)sch_schedule_total_ops(r.s);
            double arrays = sched_alloc(r.s) +
                            (double)sim_engine_bytes(r.s->n_stages, r.s->n_micro, trace);
            if (trace) {
                const struct trc_trace *tr = sim_engine_trace(r.e);
                arrays += (double)tr->cap_events * sizeof(struct trc_event);
            }
            cr_assert_geq(e.total, arrays, "%s trace %d: estimate %.0f < %.0f", scheds[i],
                          trace, e.total, arrays);
            cr_assert_eq(e.sched.n_ops, (int64_t)ops);
            th_release(&r);
        }
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* zb-auto holds two op lists at once (its best and a candidate, the second's last
 * doubling beside its old array) and the timing of a list: 2.5 lists and 40 bytes a
 * stage micro-batch beyond zb-h1's one list (helper-148: one list was counted, a
 * quarter to a third of the measured peak). */
Test(membudget, zb_auto_counts_its_candidate_lists)
{
    struct sim_mem_run h1, za;
    cr_assert_eq(sim_mem_run_estimate("zb-h1", 256, 4096, SCH_REMAT_NEVER, 1, 0, 0, &h1), 0);
    cr_assert_eq(sim_mem_run_estimate("zb-auto", 256, 4096, SCH_REMAT_NEVER, 1, 0, 0, &za), 0);
    double want = 2.5 * h1.sched.bytes + 256.0 * 4096 * (3 * 8 + 2 * sizeof(sch_time));
    cr_assert_float_eq(za.sched.bytes, want, 1e-9 * want);
    cr_assert_eq(za.sched.n_ops, h1.sched.n_ops);
}

/* ---- end to end ---- */

static char out_dir[256];

static void remove_out(void);

static void make_out(void)
{
    th_teardown_at_exit(remove_out); /* its tests may skip */
    /* a fresh name: one from the pid met a folder a run before left (pid reuse) */
    snprintf(out_dir, sizeof out_dir, "/tmp/test_membudget_e2e.XXXXXX");
    cr_assert_not_null(mkdtemp(out_dir));
}

static void remove_out(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out_dir);
    if (system(cmd) != 0) /* no assert: it also runs at the worker's exit */
        fprintf(stderr, "test_membudget: could not remove %s\n", out_dir);
}

/* Runs the shell command cmd, whose stderr goes to out_dir/stderr: that in
 * err, and the exit status. */
static int run_cmd(const char *cmd, char *err, size_t n)
{
    char ef[300];
    snprintf(ef, sizeof ef, "%s/stderr", out_dir);
    int st = system(cmd);
    FILE *f = fopen(ef, "r");
    cr_assert(f);
    size_t k = fread(err, 1, n - 1, f);
    err[k] = 0;
    fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs cmd (pipesim prepended) with the limit, stderr to err; the exit status. */
static int run(const char *limit, const char *args, char *err, size_t n)
{
    const char *bin = getenv("PIPESIM");
    if (!bin)
        cr_skip_test("PIPESIM is not set (run from make or with PIPESIM=build/pipesim)");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s%s %s %s >%s/stdout 2>%s/stderr",
             limit ? "PIPESIM_MEMORY_LIMIT=" : "", limit ? limit : "", bin, args, out_dir,
             out_dir);
    return run_cmd(cmd, err, n);
}

Test(membudget, huge_predict_refused, .init = make_out, .fini = remove_out)
{
    char args[1024], err[4096], trace[300];
    snprintf(args, sizeof args, "gen chain -n 1024 -o %s/chain.json", out_dir);
    cr_assert_eq(run(NULL, args, err, sizeof err), 0, "%s", err);
    snprintf(trace, sizeof trace, "%s/trace.json", out_dir);
    snprintf(args, sizeof args, "predict --model mlp:layers=1024,width=64 --topology "
             "%s/chain.json -K 1024 -M 16384 --batch 16384 --trace %s", out_dir, trace);
    cr_assert_eq(run("1GiB", args, err, sizeof err), 6, "%s", err);
    cr_assert(strstr(err, "pipesim predict: simulation: schedule gpipe with K=1024, M=16384 "
                          "needs about 13.7 GiB (117374976 ops: op lists 1.3 GiB, engine "
                          "264.7 MiB, trace 12.1 GiB) but only 1.0 GiB is available "
                          "(PIPESIM_MEMORY_LIMIT); use a smaller -K or -M"), "%s", err);
    cr_assert_eq(access(trace, F_OK), -1, "a trace was written");
    /* one line */
    cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "%s", err);
}

/* The check counts what the run allocates: GPipe without a trace is replayed
 * in its compact form (about 1 MiB here), so a limit below its op lists
 * (84 MiB) lets it run; with a trace, or as 1f1b, the lists are built and
 * the same limit refuses it. */
Test(membudget, compact_predict_runs_under_a_limit_its_lists_exceed, .init = make_out,
     .fini = remove_out)
{
    char args[1024], err[4096], trace[300];
    snprintf(args, sizeof args, "gen chain -n 256 -o %s/chain.json", out_dir);
    cr_assert_eq(run(NULL, args, err, sizeof err), 0, "%s", err);
#define BIG "predict --model mlp:layers=256,width=8 --topology %s/chain.json -K 256 -M 4096 " \
            "--batch 4096"
    snprintf(args, sizeof args, BIG " --format json", out_dir);
    cr_assert_eq(run("50MiB", args, err, sizeof err), 0, "%s", err);
    cr_assert(!strstr(err, "needs about"), "%s", err); /* (a warning: its ops are short) */
    snprintf(trace, sizeof trace, "%s/trace.json", out_dir);
    snprintf(args, sizeof args, BIG " --trace %s", out_dir, trace);
    cr_assert_eq(run("50MiB", args, err, sizeof err), 6, "%s", err);
    cr_assert(strstr(err, "pipesim predict: simulation: schedule gpipe with K=256, M=4096 "
                          "needs about 875.6 MiB (7323648 ops: op lists 83.8 MiB, engine "
                          "16.7 MiB, trace 775.1 MiB) but only 50.0 MiB is available "
                          "(PIPESIM_MEMORY_LIMIT); "), "%s", err);
    cr_assert_eq(access(trace, F_OK), -1, "a trace was written");
    snprintf(args, sizeof args, BIG " --schedule 1f1b", out_dir);
    cr_assert_eq(run("50MiB", args, err, sizeof err), 6, "%s", err);
    cr_assert(strstr(err, "pipesim predict: simulation: schedule 1f1b with K=256, M=4096 "
                          "needs about 96.7 MiB (7323648 ops: op lists 96.0 MiB, engine "
                          "696.0 KiB) but only 50.0 MiB is available"), "%s", err);
    /* a partitioner strategy probes the op lists first: refused too */
    snprintf(args, sizeof args, BIG " --partition optimal", out_dir);
    cr_assert_eq(run("50MiB", args, err, sizeof err), 6, "%s", err);
    cr_assert(strstr(err, "(7323648 ops: op lists 83.8 MiB, engine 696.0 KiB) but only "
                          "50.0 MiB is available"), "%s", err);
#undef BIG
}

Test(membudget, small_predict_runs, .init = make_out, .fini = remove_out)
{
    char args[1024], err[4096], trace[300];
    snprintf(trace, sizeof trace, "%s/trace.json", out_dir);
    snprintf(args, sizeof args, "predict --model mlp:layers=16,width=256 --topology "
             "models/topologies/chain-8-ideal.json -K 4 -M 16 --batch 64 --trace %s", trace);
    cr_assert_eq(run("1G", args, err, sizeof err), 0, "%s", err);
    cr_assert_eq(access(trace, F_OK), 0);
}

Test(membudget, huge_validate_refused, .init = make_out, .fini = remove_out)
{
    char err[4096];
    int rc = run(NULL, "validate --net mlp:layers=2048,width=65536 -K 2 -M 4 --batch 8 --no-pin",
                 err, sizeof err);
    cr_assert_eq(rc, 6, "%s", err);
    cr_assert(strstr(err, "pipesim validate: net 'mlp:layers=2048,width=65536' needs about "
                          "64.0 TiB (parameters and gradients of 8.80 trillion FP32 parameters) but "
                          "only "), "%s", err);
}

/* The pipeline's own buffers: a net that fits, a batch whose activations
 * do not. */
Test(membudget, validate_activations_refused, .init = make_out, .fini = remove_out)
{
    char err[4096];
    int rc = run("100M", "validate --net mlp:layers=8,width=512 -K 2 -M 4 --batch 65536 "
                 "--no-pin", err, sizeof err);
    cr_assert_eq(rc, 6, "%s", err);
    cr_assert(strstr(err, "pipesim validate: net 'mlp:layers=8,width=512' with schedule gpipe, "
                          "K=2, M=4, batch 65536 needs about "), "%s", err);
    cr_assert(strstr(err, "activations "), "%s", err);
}

Test(membudget, bad_limit_is_usage_error, .init = make_out, .fini = remove_out)
{
    char err[4096];
    int rc = run("lots", "predict --model mlp:layers=1024,width=64 --topology "
                 "models/topologies/chain-8-ideal.json -K 8 -M 1048576 --batch 1048576 "
                 "--schedule 1f1b", err, sizeof err); /* op lists: the limit is read */
    cr_assert_eq(rc, 2, "%s", err);
    cr_assert(strstr(err, "PIPESIM_MEMORY_LIMIT: 'lots' is not a positive byte count"), "%s", err);
}

/* GPipe replayed in its compact form (predict without a trace or replicas)
 * holds 4 runs per device, not its op lists: the estimate counts those. */
Test(membudget, compact_run_counts_runs)
{
    struct sim_mem_run lists, compact;
    cr_assert_eq(sim_mem_run_estimate("gpipe", 1024, 16384, SCH_REMAT_EXCEPT_LAST, 1, 0, 0,
                                      &lists), 0);
    cr_assert_eq(sim_mem_run_estimate("gpipe", 1024, 16384, SCH_REMAT_EXCEPT_LAST, 1, 0, 1,
                                      &compact), 0);
    cr_expect_eq(compact.sched.n_ops, lists.sched.n_ops);
    cr_expect_eq(compact.sched.bytes, 4.0 * 1024 * sizeof(struct sch_run) + 1025.0 * sizeof(int));
    cr_expect_eq(compact.engine_bytes, lists.engine_bytes);
    cr_expect_eq(compact.total, compact.sched.bytes + compact.engine_bytes);
    cr_expect_gt(lists.sched.bytes, 1e9);
    cr_expect_lt(compact.total, 16.0 * 1024 * 1024);
}

/* A run beyond the schedules' size caps is refused by the cap, exit 4, on
 * every machine and for every schedule: the memory check came first for all
 * but gpipe, so its refusal (exit 6, "set PIPESIM_MEMORY_LIMIT", which could
 * not help) depended on the machine's memory. */
Test(membudget, the_size_cap_comes_before_the_memory_check)
{
    char dir[64];
    th_tmpdir(dir, sizeof dir, "cap");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s gen chain -n 4096 -o %s/c.json", ps, dir), 0);
    static const char *names[] = { "gpipe", "1f1b", "zb-h1", "zb-auto" };
    for (int i = 0; i < 4; i++)
        cr_expect_eq(th_sh("PIPESIM_MEMORY_LIMIT=1G %s predict --model mlp:layers=4096,width=8 "
                           "--topology %s/c.json -K 4096 -M 65536 --batch 65536 --remat never "
                           "--schedule %s 2> %s/err.txt >/dev/null; s=$?; grep -q 'is too "
                           "large (at most 16777216 stage micro-batches)' %s/err.txt && exit "
                           "$s", ps, dir, names[i], dir, dir), 4, "%s", names[i]);
    th_sh("rm -rf %s", dir);
}

/* Under an address-space or data limit (ulimit -v, -d, as batch schedulers
 * set) pipesim runs or refuses with exit 6; it does not hang. Every command
 * hung, --help too: OpenBLAS's thread pool, started when it is loaded, could
 * not get its buffers and spun, and exit() waited for it
 * (rt_blas_reexec_single_thread). The limit is the shell's (what = 'v' or
 * 'd'); skipped for a sanitized pipesim, whose shadow memory needs the
 * address space. */

static int run_limited(char what, unsigned long kib, const char *args, char *err, size_t n)
{
    const char *bin = getenv("PIPESIM");
    if (!bin)
        cr_skip_test("PIPESIM is not set (run from make or with PIPESIM=build/pipesim)");
    th_skip_if_sanitized(bin);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "ulimit -%c %lu && exec timeout -s KILL 25 %s %s >%s/stdout "
             "2>%s/stderr", what, kib, bin, args, out_dir, out_dir);
    return run_cmd(cmd, err, n);
}

Test(membudget, an_address_space_limit_runs_or_refuses, .init = make_out, .fini = remove_out)
{
    char args[1024], err[4096];
    cr_assert_eq(run_limited('v', 120 << 10, "--help", err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_limited('d', 120 << 10, "--help", err, sizeof err), 0, "%s", err);
    snprintf(args, sizeof args, "predict --model mlp:layers=16,width=256 --topology "
             "models/topologies/chain-8-ideal.json -K 4 -M 16 --batch 64");
    cr_assert_eq(run_limited('v', 120 << 10, args, err, sizeof err), 0, "%s", err);
    /* the limit read from RLIMIT_AS refuses what cannot fit (exit 6, one line) */
    snprintf(args, sizeof args, "predict --model mlp:layers=256,width=8 --topology "
             "models/topologies/chain-8-ideal.json -K 8 -M 1048576 --batch 1048576 "
             "--schedule 1f1b");
    cr_assert_eq(run_limited('v', 120 << 10, args, err, sizeof err), 6, "%s", err);
    cr_assert(strstr(err, "but only") && strstr(err, "is available (RLIMIT_AS)"), "%s", err);
    cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "%s", err);
}

/* The re-execution runs this program only: started through the dynamic
 * loader (/proc/self/exe is ld.so, which took pipesim's arguments as its
 * own: its usage text, or "version: cannot open shared object file") or
 * under valgrind (it executed the tool's binary, which refuses to run),
 * pipesim runs on as it was started. Limits far above what it needs. */
Test(membudget, a_limit_under_the_loader_or_valgrind_runs_pipesim, .init = make_out,
     .fini = remove_out)
{
    const char *bin = getenv("PIPESIM");
    if (!bin)
        cr_skip_test("PIPESIM is not set (run from make or with PIPESIM=build/pipesim)");
    th_skip_if_sanitized(bin);
    char cmd[2048];
    if (system("command -v readelf >/dev/null") != 0)
        cr_skip_test("readelf is not installed");
    char *abs = realpath(bin, NULL); /* the commands run in out_dir */
    cr_assert(abs, "%s", bin);
    char vg[2048];
    int l1 = snprintf(cmd, sizeof cmd, "cd %s && ld=$(readelf -l %s | sed -n 's/.*interpreter: "
                      "\\(.*\\)]/\\1/p') && test -x \"$ld\" && (ulimit -v 4000000; exec timeout "
                      "-s KILL 25 \"$ld\" %s --version) >out 2>err && grep -q '^pipesim ' out && "
                      "test ! -s err", out_dir, abs, abs);
    int l2 = snprintf(vg, sizeof vg, "cd %s && (ulimit -d 8000000; exec timeout -s KILL 50 "
                      "valgrind -q --error-exitcode=99 %s --version) >out 2>err && "
                      "grep -q '^pipesim ' out && test ! -s err", out_dir, abs);
    free(abs);
    cr_assert(l1 > 0 && (size_t)l1 < sizeof cmd && l2 > 0 && (size_t)l2 < sizeof vg);
    cr_expect_eq(system(cmd), 0, "through the loader");
    if (system("command -v valgrind >/dev/null") != 0)
        cr_skip_test("valgrind is not installed");
    snprintf(cmd, sizeof cmd, "%s", vg);
    cr_expect_eq(system(cmd), 0, "under valgrind");
}

/* A malformed PIPESIM_MEMORY_LIMIT is exit 2 before any work in every
 * command, as the docs say (helper-119: gen, gen-paper, presets, plot and a
 * small predict took it, read only when a need of 16 MiB or more was
 * checked). */
Test(membudget, a_malformed_limit_is_refused_by_every_command)
{
    static const char *const cmds[] = {
        "gen model mlp:layers=2,width=4",
        "gen chain -n 2",
        "gen-paper",
        "presets",
        "plot --kind schedules -K 2 -M 2 --out-dir /dev/null/x", /* never made */
        "predict --model mlp:layers=2,width=4 --topology chain-8-ideal -K 1 -M 1 --batch 1",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char out[2048];
        cr_expect_eq(th_capture(out, sizeof out, "PIPESIM_MEMORY_LIMIT=bogus %s %s 2>&1 "
                                ">/dev/null", th_pipesim(), cmds[i]), 2, "%s: %s", cmds[i], out);
        cr_expect(strstr(out, "PIPESIM_MEMORY_LIMIT: 'bogus' is not a positive byte count"),
                  "%s: %s", cmds[i], out);
    }
}

/* --help still answers under a malformed limit (helper-120: exit 2). */
Test(membudget, help_answers_under_a_malformed_limit)
{
    char out[4096];
    cr_expect_eq(th_capture(out, sizeof out, "PIPESIM_MEMORY_LIMIT=bogus %s predict --help "
                            "2>&1", th_pipesim()), 0, "%s", out);
    cr_expect(strstr(out, "usage: pipesim predict"), "%s", out);
}
