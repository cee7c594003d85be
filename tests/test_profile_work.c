/* The work-by-op-class columns of a profile (models/mdl_profile.h): gemms
 * syntax, mm_* derived from gemms and checked against them, wgrad_*,
 * errors at file:line:col naming the field, the writer's round trip, and
 * the bundled profiles loading without work. */
#include "helpers.h"
#include "models/mdl_profile_int.h"

static struct mdl_profile *parse(const char *csv)
{
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_parse(csv, strlen(csv), "w.csv", &p), 0, "%s", ps_errmsg());
    return p;
}

static void fails(const char *csv, const char *needle)
{
    struct mdl_profile *p;
    cr_assert_lt(mdl_profile_parse(csv, strlen(csv), "w.csv", &p), 0, "accepted:\n%s", csv);
    cr_expect(strstr(ps_errmsg(), needle), "message '%s' lacks '%s'", ps_errmsg(), needle);
}

#define HDR "name,fwd_flops,params,out_bytes,stash_bytes,"

Test(profile_work, gemms_and_derived_flops)
{
    struct mdl_profile *p = parse(HDR "gemms,vec_fwd_flops,bytes_bwd,kernels_fwd\n"
                                  "a,1,0,0,0,196x64x128 16x8x16*4a,5,6,7\n"
                                  "b,1,0,0,0,,,,\n");
    const struct mdl_work *w = p->layers[0].work;
    cr_assert(w);
    cr_assert_eq(w->n_gemms, 2);
    cr_expect_eq(w->gemms[0].rows, 196);
    cr_expect_eq(w->gemms[0].k, 64);
    cr_expect_eq(w->gemms[0].n, 128);
    cr_expect_eq(w->gemms[0].count, 1);
    cr_expect_eq(w->gemms[0].weight, 1);
    cr_expect_eq(w->gemms[1].count, 4);
    cr_expect_eq(w->gemms[1].weight, 0);
    double g0 = 2.0 * 196 * 64 * 128, g1 = 2.0 * 16 * 8 * 16 * 4;
    cr_expect_eq(w->mm_fwd, g0 + g1);
    cr_expect_eq(w->mm_dgrad, g0 + 2 * g1);
    cr_expect_eq(w->mm_wgrad, g0);
    cr_expect_eq(w->vec_fwd, 5);
    cr_expect_eq(w->bytes_bwd, 6);
    cr_expect_eq(w->kernels_fwd, 7);
    cr_expect_null(p->layers[1].work, "a row with every work field empty has none");
    mdl_profile_free(p);
}

Test(profile_work, mm_columns_agree_with_gemms)
{
    /* 2 x 10 x 10 x 10 = 2000; within 0.1 % is accepted */
    struct mdl_profile *p = parse(HDR "gemms,mm_fwd_flops\n" "a,1,0,0,0,10x10x10,2001\n");
    cr_expect_eq(p->layers[0].work->mm_fwd, 2001);
    mdl_profile_free(p);
    fails(HDR "gemms,mm_fwd_flops\n" "a,1,0,0,0,10x10x10,2100\n",
          "w.csv:2:20: field 'mm_fwd_flops'");
    /* mm columns alone: no gemms, taken as given */
    p = parse(HDR "mm_fwd_flops,mm_dgrad_flops,mm_wgrad_flops\n" "a,1,0,0,0,3,4,5\n");
    cr_expect_eq(p->layers[0].work->mm_dgrad, 4);
    cr_expect_eq(p->layers[0].work->n_gemms, 0);
    mdl_profile_free(p);
}

Test(profile_work, gemms_errors)
{
    fails(HDR "gemms\n" "a,1,0,0,0,10x20\n", "w.csv:2:11: field 'gemms': '10x20'");
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30 0x1x1\n", "w.csv:2:20: field 'gemms': '0x1x1'");
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30*0\n", "'10x20x30*0'");
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30*1.5\n", "COUNT");
    fails(HDR "gemms\n" "a,1,0,0,0,0x10x20x30\n", "field 'gemms'");
    fails(HDR "gemms\n" "a,1,0,0,0,infx1x1\n", "field 'gemms'");
    fails(HDR "gemms\n" "a,1,0,0,0,1x1x1b\n", "field 'gemms'");
    fails(HDR "vec_fwd_flops\n" "a,1,0,0,0,-1\n", "w.csv:2:11: field 'vec_fwd_flops' must be >= 0");
    fails(HDR "kernels_bwd\n" "a,1,0,0,0,x\n", "field 'kernels_bwd': 'x' is not a number");
    /* the words of every other column (helper-137: "'nan' is out of range") */
    fails(HDR "vec_fwd_flops\n" "a,1,0,0,0,nan\n",
          "w.csv:2:11: field 'vec_fwd_flops' must be finite, got 'nan'");
    fails(HDR "vec_fwd_flops\n" "a,1,0,0,0,1e999\n",
          "w.csv:2:11: field 'vec_fwd_flops': '1e999' is out of range (magnitude above 1.8e308)");
    fails(HDR "gemms,gemms\n" "a,1,0,0,0,1x1x1,1x1x1\n", "duplicate column 'gemms'");
    /* /IN: the left operand's elements, a weight product's only. */
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30/0\n", "'10x20x30/0'");
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30/\n", "field 'gemms'");
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30/5a\n", "/IN and c only on a weight product");
    /* c: a convolution, a weight product's only, once, after a|i */
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30ac\n", "'10x20x30ac'");
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30cc\n", "'10x20x30cc'");
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30ci\n", "'10x20x30ci'");
    /* whole dimensions up to 1e15, and the message says so (helper-115: 9.5 was
     * taken, and 1e13 refused as not "> 0") */
    fails(HDR "gemms\n" "a,1,0,0,0,1.5x9.5x1\n", "whole numbers from 1 to 1e15");
    fails(HDR "gemms\n" "a,1,0,0,0,1e16x1x1\n", "'1e16x1x1' is not ROWSxKxN[/IN][*COUNT][a|i]"
                                                 "[c[w]] (dimensions, /IN and COUNT whole "
                                                 "numbers from 1 to 1e15");
    fails(HDR "gemms\n" "a,1,0,0,0,10x20x30/7.5\n", "'10x20x30/7.5'");
    /* cw: a 3 x 3 stride-1 convolution, its input as large as its output
     * (IN = ROWS x K / 9); a stride-2 one (14 x 14 x 512 in, 7 x 7 out) was
     * run by Winograd */
    fails(HDR "gemms\n" "a,1,0,0,0,49x4608x512/100352cw\n", "w only with /IN = ROWS x K / 9");
    fails(HDR "gemms\n" "a,1,0,0,0,50x4608x512/1cw\n", "'50x4608x512/1cw'");
    struct mdl_profile *p = parse(HDR "gemms\n" "a,1,0,0,0,196x4608x512/100352cw\n");
    cr_expect_eq(p->layers[0].work->gemms[0].wino, 1);
    mdl_profile_free(p);
    /* kernels are counted whole (1.5 ran 1.5 launches' overhead) */
    fails(HDR "kernels_fwd\n" "a,1,0,0,0,1.5\n",
          "w.csv:2:11: field 'kernels_fwd' (1.5) must be a whole number of kernels");
    fails(HDR "kernels_wgrad\n" "a,1,0,0,0,0.5\n", "field 'kernels_wgrad' (0.5)");
}

/* p written to a fresh temporary directory and read back (the directory is
 * removed; the profile read back is the caller's). */
static struct mdl_profile *write_read(const struct mdl_profile *p, const char *tag)
{
    char dir[128], path[256];
    th_tmpdir(dir, sizeof dir, tag);
    snprintf(path, sizeof path, "%s/out.csv", dir);
    cr_assert_eq(mdl_profile_write(p, path), 0, "%s", ps_errmsg());
    struct mdl_profile *q;
    cr_assert_eq(mdl_profile_load(path, &q), 0, "%s", ps_errmsg());
    th_sh("rm -rf %s", dir);
    return q;
}

Test(profile_work, convolution_flag)
{
    struct mdl_profile *p =
        parse(HDR "gemms\n" "a,1,0,0,0,784x1728x64/150528*2c 10x10x10/7ic 5x5x5 3x3x3i\n");
    const struct mdl_work *w = p->layers[0].work;
    cr_assert_eq(w->n_gemms, 4);
    int conv[] = { 1, 1, 0, 0 }, weight[] = { 1, 2, 1, 2 };
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(w->gemms[i].conv, conv[i], "product %d", i);
        cr_expect_eq(w->gemms[i].weight, weight[i], "product %d", i);
    }
    cr_expect_eq(w->gemms[0].count, 2);
    cr_expect_eq(w->gemms[1].in, 7);
    struct mdl_profile *q = write_read(p, "pcflag");
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(q->layers[0].work->gemms[i].conv, conv[i], "read back: product %d", i);
        cr_expect_eq(q->layers[0].work->gemms[i].weight, weight[i], "read back: product %d", i);
    }
    mdl_profile_free(q);
    mdl_profile_free(p);
}

Test(profile_work, conv_input_elements)
{
    struct mdl_profile *p = parse(HDR "gemms\n" "a,1,0,0,0,784x1728x64/150528*2 10x10x10/7i\n");
    const struct mdl_work *w = p->layers[0].work;
    cr_assert_eq(w->n_gemms, 2);
    cr_expect_eq(w->gemms[0].in, 150528);
    cr_expect_eq(w->gemms[0].count, 2);
    cr_expect_eq(w->gemms[0].weight, 1);
    cr_expect_eq(w->gemms[1].in, 7);
    cr_expect_eq(w->gemms[1].weight, 2);
    /* FLOPs stay ROWS x K x N's. */
    cr_expect_eq(w->mm_fwd, 2.0 * 784 * 1728 * 64 * 2 + 2.0 * 1000);
    struct mdl_profile *q = write_read(p, "pconv");
    cr_expect_eq(q->layers[0].work->gemms[0].in, 150528);
    cr_expect_eq(q->layers[0].work->gemms[1].in, 7);
    cr_expect_eq(q->layers[0].work->gemms[1].weight, 2);
    mdl_profile_free(q);
    mdl_profile_free(p);
}

Test(profile_work, wgrad_columns)
{
    struct mdl_profile *p = parse("name,fwd_flops,bwd_flops,wgrad_flops,params,out_bytes,"
                                  "stash_bytes\n" "a,1,4,1.5,0,0,0\n" "b,1,4,,0,0,0\n");
    cr_expect_eq(p->layers[0].has_wgrad, 1);
    cr_expect_eq(p->layers[0].wgrad, 1.5);
    cr_expect_null(p->layers[0].work);
    cr_expect_eq(p->layers[1].has_wgrad, 0);
    mdl_profile_free(p);
    p = parse("name,fwd_ms,bwd_ms,wgrad_ms,at_batch,params,out_bytes,stash_bytes\n"
              "a,1,2,0.5,8,0,0,0\n");
    cr_expect_float_eq(p->layers[0].wgrad, 0.5e-3, 1e-15);
    mdl_profile_free(p);
    fails("name,fwd_flops,bwd_flops,wgrad_flops,params,out_bytes,stash_bytes\n"
          "a,1,4,5,0,0,0\n", "w.csv:2:7: field 'wgrad_flops' (5) must be <= the backward");
    fails("name,fwd_flops,wgrad_ms,params,out_bytes,stash_bytes\n" "a,1,1,0,0,0\n",
          "column 'wgrad_ms' needs 'fwd_ms'");
    fails("name,fwd_ms,at_batch,wgrad_flops,params,out_bytes,stash_bytes\n" "a,1,1,1,0,0,0\n",
          "column 'wgrad_flops' needs 'fwd_flops'");
}

Test(profile_work, write_reads_back)
{
    struct mdl_profile *p = parse(HDR "wgrad_flops,gemms,vec_fwd_flops,vec_bwd_flops,bytes_fwd,"
                                  "kernels_wgrad\n"
                                  "a,10,0,0,0,2,7x3x5*2 4x4x4a,1,2,3,4\n"
                                  "b,10,0,0,0,,,,,,\n");
    char dir[128];
    th_tmpdir(dir, sizeof dir, "pwork");
    char path[256];
    snprintf(path, sizeof path, "%s/out.csv", dir);
    cr_assert_eq(mdl_profile_write(p, path), 0, "%s", ps_errmsg());
    struct mdl_profile *q;
    cr_assert_eq(mdl_profile_load(path, &q), 0, "%s", ps_errmsg());
    cr_assert_eq(q->n_layers, 2);
    const struct mdl_work *a = p->layers[0].work, *b = q->layers[0].work;
    cr_assert(b);
    cr_expect_eq(q->layers[0].has_wgrad, 1);
    cr_expect_eq(q->layers[0].wgrad, 2);
    cr_expect_eq(b->n_gemms, 2);
    cr_expect_eq(b->gemms[0].count, 2);
    cr_expect_eq(b->gemms[1].weight, 0);
    cr_expect_eq(b->mm_fwd, a->mm_fwd);
    cr_expect_eq(b->mm_dgrad, a->mm_dgrad);
    cr_expect_eq(b->mm_wgrad, a->mm_wgrad);
    cr_expect_eq(b->vec_bwd, 2);
    cr_expect_eq(b->bytes_fwd, 3);
    cr_expect_eq(b->kernels_wgrad, 4);
    cr_expect_null(q->layers[1].work);
    cr_expect_eq(q->layers[1].has_wgrad, 0);
    mdl_profile_free(q);
    mdl_profile_free(p);
    th_sh("rm -rf %s", dir);
}

Test(profile_work, bundled_profiles_have_no_work)
{
    const char *files[] = { "models/profiles/mlp-uniform.csv",
                            "models/profiles/transformer-small.csv" };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        struct mdl_profile *p;
        cr_assert_eq(mdl_profile_load(files[i], &p), 0, "%s", ps_errmsg());
        for (int l = 0; l < p->n_layers; l++) {
            cr_expect_null(p->layers[l].work);
            cr_expect_eq(p->layers[l].has_wgrad, 0);
        }
        mdl_profile_free(p);
    }
}

/* wgrad_ms@N: W at each measured size; its share of the backward is
 * interpolated between the sizes (at_batch among them), constant beyond. */
#define WPH "name,fwd_ms,bwd_ms,wgrad_ms,at_batch,params,out_bytes,stash_bytes,"

Test(profile_work, wgrad_points)
{
    struct mdl_device d;
    memset(&d, 0, sizeof d);
    d.flops = 1e12;
    /* shares: 0.25 at 4, 0.375 at 8, 0.5 at 16 (at_batch) */
    struct mdl_profile *p = parse(WPH "fwd_ms@4,bwd_ms@4,wgrad_ms@4,fwd_ms@8,bwd_ms@8,"
                                  "wgrad_ms@8\n" "a,16,16,8,16,0,0,0,4,4,1,8,8,3\n");
    const struct mdl_layer *l = &p->layers[0];
    double b, w;
    static const double n[] = { 4, 8, 12, 16 }, want[] = { 1e-3, 3e-3, 5.25e-3, 8e-3 };
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(mdl_layer_bwd_split(&d, 1, l, n[i], &b, &w), 1);
        cr_expect_float_eq(w, want[i], 1e-15, "W at %g: %g", n[i], w);
        cr_expect_float_eq(b + w, mdl_layer_seconds(&d, 1, l, MDL_OP_BWD, n[i]), 1e-15);
    }
    mdl_layer_bwd_split(&d, 1, l, 2, &b, &w); /* below the smallest: its share */
    cr_expect_float_eq(w / (b + w), 0.25, 1e-12);
    mdl_layer_bwd_split(&d, 1, l, 64, &b, &w); /* above the largest */
    cr_expect_float_eq(w / (b + w), 0.5, 1e-12);
    /* written back with the points, and read again to the same split */
    char dir[128], path[256];
    th_tmpdir(dir, sizeof dir, "pwpts");
    snprintf(path, sizeof path, "%s/out.csv", dir);
    cr_assert_eq(mdl_profile_write(p, path), 0, "%s", ps_errmsg());
    cr_expect_eq(th_sh("grep -q 'wgrad_ms@4' %s && grep -q 'wgrad_ms@8' %s", path, path), 0);
    struct mdl_profile *q;
    cr_assert_eq(mdl_profile_load(path, &q), 0, "%s", ps_errmsg());
    double b2, w2;
    mdl_layer_bwd_split(&d, 1, l, 12, &b, &w);
    mdl_layer_bwd_split(&d, 1, &q->layers[0], 12, &b2, &w2);
    cr_expect_float_eq(w2, w, 1e-15);
    mdl_profile_free(q);
    mdl_profile_free(p);
    th_sh("rm -rf %s", dir);
    /* without the points: at_batch's share at every size */
    p = parse(WPH "fwd_ms@4,bwd_ms@4\n" "a,16,16,8,16,0,0,0,4,4\n");
    mdl_layer_bwd_split(&d, 1, &p->layers[0], 4, &b, &w);
    cr_expect_float_eq(w, 2e-3, 1e-15);
    mdl_profile_free(p);
    /* a layer without W leaves its points empty */
    p = parse(WPH "fwd_ms@4,bwd_ms@4,wgrad_ms@4\n" "a,16,16,,16,0,0,0,4,4,\n");
    cr_expect_eq(p->layers[0].has_wgrad, 0);
    mdl_profile_free(p);
    fails("name,fwd_ms,bwd_ms,at_batch,params,out_bytes,stash_bytes,fwd_ms@4,bwd_ms@4,"
          "wgrad_ms@4\n" "a,16,16,16,0,0,0,4,4,1\n", "w.csv:1: column 'wgrad_ms@4' needs "
          "column 'wgrad_ms'");
    fails(WPH "fwd_ms@4,bwd_ms@4,wgrad_ms@4\n" "a,16,16,8,16,0,0,0,4,4,5\n",
          ": field 'wgrad_ms@4' (5 ms) must be <= 'bwd_ms@4' (4 ms)");
    fails(WPH "fwd_ms@4,bwd_ms@4,wgrad_ms@4\n" "a,16,16,8,16,0,0,0,4,4,\n",
          ": field 'wgrad_ms@4' is empty, and the layer's 'wgrad_ms' is given");
    fails(WPH "fwd_ms@4,bwd_ms@4,wgrad_ms@4\n" "a,16,16,,16,0,0,0,4,4,1\n",
          ": field 'wgrad_ms@4' needs the field 'wgrad_ms'");
    fails(WPH "fwd_ms@4,bwd_ms@4,wgrad_ms@4\n" "a,16,16,8,16,0,0,0,,,1\n",
          ": field 'wgrad_ms@4' needs the fields fwd_ms@4 and bwd_ms@4");
    fails(WPH "fwd_ms@16,bwd_ms@16,wgrad_ms@16\n" "a,16,16,8,16,0,0,0,16,16,7\n",
          "w.csv:2: field 'wgrad_ms@16' differs from the value at at_batch");
    fails(WPH "fwd_ms@4,bwd_ms@4,wgrad_ms@4\n" "a,16,16,8,16,0,0,0,4,4,x\n",
          ": field 'wgrad_ms@4'");
}
