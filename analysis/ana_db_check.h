/*
 * ana_db_check — a row of the sweep database read back against what
 * pipesim sweep writes (analysis/ana_db_rows.c, ana_db_load), before any value
 * of it is used: a file edited by hand or damaged is refused, not printed
 * wrong (sqlite3_column_int truncated K=4294967298 to 2, an infinite
 * throughput was ranked best and made the JSON writer fail).
 *
 *   runs    K, M, batch, replicas: integers within what sweep's -K, -M,
 *           --batch and --replicas take (ANA_DB_*_MAX in ana_db.h). A run
 *           with status "ok" also: partition text; micro_batch, step_s,
 *           samples_per_s finite and >= 0; baseline_step_s and speedup
 *           NULL (no baseline) or finite and >= 0; bubble_sim finite,
 *           bubble_analytic NULL (no formula) or finite; fits 0 or 1;
 *           n_ops an integer >= 0. Any other status: message text. The
 *           outputs of a run that could not run are never read.
 *   stages  device, first_layer, n_layers: integers in 0..INT_MAX;
 *           static/activation/peak bytes: integers >= 0; busy_frac, fwd_s,
 *           bwd_s, recomp_s, capacity_bytes finite and >= 0; fits 0 or 1.
 *
 *   a run's stages: numbered 0 to n-1 (n rows); a run with status "ok"
 *           has as many as its partition names, a multiple of K (K, or K x
 *           v for the schedules with v stages a device); any other run none
 *           (ana_db_check_stages, after the run's stages are read).
 *
 * A value that is not is PS_EDB, one line naming the file, the table, the
 * row and the column: "x.db: runs row 7 (schedule gpipe, K=2, M=4, batch 8,
 * replicas 1): samples_per_s: inf is not a finite number".
 *
 * st: the statement of the row, stepped to it, its columns in the order
 * ana_db_load reads them (runs: id, the key, status, message, partition,
 * micro_batch ... n_ops; stages: device ... fits). Nothing is allocated.
 * Cost: O(columns).
 */
#ifndef ANA_DB_CHECK_H
#define ANA_DB_CHECK_H

#include <sqlite3.h>

int ana_db_check_run(sqlite3_stmt *st, const char *path);
int ana_db_check_stage(sqlite3_stmt *st, const char *path, sqlite3_int64 run_id,
                       sqlite3_int64 stage);
struct ana_run;
/* r as loaded (runs row id) with its stages: misplaced, the first stage
 * index read that was not the row's position (-1: none). */
int ana_db_check_stages(const struct ana_run *r, sqlite3_int64 id, sqlite3_int64 misplaced,
                        const char *path);

#endif
