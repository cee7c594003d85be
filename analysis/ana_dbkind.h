/*
 * ana_dbkind — which pipesim database an SQLite file holds, checked when it
 * is opened, before any work (SQLite's file-format convention: each kind of
 * file has its own PRAGMA application_id, header bytes 68..71, and its own
 * schema version in PRAGMA user_version):
 *
 *   kind        application_id                     user_version  tables
 *   sweep       ANA_DB_APPLICATION_ID  0x50535357  ANA_DB_SCHEMA      runs, stages
 *               'PSSW' (analysis/ana_db.h)         (2; 1 is read)
 *   validation  ANA_VCHECK_APPLICATION_ID          ANA_VCHECK_SCHEMA  runs, points,
 *               0x50535643 'PSVC' (below)          (2; 1 upgraded)    devices, discrepancies
 *   plan        ANA_PLAN_APPLICATION_ID            ANA_PLAN_SCHEMA    plans, configs
 *               0x5053504c 'PSPL' (below)
 *
 * ana_dbkind_check accepts a file that is
 *   - empty (no schema object, both pragmas 0): ANA_DB_EMPTY, the caller
 *     creates the schema and stamps it (ana_dbkind_stamp) in one transaction;
 *   - of the kind: its application_id, its user_version, its tables present
 *     (tables of the user's own beside them are left alone): ANA_DB_CURRENT;
 *   - of the kind but an older schema version the kind still reads (the
 *     sweep's version 1, before replicas; the validation's version 1, before
 *     the calibration's own steps, and 2, before each point's own op
 *     times): ANA_DB_OLDER; the reader reads PRAGMA user_version to know
 *     which, the writer upgrades it;
 *   - legacy, made before pipesim set application_id: application_id 0, a
 *     user_version the kind reads and exactly the kind's tables: ANA_DB_LEGACY,
 *     read as it is and stamped (upgraded) by the next writer.
 * Anything else is PS_EDB naming the file and what it is instead: the other
 * pipesim kind (by its application_id, or a legacy file by its tables),
 * another program's application_id, version 0 with other tables, or another
 * schema version. The check reads the header and sqlite_master only, so a
 * refused file is left byte for byte as it was.
 *
 * ana_db_path_check refuses the names SQLite keeps off disk: "" (a temporary
 * file deleted on close), ":memory:" and "file:" URIs (which may name an
 * in-memory database): the results would vanish when pipesim exits; and
 * what SQLite would report only as "unable to open database file" (exit 8):
 * a folder, or (create: the command makes a missing one) a new file in a
 * folder it cannot write, or (create) a dangling symbolic link whose file's
 * folder is missing (SQLite creates the file a link leads to; the folder is
 * not made there) or cannot be written, are PS_EIO (exit 5) with the reason.
 * SQLite's own failures are base/ps_sqlite.h's errors. Cost: O(schema objects).
 */
#ifndef ANA_DBKIND_H
#define ANA_DBKIND_H

#include <sqlite3.h>

/* The validation database of `pipesim validate --check` (measure/msr_validate_db.c)
 * is registered here, with the sweep's (analysis/ana_db.h), so the check of any
 * file knows every kind without including the folders that write them. */
#define ANA_VCHECK_SCHEMA 3
#define ANA_VCHECK_SCHEMA_OLDEST 1 /* read, and upgraded by the writer: 1 has no
                                      points.step_calib_own_ms, 1 and 2 no
                                      points.own_times_err and
                                      own_times_bubble_err_pts */
#define ANA_VCHECK_APPLICATION_ID 0x50535643 /* 'PSVC': PipeSim Validate --Check */

/* The search database of `pipesim plan` (analysis/ana_plan_db.c). */
#define ANA_PLAN_SCHEMA 1
#define ANA_PLAN_APPLICATION_ID 0x5053504c /* 'PSPL': PipeSim PLan */

enum ana_dbkind { ANA_DBKIND_SWEEP, ANA_DBKIND_VCHECK, ANA_DBKIND_PLAN, ANA_DBKIND_N };
enum ana_dbstate { ANA_DB_EMPTY, ANA_DB_CURRENT, ANA_DB_OLDER, ANA_DB_LEGACY };

/* PS_EUSAGE "opt 'path': why" for a name SQLite would not keep on disk. */
int ana_db_path_check(const char *path, const char *opt, int create);
/* What db (opened on path) holds, against kind; see above. */
int ana_dbkind_check(sqlite3 *db, const char *path, enum ana_dbkind kind,
                     enum ana_dbstate *state);
/* Sets application_id and user_version of kind; inside the caller's
 * write transaction. */
int ana_dbkind_stamp(sqlite3 *db, const char *path, enum ana_dbkind kind);

#endif
