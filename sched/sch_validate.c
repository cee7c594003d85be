/* sch_schedule_validate and the per-device op index it shares with the
 * engine. Work is per device with a table sized for one device's stages, so
 * a K=1024, M=4096 schedule validates in a few cache-sized passes. */
#include "base/ps_error.h"
#include "sched/sch_schedule.h"

#include <stdlib.h>
#include <string.h>

int sch_devindex_init(struct sch_devindex *x, const struct sch_schedule *s)
{
    memset(x, 0, sizeof *x);
    int *count = calloc((size_t)s->n_devices, sizeof *count);
    x->local = malloc((size_t)s->n_stages * sizeof *x->local);
    if (!count || !x->local) {
        free(count);
        free(x->local);
        x->local = NULL;
        return ps_error(PS_ENOMEM, "out of memory indexing schedule");
    }
    for (int st = 0; st < s->n_stages; st++) {
        int d = s->stage_device[st];
        x->local[st] = count[d]++;
        if (count[d] > x->max_local)
            x->max_local = count[d];
    }
    free(count);
    size_t n = (size_t)x->max_local * SCH_OP_NKINDS * (size_t)s->n_micro;
    if (!(x->pos = malloc(n * sizeof *x->pos))) {
        sch_devindex_release(x);
        return ps_error(PS_ENOMEM, "out of memory indexing schedule");
    }
    return 0;
}

void sch_devindex_release(struct sch_devindex *x)
{
    free(x->pos);
    free(x->local);
    memset(x, 0, sizeof *x);
}

int sch_devindex_fill(struct sch_devindex *x, const struct sch_schedule *s, int d)
{
    memset(x->pos, 0xff, (size_t)x->max_local * SCH_OP_NKINDS * (size_t)s->n_micro *
                             sizeof *x->pos);
    char lab[32];
    for (int i = 0; i < s->n_ops[d]; i++) {
        const struct sch_op *op = &s->ops[d][i];
        if (op->kind >= SCH_OP_NKINDS || op->stage < 0 || op->stage >= s->n_stages ||
            (sch_op_per_stage(op->kind) ? op->mb != -1 : (op->mb < 0 || op->mb >= s->n_micro)))
            return ps_error(PS_EINVAL, "schedule %s: device %d op %d out of range (kind %d, "
                             "stage %d, mb %d)", s->name, d, i, op->kind, op->stage, op->mb);
        if (s->stage_device[op->stage] != d) {
            sch_op_label(op, lab, sizeof lab);
            return ps_error(PS_EINVAL, "schedule %s: %s of stage %d is on device %d, its "
                             "stage lives on device %d", s->name, lab, op->stage, d,
                             s->stage_device[op->stage]);
        }
        int32_t *p = &x->pos[((int64_t)x->local[op->stage] * SCH_OP_NKINDS + op->kind) *
                                 s->n_micro + (op->mb < 0 ? 0 : op->mb)];
        if (*p >= 0) {
            sch_op_label(op, lab, sizeof lab);
            return ps_error(PS_EINVAL, "schedule %s: device %d: %s of stage %d appears twice",
                             s->name, d, lab, op->stage);
        }
        *p = i;
    }
    return 0;
}

static int required(const struct sch_schedule *s, int kind, int st, int m)
{
    int d = s->stage_device[st], S = s->n_stages;
    int prev_other = st > 0 && s->stage_device[st - 1] != d;
    int next_other = st + 1 < S && s->stage_device[st + 1] != d;
    switch (kind) {
    case SCH_OP_FWD:
    case SCH_OP_BWD: return 1;
    case SCH_OP_RECOMP: return sch_schedule_remat_mb(s, m);
    case SCH_OP_WGRAD: return s->has_wgrad;
    case SCH_OP_SEND_ACT: return next_other;
    case SCH_OP_RECV_GRAD: return next_other;
    case SCH_OP_RECV_ACT: return prev_other;
    case SCH_OP_SEND_GRAD: return prev_other;
    case SCH_OP_UPDATE: return m == 0;
    case SCH_OP_ALLREDUCE: return m == 0 && s->n_replicas > 1;
    }
    return 0;
}

static int check_presence(const struct sch_schedule *s, const struct sch_devindex *x, int d)
{
    char lab[32];
    for (int st = 0; st < s->n_stages; st++) {
        if (s->stage_device[st] != d)
            continue;
        for (int k = 0; k < SCH_OP_NKINDS; k++)
            for (int m = 0; m < (sch_op_per_stage(k) ? 1 : s->n_micro); m++) {
                int want = required(s, k, st, m);
                int32_t at = sch_devindex_get(x, s, k, st, sch_op_per_stage(k) ? -1 : m);
                if (want == (at >= 0))
                    continue;
                struct sch_op op = { (uint8_t)k, st, sch_op_per_stage(k) ? -1 : m };
                sch_op_label(&op, lab, sizeof lab);
                return want ? ps_error(PS_EINVAL, "schedule %s: %s of stage %d is missing",
                                        s->name, lab, st)
                            : ps_error(PS_EINVAL, "schedule %s: device %d: %s of stage %d "
                                        "should not exist", s->name, d, lab, st);
            }
    }
    return 0;
}

/* Every same-device dependency precedes its user (a worker thread runs its
 * list in order); the update comes after all of its stage's backward ops. */
static int check_order(const struct sch_schedule *s, const struct sch_devindex *x, int d)
{
    char lab[32], dl[32];
    for (int i = 0; i < s->n_ops[d]; i++) {
        const struct sch_op *op = &s->ops[d][i];
        struct sch_op deps[3];
        int nd = sch_schedule_deps(s, op, deps);
        for (int j = 0; j < nd; j++) {
            if (s->stage_device[deps[j].stage] != d ||
                sch_devindex_get(x, s, deps[j].kind, deps[j].stage, deps[j].mb) < i)
                continue;
            sch_op_label(op, lab, sizeof lab);
            sch_op_label(&deps[j], dl, sizeof dl);
            return ps_error(PS_EINVAL, "schedule %s: device %d: %s of stage %d comes before "
                             "%s of stage %d, which it needs", s->name, d, lab, op->stage, dl,
                             deps[j].stage);
        }
        if (!sch_op_per_stage(op->kind))
            continue;
        int last_kind = s->has_wgrad ? SCH_OP_WGRAD : SCH_OP_BWD;
        for (int m = 0; m < s->n_micro; m++)
            if (sch_devindex_get(x, s, last_kind, op->stage, m) >= i)
                return ps_error(PS_EINVAL, "schedule %s: device %d: %s of stage %d comes "
                                 "before the backward of micro-batch %d", s->name, d,
                                 op->kind == SCH_OP_UPDATE ? "update" : "all-reduce",
                                 op->stage, m);
    }
    return 0;
}

int sch_schedule_check_device(const struct sch_schedule *s, const struct sch_devindex *x, int d)
{
    int rc = check_presence(s, x, d);
    return rc < 0 ? rc : check_order(s, x, d);
}

int sch_schedule_check_shape(const struct sch_schedule *s)
{
    if (s->n_devices < 1 || s->n_stages < 1 || s->n_micro < 1)
        return ps_error(PS_EINVAL, "schedule %s: empty (devices %d, stages %d, micro %d)",
                         s->name, s->n_devices, s->n_stages, s->n_micro);
    for (int st = 0; st < s->n_stages; st++)
        if (s->stage_device[st] < 0 || s->stage_device[st] >= s->n_devices)
            return ps_error(PS_EINVAL, "schedule %s: stage %d on device %d of %d", s->name,
                             st, s->stage_device[st], s->n_devices);
    return 0;
}

/* One in-order thread per device (the validation runtime) must be able to
 * run the lists: sends never block, an op whose dependency lives on another
 * device waits until that op is done. Rounds over the devices advance each
 * as far as it can; none advancing with ops left is a deadlock, which the
 * engine's separate streams could hide (a gradient receive listed before the
 * forward that leads to it). One bit per (kind, stage, mb) marks done ops.
 * O(ops + rounds * devices); rounds stay near K + M for pipeline lists. */
static int64_t op_bit(const struct sch_schedule *s, const struct sch_op *op)
{
    return ((int64_t)op->kind * s->n_stages + op->stage) * s->n_micro + (op->mb < 0 ? 0 : op->mb);
}

int sch_schedule_check_replay(const struct sch_schedule *s)
{
    int64_t nbits = (int64_t)SCH_OP_NKINDS * s->n_stages * s->n_micro;
    uint8_t *done = calloc((size_t)(nbits / 8 + 1), 1);
    int *pc = calloc((size_t)s->n_devices, sizeof *pc);
    int rc = 0;
    if (!done || !pc) {
        rc = ps_error(PS_ENOMEM, "out of memory validating schedule");
        goto out;
    }
    for (int progress = 1; progress;) {
        progress = 0;
        for (int d = 0; d < s->n_devices; d++)
            for (; pc[d] < s->n_ops[d]; pc[d]++, progress = 1) {
                const struct sch_op *op = &s->ops[d][pc[d]];
                struct sch_op deps[3];
                int nd = sch_schedule_deps(s, op, deps), ready = 1;
                for (int j = 0; j < nd && ready; j++) {
                    int64_t b = op_bit(s, &deps[j]);
                    ready = s->stage_device[deps[j].stage] == d || (done[b >> 3] >> (b & 7) & 1);
                }
                if (!ready)
                    break;
                int64_t b = op_bit(s, op);
                done[b >> 3] |= (uint8_t)(1u << (b & 7));
            }
    }
    for (int d = 0; d < s->n_devices && !rc; d++)
        if (pc[d] < s->n_ops[d]) {
            char lab[32];
            sch_op_label(&s->ops[d][pc[d]], lab, sizeof lab);
            rc = ps_error(PS_EINVAL, "schedule %s deadlocks one in-order thread per device: "
                           "device %d waits forever at %s of stage %d (op %d)", s->name, d,
                           lab, s->ops[d][pc[d]].stage, pc[d]);
        }
out:
    free(done);
    free(pc);
    return rc;
}

int sch_schedule_validate(const struct sch_schedule *s)
{
    struct sch_devindex x;
    int rc = sch_schedule_check_shape(s);
    if (rc < 0 || (rc = sch_devindex_init(&x, s)) < 0)
        return rc;
    for (int d = 0; d < s->n_devices && !rc; d++)
        if (!(rc = sch_devindex_fill(&x, s, d)))
            rc = sch_schedule_check_device(s, &x, d);
    sch_devindex_release(&x);
    return rc < 0 ? rc : sch_schedule_check_replay(s);
}
