/*
 * ana_report — tables from the sweep database: K x M grids like the GPipe
 * paper's Table 2 (rows M, columns K, throughput normalized to a chosen
 * (K, M) baseline), plus the stored speedup over one device, step time,
 * bubble and peak memory; CSV exports of the runs and of the grids.
 *
 * A group is one (model, topology, schedule, remat, strategy, batch,
 * replicas): a grid per group and metric; group headers name the replicas
 * when a selected run has more than one (K=4 R=1 and K=2 R=2 are then two
 * grids: compare them by speedup or throughput, which count all replicas,
 * or with best). Runs come sorted from ana_db_load, so output is
 * deterministic. Cells: "-" if the configuration could not run (footnote
 * with the first error), "*" after the value if it does not fit in memory.
 * Cost: O(runs) per grid.
 */
#ifndef ANA_REPORT_H
#define ANA_REPORT_H

#include <stdio.h>

#include "analysis/ana_db.h"

struct ana_report_opts {
    const char *metrics;     /* comma list of normalized, speedup, throughput, step,
                                bubble, memory; NULL = "normalized,speedup,bubble" */
    int base_K, base_M;      /* normalization cell; 0 = the group's smallest */
    /* filters (NULL / 0 = all) */
    const char *model, *topology, *schedule, *remat, *strategy;
    /* the start of the stored input hashes (hex, any case): groups of the same
       names swept from edited files differ only by these */
    const char *model_hash, *topology_hash;
    long batch;
    int replicas;
    int best;                /* ana_report_print: the best run only (most samples/s) */
    int fits_only;           /* with best: among those whose every stage fits */
};

int ana_report_check_metrics(const char *metrics);
/* A --model-hash / --topology-hash value: 1 to 16 hex digits (PS_EUSAGE). */
int ana_report_check_hash(const char *s, const char *opt);
int ana_run_selected(const struct ana_run *r, const struct ana_report_opts *o);
/* Same group: every key field but K and M (replicas included). */
int ana_run_same_group(const struct ana_run *a, const struct ana_run *b);
/* Largest simulated peak over stages, bytes (0 if none). */
double ana_run_peak(const struct ana_run *r);

/* The grids; with o->best, the one selected run with the most samples/s
 * (over every group; ties to the first in key order), among those that fit
 * with o->fits_only: PS_ENOFIT when none qualifies. */
int ana_report_print(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                     FILE *f);
/* One line per selected run. */
int ana_report_csv(const struct ana_run *runs, int n, const struct ana_report_opts *o, FILE *f);
/* One line per (group, metric, M, K) cell. */
int ana_report_grid_csv(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                        FILE *f);
/* The same cells as a JSON array of objects (report --format json). */
int ana_report_grid_json(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                         FILE *f);

#endif
