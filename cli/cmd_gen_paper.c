/* pipesim gen-paper: the GPipe paper's Table 1 model configurations as
 * generated here, side by side with the paper's parameter counts. */
#include "analysis/ana_format.h"
#include "cli/cli.h"
#include "models/mdl_paper.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_util.h"

#include <jansson.h>

static const char help[] =
    "usage: pipesim gen-paper [-f|--format table|csv|json] [-o|--out F]\n\n"
    "Generates every model of the GPipe paper's Table 1 (AmoebaNet-D (L, D) and\n"
    "Transformer-L) from its architecture and prints, per configuration: the\n"
    "generator spec, layers, generated vs published parameter count and the\n"
    "difference, forward GFLOPs per sample, activation bytes kept for backward\n"
    "per sample, and that times the Table 1 mini-batch (128 images, 32\n"
    "sequences): the activation memory of plain training without\n"
    "re-materialization. Activations are the generators' default, keep=unfused\n"
    "(every intermediate an unfused framework keeps, as PyTorch's autograd);\n"
    "`pipesim reproduce gpipe` sizes Table 1 with keep=fused, what XLA keeps,\n"
    "which is less. Any spec printed can be given to --model (add ,keep=fused\n"
    "for XLA's), or to `pipesim gen model SPEC` for the per-layer CSV.\n"
    "--format csv: one row per configuration, bytes and counts whole (the spec in\n"
    "double quotes: it has commas); json: an array of the same objects.\n"
    "Defaults: --format table.\n";

static const struct {
    const char *config, *spec;
    double paper_params, batch;
} rows[] = {
    { "AmoebaNet Naive-1", "amoebanet:L=18,D=208", 82e6, 128 },
    { "AmoebaNet Pipeline-1", "amoebanet:L=18,D=416", 318e6, 128 },
    { "AmoebaNet Pipeline-2", "amoebanet:L=18,D=544", 542e6, 128 },
    { "AmoebaNet Pipeline-4", "amoebanet:L=36,D=544", 1.05e9, 128 },
    { "AmoebaNet Pipeline-8", "amoebanet:L=72,D=512", 1.8e9, 128 },
    { "Transformer Naive-1", "transformer:L=3", 282.2e6, 32 },
    { "Transformer Pipeline-1", "transformer:L=13", 785.8e6, 32 },
    { "Transformer Pipeline-8", "transformer:L=103", 5.3e9, 32 },
    { "Transformer Pipeline-32", "transformer:L=415", 21.0e9, 32 },
    { "Transformer Pipeline-128", "transformer:L=1663", 83.9e9, 32 },
};

/* One configuration as generated here. */
struct paper_row {
    int layers;
    double params, err_pct, fwd_gflops, stash; /* stash: bytes per sample */
};

static const size_t n_rows = sizeof rows / sizeof rows[0];

static void print_table(const void *obj, FILE *f)
{
    const struct paper_row *r = obj;
    fprintf(f, "%-25s %-21s %6s %15s %10s %7s %11s %10s %6s %12s\n", "config", "spec",
            "layers", "params", "paper", "err %", "fwd GFLOP", "stash MiB", "batch",
            "naive GiB");
    for (size_t i = 0; i < n_rows; i++)
        fprintf(f, "%-25s %-21s %6d %15.0f %10.4g %+7.2f %11.2f %10.1f %6.0f %12.2f\n",
                rows[i].config, rows[i].spec, r[i].layers, r[i].params, rows[i].paper_params,
                r[i].err_pct, r[i].fwd_gflops, r[i].stash / (1 << 20), rows[i].batch,
                r[i].stash * rows[i].batch / (1 << 30));
}

static void print_csv(const void *obj, FILE *f)
{
    const struct paper_row *r = obj;
    fprintf(f, "config,spec,layers,params,paper_params,params_err_pct,fwd_gflops_per_sample,"
               "stash_bytes_per_sample,batch,naive_activation_bytes\n");
    for (size_t i = 0; i < n_rows; i++) {
        fprintf(f, "%s,", rows[i].config);
        ps_csv_str(f, rows[i].spec); /* a spec has commas */
        /* exact, as the JSON (params_err_pct and the GFLOPs were cut to 2 and 3
         * decimals) */
        fprintf(f, ",%d,%s,%s,%s,%s,%s,%s,%s\n", r[i].layers, PS_DBL(r[i].params),
                PS_DBL(rows[i].paper_params), PS_DBL(r[i].err_pct), PS_DBL(r[i].fwd_gflops),
                PS_DBL(r[i].stash), PS_DBL(rows[i].batch), PS_DBL(r[i].stash * rows[i].batch));
    }
}

static int print_json(const void *obj, FILE *f)
{
    const struct paper_row *r = obj;
    ps_json_begin(); /* a NULL from json_pack or a failed dump may be out of memory */
    json_t *a = json_array();
    if (!a)
        return ps_error(PS_ENOMEM, "out of memory");
    int bad = 0;
    for (size_t i = 0; i < n_rows; i++)
        bad |= json_array_append_new(
            a, json_pack("{s:s, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "config",
                         rows[i].config, "spec", rows[i].spec, "layers", r[i].layers, "params",
                         r[i].params, "paper_params", rows[i].paper_params, "params_err_pct",
                         r[i].err_pct, "fwd_gflops_per_sample", r[i].fwd_gflops,
                         "stash_bytes_per_sample", r[i].stash, "batch", rows[i].batch,
                         "naive_activation_bytes", r[i].stash * rows[i].batch));
    return ps_json_print(a, f, bad);
}

/* Every configuration built, then printed as fmt. */
static int print_rows(FILE *f, enum ana_fmt fmt)
{
    static const struct ana_printers pr = { print_table, print_csv, print_json };
    struct paper_row r[sizeof rows / sizeof rows[0]];
    for (size_t i = 0; i < n_rows; i++) {
        struct mdl_profile *p = NULL;
        int rc = mdl_paper_from_spec(rows[i].spec, &p);
        if (rc < 0)
            return rc;
        if (rc == 0)
            PS_BUG("built-in spec '%s' not recognised", rows[i].spec);
        double fwd = 0, stash = 0;
        for (int k = 0; k < p->n_layers; k++) {
            fwd += p->layers[k].fwd;
            /* one device holding the whole model: shared tensors once */
            stash += p->layers[k].stash_bytes - p->layers[k].stash_shared_bytes;
        }
        r[i].layers = p->n_layers;
        r[i].params = mdl_profile_params(p);
        /* (a - b) * 100 / b: exact but for the one division (no 0.60299999...) */
        r[i].err_pct = (r[i].params - rows[i].paper_params) * 100 / rows[i].paper_params;
        r[i].fwd_gflops = fwd / 1e9;
        r[i].stash = stash;
        mdl_profile_free(p);
    }
    return ana_print_as(fmt, &pr, r, f);
}

int cmd_gen_paper(int argc, char **argv)
{
    static const struct option opts[] = { { "format", required_argument, 0, 'f' },
                                          { "out", required_argument, 0, 'o' },
                                          { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *out = "-";
    enum ana_fmt fmt = ANA_FMT_TABLE;
    int c, rc;
    cli_getopt_reset();
    while ((c = cli_getopt("gen-paper", argc, argv, "f:o:h", opts)) != -1) {
        switch (c) {
        case 'h':
            cli_help(help);
            return 0;
        case 'o':
            out = optarg;
            break;
        case 'f':
            if ((rc = ana_fmt_parse(optarg, ANA_FMTS_ALL, "--format", &fmt)) < 0)
                return rc;
            break;
        default:
            return -PS_EUSAGE;
        }
    }
    if (optind != argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    struct ps_afile af;
    if ((rc = ps_io_output(out, "--out")) < 0 || (rc = ps_afile_open(&af, out)) < 0)
        return rc;
    if ((rc = print_rows(af.f, fmt)) < 0) {
        ps_afile_abort(&af);
        return rc;
    }
    return ps_afile_commit(&af);
}
