/* ps_fs: mkdir -p (see ps_fs.h). */
#include "base/ps_fs.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Records the folder buf made (tracked as slot) in m. */
static int made_add(struct ps_made *m, const char *buf, int slot)
{
    char *cp = strdup(buf);
    char **np = cp ? realloc(m->paths, sizeof *np * (size_t)(m->n + 1)) : NULL;
    if (np)
        m->paths = np;
    int *ns = np ? realloc(m->slots, sizeof *ns * (size_t)(m->n + 1)) : NULL;
    if (!ns) {
        free(cp);
        ps_afile_untrack(slot);
        rmdir(buf);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    m->slots = ns;
    m->paths[m->n] = cp;
    m->slots[m->n++] = slot;
    return 0;
}

/* buf[0..] is one prefix of the path: creates it unless a folder is there.
 * With m, made by ps_afile_mkdir and recorded in m: each prefix as typed, so
 * "new/../old" records new (made: ours), not new/.. or an old that was there;
 * undone in reverse, each by the same name. One ps_afile_mkdir could not make
 * (there already, made by another process meanwhile too, or a failure) is
 * judged as without m. */
static int make_one(const char *buf, struct ps_made *m)
{
    if (m) {
        int slot = ps_afile_mkdir(buf);
        if (slot >= 0)
            return made_add(m, buf, slot);
        ps_error_clear(); /* said below, as ps_mkdirs says it */
    }
    if (mkdir(buf, 0777) == 0)
        return 0;
    int e = errno;
    struct stat st;
    if (stat(buf, &st) == 0) /* EEXIST, or EROFS/EACCES on a folder already there */
        return S_ISDIR(st.st_mode) ? 0 : ps_error(PS_EIO, "%s: not a directory", buf);
    if (e == EEXIST) /* a name there that leads nowhere: a link loop or a dangling link */
        e = errno;
    return ps_error(PS_EIO, "%s: cannot create directory: %s", buf, strerror(e));
}

static int mkdirs_len(const char *path, size_t len, struct ps_made *m)
{
    char buf[PS_FS_PATH_MAX];
    if (len >= sizeof buf)
        return ps_error(PS_EUSAGE, "%s: path too long", path);
    memcpy(buf, path, len);
    buf[len] = 0;
    while (len > 1 && buf[len - 1] == '/') /* "out/" is "out" */
        buf[--len] = 0;
    if (!len)
        return 0;
    int rc;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/' || p[-1] == '/')
            continue;
        *p = 0;
        rc = make_one(buf, m);
        *p = '/';
        if (rc < 0)
            return rc;
    }
    return make_one(buf, m);
}

int ps_mkdirs(const char *dir)
{
    return mkdirs_len(dir, strlen(dir), NULL);
}

int ps_mkdirs_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    return mkdirs_len(path, (size_t)(slash - path), NULL);
}

int ps_mkdirs_made(const char *dir, struct ps_made *m)
{
    return mkdirs_len(dir, strlen(dir), m);
}

int ps_mkdirs_parent_made(const char *path, struct ps_made *m)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    return mkdirs_len(path, (size_t)(slash - path), m);
}

static void made_forget(struct ps_made *m, int remove)
{
    for (int i = m->n - 1; i >= 0; i--) {
        if (remove)
            rmdir(m->paths[i]); /* fails, harmlessly, on one that is not empty */
        ps_afile_untrack(m->slots[i]);
        free(m->paths[i]);
    }
    free(m->paths);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

int ps_made_move(struct ps_made *to, struct ps_made *from)
{
    if (!from->n)
        return 0;
    size_t n = (size_t)(to->n + from->n);
    char **np = realloc(to->paths, n * sizeof *np);
    if (np)
        to->paths = np;
    int *ns = np ? realloc(to->slots, n * sizeof *ns) : NULL;
    if (!ns)
        return ps_error(PS_ENOMEM, "out of memory");
    to->slots = ns;
    memcpy(to->paths + to->n, from->paths, (size_t)from->n * sizeof *np);
    memcpy(to->slots + to->n, from->slots, (size_t)from->n * sizeof *ns);
    to->n += from->n;
    free(from->paths);
    free(from->slots);
    memset(from, 0, sizeof *from);
    return 0;
}

void ps_made_undo(struct ps_made *m)
{
    made_forget(m, 1);
}

void ps_made_keep(struct ps_made *m)
{
    made_forget(m, 0);
}

/* The first character of s a script may not hold as it is: a quote, a
 * backslash or backquote, a control character; 0 when none. */
static int plain_chars(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'' || c == '"' || c == '`' || c == '\\' || ps_is_ctrl(c))
            return c;
    }
    return 0;
}

const char *ps_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    struct stat st;
    /* gnuplot scripts name it in single quotes: none of those, nor a
     * character that ends a line, nor one a double-quoted string expands */
    if (t && t[0] == '/' && strlen(t) <= 200 && !plain_chars(t) && stat(t, &st) == 0 &&
        S_ISDIR(st.st_mode))
        return t;
    return "/tmp";
}

int ps_outdir_check(const char *dir, const char *opt)
{
    if (!dir || !*dir)
        return ps_error(PS_EUSAGE, "%s needs a directory (an empty one would mean the root "
                         "folder; use . for this one)", opt);
    return 0;
}

int ps_prefix_check(const char *prefix, const char *opt)
{
    if (prefix && strchr(prefix, '/'))
        return ps_error(PS_EUSAGE, "%s: '%s' must be a file-name prefix without '/' (the "
                         "files go in the output folder)", opt, prefix);
    if (prefix && prefix[0] == '.')
        return ps_error(PS_EUSAGE, "%s: '%s' must not start with '.' (the files would be "
                         "hidden)", opt, prefix);
    if (prefix && strlen(prefix) > 200)
        return ps_error(PS_EUSAGE, "%s: longer than 200 bytes", opt);
    if (prefix && (prefix[0] == '<' || prefix[0] == '$'))
        return ps_error(PS_EUSAGE, "%s: '%s' must not start with '%c' (gnuplot reads a file "
                         "name starting with '<' as a command to run and one starting with "
                         "'$' as a datablock: the scripts kept beside the figures name their "
                         "data files with it)", opt, prefix, prefix[0]);
    if (prefix && plain_chars(prefix)) /* it names data files inside kept scripts */
        return ps_error(PS_EUSAGE, "%s: must not hold quotes, backslashes, backquotes or "
                         "control characters (it names the files inside the gnuplot "
                         "scripts kept beside the figures)", opt);
    return 0;
}

/* path: the name the output is written under (symbolic links followed),
 * shown: as the user gave it. The writer puts a temporary beside the
 * target and renames it over (base/ps_afile.h), so what must be writable
 * is the target's folder, whatever the mode of a file already there. */
static int writable_at(const char *path, const char *shown, const char *opt, int mkparents)
{
    struct stat st;
    int rc = ps_name_fits(path, shown, opt); /* no folder takes it: said before the work */
    if (rc < 0)
        return rc;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return ps_error(PS_EIO, "%s '%s': cannot write: %s", opt, shown, strerror(EISDIR));
        if (!S_ISREG(st.st_mode))
            return 0; /* a device or a pipe, written in place */
    }
    char dir[PS_FS_PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s", path) >= sizeof dir)
        return ps_error(PS_EUSAGE, "%s '%s': path too long", opt, shown);
    for (;;) { /* the folder above, and (mkparents) above that until one exists */
        char *sl = strrchr(dir, '/');
        if (!sl)
            snprintf(dir, sizeof dir, ".");
        else if (sl == dir)
            dir[1] = 0;
        else
            *sl = 0;
        if (stat(dir, &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                return ps_error(PS_EIO, "%s '%s': cannot write: %s is not a directory", opt,
                                 shown, dir);
            if (access(dir, W_OK | X_OK) != 0)
                return ps_error(PS_EIO, "%s '%s': cannot write in %s: %s", opt, shown, dir,
                                 strerror(errno));
            return 0;
        }
        if (errno != ENOENT || !mkparents || !strcmp(dir, ".") || !strcmp(dir, "/"))
            return ps_error(PS_EIO, "%s '%s': cannot write: %s: %s", opt, shown, dir,
                             strerror(errno));
    }
}

int ps_output_writable(const char *path, const char *opt, int mkparents)
{
    if (!path || !*path || !strcmp(path, "-"))
        return 0;
    if (ps_afile_names_stdout(path)) /* written in place, as "-" (helper-142: its folder's */
        return 0;                    /* rights were asked for, where stdout was a file) */
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return writable_at(path, path, opt, mkparents);
    char *target = NULL;
    int e = ps_afile_resolve(path, &target);
    if (e)
        return ps_error(PS_EIO, "%s '%s': cannot write: %s", opt, path, strerror(e));
    int rc = writable_at(target, path, opt, mkparents);
    free(target);
    return rc;
}

/* path as absolute components, "." dropped and ".." taken lexically, into
 * comp[] (pointers into buf); the count, or -1 when it does not fit. */
static int split_abs(const char *path, char *buf, size_t n, char **comp, int max)
{
    char cwd[4096] = "";
    if (path[0] != '/' && !getcwd(cwd, sizeof cwd))
        return -1;
    if ((size_t)snprintf(buf, n, "%s/%s", cwd, path) >= n)
        return -1;
    int k = 0;
    for (char *save = NULL, *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (!strcmp(t, "."))
            continue;
        if (!strcmp(t, "..")) {
            k -= k > 0;
            continue;
        }
        if (k == max)
            return -1;
        comp[k++] = t;
    }
    return k;
}

int ps_folder_on_path(const char *file, const char *dir)
{
    char a[4096], b[4096], *ca[256], *cb[256];
    int na = split_abs(file, a, sizeof a, ca, 256), nb = split_abs(dir, b, sizeof b, cb, 256);
    if (na < 1 || nb < 0 || na - 1 > nb)
        return 0;
    for (int i = 0; i < na - 1; i++) /* file's folder: its components but the last */
        if (strcmp(ca[i], cb[i]))
            return 0;
    return 1;
}

/* path with its folder resolved as the kernel does (symbolic links, "..")
 * when that folder exists; else path as it is. */
static void real_folder(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    char dir[4096], real[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1,
                         slash ? (slash == path ? "/" : path) : ".") >= sizeof dir ||
        !realpath(dir, real) || (size_t)snprintf(out, n, "%s/%s", real, slash ? slash + 1 : path)
        >= n)
        snprintf(out, n, "%s", path);
}

int ps_path_from(const char *from_file, const char *target, char *buf, size_t n)
{
    char a[4096], b[4096], *ca[256], *cb[256], ra[4096], rb[4096];
    real_folder(from_file, ra, sizeof ra); /* "lnk/../r.md": where the file really is */
    real_folder(target, rb, sizeof rb);
    from_file = ra;
    target = rb;
    int na = split_abs(from_file, a, sizeof a, ca, 256), nb = split_abs(target, b, sizeof b,
                                                                          cb, 256);
    if (na < 1 || nb < 1) { /* cannot tell: the target as given */
        return (size_t)snprintf(buf, n, "%s", target) < n ? 0 : -1;
    }
    na--; /* the folder of from_file */
    int c = 0;
    while (c < na && c < nb - 1 && !strcmp(ca[c], cb[c]))
        c++;
    size_t len = 0;
    buf[0] = 0;
    for (int i = c; i < na; i++)
        len += (size_t)snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "../");
    for (int i = c; i < nb; i++)
        len += (size_t)snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "%s%s", cb[i],
                                i + 1 < nb ? "/" : "");
    return len < n ? 0 : -1;
}
