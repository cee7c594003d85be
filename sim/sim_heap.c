#include "sim/sim_heap.h"
#include "base/ps_error.h"

#include <stdlib.h>

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

int sim_heap_grow(struct sim_heap *h)
{
    struct sim_event *na = realloc(h->a, (size_t)h->cap * 2 * sizeof *na);
    if (!na)
        return ps_error(PS_ENOMEM, "out of memory growing the event heap");
    h->a = na;
    h->cap *= 2;
    return 0;
}

void sim_heap_bug_empty(void)
{
    PS_BUG("replace in an empty heap");
}

struct sim_event sim_heap_pop(struct sim_heap *h)
{
    if (h->n <= 0)
        PS_BUG("pop from an empty heap");
    struct sim_event top = h->a[0], last = h->a[--h->n];
    if (h->n)
        sim_heap_sift_down(h, last);
    return top;
}
