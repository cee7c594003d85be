/*
 * mdl_profile_int — the work-by-op-class columns of a profile
 * (models/mdl_profile.h), shared by the loader and the writer; and the
 * loader's columns, header and row parsing, shared by its two files.
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

/* ---- the loader's columns and rows (mdl_profile.c reads the file,
 * mdl_profile_row.c parses its header and rows) ---------------------- */

enum col { C_NAME, C_KIND, C_FWD_FLOPS, C_FWD_MS, C_BWD_FLOPS, C_BWD_MS, C_AT_BATCH,
           C_PARAMS, C_OUT, C_STASH, C_NOSTASH, C_FWD_FIXED, C_BWD_FIXED, C_NOSTASH_FIXED,
           C_RECOMP, C_BWD_REMAT, C_N };

/* Point columns of a calibrated profile: fwd_ms@N, bwd_ms@N, fwd_nostash_ms@N,
 * wgrad_ms@N, recomp_ms@N, bwd_remat_ms@N. */
enum { P_FWD, P_BWD, P_NOSTASH, P_WGRAD, P_RECOMP, P_BWD_REMAT, P_N };

struct header {
    int idx[C_N];
    int n_pts;
    double pt_batch[MDL_MAX_POINTS];
    int pt_idx[MDL_MAX_POINTS][P_N];   /* -1 = column absent */
    int widx[W_N];                     /* work columns (mdl_profile_int.h), -1 = absent */
};

/* every column a writer can emit (the named ones, the work columns and six
 * per measured size: under 200), with room to spare */
#define MAX_FIELDS 256
_Static_assert(C_N + W_N + 6 * MDL_MAX_POINTS <= MAX_FIELDS, "a written profile loads back");

/* Room for one row's measured points until mdl_profile_add copies them. */
struct row_pts {
    double batch[MDL_MAX_POINTS], fwd[MDL_MAX_POINTS], bwd[MDL_MAX_POINTS],
        nostash[MDL_MAX_POINTS], wgrad[MDL_MAX_POINTS], recomp[MDL_MAX_POINTS],
        bwd_remat[MDL_MAX_POINTS];
    int wcol[MDL_MAX_POINTS];           /* column of wgrad_ms@N (0: none) */
    double w_at_ref;                    /* wgrad_ms@at_batch, -1 if not given */
    int rcol[2][MDL_MAX_POINTS];        /* columns of recomp_ms@N, bwd_remat_ms@N */
    double r_at_ref[2];                 /* their values at at_batch, -1 if not given */
    struct mdl_work work;               /* and its work by op class */
    struct mdl_gemm gemms[MDL_MAX_GEMMS];
};

/* The header line's fields f[0..n) (columns colno) into *h. */
int mdl_profile_header(const char *path, int line, char **f, int *colno, int n,
                       struct header *h);
/* One data row into *l (its points in *pts until mdl_profile_add copies
 * them); n fields against the header's ncols. */
int mdl_profile_row(struct mdl_profile *p, const char *path, int line, char **f, int *colno,
                    int n, int ncols, const struct header *h, struct mdl_layer *l,
                    struct row_pts *pts);

#endif
