/* pipesim compare: a simulated trace against a measured one. */
#include "analysis/ana_compare.h"
#include "cli/cli.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

static const char help[] =
    "usage: pipesim compare SIM.json MEASURED.json [--format table|csv|json] [--out F]\n\n"
    "Aligns the ops of two Chrome traces written by pipesim (predict --trace and\n"
    "validate --trace) by (device, kind, stage, micro-batch) and reports the makespan\n"
    "error, bubble-fraction error, per-device busy error, per-op duration error\n"
    "(median, p95), start-time drift, peak activation memory side by side, and the ten\n"
    "largest discrepancies with their likely cause. Errors are measured - simulated.\n";

struct compare_out {
    const struct ana_compare *cmp;
    enum ana_fmt format;
};

static int print_compare(const void *ctx, FILE *f)
{
    const struct compare_out *o = ctx;
    return ana_compare_print(o->cmp, o->format, f);
}

int cmd_compare(int argc, char **argv)
{
    static const struct option opts[] = { { "format", required_argument, 0, 'f' },
                                          { "out", required_argument, 0, 'o' },
                                          { "help", no_argument, 0, 'h' },
                                          { 0, 0, 0, 0 } };
    const char *out = "-";
    enum ana_fmt format = ANA_FMT_TABLE;
    int c, rc;
    cli_getopt_reset();
    while ((c = cli_getopt("compare", argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); return 0;
        case 'f':
            if ((rc = ana_fmt_parse(optarg, ANA_FMTS_ALL, "--format", &format)) < 0)
                return rc;
            break;
        case 'o': out = optarg; break;
        default: return -PS_EUSAGE;
        }
    }
    if (argc - optind != 2)
        return ps_error(PS_EUSAGE, "expected SIM.json MEASURED.json (see pipesim "
                         "compare --help)");
    if ((rc = ps_io_input(argv[optind], "SIM.json")) < 0 ||
        (rc = ps_io_input(argv[optind + 1], "MEASURED.json")) < 0 ||
        (rc = ps_io_output(out, "--out")) < 0)
        return rc;
    struct trc_trace *a = NULL, *b = NULL;
    struct ana_compare *cmp = NULL;
    if ((rc = trc_read_chrome(argv[optind], &a)) < 0 ||
        (rc = trc_read_chrome(argv[optind + 1], &b)) < 0 ||
        (rc = ana_compare_new(a, b, &cmp)) < 0)
        goto out;
    rc = cli_write_output(out, print_compare, &(struct compare_out){ cmp, format });
out:
    ana_compare_free(cmp);
    trc_trace_free(a);
    trc_trace_free(b);
    return rc;
}
