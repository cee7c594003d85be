/* pipesim import-torch: a PyTorch profiler trace to a measured profile CSV. */
#include "cli/cli.h"
#include "models/mdl_torch.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <math.h>
#include <stdio.h>

static const char help[] =
    "usage: pipesim import-torch TRACE.json [--batch N] [--sizes F] [--prefix P]\n"
    "                            [-o|--out OUT.csv]\n\n"
    "Reads a Chrome trace exported by torch.profiler (export_chrome_trace) in which\n"
    "each layer's forward runs inside record_function(\"layer:<name>\") and writes a\n"
    "measured layer profile (name,kind,fwd_ms,bwd_ms,at_batch,params,out_bytes,\n"
    "stash_bytes) for pipesim predict. Times are per step, averaged over the steps\n"
    "in the trace. Backward time per layer comes from layer ranges opened during\n"
    "backward (see scripts/make_torch_trace.py), else from the autograd sequence\n"
    "numbers of Kineto traces, else it is taken as 2 x forward.\n"
    "  --batch N    samples per step in the trace (default: the sidecar's at_batch)\n"
    "  --sizes F    per-layer sizes CSV: name,kind,params,out_bytes,stash_bytes,\n"
    "               at_batch, optionally stash_shared_bytes (default: TRACE minus\n"
    "               .json plus .layers.csv, if present; without one params and\n"
    "               bytes are 0)\n"
    "  --prefix P   layer range prefix (default layer:)\n"
    "  -o OUT.csv   output (default stdout)\n";

int cmd_import_torch(int argc, char **argv)
{
    static const struct option opts[] = {
        { "batch", required_argument, 0, 'b' }, { "sizes", required_argument, 0, 's' },
        { "prefix", required_argument, 0, 'p' }, { "out", required_argument, 0, 'o' },
        { "help", no_argument, 0, 'h' },         { 0, 0, 0, 0 },
    };
    struct mdl_torch_opts o = { 0 };
    const char *out_path = "-";
    int c, rc = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("import-torch", argc, argv, "ho:", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); return 0;
        case 'b':
            if ((rc = ps_parse_double(optarg, "--batch", &o.batch)) < 0)
                return rc;
            if (o.batch <= 0 || o.batch != floor(o.batch) || o.batch > 1 << 30)
                return ps_error(PS_EUSAGE, "--batch must be a whole number of samples, 1 to "
                                "2^30, got %s", optarg);
            break;
        case 's':
            if (!*optarg)
                return ps_error(PS_EUSAGE, "--sizes needs a file name");
            o.sizes_path = optarg;
            break;
        case 'p': o.prefix = optarg; break;
        case 'o': out_path = optarg; break;
        default: return -PS_EUSAGE;
        }
    }
    if (optind == argc)
        return ps_error(PS_EUSAGE, "TRACE.json is required (see pipesim "
                         "import-torch --help)");
    if (optind + 1 < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind + 1]);
    if ((rc = ps_io_input(argv[optind], "TRACE.json")) < 0 ||
        (rc = ps_io_input(o.sizes_path, "--sizes")) < 0 ||
        (rc = ps_io_output(out_path, "--out")) < 0)
        return rc;
    struct mdl_profile *p;
    struct mdl_torch_report rep;
    if ((rc = mdl_torch_import(argv[optind], &o, &p, &rep)) < 0)
        return rc;
    rc = mdl_profile_write(p, out_path);
    if (rc == 0) {
        if (rep.method == MDL_TORCH_BWD_NONE) /* the profile's default: 2 x forward */
            fprintf(stderr, "import-torch: %d layer%s, %d step%s at batch %g; per step forward "
                    "%.3f ms, no backward in the trace (each layer's bwd_ms written as 2 x "
                    "its forward)", rep.n_layers, rep.n_layers == 1 ? "" : "s", rep.steps,
                    rep.steps == 1 ? "" : "s", p->layers[0].at_batch, rep.fwd_us / 1e3);
        else
            fprintf(stderr, "import-torch: %d layer%s, %d step%s at batch %g; per step forward "
                    "%.3f ms, backward %.3f ms (by %s)", rep.n_layers,
                    rep.n_layers == 1 ? "" : "s", rep.steps, rep.steps == 1 ? "" : "s",
                    p->layers[0].at_batch, rep.fwd_us / 1e3, rep.bwd_us / 1e3,
                    mdl_torch_bwd_name(rep.method));
        if (rep.unattributed_us > 0)
            fprintf(stderr, ", %.3f ms of backward charged to no layer",
                    rep.unattributed_us / 1e3);
        if (rep.n_recompute)
            fprintf(stderr, ", %d re-computation range%s ignored", rep.n_recompute,
                    rep.n_recompute == 1 ? "" : "s");
        if (rep.n_ambiguous) /* numbers count per thread; Kineto names no tid */
            fprintf(stderr, ", %d backward function%s whose number several forward threads "
                    "carry charged to the latest of them", rep.n_ambiguous,
                    rep.n_ambiguous == 1 ? "" : "s");
        if (rep.repeated) /* its time per step is the sum of its calls' */
            fprintf(stderr, ", %d layer%s run several times a step (first: '%s', %d times)",
                    rep.repeated, rep.repeated == 1 ? "" : "s", rep.repeated_name,
                    rep.repeated_times);
        fprintf(stderr, "; sizes %s\n", *rep.sizes ? rep.sizes : "none (params, bytes = 0)");
    }
    mdl_profile_free(p);
    return rc;
}
