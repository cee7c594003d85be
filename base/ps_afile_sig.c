/* ps_afile_sig: the live temporaries a signal removes, the handler, and
 * making a temporary tracked with no window (see ps_afile.h,
 * ps_afile_int.h). */
#include "base/ps_afile_int.h"
#include "base/ps_error.h"

#include <errno.h>
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
/* ps_afile_int.h */
atomic_int ps_afile_publishing;

/* ps_afile_int.h */
void ps_afile_stop_if_dying(atomic_int *count)
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
    for (int w = 0; w < 30000 && atomic_load(&ps_afile_publishing) > 0; w++)
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

void ps_afile_signals_install(void)
{
    static atomic_int done;
    if (atomic_exchange(&done, 1))
        return;
    ps_afile_umask_once();
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

/* ps_afile_int.h */
void ps_afile_block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
        sigaddset(&set, cleanup_signals[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

/* ps_afile_int.h */
void ps_afile_create_begin(sigset_t *old)
{
    ps_afile_block_signals(old);
    atomic_fetch_add(&creating, 1);
    ps_afile_stop_if_dying(&creating);
}

void ps_afile_create_end(const sigset_t *old)
{
    atomic_fetch_sub(&creating, 1);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

int ps_afile_mkstemp(char *templ, int *slot)
{
    sigset_t oldmask;
    ps_afile_create_begin(&oldmask);
    int fd = mkstemp(templ), rc = fd;
    if (fd < 0) {
        rc = ps_error(PS_EIO, "%s: cannot write: %s", templ, strerror(errno));
    } else if ((*slot = ps_afile_track(templ)) < 0) {
        rc = *slot;
        unlink(templ);
        close(fd);
    }
    ps_afile_create_end(&oldmask);
    return rc;
}

int ps_afile_mkdir(const char *path)
{
    sigset_t oldmask;
    ps_afile_create_begin(&oldmask);
    int slot;
    if (mkdir(path, 0777) != 0)
        slot = errno == EEXIST ? PS_AFILE_EXISTED
                               : ps_error(PS_EIO, "%s: cannot create the folder: %s", path,
                                          strerror(errno));
    else if ((slot = ps_afile_track(path)) < 0)
        rmdir(path);
    ps_afile_create_end(&oldmask);
    return slot;
}

int ps_afile_mkdtemp(char *templ)
{
    sigset_t oldmask;
    ps_afile_create_begin(&oldmask);
    int slot;
    if (!mkdtemp(templ)) {
        slot = ps_error(PS_EIO, "cannot create a temporary directory: %s", strerror(errno));
    } else if ((slot = ps_afile_track(templ)) < 0) {
        rmdir(templ);
    }
    ps_afile_create_end(&oldmask);
    return slot;
}
