/* Leak checks of the Criterion test binaries (`make asan`, `make alloc`):
 * tests/lsan.supp and tests/lsan_runner.h, on a small Criterion program
 * built with -fsanitize=address and run under the Makefile's LSAN_OPTIONS.
 * A leak planted in a test body is still reported (a suppression naming
 * the library, or any frame every test runs under, hides it); the runner's
 * own leak (timed suites, --jobs 2) is not. */
#include "helpers.h"

#include <unistd.h>

static char dir[64];
static char out[65536];

static const char prog[] =
    "#include <criterion/criterion.h>\n"
    "#include <stdlib.h>\n"
    "#include \"tests/lsan_runner.h\"\n"
    "void *volatile keep;\n"
    "__attribute__((noinline)) void planted_leak(void)\n"
    "{\n"
    "    keep = malloc(1234);\n"
    "    keep = NULL;\n"
    "}\n"
    "Test(planted, leaks) { planted_leak(); }\n"
    /* what makes Criterion 2.4's runner leak (in most runs): timed suites,
     * and tests with timeouts of their own */
    "TestSuite(a, .timeout = 30);\n"
    "TestSuite(b, .timeout = 30);\n"
    "Test(a, x) { cr_assert(1); }\n"
    "Test(a, y) { cr_assert(1); }\n"
    "Test(b, x) { cr_assert(1); }\n"
    "Test(b, y) { cr_assert(1); }\n"
    "Test(c, x, .timeout = 10) { cr_assert(1); }\n"
    "Test(c, y, .timeout = 10) { cr_assert(1); }\n";

static void build(void)
{
    th_tmpdir(dir, sizeof dir, "lsan");
    th_put(dir, "p.c", prog);
    /* the compiler's own ASan, whatever the variant of this suite */
    char log[1024], cwd[512];
    cr_assert(getcwd(cwd, sizeof cwd));
    if (th_capture(log, sizeof log, "cd %s && ${CC:-cc} -g -O0 -fsanitize=address "
                   "-fno-omit-frame-pointer -I%s p.c -o p $(pkg-config --cflags --libs "
                   "criterion 2>/dev/null || echo -lcriterion) 2>&1 && env -u BXFI_MAP "
                   "ASAN_OPTIONS=detect_leaks=0 ./p --filter 'a/x' 2>&1", dir, cwd))
        cr_skip_test("the compiler cannot build and run a Criterion program with "
                     "-fsanitize=address: %.300s", log);
}

static void rm(void) { th_sh("rm -rf %s", dir); }

TestSuite(lsan_supp, .init = build, .fini = rm, .timeout = 60);

/* Runs ./p with Criterion's args under the Makefile's LSAN_OPTIONS (its
 * `export LSAN_OPTIONS` line);
 * its output in out. BXFI_MAP, set in this suite's own worker, would make
 * ./p a worker too. */
static void run(const char *args)
{
    char cwd[512], opts[1024];
    cr_assert(getcwd(cwd, sizeof cwd));
    cr_assert_eq(th_capture(opts, sizeof opts, "sed -n 's/^export LSAN_OPTIONS := //p' "
                            "Makefile"), 0);
    opts[strcspn(opts, "\n")] = 0;
    const char *cd = strstr(opts, "$(CURDIR)");
    cr_assert(cd && strstr(opts, "tests/lsan.supp"), "Makefile: LSAN_OPTIONS '%s'", opts);
    th_capture(out, sizeof out, "cd %s && env -u ASAN_OPTIONS -u BXFI_MAP "
               "LSAN_OPTIONS='%.*s%s%s' ./p %s 2>&1", dir, (int)(cd - opts), opts, cwd,
               cd + strlen("$(CURDIR)"), args);
}

Test(lsan_supp, a_leak_in_a_test_body_is_still_reported)
{
    run("--filter 'planted/*'");
    cr_assert(strstr(out, "ERROR: LeakSanitizer: detected memory leaks"), "%s", out);
    cr_assert(strstr(out, "Direct leak of 1234 byte(s) in 1 object(s)"), "%s", out);
    cr_assert(strstr(out, "in planted_leak"), "%s", out);
}

/* The runner's 48 bytes come in most runs (without tests/lsan_runner.h, 7
 * of 8 here): six runs. */
Test(lsan_supp, the_runners_own_leak_is_not_reported)
{
    for (int i = 0; i < 6; i++) {
        run("--filter '[abc]/*' --jobs 2");
        cr_assert(strstr(out, "Tested: 6 | Passing: 6"), "%s", out);
        cr_assert(!strstr(out, "LeakSanitizer"), "run %d: %s", i, out);
    }
}
