/* The event heap against a sorted array (libuv's timer_order idea). */
#include "sim/sim_heap.h"

#include <criterion/criterion.h>
#include "lsan_runner.h"
#include <stdlib.h>
#include <string.h>

struct ref {
    sch_time t;
    uint64_t seq;
    int32_t payload;
};

static int ref_cmp(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

Test(heap, random_push_pop_matches_sorted_array, .timeout = 20)
{
    srand(12345);
    for (int round = 0; round < 200; round++) {
        struct sim_heap h;
        cr_assert_eq(sim_heap_init(&h, 1), 0);
        int n = 1 + rand() % 500;
        struct ref *ref = malloc((size_t)n * sizeof *ref);
        int nref = 0, popped = 0;
        /* interleave pushes and pops; times from a small range force ties */
        for (int i = 0; i < n; i++) {
            sch_time t = rand() % 20 + (popped ? ref[0].t : 0);
            ref[nref] = (struct ref){ t, h.seq, i };
            nref++;
            cr_assert_eq(sim_heap_push(&h, t, i), 0);
            if (rand() % 3 == 0) {
                qsort(ref, (size_t)nref, sizeof *ref, ref_cmp);
                struct sim_event ev = sim_heap_pop(&h);
                cr_assert_eq(ev.t, ref[0].t);
                cr_assert_eq(ev.payload, ref[0].payload);
                memmove(ref, ref + 1, (size_t)(nref - 1) * sizeof *ref);
                nref--;
                popped = 1;
            }
        }
        qsort(ref, (size_t)nref, sizeof *ref, ref_cmp);
        for (int i = 0; i < nref; i++) {
            struct sim_event ev = sim_heap_pop(&h);
            cr_assert_eq(ev.t, ref[i].t);
            cr_assert_eq(ev.payload, ref[i].payload, "round %d pos %d", round, i);
        }
        cr_assert_eq(h.n, 0);
        free(ref);
        sim_heap_release(&h);
    }
}

Test(heap, equal_times_pop_in_insertion_order)
{
    struct sim_heap h;
    cr_assert_eq(sim_heap_init(&h, 2), 0);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(sim_heap_push(&h, 42, i), 0);
    for (int i = 0; i < 1000; i++) {
        struct sim_event ev = sim_heap_pop(&h);
        cr_assert_eq(ev.t, 42);
        cr_assert_eq(ev.payload, i);
    }
    sim_heap_release(&h);
}

#include "sim/sim_evq.h"

/* The lane queue pops in exactly the order of one heap of all events. */
Test(evq, matches_a_single_heap, .timeout = 20)
{
    srand(777);
    for (int round = 0; round < 100; round++) {
        int lanes = 1 + rand() % 12;
        sch_time dur[12];
        for (int i = 0; i < lanes; i++)
            dur[i] = rand() % 5 * 100; /* repeated and zero durations force ties */
        struct sim_evq q;
        struct sim_heap h;
        cr_assert_eq(sim_evq_init(&q, lanes), 0);
        cr_assert_eq(sim_heap_init(&h, 4), 0);
        sch_time now = 0;
        for (int i = 0; i < 40; i++) {
            int l = rand() % lanes;
            cr_assert_eq(sim_evq_push(&q, l, now + dur[l], i), 0);
            cr_assert_eq(sim_heap_push(&h, now + dur[l], i), 0);
        }
        int id = 40;
        while (h.n) {
            struct sim_event a = sim_evq_pop(&q), b = sim_heap_pop(&h);
            cr_assert_eq(a.t, b.t);
            cr_assert_eq(a.payload, b.payload, "round %d", round);
            now = a.t;
            if (id < 400 && rand() % 2) { /* the engine's pattern: push at now + d */
                int l = rand() % lanes;
                cr_assert_eq(sim_evq_push(&q, l, now + dur[l], id), 0);
                cr_assert_eq(sim_heap_push(&h, now + dur[l], id), 0);
                id++;
            }
        }
        cr_assert_eq(q.n, 0);
        sim_evq_release(&q);
        sim_heap_release(&h);
    }
}

/* replace_top is pop then push: two heaps fed the same random keys, one
 * with replace_top and one with the two calls, pop in the same order. */
Test(heap, replace_top_equals_pop_then_push, .timeout = 20)
{
    struct sim_heap a, b;
    cr_assert_eq(sim_heap_init(&a, 4), 0);
    cr_assert_eq(sim_heap_init(&b, 4), 0);
    srand(7);
    uint32_t seq = 0;
    for (int i = 0; i < 200; i++) {
        sch_time t = rand() % 50;
        cr_assert_eq(sim_heap_push_seq(&a, t, seq, i), 0);
        cr_assert_eq(sim_heap_push_seq(&b, t, seq++, i), 0);
    }
    for (int i = 0; i < 20000; i++) {
        sch_time t = rand() % 50;
        struct sim_event x = sim_heap_replace_top(&a, t, seq, i);
        struct sim_event y = sim_heap_pop(&b);
        cr_assert_eq(sim_heap_push_seq(&b, t, seq++, i), 0);
        cr_assert(x.t == y.t && x.seq == y.seq && x.payload == y.payload, "step %d", i);
    }
    while (b.n) {
        struct sim_event x = sim_heap_pop(&a), y = sim_heap_pop(&b);
        cr_assert(x.t == y.t && x.seq == y.seq && x.payload == y.payload);
        if (b.n > 1) /* keys ascend */
            cr_assert(b.a[0].t >= y.t);
    }
    cr_assert_eq(a.n, 0);
    sim_heap_release(&a);
    sim_heap_release(&b);
}
