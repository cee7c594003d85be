#include "measure/msr_msgwalk.h"
#include "base/ps_error.h"
#include "sched/sch_schedule.h"

#include <stdlib.h>

/* The transfer an event of a send or receive belongs to (sch_op_tag_m's
 * number); -1 when its sender lies outside the trace's shape. */
static int64_t tag_of(const struct trc_trace *t, const struct trc_event *e)
{
    struct sch_op op = { .kind = e->kind, .stage = e->stage, .mb = e->mb }, snd;
    if (!sch_op_partner(&op, &snd))
        return -1;
    int s = op.kind == SCH_OP_SEND_ACT || op.kind == SCH_OP_SEND_GRAD ? op.stage : snd.stage;
    if (s < 0 || s >= t->n_stages || op.mb < 0 || op.mb >= t->n_micro)
        return -1;
    return sch_op_tag_m(t->n_micro, &op);
}

int msr_msg_walk(const struct trc_trace *t, msr_msg_fn fn, void *ctx)
{
    size_t n = t->n_events;
    size_t ntag = 2 * (size_t)(t->n_stages > 0 ? t->n_stages : 0) *
                  (size_t)(t->n_micro > 0 ? t->n_micro : 0);
    const struct trc_event **ev = malloc((n ? n : 1) * sizeof *ev);
    const struct trc_event **send = calloc(ntag ? ntag : 1, sizeof *send);
    int rc = 0;
    if (!ev || !send) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const struct trc_event *e = &t->events[i];
        ev[i] = e;
        int64_t tag = e->kind == SCH_OP_SEND_ACT || e->kind == SCH_OP_SEND_GRAD ? tag_of(t, e)
                                                                               : -1;
        if (tag >= 0)
            send[tag] = e;
    }
    qsort(ev, n, sizeof *ev, trc_event_ptr_by_device_start);
    int64_t last_end = 0; /* of the device's events so far */
    for (size_t i = 0; i < n && rc >= 0; i++) {
        const struct trc_event *e = ev[i];
        int first = !i || ev[i - 1]->device != e->device;
        int waited = !first && e->start_ns > last_end + MSR_MSG_WAIT_NS;
        last_end = first || e->end_ns > last_end ? e->end_ns : last_end;
        struct msr_msg m = { .ev = e };
        if (e->kind == SCH_OP_SEND_ACT || e->kind == SCH_OP_SEND_GRAD) {
            m.kind = MSR_MSG_SEND;
        } else if (!first && (e->kind == SCH_OP_RECV_ACT || e->kind == SCH_OP_RECV_GRAD)) {
            m.kind = waited ? MSR_MSG_RECV_WAITED : MSR_MSG_RECV_COPY;
            int64_t tag = waited ? tag_of(t, e) : -1;
            m.send = tag >= 0 ? send[tag] : NULL;
        } else {
            continue;
        }
        rc = fn(ctx, &m);
    }
out:
    free(ev);
    free(send);
    return rc < 0 ? rc : 0;
}
