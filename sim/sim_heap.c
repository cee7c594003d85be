#include "sim/sim_heap.h"
#include "base/ps_error.h"

#include <stdlib.h>

/* seq compares modulo 2^32, so order survives one wrap of the counter
 * while the events in the heap span less than 2^31 pushes. */
static inline int ev_less(const struct sim_event *a, const struct sim_event *b)
{
    /* bitwise, not short-circuit: the pop loop compiles to conditional moves
     * instead of branches the predictor cannot learn */
    return (a->t < b->t) | ((a->t == b->t) & ((int32_t)(a->seq - b->seq) < 0));
}

int sim_heap_init(struct sim_heap *h, int cap)
{
    h->n = 0;
    h->seq = 0;
    h->cap = cap > 0 ? cap : 16;
    h->a = malloc((size_t)h->cap * sizeof *h->a);
    return h->a ? 0 : ps_error(PS_ENOMEM, "out of memory for the event heap");
}

void sim_heap_release(struct sim_heap *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}

int sim_heap_push(struct sim_heap *h, sch_time t, int32_t payload)
{
    return sim_heap_push_seq(h, t, (uint32_t)h->seq++, payload);
}

int sim_heap_push_seq(struct sim_heap *h, sch_time t, uint32_t seq, int32_t payload)
{
    if (h->n == h->cap) {
        struct sim_event *na = realloc(h->a, (size_t)h->cap * 2 * sizeof *na);
        if (!na)
            return ps_error(PS_ENOMEM, "out of memory growing the event heap");
        h->a = na;
        h->cap *= 2;
    }
    struct sim_event ev = { t, seq, payload };
    int i = h->n++;
    while (i > 0) {
        int p = (i - 1) / 4;
        if (!ev_less(&ev, &h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = ev;
    return 0;
}

/* Sifts ev down from the root into a heap of h->n entries whose root slot
 * is free. */
static void sift_down(struct sim_heap *h, struct sim_event last)
{
    int i = 0, n = h->n;
    for (;;) {
        int c = 4 * i + 1;
        if (c >= n)
            break;
        int m = c;
        if (c + 4 <= n) { /* full node: a branch-free tournament */
            int m1 = c + ev_less(&h->a[c + 1], &h->a[c]);
            int m2 = c + 2 + ev_less(&h->a[c + 3], &h->a[c + 2]);
            m = ev_less(&h->a[m2], &h->a[m1]) ? m2 : m1;
        } else {
            for (int k = c + 1; k < n; k++)
                if (ev_less(&h->a[k], &h->a[m]))
                    m = k;
        }
        if (!ev_less(&h->a[m], &last))
            break;
        h->a[i] = h->a[m];
        i = m;
    }
    h->a[i] = last;
}

struct sim_event sim_heap_pop(struct sim_heap *h)
{
    if (h->n <= 0)
        PS_BUG("pop from an empty heap");
    struct sim_event top = h->a[0], last = h->a[--h->n];
    if (h->n)
        sift_down(h, last);
    return top;
}

struct sim_event sim_heap_replace_top(struct sim_heap *h, sch_time t, uint32_t seq,
                                      int32_t payload)
{
    if (h->n <= 0)
        PS_BUG("replace in an empty heap");
    struct sim_event top = h->a[0], ev = { t, seq, payload };
    sift_down(h, ev);
    return top;
}
