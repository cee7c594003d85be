/* pipesim — the command-line front end: dispatch to cmd_<name>. */
#include "cli/cli.h"
#include "base/ps_error.h"
#include "base/ps_memavail.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"
#include "runtime/rt_layer.h"
#include "sched/sch_schedule.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int cmd_help(int argc, char **argv);

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "predict", cmd_predict, "simulate one training step: time, bubble, memory, trace" },
    { "gen", cmd_gen, "generate model profiles (mlp:...) and topologies (chain)" },
    { "gen-paper", cmd_gen_paper, "the GPipe paper's Table 1 models: generated vs published params" },
    { "partition", cmd_partition, "optimal stage partitions vs uniform/gpipe/by-size, simulated" },
    { "sweep", cmd_sweep, "every K x M x batch x remat x strategy, in parallel, into SQLite" },
    { "plan", cmd_plan, "the best K, replicas, M, schedule, remat and partition that fit N devices" },
    { "report", cmd_report, "K x M tables (like GPipe Table 2) and CSV from a sweep database" },
    { "plot", cmd_plot, "gnuplot PNG/SVG: speedup, bubble, memory vs K/M; trace timeline" },
    { "compare", cmd_compare, "simulated vs measured trace: errors and their causes" },
    { "compare-schedules", cmd_compare_schedules, "gpipe, 1f1b, interleaved:v, zb-h1/h2/v/auto, ... side by side: time, bubble, memory" },
    { "validate", cmd_validate, "real pipelined training on pinned CPU cores: measured trace" },
    { "calibrate", cmd_calibrate, "time a runtime net on this machine: fitted profile and topology" },
    { "import-torch", cmd_import_torch, "PyTorch profiler trace (Chrome JSON) to a measured profile CSV" },
    { "export-chakra", cmd_export_chakra, "simulated schedule as Chakra execution traces, one file per rank" },
    { "reproduce", cmd_reproduce, "published results reproduced as studies: gpipe, torchgpipe" },
    { "paper", cmd_paper, "alias of `reproduce gpipe`: GPipe's Tables 1-3 and partitions" },
    { "presets", cmd_presets, "the bundled topologies, profiles and model generators" },
    { "help", cmd_help, "this list; `help errors|schedules|CMD`: exit statuses, schedule names, CMD --help" },
};

static void usage(FILE *f)
{
    fprintf(f, "pipesim %s - pipeline-parallel training simulator\n\n"
               "usage: pipesim <command> [options]   (pipesim <command> --help)\n\n"
               "commands:\n", PS_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-18s %s\n", commands[i].name, commands[i].summary);
}

static int cmd_help(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "reproduce")) { /* help reproduce STUDY */
        char *args[] = { argv[1], argv[2], "--help", NULL };
        return cmd_reproduce(3, args);
    }
    if (argc > 2) /* one topic */
        return ps_error(PS_EUSAGE, "unexpected argument '%s' (help takes one topic, or "
                        "reproduce and a study)", argv[2]);
    if (argc > 1 && !strcmp(argv[1], "help")) { /* help help: the list */
        usage(stdout);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "errors")) {
        printf("| exit | code | meaning |\n|---|---|---|\n");
        for (int c = 1; c < PS_NERR; c++)
            printf("| %d | %s | %s |\n", ps_exit_status(c), ps_errname(c), ps_errdesc(c));
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "schedules")) {
        /* one a line, as --schedule takes them (the bash completion reads it) */
        for (int i = 0; i < sch_schedule_count(); i++)
            printf("%s\n", sch_schedule_form(i));
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
        /* help COMMAND is COMMAND --help */
        for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
            if (!strcmp(argv[1], commands[i].name) && commands[i].fn != cmd_help) {
                char *args[] = { argv[1], "--help", NULL };
                return commands[i].fn(2, args);
            }
        struct ps_suggest sg;
        ps_suggest_init(&sg, argv[1]);
        ps_suggest_add(&sg, "errors");
        ps_suggest_add(&sg, "schedules");
        for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
            ps_suggest_add(&sg, commands[i].name);
        return ps_error(PS_EUSAGE, "unknown topic '%s'%s (errors, schedules, or a command's "
                        "name)", argv[1], ps_suggest_hint(&sg));
    }
    usage(stdout);
    return 0;
}

int cli_help(const char *text)
{
    fputs(text, stdout);
    return 1;
}

/* Options with a value seen since cli_getopt_reset, by getopt's code. */
static unsigned char seen_opt[512];

void cli_getopt_reset(void)
{
    optind = 0;
    opterr = 0;
    memset(seen_opt, 0, sizeof seen_opt);
}

static int has_long(const struct option *longopts, const char *name)
{
    for (const struct option *o = longopts; o && o->name; o++)
        if (!strcmp(o->name, name))
            return 1;
    return 0;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts)
{
    char so[128];
    snprintf(so, sizeof so, ":%s", shortopts); /* ':' reports missing values */
    /* -o is --out (a file) wherever a command has --out */
    for (const struct option *o = longopts; o && o->name; o++)
        if (!strcmp(o->name, "out") && o->val == 'o' && o->has_arg == required_argument &&
            !strchr(shortopts, 'o'))
            snprintf(so + strlen(so), sizeof so - strlen(so), "o:");
    opterr = 0;
    int li = -1;
    int c = getopt_long(argc, argv, so, longopts, &li);
    if (li >= 0 && !strcmp(longopts[li].name, "out-dir") && !has_long(longopts, "out")) {
        /* getopt_long takes --out for --out-dir here; --out means a file */
        const char *typed = optarg && optind >= 2 && optarg == argv[optind - 1]
                                ? argv[optind - 2] : argv[optind - 1];
        size_t tl = strcspn(typed, "=");
        if (tl < strlen("--out")) {
            ps_error(PS_EUSAGE, "'%.*s' is ambiguous: --out is a file option; use --out-dir "
                     "DIR", (int)tl, typed);
            return -2;
        }
        if (tl == strlen("--out")) {
            ps_error(PS_EUSAGE, "--out is a file option; use --out-dir DIR");
            return -2;
        }
    }
    if (li >= 0) {
        /* the whole name or nothing: getopt_long takes any unambiguous prefix
         * ("--trace" for --traces), which would write files under a name the
         * user did not mean */
        const char *typed = longopts[li].has_arg != no_argument && optarg && optind >= 2 &&
                                    optarg == argv[optind - 1]
                                ? argv[optind - 2] : argv[optind - 1];
        size_t tl = strcspn(typed, "=");
        if (tl < 2 || strncmp(typed, "--", 2) || tl - 2 != strlen(longopts[li].name) ||
            strncmp(typed + 2, longopts[li].name, tl - 2)) {
            ps_error(PS_EUSAGE, "unknown option '%.*s'; did you mean '--%s'? (options are "
                     "not abbreviated; see pipesim %s --help)", (int)tl, typed,
                     longopts[li].name, cmd);
            return -2;
        }
    }
    if (c == '?' && optopt == 'o' && has_long(longopts, "out-dir")) {
        /* -o is --out, a file, wherever it exists; not a folder */
        ps_error(PS_EUSAGE, "-o is --out, a file option; use --out-dir DIR");
        return -2;
    }
    if (c == '?' || c == ':') {
        const char *opt = argv[optind - 1 < argc ? optind - 1 : argc - 1];
        if (c == ':')
            ps_error(PS_EUSAGE, "option '%s' needs a value (see pipesim %s --help)", opt,
                      cmd); /* main() already names the command */
        else {
            /* "--ouput=x" -> "--ouput", compared with every long option; an
             * unknown short option by its letter (getopt is still inside a
             * cluster such as "-np": argv[optind - 1] is the word before it) */
            char typed[64];
            snprintf(typed, sizeof typed, "%.*s", (int)strcspn(opt, "="), opt);
            /* inside a cluster getopt has not moved past its word: argv[optind] is
             * "-np" holding the letter (a long option's word, "--brute=1", is behind) */
            const char *cur = optind < argc ? argv[optind] : NULL;
            if (optopt > 0 && optopt < 128 && isprint(optopt) && cur && cur[0] == '-' &&
                cur[1] != '-' && strchr(cur + 1, optopt))
                snprintf(typed, sizeof typed, "-%c", optopt);
            for (const struct option *o = longopts; o && o->name; o++)
                if (o->has_arg == no_argument && strchr(opt, '=') && !strncmp(typed, "--", 2) &&
                    !strcmp(typed + 2, o->name)) { /* "--quiet=yes": a flag with a value */
                    ps_error(PS_EUSAGE, "option '%s' takes no value", typed);
                    return -2;
                }
            /* another command's name for an option this one has: said as such (the
             * spelling is too far off for a "did you mean") */
            static const char *const other[][2] = {
                { "--strategy", "--partition" }, { "--partition", "--strategy" },
                { "--schedules", "--schedule" }, { "--schedule", "--schedules" },
                { "--out", "--db" },             { "-o", "--db" },
                { "--stages", "-K" },            { "-k", "-K" },
                { "-m", "-M" },                  { "-K", "--stages" },
            };
            for (size_t k = 0; k < sizeof other / sizeof *other; k++) {
                const char *to = other[k][1];
                if (strcmp(typed, other[k][0]) ||
                    !(to[1] == '-' ? has_long(longopts, to + 2) : !!strchr(shortopts, to[1])))
                    continue;
                ps_error(PS_EUSAGE, "unknown option '%s'; in pipesim %s it is '%s' (see "
                         "pipesim %s --help)", typed, cmd, to, cmd);
                return -2;
            }
            struct ps_suggest sg;
            ps_suggest_init(&sg, typed);
            char names[64][40];
            int n = 0;
            for (const struct option *o = longopts; o && o->name && n < 64; o++, n++) {
                snprintf(names[n], sizeof names[n], "--%s", o->name);
                ps_suggest_add(&sg, names[n]);
            }
            ps_error(PS_EUSAGE, "unknown option '%s'%s (see pipesim %s --help)", typed,
                     ps_suggest_hint(&sg), cmd);
        }
        return -2;
    }
    /* an option with a value once: a second one silently replaced the first
     * (sweep -K 2 -K 4 swept K = 4 alone) */
    int valued = li >= 0 ? longopts[li].has_arg != no_argument
                         : c > 0 && c < 256 && strchr(so, c) && strchr(so, c)[1] == ':';
    /* a value that is the next word and one of this command's own options: the
     * value was left out (helper-130: "--trace --sensitivity" wrote a trace named
     * --sensitivity and dropped the flag); --trace=--x or ./--x names such a file */
    if (valued && optarg && optind >= 2 && optarg == argv[optind - 1] &&
        !strncmp(optarg, "--", 2) && optarg[2]) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(optarg + 2, "="), optarg + 2);
        if (has_long(longopts, name)) {
            const char *o = argv[optind - 2];
            if (!strncmp(o, "--", 2))
                ps_error(PS_EUSAGE, "option '%s' needs a value: '%s' is an option (a file of "
                         "that name: %s=%s or ./%s)", o, optarg, o, optarg, optarg);
            else
                ps_error(PS_EUSAGE, "option '%s' needs a value: '%s' is an option (a file of "
                         "that name: ./%s)", o, optarg, optarg);
            return -2;
        }
    }
    if (c >= 0 && c < (int)sizeof seen_opt && valued) {
        if (seen_opt[c]) {
            const char *lname = NULL; /* the long name of this code, if any */
            for (const struct option *o = longopts; o && o->name && !lname; o++)
                if (o->val == c && o->has_arg != no_argument)
                    lname = o->name;
            if (li >= 0 || !(c < 128 && isalnum(c)))
                ps_error(PS_EUSAGE, "option '--%s' given twice (each option once)",
                         li >= 0 ? longopts[li].name : lname ? lname : "?");
            else if (lname)
                ps_error(PS_EUSAGE, "option '-%c' (--%s) given twice (each option once)", c,
                         lname);
            else
                ps_error(PS_EUSAGE, "option '-%c' given twice (each option once)", c);
            return -2;
        }
        seen_opt[c] = 1;
    }
    return c;
}

int main(int argc, char **argv)
{
    rt_blas_reexec_single_thread(argv);
    ps_std_fds_reserve();
    if (argc < 2) {
        usage(stderr);
        return ps_exit_status(PS_EUSAGE);
    }
    int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
    if (help || !strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        if (argc > 2) { /* --help too: "--help extra" printed the list, the word unread */
            ps_error(PS_EUSAGE, "takes no argument (got '%s'%s)", argv[2],
                     help ? "; a command's help: pipesim help COMMAND" : "");
            fprintf(stderr, "pipesim %s: %s\n", argv[1], ps_errmsg());
            return ps_exit_status(PS_EUSAGE);
        }
        if (help)
            usage(stdout);
        else
            cli_version(stdout);
        int rc = ps_stdout_check(); /* as for every command's output */
        if (rc < 0) {
            fprintf(stderr, "pipesim: %s\n", ps_errmsg());
            return ps_exit_status(rc);
        }
        return 0;
    }
    ps_afile_signals_install();
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            ps_io_begin();
            /* a malformed limit: before any work (helper-119), but not for --help
             * nor `help` (helper-130: `help errors` failed on it, so exit 2 could
             * not be looked up), nor for sweep, which checks it under mpirun on
             * every rank, once */
            int rc = 0, help_asked = !strcmp(argv[1], "help");
            for (int a = 2; a < argc; a++)
                help_asked |= !strcmp(argv[a], "--help") || !strcmp(argv[a], "-h");
            if (!help_asked && strcmp(argv[1], "sweep"))
                rc = ps_mem_env_check();
            if (rc == 0)
                rc = commands[i].fn(argc - 1, argv + 1);
            ps_io_begin();
            /* a result that did not reach stdout is a failure too */
            if (rc >= 0)
                rc = ps_stdout_check();
            if (rc < 0) { /* silenced: another MPI rank printed it (ps_mpi.h) */
                if (!ps_error_silenced())
                    fprintf(stderr, "pipesim %s: %s\n", argv[1], ps_errmsg());
                return ps_exit_status(rc);
            }
            return 0;
        }
    struct ps_suggest sg;
    ps_suggest_init(&sg, argv[1]);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        ps_suggest_add(&sg, commands[i].name);
    ps_suggest_add(&sg, "--help"); /* --verison: "did you mean" too (helper-130) */
    ps_suggest_add(&sg, "--version");
    /* through ps_error: control characters shown as '?', a long name cut */
    ps_error(PS_EUSAGE, "unknown command '%s'%s (see pipesim --help)", argv[1],
             ps_suggest_hint(&sg));
    fprintf(stderr, "pipesim: %s\n", ps_errmsg());
    return ps_exit_status(PS_EUSAGE);
}
