/* pipesim validate --check: calibrate, then predict, run and compare over a
 * grid; results in SQLite and a report (measure/msr_validate.h). */
#include "measure/msr_calib.h"
#include "analysis/ana_dbkind.h"
#include "analysis/ana_format.h"
#include "measure/msr_validate.h"
#include "cli/cli.h"
#include "cli/cli_calib.h"
#include "cli/cli_run.h"
#include "cli/cmd_validate_check.h"
#include "models/mdl_device.h"
#include "models/mdl_gen.h"
#include "models/mdl_preset.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_gnuplot.h"
#include "base/ps_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The progress and prose: stdout, or stderr under --format csv|json. */
static FILE *hum;

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
        (rc = ps_file_hash(a->profile, h1)) < 0 || (rc = mdl_topology_input_hash(tpath, h2)) < 0)
        return rc;
    snprintf(in->pdesc, sizeof in->pdesc, "%s (fnv1a %s)", a->profile, h1);
    snprintf(in->tdesc, sizeof in->tdesc, "%s (fnv1a %s, with its presets)", a->topology, h2);
    return 0;
}

/* A figure's PNG and the script kept beside it (<name>.gp for <name>.png,
 * msr_plot_gnuplot), declared as outputs. */
static int io_figure(const char *png, const char *opt)
{
    int rc = ps_io_output(png, opt);
    size_t n = png ? strlen(png) : 0;
    if (rc < 0 || !png)
        return rc;
    /* the figure is a PNG, its script kept beside it as .gp: another file name held
     * PNG bytes under it (t.jpg) and kept no script (helper-132); a device or pipe
     * (/dev/full) is written in place, with no script */
    struct stat st;
    if (stat(png, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return 0;
    if (n < 5 || strcmp(png + n - 4, ".png"))
        return ps_error(PS_EUSAGE, "%s '%s': the figure is a PNG; give a name ending in .png "
                        "(its gnuplot script is kept beside it as .gp)", opt, png);
    char gp[4096];
    if ((size_t)snprintf(gp, sizeof gp, "%.*s.gp", (int)(n - 4), png) >= sizeof gp)
        return ps_error(PS_EUSAGE, "%s: path too long", opt);
    /* the script beside the figure, written too (a folder in its way was found after the
     * grid: helper-99) */
    if ((rc = ps_io_output(gp, opt)) < 0 || (rc = ps_output_writable(png, opt, 1)) < 0 ||
        (rc = ps_output_writable(gp, opt, 1)) < 0)
        return rc;
    return 0;
}

/* The calibration's files of each K, PREFIX-K<k>.csv, .json, -fit.csv. */
static int io_calib_files(const struct inputs *in)
{
    for (int i = 0; i < in->a->n_K; i++) {
        char px[600];
        int rc;
        snprintf(px, sizeof px, "%s-K%d", in->prefix, in->a->Ks[i]);
        if ((rc = cli_io_prefix(px, "--calib-out")) < 0)
            return rc;
    }
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
    ps_printable_in_place(px); /* the files are written: the line stays one line */
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

/* The database before the grid (msr_vcheck_db_prepare): an existing one is
 * checked to be a validation one; a new one is made, so that SQLite itself
 * judges the path before the work (a path of over 512 bytes, /proc, were
 * refused after the grid when only its folder was checked: helper-99), and
 * tracked (*slot) so that a signal before the run is stored takes it away;
 * *made (malloc'd) names the file made, to remove if the run fails. */
static int db_prepare(const char *db, char **made, int *slot)
{
    struct stat st;
    *made = NULL;
    *slot = -1;
    if (stat(db, &st) == 0)
        return msr_vcheck_db_prepare(db);
    /* the file made is the one a link names (helper-100: a dangling link was taken
     * away, and the database SQLite made at its target left) */
    int e = ps_afile_resolve(db, made);
    if (e == ENOMEM)
        return ps_error(PS_ENOMEM, "out of memory");
    if (e && !(*made = strdup(db)))
        return ps_error(PS_ENOMEM, "out of memory");
    int rc = ps_afile_track(*made); /* before it exists: no window for a signal */
    if (rc < 0) {
        free(*made);
        *made = NULL;
        return rc;
    }
    *slot = rc;
    if ((rc = msr_vcheck_db_prepare(db)) < 0) {
        unlink(*made);
        ps_afile_untrack(*slot);
        *slot = -1;
        free(*made);
        *made = NULL;
    }
    return rc;
}

/* The folders of every output (the figures' only when gnuplot draws them),
 * made before the grid runs and recorded in made: taken away again, while
 * empty, when the run fails. */
static int make_folders(const struct check_args *a, const char *trace, struct ps_made *made)
{
    int rc, gp = ps_gnuplot_have(NULL);
    if ((rc = ps_mkdirs_parent_made(a->db, made)) < 0 ||
        (rc = ps_mkdirs_parent_made(a->report, made)) < 0 ||
        (gp && (rc = ps_mkdirs_parent_made(a->plot, made)) < 0) ||
        (gp && (rc = ps_mkdirs_parent_made(a->timeline, made)) < 0) ||
        (a->traces && (rc = ps_mkdirs_parent_made(trace, made)) < 0))
        return rc;
    return 0;
}

int cli_validate_check(int argc, char **argv)
{
    struct check_args a = { .schedule = "gpipe", .db = "results/validation.db",
                            .report = "results/validation.md", .batch = 256, .steps = 3,
                            .warmup = 1, .seed = 1 };
    int rc = vc_parse(argc, argv, &a);
    hum = a.fmt == ANA_FMT_TABLE ? stdout : stderr;
    if (rc)
        return rc < 0 ? rc : 0;
    char plot_def[512], tl_def[512], tr_sim[1024], tr_meas[1024], tj_sim[1024], tj_meas[1024];
    char *cmd = NULL;
    /* the figures beside the report, named after it (results/validation.md:
     * results/validation.png and -timeline.png), so another report's run does
     * not replace an earlier report's figures (helper-71) */
    if (!a.plot) {
        if ((rc = vc_stem(a.report, ".png", plot_def, sizeof plot_def)) < 0)
            return rc;
        a.plot = plot_def;
    }
    if (!a.timeline) {
        if ((rc = vc_stem(a.report, "-timeline.png", tl_def, sizeof tl_def)) < 0)
            return rc;
        a.timeline = tl_def;
    }
    /* every output before any work (the calibrated PREFIX-K<k> files below):
     * none may be an input or another's */
    if ((rc = cli_io_net(a.spec)) < 0 || (rc = ps_io_input(a.profile, "--profile")) < 0 ||
        (rc = ps_io_input(a.topology, "--topology")) < 0 ||
        (rc = ps_io_output(a.db, "--db")) < 0 || (rc = ps_io_output(a.report, "--report")) < 0 ||
        (rc = io_figure(a.plot, "--plot")) < 0 || (rc = io_figure(a.timeline, "--timeline")) < 0)
        return rc;
    if (a.traces) {
        /* the longest name, PREFIX-meas.json, must fit */
        if (snprintf(tj_meas, sizeof tj_meas, "%s-meas.json", a.traces) >= (int)sizeof tj_meas)
            return ps_error(PS_EUSAGE, "--traces: a prefix of 1 to %d characters, got %zu",
                            (int)sizeof tj_meas - 11, strlen(a.traces));
        snprintf(tr_sim, sizeof tr_sim, "%s-sim.csv", a.traces);
        snprintf(tr_meas, sizeof tr_meas, "%s-meas.csv", a.traces);
        snprintf(tj_sim, sizeof tj_sim, "%s-sim.json", a.traces);
        const char *tr[] = { tr_sim, tr_meas, tj_sim, tj_meas };
        for (int i = 0; i < 4; i++)
            if ((rc = ps_io_output(tr[i], "--traces")) < 0 ||
                (rc = ps_output_writable(tr[i], "--traces", 1)) < 0)
                return rc;
    }
    /* every output, before the grid's minutes of work (each folder is
     * created when written) */
    if ((rc = ps_output_writable(a.db, "--db", 1)) < 0 ||
        (rc = ps_output_writable(a.report, "--report", 1)) < 0 ||
        (rc = ps_output_writable(a.plot, "--plot", 1)) < 0 ||
        (rc = ps_output_writable(a.timeline, "--timeline", 1)) < 0)
        return rc;
    struct inputs *in = calloc(1, sizeof *in);
    struct msr_vcheck *v = NULL;
    struct ps_made made = { 0 }; /* the outputs' folders this run made */
    char *db_made = NULL; /* the database file made for this run */
    int db_slot = -1;
    int64_t run = 0;
    if (!in)
        return ps_error(PS_ENOMEM, "out of memory");
    in->a = &a;
    if ((rc = a.profile ? load_inputs(in) : calib_sizes(in)) < 0 ||
        (!a.profile && (rc = io_calib_files(in)) < 0))
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
    /* what the options alone decide (a K above the layers, a schedule with no
     * step at any M, a profile of another net), then the database, before any
     * output or folder is made (they were found after the database and the
     * report's folder were) */
    if ((rc = msr_vcheck_precheck(&o)) < 0 || (rc = make_folders(&a, tr_sim, &made)) < 0 ||
        (rc = db_prepare(a.db, &db_made, &db_slot)) < 0)
        goto out;
    cli_realtime(a.realtime);
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
    /* every output after the grid one set: all written, or none replaced and
     * nothing stored (the run was stored first, then each file published on
     * its own: a failing one left the rest of the set old, the run stored) */
    const char *const traces[4] = { tr_sim, tr_meas, tj_sim, tj_meas };
    if ((rc = cli_command_line(argc, argv, &cmd)) < 0 ||
        (rc = vc_publish(&a, v, cmd, traces, &run, &db_slot)) < 0)
        goto out;
    long pre = 0;
    for (int i = 0; i < v->n_points; i++)
        pre += v->pts[i].preempt_all;
    if (pre > 10 * v->n_points)
        fprintf(hum, "note            %ld involuntary context switches in the timed steps: "
                "other jobs shared the cores%s\n", pre,
                a.realtime ? "" : " (--realtime keeps them out)");
    struct msr_accuracy acc;
    msr_vcheck_accuracy(v, 0, &acc);
    const struct msr_vpoint *w = &v->pts[acc.i_mk_max];
    int gp = ps_gnuplot_have(NULL);
    if (gp)
        fprintf(hum, "timeline        %s (the worst point, K=%d M=%d %s)\n", a.timeline, w->K,
                w->M, sch_remat_name(w->remat));
    fprintf(hum, "\nstored          run %lld in %s (%d point%s)\nreport          %s%s%s\n",
            (long long)run, a.db, v->n_points, v->n_points == 1 ? "" : "s", a.report,
            gp ? ", " : "", gp ? a.plot : "");
    if (a.traces)
        fprintf(hum, "traces          %s, %s; %s, %s (the worst point, K=%d M=%d %s)\n", tj_sim,
                tj_meas, tr_sim, tr_meas, w->K, w->M, sch_remat_name(w->remat));
out:
    if (db_slot >= 0)
        ps_afile_untrack(db_slot);
    if (rc < 0 && db_made && run == 0) /* made for this run, which stored nothing */
        unlink(db_made);
    free(db_made);
    if (rc < 0) /* the calibration's files stay, and their folders */
        ps_made_undo(&made);
    else
        ps_made_keep(&made);
    if (a.realtime)
        msr_realtime(0);
    free(cmd);
    msr_vcheck_free(v);
    msr_calib_session_free(in->sess);
    for (int k = 0; k < 8; k++) {
        mdl_profile_free(in->prof[k]);
        mdl_topology_free(in->topo[k]);
    }
    free(in);
    return rc;
}
