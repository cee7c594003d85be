/* ps_afile_io: the per-command registry of the files a command reads and
 * writes, and the refusals it gives (see ps_afile.h, ps_afile_int.h). */
#include "base/ps_afile_int.h"
#include "base/ps_error.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the per-command registry ---- */

struct io_ent {
    char opt[48];
    char *path, *resolved; /* resolved: only for outputs not there yet */
    int out, exists;
    dev_t dev;
    ino_t ino;
};
static struct io_ent *io;
static int n_io, cap_io;
static int io_armed; /* a command runs: ps_io_read records what it reads */
#define IO_READ_OPT "input" /* the option name of what ps_io_read recorded */
static pthread_mutex_t io_mu = PTHREAD_MUTEX_INITIALIZER; /* sweep workers read too */

static int io_was_read(const struct io_ent *e) { return !strcmp(e->opt, IO_READ_OPT); }

/* Drops the entries keep() refuses (all of them with keep NULL). */
static void io_drop(int (*keep)(const struct io_ent *))
{
    int n = 0;
    for (int i = 0; i < n_io; i++) {
        if (keep && keep(&io[i])) {
            io[n++] = io[i];
            continue;
        }
        free(io[i].path);
        free(io[i].resolved);
    }
    n_io = n;
    if (!n) {
        free(io);
        io = NULL;
        cap_io = 0;
    }
}

void ps_io_begin(void)
{
    pthread_mutex_lock(&io_mu);
    io_drop(NULL);
    io_armed = 1;
    pthread_mutex_unlock(&io_mu);
}

void ps_io_reset(void)
{
    pthread_mutex_lock(&io_mu);
    io_drop(io_was_read);
    pthread_mutex_unlock(&io_mu);
}

/* check: compare with the files declared so far (a declaration); 0: only
 * record an input a loader opened (ps_io_read), once per file. */
static int io_add_locked(const char *path, const char *opt, int out, int check)
{
    if (!path || !*path || !strcmp(path, "-"))
        return 0;
    struct stat st;
    int ex = stat(path, &st) == 0;
    if (ex && (S_ISCHR(st.st_mode) || (out && ps_afile_is_stdout(path, &st))))
        return 0; /* /dev/null twice is fine; so is our stdout */
    if (!ex && !out)
        return 0; /* cannot be overwritten; reading it will say why it is missing */
    char *res = NULL;
    if (!ex && ps_afile_resolve(path, &res) != 0 && !(res = ps_afile_lexical_resolve(path)))
        return ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; i < n_io; i++) {
        struct io_ent *e = &io[i];
        if (check && !out && ex && io_was_read(e) && e->dev == st.st_dev &&
            e->ino == st.st_ino) { /* read, now declared: messages name the option */
            char *np = strdup(path);
            if (!np) {
                free(res);
                return ps_error(PS_ENOMEM, "out of memory");
            }
            free(e->path);
            e->path = np;
            snprintf(e->opt, sizeof e->opt, "%s", opt);
            free(res);
            return 0;
        }
        if (!check) {
            if (!e->out && e->exists && e->dev == st.st_dev && e->ino == st.st_ino) {
                free(res);
                return 0; /* already recorded */
            }
            continue;
        }
        if (!out && !e->out)
            continue; /* reading a file twice is fine */
        int same = ex ? e->exists && e->dev == st.st_dev && e->ino == st.st_ino
                      : !e->exists && e->resolved && !strcmp(e->resolved, res);
        if (same) {
            free(res);
            return ps_error(PS_EUSAGE, "%s '%s' is the same file as %s '%s': %s", opt, path,
                             e->opt, e->path, out && e->out
                                 ? "two outputs would overwrite each other"
                                 : "the output would overwrite an input");
        }
    }
    if (n_io == cap_io) {
        int nc = cap_io ? 2 * cap_io : 8;
        struct io_ent *n = realloc(io, (size_t)nc * sizeof *n);
        if (!n) {
            free(res);
            return ps_error(PS_ENOMEM, "out of memory");
        }
        io = n;
        cap_io = nc;
    }
    struct io_ent *e = &io[n_io];
    memset(e, 0, sizeof *e);
    snprintf(e->opt, sizeof e->opt, "%s", opt);
    if (!(e->path = strdup(path))) {
        free(res);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    e->resolved = res;
    e->out = out;
    e->exists = ex;
    if (ex) {
        e->dev = st.st_dev;
        e->ino = st.st_ino;
    }
    n_io++;
    return 0;
}

static int io_add(const char *path, const char *opt, int out)
{
    pthread_mutex_lock(&io_mu);
    int rc = io_add_locked(path, opt, out, 1);
    pthread_mutex_unlock(&io_mu);
    return rc;
}

int ps_io_input(const char *path, const char *opt)
{
    return io_add(path, opt, 0);
}

int ps_name_fits(const char *path, const char *shown, const char *opt)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strlen(base) <= NAME_MAX)
        return 0;
    return ps_error(PS_EIO, "%s '%.60s...': cannot write: %s (a name of %zu bytes, at most %d)",
                    opt, shown, strerror(ENAMETOOLONG), strlen(base), NAME_MAX);
}

int ps_io_output(const char *path, const char *opt)
{
    if (path && !*path) /* as an empty --out-dir is: a usage error, not an I/O one */
        return ps_error(PS_EUSAGE, "%s needs a file name (an empty one names no file)", opt);
    int rc = path && strcmp(path, "-") ? ps_name_fits(path, path, opt) : 0;
    return rc < 0 ? rc : io_add(path, opt, 1);
}

int ps_io_read(const char *path)
{
    pthread_mutex_lock(&io_mu);
    int rc = io_armed ? io_add_locked(path, IO_READ_OPT, 0, 0) : 0;
    pthread_mutex_unlock(&io_mu);
    return rc;
}

/* ps_afile_int.h */
int ps_io_input_of(const struct stat *st, char *buf, size_t n)
{
    int found = 0;
    pthread_mutex_lock(&io_mu);
    for (int i = 0; i < n_io && !found; i++) {
        struct stat now;
        if (!io[i].out && io[i].exists && io[i].dev == st->st_dev &&
            io[i].ino == st->st_ino && stat(io[i].path, &now) == 0 &&
            now.st_dev == st->st_dev && now.st_ino == st->st_ino) {
            snprintf(buf, n, "%s '%s'", io[i].opt, io[i].path);
            found = 1;
        }
    }
    pthread_mutex_unlock(&io_mu);
    return found;
}

int ps_io_check_written(const char *path, const char *opt)
{
    struct stat st;
    char in[600];
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && ps_io_input_of(&st, in, sizeof in))
        return ps_error(PS_EUSAGE, "%s '%s' is the same file as %s: the output would "
                         "overwrite an input", opt, path, in);
    return 0;
}
