/* The per-stage split of a predicted step (stu_breakdown.h). */
#include "studies/stu_breakdown.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>

const char *const stu_bd_class_name[STU_BD_NCLASS] = { "matrix", "vector", "memory",
                                                       "overhead", "link" };

/*
 * THE HOOK. Seconds of layer l's forward, backward and re-computation on
 * n samples on device d, split by op class (matrix FLOPs at the shape's
 * efficiency, vector FLOPs, memory traffic, per-kernel overhead), into
 * cls[0..STU_BD_LINK); returns 1 when the models can say, 0 when they
 * cannot. Today's device (peak FLOP/s x one efficiency curve) has no op
 * classes, so it returns 0. The op-level device model (models/mdl_device.h)
 * answers here with one call per layer and op, e.g.
 *   mdl_device_layer_split(d, l, MDL_OP_FWD, n, split)
 * (the name it lands with), filling split[] by op class; the link class
 * comes from the interconnect model's per-message time, asked the same way
 * in link_class below.
 */
static int layer_classes(const struct mdl_device *d, const struct mdl_layer *l, double n,
                         int recompute, double cls[STU_BD_NCLASS])
{
    (void)d;
    (void)l;
    (void)n;
    (void)recompute;
    (void)cls;
    return 0;
}

/* Seconds one transfer of `bytes` holds link k (today's rule: latency +
 * bytes / bandwidth; the interconnect model's per-message rule when it
 * lands). */
static double link_class(const struct mdl_topology *t, int k, double bytes)
{
    return t->links[k].latency + bytes / t->links[k].bandwidth;
}

static double send_s(const struct mdl_topology *t, int a, int b, double bytes, int times)
{
    int k = mdl_topology_link_between(t, a, b);
    return k < 0 ? 0 : times * link_class(t, k, bytes);
}

int stu_breakdown_new(const struct ana_prediction *p, const struct mdl_profile *prof,
                      const struct mdl_topology *t, struct stu_breakdown **out)
{
    *out = NULL;
    struct stu_breakdown *b = calloc(1, sizeof *b);
    if (!b || !(b->st = calloc((size_t)p->n_stages, sizeof *b->st))) {
        free(b);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    b->step_s = p->step_s;
    b->n_stages = p->n_stages;
    b->have_classes = 1;
    double mb = p->micro_batch;
    for (int s = 0; s < p->n_stages; s++) {
        const struct ana_stage *as = &p->stages[s];
        struct stu_bd_stage *w = &b->st[s];
        const struct mdl_device *d = &t->devices[as->device];
        w->stage = s;
        w->device = as->device;
        w->first_layer = as->first_layer;
        w->n_layers = as->n_layers;
        w->compute_s = as->busy_frac * p->step_s;
        double params = 0;
        for (int l = as->first_layer; l < as->first_layer + as->n_layers; l++)
            params += prof->layers[l].params;
        w->update_s = d->mem_bandwidth > 0
                          ? 2 * params * t->bytes_per_param / d->mem_bandwidth : 0;
        int last = as->first_layer + as->n_layers - 1;
        if (s + 1 < p->n_stages)
            w->transfer_s += send_s(t, as->device, p->stages[s + 1].device,
                                    prof->layers[last].out_bytes * mb, p->M);
        if (s > 0 && as->first_layer > 0)
            w->transfer_s += send_s(t, as->device, p->stages[s - 1].device,
                                    prof->layers[as->first_layer - 1].out_bytes * mb, p->M);
        w->idle_s = p->step_s - w->compute_s - w->update_s;
        if (w->idle_s < 0)
            w->idle_s = 0;
        /* The op classes: each layer's F, B and (re-materialized) R, M times. */
        double cls[STU_BD_NCLASS] = { 0 };
        int recompute = p->remat != SCH_REMAT_NEVER;
        for (int l = as->first_layer; l < as->first_layer + as->n_layers && b->have_classes; l++) {
            double c[STU_BD_NCLASS] = { 0 };
            if (!layer_classes(d, &prof->layers[l], mb, recompute, c))
                b->have_classes = 0;
            for (int k = 0; k < STU_BD_LINK; k++)
                cls[k] += p->M * c[k];
        }
        cls[STU_BD_LINK] = w->transfer_s;
        for (int k = 0; k < STU_BD_NCLASS; k++)
            w->cls[k] = cls[k];
    }
    if (!b->have_classes)
        for (int s = 0; s < b->n_stages; s++)
            for (int k = 0; k < STU_BD_NCLASS; k++)
                b->st[s].cls[k] = NAN;
    *out = b;
    return 0;
}

void stu_breakdown_free(struct stu_breakdown *b)
{
    if (!b)
        return;
    free(b->st);
    free(b);
}

int stu_breakdown_busiest(const struct stu_breakdown *b)
{
    int best = 0;
    for (int s = 1; s < b->n_stages; s++)
        if (b->st[s].compute_s + b->st[s].update_s >
            b->st[best].compute_s + b->st[best].update_s)
            best = s;
    return best;
}

void stu_breakdown_print(const struct stu_breakdown *b, const char *indent, FILE *f)
{
    double step = b->step_s > 0 ? b->step_s : 1;
    for (int s = 0; s < b->n_stages; s++) {
        const struct stu_bd_stage *w = &b->st[s];
        fprintf(f, "%sstage %d (layers %d-%d): compute %.2f ms (%.0f%%), update %.2f ms, "
                   "transfer %.2f ms (%.0f%%), idle/bubble %.2f ms (%.0f%%)", indent, s,
                w->first_layer, w->first_layer + w->n_layers - 1, w->compute_s * 1e3,
                100 * w->compute_s / step, w->update_s * 1e3, w->transfer_s * 1e3,
                100 * w->transfer_s / step, w->idle_s * 1e3, 100 * w->idle_s / step);
        if (b->have_classes) {
            fputs(";", f);
            for (int k = 0; k < STU_BD_NCLASS; k++)
                fprintf(f, " %s %.2f ms", stu_bd_class_name[k], w->cls[k] * 1e3);
        }
        fputc('\n', f);
    }
    if (!b->have_classes)
        fprintf(f, "%s(op classes matrix/vector/memory/overhead/link: not given by today's "
                   "device model; stu_breakdown.c layer_classes is the hook)\n", indent);
}
