#include "runtime/rt_chan.h"
#include "base/ps_error.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

struct slot {
    atomic_int full;  /* written under the channel lock, polled without */
    int waiting;
    int64_t t_sent, bytes;
    void *buf;
};

struct rt_chan {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n_slots;
    int64_t slot_bytes;
    struct rt_watch *watch;
    struct slot *slots;
};

int64_t rt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int rt_watch_init(struct rt_watch *w, int live, struct rt_chan **chans, int n_chans)
{
    memset(w, 0, sizeof *w);
    if (pthread_mutex_init(&w->mu, NULL))
        return ps_error(PS_ERUNTIME, "pthread_mutex_init failed");
    w->live = live;
    atomic_init(&w->abort, 0);
    w->chans = chans;
    w->n_chans = n_chans;
    return 0;
}

void rt_watch_release(struct rt_watch *w) { pthread_mutex_destroy(&w->mu); }

void rt_watch_abort(struct rt_watch *w)
{
    atomic_store(&w->abort, 1);
    for (int i = 0; i < w->n_chans; i++) {
        pthread_mutex_lock(&w->chans[i]->mu);
        pthread_cond_broadcast(&w->chans[i]->cv);
        pthread_mutex_unlock(&w->chans[i]->mu);
    }
}

void rt_watch_leave(struct rt_watch *w)
{
    pthread_mutex_lock(&w->mu);
    int dead = --w->live > 0 && w->blocked == w->live;
    pthread_mutex_unlock(&w->mu);
    if (dead)
        rt_watch_abort(w);
}

int rt_chan_new(int n_slots, int64_t slot_bytes, struct rt_watch *w, struct rt_chan **out)
{
    *out = NULL;
    struct rt_chan *c = calloc(1, sizeof *c);
    if (!c)
        return ps_error(PS_ENOMEM, "out of memory");
    c->slots = calloc((size_t)n_slots, sizeof *c->slots);
    if (!c->slots)
        goto err_free_chan;
    for (int i = 0; i < n_slots; i++) {
        c->n_slots = i + 1;
        if (slot_bytes && !(c->slots[i].buf = malloc((size_t)slot_bytes)))
            goto err_free_chan;
    }
    c->n_slots = n_slots;
    c->slot_bytes = slot_bytes;
    c->watch = w;
    if (pthread_mutex_init(&c->mu, NULL))
        goto err_free_chan;
    if (pthread_cond_init(&c->cv, NULL)) {
        pthread_mutex_destroy(&c->mu);
        goto err_free_chan;
    }
    *out = c;
    return 0;
err_free_chan:
    for (int i = 0; c->slots && i < c->n_slots; i++)
        free(c->slots[i].buf);
    free(c->slots);
    free(c);
    return ps_error(PS_ENOMEM, "out of memory for a channel of %d x %lld bytes", n_slots,
                     (long long)slot_bytes);
}

void rt_chan_free(struct rt_chan *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_slots; i++)
        free(c->slots[i].buf);
    free(c->slots);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void rt_chan_send(struct rt_chan *c, int slot, const void *src, int64_t bytes,
                  int64_t *t_sent)
{
    PS_ASSERT(slot >= 0 && slot < c->n_slots && bytes <= c->slot_bytes);
    struct slot *s = &c->slots[slot];
    pthread_mutex_lock(&c->mu);
    if (s->full)
        PS_BUG("channel slot %d sent twice in one step", slot);
    pthread_mutex_unlock(&c->mu);
    if (bytes) /* the receiver only reads after full is set under the lock */
        memcpy(s->buf, src, (size_t)bytes);
    pthread_mutex_lock(&c->mu);
    s->full = 1;
    s->bytes = bytes;
    s->t_sent = *t_sent = rt_now_ns();
    if (s->waiting) {
        s->waiting = 0;
        pthread_mutex_lock(&c->watch->mu);
        c->watch->blocked--;
        pthread_mutex_unlock(&c->watch->mu);
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

int rt_chan_recv(struct rt_chan *c, int slot, void *dst, int64_t bytes, int64_t *t_sent,
                 int64_t *t_recv, const char *what)
{
    PS_ASSERT(slot >= 0 && slot < c->n_slots);
    struct slot *s = &c->slots[slot];
    struct rt_watch *w = c->watch;
    int dead = 0;
    if (w->spin_ns > 0 && !atomic_load_explicit(&s->full, memory_order_acquire)) {
        int64_t until = rt_now_ns() + w->spin_ns;
        for (int i = 0; !atomic_load_explicit(&s->full, memory_order_acquire); i++) {
            cpu_relax();
            if ((i & 63) == 63 && rt_now_ns() > until)
                break;
        }
    }
    pthread_mutex_lock(&c->mu);
    if (!s->full && !atomic_load(&w->abort)) {
        s->waiting = 1;
        pthread_mutex_lock(&w->mu);
        dead = ++w->blocked == w->live;
        pthread_mutex_unlock(&w->mu);
    }
    while (!dead && !s->full && !atomic_load(&w->abort))
        pthread_cond_wait(&c->cv, &c->mu);
    if (!s->full) { /* deadlock or abort: stop counting this waiter */
        if (s->waiting) {
            s->waiting = 0;
            pthread_mutex_lock(&w->mu);
            w->blocked--;
            pthread_mutex_unlock(&w->mu);
        }
        pthread_mutex_unlock(&c->mu);
        if (dead) {
            rt_watch_abort(w);
            return ps_error(PS_ERUNTIME, "schedule deadlocked: every worker waits, "
                             "this one for %s", what);
        }
        return ps_error(PS_ERUNTIME, "%s: aborted (another worker failed)", what);
    }
    pthread_mutex_unlock(&c->mu);
    PS_ASSERT(s->bytes == bytes);
    if (bytes)
        memcpy(dst, s->buf, (size_t)bytes);
    *t_sent = s->t_sent;
    pthread_mutex_lock(&c->mu);
    s->full = 0;
    pthread_mutex_unlock(&c->mu);
    *t_recv = rt_now_ns();
    return 0;
}

void rt_chan_reset(struct rt_chan *c)
{
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < c->n_slots; i++)
        c->slots[i].full = c->slots[i].waiting = 0;
    pthread_mutex_unlock(&c->mu);
}
