/* Shared fixtures for the Criterion tests: in-memory profiles, topologies
 * and one-call simulations with exact (integer-ns) costs; shell commands
 * (the pipesim binary, its exit status, its output); temporary directories
 * and the small files tests write into and read from them. */
#ifndef TESTS_HELPERS_H
#define TESTS_HELPERS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/mdl_gen.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "sched/sch_cost.h"
#include "sim/sim_engine.h"
#include "base/ps_error.h"
#include "sched/sch_partition.h"
#include "sched/sch_schedule.h"
#include "lsan_runner.h"

/* A measured profile: layer i takes fwd_ns[i] / bwd_ns[i] at at_batch samples. */
static inline struct mdl_profile *
th_profile(int n, const double *fwd_ns, const double *bwd_ns, double at_batch,
           const double *out_b, const double *stash_b, double params)
{
    struct mdl_profile *p = mdl_profile_new("<test>", 1);
    cr_assert(p);
    for (int i = 0; i < n; i++) {
        struct mdl_layer l = { .fwd = fwd_ns[i] * 1e-9, .bwd = bwd_ns[i] * 1e-9,
                               .at_batch = at_batch, .params = params,
                               .out_bytes = out_b ? out_b[i] : 0,
                               .stash_bytes = stash_b ? stash_b[i] : 0 };
        snprintf(l.name, sizeof l.name, "l%d", i);
        cr_assert_eq(mdl_profile_add(p, &l), 0);
    }
    return p;
}

/* A topology parsed from JSON text (named "<test>"); the test fails when
 * it does not parse. */
static inline struct mdl_topology *th_topo(const char *json)
{
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_parse(json, strlen(json), "<test>", &t), 0, "%s", ps_errmsg());
    return t;
}

/* JSON text the topology parser refuses, with needle in its message. */
/* Criterion runs a suite's (or a test's) .fini after a test that passes or
 * fails, not after one that skips (cr_skip_test ends the worker): a setup
 * whose tests may skip registers its teardown here as well, so its folder
 * goes whatever the outcome (test_ps_fs left one in /tmp on every run as
 * root). The worker's exit runs it; after .fini it finds nothing left, so
 * the teardown must tolerate a second run and must not assert. */
static inline void th_teardown_at_exit(void (*fini)(void))
{
    cr_assert_eq(atexit(fini), 0);
}

/* Skips the test for a sanitized pipesim: its shadow memory needs the address
 * space a limit (ulimit -v) takes. */
static inline void th_skip_if_sanitized(const char *bin)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s --version | grep -q '^  sanitizers: *none$'", bin);
    if (system(cmd) != 0)
        cr_skip_test("%s is built with a sanitizer", bin);
}

static inline void th_topo_fails(const char *json, const char *needle)
{
    struct mdl_topology *t;
    cr_assert_lt(mdl_topology_parse(json, strlen(json), "<test>", &t), 0, "accepted %s", json);
    cr_expect(strstr(ps_errmsg(), needle), "message '%s' lacks '%s'", ps_errmsg(), needle);
}

/* The model a profile path or generator spec opens (mdl_model_open); the
 * test fails when it does not. */
static inline struct mdl_profile *th_model(const char *spec)
{
    struct mdl_profile *p = NULL;
    int rc = mdl_model_open(spec, &p);
    cr_assert_eq(rc, 0, "%s: rc %d: %s", spec, rc, ps_errmsg());
    return p;
}

/* The layer of p named name; the test fails when there is none. */
static inline const struct mdl_layer *th_layer(const struct mdl_profile *p, const char *name)
{
    for (int i = 0; i < p->n_layers; i++)
        if (!strcmp(p->layers[i].name, name))
            return &p->layers[i];
    cr_assert_fail("no layer '%s' in %s", name, p->path);
    return NULL;
}

/* n layers alike: fwd_ns / bwd_ns at at_batch samples, out_b / stash_b
 * bytes per sample, params parameters each. */
static inline struct mdl_profile *th_uniform(int n, double fwd_ns, double bwd_ns, double at_batch,
                                             double out_b, double stash_b, double params)
{
    double f[256], b[256], o[256], st[256];
    cr_assert(n >= 1 && n <= 256, "th_uniform: %d layers", n);
    for (int i = 0; i < n; i++) {
        f[i] = fwd_ns;
        b[i] = bwd_ns;
        o[i] = out_b;
        st[i] = stash_b;
    }
    return th_profile(n, f, b, at_batch, o, st, params);
}

/* n ideal devices (efficiency 1, no overhead) in a chain. */
static inline struct mdl_topology *th_chain(int n, double mem_bw, double bw, double lat)
{
    struct mdl_device d = { .flops = 1e12, .memory = 1e12, .mem_bandwidth = mem_bw,
                            .eff_max = 1 };
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_chain(n, &d, bw, lat, &t), 0);
    return t;
}

/* Host-driven messages on every device of t (mdl_device msg_*: the fixed
 * seconds and the bytes per second of a send's and a receive's copy). */
static inline void th_messages(struct mdl_topology *t, double send_s, double send_bw,
                               double recv_s, double recv_bw)
{
    for (int i = 0; i < t->n_devices; i++) {
        t->devices[i].msg_send_s = send_s;
        t->devices[i].msg_send_bw = send_bw;
        t->devices[i].msg_recv_s = recv_s;
        t->devices[i].msg_recv_bw = recv_bw;
    }
}

/* th_chain closed into a ring (n >= 3): the wrap-around link carries
 * interleaved schedules from the last device back to the first. */
static inline struct mdl_topology *th_ring(int n, double mem_bw, double bw, double lat)
{
    struct mdl_topology *t = th_chain(n, mem_bw, bw, lat);
    if (n < 3)
        return t;
    t->links = realloc(t->links, (size_t)n * sizeof *t->links);
    cr_assert(t->links);
    struct mdl_link *l = &t->links[t->n_links++];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "wrap");
    l->bandwidth = bw;
    l->latency = lat;
    l->n_ends = 2;
    l->ends = malloc(2 * sizeof *l->ends);
    cr_assert(l->ends);
    l->ends[0] = n - 1;
    l->ends[1] = 0;
    return t;
}

struct th_run {
    struct sch_schedule *s;
    struct sch_costs *c;
    struct sch_partition *part;
    sim_engine *e;
    const struct sim_result *r;
};

static inline void th_simulate(struct th_run *run, const char *sched, const struct mdl_profile *p,
                               const struct mdl_topology *t, int K, int M, enum sch_remat remat,
                               double micro, int trace)
{
    memset(run, 0, sizeof *run);
    cr_assert_eq(sch_schedule_build(sched, K, M, remat, &run->s), 0, "%s", ps_errmsg());
    cr_assert_eq(sch_partition_uniform(run->s->n_stages, p->n_layers, &run->part), 0, "%s",
                 ps_errmsg());
    cr_assert_eq(sch_costs_new(p, t, run->part, run->s->stage_device, micro, &run->c), 0, "%s",
                 ps_errmsg());
    cr_assert_eq(sim_simulate(run->s, run->c, t, trace, &run->e), 0, "%s", ps_errmsg());
    run->r = sim_engine_result(run->e);
    cr_assert(run->r);
}

/* run's schedule and costs on t again with the per-op draw d (NULL: the
 * tabled times), its trace recorded, run to the end: the engine to free. */
static inline sim_engine *th_drawn(const struct th_run *run, const struct mdl_topology *t,
                                   const struct sim_draw *d)
{
    sim_engine *e;
    struct sim_engine_opts o = { .record_trace = 1, .draw = d };
    cr_assert_eq(sim_engine_new(run->s, run->c, t, &o, &e), 0, "%s", ps_errmsg());
    cr_assert_eq(sim_engine_run(e), 0, "%s", ps_errmsg());
    return e;
}

static inline void th_release(struct th_run *run)
{
    sim_engine_free(run->e);
    sch_costs_free(run->c);
    sch_partition_free(run->part);
    sch_schedule_free(run->s);
}

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/wait.h>

/* Runs a shell command; returns its exit status. */
static inline int th_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int th_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* A prefix that runs one mpirun at a time across the suites (criterion
 * runs two tests at once: make check --jobs 2; one launch once failed to
 * start, exit 1 in 0.05 s, while another could have been starting): flock
 * on this user's lock file under $TMPDIR (default /tmp), waiting at most
 * 100 s; "" where flock is missing, so the run goes unlocked. */
static inline const char *th_mpi_lock(void)
{
    static char buf[512];
    static int done;
    if (!done) {
        done = 1;
        if (system("command -v flock >/dev/null 2>&1") == 0) {
            const char *t = getenv("TMPDIR");
            snprintf(buf, sizeof buf, "flock -w 100 %s/pipesim-test-mpi-%u.lock ",
                     t && *t ? t : "/tmp", (unsigned)getuid());
        }
    }
    return buf;
}

static inline const char *th_pipesim(void)
{
    const char *p = getenv("PIPESIM");
    return p ? p : "build/pipesim";
}

/* Runs a shell command, its stdout into out (cap bytes with the NUL, the
 * rest dropped); returns its exit status, -1 when it did not exit. */
static inline int th_capture(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int th_capture(char *out, size_t cap, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "popen %s", cmd);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    char sink[4096];
    while (fread(sink, 1, sizeof sink, f) > 0)
        ;
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A fresh directory /tmp/pipesim-TAG-XXXXXX; its path in dir (n bytes). */
static inline void th_tmpdir(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "/tmp/pipesim-%s-XXXXXX", tag);
    cr_assert(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
}

/* Writes text to dir/name, the file replaced. */
static inline void th_put(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert(f, "%s: %s", p, strerror(errno));
    fputs(text, f);
    cr_assert_eq(fclose(f), 0, "%s: %s", p, strerror(errno));
}

/* dir/name into buf (n bytes with the NUL); empty when it cannot be read. */
static inline void th_slurp(const char *dir, const char *name, char *buf, size_t n)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    buf[0] = 0;
    if (!f)
        return;
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = 0;
    fclose(f);
}

/* Entries of dir but . and .. and other dot files; -1 when it cannot be
 * opened. */
static inline int th_entries(const char *dir)
{
    DIR *h = opendir(dir);
    if (!h)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(h)))
        n += e->d_name[0] != '.';
    closedir(h);
    return n;
}

/* Asserts that p is a PNG file (signature and IHDR chunk); its width. */
static inline unsigned th_png_width(const char *p)
{
    FILE *f = fopen(p, "rb");
    cr_assert(f, "%s missing", p);
    unsigned char h[24];
    cr_assert_eq(fread(h, 1, 24, f), 24, "%s: shorter than a PNG header", p);
    fclose(f);
    cr_assert_eq(memcmp(h, "\x89PNG\r\n\x1a\n", 8), 0, "%s: not a PNG", p);
    cr_assert_eq(memcmp(h + 12, "IHDR", 4), 0, "%s: no IHDR chunk", p);
    return (unsigned)h[16] << 24 | (unsigned)h[17] << 16 | (unsigned)h[18] << 8 | h[19];
}

#endif
