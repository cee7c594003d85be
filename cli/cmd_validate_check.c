/* pipesim validate --check: calibrate, then predict, run and compare over a
 * grid; results in SQLite and a report (measure/msr_validate.h). */
#include "measure/msr_calib.h"
#include "measure/msr_calib_plot.h"
#include "analysis/ana_dbkind.h"
#include "analysis/ana_format.h"
#include "measure/msr_validate.h"
#include "cli/cli.h"
#include "cli/cli_calib.h"
#include "models/mdl_gen.h"
#include "models/mdl_preset.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_gnuplot.h"
#include "base/ps_util.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: pipesim validate --check --net SPEC [--batch 256] [-K 1,2] [-M 1,2,4,...,64]\n"
    "                        [--remat all|never,except_last,always] [--steps 3]\n"
    "                        [--warmup-steps 1] [--schedule gpipe] [--repeats 5]\n"
    "                        [--profile F.csv --topology F.json] [--calib-out PREFIX]\n"
    "                        [--db results/validation.db] [--report results/validation.md]\n"
    "                        [--plot results/validation.png] [--timeline F.png]\n"
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
    "<= 1 point, peak activation memory <= 1%), naming the ops behind any miss. Appends\n"
    "every point to the SQLite database (created, or checked to be a validation\n"
    "database, before anything runs; a sweep database is refused), writes the\n"
    "Markdown report with its plot (predicted vs measured step time and bubble;\n"
    "gnuplot) and the two timelines of the worst point overlaid (--timeline, default\n"
    "beside the report). --traces PREFIX also writes that point's two traces as CSV,\n"
    "PREFIX-sim.csv and PREFIX-meas.csv (validate --trace-csv's columns), for\n"
    "pipesim compare or a script.\n"
    "--format csv|json prints on stdout only the results: one row per point (csv), or\n"
    "the points with the accuracy figures and targets (json); the progress goes to\n"
    "stderr. Default table (the accuracy figures).\n"
    "--quick: M 1,4,16, remat except_last, 3 calibration repeats, 2 rounds (make demo).\n"
    "--realtime: calibrate and run under SCHED_FIFO (root or CAP_SYS_NICE) so other\n"
    "jobs on shared cores stop preempting the measured steps (a warning if refused);\n"
    "it prints the kernel's RT throttling, which still stops FIFO threads for 50 ms of\n"
    "each second by default (kernel.sched_rt_runtime_us).\n"
    "Keep the net small: every point runs real training steps on the shared cores.\n";

/* The progress and prose: stdout, or stderr under --format csv|json. */
static FILE *hum;

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

static void join_args(int argc, char **argv, char *buf, size_t n)
{
    size_t off = snprintf(buf, n, "pipesim");
    for (int i = 0; i < argc && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, " %s", argv[i]);
}

/* The sibling of path named name ("results/validation.md" -> "results/NAME"). */
static void beside(const char *path, const char *name, char *buf, size_t n)
{
    const char *s = strrchr(path, '/');
    if (s)
        snprintf(buf, n, "%.*s/%s", (int)(s - path), path, name);
    else
        snprintf(buf, n, "%s", name);
}

struct check_args {
    const char *spec, *schedule, *profile, *topology, *calib_out, *db, *report, *plot;
    const char *timeline, *traces;
    long batch, steps, warmup, repeats, seed, rounds;
    enum ana_fmt fmt;
    int no_pin, quick, realtime, stages_per_K, stages_given, passes;
    int at_round, at_given;            /* --calib-at round; --calib-at given */
    int Ks[8], n_K, Ms[32], n_M, n_remat;
    enum sch_remat remats[3];
};

static int parse(int argc, char **argv, struct check_args *a)
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
        case 'b': rc = ps_parse_long(optarg, "--batch", 1, 1 << 20, &a->batch); break;
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
        (rc = ana_db_path_check(a->db, "--db")) < 0)
        return rc;
    return 0;
}

/* Profiles and topologies: loaded once for every K, or calibrated per K
 * just before K's points run (prepare). */
struct inputs {
    const struct check_args *a;
    int sizes[MSR_CALIB_MAX_SIZES], n_sizes;
    char prefix[512];
    struct mdl_profile *prof[8];
    struct mdl_topology *topo[8];
    int n;
    char pdesc[1400], tdesc[1400];
    msr_calib_session *sess;          /* --calib pipelined, between K's rounds */
    int per_round;                    /* calibration rounds before each grid round
                                         (--calib-at round), or steps of a size
                                         before each point (--calib-at point) */
    int own_K[8];                     /* the pipelined calibration's own steps per K, */
    struct msr_calib_own {            /* size and mode (msr_calib.pipe_step medians) */
        int n_sizes, sizes[MSR_CALIB_MAX_SIZES];
        double med[MSR_CALIB_MAX_SIZES][2];
    } own[8];
};

/* opts.own_step: the median of the calibration's own steps of K at micro
 * samples in mode remat (never or always), 0 when it ran none. */
static double own_step(void *ctx, int K, int micro, enum sch_remat remat)
{
    const struct inputs *in = ctx;
    for (int k = 0; k < in->n; k++)
        for (int i = 0; in->own_K[k] == K && i < in->own[k].n_sizes; i++)
            if (in->own[k].sizes[i] == micro && remat != SCH_REMAT_EXCEPT_LAST)
                return in->own[k].med[i][remat == SCH_REMAT_ALWAYS];
    return 0;
}

static int load_inputs(struct inputs *in)
{
    const struct check_args *a = in->a;
    int rc;
    if ((rc = mdl_profile_load(a->profile, &in->prof[0])) < 0 ||
        (rc = mdl_topology_load(a->topology, &in->topo[0])) < 0)
        return rc;
    in->n = 1;
    char h1[17], h2[17], tpath[4096];
    if ((rc = mdl_preset_path(MDL_PRESET_TOPOLOGY, a->topology, tpath, sizeof tpath)) < 0 ||
        (rc = ps_file_hash(a->profile, h1)) < 0 || (rc = ps_file_hash(tpath, h2)) < 0)
        return rc;
    snprintf(in->pdesc, sizeof in->pdesc, "%s (fnv1a %s)", a->profile, h1);
    snprintf(in->tdesc, sizeof in->tdesc, "%s (fnv1a %s)", a->topology, h2);
    return 0;
}

/* The sizes to calibrate at: batch / M for the M that divide the batch. */
static int calib_sizes(struct inputs *in)
{
    const struct check_args *a = in->a;
    char Ms[256] = "", ok[256] = "";
    for (int i = 0; i < a->n_M; i++) {
        snprintf(Ms + strlen(Ms), sizeof Ms - strlen(Ms), "%s%d", i ? "," : "", a->Ms[i]);
        if (a->batch % a->Ms[i] == 0)
            snprintf(ok + strlen(ok), sizeof ok - strlen(ok), "%s%d", *ok ? "," : "", a->Ms[i]);
    }
    if (!*ok)
        return ps_error(PS_EUSAGE, "--check: no -M of %s divides --batch %ld", Ms,
                         a->batch);
    if (a->calib_out)
        snprintf(in->prefix, sizeof in->prefix, "%s", a->calib_out);
    else
        cli_calib_default_prefix(a->spec, in->prefix, sizeof in->prefix);
    if (a->passes)
        snprintf(in->pdesc, sizeof in->pdesc, "calibrated in %s just before K's points:",
                 a->stages_per_K ? "K stages" : "one stage");
    else
        snprintf(in->pdesc, sizeof in->pdesc, "calibrated in K stages, pipelined in %s "
                 "steps %s:", a->schedule,
                 a->at_round ? "between the grid's rounds" : "right before each grid point of "
                                                            "their size");
    long reps = a->repeats ? a->repeats : 5;
    /* at least `repeats` timed steps of each size: rounds x (points of a
     * size) calls, each of per_round steps */
    long calls = a->at_round ? a->rounds : a->rounds * a->n_remat;
    in->per_round = (int)((reps + calls - 1) / calls);
    snprintf(in->tdesc, sizeof in->tdesc, "calibrated with each profile:");
    return cli_calib_sizes(a->batch, ok, NULL, in->sizes, &in->n_sizes);
}

static void calib_opts(const struct inputs *in, int K, struct msr_calib_opts *o)
{
    const struct check_args *a = in->a;
    int reps = (int)(a->repeats ? a->repeats : 5);
    *o = (struct msr_calib_opts){ .spec = a->spec, .sizes = in->sizes, .n_sizes = in->n_sizes,
                                  .repeats = reps, .warmup = 1,
                                  .n_stages = a->stages_per_K ? K : 1, .cpu = -1,
                                  .peer_cpu = -1, .seed = (uint64_t)a->seed,
                                  .batch = (int)a->batch };
    if (!a->passes) {
        /* alongside the grid, no early stop: --calib-at round, per_round
         * rounds before each grid round (at least `repeats` in all); --calib-at
         * point, the warm-up round and then per_round steps of a size before
         * each point of that size (calib_before_point), no more whole rounds */
        o->pipelined = 1;
        o->schedule = a->schedule;
        o->max_rounds = (int)(a->rounds * in->per_round);
        o->rel_se = 1e-9;
    }
    fprintf(hum, "== calibrating %s in %d stage%s for K=%d at micro-batch sizes", a->spec,
           o->n_stages, o->n_stages > 1 ? "s" : "", K);
    for (int i = 0; i < in->n_sizes; i++)
        fprintf(hum, "%s%d", i ? "," : " ", in->sizes[i]);
    if (!a->passes && a->at_round)
        fprintf(hum, " (layer passes, then %s steps: %d rounds before each of the grid's %ld)",
               a->schedule, in->per_round, a->rounds);
    else if (!a->passes)
        fprintf(hum, " (layer passes, a warm-up round of %s steps, then %d step%s of each size "
                "and remat mode before each of the grid's points of that size in each of its "
                "%ld rounds)", a->schedule, in->per_round, in->per_round > 1 ? "s" : "",
                a->rounds);
    fprintf(hum, "\n");
    fflush(hum);
}

/* The calibration's outputs for K: files, profile and topology. */
static int calib_done(struct inputs *in, int K, struct msr_calib *cal,
                      const struct mdl_profile **prof, const struct mdl_topology **topo)
{
    double r2 = 1;
    for (int l = 0; l < cal->n_layers; l++)
        for (int op = 0; op < MSR_CALIB_NOPS; op++)
            r2 = cal->layers[l].fit[op].r2 < r2 ? cal->layers[l].fit[op].r2 : r2;
    char ho[32], ll[32];
    ps_human_seconds(cal->handoff_spin.med, ho, sizeof ho);
    ps_human_seconds(cal->link_latency, ll, sizeof ll);
    char lk[256];
    if (msr_calib_messages(cal)) {
        char sc[32], rc_[32];
        ps_human_seconds(cal->msg_send_fit.a > 0 ? cal->msg_send_fit.a : 0, sc, sizeof sc);
        ps_human_seconds(cal->msg_recv_fit.a > 0 ? cal->msg_recv_fit.a : 0, rc_, sizeof rc_);
        snprintf(lk, sizeof lk, "the workers' message copies %s (send) and %s (receive) + "
                 "bytes, link %s from a send's end", sc, rc_, ll);
    } else {
        snprintf(lk, sizeof lk, "link %s + B / %.2f GB/s%s", ll, cal->link_bandwidth * 1e-9,
                 cal->pipelined && cal->n_handoff ? " (fitted to the steps' hand-offs)" : "");
    }
    fprintf(hum, "   layer fits a + b*n: R2 >= %.4f; hand-off %s; %s; GEMM %.1f GFLOP/s; "
            "took %.1f s\n", r2, ho, lk, cal->gemm_flops * 1e-9, cal->wall_s);
    char px[600];
    snprintf(px, sizeof px, "%s-K%d", in->prefix, K);
    int k = in->n, rc;
    in->own_K[k] = K; /* its own steps, kept for the points (own_step) */
    in->own[k].n_sizes = cal->pipelined ? cal->n_sizes : 0;
    for (int i = 0; i < in->own[k].n_sizes; i++) {
        in->own[k].sizes[i] = cal->sizes[i];
        for (int a = 0; a < 2; a++)
            in->own[k].med[i][a] = cal->pipe_step[i][a].n ? cal->pipe_step[i][a].med : 0;
    }
    if (!(rc = cli_calib_write(cal, px)) && !(rc = msr_calib_profile(cal, &in->prof[k])))
        rc = msr_calib_topology(cal, &in->topo[k]);
    msr_calib_free(cal);
    in->n++;
    if (rc < 0)
        return rc;
    size_t lp = strlen(in->pdesc), lt = strlen(in->tdesc);
    snprintf(in->pdesc + lp, sizeof in->pdesc - lp, " %s.csv", px);
    snprintf(in->tdesc + lt, sizeof in->tdesc - lt, " %s.json", px);
    fprintf(hum, "   wrote %s.csv, %s.json, %s-fit.csv\n", px, px, px);
    *prof = in->prof[k];
    *topo = in->topo[k];
    return 0;
}

/* --calib passes: all of it just before K's points. */
static int calibrate_K(void *ctx, int K, const struct mdl_profile **prof,
                       const struct mdl_topology **topo)
{
    struct inputs *in = ctx;
    if (in->n == 8)
        return ps_error(PS_EUSAGE, "--check: at most 8 values of -K");
    struct msr_calib_opts o;
    calib_opts(in, K, &o);
    struct msr_calib *cal;
    int rc = msr_calib_run(&o, &cal);
    return rc < 0 ? rc : calib_done(in, K, cal, prof, topo);
}

/* --calib pipelined: begun before K's rounds, its rounds between them. */
static int calib_begin(void *ctx, int K)
{
    struct inputs *in = ctx;
    if (in->n == 8)
        return ps_error(PS_EUSAGE, "--check: at most 8 values of -K");
    struct msr_calib_opts o;
    calib_opts(in, K, &o);
    return msr_calib_begin(&o, &in->sess);
}

static int calib_between(void *ctx, int K, int round)
{
    (void)K;
    struct inputs *in = ctx;
    if (!in->a->at_round) /* the warm-up round, before the first grid round */
        return round ? 0 : msr_calib_rounds(in->sess, 1);
    return msr_calib_rounds(in->sess, in->per_round);
}

/* --calib-at point: the calibration's steps of a size right before each of
 * the grid's points of that size. */
static int calib_before_point(void *ctx, int K, int micro, enum sch_remat remat, int round)
{
    (void)K, (void)remat, (void)round;
    struct inputs *in = ctx;
    int rc = 0;
    for (int i = 0; i < in->per_round && !rc; i++)
        rc = msr_calib_size_round(in->sess, micro);
    return rc;
}

static int calib_end(void *ctx, int K, const struct mdl_profile **prof,
                     const struct mdl_topology **topo)
{
    struct inputs *in = ctx;
    struct msr_calib *cal;
    int rc = msr_calib_end(in->sess, &cal);
    in->sess = NULL;
    return rc < 0 ? rc : calib_done(in, K, cal, prof, topo);
}

int cli_validate_check(int argc, char **argv)
{
    struct check_args a = { .schedule = "gpipe", .db = "results/validation.db",
                            .report = "results/validation.md", .batch = 256, .steps = 3,
                            .warmup = 1, .seed = 1 };
    int rc = parse(argc, argv, &a);
    hum = a.fmt == ANA_FMT_TABLE ? stdout : stderr;
    if (rc)
        return rc < 0 ? rc : 0;
    char plot_def[512], tl_def[512], cmd[2048], tr_sim[1024], tr_meas[1024];
    if (!a.plot) {
        beside(a.report, "validation.png", plot_def, sizeof plot_def);
        a.plot = plot_def;
    }
    if (!a.timeline) {
        beside(a.report, "validation-timeline.png", tl_def, sizeof tl_def);
        a.timeline = tl_def;
    }
    /* the calibrated PREFIX-K<k> files are checked against these when opened */
    if ((rc = cli_io_net(a.spec)) < 0 || (rc = ps_io_input(a.profile, "--profile")) < 0 ||
        (rc = ps_io_input(a.topology, "--topology")) < 0 ||
        (rc = ps_io_output(a.db, "--db")) < 0 || (rc = ps_io_output(a.report, "--report")) < 0 ||
        (rc = ps_io_output(a.plot, "--plot")) < 0 ||
        (rc = ps_io_output(a.timeline, "--timeline")) < 0)
        return rc;
    if (a.traces) {
        if (!*a.traces || snprintf(tr_sim, sizeof tr_sim, "%s-sim.csv", a.traces) >=
                              (int)sizeof tr_sim)
            return ps_error(PS_EUSAGE, "--traces: a prefix of 1 to %d characters, got %zu",
                            (int)sizeof tr_sim - 10, strlen(a.traces));
        snprintf(tr_meas, sizeof tr_meas, "%s-meas.csv", a.traces);
        if ((rc = ps_io_output(tr_sim, "--traces")) < 0 ||
            (rc = ps_io_output(tr_meas, "--traces")) < 0)
            return rc;
    }
    struct inputs *in = calloc(1, sizeof *in);
    struct msr_vcheck *v = NULL;
    if (!in)
        return ps_error(PS_ENOMEM, "out of memory");
    in->a = &a;
    cli_realtime(a.realtime);
    if ((rc = a.profile ? load_inputs(in) : calib_sizes(in)) < 0 ||
        (rc = ps_mkdirs_parent(a.db)) < 0 || (rc = msr_vcheck_db_prepare(a.db)) < 0 ||
        (rc = ps_mkdirs_parent(a.report)) < 0)
        goto out;
    struct msr_vcheck_opts o = { .spec = a.spec, .batch = (int)a.batch, .steps = (int)a.steps,
                                 .warmup_steps = (int)a.warmup, .schedule = a.schedule,
                                 .Ks = a.Ks, .n_K = a.n_K, .Ms = a.Ms, .n_M = a.n_M,
                                 .remats = a.remats, .n_remat = a.n_remat,
                                 .profile = in->prof[0], .topo = in->topo[0],
                                 .rounds = (int)a.rounds,
                                 .prepare = a.profile ? NULL : a.passes ? calibrate_K : calib_end,
                                 .begin = a.profile || a.passes ? NULL : calib_begin,
                                 .between = a.profile || a.passes ? NULL : calib_between,
                                 .before_point = a.profile || a.passes || a.at_round
                                                     ? NULL : calib_before_point,
                                 .prepare_ctx = in,
                                 .own_step = a.profile || a.passes ? NULL : own_step,
                                 .profile_desc = in->pdesc, .topology_desc = in->tdesc,
                                 .seed = (uint64_t)a.seed, .no_pin = a.no_pin,
                                 .progress = hum };
    fprintf(hum, "== grid: %s, batch %ld, %ld round%s of %ld warm-up + %ld timed steps per point\n",
           a.schedule, a.batch, a.rounds, a.rounds > 1 ? "s" : "", a.warmup, a.steps);
    if (a.realtime) { /* what SCHED_FIFO is still under */
        char line[256];
        int throttled = msr_rt_throttle_describe(NULL, line, sizeof line) == 1;
        fprintf(hum, "%s%s\n", line,
                throttled ? ": workers that spin in their receives are stopped for the rest of "
                            "each period once they have used it, so a step now and then runs "
                            "tens of ms longer (the spreads' upper ends)" : "");
    }
    fflush(hum);
    rc = msr_vcheck_run(&o, &v);
    if (a.realtime)
        msr_realtime(0);
    if (rc < 0)
        goto out;
    fprintf(hum, "\n");
    fflush(hum);
    rc = msr_vcheck_print(v, a.fmt, stdout);
    fflush(stdout);
    long pre = 0;
    for (int i = 0; i < v->n_points; i++)
        pre += v->pts[i].preempt_all;
    if (pre > 10 * v->n_points)
        fprintf(hum, "note            %ld involuntary context switches in the timed steps: other jobs "
               "shared the cores%s\n", pre, a.realtime ? "" : " (--realtime keeps them out)");
    int64_t run = 0;
    join_args(argc, argv, cmd, sizeof cmd);
    if (rc < 0 || (rc = msr_vcheck_store(v, a.db, cmd, &run)) < 0 ||
        (rc = msr_vcheck_report(v, a.report, a.plot)) < 0)
        goto out;
    fprintf(hum, "\nstored          run %lld in %s (%d points)\nreport          %s%s%s\n",
           (long long)run, a.db, v->n_points, a.report, ps_gnuplot_have(NULL) ? ", " : "",
           ps_gnuplot_have(NULL) ? a.plot : "");
    if (a.traces) {
        struct msr_accuracy acc;
        msr_vcheck_accuracy(v, 0, &acc);
        const struct msr_vpoint *w = &v->pts[acc.i_mk_max];
        if ((rc = ps_mkdirs_parent(tr_sim)) < 0 || (rc = trc_write_csv(w->sim_trace, tr_sim)) < 0 ||
            (rc = trc_write_csv(w->meas_trace, tr_meas)) < 0)
            goto out;
        fprintf(hum, "traces          %s, %s (the worst point, K=%d M=%d %s)\n", tr_sim, tr_meas,
                w->K, w->M, sch_remat_name(w->remat));
    }
    if (ps_gnuplot_have(NULL)) {
        struct msr_accuracy acc;
        msr_vcheck_accuracy(v, 0, &acc);
        const struct msr_vpoint *w = &v->pts[acc.i_mk_max];
        char title[640];
        snprintf(title, sizeof title, "%s, K=%d M=%d %s: simulated (upper) vs measured "
                 "(lower), makespan error %+.2f%%", v->spec, w->K, w->M,
                 sch_remat_name(w->remat), 100 * w->cmp->makespan_err);
        if ((rc = msr_plot_timelines(w->sim_trace, w->meas_trace, title, a.timeline)) < 0)
            goto out;
        fprintf(hum, "timeline        %s (the worst point, K=%d M=%d %s)\n", a.timeline, w->K, w->M,
               sch_remat_name(w->remat));
    }
out:
    if (a.realtime)
        msr_realtime(0);
    msr_vcheck_free(v);
    msr_calib_session_free(in->sess);
    for (int k = 0; k < 8; k++) {
        mdl_profile_free(in->prof[k]);
        mdl_topology_free(in->topo[k]);
    }
    free(in);
    return rc;
}
