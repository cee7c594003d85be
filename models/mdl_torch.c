/* mdl_torch — PyTorch profiler trace to measured profile (see mdl_torch.h). */
#include "models/mdl_torch.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_jsonpos.h"
#include "base/ps_memavail.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AUTOGRAD_PREFIX "autograd::engine::evaluate_function:"
#define SEQ_MAX 9007199254740992.0 /* 2^53: larger (UINT64_MAX = none) is none */
/* Peak memory of an import over the trace's size: jansson's document of the
 * whole file. Measured (/usr/bin/time -f %M, pipesim import-torch): a 71 MiB
 * synthetic Kineto-style trace (4 ops per layer range, compact JSON) peaked
 * at 944 MiB (13.3x); tests/fixtures/torch/tinyformer.json's events x100
 * with indent=1 (56 MiB) held a 588 MiB document (10.5x). The lower figure
 * is used, so only imports that surely cannot fit are refused. */
#define TORCH_PEAK_FACTOR 10.0

enum { EV_OP, EV_LAYER, EV_AUTOGRAD };
enum { DIR_FWD, DIR_BWD, DIR_RECOMP };

struct tev {
    int64_t ts, end;     /* nanoseconds */
    double seq;          /* "Sequence number", -1 if none */
    double tid;          /* its "tid" when a number, else -1 */
    double fwd_tid;      /* "Fwd thread id" (a backward's: its forward's tid), -1 if none */
    const char *name;    /* borrowed from the JSON document */
    size_t idx;          /* position in the file, for stable order and messages */
    int thr, type, layer, dir;
};

struct layer_acc {
    char name[MDL_NAME_MAX];
    int64_t first_fwd;   /* ts of its first forward range, ns */
    int64_t first_end;   /* its end: of two starting together, the shorter is first */
    double fwd_us, bwd_us;
    int n_fwd, n_bwd;
    int n_fwd_seq_bwd; /* by sequence: its forward ranges an autograd function names */
    int n_fwd_seq_own; /* and those that hold the last op of a number (the node maker) */
};

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

/* Names to indices by open addressing (slot: index + 1, 0 empty), so a
 * trace of many distinct layers or threads reads in linear time (a linear
 * search took 100 s for 200 000 layers). */
struct name_map {
    int *slot;
    size_t cap; /* a power of 2, at least twice the entries */
};

struct ctx {
    const char *path, *prefix;
    size_t plen;
    struct tev *ev;
    size_t n;
    char **threads;
    int n_threads;
    struct layer_acc *layers;
    int n_layers;
    struct name_map thread_map, layer_map;
};

static const char *thread_name(const struct ctx *c, int i) { return c->threads[i]; }
static const char *layer_name(const struct ctx *c, int i) { return c->layers[i].name; }

/* The index of name, or -1; *at the slot where it is or would go. */
static int map_find(const struct ctx *c, const struct name_map *m,
                    const char *(*key)(const struct ctx *, int), const char *name, size_t *at)
{
    if (!m->cap)
        return -1;
    size_t i = (size_t)ps_fnv1a(name, strlen(name), PS_FNV_INIT) & (m->cap - 1);
    for (; m->slot[i]; i = (i + 1) & (m->cap - 1))
        if (!strcmp(key(c, m->slot[i] - 1), name))
            break;
    *at = i;
    return m->slot[i] - 1;
}

/* Records index idx (its name already stored) after map_find missed it at
 * *at; grows the table to keep it at most half full. */
static int map_add(const struct ctx *c, struct name_map *m,
                   const char *(*key)(const struct ctx *, int), int idx, size_t at)
{
    if (m->cap && (size_t)idx + 1 <= m->cap / 2) {
        m->slot[at] = idx + 1;
        return 0;
    }
    size_t cap = m->cap ? m->cap * 2 : 64;
    int *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return ps_error(PS_ENOMEM, "out of memory reading %s", c->path);
    for (int j = 0; j <= idx; j++) {
        const char *nm = key(c, j);
        size_t i = (size_t)ps_fnv1a(nm, strlen(nm), PS_FNV_INIT) & (cap - 1);
        while (slot[i])
            i = (i + 1) & (cap - 1);
        slot[i] = j + 1;
    }
    free(m->slot);
    m->slot = slot;
    m->cap = cap;
    return 0;
}

static int thread_id(struct ctx *c, const json_t *pid, const json_t *tid, int *out)
{
    /* whole ids: two that differ past their 63rd byte are two threads
     * (helper-126: cut to 64 bytes, they were one, read as overlapping) */
    char num[2][32] = { "", "" };
    const char *part[2] = { "", "" };
    const json_t *v[2] = { pid, tid };
    for (int i = 0; i < 2; i++) {
        if (json_is_string(v[i])) {
            part[i] = json_string_value(v[i]);
        } else if (json_is_number(v[i])) {
            snprintf(num[i], sizeof num[i], "%.17g", json_number_value(v[i]));
            part[i] = num[i];
        }
    }
    size_t n = strlen(part[0]) + strlen(part[1]) + 2;
    char *key = malloc(n);
    if (!key)
        return ps_error(PS_ENOMEM, "out of memory reading %s", c->path);
    snprintf(key, n, "%s\x1f%s", part[0], part[1]);
    size_t at = 0;
    int found = map_find(c, &c->thread_map, thread_name, key, &at);
    if (found >= 0) {
        free(key);
        return *out = found, 0;
    }
    if ((c->n_threads & (c->n_threads - 1)) == 0) {
        char **nt = realloc(c->threads, (size_t)(c->n_threads ? c->n_threads * 2 : 4) *
                                            sizeof *nt);
        if (!nt) {
            free(key);
            return ps_error(PS_ENOMEM, "out of memory reading %s", c->path);
        }
        c->threads = nt;
    }
    c->threads[c->n_threads] = key;
    int rc = map_add(c, &c->thread_map, thread_name, c->n_threads, at);
    if (rc < 0) {
        free(c->threads[c->n_threads]);
        return rc;
    }
    *out = c->n_threads++;
    return 0;
}

static int layer_id(struct ctx *c, const char *name, size_t i, int *out)
{
    size_t at = 0;
    int found = map_find(c, &c->layer_map, layer_name, name, &at);
    if (found >= 0)
        return *out = found, 0;
    /* a profile row starting with '#' is a comment; the CSV readers trim
     * blanks at a field's ends (helper-126: 'a' and ' a' made a profile that
     * predict refused for a duplicate name) */
    size_t len = strlen(name);
    if (!len || len >= MDL_NAME_MAX || strpbrk(name, ",\"\n\r") || name[0] == '#' ||
        strchr(" \t", name[0]) || strchr(" \t", name[len - 1]))
        return ps_error(PS_EINVAL, "%s: traceEvents[%zu].name: layer name '%s' must be "
                         "1..%d characters without commas, quotes or newlines, not starting "
                         "with '#', nor with a blank at either end", c->path, i, name,
                         MDL_NAME_MAX - 1);
    if ((c->n_layers & (c->n_layers - 1)) == 0) {
        struct layer_acc *nl = realloc(c->layers, (size_t)(c->n_layers ? c->n_layers * 2 : 8) *
                                                      sizeof *nl);
        if (!nl)
            return ps_error(PS_ENOMEM, "out of memory reading %s", c->path);
        c->layers = nl;
    }
    struct layer_acc *l = &c->layers[c->n_layers];
    memset(l, 0, sizeof *l);
    strcpy(l->name, name);
    int rc = map_add(c, &c->layer_map, layer_name, c->n_layers, at);
    if (rc < 0)
        return rc;
    *out = c->n_layers++;
    return 0;
}

static int need_number(const struct ctx *c, const json_t *e, size_t i, const char *key,
                       double *v)
{
    const json_t *x = json_object_get(e, key);
    if (!json_is_number(x))
        return ps_error(PS_EPARSE, "%s: traceEvents[%zu].%s: %s", c->path, i, key,
                         x ? "not a number" : "missing");
    *v = json_number_value(x);
    return 0;
}

/* Collects the complete events of the document into c->ev. */
static int read_events(struct ctx *c, const json_t *arr)
{
    size_t n = json_array_size(arr);
    if (!(c->ev = calloc(n ? n : 1, sizeof *c->ev)))
        return ps_error(PS_ENOMEM, "out of memory reading %s", c->path);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(arr, i);
        if (!json_is_object(e))
            return ps_error(PS_EPARSE, "%s: traceEvents[%zu]: not an object", c->path, i);
        const json_t *ph = json_object_get(e, "ph");
        if (!json_is_string(ph) || strcmp(json_string_value(ph), "X"))
            continue;
        /* Kineto's GPU timeline: kernels, copies, and the copy of each
         * record_function range (cat gpu_user_annotation, same name): read as
         * ranges they doubled the steps and averaged CPU and GPU times */
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (cat && (!strncmp(cat, "gpu_", 4) || !strcmp(cat, "kernel")))
            continue;
        const json_t *name = json_object_get(e, "name");
        if (!json_is_string(name))
            return ps_error(PS_EPARSE, "%s: traceEvents[%zu].name: missing or not a string",
                             c->path, i);
        struct tev *t = &c->ev[c->n];
        double ts, dur;
        int rc;
        if ((rc = need_number(c, e, i, "ts", &ts)) < 0 ||
            (rc = need_number(c, e, i, "dur", &dur)) < 0)
            return rc;
        /* a timestamp past 2^51 us (the year 2041 after the epoch) has
         * double spacing over half a microsecond, so its fraction is lost
         * (ts 1e18, dur 50 read as 0); a duration past 1e13 us (four months)
         * is no profiled op: refused here, not reported as a layer range
         * holding all the others */
        if (!(fabs(ts) <= 2251799813685248.0))
            return ps_error(PS_EINVAL, "%s: traceEvents[%zu].ts: %g us is out of range (|ts| "
                             "at most 2^51 = 2.25e15 us, where microseconds keep their "
                             "fraction)", c->path, i, ts);
        if (!(dur >= 0 && dur <= 1e13))
            return ps_error(PS_EINVAL, "%s: traceEvents[%zu].dur: %g us is out of range ([0, "
                             "1e13] us)", c->path, i, dur);
        /* on the nanosecond grid (the format's finest: three decimals of
         * a microsecond), end = start + duration in whole nanoseconds, so
         * an event that starts where another ends starts exactly at its
         * end: ts + dur in binary did not (1000.123 + 2.2 > 1002.323, and
         * a backward function right after another read as inside it, its
         * time charged nowhere). Kept as int64 ns, the whole microseconds
         * scaled apart from their fraction: ts * 1e3 in a double, and the
         * result kept in microseconds, rounded an epoch timestamp
         * (1.7e15 us) to 256 ns and 0.25 us, so that a range starting
         * where the one before it ended read as starting inside it
         * (helper-106) */
        t->ts = ps_us_to_ns(ts);
        t->end = t->ts + ps_us_to_ns(dur);
        t->name = json_string_value(name);
        t->idx = i;
        t->seq = -1;
        t->layer = -1;
        /* a value that is not a sequence number is an error, not "none" (it
         * left every layer's backward unattributed, exit 0: helper-77); -1,
         * as 2^53 and above (UINT64_MAX), is none, as absent; the message
         * names args, a path the position finder reads (not the key's space) */
        const json_t *seq = json_object_get(json_object_get(e, "args"), "Sequence number");
        double sv = json_number_value(seq); /* the document's numbers are reals */
        if (seq && (!json_is_number(seq) || sv != floor(sv)))
            return ps_error(PS_EPARSE, "%s: traceEvents[%zu].args: 'Sequence number' is not "
                            "an integer", c->path, i);
        if (seq && sv < -1)
            return ps_error(PS_EINVAL, "%s: traceEvents[%zu].args: 'Sequence number' %.0f is "
                            "out of range (-1 for none, or from 0)", c->path, i, sv);
        if (seq && sv >= 0 && sv < SEQ_MAX)
            t->seq = sv;
        /* sequence numbers count per thread; a backward's "Fwd thread id"
         * names its forward's thread, but as a counter, not a tid (maker_of) */
        const json_t *tidj = json_object_get(e, "tid");
        const json_t *fwd = json_object_get(json_object_get(e, "args"), "Fwd thread id");
        t->tid = json_is_number(tidj) && json_number_value(tidj) >= 0 ? json_number_value(tidj)
                                                                      : -1;
        t->fwd_tid = json_is_number(fwd) && json_number_value(fwd) >= 0 ? json_number_value(fwd)
                                                                        : -1;
        if ((rc = thread_id(c, json_object_get(e, "pid"), json_object_get(e, "tid"),
                            &t->thr)) < 0)
            return rc;
        if (!strncmp(t->name, c->prefix, c->plen)) {
            t->type = EV_LAYER;
            if ((rc = layer_id(c, t->name + c->plen, i, &t->layer)) < 0)
                return rc;
        } else if (!strncmp(t->name, AUTOGRAD_PREFIX, strlen(AUTOGRAD_PREFIX))) {
            t->type = EV_AUTOGRAD;
        }
        c->n++;
    }
    return 0;
}

/* Thread, then start, then longer first (parents before children), then file order. */
static int cmp_ev(const void *pa, const void *pb)
{
    const struct tev *a = pa, *b = pb;
    if (a->thr != b->thr)
        return a->thr < b->thr ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

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

/* Per thread [b, e): autograd start times and the running maximum of their
 * ends; classifies each layer range; rejects layer ranges of one direction
 * that are nested or overlap. */
static int classify(struct ctx *c, size_t b, size_t e, int64_t *ag_ts, int64_t *ag_end,
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

/* Backward by sequence numbers: see mdl_torch.h. Adds to layers' bwd_us and
 * *unattr; counts in *ambiguous the functions whose number several threads'
 * makers carry; and for check_steps, of each forward range that holds a node
 * maker (n_fwd_seq_own), whether a function named one of them
 * (n_fwd_seq_bwd): a trace cut after a step's forward leaves a step's ranges
 * unnamed. Not the earliest node's function alone (helper-144: a node the
 * loss never reaches, a statistic for monitoring, has none), so a cut inside
 * one layer's backward passes. */
static int by_sequence(struct ctx *c, const size_t *tb, double *unattr, int *ambiguous)
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

static int cmp_first(const void *pa, const void *pb)
{
    const struct layer_acc *a = pa, *b = pb;
    if (a->first_fwd != b->first_fwd)
        return a->first_fwd < b->first_fwd ? -1 : 1;
    return a->first_end < b->first_end ? -1 : a->first_end > b->first_end;
}

/* Sizes from the sidecar; sets *batch from it when the caller gave none. */
static int apply_sizes(const struct ctx *c, const char *sizes, struct mdl_profile *p,
                       double *batch)
{
    struct mdl_torch_size *rows;
    int n, rc = mdl_torch_sizes_load(sizes, &rows, &n);
    if (rc < 0)
        return rc;
    if (n && rows[0].at_batch > 0) {
        if (*batch > 0 && *batch != rows[0].at_batch) {
            rc = ps_error(PS_EINVAL, "--batch %g disagrees with %s: at_batch %g", *batch,
                           sizes, rows[0].at_batch);
            goto out_free_rows;
        }
        *batch = rows[0].at_batch;
    }
    for (int l = 0; l < p->n_layers; l++) {
        int r = 0;
        while (r < n && strcmp(rows[r].name, p->layers[l].name))
            r++;
        if (r == n) {
            rc = ps_error(PS_EINVAL, "%s: no row for layer '%s' of %s", sizes,
                           p->layers[l].name, c->path);
            goto out_free_rows;
        }
        struct mdl_layer *ml = &p->layers[l];
        ml->params = rows[r].params;
        ml->out_bytes = rows[r].out_bytes;
        ml->stash_bytes = rows[r].stash_bytes;
        ml->stash_shared_bytes = rows[r].stash_shared_bytes;
        if (l == 0 && ml->stash_shared_bytes > 0) {
            rc = ps_error(PS_EINVAL, "%s: field 'stash_shared_bytes' of layer '%s' must be 0: "
                           "it is the first layer (no layer before it shares its stash)", sizes,
                           ml->name);
            goto out_free_rows;
        }
        memcpy(ml->kind, rows[r].kind, sizeof ml->kind);
    }
    if (n != p->n_layers) {
        for (int r = 0; r < n; r++) {
            int l = 0;
            while (l < p->n_layers && strcmp(rows[r].name, p->layers[l].name))
                l++;
            if (l == p->n_layers) {
                rc = ps_error(PS_EINVAL, "%s: layer '%s' has no range in %s", sizes,
                               rows[r].name, c->path);
                goto out_free_rows;
            }
        }
    }
out_free_rows:
    free(rows);
    return rc;
}

/* <trace minus .json>.layers.csv if it exists, else "". */
static void default_sizes(const char *trace, char *buf, size_t n)
{
    size_t len = strlen(trace);
    if (len > 5 && !strcmp(trace + len - 5, ".json"))
        len -= 5;
    snprintf(buf, n, "%.*s.layers.csv", (int)len, trace);
    if (access(buf, R_OK) != 0)
        buf[0] = 0;
}

/* The step count is the fewest forward ranges of a layer; every layer has a
 * whole number of forward ranges per step (a module called k times a step,
 * an RNN cell, a shared block, has k: its sum is its time per step), and as
 * many backward ranges as forward ones with backward ranges (helper-106: a
 * trace window opening inside a step, or cut inside the last backward, wrote
 * times halved or doubled, exit 0; helper-110: a module run twice a step is
 * a model, not a cut trace). By sequence numbers, each forward range that
 * holds a node maker has a function naming one of them (by_sequence;
 * helper-139: a window closing after a step's forward shrank every backward
 * by 1/steps, exit 0); a layer none names has no backward. The first layer that breaks
 * it is named; the first run more than once a step is reported. Layers in
 * first-forward order. */
static int check_steps(const struct ctx *c, int has_bwd, struct mdl_torch_report *rep)
{
    int steps = c->layers[0].n_fwd, first = 0;
    for (int l = 1; l < c->n_layers; l++)
        if (c->layers[l].n_fwd < steps)
            steps = c->layers[l].n_fwd, first = l;
    rep->steps = steps;
    rep->repeated = 0;
    int by_seq = rep->method == MDL_TORCH_BWD_SEQUENCE;
    for (int l = 0; l < c->n_layers; l++) {
        const struct layer_acc *a = &c->layers[l];
        /* every range holding a node maker named: a call under no_grad
         * holds none (helper-140: refused); one step too (helper-142: a
         * whole number a step let a one-step trace cut after its forward by) */
        if (a->n_fwd % steps == 0 && by_seq && a->n_fwd_seq_bwd != a->n_fwd_seq_own)
            return ps_error(PS_EPARSE, "%s: layer '%s' has %d forward range%s making autograd "
                            "nodes, %d of them with a backward (autograd functions naming "
                            "their ops' sequence numbers): profile whole steps (stop the trace "
                            "after the step's last backward)", c->path, a->name,
                            a->n_fwd_seq_own, a->n_fwd_seq_own == 1 ? "" : "s",
                            a->n_fwd_seq_bwd);
        if (a->n_fwd % steps == 0 && (!has_bwd || a->n_bwd == a->n_fwd)) {
            if (a->n_fwd > steps && !rep->repeated++) { /* the first is named */
                snprintf(rep->repeated_name, sizeof rep->repeated_name, "%s", a->name);
                rep->repeated_times = a->n_fwd / steps;
            }
            continue;
        }
        char counts[96];
        if (has_bwd)
            snprintf(counts, sizeof counts, "%d forward and %d backward range%s", a->n_fwd,
                     a->n_bwd, a->n_bwd == 1 ? "" : "s");
        else
            snprintf(counts, sizeof counts, "%d forward range%s", a->n_fwd,
                     a->n_fwd == 1 ? "" : "s");
        return ps_error(PS_EPARSE, "%s: layer '%s' has %s, but the trace has %d step%s (the "
                        "forward ranges of '%s', its layer of fewest): each layer needs a "
                        "whole number of forward ranges per step%s; profile whole steps (start "
                        "the trace before a step's first layer, stop it after the step's last "
                        "backward)", c->path, a->name, counts, steps, steps == 1 ? "" : "s",
                        c->layers[first].name,
                        has_bwd ? ", and as many backward ranges as forward ones" : "");
    }
    return 0;
}

const char *mdl_torch_bwd_name(enum mdl_torch_bwd m)
{
    return m == MDL_TORCH_BWD_RANGES ? "ranges" : m == MDL_TORCH_BWD_SEQUENCE ? "sequence"
                                                                             : "none";
}

static int build(struct ctx *c, const struct mdl_torch_opts *o, struct mdl_profile **out,
                 struct mdl_torch_report *rep)
{
    int rc = 0;
    qsort(c->ev, c->n, sizeof *c->ev, cmp_ev);
    size_t *tb = calloc((size_t)c->n_threads + 1, sizeof *tb);
    int64_t *ag_ts = malloc((c->n ? c->n : 1) * sizeof *ag_ts);
    int64_t *ag_end = malloc((c->n ? c->n : 1) * sizeof *ag_end);
    if (!tb || !ag_ts || !ag_end) {
        rc = ps_error(PS_ENOMEM, "out of memory reading %s", c->path);
        goto out_free;
    }
    for (size_t i = 0; i < c->n; i++)
        tb[c->ev[i].thr + 1] = i + 1;
    for (int th = 1; th <= c->n_threads; th++)
        if (tb[th] < tb[th - 1])
            tb[th] = tb[th - 1];
    int has_seq = 0, has_bwd = 0, has_ag = 0;
    for (int th = 0; th < c->n_threads && rc == 0; th++)
        rc = classify(c, tb[th], tb[th + 1], ag_ts, ag_end, &rep->n_recompute);
    if (rc < 0)
        goto out_free;
    for (size_t i = 0; i < c->n; i++) {
        has_seq |= c->ev[i].type == EV_OP && c->ev[i].seq >= 0;
        has_ag |= c->ev[i].type == EV_AUTOGRAD;
    }
    for (int l = 0; l < c->n_layers; l++)
        has_bwd |= c->layers[l].n_bwd > 0;
    if (!c->n_layers) {
        rc = ps_error(PS_EPARSE, "%s: no layer ranges (record_function(\"%s<name>\") "
                       "around each layer's forward)", c->path, c->prefix);
        goto out_free;
    }
    for (int l = 0; l < c->n_layers; l++) {
        if (!c->layers[l].n_fwd) {
            rc = ps_error(PS_EPARSE, "%s: layer '%s' has no forward range", c->path,
                           c->layers[l].name);
            goto out_free;
        }
        if (has_bwd && !c->layers[l].n_bwd) {
            rc = ps_error(PS_EPARSE, "%s: layer '%s' has no backward range (other layers "
                           "do)", c->path, c->layers[l].name);
            goto out_free;
        }
    }
    rep->method = has_bwd ? MDL_TORCH_BWD_RANGES
                          : has_seq && has_ag ? MDL_TORCH_BWD_SEQUENCE : MDL_TORCH_BWD_NONE;
    /* a backward nothing attributes (helper-139: bwd written 2 x fwd, "no
     * backward in the trace", over a real one) */
    if (has_ag && rep->method == MDL_TORCH_BWD_NONE) {
        rc = ps_error(PS_EPARSE, "%s: the trace has a backward pass (autograd functions) but "
                       "no backward layer ranges, and no forward op with a sequence number, "
                       "to attribute it by: "
                       "wrap each layer's backward in record_function(\"%s<name>\") too "
                       "(scripts/make_torch_trace.py), or profile with Kineto, whose ops carry "
                       "them", c->path, c->prefix);
        goto out_free;
    }
    /* sequence numbers on forward ops but no autograd function: a forward-only
     * Kineto trace (helper-126: every backward was 0 ms, exit 0) */
    if (rep->method == MDL_TORCH_BWD_SEQUENCE &&
        (rc = by_sequence(c, tb, &rep->unattributed_us, &rep->n_ambiguous)) < 0)
        goto out_free;
    /* order by first forward (events' layer ids are not used past here) */
    qsort(c->layers, (size_t)c->n_layers, sizeof *c->layers, cmp_first);
    if ((rc = check_steps(c, has_bwd, rep)) < 0)
        goto out_free;
    rep->n_layers = c->n_layers;
    rep->unattributed_us /= rep->steps;
    double batch = o->batch;
    char sizes[512] = "";
    if (o->sizes_path)
        snprintf(sizes, sizeof sizes, "%s", o->sizes_path);
    else
        default_sizes(c->path, sizes, sizeof sizes);
    char origin[1200];
    snprintf(origin, sizeof origin, "import-torch %s: %d step%s, backward by %s%s%s", c->path,
             rep->steps, rep->steps == 1 ? "" : "s", mdl_torch_bwd_name(rep->method),
             *sizes ? ", sizes from " : "", sizes);
    struct mdl_profile *p = mdl_profile_new(origin, 1);
    if (!p) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out_free;
    }
    for (int l = 0; l < c->n_layers && rc == 0; l++) {
        const struct layer_acc *a = &c->layers[l];
        /* divided by 1e6, not multiplied by 1e-6 (not a double): 100 us is the
         * double nearest 1e-4 s, written 0.1 ms, not 0.09999999999999999 */
        struct mdl_layer ml = { .fwd = a->fwd_us / rep->steps / 1e6 };
        ml.bwd = rep->method == MDL_TORCH_BWD_NONE ? 2 * ml.fwd : a->bwd_us / rep->steps / 1e6;
        snprintf(ml.name, sizeof ml.name, "%s", a->name);
        rep->fwd_us += a->fwd_us / rep->steps;
        rep->bwd_us += rep->method == MDL_TORCH_BWD_NONE ? 0 : a->bwd_us / rep->steps;
        rc = mdl_profile_add(p, &ml);
    }
    if (rc == 0 && *sizes)
        rc = apply_sizes(c, sizes, p, &batch);
    if (rc == 0 && !(batch > 0))
        rc = ps_error(PS_EUSAGE, "%s: the batch size is unknown: give --batch N or a sizes "
                       "sidecar with at_batch", c->path);
    if (rc < 0) {
        mdl_profile_free(p);
        goto out_free;
    }
    for (int l = 0; l < p->n_layers; l++)
        p->layers[l].at_batch = batch;
    snprintf(rep->sizes, sizeof rep->sizes, "%s", sizes);
    *out = p;
out_free:
    free(ag_end);
    free(ag_ts);
    free(tb);
    return rc;
}

int mdl_torch_import(const char *trace_path, const struct mdl_torch_opts *o,
                     struct mdl_profile **out, struct mdl_torch_report *rep)
{
    *out = NULL;
    memset(rep, 0, sizeof *rep);
    struct ctx c = { .path = trace_path, .prefix = o->prefix ? o->prefix : "layer:" };
    c.plen = strlen(c.prefix);
    if (!c.plen)
        return ps_error(PS_EUSAGE, "--prefix must not be empty");
    if (o->batch < 0)
        return ps_error(PS_EUSAGE, "--batch must be > 0, got %g", o->batch);
    struct stat sb;
    if (!stat(trace_path, &sb) && S_ISREG(sb.st_mode)) {
        char what[600], detail[96], sz[32];
        ps_mem_format((double)sb.st_size, sz, sizeof sz);
        snprintf(what, sizeof what, "%s", trace_path);
        snprintf(detail, sizeof detail, "the %s trace held as a JSON document, about %.0f x its "
                 "size", sz, TORCH_PEAK_FACTOR);
        int rc = ps_mem_check((double)sb.st_size * TORCH_PEAK_FACTOR, what, detail,
                               "import a trace of fewer steps, or set " PS_MEM_ENV
                               " to override the check");
        if (rc < 0)
            return rc;
    }
    /* read whole, as every input is (ps_read_file: recorded as an input, a
     * device or pipe stops at 1 GiB); it read 3 bytes for a byte-order mark
     * and rewound, which a pipe cannot: their 3 bytes were lost */
    char *text;
    size_t len;
    int rrc = ps_read_file(trace_path, &text, &len);
    if (rrc < 0)
        return rrc;
    size_t bom = ps_bom_len(text, len); /* a UTF-8 byte-order mark is skipped */
    json_error_t jerr;
    ps_json_begin();
    /* a key twice in an object is an error at the second (helper-106: the last
     * value was read, and an error in it was put at the first) */
    json_t *root = json_loadb(text + bom, len - bom,
                              JSON_DECODE_INT_AS_REAL | JSON_REJECT_DUPLICATES, &jerr);
    if (ps_json_oom()) { /* a syntax error to jansson, or a document missing a byte */
        json_decref(root);
        free(text);
        return ps_error(PS_ENOMEM, "%s: out of memory parsing JSON", trace_path);
    }
    if (!root) {
        free(text);
        return ps_json_parse_error(trace_path, len - bom, jerr.line, jerr.column, jerr.text);
    }
    int rc = 0;
    const json_t *arr = json_is_array(root) ? root : json_object_get(root, "traceEvents");
    if (!json_is_array(arr)) {
        rc = ps_error(PS_EPARSE, "%s: not a Chrome trace (no event array or "
                       "\"traceEvents\")", trace_path);
        goto out_free;
    }
    /* errors name the JSON path; add the line and column it is on. Paths
     * start "traceEvents[i]" either way: in a bare event array that name is
     * the root's (without the alias every error there was put at 1:1) */
    const char *alias = arr == root ? "traceEvents" : NULL;
    if ((rc = ps_json_error_at(read_events(&c, arr), trace_path, text + bom, len - bom,
                               alias)) < 0)
        goto out_free;
    rc = ps_json_error_at(build(&c, o, out, rep), trace_path, text + bom, len - bom, alias);
out_free:
    for (int i = 0; i < c.n_threads; i++)
        free(c.threads[i]);
    free(c.threads);
    free(c.layers);
    free(c.thread_map.slot);
    free(c.layer_map.slot);
    free(c.ev);
    json_decref(root);
    free(text);
    return rc;
}
