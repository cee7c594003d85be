/* MPI backend of pipesim validate: with 2 ranks (and 4, oversubscribed) the
 * gradients equal the thread backend's byte for byte, the gathered trace
 * has every op with send-before-receive across ranks on the aligned clock,
 * and a rank count that does not match K is a usage error. Skipped, with
 * the reason printed, when mpirun is missing or pipesim was built without
 * MPI (make test installs Open MPI through scripts/deps.sh).
 *
 * Under `make asan` the ranks run with LeakSanitizer off (ASAN_OPTIONS is
 * passed through mpirun): Open MPI's own start-up allocations are never
 * freed and are reported from unloaded plug-ins no suppression can name.
 * Address and UB errors stay fatal, and the log is searched for them. */
#include "helpers.h"

#include "runtime/rt_mpi.h"
#include "base/ps_util.h"
#include "traces/trc_trace.h"

#include <unistd.h>

TestSuite(mpi, .timeout = 120);

/* Skips the test, with the reason, where MPI is missing (`make test`
 * installs Open MPI, so nothing is skipped there). */
static void need_mpi(void)
{
    if (!rt_mpi_available())
        cr_skip_test("pipesim was built without MPI (apt-get install openmpi-bin "
                     "libopenmpi-dev; the Makefile rebuilds when its flags change)");
    if (th_sh("command -v mpirun >/dev/null 2>&1") != 0)
        cr_skip_test("mpirun is not installed (apt-get install openmpi-bin)");
}

static char *tmpdir(void)
{
    char *d = malloc(64);
    cr_assert(d);
    th_tmpdir(d, 64, "mpi");
    return d;
}

/* mpirun -np n pipesim validate --backend mpi ARGS; its exit status. One
 * mpirun at a time (th_mpi_lock); a failed run (other than the usage error
 * some tests expect, 2) prints its stderr's tail, which the temporary
 * folder would take with it. */
static int mpirun(int n, const char *dir, const char *args)
{
    return th_sh("%smpirun %s --oversubscribe "
                 "-x ASAN_OPTIONS=detect_leaks=0 -np %d %s validate --backend mpi %s "
                 ">%s/mpi.out 2>%s/mpi.err; st=$?; "
                 "if grep -qE 'ERROR: AddressSanitizer|runtime error:' %s/mpi.err; then "
                 "cat %s/mpi.err; exit 99; fi; "
                 "if [ $st -ne 0 ] && [ $st -ne 2 ]; then tail -20 %s/mpi.err >&2; fi; exit $st",
                 th_mpi_lock(), getuid() == 0 ? "--allow-run-as-root" : "", n, th_pipesim(),
                 args, dir, dir, dir, dir, dir);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    char *buf;
    cr_assert_eq(ps_read_file(path, &buf, n), 0, "%s", ps_errmsg());
    return (unsigned char *)buf;
}

/* Same gradients from both backends, and they are not all zero. */
static void same_grads(const char *dir, int K, const char *net, const char *opts)
{
    char args[1024];
    snprintf(args, sizeof args, "--net %s -K %d %s --grads-out %s/mpi.grads --trace %s/mpi.json",
             net, K, opts, dir, dir);
    int st = mpirun(K, dir, args);
    cr_assert_eq(st, 0, "mpirun exit %d (see %s/mpi.err)", st, dir);
    cr_assert_eq(th_sh("%s validate --net %s -K %d %s --grads-out %s/thr.grads >/dev/null",
                       th_pipesim(), net, K, opts, dir), 0);
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/mpi.grads", dir);
    snprintf(b, sizeof b, "%s/thr.grads", dir);
    size_t na, nb;
    unsigned char *ga = slurp(a, &na), *gb = slurp(b, &nb);
    cr_assert_eq(na, nb);
    cr_assert_gt(na, 12);
    cr_assert_eq(memcmp(ga, "PSGRADS1", 8), 0);
    size_t first = 0;
    while (first < na && ga[first] == gb[first])
        first++;
    cr_assert_eq(first, na, "%s %s: gradients differ from the thread backend's at byte %zu",
                 net, opts, first);
    size_t nonzero = 0;
    for (size_t i = 12; i < na; i++)
        nonzero += ga[i] != 0;
    cr_assert_gt(nonzero, na / 4, "gradients are mostly zero");
    free(ga);
    free(gb);
}

/* The gathered trace: every op of every rank; each receive ends after its
 * send started on rank 0's clock (within the reported alignment). */
static void check_trace(const char *dir, const char *sched, int K, int M, enum sch_remat remat)
{
    char path[600];
    snprintf(path, sizeof path, "%s/mpi.json", dir);
    struct trc_trace *t;
    cr_assert_eq(trc_read_chrome(path, &t), 0, "%s", ps_errmsg());
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build(sched, K, M, remat, &s), 0);
    cr_assert_str_eq(t->source, "measured");
    cr_assert_eq(t->n_devices, K);
    cr_assert_eq((int64_t)t->n_events, sch_schedule_total_ops(s));
    int pairs = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const struct trc_event *r = &t->events[i];
        cr_assert_leq(r->start_ns, r->end_ns);
        cr_assert_geq(r->start_ns, -1000000, "times start near the step start");
        if (r->kind != SCH_OP_RECV_ACT && r->kind != SCH_OP_RECV_GRAD)
            continue;
        int act = r->kind == SCH_OP_RECV_ACT, sst = act ? r->stage - 1 : r->stage + 1;
        for (size_t j = 0; j < t->n_events; j++) {
            const struct trc_event *e = &t->events[j];
            if (e->kind == (act ? SCH_OP_SEND_ACT : SCH_OP_SEND_GRAD) && e->stage == sst &&
                e->mb == r->mb) {
                pairs++;
                cr_assert_eq(e->device, r->peer);
                cr_assert_eq(e->bytes, r->bytes);
                cr_assert_geq(r->end_ns + 100000, e->start_ns,
                              "recv of stage %d mb %d ends before its send starts", r->stage,
                              r->mb);
            }
        }
    }
    cr_assert_eq(pairs, 2 * (K - 1) * M);
    sch_schedule_free(s);
    trc_trace_free(t);
}

Test(mpi, two_ranks_match_the_thread_backend)
{
    need_mpi();
    char *dir = tmpdir();
    same_grads(dir, 2, "mlp:layers=6,width=48,norm=2", "-M 4 --batch 32 --steps 1");
    check_trace(dir, "gpipe", 2, 4, SCH_REMAT_EXCEPT_LAST);
    same_grads(dir, 2, "mlp:layers=5,width=40", "-M 6 --batch 24 --steps 2 --remat never "
                                                "--schedule 1f1b");
    check_trace(dir, "1f1b", 2, 6, SCH_REMAT_NEVER);
    same_grads(dir, 2, "mlp:layers=4,width=32", "-M 4 --batch 16 --steps 1 --remat always "
                                                "--schedule zb-h1");
    char out[700];
    snprintf(out, sizeof out, "%s/mpi.out", dir);
    size_t n;
    char *txt = (char *)slurp(out, &n);
    cr_assert(strstr(txt, "backend         MPI, 2 ranks"), "%s", txt);
    cr_assert(strstr(txt, "match"), "%s", txt);
    cr_assert(!strstr(txt, " NO "), "ledger mismatch:\n%s", txt);
    free(txt);
    /* each rank's stages and workspace, as the thread backend's table
     * (helper-141: interleaved:2's ranks did not say which stages they held) */
    cr_assert_eq(mpirun(2, dir, "--net mlp:layers=8,width=32 -K 2 -M 4 --batch 16 --steps 1 "
                        "--schedule interleaved:2"), 0);
    txt = (char *)slurp(out, &n);
    cr_expect(strstr(txt, "  stages layers ") && strstr(txt, "   workspace\n"), "%s", txt);
    cr_expect(strstr(txt, "     0,2      4 ") && strstr(txt, "     1,3      4 "), "%s", txt);
    free(txt);
    th_sh("rm -rf '%s'", dir);
    free(dir);
}

Test(mpi, four_ranks_oversubscribed)
{
    need_mpi();
    char *dir = tmpdir();
    same_grads(dir, 4, "mlp:layers=8,width=24", "-M 4 --batch 16 --steps 1 --no-pin");
    check_trace(dir, "gpipe", 4, 4, SCH_REMAT_EXCEPT_LAST);
    th_sh("rm -rf '%s'", dir);
    free(dir);
}

Test(mpi, rank_count_must_equal_K)
{
    need_mpi();
    char *dir = tmpdir();
    cr_assert_eq(mpirun(3, dir, "--net mlp:layers=4,width=16 -K 2 -M 2 --batch 4"), 2);
    char err[700];
    snprintf(err, sizeof err, "%s/mpi.err", dir);
    size_t n;
    char *txt = (char *)slurp(err, &n);
    cr_assert(strstr(txt, "-K 2 needs 2 MPI ranks"), "%s", txt);
    /* found alike by every rank, printed once, by rank 0 (each of the 3 printed it) */
    int lines = 0;
    for (const char *l = txt; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        lines += !strncmp(l, "pipesim ", 8);
    cr_expect_eq(lines, 1, "%s", txt);
    free(txt);
    cr_assert_eq(th_sh("%s validate --backend mpi --net mlp:layers=4,width=16 2>/dev/null",
                       th_pipesim()), 2, "needs -K, -M, --batch");
    cr_assert_eq(th_sh("%s validate --backend bogus --net mlp:layers=4,width=16 -K 1 -M 1 "
                       "--batch 1 2>/dev/null", th_pipesim()), 2);
    th_sh("rm -rf '%s'", dir);
    free(dir);
}

/* Each rank reads a --net file: from its own file system: ranks started in
 * two folders, each with its own n.net (the last layer linear in one, relu
 * in the other), trained two different nets and mixed their messages. Now
 * the run stops before any message, one line from rank 0 naming the input
 * and the rank, exit 4; the same file in each folder runs. */
Test(mpi, ranks_must_build_the_same_net)
{
    need_mpi();
    char *dir = tmpdir();
    cr_assert_eq(th_sh("mkdir -p %s/A %s/B && printf 'input 16\ndense 16\ndense 16\ndense 16 "
                       "linear\n' > %s/A/n.net && printf 'input 16\ndense 16\ndense 16\ndense "
                       "16\n' > %s/B/n.net", dir, dir, dir, dir), 0);
    char one[512], err[700];
    snprintf(one, sizeof one, "%s validate --backend mpi --net file:n.net -K 2 -M 2 --batch 4 "
             "--no-pin", th_pipesim());
    snprintf(err, sizeof err, "%s/mpi.err", dir);
    const char *run = "ASAN_OPTIONS=detect_leaks=0 %smpirun %s --oversubscribe -x "
                      "ASAN_OPTIONS=detect_leaks=0 -np 1 -wdir "
                      "%s/A %s : -np 1 -wdir %s/B %s >/dev/null 2>%s";
    const char *root = getuid() == 0 ? "--allow-run-as-root" : "";
    int st = th_sh(run, th_mpi_lock(), root, dir, one, dir, one, err);
    size_t n;
    char *txt = (char *)slurp(err, &n);
    cr_expect_eq(st, 4, "mpirun exit %d: %s", st, txt);
    cr_expect(strstr(txt, "pipesim validate: --net file:n.net: rank 1 loaded another file than "
                     "rank 0 (hash "), "%s", txt);
    int lines = 0;
    for (const char *l = txt; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        lines += !strncmp(l, "pipesim ", 8);
    cr_expect_eq(lines, 1, "%s", txt);
    free(txt);
    cr_assert_eq(th_sh("cp %s/A/n.net %s/B/n.net", dir, dir), 0);
    st = th_sh(run, th_mpi_lock(), root, dir, one, dir, one, err);
    txt = (char *)slurp(err, &n);
    cr_expect_eq(st, 0, "mpirun exit %d: %s", st, txt);
    free(txt);
    /* --no-pin on one rank alone is an option that differs: one line, exit 4 (helper-111:
     * that rank skipped the pinning's collectives, MPI_ERR_TRUNCATE in the next one) */
    char pinned[512];
    snprintf(pinned, sizeof pinned, "%s validate --backend mpi --net file:n.net -K 2 -M 2 "
             "--batch 4", th_pipesim());
    st = th_sh(run, th_mpi_lock(), root, dir, pinned, dir, one, err);
    txt = (char *)slurp(err, &n);
    cr_expect_eq(st, 4, "mpirun exit %d: %s", st, txt);
    cr_expect(strstr(txt, "--partition, --no-pin): rank 1 was given other values than rank 0"),
              "%s", txt);
    free(txt);
    th_sh("rm -rf '%s'", dir);
    free(dir);
}

/* Rank 0 writes the trace and the gradients, so its options decide who joins their
 * gathers (helper-96: a rank started without --trace skipped the gather rank 0 waited
 * in, for ever); the other way round nothing is gathered and nothing written. */
Test(mpi, rank_0s_outputs_decide_the_gathers, .timeout = 120)
{
    need_mpi();
    char *dir = tmpdir();
    const char *root = getuid() == 0 ? "--allow-run-as-root" : "";
    char base[512];
    snprintf(base, sizeof base, "%s validate --backend mpi --net mlp:layers=4,width=16 -K 2 "
             "-M 2 --batch 4 --steps 1 --no-pin", th_pipesim());
    /* the trace and gradients named on one rank only */
    for (int r = 0; r < 2; r++) {
        char outs[700];
        snprintf(outs, sizeof outs, "--trace %s/t%d.json --grads-out %s/g%d.bin", dir, r, dir,
                 r);
        int st = th_sh("ASAN_OPTIONS=detect_leaks=0 %stimeout 100 mpirun %s --oversubscribe "
                       "-x ASAN_OPTIONS=detect_leaks=0 "
                       "-np 1 %s %s : -np 1 %s %s >/dev/null 2>&1", th_mpi_lock(), root, base,
                       r == 0 ? outs : "", base, r == 1 ? outs : "");
        cr_expect_eq(st, 0, "outputs on rank %d: exit %d (124: it hung)", r, st);
        cr_expect_eq(th_sh("test -s %s/t%d.json && test -s %s/g%d.bin", dir, r, dir, r),
                     r == 0 ? 0 : 1, "outputs on rank %d", r);
    }
    th_sh("rm -rf '%s'", dir);
    free(dir);
}

/* Under MPI the trace, its CSV and the gradients are one set too, as with the
 * thread backend: gradients that cannot be written leave the old trace (each was
 * written on its own, the trace replaced before the gradients failed). */
Test(mpi, traces_and_gradients_are_one_set, .timeout = 120)
{
    need_mpi();
    char *dir = tmpdir();
    const char *root = getuid() == 0 ? "--allow-run-as-root" : "";
    cr_assert_eq(th_sh("cd %s && echo OLD > t.json && echo OLD > t.csv && ln -s /dev/full g.bin",
                       dir), 0);
    int st = th_sh("cd %s && ASAN_OPTIONS=detect_leaks=0 %stimeout 100 mpirun %s "
                   "--oversubscribe -x "
                   "ASAN_OPTIONS=detect_leaks=0 -np 2 %s validate --backend mpi --net "
                   "mlp:layers=4,width=16 -K 2 -M 2 --batch 4 --steps 1 --no-pin --trace t.json "
                   "--trace-csv t.csv --grads-out g.bin >/dev/null 2>err", dir, th_mpi_lock(),
                   root, th_pipesim());
    cr_expect_eq(st, 5, "exit %d", st);
    cr_expect_eq(th_sh("cd %s && test \"$(cat t.json)\" = OLD && test \"$(cat t.csv)\" = OLD && "
                       "grep -q '^pipesim validate: g.bin: write failed: No space left' err",
                       dir), 0, "the traces were replaced");
    th_sh("rm -rf '%s'", dir);
    free(dir);
}

/* Rank 0 alone writes plan's --db and validate's files, so the other ranks do
 * not check them from their own folders (helper-121: a p.db that was a folder
 * in rank 1's, or an out/ only in rank 0's, failed the run with exit 5); and
 * validate --backend mpi refuses --realtime, which it ignored. */
Test(mpi, only_rank_0_checks_the_outputs_it_writes, .timeout = 120)
{
    need_mpi();
    char *dir = tmpdir();
    const char *root = getuid() == 0 ? "--allow-run-as-root" : "";
    cr_assert_eq(th_sh("mkdir -p %s/d0/out %s/d1/p.db && cp models/topologies/chain-8-ideal.json "
                       "%s/d0/t.json && cp %s/d0/t.json %s/d1/t.json", dir, dir, dir, dir, dir),
                 0);
    char plan[512], val[512];
    snprintf(plan, sizeof plan, "%s plan --model mlp:layers=8,width=64 --topology t.json "
             "--devices 2 --batch 8 --db p.db --quiet", th_pipesim());
    int st = th_sh("ASAN_OPTIONS=detect_leaks=0 %stimeout 100 mpirun %s --oversubscribe -x "
                   "ASAN_OPTIONS=detect_leaks=0 -np 1 -wdir %s/d0 %s : -np 1 -wdir %s/d1 %s "
                   ">/dev/null 2>%s/err", th_mpi_lock(), root, dir, plan, dir, plan, dir);
    cr_expect_eq(st, 0, "plan: exit %d (see %s/err)", st, dir);
    cr_expect_eq(th_sh("test -s %s/d0/p.db", dir), 0);
    snprintf(val, sizeof val, "%s validate --backend mpi --net mlp:layers=4,width=16 -K 2 -M 2 "
             "--batch 4 --steps 1 --no-pin --grads-out out/g.bin", th_pipesim());
    st = th_sh("ASAN_OPTIONS=detect_leaks=0 %stimeout 100 mpirun %s --oversubscribe -x "
               "ASAN_OPTIONS=detect_leaks=0 -np 1 -wdir %s/d0 %s : -np 1 -wdir %s/d1 %s "
               ">%s/table 2>%s/err", th_mpi_lock(), root, dir, val, dir, val, dir, dir);
    cr_expect_eq(st, 0, "validate: exit %d (see %s/err)", st, dir);
    cr_expect_eq(th_sh("test -s %s/d0/out/g.bin", dir), 0);
    /* an unpinned rank's cpu is '-', as the thread backend's (it was -1) */
    cr_expect_eq(th_sh("grep -Eq '^ +1 +[^ ]+ +- +1 +2 ' %s/table", dir), 0, "see %s/table",
                 dir); /* rank 1: host, cpu '-', stage 1, 2 layers */
    char out[2048];
    cr_expect_eq(th_capture(out, sizeof out, "%s --realtime 2>&1", val), 2, "%s", out);
    cr_expect(strstr(out, "--realtime: with --backend thread"), "%s", out);
    th_sh("rm -rf '%s'", dir);
    free(dir);
}

/* A signal to mpirun during a sweep: one notice, rank 0's (helper-121: one
 * per rank). The sweep is long enough that the signal comes while it runs;
 * where it finished first, nothing is checked. */
Test(mpi, a_stopped_sweep_gives_one_notice, .timeout = 120)
{
    need_mpi();
    char *dir = tmpdir(), script[600];
    const char *root = getuid() == 0 ? "--allow-run-as-root" : "";
    snprintf(script, sizeof script, "%s/run.sh", dir);
    FILE *f = fopen(script, "w");
    cr_assert(f);
    /* mpirun in a session of its own (it signals its process group), the signal
     * to it, not to the lock's flock */
    fprintf(f, "ASAN_OPTIONS=detect_leaks=0 setsid timeout -k 5 90 mpirun %s --oversubscribe -x "
               "ASAN_OPTIONS=detect_leaks=0 -np 2 %s sweep --model mlp:layers=64,width=256 "
               "--topology chain-8-ideal -K 1,2,3,4,5,6,7,8 -M 131072,262144 --batch 262144 "
               "--schedule 1f1b,zb-v --strategy uniform,gpipe,balance-by-size --db s.db "
               "--jobs 1 > out 2> err &\np=$!\nsleep 5\nkill -TERM $p\nwait $p\n", root,
            th_pipesim());
    cr_assert_eq(fclose(f), 0);
    th_sh("cd %s && %ssh run.sh", dir, th_mpi_lock());
    if (th_sh("grep -q 'interrupted by SIGTERM' %s/err", dir) != 0) {
        th_sh("rm -rf '%s'", dir);
        free(dir);
        cr_skip_test("the sweep was not stopped while it ran");
    }
    cr_expect_eq(th_sh("grep -c 'stopping after the running configurations' %s/err | "
                       "grep -qx 1", dir), 0, "see %s/err", dir);
    th_sh("rm -rf '%s'", dir);
    free(dir);
}

/* An output refused by rank 0 alone, which alone checks it, stops every rank,
 * also under a launcher that does not end a job when one rank exits (Open
 * MPI's orte_abort_on_non_zero_status 0 stands for srun without
 * --kill-on-bad-exit): helper-123, the others waited in MPI_Init for ever. */
Test(mpi, rank_0_s_refusal_stops_every_rank, .timeout = 120)
{
    need_mpi();
    char *dir = tmpdir();
    const char *root = getuid() == 0 ? "--allow-run-as-root" : "";
    cr_assert_eq(th_sh("cp models/topologies/chain-8-ideal.json %s/t.json", dir), 0);
    int st = th_sh("cd %s && ASAN_OPTIONS=detect_leaks=0 %stimeout 60 mpirun %s --oversubscribe "
                   "--mca orte_abort_on_non_zero_status 0 -x ASAN_OPTIONS=detect_leaks=0 -np 2 "
                   "%s plan --model mlp:layers=8,width=64 --topology t.json --devices 2 "
                   "--batch 8 --db t.json --quiet >/dev/null 2>err", dir, th_mpi_lock(), root,
                   th_pipesim());
    cr_expect_eq(st, 2, "plan: exit %d (124: it hung)", st);
    st = th_sh("cd %s && ASAN_OPTIONS=detect_leaks=0 %stimeout 60 mpirun %s --oversubscribe "
               "--mca orte_abort_on_non_zero_status 0 -x ASAN_OPTIONS=detect_leaks=0 -np 2 "
               "%s validate --backend mpi --net mlp:layers=4,width=16 -K 2 -M 2 --batch 4 "
               "--steps 1 --no-pin --grads-out nodir/g.bin >/dev/null 2>err", dir,
               th_mpi_lock(), root, th_pipesim());
    cr_expect_eq(st, 5, "validate: exit %d (124: it hung)", st);
    th_sh("rm -rf '%s'", dir);
    free(dir);
}
