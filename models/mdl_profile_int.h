/*
 * mdl_profile_int — the work-by-op-class columns of a profile
 * (models/mdl_profile.h), shared by the loader and the writer.
 * Cost: O(fields) per row, O(gemms) per gemms field.
 */
#ifndef MDL_PROFILE_INT_H
#define MDL_PROFILE_INT_H

#include "models/mdl_profile.h"

enum wcol { W_WGRAD_FLOPS, W_WGRAD_MS, W_GEMMS, W_MM_FWD, W_MM_DGRAD, W_MM_WGRAD, W_VEC_FWD,
            W_VEC_BWD, W_BYTES_FWD, W_BYTES_BWD, W_K_FWD, W_K_BWD, W_K_WGRAD, W_N };
extern const char *const mdl_work_cols[W_N];

/* At most this many products in one gemms field. */
#define MDL_MAX_GEMMS 64

/* Index of a work column name, or -1. */
int mdl_work_column(const char *name);
/* A numeric field s at path:line:col, finite and >= 0, one message for every
 * column (helper-137: the work columns said "out of range" where the others
 * said "must be finite"). In mdl_profile_row.c. */
int mdl_profile_num(const char *path, int line, int col, const char *field, const char *s,
                    double *out);
/* Header checks: wgrad_flops needs fwd_flops, wgrad_ms needs fwd_ms. */
int mdl_work_header(const char *path, int line, int measured, const int *widx);
/* Reads a row's work columns into l (has_wgrad, wgrad) and *w (with room
 * for MDL_MAX_GEMMS products at w->gemms); l->work = w when any is given,
 * else NULL. l->fwd/bwd already read (seconds for measured profiles). */
int mdl_work_row(const char *path, int line, char **f, const int *colno, const int *widx,
                 int measured, struct mdl_layer *l, struct mdl_work *w);
/* mm_* FLOPs per sample from gemms (2 per multiply-add). */
void mdl_work_from_gemms(const struct mdl_gemm *g, int n, double *fwd, double *dgrad,
                         double *wgrad);

#endif
