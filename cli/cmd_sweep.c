/* pipesim sweep: every K x M x batch x replicas x remat x strategy
 * combination, in parallel, into SQLite. */
#include "analysis/ana_db.h"
#include "analysis/ana_dbkind.h"
#include "analysis/ana_mpi.h"
#include "analysis/ana_sweep.h"
#include "cli/cli.h"
#include "cli/cli_run.h"
#include "models/mdl_gen.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] =
    "usage: pipesim sweep --model F --topology F -K 1,2,4,8 -M 1,2,4,8,16,32\n"
    "                     --batch N[,N...] [--replicas R[,R...]] [--remat MODE[,MODE...]]\n"
    "                     [--strategy uniform|optimal|gpipe|balance-by-size|lingvo[,...]]\n"
    "                     [--schedule gpipe|1f1b|eager-1f1b|interleaved:v|breadth-first:v|\n"
    "                        zb-h1|zb-h2|zb-v|zb-auto[:L]|dualpipe-v[,...]] [--jobs N] [--db results/sweep.db]\n"
    "                     [--quiet]\n\n"
    "Simulates every combination of the listed schedules, stage counts K, micro-batch counts M,\n"
    "mini-batch sizes, data-parallel replica counts, re-materialization modes (never,\n"
    "except_last, always) and partition strategies (see pipesim partition --help), on\n"
    "--jobs worker threads (default: all CPUs), and stores one row per configuration\n"
    "in the SQLite database: the inputs with a hash of each input file (a topology's\n"
    "with the device presets it takes), the command line and the\n"
    "pipesim version; step time, throughput, speedup over one device (M=1, no remat),\n"
    "simulated and analytic bubble, and per stage busy fraction and peak memory (table\n"
    "stages). Configurations already in the database are skipped, so a sweep stopped\n"
    "with Ctrl-C, SIGTERM or SIGHUP (which keeps every finished row and exits with\n"
    "status 10; a second signal stops at once) resumes where it stopped when run again.\n"
    "Each value may appear once in each list, and the grid (the product of the list\n"
    "lengths) may hold up to 2147483647 configurations. A malformed\n"
    "PIPESIM_MEMORY_LIMIT is refused before any work (exit 2, as predict).\n"
    "--db must name a file (not '' or\n"
    ":memory:); a validation database or another program's file is refused.\n"
    "--replicas R: R data-parallel copies of each K-stage pipeline on K x R devices,\n"
    "as pipesim predict --replicas (a gradient all-reduce per stage; --batch is per\n"
    "replica; throughput and speedup count all replicas): K=4 R=1 against K=2 R=2\n"
    "on the same devices. A replica count with which even the smallest K needs more\n"
    "devices than the topology has is a usage error.\n"
    "Combinations that cannot run (M not dividing the batch, K x R above the devices,\n"
    "K above the layers, for optimal no cut that fits: it cuts under each device's\n"
    "memory, as predict --partition optimal) are stored with their error; the other\n"
    "strategies' cuts that do not fit are stored as run, with fits 0.\n"
    "A configuration refused by this machine's memory at the time (exit 6 in predict)\n"
    "is not stored: the sweep ends with exit 6 naming it, and the same command run\n"
    "again retries it. A progress bar with ETA goes to stderr when it is a terminal.\n"
    "Defaults: --replicas 1, --remat except_last, --strategy uniform,\n"
    "--db results/sweep.db.\n"
    "Under mpirun -np P the configurations are sharded over the P ranks (each with\n"
    "--jobs threads) and rank 0 alone writes --db (and makes its folder): the same\n"
    "rows one process stores. A rank whose --model or --topology is not the file rank\n"
    "0 loaded (compared by hash) stops the run before any work, exit 4.\n"
    "Read the results with pipesim report and pipesim plot.\n";

static int parse_list(const char *s, const char *what, int (*one)(const char *, int *),
                      int *v, int max, int *n)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == max)
            return ps_error(PS_EUSAGE, "%s: more than %d values", what, max);
        int rc = one(tok, &v[*n]);
        if (rc < 0)
            return rc;
        for (int i = 0; i < *n; i++)
            if (v[i] == v[*n])
                return ps_error(PS_EUSAGE, "%s: '%s' given twice (each value once: a "
                                 "configuration is stored once)", what, tok);
        (*n)++;
    }
    return *n ? 0 : ps_error(PS_EUSAGE, "%s: empty list", what);
}

static int one_remat(const char *s, int *v)
{
    enum sch_remat r;
    int rc = sch_remat_parse(s, &r);
    *v = (int)r;
    return rc;
}

static int one_strategy(const char *s, int *v)
{
    enum sch_part_strategy st;
    int rc = sch_part_strategy_parse(s, &st);
    *v = (int)st;
    return rc;
}

/* A value given twice would make two rows of one configuration: refused
 * before any work, naming the option and the value. */
static int distinct(const char *what, const long *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++)
            if (v[i] == v[j])
                return ps_error(PS_EUSAGE, "%s: %ld given twice (each value once: a "
                                 "configuration is stored once)", what, v[i]);
    return 0;
}

int cmd_sweep(int argc, char **argv)
{
    static const struct option opts[] = {
        { "model", required_argument, 0, 'm' },    { "topology", required_argument, 0, 't' },
        { "batch", required_argument, 0, 'b' },    { "remat", required_argument, 0, 'r' },
        { "strategy", required_argument, 0, 'S' }, { "schedule", required_argument, 0, 's' },
        { "jobs", required_argument, 0, 'j' },     { "db", required_argument, 0, 'd' },
        { "quiet", no_argument, 0, 'q' },          { "help", no_argument, 0, 'h' },
        { "replicas", required_argument, 0, 'R' }, { 0, 0, 0, 0 },
    };
    struct ana_sweep_spec sp = { .schedule = "gpipe", .handle_signals = 1 };
    const char *db = "results/sweep.db";
    long *Ks = NULL, *Ms = NULL, *batches = NULL, *Rs = NULL, jobs = 0;
    int remats[3] = { SCH_REMAT_EXCEPT_LAST }, strats[SCH_PART_NSTRATEGIES] = { SCH_PART_UNIFORM };
    int nremat = 1, nstrat = 1, c, rc = 0;
    char *cmdline = NULL, *sbuf = NULL;
    const char **snames = NULL;
    struct mdl_profile *prof = NULL;
    struct mdl_topology *topo = NULL;
    struct ps_made made = { 0 };
    cli_getopt_reset();
    while ((c = cli_getopt("sweep", argc, argv, "hK:M:", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); goto out;
        case 'm': sp.model_arg = optarg; break;
        case 't': sp.topo_arg = optarg; break;
        case 'K':
            free(Ks);
            Ks = NULL;
            if ((rc = ps_parse_long_list(optarg, "-K", 1, ANA_DB_K_MAX, &Ks, &sp.nK)) == 0)
                rc = distinct("-K", Ks, sp.nK);
            break;
        case 'M':
            free(Ms);
            Ms = NULL;
            if ((rc = ps_parse_long_list(optarg, "-M", 1, ANA_DB_M_MAX, &Ms, &sp.nM)) == 0)
                rc = distinct("-M", Ms, sp.nM);
            break;
        case 'b':
            free(batches);
            batches = NULL;
            if ((rc = ps_parse_count_list(optarg, "--batch", 1, ANA_DB_BATCH_MAX, &batches,
                                           &sp.nbatch)) == 0)
                rc = distinct("--batch", batches, sp.nbatch);
            break;
        case 'R':
            free(Rs);
            Rs = NULL;
            if ((rc = ps_parse_long_list(optarg, "--replicas", 1, ANA_DB_REPLICAS_MAX, &Rs,
                                          &sp.nreplica)) == 0)
                rc = distinct("--replicas", Rs, sp.nreplica);
            break;
        case 'r': rc = parse_list(optarg, "--remat", one_remat, remats, 3, &nremat); break;
        case 'S':
            rc = parse_list(optarg, "--strategy", one_strategy, strats, SCH_PART_NSTRATEGIES,
                            &nstrat);
            break;
        case 's':
            free(sbuf);
            free(snames);
            snames = NULL;
            if (!(sbuf = strdup(optarg)) || !(snames = calloc(strlen(optarg) / 2 + 2,
                                                            sizeof *snames))) {
                rc = ps_error(PS_ENOMEM, "out of memory");
                break;
            }
            rc = cli_schedule_list(sbuf, "--schedule", snames, 0, &sp.nschedule);
            sp.schedules = snames;
            break;
        case 'j': rc = ps_parse_long(optarg, "--jobs", 1, 4096, &jobs); break;
        case 'd': db = optarg; break;
        case 'q': sp.quiet = 1; break;
        default: rc = -PS_EUSAGE; break;
        }
        if (rc < 0)
            goto out;
    }
    if (optind < argc) {
        rc = ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if (!sp.model_arg || !sp.topo_arg || !Ks || !Ms || !batches) {
        rc = ps_error(PS_EUSAGE, "--model, --topology, -K, -M and --batch are required "
                       "(see pipesim sweep --help)");
        goto out;
    }
    /* under mpirun rank 0 alone writes --db: it checks the path and makes its
     * folder, after MPI's start (ana_sweep_run_mpi) */
    int mpi = ana_mpi_launched();
    if ((!mpi && (rc = ana_db_path_check(db, "--db", 1)) < 0) ||
        (rc = ps_io_input(sp.model_arg, "--model")) < 0 ||
        (rc = ps_io_input(sp.topo_arg, "--topology")) < 0 ||
        (!mpi && (rc = ps_io_output(db, "--db")) < 0) || /* read and written: an output */
        (!mpi && (rc = ps_output_writable(db, "--db", 1)) < 0)) /* named (helper-141) */
        goto out;
    if ((rc = mdl_model_open(sp.model_arg, &prof)) < 0 ||
        (rc = mdl_topology_load(sp.topo_arg, &topo)) < 0) {
        rc = ana_mpi_refuse_rank(rc, "sweep"); /* this rank's own files: all stop */
        goto out;
    }
    if (!mpi && (rc = ps_mkdirs_parent_made(db, &made)) < 0)
        goto out;
    if ((rc = cli_command_line(argc, argv, &cmdline)) < 0)
        goto out;
    enum sch_remat er[3];
    enum sch_part_strategy es[SCH_PART_NSTRATEGIES];
    for (int i = 0; i < nremat; i++)
        er[i] = (enum sch_remat)remats[i];
    for (int i = 0; i < nstrat; i++)
        es[i] = (enum sch_part_strategy)strats[i];
    sp.profile = prof;
    sp.topo = topo;
    sp.command = cmdline;
    sp.Ks = Ks;
    sp.Ms = Ms;
    sp.batches = batches;
    sp.replicas = Rs;
    sp.remats = er;
    sp.nremat = nremat;
    sp.strategies = es;
    sp.nstrategy = nstrat;
    sp.jobs = (int)jobs;
    sp.progress = !sp.quiet && isatty(2);
    struct ana_sweep_stats st;
    int root; /* under mpirun, rank 0 stores and prints */
    rc = ana_sweep_run_mpi(&sp, db, &st, &root);
    (void)root;
out:
    if (rc < 0) /* the folders made for --db, while empty: no database in them */
        ps_made_undo(&made);
    else
        ps_made_keep(&made);
    free(cmdline);
    free(sbuf);
    free(snames);
    free(Ks);
    free(Ms);
    free(batches);
    free(Rs);
    mdl_topology_free(topo);
    mdl_profile_free(prof);
    return rc;
}
