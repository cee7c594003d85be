/* pipesim presets: the bundled topologies, profiles and model generators. */
#include "analysis/ana_presets.h"
#include "cli/cli.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdio.h>

static const char help[] =
    "usage: pipesim presets [--format table|csv|json] [-o|--out F]\n\n"
    "Lists what pipesim ships, one line each, read from the files themselves:\n"
    "  topologies  name (--topology NAME), devices (count, peak FLOP/s,\n"
    "              memory, device preset), links (count and bandwidth; shared\n"
    "              buses), and the first sentence of the file's description\n"
    "  profiles    name (--model NAME), layers, parameters, the spec that\n"
    "              generated it\n"
    "  generators  an example spec of each (--model SPEC) with its layers and\n"
    "              parameters\n"
    "Names are looked up in the data folder, which the first line names: the\n"
    "folder $PIPESIM_DATA names, else share/pipesim beside the installed\n"
    "program, else the source tree it was built in, else PREFIX/share/pipesim.\n"
    "A file or any path with a '/' is always taken as given.\n"
    "A file in the folder that does not load is listed as such with its loader's\n"
    "message (the error column of csv, field of json), and that message is warned\n"
    "on stderr; the others are listed all the same (exit 0).\n"
    "--format csv: one header, one row per item, its section (topology, profile,\n"
    "generator) in the first column; numbers in base units (FLOP/s, bytes,\n"
    "bytes/s; device_* of a topology's first device), descriptions whole.\n"
    "--format json: the data folder and one array per section (a topology's\n"
    "device_runs and link_groups as arrays of objects, their figures as numbers),\n"
    "descriptions whole.\n"
    "Defaults: --format table.\n";

struct presets_out {
    const struct mdl_preset_catalog *c;
    enum ana_fmt format;
};

static int print_presets(const void *ctx, FILE *f)
{
    const struct presets_out *o = ctx;
    return ana_presets_print(o->c, o->format, f);
}

int cmd_presets(int argc, char **argv)
{
    static const struct option opts[] = {
        { "format", required_argument, 0, 'f' },
        { "out", required_argument, 0, 'o' },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    struct presets_out o = { .format = ANA_FMT_TABLE };
    const char *out = "-";
    int c, rc;
    cli_getopt_reset();
    while ((c = cli_getopt("presets", argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'h': return cli_help(help) - 1;
        case 'f':
            if ((rc = ana_fmt_parse(optarg, ANA_FMTS_ALL, "--format", &o.format)) < 0)
                return rc;
            break;
        case 'o': out = optarg; break;
        default: return -PS_EUSAGE; /* cli_getopt set the message */
        }
    }
    if (optind < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    struct mdl_preset_catalog *cat;
    if ((rc = ps_io_output(out, "--out")) < 0 || (rc = mdl_preset_catalog_new(&cat)) < 0)
        return rc;
    o.c = cat;
    rc = cli_write_output(out, print_presets, &o);
    for (int i = 0; rc == 0 && cat->n_errors && i < cat->n; i++)
        if (cat->items[i].error)
            fprintf(stderr, "pipesim presets: warning: %s (listed as not loading)\n",
                    cat->items[i].error);
    mdl_preset_catalog_free(cat);
    return rc;
}
