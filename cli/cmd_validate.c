/* pipesim validate: real pipelined training steps on pinned CPU cores. */
#include "cli/cli.h"
#include "cli/cli_calib.h"
#include "runtime/rt_mpi.h"
#include "runtime/rt_pipe.h"
#include "measure/msr_validate.h"
#include "measure/msr_calib.h"
#include "sched/sch_cost.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_strbuf.h"
#include "base/ps_util.h"
#include "traces/trc_trace.h"
#include "analysis/ana_format.h"
#include "analysis/ana_mpi.h"
#include "base/ps_json.h"

#include <jansson.h>

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static const char help[] =
    "usage: pipesim validate --net SPEC -K k -M m --batch N [--remat MODE] [--steps S]\n"
    "                        [--schedule gpipe|1f1b|eager-1f1b|interleaved:v|breadth-first:v|\n"
    "                        zb-h1|zb-h2|zb-v|zb-auto[:L]|dualpipe-v]\n"
    "                        [--partition uniform|3,5] [--lr LR]\n"
    "                        [--seed N] [--trace out.json] [--trace-csv out.csv]\n"
    "                        [--emit-profile out.csv] [--no-pin]\n"
    "                        [--backend thread|mpi] [--grads-out F]\n"
    "                        [--realtime] [--format table|csv|json]\n\n"
    "Trains the network for S steps (default 3) as a real pipeline: one worker thread\n"
    "per device pinned to its own core, each replaying the same op list the\n"
    "simulator replays (FP32 forward/backward/recompute, OpenBLAS single-threaded per\n"
    "worker, SGD), on a fixed synthetic regression batch of N samples in M\n"
    "micro-batches. Prints per step the loss and time; for the last step the\n"
    "samples/s, the measured bubble beside the analytic (K-1)/(M+K-1), and per device\n"
    "the busy/communication/wait fractions and the measured peak activation bytes\n"
    "beside the count the schedule's memory ledger gives (they must match exactly).\n"
    "--trace writes the last step as Chrome Trace Event JSON (source \"measured\", the\n"
    "simulator's format: open both in https://ui.perfetto.dev).\n"
    "--format csv|json prints only the last step's per-device table (csv, one row\n"
    "per device) or the last step with its devices (json) on stdout, for tools;\n"
    "notes go to stderr. Default table.\n"
    "--realtime: the workers run under SCHED_FIFO (root or CAP_SYS_NICE; a warning if\n"
    "refused), as validate --check --realtime measures, so other jobs stop preempting\n"
    "the steps; --backend thread only (start mpirun's ranks under chrt -f 1).\n"
    "--emit-profile writes the net's per-layer profile CSV for pipesim predict; with\n"
    "only --net it writes the profile and exits.\n"
    "--backend mpi: one device per MPI rank with real MPI messages, started as\n"
    "`mpirun -np K pipesim validate --backend mpi ...` (runtime/rt_mpi.h); rank 0\n"
    "prints and writes the files (same trace format, clocks aligned to rank 0); it\n"
    "prints the table only (--format csv|json are the thread backend's).\n"
    "--grads-out F writes the gradients of the last step (either backend) so two\n"
    "runs compare byte for byte.\n\n"
    "SPEC: mlp:layers=L,width=W[,in=I][,out=O][,norm=N|everyN]  (ReLU dense layers, a\n"
    "      linear head, a layer norm after every N-th dense layer), or file:PATH with\n"
    "      lines 'input W', 'dense W [relu|linear]', 'norm'.\n"
    "Defaults: --remat except_last, --schedule gpipe, --partition uniform, --lr 0.05,\n"
    "--seed 1, --steps 3. More workers than cores runs with a warning (timings\n"
    "oversubscribed).\n\n"
    "pipesim validate --check --net SPEC ...: calibrate, then predict, run and compare a\n"
    "grid of K, M and remat modes; results in results/validation.db and a report\n"
    "(see pipesim validate --check --help).\n";

/* Device d's stages, whole, into b (64 bytes cut interleaved:32's list short
 * with no mark: helper-122); "" when out of memory (ps_strbuf_str). */
static void stage_list(const rt_pipe *p, int d, struct ps_strbuf *b)
{
    sch_device_stages(rt_pipe_schedule(p), d, b);
}

/* The last step, what the three formats print. */
struct summary {
    const rt_pipe *p;
    const struct rt_step_stats *st;
    int K, M;
    enum ana_fmt fmt;
};

static int dev_layers(const rt_pipe *p, int d)
{
    const struct sch_schedule *s = rt_pipe_schedule(p);
    int layers = 0;
    for (int k = 0; k < s->n_stages; k++)
        if (s->stage_device[k] == d)
            layers += rt_pipe_stage(p, k)->n_layers;
    return layers;
}

static double step_T(const struct rt_step_stats *st)
{
    return st->step_ns > 0 ? (double)st->step_ns : 1;
}

static void summary_table(const void *obj, FILE *f)
{
    const struct summary *sm = obj;
    const struct rt_step_stats *st = sm->st;
    /* the stages column as wide as its longest list (interleaved:8's
     * "0,2,...,14" shifted every column after it: helper-142) */
    int sw = sch_device_stages_width(rt_pipe_schedule(sm->p), 7);
    char ts[32];
    ps_human_seconds((double)st->step_ns * 1e-9, ts, sizeof ts);
    fprintf(f, "\nlast step       %s, %.1f samples/s\n", ts, st->samples_per_s);
    fprintf(f, "bubble          %.2f%% measured (idle / step over devices), %.2f%% analytic "
            "(K-1)/(M+K-1)\n", st->bubble * 100, 100.0 * (sm->K - 1) / (sm->M + sm->K - 1));
    if (rt_pipe_oversubscribed(sm->p))
        fprintf(f, "note            more workers than cores: timings are oversubscribed\n");
    fprintf(f, "\n%6s %4s %*s %6s %6s %6s %6s %11s %11s %5s %11s %11s\n", "device", "cpu",
            sw, "stages", "layers", "busy%", "comm%", "wait%", "peak act", "schedule", "match",
            "params+grad", "workspace");
    for (int d = 0; d < st->n_devices; d++) {
        const struct rt_dev_stats *ds = &st->dev[d];
        struct ps_strbuf slb = PS_STRBUF_INIT;
        stage_list(sm->p, d, &slb);
        const char *sl = ps_strbuf_str(&slb);
        double T = step_T(st);
        char pa[32], ep[32], sb[32], wb[32];
        ps_human_bytes((double)ds->peak_act, pa, sizeof pa);
        ps_human_bytes((double)ds->expected_peak, ep, sizeof ep);
        ps_human_bytes((double)ds->static_bytes, sb, sizeof sb);
        ps_human_bytes((double)ds->workspace_bytes, wb, sizeof wb);
        char cpu[16] = "-"; /* unpinned: no CPU, '-' as every missing value */
        if (ds->cpu >= 0)
            snprintf(cpu, sizeof cpu, "%d", ds->cpu);
        fprintf(f, "%6d %4s %*s %6d %6.1f %6.1f %6.1f %11s %11s %5s %11s %11s\n", d, cpu, sw, sl,
                dev_layers(sm->p, d), 100 * ds->busy_ns / T, 100 * ds->comm_ns / T,
                100 * ds->wait_ns / T, pa, ep, ds->peak_act == ds->expected_peak ? "yes" : "NO",
                sb, wb);
        if (ds->extra_peak) {
            ps_human_bytes((double)ds->extra_peak, ep, sizeof ep);
            fprintf(f, "%6s split backward kept %s more from B to W (not in the ledger)\n", "",
                    ep);
        }
        ps_strbuf_release(&slb);
    }
}

static void summary_csv(const void *obj, FILE *f)
{
    const struct summary *sm = obj;
    const struct rt_step_stats *st = sm->st;
    /* the JSON's figures, exact: the step's on every row, then the device's
     * (busy, comm and wait as fractions of the step, as the JSON has them) */
    fprintf(f, "step_s,samples_per_s,bubble_measured,bubble_analytic,oversubscribed,device,"
            "cpu,stages,layers,busy,comm,wait,peak_act_bytes,schedule_bytes,match,"
            "static_bytes,workspace_bytes,extra_peak_bytes\n");
    for (int d = 0; d < st->n_devices; d++) {
        const struct rt_dev_stats *ds = &st->dev[d];
        struct ps_strbuf slb = PS_STRBUF_INIT;
        stage_list(sm->p, d, &slb);
        const char *sl = ps_strbuf_str(&slb);
        double T = step_T(st);
        fprintf(f, "%s,%s,%s,%s,%d,", PS_DBL(sch_time_to_seconds(st->step_ns)),
                PS_DBL(st->samples_per_s), PS_DBL(st->bubble),
                PS_DBL((double)(sm->K - 1) / (sm->M + sm->K - 1)),
                rt_pipe_oversubscribed(sm->p) ? 1 : 0);
        char cpu[16] = ""; /* unpinned: an empty field */
        if (ds->cpu >= 0)
            snprintf(cpu, sizeof cpu, "%d", ds->cpu);
        fprintf(f, "%d,%s,\"%s\",%d,%s,%s,%s,%lld,%lld,%d,%lld,%lld,%lld\n", d, cpu, sl,
                dev_layers(sm->p, d), PS_DBL(ds->busy_ns / T), PS_DBL(ds->comm_ns / T),
                PS_DBL(ds->wait_ns / T), (long long)ds->peak_act, (long long)ds->expected_peak,
                ds->peak_act == ds->expected_peak, (long long)ds->static_bytes,
                (long long)ds->workspace_bytes, (long long)ds->extra_peak);
        ps_strbuf_release(&slb);
    }
}

static int summary_json(const void *obj, FILE *f)
{
    const struct summary *sm = obj;
    const struct rt_step_stats *st = sm->st;
    ps_json_begin();
    json_t *devs = json_array();
    json_t *o = json_pack("{s:f, s:f, s:f, s:f, s:b}", "step_s", sch_time_to_seconds(st->step_ns),
                          "samples_per_s", st->samples_per_s, "bubble_measured", st->bubble,
                          "bubble_analytic", (double)(sm->K - 1) / (sm->M + sm->K - 1),
                          "oversubscribed", rt_pipe_oversubscribed(sm->p) ? 1 : 0);
    int bad = !o || !devs;
    for (int d = 0; !bad && d < st->n_devices; d++) {
        const struct rt_dev_stats *ds = &st->dev[d];
        struct ps_strbuf slb = PS_STRBUF_INIT;
        stage_list(sm->p, d, &slb);
        const char *sl = ps_strbuf_str(&slb);
        double T = step_T(st);
        bad |= json_array_append_new(devs, json_pack(
            "{s:i, s:o, s:s, s:i, s:f, s:f, s:f, s:I, s:I, s:b, s:I, s:I, s:I}", "device", d,
            "cpu", ds->cpu >= 0 ? json_integer(ds->cpu) : json_null(), "stages", sl, "layers", dev_layers(sm->p, d), "busy", ds->busy_ns / T,
            "comm", ds->comm_ns / T, "wait", ds->wait_ns / T, "peak_act_bytes",
            (json_int_t)ds->peak_act, "schedule_bytes", (json_int_t)ds->expected_peak, "match",
            ds->peak_act == ds->expected_peak, "static_bytes", (json_int_t)ds->static_bytes,
            "workspace_bytes", (json_int_t)ds->workspace_bytes, "extra_peak_bytes",
            (json_int_t)ds->extra_peak));
        bad |= ps_strbuf_error(&slb) < 0; /* out of memory: the list would be "" */
        ps_strbuf_release(&slb);
    }
    if (!bad)
        bad |= json_object_set(o, "devices", devs);
    json_decref(devs);
    return ps_json_print(o, f, bad);
}

/* The summary on stdout, the last of validate's set of outputs (cli_write_outputs:
 * held until the files are synced, a write error naming stdout and why). */
static int print_summary(const void *ctx, FILE *f)
{
    static const struct ana_printers pr = { summary_table, summary_csv, summary_json };
    const struct summary *sm = ctx;
    return ana_print_as(sm->fmt, &pr, sm, f);
}

/* The run's verdict: every device's measured peak is the ledger's. */
static int peaks_match(const struct rt_step_stats *st)
{
    for (int d = 0; d < st->n_devices; d++)
        if (st->dev[d].peak_act != st->dev[d].expected_peak)
            return ps_error(PS_ERUNTIME, "measured activation peak differs from the "
                            "schedule's ledger (a runtime bug)");
    return 0;
}

static int print_grads(const void *ctx, FILE *f) { return rt_grads_print(ctx, f); }

/* --backend mpi: rank 0's traces and gradients, gathered, as one set (each was
 * written on its own: a failing one left the others replaced) */
static int mpi_publish(const struct trc_trace *trace, const struct rt_net *net, void *ctx)
{
    const struct rt_mpi_args *a = ctx;
    const struct cli_output set[] = { { a->trace_path, cli_print_chrome, trace },
                                      { a->csv_path, cli_print_csv, trace },
                                      { a->grads_path, print_grads, net } };
    return cli_write_outputs(set, 3);
}

/* --emit-profile's printer, one of validate's set of outputs */
static int print_profile(const void *ctx, FILE *f)
{
    mdl_profile_print(f, ctx);
    return 0;
}

int cmd_validate(int argc, char **argv)
{
    static const struct option opts[] = {
        { "net", required_argument, 0, 'n' },        { "batch", required_argument, 0, 'b' },
        { "remat", required_argument, 0, 'r' },      { "steps", required_argument, 0, 'S' },
        { "schedule", required_argument, 0, 's' },   { "partition", required_argument, 0, 'p' },
        { "lr", required_argument, 0, 'l' },         { "seed", required_argument, 0, 'e' },
        { "trace", required_argument, 0, 'T' },      { "trace-csv", required_argument, 0, 'C' },
        { "emit-profile", required_argument, 0, 'P' }, { "no-pin", no_argument, 0, 'N' },
        { "backend", required_argument, 0, 'B' },    { "grads-out", required_argument, 0, 'G' },
        { "format", required_argument, 0, 'f' },     { "realtime", no_argument, 0, 'X' },
        { "help", no_argument, 0, 'h' },             { 0, 0, 0, 0 },
    };
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--check"))
            return cli_validate_check(argc, argv);
    struct rt_pipe_config cfg = { .schedule = "gpipe", .remat = SCH_REMAT_EXCEPT_LAST };
    const char *spec = NULL, *trace_path = NULL, *csv_path = NULL, *prof_path = NULL;
    const char *backend = "thread", *grads_path = NULL;
    long K = 0, M = 0, batch = 0, steps = 3, seed = 1;
    double lr = 0.05;
    enum ana_fmt fmt = ANA_FMT_TABLE;
    int c, rc = 0, realtime = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("validate", argc, argv, "hK:M:", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); return 0;
        case 'n': spec = optarg; break;
        case 'K': rc = ps_parse_long(optarg, "-K", 1, 4096, &K); break;
        case 'M': rc = ps_parse_long(optarg, "-M", 1, 1 << 16, &M); break;
        case 'b': rc = ps_parse_count(optarg, "--batch", 1, 1 << 24, &batch); break;
        case 'r': rc = sch_remat_parse(optarg, &cfg.remat); break;
        case 'S': rc = ps_parse_long(optarg, "--steps", 1, 1 << 20, &steps); break;
        case 's': cfg.schedule = optarg; break;
        case 'p': cfg.partition = optarg; break;
        case 'l':
            rc = ps_parse_double(optarg, "--lr", &lr);
            if (!rc && !(lr >= 0))
                rc = ps_error(PS_EUSAGE, "--lr must be >= 0, got %s", optarg);
            /* it runs as a float: 1e40 was inf there (the MPI backend printed "lr inf"),
             * 1e-50 a silent 0 (helper-111) */
            else if (!rc && (lr > FLT_MAX || (lr > 0 && lr < FLT_MIN)))
                rc = ps_error(PS_EUSAGE, "--lr %s is out of range: 0 or between %g and %g "
                              "(a float's)", optarg, (double)FLT_MIN, (double)FLT_MAX);
            break;
        case 'e': rc = ps_parse_long(optarg, "--seed", 0, 0x7fffffffL, &seed); break;
        case 'T': trace_path = optarg; break;
        case 'C': csv_path = optarg; break;
        case 'P': prof_path = optarg; break;
        case 'N': cfg.no_pin = 1; break;
        case 'B':
            backend = optarg;
            if (strcmp(backend, "thread") && strcmp(backend, "mpi"))
                rc = ps_error(PS_EUSAGE, "--backend: '%s' is not thread or mpi", optarg);
            break;
        case 'G': grads_path = optarg; break;
        case 'X': realtime = 1; break;
        case 'f': rc = ana_fmt_parse(optarg, ANA_FMTS_ALL, "--format", &fmt); break;
        default: return -PS_EUSAGE; /* cli_getopt set the message */
        }
        if (rc < 0)
            return rc;
    }
    if (optind < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    if (!spec)
        return ps_error(PS_EUSAGE, "--net is required (see pipesim validate --help)");
    int run = K || M || batch;
    if (run && (!K || !M || !batch))
        return ps_error(PS_EUSAGE, "-K, -M and --batch are required to run "
                         "(see pipesim validate --help)");
    if (!run && !prof_path)
        return ps_error(PS_EUSAGE, "-K, -M and --batch are required (or only "
                         "--emit-profile)");
    if (!run && (trace_path || csv_path || grads_path)) /* they were ignored (helper-122) */
        return ps_error(PS_EUSAGE, "--%s records a run: give -K, -M and --batch",
                        trace_path ? "trace" : csv_path ? "trace-csv" : "grads-out");
    if (run && batch % M) /* a usage error, as predict's (helper-66: it was exit 4) */
        return ps_error(PS_EUSAGE, "--batch %ld is not divisible by -M %ld (micro-batches "
                        "must be equal)", batch, M);
    /* under mpirun rank 0 alone writes the trace and gradient files: the
     * others do not check them (helper-121: from their own folders, they
     * failed the run) */
    int mpi = !strcmp(backend, "mpi"), w = !mpi || ana_mpi_writer();
    if (mpi && realtime) /* it was ignored (helper-121) */
        return ps_error(PS_EUSAGE, "--realtime: with --backend thread (under mpirun, start "
                        "the ranks under chrt -f 1 instead)");
    const char *wtrace = w ? trace_path : NULL, *wcsv = w ? csv_path : NULL,
               *wgrads = w ? grads_path : NULL; /* the files this process checks */
    if ((rc = cli_io_net(spec)) < 0 || (rc = ps_io_output(wtrace, "--trace")) < 0 ||
        (rc = ps_io_output(wcsv, "--trace-csv")) < 0 ||
        (rc = ps_io_output(prof_path, "--emit-profile")) < 0 ||
        (rc = ps_io_output(wgrads, "--grads-out")) < 0 ||
        /* before training, not after it */
        (rc = ps_output_writable(wtrace, "--trace", 0)) < 0 ||
        (rc = ps_output_writable(wcsv, "--trace-csv", 0)) < 0 ||
        (rc = ps_output_writable(prof_path, "--emit-profile", 0)) < 0 ||
        (rc = ps_output_writable(wgrads, "--grads-out", 0)) < 0)
        return mpi ? ana_mpi_refuse(rc, "validate") : rc; /* rank 0's alone: all stop */
    if (mpi) {
        if (fmt != ANA_FMT_TABLE)
            return ps_error(PS_EUSAGE, "--format csv|json: with --backend thread (rank 0 of "
                            "--backend mpi prints the table)");
        if (!run || prof_path)
            return ps_error(PS_EUSAGE, "--backend mpi runs steps: give -K, -M and --batch "
                             "(and no --emit-profile)");
        cfg.K = (int)K;
        cfg.M = (int)M;
        cfg.batch = (int)batch;
        cfg.lr = (float)lr;
        struct rt_mpi_args ma = { .spec = spec, .cfg = cfg, .steps = steps,
                                  .seed = (unsigned long)seed, .trace_path = trace_path,
                                  .csv_path = csv_path, .grads_path = grads_path,
                                  .publish = mpi_publish, .publish_ctx = &ma };
        return rt_mpi_validate(&ma);
    }
    struct rt_net *net = NULL;
    struct rt_data *data = NULL;
    rt_pipe *p = NULL;
    struct trc_trace *trace = NULL;
    struct mdl_profile *prof = NULL;
    if ((rc = rt_net_parse(spec, &net)) < 0 ||
        (prof_path && (rc = rt_net_profile(net, &prof)) < 0))
        goto out;
    if (!run) { /* the profile alone */
        rc = cli_write_outputs((const struct cli_output[]){ { prof_path, print_profile, prof } },
                               1);
        goto out;
    }
    cfg.K = (int)K;
    cfg.M = (int)M;
    cfg.batch = (int)batch;
    cfg.lr = (float)lr;
    cli_realtime(realtime); /* before the workers start: they inherit it */
    /* the pipeline first: it checks the whole run's memory before the
     * parameters are written */
    if ((rc = rt_pipe_new(net, &cfg, &p)) < 0 || (rc = rt_net_init_params(net, (uint64_t)seed)) < 0 ||
        (rc = rt_data_new(net, (int)batch, (uint64_t)seed, &data)) < 0)
        goto out;
    FILE *hum = fmt == ANA_FMT_TABLE ? stdout : stderr; /* the prose around the table */
    char part[256];
    rt_pipe_partition(p, part, sizeof part);
    const struct sch_schedule *s = rt_pipe_schedule(p);
    char np[32];
    ps_human_count((double)rt_net_params(net), np, sizeof np);
    fprintf(hum, "net             %s (%d layer%s, %s parameter%s)\n", net->spec, net->n_layers,
            net->n_layers == 1 ? "" : "s", np, rt_net_params(net) == 1 ? "" : "s");
    fprintf(hum, "schedule        %s, K=%d, stages %d, M=%d, batch %ld (micro-batch %ld), remat %s\n",
           s->name, s->n_devices, s->n_stages, s->n_micro, batch, batch / M,
           sch_remat_name(s->remat));
    fprintf(hum, "partition       %s (layers per stage)\n", part);
    fprintf(hum, "data            synthetic regression, seed %ld, lr %g\n", seed, lr);
    fprintf(hum, "kernels         OpenBLAS %s, single-threaded per worker, FP32\n", rt_blas_corename());
    fprintf(hum, "\n%5s %14s %12s\n", "step", "loss", "time");
    struct rt_step_stats st;
    struct rusage ru0, ru1; /* how busy the machine was: */
    int64_t runq = 0, worker_ns = 0;
    int runq_known = 1;
    getrusage(RUSAGE_SELF, &ru0);
    for (long i = 0; i < steps; i++) {
        if ((rc = rt_pipe_step(p, data, &st, i + 1 == steps && (trace_path || csv_path)
                                                 ? &trace : NULL)) < 0)
            goto out;
        char ts[32];
        ps_human_seconds((double)st.step_ns * 1e-9, ts, sizeof ts);
        fprintf(hum, "%5ld %14.8f %12s\n", i + 1, st.loss, ts);
        for (int d = 0; d < st.n_devices; d++) {
            runq_known &= st.dev[d].runq_ns >= 0;
            runq += st.dev[d].runq_ns;
            worker_ns += st.step_ns;
        }
        if ((rc = rt_check_diverged(net, i + 1, st.loss, lr)) < 0) {
            fflush(stdout);
            goto out;
        }
    }
    getrusage(RUSAGE_SELF, &ru1);
    /* the traces, the gradients and the summary on stdout one set: all
     * written or none replaced, stdout last (the files were written after a
     * failed "write error" on a full stdout) */
    const struct summary sm = { p, &st, s->n_devices, s->n_micro, fmt };
    /* the profile too: one written before the run outlived a failed or
     * interrupted one (helper-122) */
    const struct cli_output set[] = { { trace_path, cli_print_chrome, trace },
                                      { csv_path, cli_print_csv, trace },
                                      { grads_path, print_grads, net },
                                      { prof_path, print_profile, prof },
                                      { "-", print_summary, &sm } };
    if ((rc = cli_write_outputs(set, 5)) < 0)
        goto out;
    long csw = ru1.ru_nivcsw - ru0.ru_nivcsw;
    if (runq_known && worker_ns > 0 && (double)runq / (double)worker_ns > MSR_BUSY_RUNQ)
        fprintf(hum, "note            the machine was busy: the workers waited %.0f%% of their time "
               "for a CPU\n                (%ld involuntary context switches): measured times "
               "include that wait;\n                accuracy figures come from validate "
               "--check --realtime on a quiet machine\n",
               100.0 * (double)runq / (double)worker_ns, csw);
    else if (runq_known)
        fprintf(hum, "cores           the workers waited %.1f%% of their time for a CPU (%ld "
               "involuntary context switches)\n", 100.0 * (double)runq / (double)worker_ns,
               csw);
    rc = peaks_match(&st);
out:
    if (realtime)
        msr_realtime(0);
    mdl_profile_free(prof);
    trc_trace_free(trace);
    rt_pipe_free(p);
    rt_data_free(data);
    rt_net_free(net);
    return rc;
}
