#include "cli/cli_run.h"
#include "models/mdl_gen.h"
#include "base/ps_afile.h"
#include "traces/trc_trace.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"
#include "sim/sim_membudget.h"
#include "sched/sch_partitioner.h"
#include "sched/sch_schedule.h"
#include "base/ps_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cli_run_init(struct cli_run *r)
{
    memset(r, 0, sizeof *r);
    r->schedule = "gpipe";
    r->partition = "uniform";
    r->replicas = 1;
    r->remat = SCH_REMAT_EXCEPT_LAST;
}

int cli_run_option(struct cli_run *r, int c, const char *arg, int *rc)
{
    *rc = 0;
    switch (c) {
    case 'm': r->model = arg; break;
    case 't': r->topology = arg; break;
    case 'K': *rc = ps_parse_long(arg, "-K", 1, 1 << 20, &r->K); break;
    case 'M': *rc = ps_parse_long(arg, "-M", 1, 1 << 24, &r->M); break;
    case 'b':
        if ((*rc = ps_parse_double(arg, "--batch", &r->batch)) == 0)
            *rc = cli_check_batch(r->batch);
        break;
    case 'r':
        *rc = sch_remat_parse(arg, &r->remat);
        r->remat_set = 1;
        break;
    case 's': r->schedule = arg; break;
    case 'p': r->partition = arg; break;
    case 'R': *rc = ps_parse_long(arg, "--replicas", 1, 1 << 16, &r->replicas); break;
    default: return 0;
    }
    return 1;
}

int cli_run_parse(struct cli_run *r, const char *cmd, const char *help, int argc,
                  char **argv, const struct option *opts, cli_option_fn own, void *ctx)
{
    int c, rc;
    cli_getopt_reset();
    while ((c = cli_getopt(cmd, argc, argv, CLI_RUN_SHORT, opts)) != -1) {
        if (cli_run_option(r, c, optarg, &rc)) {
            if (rc < 0)
                return rc;
            continue;
        }
        if (c == 'h') {
            cli_help(help);
            if (r->help_generators) {
                fputc('\n', stdout);
                mdl_generators_help(stdout);
            }
            return 1;
        }
        if ((rc = own(ctx, c, optarg)) < 0)
            return rc;
    }
    return 0;
}

int cli_io_figure(const char *dir, const char *prefix, const char *name, const char *exts,
                  const char *opt)
{
    for (const char *e = exts; *e;) {
        size_t el = strcspn(e, ",");
        char path[4096];
        int rc;
        if ((size_t)snprintf(path, sizeof path, "%s/%s%s.%.*s", dir, prefix ? prefix : "", name,
                             (int)el, e) >= sizeof path)
            return ps_error(PS_EUSAGE, "%s: path too long", opt);
        if ((rc = ps_io_output(path, opt)) < 0)
            return rc;
        e += el + (e[el] == ',');
    }
    return 0;
}

/* An output's name in messages. */
static const char *out_name(const char *path)
{
    return strcmp(path, "-") ? path : "stdout";
}

int cli_output_print(struct ps_afile *af, const char *path, cli_print_fn print,
                     const void *ctx, char **held, size_t *held_len)
{
    int rc = ps_afile_open(af, path);
    if (rc < 0) {
        af->f = NULL;
        return rc;
    }
    /* stdout or a device gets no byte before every file is synced: its text
     * waits in memory (helper-86: a trace on stdout was printed, then --out
     * failed) */
    int mem = ps_afile_direct(af);
    FILE *f = mem ? ps_memstream_open(held, held_len) : af->f;
    if (!f)
        return ps_error(PS_ENOMEM, "out of memory");
    errno = 0;
    rc = print(ctx, f);
    int werr = rc == -PS_EIO && ferror(f), e = errno;
    if (mem && (ps_memstream_close(f, held, held_len) < 0 || werr))
        return rc < 0 && !werr ? rc : ps_error(PS_ENOMEM, "out of memory");
    if (werr) /* a printer's "write error" on its stream: name the output and why */
        return ps_error(PS_EIO, "%s: write failed: %s", out_name(path), strerror(e ? e : EIO));
    return rc;
}

int cli_output_release(struct ps_afile *af, const char *path, const char *held,
                       size_t held_len)
{
    errno = 0;
    if (held_len && fwrite(held, 1, held_len, af->f) != held_len)
        return ps_error(PS_EIO, "%s: write failed: %s", out_name(path),
                        strerror(errno ? errno : EIO));
    return ps_afile_sync(af);
}

int cli_write_outputs(const struct cli_output *out, int n)
{
    struct ps_afile af[8];
    char *buf[8] = { 0 };
    size_t len[8] = { 0 };
    int rc = 0, n_open = 0;
    if (n > (int)(sizeof af / sizeof *af))
        return ps_error(PS_EINVAL, "%d outputs in one set (at most 8)", n);
    for (int k = 0; k < n && rc == 0; k++) {
        af[k].f = NULL;
        if (!out[k].path)
            continue;
        rc = cli_output_print(&af[k], out[k].path, out[k].print, out[k].ctx, &buf[k], &len[k]);
        if (af[k].f)
            n_open = k + 1;
    }
    for (int k = 0; k < n_open && rc == 0; k++) /* the files, then the direct outputs */
        if (af[k].f && !ps_afile_direct(&af[k]))
            rc = ps_afile_sync(&af[k]);
    for (int last = 0; last < 2; last++) /* devices, then stdout: a full device stops it */
        for (int k = 0; k < n_open && rc == 0; k++)
            if (af[k].f && ps_afile_direct(&af[k]) && (af[k].f == stdout) == last)
                rc = cli_output_release(&af[k], out[k].path, buf[k], len[k]);
    if (rc == 0) {
        ps_afile_publish_begin(); /* a signal now leaves the old set or the new */
        for (int k = 0; k < n_open && rc == 0; k++)
            if (af[k].f)
                rc = ps_afile_commit(&af[k]);
        ps_afile_publish_end();
    }
    for (int k = 0; k < n_open; k++) {
        if (af[k].f)
            ps_afile_abort(&af[k]);
        free(buf[k]);
    }
    return rc;
}

int cli_print_chrome(const void *ctx, FILE *f) { return trc_print_chrome(ctx, f); }
int cli_print_csv(const void *ctx, FILE *f) { return trc_print_csv(ctx, f); }

int cli_write_output(const char *path, cli_print_fn print, const void *ctx)
{
    const struct cli_output out = { path, print, ctx };
    return cli_write_outputs(&out, 1);
}

int cli_schedule_list(char *buf, const char *opt, const char **names, int max, int *n)
{
    *n = 0;
    size_t len = strlen(buf);
    for (char *tok = buf;;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = 0;
        if (!*tok) { /* the list as given (the commas put back) */
            for (size_t k = 0; k < len; k++)
                buf[k] = buf[k] ? buf[k] : ',';
            return ps_error(PS_EUSAGE, "%s: '%s': an empty name in the list", opt, buf);
        }
        if (max > 0 && *n == max)
            return ps_error(PS_EUSAGE, "%s: at most %d schedules", opt, max);
        int rc = sch_schedule_check(tok, opt);
        if (rc < 0)
            return rc;
        for (int i = 0; i < *n; i++)
            if (sch_schedule_same(names[i], tok))
                return !strcmp(names[i], tok)
                           ? ps_error(PS_EUSAGE, "%s: '%s' given twice (each schedule once)",
                                      opt, tok)
                           : ps_error(PS_EUSAGE, "%s: '%s' and '%s' are the same schedule",
                                      opt, names[i], tok);
        names[(*n)++] = tok;
        if (!comma)
            return 0;
        tok = comma + 1;
    }
}

int cli_out_dir(const char *arg, int old, const char **dir, int *given)
{
    if (*given) /* the two spellings are one option; the error alone, on one line */
        return ps_error(PS_EUSAGE, "--out-dir given twice (--out is its old spelling; each "
                        "option once)");
    *given = old ? 2 : 1;
    *dir = arg;
    return 0;
}

int cli_study_dirs(const char *cmd, int out_given, int argc, char **argv, const char *out_dir,
                   const char *topo_dir, const char *data_dir)
{
    if (optind < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    if (!*out_dir)
        return ps_error(PS_EUSAGE, "--out-dir needs a directory");
    if ((topo_dir && !*topo_dir) || (data_dir && !*data_dir))
        return ps_error(PS_EUSAGE, "%s needs a directory",
                        topo_dir && !*topo_dir ? "--topologies" : "--data");
    if (out_given == 2) /* only once the options hold: an error is one line */
        cli_deprecated(cmd, "--out DIR", "--out-dir DIR");
    return 0;
}

void cli_deprecated(const char *cmd, const char *old, const char *now)
{
    fprintf(stderr, "pipesim %s: %s is deprecated, use %s\n", cmd, old, now);
}

int cli_run_check(const char *cmd, const struct cli_run *r, int argc, char **argv)
{
    if (optind < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    if (!r->model || !r->topology || !r->K || !r->M || r->batch == 0) {
        /* the ones missing named (helper-134: leaving out -K listed all five) */
        const char *name[] = { "--model", "--topology", "-K", "-M", "--batch" };
        int miss[] = { !r->model, !r->topology, !r->K, !r->M, r->batch == 0 }, n = 0, k = 0;
        for (int i = 0; i < 5; i++)
            n += miss[i];
        char list[96] = "";
        for (int i = 0; i < 5; i++)
            if (miss[i]) {
                k++;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         k == 1 ? "" : k == n ? " and " : ", ", name[i]);
            }
        return ps_error(PS_EUSAGE, "%s %s required (see pipesim %s --help)", list,
                        n == 1 ? "is" : "are", cmd);
    }
    int rc;
    if ((rc = ps_io_input(r->model, "--model")) < 0 ||
        (rc = ps_io_input(r->topology, "--topology")) < 0)
        return rc;
    return 0;
}

int cli_check_batch(double batch)
{
    if (!(batch >= 1) || batch != floor(batch))
        return ps_error(PS_EUSAGE, "--batch must be a positive integer (>= 1), got %s",
                        PS_DBL(batch));
    if (batch > CLI_MAX_BATCH) /* its digits whole: %g said 1.09951e+12 for 2^40 + 1 */
        return ps_error(PS_EUSAGE, "--batch %s is out of range: at most %.0f samples per "
                         "step", PS_DBL(batch), CLI_MAX_BATCH);
    return 0;
}

/* --partition STRATEGY: the partitioner's cut of the schedule's stages. */
static int strategy_partition(struct cli_run *r, enum sch_part_strategy st)
{
    struct ana_config c = { .profile = r->prof, .topo = r->topo, .schedule = r->schedule,
                            .K = (int)r->K, .M = (int)r->M, .batch = r->batch,
                            .remat = r->remat, .replicas = (int)r->replicas };
    int rc = ana_config_check(&c); /* predict's checks, in its words */
    if (rc < 0)
        return rc;
    /* under each device's memory; optimal as the engine's ledger judges the cut */
    return ana_partition_for(&c, st, 1, 0, &r->part);
}

int cli_run_open(struct cli_run *r, int with_partition, struct ana_config *cfg)
{
    int rc;
    if ((rc = mdl_model_open(r->model, &r->prof)) < 0 ||
        (rc = mdl_topology_load(r->topology, &r->topo)) < 0)
        return rc;
    if (with_partition) {
        int S; /* the schedule decides the number of stages (ana_predict builds it) */
        if ((rc = sch_schedule_stages(r->schedule, (int)r->K, (int)r->M, r->remat, &S)) < 0)
            return rc;
        enum sch_part_strategy st;
        if (isalpha((unsigned char)r->partition[0]) && strcmp(r->partition, "uniform")) {
            /* a strategy (optimal, gpipe, balance-by-size, lingvo): the partitioner's
             * choice under each device's memory, as `partition` makes it */
            if ((rc = sch_part_strategy_parse(r->partition, &st)) < 0) {
                struct ps_suggest sg;
                ps_suggest_init(&sg, r->partition);
                for (int i = 0; i < SCH_PART_NSTRATEGIES; i++)
                    ps_suggest_add(&sg, sch_part_strategy_name((enum sch_part_strategy)i));
                return ps_error(PS_EUSAGE, "--partition: '%s' is not uniform, a strategy "
                                "(optimal, gpipe, balance-by-size, lingvo) or layer counts such as "
                                "3,5,4,4%s", r->partition, ps_suggest_hint(&sg));
            }
            /* its probe is the schedule's op lists: refuse first what cannot
             * fit (ana_predict checks the run itself, in the form it takes) */
            if ((rc = sim_mem_check_run("simulation", r->schedule, (int)r->K, (int)r->M,
                                        r->remat, (int)r->replicas, 0, 0)) < 0 ||
                (rc = strategy_partition(r, st)) < 0)
                return rc;
        } else if ((rc = sch_partition_parse(r->partition, S, r->prof->n_layers,
                                             &r->part)) < 0) {
            return rc;
        }
    }
    cfg->profile = r->prof;
    cfg->topo = r->topo;
    cfg->schedule = r->schedule;
    cfg->K = (int)r->K;
    cfg->M = (int)r->M;
    cfg->batch = r->batch;
    cfg->remat = r->remat;
    cfg->partition = r->part;
    cfg->replicas = (int)r->replicas;
    return 0;
}

void cli_run_close(struct cli_run *r)
{
    sch_partition_free(r->part);
    mdl_topology_free(r->topo);
    mdl_profile_free(r->prof);
    r->part = NULL;
    r->topo = NULL;
    r->prof = NULL;
}

int cli_command_line(int argc, char **argv, char **out)
{
    size_t len = sizeof "pipesim";
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return ps_error(PS_ENOMEM, "out of memory");
    strcpy(s, "pipesim");
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    *out = s;
    return 0;
}
