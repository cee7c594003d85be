/* pipesim compare-schedules: several schedules side by side. */
#include "analysis/ana_schedules.h"
#include "cli/cli_run.h"
#include "models/mdl_gen.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <string.h>

#define MAX_SCHEDULES 16
/* two halves, so the help can break the list where it fits 80 columns */
#define DEFAULT_LIST_A "gpipe,1f1b,eager-1f1b,interleaved:2,breadth-first:2,zb-h1,zb-h2,"
#define DEFAULT_LIST_B "zb-v,zb-auto,dualpipe-v"
#define DEFAULT_LIST DEFAULT_LIST_A DEFAULT_LIST_B

static const char help[] =
    "usage: pipesim compare-schedules --model F --topology F -K k -M m --batch N\n"
    "                 [--remat always|except_last|never]\n"
    "                 [--schedules gpipe,1f1b,interleaved:2,zb-h1,...]\n"
    "                 [--format table|csv|json] [--out F] [--remat-per-schedule]\n\n"
    "Simulates one training step of the model on the topology's first K devices under\n"
    "each schedule and prints them side by side: step time, throughput, speedup over\n"
    "one device, the simulated bubble beside the schedule's uniform-stage formula,\n"
    "and peak activation and total memory (max and per device).\n"
    "Schedules: gpipe (fill-drain), 1f1b (PipeDream-flush), interleaved:v (Megatron,\n"
    "v model chunks per device, v*K stages, needs M % K == 0 and a link from device\n"
    "K-1 back to device 0), zb-h1 (zero-bubble: backward split into input and weight\n"
    "gradients, weight gradients deferred into the bubbles), zb-h2 (more warm-up\n"
    "forwards, twice 1F1B's memory, near-zero bubble), zb-v (two chunks per device\n"
    "in a V: device d holds stages d and 2K-1-d), zb-auto[:L] (greedy zero-bubble\n"
    "order within L stashes per device, default K), eager-1f1b (one more warm-up\n"
    "forward), breadth-first:v (looping: v chunks per device, each run for every\n"
    "micro-batch before the next), dualpipe-v (DeepSeek's DualPipeV: zb-v's V, one\n"
    "micro-batch's forward paired with another's backward, needs M >= 2K).\n"
    "Each schedule gets the uniform partition of its own stages. A schedule that\n"
    "cannot run here is listed with the reason; an unknown name is an error.\n"
    "Without --remat each schedule gets the re-materialization mode that suits it\n"
    "(--remat-per-schedule): the fastest of never, except_last and always whose every\n"
    "device fits, else the one with the least memory; the table says which. --remat\n"
    "MODE runs every schedule in that one mode.\n"
    "Defaults: each schedule its own remat, --format table,\n"
    "--schedules " DEFAULT_LIST_A "\n"
    "            " DEFAULT_LIST_B ".\n";

struct cmp_opts {
    const char *out_path, *list;
    int per_schedule;
    enum ana_fmt format;
    const struct ana_sched_cmp *cmp; /* what is printed */
};

static int cmp_option(void *ctx, int c, const char *arg)
{
    struct cmp_opts *o = ctx;
    switch (c) {
    case 'f': return ana_fmt_parse(arg, ANA_FMTS_ALL, "--format", &o->format);
    case 'S': o->list = arg; break;
    case 'o': o->out_path = arg; break;
    case 'A': o->per_schedule = 1; break;
    default: return -PS_EUSAGE; /* cli_getopt set the message */
    }
    return 0;
}

static int print_cmp(const void *ctx, FILE *f)
{
    const struct cmp_opts *o = ctx;
    return ana_sched_cmp_print(o->cmp, o->format, f);
}

int cmd_compare_schedules(int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_RUN_OPTIONS, { "format", required_argument, 0, 'f' },
        { "schedules", required_argument, 0, 'S' }, { "out", required_argument, 0, 'o' },
        { "remat-per-schedule", no_argument, 0, 'A' }, { 0, 0, 0, 0 },
    };
    struct cmp_opts o = { .format = ANA_FMT_TABLE, .out_path = "-",
                          .list = DEFAULT_LIST };
    struct ana_config cfg = { 0 };
    struct cli_run run;
    int rc;
    cli_run_init(&run);
    if ((rc = cli_run_parse(&run, "compare-schedules", help, argc, argv, opts, cmp_option,
                            &o)) != 0)
        return rc > 0 ? 0 : rc;
    if ((rc = cli_run_check("compare-schedules", &run, argc, argv)) < 0 ||
        (rc = ps_io_output(o.out_path, "--out")) < 0)
        return rc;
    char buf[1024];
    const char *names[MAX_SCHEDULES];
    int n;
    if (strlen(o.list) >= sizeof buf)
        return ps_error(PS_EUSAGE, "--schedules: list too long");
    snprintf(buf, sizeof buf, "%s", o.list);
    if ((rc = cli_schedule_list(buf, "--schedules", names, MAX_SCHEDULES, &n)) < 0)
        return rc;
    struct ana_sched_cmp *cmp = NULL;
    if ((rc = cli_run_open(&run, 0, &cfg)) < 0)
        goto out;
    if (o.per_schedule && run.remat_set) {
        rc = ps_error(PS_EUSAGE, "--remat-per-schedule picks each schedule's mode; give it "
                      "or --remat MODE, not both");
        goto out;
    }
    /* each schedule its own remat unless one was asked for */
    if ((rc = (o.per_schedule || !run.remat_set ? ana_schedules_compare_auto
                                                : ana_schedules_compare)(
             &cfg, names, n, &cmp)) < 0)
        goto out;
    char w[2048];
    if (ana_sched_cmp_short_ops(cmp, w, sizeof w))
        fprintf(stderr, "pipesim compare-schedules: warning: %s\n", w);
    o.cmp = cmp;
    rc = cli_write_output(o.out_path, print_cmp, &o);
out:
    ana_sched_cmp_free(cmp);
    cli_run_close(&run);
    return rc;
}
