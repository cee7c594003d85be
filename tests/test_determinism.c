/*
 * Determinism, end to end: the same command on the same inputs writes
 * byte-identical results, traces and generated files, whatever the heap
 * holds (MALLOC_PERTURB_ fills fresh and freed blocks with a byte), the
 * address-space layout, the locale or the time zone. The --jobs comparison
 * of `pipesim sweep` lives in tests/test_determinism_jobs.c.
 */
#include "helpers.h"

#include "base/ps_util.h"

#include <unistd.h>

static char dir[64];

static void setup(void)
{
    th_tmpdir(dir, sizeof dir, "det");
    cr_assert_eq(th_sh("cp models/profiles/transformer-small.csv models/topologies/pcie-8gpu.json "
                       "models/topologies/v100-nvlink-8.json models/topologies/chain-8-ideal.json "
                       "%s/", dir), 0);
    th_put(dir, "ms.csv",
           "name,kind,fwd_ms,bwd_ms,at_batch,params,out_bytes,stash_bytes\n"
           "in,input,0,0,8,0,256,0\na,dense,1.5,,8,100,256,512\nb,dense,2,4.5,8,100,256,512\n"
           "c,attention,0.7,1.9,8,300,1024,4096\n");
}

static void teardown(void)
{
    th_sh("rm -rf %s", dir);
}

/* Environments that must not change a byte. */
static const char *const envs[] = {
    "",
    "MALLOC_PERTURB_=165 LC_ALL=C.UTF-8 TZ=Pacific/Chatham",
    "MALLOC_PERTURB_=90 LC_ALL=C TZ=UTC GLIBC_TUNABLES=glibc.malloc.tcache_count=0",
};

/* Runs `pipesim args` (args name outputs with the placeholder @, replaced
 * by the run number) in every environment and compares the files. */
static void same_bytes(const char *args, const char *const *outs)
{
    int n = (int)(sizeof envs / sizeof *envs);
    for (int i = 0; i < n; i++) {
        char a[1024], run[12];
        snprintf(run, sizeof run, "%d", i);
        size_t k = 0;
        for (const char *s = args; *s && k + 8 < sizeof a; s++) {
            if (*s == '@') {
                memcpy(a + k, run, strlen(run));
                k += strlen(run);
            } else {
                a[k++] = *s;
            }
        }
        a[k] = 0;
        cr_assert_eq(th_sh("cd %s && env %s %s %s >stdout.%d 2>stderr.%d", dir, envs[i],
                           th_pipesim(), a, i, i), 0, "'%s' failed in env '%s'", a, envs[i]);
    }
    for (int i = 1; i < n; i++) {
        cr_assert_eq(th_sh("cd %s && cmp stdout.0 stdout.%d", dir, i), 0, "'%s': stdout differs "
                     "in env '%s'", args, envs[i]);
        for (const char *const *o = outs; *o; o++)
            cr_assert_eq(th_sh("cd %s && cmp %s.0 %s.%d", dir, *o, *o, i), 0,
                         "'%s': %s differs in env '%s'", args, *o, envs[i]);
    }
    for (const char *const *o = outs; *o; o++) /* and it is not empty */
        cr_assert_eq(th_sh("cd %s && test -s %s.0", dir, *o), 0, "%s is empty", *o);
}

TestSuite(determinism, .init = setup, .fini = teardown, .timeout = 120);

Test(determinism, predict_results_and_traces)
{
    static const char *const outs[] = { "t.json", "t.csv", "o.json", NULL };
    same_bytes("predict --model transformer-small.csv --topology pcie-8gpu.json -K 4 -M 8 "
               "--batch 64 --trace t.json.@ --trace-csv t.csv.@ --format json --out o.json.@",
               outs);
    same_bytes("predict --model ms.csv --topology v100-nvlink-8.json -K 3 -M 5 --batch 40 "
               "--remat always --partition 2,1,1 --trace t.json.@ --trace-csv t.csv.@ "
               "--format csv --out o.json.@", outs);
    static const char *const none[] = { NULL };
    same_bytes("predict --model mlp:layers=24,width=256,norm=3 --topology chain-8-ideal.json "
               "-K 8 -M 32 --batch 256 --remat never", none);
    same_bytes("predict --model amoebanet:L=6,D=16 --topology pcie-8gpu.json -K 4 -M 4 "
               "--batch 16", none);
}

Test(determinism, generated_files)
{
    static const char *const m[] = { "m.csv", NULL };
    same_bytes("gen model transformer:L=4,d_model=64,ff=256,heads=4,seq=32,vocab=1000 -o m.csv.@",
               m);
    static const char *const c[] = { "c.json", NULL };
    same_bytes("gen chain -n 5 --flops 3.3e12 --latency 1e-7 -o c.json.@", c);
    static const char *const p[] = { "p.csv", NULL };
    same_bytes("gen-paper --format csv -o p.csv.@", p);
}

/* The same numbers from the table as from the JSON result (one run, two
 * formats): the formats are views of one prediction. */
Test(determinism, formats_agree)
{
    cr_assert_eq(th_sh("cd %s && %s predict --model transformer-small.csv --topology "
                       "pcie-8gpu.json -K 2 -M 4 --batch 8 --format csv --out a.csv && "
                       "%s predict --model transformer-small.csv --topology pcie-8gpu.json "
                       "-K 2 -M 4 --batch 8 --format json --out a.json", dir, th_pipesim(),
                       th_pipesim()), 0);
    char p[128];
    snprintf(p, sizeof p, "%s/a.json", dir);
    char *js;
    cr_assert_eq(ps_read_file(p, &js, NULL), 0);
    snprintf(p, sizeof p, "%s/a.csv", dir);
    char *csv;
    cr_assert_eq(ps_read_file(p, &csv, NULL), 0);
    /* step_s: %.17g in the CSV, PS_JSON_REAL_DIGITS significant digits in the JSON */
    const char *s = strstr(js, "\"step_s\": ");
    cr_assert(s);
    double step_json = strtod(s + 10, NULL);
    const char *row = strchr(csv, '\n') + 1;
    int comma = 0, quoted = 0;
    while (comma < 7 && *row) { /* schedule,K,M,batch,micro_batch,remat,"partition",step_s */
        quoted ^= *row == '"';
        comma += !quoted && *row == ',';
        row++;
    }
    char rounded[64];
    snprintf(rounded, sizeof rounded, "%.15g", strtod(row, NULL));
    cr_assert_eq(strtod(rounded, NULL), step_json, "%s vs %.17g", rounded, step_json);
    free(js);
    free(csv);
}
