/* pipesim plan: the best configuration that fits (analysis/ana_plan.h). */
#include "analysis/ana_dbkind.h"
#include "analysis/ana_mpi.h"
#include "analysis/ana_plan.h"
#include "analysis/ana_plot.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_gnuplot.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"
#include "cli/cli.h"
#include "cli/cli_run.h"
#include "models/mdl_gen.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char help[] =
    "usage: pipesim plan --model F --topology F --devices N --batch B\n"
    "                    [--mem-cap device|BYTES] [--top N] [--objective throughput|memory]\n"
    "                    [--schedules LIST] [--remat LIST] [--format table|csv|json]\n"
    "                    [--out F] [--db FILE] [--plot DIR] [--frontier exact|found]\n"
    "                    [--brute-force] [--jobs N] [--quiet]\n\n"
    "Finds the best way to train the model on N devices of the topology with a global\n"
    "batch of B samples per step: pipeline depth K and data-parallel replicas R\n"
    "(K x R <= N, R dividing B), micro-batch count M (every divisor of B/R up to 4096),\n"
    "these schedules (gpipe, 1f1b, eager-1f1b, interleaved:2,\n"
    "interleaved:4, breadth-first:2, zb-h1, zb-h2, zb-v; each where its\n"
    "conditions hold), re-materialization (never, except_last, always) and the optimal\n"
    "partition under the memory cap. Prints the top N configurations that fit (simulated peak within\n"
    "capacity on every device) with step time, samples/s, speedup over the best\n"
    "single device that fits, peak memory against capacity, bubble, imbalance,\n"
    "communication share and what limits each; then the Pareto frontier of\n"
    "throughput against peak memory; then how many were rejected and why.\n"
    "Configurations whose exact lower bound cannot enter the top N are not simulated,\n"
    "nor those whose closed-form memory bound exceeds the capacity (docs/plan.md).\n"
    "--mem-cap BYTES (16e9, 16G, 12GiB) replaces each device's memory as capacity.\n"
    "--schedules and --remat take comma lists restricting the search (--schedules may\n"
    "also name dualpipe-v, searched where M >= 2K, and zb-auto, its order fitted to\n"
    "each configuration's stage costs as predict runs it: a local search each, far\n"
    "slower than the others). --db stores every\n"
    "configuration in an SQLite plan database; --plot DIR draws DIR/frontier.png and\n"
    ".svg (needs gnuplot). --brute-force simulates everything (for checking the bounds).\n"
    "--frontier found skips the search for the exact frontier (faster): the frontier\n"
    "printed is then that of the configurations simulated for the top N.\n"
    "--jobs N searches N shards of the configurations in parallel threads (default, and\n"
    "at most, the CPUs); the top N, the frontier and the baseline are the same for any\n"
    "N, the counts of what was simulated and pruned are not (each shard prunes with what\n"
    "it found). Under --frontier found the frontier is of what was simulated, which\n"
    "depends on N: there the default is one thread.\n"
    "Under mpirun -np P the search is sharded over the P ranks (one thread each) and\n"
    "rank 0 prints and stores the same result as one process; a rank whose --model,\n"
    "--topology or search options are not rank 0's (compared by hash) stops the run\n"
    "before any work, exit 4. When no configuration\n"
    "fits, the report (and --db, --plot) still says so, and the exit status is 7.\n"
    "Defaults: --mem-cap device, --top 5, --objective throughput, --frontier exact,\n"
    "--jobs all CPUs (1 with --frontier found), --format table.\n";

/* "a,b,c" into a malloc'd array of strings (into the malloc'd copy buf). */
static int split_list(const char *s, const char *what, char **buf, const char ***items, int *n)
{
    *n = 0;
    *items = NULL;
    if (!(*buf = strdup(s)))
        return ps_error(PS_ENOMEM, "out of memory");
    int cap = 1;
    for (const char *c = s; *c; c++)
        cap += *c == ',';
    const char **v = calloc((size_t)cap, sizeof *v);
    if (!v)
        return ps_error(PS_ENOMEM, "out of memory");
    *items = v;
    for (char *save, *t = strtok_r(*buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        for (int i = 0; i < *n; i++)
            if (!strcmp(v[i], t))
                return ps_error(PS_EUSAGE, "%s: '%s' given twice", what, t);
        v[(*n)++] = t;
    }
    return *n ? 0 : ps_error(PS_EUSAGE, "%s: empty list", what);
}

struct plan_out {
    const struct ana_plan *p;
    enum ana_fmt fmt;
};

static int print_plan(const void *ctx, FILE *f)
{
    const struct plan_out *o = ctx;
    return ana_plan_print(o->p, o->fmt, f);
}

int cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {
        { "model", required_argument, 0, 'm' },     { "topology", required_argument, 0, 't' },
        { "devices", required_argument, 0, 'N' },   { "batch", required_argument, 0, 'b' },
        { "mem-cap", required_argument, 0, 'c' },   { "top", required_argument, 0, 'n' },
        { "objective", required_argument, 0, 'O' }, { "schedules", required_argument, 0, 's' },
        { "remat", required_argument, 0, 'r' },     { "format", required_argument, 0, 'f' },
        { "out", required_argument, 0, 'o' },       { "db", required_argument, 0, 'd' },
        { "plot", required_argument, 0, 'P' },      { "brute-force", no_argument, 0, 'B' },
        { "quiet", no_argument, 0, 'q' },           { "frontier", required_argument, 0, 'F' },
        { "jobs", required_argument, 0, 'j' },      { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    struct ana_plan_spec sp = { .cap_mode = 1, .top = 5 };
    struct plan_out po = { .fmt = ANA_FMT_TABLE };
    const char *out = "-", *db = NULL, *plot = NULL, *sched_arg = NULL, *remat_arg = NULL;
    const char *cap_arg = NULL;
    long devices = 0, batch = 0, top = 5;
    int quiet = 0, c, rc = 0, nr = 0;
    long jobs = 0;
    char *sbuf = NULL, *rbuf = NULL, *cmdline = NULL;
    const char **snames = NULL, **rnames = NULL;
    enum sch_remat remats[3];
    struct mdl_profile *prof = NULL;
    struct mdl_topology *topo = NULL;
    struct ana_plan *p = NULL;
    static const char *const objectives[] = { "throughput", "memory" };
    static const char *const frontiers[] = { "exact", "found" };
    struct ps_suggest sg;
    cli_getopt_reset();
    while ((c = cli_getopt("plan", argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); goto out;
        case 'm': sp.model_arg = optarg; break;
        case 't': sp.topo_arg = optarg; break;
        case 'N': rc = ps_parse_long(optarg, "--devices", 1, 1 << 20, &devices); break;
        case 'b': { /* as predict and partition read it: 1e3 is 1000 */
            double b = 0;
            if ((rc = ps_parse_double(optarg, "--batch", &b)) == 0 &&
                (rc = cli_check_batch(b)) == 0)
                batch = (long)b;
            break;
        }
        case 'n': rc = ps_parse_long(optarg, "--top", 1, 100000, &top); break;
        case 'j': rc = ps_parse_long(optarg, "--jobs", 1, 4096, &jobs); break;
        case 'c':
            if (!strcmp(optarg, "device"))
                sp.cap_mode = 1;
            else if ((rc = ps_parse_bytes(optarg, "--mem-cap", &sp.cap)) == 0)
                sp.cap_mode = 2, cap_arg = optarg;
            break;
        case 'O':
            if (!strcmp(optarg, "throughput"))
                sp.objective = ANA_PLAN_THROUGHPUT;
            else if (!strcmp(optarg, "memory"))
                sp.objective = ANA_PLAN_MEMORY;
            else
                rc = ps_error(PS_EUSAGE, "--objective: unknown objective '%s'%s (throughput, "
                               "memory)", optarg, ps_suggest_among(&sg, optarg, objectives, 2));
            break;
        case 's': sched_arg = optarg; break;
        case 'r': remat_arg = optarg; break;
        case 'f': rc = ana_fmt_parse(optarg, ANA_FMTS_ALL, "--format", &po.fmt); break;
        case 'o': out = optarg; break;
        case 'd': db = optarg; break;
        case 'P': plot = optarg; break;
        case 'B': sp.brute_force = 1; break;
        case 'F':
            if (!strcmp(optarg, "exact") || !strcmp(optarg, "found"))
                sp.frontier_found = optarg[0] == 'f';
            else
                rc = ps_error(PS_EUSAGE, "--frontier: unknown mode '%s'%s (exact, found)", optarg,
                              ps_suggest_among(&sg, optarg, frontiers, 2));
            break;
        case 'q': quiet = 1; break;
        default: rc = -PS_EUSAGE; break;
        }
        if (rc < 0)
            goto out;
    }
    if (optind < argc) {
        rc = ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if (!sp.model_arg || !sp.topo_arg || !devices || !batch) {
        rc = ps_error(PS_EUSAGE, "--model, --topology, --devices and --batch are required "
                       "(see pipesim plan --help)");
        goto out;
    }
    if (sched_arg) {
        size_t cap = 1;
        for (const char *q = sched_arg; *q; q++)
            cap += *q == ',';
        if (!(sbuf = strdup(sched_arg)) || !(snames = calloc(cap, sizeof *snames))) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto out;
        }
        if ((rc = cli_schedule_list(sbuf, "--schedules", snames, 0, &sp.nsched)) < 0)
            goto out;
        sp.schedules = snames;
    }
    if (remat_arg) {
        if ((rc = split_list(remat_arg, "--remat", &rbuf, &rnames, &nr)) < 0)
            goto out;
        if (nr > 3) {
            rc = ps_error(PS_EUSAGE, "--remat: at most 3 modes (never, except_last, always)");
            goto out;
        }
        for (int i = 0; i < nr; i++)
            if ((rc = sch_remat_parse(rnames[i], &remats[i])) < 0)
                goto out;
        sp.remats = remats;
        sp.nremat = nr;
    }
    /* under mpirun rank 0 alone writes --out, --db and --plot: the others do
     * not check them (helper-121: from their own folders they failed the run) */
    int writer = ana_mpi_writer();
    const char *wout = writer ? out : NULL, *wdb = writer ? db : NULL,
               *wplot = writer ? plot : NULL;
    if ((rc = ps_io_input(sp.model_arg, "--model")) < 0 ||
        (rc = ps_io_input(sp.topo_arg, "--topology")) < 0 ||
        (rc = ps_io_output(wout, "--out")) < 0 ||
        (wdb && ((rc = ana_db_path_check(wdb, "--db", 1)) < 0 ||
                 (rc = ps_io_output(wdb, "--db")) < 0)) ||
        /* before the search, not after it (helper-141: a folder, or a path under a
         * file, failed the write at the end of the work) */
        /* (in --plot's folder or one above it, which plot makes: helper-142;
         * only there, 143; however spelt, 144) */
        (rc = ps_output_writable(wout, "--out", wout && wplot &&
                                                    ps_folder_on_path(wout, wplot))) < 0 ||
        (rc = ps_output_writable(wdb, "--db", 1)) < 0)
        goto refused;
    /* the figure's files are outputs too, checked before the database is */
    if (wplot && ((rc = ps_outdir_check(wplot, "--plot")) < 0 ||
                  (rc = cli_io_figure(wplot, NULL, "frontier", "png,svg,gp", "--plot")) < 0 ||
                  (rc = cli_io_figure(wplot, NULL, "plan", "dat", "--plot")) < 0))
        goto refused;
    if (wplot && (rc = ps_gnuplot_require()) < 0)
        goto refused;
    if ((rc = mdl_model_open(sp.model_arg, &prof)) < 0 ||
        (rc = mdl_topology_load(sp.topo_arg, &topo)) < 0) {
        rc = ana_mpi_refuse_rank(rc, "plan"); /* this rank's own files: all stop */
        goto out;
    }
    /* after the loads: a --db that is a file they read by name (a bundled topology, the
     * devices.json of its presets) is refused as an input (exit 2), not read as SQLite */
    if (wdb && ((rc = ana_db_path_check(wdb, "--db", 1)) < 0 ||
                (rc = ana_plan_db_precheck(wdb)) < 0))
        goto refused;
    if (devices > topo->n_devices) { /* this rank's own topology: all stop (helper-142) */
        rc = ps_error(PS_EUSAGE, "--devices %ld: topology %s has only %d device%s", devices,
                       sp.topo_arg, topo->n_devices, topo->n_devices == 1 ? "" : "s");
        rc = ana_mpi_refuse_rank(rc, "plan");
        goto out;
    }
    if ((rc = cli_command_line(argc, argv, &cmdline)) < 0)
        goto out;
    sp.profile = prof;
    sp.topo = topo;
    sp.command = cmdline;
    sp.devices = (int)devices;
    sp.batch = batch;
    sp.top = (int)top;
    /* every CPU by default, as sweep; no more: each shard holds every configuration's
     * record (tens of MB on a large space), and threads beyond the CPUs add only that */
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    if (!jobs && sp.frontier_found)
        jobs = 1; /* that frontier is of what was simulated, which the shards change */
    if (!jobs || (nproc > 0 && jobs > nproc))
        jobs = nproc > 0 ? nproc : 1;
    sp.jobs = (int)jobs;
    sp.progress = !quiet && isatty(STDERR_FILENO); /* a line redrawn: for a person */
    int root;
    rc = ana_plan_run_mpi(&sp, &p, &root);
    ana_plan_progress_end();
    if (rc < 0 || !root)
        goto out; /* an MPI rank other than 0: rank 0 prints and stores */
    if (!quiet)
        fprintf(stderr, "plan: %d configuration%s searched in %.2f s: %d simulated, %d pruned "
                "by the bound, %d rejected by the memory bound\n", p->n, p->n == 1 ? "" : "s",
                p->elapsed_s,
                p->simulated, p->counts[ANA_PLAN_PRUNED], p->counts[ANA_PLAN_MEM_BOUND]);
    /* the figure and the report held as temporaries and synced, then the
     * files renamed into place, then the database's row, the renames and the
     * row in one window no signal splits; a report for stdout waits in memory
     * until the row is stored (helper-86: it was out, then the store failed).
     * A failure anywhere leaves all three as they were */
    po.p = p;
    struct ana_plot_batch *figs = NULL;
    char *rep = NULL;
    size_t rep_len = 0;
    if ((rc = ana_plot_batch_new(&figs)) == 0 && plot)
        rc = ana_plan_plot(p, plot, NULL, figs);
    struct ps_afile af = { .f = NULL };
    if (rc == 0 && ((rc = cli_output_print(&af, out, print_plan, &po, &rep, &rep_len)) == 0 ||
                    af.f)) {
        int arc = ana_plot_batch_adopt(figs, &af); /* the set aborts it if need be */
        rc = rc < 0 ? rc : arc;
    }
    FILE *direct = af.f && ps_afile_direct(&af) ? af.f : NULL;
    /* a device other than stdout takes its report before the row (a full one
     * fails the run with the database as it was), stdout after it; the files
     * are renamed into place, then the row stored, in one set: a row that
     * cannot be stored puts the old files back (helper-138: the row was
     * stored first, and a file that could not be replaced left it stored) */
    if (rc == 0)
        rc = ana_plot_batch_sync(figs);
    if (rc == 0 && direct && direct != stdout)
        rc = cli_output_release(&af, out, rep, rep_len);
    ps_afile_publish_begin(); /* a signal now leaves the old set or the new */
    struct ps_made figs_made = { 0 }; /* taken away again if the row is not stored */
    ana_plot_batch_hand_made(figs, &figs_made);
    rc = ana_plot_batch_finish(figs, rc, NULL);
    /* the database's folders and file too, when made for a row not stored
     * (helper-142: a file size limit left newdir/p.db) */
    struct stat dst; /* nothing by that name, not even a link (helper-143: a link was taken) */
    int db_new = db && lstat(db, &dst) != 0;
    if (rc == 0 && db && ((rc = ps_mkdirs_parent_made(db, &figs_made)) < 0 ||
                          (rc = ana_plan_store(p, db)) < 0)) {
        ps_afile_publish_fail();
        if (db_new)
            unlink(db);
    }
    if (rc == 0 && direct == stdout)
        rc = cli_output_release(&af, out, rep, rep_len);
    ps_afile_publish_end(); /* the files put back first, then their folders can go */
    if (rc < 0)
        ps_made_undo(&figs_made);
    else
        ps_made_keep(&figs_made);
    free(rep);
    if (rc == 0 && !p->n_rank) { /* the report says so too; the status tells scripts */
        const char *first = NULL;
        for (int i = 0; i < p->n && !first; i++)
            if (p->c[i].status == ANA_PLAN_ERROR)
                first = p->c[i].error;
        if (!p->counts[ANA_PLAN_MEM_BOUND] && !p->counts[ANA_PLAN_MEM_SIM] && first)
            /* nothing was refused for memory: --mem-cap would not help */
            rc = ps_error(PS_ENOFIT, "no configuration of %ld devices can run: %d of the %d "
                          "searched were refused by the partitioner or the engine, none for "
                          "memory (first: %s)", devices, p->counts[ANA_PLAN_ERROR], p->n, first);
        else if (sp.cap_mode == 2) /* the cap given, by the option's own words */
            rc = ps_error(PS_ENOFIT, "no configuration of %ld devices fits --mem-cap %s",
                          devices, cap_arg);
        else /* (--mem-cap) read as the option given: say it is where to look */
            rc = ps_error(PS_ENOFIT, "no configuration of %ld devices fits their memory "
                          "(--mem-cap BYTES tries another capacity)", devices);
    }
    goto out;
refused: /* found by rank 0 alone under mpirun, before MPI: every rank stops
            (ana_mpi_refuse; helper-123: the others waited in MPI_Init) */
    rc = writer ? ana_mpi_refuse(rc, "plan") : rc;
out:
    ana_plan_free(p);
    free(cmdline);
    free(sbuf);
    free(rbuf);
    free(snames);
    free(rnames);
    mdl_topology_free(topo);
    mdl_profile_free(prof);
    return rc;
}
