/*
 * Determinism across worker counts, end to end: `pipesim sweep --jobs 1`
 * and `--jobs 2` (and --jobs 2 again) over every schedule, re-materialization
 * mode and partition strategy give the same database contents (every column
 * of every run and stage but the row id, the command line and the time of
 * the run), and `pipesim report` prints byte-identical tables, run CSV and
 * grid CSV from them.
 */
#include "helpers.h"

#include <sqlite3.h>
#include <unistd.h>

static char dir[64], root[512];

static void setup(void)
{
    th_tmpdir(dir, sizeof dir, "jobs");
    cr_assert(getcwd(root, sizeof root));
}

static void teardown(void)
{
    th_sh("rm -rf %s", dir);
}

/* Every run and its stages as text, by key, values exact (%.17g). */
static char *dump(const char *db)
{
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(
                     h, "SELECT r.model, r.model_hash, r.topology, r.topology_hash, r.schedule, "
                        "r.K, r.M, r.batch, r.remat, r.strategy, r.status, r.message, "
                        "r.partition, r.micro_batch, r.step_s, r.samples_per_s, "
                        "r.baseline_step_s, r.speedup, r.bubble_sim, r.bubble_analytic, r.fits, "
                        "r.n_ops, r.version, s.stage, s.device, s.first_layer, s.n_layers, "
                        "s.busy_frac, s.fwd_s, s.bwd_s, s.recomp_s, s.static_bytes, "
                        "s.peak_act_bytes, s.peak_bytes, s.capacity_bytes, s.fits FROM runs r "
                        "LEFT JOIN stages s ON s.run_id = r.id ORDER BY r.model, r.model_hash, "
                        "r.topology, r.topology_hash, r.schedule, r.remat, r.strategy, r.batch, "
                        "r.K, r.M, s.stage", -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rows++;
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            switch (sqlite3_column_type(st, c)) {
            case SQLITE_INTEGER: fprintf(f, "%lld", (long long)sqlite3_column_int64(st, c)); break;
            case SQLITE_FLOAT: fprintf(f, "%.17g", sqlite3_column_double(st, c)); break;
            case SQLITE_NULL: fputs("NULL", f); break;
            default: fprintf(f, "'%s'", (const char *)sqlite3_column_text(st, c)); break;
            }
            fputc(c + 1 < sqlite3_column_count(st) ? '|' : '\n', f);
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    fclose(f);
    cr_assert_gt(rows, 100, "only %d rows in %s", rows, db);
    return buf;
}

static void sweep(const char *name, int jobs)
{
    cr_assert_eq(th_sh("cd %s && %s sweep --model %s/models/profiles/transformer-small.csv "
                       "--topology %s/models/topologies/pcie-8gpu.json -K 1,2,3,4,6 "
                       "-M 1,2,4,8 --batch 8,16 --remat never,except_last,always "
                       "--strategy uniform,optimal,gpipe,balance-by-size --jobs %d --quiet "
                       "--db %s.db", dir, th_pipesim(), root, root, jobs,
                       name), 0, "sweep --jobs %d failed", jobs);
    cr_assert_eq(th_sh("cd %s && %s sweep --model mlp:layers=12,width=64 --topology "
                       "%s/models/topologies/chain-8-ideal.json -K 2,4 -M 2,4,8 --batch 8 "
                       "--schedule 1f1b --strategy uniform,optimal --jobs %d --quiet --db %s.db "
                       "&& %s sweep --model mlp:layers=12,width=64 --topology "
                       "%s/models/topologies/chain-8-ideal.json -K 2,4 -M 4,8 --batch 8 "
                       "--schedule interleaved:2 --jobs %d --quiet --db %s.db",
                       dir, th_pipesim(), root, jobs, name, th_pipesim(),
                       root, jobs, name), 0, "schedules --jobs %d failed", jobs);
    cr_assert_eq(th_sh("cd %s && %s report --db %s.db --metric normalized,speedup,throughput,"
                       "step,bubble,memory --csv %s.csv --grid-csv %s.grid.csv --out %s.txt",
                       dir, th_pipesim(), name, name, name, name), 0);
}

TestSuite(determinism_jobs, .init = setup, .fini = teardown, .timeout = 300);

Test(determinism_jobs, sweep_results_do_not_depend_on_jobs)
{
    sweep("j1", 1);
    sweep("j2", 2);
    sweep("j2b", 2);
    char p[128];
    snprintf(p, sizeof p, "%s/j1.db", dir);
    char *a = dump(p);
    snprintf(p, sizeof p, "%s/j2.db", dir);
    char *b = dump(p);
    snprintf(p, sizeof p, "%s/j2b.db", dir);
    char *c = dump(p);
    cr_assert(!strcmp(a, b), "database contents differ between --jobs 1 and --jobs 2");
    cr_assert(!strcmp(b, c), "database contents differ between two --jobs 2 runs");
    free(a);
    free(b);
    free(c);
    static const char *const outs[] = { "csv", "grid.csv", "txt" };
    for (int i = 0; i < 3; i++)
        cr_assert_eq(th_sh("cd %s && cmp j1.%s j2.%s && cmp j2.%s j2b.%s", dir, outs[i], outs[i],
                           outs[i], outs[i]), 0, "report %s differs across --jobs", outs[i]);
}
