/* The documentation-example check (scripts/doc-examples.sh) on small
 * markdown files of its own: a block whose output drifted fails with a diff
 * and the way to update; --update rewrites that block and nothing else; a
 * failing command fails (and --update leaves its block alone); a "$ " line
 * outside a console block needs the illustrative marker; a block's
 * commands share a scratch directory outside the tree. The real documents
 * are checked by `make check`'s doc-examples part. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static char out[65536];

static void mk(void) { th_tmpdir(dir, sizeof dir, "docex"); }
static void rm(void) { th_sh("rm -rf %s", dir); }

/* Runs the check (with extra options) on dir/a.md; its output in out. */
static int check(const char *opts)
{
    return th_capture(out, sizeof out, "sh scripts/doc-examples.sh %s --bin %s %s/a.md 2>&1",
                      opts, th_pipesim(), dir);
}

#define CMD "$ pipesim predict --model mlp:layers=8,width=256 \\\n" \
            "    --topology models/topologies/chain-8-ideal.json -K 2 -M 4 --batch 32 | head -2\n"
#define GOOD "model           mlp:layers=8,width=256,norm=0: 8 layers, 526.34 thousand " \
             "parameters\n" \
             "schedule        gpipe, K=2, M=4, batch 32 (micro-batch 8), remat except_last\n"

Test(docexamples, a_matching_block_passes, .init = mk, .fini = rm)
{
    th_put(dir, "a.md", "# t\n\n```console\n" CMD GOOD "```\n");
    cr_assert_eq(check(""), 0, "%s", out);
    cr_assert(strstr(out, "1 examples match"), "%s", out);
}

Test(docexamples, drift_fails_with_a_diff_and_update_rewrites_only_that_block, .init = mk,
     .fini = rm)
{
    const char *before = "# t\n\ntext `$ x`\n\n```sh\nmake\n```\n\n```console\n";
    const char *after = "```\n\nmore text\n\n```console\n$ echo kept\nkept\n```\ntail\n";
    char doc[4096], want[4096], got[4096];
    snprintf(doc, sizeof doc, "%s%s%s%s", before, CMD,
             "schedule        gpipe, K=2, M=4, batch 32 (micro-batch 8), remat never\n", after);
    th_put(dir, "a.md", doc);
    cr_assert_eq(check(""), 1, "%s", out);
    cr_assert(strstr(out, "a.md:9: the example's output differs"), "%s", out);
    cr_assert(strstr(out, "-schedule        gpipe, K=2, M=4, batch 32 (micro-batch 8), remat never"),
              "%s", out);
    cr_assert(strstr(out, "+schedule        gpipe, K=2, M=4, batch 32 (micro-batch 8), remat except_last"),
              "%s", out);
    cr_assert(strstr(out, "+model           mlp:layers=8,width=256"), "%s", out);
    cr_assert(strstr(out, "doc-examples.sh --update"), "%s", out);
    cr_assert(strstr(out, "1 of 2 examples differ"), "%s", out);

    cr_assert_eq(check("--update"), 0, "%s", out);
    cr_assert(strstr(out, "a.md:9: updated"), "%s", out);
    th_slurp(dir, "a.md", got, sizeof got);
    snprintf(want, sizeof want, "%s%s%s%s", before, CMD, GOOD, after);
    cr_assert_str_eq(got, want);
    cr_assert_eq(check(""), 0, "%s", out);
    cr_assert_eq(th_sh("ls -a %s | grep -q doc-examples", dir), 1, "a temporary was left");
}

Test(docexamples, a_failing_command_fails_and_update_leaves_its_block, .init = mk, .fini = rm)
{
    const char *doc = "```console\n$ pipesim predict -M 0\nold\n```\n";
    char got[1024];
    th_put(dir, "a.md", doc);
    cr_assert_eq(check(""), 1, "%s", out);
    cr_assert(strstr(out, "a.md:1: example command failed (exit 2): $ pipesim predict -M 0"), "%s",
              out);
    cr_assert(strstr(out, "|| echo \"exit status $?\""), "%s", out);
    cr_assert_eq(check("--update"), 1, "%s", out);
    th_slurp(dir, "a.md", got, sizeof got);
    cr_assert_str_eq(got, doc);
}

Test(docexamples, an_error_shown_on_purpose_is_compared, .init = mk, .fini = rm)
{
    th_put(dir, "a.md",
           "```console\n$ pipesim predict -M 0 || echo \"exit status $?\"\n"
           "pipesim predict: -M: 0 is out of range [1, 16777216]: must be at least 1\n"
           "exit status 2\n```\n");
    cr_assert_eq(check(""), 0, "%s", out);
}

Test(docexamples, a_dollar_line_outside_a_console_block_needs_the_marker, .init = mk, .fini = rm)
{
    th_put(dir, "a.md", "```text\n$ pipesim validate --net mlp:layers=2,width=4\n step 1\n```\n");
    cr_assert_eq(check(""), 2, "%s", out);
    cr_assert(strstr(out, "a.md:2: a \"$ \" example outside a ```console block"), "%s", out);
    th_put(dir, "a.md", "<!-- illustrative: timings -->\n```text\n$ pipesim validate\n```\n");
    cr_assert_eq(check(""), 0, "%s", out);
    cr_assert(strstr(out, "0 examples match"), "%s", out);
    /* A longer fence may show a console block as text. */
    th_put(dir, "a.md", "<!-- illustrative: syntax -->\n````markdown\n```console\n$ pipesim x\n"
                        "```\n````\n");
    cr_assert_eq(check(""), 0, "%s", out);
}

Test(docexamples, malformed_blocks_are_usage_errors, .init = mk, .fini = rm)
{
    th_put(dir, "a.md", "```console\noutput before any command\n```\n");
    cr_assert_eq(check(""), 2, "%s", out);
    cr_assert(strstr(out, "a.md:2: console block must start with a \"$ \" command"), "%s", out);
    th_put(dir, "a.md", "```console\n$ echo x\nx\n");
    cr_assert_eq(check(""), 2, "%s", out);
    cr_assert(strstr(out, "a.md:1: unclosed fence"), "%s", out);
}

Test(docexamples, commands_of_a_block_share_a_scratch_directory_outside_the_tree, .init = mk,
     .fini = rm)
{
    th_put(dir, "a.md",
           "```console\n$ pipesim gen chain -n 2 -o docex-chain.json\n"
           "$ grep -c '\"name\": \"dev' docex-chain.json && test -f models/topologies/cpu-2core.json "
           "&& echo \"$LC_ALL $TZ ${PIPESIM_MEMORY_LIMIT-unset}\"\n2\nC UTC unset\n```\n");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "PIPESIM_MEMORY_LIMIT=1G sh scripts/doc-examples.sh --bin %s %s/a.md",
             th_pipesim(), dir);
    cr_assert_eq(th_capture(out, sizeof out, "%s 2>&1", cmd), 0, "%s", out);
    cr_assert_neq(access("docex-chain.json", F_OK), 0, "the example wrote into the tree");
    cr_assert_eq(th_entries(dir), 1, "the example wrote beside the document");
}

/* docs/testing.md shows the form of an example inside a ````markdown block,
 * which the check skips: that inner block is run here, so it cannot drift. */
Test(docexamples, the_form_shown_in_testing_md_is_a_real_example, .init = mk, .fini = rm)
{
    cr_assert_eq(th_sh("awk '/^````markdown$/ { on = 1; next } on && /^````$/ { exit } on' "
                       "docs/testing.md > %s/a.md && grep -q '^```console$' %s/a.md", dir, dir),
                 0, "no ````markdown block with a console example in docs/testing.md");
    cr_assert_eq(check(""), 0, "%s", out);
    cr_assert(strstr(out, "1 examples match"), "%s", out);
}
