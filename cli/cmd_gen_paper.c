/* pipesim gen-paper: the GPipe paper's Table 1 model configurations as
 * generated here, side by side with the paper's parameter counts. */
#include "analysis/ana_format.h"
#include "cli/cli.h"
#include "models/mdl_paper.h"
#include "base/ps_error.h"
#include "base/ps_util.h"


static const char help[] =
    "usage: pipesim gen-paper [--format table|csv] [-o out]\n\n"
    "Generates every model of the GPipe paper's Table 1 (AmoebaNet-D (L, D) and\n"
    "Transformer-L) from its architecture and prints, per configuration: the\n"
    "generator spec, layers, generated vs published parameter count and the\n"
    "difference, forward GFLOPs per sample, activation bytes kept for backward\n"
    "per sample, and that times the Table 1 mini-batch (128 images, 32\n"
    "sequences): the activation memory of plain training without\n"
    "re-materialization. Any spec printed can be given to --model, or to\n"
    "`pipesim gen model SPEC` for the per-layer CSV.\n";

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

static int print_rows(FILE *f, enum ana_fmt fmt)
{
    int csv = fmt == ANA_FMT_CSV;
    if (csv)
        fprintf(f, "config,spec,layers,params,paper_params,params_err_pct,fwd_gflops_per_sample,"
                   "stash_bytes_per_sample,batch,naive_activation_bytes\n");
    else
        fprintf(f, "%-25s %-21s %6s %15s %10s %7s %11s %10s %6s %12s\n", "config", "spec",
                "layers", "params", "paper", "err %", "fwd GFLOP", "stash MiB", "batch",
                "naive GiB");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct mdl_profile *p = NULL;
        int rc = mdl_paper_from_spec(rows[i].spec, &p);
        if (rc < 0)
            return rc;
        if (rc == 0)
            PS_BUG("built-in spec '%s' not recognised", rows[i].spec);
        double params = mdl_profile_params(p), fwd = 0, stash = 0;
        for (int k = 0; k < p->n_layers; k++) {
            fwd += p->layers[k].fwd;
            stash += p->layers[k].stash_bytes;
        }
        double err = 100 * (params / rows[i].paper_params - 1);
        if (csv)
            fprintf(f, "%s,%s,%d,%.0f,%.0f,%.2f,%.3f,%.0f,%.0f,%.0f\n", rows[i].config,
                    rows[i].spec, p->n_layers, params, rows[i].paper_params, err, fwd / 1e9,
                    stash, rows[i].batch, stash * rows[i].batch);
        else
            fprintf(f, "%-25s %-21s %6d %15.0f %10.4g %+7.2f %11.2f %10.1f %6.0f %12.2f\n",
                    rows[i].config, rows[i].spec, p->n_layers, params, rows[i].paper_params,
                    err, fwd / 1e9, stash / (1 << 20), rows[i].batch,
                    stash * rows[i].batch / (1 << 30));
        mdl_profile_free(p);
    }
    return 0;
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
            if ((rc = ana_fmt_parse(optarg, ANA_FMTS_TABLE_CSV, "--format", &fmt)) < 0)
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
