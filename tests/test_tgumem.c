/* torchgpipe's U-Net (B, C) memory benchmark (studies/stu_tgumem.h): the
 * reference loader's errors (file:line:column and the field), torch.chunk's
 * micro-batches, the prediction's definition (main.py's total reserve
 * against the stages' ledgers summed, parameters and gradients at 8 B
 * each), the generator's parameter counts against the published ones, and
 * the study's two files. The predicted memory is checked against its
 * definition, not against the measurement: it changes when the memory
 * model changes. Run from the repository root with PIPESIM set (make
 * check-unit). */
#include "helpers.h"
#include "studies/stu_tgumem.h"
#include "base/ps_error.h"

#include <math.h>

static char dir[64];

static void mk(void) { th_tmpdir(dir, sizeof dir, "tgumem"); }
static void rm(void) { th_sh("rm -rf %s", dir); }

TestSuite(tgumem, .init = mk, .fini = rm, .timeout = 60);

#define HEADER "experiment,n,B,C,batch,chunks,balance,checkpoint,params_millions,memory_gib\n"
#define BASE "baseline,1,6,72,32,1,285,never,362.2,20.3\n"
#define P2 "pipeline-2,2,24,128,32,32,526 551,except_last,4990,43.4\n"

/* dir/data: the study's templates and references, unet-memory.csv holding
 * `csv`. */
static void data(const char *csv)
{
    cr_assert_eq(th_sh("rm -rf %s/data && mkdir -p %s/data && cp -r studies/torchgpipe/text "
                       "studies/torchgpipe/reference %s/data/", dir, dir, dir), 0);
    char ref[128];
    snprintf(ref, sizeof ref, "%s/data/reference", dir);
    th_put(ref, "unet-memory.csv", csv);
}

static void load_fails(const char *csv, const char *want)
{
    data(csv);
    char ref[128];
    snprintf(ref, sizeof ref, "%s/data/reference", dir);
    struct stu_tgu_ref r;
    int rc = stu_tgu_ref_load(ref, &r);
    cr_assert_eq(rc, -PS_EPARSE, "accepted: %s", csv);
    cr_assert_eq(ps_exit_status(rc), 3);
    cr_expect(strstr(ps_errmsg(), want), "message '%s' lacks '%s'", ps_errmsg(), want);
}

Test(tgumem, reference_loads)
{
    struct stu_tgu_ref r;
    cr_assert_eq(stu_tgu_ref_load("studies/torchgpipe/reference", &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r.n_rows, 5);
    cr_assert_str_eq(r.row[0].exp, "baseline");
    cr_assert_eq(r.row[0].remat, SCH_REMAT_NEVER);
    cr_assert_eq(r.row[0].B, 6);
    cr_assert_eq(r.row[0].C, 72);
    cr_assert_str_eq(r.row[4].exp, "pipeline-8");
    cr_assert_str_eq(r.row[4].balance, "800,140,62,36,36,36,36,987");
    cr_assert_eq(r.row[4].chunks, 128);
    cr_assert_eq(r.row[4].remat, SCH_REMAT_EXCEPT_LAST);
    cr_assert_eq(r.row[4].params_m, 15820);
    cr_assert_eq(r.row[4].mem_gib, 154.1);
}

Test(tgumem, reference_errors_name_file_line_column_and_field)
{
    load_fails(HEADER "baseline,1,6,72,32,1,285,never,362.2,lots\n",
               "unet-memory.csv:2:38: field 'memory_gib'");
    load_fails(HEADER "baseline,1,6,72,32,1,285,never,362.2,0\n",
               "unet-memory.csv:2:38: field 'memory_gib': 0 is not in (0.001, 10000]");
    load_fails(HEADER "baseline,1,6,72,32,1,285,never,nan,20.3\n",
               "unet-memory.csv:2:32: field 'params_millions': 'nan' is not a finite");
    load_fails(HEADER "pipeline-9,9,6,72,32,32,285,except_last,362.2,20.3\n",
               "unet-memory.csv:2:12: field 'n': '9' is not a whole number in [1, 8]");
    load_fails(HEADER "baseline,1,0,72,32,1,21,never,362.2,20.3\n",
               "unet-memory.csv:2:12: field 'B': '0' is not a whole number in [1, 100]");
    load_fails(HEADER "baseline,1,6,1,32,1,285,never,362.2,20.3\n",
               "unet-memory.csv:2:14: field 'C'");
    load_fails(HEADER "baseline,1,6,72,32,1,284,never,362.2,20.3\n",
               "unet-memory.csv:2:22: field 'balance': 284 layers; U-Net (6, 72) has 44 B + 21 "
               "= 285");
    load_fails(HEADER "pipeline-2,2,24,128,32,32,1077,except_last,4990,43.4\n",
               "unet-memory.csv:2:27: field 'balance': 1 layer counts for n = 2");
    /* torch.chunk cuts 32 into 5 chunks of 7 and a last of 4 */
    load_fails(HEADER "pipeline-2,2,24,128,32,5,526 551,except_last,4990,43.4\n",
               "unet-memory.csv:2:24: field 'chunks': 5 chunks cut 32 samples into chunks of 7 "
               "and a smaller last one");
    load_fails(HEADER "pipeline-1,1,6,72,32,1,285,never,362.2,20.3\n",
               "unet-memory.csv:2:1: field 'experiment': 'pipeline-1' is not baseline");
    load_fails(HEADER "baseline,1,6,72,32,1,285,sometimes,362.2,20.3\n",
               "unet-memory.csv:2:26: field 'checkpoint'");
    load_fails(HEADER P2 P2, "unet-memory.csv:3:1: field 'experiment': a second row "
               "pipeline-2 (line 2)");
    load_fails("# nothing but a header\n" HEADER, "unet-memory.csv:2: no rows");
    load_fails("", "unet-memory.csv: no header");
    load_fails("experiment,n,B,C,batch,chunks,balance,checkpoint,params_millions\n" BASE,
               "missing column 'memory_gib'");
}

/* The published "Memory usage" is the GPUs' reserves summed, parameters
 * included: the prediction is the stages' peaks summed, of which the
 * parameters and gradients are 8 B each. */
Test(tgumem, predictions_follow_main_py_definitions)
{
    struct stu_tg_opts o = { .topo_dir = "models/topologies" };
    struct stu_tgu_run *r;
    cr_assert_eq(stu_tgu_predict(&o, &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r->n, 5);
    cr_assert_eq(r->topo->bytes_per_param, 8);
    static const int M[5] = { 1, 32, 32, 32, 32 }; /* pipeline-8: 128 chunks of 32 = 32 */
    for (int i = 0; i < r->n; i++) {
        const struct stu_tgu_cell *c = &r->cell[i];
        const struct stu_tgu_row *w = c->ref;
        cr_expect_eq(c->p->K, w->n, "%s", w->exp);
        cr_expect_eq(c->M, M[i], "%s", w->exp);
        cr_expect_eq(c->p->M, M[i], "%s", w->exp);
        cr_expect_eq(c->size * c->M, 32);
        /* torchgpipe's checkpoint_stop counts the chunks asked for:
         * pipeline-8's 32 of 128 are all checkpointed */
        cr_expect_eq(c->p->remat, i == 4 ? SCH_REMAT_ALWAYS : w->remat, "%s", w->exp);
        cr_expect_eq(c->remat, c->p->remat);
        double sum = 0, fixed = 0;
        for (int s = 0; s < c->p->n_stages; s++) {
            sum += (double)c->p->stages[s].peak_mem;
            fixed += (double)c->p->stages[s].static_mem;
        }
        cr_expect(fabs(c->mem_gib * 1073741824.0 - sum) <= c->p->n_stages, "%s", w->exp);
        cr_expect(fabs(fixed - 8 * c->params) <= c->p->n_stages, "%s: %.0f B for %.0f "
                  "parameters", w->exp, fixed, c->params);
        cr_expect(fabs(c->model_gib * 1073741824.0 - 8 * c->params) < 1, "%s", w->exp);
        cr_expect(c->p->fits, "%s", w->exp);
    }
    /* The published counts to the digits printed: 362.2M, 2.21B, 4.99B,
     * 7.80B, 15.82B. */
    cr_expect_eq(round(r->cell[0].params / 1e5), 3622);
    cr_expect_eq(round(r->cell[1].params / 1e7), 221);
    cr_expect_eq(round(r->cell[2].params / 1e7), 499);
    cr_expect_eq(round(r->cell[3].params / 1e7), 780);
    cr_expect_eq(round(r->cell[4].params / 1e7), 1582);
    stu_tgu_run_free(r);
}

Test(tgumem, study_writes_its_files_and_nothing_on_bad_input)
{
    const char *pp = th_pipesim();
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/a --quiet", pp, dir), 0);
    cr_assert_eq(th_sh("grep -q '^# torchgpipe — U-Net (B, C) memory' %s/a/unet-memory.md",
                       dir), 0);
    cr_assert_eq(th_sh("grep -q '^| pipeline-8 | 8 | (48, 160) | 2133 | "
                       "800,140,62,36,36,36,36,987 | 128: 32 x 1 | except_last (as run: always) |' "
                       "%s/a/unet-memory.md", dir), 0);
    cr_assert_eq(th_sh("test $(grep -c '^pipeline-[1248],' %s/a/unet-memory.csv) -eq 4", dir),
                 0);
    cr_assert_eq(th_sh("grep -q '^baseline,1,6,72,32,1,1,32,285,never,never,362.2,' "
                       "%s/a/unet-memory.csv", dir), 0);
    /* A malformed figure: one message, exit 3, no file. */
    data(HEADER "baseline,1,6,72,32,1,285,never,362.2,-3\n");
    cr_assert_eq(th_sh("%s reproduce torchgpipe --out-dir %s/b --data %s/data 2>%s/err", pp,
                       dir, dir, dir), 3);
    cr_assert_eq(th_sh("grep -q \"unet-memory.csv:2:38: field 'memory_gib': '-3' is not a "
                       "finite number >= 0\" %s/err", dir), 0);
    cr_assert_eq(th_sh("test ! -e %s/b", dir), 0, "something was written");
    /* A template without its sections: nothing written, and an existing
     * output folder's files are left as they were. */
    data(HEADER BASE);
    th_put(dir, "data/text/unet-memory.md", "@@ intro\nhello\n");
    cr_assert_eq(th_sh("cp -r %s/a %s/keep && %s reproduce torchgpipe --out-dir %s/a --data "
                       "%s/data 2>%s/err", dir, dir, pp, dir, dir, dir), 3);
    cr_assert_eq(th_sh("grep -q 'unet-memory.md' %s/err", dir), 0);
    cr_assert_eq(th_sh("diff -r %s/a %s/keep", dir, dir), 0, "an output was touched");
}

/* torchgpipe's gpipe.py stops checkpointing at the chunks asked for
 * ('except_last': self.chunks-1), whatever torch.chunk made of them. */
Test(tgumem, checkpoint_as_torchgpipe_runs_it)
{
    cr_expect_eq(stu_tg_remat_run(SCH_REMAT_EXCEPT_LAST, 32, 32), SCH_REMAT_EXCEPT_LAST);
    cr_expect_eq(stu_tg_remat_run(SCH_REMAT_EXCEPT_LAST, 32, 31), SCH_REMAT_ALWAYS);
    cr_expect_eq(stu_tg_remat_run(SCH_REMAT_EXCEPT_LAST, 128, 32), SCH_REMAT_ALWAYS);
    cr_expect_eq(stu_tg_remat_run(SCH_REMAT_NEVER, 32, 1), SCH_REMAT_NEVER);
    cr_expect_eq(stu_tg_remat_run(SCH_REMAT_ALWAYS, 4, 2), SCH_REMAT_ALWAYS);
    cr_expect_eq(stu_tg_remat_run(SCH_REMAT_EXCEPT_LAST, 1, 1), SCH_REMAT_EXCEPT_LAST);
}
