/* stu_out: a study's output folder as one set (see stu_out.h). */
#include "studies/stu_out.h"

#include "studies/stu_data.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"

#include "base/ps_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int stu_out_begin(struct stu_out *s, const char *out_dir, FILE *log)
{
    memset(s, 0, sizeof *s);
    s->stage_slot = -1;
    s->log = log;
    int rc;
    if ((size_t)snprintf(s->final, sizeof s->final, "%s", out_dir) >= sizeof s->final)
        return ps_error(PS_EUSAGE, "--out-dir: path too long");
    /* the folders on the way that are missing are made one by one, each
     * tracked for the signal handler as it is made, so that an interrupted
     * run takes them away again too (while empty: helper-85) */
    if ((rc = ps_mkdirs_made(out_dir, &s->made)) < 0 ||
        (rc = stu_join(out_dir, ".pipesim-stage-XXXXXX", s->stage, sizeof s->stage)) < 0)
        return rc;
    if ((rc = ps_afile_mkdtemp(s->stage)) < 0) {
        s->stage[0] = 0;
        return ps_error(PS_EIO, "%s: cannot create a folder there: %s", out_dir,
                        strerror(errno ? errno : EIO));
    }
    s->stage_slot = rc;
    return 0;
}

/* Records name (once) and tracks its staged path for the signal handler;
 * its index in s->files. */
static int add(struct stu_out *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->files[i].name, name))
            return i;
    if (strlen(name) >= sizeof s->files->name)
        return ps_error(PS_EUSAGE, "output name too long: %s", name);
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        struct stu_out_entry *f = realloc(s->files, sizeof *f * (size_t)cap);
        if (!f)
            return ps_error(PS_ENOMEM, "out of memory");
        s->files = f;
        s->cap = cap;
    }
    char path[8192];
    int rc = stu_join(s->stage, name, path, sizeof path);
    if (rc < 0 || (rc = ps_afile_track(path)) < 0)
        return rc;
    snprintf(s->files[s->n].name, sizeof s->files->name, "%s", name);
    s->files[s->n].slot = rc;
    return s->n++;
}

int stu_out_shown(const struct stu_out *s, int rc)
{
    size_t n = strlen(s->stage);
    if (rc >= 0 || n == 0 || !strstr(ps_errmsg(), s->stage))
        return rc;
    char was[PS_ERRMSG_MAX], now[PS_ERRMSG_MAX];
    snprintf(was, sizeof was, "%s", ps_errmsg());
    size_t k = 0;
    for (const char *p = was; *p && k + 1 < sizeof now;) {
        if (strncmp(p, s->stage, n) == 0 && p[n] == '/') {
            k += (size_t)snprintf(now + k, sizeof now - k, "%s", s->final);
            p += n;
        } else {
            now[k++] = *p++;
        }
        if (k >= sizeof now)
            k = sizeof now - 1;
    }
    now[k] = '\0';
    return ps_error(ps_errcode(), "%s", now);
}

/* Copies the staged file from into out (NULL: reads only) and sums its
 * bytes into *sum (FNV-1a 64). The staged file is opened without following
 * a link: one that a template's gnuplot script put in its place is refused. */
static int copy_into(const char *from, FILE *out, const char *to, uint64_t *sum)
{
    int fd = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
        errno = EINVAL;
    }
    FILE *in = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!in) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return ps_error(PS_EIO, "%s: cannot read: %s", from,
                        e == ELOOP || e == EINVAL ? "not a regular file" : strerror(e));
    }
    char buf[65536];
    size_t k;
    int rc = 0;
    *sum = PS_FNV_INIT;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0) {
        *sum = ps_fnv1a(buf, k, *sum);
        if (out && fwrite(buf, 1, k, out) != k) {
            rc = ps_error(PS_EIO, "%s: write failed: %s", to, strerror(errno ? errno : EIO));
            break;
        }
    }
    if (rc == 0 && ferror(in))
        rc = ps_error(PS_EIO, "%s: cannot read: %s", from, strerror(errno ? errno : EIO));
    fclose(in);
    return rc;
}

int stu_out_file(struct stu_out *s, struct ps_afile *af, const char *name)
{
    int i = add(s, name); /* tracked before it exists: no window for a signal */
    if (i < 0) {
        ps_afile_abort(af);
        return i;
    }
    int rc = ps_afile_commit(af);
    char path[8192];
    /* what was staged, summed: published only as it was written (a template's
     * gnuplot script runs in this folder and may write over it) */
    /* the entry's copy of name: name may lie in af->path, which commit frees */
    if (rc == 0 && (rc = stu_join(s->stage, s->files[i].name, path, sizeof path)) == 0)
        rc = copy_into(path, NULL, NULL, &s->files[i].sum);
    return stu_out_shown(s, rc);
}

int stu_out_commit(struct stu_out *s)
{
    struct ps_afile *af = calloc((size_t)(s->n ? s->n : 1), sizeof *af);
    if (!af) {
        stu_out_abort(s);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    int rc = 0, open_n = 0;
    char from[8192], to[8192];
    /* all opened, written and synced before the first is renamed */
    for (int i = 0; i < s->n && rc == 0; i++) {
        if ((rc = stu_join(s->final, s->files[i].name, to, sizeof to)) < 0 ||
            (rc = ps_afile_open(&af[i], to)) < 0)
            break;
        open_n = i + 1;
        uint64_t sum;
        if ((rc = stu_join(s->stage, s->files[i].name, from, sizeof from)) == 0 &&
            (rc = copy_into(from, af[i].f, to, &sum)) == 0 && sum != s->files[i].sum)
            rc = ps_error(PS_EIO, "%s: changed after pipesim wrote it (by a gnuplot script "
                          "of the --data templates?): nothing written", to);
    }
    for (int i = 0; i < open_n && rc == 0; i++)
        rc = ps_afile_sync(&af[i]);
    ps_afile_publish_begin(); /* a signal now leaves the old set or the new */
    for (int i = 0; i < open_n; i++) {
        if (rc < 0)
            ps_afile_abort(&af[i]);
        else
            rc = ps_afile_commit(&af[i]);
    }
    ps_afile_publish_end();
    free(af);
    s->committed = rc == 0;
    if (rc == 0 && s->log)
        for (int i = 0; i < s->n; i++) { /* one line each, whatever the folder's name */
            fputs("wrote ", s->log);
            ps_put_printable(s->log, s->final, -1);
            fprintf(s->log, "/%s\n", s->files[i].name);
        }
    stu_out_abort(s);
    return rc;
}

/* Removes everything in the folder dfd (and closes it): no link is
 * followed and no other file system entered (a folder there is left, and
 * so are the folders above it). depth bounds the recursion. */
static void empty_dir(int dfd, dev_t dev, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st, sub_st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (!S_ISDIR(st.st_mode)) {
            unlinkat(dirfd(d), e->d_name, 0);
            continue;
        }
        if (st.st_dev != dev || depth >= 64)
            continue;
        int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
            continue;
        if (fstat(sub, &sub_st) != 0 || sub_st.st_dev != dev || sub_st.st_ino != st.st_ino) {
            close(sub);
            continue;
        }
        empty_dir(sub, dev, depth + 1);
        unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

void stu_out_abort(struct stu_out *s)
{
    for (int i = 0; i < s->n; i++)
        ps_afile_untrack(s->files[i].slot);
    if (s->stage[0]) {
        /* the run's own folder: all in it goes, what a template's gnuplot
         * script wrote there too (it runs there: stu_paper_plot) */
        struct stat st;
        int fd = open(s->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && fstat(fd, &st) == 0)
            empty_dir(fd, st.st_dev, 0);
        else if (fd >= 0)
            close(fd);
        rmdir(s->stage);
        s->stage[0] = 0;
    }
    if (s->stage_slot >= 0)
        ps_afile_untrack(s->stage_slot);
    s->stage_slot = -1;
    if (s->committed) /* the folders begin made, while empty */
        ps_made_keep(&s->made);
    else
        ps_made_undo(&s->made);
    free(s->files);
    s->files = NULL;
    s->n = s->cap = 0;
}
