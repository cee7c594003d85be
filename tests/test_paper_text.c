/* stu_tmpl: the prose templates of `pipesim paper` (studies/gpipe/text/):
 * sections and placeholders filled byte for byte, and every malformed file
 * one PS_EPARSE error naming file:line and the name, exit status 3 from the
 * CLI with nothing written. Run from the repository root (make check-unit). */
#include "helpers.h"

#include "studies/stu_tmpl.h"

static char dir[64];

static void mk(void)
{
    snprintf(dir, sizeof dir, "/tmp/pipesim-tmpl-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void rm(void) { th_sh("rm -rf %s", dir); }

TestSuite(paper_text, .init = mk, .fini = rm);

static const struct stu_tmpl_sect spec[] = {
    { "intro", "" },
    { "body", "n what" },
    { "cond", "n" },
};

static void write_t(const char *text)
{
    char p[128];
    snprintf(p, sizeof p, "%s/t.md", dir);
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

/* Fills section s of the loaded template into a string. */
static char *put(const stu_tmpl *t, const char *s, const struct stu_vals *v)
{
    char *out = NULL;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    cr_assert(f);
    stu_tmpl_put(f, t, s, v);
    fclose(f);
    return out;
}

Test(paper_text, sections_and_placeholders_fill_byte_for_byte)
{
    write_t("preamble, not output {{nothing}}\n"
          "@@ intro\nFirst paragraph.\n\n"
          "@@ body\n{{n}} cells{{what}}. {{n}} again\n\n\n"
          "@@ cond\n: over the bound ({{n}})\n");
    stu_tmpl *t;
    cr_assert_eq(stu_tmpl_load(dir, "t.md", spec, 3, &t), 0, "%s", ps_errmsg());
    char *s = put(t, "intro", NULL);
    cr_expect_str_eq(s, "First paragraph.\n\n");
    free(s);
    struct stu_vals sub, v;
    stu_vals_init(&sub);
    stu_vals_set(&sub, "n", "%.1f", 2.25);
    stu_vals_init(&v);
    stu_vals_set(&v, "n", "%d", 7);
    stu_vals_text(&v, "what", t, "cond", &sub); /* without its final newline */
    s = put(t, "body", &v);
    cr_expect_str_eq(s, "7 cells: over the bound (2.2). 7 again\n\n\n");
    free(s);
    stu_vals_set(&v, "what", "%s", ""); /* the condition false: the last value counts */
    s = put(t, "body", &v);
    cr_expect_str_eq(s, "7 cells. 7 again\n\n\n");
    free(s);
    stu_tmpl_free(t);
}

Test(paper_text, last_section_runs_to_the_end_of_the_file)
{
    write_t("@@ cond\nno newline at the end {{n}}");
    static const struct stu_tmpl_sect one[] = { { "cond", "n" } };
    stu_tmpl *t;
    cr_assert_eq(stu_tmpl_load(dir, "t.md", one, 1, &t), 0, "%s", ps_errmsg());
    struct stu_vals v;
    stu_vals_init(&v);
    stu_vals_set(&v, "n", "x");
    char *s = put(t, "cond", &v);
    cr_expect_str_eq(s, "no newline at the end x");
    free(s);
    stu_tmpl_free(t);
}

static void expect_load_error(const char *text, const char *what)
{
    write_t(text);
    stu_tmpl *t = (stu_tmpl *)1;
    cr_assert_eq(stu_tmpl_load(dir, "t.md", spec, 3, &t), -PS_EPARSE, "loaded: %s", text);
    cr_expect_null(t);
    cr_expect(strstr(ps_errmsg(), what), "'%s' not in: %s", what, ps_errmsg());
    char want[128];
    snprintf(want, sizeof want, "%s/t.md:", dir);
    cr_expect(strstr(ps_errmsg(), want) == ps_errmsg(), "no file name: %s", ps_errmsg());
}

#define GOOD_TAIL "@@ cond\nx\n"

Test(paper_text, load_errors_name_file_line_and_name)
{
    expect_load_error("@@ intro\na\n@@ body\nb {{count}} c\n" GOOD_TAIL,
                      "t.md:4: unknown placeholder '{{count}}' in section 'body'");
    expect_load_error("@@ intro\n{{n}}\n@@ body\n" GOOD_TAIL,
                      "t.md:2: unknown placeholder '{{n}}' in section 'intro'");
    expect_load_error("@@ intro\na\n@@ body\nb {{n} c\n}}\n" GOOD_TAIL,
                      "t.md:4: unterminated '{{' in section 'body'");
    expect_load_error("@@ intro\na\n" GOOD_TAIL "\n", "t.md:5: missing section 'body'");
    expect_load_error("@@ intro\n@@ body\n@@ extra\n" GOOD_TAIL, "t.md:3: unknown section 'extra'");
    expect_load_error("@@ intro\n@@ body\n@@ intro\n" GOOD_TAIL,
                      "t.md:3: a second section 'intro' (the first is on line 1)");
    expect_load_error("@@ intro\n@@body\n" GOOD_TAIL, "t.md:2: malformed section line '@@body'");
    expect_load_error("@@ intro\n@@ Body\n" GOOD_TAIL, "t.md:2: malformed section line '@@ Body'");
}

/* The shipped templates through the CLI: each error is one line on stderr,
 * exit status 3, and no output folder. */
static void expect_cli_error(const char *sed, const char *what)
{
    cr_assert_eq(th_sh("rm -rf %s/data && mkdir %s/data && cp -r studies/gpipe/* %s/data/ && "
                       "sed -i '%s' %s/data/text/table1.md", dir, dir, dir, sed, dir), 0);
    cr_assert_eq(th_sh("%s paper --data %s/data --out-dir %s/out --tables 2 --no-plots --quiet "
                       "2>%s/err", th_pipesim(), dir, dir, dir), 3, "%s", sed);
    cr_expect_eq(th_sh("test $(wc -l < %s/err) -eq 1", dir), 0, "not one line");
    cr_expect_eq(th_sh("grep -qF \"%s\" %s/err", what, dir), 0, "'%s' not on stderr", what);
    cr_expect_eq(th_sh("test ! -e %s/out", dir), 0, "%s/out written", dir);
}

/* The line of studies/gpipe/text/table1.md holding s (1-based), and the
 * number of lines. */
static int line_of(const char *s, int *lines)
{
    FILE *f = fopen("studies/gpipe/text/table1.md", "r");
    cr_assert(f);
    char buf[8192];
    int n = 0, at = 0;
    while (fgets(buf, sizeof buf, f))
        if (++n && !at && strstr(buf, s))
            at = n;
    fclose(f);
    *lines = n;
    cr_assert(at, "'%s' not in table1.md", s);
    return at;
}

Test(paper_text, cli_errors_exit_3_and_write_nothing)
{
    int lines, at = line_of("{{b_images}}", &lines);
    char want[160];
    snprintf(want, sizeof want, "text/table1.md:%d: unknown placeholder '{{b_pictures}}' in "
             "section 'notes'", at);
    expect_cli_error("s/{{b_images}}/{{b_pictures}}/", want);
    snprintf(want, sizeof want, "text/table1.md:%d: unterminated '{{' in section 'notes'", at);
    expect_cli_error("s/{{b_images}}/{{b_images/", want);
    snprintf(want, sizeof want, "text/table1.md:%d: missing section 'deviations'", lines - 1);
    expect_cli_error("/^@@ deviations$/d", want);
}

/* The sections chosen by a condition: with the paper's Table 3 values (as
 * committed), table3.md has the deviations table with its notes and
 * table3.gp the paper's lines, inserted into the plot command; with NA in
 * place of the values, the "none" line, the paragraph saying the values are
 * missing, and a label on the figure saying why it has no reference points. */
Test(paper_text, conditional_sections_follow_the_data)
{
    cr_expect_eq(th_sh("grep -qxF '| model | K | paper | bound | predicted | error | note |' "
                       "results/paper/table3.md"), 0);
    cr_expect_eq(th_sh("grep -qF '**L. Load imbalance.**' results/paper/table3.md"), 0);
    cr_expect_neq(th_sh("grep -qF 'None can be computed' results/paper/table3.md"), 0);
    cr_expect_neq(th_sh("grep -qF 'values are not in' results/paper/table3.md"), 0);
    cr_expect_eq(th_sh("grep -qF 'title \"Transformer-24\", \\' results/paper/table3.gp && "
                       "tail -1 results/paper/table3.gp | grep -qF 'title \"Transformer paper\"'"),
                 0);
    cr_expect_neq(th_sh("grep -qF 'no reference points' results/paper/table3.gp"), 0);
    /* the same data with every value NA */
    cr_assert_eq(th_sh("mkdir %s/data && cp -r studies/gpipe/* %s/data/ && "
                       "sed -i -E 's/^(AmoebaNet-D|Transformer),32,([248]),.*$/\\1,32,\\2,NA/' "
                       "%s/data/reference/table3.csv && "
                       "test $(grep -c ',NA$' %s/data/reference/table3.csv) -eq 6", dir, dir, dir,
                       dir), 0);
    cr_assert_eq(th_sh("%s paper --data %s/data --out-dir %s/out --tables 3 --no-plots --quiet",
                       th_pipesim(), dir, dir), 0);
    cr_expect_eq(th_sh("grep -qF 'None can be computed' %s/out/table3.md", dir), 0);
    cr_expect_eq(th_sh("grep -qF 'values are not in' %s/out/table3.md", dir), 0);
    cr_expect_neq(th_sh("grep -qF '| model | K | paper |' %s/out/table3.md", dir), 0);
    cr_expect_neq(th_sh("grep -qF 'Load imbalance.**' %s/out/table3.md", dir), 0);
    cr_expect_eq(th_sh("grep -qF 'set label 1 \"no reference points' %s/out/table3.gp", dir), 0);
}
