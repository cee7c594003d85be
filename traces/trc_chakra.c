/* trc_chakra — Chakra execution-trace writer (see trc_chakra.h). */
#include "traces/trc_chakra.h"
#include "traces/trc_chakra_int.h"
#include "base/ps_error.h"
#include "base/ps_afile.h"
#include "base/ps_fs.h"
#include "base/ps_util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- a minimal protobuf encoder: varints, length-delimited fields ------- */

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

struct pb {
    uint8_t *p;
    size_t n, cap;
    int oom;
};

static void pb_raw(struct pb *b, const void *d, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *np = realloc(b->p, cap);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

/* Base-128, least significant group first, high bit = more to come. */
static size_t varint_put(uint8_t out[10], uint64_t v)
{
    size_t n = 0;
    do {
        out[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            out[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
    uint8_t tmp[10];
    pb_raw(b, tmp, varint_put(tmp, v));
}

static void pb_key(struct pb *b, int field, int wire)
{
    pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

/* uint64, enums, bool; int32/int64 as two's complement (negatives take 10 bytes). */
static void pb_uint(struct pb *b, int field, uint64_t v)
{
    pb_key(b, field, WT_VARINT);
    pb_varint(b, v);
}

static void pb_double(struct pb *b, int field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(u >> (8 * i));
    pb_key(b, field, WT_I64);
    pb_raw(b, le, 8);
}

static void pb_bytes(struct pb *b, int field, const void *d, size_t n)
{
    pb_key(b, field, WT_LEN);
    pb_varint(b, n);
    pb_raw(b, d, n);
}

static void pb_string(struct pb *b, int field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

/* A repeated scalar field in proto3's packed form: one length-delimited run. */
static void pb_packed(struct pb *b, int field, const uint64_t *v, int n)
{
    if (n == 0)
        return;
    size_t len = 0;
    uint8_t tmp[10];
    for (int i = 0; i < n; i++)
        len += varint_put(tmp, v[i]);
    pb_key(b, field, WT_LEN);
    pb_varint(b, len);
    for (int i = 0; i < n; i++)
        pb_varint(b, v[i]);
}

/* ---- Chakra messages ----------------------------------------------------- */

/* Field numbers of ChakraProtoMsg (et_def.proto). */
enum { ATTR_NAME = 1, ATTR_DOUBLE = 3, ATTR_INT32 = 7, ATTR_INT64 = 9, ATTR_BOOL = 27,
       ATTR_STRING = 29 };
enum { META_VERSION = 1, META_ATTR = 2 };
enum { NODE_ID = 1, NODE_NAME = 2, NODE_TYPE = 3, NODE_CTRL = 4, NODE_DATA = 5,
       NODE_START = 6, NODE_DUR = 7, NODE_ATTR = 10 };

struct enc {
    struct pb msg, attr; /* the message being built; scratch for one attribute */
};

static void attr_begin(struct enc *e, const char *name)
{
    e->attr.n = 0;
    pb_string(&e->attr, ATTR_NAME, name);
}

static void attr_end(struct enc *e, int field)
{
    if (e->attr.oom)
        e->msg.oom = 1;
    pb_bytes(&e->msg, field, e->attr.p, e->attr.n);
}

/* Attributes are a oneof: the value is written even when it is 0 or false. */
static void attr_int(struct enc *e, int field, const char *name, int vfield, int64_t v)
{
    attr_begin(e, name);
    pb_uint(&e->attr, vfield, (uint64_t)v);
    attr_end(e, field);
}

static void attr_str(struct enc *e, int field, const char *name, const char *v)
{
    attr_begin(e, name);
    pb_string(&e->attr, ATTR_STRING, v);
    attr_end(e, field);
}

static void attr_dbl(struct enc *e, int field, const char *name, double v)
{
    attr_begin(e, name);
    pb_double(&e->attr, ATTR_DOUBLE, v);
    attr_end(e, field);
}

/* Appends e->msg to f as one length-delimited record. */
static int emit(struct enc *e, FILE *f, const char *path)
{
    if (e->msg.oom)
        return ps_error(PS_ENOMEM, "out of memory encoding %s", path);
    uint8_t len[10];
    size_t nl = varint_put(len, e->msg.n);
    if (fwrite(len, 1, nl, f) != nl || fwrite(e->msg.p, 1, e->msg.n, f) != e->msg.n)
        return ps_error(PS_EIO, "%s: write failed: %s", path, strerror(errno));
    e->msg.n = 0;
    return 0;
}

/* Simulated start and duration of every op of device d, by list position. */
struct times {
    int64_t *start, *dur;
    int *have;
};

struct ctx {
    const struct sch_schedule *s;
    const struct sch_costs *c;
    const struct trc_chakra_opts *o;
    struct sch_devindex x;
    struct times tm;
    uint64_t *ctrl, *data;   /* scratch dependency lists */
    size_t *by_dev, *dev_first; /* trace events bucketed by device */
    struct enc e;
};

static int fill_times(struct ctx *c, const struct trc_trace *t, int d)
{
    const struct sch_schedule *s = c->s;
    int rc = sch_devindex_fill(&c->x, s, d);
    if (rc < 0)
        return rc;
    memset(c->tm.have, 0, (size_t)s->n_ops[d] * sizeof *c->tm.have);
    for (size_t k = c->dev_first[d]; k < c->dev_first[d + 1]; k++) {
        const struct trc_event *ev = &t->events[c->by_dev[k]];
        if (ev->kind >= SCH_OP_NKINDS || ev->stage < 0 || ev->stage >= s->n_stages ||
            s->stage_device[ev->stage] != d || ev->mb >= s->n_micro)
            return ps_error(PS_EINVAL, "trace event of device %d (kind %d, stage %d, "
                             "micro-batch %d) is not an op of the schedule", d, ev->kind,
                             ev->stage, ev->mb);
        int32_t pos = sch_devindex_get(&c->x, s, ev->kind, ev->stage, ev->mb);
        if (pos < 0)
            return ps_error(PS_EINVAL, "trace event of device %d (kind %d, stage %d, "
                             "micro-batch %d) is not in its op list", d, ev->kind, ev->stage,
                             ev->mb);
        c->tm.start[pos] = ev->start_ns;
        c->tm.dur[pos] = ev->end_ns - ev->start_ns;
        c->tm.have[pos] = 1;
    }
    for (int i = 0; i < s->n_ops[d]; i++)
        if (!c->tm.have[i]) {
            char lab[32];
            sch_op_label(&s->ops[d][i], lab, sizeof lab);
            return ps_error(PS_EINVAL, "no simulated time for op %s of stage %d on "
                             "device %d", lab, s->ops[d][i].stage, d);
        }
    return 0;
}

static int write_meta(struct ctx *c, FILE *f, const char *path, int rank, int n_ranks)
{
    struct enc *e = &c->e;
    const struct sch_schedule *s = c->s;
    pb_string(&e->msg, META_VERSION, "0.0.4");
    attr_str(e, META_ATTR, "pipesim_version", PS_VERSION);
    attr_str(e, META_ATTR, "pipesim_schedule", s->name);
    attr_str(e, META_ATTR, "pipesim_remat", sch_remat_name(s->remat));
    attr_int(e, META_ATTR, "pipesim_K", ATTR_INT64, s->n_devices);
    attr_int(e, META_ATTR, "pipesim_stages", ATTR_INT64, s->n_stages);
    attr_int(e, META_ATTR, "pipesim_M", ATTR_INT64, s->n_micro);
    attr_int(e, META_ATTR, "pipesim_replicas", ATTR_INT64, n_ranks / s->n_devices);
    attr_int(e, META_ATTR, "pipesim_rank", ATTR_INT64, rank);
    attr_int(e, META_ATTR, "pipesim_n_ranks", ATTR_INT64, n_ranks);
    attr_dbl(e, META_ATTR, "pipesim_batch", c->o->batch);
    return emit(e, f, path);
}

/* Data deps of op i of device d (same-rank ops only) into c->data. */
static int data_deps(struct ctx *c, int d, const struct sch_op *op)
{
    const struct sch_schedule *s = c->s;
    struct sch_op deps[3];
    int n = 0, nd = sch_schedule_deps(s, op, deps);
    for (int k = 0; k < nd; k++)
        if (s->stage_device[deps[k].stage] == d)
            c->data[n++] = (uint64_t)sch_devindex_get(&c->x, s, deps[k].kind, deps[k].stage,
                                                      deps[k].mb);
    int after_all = op->kind == SCH_OP_ALLREDUCE ||
                    (op->kind == SCH_OP_UPDATE && s->n_replicas <= 1);
    if (after_all) {
        int k = s->has_wgrad ? SCH_OP_WGRAD : SCH_OP_BWD;
        for (int m = 0; m < s->n_micro; m++)
            c->data[n++] = (uint64_t)sch_devindex_get(&c->x, s, k, op->stage, m);
    }
    return n;
}

static int write_node(struct ctx *c, FILE *f, const char *path, int d, int rank, int i,
                      int *last)
{
    const struct sch_schedule *s = c->s;
    const struct sch_op *op = &s->ops[d][i];
    struct enc *e = &c->e;
    int st = sch_op_stream(op->kind), base = rank - d;
    char lab[32], name[48];
    sch_op_label(op, lab, sizeof lab);
    snprintf(name, sizeof name, "s%d:%s", op->stage, lab);
    int type = st == SCH_STREAM_SEND   ? TRC_CHAKRA_SEND
               : st == SCH_STREAM_RECV ? TRC_CHAKRA_RECV
               : op->kind == SCH_OP_ALLREDUCE ? TRC_CHAKRA_COLL : TRC_CHAKRA_COMP;
    pb_uint(&e->msg, NODE_ID, (uint64_t)i);
    pb_string(&e->msg, NODE_NAME, name);
    pb_uint(&e->msg, NODE_TYPE, (uint64_t)type);
    if (last[st] >= 0) {
        c->ctrl[0] = (uint64_t)last[st];
        pb_packed(&e->msg, NODE_CTRL, c->ctrl, 1);
    }
    last[st] = i;
    pb_packed(&e->msg, NODE_DATA, c->data, data_deps(c, d, op));
    int64_t t0 = c->tm.start[i], dt = c->tm.dur[i];
    pb_uint(&e->msg, NODE_START, (uint64_t)((t0 + 500) / 1000));
    pb_uint(&e->msg, NODE_DUR, (uint64_t)((dt + 500) / 1000));
    attr_int(e, NODE_ATTR, "is_cpu_op", ATTR_BOOL, 0);
    attr_str(e, NODE_ATTR, "pipesim_kind", sch_op_kind_name(op->kind));
    attr_int(e, NODE_ATTR, "pipesim_stage", ATTR_INT64, op->stage);
    attr_int(e, NODE_ATTR, "pipesim_mb", ATTR_INT64, op->mb);
    attr_int(e, NODE_ATTR, "pipesim_start_ns", ATTR_INT64, t0);
    attr_int(e, NODE_ATTR, "pipesim_duration_ns", ATTR_INT64, dt);
    if (type == TRC_CHAKRA_SEND || type == TRC_CHAKRA_RECV) {
        int peer = base + sch_op_peer(s, op);
        attr_int(e, NODE_ATTR, "comm_src", ATTR_INT32, type == TRC_CHAKRA_SEND ? rank : peer);
        attr_int(e, NODE_ATTR, "comm_dst", ATTR_INT32, type == TRC_CHAKRA_SEND ? peer : rank);
        attr_int(e, NODE_ATTR, "comm_tag", ATTR_INT32, sch_op_tag(s, op));
        /* a receive moves what its matching send moves */
        struct sch_op snd = *op;
        if (type == TRC_CHAKRA_RECV)
            sch_op_partner(op, &snd);
        attr_int(e, NODE_ATTR, "comm_size", ATTR_INT64, sch_costs_op_bytes(c->c, &snd));
        /* host-driven messages: the part of its time that is its device's
         * own copy (the sender's after the op that made the data, the
         * reader's before the op that reads it) */
        sch_time copy = sch_costs_op_copy(c->c, op);
        if (copy > 0)
            attr_int(e, NODE_ATTR, "pipesim_copy_ns", ATTR_INT64, copy);
    } else if (type == TRC_CHAKRA_COLL) {
        /* ASTRA-sim reads pg_name as a communicator group's number (std::stoi; "" or
         * "0": every rank): the group of device d's replicas is d + 1, listed in
         * <prefix>.comm_groups.json (helper-70: "dp_stage0" aborted it) */
        char pg[32];
        snprintf(pg, sizeof pg, "%d", d + 1);
        attr_int(e, NODE_ATTR, "comm_type", ATTR_INT64, TRC_CHAKRA_ALL_REDUCE);
        /* the stage's gradients, as the engine's ring all-reduce */
        attr_int(e, NODE_ATTR, "comm_size", ATTR_INT64, sch_costs_op_bytes(c->c, op));
        attr_str(e, NODE_ATTR, "pg_name", pg);
    }
    return emit(e, f, path);
}

static int bucket_events(struct ctx *c, const struct trc_trace *t)
{
    int D = c->s->n_devices;
    c->dev_first = calloc((size_t)D + 2, sizeof *c->dev_first);
    c->by_dev = malloc((t->n_events ? t->n_events : 1) * sizeof *c->by_dev);
    if (!c->dev_first || !c->by_dev)
        return ps_error(PS_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->n_events; i++) {
        if (t->events[i].device < 0 || t->events[i].device >= D)
            return ps_error(PS_EINVAL, "trace event on device %d; the schedule has %d",
                             t->events[i].device, D);
        c->dev_first[t->events[i].device + 2]++;
    }
    for (int d = 2; d <= D + 1; d++)
        c->dev_first[d] += c->dev_first[d - 1];
    for (size_t i = 0; i < t->n_events; i++)
        c->by_dev[c->dev_first[t->events[i].device + 1]++] = i;
    return 0;
}

/* ASTRA-sim's communicator groups (--comm-group-configuration): group d + 1
 * is device d's replicas, ranks r * D + d. -1 on a write error. */
static int write_groups(FILE *f, int D, int R)
{
    fputs("{", f);
    for (int d = 0; d < D; d++) {
        fprintf(f, "%s\n  \"%d\": [", d ? "," : "", d + 1);
        for (int r = 0; r < R; r++)
            fprintf(f, "%s%d", r ? ", " : "", r * D + d);
        fputs("]", f);
    }
    fputs("\n}\n", f);
    return ferror(f) ? -1 : 0;
}

int trc_chakra_write(const struct sch_schedule *s, const struct sch_costs *cost,
                     const struct trc_trace *t, const struct trc_chakra_opts *o,
                     int *n_files)
{
    *n_files = 0;
    int D = s->n_devices, R = s->n_replicas > 1 ? s->n_replicas : 1, maxops = 0, rc;
    if ((int64_t)D * R > 4096)
        return ps_error(PS_EINVAL, "%d ranks: at most 4096 Chakra files at once", D * R);
    char gpath[4096];
    if ((rc = trc_chakra_open_files(D * R, R > 1, 1)) < 0 ||
        (rc = trc_chakra_groups_path(o, gpath, sizeof gpath)) < 0)
        return rc;
    if (2 * (int64_t)s->n_stages * s->n_micro > INT32_MAX)
        return ps_error(PS_EINVAL, "S*M = %lld too large for 32-bit comm_tag",
                         (long long)s->n_stages * s->n_micro);
    struct ps_made made = { 0 }; /* the folders made: a failed export takes them away */
    int *earlier = NULL, n_earlier = 0; /* an earlier, larger export's ranks */
    if ((rc = ps_mkdirs_made(o->dir, &made)) < 0 ||
        (rc = trc_chakra_distinct_outputs(o, D * R, R > 1 ? gpath : NULL)) < 0) {
        ps_made_undo(&made);
        return rc;
    }
    for (int d = 0; d < D; d++)
        maxops = s->n_ops[d] > maxops ? s->n_ops[d] : maxops;
    struct ctx c = { .s = s, .c = cost, .o = o };
    int nf = D * R + (R > 1); /* the ranks, and the groups with replicas */
    struct ps_afile *af = calloc((size_t)nf, sizeof *af);
    if ((rc = sch_devindex_init(&c.x, s)) < 0)
        goto out_free;
    c.tm.start = malloc((size_t)(maxops + 1) * sizeof *c.tm.start);
    c.tm.dur = malloc((size_t)(maxops + 1) * sizeof *c.tm.dur);
    c.tm.have = malloc((size_t)(maxops + 1) * sizeof *c.tm.have);
    c.ctrl = malloc(sizeof *c.ctrl);
    c.data = malloc((size_t)(s->n_micro + 4) * sizeof *c.data);
    if (!af || !c.tm.start || !c.tm.dur || !c.tm.have || !c.ctrl || !c.data) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out_free;
    }
    if ((rc = bucket_events(&c, t)) < 0)
        goto out_free;
    for (int d = 0; d < D; d++) {
        if ((rc = fill_times(&c, t, d)) < 0)
            goto out_free;
        for (int r = 0; r < R; r++) {
            int rank = r * D + d;
            char path[4096];
            if ((rc = trc_chakra_rank_path(o, rank, path, sizeof path)) < 0 ||
                (rc = ps_afile_open(&af[rank], path)) < 0)
                goto out_free;
            FILE *f = af[rank].f;
            if ((rc = write_meta(&c, f, path, rank, D * R)) < 0)
                goto out_free;
            int last[SCH_NSTREAMS] = { -1, -1, -1 };
            for (int i = 0; i < s->n_ops[d]; i++)
                if ((rc = write_node(&c, f, path, d, rank, i, last)) < 0)
                    goto out_free;
        }
    }
    if (R > 1) {
        if ((rc = ps_afile_open(&af[D * R], gpath)) < 0)
            goto out_free;
        if ((rc = write_groups(af[D * R].f, D, R)) < 0) {
            rc = ps_error(PS_EIO, "%s: write error", gpath);
            goto out_free;
        }
    }
    /* every rank is written: all on disk (a full disk, a device that fails
     * shows here) before any is renamed over its old file, so a failure
     * replaces none (unlinking the ranks published before it deleted the
     * old files with the new) */
    for (int k = 0; k < nf; k++)
        if ((rc = ps_afile_sync(&af[k])) < 0)
            goto out_free;
    if ((rc = trc_chakra_earlier_find(o, D * R, &earlier, &n_earlier)) < 0)
        goto out_free;
    /* a signal now leaves the old ranks or the new, with the earlier export's
     * further ranks removed (helper-113: removed after the signals were let
     * through, a signal there kept a mix of the two) */
    ps_afile_publish_begin();
    for (int k = 0; k < nf && rc == 0; k++)
        rc = ps_afile_commit(&af[k]);
    if (rc == 0)
        trc_chakra_earlier_remove(o, earlier, n_earlier, R > 1, gpath);
    ps_afile_publish_end();
    if (rc < 0)
        goto out_free;
    *n_files = D * R;
out_free:
    free(earlier);
    for (int k = 0; k < nf && af; k++)
        if (af[k].f)
            ps_afile_abort(&af[k]);
    free(af);
    free(c.e.msg.p);
    free(c.e.attr.p);
    free(c.by_dev);
    free(c.dev_first);
    free(c.data);
    free(c.ctrl);
    free(c.tm.have);
    free(c.tm.dur);
    free(c.tm.start);
    sch_devindex_release(&c.x);
    if (rc < 0)
        ps_made_undo(&made);
    else
        ps_made_keep(&made);
    return rc;
}
