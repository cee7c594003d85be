/* ps_afile: outputs that never destroy anything (see ps_afile.h); here the
 * files themselves: open, sync, commit, abort. */
#include "base/ps_afile_int.h"
#include "base/ps_error.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static mode_t g_umask;
static pthread_once_t umask_once = PTHREAD_ONCE_INIT;

static void read_umask(void)
{
    g_umask = umask(022);
    umask(g_umask);
}

/* ps_afile_int.h */
void ps_afile_umask_once(void)
{
    pthread_once(&umask_once, read_umask);
}

/* ---- the files ---- */

static void release(struct ps_afile *af)
{
    ps_afile_untrack(af->slot);
    free(af->path);
    free(af->target);
    free(af->tmp);
    memset(af, 0, sizeof *af);
    af->slot = -1;
}

static int fail_open(struct ps_afile *af, int e, const char *path)
{
    release(af);
    if (e == ENOMEM)
        return ps_error(PS_ENOMEM, "%s: out of memory opening it", path);
    return ps_error(PS_EIO, "%s: cannot write: %s", path, strerror(e));
}

int ps_afile_direct(const struct ps_afile *af)
{
    return af->f && !af->tmp;
}

/* The temporary beside target: "<dir>/.<name>.XXXXXX" (name cut to fit). */
static int make_tmp(struct ps_afile *af, mode_t mode, const struct stat *old)
{
    const char *sl = strrchr(af->target, '/'); /* ps_afile_resolve() made it absolute */
    int dl = (int)(sl - af->target);
    if (asprintf(&af->tmp, "%.*s/.%.200s.XXXXXX", dl, af->target, sl + 1) < 0) {
        af->tmp = NULL;
        return ENOMEM;
    }
    sigset_t oldmask;
    ps_afile_create_begin(&oldmask);
    int fd = mkostemp(af->tmp, O_CLOEXEC), e = errno;
    if (fd >= 0 && (af->slot = ps_afile_track(af->tmp)) < 0) {
        unlink(af->tmp);
        close(fd);
        fd = -1;
        e = ps_errcode() == PS_ENOMEM ? ENOMEM : EMFILE;
    }
    ps_afile_create_end(&oldmask);
    if (fd < 0) {
        free(af->tmp);
        af->tmp = NULL;
        return e;
    }
    fchmod(fd, mode);
    if (old && (old->st_uid != geteuid() || old->st_gid != getegid()))
        if (fchown(fd, old->st_uid, old->st_gid) != 0) { /* only root may: keep ours */
        }
    if (!(af->f = fdopen(fd, "w"))) {
        e = errno;
        close(fd);
        unlink(af->tmp);
        return e;
    }
    return 0;
}

int ps_afile_open(struct ps_afile *af, const char *path)
{
    memset(af, 0, sizeof *af);
    af->slot = -1;
    if (!strcmp(path, "-")) {
        af->f = stdout;
        return 0;
    }
    if (!*path)
        return ps_error(PS_EIO, "'': cannot write: %s", strerror(ENOENT));
    if (!(af->path = strdup(path)))
        return ps_error(PS_ENOMEM, "%s: out of memory opening it", path);
    struct stat st;
    if (stat(path, &st) == 0) {
        if (ps_afile_is_stdout(path, &st)) { /* /dev/stdout, or the file stdout goes to */
            af->f = stdout;
            return 0;
        }
        if (S_ISDIR(st.st_mode))
            return fail_open(af, EISDIR, path);
        if (!S_ISREG(st.st_mode)) { /* a device, FIFO or socket: in place */
            int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
            if (fd < 0)
                return fail_open(af, errno, path);
            if (!(af->f = fdopen(fd, "w"))) {
                int e = errno;
                close(fd);
                return fail_open(af, e, path);
            }
            return 0;
        }
    }
    int e = ps_afile_resolve(path, &af->target);
    if (e)
        return fail_open(af, e, path);
    const struct stat *old = NULL;
    mode_t mode;
    pthread_once(&umask_once, read_umask);
    if (stat(af->target, &st) == 0 && S_ISREG(st.st_mode)) {
        char in[600];
        if (ps_io_input_of(&st, in, sizeof in)) {
            int rc = ps_error(PS_EUSAGE, "%s is the same file as %s: the output would "
                               "overwrite an input", path, in);
            release(af);
            return rc;
        }
        mode = st.st_mode & 07777;
        old = &st;
    } else {
        mode = 0666 & ~g_umask;
    }
    if ((e = make_tmp(af, mode, old)) != 0)
        return fail_open(af, e, path);
    return 0;
}

int ps_afile_commit(struct ps_afile *af)
{
    int rc = 0;
    if (!af->f) {
        release(af);
        return 0;
    }
    if (af->f == stdout) {
        errno = 0;
        int bad = fflush(stdout) != 0, e = errno;
        bad |= ferror(stdout);
        if (bad) {
            rc = ps_error(PS_EIO, "%s: write failed: %s", af->path ? af->path : "stdout",
                           strerror(e ? e : EIO));
            ps_afile_publish_fail(); /* a set it is in goes back */
        }
        release(af);
        return rc;
    }
    errno = 0;
    int bad = fflush(af->f) != 0, e = errno;
    if (!bad && ferror(af->f))
        bad = 1;
    if (!bad && af->tmp && fsync(fileno(af->f)) != 0 && errno != EINVAL) {
        bad = 1;
        e = errno;
    }
    if (fclose(af->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    af->f = NULL;
    struct stat st;
    char in[600];
    if (!bad && af->tmp && stat(af->target, &st) == 0 && ps_io_input_of(&st, in, sizeof in)) {
        /* an input read after the output was opened (a bundled name, a
         * preset file): the result is dropped, the input kept */
        unlink(af->tmp);
        rc = ps_error(PS_EUSAGE, "%s is the same file as %s: the output would overwrite an "
                       "input", af->path, in);
        ps_afile_publish_fail(); /* a set it is in goes back */
        release(af);
        return rc;
    }
    int in_set = atomic_load(&ps_afile_publishing) > 0;
    char *backup = NULL;
    int existed = 0;
    if (!bad && af->tmp && in_set && (e = ps_afile_set_prepare(af->target, af->tmp, &backup,
                                                               &existed)) != 0)
        bad = 1;
    int renamed = 0;
    if (!bad && af->tmp) {
        if (rename(af->tmp, af->target) != 0) {
            bad = renamed = -1; /* the file was written; it could not replace the target */
            e = errno;
            if (backup)
                unlink(backup);
            free(backup);
        } else { /* make the rename itself durable; best effort */
            char *sl = strrchr(af->target, '/');
            *sl = 0;
            int dfd = open(sl == af->target ? "/" : af->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            *sl = '/';
            if (dfd >= 0) {
                (void)fsync(dfd);
                close(dfd);
            }
            if (in_set) { /* ps_afile_set_prepare made room for it */
                ps_afile_set_add(af->target, backup, existed);
                af->target = NULL; /* the set's now */
            }
        }
    }
    if (bad) {
        if (in_set)
            ps_afile_publish_fail(); /* the set's earlier files go back at its end */
        if (renamed < 0)
            rc = ps_error(PS_EIO, "%s: cannot replace it: %s", af->path, strerror(e ? e : EIO));
        else if (e == ENOMEM) /* the set's record of it (ps_afile_set_prepare) */
            rc = ps_error(PS_ENOMEM, "%s: out of memory replacing it", af->path);
        else
            rc = ps_error(PS_EIO, "%s: write failed: %s", af->path, strerror(e ? e : EIO));
        if (af->tmp)
            unlink(af->tmp);
    }
    release(af);
    return rc;
}

int ps_afile_sync(struct ps_afile *af)
{
    if (!af->f)
        return 0; /* stdout: commit flushes it */
    errno = 0;
    int bad = fflush(af->f) != 0 || ferror(af->f), e = errno;
    if (!af->tmp) { /* stdout or a device: flushed now, so that a set fails before any is renamed */
        if (bad)
            return ps_error(PS_EIO, "%s: write failed: %s", af->path ? af->path : "stdout",
                            strerror(e ? e : EIO));
        return 0;
    }
    if (!bad && fsync(fileno(af->f)) != 0 && errno != EINVAL) {
        bad = 1;
        e = errno;
    }
    if (bad)
        return ps_error(PS_EIO, "%s: write failed: %s", af->path, strerror(e ? e : EIO));
    struct stat st;
    char in[600];
    if (stat(af->target, &st) == 0 && ps_io_input_of(&st, in, sizeof in))
        return ps_error(PS_EUSAGE, "%s is the same file as %s: the output would overwrite an "
                         "input", af->path, in);
    return 0;
}

void ps_afile_abort(struct ps_afile *af)
{
    if (af->f && af->f != stdout)
        fclose(af->f);
    if (af->f && af->tmp)
        unlink(af->tmp);
    release(af);
}
