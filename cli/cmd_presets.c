/* pipesim presets: the bundled topologies, profiles and model generators. */
#include "models/mdl_preset.h"
#include "cli/cli.h"
#include "base/ps_error.h"

#include <stdio.h>

static const char help[] =
    "usage: pipesim presets\n\n"
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
    "A file or any path with a '/' is always taken as given.\n";

int cmd_presets(int argc, char **argv)
{
    static const struct option opts[] = {
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    int c;
    cli_getopt_reset();
    while ((c = cli_getopt("presets", argc, argv, "h", opts)) != -1) {
        if (c == 'h')
            return cli_help(help) - 1;
        return -PS_EUSAGE; /* cli_getopt set the message */
    }
    if (optind < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    return mdl_preset_list(stdout);
}
