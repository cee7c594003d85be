/*
 * Outputs never destroy anything (base/ps_afile.h), end to end through the
 * pipesim binary: character devices and FIFOs are written in place and stay
 * what they are; a symlink's target is replaced and the link stays; an
 * output that is an input or another output is refused (exit 2) with the
 * file untouched; a symlink planted at the old temporary name is not
 * followed; a write error on stdout is exit 5; a killed write leaves no
 * temporary and the old file. Destructive device cases use device nodes
 * made with mknod inside the test's own directory (root only: skipped with
 * the reason otherwise), never the real /dev/full path.
 */
#include "helpers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/ps_afile.h"
#include "base/ps_gnuplot.h"
#include "base/ps_util.h"
#include "traces/trc_trace.h"

static char dir[64], errp[80]; /* stderr goes beside dir, not into it */

static void teardown(void);

static void setup(void)
{
    th_teardown_at_exit(teardown); /* its tests may skip */
    th_tmpdir(dir, sizeof dir, "outputs");
    snprintf(errp, sizeof errp, "%s.err", dir);
}

static void teardown(void)
{
    th_sh("rm -rf %s %s", dir, errp);
}

TestSuite(outputs, .init = setup, .fini = teardown, .timeout = 120);

#define TOPO "models/topologies/chain-8-ideal.json"
/* width 256: no op under the engine's 1 ns tick, so no warning on stderr */
#define RUN "--model mlp:layers=8,width=256 --topology " TOPO " -K 4 -M 4 --batch 16"

static void path_of(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

static void put(const char *name, const char *text) { th_put(dir, name, text); }

static char *slurp(const char *name)
{
    char p[256], *buf = NULL;
    path_of(p, sizeof p, name);
    cr_assert_eq(ps_read_file(p, &buf, NULL), 0, "%s", ps_errmsg());
    return buf;
}

static mode_t lmode(const char *name)
{
    char p[256];
    struct stat st;
    path_of(p, sizeof p, name);
    cr_assert_eq(lstat(p, &st), 0, "%s: %s", p, strerror(errno));
    return st.st_mode;
}

/* The names in dir, sorted, joined by spaces. */
static void listing(char *buf, size_t n)
{
    struct dirent **names;
    int k = scandir(dir, &names, NULL, alphasort);
    cr_assert(k >= 0);
    buf[0] = 0;
    for (int i = 0; i < k; i++) {
        if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
            snprintf(buf + strlen(buf), n - strlen(buf), "%s ", names[i]->d_name);
        free(names[i]);
    }
    free(names);
}

static char *slurp_err(void)
{
    char *buf = NULL;
    cr_assert_eq(ps_read_file(errp, &buf, NULL), 0, "%s", ps_errmsg());
    return buf;
}

static int stderr_has(const char *text)
{
    char *e = slurp_err();
    int ok = strstr(e, text) != NULL;
    if (!ok)
        fprintf(stderr, "stderr was: %s\n", e);
    free(e);
    return ok;
}

/* A device node in dir (as root); skips the test where that is not allowed. */
static void make_dev(const char *name, int major, int minor)
{
    char p[256];
    path_of(p, sizeof p, name);
    if (mknod(p, S_IFCHR | 0666, makedev(major, minor)) != 0) {
        int e = errno;
        printf("test_outputs: mknod %s: %s: skipping\n", p, strerror(e));
        cr_skip_test("mknod of a character device needs root (%s)", strerror(e));
    }
}

Test(outputs, a_character_device_stays_a_device)
{
    make_dev("null", 1, 3);
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s predict " RUN " --trace %s/null --trace-csv %s/null --out %s/null",
                       ps, dir, dir, dir), 0, "two outputs to one device must not clash");
    cr_assert(S_ISCHR(lmode("null")));
    char ls[512];
    listing(ls, sizeof ls);
    cr_assert_str_eq(ls, "null ");
}

Test(outputs, a_full_device_is_an_io_error_and_stays_a_device)
{
    make_dev("full", 1, 7); /* a copy of /dev/full, so a bug cannot replace the real one */
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s predict " RUN " --trace %s/full >/dev/null 2>%s", ps, dir,
                       errp), 5);
    cr_assert(stderr_has("full: write failed: No space left on device"));
    cr_assert(S_ISCHR(lmode("full")));
    cr_assert_eq(th_sh("%s predict " RUN " --out %s/full 2>%s", ps, dir, errp), 5);
    cr_assert(S_ISCHR(lmode("full")));
    cr_assert_eq(th_sh("%s gen chain -n 4 -o %s/full 2>%s", ps, dir, errp), 5);
    cr_assert(S_ISCHR(lmode("full")));
    char ls[512];
    listing(ls, sizeof ls);
    cr_assert_str_eq(ls, "full ");
    /* a figure too (gnuplot exits 0 when its output cannot be written: the
     * PNG was reported written); the device's .gp and .dat stay unwritten */
    if (ps_gnuplot_have(NULL)) {
        cr_assert_eq(th_sh("%s predict " RUN " --trace %s/tr.json > /dev/null && cd %s && "
                           "mkdir f && ln -s ../full f/timeline.png", ps, dir, dir), 0);
        cr_assert_eq(th_sh("cd %s && %s plot --trace tr.json --kind timeline --out-dir f "
                           "2>%s", dir, ps, errp), 5);
        cr_assert(stderr_has("timeline.png: write failed: No space left on device"));
        cr_assert(S_ISCHR(lmode("full")));
        cr_assert_eq(th_sh("cd %s && %s validate --check --net mlp:layers=2,width=8 --batch 4 "
                           "-K 1 -M 1 --steps 1 --repeats 1 --db v.db --report r.md --plot "
                           "full > /dev/null 2>%s", dir, ps, errp), 5);
        cr_assert(stderr_has("full: write failed: No space left on device"));
        cr_assert(S_ISCHR(lmode("full")));
    }
}

Test(outputs, a_fifo_receives_the_data_and_stays_a_fifo)
{
    char p[256];
    path_of(p, sizeof p, "fifo");
    cr_assert_eq(mkfifo(p, 0600), 0, "%s", strerror(errno));
    const char *ps = th_pipesim();
    /* the reader is started first (and bounded: it waits for a writer that a
     * wrong pipesim never sends); predict's open of the FIFO waits for it */
    cr_assert_eq(th_sh("timeout 60 cat %s/fifo > %s/got & %s predict " RUN " --trace %s/fifo >/dev/null; "
                       "st=$?; wait; exit $st", dir, dir, ps, dir), 0);
    cr_assert(S_ISFIFO(lmode("fifo")));
    char *got = slurp("got");
    cr_assert(strstr(got, "\"traceEvents\""), "the FIFO's reader got: %.80s", got);
    free(got);
    char ls[512];
    listing(ls, sizeof ls);
    cr_assert_str_eq(ls, "fifo got ");
}

Test(outputs, a_symlink_stays_a_link_and_its_target_is_replaced)
{
    put("target.json", "old\n");
    char p[256];
    path_of(p, sizeof p, "target.json");
    cr_assert_eq(chmod(p, 0640), 0);
    path_of(p, sizeof p, "link.json");
    cr_assert_eq(symlink("target.json", p), 0);
    path_of(p, sizeof p, "link2.json"); /* a chain of two */
    cr_assert_eq(symlink("link.json", p), 0);
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s predict " RUN " --trace %s/link2.json >/dev/null", ps, dir), 0);
    cr_assert(S_ISLNK(lmode("link.json")));
    cr_assert(S_ISLNK(lmode("link2.json")));
    mode_t m = lmode("target.json");
    cr_assert(S_ISREG(m));
    cr_assert_eq(m & 07777, 0640, "the replaced file's mode is kept: %o", m & 07777);
    char *got = slurp("target.json");
    cr_assert(strstr(got, "\"traceEvents\""));
    free(got);
    /* a dangling link: the file it names is created */
    path_of(p, sizeof p, "dangling.csv");
    cr_assert_eq(symlink("made.csv", p), 0);
    cr_assert_eq(th_sh("%s gen chain -n 2 -o %s/dangling.csv", ps, dir), 0);
    cr_assert(S_ISLNK(lmode("dangling.csv")));
    cr_assert(S_ISREG(lmode("made.csv")));
    char ls[512];
    listing(ls, sizeof ls);
    cr_assert_str_eq(ls, "dangling.csv link.json link2.json made.csv target.json ");
}

Test(outputs, a_new_file_gets_the_umask_mode)
{
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("umask 027; %s gen chain -n 2 -o %s/a.json", ps, dir), 0);
    cr_assert_eq(lmode("a.json") & 07777, 0640);
    cr_assert_eq(th_sh("umask 002; %s gen chain -n 2 -o %s/b.json", ps, dir), 0);
    cr_assert_eq(lmode("b.json") & 07777, 0664);
}

/* cmd (with %s for dir, as many times as nd says) exits 2, names both
 * options, and leaves every file in dir byte-identical. */
static void refused(const char *what, const char *opt1, const char *opt2, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void refused(const char *what, const char *opt1, const char *opt2, const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    cr_assert_eq(th_sh("mkdir -p %s/.snap && cp -a %s/*.* %s/.snap/", dir, dir, dir), 0);
    char before[1024], after[1024];
    listing(before, sizeof before);
    cr_assert_eq(th_sh("cd %s && { %s; } 2>%s >/dev/null", dir, cmd, errp), 2, "%s: %s", what,
                 cmd);
    cr_assert(stderr_has(opt1), "%s: message lacks %s", what, opt1);
    cr_assert(stderr_has(opt2), "%s: message lacks %s", what, opt2);
    cr_assert(stderr_has("same file"), "%s", what);
    listing(after, sizeof after);
    cr_assert_str_eq(after, before, "%s: files appeared or vanished", what);
    cr_assert_eq(th_sh("cd %s && for f in .snap/*; do cmp -s \"$f\" \"${f#.snap/}\" || exit 1; "
                       "done", dir), 0, "%s: a file changed", what);
    th_sh("rm -rf %s/.snap", dir);
}

Test(outputs, an_input_or_output_given_twice_is_refused_untouched)
{
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_sh("%s gen model mlp:layers=4,width=8 -o %s/p.csv", ps, dir), 0);
    cr_assert_eq(th_sh("cp %s/" TOPO " %s/t.json && cp %s/tests/fixtures/torch/tinyformer.json "
                       "%s/torch.json", wd, dir, wd, dir), 0);
    cr_assert_eq(th_sh("%s sweep --model %s/p.csv --topology %s/t.json -K 1,2 -M 1,2 --batch 4 "
                       "--quiet --db %s/s.db", ps, dir, dir, dir), 0);
    cr_assert_eq(th_sh("%s predict --model %s/p.csv --topology %s/t.json -K 2 -M 2 --batch 4 "
                       "--trace %s/x.json >/dev/null", ps, dir, dir, dir), 0);
    char lp[256];
    path_of(lp, sizeof lp, "lp.csv");
    cr_assert_eq(symlink("p.csv", lp), 0);
    cr_assert_eq(th_sh("cd %s && %s predict --model p.csv --topology t.json -K 2 -M 2 --batch 4 "
                       "--out q.txt >/dev/null", dir, ps), 0);
#define PRED "%s predict --model p.csv --topology t.json -K 2 -M 2 --batch 4 "
    refused("model as --out", "--out 'p.csv'", "--model 'p.csv'", PRED "--out p.csv", ps);
    refused("model as ./--out", "--out './p.csv'", "--model", PRED "--out ./p.csv", ps);
    refused("model via a link", "--out 'lp.csv'", "--model", PRED "--out lp.csv", ps);
    refused("topology as --trace", "--trace 't.json'", "--topology", PRED "--trace t.json", ps);
    refused("--trace X --out X", "--out 'x.json'", "--trace 'x.json'",
            PRED "--trace x.json --out x.json", ps);
    refused("--trace X --out ./X, X new", "--out './new.json'", "--trace 'new.json'",
            PRED "--trace new.json --out ./new.json", ps);
    refused("--trace-csv through a dangling link", "--trace-csv 'dl.csv'", "--trace 'nl.csv'",
            "ln -s nl.csv dl.csv; " PRED "--trace nl.csv --trace-csv dl.csv; st=$?; rm dl.csv; "
            "exit $st", ps);
    refused("report --db as --csv", "--csv 's.db'", "--db 's.db'",
            "%s report --db s.db --csv s.db", ps);
    refused("report --db as --out", "--out './s.db'", "--db", "%s report --db s.db --out ./s.db",
            ps);
    refused("sweep --db as model", "--db 'p.csv'", "--model",
            "%s sweep --model p.csv --topology t.json -K 1 -M 1 --batch 4 --quiet --db p.csv", ps);
    refused("import-torch in place", "--out 'torch.json'", "TRACE.json",
            "%s import-torch torch.json -o torch.json", ps);
    refused("gen model in place", "--out 'p.csv'", "SPEC", "%s gen model p.csv -o p.csv", ps);
    refused("compare --out", "--out 'x.json'", "SIM.json",
            "%s compare x.json x.json --out x.json", ps);
    refused("partition --out", "--out 't.json'", "--topology",
            "%s partition --model p.csv --topology t.json -K 2 -M 2 --batch 4 --out t.json", ps);
    refused("compare-schedules --out", "--out 'p.csv'", "--model",
            "%s compare-schedules --model p.csv --topology t.json -K 2 -M 2 --batch 4 "
            "--out p.csv", ps);
    /* the files a figure writes beside the one named, and a calibration's,
     * are outputs too, refused before any work (they were written over the
     * database or the report, exit 0; or refused after other figures were
     * written); a folder not there yet is no way round the check */
    cr_assert_eq(th_sh("cd %s && cp s.db frontier.png && cp x.json compare.gp && echo OLD > "
                       "compare.png", dir), 0);
    refused("plan --plot over --db", "--plot './frontier.png'", "--db 'frontier.png'",
            "%s plan --model p.csv --topology t.json --devices 2 --batch 4 --quiet "
            "--db frontier.png --plot .", ps);
    refused("plan --plot over --out", "--plot './plan.dat'", "--out 'plan.dat'",
            "%s plan --model p.csv --topology t.json --devices 2 --batch 4 --quiet "
            "--out plan.dat --plot .", ps);
#define CHECK "%s validate --check --net mlp:layers=2,width=8 --batch 4 -K 1 -M 1 --steps 1 "
    refused("validate's plot script over --db", "--plot 'v.gp'", "--db 'v.gp'",
            CHECK "--db v.gp --report r.md --plot v.png", ps);
    refused("validate's timeline script over --report", "--timeline 'y.gp'", "--report 'y.gp'",
            CHECK "--db v.db --report y.gp --timeline y.png", ps);
    refused("a calibration over --db", "--calib-out 'cx-K1.json'", "--db 'cx-K1.json'",
            CHECK "--calib-out cx --db cx-K1.json --report r.md", ps);
#undef CHECK
    refused("plot --compare's script is its input", "--out-dir './compare.gp'",
            "SIM.json 'compare.gp'", "%s plot --compare compare.gp x.json --out-dir .", ps);
    refused("nd/x.db and nd/./x.db, nd new", "--out 'nd/./x.db'", "--db 'nd/x.db'",
            "%s plan --model p.csv --topology t.json --devices 2 --batch 4 --quiet "
            "--db nd/x.db --out nd/./x.db", ps);
    cr_expect_eq(th_sh("test -e %s/nd", dir), 1, "the new folder was not made");
    cr_assert_eq(th_sh("cd %s && rm frontier.png compare.gp compare.png", dir), 0);
#undef PRED
    /* stdout and devices never clash; an input read twice is fine */
    cr_assert_eq(th_sh("cd %s && %s compare x.json x.json --out - >/dev/null", dir, ps), 0);
    cr_assert_eq(th_sh("cd %s && %s predict --model p.csv --topology t.json -K 2 -M 2 --batch 4 "
                       "--trace /dev/null --trace-csv /dev/null --out /dev/null", dir, ps), 0);
}

/* Inputs a command finds by name (a bundled profile or topology, the
 * devices.json behind a topology's presets, import-torch's default sizes
 * sidecar) are protected as declared ones are: the output is refused with
 * exit 2 and the input kept byte for byte. */
Test(outputs, an_input_found_by_name_is_protected_too)
{
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_sh("cd %s && mkdir -p d/profiles d/topologies && "
                       "%s gen model mlp:layers=4,width=8 -o d/profiles/x.csv && "
                       "cp %s/models/topologies/dgx1-v100.json %s/models/topologies/devices.json "
                       "d/topologies/ && cp %s/tests/fixtures/torch/tinyformer.json "
                       "%s/tests/fixtures/torch/tinyformer.layers.csv . && "
                       "md5sum d/profiles/x.csv d/topologies/devices.json tinyformer.* > sums",
                       dir, ps, wd, wd, wd, wd), 0);
    static const char *const outs[] = {
        "-o d/profiles/x.csv", "-o d/topologies/devices.json", "--trace d/profiles/x.csv",
        "--trace-csv d/topologies/dgx1-v100.json",
    };
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        cr_assert_eq(th_sh("cd %s && PIPESIM_DATA=\"$PWD/d\" %s predict --model x --topology "
                           "dgx1-v100 -K 2 -M 2 --batch 4 %s >/dev/null 2>%s", dir, ps, outs[i],
                           errp), 2, "%s", outs[i]);
        cr_assert(stderr_has("is the same file as input '"), "%s", outs[i]);
        cr_assert(stderr_has("the output would overwrite an input"), "%s", outs[i]);
    }
    cr_assert_eq(th_sh("cd %s && %s import-torch tinyformer.json -o tinyformer.layers.csv "
                       ">/dev/null 2>%s", dir, ps, errp), 2);
    cr_assert(stderr_has("is the same file as input 'tinyformer.layers.csv'"));
    cr_assert_eq(th_sh("cd %s && md5sum -c --quiet sums", dir), 0, "an input changed");
    cr_assert_eq(th_sh("cd %s && find . -name '.*' ! -name . | grep -q .", dir), 1,
                 "a temporary was left behind");
}

/* Past a file-size limit a write fails (EFBIG) and cleans up after itself:
 * exit 5, no temporary left (SIGXFSZ used to end the process first). */
Test(outputs, a_file_size_limit_is_an_io_error_and_leaves_nothing)
{
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_sh("cd %s && mkdir -p ul && (ulimit -f 1; %s predict --model "
                       "mlp:layers=16,width=64 --topology %s/" TOPO " -K 4 -M 32 --batch 64 "
                       "--trace ul/t.json >/dev/null 2>%s)", dir, ps, wd, errp), 5);
    cr_assert(stderr_has("ul/t.json: write failed: File too large"));
    cr_assert_eq(th_sh("cd %s && test -z \"$(ls -A ul)\"", dir), 0, "a file was left");
}

/* report's outputs are a set: a --csv that cannot be written leaves --out as
 * it was (it used to be replaced before the failure); a write error names
 * the file. */
Test(outputs, report_writes_all_its_outputs_or_none)
{
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_sh("cd %s && %s sweep --model mlp:layers=4,width=8 --topology %s/" TOPO
                       " -K 1,2 -M 1,2 --batch 4 --quiet --db s.db && echo precious > keep.txt",
                       dir, ps, wd), 0);
    cr_assert_eq(th_sh("cd %s && %s report --db s.db --out keep.txt --csv missing/r.csv "
                       "2>%s", dir, ps, errp), 5);
    cr_assert(stderr_has("missing/r.csv: cannot write"));
    cr_assert_eq(th_sh("cd %s && test \"$(cat keep.txt)\" = precious", dir), 0,
                 "--out was replaced by a run that failed");
    struct stat st;
    if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
        cr_assert_eq(th_sh("cd %s && %s report --db s.db --csv /dev/full 2>%s", dir, ps, errp),
                     5);
        cr_assert(stderr_has("/dev/full: write failed: No space left on device"));
        /* a device is flushed before any file of the set is renamed */
        cr_assert_eq(th_sh("cd %s && %s report --db s.db --out keep.txt --csv /dev/full "
                           "2>%s", dir, ps, errp), 5);
        cr_assert_eq(th_sh("cd %s && test \"$(cat keep.txt)\" = precious", dir), 0,
                     "--out was replaced, then the device failed");
    }
    /* stdout is part of the set: nothing printed when a later output fails */
    cr_assert_eq(th_sh("cd %s && %s report --db s.db --csv missing/r.csv >stdout.txt 2>%s",
                       dir, ps, errp), 5);
    cr_assert_eq(th_sh("cd %s && test ! -s stdout.txt", dir), 0,
                 "the report was printed before --csv failed");
    /* a reader of stdout that is gone (SIGPIPE) leaves no --csv temporary */
    for (int i = 0; i < 3; i++)
        th_sh("cd %s && %s report --db s.db --csv piped.csv 2>/dev/null | (exec 0<&-; true)",
              dir, ps);
    cr_assert_eq(th_sh("cd %s && ls -A | grep -q '^\\.piped'", dir), 1,
                 "a temporary was left by SIGPIPE");
    cr_assert_eq(th_sh("cd %s && %s report --db s.db --out keep.txt --csv r.csv && "
                       "test -s r.csv && ! grep -q precious keep.txt", dir, ps), 0);
    /* two outputs on stdout share it in order (the second used to replace
     * the first's buffer: the table was lost) */
    cr_assert_eq(th_sh("cd %s && %s report --db s.db --csv - >both.txt && "
                       "grep -q '^normalized throughput' both.txt && "
                       "sed -n '/^model,model_hash/,$p' both.txt | grep -c '^\"mlp' | grep -qx 4",
                       dir, ps), 0, "--csv - lost the table or the CSV");
    cr_assert_eq(th_sh("cd %s && %s report --db s.db --format csv --csv - --grid-csv - "
                       ">three.txt && test $(grep -c '^model,model_hash,.*,replicas,K,' three.txt) "
                       "= 1 && test $(grep -c '^model,model_hash,.*,replicas,metric,' three.txt) "
                       "= 2 && "
                       "test $(grep -c '^\"mlp' three.txt) -ge 8", dir, ps), 0,
                 "three outputs on stdout");
}

/* predict's --trace, --trace-csv and --out are one set: a failing --out
 * leaves the traces as they were (they were replaced before it was tried). */
Test(outputs, predict_writes_its_traces_and_result_as_one_set)
{
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_sh("cd %s && echo precious > t.json && echo precious > t.csv", dir), 0);
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=8,width=256 --topology %s/" TOPO
                       " -K 4 -M 4 --batch 16 --trace t.json --trace-csv t.csv --out missing/r.txt "
                       "2>%s", dir, ps, wd, errp), 5);
    cr_assert(stderr_has("missing/r.txt: cannot write"));
    struct stat st;
    if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) /* a device fails at its flush */
        cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=8,width=256 --topology "
                           "%s/" TOPO " -K 4 -M 4 --batch 16 --trace t.json --trace-csv t.csv "
                           "--out /dev/full 2>%s", dir, ps, wd, errp), 5);
    cr_assert_eq(th_sh("cd %s && test \"$(cat t.json t.csv)\" = \"$(printf 'precious\\n"
                       "precious')\" && test -z \"$(ls -A | grep '^\\.t\\.')\"", dir), 0,
                 "a trace was replaced by a run whose --out failed, or a temporary left");
    /* stdout gets no byte of a set that fails (the trace on stdout was out
     * before --out failed: helper-86) */
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=8,width=256 --topology %s/" TOPO
                       " -K 4 -M 4 --batch 16 --trace - --out missing/r.txt >so.txt 2>/dev/null",
                       dir, ps, wd), 5);
    cr_assert_eq(th_sh("cd %s && test ! -s so.txt", dir), 0, "stdout had the trace");
    if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) { /* a device before stdout */
        cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=8,width=256 --topology %s/"
                           TOPO " -K 4 -M 4 --batch 16 --trace - --out /dev/full >so.txt "
                           "2>/dev/null", dir, ps, wd), 5);
        cr_assert_eq(th_sh("cd %s && test ! -s so.txt", dir), 0, "stdout had the trace");
    }
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=8,width=256 --topology %s/" TOPO
                       " -K 4 -M 4 --batch 16 --trace t.json --trace-csv t.csv --out r.txt && "
                       "grep -q traceEvents t.json && grep -q '^device,stream' t.csv && "
                       "grep -q '^step time' r.txt", dir, ps, wd), 0);
}

/* A set whose later rename fails puts back the files it already replaced
 * and removes those it created (helper-138: predict's trace replaced, its
 * --out immutable, exit 5; a study folder half new): here b's target turns
 * into a folder with a file in it after b is written, so b's rename fails
 * after a's; and a set failed by ps_afile_publish_fail() (a database store
 * after the renames) goes back as well. A set that succeeds leaves no link
 * to the old files. */
static void set_of_two(const char *a, const char *b, int fail_b, int fail_after)
{
    struct ps_afile fa, fb;
    cr_assert_eq(ps_afile_open(&fa, a), 0, "%s", ps_errmsg());
    cr_assert_eq(ps_afile_open(&fb, b), 0, "%s", ps_errmsg());
    fputs("new a\n", fa.f);
    fputs("new b\n", fb.f);
    cr_assert_eq(ps_afile_sync(&fa), 0);
    cr_assert_eq(ps_afile_sync(&fb), 0);
    if (fail_b) {
        cr_assert_eq(th_sh("rm -f %s && mkdir %s && touch %s/x", b, b, b), 0);
    }
    ps_afile_publish_begin();
    cr_assert_eq(ps_afile_commit(&fa), 0, "%s", ps_errmsg());
    int rc = ps_afile_commit(&fb);
    cr_assert_eq(rc, fail_b ? -PS_EIO : 0, "%s", ps_errmsg());
    if (fail_b)
        cr_expect(strstr(ps_errmsg(), ": cannot replace it: "), "%s", ps_errmsg());
    if (fail_after)
        ps_afile_publish_fail();
    ps_afile_publish_end();
}

Test(outputs, a_set_whose_rename_fails_puts_the_old_files_back)
{
    char a[128], b[128];
    path_of(a, sizeof a, "a.txt");
    path_of(b, sizeof b, "b.txt");
    put("a.txt", "old a\n");
    put("b.txt", "old b\n");
    set_of_two(a, b, 1, 0);
    cr_expect_eq(th_sh("test \"$(cat %s)\" = 'old a'", a), 0, "a was not put back");
    cr_expect_eq(th_sh("test -d %s && test -z \"$(ls -A %s | grep -v -e '^a.txt$' -e "
                       "'^b.txt$')\"", b, dir), 0, "a temporary or a link was left");
    th_sh("rm -rf %s", b);
    /* a name the failed set created is removed */
    put("b.txt", "old b\n");
    cr_assert_eq(th_sh("rm -f %s", a), 0);
    set_of_two(a, b, 1, 0);
    cr_expect_eq(th_sh("test ! -e %s", a), 0, "a, new, was left");
    th_sh("rm -rf %s", b);
    /* failed after its renames: both back */
    put("a.txt", "old a\n");
    put("b.txt", "old b\n");
    set_of_two(a, b, 0, 1);
    cr_expect_eq(th_sh("test \"$(cat %s %s)\" = \"$(printf 'old a\\nold b')\"", a, b), 0);
    /* a set that succeeds: both new, nothing else left (a failure said
     * outside any set fails none: helper-140, it rolled the next one back) */
    ps_afile_publish_fail();
    set_of_two(a, b, 0, 0);
    cr_expect_eq(th_sh("test \"$(cat %s %s)\" = \"$(printf 'new a\\nnew b')\" && "
                       "test \"$(ls -A %s | wc -l)\" = 2", a, b, dir), 0);
    /* the command: predict's trace kept where its --out cannot be replaced
     * (an immutable file, where chattr works here) */
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    put("t.json", "precious\n");
    put("o.txt", "kept\n");
    if (th_sh("chattr +i %s/o.txt 2>/dev/null", dir) != 0)
        return;
    int rc = th_sh("cd %s && %s predict --model mlp:layers=8,width=256 --topology %s/" TOPO
                   " -K 4 -M 4 --batch 16 --trace t.json --out o.txt 2>%s", dir, ps, wd, errp);
    th_sh("chattr -i %s/o.txt", dir);
    cr_expect_eq(rc, 5);
    cr_expect(stderr_has("o.txt: cannot replace it: Operation not permitted"));
    cr_expect_eq(th_sh("cd %s && test \"$(cat t.json)\" = precious", dir), 0,
                 "the trace was replaced by a set whose --out failed");
}

/* Endless inputs and outputs that would leave their folder are refused up
 * front, never a hang or a file in the root folder. */
Test(outputs, endless_inputs_and_escaping_outputs_are_refused)
{
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_sh("cd %s && timeout 60 %s predict --model /dev/zero --topology %s/" TOPO
                       " -K 1 -M 1 --batch 1 2>%s", dir, ps, wd, errp), 5);
    cr_assert(stderr_has("/dev/zero: longer than 1024 MiB, the most pipesim reads from a device "
                         "or pipe"));
    cr_assert_eq(th_sh("cd %s && timeout 60 %s compare /dev/zero /dev/zero 2>%s", dir, ps,
                       errp), 5);
    cr_assert(stderr_has("/dev/zero: longer than 1024 MiB"));
    cr_assert_eq(th_sh("cd %s && %s plot --kind schedules -K 2 -M 2 --out-dir '' 2>%s", dir, ps,
                       errp), 2);
    cr_assert(stderr_has("plot: --out-dir needs a directory"));
    cr_assert_eq(th_sh("cd %s && %s plot --kind schedules -K 2 -M 2 --out-dir p --prefix ../e "
                       "2>%s", dir, ps, errp), 2);
    cr_assert(stderr_has("--prefix: '../e' must be a file-name prefix without '/'"));
    /* a prefix of '.' hid the files: export-chakra wrote ..0.et and ..1.et */
    cr_assert_eq(th_sh("cd %s && %s export-chakra --model mlp:layers=4,width=8 --topology %s/"
                       TOPO " -K 2 -M 2 --batch 4 --out-dir hid --prefix . 2>%s; rc=$?; "
                       "test ! -e hid || test -z \"$(ls -A hid)\" || exit 9; exit $rc", dir, ps,
                       wd, errp), 2);
    cr_assert(stderr_has("--prefix: '.' must not start with '.' (the files would be hidden)"));
    cr_assert_eq(th_sh("cd %s && %s export-chakra --model mlp:layers=4,width=8 --topology %s/"
                       TOPO " -K 2 -M 2 --batch 4 --out-dir hid --prefix x/y 2>%s", dir, ps, wd,
                       errp), 2);
    cr_assert(stderr_has("--prefix: 'x/y' must be a file-name prefix without '/'"));
    cr_assert_eq(th_sh("cd %s && %s plot --kind schedules -K 2 -M 2 --out-dir p --prefix .h "
                       "2>%s", dir, ps, errp), 2);
    cr_assert(stderr_has("--prefix: '.h' must not start with '.'"));
    cr_assert_eq(th_sh("cd %s && %s export-chakra --model mlp:layers=4,width=8 --topology %s/"
                       TOPO " -K 2 -M 2 --batch 4 --out-dir '' 2>%s", dir, ps, wd, errp), 2);
    cr_assert(stderr_has("export-chakra: --out-dir needs a directory"));
    cr_assert_eq(th_sh("cd %s && %s plan --model mlp:layers=4,width=8 --topology %s/" TOPO
                       " --devices 2 --batch 4 --plot '' >/dev/null 2>%s", dir, ps, wd, errp), 2);
    cr_assert(stderr_has("plan: --plot needs a directory"));
    cr_assert_eq(th_sh("cd %s && %s plot --kind schedules -K 4096 -M 65536 --schedules gpipe "
                       "--out-dir p 2>%s", dir, ps, errp), 2);
    cr_assert(stderr_has("K x M = 268435456 is too large to draw"));
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=8,width=8 --topology %s/" TOPO
                       " -K 8 -M 16777216 --batch 16777216 2>%s", dir, ps, wd, errp), 4);
    cr_assert(stderr_has("K*M = 134217728 is too large"));
    cr_assert_eq(th_sh("cd %s && ls -A | grep -v '^p$' | grep -q .", dir), 1,
                 "a file was written");
}

/* A temporary folder tracked before the files in it (as plot's is) goes
 * with them on SIGTERM: the handler unlinks the files, then the folders. */
Test(outputs, a_signal_removes_a_tracked_folder_and_its_files)
{
    char d[128], f[160];
    snprintf(d, sizeof d, "%s/tmpd", dir);
    snprintf(f, sizeof f, "%s/data.dat", d);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        ps_afile_signals_install();
        if (mkdir(d, 0700) != 0 || ps_afile_track(d) < 0)
            _exit(3);
        FILE *fp = fopen(f, "w");
        if (!fp || ps_afile_track(f) < 0)
            _exit(4);
        fputs("1 2\n", fp);
        fclose(fp);
        raise(SIGTERM);
        _exit(5); /* not reached */
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "child status %d", st);
    struct stat sb;
    cr_expect_neq(stat(f, &sb), 0, "the file is left");
    cr_expect_neq(stat(d, &sb), 0, "the folder is left");
}

/* The attack on the old "<path>.tmp.<pid>" name: the child plants the link
 * with its own pid, then runs pipesim (exec keeps the pid). */
Test(outputs, a_symlink_at_the_old_temporary_name_is_not_followed)
{
    put("out.txt", "old\n");
    put("victim", "precious\n");
    char target[256];
    path_of(target, sizeof target, "out.txt");
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        char link[300];
        snprintf(link, sizeof link, "%s.tmp.%ld", target, (long)getpid());
        if (symlink("victim", link) != 0)
            _exit(99);
        int fd = open("/dev/null", O_WRONLY);
        if (fd < 0 || dup2(fd, 1) < 0)
            _exit(98);
        execl(th_pipesim(), "pipesim", "gen", "chain", "-n", "2", "-o", target, (char *)NULL);
        _exit(97);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    char *v = slurp("victim");
    cr_assert_str_eq(v, "precious\n");
    free(v);
    char *o = slurp("out.txt");
    cr_assert(strstr(o, "\"devices\""), "out.txt: %.60s", o);
    free(o);
    char want[512], ls[512];
    snprintf(want, sizeof want, "out.txt out.txt.tmp.%ld victim ", (long)pid);
    listing(ls, sizeof ls);
    cr_assert_str_eq(ls, want);
    char l[300];
    snprintf(l, sizeof l, "%s.tmp.%ld", target, (long)pid);
    struct stat sl;
    cr_assert_eq(lstat(l, &sl), 0);
    cr_assert(S_ISLNK(sl.st_mode), "the planted link was replaced");
}

Test(outputs, a_write_error_on_stdout_is_exit_5)
{
    const char *ps = th_pipesim();
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
        cr_skip_test("no /dev/full on this system");
    const char *cmds[] = {
        "predict " RUN,
        "validate --net mlp:layers=2,width=8 -K 1 -M 2 --batch 4 --steps 1",
        "gen model mlp:layers=4,width=8",
        "gen chain -n 4",
        "partition " RUN,
        "compare-schedules " RUN,
        "gen-paper",
        "gen-paper --format csv",
        "presets",
        "presets --format json",
        "--version",
        "-V",
        "--help",
        "-h",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        cr_assert_eq(th_sh("%s %s >/dev/full 2>%s", ps, cmds[i], errp), 5, "%s", cmds[i]);
        cr_assert(stderr_has("stdout: write failed: No space left on device"), "%s", cmds[i]);
        char *e = slurp_err();
        cr_assert_eq(strchr(e, '\n'), e + strlen(e) - 1, "%s: one line: %s", cmds[i], e);
        free(e);
    }
    /* --out - is stdout too */
    cr_assert_eq(th_sh("%s predict " RUN " --out - >/dev/full 2>/dev/null", ps), 5);
}

/* Files in dir other than t.json: its temporary (".t.json.XXXXXX", or any
 * other name a wrong pipesim would use). */
static int have_temp(void)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "t.json");
    closedir(d);
    return n;
}

Test(outputs, a_killed_write_leaves_no_temporary_and_the_old_file, .timeout = 300)
{
    put("t.json", "old\n");
    char target[256];
    path_of(target, sizeof target, "t.json");
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd < 0 || dup2(fd, 1) < 0)
            _exit(98);
        /* about 60 MB of trace: long enough to be caught writing it */
        execl(th_pipesim(), "pipesim", "predict", "--model", "mlp:layers=32,width=64",
              "--topology", TOPO, "-K", "8", "-M", "4096", "--batch", "4096", "--trace",
              target, (char *)NULL);
        _exit(97);
    }
    int st = 0, seen = 0, done = 0;
    struct timespec ms = { 0, 1000000 };
    for (long i = 0; i < 240000 && !seen && !done; i++) { /* at most about 4 minutes */
        if (have_temp())
            seen = 1;
        else if (waitpid(pid, &st, WNOHANG) == pid)
            done = 1;
        else
            nanosleep(&ms, NULL);
    }
    if (!done) {
        kill(pid, SIGTERM);
        cr_assert_eq(waitpid(pid, &st, 0), pid);
    }
    cr_assert_eq(have_temp(), 0, "a temporary file was left");
    if (!seen) {
        printf("test_outputs: predict finished before its temporary was seen: skipping\n");
        cr_skip_test("the write finished before it could be interrupted");
    }
    char *o = slurp("t.json");
    if (WIFSIGNALED(st)) {
        cr_assert_eq(WTERMSIG(st), SIGTERM);
        /* killed while writing: the old file; killed just after the rename: the new one */
        if (strcmp(o, "old\n")) {
            struct trc_trace *t;
            cr_assert_eq(trc_read_chrome(target, &t), 0, "t.json is neither old nor whole: %s",
                         ps_errmsg());
            trc_trace_free(t);
        }
    } else {
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    }
    free(o);
    char ls[512];
    listing(ls, sizeof ls);
    cr_assert_str_eq(ls, "t.json ");
}

/* A standard descriptor left closed is held on /dev/null, read-only: a file
 * opened next does not become "stdout", and writing to stdout still fails. */
Test(outputs, closed_standard_descriptors_are_held)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(0);
        close(1);
        ps_std_fds_reserve();
        char p[160];
        snprintf(p, sizeof p, "%s/held.txt", dir);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd <= 2)
            _exit(3);
        if (fcntl(0, F_GETFD) < 0 || fcntl(1, F_GETFD) < 0)
            _exit(4);
        if (write(1, "x", 1) != -1 || errno != EBADF)
            _exit(5);
        _exit(0);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
    /* the held /dev/null is nobody's stdout: -o /dev/null with stdout closed
     * writes the device (it was taken for stdout, whose writes fail: exit 5);
     * printing to the closed stdout itself still fails */
    const char *ps = th_pipesim();
    char wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_sh("%s predict --model mlp:layers=4,width=8 --topology %s/" TOPO
                       " -K 2 -M 2 --batch 4 -o /dev/null >&- 2>%s", ps, wd, errp), 0);
    cr_assert_eq(th_sh("%s predict --model mlp:layers=4,width=8 --topology %s/" TOPO
                       " -K 2 -M 2 --batch 4 >&- 2>%s", ps, wd, errp), 5);
    cr_assert(stderr_has("stdout: write failed"));
    /* a name of descriptor 1 is still stdout, and fails as it does */
    cr_assert_eq(th_sh("%s predict --model mlp:layers=4,width=8 --topology %s/" TOPO
                       " -K 2 -M 2 --batch 4 -o /dev/stdout >&- 2>%s", ps, wd, errp), 5);
    cr_assert_eq(th_sh("%s predict --model mlp:layers=4,width=8 --topology %s/" TOPO
                       " -K 2 -M 2 --batch 4 -o /dev/fd/1 >&- 2>%s", ps, wd, errp), 5);
}

/* A newline in a path a file or a summary quotes keeps them whole: the
 * profile's first line (import-torch's and calibrate's origin quotes the
 * input's path) read back as a header of bad columns, and the "wrote" and
 * summary lines of reproduce, calibrate and sweep split in two (helper-126,
 * helper-127, helper-125). */
Test(outputs, a_newline_in_a_quoted_path_keeps_files_and_lines_whole)
{
    cr_assert_eq(th_sh("cd %s && mkdir nl && printf '[{\"ph\":\"X\",\"name\":\"layer:a\","
                       "\"tid\":1,\"ts\":0,\"dur\":10}]' > \"nl/x$(printf '\\ny').json\" && "
                       "printf 'input 8\\ndense 8 relu\\ndense 8 linear\\n' > "
                       "\"nl/n$(printf '\\nk')\"", dir), 0);
    cr_expect_eq(th_sh("cd %s && %s import-torch \"nl/x$(printf '\\ny').json\" --batch 1 -o "
                       "nl/t.csv 2>/dev/null && %s predict --model nl/t.csv --topology chain-8-ideal"
                       " -K 1 -M 1 --batch 1 > /dev/null", dir, th_pipesim(), th_pipesim()), 0);
    cr_expect_eq(th_sh("cd %s && %s calibrate --net \"file:nl/n$(printf '\\nk')\" "
                       "--micro-batches 2 --repeats 1 --warmup 0 --out \"nl/c$(printf '\\nd')\" "
                       "> nl/cal.out 2>/dev/null && %s predict --model \"nl/c$(printf '\\nd')"
                       ".csv\" --topology \"nl/c$(printf '\\nd').json\" -K 1 -M 1 --batch 2 "
                       "> /dev/null && test $(sed -n '1p' \"nl/c$(printf '\\nd')-fit.csv\" | "
                       "grep -c 'file:nl/n?k') -eq 1 && grep -q '^wrote  *nl/c?d.csv' "
                       "nl/cal.out", dir, th_pipesim(), th_pipesim()), 0);
    cr_expect_eq(th_sh("cd %s && %s sweep --model mlp:layers=4,width=64 --topology chain-8-ideal"
                       " -K 1 -M 1 --batch 4 --db \"nl/s$(printf '\\nw').db\" 2> nl/sw.err && "
                       "test $(wc -l < nl/sw.err) -eq 1 && grep -q 'already in nl/s?w.db$' "
                       "nl/sw.err", dir, th_pipesim()), 0);
    cr_expect_eq(th_sh("cd %s && %s reproduce torchgpipe --out-dir \"nl/r$(printf '\\ns')\" "
                       "> nl/r.out 2>&1 && grep -q '^wrote nl/r?s/speed.md$' nl/r.out && "
                       "! grep -q '^s/' nl/r.out", dir, th_pipesim()), 0);
}

/* A name no folder takes is refused before the work and before any result is printed
 * (helper-130: predict printed its table, then failed renaming its trace, exit 5). */
Test(outputs, a_name_too_long_is_refused_before_the_result)
{
    char longname[301];
    memset(longname, 'a', 300);
    longname[300] = 0;
    cr_expect_eq(th_sh("cd %s && %s predict " RUN " --trace %s > nt.out 2> nt.err; test $? -eq "
                       "5 && test ! -s nt.out && grep -q 'File name too long (a name of 300 "
                       "bytes, at most 255)' nt.err", dir, th_pipesim(), longname), 0);
}
