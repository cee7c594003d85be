/* pipesim reproduce gpipe (and its alias pipesim paper): the GPipe paper's
 * reproductions, written as markdown (and PNG plots) under --out-dir. */
#include "studies/stu_paper.h"
#include "cli/cli.h"
#include "base/ps_error.h"

#include <stdio.h>

static const char usage[] =
    "usage: pipesim %s [--out-dir results/paper] [--tables 1,2,3,partitions|all]\n"
    "         [--topologies DIR] [--data DIR] [--no-plots] [--quiet]\n"
    "`pipesim paper` and `pipesim reproduce gpipe` are the same command: the same\n"
    "options, the same files byte for byte.\n\n";
static const char help[] =
    "Reproduces the GPipe paper's evaluation with the simulator and writes one\n"
    "markdown file per item beside the paper's figures, with the error of every\n"
    "cell and a note on every deviation over 10 %:\n"
    "  1           table1.md: the largest AmoebaNet-D / Transformer that fits each K\n"
    "  2           table2.md: normalized throughput on TPUs, K 2,4,8 x M 1,4,32\n"
    "  3           table3.md: normalized throughput on P100s over PCIe, M = 32\n"
    "  partitions  partitions.md: AmoebaNet-D (18,256), K = 8, partitions compared\n"
    "Plots (table2.png, table3.png, from the .dat/.gp files beside them) need\n"
    "gnuplot on PATH; without it they are skipped with a note. The outputs depend\n"
    "only on the inputs, so a rerun reproduces them byte for byte.\n"
    "The paper's figures are read from --data/reference/*.csv (one per table,\n"
    "each citing its source), the prose from --data/text/ (one template per\n"
    "output); a malformed one is an error naming file:line and the field,\n"
    "section or placeholder (exit status 3).\n"
    "--data is code, not only data: its text/table2.gp and text/table3.gp are\n"
    "gnuplot scripts, run as given when the plots are drawn, and gnuplot runs\n"
    "shell commands (`!cmd`, system()). Give only a data folder you trust (the\n"
    "bundled one is reviewed), or --no-plots.\n"
    "--no-plots skips drawing the PNGs (the .dat and .gp files are still written, and\n"
    "the markdown still names the figure: gnuplot table2.gp draws it); --quiet drops\n"
    "the 'wrote FILE' lines on stderr.\n"
    "Defaults: --out-dir results/paper, --tables all, --topologies and --data the\n"
    "data folder's topologies/ and gpipe/ (models/topologies and studies/gpipe\n"
    "in the source tree, PREFIX/share/pipesim/... installed; pipesim presets\n"
    "names the folder).\n";

int cli_reproduce_gpipe(const char *cmd, int argc, char **argv)
{
    static const struct option opts[] = {
        { "out-dir", required_argument, 0, 'O' }, { "tables", required_argument, 0, 't' },
        { "out", required_argument, 0, 'd' }, /* the old spelling (not -o: a file) */
        { "topologies", required_argument, 0, 'T' }, { "no-plots", no_argument, 0, 'P' },
        { "data", required_argument, 0, 'D' },
        { "quiet", no_argument, 0, 'q' },       { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    struct stu_paper_opts o = { .out_dir = "results/paper",
                                .tables = STU_PAPER_ALL, .plots = 1, .log = stderr };
    int c, rc, out_given = 0;
    cli_getopt_reset();
    while ((c = cli_getopt(cmd, argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'h':
            printf(usage, cmd);
            cli_help(help);
            return 0;
        case 'd':
        case 'O':
            if ((rc = cli_out_dir(optarg, c == 'd', &o.out_dir, &out_given)) < 0)
                return rc;
            break;
        case 'T': o.topo_dir = optarg; break;
        case 'D': o.data_dir = optarg; break;
        case 'P': o.plots = 0; break;
        case 'q': o.log = NULL; break;
        case 't':
            if ((rc = stu_paper_parse_tables(optarg, &o.tables)) < 0)
                return rc;
            break;
        default: return -PS_EUSAGE; /* cli_getopt set the message */
        }
    }
    rc = cli_study_dirs(cmd, out_given, argc, argv, o.out_dir, o.topo_dir, o.data_dir);
    return rc < 0 ? rc : stu_paper_run(&o);
}

int cmd_paper(int argc, char **argv)
{
    return cli_reproduce_gpipe("paper", argc, argv);
}
