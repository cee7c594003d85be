/* sim_schedule_validate: structural checks of a schedule's op lists. */
#include "sim/sim_error.h"
#include "sim/sim_schedule.h"

#include <stdlib.h>

/* Position of each (kind, stage, mb) in its device's list, -1 if absent.
 * UPDATE uses mb slot 0. */
static int64_t slot(const struct sim_schedule *s, int kind, int st, int mb)
{
    return ((int64_t)kind * s->n_stages + st) * s->n_micro + (mb < 0 ? 0 : mb);
}

static int required(const struct sim_schedule *s, int kind, int st, int m)
{
    int d = s->stage_device[st], S = s->n_stages;
    int prev_other = st > 0 && s->stage_device[st - 1] != d;
    int next_other = st + 1 < S && s->stage_device[st + 1] != d;
    switch (kind) {
    case SIM_OP_FWD:
    case SIM_OP_BWD: return 1;
    case SIM_OP_RECOMP: return sim_schedule_remat_mb(s, m);
    case SIM_OP_WGRAD: return s->has_wgrad;
    case SIM_OP_SEND_ACT: return next_other;
    case SIM_OP_RECV_GRAD: return next_other;
    case SIM_OP_RECV_ACT: return prev_other;
    case SIM_OP_SEND_GRAD: return prev_other;
    case SIM_OP_UPDATE: return m == 0;
    }
    return 0;
}

/* One in-order thread per device (the validation runtime) must be able to
 * run the lists: sends never block, a receive or a cross-device dependency
 * waits until its producer is done. Rounds over the devices advance each as
 * far as it can; none advancing with ops left is a deadlock, which the
 * engine's separate streams could hide (a receive listed before the forward
 * whose activations make its gradient). pos[] gives each op's list index,
 * so an op is done iff its device's cursor is past it. O(ops * devices)
 * worst case, O(ops) for the usual lists. */
static int replay_in_order(const struct sim_schedule *s, const int32_t *pos)
{
    int *pc = calloc((size_t)s->n_devices, sizeof *pc);
    if (!pc)
        return sim_error(SIM_ENOMEM, "out of memory validating schedule");
    for (int progress = 1; progress;) {
        progress = 0;
        for (int d = 0; d < s->n_devices; d++)
            for (; pc[d] < s->n_ops[d]; pc[d]++, progress = 1) {
                struct sim_op deps[3];
                int nd = sim_schedule_deps(s, &s->ops[d][pc[d]], deps), ready = 1;
                for (int j = 0; j < nd && ready; j++)
                    ready = pc[s->stage_device[deps[j].stage]] >
                            pos[slot(s, deps[j].kind, deps[j].stage, deps[j].mb)];
                if (!ready)
                    break;
            }
    }
    int rc = 0;
    for (int d = 0; d < s->n_devices && !rc; d++)
        if (pc[d] < s->n_ops[d]) {
            char lab[32];
            sim_op_label(&s->ops[d][pc[d]], lab, sizeof lab);
            rc = sim_error(SIM_EINVAL, "schedule %s deadlocks one in-order thread per device: "
                           "device %d waits forever at %s of stage %d (op %d)", s->name, d,
                           lab, s->ops[d][pc[d]].stage, pc[d]);
        }
    free(pc);
    return rc;
}

int sim_schedule_validate(const struct sim_schedule *s)
{
    if (s->n_devices < 1 || s->n_stages < 1 || s->n_micro < 1)
        return sim_error(SIM_EINVAL, "schedule %s: empty (devices %d, stages %d, micro %d)",
                         s->name, s->n_devices, s->n_stages, s->n_micro);
    for (int st = 0; st < s->n_stages; st++)
        if (s->stage_device[st] < 0 || s->stage_device[st] >= s->n_devices)
            return sim_error(SIM_EINVAL, "schedule %s: stage %d on device %d of %d", s->name,
                             st, s->stage_device[st], s->n_devices);
    int64_t n = (int64_t)SIM_OP_NKINDS * s->n_stages * s->n_micro;
    int32_t *pos = malloc((size_t)n * sizeof *pos);
    if (!pos)
        return sim_error(SIM_ENOMEM, "out of memory validating schedule");
    for (int64_t i = 0; i < n; i++)
        pos[i] = -1;
    int rc = 0;
    char lab[32];
    for (int d = 0; d < s->n_devices && !rc; d++)
        for (int i = 0; i < s->n_ops[d] && !rc; i++) {
            const struct sim_op *op = &s->ops[d][i];
            if (op->kind >= SIM_OP_NKINDS || op->stage < 0 || op->stage >= s->n_stages ||
                (op->kind == SIM_OP_UPDATE ? op->mb != -1
                                           : (op->mb < 0 || op->mb >= s->n_micro))) {
                rc = sim_error(SIM_EINVAL, "schedule %s: device %d op %d out of range "
                               "(kind %d, stage %d, mb %d)", s->name, d, i, op->kind,
                               op->stage, op->mb);
                break;
            }
            sim_op_label(op, lab, sizeof lab);
            if (s->stage_device[op->stage] != d)
                rc = sim_error(SIM_EINVAL, "schedule %s: %s of stage %d is on device %d, "
                               "its stage lives on device %d", s->name, lab, op->stage, d,
                               s->stage_device[op->stage]);
            else if (!required(s, op->kind, op->stage, op->mb < 0 ? 0 : op->mb))
                rc = sim_error(SIM_EINVAL, "schedule %s: device %d: %s of stage %d should not "
                               "exist", s->name, d, lab, op->stage);
            else if (pos[slot(s, op->kind, op->stage, op->mb)] >= 0)
                rc = sim_error(SIM_EINVAL, "schedule %s: device %d: %s of stage %d appears "
                               "twice", s->name, d, lab, op->stage);
            else
                pos[slot(s, op->kind, op->stage, op->mb)] = i;
        }
    for (int k = 0; k < SIM_OP_NKINDS && !rc; k++)
        for (int st = 0; st < s->n_stages && !rc; st++)
            for (int m = 0; m < (k == SIM_OP_UPDATE ? 1 : s->n_micro) && !rc; m++)
                if (required(s, k, st, m) && pos[slot(s, k, st, m)] < 0) {
                    struct sim_op op = { (uint8_t)k, st, k == SIM_OP_UPDATE ? -1 : m };
                    sim_op_label(&op, lab, sizeof lab);
                    rc = sim_error(SIM_EINVAL, "schedule %s: %s of stage %d is missing",
                                   s->name, lab, st);
                }
    /* Every same-device dependency precedes its user (a worker thread runs its
     * list in order); the update comes after all of its stage's backward ops. */
    for (int d = 0; d < s->n_devices && !rc; d++)
        for (int i = 0; i < s->n_ops[d] && !rc; i++) {
            const struct sim_op *op = &s->ops[d][i];
            struct sim_op deps[3];
            int nd = sim_schedule_deps(s, op, deps);
            for (int j = 0; j < nd && !rc; j++) {
                if (s->stage_device[deps[j].stage] != d)
                    continue;
                if (pos[slot(s, deps[j].kind, deps[j].stage, deps[j].mb)] >= i) {
                    char dl[32];
                    sim_op_label(op, lab, sizeof lab);
                    sim_op_label(&deps[j], dl, sizeof dl);
                    rc = sim_error(SIM_EINVAL, "schedule %s: device %d: %s of stage %d comes "
                                   "before %s of stage %d, which it needs", s->name, d, lab,
                                   op->stage, dl, deps[j].stage);
                }
            }
            if (op->kind == SIM_OP_UPDATE)
                for (int m = 0; m < s->n_micro && !rc; m++) {
                    int last = pos[slot(s, s->has_wgrad ? SIM_OP_WGRAD : SIM_OP_BWD,
                                        op->stage, m)];
                    if (last >= i)
                        rc = sim_error(SIM_EINVAL, "schedule %s: device %d: update of stage "
                                       "%d comes before the backward of micro-batch %d",
                                       s->name, d, op->stage, m);
                }
        }
    if (!rc)
        rc = replay_in_order(s, pos);
    free(pos);
    return rc;
}
