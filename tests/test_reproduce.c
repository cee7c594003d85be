/* `pipesim reproduce gpipe|torchgpipe` and the torchgpipe study: the
 * reference loader's errors (file:line:column and the field), the
 * command's usage errors, `paper` == `reproduce gpipe` byte for byte, and
 * the study writing its two files, the same on a rerun, and nothing on bad
 * input. The predicted figures are only checked for sanity (finite, > 0):
 * they change when the device, memory and link models change. Run from the
 * repository root with PIPESIM set (make check-unit). */
#include "helpers.h"
#include "studies/stu_torchgpipe.h"
#include "base/ps_error.h"

#include <math.h>

static char dir[64];

static void mk(void) { th_tmpdir(dir, sizeof dir, "repro"); }
static void rm(void) { th_sh("rm -rf %s", dir); }

TestSuite(reproduce, .init = mk, .fini = rm, .timeout = 60);

#define HEADER "experiment,n,m,batch,balance,checkpoint,samples_per_s,speedup\n"
#define BASE "n2m1,2,1,96,7 17,always,26.733,1\n"
#define ROW2 "n2m4,2,4,256,9 15,except_last,41.133,1.539\n"

/* dir/data: the study's templates and references, speed.csv holding `csv`. */
static void data(const char *csv)
{
    cr_assert_eq(th_sh("mkdir -p %s/data && cp -r studies/torchgpipe/text "
                       "studies/torchgpipe/reference %s/data/", dir, dir), 0);
    char ref[128];
    snprintf(ref, sizeof ref, "%s/data/reference", dir);
    th_put(ref, "speed.csv", csv);
}

/* Loads csv; expects the error message to contain want (and exit code 3). */
static void load_fails(const char *csv, const char *want)
{
    data(csv);
    char ref[128];
    snprintf(ref, sizeof ref, "%s/data/reference", dir);
    struct stu_tg_ref r;
    int rc = stu_tg_ref_load(ref, &stu_tg_bench[0], &r);
    cr_assert_eq(rc, -PS_EPARSE, "accepted: %s", csv);
    cr_assert_eq(ps_exit_status(rc), 3);
    cr_expect(strstr(ps_errmsg(), want), "message '%s' lacks '%s'", ps_errmsg(), want);
}

Test(reproduce, reference_loads_and_checks)
{
    struct stu_tg_ref r;
    cr_assert_eq(stu_tg_ref_load("studies/torchgpipe/reference", &stu_tg_bench[0], &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r.n_rows, 9);
    cr_assert_eq(r.row[r.base].n, 2);
    cr_assert_eq(r.row[r.base].m, 1);
    data("# a comment\n\n" HEADER BASE ROW2);
    char ref[128];
    snprintf(ref, sizeof ref, "%s/data/reference", dir);
    cr_assert_eq(stu_tg_ref_load(ref, &stu_tg_bench[0], &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r.n_rows, 2);
    cr_assert_str_eq(r.row[1].balance, "9,15");
    cr_assert_eq(r.row[1].remat, SCH_REMAT_EXCEPT_LAST);
    cr_assert_eq(r.row[1].line, 5);
}

Test(reproduce, reference_errors_name_file_line_column_and_field)
{
    load_fails("experiment,n,m,batch,balance,checkpoint,samples_per_s,speedup,foo\n" BASE,
               "speed.csv:1:63: unknown column 'foo'");
    load_fails("experiment,n,m,batch,balance,checkpoint,samples_per_s\n" BASE,
               "speed.csv:1: missing column 'speedup'");
    load_fails(HEADER "n2m1,2,1,96,7 17,always,abc,1\n", "speed.csv:2:25: field 'samples_per_s'");
    load_fails(HEADER "n2m1,2,1,96,7 17,always,-1,1\n", "speed.csv:2:25: field 'samples_per_s'");
    load_fails(HEADER "n2m1,2,1,96,7 17,always,0,1\n", "speed.csv:2:25: field 'samples_per_s'");
    load_fails(HEADER BASE "n2m4,2,4,3,9 15,except_last,41.133,1.539\n",
               "speed.csv:3:10: field 'batch': 3 is smaller than m = 4");
    load_fails(HEADER "n2m1,2,1,96,24,always,26.733,1\n",
               "speed.csv:2:13: field 'balance': 1 layer counts for n = 2");
    load_fails(HEADER BASE "n2m4,2,4,256,9 16,except_last,41.133,1.539\n",
               "speed.csv:3:14: field 'balance': 25 layers, but line 2's has 24 (every row "
               "cuts the same model)");
    load_fails(HEADER "n2m1,2,1,96,7 x,always,26.733,1\n",
               "speed.csv:2:13: field 'balance': 'x' is not a positive layer count");
    load_fails(HEADER "n2m2,2,1,96,7 17,always,26.733,1\n",
               "speed.csv:2:1: field 'experiment': 'n2m2' is not n2m1");
    load_fails(HEADER "n2m1,2,1,96,7 17,sometimes,26.733,1\n",
               "speed.csv:2:18: field 'checkpoint': 'sometimes' is not one of always, "
               "except_last, never");
    load_fails(HEADER "n2m1,2.5,1,96,7 17,always,26.733,1\n", "speed.csv:2:6: field 'n'");
    load_fails(HEADER "n2m1,,1,96,7 17,always,26.733,1\n", "speed.csv:2: field 'n' is missing");
    load_fails(HEADER BASE BASE, "speed.csv:3: a second row for n2m1 (n = 2, m = 1; line 2)");
    load_fails(HEADER ROW2, "no row n2m1 (the speed-ups' baseline)");
    load_fails(HEADER BASE "n2m4,2,4,256,9 15,except_last,41.133,1.6\n",
               "speed.csv:3: field 'speedup': 1.6 is not this row's samples_per_s (41.133) over "
               "the n2m1 row's (26.733, line 2): 1.539");
    load_fails("# only a comment\n" HEADER, "speed.csv:2: no rows");
    load_fails("# nothing\n", "speed.csv: no header");
    load_fails(HEADER BASE "n2m4,2,4,256,9 15,except_last,41.133,1.539,7\n",
               "speed.csv:3:44: 9 fields, the header has 8");
}

Test(reproduce, resnet101_reference_names_its_rows_as_main_py)
{
    struct stu_tg_ref r;
    const struct stu_tg_bench *b = &stu_tg_bench[1];
    cr_assert_eq(stu_tg_ref_load("studies/torchgpipe/reference", b, &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r.n_rows, 5);
    cr_assert_str_eq(r.row[r.base].exp, "baseline");
    cr_assert_eq(r.row[r.base].remat, SCH_REMAT_NEVER);
    cr_assert_str_eq(r.row[2].exp, "pipeline-2");
    cr_assert_eq(r.row[2].m, 1667);
    cr_assert_eq(r.row[2].batch, 25000);
    th_sh("mkdir -p %s/rn", dir);
    char rn[128];
    snprintf(rn, sizeof rn, "%s/rn", dir);
    /* n = 1, m = 1 with checkpointing is GPipe on one device: pipeline-1. */
    th_put(rn, "resnet101-speed.csv", HEADER "baseline,1,1,118,370,except_last,95.862,1\n");
    cr_assert_eq(stu_tg_ref_load(rn, b, &r), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), "resnet101-speed.csv:2:1: field 'experiment': 'baseline' is "
                     "not pipeline-1"), "%s", ps_errmsg());
    th_put(rn, "resnet101-speed.csv", HEADER "pipeline-2,2,4,96,100 270,except_last,9,1\n");
    cr_assert_eq(stu_tg_ref_load(rn, b, &r), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), "no row baseline (the speed-ups' baseline)"), "%s",
              ps_errmsg());
}

Test(reproduce, epochs_and_chunks_as_main_py_runs_them)
{
    struct stu_tg_opts o = { .topo_dir = "models/topologies", .bench = &stu_tg_bench[1] };
    struct stu_tg_run *r;
    cr_assert_eq(stu_tg_predict(&o, &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r->n, 5);
    for (int i = 0; i < r->n; i++) {
        const struct stu_tg_cell *c = &r->cell[i];
        const struct stu_tg_row *w = c->ref;
        /* torch.chunk: ceil(batch / m) per chunk, as many as that takes. */
        cr_expect_eq(c->size, (w->batch + w->m - 1) / w->m, "%s", w->exp);
        cr_expect_eq(c->count, (w->batch + c->size - 1) / c->size, "%s", w->exp);
        cr_expect_eq(c->p->M, c->count);
        cr_expect_eq(c->p->batch, c->size * c->count);
        cr_expect_eq(c->n_full, 50000 / w->batch);
        cr_expect_eq(c->last, 50000 % w->batch);
        if (!c->last)
            cr_expect_eq(c->epoch_s, c->n_full * c->p->step_s, "%s", w->exp);
        else
            cr_expect_gt(c->epoch_s, c->n_full * c->p->step_s, "%s", w->exp);
        cr_expect_eq(c->pred, 50000 / c->epoch_s);
    }
    /* pipeline-2: 25 000 in 1667 chunks of 15 (the last has 10: run as 15),
     * two mini-batches an epoch; pipeline-4: 8 of 5632, then 4944 in 248
     * chunks of 20. */
    cr_expect_eq(r->cell[2].count, 1667);
    cr_expect_eq(r->cell[2].size, 15);
    cr_expect_eq(r->cell[2].n_full, 2);
    cr_expect_eq(r->cell[2].last, 0);
    cr_expect_eq(r->cell[3].last, 4944);
    cr_expect_eq(r->cell[3].last_size, 20);
    cr_expect_eq(r->cell[3].last_count, 248);
    stu_tg_run_free(r);
}

Test(reproduce, usage_errors)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("%s reproduce 2>%s/err", pp, dir), 2);
    cr_assert_eq(th_sh("grep -q 'which study? gpipe or torchgpipe' %s/err", dir), 0);
    cr_assert_eq(th_sh("%s reproduce nosuch 2>%s/err", pp, dir), 2);
    cr_assert_eq(th_sh("grep -q \"unknown study 'nosuch'\" %s/err", dir), 0);
    cr_assert_eq(th_sh("%s reproduce torchgpipe --bogus 2>%s/err", pp, dir), 2);
    cr_assert_eq(th_sh("grep -q \"unknown option '--bogus' (see pipesim reproduce torchgpipe "
                       "--help)\" %s/err", dir), 0);
    cr_assert_eq(th_sh("%s reproduce gpipe --bogus 2>%s/err", pp, dir), 2);
    cr_assert_eq(th_sh("grep -q 'see pipesim reproduce gpipe --help' %s/err", dir), 0);
    cr_assert_eq(th_sh("%s reproduce torchgpipe extra 2>/dev/null", pp), 2);
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir 2>/dev/null", pp), 2);
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir '' 2>/dev/null", pp), 2);
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/o --topologies '' 2>/dev/null", pp,
                       dir), 2);
    cr_assert_eq(th_sh("%s reproduce gpipe --tables 9 2>/dev/null", pp), 2);
    /* One line on stderr, naming the command. */
    cr_assert_eq(th_sh("%s reproduce torchgpipe --bogus 2>&1 >/dev/null | wc -l | grep -qx 1",
                       pp), 0);
    cr_assert_eq(th_sh("%s reproduce --help | grep -q 'usage: pipesim reproduce'", pp), 0);
    cr_assert_eq(th_sh("%s reproduce torchgpipe --help | grep -q 'usage: pipesim reproduce "
                       "torchgpipe'", pp), 0);
    cr_assert_eq(th_sh("%s reproduce gpipe --help | grep -q 'usage: pipesim reproduce gpipe'",
                       pp), 0);
    cr_assert_eq(th_sh("%s --help | grep -q reproduce", pp), 0);
    cr_assert_eq(th_entries(dir), 1, "a usage error wrote something"); /* err */
}

Test(reproduce, paper_is_reproduce_gpipe_byte_for_byte)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("%s paper --out-dir %s/a --no-plots --quiet", pp, dir), 0);
    cr_assert_eq(th_sh("%s reproduce gpipe --out-dir %s/b --no-plots --quiet", pp, dir), 0);
    cr_assert_eq(th_sh("diff -r %s/a %s/b >/dev/null", dir, dir), 0,
                 "paper and reproduce gpipe wrote different files");
    char a[128];
    snprintf(a, sizeof a, "%s/a", dir);
    cr_assert_eq(th_entries(a), 8);
    cr_assert_eq(th_sh("%s paper --out-dir %s/c --tables 2 --no-plots --quiet && "
                       "%s reproduce gpipe --out-dir %s/d --tables 2 --no-plots --quiet && "
                       "diff -r %s/c %s/d >/dev/null", pp, dir, pp, dir, dir, dir), 0);
}

Test(reproduce, torchgpipe_writes_its_files_the_same_on_a_rerun)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/a 2>%s/log", pp, dir, dir), 0);
    cr_assert_eq(th_sh("grep -q 'wrote %s/a/speed.md' %s/log", dir, dir), 0);
    char a[128];
    snprintf(a, sizeof a, "%s/a", dir);
    cr_assert_eq(th_entries(a), 10); /* the three speed benchmarks and the two memory ones */
    cr_assert_eq(th_sh("test $(grep -c '^pipeline-[0-9]*,' %s/unet-speed.csv) -eq 4", a), 0);
    cr_assert_eq(th_sh("grep -q '^## Speed-up over baseline' %s/unet-speed.md", a), 0);
    cr_assert_eq(th_sh("head -1 %s/speed.md | grep -q 'Generated by `pipesim reproduce "
                       "torchgpipe`'", a), 0);
    cr_assert_eq(th_sh("grep -q '^## Speed-up over baseline' %s/resnet101-speed.md", a), 0);
    cr_assert_eq(th_sh("test $(grep -c '^pipeline-[0-9]*,' %s/resnet101-speed.csv) -eq 4", a),
                 0);
    cr_assert_eq(th_sh("grep -q '^## Speed-up over n2m1' %s/speed.md", a), 0);
    cr_assert_eq(th_sh("grep -q '^experiment,n,m,batch' %s/speed.csv", a), 0);
    cr_assert_eq(th_sh("test $(grep -c '^n[0-9]*m[0-9]*,' %s/speed.csv) -eq 9", a), 0);
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/b --quiet 2>%s/log && "
                       "test ! -s %s/log && diff -r %s/a %s/b >/dev/null", pp, dir, dir, dir,
                       dir, dir), 0, "a rerun differs, or --quiet logged");
    /* --data and --topologies are honoured. */
    data(HEADER BASE ROW2);
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/c --data %s/data --topologies "
                       "models/topologies --quiet", pp, dir, dir), 0);
    cr_assert_eq(th_sh("test $(grep -c '^n[0-9]*m[0-9]*,' %s/c/speed.csv) -eq 2", dir), 0);
}

/* An --out-dir that holds an input (the study's text/ folder, whose
 * templates share the outputs' names) is refused before anything is
 * written, for both studies. */
Test(reproduce, out_dir_holding_an_input_is_refused)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("mkdir -p %s/g && cp -r studies/gpipe/text studies/gpipe/reference %s/g/ "
                       "&& cp -r %s/g %s/keep", dir, dir, dir, dir), 0);
    cr_assert_eq(th_sh("%s reproduce gpipe --out-dir %s/g/text --data %s/g --no-plots "
                       "2>%s/err", pp, dir, dir, dir), 2);
    cr_assert_eq(th_sh("grep -q \"is the same file as --data '.*/g/text/table1.md'\" %s/err",
                       dir), 0);
    cr_assert_eq(th_sh("diff -r %s/g %s/keep", dir, dir), 0, "an input was touched");
    /* Only the selected tables' outputs count: table 2 alone does not
     * write table1.md. */
    cr_assert_eq(th_sh("%s reproduce gpipe --out-dir %s/g/text --data %s/g --tables 2 "
                       "--no-plots 2>%s/err", pp, dir, dir, dir), 2);
    cr_assert_eq(th_sh("grep -q \"g/text/table2.md'\" %s/err", dir), 0);
    data(HEADER BASE);
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/data/text --data %s/data 2>%s/err",
                       pp, dir, dir, dir), 2);
    cr_assert_eq(th_sh("grep -q 'would overwrite an input' %s/err", dir), 0);
}

Test(reproduce, torchgpipe_predictions_are_sane)
{
    struct stu_tg_opts o = { .topo_dir = "models/topologies" };
    struct stu_tg_run *r;
    cr_assert_eq(stu_tg_predict(&o, &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r->n, 9);
    cr_assert_eq(r->topo->bytes_per_param, STU_TG_BYTES_PER_PARAM);
    for (int i = 0; i < r->n; i++) {
        const struct stu_tg_cell *c = &r->cell[i];
        cr_expect(isfinite(c->pred) && c->pred > 0, "%s: %g samples/s", c->ref->exp, c->pred);
        cr_expect(isfinite(c->ratio_pred) && c->ratio_pred > 0, "%s", c->ref->exp);
        cr_expect_eq(c->p->K, c->ref->n);
        cr_expect_eq(c->p->M, c->ref->m);
        cr_expect_eq(c->p->batch, c->ref->batch);
        cr_expect_eq(c->p->remat, c->ref->remat);
        cr_expect(fabs(c->err - (c->pred / c->meas - 1)) < 1e-12);
    }
    cr_expect_eq(r->cell[r->ref.base].ratio_pred, 1);
    stu_tg_run_free(r);
}

/* Bad input: exit 3 (or the file's status), one message, nothing written. */
static void writes_nothing(const char *csv, int status, const char *want)
{
    th_sh("rm -rf %s/data %s/out", dir, dir);
    data(csv);
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/out --data %s/data 2>%s/err",
                       th_pipesim(), dir, dir, dir), status, "%s", csv);
    cr_assert_eq(th_sh("grep -qF \"%s\" %s/err", want, dir), 0, "%s", want);
    cr_assert_eq(th_sh("test ! -e %s/out", dir), 0, "something was written");
}

Test(reproduce, torchgpipe_bad_input_writes_nothing)
{
    writes_nothing(HEADER "n2m1,2,1,96,7 17,always,abc,1\n", 3,
                   "speed.csv:2:25: field 'samples_per_s'");
    /* A balance the model cannot take (25 layers for 24). */
    writes_nothing(HEADER "n2m1,2,1,96,8 17,always,26.733,1\n", 3,
                   "speed.csv:2: field 'balance'");
    /* More partitions than the topology's devices. */
    writes_nothing(HEADER BASE "n16m1,16,1,96,1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 9,always,26.733,1\n",
                   3, "speed.csv:3: field 'n': 16 partitions");
    /* A template without its sections. */
    th_sh("rm -rf %s/data %s/out", dir, dir);
    data(HEADER BASE);
    th_put(dir, "data/text/speed.md", "@@ intro\nhello\n");
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/out --data %s/data 2>%s/err",
                       th_pipesim(), dir, dir, dir), 3);
    cr_assert_eq(th_sh("grep -q 'speed.md' %s/err", dir), 0);
    cr_assert_eq(th_sh("test ! -e %s/out", dir), 0, "something was written");
    /* A missing topology names the file. */
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/out --topologies %s/none 2>%s/err",
                       th_pipesim(), dir, dir, dir), 5);
    cr_assert_eq(th_sh("grep -q 'p40-pcie-8.json' %s/err", dir), 0);
    cr_assert_eq(th_sh("test ! -e %s/out", dir), 0, "something was written");
}

/* A study's folder is written as one set: a file that cannot be written
 * (here a folder in the way of the last table) leaves the others unwritten
 * and no staging folder (tables 1 and 2 were already in place, so a rerun
 * mixed new tables with old ones); on success each file is logged once. */
Test(reproduce, a_study_writes_its_folder_all_or_nothing)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("mkdir -p %s/g/table3.md && %s reproduce gpipe --out-dir %s/g "
                       "--no-plots 2>%s/err", dir, pp, dir, dir), 5);
    cr_assert_eq(th_sh("grep -q 'g/table3.md: cannot write: Is a directory' %s/err", dir), 0);
    cr_assert_eq(th_sh("test \"$(ls -A %s/g)\" = table3.md", dir), 0, "a file was left");
    cr_assert_eq(th_sh("mkdir -p %s/t/unet-memory.csv && %s reproduce torchgpipe --out-dir %s/t "
                       "2>%s/err", dir, pp, dir, dir), 5);
    cr_assert_eq(th_sh("test \"$(ls -A %s/t)\" = unet-memory.csv", dir), 0, "a file was left");
    cr_assert_eq(th_sh("rmdir %s/g/table3.md && %s reproduce gpipe --out-dir %s/g --no-plots "
                       ">%s/log 2>&1 && test $(grep -c '^wrote %s/g/' %s/log) = $(ls %s/g | wc -l)"
                       " && test \"$(ls -A %s/g | grep -c '^\\.')\" = 0", dir, pp, dir, dir, dir,
                       dir, dir, dir), 0);
}

/* An interrupted study takes away the folders it made for --out-dir (as a
 * failed one did; helper-85: Ctrl-C left n/a and n, empty). gnuplot is held
 * up 3 s by a wrapper first on PATH, so the signal comes mid-run; SIGTERM,
 * as a shell without job control starts a background job with SIGINT
 * ignored (and pipesim keeps an ignored signal ignored). */
Test(reproduce, an_interrupted_study_leaves_no_folder_it_made)
{
    if (th_sh("command -v gnuplot >/dev/null") != 0)
        cr_skip_test("gnuplot is not installed");
    char bin[4096];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    cr_assert_eq(th_sh("mkdir -p %s/bin && printf '#!/bin/sh\\nsleep 3\\nexec %%s \"$@\"\\n' "
                       "\"$(command -v gnuplot)\" > %s/bin/gnuplot && chmod +x %s/bin/gnuplot",
                       dir, dir, dir), 0);
    /* new folders, 20 deep (the handler's folder pass once stopped at 16), then
     * one inside a folder that was there; the signal once the study has staged */
    static const char *const outs[] = { "n/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19",
                                        "old/a" };
    for (int k = 0; k < 2; k++) {
        if (k)
            cr_assert_eq(th_sh("mkdir -p %s/old && echo keep > %s/old/mine", dir, dir), 0);
        int rc = th_sh("cd %s || exit 1; (PATH=%s/bin:$PATH exec %s reproduce gpipe --out-dir %s "
                       "--quiet) & pid=$!; for i in $(seq 600); do ls -d %s/.pipesim-stage-* "
                       ">/dev/null 2>&1 && break; sleep 0.05; done; kill -TERM $pid; wait $pid",
                       dir, dir, bin, outs[k], outs[k]);
        cr_expect_eq(rc, 143, "exit %d", rc);
    }
    cr_expect_eq(th_sh("test ! -e %s/n", dir), 0, "an empty folder it made was left");
    cr_expect_eq(th_sh("test \"$(ls -A %s/old)\" = mine", dir), 0, "a folder that was there");
}

/* A figure gnuplot fails to draw is named in the folder asked for: the
 * message named the staging folder (<out>/.pipesim-stage-XXXXXX/table2.png),
 * which is gone when it is printed; and nothing is written. */
Test(reproduce, a_failing_figure_is_named_in_the_folder_asked_for)
{
    cr_assert_eq(th_sh("mkdir -p %s/bin && printf '#!/bin/sh\\ncase \"$1\" in --version|-V) "
                       "echo gnuplot 5.4; exit 0;; esac\\necho boom >&2\\nexit 1\\n' "
                       "> %s/bin/gnuplot && chmod +x %s/bin/gnuplot", dir, dir, dir), 0);
    cr_assert_eq(th_sh("PATH=%s/bin:$PATH %s reproduce gpipe --out-dir %s/g --quiet 2>%s/err",
                       dir, th_pipesim(), dir, dir), 5);
    cr_expect_eq(th_sh("grep -q '^pipesim reproduce: %s/g/table2.png: gnuplot failed (status "
                       "1): boom' %s/err", dir, dir), 0);
    cr_expect_eq(th_sh("! grep -q 'pipesim-stage' %s/err", dir), 0, "the staging folder named");
    cr_expect_eq(th_sh("test ! -e %s/g", dir), 0, "something was written");
}

/* What a --data template's gnuplot script writes beside the figure (it runs
 * in the staging folder) goes with the staging folder, on success and on
 * failure (helper-103: a `set print` file left a .pipesim-stage-* folder per
 * run, and a failed run the --out-dir it made); and a script that writes
 * over a table pipesim staged (`set output "table1.md"`) publishes nothing
 * (the PNG was published as table1.md, exit 0). */
Test(reproduce, a_templates_extra_files_are_never_left_or_published)
{
    if (th_sh("command -v gnuplot >/dev/null") != 0)
        cr_skip_test("gnuplot is not installed");
    const char *pp = th_pipesim();
    static const char *const extra[3] = {
        "set print \\\"stray.txt\\\"\\nprint 1\\nsystem(\\\"mkdir -p sub/d && touch sub/d/f "
        "&& ln -s /nonexistent sub/l\\\")\\n",
        "set print \\\"s\\\"\\nprint 1\\nbad\\n",
        "set output \\\"table1.md\\\"\\nreplot\\n" };
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(th_sh("rm -rf %s/d && cp -r studies/gpipe %s/d && printf \"%s\" >> "
                           "%s/d/text/table2.gp", dir, dir, extra[k], dir), 0);
        for (int run = 0; run < (k ? 1 : 2); run++) {
            int rc = th_sh("%s reproduce gpipe --data %s/d --out-dir %s/o%d/new --quiet "
                           "2>%s/err", pp, dir, dir, k, dir);
            cr_expect_eq(rc, k ? 5 : 0, "template %d: exit %d", k, rc);
        }
        if (k) {
            cr_expect_eq(th_sh("test ! -e %s/o%d", dir, k), 0, "template %d: a folder left", k);
            continue;
        }
        cr_expect_eq(th_sh("test \"$(ls -A %s/o0/new | grep -c '^\\.')\" = 0", dir), 0,
                     "a staging folder was left");
        cr_expect_eq(th_sh("test ! -e %s/o0/new/stray.txt", dir), 0);
    }
    cr_expect_eq(th_sh("grep -q 'o2/new/table1.md: changed after pipesim wrote it' %s/err", dir),
                 0);
}

/* --help says plainly that gpipe's --data runs code (its .gp templates are
 * gnuplot scripts, which run shell commands), and that torchgpipe's runs
 * none (helper-103: both called the folder prose and data). */
Test(reproduce, help_says_the_gpipe_data_folder_is_code)
{
    const char *pp = th_pipesim();
    cr_expect_eq(th_sh("%s reproduce gpipe --help | tr '\\n' ' ' | grep -q -- '--data is code, "
                       "not only data: .* Give only a data folder you trust'", pp), 0);
    cr_expect_eq(th_sh("%s paper --help | grep -q -- '--data is code'", pp), 0);
    cr_expect_eq(th_sh("%s reproduce torchgpipe --help | grep -q 'Nothing in --data is run'",
                       pp), 0);
}

/* Table 1's "none fits" row has the header's 14 cells, the paper's figures
 * in theirs (helper-103: `| none fits |82.0M n/a | | | n/a | | | n/a |`,
 * 12 cells, no paper memory): every row of every table in table1.md has
 * its header's number of cells, on a topology where nothing fits. */
Test(reproduce, table1_none_fits_rows_have_the_headers_cells)
{
    cr_assert_eq(th_sh("cp -r models/topologies %s/t && sed -i 's/\"memory\": 8589934592/"
                       "\"memory\": 1024/' %s/t/devices.json && %s reproduce gpipe --topologies "
                       "%s/t --out-dir %s/o --tables 1 --quiet --no-plots", dir, dir, th_pipesim(),
                       dir, dir), 0);
    cr_expect_eq(th_sh("grep -qF '| Naive-1 | 1 | 1 | (18, 208) | none fits | 82.0M | n/a | n/a "
                       "| 1.05 | n/a | n/a | 6.26 | n/a | n/a |' %s/o/table1.md", dir), 0);
    /* a table row's '|' count is its header's */
    cr_expect_eq(th_sh("awk -F'|' '/^\\|/ { if (!n) n = NF; else if (NF != n) bad = bad FNR \" \" }"
                       " !/^\\|/ { n = 0 } END { if (bad) { print \"rows \" bad; exit 1 } }' "
                       "%s/o/table1.md", dir), 0);
}

/* samples_per_s lies in (0.001, 1e7] and speedup in (0.001, 1000] (helper-103:
 * x1e300 printed 300-digit figures, exit 0; a base row of 1e300 was blamed
 * on the next row's speedup, "over the n2m1 row's (0.000)"); a speed-up that
 * disagrees names all three figures; an error cell is never cut. */
Test(reproduce, speed_figures_have_ranges)
{
    load_fails(HEADER "n2m1,2,1,96,7 17,always,1e300,1\n" ROW2,
               "speed.csv:2:25: field 'samples_per_s': 1e+300 is not in (0.001, 1e+07]");
    load_fails(HEADER "n2m1,2,1,96,7 17,always,1e-300,1\n" ROW2,
               "speed.csv:2:25: field 'samples_per_s': 1e-300 is not in (0.001, 1e+07]");
    load_fails(HEADER BASE "n2m4,2,4,256,9 15,except_last,41.133,1e300\n",
               "speed.csv:3:38: field 'speedup': 1e+300 is not in (0.001, 1000]");
    load_fails(HEADER "n2m1,2,1,96,7 17,always,2000,1\n" ROW2,
               "speed.csv:3: field 'speedup': 1.539 is not this row's samples_per_s (41.133) "
               "over the n2m1 row's (2000, line 2): 0.02057");
    char e[32];
    cr_expect_str_eq(stu_tg_pct(1e30, e, sizeof e), "**+1.00e+32 %**");
    cr_expect_str_eq(stu_tg_pct(0.05, e, sizeof e), "+5.0 %");
}

/* Messages that named the wrong thing (helper-103), each exit 3 with its
 * file:line: 63 balance counts said "'1' is not a positive layer count" (a
 * 64-byte buffer ran out); "{{A_IMB}}" was an "unterminated '{{'"; an empty
 * template was at "file:0:"; a UTF-8 BOM before a header line after comment
 * lines was part of the first column's name; a balance that does not sum to
 * the model's layers named "--partition '7,16'", which reproduce has not. */
Test(reproduce, messages_name_what_is_wrong)
{
    const char *pp = th_pipesim();
    char ones[200] = "";
    for (int i = 0; i < 63; i++)
        strcat(ones, i ? " 1" : "1");
    th_sh("rm -rf %s/g && cp -r studies/gpipe %s/g", dir, dir);
    cr_assert_eq(th_sh("cd %s/g/reference && sed -i 's/^2,1,1,7 17$/2,1,1,%s/' torchgpipe.csv "
                       "&& grep -q '1 1 1' torchgpipe.csv", dir, ones), 0);
    cr_expect_eq(th_sh("%s reproduce gpipe --data %s/g --out-dir %s/o --quiet 2>%s/err; test $? "
                       "= 3 && grep -q \"torchgpipe.csv:[0-9]*:[0-9]*: field 'balance': more "
                       "than 2 layer counts for K = 2$\" %s/err", pp, dir, dir, dir, dir), 0);
    th_sh("rm -rf %s/g && cp -r studies/gpipe %s/g", dir, dir);
    cr_assert_eq(th_sh("perl -0pi -e 's/(\\n@@ .*?)\\{\\{[a-z_0-9]+\\}\\}/${1}{{A_IMB}}/s' "
                       "%s/g/text/table2.md && grep -q A_IMB %s/g/text/table2.md", dir, dir), 0);
    cr_expect_eq(th_sh("%s reproduce gpipe --data %s/g --out-dir %s/o --quiet 2>%s/err; test $? "
                       "= 3 && grep -q \"table2.md:[0-9]*: unknown placeholder '{{A_IMB}}' in "
                       "section\" %s/err", pp, dir, dir, dir, dir), 0);
    th_sh("rm -rf %s/g && cp -r studies/gpipe %s/g && : > %s/g/text/table3.md", dir, dir, dir);
    cr_expect_eq(th_sh("%s reproduce gpipe --data %s/g --out-dir %s/o --quiet 2>%s/err; test $? "
                       "= 3 && grep -q \"table3.md: missing section '[a-z_0-9]*' (the file is "
                       "empty)$\" %s/err", pp, dir, dir, dir, dir), 0);
    th_sh("rm -rf %s/g && cp -r studies/gpipe %s/g", dir, dir);
    cr_assert_eq(th_sh("sed -i 's/^model,M,K,throughput/\\xef\\xbb\\xbfmodel,M,K,throughput/' "
                       "%s/g/reference/table2.csv && grep -q \"$(printf '\\357\\273\\277')model\" "
                       "%s/g/reference/table2.csv", dir, dir), 0);
    cr_expect_eq(th_sh("%s reproduce gpipe --data %s/g --out-dir %s/o --quiet --no-plots", pp,
                       dir, dir), 0);
    th_sh("rm -rf %s/data %s/o", dir, dir);
    data(HEADER "n2m1,2,1,96,7 16,always,26.733,1\n");
    cr_expect_eq(th_sh("%s reproduce torchgpipe --data %s/data --out-dir %s/o --quiet 2>%s/err; "
                       "test $? = 3 && grep -q \"speed.csv:2: field 'balance': 23 layers, "
                       "amoebanet:.* has 24$\" %s/err && ! grep -q partition %s/err", pp, dir, dir,
                       dir, dir, dir), 0);
    cr_expect_eq(th_sh("test ! -e %s/o", dir), 0);
}

/* A FIFO in a data folder is refused at once, exit 5 (helper-103: one in
 * place of reference/table2.csv, with no writer, hung the study forever):
 * a data folder's files must be regular files. */
Test(reproduce, a_fifo_in_the_data_folder_is_refused)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("rm -rf %s/g && cp -r studies/gpipe %s/g && rm %s/g/reference/table2.csv "
                       "&& mkfifo %s/g/reference/table2.csv", dir, dir, dir, dir), 0);
    cr_expect_eq(th_sh("timeout 20 %s reproduce gpipe --data %s/g --out-dir %s/o --quiet "
                       "--no-plots 2>%s/err", pp, dir, dir, dir), 5);
    cr_expect_eq(th_sh("grep -q 'g/reference/table2.csv: not a regular file' %s/err", dir), 0);
    th_sh("rm -rf %s/data", dir);
    data(HEADER BASE);
    cr_assert_eq(th_sh("rm %s/data/text/speed.md && mkfifo %s/data/text/speed.md", dir, dir), 0);
    cr_expect_eq(th_sh("timeout 20 %s reproduce torchgpipe --data %s/data --out-dir %s/o --quiet "
                       "2>%s/err", pp, dir, dir, dir), 5);
    cr_expect_eq(th_sh("grep -q 'text/speed.md: not a regular file' %s/err", dir), 0);
    cr_expect_eq(th_sh("test ! -e %s/o", dir), 0);
}
