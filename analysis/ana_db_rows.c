/* ana_db_rows: the rows of the sweep results database (see ana_db.h,
 * ana_db_int.h): a run looked up by its key, stored with its stages, loaded
 * back (checked by ana_db_check.h) in key order; the key order itself and
 * the hash stored beside each input. The file, its schema and its
 * transactions are in ana_db.c. */
#include "analysis/ana_db.h"
#include "analysis/ana_db_int.h"
#include "analysis/ana_db_check.h"
#include "models/mdl_device.h"
#include "models/mdl_gen.h"
#include "base/ps_error.h"
#include "base/ps_sqlite.h"
#include "base/ps_util.h"

#include <sqlite3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The key, and the load order, of the current schema and of version 1
 * (which has no replicas column: every run is read as one replica). */
#define LOAD_COLS(R)                                                                       \
    "SELECT id, " KEY_COLS_OF(R) ", status, message, partition, micro_batch, step_s,"      \
    " samples_per_s, baseline_step_s, speedup, bubble_sim, bubble_analytic, fits, n_ops"   \
    " FROM runs ORDER BY model, model_hash, topology, topology_hash, schedule, remat,"     \
    " strategy, batch, "
static const char load_sql[] = LOAD_COLS("replicas") "replicas, K, M";
static const char load_sql_v1[] = LOAD_COLS("1 AS replicas") "K, M";

/* The key's 11 parameters, in KEY_COLS order. */
static void bind_key(sqlite3_stmt *st, const struct ana_run *r)
{
    sqlite3_bind_text(st, 1, r->model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, r->model_hash, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, r->topology, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, r->topology_hash, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, r->schedule, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 6, r->K);
    sqlite3_bind_int(st, 7, r->M);
    sqlite3_bind_int64(st, 8, r->batch);
    sqlite3_bind_int(st, 9, r->replicas > 0 ? r->replicas : 1);
    sqlite3_bind_text(st, 10, r->remat, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 11, r->strategy, -1, SQLITE_TRANSIENT);
}

int ana_db_has(ana_db *d, const struct ana_run *key, int *found)
{
    sqlite3_reset(d->has);
    bind_key(d->has, key);
    int rc = sqlite3_step(d->has);
    *found = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        rc = ps_sqlite_error(d->db, rc, d->path, "looking up a run");
    else
        rc = 0;
    sqlite3_reset(d->has);
    return rc;
}

int ana_db_insert(ana_db *d, const struct ana_run *r, const char *command)
{
    sqlite3_stmt *st = d->ins_run;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    bind_key(st, r);
    int ok = !strcmp(r->status, "ok");
    sqlite3_bind_text(st, 12, r->status, -1, SQLITE_TRANSIENT);
    if (!ok)
        sqlite3_bind_text(st, 13, r->message, -1, SQLITE_TRANSIENT);
    if (ok) {
        sqlite3_bind_text(st, 14, r->partition ? r->partition : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(st, 15, r->micro_batch);
        sqlite3_bind_double(st, 16, r->step_s);
        sqlite3_bind_double(st, 17, r->samples_per_s);
        sqlite3_bind_double(st, 18, r->baseline_step_s);
        sqlite3_bind_double(st, 19, r->speedup);
        sqlite3_bind_double(st, 20, r->bubble_sim);
        sqlite3_bind_double(st, 21, r->bubble_analytic);
        sqlite3_bind_int(st, 22, r->fits);
        sqlite3_bind_int64(st, 23, r->n_ops);
    }
    sqlite3_bind_text(st, 24, command, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 25, PS_VERSION, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    if (step == SQLITE_CONSTRAINT &&
        sqlite3_extended_errcode(d->db) == SQLITE_CONSTRAINT_UNIQUE) {
        /* stored meanwhile by another sweep into this database (it checked
         * and inserted between our look-up and this insert): its row stands */
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return 1;
    }
    int rc = step == SQLITE_DONE ? 0 : ps_sqlite_error(d->db, step, d->path, "storing a run");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc < 0)
        return rc;
    sqlite3_int64 id = sqlite3_last_insert_rowid(d->db);
    for (int s = 0; ok && s < r->n_stages; s++) {
        const struct ana_run_stage *g = &r->stages[s];
        sqlite3_stmt *q = d->ins_stage;
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, id);
        sqlite3_bind_int(q, 2, s);
        sqlite3_bind_int(q, 3, g->device);
        sqlite3_bind_int(q, 4, g->first_layer);
        sqlite3_bind_int(q, 5, g->n_layers);
        sqlite3_bind_double(q, 6, g->busy_frac);
        sqlite3_bind_double(q, 7, g->fwd_s);
        sqlite3_bind_double(q, 8, g->bwd_s);
        sqlite3_bind_double(q, 9, g->recomp_s);
        sqlite3_bind_int64(q, 10, g->static_mem);
        sqlite3_bind_int64(q, 11, g->peak_act);
        sqlite3_bind_int64(q, 12, g->peak_mem);
        sqlite3_bind_double(q, 13, g->capacity);
        sqlite3_bind_int(q, 14, g->fits);
        if ((rc = ps_sqlite_step_done(d->db, d->path, q, "storing a stage")) < 0)
            return rc;
    }
    return 0;
}

void ana_runs_free(struct ana_run *runs, int n)
{
    if (!runs)
        return;
    for (int i = 0; i < n; i++) {
        free(runs[i].stages);
        free((char *)runs[i].model);
        free((char *)runs[i].topology);
        free(runs[i].partition);
    }
    free(runs);
}

static void text(sqlite3_stmt *st, int col, char *dst, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(dst, n, "%s", t ? (const char *)t : "");
}

/* A text column whole, as a new string ("" for NULL); NULL: out of memory. */
static char *text_dup(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return strdup(t ? (const char *)t : "");
}

/* A REAL column: SQLite stores NaN as NULL, read back as NaN (a value that
 * does not exist: no bubble formula, no speedup when the K=1 baseline was
 * beyond the engine's range), not as 0. */
static double real_or_nan(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

static const char load_stages_sql[] =
    "SELECT device, first_layer, n_layers, busy_frac, fwd_s, bwd_s, recomp_s, static_bytes,"
    " peak_act_bytes, peak_bytes, capacity_bytes, fits, stage FROM stages WHERE run_id = ?1"
    " ORDER BY stage";

/* The stages of run id into r, by st (load_stages_sql, prepared once per
 * load: compiling it per run cost more than reading the rows); st is reset
 * after use, success or not. */
static int load_stages(ana_db *d, sqlite3_stmt *st, sqlite3_int64 id, struct ana_run *r)
{
    int rc;
    sqlite3_int64 misplaced = -1; /* the first stage index not at its place */
    sqlite3_bind_int64(st, 1, id);
    int cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->n_stages == cap) {
            cap = cap ? 2 * cap : 8;
            struct ana_run_stage *g = realloc(r->stages, sizeof *g * (size_t)cap);
            if (!g) {
                sqlite3_reset(st);
                return ps_error(PS_ENOMEM, "out of memory");
            }
            r->stages = g;
        }
        if ((rc = ana_db_check_stage(st, d->path, id, sqlite3_column_int64(st, 12))) < 0) {
            sqlite3_reset(st);
            return rc;
        }
        if (misplaced < 0 && sqlite3_column_int64(st, 12) != r->n_stages)
            misplaced = sqlite3_column_int64(st, 12);
        struct ana_run_stage *g = &r->stages[r->n_stages++];
        g->device = sqlite3_column_int(st, 0);
        g->first_layer = sqlite3_column_int(st, 1);
        g->n_layers = sqlite3_column_int(st, 2);
        g->busy_frac = sqlite3_column_double(st, 3);
        g->fwd_s = sqlite3_column_double(st, 4);
        g->bwd_s = sqlite3_column_double(st, 5);
        g->recomp_s = sqlite3_column_double(st, 6);
        g->static_mem = sqlite3_column_int64(st, 7);
        g->peak_act = sqlite3_column_int64(st, 8);
        g->peak_mem = sqlite3_column_int64(st, 9);
        g->capacity = sqlite3_column_double(st, 10);
        g->fits = sqlite3_column_int(st, 11);
    }
    rc = rc == SQLITE_DONE ? 0 : ps_sqlite_error(d->db, rc, d->path, "reading stages");
    sqlite3_reset(st);
    /* as many as the run has, numbered in order: a row missing printed 0, an
     * extra one (stage 7 of K=2) its bogus memory */
    return rc < 0 ? rc : ana_db_check_stages(r, id, misplaced, d->path);
}

int ana_db_load(ana_db *d, struct ana_run **runs, int *n)
{
    *runs = NULL;
    *n = 0;
    sqlite3_stmt *st, *sst = NULL; /* sst: the stages, prepared at the first run */
    int rc = ps_sqlite_prepare(d->db, d->path, d->version == 1 ? load_sql_v1 : load_sql, &st,
                               "reading runs");
    if (rc < 0)
        return rc;
    struct ana_run *v = NULL;
    int cap = 0, cnt = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (cnt == cap) {
            cap = cap ? 2 * cap : 8;
            struct ana_run *w = realloc(v, sizeof *w * (size_t)cap);
            if (!w) {
                rc = ps_error(PS_ENOMEM, "out of memory");
                goto err_free_runs;
            }
            v = w;
        }
        /* a value sweep could not have written (an edited or damaged file):
         * refused before sqlite3_column_int truncates it or a report prints it */
        if ((rc = ana_db_check_run(st, d->path)) < 0)
            goto err_free_runs;
        struct ana_run *r = &v[cnt++];
        memset(r, 0, sizeof *r);
        if (!(r->model = text_dup(st, 1)) || !(r->topology = text_dup(st, 3)) ||
            !(r->partition = text_dup(st, 14))) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto err_free_runs;
        }
        text(st, 2, r->model_hash, sizeof r->model_hash);
        text(st, 4, r->topology_hash, sizeof r->topology_hash);
        text(st, 5, r->schedule, sizeof r->schedule);
        r->K = sqlite3_column_int(st, 6);
        r->M = sqlite3_column_int(st, 7);
        r->batch = (long)sqlite3_column_int64(st, 8);
        r->replicas = sqlite3_column_int(st, 9);
        text(st, 10, r->remat, sizeof r->remat);
        text(st, 11, r->strategy, sizeof r->strategy);
        text(st, 12, r->status, sizeof r->status);
        text(st, 13, r->message, sizeof r->message);
        r->micro_batch = sqlite3_column_double(st, 15);
        r->step_s = sqlite3_column_double(st, 16);
        r->samples_per_s = sqlite3_column_double(st, 17);
        r->baseline_step_s = real_or_nan(st, 18);
        r->speedup = real_or_nan(st, 19);
        /* a baseline that could not run: NULL now, 0 in databases written before */
        if (r->baseline_step_s == 0 && !strcmp(r->status, "ok"))
            r->baseline_step_s = r->speedup = NAN;
        r->bubble_sim = sqlite3_column_double(st, 20);
        r->bubble_analytic = real_or_nan(st, 21);
        r->fits = sqlite3_column_int(st, 22);
        r->n_ops = sqlite3_column_int64(st, 23);
        if ((!sst && (rc = ps_sqlite_prepare(d->db, d->path, load_stages_sql, &sst,
                                             "reading stages")) < 0) ||
            (rc = load_stages(d, sst, sqlite3_column_int64(st, 0), r)) < 0)
            goto err_free_runs;
    }
    if (rc != SQLITE_DONE) {
        rc = ps_sqlite_error(d->db, rc, d->path, "reading runs");
        goto err_free_runs;
    }
    sqlite3_finalize(st);
    sqlite3_finalize(sst);
    *runs = v;
    *n = cnt;
    return 0;

err_free_runs:
    sqlite3_finalize(st);
    sqlite3_finalize(sst);
    ana_runs_free(v, cnt);
    return rc;
}

int ana_run_cmp(const struct ana_run *a, const struct ana_run *b)
{
    int c;
    if ((c = strcmp(a->model, b->model)) || (c = strcmp(a->model_hash, b->model_hash)) ||
        (c = strcmp(a->topology, b->topology)) ||
        (c = strcmp(a->topology_hash, b->topology_hash)) ||
        (c = strcmp(a->schedule, b->schedule)) || (c = strcmp(a->remat, b->remat)) ||
        (c = strcmp(a->strategy, b->strategy)))
        return c < 0 ? -1 : 1;
    if (a->batch != b->batch)
        return a->batch < b->batch ? -1 : 1;
    if (a->replicas != b->replicas)
        return a->replicas < b->replicas ? -1 : 1;
    if (a->K != b->K)
        return a->K < b->K ? -1 : 1;
    if (a->M != b->M)
        return a->M < b->M ? -1 : 1;
    return 0;
}

int ana_db_input_hash(enum mdl_preset_kind kind, const char *arg,
                      const struct mdl_profile *prof, char hex[17])
{
    char path[4096];
    /* a topology with the device presets it takes (mdl_device.h) */
    if (!strchr(arg, ':') && mdl_preset_path(kind, arg, path, sizeof path) == 0 &&
        access(path, R_OK) == 0)
        return kind == MDL_PRESET_TOPOLOGY ? mdl_topology_input_hash(path, hex)
                                           : ps_file_hash(path, hex);
    if (access(arg, R_OK) == 0)
        return kind == MDL_PRESET_TOPOLOGY ? mdl_topology_input_hash(arg, hex)
                                           : ps_file_hash(arg, hex);
    if (kind == MDL_PRESET_PROFILE && prof) /* what the caller generated from it */
        return mdl_profile_hash(prof, hex);
    if (kind == MDL_PRESET_PROFILE) {
        /* a generator spec: the profile it generates, so that a row computed
         * before its generator changed is not taken for a current one */
        struct mdl_profile *p;
        int rc = mdl_model_open(arg, &p);
        if (rc == 0) {
            rc = mdl_profile_hash(p, hex);
            mdl_profile_free(p);
            return rc;
        }
        ps_error_clear(); /* not a spec: the text, as for any other input */
    }
    snprintf(hex, 17, "%016llx", (unsigned long long)ps_fnv1a(arg, strlen(arg), PS_FNV_INIT));
    return 0;
}
