/* mdl_torch_events — the complete events of a torch trace's JSON document,
 * their threads and layers (models/mdl_torch_int.h). */
#include "models/mdl_torch_int.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTOGRAD_PREFIX "autograd::engine::evaluate_function:"
#define SEQ_MAX 9007199254740992.0 /* 2^53: larger (UINT64_MAX = none) is none */

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

int mdl_torch_read_events(struct ctx *c, const json_t *arr)
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
