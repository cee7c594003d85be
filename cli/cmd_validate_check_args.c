/* pipesim validate --check: its options (cli/cmd_validate_check.h). */
#include "cli/cmd_validate_check.h"
#include "analysis/ana_dbkind.h"
#include "measure/msr_validate.h"
#include "cli/cli.h"
#include "cli/cli_calib.h"
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "sched/sch_schedule.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: pipesim validate --check --net SPEC [--batch 256] [-K 1,2] [-M 1,2,4,...,64]\n"
    "                        [--remat all|never,except_last,always] [--steps 3]\n"
    "                        [--warmup-steps 1] [--schedule gpipe] [--repeats 5]\n"
    "                        [--profile F.csv --topology F.json] [--calib-out PREFIX]\n"
    "                        [--db results/validation.db] [--report results/validation.md]\n"
    "                        [--plot F.png] [--timeline F.png]\n"
    "                        [--traces PREFIX] [--quick]\n"
    "                        [--rounds 3] [--calib pipelined|passes] [--calib-stages 1|K]\n"
    "                        [--calib-at point|round]\n"
    "                        [--seed N] [--no-pin] [--realtime] [--format table|csv|json]\n\n"
    "Closes the loop: calibrates the net on this machine for each K (pipesim calibrate\n"
    "at the grid's micro-batch sizes; written to PREFIX-K<k>.csv/.json, default PREFIX\n"
    "results/calib/<net>; or takes --profile and --topology as they are for every K),\n"
    "then for every K, M (dividing the batch) and remat mode predicts one step, runs it\n"
    "for real on pinned cores and compares the simulated trace with the step of median\n"
    "time and with the fastest step. Every point runs --rounds rounds of warm-up steps\n"
    "then --steps timed steps, the rounds one after another over the grid, so a point's\n"
    "measured spread (min-max) spans the machine's drift; a prediction outside it is a\n"
    "model miss, one inside is noise.\n"
    "--calib pipelined (default): the layers are timed in K stages, then every stage op\n"
    "inside real steps of the schedule at each size (remat never and always), alongside\n"
    "the grid (calibration and grid see the same minutes of the machine); the layers are\n"
    "scaled to the stage ops, the link fitted to the steps' hand-offs. --calib-at point\n"
    "(default): after one warm-up round, each size's calibration steps run right before\n"
    "each of the grid's points of that size in every round (at least --repeats of each\n"
    "size and mode), seconds before the steps they predict; --calib-at round: whole\n"
    "calibration rounds (every size) between the grid's rounds. --calib passes: the\n"
    "layer passes alone, just before K's points, in one stage or in K stages\n"
    "(--calib-stages K).\n"
    "Prints one line per point (the measured spread in brackets, 'in' or 'OUT') and\n"
    "the accuracy figures against their targets (median |makespan error| <= 2%, max <= 5%, bubble\n"
    "<= 1 point, peak activation memory exact), naming the ops behind any miss. Appends\n"
    "every point to the SQLite database (checked to be a validation database before\n"
    "anything runs, a new one made then and removed if the run fails; a sweep one is\n"
    "refused), writes the Markdown report with its plot (predicted vs measured step\n"
    "time and bubble; gnuplot; --plot, default the report's name with .png) and the\n"
    "two timelines of the\n"
    "worst point overlaid (--timeline, default the report's name with -timeline.png),\n"
    "both shown in the report. --traces PREFIX also writes that point's two traces,\n"
    "PREFIX-sim.json and PREFIX-meas.json (Chrome JSON, for pipesim compare and plot\n"
    "--compare) and PREFIX-sim.csv and PREFIX-meas.csv (validate --trace-csv's\n"
    "columns, for a script). Every output is checked to be writable (its folders\n"
    "created) before the grid runs; after it they are one set with the results on\n"
    "stdout: all written, then the run stored, or, when one fails, none replaced and\n"
    "nothing stored (the calibration's files are kept as each K is calibrated).\n"
    "--format csv|json prints on stdout only the results: one row per point (csv), or\n"
    "the points with the accuracy figures and targets (json); the progress goes to\n"
    "stderr. Default table (the accuracy figures).\n"
    "--quick: M 1,4,16, remat except_last, 3 calibration repeats, 2 rounds (make demo).\n"
    "--realtime: calibrate and run under SCHED_FIFO (root or CAP_SYS_NICE) so other\n"
    "jobs on shared cores stop preempting the measured steps (a warning if refused);\n"
    "it prints the kernel's RT throttling, which still stops FIFO threads for 50 ms of\n"
    "each second by default (kernel.sched_rt_runtime_us).\n"
    "Keep the net small: every point runs real training steps on the shared cores.\n";

static int parse_ints(const char *s, const char *what, long lo, long hi, int *out, int *n,
                      int cap)
{
    long *v;
    int k, rc = ps_parse_long_list(s, what, lo, hi, &v, &k);
    if (rc < 0)
        return rc;
    if (k > cap) {
        free(v);
        return ps_error(PS_EUSAGE, "%s: at most %d values", what, cap);
    }
    for (int i = 0; i < k; i++) {
        out[i] = (int)v[i];
        for (int j = 0; j < i; j++)
            if (out[j] == out[i]) {
                rc = ps_error(PS_EUSAGE, "%s: %d given twice (each value once: a point is "
                               "stored once)", what, out[i]);
                free(v);
                return rc;
            }
    }
    *n = k;
    free(v);
    return 0;
}

static int parse_remats(const char *s, enum sch_remat *out, int *n)
{
    *n = 0;
    if (!strcmp(s, "all")) {
        out[0] = SCH_REMAT_NEVER;
        out[1] = SCH_REMAT_EXCEPT_LAST;
        out[2] = SCH_REMAT_ALWAYS;
        *n = 3;
        return 0;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == 3)
            return ps_error(PS_EUSAGE, "--remat: at most 3 modes");
        int rc = sch_remat_parse(t, &out[*n]);
        if (rc < 0)
            return rc;
        for (int j = 0; j < *n; j++)
            if (out[j] == out[*n])
                return ps_error(PS_EUSAGE, "--remat: '%s' given twice (each value once: a "
                                 "point is stored once)", t);
        (*n)++;
    }
    return *n ? 0 : ps_error(PS_EUSAGE, "--remat: empty list");
}

/* The sibling of path named name ("results/validation.md" -> "results/NAME"). */
int vc_stem(const char *path, const char *suffix, char *buf, size_t n)
{
    size_t len = strlen(path);
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (dot && dot > (slash ? slash + 1 : path) && !strcmp(dot, ".md")) /* ".md": no stem */
        len = (size_t)(dot - path);
    if ((size_t)snprintf(buf, n, "%.*s%s", (int)len, path, suffix) >= n)
        return ps_error(PS_EUSAGE, "--report: a path of at most %zu characters for its "
                        "figures' names, got %zu", n - 1 - strlen(suffix), len);
    return 0;
}



int vc_parse(int argc, char **argv, struct check_args *a)
{
    static const struct option opts[] = {
        { "check", no_argument, 0, 'c' },           { "net", required_argument, 0, 'n' },
        { "batch", required_argument, 0, 'b' },     { "remat", required_argument, 0, 'r' },
        { "steps", required_argument, 0, 'S' },     { "warmup-steps", required_argument, 0, 'W' },
        { "schedule", required_argument, 0, 's' },  { "repeats", required_argument, 0, 'R' },
        { "profile", required_argument, 0, 'P' },   { "topology", required_argument, 0, 'T' },
        { "calib-out", required_argument, 0, 'o' }, { "db", required_argument, 0, 'd' },
        { "report", required_argument, 0, 'm' },    { "plot", required_argument, 0, 'g' },
        { "timeline", required_argument, 0, 't' },  { "quick", no_argument, 0, 'q' },
        { "seed", required_argument, 0, 'e' },      { "no-pin", no_argument, 0, 'N' },
        { "realtime", no_argument, 0, 'X' },        { "help", no_argument, 0, 'h' },
        { "calib-stages", required_argument, 0, 'G' },
        { "calib", required_argument, 0, 'C' },     { "rounds", required_argument, 0, 'U' },
        { "format", required_argument, 0, 'F' },   { "traces", required_argument, 0, 'x' },
        { "calib-at", required_argument, 0, 'A' },
        { 0, 0, 0, 0 },
    };
    const char *ks = "1,2", *ms = NULL, *rm = NULL;
    int c, rc = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("validate", argc, argv, "hK:M:", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); return 1;
        case 'c': break;
        case 'n': a->spec = optarg; break;
        case 'b': rc = ps_parse_count(optarg, "--batch", 1, 1 << 20, &a->batch); break;
        case 'K': ks = optarg; break;
        case 'M': ms = optarg; break;
        case 'r': rm = optarg; break;
        case 'S': rc = ps_parse_long(optarg, "--steps", 1, MSR_VCHECK_MAX_STEPS, &a->steps); break;
        case 'W':
            rc = ps_parse_long(optarg, "--warmup-steps", 0, MSR_VCHECK_MAX_STEPS, &a->warmup);
            break;
        case 's': a->schedule = optarg; break;
        case 'R': rc = ps_parse_long(optarg, "--repeats", 1, 10000, &a->repeats); break;
        case 'P': a->profile = optarg; break;
        case 'T': a->topology = optarg; break;
        case 'o': a->calib_out = optarg; break;
        case 'd': a->db = optarg; break;
        case 'm': a->report = optarg; break;
        case 'g': a->plot = optarg; break;
        case 't': a->timeline = optarg; break;
        case 'x': a->traces = optarg; break;
        case 'q': a->quick = 1; break;
        case 'e': rc = ps_parse_long(optarg, "--seed", 0, 0x7fffffffL, &a->seed); break;
        case 'N': a->no_pin = 1; break;
        case 'X': a->realtime = 1; break;
        case 'G':
            if (strcmp(optarg, "1") && strcmp(optarg, "K"))
                return ps_error(PS_EUSAGE, "--calib-stages: '1' or 'K', got '%s'", optarg);
            a->stages_per_K = !strcmp(optarg, "K");
            a->stages_given = 1;
            break;
        case 'C':
            if (strcmp(optarg, "pipelined") && strcmp(optarg, "passes"))
                return ps_error(PS_EUSAGE, "--calib: 'pipelined' or 'passes', got '%s'", optarg);
            a->passes = !strcmp(optarg, "passes");
            break;
        case 'A':
            if (strcmp(optarg, "point") && strcmp(optarg, "round"))
                return ps_error(PS_EUSAGE, "--calib-at: 'point' or 'round', got '%s'", optarg);
            a->at_round = !strcmp(optarg, "round");
            a->at_given = 1;
            break;
        case 'F': rc = ana_fmt_parse(optarg, ANA_FMTS_ALL, "--format", &a->fmt); break;
        case 'U': rc = ps_parse_long(optarg, "--rounds", 1, MSR_VCHECK_MAX_STEPS, &a->rounds); break;
        default: return -PS_EUSAGE;
        }
        if (rc < 0)
            return rc;
    }
    if (optind < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    if (!a->spec)
        return ps_error(PS_EUSAGE, "--check: --net is required (see pipesim "
                         "validate --check --help)");
    if (!a->profile != !a->topology)
        return ps_error(PS_EUSAGE, "--check: --profile and --topology go together "
                         "(or neither: calibrate first)");
    if (a->quick) {
        ms = ms ? ms : "1,4,16";
        rm = rm ? rm : "except_last";
        a->repeats = a->repeats ? a->repeats : 3;
        a->rounds = a->rounds ? a->rounds : 2;
    }
    a->rounds = a->rounds ? a->rounds : 3;
    if (a->steps * a->rounds > MSR_VCHECK_MAX_STEPS)
        return ps_error(PS_EUSAGE, "--check: --rounds x --steps at most %d", MSR_VCHECK_MAX_STEPS);
    if (a->at_given && (a->passes || a->profile))
        return ps_error(PS_EUSAGE, "--check: --calib-at places the pipelined calibration's "
                         "steps; %s has none", a->passes ? "--calib passes" : "--profile");
    if (!a->passes && !a->profile) {
        if (a->stages_given && !a->stages_per_K)
            return ps_error(PS_EUSAGE, "--check: --calib-stages 1 times layers alone; the "
                             "pipelined calibration runs the pipeline in K stages (--calib "
                             "passes for one stage)");
        a->stages_per_K = 1;
    }
    if ((rc = parse_ints(ks, "-K", 1, 4096, a->Ks, &a->n_K, 8)) < 0 ||
        (rc = parse_ints(ms ? ms : "1,2,4,8,16,32,64", "-M", 1, 1 << 16, a->Ms, &a->n_M, 32)) <
            0 ||
        (rc = parse_remats(rm ? rm : "all", a->remats, &a->n_remat)) < 0 ||
        (rc = ana_db_path_check(a->db, "--db", 1)) < 0)
        return rc;
    /* "" and "dir/" name no file: calibrate's --out refuses them (they wrote
     * -K1.csv in the current folder, dir/-sim.json) */
    if ((a->calib_out && (rc = cli_prefix_named(a->calib_out, "--calib-out",
                                                "PREFIX-K<k>.csv, PREFIX-K<k>.json and "
                                                "PREFIX-K<k>-fit.csv")) < 0) ||
        (a->traces && (rc = cli_prefix_named(a->traces, "--traces", "PREFIX-sim.json, "
                                             "PREFIX-meas.json, PREFIX-sim.csv and "
                                             "PREFIX-meas.csv")) < 0))
        return rc;
    /* an unknown name before anything runs (helper-66: it was found after the
     * calibration, as "no micro-batch size divides the batch") */
    if (a->schedule && (rc = sch_schedule_check(a->schedule, "--schedule")) < 0)
        return rc;
    return 0;
}
