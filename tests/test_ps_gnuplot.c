/* ps_gnuplot: detection, the runner's statuses and messages, with stand-in
 * programs (shell scripts) so no real gnuplot is needed. */
#include "helpers.h"

#include "base/ps_error.h"
#include "base/ps_gnuplot.h"
#include "base/ps_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/pipesim-gp-test-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
    th_sh("rm -rf %s", root);
}

/* root/name, an executable shell script with body. */
static const char *prog(const char *name, const char *body)
{
    static char ring[4][128];
    static int k;
    char *p = ring[k++ % 4];
    snprintf(p, sizeof ring[0], "%s/%s", root, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(p, 0755);
    return p;
}

TestSuite(ps_gnuplot, .init = setup, .fini = teardown, .timeout = 20);

Test(ps_gnuplot, detection_is_a_zero_exit_of_version)
{
    cr_assert_eq(ps_gnuplot_have(prog("ok", "[ \"$1\" = --version ] && echo gnuplot 5.4")), 1);
    cr_assert_eq(ps_gnuplot_have(prog("bad", "exit 1")), 0);
    cr_assert_eq(ps_gnuplot_have("/nonexistent/gnuplot"), 0);
    /* the real one agrees with the shell's lookup */
    int shell = th_sh("gnuplot --version >/dev/null 2>&1") == 0;
    cr_assert_eq(ps_gnuplot_have(NULL), shell);
    cr_assert_eq(ps_gnuplot_require(), shell ? 0 : -PS_EIO);
    if (!shell)
        cr_assert(strstr(ps_errmsg(), "apt-get install " PS_GNUPLOT_PKG), "%s", ps_errmsg());
}

Test(ps_gnuplot, runs_the_script_in_cwd_with_stdout_to_the_descriptor)
{
    char out[128];
    snprintf(out, sizeof out, "%s/out.txt", root);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert(fd >= 0);
    struct ps_gnuplot_cmd c = { .prog = prog("cat", "cat \"$1\"; pwd >&2"), .script = "s.gp",
                                .cwd = root, .out_fd = fd, .what = out };
    FILE *s = fopen(prog("s.gp", "plot x"), "r");
    fclose(s);
    cr_assert_eq(ps_gnuplot_run(&c), 0, "%s", ps_errmsg());
    close(fd);
    char *text = NULL;
    size_t n = 0;
    cr_assert_eq(ps_read_file(out, &text, &n), 0);
    cr_assert_str_eq(text, "#!/bin/sh\nplot x\n");
    free(text);
    cr_assert(strstr(c.errline, "pipesim-gp-test-"), "stderr kept: '%s'", c.errline);
}

Test(ps_gnuplot, a_failure_quotes_its_status_and_first_stderr_line)
{
    struct ps_gnuplot_cmd c = { .prog = prog("fail", "echo 'line 1: broken' >&2; echo two >&2; "
                                                     "exit 3"),
                                .script = "x.gp", .out_fd = 1, .what = "fig.png" };
    cr_assert_eq(ps_gnuplot_run(&c), -PS_EIO);
    cr_assert_str_eq(ps_errmsg(), "fig.png: gnuplot failed (status 3): line 1: broken");
    c.prog = prog("kill", "kill -9 $$");
    cr_assert_eq(ps_gnuplot_run(&c), -PS_EIO);
    cr_assert_str_eq(ps_errmsg(), "fig.png: gnuplot failed (status 137)");
}

Test(ps_gnuplot, a_missing_program_or_folder_is_named)
{
    struct ps_gnuplot_cmd c = { .prog = "/nonexistent/gnuplot", .script = "x.gp", .out_fd = 1,
                                .what = "fig.png" };
    cr_assert_eq(ps_gnuplot_run(&c), -PS_EIO);
    cr_assert_str_eq(ps_errmsg(), "fig.png: cannot run /nonexistent/gnuplot: No such file or "
                                  "directory (Debian: apt-get install " PS_GNUPLOT_PKG ")");
    c.prog = prog("ok", "exit 0");
    c.cwd = "/nonexistent";
    cr_assert_eq(ps_gnuplot_run(&c), -PS_EIO);
    cr_assert_str_eq(ps_errmsg(), "fig.png: cannot enter /nonexistent: No such file or directory");
}

/* Log-axis ticks: 1-2-5 per decade inside the range, every 1..9 when that
 * gives fewer than 4, nothing for a range a log axis cannot show. */
Test(ps_gnuplot, log_tics_at_1_2_5)
{
    char b[512];
    ps_gnuplot_log_tics(b, sizeof b, "y", 3.4, 1057);
    cr_assert_str_eq(b, "set ytics (\"5\" 5, \"10\" 10, \"20\" 20, \"50\" 50, \"100\" 100, "
                        "\"200\" 200, \"500\" 500, \"1000\" 1000)\n");
    ps_gnuplot_log_tics(b, sizeof b, "x", 80, 120);
    cr_assert_str_eq(b, "set xtics (\"80\" 80, \"90\" 90, \"100\" 100)\n");
    ps_gnuplot_log_tics(b, sizeof b, "y", 0.011, 0.3);
    cr_assert_str_eq(b, "set ytics (\"0.02\" 0.02, \"0.05\" 0.05, \"0.1\" 0.1, \"0.2\" 0.2)\n");
    ps_gnuplot_log_tics(b, sizeof b, "y", 0, 5);
    cr_assert_str_eq(b, "");
    ps_gnuplot_log_tics(b, sizeof b, "y", 5, 5);
    cr_assert_str_eq(b, "");
    ps_gnuplot_log_tics(b, 12, "y", 3.4, 1057); /* truncated, still a string */
    cr_assert_str_eq(b, "set ytics (");
}

/* gnuplot exits 0 when its writes fail (a full disk): a PNG without its IEND chunk or an
 * SVG without </svg> is an error, not a figure (helper-73: cut-off figures replaced whole
 * ones with exit 0); a whole one passes. */
Test(ps_gnuplot, a_figure_cut_short_is_an_error)
{
    char out[128];
    snprintf(out, sizeof out, "%s/fig.png", root);
    static const char *const bodies[] = {
        "printf '\\211PNG\\r\\n\\032\\n0000IHDR'",                      /* cut short */
        "printf '\\211PNG\\r\\n\\032\\n0000IEND\\256\\102\\140\\202'",  /* whole */
        "printf '<?xml version=\"1.0\"?>\\n<svg>\\n<g>'",                /* cut short */
        "printf '<?xml version=\"1.0\"?>\\n<svg>\\n</svg>\\n'",          /* whole */
    };
    for (int i = 0; i < 4; i++) {
        int fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0644);
        cr_assert(fd >= 0);
        char name[16];
        snprintf(name, sizeof name, "gp%d", i);
        struct ps_gnuplot_cmd c = { .prog = prog(name, bodies[i]), .script = "s.gp",
                                    .cwd = root, .out_fd = fd, .what = out };
        FILE *s = fopen(prog("s.gp", "plot x"), "r");
        fclose(s);
        int rc = ps_gnuplot_run(&c);
        close(fd);
        if (i % 2 == 0) {
            cr_expect_eq(rc, -PS_EIO, "case %d", i);
            cr_expect(strstr(ps_errmsg(), "gnuplot's output is cut short"), "%s", ps_errmsg());
        } else {
            cr_expect_eq(rc, 0, "case %d: %s", i, ps_errmsg());
        }
    }
}
