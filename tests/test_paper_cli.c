/* `pipesim paper` end to end: it must reproduce the committed results/paper/
 * byte for byte, write only what --tables asks for, and fail cleanly on bad
 * input. Run from the repository root with PIPESIM set (make check-unit). */
#include "helpers.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void mk(void)
{
    th_tmpdir(dir, sizeof dir, "paper");
}

static void rm(void) { th_sh("rm -rf %s", dir); }

static int has_gnuplot(void) { return th_sh("command -v gnuplot >/dev/null 2>&1") == 0; }

/* Every generated text file equals the committed reference byte for byte,
 * and every committed one is generated. */
TestSuite(paper_cli, .init = mk, .fini = rm, .timeout = 60);

Test(paper_cli, reproduces_results_byte_for_byte)
{
    cr_assert_eq(th_sh("%s paper --out-dir %s --quiet", th_pipesim(), dir), 0);
    static const char *const text[] = { "table1.md", "table2.md", "table3.md", "partitions.md",
                                        "table2.dat", "table2.gp", "table3.dat", "table3.gp" };
    for (size_t i = 0; i < sizeof text / sizeof *text; i++)
        cr_expect_eq(th_sh("cmp -s %s/%s results/paper/%s", dir, text[i], text[i]), 0,
                     "%s differs from results/paper/%s: rerun `pipesim paper` and commit",
                     text[i], text[i]);
    /* the plots when gnuplot is there (paper_cli::plots_are_pngs) */
    cr_assert_eq(th_entries(dir), 8 + 2 * has_gnuplot(), "unexpected files in %s", dir);
    /* And the reference holds nothing the generator does not make (besides
     * the README section and the committed plots). */
    cr_assert_eq(th_sh("cd results/paper && for f in *; do case $f in README-section.md|*.png) "
                       ";; *) test -e %s/$f || exit 1;; esac; done", dir), 0,
                 "results/paper has a file `pipesim paper` does not write");
}

/* PNG bytes depend on the gnuplot build: only the signature is checked. */
Test(paper_cli, plots_are_pngs)
{
    if (!has_gnuplot())
        cr_skip_test("gnuplot is not installed: table2.png and table3.png not checked "
                     "(apt-get install gnuplot-nox; `make test` installs it)");
    cr_assert_eq(th_sh("%s paper --out-dir %s --tables 2,3 --quiet", th_pipesim(), dir), 0);
    for (int i = 0; i < 2; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/table%d.png", dir, i + 2);
        th_png_width(p);
    }
}

Test(paper_cli, subset_writes_only_its_files)
{
    cr_assert_eq(th_sh("%s paper --out-dir %s --tables 1,partitions --quiet", th_pipesim(), dir), 0);
    cr_assert_eq(th_entries(dir), 2);
    cr_assert_eq(th_sh("cmp -s %s/table1.md results/paper/table1.md", dir), 0);
    cr_assert_eq(th_sh("cmp -s %s/partitions.md results/paper/partitions.md", dir), 0);
}

Test(paper_cli, bad_input)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("%s paper --out-dir %s --tables 1,9 2>%s/err", pp, dir, dir), 2);
    cr_assert_eq(th_sh("grep -q \"unknown item '9'\" %s/err", dir), 0);
    cr_assert_eq(th_sh("%s paper --bogus 2>/dev/null", pp), 2);
    cr_assert_eq(th_sh("%s paper extra 2>/dev/null", pp), 2);
    cr_assert_eq(th_sh("%s paper --out-dir 2>/dev/null", pp), 2);
    /* A missing topology names the file; nothing is written. */
    cr_assert_eq(th_sh("mkdir %s/out && %s paper --out-dir %s/out --topologies %s/none 2>%s/err",
                       dir, pp, dir, dir, dir), 5);
    cr_assert_eq(th_sh("grep -q 'tpu-v2.json' %s/err", dir), 0);
    char out[128];
    snprintf(out, sizeof out, "%s/out", dir);
    cr_assert_eq(th_entries(out), 0);
    /* --out-dir on a file. */
    cr_assert_eq(th_sh("touch %s/file && %s paper --out-dir %s/file --tables 1 2>/dev/null", dir, pp,
                       dir), 5);
    cr_assert_eq(th_sh("%s paper --help | grep -q 'usage: pipesim paper'", pp), 0);
}
