#include "sim/sim_heap.h"
#include "sim/sim_error.h"

#include <stdlib.h>

static int ev_less(const struct sim_event *a, const struct sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int sim_heap_init(struct sim_heap *h, int cap)
{
    h->n = 0;
    h->seq = 0;
    h->cap = cap > 0 ? cap : 16;
    h->a = malloc((size_t)h->cap * sizeof *h->a);
    return h->a ? 0 : sim_error(SIM_ENOMEM, "out of memory for the event heap");
}

void sim_heap_release(struct sim_heap *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}

int sim_heap_push(struct sim_heap *h, sim_time t, int32_t payload)
{
    if (h->n == h->cap) {
        struct sim_event *na = realloc(h->a, (size_t)h->cap * 2 * sizeof *na);
        if (!na)
            return sim_error(SIM_ENOMEM, "out of memory growing the event heap");
        h->a = na;
        h->cap *= 2;
    }
    struct sim_event ev = { t, h->seq++, payload };
    int i = h->n++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!ev_less(&ev, &h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = ev;
    return 0;
}

struct sim_event sim_heap_pop(struct sim_heap *h)
{
    if (h->n <= 0)
        SIM_BUG("pop from an empty heap");
    struct sim_event top = h->a[0], last = h->a[--h->n];
    int i = 0, n = h->n;
    for (;;) {
        int l = 2 * i + 1;
        if (l >= n)
            break;
        int m = l + 1 < n && ev_less(&h->a[l + 1], &h->a[l]) ? l + 1 : l;
        if (!ev_less(&h->a[m], &last))
            break;
        h->a[i] = h->a[m];
        i = m;
    }
    h->a[i] = last;
    return top;
}
