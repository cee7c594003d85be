/* torchgpipe's AmoebaNet-D (L, D) memory benchmark (studies/stu_tgmem.h):
 * the reference loader's errors (file:line:column and the field), the
 * predictions' definitions (main.py's model memory and peak activation
 * memory from the engine's per-stage ledger), the generator's parameter
 * counts against the published ones, the baseline out of memory as
 * measured, and the study's two files. The predicted activation figures
 * are checked against their definition, not against the measurement: they
 * change when the memory model changes. Run from the repository root with
 * PIPESIM set (make check-unit). */
#include "helpers.h"
#include "studies/stu_tgmem.h"
#include "base/ps_error.h"

#include <math.h>

static char dir[64];

static void mk(void) { th_tmpdir(dir, sizeof dir, "tgmem"); }
static void rm(void) { th_sh("rm -rf %s", dir); }

TestSuite(tgmem, .init = mk, .fini = rm, .timeout = 60);

#define HEADER "experiment,n,L,D,batch,chunks,balance,checkpoint,params_millions," \
               "model_memory_gib,peak_activation_gib\n"
#define BASE "baseline,1,18,208,128,1,24,never,81.5,0.91,oom\n"
#define P2 "pipeline-2,2,18,544,128,128,16 8,except_last,542.7,6.07,3.39\n"

/* dir/data: the study's templates and references, amoebanetd-memory.csv
 * holding `csv`. */
static void data(const char *csv)
{
    cr_assert_eq(th_sh("rm -rf %s/data && mkdir -p %s/data && cp -r studies/torchgpipe/text "
                       "studies/torchgpipe/reference %s/data/", dir, dir, dir), 0);
    char ref[128];
    snprintf(ref, sizeof ref, "%s/data/reference", dir);
    th_put(ref, "amoebanetd-memory.csv", csv);
}

static void load_fails(const char *csv, const char *want)
{
    data(csv);
    char ref[128];
    snprintf(ref, sizeof ref, "%s/data/reference", dir);
    struct stu_tgm_ref r;
    int rc = stu_tgm_ref_load(ref, &r);
    cr_assert_eq(rc, -PS_EPARSE, "accepted: %s", csv);
    cr_assert_eq(ps_exit_status(rc), 3);
    cr_expect(strstr(ps_errmsg(), want), "message '%s' lacks '%s'", ps_errmsg(), want);
}

Test(tgmem, reference_loads)
{
    struct stu_tgm_ref r;
    cr_assert_eq(stu_tgm_ref_load("studies/torchgpipe/reference", &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r.n_rows, 5);
    cr_assert_str_eq(r.row[0].exp, "baseline");
    cr_assert(r.row[0].oom);
    cr_assert_eq(r.row[0].remat, SCH_REMAT_NEVER);
    cr_assert_str_eq(r.row[4].exp, "pipeline-8");
    cr_assert_str_eq(r.row[4].balance, "23,16,11,6,6,5,5,6");
    cr_assert_eq(r.row[4].L, 72);
    cr_assert_eq(r.row[4].chunks, 128);
    cr_assert_eq(r.row[4].remat, SCH_REMAT_EXCEPT_LAST);
    cr_assert_eq(r.row[4].params_m, 1840);
    cr_assert_eq(r.row[4].act_gib, 10.83);
    cr_assert(!r.row[4].oom);
}

Test(tgmem, reference_errors_name_file_line_column_and_field)
{
    load_fails(HEADER "baseline,1,18,208,128,1,24,never,81.5,0.91,lots\n",
               "amoebanetd-memory.csv:2:44: field 'peak_activation_gib'");
    load_fails(HEADER "baseline,1,18,208,128,1,24,never,81.5,0.91,0\n",
               "amoebanetd-memory.csv:2:44: field 'peak_activation_gib': 0 is not in (0.001, "
               "10000] GiB, nor oom");
    load_fails(HEADER "baseline,1,18,208,128,1,24,never,81.5,0.91,1e300\n",
               "amoebanetd-memory.csv:2:44: field 'peak_activation_gib': 1e+300 is not in");
    load_fails(HEADER "baseline,1,18,208,128,1,24,never,81.5,0.91,1e400\n",
               "amoebanetd-memory.csv:2:44: field 'peak_activation_gib': '1e400' is not a finite");
    load_fails(HEADER "baseline,1,18,208,128,1,24,never,81.5,0.91,nan\n",
               "amoebanetd-memory.csv:2:44: field 'peak_activation_gib': 'nan' is not a finite");
    load_fails(HEADER "baseline,1,18,208,128,1,24,never,81.5,inf,oom\n",
               "amoebanetd-memory.csv:2:39: field 'model_memory_gib': 'inf' is not a finite");
    load_fails(HEADER "baseline,1,18,208,128,1,24,never,81.5,oom,oom\n",
               "amoebanetd-memory.csv:2:39: field 'model_memory_gib': 'oom' is not a finite");
    load_fails(HEADER "baseline,1,18,208,128,1,24,never,1e-300,0.91,oom\n",
               "amoebanetd-memory.csv:2:34: field 'params_millions': 1e-300 is not in "
               "(0.001, 1e+06]");
    load_fails(HEADER "baseline,1,18,208,128,1,24,never,oom,0.91,1\n",
               "amoebanetd-memory.csv:2:34: field 'params_millions'");
    load_fails(HEADER "pipeline-9,9,18,544,128,128,1 1 1 1 1 1 1 1 16,except_last,5,6,3\n",
               "amoebanetd-memory.csv:2:12: field 'n': '9' is not a whole number in [1, 8]");
    load_fails(HEADER "baseline,1,18,208,100000,1,24,never,81.5,0.91,oom\n",
               "amoebanetd-memory.csv:2:19: field 'batch'");
    load_fails(HEADER "pipeline-2,2,18,544,128,128,16,8,except_last,542.7,6.07,3.39\n",
               "amoebanetd-memory.csv:2:57: 12 fields, the header has 11");
    load_fails(HEADER "baseline,1,17,208,128,1,23,never,81.5,0.91,oom\n",
               "amoebanetd-memory.csv:2:12: field 'L': must be a multiple of 3");
    load_fails(HEADER "baseline,1,18,210,128,1,24,never,81.5,0.91,oom\n",
               "amoebanetd-memory.csv:2:15: field 'D': must be a multiple of 8");
    load_fails(HEADER "pipeline-2,2,18,544,128,128,16 9,except_last,542.7,6.07,3.39\n",
               "amoebanetd-memory.csv:2:29: field 'balance': 25 layers; AmoebaNet-D (18, 544) "
               "has L + 6 = 24");
    load_fails(HEADER "pipeline-2,2,18,544,128,128,24,except_last,542.7,6.07,3.39\n",
               "amoebanetd-memory.csv:2:29: field 'balance': 1 layer counts for n = 2");
    load_fails(HEADER "pipeline-2,2,18,544,128,100,16 8,except_last,542.7,6.07,3.39\n",
               "amoebanetd-memory.csv:2:25: field 'chunks': must divide the batch");
    load_fails(HEADER "pipeline-1,1,18,208,128,1,24,never,81.5,0.91,oom\n",
               "amoebanetd-memory.csv:2:1: field 'experiment': 'pipeline-1' is not baseline");
    load_fails(HEADER "baseline,1,18,208,128,1,24,sometimes,81.5,0.91,oom\n",
               "amoebanetd-memory.csv:2:28: field 'checkpoint'");
    load_fails(HEADER "the-longest-experiment-name-anyone-ever-wrote-here,1,18,208,128,1,24,"
               "never,81.5,0.91,oom\n", "csv:2:1: field 'experiment': 'the-longest-experiment-"
               "name-anyone-ever-' is not baseline");
    load_fails(HEADER P2 P2, "amoebanetd-memory.csv:3:1: field 'experiment': a second row "
               "pipeline-2 (line 2)");
    load_fails(HEADER BASE "pipeline-1,1,18,416,128,128,24,except_last,319.0,3.57,0.91\n"
               P2 "pipeline-3,3,18,544,128,128,8 8 8,except_last,5,6,3\n"
               "pipeline-4,4,18,544,128,128,6 6 6 6,except_last,5,6,3\n"
               "pipeline-5,5,18,544,128,128,4 5 5 5 5,except_last,5,6,3\n"
               "pipeline-6,6,18,544,128,128,4 4 4 4 4 4,except_last,5,6,3\n"
               "pipeline-7,7,18,544,128,128,3 3 3 3 4 4 4,except_last,5,6,3\n"
               "pipeline-8,8,18,544,128,128,3 3 3 3 3 3 3 3,except_last,5,6,3\n",
               "amoebanetd-memory.csv:10: more than 8 rows");
    load_fails("# nothing but a header\n" HEADER, "amoebanetd-memory.csv:2: no rows");
    load_fails("", "amoebanetd-memory.csv: no header");
    load_fails("experiment,n,L,D,batch,chunks,balance,checkpoint,params_millions,"
               "model_memory_gib\n" BASE, "missing column 'peak_activation_gib'");
}

/* main.py's figures from the ledger: model memory = 12 B x parameters;
 * activation memory = the stages' peaks summed, less that. */
Test(tgmem, predictions_follow_main_py_definitions)
{
    struct stu_tg_opts o = { .topo_dir = "models/topologies" };
    struct stu_tgm_run *r;
    cr_assert_eq(stu_tgm_predict(&o, &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r->n, 5);
    cr_assert_eq(r->topo->bytes_per_param, 12);
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgm_cell *c = &r->cell[i];
        const struct stu_tgm_row *w = c->ref;
        cr_expect_eq(c->p->K, w->n, "%s", w->exp);
        cr_expect_eq(c->p->M, w->chunks, "%s", w->exp);
        cr_expect_eq(c->p->batch, 128);
        cr_expect_eq(c->p->remat, w->remat);
        double sum = 0;
        for (int s = 0; s < c->p->n_stages; s++)
            sum += (double)c->p->stages[s].peak_mem;
        /* The premise of main.py's subtraction: what the ledger holds
         * before any activation is 12 B x the parameters, every stage's
         * together (no workspace in p40-pcie-8.json's policy). */
        double fixed = 0;
        for (int s = 0; s < c->p->n_stages; s++)
            fixed += (double)c->p->stages[s].static_mem;
        cr_expect(fabs(fixed - 12 * c->params) <= c->p->n_stages, "%s: %.0f B for %.0f "
                  "parameters", w->exp, fixed, c->params);
        /* The activation memory is then the stages' peaks above it, each
         * at least one micro-batch's stage input kept for its backward. */
        cr_expect(fabs(c->act_gib * 1073741824.0 - (sum - fixed)) <= c->p->n_stages, "%s",
                  w->exp);
        cr_expect_geq(c->act_gib * 1073741824.0, 3 * 224 * 224 * 4.0 * (128 / w->chunks),
                      "%s", w->exp);
    }
    /* The generator's counts are the published ones to the digits printed
     * (81.5M, 319.0M, 542.7M, 1.06B, 1.84B). */
    cr_expect_eq(round(r->cell[0].params / 1e5), 815);
    cr_expect_eq(round(r->cell[1].params / 1e5), 3190);
    cr_expect_eq(round(r->cell[2].params / 1e5), 5427);
    cr_expect_eq(round(r->cell[3].params / 1e7), 106);
    cr_expect_eq(round(r->cell[4].params / 1e7), 184);
    /* The baseline, 128 images without GPipe on one 24 GiB P40, does not
     * fit, as measured; the pipelines do. */
    cr_expect(!r->cell[0].p->fits);
    cr_expect(r->cell[0].agrees);
    for (int i = 1; i < r->n; i++)
        cr_expect(r->cell[i].p->fits && r->cell[i].agrees, "%s", r->cell[i].ref->exp);
    stu_tgm_run_free(r);
}

Test(tgmem, study_writes_its_files_and_nothing_on_bad_input)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/a --quiet", pp, dir), 0);
    cr_assert_eq(th_sh("grep -q '^# torchgpipe — AmoebaNet-D (L, D) memory' "
                       "%s/a/amoebanetd-memory.md", dir), 0);
    cr_assert_eq(th_sh("grep -q '^| baseline | 1 | (18, 208) |.*| out of memory |.*| agrees |' "
                       "%s/a/amoebanetd-memory.md", dir), 0);
    cr_assert_eq(th_sh("test $(grep -c '^pipeline-[1248],' %s/a/amoebanetd-memory.csv) -eq 4",
                       dir), 0);
    cr_assert_eq(th_sh("grep -q '^baseline,1,18,208,128,1,24,never,81.5,.*,oom,.*,NA,' "
                       "%s/a/amoebanetd-memory.csv", dir), 0);
    /* More partitions than the topology's GPUs, or a malformed figure:
     * one message, exit 3, no file. */
    data(HEADER "pipeline-9,9,18,544,128,128,1 1 1 1 1 1 1 1 16,except_last,542.7,6.07,3.39\n");
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/b --data %s/data 2>%s/err", pp,
                       dir, dir, dir), 3);
    cr_assert_eq(th_sh("grep -q \"amoebanetd-memory.csv:2:12: field 'n': '9' is not a whole "
                       "number in \\[1, 8\\]\" %s/err", dir), 0);
    cr_assert_eq(th_sh("test ! -e %s/b", dir), 0, "something was written");
    data(HEADER "baseline,1,18,208,128,1,24,never,81.5,0.91,-3\n");
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/b --data %s/data 2>%s/err", pp,
                       dir, dir, dir), 3);
    cr_assert_eq(th_sh("grep -q \"amoebanetd-memory.csv:2:44: field 'peak_activation_gib': "
                       "'-3' is not a finite number >= 0\" %s/err", dir), 0);
    cr_assert_eq(th_sh("test ! -e %s/b", dir), 0, "something was written");
    /* A template without its sections: nothing written, and an existing
     * output folder's files are left as they were. */
    data(HEADER BASE);
    th_put(dir, "data/text/amoebanetd-memory.md", "@@ intro\nhello\n");
    cr_assert_eq(th_sh("cp -r %s/a %s/keep && %s reproduce torchgpipe --out-dir %s/a --data "
                       "%s/data 2>%s/err", dir, dir, pp, dir, dir, dir), 3);
    cr_assert_eq(th_sh("grep -q 'amoebanetd-memory.md' %s/err", dir), 0);
    cr_assert_eq(th_sh("diff -r %s/a %s/keep", dir, dir), 0, "an output was touched");
    /* CRLF line ends are read as LF ones. */
    data(HEADER BASE);
    cr_assert_eq(th_sh("sed -i 's/$/\\r/' %s/data/reference/amoebanetd-memory.csv && "
                       "%s reproduce torchgpipe --out-dir %s/c --data %s/data --quiet", dir, pp,
                       dir, dir), 0);
    cr_assert_eq(th_sh("grep -c '^baseline,' %s/c/amoebanetd-memory.csv | grep -qx 1", dir), 0);
    /* An output folder that holds the inputs is refused before writing. */
    data(HEADER BASE);
    cr_assert_eq(th_sh("cp -r %s/data %s/keep2 && %s reproduce torchgpipe --out-dir "
                       "%s/data/reference --data %s/data 2>%s/err", dir, dir, pp, dir, dir, dir),
                 2);
    cr_assert_eq(th_sh("grep -q 'would overwrite an input' %s/err", dir), 0);
    cr_assert_eq(th_sh("diff -r %s/data %s/keep2", dir, dir), 0, "an input was touched");
}
