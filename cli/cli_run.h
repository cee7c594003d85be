/*
 * cli_run — the options shared by the commands that simulate one
 * configuration (predict, partition, compare-schedules, export-chakra):
 * --model, --topology, -K, -M, --batch, --remat, and where a command takes
 * them --schedule, --partition, --replicas. One parser, one set of
 * messages, one way to open the inputs.
 * Ownership: cli_run_open allocates what it returns; cli_run_close frees it.
 */
#ifndef CLI_RUN_H
#define CLI_RUN_H

#include "analysis/ana_predict.h"
#include "cli/cli.h"

/* getopt_long entries; each command adds its own and the terminator. */
#define CLI_RUN_OPTIONS                                                         \
    { "model", required_argument, 0, 'm' }, { "topology", required_argument, 0, 't' }, \
    { "batch", required_argument, 0, 'b' }, { "remat", required_argument, 0, 'r' },    \
    { "help", no_argument, 0, 'h' }
#define CLI_RUN_SCHEDULE { "schedule", required_argument, 0, 's' }
#define CLI_RUN_PARTITION { "partition", required_argument, 0, 'p' }
#define CLI_RUN_REPLICAS { "replicas", required_argument, 0, 'R' }
#define CLI_RUN_SHORT "hK:M:"

struct cli_run {
    const char *model, *topology, *schedule, *partition;
    long K, M, replicas;
    double batch;
    enum sch_remat remat;
    int remat_set;          /* --remat was given */
    int help_generators; /* --help lists the generator specs (mdl_generators_help) */
    /* filled by cli_run_open */
    struct mdl_profile *prof;
    struct mdl_topology *topo;
    struct sch_partition *part;   /* NULL unless --partition is a command's */
};

void cli_run_init(struct cli_run *r);
/* 1 if c was a shared option (rc of its parse in *rc), 0 if not. */
int cli_run_option(struct cli_run *r, int c, const char *arg, int *rc);
/* A command's whole option loop: the shared options into r, --help (prints
 * help, returns 1: the command returns 0), every other option to
 * own(ctx, c, optarg), which returns 0 or an error (-PS_EUSAGE for one it
 * does not know: cli_getopt has set the message). 0 when all parsed, or
 * the first error. cli_run_check then checks what is left. */
typedef int (*cli_option_fn)(void *ctx, int c, const char *arg);
int cli_run_parse(struct cli_run *r, const char *cmd, const char *help, int argc,
                  char **argv, const struct option *opts, cli_option_fn own, void *ctx);
/* No stray arguments; model, topology, K, M and batch given; the model and
 * topology files declared as inputs (ps_io_input). */
int cli_run_check(const char *cmd, const struct cli_run *r, int argc, char **argv);
/* --batch: a positive integer, at most CLI_MAX_BATCH (as sweep, report and
 * plot take it), else PS_EUSAGE naming --batch. */
#define CLI_MAX_BATCH 1099511627776.0 /* 2^40 */
int cli_check_batch(double batch);
/* Opens the model and topology, builds the partition when with_partition
 * (for the schedule's stage count), and fills cfg's inputs. */
int cli_run_open(struct cli_run *r, int with_partition, struct ana_config *cfg);
void cli_run_close(struct cli_run *r);
/* "pipesim ARGV..." (the command's own argv, argv[0] its name) into a malloc'd
 * *out, the command line a database stores beside its runs. */
int cli_command_line(int argc, char **argv, char **out);

#endif
