/* pipesim predict: one simulated training step. */
#include "analysis/ana_predict.h"
#include "cli/cli_run.h"
#include "models/mdl_gen.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <string.h>

static const char help[] =
    "usage: pipesim predict --model F --topology F -K k -M m --batch N\n"
    "                       [--remat always|except_last|never]\n"
    "                       [--schedule gpipe|1f1b|interleaved:v|zb-h1]\n"
    "                       [--partition uniform|3,5,4,4] [--trace out.json]\n"
    "                       [--trace-csv out.csv] [--format table|csv|json] [--out F]\n"
    "                       [--replicas R]\n\n"
    "Simulates one training step of the model (profile CSV or generator spec such as\n"
    "mlp:layers=16,width=1024) split into K stages on the topology's first K devices,\n"
    "with M micro-batches of batch/M samples. Prints step time, throughput, speedup\n"
    "over a single device (K=1, M=1, no re-materialization), the simulated bubble\n"
    "beside the analytic (K-1)/(M+K-1), busy fraction and peak memory per stage.\n"
    "--trace writes a Chrome Trace Event JSON for https://ui.perfetto.dev.\n"
    "--replicas R: R data-parallel copies of the pipeline (replica r's stage s on\n"
    "device r*K+s) with a ring all-reduce of each stage's gradients before its\n"
    "update; --batch is per replica.\n"
    "Defaults: --remat except_last, --partition uniform, --format table.\n";

int cmd_predict(int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_RUN_OPTIONS, CLI_RUN_SCHEDULE, CLI_RUN_PARTITION, CLI_RUN_REPLICAS,
        { "trace", required_argument, 0, 'T' }, { "trace-csv", required_argument, 0, 'C' },
        { "format", required_argument, 0, 'f' }, { "out", required_argument, 0, 'o' },
        { 0, 0, 0, 0 },
    };
    const char *trace = NULL, *trace_csv = NULL, *format = "table", *out_path = "-";
    struct ana_config cfg = { 0 };
    struct cli_run run;
    int c, rc = 0;
    cli_run_init(&run);
    cli_getopt_reset();
    while ((c = cli_getopt("predict", argc, argv, CLI_RUN_SHORT, opts)) != -1) {
        if (cli_run_option(&run, c, optarg, &rc)) {
            if (rc < 0)
                return rc;
            continue;
        }
        switch (c) {
        case 'h': cli_help(help); return 0;
        case 'T': trace = optarg; break;
        case 'C': trace_csv = optarg; break;
        case 'f': format = optarg; break;
        case 'o': out_path = optarg; break;
        default: return -PS_EUSAGE; /* cli_getopt set the message */
        }
    }
    if ((rc = cli_run_check("predict", &run, argc, argv)) < 0 ||
        (rc = cli_check_format(format)) < 0 || (rc = ps_io_output(trace, "--trace")) < 0 ||
        (rc = ps_io_output(trace_csv, "--trace-csv")) < 0 ||
        (rc = ps_io_output(out_path, "--out")) < 0)
        return rc;
    struct ana_prediction *p = NULL;
    if ((rc = cli_run_open(&run, 1, &cfg)) < 0)
        goto out;
    cfg.record_trace = trace || trace_csv;
    if ((rc = ana_predict(&cfg, &p)) < 0)
        goto out;
    if (trace && (rc = trc_write_chrome(p->trace, trace)) < 0)
        goto out;
    if (trace_csv && (rc = trc_write_csv(p->trace, trace_csv)) < 0)
        goto out;
    struct ps_afile af;
    if ((rc = ps_afile_open(&af, out_path)) < 0)
        goto out;
    if ((rc = ana_prediction_print(p, format, af.f)) < 0) {
        ps_afile_abort(&af);
        goto out;
    }
    rc = ps_afile_commit(&af);
out:
    ana_prediction_free(p);
    cli_run_close(&run);
    return rc;
}
