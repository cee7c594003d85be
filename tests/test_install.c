/* make install / make uninstall end to end: the program installed under a
 * temporary prefix (scripts/install.sh, which both targets run) finds its
 * own files from another directory: presets by name, both reproductions
 * byte for byte as committed, the man page and completion in place; then
 * uninstall leaves nothing behind. */
#include "helpers.h"

#include <sys/stat.h>
#include <unistd.h>

TestSuite(install, .timeout = 240);

/* The make targets call the script with DESTDIR + PREFIX (a make of its
 * own: not the variables of the make that runs this suite). */
#define MAKE_N "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD make -n"
Test(install, the_make_targets_run_the_script)
{
    char out[4096];
    cr_assert_eq(th_capture(out, sizeof out, MAKE_N " install PREFIX=/opt/x DESTDIR=/stage "
                            "2>/dev/null | grep install.sh"), 0);
    cr_assert(strstr(out, "sh scripts/install.sh install build/pipesim \"/stage/opt/x\""), "%s",
              out);
    cr_assert_eq(th_capture(out, sizeof out, MAKE_N " uninstall PREFIX=/opt/x 2>/dev/null | "
                            "grep install.sh"), 0);
    cr_assert(strstr(out, "sh scripts/install.sh uninstall \"/opt/x\""), "%s", out);
    /* uninstall reads the manifest only: it runs no package check (helper-65: a
     * machine without the -dev packages could not uninstall) */
    cr_assert_eq(th_capture(out, sizeof out, MAKE_N " uninstall PREFIX=/opt/x 2>/dev/null"), 0);
    cr_assert(!strstr(out, "deps.sh"), "%s", out);
    /* PREFIX is a C string in the build: a quote is refused by name, before compiling */
    cr_assert_eq(th_capture(out, sizeof out, MAKE_N " install PREFIX=\"/tmp/a'b\" 2>&1"), 2);
    cr_assert(strstr(out, "holds a quote or a backslash"), "%s", out);
}

/* helper-65: the manifest is relative to PREFIX, so a DESTDIR staging tree moved
 * into place uninstalls (it named the staging paths: refused), as does PREFIX with
 * a trailing slash; a second install removes what the first wrote and it does not
 * (a dropped preset stayed a bundled name); uninstall removes the folders install
 * created and keeps those that were there; a manifest naming a path outside PREFIX
 * is refused, by install and uninstall alike, and nothing is removed. */
/* Installs into d/src/rel, rewrites its manifest as an older install wrote
 * it (the lines less the header, through edit), uninstalls it as prefix
 * (as spelt there); the output has want and then "(N files)", N the files
 * the manifest lists (its lines not ending in '/'), and with empty nothing
 * is left. */
static void old_manifest(const char *d, const char *bin, const char *edit, const char *prefix,
                         const char *want, int empty)
{
    char out[4096], listed[64], w[256];
    cr_assert_eq(th_sh("cd %s/src && sh scripts/install.sh install %s rel >/dev/null && "
                       "grep -v '^#' rel/share/pipesim/MANIFEST | %s > m && "
                       "mv m rel/share/pipesim/MANIFEST", d, bin, edit), 0);
    cr_assert_eq(th_capture(listed, sizeof listed, "cd %s/src && grep -vc '/$' "
                            "rel/share/pipesim/MANIFEST", d), 0);
    snprintf(w, sizeof w, "%s(%d files)\n", want, atoi(listed));
    cr_assert_eq(th_capture(out, sizeof out, "cd %s/src && sh scripts/install.sh uninstall "
                            "%s 2>&1", d, prefix), 0, "%s", out);
    cr_expect(strstr(out, w), "%s lacks %s", out, w);
    if (empty)
        cr_expect_eq(th_sh("cd %s/src && test -z \"$(find rel -type f)\"", d), 0);
}

Test(install, staged_moved_reinstalled_and_refused)
{
    char d[64], out[4096], bin[PATH_MAX];
    th_tmpdir(d, sizeof d, "stage");
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    cr_assert_eq(th_sh("sh scripts/install.sh install %s %s/stage/usr/local >/dev/null", bin, d),
                 0);
    cr_assert_eq(th_sh("grep -q '^bin/pipesim$' %s/stage/usr/local/share/pipesim/MANIFEST && "
                       "! grep -q '^/' %s/stage/usr/local/share/pipesim/MANIFEST", d, d), 0);
    cr_assert_eq(th_sh("mkdir -p %s/root/usr/bin && touch %s/root/usr/bin/other && "
                       "mv %s/stage/usr/local %s/root/usr/local", d, d, d, d), 0);
    cr_assert_eq(th_sh("mkdir %s/root/usr/local/share/mine", d), 0);
    cr_assert_eq(th_capture(out, sizeof out, "sh scripts/install.sh uninstall "
                            "%s/root/usr/local/ 2>&1", d), 0, "%s", out);
    /* every file and folder install made is gone; what was there or made since stays */
    cr_assert_eq(th_capture(out, sizeof out, "cd %s/root && find . | LC_ALL=C sort", d), 0);
    cr_assert_str_eq(out, ".\n./usr\n./usr/bin\n./usr/bin/other\n./usr/local\n"
                          "./usr/local/share\n./usr/local/share/mine\n");
    /* installed again without one of its files: that file goes */
    char pre[128];
    snprintf(pre, sizeof pre, "%s/p", d);
    cr_assert_eq(th_sh("mkdir -p %s/src && cp -r models studies docs scripts %s/src/ && "
                       "cp models/profiles/transformer-small.csv %s/src/models/profiles/"
                       "zz-old.csv", d, d, d), 0);
    cr_assert_eq(th_sh("cd %s/src && sh scripts/install.sh install %s %s >/dev/null", d, bin,
                       pre), 0);
    cr_assert_eq(th_sh("test -f %s/share/pipesim/profiles/zz-old.csv", pre), 0);
    cr_assert_eq(th_sh("rm %s/src/models/profiles/zz-old.csv", d), 0);
    cr_assert_eq(th_capture(out, sizeof out, "cd %s/src && sh scripts/install.sh install %s %s",
                            d, bin, pre), 0);
    cr_assert(strstr(out, "; 1 left from the earlier install removed)"), "%s", out);
    cr_assert_neq(th_sh("test -e %s/share/pipesim/profiles/zz-old.csv", pre), 0);
    cr_assert_neq(th_sh("grep -q zz-old %s/share/pipesim/MANIFEST", pre), 0);
    /* a manifest that climbs out of PREFIX: refused, nothing removed */
    cr_assert_eq(th_sh("touch %s/victim && echo ../victim >> %s/share/pipesim/MANIFEST", d, pre),
                 0);
    cr_assert_eq(th_capture(out, sizeof out, "sh scripts/install.sh uninstall %s 2>&1", pre), 1);
    cr_assert(strstr(out, "names ../victim, outside"), "%s", out);
    cr_assert_eq(th_sh("test -f %s/victim && test -f %s/bin/pipesim", d, pre), 0);
    cr_assert_eq(th_sh("cd %s/src && sh scripts/install.sh install %s %s >/dev/null 2>&1", d, bin,
                       pre), 1);
    cr_assert_eq(th_sh("echo /etc/passwd > %s/share/pipesim/MANIFEST", pre), 0);
    cr_assert_eq(th_sh("sh scripts/install.sh uninstall %s 2>/dev/null", pre), 1);
    cr_assert_eq(th_sh("test -f %s/bin/pipesim", pre), 0);
    /* an older install's manifest (no header: DEST/path as DEST was given, relative too)
     * uninstalls what it lists (helper-68: a relative PREFIX's lines were read under
     * PREFIX twice, nothing was removed and it said 44 files were) */
    old_manifest(d, bin, "grep -v '/$' | sed 's|^|rel/|'", "rel", "removed pipesim from rel ",
                 1);
    /* the same, PREFIX spelt another way now (./rel then, its absolute path now), and
     * a manifest of paths relative to PREFIX without the header (helper-72: both were
     * refused as outside PREFIX) */
    old_manifest(d, bin, "grep -v '/$' | sed 's|^|./rel/|'", "\"$PWD/rel\"", "", 0);
    old_manifest(d, bin, "cat", "rel", "", 1);
    /* a manifest of blank lines: nothing to remove, said so, no error */
    cr_assert_eq(th_sh("mkdir -p %s/blank/share/pipesim && printf '\\n\\n' > "
                       "%s/blank/share/pipesim/MANIFEST", d, d), 0);
    cr_assert_eq(th_capture(out, sizeof out, "sh scripts/install.sh uninstall %s/blank 2>&1", d),
                 0, "%s", out);
    cr_expect(strstr(out, "(0 files)"), "%s", out);
    th_sh("rm -rf %s", d);
}

Test(install, installed_it_finds_its_own_files)
{
    char d[64], pre[128], work[128], out[16384];
    th_tmpdir(d, sizeof d, "install");
    snprintf(pre, sizeof pre, "%s/opt", d);
    snprintf(work, sizeof work, "%s/elsewhere", d);
    cr_assert_eq(mkdir(work, 0777), 0);
    char bin[PATH_MAX];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    cr_assert_eq(th_sh("sh scripts/install.sh install %s %s >/dev/null", bin, pre), 0);
    /* from another directory, with no PIPESIM_DATA: the installed folder */
    const char *env = "unset PIPESIM_DATA; cd";
    cr_assert_eq(th_capture(out, sizeof out, "%s %s && %s/bin/pipesim presets", env, work, pre), 0);
    char want[256];
    snprintf(want, sizeof want, "data folder: %s/share/pipesim (installed)\n", pre);
    cr_assert(!strncmp(out, want, strlen(want)), "%s", out);
    cr_assert(strstr(out, "\n  pcie-8gpu "), "%s", out);
    cr_assert(strstr(out, "\n  transformer-small "), "%s", out);
    /* preset names without path or extension; a spec; -V */
    cr_assert_eq(th_capture(out, sizeof out, "%s %s && %s/bin/pipesim predict --model "
                            "transformer:L=24 --topology pcie-8gpu -K 4 -M 32 --batch 128 "
                            "--trace t.json", env, work, pre), 0);
    cr_assert(strstr(out, "step time"), "%s", out);
    cr_assert_eq(th_sh("test -s %s/t.json", work), 0);
    cr_assert_eq(th_sh("%s %s && %s/bin/pipesim predict --model transformer-small --topology "
                       "tpu-v2.json -K 4 -M 8 --batch 64 >/dev/null", env, work, pre), 0);
    char v1[256], v2[256];
    cr_assert_eq(th_capture(v1, sizeof v1, "%s/bin/pipesim -V", pre), 0);
    cr_assert_eq(th_capture(v2, sizeof v2, "%s/bin/pipesim --version", pre), 0);
    cr_assert_str_eq(v1, v2);
    cr_assert(!strncmp(v1, "pipesim ", 8), "%s", v1);
    /* both studies, as committed (the markdown and CSV; plots need gnuplot) */
    cr_assert_eq(th_sh("%s %s && %s/bin/pipesim paper --out-dir paper --quiet", env, work, pre), 0);
    cr_assert_eq(th_sh("%s %s && %s/bin/pipesim reproduce gpipe --out-dir gpipe --quiet", env, work,
                       pre), 0);
    cr_assert_eq(th_sh("%s %s && %s/bin/pipesim reproduce torchgpipe --out-dir tg --quiet", env,
                       work, pre), 0);
    static const char *const md[] = { "table1.md", "table2.md", "table3.md", "partitions.md" };
    for (size_t i = 0; i < sizeof md / sizeof *md; i++) {
        cr_assert_eq(th_sh("cmp -s results/paper/%s %s/paper/%s", md[i], work, md[i]), 0,
                     "%s differs from results/paper", md[i]);
        cr_assert_eq(th_sh("cmp -s %s/paper/%s %s/gpipe/%s", work, md[i], work, md[i]), 0);
    }
    cr_assert_eq(th_sh("cmp -s results/torchgpipe/speed.md %s/tg/speed.md && "
                       "cmp -s results/torchgpipe/speed.csv %s/tg/speed.csv && "
                       "cmp -s results/torchgpipe/amoebanetd-memory.md "
                       "%s/tg/amoebanetd-memory.md && cmp -s results/torchgpipe/"
                       "amoebanetd-memory.csv %s/tg/amoebanetd-memory.csv", work, work, work,
                 work), 0);
    /* the man page and the completion */
    cr_assert_eq(th_sh("test -s %s/share/man/man1/pipesim.1 && "
                       "test -s %s/share/bash-completion/completions/pipesim", pre, pre), 0);
    cr_assert_eq(th_sh("bash -c 'source %s/share/bash-completion/completions/pipesim && "
                       "complete -p pipesim' >/dev/null", pre), 0);
    /* a name it does not ship: exit 5, naming where it looked */
    int st = th_capture(out, sizeof out, "%s %s && %s/bin/pipesim predict --model "
                        "transformer-small --topology pcie-9gpu -K 2 -M 2 --batch 4 2>&1", env,
                        work, pre);
    cr_assert_eq(st, 5, "%s", out);
    snprintf(want, sizeof want, "pcie-9gpu: cannot open: No such file or directory (nor the "
             "name of a bundled topology in %s/share/pipesim/topologies:", pre);
    cr_assert(strstr(out, want), "%s", out);
    /* one data folder: a file missing from the installed tree is an error,
     * not a silent read of the source tree */
    cr_assert_eq(th_sh("rm %s/share/pipesim/gpipe/text/table1.md", pre), 0);
    st = th_capture(out, sizeof out, "%s %s && %s/bin/pipesim paper --out-dir p2 --quiet 2>&1", env,
                    work, pre);
    cr_assert_neq(st, 0, "%s", out);
    cr_assert(strstr(out, "table1.md"), "%s", out);
    /* uninstall: nothing of pipesim left, not even the prefix install made */
    cr_assert_eq(th_sh("sh scripts/install.sh uninstall %s >/dev/null", pre), 0);
    cr_assert_neq(th_sh("test -e %s", pre), 0, "%s left after uninstall", pre);
    /* and a second uninstall says there is nothing to remove */
    cr_assert_eq(th_sh("sh scripts/install.sh uninstall %s 2>/dev/null", pre), 1);
    th_sh("rm -rf %s", d);
}

/* presets reads what is in the data folder: a topology written here shows
 * with its own devices, links and description, and loads by its name. */
Test(install, presets_are_read_from_the_data_folder)
{
    char d[64], out[8192];
    th_tmpdir(d, sizeof d, "presets");
    cr_assert_eq(th_sh("mkdir %s/topologies", d), 0);
    th_put(d, "topologies/my-box.json",
           "{\"name\": \"my-box\", \"comment\": \"Two test accelerators. Not a real machine.\","
           " \"bytes_per_param\": 12, \"devices\": [{\"name\": \"acc\", \"count\": 2, "
           "\"flops\": 1e12, \"memory\": 3e9, \"mem_bandwidth\": 0}], \"links\": [{\"name\": "
           "\"bus\", \"endpoints\": \"*\", \"bandwidth\": 5e9, \"shared\": true}]}");
    char bin[PATH_MAX];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    cr_assert_eq(th_capture(out, sizeof out, "cd /tmp && PIPESIM_DATA=%s %s presets", d, bin), 0,
                 "%s", out);
    char want[1024];
    snprintf(want, sizeof want,
             "data folder: %s ($PIPESIM_DATA)\n\n"
             "topologies (--topology NAME), %s/topologies:\n"
             "  my-box               2 x acc 1.00 TFLOP/s, 2.79 GiB; links: 1 shared 5.00 GB/s. "
             "Two test accelerators.\n\n"
             "profiles: none (no %s/profiles (the data folder is %s: $PIPESIM_DATA; "
             "`pipesim presets` lists what it has))\n\n"
             "model generators (--model SPEC; pipesim gen --help for the keys):\n"
             "  mlp:layers=16,width=1024 16 layers, 16.79 million parameters\n",
             d, d, d, d);
    cr_assert(!strncmp(out, want, strlen(want)), "got:\n%s\nwant:\n%s", out, want);
    cr_assert_eq(th_capture(out, sizeof out, "cd /tmp && PIPESIM_DATA=%s %s predict --model "
                            "mlp:layers=4,width=64 --topology my-box -K 2 -M 2 --batch 4", d,
                            bin), 0, "%s", out);
    cr_assert(strstr(out, "step time"), "%s", out);
    /* a file in the way of a name: the file wins */
    cr_assert_eq(th_sh("cd %s/topologies && PIPESIM_DATA=/nonexistent %s predict --model "
                       "mlp:layers=4,width=64 --topology my-box.json -K 2 -M 2 --batch 4 "
                       ">/dev/null", d, bin), 0);
    th_sh("rm -rf %s", d);
}
