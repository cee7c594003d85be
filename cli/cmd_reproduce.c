/* pipesim reproduce gpipe|torchgpipe: a published evaluation reproduced by
 * a study (studies/), its predictions written beside the published figures.
 * `gpipe` is cli/cmd_paper.c's (also `pipesim paper`); `torchgpipe` here. */
#include "studies/stu_torchgpipe.h"
#include "cli/cli.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"

#include <stdio.h>
#include <string.h>

static const char help[] =
    "usage: pipesim reproduce <study> [options]   (pipesim reproduce <study> --help)\n\n"
    "Reproduces a published evaluation with the simulator and writes the\n"
    "predictions beside the published figures, with the error of every cell\n"
    "and every deviation over 10 % listed with the fact the source does not give.\n"
    "studies:\n"
    "  gpipe       the GPipe paper's Tables 1-3 and partitions (results/paper;\n"
    "              `pipesim paper` is an alias)\n"
    "  torchgpipe  torchgpipe's AmoebaNet-D (18, 256), ResNet-101 and U-Net\n"
    "              (5, 64) speed benchmarks and its AmoebaNet-D (L, D) and U-Net\n"
    "              (B, C) memory benchmarks on P40s (results/torchgpipe)\n";

static const char help_tg[] =
    "usage: pipesim reproduce torchgpipe [--out-dir results/torchgpipe]\n"
    "                                    [--topologies DIR] [--data DIR] [--quiet]\n\n"
    "Predicts every row of torchgpipe's speed benchmarks (docs/benchmarks.rst):\n"
    "AmoebaNet-D (18, 256) (benchmarks/amoebanetd-speed/main.py, model\n"
    "amoebanet:L=18,D=256), ResNet-101 (benchmarks/resnet101-speed/main.py,\n"
    "resnet:depth=101) and U-Net (5, 64) (benchmarks/unet-speed/main.py,\n"
    "unet:convs=5,channels=64; its long skips relayed from stage to stage, where\n"
    "torchgpipe's portals copy them straight to the partition that pops them):\n"
    "the row's n (K), m (chunks), mini-batch, balance as the\n"
    "partition and checkpoint mode, GPipe schedule, on p40-pcie-8.json from\n"
    "--topologies, SGD without momentum (8 bytes per parameter); an epoch as\n"
    "main.py runs it (10 000, 50 000 or 10 000 samples, the last mini-batch the rest,\n"
    "chunks as torch.chunk cuts them). And every row of its AmoebaNet-D (L, D)\n"
    "memory benchmark (benchmarks/amoebanetd-memory/main.py: 128 images in 128\n"
    "micro-batches, RMSprop, 12 bytes per parameter): parameters, model memory\n"
    "and peak activation memory (the stages' ledgers summed) against PyTorch's\n"
    "measured figures; and of its U-Net (B, C) memory benchmark\n"
    "(benchmarks/unet-memory/main.py: 32 images, SGD, 8 bytes per parameter): the\n"
    "stages' ledgers summed against the GPUs' measured total. Writes\n"
    "  speed.md, resnet101-speed.md, unet-speed.md  absolute samples/s and\n"
    "                 speed-ups over the base row (n2m1, baseline), predicted vs\n"
    "                 measured with errors, where the time goes, the deviations,\n"
    "                 what one hardware figure would have to be for each miss\n"
    "  speed.csv, resnet101-speed.csv, unet-speed.csv  the same for machines\n"
    "  amoebanetd-memory.md, .csv      the memory benchmark, per row and GPU\n"
    "  unet-memory.md, .csv            U-Net's memory benchmark, per row and GPU\n"
    "The measured rows are read from --data/reference/<name>.csv (citing their\n"
    "source), the prose from --data/text/<name>.md; a malformed one is an error\n"
    "naming file:line and the field or section (exit status 3), and nothing is\n"
    "written. Nothing in --data is run (its templates are markdown; the gpipe\n"
    "study's --data holds gnuplot scripts, which are: see its --help).\n"
    "The outputs depend only on the inputs: a rerun reproduces them\n"
    "byte for byte.\n"
    "Defaults: --out-dir results/torchgpipe, --topologies and --data the data\n"
    "folder's topologies/ and torchgpipe/ (models/topologies and\n"
    "studies/torchgpipe in the source tree, PREFIX/share/pipesim/... installed;\n"
    "pipesim presets names the folder).\n";

static int torchgpipe(int argc, char **argv)
{
    static const struct option opts[] = {
        { "out-dir", required_argument, 0, 'O' }, { "topologies", required_argument, 0, 'T' },
        { "out", required_argument, 0, 'd' }, /* the old spelling (not -o: a file) */
        { "data", required_argument, 0, 'D' }, { "quiet", no_argument, 0, 'q' },
        { "help", no_argument, 0, 'h' },      { 0, 0, 0, 0 },
    };
    struct stu_tg_opts o = { .out_dir = "results/torchgpipe",
                             .log = stderr };
    int c, out_given = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("reproduce torchgpipe", argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help_tg); return 0;
        case 'd':
        case 'O': {
            int rc = cli_out_dir(optarg, c == 'd', &o.out_dir, &out_given);
            if (rc < 0)
                return rc;
            break;
        }
        case 'T': o.topo_dir = optarg; break;
        case 'D': o.data_dir = optarg; break;
        case 'q': o.log = NULL; break;
        default: return -PS_EUSAGE; /* cli_getopt set the message */
        }
    }
    int rc = cli_study_dirs("reproduce torchgpipe", out_given, argc, argv, o.out_dir,
                            o.topo_dir, o.data_dir);
    return rc < 0 ? rc : stu_torchgpipe_run(&o);
}

int cmd_reproduce(int argc, char **argv)
{
    if (argc < 2)
        return ps_error(PS_EUSAGE, "which study? gpipe or torchgpipe (see pipesim reproduce "
                                   "--help)");
    const char *s = argv[1];
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
        cli_help(help);
        return 0;
    }
    if (!strcmp(s, "gpipe"))
        return cli_reproduce_gpipe("reproduce gpipe", argc - 1, argv + 1);
    if (!strcmp(s, "torchgpipe"))
        return torchgpipe(argc - 1, argv + 1);
    static const char *const studies[] = { "gpipe", "torchgpipe" };
    struct ps_suggest sg;
    return ps_error(PS_EUSAGE, "unknown study '%s'%s (gpipe or torchgpipe; see pipesim "
                    "reproduce --help)", s, ps_suggest_among(&sg, s, studies, 2));
}
