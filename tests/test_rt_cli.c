/* End-to-end `pipesim validate`: bad input, a real run with its trace and
 * profile, the simulator's memory ledger against the measured peaks. */
#include "helpers.h"

#include <sys/stat.h>

#include <dirent.h>
#include <unistd.h>

#include "runtime/rt_cpu.h"
#include "traces/trc_trace.h"

static char dir[64];

static void teardown(void);

static void setup(void)
{
    th_teardown_at_exit(teardown); /* its tests may skip */
    th_tmpdir(dir, sizeof dir, "rtcli");
}

static void teardown(void) { th_sh("rm -rf %s", dir); }

TestSuite(rt_cli, .init = setup, .fini = teardown, .timeout = 120);

static void bad(const char *args, int status, const char *what)
{
    int before = th_entries(dir);
    int rc = th_sh("cd %s && %s validate --trace t.json %s 2>err.txt >/dev/null", dir,
                   th_pipesim(), args);
    char msg[1024];
    th_slurp(dir, "err.txt", msg, sizeof msg);
    char p[128];
    snprintf(p, sizeof p, "%s/err.txt", dir);
    unlink(p);
    cr_expect_eq(rc, status, "'%s' exited %d, not %d: %s", args, rc, status, msg);
    cr_expect(strstr(msg, what), "'%s': message '%s' lacks '%s'", args, msg, what);
    cr_expect_eq(th_entries(dir), before, "'%s' left a file behind", args);
}

#define NET "--net mlp:layers=3,width=8"

Test(rt_cli, bad_inputs_get_one_clear_error)
{
    bad(NET " -K 2 -M 2 --batch 4 --bogus", 2, "unknown option '--bogus'");
    bad("-K 2 -M 2 --batch 4", 2, "--net is required");
    bad(NET " -K 2 --batch 4", 2, "-K, -M and --batch are required");
    bad(NET, 2, "are required");
    bad(NET " -K 0 -M 2 --batch 4", 2, "-K");
    bad(NET " -K 2 -M 2 --batch 4x", 2, "--batch");
    bad(NET " -K 2 -M 2 --batch 4 --remat sometimes", 2, "sometimes");
    bad(NET " -K 2 -M 2 --batch 4 --lr -1", 2, "--lr must be >= 0");
    /* it runs as a float: 1e40 was inf there, 1e-50 a silent 0 (helper-111) */
    bad(NET " -K 2 -M 2 --batch 4 --lr 1e40", 2, "--lr 1e40 is out of range: 0 or between");
    bad(NET " -K 2 -M 2 --batch 4 --lr 1e-50", 2, "--lr 1e-50 is out of range");
    bad(NET " -K 2 -M 2 --batch 4 --schedule zigzag", 2, "zigzag");
    bad(NET " -K 2 -M 3 --batch 4", 2, "--batch 4 is not divisible by -M 3");
    bad(NET " -K 4 -M 2 --batch 4", 7, "only 3 layers");
    bad(NET " -K 2 -M 2 --batch 4 --partition 1,1", 2, "covers 2 layers");
    bad("--net mlp:layers=3 -K 2 -M 2 --batch 4", 2, "'width'");
    bad(NET " -K 2 -M 2 --batch 4 --format xml", 2, "unknown format 'xml' (table, csv, json)");
    bad(NET " -K 2 -M 2 --batch 4 --backend mpi --format csv", 2, "--backend thread");
    bad("--net file:nonexistent.txt -K 1 -M 1 --batch 1", 5, "nonexistent.txt");
    /* an empty field, as a model spec's (helper-122: taken) */
    bad("--net mlp:layers=3,width=8, -K 1 -M 1 --batch 1", 2, "an empty field");
    bad("--net mlp:layers=3,,width=8 -K 1 -M 1 --batch 1", 2, "an empty field");
    cr_assert_eq(th_sh("%s validate --help | grep -q 'usage: pipesim validate'", th_pipesim()), 0);
}

/* A file net may start with a UTF-8 byte-order mark, as every other input
 * (helper-122: refused, the mark printed raw). */
Test(rt_cli, a_file_net_s_byte_order_mark_is_skipped)
{
    cr_assert_eq(th_sh("cd %s && printf '\\357\\273\\277input 8\\ndense 8 relu\\n"
                       "dense 4 linear\\n' > bom.net", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s validate --net file:bom.net -K 1 -M 1 --batch 2 --steps 1 "
                       ">/dev/null", dir, th_pipesim()), 0);
}

Test(rt_cli, run_writes_trace_csv_and_profile)
{
    int rc = th_sh("cd %s && %s validate --net mlp:layers=4,width=16,norm=2 -K 2 -M 2 --batch 8 "
                   "--steps 2 --remat always --trace t.json --trace-csv t.csv "
                   "--emit-profile p.csv >out.txt 2>err.txt", dir, th_pipesim());
    char out[8192], err[1024];
    th_slurp(dir, "out.txt", out, sizeof out);
    th_slurp(dir, "err.txt", err, sizeof err);
    cr_assert_eq(rc, 0, "%s%s", out, err);
    cr_assert(strstr(out, "bubble") && strstr(out, "samples/s") && strstr(out, "OpenBLAS"), "%s",
              out);
    cr_assert(strstr(out, " yes ") && !strstr(out, " NO "), "%s", out);
    char p[128];
    snprintf(p, sizeof p, "%s/t.json", dir);
    struct trc_trace *t;
    cr_assert_eq(trc_read_chrome(p, &t), 0, "%s", ps_errmsg());
    cr_assert_str_eq(t->source, "measured");
    cr_assert_eq(t->n_devices, 2);
    cr_assert_eq(t->n_micro, 2);
    cr_assert(t->n_events > 0);
    trc_trace_free(t);
    snprintf(p, sizeof p, "%s/p.csv", dir);
    struct mdl_profile *prof;
    cr_assert_eq(mdl_profile_load(p, &prof), 0, "%s", ps_errmsg());
    cr_assert_eq(prof->n_layers, 5);
    mdl_profile_free(prof);
    cr_assert_eq(th_sh("head -1 %s/t.csv | grep -q '^device,stream,kind'", dir), 0);
    /* --emit-profile alone writes the profile and runs nothing */
    cr_assert_eq(th_sh("cd %s && %s validate --net mlp:layers=2,width=4 --emit-profile q.csv "
                       ">o2.txt && test -s q.csv && ! test -s o2.txt", dir, th_pipesim()), 0);
}

/* --trace, --trace-csv and --grads-out are one set: gradients that cannot
 * be written (a full device fails at its flush) leave the traces as they
 * were (they were written first, then the gradients failed). */
Test(rt_cli, traces_and_gradients_are_one_set)
{
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
        cr_skip_test("no /dev/full on this system");
    cr_assert_eq(th_sh("cd %s && echo precious > t.json && echo precious > t.csv", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s validate --net mlp:layers=4,width=16 -K 2 -M 2 --batch 8 "
                       "--steps 1 --trace t.json --trace-csv t.csv --grads-out /dev/full "
                       ">/dev/null 2>err.txt", dir, th_pipesim()), 5);
    cr_expect_eq(th_sh("cd %s && grep -q '/dev/full: write failed' err.txt && "
                       "test \"$(cat t.json t.csv)\""
                       " = \"$(printf 'precious\\nprecious')\"", dir), 0,
                 "a trace was replaced by a run whose gradients could not be written");
    cr_expect_eq(th_sh("cd %s && %s validate --net mlp:layers=4,width=16 -K 2 -M 2 --batch 8 "
                       "--steps 1 --trace t.json --trace-csv t.csv --grads-out g.bin >/dev/null "
                       "&& grep -q traceEvents t.json && grep -q '^device,stream' t.csv && "
                       "head -c 8 g.bin | grep -q PSGRADS1", dir, th_pipesim()), 0);
}

/* stdout is the last of the set: full, it is exit 5 naming stdout and why
 * (it was "write error", or "Input/output error" under --format json) and the
 * files are not written (they were, after the failed summary), as predict
 * and calibrate do. */
Test(rt_cli, a_full_stdout_writes_no_file)
{
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
        cr_skip_test("no /dev/full on this system");
    const char *fmts[] = { "", "--format csv", "--format json" };
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(th_sh("cd %s && %s validate --net mlp:layers=2,width=8 -K 2 -M 2 --batch 8 "
                           "--steps 1 --trace t.json --grads-out g.bin %s >/dev/full "
                           "2>err.txt", dir, th_pipesim(), fmts[i]), 5, "'%s'", fmts[i]);
        cr_expect_eq(th_sh("cd %s && grep -qx 'pipesim validate: stdout: write failed: No space "
                           "left on device' err.txt", dir), 0, "'%s': the message", fmts[i]);
        cr_expect_eq(th_sh("cd %s && test ! -e t.json && test ! -e g.bin", dir), 0,
                     "'%s': files written after stdout failed", fmts[i]);
    }
}

/* The measured peaks equal the ledger rule (sch_mem_effect over each
 * device's list in order) applied to the stage memory sch_costs derives from
 * the emitted profile: runtime, profile and ledger agree end to end. (The
 * engine's own peaks can be higher: its sends overlap the next forward, so
 * several outputs can wait for the link; the runtime's sends are copies into
 * link buffers, in list order.) */
Test(rt_cli, measured_peaks_equal_ledger_of_emitted_profile)
{
    static const enum sch_remat remats[] = { SCH_REMAT_NEVER, SCH_REMAT_EXCEPT_LAST,
                                             SCH_REMAT_ALWAYS };
    struct mdl_topology *topo = th_chain(3, 1e11, 1e10, 1e-6);
    for (int r = 0; r < 3; r++) {
        int rc = th_sh("cd %s && %s validate --net mlp:layers=6,width=24,in=12,out=4,norm=3 "
                       "-K 3 -M 4 --batch 16 --steps 1 --remat %s --emit-profile p.csv --no-pin "
                       "--format csv 2>/dev/null | awk -F, 'NR > 1 {print $13}' >meas.txt",
                       dir, th_pipesim(), sch_remat_name(remats[r]));
        cr_assert_eq(rc, 0);
        char m[256], want[256] = "", p[128];
        th_slurp(dir, "meas.txt", m, sizeof m);
        snprintf(p, sizeof p, "%s/p.csv", dir);
        struct mdl_profile *prof;
        cr_assert_eq(mdl_profile_load(p, &prof), 0, "%s", ps_errmsg());
        struct sch_schedule *s;
        struct sch_partition *part;
        struct sch_costs *c;
        cr_assert_eq(sch_schedule_build("gpipe", 3, 4, remats[r], &s), 0);
        cr_assert_eq(sch_partition_uniform(3, prof->n_layers, &part), 0);
        cr_assert_eq(sch_costs_new(prof, topo, part, s->stage_device, 4, &c), 0);
        for (int d = 0; d < 3; d++) {
            int64_t cur = 0, peak = 0, a, e;
            for (int i = 0; i < s->n_ops[d]; i++) {
                sch_mem_effect(s, &s->ops[d][i], &c->st[s->ops[d][i].stage].mem, &a, &e);
                cur += a;
                peak = cur > peak ? cur : peak;
                cur += e;
                peak = cur > peak ? cur : peak;
            }
            snprintf(want + strlen(want), sizeof want - strlen(want), "%lld\n", (long long)peak);
        }
        cr_assert_str_eq(m, want, "remat %s: measured\n%s ledger\n%s", sch_remat_name(remats[r]),
                         m, want);
        sch_costs_free(c);
        sch_partition_free(part);
        sch_schedule_free(s);
        mdl_profile_free(prof);
    }
    mdl_topology_free(topo);
}

Test(rt_cli, more_workers_than_cores_warns)
{
    int *cpus, n;
    cr_assert_eq(rt_cpus_allowed(&cpus, &n), 0);
    free(cpus);
    int K = n + 1;
    cr_assert_eq(th_sh("cd %s && %s validate --net mlp:layers=%d,width=4 -K %d -M 1 --batch 2 "
                       "--steps 1 >/dev/null 2>err.txt", dir, th_pipesim(), K, K), 0);
    char err[512];
    th_slurp(dir, "err.txt", err, sizeof err);
    cr_assert(strstr(err, "oversubscribed"), "%s", err);
}

/* --format csv|json: only the device table on stdout, the same rows the
 * table prints; the prose on stderr. */
Test(rt_cli, format_csv_and_json_print_the_device_table)
{
    const char *pp = th_pipesim();
    char out[4096];
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s validate " NET " -K 3 -M 2 --batch 4 "
                            "--steps 1 --no-pin --format csv 2>/dev/null", dir, pp), 0);
    cr_expect(!strncmp(out, "step_s,samples_per_s,bubble_measured,bubble_analytic,oversubscribed,"
                       "device,cpu,stages,layers,busy,comm,wait,peak_act_bytes,schedule_bytes,"
                       "match,", 144), "%s", out);
    int lines = 0;
    for (const char *c = out; *c; c++)
        lines += *c == '\n';
    cr_expect_eq(lines, 4, "a header and one row per device: %s", out);
    cr_expect(!strstr(out, "loss"), "%s", out);
    /* every figure of the CSV is the JSON's (it rounded busy, comm and wait
     * to a tenth of a percent and left out the step's figures) */
    cr_expect_eq(th_sh("cd %s && %s validate " NET " -K 3 -M 2 --batch 4 --steps 1 --no-pin "
                       "--seed 3 --format csv > v.csv 2>/dev/null && %s validate " NET " -K 3 "
                       "-M 2 --batch 4 --steps 1 --no-pin --seed 3 --format json > v.json "
                       "2>/dev/null && python3 -c '\n"
                       "import csv, json\n"
                       "rows = list(csv.DictReader(open(\"v.csv\")))\n"
                       "assert len(rows) == 3 and all(r[\"match\"] == \"1\" for r in rows), rows\n"
                       "for r in rows:\n"
                       "    for k in (\"busy\", \"comm\", \"wait\"):\n"
                       "        assert 0 <= float(r[k]) <= 1, r\n"
                       "    assert float(r[\"step_s\"]) > 0 and float(r[\"bubble_analytic\"]) == 0.5\n"
                       "'", dir, pp, pp), 0, "validate's CSV");
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s validate " NET " -K 3 -M 2 --batch 4 "
                            "--steps 1 --no-pin --format json 2>/dev/null | python3 -c "
                            "'import json,sys; d=json.load(sys.stdin); "
                            "print(len(d[\"devices\"]), d[\"bubble_analytic\"], "
                            "all(x[\"match\"] for x in d[\"devices\"]), "
                            "type(d[\"devices\"][0][\"peak_act_bytes\"]).__name__)'",
                            dir, pp), 0);
    cr_expect_str_eq(out, "3 0.5 True int\n");
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s validate " NET " -K 3 -M 2 --batch 4 "
                            "--steps 1 --no-pin --format csv 2>&1 >/dev/null | grep -c '^net '",
                            dir, pp), 0);
    cr_expect_str_eq(out, "1\n", "the prose goes to stderr");
}

/* --emit-profile is one of the run's set of outputs: a run that fails or stops
 * leaves the old file (helper-122: it was written before the run, and a K above
 * the layers or a diverged run replaced it); with no run it is written alone,
 * and the outputs that record a run are refused there (they were ignored). */
Test(rt_cli, the_profile_is_written_with_the_run_or_alone)
{
    cr_assert_eq(th_sh("cd %s && echo OLD > p.csv", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s validate --net mlp:layers=3,width=16 -K 4 -M 2 --batch 4 "
                       "--emit-profile p.csv >/dev/null 2>&1", dir, th_pipesim()), 7);
    cr_expect_eq(th_sh("cd %s && %s validate --net mlp:layers=3,width=16 -K 2 -M 2 --batch 4 "
                       "--lr 1e30 --emit-profile p.csv >/dev/null 2>&1", dir, th_pipesim()), 4);
    cr_expect_eq(th_sh("cd %s && grep -qx OLD p.csv", dir), 0, "a failed run replaced it");
    cr_expect_eq(th_sh("cd %s && %s validate --net mlp:layers=3,width=16 -K 2 -M 2 --batch 4 "
                       "--emit-profile p.csv >/dev/null && grep -q '^name,kind,fwd_flops' p.csv",
                       dir, th_pipesim()), 0);
    cr_expect_eq(th_sh("cd %s && %s validate --net mlp:layers=3,width=16 --emit-profile q.csv "
                       ">/dev/null && grep -q '^name,kind,fwd_flops' q.csv", dir, th_pipesim()),
                 0);
    char out[1024];
    cr_expect_eq(th_capture(out, sizeof out, "cd %s && %s validate --net mlp:layers=3,width=16 "
                            "--emit-profile r.csv --grads-out r.bin 2>&1", dir, th_pipesim()), 2,
                 "%s", out);
    cr_expect(strstr(out, "--grads-out records a run: give -K, -M and --batch"), "%s", out);
    cr_expect_eq(th_sh("cd %s && test ! -e r.csv && test ! -e r.bin", dir), 0);
}

/* A device's stages are listed whole in every format (helper-122: 64 bytes cut
 * interleaved:32's 32 stages at 44, with no mark). */
Test(rt_cli, a_device_s_stages_are_listed_whole)
{
    char out[16384];
    cr_assert_eq(th_capture(out, sizeof out, "%s validate --net mlp:layers=64,width=8 -K 2 -M 2 "
                            "--batch 4 --steps 1 --schedule interleaved:32 --format csv "
                            "2>/dev/null", th_pipesim()), 0, "%s", out);
    cr_expect(strstr(out, ",\"0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,"
                          "48,50,52,54,56,58,60,62\",32,"), "%s", out);
}
