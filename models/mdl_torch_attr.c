/* mdl_torch_attr — a torch trace's layer ranges classified forward,
 * backward or recompute, and backward time attributed to layers by sequence
 * numbers (models/mdl_torch_int.h). */
#include "models/mdl_torch_int.h"
#include "base/ps_error.h"

#include <stdint.h>
#include <stdlib.h>

/* A numbered forward op: its sequence number, thread (numbers count per
 * thread: its index, and its tid when a number, else -1), start, the forward
 * range (an event) it lies in (NULL for none), and what the backward made of
 * it: named by a function, or one of several threads' makers of a number a
 * function named without saying which (ambiguous). */
struct seqmap {
    double seq, tid;
    int thr;
    int64_t ts;
    const struct tev *range;
    int named, ambiguous;
};

/* First k in [0, n) with ts[k] >= t. */
static size_t lower(const int64_t *ts, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ts[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int mdl_torch_classify(struct ctx *c, size_t b, size_t e, int64_t *ag_ts, int64_t *ag_end,
                       int *n_recomp)
{
    size_t na = 0;
    for (size_t i = b; i < e; i++)
        if (c->ev[i].type == EV_AUTOGRAD) {
            ag_ts[na] = c->ev[i].ts;
            ag_end[na] = na && ag_end[na - 1] > c->ev[i].end ? ag_end[na - 1] : c->ev[i].end;
            na++;
        }
    const struct tev *last[3] = { NULL, NULL, NULL };
    for (size_t i = b; i < e; i++) {
        struct tev *t = &c->ev[i];
        if (t->type != EV_LAYER)
            continue;
        size_t k = lower(ag_ts, na, t->ts);
        if (k < na && ag_ts[k] < t->end) /* one that starts at its end is the next's */
            t->dir = DIR_BWD;
        else if (k > 0 && ag_end[k - 1] > t->ts)
            t->dir = DIR_RECOMP;
        else
            t->dir = DIR_FWD;
        /* a thread's ranges of one direction come in start order, and each
         * one accepted ends at or before the next starts, so the last is the
         * only one to compare with. One that starts inside it (not at its
         * end: that is the next range) lies inside it or overlaps it; either
         * way their common time would be counted in both layers (a at
         * 0..100 us and b at 50..150 us gave 200 us of forward) */
        const struct tev *p = last[t->dir];
        /* a range of no time that starts where p starts (sorted after p, the
         * longer) ends where p starts: it comes before p, and holds no time
         * both could count (helper-126: an Identity layer timed at 0 right
         * before the next was refused as nested); p stays the last */
        int before = p && t->ts == t->end && t->ts == p->ts;
        if (p && !before && t->ts < p->end && t->end <= p->end)
            return ps_error(PS_EPARSE, "%s: traceEvents[%zu]: layer range '%s' lies inside "
                             "'%s' (traceEvents[%zu]); nested layer ranges are not supported",
                             c->path, t->idx, t->name, p->name, p->idx);
        if (p && !before && t->ts < p->end)
            return ps_error(PS_EPARSE, "%s: traceEvents[%zu]: layer range '%s' starts inside "
                             "'%s' (traceEvents[%zu]) and ends after it; overlapping layer "
                             "ranges are not supported", c->path, t->idx, t->name, p->name,
                             p->idx);
        if (!before)
            last[t->dir] = t;
        struct layer_acc *l = &c->layers[t->layer];
        if (t->dir == DIR_FWD) {
            if (!l->n_fwd || t->ts < l->first_fwd ||
                (t->ts == l->first_fwd && t->end < l->first_end)) {
                l->first_fwd = t->ts;
                l->first_end = t->end;
            }
            l->n_fwd++;
            l->fwd_us += (double)(t->end - t->ts) / 1e3;
        } else if (t->dir == DIR_BWD) {
            l->n_bwd++;
            l->bwd_us += (double)(t->end - t->ts) / 1e3;
        } else {
            (*n_recomp)++;
        }
    }
    return 0;
}

static int cmp_seq(const void *pa, const void *pb) /* the number alone: the search */
{
    const struct seqmap *a = pa, *b = pb;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_seq_thr_ts(const void *pa, const void *pb) /* then thread, start: the sort */
{
    const struct seqmap *a = pa, *b = pb;
    int c = cmp_seq(pa, pb);
    if (c)
        return c;
    if (a->thr != b->thr)
        return a->thr < b->thr ? -1 : 1;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The node maker a backward names, of the makers of seq (one a thread).
 * Kineto's "Fwd thread id" is a counter of the process's threads, not a tid,
 * so it picks one only where it equals a maker's tid (other tools' traces);
 * else one maker is it, and of several the latest is taken and all of them
 * marked ambiguous (the import says how many functions were). */
static struct seqmap *maker_of(struct seqmap *sm, size_t n, double seq, double fwd_tid,
                               int *ambiguous)
{
    struct seqmap key = { .seq = seq };
    struct seqmap *hit = bsearch(&key, sm, n, sizeof *sm, cmp_seq);
    *ambiguous = 0;
    if (!hit)
        return NULL;
    struct seqmap *lo = hit, *hi = hit, *best = hit;
    while (lo > sm && lo[-1].seq == seq)
        lo--;
    while (hi + 1 < sm + n && hi[1].seq == seq)
        hi++;
    for (struct seqmap *q = lo; q <= hi; q++)
        if (fwd_tid >= 0 && q->tid == fwd_tid)
            return q;
    for (struct seqmap *q = lo; q <= hi; q++)
        if (q->ts > best->ts)
            best = q;
    if (lo != hi) {
        *ambiguous = 1;
        for (struct seqmap *q = lo; q <= hi; q++)
            q->ambiguous = 1;
    }
    return best;
}

/* Layer of the forward range containing an op [t, t_end) on this thread's
 * fwd list, or -1. */
static const struct tev *range_at(struct tev **fr, size_t nf, int64_t t, int64_t t_end)
{
    size_t lo = 0, hi = nf;
    while (lo < hi) { /* last range with ts <= t */
        size_t mid = lo + (hi - lo) / 2;
        if (fr[mid]->ts <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* a range holds [ts, end): an op at its end is outside it (helper-126: the
     * loss right after the last layer was mapped into it). Ranges of no time
     * sort after a longer one starting with them and precede it (classify):
     * an op at their instant is the longer one's, else theirs if it takes no
     * time either (helper-129: the loss, 10 us from a range of none, was) */
    if (!lo)
        return NULL;
    for (size_t k = lo; k > 0 && fr[k - 1]->ts == t; k--)
        if (t < fr[k - 1]->end)
            return fr[k - 1];
    const struct tev *r = fr[lo - 1];
    return t < r->end || (t == r->ts && t_end == t) ? r : NULL;
}

int mdl_torch_by_sequence(struct ctx *c, const size_t *tb, double *unattr, int *ambiguous)
{
    struct seqmap *sm = malloc((c->n ? c->n : 1) * sizeof *sm);
    struct tev **fr = malloc((c->n ? c->n : 1) * sizeof *fr);
    unsigned char *has = calloc(c->n ? c->n : 1, 1); /* [range event]: 1 a maker, 2 named */
    const struct seqmap **latest = calloc((size_t)c->n_threads + 1, sizeof *latest);
    size_t nsm = 0;
    int rc = 0;
    *ambiguous = 0;
    if (!sm || !fr || !has || !latest) {
        rc = ps_error(PS_ENOMEM, "out of memory attributing backward of %s", c->path);
        goto out_free;
    }
    for (int th = 0; th < c->n_threads; th++) { /* numbered forward ops, in a range or not */
        size_t nf = 0;
        for (size_t i = tb[th]; i < tb[th + 1]; i++)
            if (c->ev[i].type == EV_LAYER && c->ev[i].dir == DIR_FWD)
                fr[nf++] = &c->ev[i];
        int64_t ag_until = INT64_MIN;
        for (size_t i = tb[th]; i < tb[th + 1]; i++) {
            const struct tev *t = &c->ev[i];
            if (t->type == EV_AUTOGRAD && t->end > ag_until)
                ag_until = t->end;
            else if (t->type == EV_OP && t->seq >= 0 && t->ts >= ag_until)
                sm[nsm++] = (struct seqmap){ t->seq, t->tid, t->thr, t->ts,
                                             range_at(fr, nf, t->ts, t->end), 0, 0 };
        }
    }
    qsort(sm, nsm, sizeof *sm, cmp_seq_thr_ts);
    /* of the ops that carry one number on one thread, the last: PyTorch
     * stamps an op with the number the next autograd node will take, so ops
     * that make none (a mask, a no_grad forward) carry the number of the next
     * op that does, which is the one its function names (helper-140: the
     * first or another was found, the backward charged to a layer with none),
     * in a layer range or not (helper-142: a loss outside every range lost
     * its function to an argmax before it in a layer) */
    size_t kept = 0;
    for (size_t i = 0; i < nsm; i++) {
        if (kept && sm[kept - 1].seq == sm[i].seq && sm[kept - 1].thr == sm[i].thr)
            kept--;
        sm[kept++] = sm[i];
    }
    nsm = kept;
    for (int th = 0; th < c->n_threads; th++) { /* outermost autograd functions */
        int64_t outer_end = INT64_MIN;
        int prev = -1;
        for (size_t i = tb[th]; i < tb[th + 1]; i++) {
            const struct tev *t = &c->ev[i];
            if (t->type != EV_AUTOGRAD || t->ts < outer_end)
                continue;
            outer_end = t->end;
            double seq = t->seq, fwd_tid = t->fwd_tid;
            /* inside it: one that starts at its end is the next function
             * (helper-126: AccumulateGrad right after one was read as its
             * child, and charged to the next function's layer) */
            for (size_t j = i + 1; seq < 0 && j < tb[th + 1] && c->ev[j].ts < t->end; j++)
                if (c->ev[j].type != EV_LAYER) {
                    seq = c->ev[j].seq;
                    if (c->ev[j].fwd_tid >= 0)
                        fwd_tid = c->ev[j].fwd_tid;
                }
            int l = prev;
            if (seq >= 0) {
                int amb;
                struct seqmap *hit = maker_of(sm, nsm, seq, fwd_tid, &amb);
                *ambiguous += amb;
                l = hit && hit->range ? hit->range->layer : -1;
                if (hit)
                    hit->named = 1;
            }
            prev = l;
            if (l >= 0)
                c->layers[l].bwd_us += (double)(t->end - t->ts) / 1e3;
            else
                *unattr += (double)(t->end - t->ts) / 1e3;
        }
    }
    /* each range's makers, leaving out those of an ambiguous number (which
     * thread's it is cannot be told) and, unnamed, each thread's latest: an op
     * after the thread's last node (an argmax for a metric) keeps a number no
     * node took */
    for (size_t i = 0; i < nsm; i++) /* each thread's latest, one pass (not one a thread) */
        if (!latest[sm[i].thr] || sm[i].ts > latest[sm[i].thr]->ts)
            latest[sm[i].thr] = &sm[i];
    for (size_t i = 0; i < nsm; i++) {
        const struct seqmap *q = &sm[i];
        if (!q->range || q->ambiguous || (q == latest[q->thr] && !q->named))
            continue;
        has[q->range - c->ev] |= 1 | (q->named ? 2 : 0);
    }
    for (size_t i = 0; i < c->n; i++)
        if (has[i]) {
            c->layers[c->ev[i].layer].n_fwd_seq_own++;
            c->layers[c->ev[i].layer].n_fwd_seq_bwd += has[i] >> 1;
        }
out_free:
    free(latest);
    free(has);
    free(fr);
    free(sm);
    return rc;
}
