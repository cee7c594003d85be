/* End-to-end: `pipesim predict` on bad input (clear error, exit status, no
 * output left behind) and byte-identical determinism. */
#include "helpers.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void setup(void)
{
    th_tmpdir(dir, sizeof dir, "cli");
#define PUT(name, text) th_put(dir, name, text)
    PUT("ok.csv", "name,fwd_flops,params,out_bytes,stash_bytes\n"
                  "a,1e6,100,64,128\nb,1e6,100,64,128\nc,1e6,100,64,128\nd,1e6,100,64,128\n");
    PUT("neg.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,1e6,-100,64,128\n");
    PUT("nan.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,NaN,100,64,128\n");
    PUT("nocol.csv", "name,fwd_flops,params,out_bytes\na,1,1,1\n");
    PUT("short.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,1,1,1\n");
    PUT("ok.json", "{\"devices\":[{\"name\":\"d\",\"count\":4,\"flops\":1e12,\"memory\":1e9}],"
                   "\"links\":[{\"name\":\"bus\",\"endpoints\":\"*\",\"bandwidth\":1e10,"
                   "\"shared\":true}]}");
    PUT("trunc.json", "{\"devices\":[{\"name\":\"d\",");
    PUT("baddev.json", "{\"devices\":[{\"name\":\"d\",\"flops\":1e12,\"memory\":1e9}],"
                       "\"links\":[{\"name\":\"l\",\"endpoints\":[\"d\",\"gpu9\"],"
                       "\"bandwidth\":1}]}");
    PUT("nolink.json", "{\"devices\":[{\"name\":\"d\",\"count\":4,\"flops\":1e12,"
                       "\"memory\":1e9}]}");
#undef PUT
}

static void teardown(void)
{
    th_sh("rm -rf %s", dir);
}

/* Runs predict with args; expects exit status `status`, stderr containing
 * `what`, and neither output file (nor a temp file) left in dir. */
static void bad(const char *args, int status, const char *what)
{
    int before = th_entries(dir);
    int rc = th_sh("cd %s && %s predict --out out.txt --trace trace.json %s 2>err.txt >/dev/null",
                   dir, th_pipesim(), args);
    char p[128], msg[1024];
    snprintf(p, sizeof p, "%s/err.txt", dir);
    th_slurp(dir, "err.txt", msg, sizeof msg);
    unlink(p);
    cr_expect_eq(rc, status, "'%s' exited %d, not %d: %s", args, rc, status, msg);
    cr_expect(strstr(msg, what), "'%s': message '%s' lacks '%s'", args, msg, what);
    cr_expect_eq(strchr(msg, '\n'), msg + strlen(msg) - 1, "'%s': not one line: %s", args, msg);
    cr_expect_eq(th_entries(dir), before, "'%s' left a file behind", args);
}

#define OK "--model ok.csv --topology ok.json"

TestSuite(cli, .init = setup, .fini = teardown, .timeout = 60);

Test(cli, bad_inputs_get_one_clear_error)
{
    bad("--model missing.csv --topology ok.json -K 2 -M 2 --batch 4", 5, "missing.csv: cannot open");
    bad("--model neg.csv --topology ok.json -K 1 -M 1 --batch 4", 4,
        "neg.csv:2:7: field 'params' must be >= 0");
    bad("--model nan.csv --topology ok.json -K 1 -M 1 --batch 4", 4,
        "nan.csv:2:3: field 'fwd_flops' must be finite");
    bad("--model nocol.csv --topology ok.json -K 1 -M 1 --batch 4", 3,
        "nocol.csv:1: missing column 'stash_bytes'");
    bad("--model short.csv --topology ok.json -K 1 -M 1 --batch 4", 3,
        "short.csv:2: expected 5 fields, found 4");
    bad("--model ok.csv --topology trunc.json -K 1 -M 1 --batch 4", 3, "trunc.json:1:");
    bad("--model ok.csv --topology baddev.json -K 1 -M 1 --batch 4", 4,
        "links[0].endpoints[1]: unknown device 'gpu9'");
    bad("--model ok.csv --topology nolink.json -K 2 -M 2 --batch 4", 4, "no link between");
    bad("--model mlp:layers=8,width=8 --topology ok.json -K 5 -M 2 --batch 4", 7, "only 4 devices");
    bad("--model mlp:layers=2,width=8 --topology ok.json -K 3 -M 2 --batch 4", 7,
        "only 2 layers");
    bad(OK " -K 2 -M 0 --batch 4", 2, "-M: 0 is out of range");
    bad(OK " -K 2 -M 3 --batch 4", 2, "not divisible by -M 3");
    bad(OK " -K 2 -M 2 --batch -4", 2, "--batch must be a positive integer");
    bad(OK " -K two -M 2 --batch 4", 2, "-K: 'two' is not an integer");
    bad(OK " -K 2 -M 2 --batch 4 --frobnicate", 2, "unknown option '--frobnicate'");
    bad(OK " -K 2 -M 2 --batch", 2, "needs a value");
    bad(OK " -K 2 -M 2 --batch 4 --remat sometimes", 2, "unknown mode 'sometimes'");
    bad(OK " -K 2 -M 2 --batch 4 --format xml", 2, "unknown format 'xml'");
    bad(OK " -K 2 -M 2 --batch 4 --partition 1,2", 2, "covers 3 layers, the model has 4");
    bad(OK " -K 2 -M 2 --batch 4 --partition 1,1,2", 2, "has 3 stages, the schedule has 2 (K, times the chunks");
    bad(OK " -K 2 -M 2 --batch 4 --schedule nope", 2, "unknown schedule 'nope'");
    bad(OK " -M 2 --batch 4", 2, "-K is required (see");
    bad("--model mlp:layers=4 --topology ok.json -K 1 -M 1 --batch 4", 2,
        "missing parameter 'width'");
}

Test(cli, unwritable_output_is_an_io_error)
{
    int rc = th_sh("cd %s && %s predict " OK " -K 2 -M 2 --batch 4 --trace nodir/t.json "
                   ">/dev/null 2>err.txt && exit 0; exit $?", dir, th_pipesim());
    cr_assert_eq(rc, 5);
    cr_assert_eq(th_sh("grep -q 'nodir/t.json: cannot write' %s/err.txt", dir), 0);
}

Test(cli, unknown_command_and_help)
{
    cr_assert_eq(th_sh("%s frobnicate 2>/dev/null", th_pipesim()), 2);
    cr_assert_eq(th_sh("%s predict --help | grep -q 'usage: pipesim predict'", th_pipesim()), 0);
    cr_assert_eq(th_sh("%s --help | grep -q predict", th_pipesim()), 0);
    cr_assert_eq(th_sh("%s help errors | grep -q 'SIM_EPARSE'", th_pipesim()), 0);
}

Test(cli, same_inputs_give_byte_identical_outputs)
{
    for (int i = 0; i < 2; i++)
        cr_assert_eq(th_sh("cd %s && %s predict " OK " -K 4 -M 8 --batch 64 --trace t%d.json "
                           "--trace-csv t%d.csv --format json --out o%d.json",
                           dir, th_pipesim(), i, i, i), 0);
    cr_assert_eq(th_sh("cd %s && cmp -s t0.json t1.json && cmp -s t0.csv t1.csv && "
                       "cmp -s o0.json o1.json", dir), 0);
    /* the trace is valid JSON that our reader accepts, with every op in it */
    char p[128];
    snprintf(p, sizeof p, "%s/t0.json", dir);
    struct trc_trace *t;
    cr_assert_eq(trc_read_chrome(p, &t), 0, "%s", ps_errmsg());
    cr_assert_eq(t->n_devices, 4);
    cr_assert_eq(t->n_micro, 8);
    /* F, B per stage and micro-batch, R for 7 of 8, 4 transfer ops per boundary, U */
    cr_assert_eq(t->n_events, (size_t)(4 * 8 * 2 + 4 * 7 + 3 * 8 * 4 + 4));
    trc_trace_free(t);
}

/* A model whose K stages are in range but whose whole (the K=1 speedup
 * baseline) is not: the run the user asked for is simulated, the speedup
 * is not, and the output says why (it used to fail naming a "stage 0" of
 * all 4 layers). 3e15 parameters of 12 bytes each: 1.44e17 bytes whole,
 * above the engine's 1e17, 3.6e16 per stage. */
Test(cli, a_baseline_out_of_range_leaves_the_run_and_names_why)
{
    th_put(dir, "huge.csv", "name,fwd_flops,params,out_bytes,stash_bytes\n"
                            "a,1e6,3e15,64,128\nb,1e6,3e15,64,128\nc,1e6,3e15,64,128\n"
                            "d,1e6,3e15,64,128\n");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s predict --model huge.csv --topology ok.json -K 4 -M 1 "
                       "--batch 1 >out.txt 2>err.txt", dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && grep -q '^speedup         not simulated: the K=1 baseline' "
                       "out.txt && grep -q 'parameter memory of 1.44e+17 bytes is out of range' "
                       "out.txt", dir), 0);
    cr_assert_eq(th_sh("cd %s && %s predict --model huge.csv --topology ok.json -K 4 -M 1 "
                       "--batch 1 --format json 2>/dev/null | grep -q '\"speedup\": null'", dir,
                       ps), 0);
    cr_assert_eq(th_sh("cd %s && %s predict --model huge.csv --topology ok.json -K 4 -M 1 "
                       "--batch 1 --format csv 2>/dev/null | sed -n 2p | "
                       "grep -q '\",[^,]*,[^,]*,,'", dir, ps), 0,
                 "the CSV speedup (after the quoted partition, step and rate) is not empty");
    /* compare-schedules and partition print no speedup either (they printed
     * "baseline 0 s", speedups of 0 and "the one-device baseline needs 0 B") */
    cr_assert_eq(th_sh("cd %s && %s compare-schedules --model huge.csv --topology ok.json "
                       "-K 4 -M 4 --batch 4 --schedules gpipe,1f1b >out.txt 2>err.txt && "
                       "grep -q '^baseline        not simulated' out.txt && "
                       "grep -qE '^gpipe +4 .* - ' out.txt && ! grep -q '0.000x' out.txt",
                       dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && %s compare-schedules --model huge.csv --topology ok.json "
                       "-K 4 -M 4 --batch 4 --schedules gpipe,1f1b --format json >out.txt && "
                       "grep -q '\"baseline_step_s\": null' out.txt && "
                       "grep -q '\"baseline_skipped\": \"huge.csv: ' out.txt && "
                       "test $(grep -c '\"speedup\": null' out.txt) = 2", dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && %s compare-schedules --model huge.csv --topology ok.json "
                       "-K 4 -M 4 --batch 4 --schedules gpipe --format csv | "
                       "sed -n 2p | cut -d, -f10 | grep -qx ''", dir, ps), 0,
                 "compare-schedules' CSV speedup is not empty");
    cr_assert_eq(th_sh("cd %s && %s partition --model huge.csv --topology ok.json -K 4 -M 4 "
                       "--batch 4 --mem-cap none >out.txt 2>err.txt && "
                       "grep -q 'no remat (not simulated)' out.txt && "
                       "! grep -q 'baseline needs' out.txt && "
                       "grep -qE '^   1  .* -  +NO$' out.txt", dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && %s partition --model huge.csv --topology ok.json -K 4 -M 4 "
                       "--batch 4 --mem-cap none --format json >out.txt && "
                       "grep -q '\"speedup\": null' out.txt && "
                       "grep -q '\"baseline_skipped\": \"huge.csv: ' out.txt", dir, ps), 0);
    /* a candidate partition beyond the range (lingvo's 1,3: 1.08e17 bytes on a
     * stage) is left out with a warning; the others are ranked (the whole
     * command failed) */
    cr_assert_eq(th_sh("cd %s && %s partition --model huge.csv --topology ok.json -K 2 -M 4 "
                       "--batch 4 --mem-cap none >out.txt 2>err.txt", dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && grep -qE '^   1  .*  2,2  ' out.txt && ! grep -q '1,3' out.txt "
                       "&& grep -q '^pipesim partition: warning: 2 candidates beyond the "
                       "engine.s range left out; the first, lingvo (1,3): ' err.txt", dir), 0);
    /* K=1 itself is the run: still an error */
    cr_assert_eq(th_sh("cd %s && %s predict --model huge.csv --topology ok.json -K 1 -M 1 "
                       "--batch 1 >/dev/null 2>err.txt", dir, ps), 4);
}

/* A batch past %g's six digits is echoed whole (it printed "batch 1.23457e+11"), and a
 * one-layer model is "1 layer" (it printed "1 layers"). */
Test(cli, the_batch_is_echoed_whole_and_one_layer_is_singular)
{
    th_put(dir, "one.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,1e6,100,64,128\n");
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s predict " OK " -K 2 -M 2 --batch 123456789012 2>/dev/null "
                       "| grep -q '^schedule .*, batch 123456789012 (micro-batch 61728394506),'",
                       dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && %s predict --model one.csv --topology ok.json -K 1 -M 1 "
                       "--batch 1 | grep -q ': 1 layer, 100 parameters'", dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && %s compare-schedules " OK " -K 2 -M 2 --batch 123456789012 "
                       "--schedules gpipe 2>/dev/null | grep -q 'batch 123456789012 "
                       "(micro-batch 61728394506)'", dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && %s partition --model one.csv --topology ok.json -K 1 -M 1 "
                       "--batch 123456789012 --mem-cap none 2>/dev/null | "
                       "grep -q '(1 layer), .*batch "
                       "123456789012 (micro-batch 123456789012)'", dir, ps), 0);
}
