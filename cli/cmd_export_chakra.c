/* pipesim export-chakra: a simulated schedule as Chakra execution traces. */
#include "analysis/ana_predict.h"
#include "cli/cli.h"
#include "models/mdl_gen.h"
#include "sim/sim_cost.h"
#include "sim/sim_error.h"
#include "sim/sim_util.h"
#include "traces/trc_chakra.h"

#include <stdio.h>
#include <string.h>

static const char help[] =
    "usage: pipesim export-chakra --model F --topology F -K k -M m --batch N --out-dir DIR\n"
    "                       [--remat always|except_last|never]\n"
    "                       [--schedule gpipe|1f1b|interleaved:v|zb-h1]\n"
    "                       [--partition uniform|3,5,4,4] [--replicas R] [--prefix P]\n\n"
    "Simulates one training step as `pipesim predict` does and writes it as Chakra\n"
    "execution traces (MLCommons Chakra protobuf, et_def.proto), one file per rank:\n"
    "DIR/P.<rank>.et (P defaults to pipesim; rank = replica * K + device). Each op of\n"
    "the rank's list is a node: compute nodes (F, B, R, W, U) with their simulated\n"
    "durations, send/receive nodes with bytes, peer ranks and a tag shared by each\n"
    "send and its receive, an all-reduce collective per stage with --replicas > 1.\n"
    "ctrl_deps chain each stream (compute, send, receive) in list order; data_deps\n"
    "are the op's same-rank dependencies. Files appear only when all are written.\n";

int cmd_export_chakra(int argc, char **argv)
{
    static const struct option opts[] = {
        { "model", required_argument, 0, 'm' },     { "topology", required_argument, 0, 't' },
        { "batch", required_argument, 0, 'b' },     { "remat", required_argument, 0, 'r' },
        { "partition", required_argument, 0, 'p' }, { "schedule", required_argument, 0, 's' },
        { "replicas", required_argument, 0, 'R' },  { "out-dir", required_argument, 0, 'o' },
        { "prefix", required_argument, 0, 'P' },    { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    const char *model = NULL, *topo_path = NULL, *part_spec = "uniform";
    struct ana_config cfg = { .schedule = "gpipe", .remat = SIM_REMAT_EXCEPT_LAST,
                              .record_trace = 1, .no_baseline = 1 };
    struct trc_chakra_opts co = { .prefix = "pipesim" };
    long K = 0, M = 0, replicas = 1;
    double batch = 0;
    int c, rc = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("export-chakra", argc, argv, "hK:M:", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); return 0;
        case 'm': model = optarg; break;
        case 't': topo_path = optarg; break;
        case 'K': rc = sim_parse_long(optarg, "-K", 1, 1 << 20, &K); break;
        case 'M': rc = sim_parse_long(optarg, "-M", 1, 1 << 24, &M); break;
        case 'b': rc = sim_parse_double(optarg, "--batch", &batch); break;
        case 'r': rc = sim_remat_parse(optarg, &cfg.remat); break;
        case 'p': part_spec = optarg; break;
        case 's': cfg.schedule = optarg; break;
        case 'R': rc = sim_parse_long(optarg, "--replicas", 1, 1 << 16, &replicas); break;
        case 'o': co.dir = optarg; break;
        case 'P':
            co.prefix = optarg;
            if (!*optarg || strchr(optarg, '/'))
                return sim_error(SIM_EUSAGE, "--prefix: '%s' must be a non-empty file name "
                                 "without '/'", optarg);
            break;
        default: return -SIM_EUSAGE;
        }
        if (rc < 0)
            return rc;
    }
    if (optind < argc)
        return sim_error(SIM_EUSAGE, "export-chakra: unexpected argument '%s'", argv[optind]);
    if (!model || !topo_path || !K || !M || batch == 0 || !co.dir)
        return sim_error(SIM_EUSAGE, "export-chakra: --model, --topology, -K, -M, --batch and "
                         "--out-dir are required (see pipesim export-chakra --help)");
    struct mdl_profile *prof = NULL;
    struct mdl_topology *topo = NULL;
    struct sim_partition *part = NULL;
    struct sim_schedule *sched = NULL;
    struct sim_costs *costs = NULL;
    struct ana_prediction *p = NULL;
    if ((rc = mdl_model_open(model, &prof)) < 0 ||
        (rc = mdl_topology_load(topo_path, &topo)) < 0 ||
        (rc = sim_schedule_build(cfg.schedule, (int)K, (int)M, cfg.remat, &sched)) < 0 ||
        (rc = sim_partition_parse(part_spec, sched->n_stages, prof->n_layers, &part)) < 0)
        goto out;
    cfg.profile = prof;
    cfg.topo = topo;
    cfg.K = (int)K;
    cfg.M = (int)M;
    cfg.batch = batch;
    cfg.partition = part;
    cfg.replicas = (int)replicas;
    if ((rc = ana_predict(&cfg, &p)) < 0)
        goto out;
    /* the op lists and byte counts the prediction simulated, rebuilt alike */
    if ((rc = sim_schedule_add_allreduce(sched, (int)replicas)) < 0 ||
        (rc = sim_costs_new(prof, topo, part, sched->stage_device, batch / (double)M,
                            &costs)) < 0)
        goto out;
    const struct trc_trace *t = sim_engine_trace(p->engine);
    if ((int64_t)t->n_events != sim_schedule_total_ops(sched)) {
        rc = sim_error(SIM_EINVAL, "simulated trace has %zu events for %lld ops", t->n_events,
                       (long long)sim_schedule_total_ops(sched));
        goto out;
    }
    co.batch = batch;
    int n = 0;
    if ((rc = trc_chakra_write(sched, costs, t, &co, &n)) < 0)
        goto out;
    fprintf(stderr, "export-chakra: %d ranks (%ld replica(s) x %d devices), %lld nodes, "
            "step %.6f ms simulated -> %s/%s.<rank>.et\n", n, replicas, sched->n_devices,
            (long long)(sim_schedule_total_ops(sched) * replicas), p->step_s * 1e3, co.dir,
            co.prefix);
out:
    sim_costs_free(costs);
    ana_prediction_free(p);
    sim_schedule_free(sched);
    sim_partition_free(part);
    mdl_topology_free(topo);
    mdl_profile_free(prof);
    return rc;
}
