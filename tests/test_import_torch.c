/* pipesim import-torch: the real torch.profiler fixture (Debian's torch 1.13,
 * made by scripts/make_torch_trace.py) becomes a profile that loads and
 * predicts; layer times agree with the raw events; the sequence-number path
 * and the error paths on small hand-written traces. */
#include "helpers.h"

#include <math.h>

#include "analysis/ana_predict.h"
#include "models/mdl_torch.h"

#include <jansson.h>
#include <unistd.h>

#define FIXTURE "tests/fixtures/torch/tinyformer.json"

TestSuite(import_torch, .timeout = 30);

static const char *const layer_names[] = { "embed", "attn", "ln1", "ffn", "ln2", "head",
                                           "loss" };

/* Independent of the importer: sums the durations of the layer ranges that
 * lie inside the script's pipesim:forward (dir 0) or pipesim:backward (1)
 * ranges, and of those ranges themselves. */
static void raw_sums(double *layers, double *regions, int *n_regions)
{
    json_error_t err;
    json_t *root = json_load_file(FIXTURE, 0, &err);
    cr_assert(root, "%s", err.text);
    size_t n = json_array_size(root);
    for (int d = 0; d < 2; d++)
        layers[d] = regions[d] = n_regions[d] = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(root, i);
        const char *name = json_string_value(json_object_get(r, "name"));
        int d = !strcmp(name, "pipesim:forward") ? 0 : !strcmp(name, "pipesim:backward") ? 1
                                                                                        : -1;
        if (d < 0)
            continue;
        double a = json_number_value(json_object_get(r, "ts"));
        double b = a + json_number_value(json_object_get(r, "dur"));
        regions[d] += b - a;
        n_regions[d]++;
        for (size_t j = 0; j < n; j++) {
            json_t *e = json_array_get(root, j);
            double t = json_number_value(json_object_get(e, "ts"));
            if (!strncmp(json_string_value(json_object_get(e, "name")), "layer:", 6) &&
                t >= a && t < b)
                layers[d] += json_number_value(json_object_get(e, "dur"));
        }
    }
    json_decref(root);
}

Test(import_torch, fixture_layers_times_and_sizes)
{
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { 0 };
    cr_assert_eq(mdl_torch_import(FIXTURE, &o, &p, &rep), 0, "%s", ps_errmsg());
    cr_assert_eq(p->n_layers, 7);
    cr_assert_eq(rep.n_layers, 7);
    cr_assert_eq(rep.steps, 3);
    cr_assert_eq(rep.method, MDL_TORCH_BWD_RANGES);
    cr_assert_eq(rep.n_recompute, 0);
    cr_assert(p->measured);
    for (int l = 0; l < 7; l++) {
        cr_assert_str_eq(p->layers[l].name, layer_names[l]);
        cr_assert_gt(p->layers[l].fwd, 0, "%s", layer_names[l]);
        cr_assert_gt(p->layers[l].bwd, 0, "%s", layer_names[l]);
        cr_assert_lt(p->layers[l].fwd, 1.0, "%s: a forward over 1 s is implausible here",
                     layer_names[l]);
        cr_assert_eq(p->layers[l].at_batch, 8);
    }
    /* parameter counts follow from the architecture (script constants) */
    const double params[7] = { 64 * 128 + 128, 128 * 384 + 384 + 128 * 128 + 128, 256,
                               128 * 512 + 512 + 512 * 128 + 128, 256, 128 * 10 + 10, 0 };
    for (int l = 0; l < 7; l++)
        cr_assert_eq(p->layers[l].params, params[l], "%s", layer_names[l]);
    /* activations of [seq 64, d_model 128] fp32 per sample; the head's 10 logits */
    cr_assert_eq(p->layers[0].out_bytes, 64 * 128 * 4);
    cr_assert_eq(p->layers[3].out_bytes, 64 * 128 * 4);
    cr_assert_eq(p->layers[5].out_bytes, 10 * 4);
    cr_assert_eq(p->layers[0].stash_bytes, 64 * 64 * 4, "embed keeps its input");
    cr_assert_str_eq(p->layers[1].kind, "attention");

    /* the importer's sums are exactly the raw layer events per region */
    double lay[2], reg[2];
    int nreg[2];
    raw_sums(lay, reg, nreg);
    cr_assert_eq(nreg[0], 3);
    cr_assert_eq(nreg[1], 3);
    double fwd = 0, bwd = 0;
    for (int l = 0; l < 7; l++)
        fwd += p->layers[l].fwd, bwd += p->layers[l].bwd;
    cr_assert_float_eq(fwd * 3e6, lay[0], 1e-6);
    cr_assert_float_eq(bwd * 3e6, lay[1], 1e-6);
    cr_assert_float_eq(rep.fwd_us * 3, lay[0], 1e-6);
    /* and cover the forward and backward passes: within 10% of their ranges */
    cr_assert(lay[0] <= reg[0] && lay[0] >= 0.9 * reg[0], "forward layers %g of %g us",
              lay[0], reg[0]);
    cr_assert(lay[1] <= reg[1] && lay[1] >= 0.9 * reg[1], "backward layers %g of %g us",
              lay[1], reg[1]);
    mdl_profile_free(p);
}

Test(import_torch, cli_csv_loads_and_predicts)
{
    char out[] = "/tmp/pipesim-torch-XXXXXX";
    close(mkstemp(out));
    cr_assert_eq(th_sh("%s import-torch " FIXTURE " -o %s 2>/dev/null", th_pipesim(), out), 0);
    struct mdl_profile *p;
    cr_assert_eq(mdl_profile_load(out, &p), 0, "%s", ps_errmsg());
    cr_assert_eq(p->n_layers, 7);
    cr_assert(p->measured);
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load("models/topologies/cpu-2core.json", &t), 0, "%s",
                 ps_errmsg());
    struct ana_config cfg = { .profile = p, .topo = t, .K = 2, .M = 4, .batch = 32,
                              .remat = SCH_REMAT_EXCEPT_LAST };
    struct ana_prediction *pr;
    cr_assert_eq(ana_predict(&cfg, &pr), 0, "%s", ps_errmsg());
    double sum = 0; /* one step of the whole model at the measured batch */
    for (int l = 0; l < p->n_layers; l++)
        sum += p->layers[l].fwd + p->layers[l].bwd;
    cr_assert_gt(pr->step_s, 0);
    cr_assert(pr->fits);
    cr_assert_geq(pr->baseline_step_s, sum, "batch 32 on one device takes at least the "
                  "batch-8 step");
    ana_prediction_free(pr);
    mdl_topology_free(t);
    mdl_profile_free(p);
    unlink(out);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

/* A Kineto-shaped trace: layers a (forward op seq 10) and b (seq 11); the
 * backward runs b's function (seq on its child), an AccumulateGrad without
 * one (charged to b), a's function (seq on itself) and one for seq 99 that no
 * layer made. */
static const char kineto[] =
    "{\"traceEvents\": [\n"
    " {\"ph\":\"X\",\"name\":\"layer:a\",\"ts\":100,\"dur\":50,\"pid\":1,\"tid\":7},\n"
    " {\"ph\":\"X\",\"name\":\"aten::mm\",\"ts\":110,\"dur\":30,\"pid\":1,\"tid\":7,"
    "\"args\":{\"Sequence number\":10}},\n"
    " {\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":160,\"dur\":20,\"pid\":1,\"tid\":7},\n"
    " {\"ph\":\"X\",\"name\":\"aten::relu\",\"ts\":161,\"dur\":10,\"pid\":1,\"tid\":7,"
    "\"args\":{\"Sequence number\":11}},\n"
    " {\"ph\":\"i\",\"name\":\"marker\",\"ts\":170,\"pid\":1,\"tid\":7},\n"
    " {\"ph\":\"X\",\"name\":\"autograd::engine::evaluate_function: ReluBackward0\","
    "\"ts\":200,\"dur\":40,\"pid\":1,\"tid\":9},\n"
    " {\"ph\":\"X\",\"name\":\"ReluBackward0\",\"ts\":201,\"dur\":38,\"pid\":1,\"tid\":9,"
    "\"args\":{\"Sequence number\":11,\"Fwd thread id\":7}},\n"
    " {\"ph\":\"X\",\"name\":\"autograd::engine::evaluate_function: "
    "torch::autograd::AccumulateGrad\",\"ts\":240,\"dur\":5,\"pid\":1,\"tid\":9},\n"
    " {\"ph\":\"X\",\"name\":\"autograd::engine::evaluate_function: MmBackward0\","
    "\"ts\":250,\"dur\":70,\"pid\":1,\"tid\":9,\"args\":{\"Sequence number\":10}},\n"
    " {\"ph\":\"X\",\"name\":\"autograd::engine::evaluate_function: SumBackward0\","
    "\"ts\":330,\"dur\":3,\"pid\":1,\"tid\":9,\"args\":{\"Sequence number\":99}}\n"
    "]}\n";

Test(import_torch, sequence_numbers_attribute_backward)
{
    char path[] = "/tmp/pipesim-kineto-XXXXXX";
    close(mkstemp(path));
    write_file(path, kineto);
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { .batch = 4 };
    cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "%s", ps_errmsg());
    cr_assert_eq(rep.method, MDL_TORCH_BWD_SEQUENCE);
    cr_assert_eq(rep.steps, 1);
    cr_assert_eq(p->n_layers, 2);
    cr_assert_str_eq(p->layers[0].name, "a");
    cr_assert_float_eq(p->layers[0].fwd, 50e-6, 1e-15);
    cr_assert_float_eq(p->layers[1].fwd, 20e-6, 1e-15);
    cr_assert_float_eq(p->layers[0].bwd, 70e-6, 1e-15);
    cr_assert_float_eq(p->layers[1].bwd, 45e-6, 1e-15, "ReluBackward0 + AccumulateGrad");
    cr_assert_float_eq(rep.unattributed_us, 3, 1e-9);
    cr_assert_eq(p->layers[0].at_batch, 4);
    cr_assert_eq(p->layers[0].params, 0, "no sidecar");
    mdl_profile_free(p);
    unlink(path);
}

/* By sequence numbers, a trace whose window closes after a step's forward,
 * before its backward, is refused as the ranges method refuses one
 * (helper-139: 3 forwards, 2 backwards, every backward divided by 3, exit
 * 0); whole steps import, each 60 us backward written 0.06 ms (it was
 * 0.060000000000000005: ms as seconds x 1e3). */
Test(import_torch, a_sequence_trace_cut_after_a_forward_is_refused)
{
    char whole[8192] = "{\"traceEvents\": [", cut[sizeof whole + 4];
    for (int k = 0, s = 10; k < 3; k++, s += 2) {
        char ev[1024];
        int t = 1000 * k;
        snprintf(ev, sizeof ev, "%s{\"ph\":\"X\",\"name\":\"layer:a\",\"ts\":%d,\"dur\":100,"
                 "\"tid\":1},{\"ph\":\"X\",\"name\":\"aten::addmm\",\"ts\":%d,\"dur\":60,"
                 "\"tid\":1,\"args\":{\"Sequence number\":%d}},{\"ph\":\"X\",\"name\":"
                 "\"layer:b\",\"ts\":%d,\"dur\":50,\"tid\":1},{\"ph\":\"X\",\"name\":"
                 "\"aten::relu\",\"ts\":%d,\"dur\":30,\"tid\":1,\"args\":{\"Sequence "
                 "number\":%d}}", k ? "," : "", t, t + 20, s, t + 100, t + 110, s + 1);
        strcat(whole, ev);
        if (k == 2)
            snprintf(cut, sizeof cut, "%s]}", whole);
        snprintf(ev, sizeof ev, ",{\"ph\":\"X\",\"name\":\"autograd::engine::"
                 "evaluate_function: ReluBackward0\",\"ts\":%d,\"dur\":40,\"tid\":2,"
                 "\"args\":{\"Sequence number\":%d}},{\"ph\":\"X\",\"name\":\"autograd::"
                 "engine::evaluate_function: AddmmBackward0\",\"ts\":%d,\"dur\":60,\"tid\":2,"
                 "\"args\":{\"Sequence number\":%d}}", t + 207, s + 1, t + 247, s);
        strcat(whole, ev);
    }
    strcat(whole, "]}");
    char path[] = "/tmp/pipesim-seqcut-XXXXXX";
    close(mkstemp(path));
    struct mdl_profile *p = NULL;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { .batch = 4 };
    write_file(path, cut);
    cr_expect_eq(mdl_torch_import(path, &o, &p, &rep), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), ": layer 'a' has 3 forward ranges making autograd nodes, 2 "
                     "of them with a backward (autograd functions naming their ops' sequence "
                     "numbers): profile whole steps"), "%s", ps_errmsg());
    write_file(path, whole);
    cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "%s", ps_errmsg());
    cr_expect_eq(rep.method, MDL_TORCH_BWD_SEQUENCE);
    cr_expect_eq(rep.steps, 3);
    cr_expect_float_eq(p->layers[0].bwd, 60e-6, 1e-15);
    cr_expect_float_eq(p->layers[1].bwd, 40e-6, 1e-15);
    mdl_profile_free(p);
    char out[4096];
    cr_expect_eq(th_capture(out, sizeof out, "%s import-torch %s --batch 4 2>/dev/null",
                            th_pipesim(), path), 0);
    cr_expect(strstr(out, "\na,,0.1,0.06,4,") && strstr(out, "\nb,,0.05,0.04,4,"), "%s", out);
    unlink(path);
}

/* Ops that make no autograd node carry the number the next one takes
 * (PyTorch's peek), so two forward ops can share one: the function is the
 * last op's (helper-140: a mask layer m, its aten::ones stamped with b's
 * relu's number, took b's backward in some steps, and whole steps were
 * refused). A layer run a second time a step under no_grad (a teacher's
 * forward), named by no function, imports too. */
Test(import_torch, a_number_two_ops_carry_is_the_last_ones)
{
    char text[16384] = "{\"traceEvents\": [";
    for (int k = 0, s = 10; k < 4; k++, s += 2) {
        char ev[2048];
        int t = 1000 * k;
        snprintf(ev, sizeof ev, "%s"
                 "{\"ph\":\"X\",\"name\":\"layer:a\",\"ts\":%d,\"dur\":100,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"aten::addmm\",\"ts\":%d,\"dur\":60,\"tid\":1,"
                 "\"args\":{\"Sequence number\":%d}},"
                 "{\"ph\":\"X\",\"name\":\"layer:m\",\"ts\":%d,\"dur\":20,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"aten::ones\",\"ts\":%d,\"dur\":1,\"tid\":1,"
                 "\"args\":{\"Sequence number\":%d}},"
                 "{\"ph\":\"X\",\"name\":\"aten::ones\",\"ts\":%d,\"dur\":1,\"tid\":1,"
                 "\"args\":{\"Sequence number\":%d}},"
                 "{\"ph\":\"X\",\"name\":\"aten::ones\",\"ts\":%d,\"dur\":1,\"tid\":1,"
                 "\"args\":{\"Sequence number\":%d}},"
                 "{\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":%d,\"dur\":50,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"aten::relu\",\"ts\":%d,\"dur\":30,\"tid\":1,"
                 "\"args\":{\"Sequence number\":%d}},"
                 "{\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":%d,\"dur\":50,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"aten::relu\",\"ts\":%d,\"dur\":30,\"tid\":1,"
                 "\"args\":{\"Sequence number\":%d}},"
                 "{\"ph\":\"X\",\"name\":\"autograd::engine::evaluate_function: "
                 "ReluBackward0\",\"ts\":%d,\"dur\":40,\"tid\":2,\"args\":{\"Sequence "
                 "number\":%d}},"
                 "{\"ph\":\"X\",\"name\":\"autograd::engine::evaluate_function: "
                 "AddmmBackward0\",\"ts\":%d,\"dur\":70,\"tid\":2,\"args\":{\"Sequence "
                 "number\":%d}}",
                 k ? "," : "", t, t + 20, s, t + 100, t + 102, s + 1, t + 105, s + 1, t + 108,
                 s + 1, t + 120, t + 130, s + 1,
                 t + 180, t + 190, s + 2, t + 407, s + 1, t + 447, s);
        strcat(text, ev);
    }
    strcat(text, "]}");
    char path[] = "/tmp/pipesim-seqdup-XXXXXX";
    close(mkstemp(path));
    write_file(path, text);
    struct mdl_profile *p = NULL;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { .batch = 4 };
    cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "%s", ps_errmsg());
    cr_expect_eq(rep.method, MDL_TORCH_BWD_SEQUENCE);
    cr_expect_eq(rep.steps, 4);
    cr_assert_eq(p->n_layers, 3);
    cr_expect_str_eq(p->layers[1].name, "m");
    cr_expect_float_eq(p->layers[0].bwd, 70e-6, 1e-15);
    cr_expect_float_eq(p->layers[1].bwd, 0, 1e-15, "the mask makes no node");
    cr_expect_float_eq(p->layers[2].bwd, 40e-6, 1e-15, "b's relu, its second call no_grad");
    cr_expect_float_eq(p->layers[2].fwd, 100e-6, 1e-15, "both calls a step");
    mdl_profile_free(p);
    unlink(path);
}

/* One step of a layer L run twice, the trace stopped after one of its
 * backwards: refused (helper-142: a whole number of named ranges a step let
 * it by with one step, L's backward halved). A number that a loss outside
 * every range makes, and an argmax in layer a carries before it, is the
 * loss's, charged to no layer (helper-142: a took it); an argmax after the
 * last node keeps a number no function names, and is let off. */
#define SEV(name, ts, dur, tid, seq) "{\"ph\":\"X\",\"name\":\"" name "\",\"ts\":" #ts \
    ",\"dur\":" #dur ",\"tid\":" #tid ",\"args\":{\"Sequence number\":" #seq "}}"
#define REV(name, ts, dur) "{\"ph\":\"X\",\"name\":\"layer:" name "\",\"ts\":" #ts \
    ",\"dur\":" #dur ",\"tid\":1}"
#define AGF "autograd::engine::evaluate_function: "
/* text imported from a temporary file at batch samples a step. */
static int import_text_at(const char *text, double batch, struct mdl_profile **p,
                          struct mdl_torch_report *rep)
{
    char path[] = "/tmp/pipesim-imp-XXXXXX";
    close(mkstemp(path));
    write_file(path, text);
    struct mdl_torch_opts o = { .batch = batch };
    *p = NULL;
    int rc = mdl_torch_import(path, &o, p, rep);
    unlink(path);
    return rc;
}

static int import_seq(const char *events, struct mdl_profile **p, struct mdl_torch_report *rep)
{
    char text[8192];
    snprintf(text, sizeof text, "{\"traceEvents\": [%s]}", events);
    return import_text_at(text, 1, p, rep);
}

Test(import_torch, every_range_that_makes_a_node_has_its_backward)
{
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    /* one step (x once), L twice, each an addmm (10, 11); only the second
     * call's backward */
    const char *cut = REV("L", 0, 100) "," SEV("aten::addmm", 10, 50, 1, 10) ","
                      REV("L", 100, 100) "," SEV("aten::addmm", 110, 50, 1, 11) ","
                      REV("x", 200, 10) "," SEV(AGF "AddmmBackward0", 300, 80, 2, 11);
    cr_expect_eq(import_seq(cut, &p, &rep), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), "layer 'L' has 2 forward ranges making autograd nodes, 1 of "
                     "them with a backward"), "%s", ps_errmsg());
    mdl_profile_free(p);
    char whole[2048];
    snprintf(whole, sizeof whole, "%s,%s", cut, SEV(AGF "AddmmBackward0", 400, 80, 2, 10));
    cr_assert_eq(import_seq(whole, &p, &rep), 0, "%s", ps_errmsg());
    cr_expect_float_eq(p->layers[0].bwd, 160e-6, 1e-15);
    mdl_profile_free(p);
    /* a: addmm (20) and argmax (21); the loss outside makes 21 */
    cr_assert_eq(import_seq(REV("a", 0, 100) "," SEV("aten::addmm", 10, 50, 1, 20) ","
                            SEV("aten::argmax", 70, 10, 1, 21) ","
                            SEV("aten::mse_loss", 150, 20, 1, 21) ","
                            SEV(AGF "MseLossBackward0", 300, 40, 2, 21) ","
                            SEV(AGF "AddmmBackward0", 350, 80, 2, 20), &p, &rep), 0, "%s",
                 ps_errmsg());
    cr_expect_float_eq(p->layers[0].bwd, 80e-6, 1e-15, "the loss's is no layer's");
    cr_expect_float_eq(rep.unattributed_us, 40, 1e-9);
    mdl_profile_free(p);
    /* two threads' #0 (numbers count per thread): each function names its
     * forward's thread (helper-142: both were charged to b) */
    cr_assert_eq(import_seq(REV("a", 0, 100) "," SEV("aten::addmm", 10, 50, 1, 0) ","
                            "{\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":200,\"dur\":50,"
                            "\"tid\":3}," SEV("aten::addmm", 210, 20, 3, 0) ","
                            "{\"ph\":\"X\",\"name\":\"" AGF "AddmmBackward0\",\"ts\":400,"
                            "\"dur\":40,\"tid\":2,\"args\":{\"Sequence number\":0,"
                            "\"Fwd thread id\":3}},"
                            "{\"ph\":\"X\",\"name\":\"" AGF "AddmmBackward0\",\"ts\":450,"
                            "\"dur\":80,\"tid\":2,\"args\":{\"Sequence number\":0,"
                            "\"Fwd thread id\":1}}", &p, &rep), 0, "%s", ps_errmsg());
    cr_expect_float_eq(p->layers[0].bwd, 80e-6, 1e-15);
    cr_expect_float_eq(p->layers[1].bwd, 40e-6, 1e-15);
    mdl_profile_free(p);
    /* Kineto's "Fwd thread id" is a counter, not a tid: two threads' #0 and
     * counters 2 and 1 cannot be told apart; both charged to the latest
     * maker, and counted, not refused (helper-143: "profile whole steps") */
    cr_assert_eq(import_seq("{\"ph\":\"X\",\"name\":\"layer:a\",\"ts\":0,\"dur\":100,"
                            "\"tid\":731947}," SEV("aten::addmm", 10, 50, 731947, 0) ","
                            "{\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":200,\"dur\":50,"
                            "\"tid\":731990}," SEV("aten::addmm", 210, 20, 731990, 0) ","
                            "{\"ph\":\"X\",\"name\":\"" AGF "AddmmBackward0\",\"ts\":400,"
                            "\"dur\":40,\"tid\":2,\"args\":{\"Sequence number\":0,"
                            "\"Fwd thread id\":2}},"
                            "{\"ph\":\"X\",\"name\":\"" AGF "AddmmBackward0\",\"ts\":450,"
                            "\"dur\":80,\"tid\":2,\"args\":{\"Sequence number\":0,"
                            "\"Fwd thread id\":1}}", &p, &rep), 0, "%s", ps_errmsg());
    cr_expect_eq(rep.n_ambiguous, 2);
    mdl_profile_free(p);
    /* a node the loss never reaches (a norm for monitoring), the earliest of
     * layer a: a has a backward all the same (helper-144: asking for the
     * earliest node's function refused this whole step; a cut inside one
     * layer's backward is not found so) */
    cr_assert_eq(import_seq(REV("a", 0, 100) "," SEV("aten::linalg_vector_norm", 5, 5, 1, 0)
                            "," SEV("aten::mm", 15, 30, 1, 1) "," REV("b", 160, 20) ","
                            SEV("aten::relu", 161, 10, 1, 2) "," SEV("aten::sum", 190, 3, 1, 3)
                            "," SEV(AGF "SumBackward0", 200, 3, 1, 3) ","
                            SEV(AGF "ReluBackward0", 210, 10, 1, 2) ","
                            SEV(AGF "MmBackward0", 230, 40, 1, 1), &p, &rep), 0, "%s",
                 ps_errmsg());
    cr_expect_float_eq(p->layers[0].bwd, 40e-6, 1e-15);
    cr_expect_float_eq(p->layers[1].bwd, 10e-6, 1e-15);
    mdl_profile_free(p);
    /* an argmax after the last node, in b, its number named by none */
    cr_assert_eq(import_seq(REV("a", 0, 100) "," SEV("aten::addmm", 10, 50, 1, 30) ","
                            REV("b", 100, 50) "," SEV("aten::argmax", 110, 10, 1, 31) ","
                            SEV(AGF "AddmmBackward0", 350, 80, 2, 30), &p, &rep), 0, "%s",
                 ps_errmsg());
    cr_expect_float_eq(p->layers[1].bwd, 0, 1e-15);
    mdl_profile_free(p);
}
#undef SEV
#undef REV
#undef AGF

/* A "Sequence number" that is not one is an error naming it (a string, a
 * fraction or a negative other than -1 was read as "none": every layer's
 * backward unattributed, exit 0; helper-77); -1 and 2^53 or more stay none. */
Test(import_torch, a_bad_sequence_number_is_named)
{
    static const struct {
        const char *from, *to;
        int rc;
        const char *msg;
    } cases[] = {
        { "\"Sequence number\":11}", "\"Sequence number\":\"11\"}", -PS_EPARSE,
          ":5:66: traceEvents[3].args: 'Sequence number' is not an integer" },
        { "\"Sequence number\":11}", "\"Sequence number\":11.5}", -PS_EPARSE,
          ":5:66: traceEvents[3].args: 'Sequence number' is not an integer" },
        { "\"Sequence number\":11}", "\"Sequence number\":-5}", -PS_EINVAL,
          ":5:66: traceEvents[3].args: 'Sequence number' -5 is out of range (-1 for none, or "
          "from 0)" },
        { "\"Sequence number\":99}", "\"Sequence number\":-1}", 0, NULL },
        { "\"Sequence number\":99}", "\"Sequence number\":18446744073709551615}", 0, NULL },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char text[sizeof kineto + 64], path[] = "/tmp/pipesim-seq-XXXXXX";
        const char *at = strstr(kineto, cases[k].from);
        cr_assert(at);
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - kineto), kineto, cases[k].to,
                 at + strlen(cases[k].from));
        close(mkstemp(path));
        write_file(path, text);
        struct mdl_profile *p = NULL;
        struct mdl_torch_report rep;
        struct mdl_torch_opts o = { .batch = 4 };
        int rc = mdl_torch_import(path, &o, &p, &rep);
        cr_expect_eq(rc, cases[k].rc, "case %zu: %d %s", k, rc, ps_errmsg());
        if (cases[k].msg)
            cr_expect(strstr(ps_errmsg(), cases[k].msg), "case %zu: %s", k, ps_errmsg());
        else { /* as without the field */
            char bare[sizeof kineto], bpath[] = "/tmp/pipesim-seq-XXXXXX";
            const char *f = strstr(kineto, ",\"args\":{\"Sequence number\":99}");
            cr_assert(f);
            snprintf(bare, sizeof bare, "%.*s%s", (int)(f - kineto), kineto,
                     f + strlen(",\"args\":{\"Sequence number\":99}"));
            close(mkstemp(bpath));
            write_file(bpath, bare);
            struct mdl_profile *q = NULL;
            struct mdl_torch_report qrep;
            cr_assert_eq(mdl_torch_import(bpath, &o, &q, &qrep), 0, "%s", ps_errmsg());
            cr_expect_float_eq(rep.unattributed_us, qrep.unattributed_us, 1e-9, "case %zu", k);
            for (int l = 0; l < 2; l++)
                cr_expect_float_eq(p->layers[l].bwd, q->layers[l].bwd, 1e-15, "case %zu", k);
            mdl_profile_free(q);
            unlink(bpath);
        }
        mdl_profile_free(p);
        ps_error_clear();
        unlink(path);
    }
}

Test(import_torch, forward_only_and_recompute)
{
    char path[] = "/tmp/pipesim-fwd-XXXXXX";
    close(mkstemp(path));
    /* two steps of x, forward only */
    write_file(path, "[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":0,\"dur\":10,\"tid\":1},"
                     "{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":100,\"dur\":30,\"tid\":1}]");
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { 0 };
    cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), -PS_EUSAGE, "batch unknown");
    o.batch = 2;
    cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "%s", ps_errmsg());
    cr_assert_eq(rep.method, MDL_TORCH_BWD_NONE);
    cr_assert_eq(rep.steps, 2);
    cr_assert_eq(rep.n_recompute, 0);
    cr_assert_float_eq(p->layers[0].fwd, 20e-6, 1e-15);
    cr_assert_float_eq(p->layers[0].bwd, 40e-6, 1e-15);
    mdl_profile_free(p);
    /* with a backward's autograd function (a checkpoint's, holding a
     * recompute range of x) but no backward ranges and no sequence numbers,
     * nothing attributes it: refused (helper-139: bwd written 2 x fwd and
     * "no backward in the trace", exit 0) */
    char bwd[] = "/tmp/pipesim-fwdag-XXXXXX";
    close(mkstemp(bwd));
    write_file(bwd, "[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":0,\"dur\":10,\"tid\":1},"
                    "{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":100,\"dur\":30,\"tid\":1},"
                    "{\"ph\":\"X\",\"name\":\"autograd::engine::evaluate_function: "
                    "CheckpointFunctionBackward\",\"ts\":200,\"dur\":50,\"tid\":2},"
                    "{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":210,\"dur\":20,\"tid\":2}]");
    cr_assert_eq(mdl_torch_import(bwd, &o, &p, &rep), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), ": the trace has a backward pass (autograd functions) but no "
                     "backward layer ranges, and no forward op with a sequence number, to "
                     "attribute it by"), "%s", ps_errmsg());
    unlink(bwd);
    /* the command's summary says what it wrote (it said "backward 0.000 ms (by none)") */
    cr_assert_eq(th_sh("cd /tmp && %s import-torch %s --batch 2 -o %s.csv 2>%s.err >/dev/null && "
                       "grep -q 'no backward in the trace (each layer.s bwd_ms written as 2 x its "
                       "forward)' %s.err", th_pipesim(), path, path, path, path), 0);
    th_sh("rm -f %s.csv %s.err", path, path);
    unlink(path);
}

static int import_text(const char *text, const char *sizes, double batch)
{
    char path[] = "/tmp/pipesim-bad-XXXXXX", sp[] = "/tmp/pipesim-sizes-XXXXXX";
    close(mkstemp(path));
    write_file(path, text);
    if (sizes) {
        close(mkstemp(sp));
        write_file(sp, sizes);
    }
    struct mdl_profile *p = NULL;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { .batch = batch, .sizes_path = sizes ? sp : NULL };
    int rc = mdl_torch_import(path, &o, &p, &rep);
    mdl_profile_free(p);
    unlink(path);
    if (sizes)
        unlink(sp);
    return rc;
}

#define ONE "[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":0,\"dur\":10,\"tid\":1}]"

Test(import_torch, bad_input_is_one_clear_error)
{
    cr_assert_eq(import_text("[{\"ph\":\"X\",", NULL, 1), -PS_EPARSE);
    cr_assert(strstr(ps_errmsg(), ":1:"), "%s", ps_errmsg());
    cr_assert_eq(import_text("{\"foo\": 1}", NULL, 1), -PS_EPARSE);
    cr_assert_eq(import_text("[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":\"0\",\"dur\":1}]",
                             NULL, 1), -PS_EPARSE);
    cr_assert(strstr(ps_errmsg(), "traceEvents[0].ts"), "%s", ps_errmsg());
    cr_assert_eq(import_text("[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":0,\"dur\":-1}]",
                             NULL, 1), -PS_EINVAL);
    cr_assert_eq(import_text("[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":0,\"dur\":1e300}]",
                             NULL, 1), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "traceEvents[0].dur: 1e+300 us is out of range ([0, 1e13] "
                                  "us)"), "%s", ps_errmsg());
    /* a timestamp where ts + dur would lose the duration (1e18 + 50 us) */
    cr_assert_eq(import_text("[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":1e18,\"dur\":50}]",
                             NULL, 1), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "traceEvents[0].ts: 1e+18 us is out of range (|ts| at most "
                                  "2^51"), "%s", ps_errmsg());
    cr_assert_eq(import_text("[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":-1e300,\"dur\":5}]",
                             NULL, 1), -PS_EINVAL);
    /* an epoch timestamp of today keeps its sub-microsecond duration */
    cr_assert_eq(import_text("[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":1.8e15,"
                             "\"dur\":50.5}]", NULL, 1), 0, "%s", ps_errmsg());
    cr_assert_eq(import_text("[{\"ph\":\"X\",\"name\":\"aten::mm\",\"ts\":0,\"dur\":1}]",
                             NULL, 1), -PS_EPARSE, "no layer ranges");
    cr_assert_eq(import_text("[{\"ph\":\"X\",\"name\":\"layer:a,b\",\"ts\":0,\"dur\":1}]",
                             NULL, 1), -PS_EINVAL, "comma in a layer name");
    cr_assert_eq(import_text("[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":0,\"dur\":10},"
                             "{\"ph\":\"X\",\"name\":\"layer:y\",\"ts\":2,\"dur\":3}]",
                             NULL, 1), -PS_EPARSE, "nested");
    cr_assert(strstr(ps_errmsg(), "inside"), "%s", ps_errmsg());
    cr_assert_eq(import_text(ONE, "name,params,out_bytes,stash_bytes\ny,1,2,3\n", 1),
                 -PS_EINVAL, "sidecar lacks x");
    cr_assert_eq(import_text(ONE, "name,params,out_bytes,stash_bytes,at_batch\nx,1,2,3,4\n", 8),
                 -PS_EINVAL, "--batch disagrees with at_batch");
    cr_assert_eq(import_text(ONE, "name,params,out_bytes\nx,1,2\n", 1), -PS_EPARSE);
    cr_assert_eq(import_text(ONE, "name,params,out_bytes,stash_bytes\nx,1e400,2,3\n", 1),
                 -PS_EPARSE);
    cr_assert(strstr(ps_errmsg(), ":2:3: field 'params': '1e400' is out of range (magnitude "
                                  "above 1.8e308)"), "%s", ps_errmsg());
    cr_assert_eq(import_text(ONE, "name,params,out_bytes,stash_bytes\nx,10.5,2,3\n", 1),
                 -PS_EINVAL, "a profile would refuse it");
    cr_assert(strstr(ps_errmsg(), ":2:3: field 'params' (10.5) must be a whole number"), "%s",
              ps_errmsg());
    cr_assert_eq(import_text(ONE, "name,params,out_bytes,stash_bytes,at_batch\nx,1,2,3,2.5\n",
                             0), -PS_EINVAL, "a profile would refuse it");
    cr_assert(strstr(ps_errmsg(), ":2:9: field 'at_batch' (2.5) must be a whole number"), "%s",
              ps_errmsg());
    cr_assert_eq(import_text(ONE, "name,params,out_bytes,stash_bytes\nx,1,-2,3\n", 1),
                 -PS_EINVAL);
    /* the line and column of the field, as a profile's errors (it named the line alone) */
    cr_assert(strstr(ps_errmsg(), ":2:5: field 'out_bytes' must be finite and >= 0, got -2"),
              "%s", ps_errmsg());
    cr_assert_eq(import_text(ONE, "name,params, bogus\nx,1,2\n", 1), -PS_EPARSE);
    cr_assert(strstr(ps_errmsg(), ":1:14: unknown column 'bogus'"), "%s", ps_errmsg());
    cr_assert_eq(import_text(ONE, "name,params,out_bytes,stash_bytes,at_batch\nx,1,2,3,4\n", 0),
                 0, "%s", ps_errmsg());
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { 0 };
    cr_assert_eq(mdl_torch_import("/nonexistent/t.json", &o, &p, &rep), -PS_EIO);
}

Test(import_torch, cli_errors_leave_no_output)
{
    const char *ps = th_pipesim();
    char bad[] = "/tmp/pipesim-badtrace-XXXXXX";
    close(mkstemp(bad));
    write_file(bad, "[1, 2");
    cr_assert_eq(th_sh("%s import-torch %s --batch 2 -o /tmp/pipesim-torch-none.csv "
                       "2>/dev/null", ps, bad), 3);
    cr_assert_neq(access("/tmp/pipesim-torch-none.csv", F_OK), 0);
    cr_assert_eq(th_sh("%s import-torch 2>/dev/null", ps), 2);
    cr_assert_eq(th_sh("%s import-torch " FIXTURE " --batch 0 2>/dev/null", ps), 2);
    cr_assert_eq(th_sh("%s import-torch " FIXTURE " --bogus 2>/dev/null", ps), 2);
    cr_assert_eq(th_sh("%s import-torch " FIXTURE " extra 2>/dev/null", ps), 2);
    cr_assert_eq(th_sh("%s import-torch --help >/dev/null", ps), 0);
    unlink(bad);
}

/* The sidecar's optional stash_shared_bytes (models/mdl_profile.h): read,
 * at most stash_bytes, 0 on the first layer. */
Test(import_torch, sidecar_stash_shared_bytes)
{
    char sp[] = "/tmp/pipesim-sizes-XXXXXX";
    close(mkstemp(sp));
    write_file(sp, "name,params,out_bytes,stash_bytes,stash_shared_bytes\nx,1,2,8,\ny,1,2,8,4\n");
    struct mdl_torch_size *rows;
    int n;
    cr_assert_eq(mdl_torch_sizes_load(sp, &rows, &n), 0, "%s", ps_errmsg());
    cr_assert_eq(n, 2);
    cr_expect_eq(rows[0].stash_shared_bytes, 0);
    cr_expect_eq(rows[1].stash_shared_bytes, 4);
    free(rows);
    unlink(sp);
    const char *two = "[{\"ph\":\"X\",\"name\":\"layer:x\",\"ts\":0,\"dur\":10,\"tid\":1},"
                      "{\"ph\":\"X\",\"name\":\"layer:y\",\"ts\":20,\"dur\":10,\"tid\":1}]";
    cr_assert_eq(import_text(two, "name,params,out_bytes,stash_bytes,stash_shared_bytes\n"
                                  "x,1,2,8,0\ny,1,2,8,9\n", 1), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), ":3:9: field 'stash_shared_bytes' (9) must be <= "
                                  "stash_bytes"), "%s", ps_errmsg());
    cr_assert_eq(import_text(two, "name,params,out_bytes,stash_bytes,stash_shared_bytes\n"
                                  "x,1,2,8,2\ny,1,2,8,4\n", 1), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "field 'stash_shared_bytes' of layer 'x' must be 0"), "%s",
              ps_errmsg());
    cr_assert_eq(import_text(two, "name,params,out_bytes,stash_bytes,stash_shared_bytes\n"
                                  "x,1,2,8,0\ny,1,2,8,4\n", 1), 0, "%s", ps_errmsg());
}

/* Many distinct layers and threads, each over several steps, are summed
 * per name (a hash table: a linear search made 200 000 layers take 100 s);
 * a layer name starting with '#' (after blanks) is refused, since the
 * profile would read its row as a comment. */
Test(import_torch, many_layers_by_name_and_no_comment_names)
{
    char path[] = "/tmp/pipesim-torch-many-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"traceEvents\":[", f);
    enum { N = 5000, STEPS = 3 };
    double ts = 0;
    for (int s = 0; s < STEPS; s++)
        for (int i = 0; i < N; i++) {
            fprintf(f, "%s{\"ph\":\"X\",\"name\":\"layer:l%d\",\"ts\":%g,\"dur\":%d,"
                    "\"pid\":1,\"tid\":%d,\"cat\":\"user_annotation\"}", s || i ? "," : "", i,
                    ts, 1 + i % 7, 1 + i % 3);
            ts += 10;
        }
    fputs("]}", f);
    fclose(f);
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { .batch = 4 };
    cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "%s", ps_errmsg());
    cr_assert_eq(p->n_layers, N);
    for (int i = 0; i < N; i += 997) {
        char want[16];
        snprintf(want, sizeof want, "l%d", i);
        cr_assert_str_eq(p->layers[i].name, want);
        /* the mean over the steps of (1 + i % 7) us */
        cr_assert(fabs(p->layers[i].fwd - (1 + i % 7) * 1e-6) < 1e-12, "%s: %g", want,
                  p->layers[i].fwd);
    }
    mdl_profile_free(p);
    static const char *const bad[] = { "#x", "  #x", "\\t#" }; /* JSON: a tab */
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        f = fopen(path, "w");
        fprintf(f, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"layer:%s\",\"ts\":0,\"dur\":5,"
                "\"pid\":1,\"tid\":1,\"cat\":\"user_annotation\"}]}", bad[b]);
        fclose(f);
        p = (void *)1;
        cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), -PS_EINVAL, "'%s'", bad[b]);
        cr_assert(strstr(ps_errmsg(), "not starting with '#'"), "%s", ps_errmsg());
    }
    unlink(path);
}

/* Events that touch: one that starts where another ends is the next one,
 * not inside it. By sequence numbers (Kineto, times with three decimals):
 * AccumulateGrad starts at 1000.123 + 2.2 = 1002.323 us, which ts + dur in
 * binary put past it, so its 5 us were charged to no layer. By ranges
 * (integer microseconds): a backward function that starts at a forward
 * range's end made it a backward range (b's forward 10 us, not 20). */
Test(import_torch, touching_events_are_not_nested)
{
    char path[] = "/tmp/pipesim-touch-XXXXXX";
    close(mkstemp(path));
#define AG "autograd::engine::evaluate_function: "
    write_file(path,
               "{\"traceEvents\": ["
               "{\"ph\":\"X\",\"name\":\"layer:a\",\"ts\":0.0,\"dur\":10.0,\"pid\":1,\"tid\":1},"
               "{\"ph\":\"X\",\"name\":\"aten::addmm\",\"ts\":0.5,\"dur\":9.0,\"pid\":1,"
               "\"tid\":1,\"args\":{\"Sequence number\":0}},"
               "{\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":10.0,\"dur\":20.0,\"pid\":1,\"tid\":1},"
               "{\"ph\":\"X\",\"name\":\"aten::addmm\",\"ts\":10.5,\"dur\":19.0,\"pid\":1,"
               "\"tid\":1,\"args\":{\"Sequence number\":1}},"
               "{\"ph\":\"X\",\"name\":\"" AG "AddmmBackward0\",\"ts\":1000.123,\"dur\":2.2,"
               "\"pid\":1,\"tid\":1},"
               "{\"ph\":\"X\",\"name\":\"AddmmBackward0\",\"ts\":1000.223,\"dur\":2.0,\"pid\":1,"
               "\"tid\":1,\"args\":{\"Sequence number\":1}},"
               "{\"ph\":\"X\",\"name\":\"" AG "torch::autograd::AccumulateGrad\",\"ts\":1002.323,"
               "\"dur\":5.0,\"pid\":1,\"tid\":1},"
               "{\"ph\":\"X\",\"name\":\"" AG "AddmmBackward0\",\"ts\":5000.0,\"dur\":4.0,"
               "\"pid\":1,\"tid\":1},"
               "{\"ph\":\"X\",\"name\":\"AddmmBackward0\",\"ts\":5000.1,\"dur\":3.8,\"pid\":1,"
               "\"tid\":1,\"args\":{\"Sequence number\":0}}]}");
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { .batch = 4 };
    cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "%s", ps_errmsg());
    cr_assert_eq(rep.method, MDL_TORCH_BWD_SEQUENCE);
    cr_expect_float_eq(p->layers[1].bwd, 7.2e-6, 1e-12, "AddmmBackward0 + AccumulateGrad");
    cr_expect_float_eq(p->layers[0].bwd, 4e-6, 1e-12);
    cr_expect_float_eq(rep.unattributed_us, 0, 1e-9);
    mdl_profile_free(p);
    /* by ranges: two steps, the second with a 2 us gap, the first touching */
    char text[4096] = "[";
    for (int s = 0; s < 2; s++) {
        int t0 = 1000 * s, g = s ? 2 : 0;
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "%s{\"ph\":\"X\",\"name\":\"layer:a\",\"ts\":%d,\"dur\":10,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":%d,\"dur\":20,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"" AG "BoundaryBackward\",\"ts\":%d,\"dur\":1,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":%d,\"dur\":40,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"" AG "AddmmBackward0\",\"ts\":%d,\"dur\":38,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"" AG "BoundaryBackward\",\"ts\":%d,\"dur\":1,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"layer:a\",\"ts\":%d,\"dur\":15,\"tid\":1},"
                 "{\"ph\":\"X\",\"name\":\"" AG "AddmmBackward0\",\"ts\":%d,\"dur\":13,\"tid\":1}",
                 s ? "," : "", t0, t0 + 10, t0 + 30 + g, t0 + 31 + g, t0 + 32 + g, t0 + 71 + g,
                 t0 + 72 + g, t0 + 73 + g);
    }
#undef AG
    strcat(text, "]");
    write_file(path, text);
    cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "%s", ps_errmsg());
    cr_assert_eq(rep.method, MDL_TORCH_BWD_RANGES);
    cr_assert_eq(rep.steps, 2);
    cr_expect_float_eq(p->layers[1].fwd, 20e-6, 1e-12, "b's forward, not half of it");
    cr_expect_float_eq(p->layers[1].bwd, 40e-6, 1e-12);
    cr_expect_float_eq(p->layers[0].fwd, 10e-6, 1e-12);
    cr_expect_float_eq(p->layers[0].bwd, 15e-6, 1e-12);
    mdl_profile_free(p);
    unlink(path);
}

/* Kineto with CUDA copies each record_function range onto the GPU timeline (cat
 * gpu_user_annotation, the same name) and adds kernels: they are skipped, so the profile is
 * the CPU-only trace's (helper-57: two steps, forwards the mean of CPU and GPU time). */
Test(import_torch, gpu_timeline_copies_are_skipped)
{
    static const char gpu[] =
        " {\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"layer:a\",\"ts\":103,"
        "\"dur\":30,\"pid\":0,\"tid\":7},\n"
        " {\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"layer:b\",\"ts\":163,"
        "\"dur\":40,\"pid\":0,\"tid\":7},\n"
        " {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"layer:b\",\"ts\":170,\"dur\":4,"
        "\"pid\":0,\"tid\":7},\n";
    char text[4096];
    const char *head = "{\"traceEvents\": [\n";
    snprintf(text, sizeof text, "%s%s%s", head, gpu, kineto + strlen(head));
    char path[] = "/tmp/pipesim-kgpu-XXXXXX";
    close(mkstemp(path));
    write_file(path, text);
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { .batch = 4 };
    cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "%s", ps_errmsg());
    cr_expect_eq(rep.steps, 1);
    cr_expect_float_eq(p->layers[0].fwd, 50e-6, 1e-15);
    cr_expect_float_eq(p->layers[1].fwd, 20e-6, 1e-15);
    cr_expect_float_eq(p->layers[0].bwd, 70e-6, 1e-15);
    mdl_profile_free(p);
    unlink(path);
}

/* A trace read from a pipe is read whole (it lost its first 3 bytes: a byte-order mark was
 * looked for and the stream rewound), an endless one stops at 1 GiB, and an error found
 * after parsing names its line and column (helper-57). */
Test(import_torch, pipes_limits_and_positions)
{
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cp tests/fixtures/torch/tinyformer.json /tmp/pipesim-it.json && "
                       "%s import-torch /tmp/pipesim-it.json --batch 8 "
                       ">/tmp/pipesim-it-a.csv && cat /tmp/pipesim-it.json | "
                       "%s import-torch /dev/stdin --batch 8 >/tmp/pipesim-it-b.csv && "
                       "test \"$(grep -v '^#' /tmp/pipesim-it-a.csv)\" = \"$(grep -v '^#' "
                       "/tmp/pipesim-it-b.csv)\"", ps, ps), 0, "the piped trace's profile "
                 "differs (its header names the source)");
    cr_assert_eq(th_sh("%s import-torch /dev/zero 2>/tmp/pipesim-it-e.txt", ps), 5);
    cr_assert_eq(th_sh("grep -q 'longer than 1024 MiB' /tmp/pipesim-it-e.txt"), 0);
    cr_assert_eq(th_sh("printf '{\"traceEvents\":[\\n{\"name\":\"layer:a\",\"ph\":\"X\","
                       "\"ts\":0,\"dur\":-10,\"pid\":1,\"tid\":1}]}' >/tmp/pipesim-it-n.json && "
                       "%s import-torch /tmp/pipesim-it-n.json 2>/tmp/pipesim-it-e.txt; "
                       "test $? = 4 && grep -q '^pipesim import-torch: /tmp/pipesim-it-n.json:2:"
                       "[0-9]*: traceEvents.0..dur: -10 us' /tmp/pipesim-it-e.txt", ps), 0);
    th_sh("rm -f /tmp/pipesim-it.json /tmp/pipesim-it-a.csv /tmp/pipesim-it-b.csv "
          "/tmp/pipesim-it-e.txt "
          "/tmp/pipesim-it-n.json");
}

/* Imports events (batch 1) twice: as a bare event array (the legacy export, the
 * fixture's form) and as {"traceEvents": [...]}, the first line "[" or
 * "{\"traceEvents\": [" and the rest the same lines; both fail with rc and the
 * message "<file><want>". */
static void expect_error_both(const char *events, int rc, const char *want)
{
    static const char *const head[2] = { "[\n", "{\"traceEvents\": [\n" };
    static const char *const form_name[2] = { "bare array", "traceEvents object" };
    for (int form = 0; form < 2; form++) {
        char path[] = "/tmp/pipesim-pos-XXXXXX", text[2048], msg[1024];
        close(mkstemp(path));
        snprintf(text, sizeof text, "%s%s%s", head[form], events, form ? "}\n" : "");
        write_file(path, text);
        struct mdl_profile *p = NULL;
        struct mdl_torch_report rep;
        struct mdl_torch_opts o = { .batch = 1 };
        cr_expect_eq(mdl_torch_import(path, &o, &p, &rep), rc, "%s: %s", form_name[form],
                     ps_errmsg());
        snprintf(msg, sizeof msg, "%s%s", path, want);
        cr_expect_str_eq(ps_errmsg(), msg, "%s: got '%s', want '%s'", form_name[form],
                         ps_errmsg(), msg);
        mdl_profile_free(p);
        unlink(path);
    }
}

#define EV_A " {\"ph\": \"X\", \"name\": \"layer:a\", \"ts\": 0, \"dur\": 10, \"tid\": 1},\n"

/* An error found after parsing names the line and column of its event or field
 * in a bare event array too: every one was put at 1:1 there (the JSON path
 * traceEvents[i] was looked up in a document whose root is the array). A field
 * points at its key, a missing one at the event that lacks it. */
Test(import_torch, bare_array_errors_name_line_and_column)
{
    expect_error_both(EV_A " {\"ph\": \"X\", \"name\": \"layer:b\",\n"
                      "  \"ts\": 20, \"dur\": -5, \"tid\": 1}\n]\n", -PS_EINVAL,
                      ":4:13: traceEvents[1].dur: -5 us is out of range ([0, 1e13] us)");
    expect_error_both(EV_A " {\"ph\": \"X\", \"name\": \"layer:b\",\n"
                      "  \"ts\": 20, \"tid\": 1}\n]\n", -PS_EPARSE,
                      ":3:2: traceEvents[1].dur: missing");
    expect_error_both(EV_A " {\"ph\": \"X\", \"name\": \"layer:b\",\n"
                      "  \"ts\": \"20\", \"dur\": 5, \"tid\": 1}\n]\n", -PS_EPARSE,
                      ":4:3: traceEvents[1].ts: not a number");
    expect_error_both(EV_A " 7\n]\n", -PS_EPARSE, ":3:2: traceEvents[1]: not an object");
    char want[256];
    snprintf(want, sizeof want, ":3:14: traceEvents[1].name: layer name 'a,b' must be 1..%d "
             "characters without commas, quotes or newlines, not starting with '#', nor with a "
             "blank at either end", MDL_NAME_MAX - 1);
    expect_error_both(EV_A " {\"ph\": \"X\", \"name\": \"layer:a,b\",\n"
                      "  \"ts\": 20, \"dur\": 5, \"tid\": 1}\n]\n", -PS_EINVAL, want);
    /* found after reading all events (build) */
    expect_error_both(EV_A " {\"ph\": \"X\", \"name\": \"layer:b\",\n"
                      "  \"ts\": 2, \"dur\": 3, \"tid\": 1}\n]\n", -PS_EPARSE,
                      ":3:2: traceEvents[1]: layer range 'layer:b' lies inside 'layer:a' "
                      "(traceEvents[0]); nested layer ranges are not supported");
    /* the command's line and status (the report's repro: indent=1, the root an array) */
    cr_assert_eq(th_sh("printf '[\\n {\\n  \"name\": \"layer:a\",\\n  \"ph\": \"X\",\\n  \"ts\": 0,"
                       "\\n  \"dur\": -100,\\n  \"tid\": 1\\n }\\n]\\n' >/tmp/pipesim-it-bare.json"
                       " && %s import-torch /tmp/pipesim-it-bare.json --batch 4 "
                       "2>/tmp/pipesim-it-bare.err; test $? = 4 && test \"$(cat "
                       "/tmp/pipesim-it-bare.err)\" = 'pipesim import-torch: "
                       "/tmp/pipesim-it-bare.json:6:3: traceEvents[0].dur: -100 us is out of "
                       "range ([0, 1e13] us)'", th_pipesim()), 0);
    th_sh("rm -f /tmp/pipesim-it-bare.json /tmp/pipesim-it-bare.err");
}
#undef EV_A

#define OVERLAP "and ends after it; overlapping layer ranges are not supported"
#define AGF "autograd::engine::evaluate_function: AddmmBackward0"
#define EV(name, ts, dur) " {\"ph\": \"X\", \"name\": \"" name "\", \"ts\": " #ts ", " \
                          "\"dur\": " #dur ", \"tid\": 1}"

/* A layer range that starts inside the one before it on its thread (in the same
 * direction) and ends after it is refused like a nested one: the overlap was
 * counted in both layers (a at 0..100 us and b at 50..150 us gave a forward of
 * 200 us per step over 150 us of trace). The one that starts later is named,
 * wherever it is in the file. Ranges that touch, or overlap on another thread,
 * are read. */
Test(import_torch, overlapping_layer_ranges_are_refused)
{
    static const char a[] = EV("layer:a", 0, 100), b[] = EV("layer:b", 50, 100);
    char ev[1024];
    snprintf(ev, sizeof ev, "%s,\n%s\n]\n", a, b);
    expect_error_both(ev, -PS_EPARSE, ":3:2: traceEvents[1]: layer range 'layer:b' starts "
                      "inside 'layer:a' (traceEvents[0]) " OVERLAP);
    snprintf(ev, sizeof ev, "%s,\n%s\n]\n", b, a);
    expect_error_both(ev, -PS_EPARSE, ":2:2: traceEvents[0]: layer range 'layer:b' starts "
                      "inside 'layer:a' (traceEvents[1]) " OVERLAP);
    /* two backward ranges (autograd functions start inside each) */
    expect_error_both(EV("layer:a", 0, 10) ",\n" EV("layer:b", 10, 10) ",\n"
                      EV("layer:b", 100, 50) ",\n" EV(AGF, 110, 5) ",\n"
                      EV("layer:a", 130, 50) ",\n" EV(AGF, 160, 5) "\n]\n", -PS_EPARSE,
                      ":6:2: traceEvents[4]: layer range 'layer:a' starts inside 'layer:b' "
                      "(traceEvents[2]) " OVERLAP);
    /* b starting at a's end, or on another thread */
    char path[] = "/tmp/pipesim-overlap-XXXXXX";
    close(mkstemp(path));
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    struct mdl_torch_opts o = { .batch = 1 };
    static const char *const fine[] = { "\"ts\": 100, \"dur\": 50, \"tid\": 1",
                                        "\"ts\": 50, \"dur\": 100, \"tid\": 2" };
    const double b_us[] = { 50, 100 };
    for (int k = 0; k < 2; k++) {
        snprintf(ev, sizeof ev, "[\n%s,\n {\"ph\": \"X\", \"name\": \"layer:b\", %s}\n]\n", a,
                 fine[k]);
        write_file(path, ev);
        cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "%s: %s", fine[k], ps_errmsg());
        cr_expect_float_eq(p->layers[0].fwd, 100e-6, 1e-12, "%s", fine[k]);
        cr_expect_float_eq(p->layers[1].fwd, b_us[k] * 1e-6, 1e-12, "%s", fine[k]);
        mdl_profile_free(p);
    }
    /* the command's line and status: as nesting, a malformed trace (3) */
    snprintf(ev, sizeof ev, "[\n%s,\n%s\n]\n", a, b);
    write_file(path, ev);
    cr_assert_eq(th_sh("%s import-torch %s --batch 4 -o %s.csv 2>%s.err; test $? = 3 && "
                       "test ! -e %s.csv && test \"$(cat %s.err)\" = 'pipesim import-torch: "
                       "%s:3:2: traceEvents[1]: layer range '\\''layer:b'\\'' starts inside "
                       "'\\''layer:a'\\'' (traceEvents[0]) " OVERLAP "'", th_pipesim(), path,
                       path, path, path, path, path), 0);
    th_sh("rm -f %s.csv %s.err", path, path);
    unlink(path);
}
#undef EV
#undef AGF
#undef OVERLAP

/* Epoch timestamps (Kineto's, 1.7e15 us) are read to the nanosecond: ts * 1e3
 * in a double rounded them to 256 ns and the result, kept in microseconds, to
 * 0.25 us, so b starting where a ends read as starting inside it (exit 3), and
 * the times were off by up to a quarter microsecond (helper-106). */
Test(import_torch, epoch_timestamps_keep_their_microseconds)
{
    static const char *const text[] = {
        "{\"traceEvents\":[\n"
        "{\"name\":\"layer:a\",\"ph\":\"X\",\"ts\":1700000000000953,\"dur\":78,\"tid\":1,"
        "\"pid\":1,\"args\":{}},\n"
        "{\"name\":\"layer:b\",\"ph\":\"X\",\"ts\":1700000000001031,\"dur\":145,\"tid\":1,"
        "\"pid\":1,\"args\":{}}]}\n",
        /* fractions the doubles hold (0.25 us apart there) */
        "[{\"name\":\"layer:a\",\"ph\":\"X\",\"ts\":1700000000000953.25,\"dur\":77.75,"
        "\"tid\":1},\n{\"name\":\"layer:b\",\"ph\":\"X\",\"ts\":1700000000001031,"
        "\"dur\":145.5,\"tid\":1}]\n",
    };
    static const double want[2][2] = { { 78, 145 }, { 77.75, 145.5 } };
    char path[] = "/tmp/pipesim-epoch-XXXXXX";
    close(mkstemp(path));
    for (int k = 0; k < 2; k++) {
        write_file(path, text[k]);
        struct mdl_profile *p = NULL;
        struct mdl_torch_report rep;
        struct mdl_torch_opts o = { .batch = 1 };
        cr_assert_eq(mdl_torch_import(path, &o, &p, &rep), 0, "case %d: %s", k, ps_errmsg());
        cr_assert_eq(p->n_layers, 2);
        cr_expect_str_eq(p->layers[0].name, "a");
        for (int l = 0; l < 2; l++) /* to a picosecond: the error was up to 0.25 us */
            cr_expect_float_eq(p->layers[l].fwd, want[k][l] * 1e-6, 1e-12 * 1e-6,
                               "case %d: layer %d: %.17g us", k, l, p->layers[l].fwd * 1e6);
        mdl_profile_free(p);
    }
    /* the command: the probe's trace imports */
    write_file(path, text[0]);
    cr_assert_eq(th_sh("%s import-torch %s --batch 1 >/dev/null 2>&1", th_pipesim(), path), 0);
    unlink(path);
}

#define EV(name, ts, dur) " {\"ph\": \"X\", \"name\": \"" name "\", \"ts\": " #ts ", " \
                          "\"dur\": " #dur ", \"tid\": 1}"
#define AGF "autograd::engine::evaluate_function: MmBackward0"
#define HOWTO "profile whole steps (start the trace before a step's first layer, stop it " \
              "after the step's last backward)"

/* One trace imported in memory: the profile and report (the test frees p). */
static struct mdl_profile *import_events(const char *events, struct mdl_torch_report *rep)
{
    char path[] = "/tmp/pipesim-steps-XXXXXX", text[2048];
    close(mkstemp(path));
    snprintf(text, sizeof text, "[\n%s", events);
    write_file(path, text);
    struct mdl_profile *p = NULL;
    struct mdl_torch_opts o = { .batch = 1 };
    int rc = mdl_torch_import(path, &o, &p, rep);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", ps_errmsg());
    return p;
}

/* The steps are the fewest forward ranges of a layer; every layer has a whole
 * number per step, and as many backward ranges as forward ones (with ranges):
 * a trace cut inside the last backward halved every backward, exit 0
 * (helper-106). A module run k times a step (a shared block, tied weights) is
 * a model, its time per step the sum of its calls, reported (helper-110: the
 * first check refused it); a window opening inside a step looks the same, so
 * the report names the layer. */
Test(import_torch, every_layer_has_whole_ranges_per_step)
{
    /* cut inside the second step's backward: b's backward is there, a's is not */
    expect_error_both(EV("layer:a", 0, 100) ",\n" EV("layer:b", 100, 200) ",\n"
                      EV("layer:b", 400, 300) ",\n" EV(AGF, 410, 250) ",\n"
                      EV("layer:a", 700, 150) ",\n" EV(AGF, 710, 100) ",\n"
                      EV("layer:a", 1000, 100) ",\n" EV("layer:b", 1100, 200) ",\n"
                      EV("layer:b", 1400, 300) ",\n" EV(AGF, 1410, 250) "\n]\n", -PS_EPARSE,
                      ": layer 'a' has 2 forward and 1 backward range, but the trace has 2 "
                      "steps (the forward ranges of 'a', its layer of fewest): each layer needs "
                      "a whole number of forward ranges per step, and as many backward ranges "
                      "as forward ones; " HOWTO);
    /* 2 steps of a, 3 ranges of b: not a whole number a step */
    expect_error_both(EV("layer:a", 0, 100) ",\n" EV("layer:b", 100, 50) ",\n"
                      EV("layer:a", 200, 100) ",\n" EV("layer:b", 300, 50) ",\n"
                      EV("layer:b", 350, 50) "\n]\n", -PS_EPARSE,
                      ": layer 'b' has 3 forward ranges, but the trace has 2 steps (the "
                      "forward ranges of 'a', its layer of fewest): each layer needs a whole "
                      "number of forward ranges per step; " HOWTO);
    /* two steps, b run twice in each: its time per step is both calls' */
    struct mdl_torch_report rep;
    struct mdl_profile *p = import_events(
        EV("layer:a", 0, 100) ",\n" EV("layer:b", 100, 50) ",\n" EV("layer:b", 150, 30) ",\n"
        EV("layer:a", 1000, 100) ",\n" EV("layer:b", 1100, 50) ",\n"
        EV("layer:b", 1150, 30) "\n]\n", &rep);
    cr_expect_eq(rep.steps, 2);
    cr_expect_eq(rep.repeated, 1);
    cr_expect_str_eq(rep.repeated_name, "b");
    cr_expect_eq(rep.repeated_times, 2);
    cr_expect_float_eq(p->layers[1].fwd, 80e-6, 1e-15);
    mdl_profile_free(p);
    /* the command names it, and a cut trace is refused, nothing written */
    char path[] = "/tmp/pipesim-steps-XXXXXX";
    close(mkstemp(path));
    write_file(path, "[\n" EV("layer:a", 0, 100) ",\n" EV("layer:b", 100, 50) ",\n"
               EV("layer:b", 150, 50) "\n]\n");
    cr_expect_eq(th_sh("%s import-torch %s --batch 1 -o %s.csv 2>%s.err && grep -q \"1 layer "
                       "run several times a step (first: 'b', 2 times)\" %s.err", th_pipesim(),
                       path, path, path, path), 0);
    write_file(path, "[\n" EV("layer:a", 0, 100) ",\n" EV("layer:b", 100, 50) ",\n"
               EV("layer:a", 200, 100) ",\n" EV("layer:b", 300, 50) ",\n"
               EV("layer:b", 350, 50) "\n]\n");
    th_sh("rm -f %s.csv", path);
    cr_expect_eq(th_sh("%s import-torch %s --batch 1 -o %s.csv 2>%s.err; test $? = 3 && "
                       "test ! -e %s.csv && grep -q \"layer 'b' has 3 forward ranges\" %s.err",
                       th_pipesim(), path, path, path, path, path), 0);
    th_sh("rm -f %s.csv %s.err", path, path);
    unlink(path);
}
#undef HOWTO
#undef AGF
#undef EV

/* A key twice in an event is an error at the second, with its line and column:
 * the last value was read ("dur": -5, "dur": 10 imported), and an error in it
 * was put at the first (helper-106). */
Test(import_torch, a_duplicate_key_is_refused_at_the_second)
{
    static const char *const ev[] = {
        " {\"ph\": \"X\", \"name\": \"layer:a\", \"ts\": 0, \"dur\": 10, \"tid\": 1},\n"
        " {\"ph\": \"X\", \"name\": \"layer:b\", \"ts\": 20, \"dur\": -5, \"dur\": 5, \"tid\": 1}"
        "\n]\n",
        " {\"ph\": \"X\", \"name\": \"layer:a\", \"ts\": 0, \"dur\": 10, \"tid\": 1},\n"
        " {\"ph\": \"X\", \"name\": \"layer:b\", \"ts\": 20, \"dur\": 5, \"dur\": -5, \"tid\": 1}"
        "\n]\n",
    };
    for (int k = 0; k < 2; k++)
        expect_error_both(ev[k], -PS_EPARSE, k ? ":3:57: duplicate object key near '\"dur\"'"
                                               : ":3:58: duplicate object key near '\"dur\"'");
}

/* Edges a probe found (helper-126). The events of one thread, "tid" 1:
 * E(name, ts, dur) an event, S(...) one with a sequence number. */
#define E(n, ts, d) "{\"ph\":\"X\",\"name\":\"" n "\",\"ts\":" #ts ",\"dur\":" #d ",\"tid\":1}"
#define S(n, ts, d, q) "{\"ph\":\"X\",\"name\":\"" n "\",\"ts\":" #ts ",\"dur\":" #d \
    ",\"tid\":1,\"args\":{\"Sequence number\":" #q "}}"
#define AG "autograd::engine::evaluate_function: "

static int import_raw(const char *text, struct mdl_profile **p, struct mdl_torch_report *rep)
{
    return import_text_at(text, 4, p, rep);
}

Test(import_torch, edges_of_ranges_and_functions)
{
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    /* forward ops with sequence numbers but no autograd function: a forward-only
     * trace, bwd = 2 x fwd (every bwd was 0, "backward by sequence") */
    cr_assert_eq(import_raw("[" E("layer:a", 0, 100) "," S("aten::mm", 10, 50, 5) ","
                            E("layer:b", 100, 200) "," S("aten::relu", 110, 50, 6) "]",
                            &p, &rep), 0, "%s", ps_errmsg());
    cr_expect_eq(rep.method, MDL_TORCH_BWD_NONE);
    cr_expect_float_eq(p->layers[1].bwd, 400e-6, 1e-15);
    mdl_profile_free(p);
    /* AccumulateGrad right after a's function is a's, not the next function's
     * child (it started at that function's end); the loss op starting at a's
     * end is in no layer, its backward charged to none */
    cr_assert_eq(import_raw("[" E("layer:a", 0, 100) "," S("aten::mm", 10, 50, 5) ","
                            E("layer:b", 100, 100) "," S("aten::relu", 110, 50, 6) ","
                            S("aten::loss", 200, 10, 7) ","
                            S(AG "LossBackward0", 300, 20, 7) ","
                            S(AG "ReluBackward0", 320, 20, 6) ","
                            S(AG "MmBackward0", 420, 30, 5) ","
                            E(AG "torch::autograd::AccumulateGrad", 450, 7) ","
                            S(AG "ThresholdBackward0", 457, 20, 6) "]", &p, &rep), 0, "%s",
              ps_errmsg());
    cr_expect_eq(rep.method, MDL_TORCH_BWD_SEQUENCE);
    cr_expect_float_eq(p->layers[0].bwd, 37e-6, 1e-15, "a: %g", p->layers[0].bwd);
    cr_expect_float_eq(p->layers[1].bwd, 40e-6, 1e-15, "b: %g", p->layers[1].bwd);
    cr_expect_float_eq(rep.unattributed_us, 20, 1e-9);
    mdl_profile_free(p);
    /* a range of no time right before the next layer: a layer of its own, in
     * order, not "nested"; an op at that instant is the longer range's */
    cr_assert_eq(import_raw("[" E("layer:a", 0, 10) "," E("layer:id", 10, 0) ","
                            E("layer:b", 10, 10) "," S("aten::mm", 10, 5, 3) ","
                            S(AG "MmBackward0", 30, 8, 3) "]", &p, &rep), 0, "%s",
              ps_errmsg());
    cr_assert_eq(p->n_layers, 3);
    cr_expect_str_eq(p->layers[1].name, "id");
    cr_expect_str_eq(p->layers[2].name, "b");
    cr_expect_float_eq(p->layers[1].fwd, 0, 1e-15);
    cr_expect_float_eq(p->layers[2].bwd, 8e-6, 1e-15);
    mdl_profile_free(p);
    /* an op of 10 us at the instant of a range of no time is not that range's (helper-129) */
    cr_assert_eq(import_raw("[" E("layer:a", 0, 100) "," S("aten::mm", 10, 50, 5) ","
                            E("layer:z", 100, 0) "," S("aten::loss", 100, 10, 7) ","
                            S(AG "LossBackward0", 300, 20, 7) ","
                            S(AG "MmBackward0", 320, 30, 5) "]", &p, &rep), 0, "%s",
                 ps_errmsg());
    cr_expect_float_eq(p->layers[1].bwd, 0, 1e-15, "z: %g", p->layers[1].bwd);
    cr_expect_float_eq(rep.unattributed_us, 20, 1e-9);
    mdl_profile_free(p);
    /* 100 us is written 0.1 ms (it was 0.09999999999999999: x 1e-6, then x 1e3) */
    cr_assert_eq(import_raw("[" E("layer:a", 0, 100) "]", &p, &rep), 0, "%s", ps_errmsg());
    cr_expect_eq(p->layers[0].fwd, 1e-4);
    mdl_profile_free(p);
    /* two threads whose ids differ past their 63rd byte are two (they were one, and their
     * ranges read as overlapping) */
#define T64 "t123456789012345678901234567890123456789012345678901234567890123"
    cr_expect_eq(import_raw("[{\"ph\":\"X\",\"name\":\"layer:a\",\"ts\":0,\"dur\":10,"
                            "\"tid\":\"" T64 "x\"},{\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":5,"
                            "\"dur\":10,\"tid\":\"" T64 "y\"}]", &p, &rep), 0, "%s", ps_errmsg());
#undef T64
    mdl_profile_free(p);
    /* a name with a blank at either end: no CSV reader keeps it */
    cr_expect_eq(import_raw("[" E("layer: a", 0, 10) "]", &p, &rep), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "nor with a blank at either end"), "%s", ps_errmsg());
    cr_expect_eq(import_raw("[" E("layer:a ", 0, 10) "]", &p, &rep), -PS_EINVAL);
    /* an empty file (or a byte-order mark alone) says so: it was line 1, column 0 */
    cr_expect_eq(import_raw("", &p, &rep), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), ": the file is empty"), "%s", ps_errmsg());
    cr_expect_eq(import_raw("\xef\xbb\xbf", &p, &rep), -PS_EPARSE);
    cr_expect(strstr(ps_errmsg(), ": the file is empty"), "%s", ps_errmsg());
}
#undef AG
#undef S
#undef E
