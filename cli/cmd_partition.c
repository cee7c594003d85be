/* pipesim partition: optimal and alternative stage partitions, ranked by
 * simulated step time. */
#include "analysis/ana_rank.h"
#include "cli/cli_run.h"
#include "models/mdl_gen.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"
#include "sched/sch_partitioner.h"
#include "base/ps_util.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: pipesim partition --model F --topology F -K k -M m --batch N\n"
    "                         [--strategy all|optimal,uniform,gpipe,balance-by-size,lingvo]\n"
    "                         [--top N] [--mem-cap none|device|BYTES] [--remat MODE]\n"
    "                         [--schedule gpipe|1f1b|eager-1f1b|interleaved:v|breadth-first:v|\n"
    "                        zb-h1|zb-h2|zb-v|zb-auto[:L]|dualpipe-v]\n"
    "                         [--format table|csv|json] [--out F]\n\n"
    "Cuts the model's layers into K contiguous stages (one per device) and ranks the\n"
    "candidates by simulated step time:\n"
    "  optimal          least bottleneck stage time per step (M x (fwd + bwd) +\n"
    "                   recomputes + optimizer update + the transfers of both of its\n"
    "                   boundaries), exact, under the memory cap if one is given\n"
    "  uniform          equal layer counts\n"
    "  gpipe            the GPipe paper's heuristic: least variance of stage compute\n"
    "  balance-by-size  least largest stage memory (or overflow, with a cap)\n"
    "  lingvo           GPipe's library (Lingvo's PartitionSequentialLayers): equal\n"
    "                   shares of the layers' forward FLOPs, ignoring memory\n"
    "With optimal, its neighbours (each cut moved by one layer) are simulated too,\n"
    "since the bound ignores bubbles and link contention. Per stage: cost, the\n"
    "closed-form memory estimate the search uses, the simulated peak and the\n"
    "capacity. --mem-cap device uses each device's memory, BYTES (16e9, 16G, 12GiB)\n"
    "one cap for all; an infeasible cap names the stage that cannot fit and by how\n"
    "much. A candidate with a stage beyond the engine's range (its time or bytes)\n"
    "is left out with a warning on stderr; the others are ranked.\n"
    "Defaults: --strategy all, --top 5, --mem-cap device, --remat except_last.\n";

static int parse_bytes(const char *s, double *out)
{
    int rc = ps_parse_bytes(s, "--mem-cap", out);
    if (rc < 0 && strstr(ps_errmsg(), "is not a positive byte count")) {
        static const char *const words[] = { "none", "device" };
        struct ps_suggest sg;
        return ps_error(PS_EUSAGE, "--mem-cap: '%s' is not a positive byte count (or none, "
                         "device)%s", s, ps_suggest_among(&sg, s, words, 2));
    }
    return rc;
}

static int parse_strategies(const char *s, enum sch_part_strategy *v, int *n)
{
    *n = 0;
    if (!strcmp(s, "all")) {
        for (int i = 0; i < SCH_PART_NSTRATEGIES; i++)
            v[(*n)++] = (enum sch_part_strategy)i;
        return 0;
    }
    size_t len = strlen(s);
    if (len && (s[0] == ',' || s[len - 1] == ',' || strstr(s, ",,")))
        return ps_error(PS_EUSAGE, "--strategy: '%s': an empty name in the list", s);
    char buf[256];
    if ((size_t)snprintf(buf, sizeof buf, "%s", s) >= sizeof buf)
        return ps_error(PS_EUSAGE, "--strategy: list too long");
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        enum sch_part_strategy st;
        int rc = sch_part_strategy_parse(tok, &st);
        if (rc < 0)
            return rc;
        for (int i = 0; i < *n; i++)
            if (v[i] == st)
                return ps_error(PS_EUSAGE, "--strategy: '%s' given twice", tok);
        v[(*n)++] = st;
    }
    if (!*n)
        return ps_error(PS_EUSAGE, "--strategy: empty list");
    return 0;
}

struct partition_opts {
    const char *out_path;
    enum ana_fmt format;
    struct sch_part_opts po;
    enum sch_part_strategy strat[SCH_PART_NSTRATEGIES];
    int nstrat;
    long top;
    /* what is printed */
    const struct cli_run *run;
    const struct sch_schedule *sched;
    const struct ana_rank *rank;
};

static int partition_option(void *ctx, int c, const char *arg)
{
    struct partition_opts *o = ctx;
    switch (c) {
    case 'S': return parse_strategies(arg, o->strat, &o->nstrat);
    case 'n': return ps_parse_long(arg, "--top", 1, 1 << 20, &o->top);
    case 'c':
        if (!strcmp(arg, "none"))
            o->po.cap_mode = 0;
        else if (!strcmp(arg, "device"))
            o->po.cap_mode = 1;
        else {
            int rc = parse_bytes(arg, &o->po.cap);
            if (rc < 0)
                return rc;
            o->po.cap_mode = 2;
        }
        return 0;
    case 'f': return ana_fmt_parse(arg, ANA_FMTS_ALL, "--format", &o->format);
    case 'o': o->out_path = arg; return 0;
    default: return -PS_EUSAGE;
    }
}

static int print_partition(const void *ctx, FILE *f)
{
    const struct partition_opts *o = ctx;
    const struct sch_part_opts *po = &o->po;
    const struct cli_run *run = o->run;
    if (o->format == ANA_FMT_TABLE) {
        char capbuf[64], base[32];
        ps_human_seconds(o->rank->baseline_step_s, base, sizeof base);
        if (po->cap_mode == 2)
            snprintf(capbuf, sizeof capbuf, "%.4g GiB per device", po->cap / PS_GIB);
        fprintf(f, "model %s (%d layer%s), topology %s, %s, K=%ld (%d stages), M=%ld, batch "
                "%.0f (micro-batch %.0f), remat %s, memory cap %s\n"
                "%d candidates simulated; speedup over one device, M=1, no remat (%s)\n",
                run->prof->path, run->prof->n_layers,
                run->prof->n_layers == 1 ? "" : "s", run->topo->path, o->sched->name, run->K,
                o->sched->n_stages, run->M, run->batch, po->micro_batch,
                sch_remat_name(run->remat),
                po->cap_mode == 0 ? "none" : po->cap_mode == 1 ? "device memory" : capbuf,
                o->rank->n, o->rank->baseline_skipped[0] ? "not simulated" : base);
        if (o->rank->baseline_skipped[0])
            fprintf(f, "(the whole model on one device is out of range: %s)\n",
                    o->rank->baseline_skipped);
        fputc('\n', f);
        if (!o->rank->baseline_skipped[0] && !o->rank->baseline_fits) {
            ps_human_bytes(o->rank->baseline_peak, base, sizeof base);
            fprintf(f, "(the one-device baseline needs %s, more than one device holds: "
                    "simulated as if it fit)\n\n", base);
        }
    }
    return ana_rank_print(o->rank, o->format, (int)o->top, f);
}

int cmd_partition(int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_RUN_OPTIONS, CLI_RUN_SCHEDULE,
        { "strategy", required_argument, 0, 'S' }, { "top", required_argument, 0, 'n' },
        { "mem-cap", required_argument, 0, 'c' },  { "format", required_argument, 0, 'f' },
        { "out", required_argument, 0, 'o' },      { 0, 0, 0, 0 },
    };
    struct partition_opts o = { .format = ANA_FMT_TABLE, .out_path = "-", .top = 5,
                                .po.cap_mode = 1 /* device memory */ };
    struct sch_part_opts *po = &o.po;
    struct ana_config cfg = { 0 };
    struct cli_run run;
    int rc;
    cli_run_init(&run);
    parse_strategies("all", o.strat, &o.nstrat);
    if ((rc = cli_run_parse(&run, "partition", help, argc, argv, opts, partition_option,
                            &o)) != 0)
        return rc > 0 ? 0 : rc;
    if ((rc = cli_run_check("partition", &run, argc, argv)) < 0 ||
        (rc = ps_io_output(o.out_path, "--out")) < 0)
        return rc;
    struct sch_schedule *sched = NULL;
    sch_part_model *pm = NULL;
    struct ana_rank *rank = NULL;
    if ((rc = cli_run_open(&run, 0, &cfg)) < 0)
        goto out;
    struct mdl_profile *prof = run.prof;
    struct mdl_topology *topo = run.topo;
    long K = run.K, M = run.M;
    double batch = run.batch;
    /* the checks ana_predict makes, in its words, before the partitioner's own */
    if ((rc = ana_config_check(&cfg)) < 0)
        goto out;
    /* the partitioner needs the stages' devices */
    if ((rc = sch_schedule_build(cfg.schedule, (int)K, (int)M, cfg.remat, &sched)) < 0)
        goto out;
    po->n_stages = sched->n_stages;
    po->stage_device = sched->stage_device;
    po->n_micro = (int)M;
    po->micro_batch = batch / (double)M;
    po->remat = cfg.remat;
    po->sched = sched; /* its op order sets each stage's memory */
    if ((rc = sch_part_model_new(prof, topo, po, &pm)) < 0)
        goto out;
    if ((rc = ana_rank_new(&cfg, pm, o.strat, o.nstrat, 1, &rank)) < 0)
        goto out;
    if (rank->n_dropped)
        fprintf(stderr, "pipesim partition: warning: %d candidate%s beyond the engine's range "
                "left out; the first, %s\n", rank->n_dropped, rank->n_dropped > 1 ? "s" : "",
                rank->dropped);
    o.run = &run;
    o.sched = sched;
    o.rank = rank;
    rc = cli_write_output(o.out_path, print_partition, &o);
out:
    ana_rank_free(rank);
    sch_part_model_free(pm);
    sch_schedule_free(sched);
    cli_run_close(&run);
    return rc;
}
