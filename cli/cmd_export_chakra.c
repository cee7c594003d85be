/* pipesim export-chakra: a simulated schedule as Chakra execution traces. */
#include "analysis/ana_predict.h"
#include "cli/cli_run.h"
#include "models/mdl_gen.h"
#include "sched/sch_cost.h"
#include "base/ps_fs.h"
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "traces/trc_chakra.h"

#include <stdio.h>
#include <string.h>

static const char help[] =
    "usage: pipesim export-chakra --model F --topology F -K k -M m --batch N --out-dir DIR\n"
    "                       [--remat always|except_last|never]\n"
    "                       [--schedule gpipe|1f1b|eager-1f1b|interleaved:v|breadth-first:v|\n"
    "                        zb-h1|zb-h2|zb-v|zb-auto[:L]|dualpipe-v]\n"
    "                       [--partition uniform|optimal|gpipe|balance-by-size|lingvo|3,5,4,4]\n"
    "                       [--replicas R] [--prefix P]\n\n"
    "Simulates one training step as `pipesim predict` does and writes it as Chakra\n"
    "execution traces (MLCommons Chakra protobuf, et_def.proto), one file per rank:\n"
    "DIR/P.<rank>.et (P defaults to pipesim; rank = replica * K + device). Each op of\n"
    "the rank's list is a node: compute nodes (F, B, R, W, U) with their simulated\n"
    "durations, send/receive nodes with bytes, peer ranks and a tag shared by each\n"
    "send and its receive, an all-reduce collective per stage with --replicas > 1.\n"
    "ctrl_deps chain each stream (compute, send, receive) in list order; data_deps\n"
    "are the op's same-rank dependencies. Files appear only when all are written.\n";

static int chakra_option(void *ctx, int c, const char *arg)
{
    struct trc_chakra_opts *co = ctx;
    switch (c) {
    case 'o': co->dir = arg; break;
    case 'P':
        co->prefix = arg;
        if (!*arg)
            return ps_error(PS_EUSAGE, "--prefix: must not be empty (the files are "
                             "<prefix>.<rank>.et)");
        return ps_prefix_check(arg, "--prefix");
    default: return -PS_EUSAGE;
    }
    return 0;
}

int cmd_export_chakra(int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_RUN_OPTIONS, CLI_RUN_SCHEDULE, CLI_RUN_PARTITION, CLI_RUN_REPLICAS,
        { "out-dir", required_argument, 0, 'o' }, { "prefix", required_argument, 0, 'P' },
        { 0, 0, 0, 0 },
    };
    struct ana_config cfg = { .record_trace = 1, .no_baseline = 1 };
    struct trc_chakra_opts co = { .prefix = "pipesim" };
    struct cli_run run;
    int rc;
    cli_run_init(&run);
    if ((rc = cli_run_parse(&run, "export-chakra", help, argc, argv, opts, chakra_option,
                            &co)) != 0)
        return rc > 0 ? 0 : rc;
    if ((rc = cli_run_check("export-chakra", &run, argc, argv)) < 0)
        return rc;
    if (!co.dir)
        return ps_error(PS_EUSAGE, "--out-dir is required (see pipesim "
                         "export-chakra --help)");
    if ((rc = ps_outdir_check(co.dir, "--out-dir")) < 0)
        return rc;
    struct ana_prediction *p = NULL;
    if ((rc = cli_run_open(&run, 1, &cfg)) < 0)
        goto out;
    long replicas = run.replicas;
    double batch = run.batch;
    /* where the ranks go, refused before the simulation (it took seconds first) */
    long ranks = run.K * (replicas > 1 ? replicas : 1);
    if ((rc = trc_chakra_check(&co, ranks > 1 << 20 ? 1 << 20 : (int)ranks, replicas > 1)) < 0 ||
        (rc = ana_predict(&cfg, &p)) < 0)
        goto out;
    /* the op lists, byte counts and trace the prediction simulated */
    const struct sch_schedule *sched = p->sched;
    const struct trc_trace *t = p->trace;
    if ((int64_t)t->n_events != sch_schedule_total_ops(sched)) {
        rc = ps_error(PS_EINVAL, "simulated trace has %zu events for %lld ops", t->n_events,
                       (long long)sch_schedule_total_ops(sched));
        goto out;
    }
    co.batch = batch;
    int n = 0, stale = 0;
    co.stale = &stale;
    if ((rc = trc_chakra_write(sched, p->costs, t, &co, &n)) < 0)
        goto out;
    char ts[32];
    ps_human_seconds(p->step_s, ts, sizeof ts);
    fprintf(stderr, "export-chakra: %d ranks (%ld replica(s) x %d devices), %lld nodes, "
            "step %s simulated -> ", n, replicas, sched->n_devices,
            (long long)(sch_schedule_total_ops(sched) * replicas), ts);
    ps_put_printable(stderr, co.dir, -1); /* one line, as its errors name it (helper-113) */
    fprintf(stderr, "/%s.<rank>.et\n", co.prefix);
    if (stale)
        fprintf(stderr, "export-chakra: removed %d file(s) an earlier export left under the "
                "same prefix (ranks %d and up, or its communicator groups)\n", stale, n);
out:
    ana_prediction_free(p);
    cli_run_close(&run);
    return rc;
}
