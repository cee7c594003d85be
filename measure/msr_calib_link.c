/* msr_calib link timing: the hand-off latency and transfers between two
 * pinned cores through the runtime's channels, and the memcpy bandwidth
 * (see msr_calib.h). */
#include "measure/msr_calib.h"
#include "measure/msr_calib_int.h"
#include "runtime/rt_chan.h"
#include "runtime/rt_cpu.h"
#include "base/ps_error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The runtime's receive polls this long before sleeping when every worker
 * has its own core (rt_pipe.c, RT_SPIN_NS): the hand-off measured here must
 * be the one the pipeline sees. */
#define CAL_SPIN_NS 5000000
/* Messages timed per transfer size (after 4 warm-up ones). */
#define CAL_MSGS 25

static double secs(int64_t ns) { return (double)ns * 1e-9; }

/* ---- hand-off and transfers between two pinned cores ---- */

struct pingpong {
    struct rt_chan *ab, *ba;
    int n_msgs, cpu;
    int64_t bytes, delay_ns;
    uint8_t *src, *dst;
    int64_t *t_start, *t_end;
    struct rt_watch *watch;
    int rc;
    char err[PS_ERRMSG_MAX];
};

static void *ping_main(void *arg)
{
    struct pingpong *p = arg;
    int64_t ts, tr;
    uint64_t ack;
    int rc = rt_pin_self(p->cpu);
    for (int k = 0; k < p->n_msgs && !rc; k++) {
        if (p->delay_ns) {
            struct timespec d = { 0, (long)p->delay_ns };
            nanosleep(&d, NULL);
        }
        p->t_start[k] = rt_now_ns();
        rt_chan_send(p->ab, k, p->src, p->bytes, &ts);
        rc = rt_chan_recv(p->ba, k, &ack, sizeof ack, &ts, &tr, "calibration ack");
    }
    p->rc = rc;
    if (rc < 0)
        snprintf(p->err, sizeof p->err, "%s", ps_errmsg());
    rt_watch_leave(p->watch);
    return NULL;
}

static void *pong_main(void *arg)
{
    struct pingpong *p = arg;
    int64_t ts, tr;
    uint64_t ack = 1;
    int rc = rt_pin_self(p->cpu);
    for (int k = 0; k < p->n_msgs && !rc; k++) {
        rc = rt_chan_recv(p->ab, k, p->dst, p->bytes, &ts, &tr, "calibration message");
        p->t_end[k] = tr;
        if (!rc)
            rt_chan_send(p->ba, k, &ack, sizeof ack, &ts);
    }
    p->rc = rc;
    if (rc < 0)
        snprintf(p->err, sizeof p->err, "%s", ps_errmsg());
    rt_watch_leave(p->watch);
    return NULL;
}

/* One-way times (sender's send start to receiver's copy end) of n messages
 * of bytes, the sender pausing delay_ns before each. */
static int pingpong_run(const struct msr_calib *c, int64_t bytes, int64_t delay_ns, int n,
                        int warm, struct msr_stat *out)
{
    struct rt_chan *ch[2] = { NULL, NULL };
    struct rt_watch w;
    struct pingpong p[2];
    int total = n + warm, rc;
    int64_t *t0 = calloc((size_t)total, sizeof *t0), *t1 = calloc((size_t)total, sizeof *t1);
    uint8_t *src = malloc((size_t)bytes), *dst = malloc((size_t)bytes);
    double *v = malloc((size_t)n * sizeof *v);
    if (!t0 || !t1 || !src || !dst || !v) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    memset(src, 1, (size_t)bytes);
    if ((rc = rt_watch_init(&w, 2, ch, 2)) < 0)
        goto out;
    w.spin_ns = c->cpu != c->peer_cpu ? CAL_SPIN_NS : 0;
    if ((rc = rt_chan_new(total, bytes, &w, &ch[0])) < 0 ||
        (rc = rt_chan_new(total, sizeof(uint64_t), &w, &ch[1])) < 0)
        goto out_watch;
    for (int i = 0; i < 2; i++)
        p[i] = (struct pingpong){ .ab = ch[0], .ba = ch[1], .n_msgs = total,
                                  .cpu = i ? c->peer_cpu : c->cpu, .bytes = bytes,
                                  .delay_ns = delay_ns, .src = src, .dst = dst,
                                  .t_start = t0, .t_end = t1, .watch = &w };
    pthread_t th[2];
    int started = 0;
    for (; started < 2; started++)
        if (pthread_create(&th[started], NULL, started ? pong_main : ping_main, &p[started])) {
            rc = ps_error(PS_ERUNTIME, "cannot start a calibration thread");
            rt_watch_abort(&w);
            break;
        }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2 && !rc; i++)
        if (p[i].rc < 0)
            rc = ps_error(-p[i].rc, "hand-off calibration: %s", p[i].err);
    if (!rc) {
        for (int k = 0; k < n; k++)
            v[k] = secs(t1[warm + k] - t0[warm + k]);
        msr_stat_of(v, n, out);
    }
out_watch:
    rt_chan_free(ch[0]);
    rt_chan_free(ch[1]);
    rt_watch_release(&w);
out:
    free(t0);
    free(t1);
    free(src);
    free(dst);
    free(v);
    return rc;
}

static int time_memcpy(struct msr_calib *c, int64_t bytes)
{
    enum { REPS = 15, NB = 8 };
    uint8_t *src = malloc((size_t)bytes * NB), *dst = malloc((size_t)bytes * NB);
    double v[REPS];
    if (!src || !dst) {
        free(src);
        free(dst);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    memset(src, 3, (size_t)bytes * NB);
    memset(dst, 0, (size_t)bytes * NB);
    for (int rep = -2; rep < REPS; rep++) {
        int j = (rep + 2) % NB;
        int64_t t0 = rt_now_ns();
        memcpy(dst + (size_t)j * bytes, src + (size_t)j * bytes, (size_t)bytes);
        if (rep >= 0)
            v[rep] = secs(rt_now_ns() - t0);
    }
    struct msr_stat s;
    msr_stat_of(v, REPS, &s);
    c->memcpy_bw = s.med > 0 ? (double)bytes / s.med : 0;
    free(src);
    free(dst);
    return 0;
}

/* The widest stage boundary's width (the link's messages). */
static int link_width(const struct rt_net *net)
{
    int W = 1;
    for (int l = 1; l < net->n_layers; l++)
        W = rt_net_width(net, l) > W ? rt_net_width(net, l) : W;
    return net->n_layers == 1 ? rt_net_width(net, 1) : W;
}

double msr_calib_link_bytes(const struct rt_net *net, const struct msr_calib *c)
{
    double b = 4.0 * c->sizes[c->n_sizes - 1] * link_width(net);
    return (CAL_MSGS + 4 + 2) * b; /* the channel's slots, the source and the copy */
}

int msr_calib_time_link(const struct rt_net *net, struct msr_calib *c)
{
    int rc, W = link_width(net);
    if ((rc = pingpong_run(c, 64, 0, CAL_MSGS, 4, &c->handoff_spin)) < 0 ||
        (rc = pingpong_run(c, 64, 2 * CAL_SPIN_NS + 200000, 9, 1, &c->handoff_sleep)) < 0)
        return rc;
    c->n_xfer = 0;
    c->xfer_bytes[c->n_xfer] = 64;
    c->xfer[c->n_xfer++] = c->handoff_spin;
    for (int i = 0; i < c->n_sizes; i++) {
        int64_t b = 4LL * c->sizes[i] * W;
        if (b <= 64)
            continue;
        c->xfer_bytes[c->n_xfer] = (double)b;
        if ((rc = pingpong_run(c, b, 0, CAL_MSGS, 4, &c->xfer[c->n_xfer++])) < 0)
            return rc;
    }
    return time_memcpy(c, (int64_t)c->xfer_bytes[c->n_xfer - 1]);
}

