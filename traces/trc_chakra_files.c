/* trc_chakra_files — where an export's files go: their paths, the checks
 * before the work, and an earlier export's files this one removes (see
 * trc_chakra_int.h). */
#include "traces/trc_chakra_int.h"
#include "base/ps_error.h"
#include "base/ps_afile.h"
#include "base/ps_fs.h"
#include "base/ps_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int trc_chakra_rank_path(const struct trc_chakra_opts *o, int rank, char *buf, size_t n)
{
    const char *pre = o->prefix ? o->prefix : "pipesim";
    if ((size_t)snprintf(buf, n, "%s/%s.%d.et", o->dir, pre, rank) >= n)
        return ps_error(PS_EUSAGE, "--out-dir: the path of rank %d's file (%zu bytes of "
                         "folder and prefix) is longer than %zu bytes", rank,
                         strlen(o->dir) + strlen(pre), n - 1);
    return 0;
}

/* Whether path is a file an earlier export wrote, which this one may remove:
 * a regular file no command input names, holding sig (at its start, or
 * anywhere in its first 4 KB). */
static int earlier_export(const char *path, const char *sig, int at_start)
{
    struct stat st;
    if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return 0;
    if (ps_io_check_written(path, "--out-dir") < 0) { /* an input: kept */
        ps_error_clear();
        return 0;
    }
    /* opened without blocking or following a link, and a regular file still:
     * one replaced by a FIFO since (helper-117) would block the removal, which
     * runs with signals held */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[4096];
    ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof buf) : -1;
    close(fd);
    size_t n = got > 0 ? (size_t)got : 0, l = strlen(sig);
    for (size_t i = 0; i + l <= n && (i == 0 || !at_start); i++)
        if (!memcmp(buf + i, sig, l))
            return 1;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int trc_chakra_distinct_outputs(const struct trc_chakra_opts *o, int n, const char *gpath)
{
    int m = n + (gpath != NULL), rc = 0;
    char **res = calloc((size_t)m, sizeof *res);
    if (!res)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int k = 0; k < m && rc == 0; k++) {
        char path[4096];
        if (k < n)
            rc = trc_chakra_rank_path(o, k, path, sizeof path);
        else
            snprintf(path, sizeof path, "%s", gpath);
        if (rc < 0 || (rc = ps_io_check_written(path, "--out-dir")) < 0)
            break;
        int e = ps_afile_resolve(path, &res[k]);
        if (e == ENOMEM)
            rc = ps_error(PS_ENOMEM, "out of memory");
        else if (e)
            res[k] = strdup(path); /* cannot tell: its own name */
        if (!rc && !res[k])
            rc = ps_error(PS_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        qsort(res, (size_t)m, sizeof *res, by_name);
        for (int k = 1; k < m && rc == 0; k++)
            if (!strcmp(res[k - 1], res[k]))
                rc = ps_error(PS_EUSAGE, "--out-dir: two of the files it would write are one "
                              "file, %s (symbolic links): each rank needs its own", res[k]);
    }
    for (int k = 0; k < m; k++)
        free(res[k]);
    free(res);
    return rc;
}

/* The files this process has open now (its descriptors in /proc), or 64
 * where that cannot be read. */
static rlim_t open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 64;
    rlim_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int trc_chakra_groups_path(const struct trc_chakra_opts *o, char *buf, size_t n)
{
    const char *pre = o->prefix ? o->prefix : "pipesim";
    if ((size_t)snprintf(buf, n, "%s/%s.comm_groups.json", o->dir, pre) >= n)
        return ps_error(PS_EUSAGE, "--out-dir: the path of the communicator groups' file "
                         "(%zu bytes of folder and prefix) is longer than %zu bytes",
                         strlen(o->dir) + strlen(pre), n - 1);
    return 0;
}

int trc_chakra_open_files(int ranks, int groups, int raise)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)ranks + (groups != 0) + open_fds() + 8; /* + what the writes open */
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
        return ps_error(PS_EINVAL, "%d ranks need %llu open files; the limit is %llu "
                        "(ulimit -n)", ranks, (unsigned long long)need,
                        (unsigned long long)rl.rlim_max);
    rl.rlim_cur = need;
    if (raise && setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return ps_error(PS_EINVAL, "%d ranks need %llu open files: %s", ranks,
                        (unsigned long long)need, strerror(errno));
    return 0;
}

int trc_chakra_earlier_find(const struct trc_chakra_opts *o, int ranks, int **out, int *n)
{
    const char *pre = o->prefix ? o->prefix : "pipesim";
    size_t lp = strlen(pre);
    int cap = 0, *v = NULL;
    *out = NULL;
    *n = 0;
    DIR *d = opendir(o->dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *nm = e->d_name;
        char *end;
        if (strncmp(nm, pre, lp) || nm[lp] != '.' || nm[lp + 1] < '0' || nm[lp + 1] > '9' ||
            (nm[lp + 1] == '0' && nm[lp + 2] != '.'))
            continue; /* trc_chakra_rank_path writes the number without leading zeros */
        errno = 0;
        long k = strtol(nm + lp + 1, &end, 10);
        if (errno || strcmp(end, ".et") || k < ranks || k >= TRC_CHAKRA_RANK_MAX)
            continue;
        if (*n == cap) {
            int *nv = realloc(v, sizeof *v * (size_t)(cap = cap ? 2 * cap : 64));
            if (!nv) {
                closedir(d);
                free(v);
                return ps_error(PS_ENOMEM, "out of memory");
            }
            v = nv;
        }
        v[(*n)++] = (int)k;
    }
    if (d)
        closedir(d);
    *out = v;
    return 0;
}

void trc_chakra_earlier_remove(const struct trc_chakra_opts *o, const int *found, int n,
                               int groups, const char *gpath)
{
    for (int i = 0; i < n; i++) {
        char path[4096];
        if (trc_chakra_rank_path(o, found[i], path, sizeof path) < 0) {
            ps_error_clear();
            continue;
        }
        if (earlier_export(path, "pipesim_rank", 0) && unlink(path) == 0 && o->stale)
            (*o->stale)++; /* another file under the name stays */
    }
    if (!groups && earlier_export(gpath, "{\n  \"1\": [", 1) && unlink(gpath) == 0 && o->stale)
        (*o->stale)++;
}

int trc_chakra_check(const struct trc_chakra_opts *o, int n_ranks, int groups)
{
    if (n_ranks > 4096)
        return ps_error(PS_EINVAL, "%d ranks: at most 4096 Chakra files at once", n_ranks);
    char path[4096];
    int rc = trc_chakra_open_files(n_ranks, groups, 0);
    for (int k = 0; k <= n_ranks && rc == 0; k++) { /* each rank's file, and the groups' */
        if (k < n_ranks)
            rc = trc_chakra_rank_path(o, k, path, sizeof path);
        else if (groups)
            rc = trc_chakra_groups_path(o, path, sizeof path);
        else
            break;
        if (rc == 0)
            rc = ps_output_writable(path, "--out-dir", 1);
    }
    if (rc == 0)
        rc = trc_chakra_groups_path(o, path, sizeof path);
    return rc < 0 ? rc : trc_chakra_distinct_outputs(o, n_ranks, groups ? path : NULL);
}
