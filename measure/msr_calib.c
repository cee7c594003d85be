/* msr_calib: the run (options, groups), its layers' fits, and the profile
 * and topology built from them (see msr_calib.h); the statistics and fit
 * primitives are in msr_fit.c, real-time scheduling in msr_rt.c. */
#include "measure/msr_calib.h"
#include "measure/msr_calib_int.h"
#include "runtime/rt_chan.h"
#include "runtime/rt_cpu.h"
#include "runtime/rt_stage.h"
#include "base/ps_error.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void msr_calib_free(struct msr_calib *c)
{
    if (!c)
        return;
    free(c->layers);
    free(c->groups);
    free(c->pipe);
    mdl_profile_free(c->net_profile);
    free(c);
}

/* "dense 512x512 relu", "dense 512x512 linear +mse", "norm 512"; layer 0
 * computes no input gradient, so it is its own group. */
static void group_label(const struct rt_net *net, int l, char *buf, size_t n)
{
    const struct rt_layer *ly = &net->layers[l];
    if (ly->kind == RT_LAYER_NORM)
        snprintf(buf, n, "norm %d", ly->in);
    else
        snprintf(buf, n, "dense %dx%d %s", ly->in, ly->out, ly->relu ? "relu" : "linear");
    if (l == net->n_layers - 1)
        snprintf(buf + strlen(buf), n - strlen(buf), " +mse");
    if (l == 0)
        snprintf(buf + strlen(buf), n - strlen(buf), " (first: no dx)");
}

static int fit_sizes(const struct msr_calib *c, const struct msr_stat *st, struct msr_fit *f)
{
    double x[MSR_CALIB_MAX_SIZES], y[MSR_CALIB_MAX_SIZES];
    for (int i = 0; i < c->n_sizes; i++) {
        x[i] = c->sizes[i];
        y[i] = st[i].med > 0 ? st[i].med : 1e-9;
    }
    return msr_fit_line(x, y, c->n_sizes, 1, f);
}

static int fit_all(struct msr_calib *c)
{
    int rc = 0;
    for (int l = 0; l < c->n_layers && !rc; l++) {
        struct msr_calib_layer *cl = &c->layers[l];
        for (int op = 0; op < MSR_CALIB_NOPS && !rc; op++)
            rc = fit_sizes(c, cl->t[op], &cl->fit[op]);
        if (!rc)
            rc = fit_sizes(c, cl->kept, &cl->kept_fit);
    }
    /* groups: the median over the group's layers at each size */
    for (int g = 0; g < c->n_groups && !rc; g++) {
        struct msr_calib_group *gr = &c->groups[g];
        for (int op = 0; op < MSR_CALIB_NOPS && !rc; op++) {
            struct msr_stat st[MSR_CALIB_MAX_SIZES];
            double v[64];
            for (int i = 0; i < c->n_sizes; i++) {
                int k = 0;
                for (int l = 0; l < c->n_layers && k < 64; l++)
                    if (!strcmp(c->layers[l].group, gr->label))
                        v[k++] = c->layers[l].t[op][i].med;
                msr_stat_of(v, k, &st[i]);
            }
            rc = fit_sizes(c, st, &gr->fit[op]);
        }
    }
    /* the device's FLOP model over the dense layers' kept forwards */
    int np = 0;
    for (int l = 0; l < c->n_layers; l++)
        np += !strncmp(c->layers[l].kind, "dense", 5) ? c->n_sizes : 0;
    double *f = malloc((size_t)(np ? np : 1) * 3 * sizeof *f);
    if (!f)
        return ps_error(PS_ENOMEM, "out of memory");
    double *ns = f + np, *t = ns + np;
    int k = 0;
    for (int l = 0; l < c->n_layers; l++)
        for (int i = 0; !strncmp(c->layers[l].kind, "dense", 5) && i < c->n_sizes; i++) {
            f[k] = c->layers[l].fwd_flops;
            ns[k] = c->sizes[i];
            t[k++] = c->layers[l].kept[i].med;
        }
    if (!rc && np >= 3 &&
        msr_fit_flops(f, ns, t, np, &c->fit_rate, &c->fit_batch_half, &c->fit_overhead,
                      &c->fit_r2) < 0) {
        /* Timings too small or too noisy to separate FLOPs from overhead (tiny
         * layers on busy cores): the topology falls back to the GEMM rate with
         * no size model; the per-layer times in the profile are unaffected. */
        fprintf(stderr, "pipesim calibrate: warning: %s; the topology uses the measured "
                "GEMM rate without an efficiency curve\n", ps_errmsg());
        ps_error_clear();
        c->fit_rate = c->fit_batch_half = c->fit_overhead = c->fit_r2 = 0;
    }
    free(f);
    if (rc < 0 || c->n_xfer < 1)
        return rc;
    double y[MSR_CALIB_MAX_SIZES + 1];
    for (int i = 0; i < c->n_xfer; i++)
        y[i] = c->xfer[i].med > 0 ? c->xfer[i].med : 1e-9;
    if ((rc = msr_fit_line(c->xfer_bytes, y, c->n_xfer, 1, &c->xfer_fit)) < 0)
        return rc;
    c->link_latency = c->xfer_fit.a > 0 ? c->xfer_fit.a : c->handoff_spin.med;
    c->link_bandwidth = msr_calib_xfer_slope_ok(c) ? 1 / c->xfer_fit.b
                        : (c->memcpy_bw > 0 ? c->memcpy_bw / 2 : 1e10);
    /* pipelined: the hand-offs inside the steps replace the ping-pong link */
    c->pingpong_latency = c->link_latency;
    c->pingpong_bandwidth = c->link_bandwidth;
    if (msr_calib_messages(c)) { /* the copies are the bytes' time */
        c->link_latency = c->msg_latency;
        c->link_bandwidth = MSR_FREE_LINK;
    } else if (c->pipelined && c->handoff_fit.n >= 2 && c->handoff_fit.b > 0) {
        c->link_latency = c->handoff_fit.a > 0 ? c->handoff_fit.a : 0;
        c->link_bandwidth = 1 / c->handoff_fit.b;
    }
    return 0;
}

int msr_calib_xfer_slope_ok(const struct msr_calib *c)
{
    return c->xfer_fit.b > 0 && (!(c->memcpy_bw > 0) || 1 / c->xfer_fit.b <= c->memcpy_bw);
}

int msr_calib_messages(const struct msr_calib *c)
{
    return c->pipelined && c->msg_send_fit.n >= 1 && c->msg_recv_fit.n >= 1 &&
           (c->msg_send_fit.a > 0 || c->msg_send_fit.b > 0 || c->msg_recv_fit.a > 0 ||
            c->msg_recv_fit.b > 0);
}

/* A copy line's fixed part and bandwidth for "messages" (0: none; the
 * lines are at least 0 already, msr_fit_copy_line in msr_fit.c). */
static void msg_line(const struct msr_fit *f, double *s, double *bw)
{
    *s = f->a > 0 ? f->a : 0;
    *bw = f->b > 0 ? 1 / f->b : 0;
}

static double mem_total(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    double kb = 0;
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemTotal: %lf kB", &kb) == 1)
                break;
        fclose(f);
    }
    if (kb > 0)
        return kb * 1024;
    return (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
}

static int check_opts(const struct msr_calib_opts *o)
{
    if (!o->spec)
        return ps_error(PS_EUSAGE, "calibrate: a net spec is required");
    if (o->n_sizes < 1 || o->n_sizes > MSR_CALIB_MAX_SIZES)
        return ps_error(PS_EUSAGE, "calibrate: 1 to %d micro-batch sizes, got %d",
                         MSR_CALIB_MAX_SIZES, o->n_sizes);
    for (int i = 0; i < o->n_sizes; i++) {
        if (o->sizes[i] < 1)
            return ps_error(PS_EUSAGE, "calibrate: micro-batch size %d must be >= 1",
                             o->sizes[i]);
        for (int j = 0; j < i; j++)
            if (o->sizes[j] == o->sizes[i])
                return ps_error(PS_EUSAGE, "calibrate: micro-batch size %d listed twice",
                                 o->sizes[i]);
    }
    if (o->repeats < 0 || o->repeats > 10000 || o->warmup < 0 || o->warmup > 1000)
        return ps_error(PS_EUSAGE, "calibrate: repeats in [1, 10000], warm-up in [0, 1000]");
    if (o->batch < 0 || o->batch > (1 << 24))
        return ps_error(PS_EUSAGE, "calibrate: batch %d must be in [1, %d]", o->batch, 1 << 24);
    if (o->pipelined && !o->batch)
        return ps_error(PS_EUSAGE, "calibrate: a pipelined calibration needs the step's batch");
    if (o->max_rounds < 0 || o->max_rounds > 10000 || !(o->rel_se >= 0 && o->rel_se < 1))
        return ps_error(PS_EUSAGE, "calibrate: max rounds in [0, 10000], relative standard "
                         "error in [0, 1)");
    int ok = !o->ref_batch;
    for (int i = 0; i < o->n_sizes; i++)
        ok |= o->sizes[i] == o->ref_batch;
    if (!ok)
        return ps_error(PS_EUSAGE, "calibrate: the profile's batch %d is not one of the "
                         "measured sizes", o->ref_batch);
    return 0;
}

/* The first allowed CPU other than not (-1: none excluded); not itself when
 * it is the only one. */
static int first_but(const int *cpus, int n, int not)
{
    for (int i = 0; i < n; i++)
        if (cpus[i] != not)
            return cpus[i];
    return not;
}

int msr_calib_pick_cpus(int cpu, int peer, int *out_cpu, int *out_peer, int *n_cores)
{
    int *cpus, n, rc = rt_cpus_allowed(&cpus, &n);
    if (rc < 0)
        return rc;
    /* a default is a core the other end is not on (helper-111: --cpu 1 alone put
     * the peer on the second allowed core, 1 again, with no note) */
    *out_cpu = cpu >= 0 ? cpu : first_but(cpus, n, peer);
    *out_peer = peer >= 0 ? peer : first_but(cpus, n, *out_cpu);
    if (n_cores)
        *n_cores = n;
    int ok0 = 0, ok1 = 0;
    for (int i = 0; i < n; i++)
        ok0 |= cpus[i] == *out_cpu, ok1 |= cpus[i] == *out_peer;
    free(cpus);
    if (!ok0 || !ok1)
        return ps_error(PS_EUSAGE, "CPU %d is not in this process's affinity "
                         "mask", ok0 ? *out_peer : *out_cpu);
    return 0;
}

static int pick_cpus(const struct msr_calib_opts *o, struct msr_calib *c)
{
    return msr_calib_pick_cpus(o->cpu, o->peer_cpu, &c->cpu, &c->peer_cpu, &c->n_cores);
}

struct msr_calib_session {
    struct msr_calib_opts o;       /* copied; its pointers borrowed */
    struct msr_calib *c;
    struct rt_net *net;
    struct msr_pipe_state *ps;     /* pipelined only */
    int64_t t_begin;
    int done;
};

void msr_calib_session_free(msr_calib_session *s)
{
    if (!s)
        return;
    msr_calib_pipe_free(s->ps);
    rt_net_free(s->net);
    msr_calib_free(s->c);
    free(s);
}

int msr_calib_begin(const struct msr_calib_opts *o, msr_calib_session **out)
{
    *out = NULL;
    int rc = check_opts(o);
    if (rc < 0)
        return rc;
    msr_calib_session *ss = calloc(1, sizeof *ss);
    if (!ss)
        return ps_error(PS_ENOMEM, "out of memory");
    ss->o = *o;
    o = &ss->o;
    struct rt_net *net = NULL;
    struct msr_calib *c = ss->c = calloc(1, sizeof *c);
    if (!c) {
        free(ss);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    ss->t_begin = rt_now_ns();
    if ((rc = rt_net_parse(o->spec, &ss->net)) < 0)
        goto err;
    net = ss->net;
    if ((rc = rt_net_init_params(net, o->seed)) < 0 ||
        (rc = rt_net_profile(net, &c->net_profile)) < 0 || (rc = pick_cpus(o, c)) < 0)
        goto err;
    snprintf(c->spec, sizeof c->spec, "%s", net->spec);
    snprintf(c->blas, sizeof c->blas, "%s", rt_blas_corename());
    time_t now = time(NULL);
    strftime(c->stamp, sizeof c->stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    c->repeats = o->repeats ? o->repeats : 5;
    c->warmup = o->warmup;
    c->batch = o->batch;
    c->n_sizes = o->n_sizes;
    memcpy(c->sizes, o->sizes, (size_t)o->n_sizes * sizeof *c->sizes);
    for (int i = 1; i < c->n_sizes; i++) /* increasing */
        for (int j = i; j > 0 && c->sizes[j - 1] > c->sizes[j]; j--) {
            int t = c->sizes[j];
            c->sizes[j] = c->sizes[j - 1];
            c->sizes[j - 1] = t;
        }
    c->ref_batch = o->ref_batch ? o->ref_batch : c->sizes[c->n_sizes - 1];
    c->n_layers = net->n_layers;
    c->n_stages = o->n_stages > 0 ? o->n_stages : 1;
    if (c->n_stages > net->n_layers) {
        rc = ps_error(PS_ENOFIT, "calibrate: %d stages but the net has %d layers",
                       c->n_stages, net->n_layers);
        goto err;
    }
    c->layers = calloc((size_t)net->n_layers, sizeof *c->layers);
    c->groups = calloc((size_t)net->n_layers, sizeof *c->groups);
    if (!c->layers || !c->groups) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err;
    }
    for (int l = 0; l < net->n_layers; l++) {
        struct msr_calib_layer *cl = &c->layers[l];
        const struct mdl_layer *ml = &c->net_profile->layers[l];
        snprintf(cl->name, sizeof cl->name, "%s", ml->name);
        snprintf(cl->kind, sizeof cl->kind, "%s", ml->kind);
        cl->fwd_flops = ml->fwd;
        cl->params = ml->params;
        group_label(net, l, cl->group, sizeof cl->group);
        int g = 0;
        while (g < c->n_groups && strcmp(c->groups[g].label, cl->group))
            g++;
        if (g == c->n_groups)
            snprintf(c->groups[c->n_groups++].label, sizeof c->groups[0].label, "%s",
                     cl->group);
        c->groups[g].n_layers++;
    }
    if ((rc = msr_calib_time(o, net, c)) < 0 ||
        (o->pipelined && (rc = msr_calib_pipe_new(o, net, c, &ss->ps)) < 0))
        goto err;
    ss->done = !o->pipelined;
    *out = ss;
    return 0;
err:
    msr_calib_session_free(ss);
    return rc;
}

int msr_calib_round(msr_calib_session *s)
{
    if (s->done)
        return 1;
    int rc = msr_calib_pipe_round(s->ps);
    if (rc > 0)
        s->done = 1;
    return rc;
}

int msr_calib_size_round(msr_calib_session *s, int micro)
{
    if (s->done || !s->ps)
        return 0;
    return msr_calib_pipe_size(s->ps, micro);
}

int msr_calib_rounds(msr_calib_session *s, int n)
{
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = msr_calib_round(s);
    return rc < 0 ? rc : 0;
}

int msr_calib_end(msr_calib_session *s, struct msr_calib **out)
{
    *out = NULL;
    struct msr_calib *c = s->c;
    int rc = 0;
    if ((s->ps && (rc = msr_calib_pipe_finish(s->ps)) < 0) || (rc = fit_all(c)) < 0)
        goto out;
    c->memory_per_core = mem_total() / c->n_cores;
    c->wall_s = (double)(rt_now_ns() - s->t_begin) * 1e-9;
    *out = c;
    s->c = NULL;
out:
    msr_calib_session_free(s);
    return rc;
}

int msr_calib_run(const struct msr_calib_opts *o, struct msr_calib **out)
{
    *out = NULL;
    msr_calib_session *s;
    int rc = msr_calib_begin(o, &s);
    while (rc == 0)
        rc = msr_calib_round(s);
    if (rc < 0) {
        if (s)
            msr_calib_session_free(s);
        return rc;
    }
    return msr_calib_end(s, out);
}

/* ---- outputs ---- */

static int ref_index(const struct msr_calib *c)
{
    for (int i = 0; i < c->n_sizes; i++)
        if (c->sizes[i] == c->ref_batch)
            return i;
    return c->n_sizes - 1;
}

static double clamp_fixed(double a, double t_at) { return a < 0 ? 0 : a > t_at ? t_at : a; }

/* W at size i: timed inside B, so at most B (medians of different samples
 * could say otherwise) */
static double wgrad_at(const struct msr_calib_layer *cl, int i)
{
    double w = cl->t[MSR_CALIB_WGRAD][i].med, b = cl->t[MSR_CALIB_BWD][i].med;
    return w > b ? b : w > 0 ? w : 0;
}

int msr_calib_profile(const struct msr_calib *c, struct mdl_profile **out)
{
    *out = NULL;
    char origin[1024];
    /* "in 1 stage of 2 layers": "in stages 2" read as two stages (helper-127) */
    snprintf(origin, sizeof origin, "pipesim calibrate %s in %d stage%s of %s layers on cpu %d, "
             "OpenBLAS %s, %d repeats, %s", c->spec, c->n_stages, c->n_stages == 1 ? "" : "s",
             c->partition, c->cpu, c->blas, c->repeats, c->stamp);
    struct mdl_profile *p = mdl_profile_new(origin, 1);
    if (!p)
        return ps_error(PS_ENOMEM, "out of memory");
    int r = ref_index(c);
    for (int l = 0; l < c->n_layers; l++) {
        const struct msr_calib_layer *cl = &c->layers[l];
        struct mdl_layer m = c->net_profile->layers[l]; /* names, params, bytes */
        m.at_batch = c->ref_batch;
        m.fwd = cl->kept[r].med;
        m.bwd = cl->t[MSR_CALIB_BWD][r].med;
        m.has_wgrad = 1; /* W as timed inside B (the generator's is in FLOPs) */
        m.wgrad = wgrad_at(cl, r);
        m.fwd_nostash = cl->t[MSR_CALIB_FWD_NOSTASH][r].med;
        m.has_nostash = 1;
        m.has_fixed = 1;
        m.fwd_fixed = clamp_fixed(cl->kept_fit.a, m.fwd);
        m.bwd_fixed = clamp_fixed(cl->fit[MSR_CALIB_BWD].a, m.bwd);
        m.nostash_fixed = clamp_fixed(cl->fit[MSR_CALIB_FWD_NOSTASH].a, m.fwd_nostash);
        /* R and B after R, each timed in the steps apart (not pooled) */
        int apart = c->pipelined && c->pipe && !c->pipe_pooled;
        m.has_recomp = m.has_bwd_remat = apart;
        m.recomp = cl->t[MSR_CALIB_RECOMP][r].med;
        m.bwd_remat = cl->bwd_remat[r].med;
        double pb[MDL_MAX_POINTS], pf[MDL_MAX_POINTS], pbw[MDL_MAX_POINTS],
            pn[MDL_MAX_POINTS], pw[MDL_MAX_POINTS], pr[MDL_MAX_POINTS],
            pbr[MDL_MAX_POINTS]; /* mdl_profile_add copies them */
        m.pt_batch = pb;
        m.pt_fwd = pf;
        m.pt_bwd = pbw;
        m.pt_nostash = pn;
        m.pt_wgrad = pw;
        m.pt_recomp = apart ? pr : NULL;
        m.pt_bwd_remat = apart ? pbr : NULL;
        m.n_pts = 0;
        for (int i = 0; i < c->n_sizes && m.n_pts < MDL_MAX_POINTS; i++) {
            if (i == r)
                continue;
            m.pt_batch[m.n_pts] = c->sizes[i];
            m.pt_fwd[m.n_pts] = cl->kept[i].med;
            m.pt_bwd[m.n_pts] = cl->t[MSR_CALIB_BWD][i].med;
            m.pt_wgrad[m.n_pts] = wgrad_at(cl, i);
            pr[m.n_pts] = cl->t[MSR_CALIB_RECOMP][i].med;
            pbr[m.n_pts] = cl->bwd_remat[i].med;
            m.pt_nostash[m.n_pts++] = cl->t[MSR_CALIB_FWD_NOSTASH][i].med;
        }
        int rc = mdl_profile_add(p, &m);
        if (rc < 0) {
            mdl_profile_free(p);
            return rc;
        }
    }
    *out = p;
    return 0;
}

/* Up to this many cores the calibrated topology is a full mesh (2016
 * links); beyond it one crossbar with a link per core, so a many-core host
 * does not write hundreds of thousands of links. */
#define MESH_MAX 64

/* A full-duplex link from node a to node b (devices, then switches). */
static int add_link(struct mdl_topology *t, const struct msr_calib *c, int a, int b,
                    double latency)
{
    struct mdl_link *l = &t->links[t->n_links++];
    if (b < t->n_devices)
        snprintf(l->name, sizeof l->name, "core%d-core%d", a, b);
    else
        snprintf(l->name, sizeof l->name, "core%d-switch", a);
    l->bandwidth = c->link_bandwidth > 0 ? c->link_bandwidth : 1e10;
    l->latency = latency;
    l->shared = 0;
    if (!(l->ends = malloc(2 * sizeof *l->ends)))
        return ps_error(PS_ENOMEM, "out of memory");
    l->ends[l->n_ends++] = a;
    l->ends[l->n_ends++] = b;
    return 0;
}

int msr_calib_topology(const struct msr_calib *c, struct mdl_topology **out)
{
    *out = NULL;
    struct mdl_topology *t = calloc(1, sizeof *t);
    int mesh = c->n_cores <= MESH_MAX;
    int n_links = mesh ? c->n_cores * (c->n_cores - 1) / 2 : c->n_cores;
    if (!t || !(t->path = strdup("<calibrated>")) ||
        !(t->devices = calloc((size_t)c->n_cores, sizeof *t->devices)) ||
        !(t->links = calloc(n_links > 0 ? (size_t)n_links : 1, sizeof *t->links)) ||
        (!mesh && !(t->switches = calloc(1, sizeof *t->switches))))
        goto err_nomem;
    snprintf(t->name, sizeof t->name, "cpu-%dcore-calibrated", c->n_cores);
    t->bytes_per_param = 8; /* the runtime keeps FP32 weights + gradients (SGD) */
    double eff = c->fit_rate > 0 && c->gemm_flops > 0 ? c->fit_rate / c->gemm_flops : 1;
    for (int d = 0; d < c->n_cores; d++) {
        struct mdl_device *dv = &t->devices[t->n_devices++];
        snprintf(dv->name, sizeof dv->name, "core%d", d);
        dv->flops = c->gemm_flops > 0 ? c->gemm_flops : 1e9;
        dv->memory = c->memory_per_core > 0 ? c->memory_per_core : 1e9;
        dv->mem_bandwidth = c->update_bw;
        dv->eff_max = eff > 1 ? 1 : eff > 0 ? eff : 1;
        dv->batch_half = c->fit_batch_half > 0 ? c->fit_batch_half : 0;
        dv->overhead_s = c->fit_overhead > 0 ? c->fit_overhead : 0;
        if (msr_calib_messages(c)) {
            msg_line(&c->msg_send_fit, &dv->msg_send_s, &dv->msg_send_bw);
            msg_line(&c->msg_recv_fit, &dv->msg_recv_s, &dv->msg_recv_bw);
        }
    }
    /* The runtime's workers copy their own messages into and out of a
     * channel per stage boundary and direction (runtime/rt_chan.h): a send
     * never waits for another core's transfer, so each pair of cores has
     * its own full-duplex link, not one bus. (On a shared link a send
     * queued behind the other direction's transfer kept its buffer past its
     * place in the list, where the runtime frees it: the simulated peak
     * came out above the measured one.) Beyond MESH_MAX cores, one switch:
     * every pair is two hops, each with half the latency. */
    double lat = c->link_latency > 0 ? c->link_latency : 0;
    int rc = 0;
    if (mesh) {
        for (int a = 0; a < c->n_cores && rc == 0; a++)
            for (int b = a + 1; b < c->n_cores && rc == 0; b++)
                rc = add_link(t, c, a, b, lat);
    } else {
        snprintf(t->switches[0].name, sizeof t->switches[0].name, "switch");
        t->n_switches = 1;
        for (int a = 0; a < c->n_cores && rc == 0; a++)
            rc = add_link(t, c, a, c->n_cores, lat / 2);
    }
    if (rc < 0) {
        mdl_topology_free(t);
        return rc;
    }
    *out = t;
    return 0;
err_nomem:
    mdl_topology_free(t);
    return ps_error(PS_ENOMEM, "out of memory");
}
