/* pipesim gen: write generated model profiles and topologies. */
#include "cli/cli.h"
#include "models/mdl_gen.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"

#include <string.h>

static const char help[] =
    "usage: pipesim gen model SPEC [-o|--out out.csv]\n"
    "       pipesim gen chain -n N [--flops F] [--memory B] [--mem-bandwidth B]\n"
    "                     [--bandwidth B] [--latency S] [--efficiency E]\n"
    "                     [--batch-half H] [--overhead S] [-o|--out out.json]\n\n"
    "model: writes the per-layer profile CSV of a generator spec (listed below),\n"
    "  e.g. mlp:layers=16,width=1024,norm=4, amoebanet:L=18,D=256, transformer:L=24,\n"
    "  gpt:layers=24,hidden=1024,heads=16,seq=1024,vocab=50257, resnet:depth=101,\n"
    "  unet:convs=5,channels=64, vgg:depth=16.\n"
    "chain: writes a topology of N identical devices with a dedicated link between\n"
    "  neighbours (defaults: 1e12 FLOP/s, 16e9 B, 1e11 B/s memory, 1e10 B/s link,\n"
    "  1e-6 s latency, efficiency 1, batch_half 0, no overhead). --memory takes the\n"
    "  units of --mem-cap (16e9, 16G, 12GiB); --latency and --overhead at most 1 s.\n"
    "Output goes to stdout unless -o is given (written atomically).\n\n";

static void gen_help(void)
{
    cli_help(help);
    mdl_generators_help(stdout);
}

static int gen_model(int argc, char **argv)
{
    static const struct option opts[] = { { "out", required_argument, 0, 'o' },
                                          { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *out = "-";
    int c;
    cli_getopt_reset();
    while ((c = cli_getopt("gen model", argc, argv, "ho:", opts)) != -1) {
        if (c == 'h') {
            gen_help();
            return 0;
        }
        if (c != 'o')
            return -PS_EUSAGE;
        out = optarg;
    }
    if (optind != argc - 1 || !*argv[optind])
        return ps_error(PS_EUSAGE, "model: expected one SPEC (see pipesim gen --help)");
    struct mdl_profile *p;
    int rc;
    if ((rc = ps_io_input(argv[optind], "SPEC")) < 0 || (rc = ps_io_output(out, "--out")) < 0 ||
        (rc = mdl_model_open(argv[optind], &p)) < 0)
        return rc;
    rc = mdl_profile_write(p, out);
    mdl_profile_free(p);
    return rc;
}

static int gen_chain(int argc, char **argv)
{
    static const struct option opts[] = {
        { "out", required_argument, 0, 'o' },        { "flops", required_argument, 0, 'f' },
        { "memory", required_argument, 0, 'm' },     { "mem-bandwidth", required_argument, 0, 'w' },
        { "bandwidth", required_argument, 0, 'b' },  { "latency", required_argument, 0, 'l' },
        { "efficiency", required_argument, 0, 'e' }, { "batch-half", required_argument, 0, 'H' },
        { "overhead", required_argument, 0, 'O' },   { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    struct mdl_device d = { .flops = 1e12, .memory = 16e9, .mem_bandwidth = 1e11, .eff_max = 1 };
    double bw = 1e10, lat = 1e-6;
    long n = 0;
    const char *out = "-";
    int c, rc = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("gen chain", argc, argv, "hn:o:", opts)) != -1) {
        switch (c) {
        case 'h': gen_help(); return 0;
        case 'n': rc = ps_parse_long(optarg, "-n", 1, 1 << 20, &n); break;
        case 'o': out = optarg; break;
        case 'f': rc = ps_parse_double(optarg, "--flops", &d.flops); break;
        case 'm': rc = ps_parse_bytes(optarg, "--memory", &d.memory); break;
        case 'w': rc = ps_parse_double(optarg, "--mem-bandwidth", &d.mem_bandwidth); break;
        case 'b': rc = ps_parse_double(optarg, "--bandwidth", &bw); break;
        case 'l': rc = ps_parse_double(optarg, "--latency", &lat); break;
        case 'e': rc = ps_parse_double(optarg, "--efficiency", &d.eff_max); break;
        case 'H': rc = ps_parse_double(optarg, "--batch-half", &d.batch_half); break;
        case 'O': rc = ps_parse_double(optarg, "--overhead", &d.overhead_s); break;
        default: return -PS_EUSAGE;
        }
        if (rc < 0)
            return rc;
    }
    if (optind < argc)
        return ps_error(PS_EUSAGE, "chain: unexpected argument '%s'", argv[optind]);
    if (!n)
        return ps_error(PS_EUSAGE, "chain: -n N is required");
    /* each value against its own range, named */
    const struct {
        const char *opt;
        double v;
        int positive; /* > 0, else >= 0 */
    } chk[] = {
        { "--flops", d.flops, 1 },         { "--memory", d.memory, 1 },
        { "--bandwidth", bw, 1 },          { "--latency", lat, 0 },
        { "--mem-bandwidth", d.mem_bandwidth, 0 }, { "--batch-half", d.batch_half, 0 },
        { "--overhead", d.overhead_s, 0 },
    };
    for (size_t i = 0; i < sizeof chk / sizeof *chk; i++)
        if (chk[i].positive ? !(chk[i].v > 0) : !(chk[i].v >= 0))
            return ps_error(PS_EUSAGE, "chain: %s must be %s, got %g", chk[i].opt,
                             chk[i].positive ? "> 0" : ">= 0", chk[i].v);
    if (!(d.eff_max > 0 && d.eff_max <= 1))
        return ps_error(PS_EUSAGE, "chain: --efficiency must be in (0, 1], got %g", d.eff_max);
    /* what the topology loader refuses, refused before the file is written */
    if (lat > MDL_MSG_MAX_S || d.overhead_s > MDL_MSG_MAX_S)
        return ps_error(PS_EUSAGE, "chain: %s must be <= %g s, got %g",
                        lat > MDL_MSG_MAX_S ? "--latency" : "--overhead", MDL_MSG_MAX_S,
                        lat > MDL_MSG_MAX_S ? lat : d.overhead_s);
    struct mdl_topology *t;
    if ((rc = ps_io_output(out, "--out")) < 0 ||
        (rc = mdl_topology_chain((int)n, &d, bw, lat, &t)) < 0)
        return rc;
    rc = mdl_topology_write(t, out);
    mdl_topology_free(t);
    return rc;
}

int cmd_gen(int argc, char **argv)
{
    if (argc < 2) /* a usage error writes nothing on stdout (helper-130: the help did) */
        return ps_error(PS_EUSAGE, "expected 'model' or 'chain' (see pipesim gen --help)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        gen_help();
        return 0;
    }
    if (!strcmp(argv[1], "model"))
        return gen_model(argc - 1, argv + 1);
    if (!strcmp(argv[1], "chain"))
        return gen_chain(argc - 1, argv + 1);
    static const char *const kinds[] = { "model", "chain" };
    struct ps_suggest sg;
    return ps_error(PS_EUSAGE, "unknown generator '%s'%s (model, chain)", argv[1],
                    ps_suggest_among(&sg, argv[1], kinds, 2));
}
