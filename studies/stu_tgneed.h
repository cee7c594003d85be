/*
 * stu_tgneed — what one hardware figure alone would have to be for a
 * torchgpipe speed row's prediction to equal its measurement: per knob of
 * analysis/ana_sens.h, the factor on that figure of every P40 (or link)
 * and the row's elasticity to it at the preset (samples/s per 1 % more).
 *
 * A diagnostic that sizes the facts the source does not give (each
 * deviation's note names them): a factor far outside what the hardware
 * could be rules that figure out as the explanation on its own; one in
 * range says how far the preset's cited figure would have to be off.
 * Never applied to a prediction, and nothing is fitted with it.
 *
 * struct stu_tg_need is in stu_torchgpipe.h (a cell holds one).
 * Ownership: plain values. Cost: per knob one elasticity (2 row
 * predictions) and one solve (2 to 26), each row prediction one or two
 * simulations (stu_tg_row_samples).
 */
#ifndef STU_TGNEED_H
#define STU_TGNEED_H

#include "analysis/ana_sens.h"
#include "studies/stu_torchgpipe.h"

/* Row i of r (predicted by stu_tg_predict). */
int stu_tg_need(const struct stu_tg_run *r, int i, struct stu_tg_need *out);
/* The sustained fraction of its figure that knob k's factor x1 stands for
 * on device d: the matrix peak's gemm.efficiency, the datasheet
 * bandwidth's mem_efficiency (op-level devices); 0 for the others. */
double stu_tg_need_frac(const struct mdl_device *d, int k);
/* Knob k of nd as "x0.704=0.50 [+0.48]": the factor, "=" the fraction it
 * implies where stu_tg_need_frac gives one, the elasticity in brackets;
 * "none [+0.00]" without a factor. Into buf of n bytes. */
void stu_tg_need_cell(const struct mdl_device *d, const struct stu_tg_need *nd, int k, char *buf,
                      size_t n);

#endif
