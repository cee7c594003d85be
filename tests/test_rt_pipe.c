/* Runtime plumbing: channels and the deadlock watch, pinning, schedules the
 * replay refuses, measured traces, configuration errors. */
#include "helpers.h"

#include <unistd.h>

/* A scratch file name private to this process (tests may run from a tree
 * where build/tests does not exist yet). */
static const char *scratch(const char *name)
{
    static char buf[4][128];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, 128, "/tmp/pipesim-rt-%d-%s", (int)getpid(), name);
    return b;
}

#include <pthread.h>

#include "runtime/rt_chan.h"
#include "runtime/rt_cpu.h"
#include "runtime/rt_pipe.h"
#include "traces/trc_trace.h"

/* Suite-wide timeout (see test_runtime.c). */
TestSuite(rt_pipe, .timeout = 60);

Test(rt_pipe, channel_slots_are_per_microbatch)
{
    struct rt_watch w;
    struct rt_chan *c;
    cr_assert_eq(rt_watch_init(&w, 1, &c, 1), 0);
    cr_assert_eq(rt_chan_new(3, 8, &w, &c), 0);
    int64_t ts, tr;
    double a = 1.5, b = -2.0, got;
    rt_chan_send(c, 2, &a, 8, &ts);
    rt_chan_send(c, 0, &b, 8, &ts);
    cr_assert_eq(rt_chan_recv(c, 0, &got, 8, &ts, &tr, "x"), 0); /* not in send order */
    cr_assert_eq(got, -2.0);
    cr_assert(tr >= ts);
    cr_assert_eq(rt_chan_recv(c, 2, &got, 8, &ts, &tr, "x"), 0);
    cr_assert_eq(got, 1.5);
    /* the only live worker waits on an empty slot: deadlock, reported at once */
    cr_assert_eq(rt_chan_recv(c, 1, &got, 8, &ts, &tr, "recvF1"), -PS_ERUNTIME);
    cr_assert(strstr(ps_errmsg(), "deadlocked") && strstr(ps_errmsg(), "recvF1"), "%s",
              ps_errmsg());
    rt_chan_free(c);
    rt_watch_release(&w);
}

struct waiter { struct rt_chan *c; int slot, rc; char msg[256]; };

static void *wait_main(void *arg)
{
    struct waiter *x = arg;
    int64_t ts, tr;
    double v;
    x->rc = rt_chan_recv(x->c, x->slot, &v, 8, &ts, &tr, "recvB0");
    snprintf(x->msg, sizeof x->msg, "%s", ps_errmsg());
    return NULL;
}

Test(rt_pipe, two_workers_waiting_on_each_other_are_a_deadlock)
{
    struct rt_chan *ch[2];
    struct rt_watch w;
    cr_assert_eq(rt_watch_init(&w, 2, ch, 2), 0);
    cr_assert_eq(rt_chan_new(1, 8, &w, &ch[0]), 0);
    cr_assert_eq(rt_chan_new(1, 8, &w, &ch[1]), 0);
    struct waiter a = { ch[0], 0, 0, "" }, b = { ch[1], 0, 0, "" };
    pthread_t ta, tb;
    pthread_create(&ta, NULL, wait_main, &a);
    pthread_create(&tb, NULL, wait_main, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    cr_assert_eq(a.rc, -PS_ERUNTIME);
    cr_assert_eq(b.rc, -PS_ERUNTIME);
    cr_assert(strstr(a.msg, "deadlocked") || strstr(b.msg, "deadlocked"), "%s / %s", a.msg,
              b.msg);
    rt_chan_free(ch[0]);
    rt_chan_free(ch[1]);
    rt_watch_release(&w);
}

Test(rt_pipe, a_waiter_is_woken_by_its_send)
{
    struct rt_chan *c;
    struct rt_watch w;
    cr_assert_eq(rt_watch_init(&w, 2, &c, 1), 0);
    cr_assert_eq(rt_chan_new(1, 8, &w, &c), 0);
    struct waiter a = { c, 0, 1, "" };
    pthread_t t;
    pthread_create(&t, NULL, wait_main, &a);
    double v = 3;
    int64_t ts;
    rt_chan_send(c, 0, &v, 8, &ts);
    pthread_join(t, NULL);
    cr_assert_eq(a.rc, 0, "%s", a.msg);
    rt_chan_free(c);
    rt_watch_release(&w);
}

static void *pin_main(void *arg)
{
    int *cpu = arg;
    if (rt_pin_self(cpu[0]) < 0)
        cpu[1] = -2;
    else
        cpu[1] = rt_cpu_current();
    return NULL;
}

Test(rt_pipe, pinning_puts_a_thread_on_its_core)
{
    int *cpus, n;
    cr_assert_eq(rt_cpus_allowed(&cpus, &n), 0);
    cr_assert(n >= 1);
    for (int i = 0; i < n; i++) {
        int arg[2] = { cpus[i], -1 };
        pthread_t t;
        pthread_create(&t, NULL, pin_main, arg);
        pthread_join(t, NULL);
        cr_assert_eq(arg[1], cpus[i]);
    }
    free(cpus);
    cr_assert_eq(rt_pin_self(100000), -PS_ERUNTIME);
}

/* A list a one-thread-per-device replay cannot finish: device 0 waits for a
 * gradient before sending the activation that produces it. */
Test(rt_pipe, receive_before_its_send_is_rejected)
{
    struct sch_schedule *s = sch_schedule_new("bad-order", 2, 2, 1, SCH_REMAT_NEVER);
    cr_assert(s);
    enum sch_op_kind d0[] = { SCH_OP_FWD, SCH_OP_RECV_GRAD, SCH_OP_SEND_ACT, SCH_OP_BWD,
                              SCH_OP_UPDATE };
    enum sch_op_kind d1[] = { SCH_OP_RECV_ACT, SCH_OP_FWD, SCH_OP_BWD, SCH_OP_SEND_GRAD,
                              SCH_OP_UPDATE };
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(sch_schedule_push(s, 0, d0[i], 0, d0[i] == SCH_OP_UPDATE ? -1 : 0), 0);
        cr_assert_eq(sch_schedule_push(s, 1, d1[i], 1, d1[i] == SCH_OP_UPDATE ? -1 : 0), 0);
    }
    struct rt_net *n;
    cr_assert_eq(rt_net_parse("mlp:layers=2,width=4", &n), 0);
    rt_pipe *p = (void *)1;
    cr_assert_eq(rt_pipe_new_schedule(n, s, 2, NULL, 0.1f, 1, &p), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "recvB0"), "%s", ps_errmsg());
    cr_assert_null(p);
    rt_net_free(n);
}

Test(rt_pipe, data_parallel_schedules_are_refused)
{
    struct sch_schedule *s;
    cr_assert_eq(sch_schedule_build("gpipe", 2, 2, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(sch_schedule_add_allreduce(s, 2), 0);
    struct rt_net *n;
    cr_assert_eq(rt_net_parse("mlp:layers=2,width=4", &n), 0);
    rt_pipe *p;
    cr_assert_eq(rt_pipe_new_schedule(n, s, 2, NULL, 0.1f, 1, &p), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "replicas"), "%s", ps_errmsg());
    rt_net_free(n);
}

Test(rt_pipe, configuration_errors)
{
    struct rt_net *n;
    cr_assert_eq(rt_net_parse("mlp:layers=3,width=4", &n), 0);
    rt_pipe *p;
    struct rt_pipe_config c = { .K = 2, .M = 3, .batch = 8, .lr = 0.1f };
    cr_assert_eq(rt_pipe_new(n, &c, &p), -PS_EINVAL);
    cr_assert(strstr(ps_errmsg(), "multiple of M = 3"), "%s", ps_errmsg());
    c = (struct rt_pipe_config){ .K = 4, .M = 2, .batch = 8 };
    cr_assert_eq(rt_pipe_new(n, &c, &p), -PS_ENOFIT);
    c = (struct rt_pipe_config){ .K = 2, .M = 2, .batch = 8, .partition = "1,1" };
    cr_assert_eq(rt_pipe_new(n, &c, &p), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "covers 2 layers"), "%s", ps_errmsg());
    c = (struct rt_pipe_config){ .K = 2, .M = 2, .batch = 8, .schedule = "nope" };
    cr_assert_eq(rt_pipe_new(n, &c, &p), -PS_EUSAGE);
    c = (struct rt_pipe_config){ .K = 2, .M = 2, .batch = 8 };
    cr_assert_eq(rt_pipe_new(n, &c, &p), 0, "%s", ps_errmsg());
    struct rt_net *other;
    cr_assert_eq(rt_net_parse("mlp:layers=3,width=5", &other), 0);
    struct rt_data *d;
    cr_assert_eq(rt_data_new(other, 8, 1, &d), 0);
    struct rt_step_stats st;
    cr_assert_eq(rt_pipe_step(p, d, &st, NULL), -PS_EINVAL);
    rt_data_free(d);
    rt_net_free(other);
    rt_pipe_free(p);
    rt_net_free(n);
}

/* The measured trace: one event per op, per-device compute ops in list
 * order without overlap, receives after their sends, the memory counter's
 * maximum equal to the measured peak; it round-trips through Chrome JSON. */
Test(rt_pipe, measured_trace_is_complete_and_consistent)
{
    struct rt_net *n;
    cr_assert_eq(rt_net_parse("mlp:layers=4,width=16,in=8,out=4,norm=2", &n), 0);
    cr_assert_eq(rt_net_init_params(n, 4), 0);
    struct rt_data *d;
    cr_assert_eq(rt_data_new(n, 8, 4, &d), 0);
    struct rt_pipe_config c = { .K = 2, .M = 4, .batch = 8, .remat = SCH_REMAT_ALWAYS,
                                .lr = 0.1f };
    rt_pipe *p;
    cr_assert_eq(rt_pipe_new(n, &c, &p), 0, "%s", ps_errmsg());
    struct rt_step_stats st;
    struct trc_trace *t;
    cr_assert_eq(rt_pipe_step(p, d, &st, &t), 0, "%s", ps_errmsg());
    const struct sch_schedule *s = rt_pipe_schedule(p);
    cr_assert_eq((int64_t)t->n_events, sch_schedule_total_ops(s));
    cr_assert_str_eq(t->source, "measured");
    cr_assert_str_eq(t->schedule, "gpipe");
    int64_t last_end[2] = { -1, -1 }, max_mem[2] = { 0, 0 };
    for (size_t i = 0; i < t->n_events; i++) {
        const struct trc_event *e = &t->events[i];
        cr_assert(e->start_ns >= 0 && e->end_ns >= e->start_ns && e->end_ns <= st.step_ns);
        if (e->stream == SCH_STREAM_COMPUTE) {
            cr_assert(e->start_ns >= last_end[e->device]);
            last_end[e->device] = e->end_ns;
        } else {
            cr_assert_eq(e->peer, 1 - e->device);
            cr_assert(e->bytes > 0);
        }
    }
    for (size_t i = 0; i < t->n_counters; i++) {
        const struct trc_counter *k = &t->counters[i];
        max_mem[k->device] = k->bytes > max_mem[k->device] ? k->bytes : max_mem[k->device];
    }
    for (int dv = 0; dv < 2; dv++) {
        cr_assert_eq(max_mem[dv], st.dev[dv].peak_act);
        cr_assert(st.dev[dv].busy_ns > 0 && st.dev[dv].busy_ns <= st.step_ns);
    }
    cr_assert(st.bubble >= 0 && st.bubble < 1);
    const char *path = scratch("trace.json");
    cr_assert_eq(trc_write_chrome(t, path), 0, "%s", ps_errmsg());
    struct trc_trace *back;
    cr_assert_eq(trc_read_chrome(path, &back), 0, "%s", ps_errmsg());
    unlink(path);
    cr_assert_eq(back->n_events, t->n_events);
    cr_assert_str_eq(back->source, "measured");
    trc_trace_free(back);
    trc_trace_free(t);
    rt_pipe_free(p);
    rt_data_free(d);
    rt_net_free(n);
}
