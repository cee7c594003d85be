/*
 * cmd_validate_check — what `pipesim validate --check` was asked (its
 * options, parsed and checked by vc_parse in cmd_validate_check_args.c), a
 * helper its run uses, and its outputs' publication. Internal to cli/.
 * Ownership: the strings point into argv. Cost: O(argc).
 */
#ifndef CMD_VALIDATE_CHECK_H
#define CMD_VALIDATE_CHECK_H

#include "analysis/ana_format.h"
#include "sched/sch_schedule.h"

#include <stddef.h>
#include <stdint.h>

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

/* Parses argv into a (defaults filled, every value checked); 1 after
 * printing --help, < 0 with the message set. */
int vc_parse(int argc, char **argv, struct check_args *a);
/* path without its ".md", then suffix: the report's own figures' names. */
int vc_stem(const char *path, const char *suffix, char *buf, size_t n);
/* The run's outputs after the grid as one set (errors-and-outputs.md;
 * cmd_validate_check_out.c): the worst point's timelines, the report and its
 * plot, the four traces (traces[]: PREFIX-sim.csv, -meas.csv, -sim.json,
 * -meas.json, with a->traces) each to its temporary, all synced; then the
 * results on stdout (msr_vcheck_print; a device's text and stdout's wait in
 * memory until then); then, in one window no signal splits, the run stored
 * in a->db (*run its id) and every file renamed into place. A failing
 * output, stdout included, stores nothing and replaces nothing. The folders
 * are the caller's to make. */
struct msr_vcheck;
int vc_publish(const struct check_args *a, const struct msr_vcheck *v, const char *command,
               const char *const traces[4], int64_t *run, int *db_slot);

#endif
