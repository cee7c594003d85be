/* pipesim compare: a simulated trace against a measured one; --replay, a
 * measured step on its own op times. */
#include "analysis/ana_compare.h"
#include "cli/cli.h"
#include "measure/msr_validate.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdio.h>
#include <string.h>

static const char help[] =
    "usage: pipesim compare SIM.json MEASURED.json [--format table|csv|json] [--out F]\n"
    "       pipesim compare --replay MEASURED.json [--shuffles N] [--seed S] [--format F]\n"
    "                       [--out F]\n\n"
    "Aligns the ops of two Chrome traces written by pipesim (predict --trace and\n"
    "validate --trace) by (device, kind, stage, micro-batch) and reports the makespan\n"
    "error, bubble-fraction error, per-device busy error, per-op duration error\n"
    "(median, p95), start-time drift, peak activation memory side by side, and the ten\n"
    "largest discrepancies with their likely cause. Errors are measured - simulated.\n\n"
    "--replay replays a measured step (validate --trace) through the simulator's\n"
    "engine, its schedule rebuilt from the trace, with the step's own op times three\n"
    "ways: each (stage, kind, re-materialized or not) at its mean (the model, as\n"
    "validate --check's \"own op times\" line), each op its own time (the dependencies\n"
    "alone), and the times of each (stage, kind, re-materialized or not) shuffled among\n"
    "its ops N times (default 20, at most 1000; seeds S, S+1, ..., default 1): the same\n"
    "spread with no order in time. The workers' own copies of their messages (the step's\n"
    "mean send, and mean receive that did not wait) are parts of the F and B around\n"
    "them; every link is free of bandwidth, its latency the median, over the receives\n"
    "that waited, of their end less their send's end less that receive copy. What the\n"
    "means miss is what op times that vary inside a step cost; what the own times miss,\n"
    "what the engine does not model of the runtime. A trace whose ops are not its\n"
    "schedule's is refused (exit 4).\n";

struct compare_out {
    const struct ana_compare *cmp;
    const struct msr_replay_report *rep;
    enum ana_fmt format;
};

static int print_replay(const void *ctx, FILE *f)
{
    const struct compare_out *o = ctx;
    return msr_replay_report_print(o->rep, o->format, f);
}

/* --replay MEASURED.json */
static int replay(const char *path, long shuffles, long seed, enum ana_fmt format,
                  const char *out)
{
    struct trc_trace *t = NULL;
    struct msr_replay_report *r = NULL;
    int rc;
    if ((rc = trc_read_chrome(path, &t)) < 0 || (rc = trc_require_compute(t, path)) < 0)
        goto out;
    if ((rc = msr_replay_report_new(t, (int)shuffles, (uint64_t)seed, &r)) < 0) {
        if (rc != -PS_ENOMEM && rc != -PS_EUSAGE) { /* read, not replayable */
            char msg[512];
            snprintf(msg, sizeof msg, "%s", ps_errmsg());
            rc = ps_error(PS_EINVAL, "%s: %s", path, msg);
        }
        goto out;
    }
    rc = cli_write_output(out, print_replay,
                          &(struct compare_out){ .rep = r, .format = format });
out:
    msr_replay_report_free(r);
    trc_trace_free(t);
    return rc;
}


static int print_compare(const void *ctx, FILE *f)
{
    const struct compare_out *o = ctx;
    return ana_compare_print(o->cmp, o->format, f);
}

int cmd_compare(int argc, char **argv)
{
    static const struct option opts[] = { { "format", required_argument, 0, 'f' },
                                          { "out", required_argument, 0, 'o' },
                                          { "replay", required_argument, 0, 'r' },
                                          { "shuffles", required_argument, 0, 'n' },
                                          { "seed", required_argument, 0, 's' },
                                          { "help", no_argument, 0, 'h' },
                                          { 0, 0, 0, 0 } };
    const char *out = "-", *rep = NULL;
    long shuffles = 20, seed = 1;
    int shuffle_opts = 0;
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
        case 'r': rep = optarg; break;
        case 'n':
            shuffle_opts = 1;
            if ((rc = ps_parse_long(optarg, "--shuffles", 0, MSR_REPLAY_MAX_SHUFFLES,
                                    &shuffles)) < 0)
                return rc;
            break;
        case 's':
            shuffle_opts = 1;
            if ((rc = ps_parse_long(optarg, "--seed", 0, 2147483647L, &seed)) < 0)
                return rc;
            break;
        default: return -PS_EUSAGE;
        }
    }
    if (rep) {
        if (argc - optind != 0)
            return ps_error(PS_EUSAGE, "--replay takes one trace, no SIM.json (see pipesim "
                             "compare --help)");
        if ((rc = ps_io_input(rep, "--replay")) < 0 || (rc = ps_io_output(out, "--out")) < 0)
            return rc;
        return replay(rep, shuffles, seed, format, out);
    }
    if (shuffle_opts)
        return ps_error(PS_EUSAGE, "--shuffles and --seed go with --replay (see pipesim "
                         "compare --help)");
    if (argc - optind != 2)
        return ps_error(PS_EUSAGE, "expected SIM.json MEASURED.json (see pipesim "
                         "compare --help)");
    if ((rc = ps_io_input(argv[optind], "SIM.json")) < 0 ||
        (rc = ps_io_input(argv[optind + 1], "MEASURED.json")) < 0 ||
        (rc = ps_io_output(out, "--out")) < 0)
        return rc;
    struct trc_trace *a = NULL, *b = NULL;
    struct ana_compare *cmp = NULL;
    if ((rc = trc_read_fits(argv[optind], argv[optind + 1])) < 0 || /* both at once */
        (rc = trc_read_chrome(argv[optind], &a)) < 0 ||
        (rc = trc_require_compute(a, argv[optind])) < 0 ||
        (rc = trc_read_chrome(argv[optind + 1], &b)) < 0 ||
        (rc = trc_require_compute(b, argv[optind + 1])) < 0)
        goto out;
    /* the order sets the sign of every error: say when the headers say the
     * two were swapped (two simulated, or two measured, traces may be
     * compared on purpose: docs/validation.md compares two partitions) */
    if (!strcmp(a->source, "measured") && !strcmp(b->source, "simulated"))
        fprintf(stderr, "pipesim compare: warning: by their headers %s is '%s' and %s is "
                "'%s'; the order is SIM.json MEASURED.json, so each error is the second "
                "file's against the first's\n", argv[optind], a->source, argv[optind + 1],
                b->source);
    if ((rc = ana_compare_new(a, b, &cmp)) < 0)
        goto out;
    rc = cli_write_output(out, print_compare,
                          &(struct compare_out){ .cmp = cmp, .format = format });
out:
    ana_compare_free(cmp);
    trc_trace_free(a);
    trc_trace_free(b);
    return rc;
}
