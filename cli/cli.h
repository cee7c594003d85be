/*
 * cli — the `pipesim <command>` front end. Each command lives in its own
 * cli/cmd_<name>.c as `int cmd_<name>(int argc, char **argv)` returning 0 or
 * a negative PS_E* code (after ps_error); main() prints the message and
 * exits with ps_exit_status(). Register a command by adding one line to the
 * table in cli/pipesim.c and its prototype here.
 *
 * Option parsing uses getopt_long; cli_getopt() wraps it so unknown options
 * and missing arguments become PS_EUSAGE errors naming the command.
 */
#ifndef CLI_H
#define CLI_H

#include <getopt.h>

int cmd_predict(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_partition(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_gen_paper(int argc, char **argv);
int cmd_compare_schedules(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_import_torch(int argc, char **argv);
int cmd_export_chakra(int argc, char **argv);
int cmd_paper(int argc, char **argv);
int cmd_reproduce(int argc, char **argv);
int cmd_presets(int argc, char **argv);
/* The options and run of `reproduce gpipe`, shared with its alias `paper`
 * (cli/cmd_paper.c); cmd names the command in usage errors. */
int cli_reproduce_gpipe(const char *cmd, int argc, char **argv);

/* Like getopt_long with opterr = 0; on '?' or ':' it sets a PS_EUSAGE
 * error naming cmd and the option and returns -2. Call with optind = 0
 * reset by cli_getopt_reset() first. */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts);
void cli_getopt_reset(void);
/* pipesim --version: version and build features (cli/cli_version.c). */
#include <stdio.h>
void cli_version(FILE *f);

/* Prints text to stdout and returns 1 (the caller returns 0 for --help). */
int cli_help(const char *text);

/* The end of every command that writes one output (--out, "-" = stdout):
 * opens it atomically (ps_afile), calls print(ctx, f), commits it, or
 * aborts it (nothing written) when print fails; print's or the commit's
 * code. In cli/cli_run.c. */
typedef int (*cli_print_fn)(const void *ctx, FILE *f);
/* An old option spelling that still works: one note on stderr,
 * "pipesim CMD: OLD is deprecated, use NEW". In cli/cli_run.c. */
void cli_deprecated(const char *cmd, const char *old, const char *now);
/* --out-dir DIR, or its old spelling --out DIR (old: 1), once between the two:
 * *given (0 before the first) becomes 1, or 2 for the old spelling; a second is
 * "given twice" (exit 2). In cli/cli_run.c. */
int cli_out_dir(const char *arg, int old, const char **dir, int *given);
/* The end of a study's options: no argument left over, and --out-dir,
 * --topologies and --data (NULL: not given) not empty; then, out_given 2 (the
 * old spelling, cli_out_dir), the deprecation note. In cli/cli_run.c. */
int cli_study_dirs(const char *cmd, int out_given, int argc, char **argv, const char *out_dir,
                   const char *topo_dir, const char *data_dir);
/* A list of schedules "a,b,c", as option opt (--schedules, sweep's --schedule)
 * takes it: split in place in buf into names[] (room for max; 0: as many as
 * buf has commas, plus one). An empty name, an unknown one, one given twice or
 * the same schedule by two names (breadth-first and breadth-first:1), or more
 * than max, is a usage error naming opt, before any work. The one parser of
 * compare-schedules, plot, plan and sweep. In cli/cli_run.c. */
int cli_schedule_list(char *buf, const char *opt, const char **names, int max, int *n);
int cli_write_output(const char *path, cli_print_fn print, const void *ctx);
/* Several outputs of one command as one set (predict's --trace, --trace-csv
 * and --out; validate's --trace, --trace-csv and --grads-out with the thread
 * backend): each printed to its temporary, all synced, then all renamed into
 * place, or, when one print or sync fails, none replaced. stdout and devices
 * get no byte before every file is synced (their text waits in memory),
 * devices before stdout. An entry with a NULL path is skipped. In
 * cli/cli_run.c. */
struct cli_output {
    const char *path;
    cli_print_fn print;
    const void *ctx;
};
int cli_write_outputs(const struct cli_output *out, int n);
/* Its two halves for one output, for a command that publishes a set of its
 * own (plan: figures, a report, a database row). cli_output_print opens path
 * and prints print(ctx) into its temporary or, for stdout or a device
 * (ps_afile_direct), into memory (*held, *held_len bytes; the caller frees
 * it); a write error names path. af->f is NULL only when the open failed;
 * else af is the caller's to commit or abort. cli_output_release writes the
 * text held for a direct output and flushes it (ps_afile_sync). */
struct ps_afile;
int cli_output_print(struct ps_afile *af, const char *path, cli_print_fn print,
                     const void *ctx, char **held, size_t *held_len);
int cli_output_release(struct ps_afile *af, const char *path, const char *held,
                       size_t held_len);
/* Printers of a trace (ctx: struct trc_trace) for such a set: Chrome JSON, CSV. */
int cli_print_chrome(const void *ctx, FILE *f);
int cli_print_csv(const void *ctx, FILE *f);
/* Declares the files a figure writes, DIR/PREFIX+NAME.EXT for each of the
 * extensions exts ("png,svg,gp,dat"), as outputs of option opt
 * (ps_io_output): before any work, an input or another output of the same
 * name is refused, as for --out. In cli/cli_run.c. */
int cli_io_figure(const char *dir, const char *prefix, const char *name, const char *exts,
                  const char *opt);

#endif
