/* pipesim predict: one simulated training step. */
#include "analysis/ana_predict.h"
#include "analysis/ana_sens.h"
#include "cli/cli_run.h"
#include "models/mdl_gen.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
    "usage: pipesim predict --model F --topology F -K k -M m --batch N\n"
    "                       [--remat always|except_last|never]\n"
    "                       [--schedule gpipe|1f1b|eager-1f1b|interleaved:v|breadth-first:v|\n"
    "                        zb-h1|zb-h2|zb-v|zb-auto[:L]|dualpipe-v]\n"
    "                       [--partition uniform|optimal|gpipe|balance-by-size|lingvo|\n"
    "                                    3,5,4,4]\n"
    "                       [--trace out.json] [--trace-csv out.csv]\n"
    "                       [--format table|csv|json] [-o|--out F]\n"
    "                       [--replicas R] [--sensitivity]\n\n"
    "Simulates one training step of the model (a profile CSV or a generator spec such\n"
    "as mlp:layers=16,width=1024, listed below) split into K stages on the\n"
    "topology's first K devices, with M micro-batches of batch/M samples. Prints the\n"
    "model it built (layers, parameters), step time, throughput, speedup over a\n"
    "single device (K=1, M=1, no re-materialization), the simulated bubble beside\n"
    "the schedule's uniform-stage formula (gpipe's (K-1)/(M+K-1)), busy fraction\n"
    "and peak memory per stage. Times print in s, ms, us or ns; memory in binary\n"
    "units (KiB, MiB, GiB: 2^10, 2^20, 2^30 bytes), as device memory is sold.\n"
    "--partition optimal (or gpipe, balance-by-size, lingvo) cuts the layers as that\n"
    "strategy of `pipesim partition` and `pipesim sweep` does, under each device's\n"
    "memory (partition also simulates optimal's neighbours).\n"
    "--trace writes a Chrome Trace Event JSON for https://ui.perfetto.dev.\n"
    "--replicas R: R data-parallel copies of the pipeline (replica r's stage s on\n"
    "device r*K+s) with a ring all-reduce of each stage's gradients before its\n"
    "update; --batch is per replica.\n"
    "--sensitivity also prints the step's elasticity to each hardware figure: its\n"
    "change in per cent per 1 % more of the matrix peak, vector peak, memory\n"
    "bandwidth, per-kernel cost, link bandwidth or link latency of every device and\n"
    "link at once (-1: all of the step scales with it; 0: off the critical path),\n"
    "from two more simulations per figure, the partition kept (zb-auto re-fits its\n"
    "order to the changed costs; analysis/ana_sens.h; docs/devices-and-topologies.md,\n"
    "\"What limits a step\").\n"
    "Defaults: --schedule gpipe, --remat except_last, --partition uniform,\n"
    "--format table.\n";

struct predict_opts {
    const char *trace, *trace_csv, *out_path;
    enum ana_fmt format;
    int sensitivity;
    const struct ana_prediction *p; /* what is printed */
};

static int predict_option(void *ctx, int c, const char *arg)
{
    struct predict_opts *o = ctx;
    switch (c) {
    case 'T': o->trace = arg; break;
    case 'C': o->trace_csv = arg; break;
    case 'f': return ana_fmt_parse(arg, ANA_FMTS_ALL, "--format", &o->format);
    case 'o': o->out_path = arg; break;
    case 'S': o->sensitivity = 1; break;
    default: return -PS_EUSAGE; /* cli_getopt set the message */
    }
    return 0;
}

static int print_prediction(const void *ctx, FILE *f)
{
    const struct predict_opts *o = ctx;
    return ana_prediction_print(o->p, o->format, f);
}

int cmd_predict(int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_RUN_OPTIONS, CLI_RUN_SCHEDULE, CLI_RUN_PARTITION, CLI_RUN_REPLICAS,
        { "trace", required_argument, 0, 'T' }, { "trace-csv", required_argument, 0, 'C' },
        { "format", required_argument, 0, 'f' }, { "out", required_argument, 0, 'o' },
        { "sensitivity", no_argument, 0, 'S' },
        { 0, 0, 0, 0 },
    };
    struct predict_opts o = { .format = ANA_FMT_TABLE, .out_path = "-" };
    struct ana_config cfg = { 0 };
    struct cli_run run;
    int rc;
    cli_run_init(&run);
    run.help_generators = 1;
    if ((rc = cli_run_parse(&run, "predict", help, argc, argv, opts, predict_option, &o)) != 0)
        return rc > 0 ? 0 : rc;
    if ((rc = cli_run_check("predict", &run, argc, argv)) < 0 ||
        (rc = ps_io_output(o.trace, "--trace")) < 0 ||
        (rc = ps_io_output(o.trace_csv, "--trace-csv")) < 0 ||
        (rc = ps_io_output(o.out_path, "--out")) < 0)
        return rc;
    struct ana_prediction *p = NULL;
    if ((rc = cli_run_open(&run, 1, &cfg)) < 0)
        goto out;
    cfg.record_trace = o.trace || o.trace_csv;
    if ((rc = ana_predict(&cfg, &p)) < 0)
        goto out;
    if (!(p->step_s > 0)) { /* a throughput would be infinite, a speedup 0/0 */
        rc = ps_error(PS_EINVAL, "model %s: the step takes no time: no layer has work, bytes "
                      "to move or parameters to update", p->model[0] ? p->model : "?");
        goto out;
    }
    if (o.sensitivity) {
        if ((rc = ana_sensitivity(&cfg, p->sens)) < 0)
            goto out;
        p->has_sens = 1;
        /* scaling every rate by f and every fixed cost by 1/f divides a FLOP
         * profile's step by f, so its rates' elasticities less its fixed costs'
         * sum to -1 (devices-and-topologies.md); where they do not, ops moved by
         * under the engine's 1 ns tick at +-1 % and the figures are partly its
         * rounding (helper-134: -1.09, matrix -0.083 where +-5 % gives -0.050;
         * helper-135: a test of the shortest F or B warned of an op off the
         * critical path and missed short W ops). A measured profile's times do not
         * move with the device figures: no such sum. */
        const double *e = p->sens;
        double sum = e[ANA_KNOB_MATRIX] + e[ANA_KNOB_VECTOR] + e[ANA_KNOB_MEMORY] +
                     e[ANA_KNOB_LINK_BW] - e[ANA_KNOB_OVERHEAD] - e[ANA_KNOB_LATENCY];
        if (!cfg.profile->measured && isfinite(sum) && fabs(sum + 1) > 0.01)
            fprintf(stderr, "pipesim predict: warning: --sensitivity's figures sum to %.3f "
                    "where they sum to -1 (rates less fixed costs): at +-1 %% some ops move "
                    "by under the engine's 1 ns tick, and the figures are partly its "
                    "rounding (a larger batch or slower devices resolve them)\n", sum);
    }
    if (p->short_ops > 0) {
        char w[512];
        ana_short_ops_describe(p->short_ops, p->compute_ops, p->short_kinds, w, sizeof w);
        fprintf(stderr, "pipesim predict: warning: %s\n", w);
    }
    o.p = p;
    /* the traces and the result one set: all written or none replaced */
    const struct cli_output set[] = { { o.trace, cli_print_chrome, p->trace },
                                      { o.trace_csv, cli_print_csv, p->trace },
                                      { o.out_path, print_prediction, &o } };
    rc = cli_write_outputs(set, 3);
out:
    ana_prediction_free(p);
    cli_run_close(&run);
    return rc;
}
