/* ana_db_check: stored rows against what sweep writes (see ana_db_check.h). */
#include "analysis/ana_db_check.h"
#include "analysis/ana_db.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One column: its index in the row, its name, its kind ('i' integer, 'r'
 * real, 't' text), whether NULL is a value ("none": no baseline, no
 * formula); 'i': the range lo..hi and the sweep option that bounds it
 * (NULL: none); 'r': lo 0 when it must be >= 0, -1 when any finite value
 * is one. */
struct col {
    int col;
    const char *name;
    char kind, null_ok;
    sqlite3_int64 lo, hi;
    const char *opt;
};

#define NONNEG 0, 0, NULL
#define ANY -1, 0, NULL
#define COUNT 0, INT64_MAX, NULL

static const struct col run_key[] = {
    { 6, "K", 'i', 0, 1, ANA_DB_K_MAX, "-K" },
    { 7, "M", 'i', 0, 1, ANA_DB_M_MAX, "-M" },
    { 8, "batch", 'i', 0, 1, ANA_DB_BATCH_MAX, "--batch" },
    { 9, "replicas", 'i', 0, 1, ANA_DB_REPLICAS_MAX, "--replicas" },
};

static const struct col run_ok[] = { /* the outputs of a run with status "ok" */
    { 14, "partition", 't', 0, NONNEG },        { 15, "micro_batch", 'r', 0, NONNEG },
    { 16, "step_s", 'r', 0, NONNEG },           { 17, "samples_per_s", 'r', 0, NONNEG },
    { 18, "baseline_step_s", 'r', 1, NONNEG },  { 19, "speedup", 'r', 1, NONNEG },
    { 20, "bubble_sim", 'r', 0, ANY },          { 21, "bubble_analytic", 'r', 1, ANY },
    { 22, "fits", 'i', 0, 0, 1, NULL },         { 23, "n_ops", 'i', 0, COUNT },
};

static const struct col run_failed[] = { { 13, "message", 't', 0, NONNEG } };

static const struct col stage_cols[] = {
    { 0, "device", 'i', 0, 0, INT_MAX, NULL },  { 1, "first_layer", 'i', 0, 0, INT_MAX, NULL },
    { 2, "n_layers", 'i', 0, 0, INT_MAX, NULL }, { 3, "busy_frac", 'r', 0, NONNEG },
    { 4, "fwd_s", 'r', 0, NONNEG },             { 5, "bwd_s", 'r', 0, NONNEG },
    { 6, "recomp_s", 'r', 0, NONNEG },          { 7, "static_bytes", 'i', 0, COUNT },
    { 8, "peak_act_bytes", 'i', 0, COUNT },     { 9, "peak_bytes", 'i', 0, COUNT },
    { 10, "capacity_bytes", 'r', 0, NONNEG },   { 11, "fits", 'i', 0, 0, 1, NULL },
};

/* The stored value of column col as a message shows it, read by its own
 * type (no conversion): NULL, 42, inf, 'text' (control characters as '?',
 * at most 40 bytes), a blob of N bytes. */
static void show(sqlite3_stmt *st, int col, char *buf, size_t n)
{
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_NULL: snprintf(buf, n, "NULL"); return;
    case SQLITE_INTEGER: snprintf(buf, n, "%lld", sqlite3_column_int64(st, col)); return;
    case SQLITE_FLOAT: snprintf(buf, n, "%.15g", sqlite3_column_double(st, col)); return;
    case SQLITE_BLOB: snprintf(buf, n, "a blob of %d bytes", sqlite3_column_bytes(st, col));
        return;
    default: break;
    }
    const char *t = (const char *)sqlite3_column_text(st, col);
    char q[48];
    snprintf(q, sizeof q, "%.40s", t ? t : "");
    snprintf(buf, n, "'%s'%s", ps_printable_in_place(q), t && strlen(t) > 40 ? "..." : "");
}

/* 1 with what is wrong with column c ("K: 2.5 is not an integer") in why,
 * 0 when its value is one sweep writes; in a run, where says which runs
 * ("in a run with status ok") a NULL is refused for. */
static int bad(sqlite3_stmt *st, const struct col *c, const char *where, char *why, size_t n)
{
    char v[64];
    int type = sqlite3_column_type(st, c->col);
    show(st, c->col, v, sizeof v);
    if (type == SQLITE_NULL) {
        if (c->null_ok)
            return 0;
        snprintf(why, n, "%s: missing (NULL)%s", c->name, where);
        return 1;
    }
    if (c->kind == 't') {
        if (type == SQLITE_TEXT)
            return 0;
        snprintf(why, n, "%s: %s is not text", c->name, v);
        return 1;
    }
    if (c->kind == 'i') {
        sqlite3_int64 x = sqlite3_column_int64(st, c->col);
        if (type != SQLITE_INTEGER)
            snprintf(why, n, "%s: %s is not an integer", c->name, v);
        else if (x >= c->lo && x <= c->hi)
            return 0;
        else if (c->hi == INT64_MAX)
            snprintf(why, n, "%s: %s is below %lld", c->name, v, c->lo);
        else if (c->hi == c->lo + 1)
            snprintf(why, n, "%s: %s is out of range (%lld or %lld)", c->name, v, c->lo, c->hi);
        else
            snprintf(why, n, "%s: %s is out of range (%lld to %lld%s%s%s)", c->name, v, c->lo,
                     c->hi, c->opt ? ", what sweep " : "", c->opt ? c->opt : "",
                     c->opt ? " takes" : "");
        return 1;
    }
    double x = sqlite3_column_double(st, c->col);
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER)
        snprintf(why, n, "%s: %s is not a number", c->name, v);
    else if (!isfinite(x))
        snprintf(why, n, "%s: %s is not a finite number", c->name, v);
    else if (c->lo == 0 && x < 0)
        snprintf(why, n, "%s: %s is below 0", c->name, v);
    else
        return 0;
    return 1;
}

/* The first bad column of cols into why; 1 when there is one. */
static int first_bad(sqlite3_stmt *st, const struct col *cols, size_t ncols, const char *where,
                     char *why, size_t n)
{
    for (size_t i = 0; i < ncols; i++)
        if (bad(st, &cols[i], where, why, n))
            return 1;
    return 0;
}

#define FIRST_BAD(st, cols, where, why) \
    first_bad(st, cols, sizeof cols / sizeof *cols, where, why, sizeof why)

int ana_db_check_run(sqlite3_stmt *st, const char *path)
{
    char why[256], where[64];
    const char *status = (const char *)sqlite3_column_text(st, 12);
    int ok = status && !strcmp(status, "ok");
    snprintf(where, sizeof where, ok ? " in a run with status ok"
                                     : " in a run that could not run (status %.16s)",
             status ? status : "NULL");
    if (!FIRST_BAD(st, run_key, "", why) &&
        !(ok ? FIRST_BAD(st, run_ok, where, why) : FIRST_BAD(st, run_failed, where, why)))
        return 0;
    char sched[64], K[64], M[64], batch[64], R[64];
    const char *s = (const char *)sqlite3_column_text(st, 5);
    snprintf(sched, sizeof sched, "%.32s", s ? s : "NULL");
    ps_printable_in_place(sched);
    show(st, 6, K, sizeof K);
    show(st, 7, M, sizeof M);
    show(st, 8, batch, sizeof batch);
    show(st, 9, R, sizeof R);
    return ps_error(PS_EDB, "%s: runs row %lld (schedule %s, K=%s, M=%s, batch %s, replicas %s)"
                    ": %s", path, sqlite3_column_int64(st, 0), sched, K, M, batch, R, why);
}

int ana_db_check_stage(sqlite3_stmt *st, const char *path, sqlite3_int64 run_id,
                       sqlite3_int64 stage)
{
    char why[256];
    if (!FIRST_BAD(st, stage_cols, "", why))
        return 0;
    return ps_error(PS_EDB, "%s: stages row (run_id %lld, stage %lld): %s", path, run_id, stage,
                    why);
}

/* The stages partition names: its entries ("3,3,2": 3), or N of a partition
 * stored cut by an older release ("10,10,... (200 stages)"); 0 when it names
 * none. */
static long partition_stages(const char *part)
{
    const char *cut = strstr(part, ",... (");
    if (cut)
        return strtol(cut + 6, NULL, 10);
    if (!*part)
        return 0;
    long n = 1;
    for (const char *p = part; *p; p++)
        n += *p == ',';
    return n;
}

int ana_db_check_stages(const struct ana_run *r, sqlite3_int64 id, sqlite3_int64 misplaced,
                        const char *path)
{
    char why[160];
    int ok = !strcmp(r->status, "ok");
    long want = ok ? partition_stages(r->partition ? r->partition : "") : 0;
    if (misplaced >= 0)
        snprintf(why, sizeof why, "a stages row with stage %lld out of place (a run's n "
                 "stages are numbered 0 to n-1; it has %d row%s)", misplaced, r->n_stages,
                 r->n_stages == 1 ? "" : "s");
    else if (!ok && r->n_stages)
        snprintf(why, sizeof why, "%d stages row%s for a run that could not run (status "
                 "%.16s): sweep stores none", r->n_stages, r->n_stages == 1 ? "" : "s",
                 r->status);
    else if (ok && (r->n_stages != want || r->n_stages < r->K || r->n_stages % r->K))
        snprintf(why, sizeof why, "%d stages row%s where its partition has %ld stage%s (a "
                 "multiple of K=%d)", r->n_stages, r->n_stages == 1 ? "" : "s", want,
                 want == 1 ? "" : "s", r->K);
    else
        return 0;
    return ps_error(PS_EDB, "%s: runs row %lld (schedule %s, K=%d, M=%d, batch %ld, replicas "
                    "%d): %s", path, id, r->schedule, r->K, r->M, r->batch, r->replicas, why);
}
