/*
 * rt_chan — bounded channels between pipeline workers, one slot per
 * micro-batch, and the watch that turns a deadlocked replay into an error.
 *
 * A channel carries one direction of one stage boundary (activations of
 * stage s to s+1, or gradients back). Slot m holds micro-batch m: send
 * copies the bytes into the slot's preallocated buffer and never blocks
 * (capacity = micro-batches, each sent once per step); recv waits until
 * slot m is full, copies it out and empties it, so receivers need not
 * consume in send order. Slot buffers are link buffers, not activation
 * memory of either device.
 *
 * The watch counts live workers and workers waiting on an empty slot (a
 * sender clears the count of the waiter it fills). When every live worker
 * waits on an empty slot no send can ever come: the replay is deadlocked,
 * the watch aborts and every waiter returns PS_ERUNTIME. Exact, no
 * timeouts. rt_watch_abort does the same on another worker's error.
 *
 * A receive first polls its slot for up to spin_ns (set by the caller;
 * worthwhile only when every worker has its own core), then sleeps on the
 * channel's condition variable.
 *
 * Timestamps are CLOCK_MONOTONIC ns (rt_now_ns). Ownership: rt_chan_new /
 * rt_chan_free (NULL ok); the watch is the caller's (rt_watch_init /
 * rt_watch_release). Cost: one memcpy and a mutex round per message.
 */
#ifndef RT_CHAN_H
#define RT_CHAN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct rt_chan;

struct rt_watch {
    pthread_mutex_t mu;
    int live, blocked;
    atomic_int abort;
    struct rt_chan **chans;   /* borrowed, for waking on abort */
    int n_chans;
    int64_t spin_ns;          /* a receive polls this long before sleeping
                                 (0 when workers share cores) */
};

int64_t rt_now_ns(void);

int rt_watch_init(struct rt_watch *w, int live, struct rt_chan **chans, int n_chans);
void rt_watch_release(struct rt_watch *w);
/* Sets abort and wakes every waiter. */
void rt_watch_abort(struct rt_watch *w);
/* A worker is done; detects the deadlock of those left. */
void rt_watch_leave(struct rt_watch *w);

int rt_chan_new(int n_slots, int64_t slot_bytes, struct rt_watch *w,
                struct rt_chan **out);
void rt_chan_free(struct rt_chan *c);
/* Copies bytes (<= slot_bytes) into slot; *t_sent = when it is available.
 * Sending into a full slot is a bug. */
void rt_chan_send(struct rt_chan *c, int slot, const void *src, int64_t bytes,
                  int64_t *t_sent);
/* Waits for slot, copies it to dst. *t_sent: the sender's time; *t_recv:
 * when the copy finished. PS_ERUNTIME on deadlock or abort (what names
 * the op for the message). */
int rt_chan_recv(struct rt_chan *c, int slot, void *dst, int64_t bytes,
                 int64_t *t_sent, int64_t *t_recv, const char *what);
/* Empties every slot (between steps). */
void rt_chan_reset(struct rt_chan *c);

#endif
