/* stu_ref: the published figures loaded from studies/gpipe/reference/ equal
 * the ones the papers print, and a malformed file is one PS_EPARSE error
 * naming file:line and the field (exit status 3 from `pipesim paper`, with
 * nothing written). Run from the repository root (make check-unit). */
#include "helpers.h"

#include "studies/stu_ref.h"

#include <math.h>

#define REF "studies/gpipe/reference"

/* The values as printed in GPipe (arXiv 1811.06965 v5) Tables 1 and 2 and in
 * torchgpipe's (arXiv 2004.09910) AmoebaNet-D (18, 256) benchmark, written
 * here from the papers, not from the CSV files. */
Test(paper_ref, figures_equal_the_papers)
{
    struct stu_ref r;
    cr_assert_eq(stu_ref_load(REF, &r), 0, "%s", ps_errmsg());
    /* Table 2: AmoebaNet K = 8, M = 32 = 3.48; Transformer K = 4, M = 4 = 3.2;
     * Transformer K = 8, M = 1 = 1.3; K = 2, M = 1 is 1 for both. */
    cr_expect_eq(r.t2[0][2][2], 3.48);
    cr_expect_eq(r.t2[1][1][1], 3.2);
    cr_expect_eq(r.t2[1][0][2], 1.3);
    cr_expect_eq(r.t2[0][0][0], 1);
    cr_expect_eq(r.t2[1][0][0], 1);
    /* Table 1: AmoebaNet Pipeline-8 is (72, 512) with 1.8B parameters, 24.62GB
     * of parameter memory; Pipeline-1 3.8GB; Transformer Pipeline-128 has L =
     * 1663, 83.9B parameters, 796.1G (GiB) of activations. */
    cr_expect_str_eq(r.t1[0][4].name, "Pipeline-8");
    cr_expect_eq(r.t1[0][4].K, 8);
    cr_expect_eq(r.t1[0][4].L, 72);
    cr_expect_eq(r.t1[0][4].D, 512);
    cr_expect_eq(r.t1[0][4].params, 1.8e9);
    cr_expect_eq(r.t1[0][4].pmem, 24.62 * 1e9);
    cr_expect_eq(r.t1[0][1].pmem, 3.8 * 1e9);
    cr_expect_str_eq(r.t1[1][4].name, "Pipeline-128");
    cr_expect_eq(r.t1[1][4].L, 1663);
    cr_expect_eq(r.t1[1][4].params, 83.9e9);
    cr_expect_eq(r.t1[1][4].act, 796.1 * 1073741824.0);
    cr_expect(r.t1[0][0].naive && r.t1[1][0].naive && !r.t1[0][1].naive);
    /* Naive-1 Transformer: the paper prints 11.7G / 3.15G, compared swapped. */
    cr_expect_eq(r.t1[1][0].pmem, 3.15 * 1073741824.0);
    cr_expect_eq(r.t1[1][0].act, 11.7 * 1073741824.0);
    /* torchgpipe: K = 8, M = 32 speedup 4.953; K = 8 balances. */
    cr_expect_eq(r.tg_speedup[2][2], 4.953);
    cr_expect_eq(r.tg_speedup[0][1], 1.539);
    cr_expect_str_eq(r.tg_balance[2][0], "2,2,2,2,2,3,4,7");
    cr_expect_str_eq(r.tg_balance[2][1], "2,2,2,3,3,4,4,4");
    cr_expect_str_eq(r.tg_balance[0][0], "7,17");
    /* Table 3: AmoebaNet-D (18, 128) 1, 1.7, 2.7; Transformer-24 1, 1.8, 3.3
     * at K = 2, 4, 8 (the K = 8 cells as the paper's text gives them too). */
    static const double t3[2][3] = { { 1, 1.7, 2.7 }, { 1, 1.8, 3.3 } };
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 3; k++)
            cr_expect_eq(r.t3[m][k], t3[m][k], "table3 [%d][%d]", m, k);
}

static char dir[64];

static void mk(void)
{
    snprintf(dir, sizeof dir, "/tmp/pipesim-ref-XXXXXX");
    cr_assert(mkdtemp(dir));
    cr_assert_eq(th_sh("mkdir %s/data && cp -r " REF " %s/data/", dir, dir), 0);
}

static void rm(void) { th_sh("rm -rf %s", dir); }

TestSuite(paper_ref_bad, .init = mk, .fini = rm);

/* Writes table2.csv: a comment, the header (line 2), then rows on lines 3..
 * 20 in model, M, K order; row `bad` (0-based; -1 none) is replaced by
 * `line`, or dropped when line is NULL. */
static void write_t2(const char *header, int bad, const char *line)
{
    char p[128];
    snprintf(p, sizeof p, "%s/data/reference/table2.csv", dir);
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fprintf(f, "# test copy\n%s\n", header);
    static const char *const m[2] = { "AmoebaNet-D", "Transformer" };
    static const int M[3] = { 1, 4, 32 }, K[3] = { 2, 4, 8 };
    for (int i = 0; i < 18; i++) {
        if (i == bad) {
            if (line)
                fprintf(f, "%s\n", line);
            continue;
        }
        /* the normalization cell, K = 2, M = 1, is 1 */
        fprintf(f, "%s,%d,%d,%s\n", m[i / 9], M[i / 3 % 3], K[i % 3],
                i % 9 == 0 ? "1" : "1.5");
    }
    fclose(f);
}

/* The loader's error, then the CLI's: exit 3, one line, the same words,
 * nothing written. */
static void expect_error(const char *what)
{
    char data[128], out[128];
    snprintf(data, sizeof data, "%s/data/reference", dir);
    struct stu_ref r;
    cr_assert_eq(stu_ref_load(data, &r), -PS_EPARSE, "%s", ps_errmsg());
    cr_expect(strstr(ps_errmsg(), what), "'%s' not in: %s", what, ps_errmsg());
    snprintf(out, sizeof out, "%s/out", dir);
    cr_assert_eq(th_sh("%s paper --data %s/data --out-dir %s --quiet 2>%s/err", th_pipesim(), dir,
                       out, dir), 3);
    cr_expect_eq(th_sh("test $(wc -l < %s/err) -eq 1", dir), 0, "not one line");
    cr_expect_eq(th_sh("grep -qF \"%s\" %s/err", what, dir), 0, "'%s' not on stderr", what);
    cr_expect_eq(th_sh("test ! -e %s", out), 0, "%s written", out);
}

Test(paper_ref_bad, well_formed_copy_loads)
{
    write_t2("model,M,K,throughput", -1, NULL);
    char data[128];
    snprintf(data, sizeof data, "%s/data/reference", dir);
    struct stu_ref r;
    cr_assert_eq(stu_ref_load(data, &r), 0, "%s", ps_errmsg());
    cr_assert_eq(r.t2[1][2][2], 1.5);
}

Test(paper_ref_bad, missing_column)
{
    write_t2("model,M,K", -1, NULL);
    expect_error("table2.csv:2: missing column 'throughput'");
}

Test(paper_ref_bad, missing_field)
{
    write_t2("model,M,K,throughput", 5, "AmoebaNet-D,4,8");
    expect_error("table2.csv:8: field 'throughput' is missing");
}

Test(paper_ref_bad, not_a_number)
{
    write_t2("model,M,K,throughput", 8, "AmoebaNet-D,32,8,3.4x");
    expect_error("table2.csv:11:18: field 'throughput': '3.4x' is not a finite number");
}

Test(paper_ref_bad, a_zero_published_value)
{
    write_t2("model,M,K,throughput", 8, "AmoebaNet-D,32,8,0");
    expect_error("table2.csv:11:18: field 'throughput': a published value must be > 0 (errors "
                 "are relative to it)");
}

Test(paper_ref_bad, wrong_row_count)
{
    write_t2("model,M,K,throughput", 17, NULL);
    expect_error("table2.csv:19: 17 rows, Table 2");
}

Test(paper_ref_bad, key_outside_the_table)
{
    write_t2("model,M,K,throughput", 0, "AmoebaNet-D,1,16,1");
    expect_error("table2.csv:3:15: field 'K': '16' is not one of 2, 4, 8");
}

Test(paper_ref_bad, duplicate_row)
{
    write_t2("model,M,K,throughput", 1, "AmoebaNet-D,1,2,1");
    expect_error("table2.csv:4: a second row for AmoebaNet-D M = 1 K = 2");
}

Test(paper_ref_bad, table1_column_name_and_torchgpipe_balance)
{
    cr_assert_eq(th_sh("cd %s/data/reference && sed -i 's/^AmoebaNet-D,Pipeline-2,2,/"
                       "AmoebaNet-D,Pipeline-4,2,/' table1.csv", dir), 0);
    expect_error("field 'column': 'Pipeline-4' is neither Naive-2 nor Pipeline-2");
    cr_assert_eq(th_sh("cp " REF "/table1.csv %s/data/reference/ && cd %s/data/reference && "
                       "sed -i 's/^8,4,2.621,.*/8,4,2.621,2 2 2 3 3 4 4/' torchgpipe.csv", dir,
                       dir), 0);
    expect_error("field 'balance': 7 layer counts for K = 8");
}

/* helper-59: values the models cannot take, a second row for a column, a balance that does
 * not sum to the model's layers (in a row the study never reads), an impossible normalization
 * cell and a parameter count past the GB columns all stop the load with the line (they were
 * accepted, or failed after work as a generator's or -K's error, exit 4 or 7, leaving an
 * empty --out-dir). */
Test(paper_ref_bad, values_the_models_cannot_take)
{
    cr_assert_eq(th_sh("cd %s/data/reference && sed -i 's/^AmoebaNet-D,Pipeline-1,1,18,/"
                       "AmoebaNet-D,Pipeline-1,1,1,/' table1.csv", dir), 0);
    expect_error("table1.csv:14:26: field 'L': must be a multiple of 3 in [3, 30000]");
    cr_assert_eq(th_sh("cp " REF "/table1.csv %s/data/reference/ && cd %s/data/reference && "
                       "sed -i 's/^AmoebaNet-D,Pipeline-1,1,18,416,318000000/AmoebaNet-D,"
                       "Pipeline-1,1,18,416,1e308/' table1.csv", dir, dir), 0);
    expect_error("table1.csv:14: field 'params': 1e+308 is out of range");
    cr_assert_eq(th_sh("cp " REF "/table1.csv %s/data/reference/ && cd %s/data/reference && "
                       "sed -i \"s/^AmoebaNet-D,Pipeline-4,.*/$(grep '^AmoebaNet-D,Pipeline-2,' "
                       "table1.csv)/\" table1.csv", dir, dir), 0);
    expect_error("a second row for AmoebaNet-D Pipeline-2 (line 15)");
    cr_assert_eq(th_sh("cp " REF "/table1.csv %s/data/reference/ && cd %s/data/reference && "
                       "sed -i 's/^2,1,1,7 17$/2,1,1,7 1000000/' torchgpipe.csv", dir, dir), 0);
    expect_error("field 'balance': 1000007 layers; AmoebaNet-D (18, 256) has L + 6 = 24");
    cr_assert_eq(th_sh("cp " REF "/torchgpipe.csv %s/data/reference/", dir), 0);
    write_t2("model,M,K,throughput", 9, "Transformer,1,2,2");
    expect_error("table2.csv:12:17: field 'throughput': 2, but the table is normalized to this "
                 "cell (K = 2, M = 1), which is 1");
}

/* A row whose figures the study cannot run (more stages than the topology's devices) is
 * the reference file's error with its line, exit 3, and the --out-dir it created is gone. */
Test(paper_ref_bad, a_row_past_the_topology_names_its_line)
{
    cr_assert_eq(th_sh("cp -r studies/gpipe/text %s/data/ && cd %s/data/reference && "
                       "sed -i 's/^Transformer,Pipeline-8,8,103/Transformer,Pipeline-4096,4096,"
                       "4095/' table1.csv", dir, dir), 0);
    cr_assert_eq(th_sh("%s paper --data %s/data --out-dir %s/o/deep --quiet --tables 1 "
                       "2>%s/err", th_pipesim(), dir, dir, dir), 3);
    cr_expect_eq(th_sh("grep -q 'table1.csv:20: Transformer Pipeline-4096 (K = 4096, L = 4095): "
                       "cannot be predicted: ' %s/err", dir), 0);
    cr_expect_eq(th_sh("test ! -e %s/o", dir), 0, "the --out-dir it made stayed");
    /* a ".." in the path: the folders made are some of those on the path as typed
     * (helper-61: new/../old removed old, which was there before, and kept new): new
     * goes, old stays */
    cr_assert_eq(th_sh("mkdir %s/existing && %s paper --data %s/data --out-dir "
                       "%s/newdir/../existing --quiet --tables 1 2>/dev/null", dir, th_pipesim(),
                       dir, dir), 3);
    cr_expect_eq(th_sh("test -d %s/existing", dir), 0, "a folder that was there was removed");
    cr_expect_eq(th_sh("test ! -e %s/newdir", dir), 0, "a folder it made stayed");
}

/* torchgpipe's tables: a second row of one experiment (another m) is refused (rows were
 * keyed by n and m alone); --out-dir and its old spelling --out together are one option
 * given twice (the last silently won). helper-59. */
Test(paper_ref_bad, torchgpipe_duplicates_and_out_given_twice)
{
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cp -r studies/torchgpipe %s/tg && echo 'pipeline-8,8,75,5400,26 22 33 44 "
                       "44 66 66 69,except_last,411.662,4.294' >> %s/tg/reference/"
                       "resnet101-speed.csv", dir, dir), 0);
    cr_expect_eq(th_sh("%s reproduce torchgpipe --data %s/tg --out-dir %s/o --quiet 2>%s/err",
                       ps, dir, dir, dir), 3);
    cr_expect_eq(th_sh("grep -q 'resnet101-speed.csv:21: a second row for pipeline-8 (n = 8, "
                       "m = 75; line 20)' %s/err", dir), 0);
    cr_expect_eq(th_sh("test ! -e %s/o", dir), 0);
    cr_expect_eq(th_sh("%s reproduce gpipe --out-dir %s/a --out %s/b --quiet 2>/dev/null", ps,
                       dir, dir), 2);
    cr_expect_eq(th_sh("%s reproduce torchgpipe --out %s/a --out-dir %s/b --quiet "
                       "2>/dev/null", ps, dir, dir), 2);
    cr_expect_eq(th_sh("test ! -e %s/a && test ! -e %s/b", dir, dir), 0);
}

/* A normalized throughput and a torchgpipe speed-up lie in (0.001, 1000], as
 * Table 1's figures have their bounds (helper-103: 1e-300 was taken, exit 0,
 * its error cell cut to '**+103216665958726849643189560696**'). */
Test(paper_ref_bad, ratios_out_of_range)
{
    write_t2("model,M,K,throughput", 8, "AmoebaNet-D,32,8,1e-300");
    expect_error("table2.csv:11:18: field 'throughput': 1e-300 is not in (0.001, 1000]");
    write_t2("model,M,K,throughput", 8, "AmoebaNet-D,32,8,2000");
    expect_error("table2.csv:11:18: field 'throughput': 2000 is not in (0.001, 1000]");
    write_t2("model,M,K,throughput", -1, NULL);
    cr_assert_eq(th_sh("cd %s/data/reference && sed -i 's/^Transformer,32,8,.*/Transformer,32,"
                       "8,1e300/' table3.csv && grep -q 1e300 table3.csv", dir), 0);
    expect_error("field 'throughput': 1e+300 is not in (0.001, 1000]");
    cr_assert_eq(th_sh("cp " REF "/table3.csv %s/data/reference/ && cd %s/data/reference && "
                       "sed -i 's/^8,4,2.621,/8,4,1e-9,/' torchgpipe.csv && grep -q 1e-9 "
                       "torchgpipe.csv", dir, dir), 0);
    expect_error("field 'speedup': 1e-09 is not in (0.001, 1000]");
}

/* A topology figure the engine cannot take is the topology's error, with its
 * own status, the reference row only as context (helper-103: a device flops of
 * 1e-3 in devices.json was "table1.csv:13: ... cannot be predicted", exit 3,
 * where predict says exit 4). */
Test(paper_ref_bad, a_bad_topology_is_not_blamed_on_the_reference)
{
    cr_assert_eq(th_sh("cp -r models/topologies %s/t && sed -i 's/\"flops\": 22.5e12, \"memory\": "
                       "8589934592/\"flops\": 1e-3, \"memory\": 8589934592/' %s/t/devices.json && "
                       "grep -q '1e-3' %s/t/devices.json", dir, dir, dir), 0);
    cr_assert_eq(th_sh("%s paper --topologies %s/t --out-dir %s/o --quiet --tables 1 2>%s/err",
                       th_pipesim(), dir, dir, dir), 4);
    cr_expect_eq(th_sh("grep -q '^pipesim paper: %s/t/tpu-v2.json: .*device core0.* (predicting "
                       "AmoebaNet-D Naive-1, K = 1, L = 18, of .*table1.csv:13)$' %s/err", dir,
                       dir), 0);
    cr_expect_eq(th_sh("test ! -e %s/o", dir), 0, "the --out-dir it made stayed");
}
