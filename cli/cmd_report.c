/* pipesim report: K x M tables from a sweep database, and CSV exports. */
#include "analysis/ana_dbkind.h"
#include "analysis/ana_format.h"
#include "analysis/ana_report.h"
#include "cli/cli.h"
#include "sched/sch_partitioner.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>

static const char help[] =
    "usage: pipesim report [--db results/sweep.db] [--metric LIST] [--baseline K,M]\n"
    "                      [--model S] [--topology S] [--schedule S] [--remat R]\n"
    "                      [--strategy S] [--batch N] [--replicas R]\n"
    "                      [--model-hash H] [--topology-hash H] [--csv F] [--grid-csv F]\n"
    "                      [--format table|csv|json] [-o|--out F] [--best [--fits]]\n\n"
    "Prints, per (model, topology, schedule, remat, strategy, batch, replicas), one\n"
    "K x M grid per metric, laid out like Table 2 of the GPipe paper (rows M,\n"
    "columns K):\n"
    "  normalized  throughput over the --baseline cell (default: smallest K and M;\n"
    "              the paper normalizes to K=2,M=1)\n"
    "  speedup     over one device (K=1, M=1, no re-materialization)\n"
    "  throughput  samples/s      step  time per step (grid CSV/JSON: ms)\n"
    "  bubble      simulated / analytic (K-1)/(M+K-1), percent\n"
    "  memory      largest stage peak, GiB (2^30 bytes)\n"
    "'*' marks configurations that do not fit in memory, '-' those that could not\n"
    "run, 'n/a' a speedup whose one-device baseline is beyond the engine's range\n"
    "(no such cell in the grid CSV or JSON, an empty field in --csv).\n"
    "--csv writes every selected run, --grid-csv every grid cell; --format csv\n"
    "or json prints the grid cells (one per group, metric, M and K) instead of the\n"
    "tables. The outputs are one set: if one cannot be written, none is replaced\n"
    "and nothing is printed.\n"
    "Filters select runs by their stored model/topology argument and settings;\n"
    "--model-hash and --topology-hash by the start of an input's stored hash (hex,\n"
    "as the group headers show it when the same names were swept from edited files).\n"
    "Runs of sweep --replicas R (R data-parallel pipelines on K x R devices) are\n"
    "grids of their own, named in the group headers when any run has R > 1;\n"
    "speedup and throughput count all replicas, so K=4 R=1 and K=2 R=2 compare by\n"
    "those (or by --best). A database of the previous schema (version 1) is read\n"
    "as replicas 1.\n"
    "--best prints only the selected run with the most samples/s (--fits: among\n"
    "those whose every stage fits in memory; exit status 7 when none does).\n"
    "Filters that select no run, or a database of none, are exit status 4,\n"
    "whatever the format.\n"
    "Defaults: --db results/sweep.db (sweep's), --metric normalized,speedup,bubble,\n"
    "--format table.\n";

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        { "db", required_argument, 0, 'd' },       { "metric", required_argument, 0, 'x' },
        { "baseline", required_argument, 0, 'B' }, { "model", required_argument, 0, 'm' },
        { "topology", required_argument, 0, 't' }, { "schedule", required_argument, 0, 's' },
        { "remat", required_argument, 0, 'r' },    { "strategy", required_argument, 0, 'S' },
        { "batch", required_argument, 0, 'b' },    { "csv", required_argument, 0, 'c' },
        { "grid-csv", required_argument, 0, 'g' }, { "out", required_argument, 0, 'o' },
        { "format", required_argument, 0, 'f' },   { "best", no_argument, 0, 'Z' },
        { "fits", no_argument, 0, 'F' },           { "help", no_argument, 0, 'h' },
        { "replicas", required_argument, 0, 'R' }, { "model-hash", required_argument, 0, 'H' },
        { "topology-hash", required_argument, 0, 'T' }, { 0, 0, 0, 0 },
    };
    struct ana_report_opts o = { 0 };
    enum ana_fmt format = ANA_FMT_TABLE;
    const char *db_path = "results/sweep.db", *csv = NULL, *grid_csv = NULL, *out_path = "-";
    int c, rc = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("report", argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); return 0;
        case 'd': db_path = optarg; break;
        case 'x': o.metrics = optarg; rc = ana_report_check_metrics(optarg); break;
        case 'B': {
            long *v;
            int n;
            if ((rc = ps_parse_long_list(optarg, "--baseline", 1, 1 << 20, &v, &n)) < 0)
                break;
            if (n != 2)
                rc = ps_error(PS_EUSAGE, "--baseline: expected K,M, got '%s'", optarg);
            else {
                o.base_K = (int)v[0];
                o.base_M = (int)v[1];
            }
            free(v);
            break;
        }
        case 'm': o.model = optarg; break;
        case 't': o.topology = optarg; break;
        case 'H':
            if ((rc = ana_report_check_hash(optarg, "--model-hash")) == 0)
                o.model_hash = optarg;
            break;
        case 'T':
            if ((rc = ana_report_check_hash(optarg, "--topology-hash")) == 0)
                o.topology_hash = optarg;
            break;
        case 's': /* a name the engine knows (a stored run can have no other) */
            if ((rc = sch_schedule_known(optarg, "--schedule")) == 0)
                o.schedule = optarg;
            break;
        case 'r': {
            enum sch_remat r;
            if ((rc = sch_remat_parse(optarg, &r)) == 0)
                o.remat = sch_remat_name(r);
            break;
        }
        case 'S': {
            enum sch_part_strategy st;
            if ((rc = sch_part_strategy_parse(optarg, &st)) == 0)
                o.strategy = sch_part_strategy_name(st);
            break;
        }
        case 'b': rc = ps_parse_count(optarg, "--batch", 1, 1L << 40, &o.batch); break;
        case 'R': {
            long R;
            if ((rc = ps_parse_long(optarg, "--replicas", 1, 1 << 16, &R)) == 0)
                o.replicas = (int)R;
            break;
        }
        case 'c': csv = optarg; break;
        case 'g': grid_csv = optarg; break;
        case 'o': out_path = optarg; break;
        case 'f': rc = ana_fmt_parse(optarg, ANA_FMTS_ALL, "--format", &format); break;
        case 'Z': o.best = 1; break;
        case 'F': o.fits_only = 1; break;
        default: return -PS_EUSAGE;
        }
        if (rc < 0)
            return rc;
    }
    if (optind < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    if (o.fits_only && !o.best)
        return ps_error(PS_EUSAGE, "--fits selects among the --best candidates; give --best "
                         "too");
    if (o.best && format != ANA_FMT_TABLE)
        return ps_error(PS_EUSAGE, "--best prints a table; use it without --format csv|json "
                         "(--csv writes the selected runs)");
    if ((rc = ana_db_path_check(db_path, "--db", 0)) < 0 || (rc = ps_io_input(db_path, "--db")) < 0 ||
        (rc = ps_io_output(out_path, "--out")) < 0 || (rc = ps_io_output(csv, "--csv")) < 0 ||
        (rc = ps_io_output(grid_csv, "--grid-csv")) < 0)
        return rc;
    ana_db *db = NULL;
    struct ana_run *runs = NULL;
    int n = 0;
    if ((rc = ana_db_open(db_path, 0, &db)) < 0 || (rc = ana_db_load(db, &runs, &n)) < 0)
        goto out;
    /* a selection that matches nothing is the filters' error, as plot's
     * (helper-138: "no runs match" printed, exit 0, where plot exits 4) */
    int sel = 0;
    for (int i = 0; i < n; i++)
        sel += ana_run_selected(&runs[i], &o);
    if (!sel) { /* an empty database too: nothing to report (helper-140) */
        rc = n ? ps_error(PS_EINVAL, "no runs match the selection (%d run%s in the database)",
                          n, n == 1 ? "" : "s")
               : ps_error(PS_EINVAL, "%s holds no runs", db_path);
        goto out;
    }
    struct {
        const char *path;
        int (*fn)(const struct ana_run *, int, const struct ana_report_opts *, FILE *);
    } outs[] = { { out_path, format == ANA_FMT_CSV    ? ana_report_grid_csv
                             : format == ANA_FMT_JSON ? ana_report_grid_json
                                                      : ana_report_print },
                 { csv, ana_report_csv },
                 { grid_csv, ana_report_grid_csv } };
    /* all or none: every output opened, then written (stdout into memory),
     * then synced, before the first is renamed into place or stdout gets a
     * byte (a bad --csv folder keeps --out as it was and prints nothing) */
    enum { N_OUT = sizeof outs / sizeof *outs };
    struct ps_afile af[N_OUT];
    int open_n = 0;
    char *mem = NULL; /* what goes to stdout, every output to it in order */
    size_t mem_len = 0;
    FILE *memf = NULL;
    for (size_t i = 0; i < N_OUT && rc == 0; i++) {
        if (!outs[i].path)
            continue;
        if ((rc = ps_afile_open(&af[i], outs[i].path)) < 0)
            break;
        open_n = (int)i + 1;
    }
    for (int i = 0; i < open_n && rc == 0; i++) {
        if (!outs[i].path)
            continue;
        FILE *w = af[i].f;
        if (w == stdout) {
            if (!memf && !(memf = ps_memstream_open(&mem, &mem_len))) {
                rc = ps_error(PS_ENOMEM, "stdout: out of memory buffering the report");
                break;
            }
            w = memf;
        }
        errno = 0;
        if ((rc = outs[i].fn(runs, n, &o, w)) < 0 && rc == -PS_EIO && ferror(w) &&
            w == memf) /* writing into memory fails only for want of it */
            rc = ps_error(PS_ENOMEM, "stdout: out of memory buffering the report");
        else if (rc == -PS_EIO && ferror(w))
            rc = ps_error(PS_EIO, "%s: write failed: %s",
                          strcmp(outs[i].path, "-") ? outs[i].path : "stdout",
                          strerror(errno ? errno : EIO));
    }
    /* a write into it that failed may not have been checked */
    if (memf && ps_memstream_close(memf, &mem, &mem_len) < 0 && rc == 0)
        rc = ps_error(PS_ENOMEM, "stdout: out of memory buffering the report");
    for (int i = 0; i < open_n && rc == 0; i++)
        if (outs[i].path && af[i].f != stdout)
            rc = ps_afile_sync(&af[i]);
    if (rc == 0 && mem && mem_len > 0 && fwrite(mem, 1, mem_len, stdout) != mem_len)
        rc = ps_error(PS_EIO, "stdout: write failed: %s", strerror(errno ? errno : EIO));
    free(mem);
    ps_afile_publish_begin(); /* a signal now leaves the old set or the new */
    for (int i = 0; i < open_n; i++) {
        if (!outs[i].path)
            continue;
        if (rc < 0)
            ps_afile_abort(&af[i]);
        else
            rc = ps_afile_commit(&af[i]);
    }
    ps_afile_publish_end();
out:
    ana_runs_free(runs, n);
    ana_db_close(db);
    return rc;
}
