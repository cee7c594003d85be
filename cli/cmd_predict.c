/* pipesim predict: one simulated training step. */
#include "analysis/ana_predict.h"
#include "cli/cli.h"
#include "models/mdl_gen.h"
#include "sim/sim_error.h"
#include "sim/sim_util.h"

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
        { "model", required_argument, 0, 'm' },     { "topology", required_argument, 0, 't' },
        { "batch", required_argument, 0, 'b' },     { "remat", required_argument, 0, 'r' },
        { "partition", required_argument, 0, 'p' }, { "trace", required_argument, 0, 'T' },
        { "trace-csv", required_argument, 0, 'C' }, { "format", required_argument, 0, 'f' },
        { "schedule", required_argument, 0, 's' },  { "out", required_argument, 0, 'o' },
        { "replicas", required_argument, 0, 'R' },
        { "help", no_argument, 0, 'h' },            { 0, 0, 0, 0 },
    };
    const char *model = NULL, *topo_path = NULL, *part_spec = "uniform", *trace = NULL;
    const char *trace_csv = NULL, *format = "table", *out_path = "-";
    struct ana_config cfg = { .schedule = "gpipe", .remat = SIM_REMAT_EXCEPT_LAST };
    long K = 0, M = 0, replicas = 1;
    double batch = 0;
    int c, rc = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("predict", argc, argv, "hK:M:", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); return 0;
        case 'm': model = optarg; break;
        case 't': topo_path = optarg; break;
        case 'K': rc = sim_parse_long(optarg, "-K", 1, 1 << 20, &K); break;
        case 'M': rc = sim_parse_long(optarg, "-M", 1, 1 << 24, &M); break;
        case 'b': rc = sim_parse_double(optarg, "--batch", &batch); break;
        case 'r': rc = sim_remat_parse(optarg, &cfg.remat); break;
        case 'p': part_spec = optarg; break;
        case 'T': trace = optarg; break;
        case 'C': trace_csv = optarg; break;
        case 'f': format = optarg; break;
        case 's': cfg.schedule = optarg; break;
        case 'o': out_path = optarg; break;
        case 'R': rc = sim_parse_long(optarg, "--replicas", 1, 1 << 16, &replicas); break;
        default: return -SIM_EUSAGE; /* cli_getopt set the message */
        }
        if (rc < 0)
            return rc;
    }
    if (optind < argc)
        return sim_error(SIM_EUSAGE, "predict: unexpected argument '%s'", argv[optind]);
    if (!model || !topo_path || !K || !M || batch == 0)
        return sim_error(SIM_EUSAGE, "predict: --model, --topology, -K, -M and --batch are "
                         "required (see pipesim predict --help)");
    if (strcmp(format, "table") && strcmp(format, "csv") && strcmp(format, "json"))
        return sim_error(SIM_EUSAGE, "--format: unknown format '%s' (table, csv, json)", format);
    struct mdl_profile *prof = NULL;
    struct mdl_topology *topo = NULL;
    struct sim_partition *part = NULL;
    struct ana_prediction *p = NULL;
    if ((rc = mdl_model_open(model, &prof)) < 0)
        goto out;
    if ((rc = mdl_topology_load(topo_path, &topo)) < 0)
        goto out;
    struct sim_schedule *probe;
    if ((rc = sim_schedule_build(cfg.schedule, (int)K, (int)M, cfg.remat, &probe)) < 0)
        goto out;
    int S = probe->n_stages;
    sim_schedule_free(probe);
    if ((rc = sim_partition_parse(part_spec, S, prof->n_layers, &part)) < 0)
        goto out;
    cfg.profile = prof;
    cfg.topo = topo;
    cfg.K = (int)K;
    cfg.M = (int)M;
    cfg.batch = batch;
    cfg.partition = part;
    cfg.replicas = (int)replicas;
    cfg.record_trace = trace || trace_csv;
    if ((rc = ana_predict(&cfg, &p)) < 0)
        goto out;
    if (trace && (rc = trc_write_chrome(sim_engine_trace(p->engine), trace)) < 0)
        goto out;
    if (trace_csv && (rc = trc_write_csv(sim_engine_trace(p->engine), trace_csv)) < 0)
        goto out;
    struct sim_afile af;
    if ((rc = sim_afile_open(&af, out_path)) < 0)
        goto out;
    if ((rc = ana_prediction_print(p, format, af.f)) < 0) {
        sim_afile_abort(&af);
        goto out;
    }
    rc = sim_afile_commit(&af);
out:
    ana_prediction_free(p);
    sim_partition_free(part);
    mdl_topology_free(topo);
    mdl_profile_free(prof);
    return rc;
}
