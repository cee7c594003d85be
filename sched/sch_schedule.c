/*
 * sch_schedule: the op-list container (sch_schedule.h: per-device lists in
 * one slab, grown on demand), op and remat names, the generators by name
 * (sch_schedule_build, sch_schedule_check), op partners, tags and
 * dependencies, the data-parallel all-reduce, and the stage lists
 * validate's tables print. GPipe's own generator is sch_gpipe.c; the other
 * schedules' are listed in sched/README.md. Cost: O(1) amortized a push,
 * O(schedules) a lookup by name.
 */
#include "sched/sch_schedule.h"
#include "sched/sch_zb.h"
#include "base/ps_error.h"
#include "base/ps_strbuf.h"
#include "base/ps_suggest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const char *kind_names[SCH_OP_NKINDS] = {
    "F", "B", "R", "W", "send-act", "recv-act", "send-grad", "recv-grad", "U", "AR",
};

const char *sch_op_kind_name(enum sch_op_kind k)
{
    return (unsigned)k < SCH_OP_NKINDS ? kind_names[k] : "?";
}

void sch_op_label(const struct sch_op *op, char *buf, int n)
{
    switch (op->kind) {
    case SCH_OP_UPDATE: snprintf(buf, (size_t)n, "U"); break;
    case SCH_OP_ALLREDUCE: snprintf(buf, (size_t)n, "AR"); break;
    case SCH_OP_SEND_ACT: snprintf(buf, (size_t)n, "sendF%d", op->mb); break;
    case SCH_OP_RECV_ACT: snprintf(buf, (size_t)n, "recvF%d", op->mb); break;
    case SCH_OP_SEND_GRAD: snprintf(buf, (size_t)n, "sendB%d", op->mb); break;
    case SCH_OP_RECV_GRAD: snprintf(buf, (size_t)n, "recvB%d", op->mb); break;
    default: snprintf(buf, (size_t)n, "%s%d", kind_names[op->kind], op->mb); break;
    }
}

static const char *remat_names[] = { "never", "except_last", "always" };

int sch_remat_parse(const char *s, enum sch_remat *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, remat_names[i])) {
            *out = (enum sch_remat)i;
            return 0;
        }
    struct ps_suggest sg;
    return ps_error(PS_EUSAGE, "--remat: unknown mode '%s'%s (always, except_last, never)", s,
                    ps_suggest_among(&sg, s, remat_names, 3));
}

const char *sch_remat_name(enum sch_remat r) { return remat_names[r]; }

int sch_schedule_remat_mb(const struct sch_schedule *s, int m)
{
    return s->remat == SCH_REMAT_ALWAYS ||
           (s->remat == SCH_REMAT_EXCEPT_LAST && m != s->n_micro - 1);
}

struct sch_schedule *sch_schedule_new(const char *name, int n_devices, int n_stages,
                                      int n_micro, enum sch_remat remat)
{
    struct sch_schedule *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->n_devices = n_devices;
    s->n_stages = n_stages;
    s->n_micro = n_micro;
    s->remat = remat;
    s->stage_device = calloc((size_t)n_stages, sizeof *s->stage_device);
    s->n_ops = calloc((size_t)n_devices, sizeof *s->n_ops);
    s->ops = calloc((size_t)n_devices, sizeof *s->ops);
    s->cap_ops = calloc((size_t)n_devices, sizeof *s->cap_ops);
    if (!s->stage_device || !s->n_ops || !s->ops || !s->cap_ops) {
        sch_schedule_free(s);
        return NULL;
    }
    for (int i = 0; i < n_stages; i++)
        s->stage_device[i] = i % n_devices;
    return s;
}

/* Whether list p lives in the schedule's slab (compared as addresses, never
 * ordered: only to tell which block to free). */
static int in_slab(const struct sch_schedule *s, const struct sch_op *p)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)s->slab;
    return s->slab && a >= b && a < b + s->slab_ops * sizeof *p;
}

void sch_schedule_free(struct sch_schedule *s)
{
    if (!s)
        return;
    if (s->ops)
        for (int d = 0; d < s->n_devices; d++)
            if (!in_slab(s, s->ops[d]))
                free(s->ops[d]);
    free(s->slab);
    free(s->runs);
    free(s->run_first);
    free(s->ops);
    free(s->n_ops);
    free(s->cap_ops);
    free(s->stage_device);
    free(s);
}

int sch_schedule_reserve(struct sch_schedule *s, int d, int n)
{
    if (s->n_ops[d] + n <= s->cap_ops[d])
        return 0;
    if ((int64_t)s->n_ops[d] + n > INT32_MAX / 2)
        return ps_error(PS_EINVAL, "schedule %s: more than %d ops on one device", s->name,
                         INT32_MAX / 2);
    int cap = s->n_ops[d] + n;
    struct sch_op *no;
    if (in_slab(s, s->ops[d])) { /* leaves the slab for a block of its own */
        if ((no = malloc((size_t)cap * sizeof *no)))
            memcpy(no, s->ops[d], (size_t)s->n_ops[d] * sizeof *no);
    } else {
        no = realloc(s->ops[d], (size_t)cap * sizeof *no);
    }
    if (!no)
        return ps_error(PS_ENOMEM, "out of memory building schedule");
    s->ops[d] = no;
    s->cap_ops[d] = cap;
    return 0;
}

int sch_schedule_reserve_all(struct sch_schedule *s, const int *n)
{
    if (s->slab) { /* one slab per schedule: later calls reserve list by list */
        for (int d = 0; d < s->n_devices; d++) {
            int rc = sch_schedule_reserve(s, d, n[d]);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    size_t total = 0;
    for (int d = 0; d < s->n_devices; d++) {
        if ((int64_t)s->n_ops[d] + n[d] > INT32_MAX / 2)
            return ps_error(PS_EINVAL, "schedule %s: more than %d ops on one device", s->name,
                             INT32_MAX / 2);
        total += (size_t)s->n_ops[d] + (size_t)n[d];
    }
    size_t bytes = (total ? total : 1) * sizeof(struct sch_op);
    void *p = NULL;
#ifdef MADV_HUGEPAGE
    const size_t huge = (size_t)2 << 20;
    if (bytes >= 4 * huge) { /* aligned, so that the kernel can map it in 2 MiB pages */
        bytes = (bytes + huge - 1) / huge * huge;
        if (posix_memalign(&p, huge, bytes) == 0)
            madvise(p, bytes, MADV_HUGEPAGE); /* a hint: without it, small pages */
        else
            p = NULL;
    }
#endif
    if (!p && !(p = malloc(bytes)))
        return ps_error(PS_ENOMEM, "out of memory building schedule");
    struct sch_op *slab = p;
    size_t at = 0;
    for (int d = 0; d < s->n_devices; d++) {
        if (s->n_ops[d])
            memcpy(slab + at, s->ops[d], (size_t)s->n_ops[d] * sizeof *slab);
        free(s->ops[d]);
        s->ops[d] = slab + at;
        s->cap_ops[d] = s->n_ops[d] + n[d];
        at += (size_t)s->cap_ops[d];
    }
    s->slab = slab;
    s->slab_ops = total;
    return 0;
}

int sch_schedule_push_grow(struct sch_schedule *s, int d, enum sch_op_kind kind, int stage,
                           int mb)
{
    int n = s->n_ops[d];
    int rc = sch_schedule_reserve(s, d, n < 16 ? 16 : n);
    if (rc < 0)
        return rc;
    s->ops[d][n] = (struct sch_op){ .kind = (uint8_t)kind, .stage = stage, .mb = mb };
    s->n_ops[d] = n + 1;
    return 0;
}

int64_t sch_schedule_total_ops(const struct sch_schedule *s)
{
    int64_t n = 0;
    for (int d = 0; d < s->n_devices; d++)
        n += s->n_ops[d];
    return n;
}

/* Schedule generators by name. A generator with a parameter ("interleaved:2")
 * matches on the text before the colon and parses the rest itself. */
typedef int (*sch_schedule_gen)(const char *arg, int K, int M, enum sch_remat remat,
                                struct sch_schedule **out);

static int gen_gpipe(const char *arg, int K, int M, enum sch_remat remat,
                     struct sch_schedule **out)
{
    if (arg)
        return ps_error(PS_EUSAGE, "--schedule gpipe takes no parameter");
    return sch_schedule_gpipe(K, M, remat, out);
}

/* form: how the name is written with its parameter (":v" required, "[:L]"
 * optional), as `pipesim help schedules` lists it. */
static const struct { const char *name, *form; sch_schedule_gen gen; } generators[] = {
    { "gpipe", "gpipe", gen_gpipe },
    { "1f1b", "1f1b", sch_gen_1f1b },
    { "interleaved", "interleaved:v", sch_gen_interleaved },
    { "zb-h1", "zb-h1", sch_gen_zbh1 },
    { "zb-h2", "zb-h2", sch_gen_zbh2 },
    { "zb-v", "zb-v", sch_gen_zbv },
    { "zb-auto", "zb-auto[:L]", sch_gen_zbauto },
    { "dualpipe-v", "dualpipe-v", sch_gen_dualpipev },
    { "eager-1f1b", "eager-1f1b", sch_gen_eager_1f1b },
    { "breadth-first", "breadth-first:v", sch_gen_breadth_first },
};

int sch_schedule_count(void) { return (int)(sizeof generators / sizeof *generators); }

const char *sch_schedule_form(int i)
{
    if (i < 0 || i >= sch_schedule_count())
        PS_BUG("schedule %d of %d", i, sch_schedule_count());
    return generators[i].form;
}

/* The index of name's generator (the text before ':'), or the table's
 * length when none has that name. */
static size_t generator_of(const char *name)
{
    const char *colon = strchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    size_t i = 0;
    while (i < sizeof generators / sizeof *generators &&
           (strlen(generators[i].name) != len || strncmp(generators[i].name, name, len)))
        i++;
    return i;
}

int sch_schedule_known(const char *name, const char *opt)
{
    if (generator_of(name) < sizeof generators / sizeof *generators)
        return 0;
    const char *colon = strchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    char list[256] = "", typed[64];
    snprintf(typed, sizeof typed, "%.*s", (int)len, name);
    struct ps_suggest sg;
    ps_suggest_init(&sg, typed);
    for (size_t i = 0; i < sizeof generators / sizeof *generators; i++) {
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 generators[i].name);
        ps_suggest_add(&sg, generators[i].name);
    }
    return ps_error(PS_EUSAGE, "%s: unknown schedule '%s'%s (known: %s)", opt, name,
                    ps_suggest_hint(&sg), list);
}

int sch_schedule_check(const char *name, const char *opt)
{
    int rc = sch_schedule_known(name, opt);
    struct sch_schedule *probe = NULL;
    if (rc == 0 && (rc = sch_schedule_build(name, 1, 2, SCH_REMAT_NEVER, &probe)) < 0 &&
        rc != -PS_ENOMEM && rc != -PS_EUSAGE) { /* a usage error names its option */
        char msg[PS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", ps_errmsg());
        rc = ps_error(PS_EUSAGE, "%s: '%s': %s", opt, name, msg);
    } else if (rc == -PS_EUSAGE && strcmp(opt, "--schedule") &&
               !strncmp(ps_errmsg(), "--schedule ", 11)) {
        /* the generators name --schedule; the option given may be --schedules */
        char msg[PS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", ps_errmsg() + 11);
        rc = ps_error(PS_EUSAGE, "%s %s", opt, msg);
    }
    sch_schedule_free(probe);
    return rc;
}

/* The name of the schedule a name builds at every K and M: breadth-first's v
 * defaults to 1, and v = 1 is gpipe; interleaved:1 is 1f1b (op for op, as
 * docs/schedules.md says); zb-auto's L defaults to K, so not fixed. */
static const char *same_as(const char *s)
{
    size_t i = generator_of(s);
    if (i == sizeof generators / sizeof *generators)
        return s;
    const char *colon = strchr(s, ':'), *v = colon ? colon + 1 : NULL;
    if (!strcmp(generators[i].name, "breadth-first") && (!v || !strcmp(v, "1")))
        return "gpipe";
    if (!strcmp(generators[i].name, "interleaved") && v && !strcmp(v, "1"))
        return "1f1b";
    return s;
}

int sch_schedule_same(const char *a, const char *b)
{
    return !strcmp(same_as(a), same_as(b));
}

int sch_schedule_build(const char *name, int K, int M, enum sch_remat remat,
                       struct sch_schedule **out)
{
    *out = NULL;
    size_t i = generator_of(name);
    if (i == sizeof generators / sizeof *generators)
        return sch_schedule_known(name, "--schedule");
    const char *colon = strchr(name, ':');
    return generators[i].gen(colon ? colon + 1 : NULL, K, M, remat, out);
}

int sch_op_partner(const struct sch_op *op, struct sch_op *out)
{
    switch (op->kind) {
    case SCH_OP_SEND_ACT: *out = (struct sch_op){ SCH_OP_RECV_ACT, op->stage + 1, op->mb }; break;
    case SCH_OP_RECV_ACT: *out = (struct sch_op){ SCH_OP_SEND_ACT, op->stage - 1, op->mb }; break;
    case SCH_OP_SEND_GRAD: *out = (struct sch_op){ SCH_OP_RECV_GRAD, op->stage - 1, op->mb }; break;
    case SCH_OP_RECV_GRAD: *out = (struct sch_op){ SCH_OP_SEND_GRAD, op->stage + 1, op->mb }; break;
    default: return 0;
    }
    return 1;
}

int sch_op_peer(const struct sch_schedule *s, const struct sch_op *op)
{
    struct sch_op o;
    return sch_op_partner(op, &o) ? s->stage_device[o.stage] : -1;
}

int64_t sch_op_tag_m(int n_micro, const struct sch_op *op)
{
    struct sch_op snd;
    if (!sch_op_partner(op, &snd))
        return -1;
    if (op->kind == SCH_OP_SEND_ACT || op->kind == SCH_OP_SEND_GRAD)
        snd = *op;
    return 2 * ((int64_t)snd.stage * n_micro + snd.mb) + (snd.kind == SCH_OP_SEND_GRAD);
}

int64_t sch_op_tag(const struct sch_schedule *s, const struct sch_op *op)
{
    return sch_op_tag_m(s->n_micro, op);
}

int sch_schedule_add_allreduce(struct sch_schedule *s, int replicas)
{
    if (replicas < 1)
        return ps_error(PS_EUSAGE, "--replicas must be >= 1, got %d", replicas);
    if (s->n_replicas > 1)
        return ps_error(PS_EINVAL, "schedule %s already has all-reduce ops", s->name);
    int rc0 = replicas > 1 ? sch_schedule_materialize(s) : 0; /* AR ops go into lists */
    if (rc0 < 0)
        return rc0;
    s->n_replicas = replicas;
    if (replicas == 1)
        return 0;
    for (int d = 0; d < s->n_devices; d++) {
        int n = s->n_ops[d], nu = 0;
        for (int i = 0; i < n; i++)
            nu += s->ops[d][i].kind == SCH_OP_UPDATE;
        int rc = sch_schedule_reserve(s, d, nu);
        if (rc < 0)
            return rc;
        /* shift in place from the back, writing AR(s) just before each U(s) */
        int w = n + nu;
        for (int i = n - 1; i >= 0; i--) {
            struct sch_op op = s->ops[d][i];
            s->ops[d][--w] = op;
            if (op.kind == SCH_OP_UPDATE)
                s->ops[d][--w] = (struct sch_op){ SCH_OP_ALLREDUCE, op.stage, -1 };
        }
        s->n_ops[d] = n + nu;
    }
    return 0;
}

static int push_dep(struct sch_op *deps, int n, enum sch_op_kind k, int st, int mb)
{
    deps[n] = (struct sch_op){ .kind = (uint8_t)k, .stage = st, .mb = mb };
    return n + 1;
}

int sch_schedule_deps(const struct sch_schedule *s, const struct sch_op *op,
                      struct sch_op deps[3])
{
    int st = op->stage, m = op->mb, n = 0, S = s->n_stages;
    int here = s->stage_device[st];
    switch (op->kind) {
    case SCH_OP_FWD:
        if (st > 0)
            n = s->stage_device[st - 1] != here ? push_dep(deps, n, SCH_OP_RECV_ACT, st, m)
                                                : push_dep(deps, n, SCH_OP_FWD, st - 1, m);
        break;
    case SCH_OP_RECV_ACT: n = push_dep(deps, n, SCH_OP_SEND_ACT, st - 1, m); break;
    case SCH_OP_SEND_ACT: n = push_dep(deps, n, SCH_OP_FWD, st, m); break;
    case SCH_OP_RECOMP: n = push_dep(deps, n, SCH_OP_FWD, st, m); break;
    case SCH_OP_BWD:
        n = push_dep(deps, n, sch_schedule_remat_mb(s, m) ? SCH_OP_RECOMP : SCH_OP_FWD, st, m);
        if (st + 1 < S)
            n = s->stage_device[st + 1] != here ? push_dep(deps, n, SCH_OP_RECV_GRAD, st, m)
                                                : push_dep(deps, n, SCH_OP_BWD, st + 1, m);
        break;
    case SCH_OP_WGRAD: n = push_dep(deps, n, SCH_OP_BWD, st, m); break;
    case SCH_OP_SEND_GRAD: n = push_dep(deps, n, SCH_OP_BWD, st, m); break;
    case SCH_OP_RECV_GRAD: n = push_dep(deps, n, SCH_OP_SEND_GRAD, st + 1, m); break;
    case SCH_OP_UPDATE:
        if (s->n_replicas > 1)
            n = push_dep(deps, n, SCH_OP_ALLREDUCE, st, -1);
        break; /* and after all of its stage's B/W, checked by validate */
    default: break; /* ALLREDUCE: after all of its stage's B/W, checked by validate */
    }
    return n;
}

void sch_device_stages(const struct sch_schedule *s, int d, struct ps_strbuf *b)
{
    int first = 1;
    for (int st = 0; st < s->n_stages; st++)
        if (s->stage_device[st] == d) {
            ps_strbuf_printf(b, "%s%d", first ? "" : ",", st);
            first = 0;
        }
}

int sch_device_stages_width(const struct sch_schedule *s, int min)
{
    int w = min;
    for (int d = 0; d < s->n_devices; d++) {
        int len = 0;
        for (int st = 0; st < s->n_stages; st++)
            if (s->stage_device[st] == d)
                len += snprintf(NULL, 0, "%s%d", len ? "," : "", st);
        w = len > w ? len : w;
    }
    return w;
}
