/*
 * mdl_profile_row — private to the profile loader's two files: the columns
 * a header may name, the header read into struct header, one row into a
 * layer (mdl_profile.c reads the file and keeps the layers,
 * mdl_profile_row.c parses the header and the rows).
 * Ownership: a row's measured points live in the caller's struct row_pts
 * until mdl_profile_add copies them; nothing is allocated here.
 * Cost: O(fields) per row.
 */
#ifndef MDL_PROFILE_ROW_H
#define MDL_PROFILE_ROW_H

#include "models/mdl_profile_int.h"

enum col { C_NAME, C_KIND, C_FWD_FLOPS, C_FWD_MS, C_BWD_FLOPS, C_BWD_MS, C_AT_BATCH,
           C_PARAMS, C_OUT, C_STASH, C_NOSTASH, C_FWD_FIXED, C_BWD_FIXED, C_NOSTASH_FIXED,
           C_RECOMP, C_BWD_REMAT, C_SHARED, C_CARRY, C_N };

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
