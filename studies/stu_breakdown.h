/*
 * stu_breakdown — where a predicted step's time goes, stage by stage: what
 * a reproduction prints beside a figure that misses (bench/bench_repro.c,
 * the torchgpipe study's detail table).
 *
 * Two views of each stage:
 *  - the engine's, always there: compute (the F, B, R, W the engine ran:
 *    busy fraction x step), the optimizer update, transfer (the stage's
 *    own sends, M activations forward and M gradients back, each
 *    latency + bytes / bandwidth on its link) and idle (the step minus
 *    compute and update: the bubble and every wait);
 *  - the device model's split of compute and transfer by op class (matrix,
 *    vector, memory, overhead, link), asked of the models layer by layer
 *    through one hook (stu_breakdown.c, layer_classes). Until a model
 *    answers, have_classes is 0 and cls[] is NAN; nothing else changes.
 *
 * Ownership: stu_breakdown_new allocates *out (stu_breakdown_free, NULL
 * ok); the prediction, profile and topology are borrowed for the call.
 * Cost: O(layers + stages).
 */
#ifndef STU_BREAKDOWN_H
#define STU_BREAKDOWN_H

#include <stdio.h>

#include "analysis/ana_predict.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"

enum { STU_BD_MATRIX, STU_BD_VECTOR, STU_BD_MEMORY, STU_BD_OVERHEAD, STU_BD_LINK,
       STU_BD_NCLASS };
extern const char *const stu_bd_class_name[STU_BD_NCLASS];

struct stu_bd_stage {
    int stage, device, first_layer, n_layers;
    double compute_s, update_s, transfer_s, idle_s; /* per step */
    double cls[STU_BD_NCLASS];                      /* per step; NAN without a model */
};

struct stu_breakdown {
    double step_s;
    int n_stages, have_classes;
    struct stu_bd_stage *st;                        /* [n_stages] */
};

int stu_breakdown_new(const struct ana_prediction *p, const struct mdl_profile *prof,
                      const struct mdl_topology *t, struct stu_breakdown **out);
void stu_breakdown_free(struct stu_breakdown *b);
/* The stage whose compute + update is the largest (the bottleneck). */
int stu_breakdown_busiest(const struct stu_breakdown *b);
/* One line per stage, each prefixed by `indent`: ms and share of the step
 * of each part, and the op classes when the model gave them. */
void stu_breakdown_print(const struct stu_breakdown *b, const char *indent, FILE *f);

#endif
