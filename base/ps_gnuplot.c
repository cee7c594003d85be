/* ps_gnuplot: running gnuplot (see ps_gnuplot.h). */
#include "base/ps_gnuplot.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child reports through the close-on-exec pipe when it cannot
 * become prog: the step that failed and its errno. */
enum { STEP_CWD, STEP_FD, STEP_EXEC };

/* Forks prog arg with stdout to out_fd and stderr to err_fd (-1: both to
 * /dev/null). Returns the wait status (>= 0), or -1 with *step and *err set. */
static int spawn(const char *prog, const char *arg, const char *cwd, int out_fd, int err_fd,
                 int *step, int *err)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        *step = STEP_FD, *err = errno;
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        *step = STEP_EXEC, *err = errno;
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        int rep[2] = { STEP_CWD, 0 };
        int null = out_fd < 0 || err_fd < 0 ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
        if (cwd && chdir(cwd) != 0)
            goto fail;
        rep[0] = STEP_FD;
        if (dup2(out_fd < 0 ? null : out_fd, 1) < 0 || dup2(err_fd < 0 ? null : err_fd, 2) < 0)
            goto fail;
        /* dup2 onto itself keeps close-on-exec (a descriptor already 1 or 2) */
        fcntl(1, F_SETFD, 0);
        fcntl(2, F_SETFD, 0);
        rep[0] = STEP_EXEC;
        /* An ignored signal stays ignored across exec: pipesim ignores
         * SIGXFSZ (ps_afile_sig.c), and a gnuplot past the file-size limit
         * would then ignore EFBIG and exit 0 with its image cut short. */
        signal(SIGXFSZ, SIG_DFL);
        execlp(prog, prog, arg, (char *)NULL);
    fail:
        rep[1] = errno;
        if (write(pfd[1], rep, sizeof rep) < 0)
            _exit(126);
        _exit(127);
    }
    close(pfd[1]);
    int rep[2], st = 0;
    ssize_t n;
    while ((n = read(pfd[0], rep, sizeof rep)) < 0 && errno == EINTR)
        ;
    close(pfd[0]);
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            *step = STEP_EXEC, *err = errno;
            return -1;
        }
    if (n == (ssize_t)sizeof rep) {
        *step = rep[0], *err = rep[1];
        return -1;
    }
    return st;
}

int ps_gnuplot_have(const char *prog)
{
    static int cached = -1;
    if (!prog && cached >= 0)
        return cached;
    int step, err, st = spawn(prog ? prog : "gnuplot", "--version", NULL, -1, -1, &step, &err);
    int have = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!prog)
        cached = have;
    return have;
}

int ps_gnuplot_require(void)
{
    if (ps_gnuplot_have(NULL))
        return 0;
    return ps_error(PS_EIO, "gnuplot is not installed or does not run (Debian: apt-get "
                             "install " PS_GNUPLOT_PKG ")");
}

void ps_gnuplot_skip_note(FILE *log)
{
    static int said;
    if (log && !said) {
        said = 1;
        fprintf(log, "gnuplot not found: plots not drawn (Debian: apt-get install "
                     PS_GNUPLOT_PKG ")\n");
    }
}

/* The first line of the file behind fd into buf. */
static void first_line(int fd, char *buf, size_t n)
{
    buf[0] = 0;
    if (lseek(fd, 0, SEEK_SET) != 0)
        return;
    ssize_t k;
    while ((k = read(fd, buf, n - 1)) < 0 && errno == EINTR)
        ;
    buf[k > 0 ? k : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
}

static int run_into(struct ps_gnuplot_cmd *c, const char *prog, int out_fd);

/* Copies the figure in tfd to fd (a device or FIFO) by our own writes,
 * whose errors show (gnuplot exits 0 when its output cannot be written:
 * a figure sent to /dev/full was reported written). */
static int copy_out(int tfd, int fd, const char *what)
{
    char buf[65536];
    if (lseek(tfd, 0, SEEK_SET) < 0)
        return ps_error(PS_EIO, "%s: cannot read the figure back: %s", what, strerror(errno));
    for (;;) {
        ssize_t n = read(tfd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return ps_error(PS_EIO, "%s: cannot read the figure back: %s", what,
                            strerror(errno));
        if (n == 0)
            return 0;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return ps_error(PS_EIO, "%s: write failed: %s", what,
                                w < 0 ? strerror(errno) : "no progress");
            off += w;
        }
    }
}

int ps_gnuplot_run(struct ps_gnuplot_cmd *c)
{
    const char *prog = c->prog ? c->prog : "gnuplot";
    c->errline[0] = 0;
    /* an output that is not a regular file gets the figure from us, after
     * gnuplot wrote it to a temporary (see copy_out) */
    struct stat os;
    int out = c->out_fd, tfd = -1, tslot = -1;
    char tp[256];
    if (out >= 0 && fstat(out, &os) == 0 && !S_ISREG(os.st_mode)) {
        snprintf(tp, sizeof tp, "%s/pipesim-gpout-XXXXXX", ps_tmpdir());
        if ((tfd = ps_afile_mkstemp(tp, &tslot)) < 0) /* tracked as it is made */
            return tfd;
        out = tfd;
    }
    int rc = run_into(c, prog, out);
    if (rc == 0 && tfd >= 0)
        rc = copy_out(tfd, c->out_fd, c->what);
    if (tfd >= 0) {
        close(tfd);
        unlink(tp);
        ps_afile_untrack(tslot);
    }
    return rc;
}

static int run_into(struct ps_gnuplot_cmd *c, const char *prog, int out_fd)
{
    char ep[256];
    snprintf(ep, sizeof ep, "%s/pipesim-gperr-XXXXXX", ps_tmpdir());
    int slot = -1, efd = ps_afile_mkstemp(ep, &slot); /* tracked as it is made */
    if (efd < 0)
        return efd;
    int step, err, rc = 0;
    int st = spawn(prog, c->script, c->cwd, out_fd, efd, &step, &err);
    first_line(efd, c->errline, sizeof c->errline);
    close(efd);
    unlink(ep);
    ps_afile_untrack(slot);
    if (st < 0 && step == STEP_CWD)
        rc = ps_error(PS_EIO, "%s: cannot enter %s: %s", c->what, c->cwd, strerror(err));
    else if (st < 0)
        rc = ps_error(PS_EIO, "%s: cannot run %s: %s (Debian: apt-get install " PS_GNUPLOT_PKG
                              ")", c->what, prog, strerror(err));
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        rc = ps_error(PS_EIO, "%s: gnuplot failed (status %d)%s%s", c->what,
                       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                       c->errline[0] ? ": " : "", c->errline);
    struct stat os; /* a regular output it left empty is no figure */
    if (rc == 0 && out_fd >= 0 && fstat(out_fd, &os) == 0 && S_ISREG(os.st_mode) &&
        os.st_size == 0)
        rc = ps_error(PS_EIO, "%s: gnuplot wrote nothing%s%s", c->what,
                       c->errline[0] ? ": " : "", c->errline);
    /* nor one it cut short: gnuplot exits 0 when its writes fail (a full disk), so a
     * PNG must end with its IEND chunk and an SVG with </svg> (helper-73: cut-off
     * figures replaced whole ones) */
    if (rc == 0 && out_fd >= 0 && fstat(out_fd, &os) == 0 && S_ISREG(os.st_mode) &&
        os.st_size > 0) {
        char head[65] = { 0 }, tail[25] = { 0 };
        ssize_t hn = pread(out_fd, head, sizeof head - 1, 0);
        off_t tn = os.st_size < (off_t)sizeof tail - 1 ? os.st_size : (off_t)sizeof tail - 1;
        ssize_t got = pread(out_fd, tail, (size_t)tn, os.st_size - tn);
        int png = hn >= 8 && !memcmp(head, "\x89PNG\r\n\x1a\n", 8);
        int svg = !png && hn > 0 && (strstr(head, "<?xml") || strstr(head, "<svg"));
        int whole = hn < 0 || got < 0 || /* a descriptor it cannot read back: not checked */
                    (png ? tn >= 8 && !memcmp(tail + tn - 8, "IEND\xae\x42\x60\x82", 8)
                         : !svg || strstr(tail, "</svg>"));
        if (!whole)
            rc = ps_error(PS_EIO, "%s: gnuplot's output is cut short (%lld bytes: a full "
                          "disk?)%s%s", c->what, (long long)os.st_size,
                          c->errline[0] ? ": " : "", c->errline);
    }
    return rc;
}

void ps_gnuplot_log_tics(char *buf, size_t n, const char *axis, double lo, double hi)
{
    static const int fine[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, coarse[] = { 1, 2, 5 };
    size_t len = 0;
    if (n)
        buf[0] = 0;
    if (!n || !(lo > 0) || !(hi > lo) || !isfinite(hi))
        return;
    int k0 = (int)floor(log10(lo)), k1 = (int)ceil(log10(hi));
    for (int pass = 0; pass < 2; pass++) {
        const int *m = pass ? fine : coarse;
        int nm = pass ? 9 : 3, cnt = 0;
        for (int k = k0; k <= k1; k++)
            for (int j = 0; j < nm; j++) {
                double x = m[j] * pow(10, k);
                cnt += x >= lo && x <= hi;
            }
        if (cnt < 4 && !pass)
            continue;
        len += (size_t)snprintf(buf, n, "set %stics (", axis);
        cnt = 0;
        for (int k = k0; k <= k1; k++)
            for (int j = 0; j < nm; j++) {
                double x = m[j] * pow(10, k);
                if (x >= lo && x <= hi && len < n)
                    len += (size_t)snprintf(buf + len, n - len, "%s\"%g\" %g", cnt++ ? ", " : "",
                                            x, x);
            }
        if (len < n)
            snprintf(buf + len, n - len, ")\n");
        return;
    }
}
