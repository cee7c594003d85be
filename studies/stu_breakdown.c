/* The per-stage split of a predicted step (stu_breakdown.h). */
#include "studies/stu_breakdown.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>

const char *const stu_bd_class_name[STU_BD_NCLASS] = { "matrix", "vector", "memory",
                                                       "overhead", "link" };

/* Seconds of layer l's forward (twice with a re-computation), backward
 * and weight gradient on n samples on device d, split by op class
 * (mdl_device_work_split: matrix and vector kernels bound by their math,
 * kernels bound by memory, per-kernel overhead) into cls[0..STU_BD_LINK);
 * 1 when the models can say, 0 when the layer states no work or the device
 * keeps the legacy rule. */
static int layer_classes(const struct mdl_device *d, const struct mdl_layer *l, double n,
                         int recompute, double cls[STU_BD_NCLASS])
{
    if (!l->work || !d->model.on)
        return 0; /* the legacy rule has no classes */
    double c[MDL_SPLIT_N] = { 0 };
    mdl_device_work_split(d, l->work, n, recompute ? 2 : 1, c);
    cls[STU_BD_MATRIX] += c[MDL_SPLIT_MATRIX];
    cls[STU_BD_VECTOR] += c[MDL_SPLIT_VECTOR];
    cls[STU_BD_MEMORY] += c[MDL_SPLIT_MEMORY];
    cls[STU_BD_OVERHEAD] += c[MDL_SPLIT_OVERHEAD];
    return 1;
}

/* Seconds from a send's start to its delivery over the route a -> b when
 * nothing else holds it (models/mdl_topology.h: bytes over the route's
 * least bandwidth, then the hops' latency and overhead), times `times`. */
static double send_s(const struct mdl_topology *t, int a, int b, double bytes, int times)
{
    struct mdl_route r;
    if (mdl_topology_route(t, a, b, &r) < 0 || !(r.bandwidth > 0))
        return 0;
    return times * (bytes / r.bandwidth + r.latency);
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
        /* The op classes: each layer's F and B on M micro-batches, and R on
         * those re-materialized (all with always, all but the last with
         * except_last, none with never). */
        double cls[STU_BD_NCLASS] = { 0 };
        int n_rec = p->remat == SCH_REMAT_NEVER    ? 0
                    : p->remat == SCH_REMAT_ALWAYS ? p->M
                                                   : p->M - 1;
        for (int l = as->first_layer; l < as->first_layer + as->n_layers && b->have_classes; l++) {
            double c1[STU_BD_NCLASS] = { 0 }, c2[STU_BD_NCLASS] = { 0 };
            if (!layer_classes(d, &prof->layers[l], mb, 0, c1) ||
                !layer_classes(d, &prof->layers[l], mb, 1, c2))
                b->have_classes = 0;
            for (int k = 0; k < STU_BD_LINK; k++)
                cls[k] += (p->M - n_rec) * c1[k] + n_rec * c2[k];
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
        fprintf(f, "%s(op classes matrix/vector/memory/overhead: not given; the layers or "
                   "the device lack the op-level model)\n", indent);
}
