/* ps_afile: outputs that never destroy anything (see ps_afile.h). */
#include "base/ps_afile.h"
#include "base/ps_error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the live temporaries, read by the signal handler ---- */

static _Atomic(char *) live[PS_AFILE_MAX];
static atomic_int live_hi;     /* slots in use are below it */
static atomic_int in_handler;  /* set first thing by the handler: nothing is freed after */
/* Temporaries being created and not yet in live[]: the creating thread
 * blocks the signals, but a process-directed signal is then delivered to
 * another thread (OpenBLAS starts its own at load), whose handler waits for
 * the creation to be tracked before it reads live[]. */
static atomic_int creating;
/* Sets of outputs being renamed into place (ps_afile_publish_begin). */
static atomic_int publishing;

/* After counting itself in (creating or publishing), with the signals
 * blocked on its thread: if a handler has begun on another thread, which
 * may have read live[] already, this thread makes nothing more and waits
 * for the handler to end the process (seq_cst: either the handler sees
 * the count and waits, or this sees its flag). */
static void stop_if_dying(atomic_int *count)
{
    if (!atomic_load(&in_handler))
        return;
    atomic_fetch_sub(count, 1); /* the handler need not wait for this thread */
    for (;;)
        pause();
}
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static int live_hint;          /* every slot below it is taken (under live_mu) */

int ps_afile_track(const char *path)
{
    char *p = strdup(path);
    if (!p)
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    pthread_mutex_lock(&live_mu);
    int i = live_hint;
    while (i < PS_AFILE_MAX && atomic_load(&live[i]))
        i++;
    if (i == PS_AFILE_MAX) {
        pthread_mutex_unlock(&live_mu);
        free(p);
        return ps_error(PS_EIO, "%s: more than %d output files open at once", path,
                         PS_AFILE_MAX);
    }
    atomic_store(&live[i], p);
    if (i + 1 > atomic_load(&live_hi))
        atomic_store(&live_hi, i + 1);
    live_hint = i + 1;
    pthread_mutex_unlock(&live_mu);
    return i;
}

void ps_afile_untrack(int slot)
{
    if (slot < 0 || slot >= PS_AFILE_MAX)
        return;
    char *p = atomic_exchange(&live[slot], NULL);
    /* A handler running on another thread may still read p: the process is
     * about to die then, so leave it. (seq_cst: either the handler saw the
     * slot empty, or this sees its flag.) */
    if (p && !atomic_load(&in_handler))
        free(p);
    pthread_mutex_lock(&live_mu);
    if (slot < live_hint)
        live_hint = slot;
    pthread_mutex_unlock(&live_mu);
}

static void on_signal(int sig)
{
    int saved = errno;
    atomic_store(&in_handler, 1);
    /* a creation takes microseconds: at most about a second; a set being
     * published (ps_afile_publish_begin) goes on being renamed into place:
     * at most about 30 s, so it ends whole, the old files or the new */
    struct timespec tick = { 0, 1000000 };
    for (int w = 0; w < 1000 && atomic_load(&creating) > 0; w++)
        nanosleep(&tick, NULL);
    for (int w = 0; w < 30000 && atomic_load(&publishing) > 0; w++)
        nanosleep(&tick, NULL);
    int hi = atomic_load(&live_hi);
    for (int i = 0; i < hi && i < PS_AFILE_MAX; i++) {
        char *p = atomic_load(&live[i]);
        if (p)
            unlink(p);
    }
    /* then the folders, now empty, until none goes: a folder inside another
     * may hold a later slot (a study's --out-dir and the folders above it) */
    for (int gone = 1, pass = 0; gone && pass <= hi; pass++) { /* each pass: one at least */
        gone = 0;
        for (int i = 0; i < hi && i < PS_AFILE_MAX; i++) {
            char *p = atomic_load(&live[i]);
            if (p && rmdir(p) == 0)
                gone = 1;
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    errno = saved;
    _exit(128 + sig); /* not reached: the default action ends the process */
}

/* SIGPIPE too: a reader of stdout that goes away (| head) ends the process
 * while a set's temporaries are written (report writes stdout last). */
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

static mode_t g_umask;
static pthread_once_t umask_once = PTHREAD_ONCE_INIT;

static void read_umask(void)
{
    g_umask = umask(022);
    umask(g_umask);
}

void ps_afile_signals_install(void)
{
    static atomic_int done;
    if (atomic_exchange(&done, 1))
        return;
    pthread_once(&umask_once, read_umask);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
        sigaddset(&sa.sa_mask, cleanup_signals[i]);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++) {
        if (sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* nohup: stays ignored */
        sigaction(cleanup_signals[i], &sa, NULL);
    }
    /* past a file-size limit (ulimit -f) a write fails with EFBIG, which the
     * write's own error path reports and cleans up, instead of SIGXFSZ ending
     * the process with its temporary left */
    signal(SIGXFSZ, SIG_IGN);
}

static void block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
        sigaddset(&set, cleanup_signals[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

/* Around making a temporary and tracking it: no window where it exists
 * untracked, not on this thread (the signals are blocked), nor on another
 * (its handler waits for creating, or this thread stops if it has begun). */
static void create_begin(sigset_t *old)
{
    block_signals(old);
    atomic_fetch_add(&creating, 1);
    stop_if_dying(&creating);
}

static void create_end(const sigset_t *old)
{
    atomic_fetch_sub(&creating, 1);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

int ps_afile_mkstemp(char *templ, int *slot)
{
    sigset_t oldmask;
    create_begin(&oldmask);
    int fd = mkstemp(templ), rc = fd;
    if (fd < 0) {
        rc = ps_error(PS_EIO, "%s: cannot write: %s", templ, strerror(errno));
    } else if ((*slot = ps_afile_track(templ)) < 0) {
        rc = *slot;
        unlink(templ);
        close(fd);
    }
    create_end(&oldmask);
    return rc;
}

static sigset_t publish_mask;

/* The files a set has renamed into place, each with a hard link to the file
 * it replaced (NULL: none was there, or no link could be made), so that a
 * set whose later rename fails puts the earlier ones back (helper-138: a
 * trace replaced, its --out immutable, exit 5; a study folder half new).
 * Only the publishing thread touches them. */
struct replaced {
    char *target, *backup;
    int existed;
};
static struct replaced *set_done;
static int set_n, set_cap, set_failed;

/* Before renaming over target inside a set: room for its entry, and a link
 * to what it replaces (a name beside the temporary; none where the file
 * system refuses links, the file then not restored). 0 or an errno. */
static int set_prepare(const char *target, const char *tmp, char **backup, int *existed)
{
    *backup = NULL;
    struct stat st;
    *existed = stat(target, &st) == 0;
    if (set_n == set_cap) {
        int cap = set_cap ? 2 * set_cap : 16;
        struct replaced *p = realloc(set_done, (size_t)cap * sizeof *p);
        if (!p)
            return ENOMEM;
        set_done = p;
        set_cap = cap;
    }
    if (!*existed)
        return 0;
    size_t n = strlen(tmp) + 16;
    char *b = malloc(n);
    if (!b)
        return ENOMEM;
    for (int k = 0; k < 100; k++) {
        snprintf(b, n, "%s.old%d", tmp, k);
        if (link(target, b) == 0) {
            *backup = b;
            return 0;
        }
        if (errno != EEXIST)
            break;
    }
    free(b);
    return 0;
}

/* The end of the outermost set: the replaced files put back (a failed set)
 * or their links removed. */
static void set_finish(void)
{
    for (int i = set_n - 1; i >= 0; i--) {
        struct replaced *r = &set_done[i];
        if (set_failed && r->backup)
            (void)rename(r->backup, r->target);
        else if (set_failed && !r->existed)
            (void)unlink(r->target);
        else if (r->backup)
            (void)unlink(r->backup);
        free(r->target);
        free(r->backup);
    }
    free(set_done);
    set_done = NULL;
    set_n = set_cap = set_failed = 0;
}

void ps_afile_publish_begin(void)
{
    sigset_t old;
    block_signals(&old);
    if (atomic_fetch_add(&publishing, 1) == 0)
        publish_mask = old;
    stop_if_dying(&publishing);
}

void ps_afile_publish_fail(void)
{
    if (atomic_load(&publishing) > 0) /* outside a set, nothing to fail (helper-140: a */
        set_failed = 1;               /* stale flag rolled the next, good set back) */
}

void ps_afile_publish_end(void)
{
    if (atomic_load(&publishing) == 1) /* before the count falls: a handler waits for it */
        set_finish();
    if (atomic_fetch_sub(&publishing, 1) == 1)
        pthread_sigmask(SIG_SETMASK, &publish_mask, NULL);
}

int ps_afile_mkdir(const char *path)
{
    sigset_t oldmask;
    create_begin(&oldmask);
    int slot;
    if (mkdir(path, 0777) != 0)
        slot = errno == EEXIST ? PS_AFILE_EXISTED
                               : ps_error(PS_EIO, "%s: cannot create the folder: %s", path,
                                          strerror(errno));
    else if ((slot = ps_afile_track(path)) < 0)
        rmdir(path);
    create_end(&oldmask);
    return slot;
}

int ps_afile_mkdtemp(char *templ)
{
    sigset_t oldmask;
    create_begin(&oldmask);
    int slot;
    if (!mkdtemp(templ)) {
        slot = ps_error(PS_EIO, "cannot create a temporary directory: %s", strerror(errno));
    } else if ((slot = ps_afile_track(templ)) < 0) {
        rmdir(templ);
    }
    create_end(&oldmask);
    return slot;
}

/* ---- naming ---- */

/* stdout was closed at start: ps_std_fds_reserve put a read-only /dev/null
 * there, which is nobody's stdout (-o /dev/null is then a device of its
 * own); only a name of descriptor 1 itself is stdout then */
static int stdout_reserved;

/* path, or a link on the way from it, names descriptor 1 */
static int names_fd1(const char *path)
{
    static const char *const fd1[] = { "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1",
                                       "/proc/thread-self/fd/1" };
    char cur[PATH_MAX], buf[PATH_MAX];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hops = 0; hops < 40; hops++) {
        for (size_t i = 0; i < sizeof fd1 / sizeof *fd1; i++)
            if (!strcmp(cur, fd1[i]))
                return 1;
        ssize_t n = readlink(cur, buf, sizeof buf - 1);
        if (n <= 0 || buf[0] != '/') /* the links that lead to it are absolute */
            return 0;
        buf[n] = 0;
        snprintf(cur, sizeof cur, "%s", buf);
    }
    return 0;
}

static int is_stdout(const char *path, const struct stat *st)
{
    struct stat so;
    if (stdout_reserved)
        return names_fd1(path);
    return fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == st->st_dev && so.st_ino == st->st_ino;
}

int ps_afile_names_stdout(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && is_stdout(path, &st);
}

/* ps_afile.h */
int ps_afile_resolve(const char *path, char **out)
{
    *out = NULL;
    char *cur = strdup(path);
    if (!cur)
        return ENOMEM;
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            break;
        char buf[PATH_MAX];
        ssize_t n;
        if (hops == 40 || (n = readlink(cur, buf, sizeof buf - 1)) < 0) {
            int e = hops == 40 ? ELOOP : errno;
            free(cur);
            return e;
        }
        buf[n] = 0;
        const char *sl = strrchr(cur, '/');
        char *next;
        if (buf[0] == '/' || !sl)
            next = strdup(buf);
        else if (asprintf(&next, "%.*s/%s", (int)(sl - cur), cur, buf) < 0)
            next = NULL;
        free(cur);
        if (!(cur = next))
            return ENOMEM;
    }
    char *sl = strrchr(cur, '/');
    const char *base = sl ? sl + 1 : cur;
    if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
        free(cur);
        return EISDIR;
    }
    char *dir = !sl ? strdup(".") : sl == cur ? strdup("/") : strndup(cur, (size_t)(sl - cur));
    if (!dir) {
        free(cur);
        return ENOMEM;
    }
    char *real = realpath(dir, NULL);
    int e = errno;
    free(dir);
    if (!real) {
        free(cur);
        return e;
    }
    int r = asprintf(out, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base);
    free(real);
    free(cur);
    if (r < 0) {
        *out = NULL;
        return ENOMEM;
    }
    return 0;
}

/* The name a path not there yet will have: its existing folders by
 * realpath, then the rest component by component ("." dropped, ".."
 * taking off the last), so nd/x and nd/./x, or nd/../nd/x, compare equal
 * while nd does not exist (the raw spellings were compared, and commands
 * that create folders wrote one output over another). NULL: no memory. */
static char *lexical_resolve(const char *path)
{
    char *cwd = NULL, *out = NULL;
    if (path[0] != '/' && !(cwd = getcwd(NULL, 0)))
        return strdup(path);
    size_t cap = (cwd ? strlen(cwd) : 0) + strlen(path) + 2;
    char *cur = malloc(cap + PATH_MAX), *rest = strdup(path);
    if (!cur || !rest)
        goto out;
    snprintf(cur, cap, "%s", cwd ? cwd : "/");
    int real = 1; /* cur so far is an existing folder's real path */
    for (char *save = NULL, *c = strtok_r(rest, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        size_t n = strlen(cur);
        if (!strcmp(c, "."))
            continue;
        if (!strcmp(c, "..")) {
            char *sl = strrchr(cur, '/');
            if (sl && sl != cur)
                *sl = 0;
            else
                snprintf(cur, cap, "/");
            continue;
        }
        snprintf(cur + n, cap + PATH_MAX - n, "%s%s", n > 1 ? "/" : "", c);
        struct stat st;
        if (real && stat(cur, &st) == 0 && S_ISDIR(st.st_mode)) {
            char *r = realpath(cur, NULL);
            if (r && strlen(r) < cap + PATH_MAX)
                snprintf(cur, cap + PATH_MAX, "%s", r);
            free(r);
        } else {
            real = 0;
        }
    }
    out = strdup(cur);
out:
    free(cwd);
    free(cur);
    free(rest);
    return out;
}

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
    if (ex && (S_ISCHR(st.st_mode) || (out && is_stdout(path, &st))))
        return 0; /* /dev/null twice is fine; so is our stdout */
    if (!ex && !out)
        return 0; /* cannot be overwritten; reading it will say why it is missing */
    char *res = NULL;
    if (!ex && ps_afile_resolve(path, &res) != 0 && !(res = lexical_resolve(path)))
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

/* The input that is the file st, as "OPT 'PATH'" in buf; 0 when none. An
 * input whose name no longer leads to the file recorded (deleted or
 * replaced since: a temporary of our own) is not one: its inode number may
 * have been given to another file. */
static int io_input_of(const struct stat *st, char *buf, size_t n)
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
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && io_input_of(&st, in, sizeof in))
        return ps_error(PS_EUSAGE, "%s '%s' is the same file as %s: the output would "
                         "overwrite an input", opt, path, in);
    return 0;
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
    create_begin(&oldmask);
    int fd = mkostemp(af->tmp, O_CLOEXEC), e = errno;
    if (fd >= 0 && (af->slot = ps_afile_track(af->tmp)) < 0) {
        unlink(af->tmp);
        close(fd);
        fd = -1;
        e = ps_errcode() == PS_ENOMEM ? ENOMEM : EMFILE;
    }
    create_end(&oldmask);
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
        if (is_stdout(path, &st)) { /* /dev/stdout, or the file stdout goes to */
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
        if (io_input_of(&st, in, sizeof in)) {
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
    if (!bad && af->tmp && stat(af->target, &st) == 0 && io_input_of(&st, in, sizeof in)) {
        /* an input read after the output was opened (a bundled name, a
         * preset file): the result is dropped, the input kept */
        unlink(af->tmp);
        rc = ps_error(PS_EUSAGE, "%s is the same file as %s: the output would overwrite an "
                       "input", af->path, in);
        ps_afile_publish_fail(); /* a set it is in goes back */
        release(af);
        return rc;
    }
    int in_set = atomic_load(&publishing) > 0;
    char *backup = NULL;
    int existed = 0;
    if (!bad && af->tmp && in_set && (e = set_prepare(af->target, af->tmp, &backup,
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
            if (in_set) { /* set_prepare made room for it */
                set_done[set_n++] = (struct replaced){ af->target, backup, existed };
                af->target = NULL; /* the set's now */
            }
        }
    }
    if (bad) {
        if (in_set)
            set_failed = 1; /* the set's earlier files go back at its end */
        if (renamed < 0)
            rc = ps_error(PS_EIO, "%s: cannot replace it: %s", af->path, strerror(e ? e : EIO));
        else if (e == ENOMEM) /* the set's record of it (set_prepare) */
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
    if (stat(af->target, &st) == 0 && io_input_of(&st, in, sizeof in))
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

void ps_std_fds_reserve(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int got = open("/dev/null", O_RDONLY);
            if (got >= 0 && got != fd) { /* not the lowest free: never here, but be exact */
                dup2(got, fd);
                close(got);
            }
            if (fd == STDOUT_FILENO && got >= 0)
                stdout_reserved = 1;
        }
}

int ps_stdout_check(void)
{
    errno = 0;
    int bad = fflush(stdout) != 0, e = errno;
    bad |= ferror(stdout);
    if (!bad) { /* a deferred error (NFS) shows on close; stdout itself stays open */
        int fd = dup(STDOUT_FILENO);
        if (fd >= 0 && close(fd) != 0 && errno != EINTR) {
            bad = 1;
            e = errno;
        }
    }
    if (bad)
        return ps_error(PS_EIO, "stdout: write failed: %s", strerror(e ? e : EIO));
    return 0;
}
