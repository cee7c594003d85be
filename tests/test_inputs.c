/*
 * Input loading at scale and its messages (issue 12): the profile loader's
 * duplicate-name check in O(n log n), duplicate links in topologies, byte
 * order marks, and the one-line messages of numbers out of range. The large
 * cases carry a .timeout: a quadratic check would take minutes.
 */
#include "helpers.h"

#include <unistd.h>

static char path[64];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/pipesim-inputs-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(inputs, .init = setup, .fini = teardown, .timeout = 60);

static void put(const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    cr_assert_geq(fputs(text, f), 0);
    cr_assert_eq(fclose(f), 0);
}

/* Loads path as a profile; expects error `code` whose message holds `what`. */
static void bad_profile(int code, const char *what)
{
    struct mdl_profile *p = (void *)1;
    cr_assert_eq(mdl_profile_load(path, &p), -code, "rc: %s", sim_errmsg());
    cr_assert_null(p);
    cr_assert(strstr(sim_errmsg(), what), "message '%s' lacks '%s'", sim_errmsg(), what);
    cr_assert(strstr(sim_errmsg(), path), "message '%s' lacks the path", sim_errmsg());
    cr_assert_null(strchr(sim_errmsg(), '\n'));
}

#define CSV_H "name,fwd_flops,params,out_bytes,stash_bytes\n"

/* The first repetition in file order is named, with its line and column,
 * whatever order the names sort in. */
Test(inputs, duplicate_layer_named_at_first_repetition)
{
    put(CSV_H "z,1,1,1,1\nb,1,1,1,1\nc,1,1,1,1\n  b,1,1,1,1\nz,1,1,1,1\n");
    bad_profile(SIM_EINVAL, ":5:3: duplicate layer name 'b'");
    put(CSV_H "z,1,1,1,1\nb,1,1,1,1\nz,1,1,1,1\nb,1,1,1,1\n");
    bad_profile(SIM_EINVAL, ":4:1: duplicate layer name 'z'");
    /* the name column need not come first */
    put("fwd_flops,params,out_bytes,stash_bytes,name\n1,1,1,1,x\n1,1,1,1,y\n1,1,1,1,x\n");
    bad_profile(SIM_EINVAL, ":4:9: duplicate layer name 'x'");
    /* names that differ only late, or are prefixes of each other, are distinct */
    put(CSV_H "layer1,1,1,1,1\nlayer10,1,1,1,1\nlayer1x,1,1,1,1\nlayer,1,1,1,1\n");
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(path, &p), 0, "%s", sim_errmsg());
    cr_assert_eq(p->n_layers, 4);
    mdl_profile_free(p);
}

/* 200 000 layers: loads (all distinct) and finds the one repeated name at
 * the end; a pairwise check takes about 100 s here. */
Test(inputs, large_profile_loads_and_finds_a_duplicate, .timeout = 60)
{
    enum { N = 200000 };
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(CSV_H, f);
    for (int i = 0; i < N; i++)
        fprintf(f, "l%d,%d,1,1,1\n", (int)((i * 7919L) % N), 1 + i % 7);
    cr_assert_eq(fclose(f), 0);
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(path, &p), 0, "%s", sim_errmsg());
    cr_assert_eq(p->n_layers, N);
    cr_assert_str_eq(p->layers[1].name, "l7919");
    mdl_profile_free(p);
    f = fopen(path, "a");
    cr_assert(f);
    fprintf(f, "l%d,1,1,1,1\n", 12345);
    cr_assert_eq(fclose(f), 0);
    char want[64];
    snprintf(want, sizeof want, ":%d:1: duplicate layer name 'l12345'", N + 2);
    bad_profile(SIM_EINVAL, want);
}

/* Measured points are copied into the profile (out of line since the layer
 * records shrank): a layer given to mdl_profile_add may be reused. */
Test(inputs, profile_add_copies_measured_points)
{
    struct mdl_profile *p = mdl_profile_new("<test>", 1);
    cr_assert(p);
    double b[2] = { 4, 16 }, fw[2] = { 1, 2 }, bw[2] = { 3, 4 }, ns[2] = { 5, 6 };
    struct mdl_layer l = { .fwd = 1, .bwd = 2, .at_batch = 8, .n_pts = 2, .pt_batch = b,
                           .pt_fwd = fw, .pt_bwd = bw, .pt_nostash = ns };
    strcpy(l.name, "a");
    cr_assert_eq(mdl_profile_add(p, &l), 0);
    b[0] = fw[0] = bw[0] = ns[0] = -1;
    l.n_pts = 0;
    strcpy(l.name, "b");
    cr_assert_eq(mdl_profile_add(p, &l), 0);
    const struct mdl_layer *a = &p->layers[0];
    cr_assert_eq(a->n_pts, 2);
    cr_expect_eq(a->pt_batch[0], 4);
    cr_expect_eq(a->pt_batch[1], 16);
    cr_expect_eq(a->pt_fwd[0], 1);
    cr_expect_eq(a->pt_bwd[1], 4);
    cr_expect_eq(a->pt_nostash[0], 5);
    cr_expect_eq(p->layers[1].n_pts, 0);
    cr_expect_null(p->layers[1].pt_batch);
    mdl_profile_free(p);
}
