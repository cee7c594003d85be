/* pipesim plot: gnuplot PNG + SVG figures of a sweep database and of a trace. */
#include "measure/msr_calib_plot.h"
#include "analysis/ana_compare.h"
#include "analysis/ana_plot.h"
#include "cli/cli.h"
#include "cli/cli_calib.h"
#include "traces/trc_trace.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_gnuplot.h"
#include "sched/sch_partitioner.h"
#include "base/ps_util.h"

#include <stdlib.h>
#include <string.h>

#define SCHED_LIST "1f1b,interleaved:2,zb-h1,zb-h2,zb-v,dualpipe-v"
#define MAX_SCHED 16

static const char help[] =
    "usage: pipesim plot [--db results/sweep.db] [--trace trace.json]\n"
    "                    [--kind speedup,bubble,memory,timeline] [--out-dir results/plots]\n"
    "                    [--prefix P] [--mem-M m] [--model S] [--topology S]\n"
    "                    [--schedule S] [--remat R] [--strategy S] [--batch N]\n"
    "                    [--replicas R] [--model-hash H] [--topology-hash H]\n"
    "       pipesim plot --kind schedules -K k -M m [--schedules a,b,...] [--out-dir D]\n"
    "       pipesim plot --compare SIM.json MEASURED.json [--out-dir D] [--prefix P]\n\n"
    "Draws with gnuplot, each as PNG and SVG in --out-dir (written atomically, and\n"
    "but for --compare published together: a failure leaves none of the run's files):\n"
    "  speedup   speedup over one device vs M, a line per K, with the ideal\n"
    "            K M/(M+K-1) of balanced stages and free communication (dashed;\n"
    "            R K M/(M+K-1) for runs of R replicas)\n"
    "  bubble    simulated bubble fraction vs M per K, with (K-1)/(M+K-1) dashed\n"
    "  memory    per-stage peak memory vs K, a colour per M (--mem-M m: that M only),\n"
    "            with the device capacity dashed; a log axis over a span above 20x\n"
    "  timeline  Gantt chart of a Chrome trace from pipesim predict --trace\n"
    "  schedules the schedules' timelines one above another at -K, -M (one row per\n"
    "            device, F/B/W coloured, compute only: T_F = 1, T_B = 2 per device,\n"
    "            no communication); default --schedules\n"
    "            " SCHED_LIST "\n"
    "            (of those, the ones that cannot run at this K and M are left out with\n"
    "            a note); at most K x M = 65536\n"
    "The sweep figures use one group of runs (one model, topology, schedule, remat,\n"
    "strategy, batch and replica count): the first that matches the filters\n"
    "(--model-hash and --topology-hash: the start of a stored input hash, which\n"
    "tells apart the same names swept from edited files). Default --kind: the\n"
    "sweep figures with --db, plus timeline with --trace. Without either, --db\n"
    "results/sweep.db (sweep's and report's default). Needs gnuplot. Beside\n"
    "each figure its script and data (<prefix><kind>.gp, .dat; memory also\n"
    "capacity.dat and memmax.dat; --compare a script alone, its data inline; in that\n"
    "folder `gnuplot <prefix><kind>.gp > <prefix><kind>.png` redraws it).\n"
    "--compare overlays a simulated and a measured trace of one configuration\n"
    "(pipesim predict --trace, pipesim validate --trace): per device the simulated\n"
    "compute ops above the measured ones on one time axis, in <prefix>compare.png/.svg.\n";

/* --compare: two traces of one configuration, overlaid. */
static int plot_compare(const char *sim_path, const char *meas_path,
                        const struct ana_plot_opts *o)
{
    struct trc_trace *s = NULL, *m = NULL;
    char path[4096], title[600];
    int rc;
    if ((rc = trc_read_fits(sim_path, meas_path)) < 0 || /* both held at once */
        (rc = trc_read_chrome(sim_path, &s)) < 0 || (rc = trc_read_chrome(meas_path, &m)) < 0)
        goto out;
    if (!s->n_events || !m->n_events) { /* as --trace says it (gnuplot failed, exit 5) */
        rc = ps_error(PS_EPARSE, "%s: the trace has no events to draw",
                      !s->n_events ? sim_path : meas_path);
        goto out;
    }
    if (s->n_devices != m->n_devices) { /* the overlay pairs their devices row by row */
        rc = ps_error(PS_EINVAL, "--compare: %s has %d devices, %s %d: one run's timelines "
                       "overlay row by row", sim_path, s->n_devices, meas_path, m->n_devices);
        goto out;
    }
    /* one configuration, as compare takes it: its shape, schedule, replicas and batch
     * (helper-74: gpipe over interleaved:2 was drawn), and the same ops */
    struct ana_compare *cmp = NULL;
    if ((rc = ana_compare_new(s, m, &cmp)) < 0) {
        char why[PS_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", ps_errmsg());
        rc = ps_error(-rc, "--compare %s %s: %s", sim_path, meas_path, why);
        goto out;
    }
    ana_compare_free(cmp);
    snprintf(title, sizeof title, "%s (upper) vs %s (lower)", sim_path, meas_path);
    struct ps_made made = { 0 }; /* taken away again if nothing is drawn into them */
    for (int k = 0; k < 2 && !rc; k++) {
        snprintf(path, sizeof path, "%s/%scompare.%s", o->out_dir, o->prefix ? o->prefix : "",
                 k ? "svg" : "png");
        if (!(rc = ps_mkdirs_parent_made(path, &made)))
            rc = msr_plot_timelines(s, m, title, path);
        if (!rc) { /* one line: a newline in the folder's name as '?' (helper-119) */
            fputs("wrote ", stdout);
            ps_put_printable(stdout, path, -1);
            fputc('\n', stdout);
        }
    }
    if (rc < 0)
        ps_made_undo(&made);
    else
        ps_made_keep(&made);
out:
    trc_trace_free(s);
    trc_trace_free(m);
    return rc;
}

/* --kind schedules: the named schedules' timelines one above another. */
#define PLOT_SCHED_KM_MAX 65536 /* K x M of one drawn schedule (an 80 MB SVG) */

static int plot_schedules(const char *list, int K, int M, int other_inputs,
                          const struct ana_plot_opts *o)
{
    if (other_inputs)
        return ps_error(PS_EUSAGE, "--kind schedules draws from -K and -M alone (no --db "
                         "or --trace)");
    if (K < 1 || M < 1)
        return ps_error(PS_EUSAGE, "--kind schedules needs -K and -M");
    char buf[512];
    const char *names[MAX_SCHED];
    int n = 0;
    if ((size_t)snprintf(buf, sizeof buf, "%s", list ? list : SCHED_LIST) >= sizeof buf)
        return ps_error(PS_EUSAGE, "--schedules: list too long");
    int rc;
    if ((rc = cli_schedule_list(buf, "--schedules", names, MAX_SCHED, &n)) < 0)
        return rc;
    if ((int64_t)K * M > PLOT_SCHED_KM_MAX)
        return ps_error(PS_EUSAGE, "--kind schedules: K x M = %lld is too large to draw (at "
                         "most %d stage micro-batches per schedule)", (long long)K * M,
                         PLOT_SCHED_KM_MAX);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        struct sch_schedule *s; /* the default list: those that run at this K and M */
        if ((rc = sch_schedule_build(names[i], K, M, SCH_REMAT_NEVER, &s)) < 0) {
            if (rc == -PS_ENOMEM)
                return rc;
            if (list) { /* a list the user gave: a schedule that cannot run is an error,
                         * naming the option given (the generators say --schedule) */
                if (rc == -PS_EUSAGE && !strncmp(ps_errmsg(), "--schedule ", 11)) {
                    char msg[PS_ERRMSG_MAX];
                    snprintf(msg, sizeof msg, "%s", ps_errmsg() + 11);
                    rc = ps_error(PS_EUSAGE, "--schedules %s", msg);
                }
                return rc;
            }
            fprintf(stderr, "plot: %s left out: %s\n", names[i], ps_errmsg());
            ps_error_clear();
            continue;
        }
        sch_schedule_free(s);
        names[kept++] = names[i];
    }
    n = kept;
    rc = ps_gnuplot_require();
    struct ana_plot_opts so = *o; /* the figure, its script and data: all or none */
    if (rc < 0 || (rc = ana_plot_batch_new(&so.batch)) < 0)
        return rc;
    return ana_plot_batch_finish(so.batch, ana_plot_schedules(names, n, K, M, &so), stdout);
}

int cmd_plot(int argc, char **argv)
{
    static const struct option opts[] = {
        { "db", required_argument, 0, 'd' },       { "trace", required_argument, 0, 'T' },
        { "kind", required_argument, 0, 'k' },     { "out-dir", required_argument, 0, 'o' },
        { "prefix", required_argument, 0, 'p' },   { "mem-M", required_argument, 0, 'X' },
        { "model", required_argument, 0, 'm' },    { "topology", required_argument, 0, 't' },
        { "schedule", required_argument, 0, 's' }, { "remat", required_argument, 0, 'r' },
        { "strategy", required_argument, 0, 'S' }, { "batch", required_argument, 0, 'b' },
        { "compare", no_argument, 0, 'C' },        { "help", no_argument, 0, 'h' },
        { "schedules", required_argument, 0, 'L' }, { "replicas", required_argument, 0, 'R' },
        { "model-hash", required_argument, 0, 'H' }, { "topology-hash", required_argument, 0, 'Y' },
        { 0, 0, 0, 0 },
    };
    struct ana_plot_opts o = { .out_dir = "results/plots" };
    const char *db_path = NULL, *trace = NULL, *kinds = NULL;
    long memM = 0, K = 0, M = 0;
    const char *sched_list = NULL;
    int c, rc = 0, compare = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("plot", argc, argv, "hK:M:", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); return 0;
        case 'C': compare = 1; break;
        case 'L': sched_list = optarg; break;
        case 'K': rc = ps_parse_long(optarg, "-K", 1, 4096, &K); break;
        case 'M': rc = ps_parse_long(optarg, "-M", 1, 1 << 16, &M); break;
        case 'd': db_path = optarg; break;
        case 'T': trace = optarg; break;
        case 'k': kinds = optarg; break;
        case 'o': o.out_dir = optarg; break;
        case 'p': o.prefix = optarg; break;
        case 'X': rc = ps_parse_long(optarg, "--mem-M", 1, 1 << 24, &memM); break;
        case 'm': o.sel.model = optarg; break;
        case 't': o.sel.topology = optarg; break;
        case 'H':
            if ((rc = ana_report_check_hash(optarg, "--model-hash")) == 0)
                o.sel.model_hash = optarg;
            break;
        case 'Y':
            if ((rc = ana_report_check_hash(optarg, "--topology-hash")) == 0)
                o.sel.topology_hash = optarg;
            break;
        case 's': /* a name the engine knows, as report's (a stored run has no other) */
            if ((rc = sch_schedule_known(optarg, "--schedule")) == 0)
                o.sel.schedule = optarg;
            break;
        case 'r': {
            enum sch_remat r;
            if ((rc = sch_remat_parse(optarg, &r)) == 0)
                o.sel.remat = sch_remat_name(r);
            break;
        }
        case 'S': {
            enum sch_part_strategy st;
            if ((rc = sch_part_strategy_parse(optarg, &st)) == 0)
                o.sel.strategy = sch_part_strategy_name(st);
            break;
        }
        case 'b': rc = ps_parse_count(optarg, "--batch", 1, 1L << 40, &o.sel.batch); break;
        case 'R': {
            long R;
            if ((rc = ps_parse_long(optarg, "--replicas", 1, 1 << 16, &R)) == 0)
                o.sel.replicas = (int)R;
            break;
        }
        default: return -PS_EUSAGE;
        }
        if (rc < 0)
            return rc;
    }
    o.mem_M = (int)memM;
    if ((rc = ps_outdir_check(o.out_dir, "--out-dir")) < 0 ||
        (rc = ps_prefix_check(o.prefix, "--prefix")) < 0)
        return rc;
    if (compare) {
        if (argc - optind != 2 || db_path || trace || kinds)
            return ps_error(PS_EUSAGE, "--compare: expected SIM.json MEASURED.json (and "
                             "no --db, --trace or --kind)");
        if ((rc = ps_io_input(argv[optind], "SIM.json")) < 0 ||
            (rc = ps_io_input(argv[optind + 1], "MEASURED.json")) < 0 ||
            (rc = cli_io_figure(o.out_dir, o.prefix, "compare", "png,svg,gp",
                                "--out-dir")) < 0)
            return rc;
        if ((rc = ps_gnuplot_require()) < 0)
            return rc;
        return plot_compare(argv[optind], argv[optind + 1], &o);
    }
    if (optind < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    if (kinds && !strcmp(kinds, "schedules")) {
        if (!(db_path || trace) && (rc = cli_io_figure(o.out_dir, o.prefix, "schedules",
                                                         "png,svg,gp,dat", "--out-dir")) < 0)
            return rc;
        return plot_schedules(sched_list, (int)K, (int)M, db_path || trace, &o);
    }
    if (kinds && strstr(kinds, "schedules")) /* in a list: say that, not the options */
        for (const char *q = kinds; (q = strstr(q, "schedules")); q += 9)
            if ((q == kinds || q[-1] == ',') && (q[9] == 0 || q[9] == ','))
                return ps_error(PS_EUSAGE, "--kind schedules goes alone (not in a list)");
    if (sched_list || K || M)
        return ps_error(PS_EUSAGE, "--schedules, -K and -M go with --kind schedules");
    if (!db_path && !trace)
        db_path = "results/sweep.db"; /* sweep's and report's default */
    /* split --kind into the sweep figures and the timeline */
    char sweep_kinds[256] = "";
    int timeline = trace && !kinds;
    if (kinds) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", kinds);
        for (char *save, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            /* a kind given twice, as every list says it (it said one figure was
             * "the same file as" itself) */
            for (const char *q = buf; q < tok; q += strlen(q) + 1) /* the tokens before */
                if (!strcmp(q, tok))
                    return ps_error(PS_EUSAGE, "--kind: '%s' given twice", tok);
            if (!strcmp(tok, "timeline")) {
                timeline = 1;
                continue;
            }
            /* checked here, before the database is opened */
            if (!strcmp(tok, "schedules"))
                return ps_error(PS_EUSAGE, "--kind schedules goes alone (not in a list)");
            if ((rc = ana_plot_sweep_kind(tok)) < 0)
                return rc;
            size_t l = strlen(sweep_kinds);
            snprintf(sweep_kinds + l, sizeof sweep_kinds - l, "%s%s", l ? "," : "", tok);
        }
    } else if (db_path) {
        snprintf(sweep_kinds, sizeof sweep_kinds, "speedup,bubble,memory");
    }
    if (timeline && !trace)
        return ps_error(PS_EUSAGE, "--kind timeline needs --trace FILE");
    if (sweep_kinds[0] && !db_path)
        return ps_error(PS_EUSAGE, "--kind %s needs --db FILE", sweep_kinds);
    if (!sweep_kinds[0] && !timeline)
        return ps_error(PS_EUSAGE, "--kind: nothing to draw");
    /* then every file the figures write, before any is: none may be an input
     * or another's (a refusal at its turn came after others were written) */
    if ((rc = ps_io_input(db_path, "--db")) < 0 || (rc = ps_io_input(trace, "--trace")) < 0 ||
        (timeline && (rc = cli_io_figure(o.out_dir, o.prefix, "timeline", "png,svg,gp,dat",
                                         "--out-dir")) < 0))
        return rc;
    char kbuf[256];
    snprintf(kbuf, sizeof kbuf, "%s", sweep_kinds);
    for (char *save, *tok = strtok_r(kbuf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if ((rc = cli_io_figure(o.out_dir, o.prefix, tok, "png,svg,gp,dat", "--out-dir")) < 0)
            return rc;
        if (!strcmp(tok, "memory") &&
            ((rc = cli_io_figure(o.out_dir, o.prefix, "capacity", "dat", "--out-dir")) < 0 ||
             (rc = cli_io_figure(o.out_dir, o.prefix, "memmax", "dat", "--out-dir")) < 0))
            return rc;
    }
    if ((rc = ps_gnuplot_require()) < 0)
        return rc;
    ana_db *db = NULL;
    struct ana_run *runs = NULL;
    int n = 0;
    /* every figure asked for, or none: held back until all are drawn */
    if ((rc = ana_plot_batch_new(&o.batch)) < 0)
        return rc;
    if (sweep_kinds[0]) {
        if ((rc = ana_db_open(db_path, 0, &db)) < 0 || (rc = ana_db_load(db, &runs, &n)) < 0 ||
            (rc = ana_plot_sweep(runs, n, sweep_kinds, &o)) < 0)
            goto out;
    }
    if (timeline)
        rc = ana_plot_timeline(trace, &o);
out:
    /* says what it wrote, as --compare does (it printed nothing: helper-83) */
    rc = ana_plot_batch_finish(o.batch, rc, stdout);
    ana_runs_free(runs, n);
    ana_db_close(db);
    return rc;
}
