/* ps_afile_name: what a name leads to (this process's stdout, the target
 * once links are followed), the standard descriptors kept taken, and the
 * stdout check (see ps_afile.h, ps_afile_int.h). */
#include "base/ps_afile_int.h"
#include "base/ps_error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ps_afile_int.h */
int ps_afile_is_stdout(const char *path, const struct stat *st)
{
    struct stat so;
    if (stdout_reserved)
        return names_fd1(path);
    return fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == st->st_dev && so.st_ino == st->st_ino;
}

int ps_afile_names_stdout(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && ps_afile_is_stdout(path, &st);
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

/* ps_afile_int.h */
char *ps_afile_lexical_resolve(const char *path)
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
