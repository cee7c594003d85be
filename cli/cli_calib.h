/*
 * cli_calib — helpers shared by `pipesim calibrate` (cli/cmd_calibrate.c,
 * which defines them) and `pipesim validate --check`.
 */
#ifndef CLI_CALIB_H
#define CLI_CALIB_H

#include <stddef.h>

#include "measure/msr_calib.h"

/* Declares the files (ps_io_*): the PATH of a "file:PATH" net spec as an
 * input; PREFIX.csv, PREFIX.json and PREFIX-fit.csv as outputs of opt. */
int cli_io_net(const char *spec);
int cli_io_prefix(const char *prefix, const char *opt);
/* A file-name prefix option's value: "" or one ending in '/' (the files
 * would be ".csv", "dir/-sim.json") is PS_EUSAGE "OPT 'PREFIX': needs a
 * file-name prefix (the files are FILES)". cli_io_prefix checks it too. */
int cli_prefix_named(const char *prefix, const char *opt, const char *files);
/* Micro-batch sizes: mbs "4,8,..." if given, else batch / each of ms
 * (default "1,2,4,8,16,32,64"), duplicates dropped. sizes holds
 * MSR_CALIB_MAX_SIZES. PS_EUSAGE. */
int cli_calib_sizes(long batch, const char *ms, const char *mbs, int *sizes, int *n);
/* results/calib/<spec with punctuation folded to '-'>. */
void cli_calib_default_prefix(const char *spec, char *buf, size_t n);
/* on: msr_realtime(1), a warning on stderr if not permitted. */
void cli_realtime(int on);
/* pipesim validate --check (cli/cmd_validate_check.c). */
int cli_validate_check(int argc, char **argv);
/* Writes PREFIX.csv (profile), PREFIX.json (topology), PREFIX-fit.csv. */
int cli_calib_write(const struct msr_calib *c, const char *prefix);

#endif
