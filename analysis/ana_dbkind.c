/* ana_dbkind: which pipesim database an SQLite file holds (see ana_dbkind.h). */
#include "analysis/ana_dbkind.h"
#include "analysis/ana_db.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_sqlite.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct kind {
    const char *name;     /* "a pipesim <name> database" */
    const char *tool;     /* the command that makes it */
    uint32_t app_id;
    int version;          /* the one written */
    int oldest;           /* the oldest still read (and upgraded by the writer) */
    const char *tables;   /* sorted by name, comma-separated */
} kinds[ANA_DBKIND_N] = {
    [ANA_DBKIND_SWEEP] = { "sweep", "pipesim sweep", ANA_DB_APPLICATION_ID, ANA_DB_SCHEMA,
                           ANA_DB_SCHEMA_OLDEST, "runs,stages" },
    [ANA_DBKIND_VCHECK] = { "validation", "pipesim validate --check",
                            ANA_VCHECK_APPLICATION_ID, ANA_VCHECK_SCHEMA, ANA_VCHECK_SCHEMA_OLDEST,
                            "devices,discrepancies,points,runs" },
    [ANA_DBKIND_PLAN] = { "plan", "pipesim plan", ANA_PLAN_APPLICATION_ID, ANA_PLAN_SCHEMA,
                          ANA_PLAN_SCHEMA, "configs,plans" },
};

/* "version 2" or "versions 1 to 2": what this pipesim reads of k. */
static const char *versions(const struct kind *k, char *buf, size_t n)
{
    if (k->oldest == k->version)
        snprintf(buf, n, "version %d", k->version);
    else
        snprintf(buf, n, "versions %d to %d", k->oldest, k->version);
    return buf;
}

static int readable(const struct kind *k, sqlite3_int64 version)
{
    return version >= k->oldest && version <= k->version;
}

int ana_db_path_check(const char *path, const char *opt, int create)
{
    if (!path || !*path)
        return ps_error(PS_EUSAGE, "%s '': an empty name is SQLite's temporary database, "
                         "deleted on exit, so the results would vanish; give a file path", opt);
    if (!strcmp(path, ":memory:"))
        return ps_error(PS_EUSAGE, "%s ':memory:': SQLite's in-memory database is lost on "
                         "exit, so the results would vanish; give a file path", opt);
    if (!strncmp(path, "file:", 5))
        return ps_error(PS_EUSAGE, "%s '%s': SQLite may read a 'file:' name as a URI (an "
                         "in-memory or temporary database); give a plain path (./%s for a "
                         "file of that name)", opt, path, path);
    /* what SQLite would only call "unable to open database file" */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return ps_error(PS_EIO, "%s '%s': cannot open the database: %s", opt, path,
                         strerror(EISDIR));
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) /* /dev/null: SQLite's journal beside */
        return ps_error(PS_EIO, "%s '%s': not a regular file (a database is a file)", opt,
                         path);
    int rc;
    if (create && (rc = ps_io_check_written(path, opt)) < 0) /* a topology found by name */
        return rc;
    /* a dangling symbolic link: SQLite creates the file it leads to, in that
     * file's folder; where that folder is missing it said only "unable to open
     * database file" (exit 8) */
    char *target = NULL;
    if (create && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0 &&
        (rc = ps_afile_resolve(path, &target)) != 0) {
        char to[4096];
        ssize_t n = readlink(path, to, sizeof to - 1);
        to[n > 0 ? n : 0] = 0;
        return ps_error(PS_EIO, "%s '%s': cannot create the database where the symbolic link "
                         "leads ('%s'): %s", opt, path, to, strerror(rc));
    }
    const char *where = target ? target : path;
    rc = 0;
    if (create && stat(where, &st) != 0 && errno == ENOENT) { /* to be created: its folder */
        char dir[4096];
        const char *sl = strrchr(where, '/');
        snprintf(dir, sizeof dir, "%.*s", sl ? (int)(sl - where) + (sl == where) : 1,
                 sl ? where : ".");
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) != 0)
            rc = ps_error(PS_EIO, "%s '%s': cannot create the database in %s: %s", opt, path,
                          dir, strerror(errno));
    }
    free(target);
    return rc;
}

/* The names of the tables, sorted, comma-separated (SQLite's own left out;
 * "..." when they do not fit). */
static int table_names(sqlite3 *db, const char *path, char *buf, size_t n)
{
    sqlite3_stmt *st;
    int rc = ps_sqlite_prepare(db, path, "SELECT name FROM sqlite_master WHERE type = 'table' "
                               "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name", &st,
                               "reading the schema");
    if (rc < 0)
        return rc;
    size_t len = 0;
    buf[0] = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        int k = snprintf(buf + len, n - len, "%s%s", len ? "," : "", t ? t : "");
        if (k < 0 || (size_t)k >= n - len) {
            snprintf(buf + (n > 4 ? n - 4 : 0), n > 4 ? 4 : n, "...");
            len = n - 1;
            continue;
        }
        len += (size_t)k;
    }
    int err = rc == SQLITE_DONE ? 0 : ps_sqlite_error(db, rc, path, "reading the schema");
    sqlite3_finalize(st);
    return err;
}

/* Whether every name of the comma-separated want is in the list have. */
static int has_all(const char *have, const char *want)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", want);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t k = strlen(t);
        const char *p = have;
        int found = 0;
        while (!found && (p = strstr(p, t))) {
            found = (p == have || p[-1] == ',') && (p[k] == ',' || !p[k]);
            p += k;
        }
        if (!found)
            return 0;
    }
    return 1;
}

int ana_dbkind_check(sqlite3 *db, const char *path, enum ana_dbkind kind,
                     enum ana_dbstate *state)
{
    const struct kind *k = &kinds[kind], *o = NULL;
    sqlite3_int64 app = 0, version = 0, objects = 0;
    char tables[512], vs[48];
    int rc;
    if ((rc = ps_sqlite_int(db, path, "PRAGMA application_id", "reading the schema version",
                            &app)) < 0 ||
        (rc = ps_sqlite_int(db, path, "PRAGMA user_version", "reading the schema version",
                            &version)) < 0 ||
        (rc = ps_sqlite_int(db, path, "SELECT count(*) FROM sqlite_master",
                            "reading the schema", &objects)) < 0 ||
        (rc = table_names(db, path, tables, sizeof tables)) < 0)
        return rc;
    uint32_t id = (uint32_t)app;
    if (id == k->app_id) {
        if (!readable(k, version))
            return ps_error(PS_EDB, "%s: a pipesim %s database of schema version %lld; this "
                             "pipesim reads %s (use another --db)", path, k->name,
                             (long long)version, versions(k, vs, sizeof vs));
        if (!has_all(tables, k->tables))
            return ps_error(PS_EDB, "%s: a pipesim %s database without its tables (%s "
                             "expected, found '%s')", path, k->name, k->tables, tables);
        *state = version == k->version ? ANA_DB_CURRENT : ANA_DB_OLDER;
        return 0;
    }
    for (int i = 0; i < ANA_DBKIND_N; i++)
        if (i != (int)kind && id == kinds[i].app_id)
            o = &kinds[i];
    if (o)
        return ps_error(PS_EDB, "%s: a pipesim %s database (made by %s), not a %s one; use "
                         "another --db", path, o->name, o->tool, k->name);
    if (id != 0)
        return ps_error(PS_EDB, "%s: not a pipesim %s database: application_id 0x%08x "
                         "belongs to another program (use another --db)", path, k->name,
                         (unsigned)id);
    if (version == 0) {
        if (objects == 0) {
            *state = ANA_DB_EMPTY;
            return 0;
        }
        return ps_error(PS_EDB, "%s: not a pipesim %s database (no schema version, other "
                         "tables: '%s'); use another --db", path, k->name, tables);
    }
    /* application_id 0 with a schema version: maybe made by an earlier pipesim
     * (the plan kind never existed without its application_id) */
    for (int i = 0; i < ANA_DBKIND_N; i++)
        if (i != (int)kind && i != ANA_DBKIND_PLAN && readable(&kinds[i], version) &&
            !strcmp(tables, kinds[i].tables))
            o = &kinds[i];
    if (o)
        return ps_error(PS_EDB, "%s: a pipesim %s database (made by %s of an earlier "
                         "release), not a %s one; use another --db", path, o->name, o->tool,
                         k->name);
    if (!readable(k, version))
        return ps_error(PS_EDB, "%s: schema version %lld; this pipesim reads %s databases "
                         "of %s (use another --db)", path, (long long)version,
                         k->name, versions(k, vs, sizeof vs));
    if (strcmp(tables, k->tables))
        return ps_error(PS_EDB, "%s: not a pipesim %s database (schema version %lld but "
                         "tables '%s', not %s); use another --db", path, k->name,
                         (long long)version, tables, k->tables);
    *state = ANA_DB_LEGACY;
    return 0;
}

int ana_dbkind_stamp(sqlite3 *db, const char *path, enum ana_dbkind kind)
{
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
             (int)(int32_t)kinds[kind].app_id, kinds[kind].version);
    return ps_sqlite_exec(db, path, sql, "stamping the schema");
}
