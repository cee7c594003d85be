/* libFuzzer target: the SQLite results reader (ana_db_open/ana_db_load) and
 * the reports printed from what it loads. The input is the database file's
 * bytes; seeds are small sweep databases (tests/fuzz/corpus/results). */
#include "fuzz_common.h"
#include "analysis/ana_db.h"
#include "analysis/ana_report.h"

#include <fcntl.h>
#include <unistd.h>

static char db_path[64];
static int db_fd = -1;
static FILE *sink;

/* The file, and what SQLite leaves beside it when an input is a WAL-mode
 * database (its -wal and -shm files). */
static void remove_db(void)
{
    static const char *const ext[] = { "", "-wal", "-shm", "-journal" };
    char p[sizeof db_path + 16];
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        snprintf(p, sizeof p, "%s%s", db_path, ext[i]);
        unlink(p);
    }
}

/* Setup that does not depend on the input, done once: the file (on tmpfs
 * if there is one: nothing of it reaches a disk) stays open here and each
 * input is written over it, so an input costs a truncate and a write, not
 * a create, a close and two unlinks. ana_db_open still opens it by name,
 * as `pipesim report` does, with a connection of its own per input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(db_path, sizeof db_path, "%s/fuzz-results-%ld.db", dir, (long)getpid());
    db_fd = open(db_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    sink = fopen("/dev/null", "w");
    if (db_fd < 0 || !sink)
        abort();
    atexit(remove_db);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (ftruncate(db_fd, 0) != 0 || pwrite(db_fd, data, size, 0) != (ssize_t)size)
        abort();
    ana_db *db = NULL;
    int rc = ana_db_open(db_path, 0, &db);
    if (rc < 0) {
        fuzz_check_error(rc, db_path);
        FUZZ_CHECK(db == NULL);
        ps_error_clear();
        return 0;
    }
    struct ana_run *runs = NULL;
    int n = 0;
    rc = ana_db_load(db, &runs, &n);
    if (rc < 0) {
        fuzz_check_error(rc, NULL);
        FUZZ_CHECK(runs == NULL && n == 0);
    } else {
        FUZZ_CHECK(n >= 0 && (n == 0 || runs));
        for (int i = 0; i < n; i++)
            FUZZ_CHECK(runs[i].n_stages >= 0 && (runs[i].n_stages == 0 || runs[i].stages));
        static const struct ana_report_opts all = { .metrics =
                                                        "normalized,speedup,throughput,step,"
                                                        "bubble,memory" };
        struct ana_report_opts base = { .base_K = 2, .base_M = 1 };
        const struct ana_report_opts *opts[] = { &all, &base };
        for (int k = 0; k < 2; k++) {
            if ((rc = ana_report_print(runs, n, opts[k], sink)) < 0)
                fuzz_check_error(rc, NULL);
            if ((rc = ana_report_csv(runs, n, opts[k], sink)) < 0)
                fuzz_check_error(rc, NULL);
            if ((rc = ana_report_grid_csv(runs, n, opts[k], sink)) < 0)
                fuzz_check_error(rc, NULL);
        }
        ana_runs_free(runs, n);
    }
    ana_db_close(db);
    ps_error_clear();
    return 0;
}
