/* ps_afile_set: sets of outputs published together, put back whole when
 * one of them fails (see ps_afile.h, ps_afile_int.h). */
#include "base/ps_afile_int.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ps_afile_int.h */
int ps_afile_set_prepare(const char *target, const char *tmp, char **backup, int *existed)
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

/* ps_afile_int.h */
void ps_afile_set_add(char *target, char *backup, int existed)
{
    set_done[set_n++] = (struct replaced){ target, backup, existed };
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
    ps_afile_block_signals(&old);
    if (atomic_fetch_add(&ps_afile_publishing, 1) == 0)
        publish_mask = old;
    ps_afile_stop_if_dying(&ps_afile_publishing);
}

void ps_afile_publish_fail(void)
{
    /* outside a set, nothing to fail (helper-140: a stale flag rolled the
     * next, good set back) */
    if (atomic_load(&ps_afile_publishing) > 0)
        set_failed = 1;
}

void ps_afile_publish_end(void)
{
    /* before the count falls: a handler waits for it */
    if (atomic_load(&ps_afile_publishing) == 1)
        set_finish();
    if (atomic_fetch_sub(&ps_afile_publishing, 1) == 1)
        pthread_sigmask(SIG_SETMASK, &publish_mask, NULL);
}
