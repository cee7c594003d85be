/* Profile CSV and topology JSON loaders: good files, every field checked. */
#include "helpers.h"

#include "models/mdl_gen.h"

#include <unistd.h>

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/pipesim-test-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

Test(profile, loads_flops_and_measured_forms)
{
    char *p = write_tmp("# comment\nname,fwd_flops,params,out_bytes,stash_bytes\n"
                        "a,100,10,4,8\n\n b , 200 ,20,4,8\n");
    struct mdl_profile *prof;
    cr_assert_eq(mdl_profile_load(p, &prof), 0, "%s", ps_errmsg());
    cr_assert_eq(prof->n_layers, 2);
    cr_assert_eq(prof->measured, 0);
    cr_assert_str_eq(prof->layers[1].name, "b");
    cr_assert_eq(prof->layers[1].fwd, 200);
    cr_assert_eq(prof->layers[1].bwd, 400); /* default 2x forward */
    cr_assert_eq(mdl_profile_params(prof), 30);
    mdl_profile_free(prof);
    unlink(p);
    p = write_tmp("name,kind,fwd_ms,bwd_ms,at_batch,params,out_bytes,stash_bytes\n"
                  "x,dense,1.5,,8,1,2,3\n");
    cr_assert_eq(mdl_profile_load(p, &prof), 0, "%s", ps_errmsg());
    cr_assert_eq(prof->measured, 1);
    cr_assert_float_eq(prof->layers[0].fwd, 1.5e-3, 1e-15);
    cr_assert_float_eq(prof->layers[0].bwd, 3e-3, 1e-15);
    cr_assert_eq(prof->layers[0].at_batch, 8);
    mdl_profile_free(prof);
    unlink(p);
}

Test(profile, write_then_load_round_trips)
{
    struct mdl_profile *a, *b;
    cr_assert_eq(mdl_gen_mlp(5, 64, 2, &a), 0);
    char path[] = "/tmp/pipesim-rt-XXXXXX";
    close(mkstemp(path));
    cr_assert_eq(mdl_profile_write(a, path), 0);
    cr_assert_eq(mdl_profile_load(path, &b), 0, "%s", ps_errmsg());
    cr_assert_eq(a->n_layers, b->n_layers);
    for (int i = 0; i < a->n_layers; i++) {
        cr_assert_str_eq(a->layers[i].name, b->layers[i].name);
        cr_assert_eq(a->layers[i].fwd, b->layers[i].fwd);
        cr_assert_eq(a->layers[i].stash_bytes, b->layers[i].stash_bytes);
    }
    mdl_profile_free(a);
    mdl_profile_free(b);
    unlink(path);
}

static void bad_profile(const char *text, int code, const char *what)
{
    char *p = write_tmp(text);
    struct mdl_profile *prof = (void *)1;
    cr_assert_eq(mdl_profile_load(p, &prof), -code, "'%s': %s", text, ps_errmsg());
    cr_assert_null(prof);
    cr_assert(strstr(ps_errmsg(), what), "message '%s' lacks '%s'", ps_errmsg(), what);
    cr_assert(strstr(ps_errmsg(), p), "message '%s' lacks the path", ps_errmsg());
    unlink(p);
}

Test(profile, rejects_bad_rows_with_line_and_field)
{
    const char *h = "name,fwd_flops,params,out_bytes,stash_bytes\n";
    char buf[256];
    snprintf(buf, sizeof buf, "%sa,-1,1,1,1\n", h);
    bad_profile(buf, PS_EINVAL, ":2:3: field 'fwd_flops' must be >= 0");
    snprintf(buf, sizeof buf, "%sa,nan,1,1,1\n", h);
    bad_profile(buf, PS_EINVAL, "must be finite");
    snprintf(buf, sizeof buf, "%sa,1,1,1\n", h);
    bad_profile(buf, PS_EPARSE, ":2: expected 5 fields, found 4");
    snprintf(buf, sizeof buf, "%sa,1,x,1,1\n", h);
    bad_profile(buf, PS_EPARSE, "field 'params': 'x' is not a number");
    snprintf(buf, sizeof buf, "%sa,1,1,1,1\na,2,2,2,2\n", h);
    bad_profile(buf, PS_EINVAL, ":3:1: duplicate layer name 'a'");
    snprintf(buf, sizeof buf, "%s,1,1,1,1\n", h);
    bad_profile(buf, PS_EPARSE, "field 'name' is empty");
    bad_profile("name,fwd_flops,params,out_bytes\na,1,1,1\n", PS_EPARSE,
                "missing column 'stash_bytes'");
    bad_profile("name,fwd_flops,fwd_ms,params,out_bytes,stash_bytes\n", PS_EPARSE,
                "exactly one of");
    bad_profile("name,fwd_ms,params,out_bytes,stash_bytes\na,1,1,1,1\n", PS_EPARSE, "at_batch");
    bad_profile("name,fwd_flops,params,out_bytes,stash_bytes,colour\n", PS_EPARSE,
                "unknown column 'colour'");
    bad_profile("name,fwd_flops,params,out_bytes,stash_bytes\n", PS_EPARSE, "no layers");
    bad_profile("", PS_EPARSE, "empty profile");
    snprintf(buf, sizeof buf, "%sa,1e999,1,1,1\n", h);
    bad_profile(buf, PS_EPARSE, ":2:3: field 'fwd_flops': '1e999' is out of range");
    snprintf(buf, sizeof buf, "%sa,1,1e-400,1,1\n", h);
    bad_profile(buf, PS_EPARSE, ":2:5: field 'params': '1e-400' is out of range (nonzero but "
                                 "below 2.2e-308)");
}

/* ResNet-50 as generated (*a) and as written to a CSV and loaded back (*b). */
static void resnet50_round_trip(struct mdl_profile **a, struct mdl_profile **b)
{
    cr_assert_eq(mdl_model_open("resnet:depth=50", a), 0, "%s", ps_errmsg());
    char path[] = "/tmp/pipesim-rt-XXXXXX";
    close(mkstemp(path));
    cr_assert_eq(mdl_profile_write(*a, path), 0);
    cr_assert_eq(mdl_profile_load(path, b), 0, "%s", ps_errmsg());
    unlink(path);
}

/* stash_shared_bytes: optional, in [0, stash_bytes], 0 on the first layer,
 * written back only when a layer has it (a ResNet's conv after its ReLU). */
Test(profile, stash_shared_bytes_loads_checks_and_round_trips)
{
    const char *h = "name,fwd_flops,params,out_bytes,stash_bytes,stash_shared_bytes\n";
    char buf[256];
    snprintf(buf, sizeof buf, "%sa,1,1,4,8,0\nb,1,1,4,8,4\nc,1,1,4,8,\n", h);
    char *p = write_tmp(buf);
    struct mdl_profile *prof;
    cr_assert_eq(mdl_profile_load(p, &prof), 0, "%s", ps_errmsg());
    cr_expect_eq(prof->layers[1].stash_shared_bytes, 4);
    cr_expect_eq(prof->layers[2].stash_shared_bytes, 0); /* empty: none */
    mdl_profile_free(prof);
    unlink(p);
    snprintf(buf, sizeof buf, "%sa,1,1,4,8,0\nb,1,1,4,8,9\n", h);
    bad_profile(buf, PS_EINVAL, ":3:11: field 'stash_shared_bytes' (9) must be in [0, "
                                "stash_bytes = 8]");
    snprintf(buf, sizeof buf, "%sa,1,1,4,8,-1\n", h);
    bad_profile(buf, PS_EINVAL, ":2:11: field 'stash_shared_bytes' must be >= 0");
    snprintf(buf, sizeof buf, "%sa,1,1,4,8,2\n", h);
    bad_profile(buf, PS_EINVAL, ":2:11: field 'stash_shared_bytes' must be 0 on the first "
                                "layer");
    struct mdl_profile *a, *b;
    resnet50_round_trip(&a, &b);
    int n = 0;
    for (int i = 0; i < a->n_layers; i++) {
        cr_expect_eq(a->layers[i].stash_shared_bytes, b->layers[i].stash_shared_bytes, "%s",
                     a->layers[i].name);
        n += a->layers[i].stash_shared_bytes > 0;
    }
    cr_expect_eq(n, 3 * 16 + 15 + 2, "conv1, conv2 and conv3 of 16 blocks, 15 identities "
                 "(not the first block's), the max and average pools");
    mdl_profile_free(a);
    mdl_profile_free(b);
}

/* carry_bytes: optional, in [0, out_bytes], written back only when a layer
 * has it (the skip a ResNet block carries to its residual: the identity,
 * conv1 .. bn3 of each of 16 blocks, 9 layers). */
Test(profile, carry_bytes_loads_checks_and_round_trips)
{
    const char *h = "name,fwd_flops,params,out_bytes,stash_bytes,carry_bytes\n";
    char buf[256];
    snprintf(buf, sizeof buf, "%sa,1,1,4,8,3\nb,1,1,4,8,\n", h);
    char *p = write_tmp(buf);
    struct mdl_profile *prof;
    cr_assert_eq(mdl_profile_load(p, &prof), 0, "%s", ps_errmsg());
    cr_expect_eq(prof->layers[0].carry_bytes, 3);
    cr_expect_eq(prof->layers[1].carry_bytes, 0); /* empty: none */
    mdl_profile_free(prof);
    unlink(p);
    snprintf(buf, sizeof buf, "%sa,1,1,4,8,5\n", h);
    bad_profile(buf, PS_EINVAL, ":2:11: field 'carry_bytes' (5) must be in [0, out_bytes = 4]");
    snprintf(buf, sizeof buf, "%sa,1,1,4,8,-1\n", h);
    bad_profile(buf, PS_EINVAL, ":2:11: field 'carry_bytes' must be >= 0");
    struct mdl_profile *a, *b;
    resnet50_round_trip(&a, &b);
    int n = 0;
    for (int i = 0; i < a->n_layers; i++) {
        cr_expect_eq(a->layers[i].carry_bytes, b->layers[i].carry_bytes, "%s",
                     a->layers[i].name);
        n += a->layers[i].carry_bytes > 0;
    }
    cr_expect_eq(n, 9 * 16, "the identity and conv1 .. bn3 of 16 blocks");
    struct mdl_layer l = { .out_bytes = 4, .carry_bytes = 5 };
    snprintf(l.name, sizeof l.name, "x");
    cr_expect_eq(mdl_profile_add(b, &l), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "carry_bytes 5 outside [0, out_bytes = 4]"), "%s",
              ps_errmsg());
    mdl_profile_free(a);
    mdl_profile_free(b);
}

Test(profile, missing_file_is_an_io_error)
{
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load("/nonexistent/x.csv", &p), -PS_EIO);
    cr_assert(strstr(ps_errmsg(), "/nonexistent/x.csv"));
}

Test(topology, loads_presets)
{
    const char *presets[] = { "models/topologies/cpu-2core.json",
                              "models/topologies/chain-8-ideal.json",
                              "models/topologies/pcie-8gpu.json" };
    const int ndev[] = { 2, 8, 8 };
    for (int i = 0; i < 3; i++) {
        struct mdl_topology *t;
        cr_assert_eq(mdl_topology_load(presets[i], &t), 0, "%s", ps_errmsg());
        cr_assert_eq(t->n_devices, ndev[i]);
        for (int d = 0; d + 1 < t->n_devices; d++)
            cr_assert_geq(mdl_topology_link_between(t, d, d + 1), 0);
        mdl_topology_free(t);
    }
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load("models/topologies/pcie-8gpu.json", &t), 0);
    cr_assert_str_eq(t->devices[7].name, "gpu7");
    cr_assert(t->links[0].shared);
    cr_assert_eq(t->links[0].n_ends, 8);
    cr_assert_eq(t->bytes_per_param, 12);
    mdl_topology_free(t);
}

static void bad_topo(const char *text, int code, const char *what)
{
    char *p = write_tmp(text);
    struct mdl_topology *t = (void *)1;
    cr_assert_eq(mdl_topology_load(p, &t), -code, "'%s': %s", text, ps_errmsg());
    cr_assert_null(t);
    cr_assert(strstr(ps_errmsg(), what), "message '%s' lacks '%s'", ps_errmsg(), what);
    unlink(p);
}

#define DEV "{\"name\":\"d\",\"count\":2,\"flops\":1e12,\"memory\":1e9}"

Test(topology, rejects_bad_fields_by_path)
{
    bad_topo("{\"devices\":[" DEV "],", PS_EPARSE, ":1:");
    bad_topo("{\"devices\":[]}", PS_EPARSE, "non-empty array");
    bad_topo("{\"devices\":[{\"name\":\"d\",\"flops\":-1,\"memory\":1}]}", PS_EINVAL,
             "devices[0].flops: must be > 0");
    bad_topo("{\"devices\":[{\"name\":\"d\",\"flops\":1,\"memory\":\"big\"}]}", PS_EPARSE,
             "devices[0].memory: must be a number");
    bad_topo("{\"devices\":[{\"name\":\"d\",\"flops\":1}]}", PS_EPARSE, "missing field 'memory'");
    bad_topo("{\"devices\":[" DEV "],\"colour\":1}", PS_EPARSE, "unknown field 'colour'");
    bad_topo("{\"devices\":[" DEV "," DEV "]}", PS_EINVAL, "duplicate device name 'd0'");
    bad_topo("{\"devices\":[" DEV "],\"links\":[{\"name\":\"l\",\"endpoints\":[\"d0\",\"x\"],"
             "\"bandwidth\":1}]}", PS_EINVAL, "links[0].endpoints[1]: unknown device 'x'");
    bad_topo("{\"devices\":[" DEV "],\"links\":[{\"name\":\"l\",\"endpoints\":[\"d0\",\"d1\"],"
             "\"bandwidth\":0}]}", PS_EINVAL, "links[0].bandwidth: must be > 0");
    bad_topo("{\"devices\":[{\"name\":\"d\",\"flops\":1,\"memory\":1,\"efficiency\":{\"max\":2}}]}",
             PS_EINVAL, "efficiency.max: must be in (0, 1]");
    bad_topo("[1,2]", PS_EPARSE, "top level must be an object");
    bad_topo("{\"devices\":[" DEV "],\"devices\":[" DEV "]}", PS_EPARSE, "duplicate");
}

Test(topology, efficiency_model)
{
    struct mdl_device d = { .flops = 1e12, .eff_max = 0.5, .batch_half = 4, .overhead_s = 1e-6 };
    /* f*n / (flops * max * n/(n+h)) + overhead = 1e9 * (4 + 4) / 5e11 + 1e-6 */
    cr_assert_float_eq(mdl_device_op_seconds(&d, 0, 1e9, 0, 4), 0.016 + 1e-6, 1e-15);
    /* measured: t_b (n + h) / (b + h) */
    cr_assert_float_eq(mdl_device_op_seconds(&d, 1, 2e-3, 4, 12), 2e-3 * 16 / 8, 1e-15);
    cr_assert_eq(mdl_device_op_seconds(&d, 0, 0, 0, 4), 0);
}

Test(generator, mlp_spec)
{
    struct mdl_profile *p;
    cr_assert_eq(mdl_model_open("mlp:layers=4,width=8,norm=2", &p), 0, "%s", ps_errmsg());
    cr_assert_eq(p->n_layers, 6);
    cr_assert_str_eq(p->layers[2].kind, "layernorm");
    cr_assert_eq(p->layers[0].params, 72);
    mdl_profile_free(p);
    cr_assert_eq(mdl_model_open("mlp:layers=4", &p), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "missing parameter 'width'"));
    cr_assert_eq(mdl_model_open("mlp:layers=4,width=8,depth=3", &p), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "unknown parameter 'depth'"));
    cr_assert_eq(mdl_model_open("mlp:layers=0,width=8", &p), -PS_EUSAGE);
    cr_assert_eq(mdl_model_open("resnet:50", &p), -PS_EUSAGE);
}
