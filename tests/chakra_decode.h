/* A protobuf reader for the Chakra tests, written from the wire format
 * (varint keys, wire types 0/1/2), independent of trc_chakra.c's encoder:
 * files of varint-length-delimited GlobalMetadata + Node messages. */
#ifndef TESTS_CHAKRA_DECODE_H
#define TESTS_CHAKRA_DECODE_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/ps_error.h"
#include "base/ps_util.h"

struct rd { const uint8_t *p, *end; };

static inline uint64_t rd_varint(struct rd *r)
{
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        cr_assert(r->p < r->end && shift < 64, "truncated varint");
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
}

/* Next field: number, wire type, and its value (varint / fixed64) or bytes. */
struct field { int num, wt; uint64_t v; struct rd sub; };

static inline int rd_field(struct rd *r, struct field *f)
{
    if (r->p == r->end)
        return 0;
    uint64_t key = rd_varint(r);
    f->num = (int)(key >> 3);
    f->wt = (int)(key & 7);
    switch (f->wt) {
    case 0: f->v = rd_varint(r); break;
    case 1:
        cr_assert(r->end - r->p >= 8);
        f->v = 0;
        for (int i = 7; i >= 0; i--)
            f->v = f->v << 8 | r->p[i];
        r->p += 8;
        break;
    case 2: {
        uint64_t n = rd_varint(r);
        cr_assert((uint64_t)(r->end - r->p) >= n, "field %d overruns", f->num);
        f->sub = (struct rd){ r->p, r->p + n };
        r->p += n;
        break;
    }
    default: cr_assert_fail("unexpected wire type %d (field %d)", f->wt, f->num);
    }
    return 1;
}

static inline void rd_str(const struct field *f, char *buf, size_t n)
{
    size_t len = (size_t)(f->sub.end - f->sub.p);
    cr_assert(f->wt == 2 && len < n);
    memcpy(buf, f->sub.p, len);
    buf[len] = 0;
}

struct dattr { char name[48]; int vfield; uint64_t v; char s[48]; };

static inline void rd_attr(struct rd r, struct dattr *a)
{
    memset(a, 0, sizeof *a);
    struct field f;
    while (rd_field(&r, &f)) {
        if (f.num == 1)
            rd_str(&f, a->name, sizeof a->name);
        else {
            cr_assert_eq(a->vfield, 0, "attribute %s has two values", a->name);
            a->vfield = f.num;
            if (f.wt == 2)
                rd_str(&f, a->s, sizeof a->s);
            else
                a->v = f.v;
        }
    }
}

#define MAXA 16
struct dnode {
    uint64_t id, start, dur;
    char name[48];
    int type, nctrl, ndata, na;
    uint64_t ctrl[4], data[64];
    struct dattr a[MAXA];
};

/* Packed or not, a repeated uint64 field appends to out. */
static inline void rd_repeated(const struct field *f, uint64_t *out, int *n, int max)
{
    if (f->wt == 0) {
        cr_assert(*n < max);
        out[(*n)++] = f->v;
        return;
    }
    struct rd r = f->sub;
    while (r.p < r.end) {
        cr_assert(*n < max);
        out[(*n)++] = rd_varint(&r);
    }
}

static inline void rd_node(struct rd r, struct dnode *n)
{
    memset(n, 0, sizeof *n);
    struct field f;
    while (rd_field(&r, &f)) {
        switch (f.num) {
        case 1: n->id = f.v; break;
        case 2: rd_str(&f, n->name, sizeof n->name); break;
        case 3: n->type = (int)f.v; break;
        case 4: rd_repeated(&f, n->ctrl, &n->nctrl, 4); break;
        case 5: rd_repeated(&f, n->data, &n->ndata, 64); break;
        case 6: n->start = f.v; break;
        case 7: n->dur = f.v; break;
        case 10:
            cr_assert(n->na < MAXA);
            rd_attr(f.sub, &n->a[n->na++]);
            break;
        default: cr_assert_fail("unexpected Node field %d", f.num);
        }
    }
}

static inline const struct dattr *attr(const struct dattr *a, int na, const char *name, int vfield)
{
    for (int i = 0; i < na; i++)
        if (!strcmp(a[i].name, name)) {
            cr_assert_eq(a[i].vfield, vfield, "attribute %s: value field %d, expected %d",
                         name, a[i].vfield, vfield);
            return &a[i];
        }
    cr_assert_fail("no attribute %s", name);
    return NULL;
}

static inline int64_t ival(const struct dnode *n, const char *name, int vfield)
{
    return (int64_t)attr(n->a, n->na, name, vfield)->v;
}

struct dfile {
    char version[16];
    struct dattr meta[MAXA];
    int nmeta, n;
    struct dnode *nodes;
    uint8_t *raw;   /* the file, for the protoc check */
    size_t len;
};

static inline void rd_file(const char *path, struct dfile *df)
{
    memset(df, 0, sizeof *df);
    char *buf;
    cr_assert_eq(ps_read_file(path, &buf, &df->len), 0, "%s", ps_errmsg());
    df->raw = (uint8_t *)buf;
    struct rd r = { df->raw, df->raw + df->len };
    int cap = 0;
    for (int k = 0; r.p < r.end; k++) {
        uint64_t len = rd_varint(&r);
        cr_assert((uint64_t)(r.end - r.p) >= len, "%s: record %d overruns the file", path, k);
        struct rd m = { r.p, r.p + len };
        r.p += len;
        if (k == 0) { /* GlobalMetadata */
            struct field f;
            while (rd_field(&m, &f)) {
                if (f.num == 1)
                    rd_str(&f, df->version, sizeof df->version);
                else {
                    cr_assert_eq(f.num, 2);
                    cr_assert(df->nmeta < MAXA);
                    rd_attr(f.sub, &df->meta[df->nmeta++]);
                }
            }
            continue;
        }
        if (df->n == cap) {
            cap = cap ? 2 * cap : 64;
            df->nodes = realloc(df->nodes, (size_t)cap * sizeof *df->nodes);
            cr_assert(df->nodes);
        }
        rd_node(m, &df->nodes[df->n++]);
    }
}

static inline void df_free(struct dfile *df)
{
    free(df->nodes);
    free(df->raw);
}

static inline const struct dnode *by_name(const struct dfile *df, const char *fmt, int st, int mb)
{
    char name[48];
    snprintf(name, sizeof name, fmt, st, mb);
    for (int i = 0; i < df->n; i++)
        if (!strcmp(df->nodes[i].name, name))
            return &df->nodes[i];
    return NULL;
}

static inline int has_data_dep(const struct dnode *n, const struct dnode *on)
{
    for (int i = 0; i < n->ndata; i++)
        if (n->data[i] == on->id)
            return 1;
    return 0;
}

#endif
