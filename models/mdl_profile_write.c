/* mdl_profile_write: a profile back to CSV (models/mdl_profile.h), the
 * calibrated columns included, so that what the loader accepts loads back. */
#include "models/mdl_profile.h"
#include "models/mdl_profile_int.h"
#include "models/mdl_topology.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdio.h>
#include <stdlib.h>

static void put_ms(FILE *f, int have, double seconds)
{
    if (have)
        fprintf(f, ",%s", PS_MS(seconds));
    else
        fputs(",", f);
}

/* The calibrated columns of a measured profile: which are present, and the
 * union of the layers' measured batch sizes. */
static int ext_columns(const struct mdl_profile *p, int *nostash, int *fixed, double *sizes)
{
    int n = 0;
    *nostash = *fixed = 0;
    for (int i = 0; i < p->n_layers; i++) {
        const struct mdl_layer *l = &p->layers[i];
        *nostash |= l->has_nostash;
        *fixed |= l->has_fixed;
        for (int k = 0; k < l->n_pts; k++) {
            int j = 0;
            while (j < n && sizes[j] != l->pt_batch[k])
                j++;
            if (j == n && n < MDL_MAX_POINTS)
                sizes[n++] = l->pt_batch[k];
        }
    }
    for (int i = 1; i < n; i++) /* sort */
        for (int j = i; j > 0 && sizes[j - 1] > sizes[j]; j--) {
            double t = sizes[j];
            sizes[j] = sizes[j - 1];
            sizes[j - 1] = t;
        }
    return n;
}

/* Which of recomp_ms and bwd_remat_ms some layer gives (bits 1, 2). */
static int remat_columns(const struct mdl_profile *p)
{
    int r = 0;
    for (int i = 0; i < p->n_layers; i++)
        r |= p->layers[i].has_recomp | p->layers[i].has_bwd_remat << 1;
    return r;
}

/* A layer's value of recomp_ms (r = 0) or bwd_remat_ms (1) at its k-th
 * measured size (k < 0: at at_batch); empty where the layer has none. A
 * size the layer was given without its point (a file without that @N
 * column) gets the point the ratio rule puts there, so that the file loads
 * back (every size of a layer with the value has its point) unchanged. */
static void put_remat(FILE *f, const struct mdl_layer *l, int r, int k)
{
    int has = r ? l->has_bwd_remat : l->has_recomp;
    const double *pt = r ? l->pt_bwd_remat : l->pt_recomp;
    if (k < 0) {
        put_ms(f, has, r ? l->bwd_remat : l->recomp);
        return;
    }
    double v = pt && pt[k] >= 0 ? pt[k]
               : (r ? l->pt_bwd[k] : l->pt_fwd[k]) *
                     mdl_layer_remat_ratio(l, r ? MDL_OP_BWD_REMAT : MDL_OP_RECOMP,
                                           l->pt_batch[k]);
    put_ms(f, has, v);
}

static void write_ext(FILE *f, const struct mdl_layer *l, int nostash, int fixed, int wpts,
                      int remat, const double *sizes, int n_sizes)
{
    if (nostash)
        put_ms(f, 1, l->has_nostash ? l->fwd_nostash : l->fwd);
    if (fixed) {
        put_ms(f, l->has_fixed, l->fwd_fixed);
        put_ms(f, l->has_fixed, l->bwd_fixed);
        if (nostash)
            put_ms(f, l->has_fixed, l->has_nostash ? l->nostash_fixed : l->fwd_fixed);
    }
    for (int r = 0; r < 2; r++)
        if (remat >> r & 1)
            put_remat(f, l, r, -1);
    for (int s = 0; s < n_sizes; s++) {
        int k = 0;
        while (k < l->n_pts && l->pt_batch[k] != sizes[s])
            k++;
        int have = k < l->n_pts;
        put_ms(f, have, have ? l->pt_fwd[k] : 0);
        put_ms(f, have, have ? l->pt_bwd[k] : 0);
        if (nostash)
            put_ms(f, have, have ? (l->has_nostash ? l->pt_nostash[k] : l->pt_fwd[k]) : 0);
        if (wpts) /* a layer with W but without its point here: its share at at_batch */
            put_ms(f, have && l->has_wgrad,
                   !have || !l->has_wgrad ? 0
                   : l->pt_wgrad && l->pt_wgrad[k] >= 0 ? l->pt_wgrad[k]
                   : l->bwd > 0 ? l->pt_bwd[k] * l->wgrad / l->bwd : 0);
        for (int r = 0; r < 2; r++)
            if (remat >> r & 1) {
                if (have)
                    put_remat(f, l, r, k);
                else
                    fputs(",", f);
            }
    }
}

/* The work columns: which of wgrad_* and the op-class columns to write. */
static void work_columns(const struct mdl_profile *p, int *wgrad, int *work)
{
    *wgrad = *work = 0;
    for (int i = 0; i < p->n_layers; i++) {
        *wgrad |= p->layers[i].has_wgrad;
        *work |= p->layers[i].work != NULL;
    }
}

static void work_header(FILE *f, int measured, int wgrad, int work)
{
    if (wgrad)
        fprintf(f, ",%s", measured ? "wgrad_ms" : "wgrad_flops");
    for (int c = W_GEMMS; work && c < W_N; c++)
        fprintf(f, ",%s", mdl_work_cols[c]);
}

static void write_work(FILE *f, const struct mdl_layer *l, int measured, int wgrad, int work)
{
    if (wgrad) {
        if (l->has_wgrad)
            fprintf(f, ",%s", measured ? PS_MS(l->wgrad) : PS_DBL(l->wgrad));
        else
            fputc(',', f);
    }
    if (!work)
        return;
    const struct mdl_work *w = l->work;
    if (!w) {
        for (int c = W_GEMMS; c < W_N; c++)
            fputc(',', f);
        return;
    }
    fputc(',', f);
    for (int i = 0; i < w->n_gemms; i++) {
        const struct mdl_gemm *g = &w->gemms[i];
        fprintf(f, "%s%sx%sx%s", i ? " " : "", PS_DBL(g->rows), PS_DBL(g->k), PS_DBL(g->n));
        if (g->in > 0)
            fprintf(f, "/%s", PS_DBL(g->in));
        if (g->count != 1)
            fprintf(f, "*%s", PS_DBL(g->count));
        if (!g->weight)
            fputc('a', f);
        else if (g->weight == 2)
            fputc('i', f);
        if (g->conv)
            fputs(g->wino ? "cw" : "c", f);
    }
    double v[] = { w->mm_fwd, w->mm_dgrad, w->mm_wgrad, w->vec_fwd, w->vec_bwd,
                   w->bytes_fwd, w->bytes_bwd, w->kernels_fwd, w->kernels_bwd,
                   w->kernels_wgrad };
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
        fprintf(f, ",%s", PS_DBL(v[k]));
}

void mdl_profile_print(FILE *f, const struct mdl_profile *p)
{
    double sizes[MDL_MAX_POINTS];
    int nostash = 0, fixed = 0, n_sizes = p->measured ? ext_columns(p, &nostash, &fixed, sizes)
                                                      : 0;
    int wgrad, work, wpts = 0, remat = p->measured ? remat_columns(p) : 0;
    work_columns(p, &wgrad, &work);
    int shared = 0, carry = 0;
    for (int i = 0; i < p->n_layers; i++) {
        shared |= p->layers[i].stash_shared_bytes > 0;
        carry |= p->layers[i].carry_bytes > 0;
    }
    for (int i = 0; p->measured && i < p->n_layers && !wpts; i++)
        for (int k = 0; k < p->layers[i].n_pts && !wpts; k++)
            wpts = p->layers[i].pt_wgrad && p->layers[i].pt_wgrad[k] >= 0;
    /* the origin may quote a path: a newline in it broke the comment into a
     * line the reader took for the header (helper-126, helper-127) */
    fputs("# pipesim layer profile (", f);
    ps_put_printable(f, p->path, -1);
    fprintf(f, "); %s\n", p->measured ? "times in ms at at_batch samples"
                                       : "FLOPs per sample; bytes per sample");
    if (p->measured) {
        fprintf(f, "name,kind,fwd_ms,bwd_ms,at_batch,params,out_bytes,stash_bytes");
        if (nostash)
            fprintf(f, ",fwd_nostash_ms");
        if (fixed)
            fprintf(f, ",fwd_fixed_ms,bwd_fixed_ms%s", nostash ? ",fwd_nostash_fixed_ms" : "");
        fprintf(f, "%s%s", remat & 1 ? ",recomp_ms" : "", remat & 2 ? ",bwd_remat_ms" : "");
        for (int s = 0; s < n_sizes; s++) {
            fprintf(f, ",fwd_ms@%.0f,bwd_ms@%.0f", sizes[s], sizes[s]);
            if (nostash)
                fprintf(f, ",fwd_nostash_ms@%.0f", sizes[s]);
            if (wpts)
                fprintf(f, ",wgrad_ms@%.0f", sizes[s]);
            if (remat & 1)
                fprintf(f, ",recomp_ms@%.0f", sizes[s]);
            if (remat & 2)
                fprintf(f, ",bwd_remat_ms@%.0f", sizes[s]);
        }
    } else {
        fprintf(f, "name,kind,fwd_flops,bwd_flops,params,out_bytes,stash_bytes");
    }
    if (shared)
        fprintf(f, ",stash_shared_bytes");
    if (carry)
        fprintf(f, ",carry_bytes");
    work_header(f, p->measured, wgrad, work);
    fputc('\n', f);
    for (int i = 0; i < p->n_layers; i++) {
        const struct mdl_layer *l = &p->layers[i];
        if (p->measured) {
            fprintf(f, "%s,%s,%s,%s,%s,%s,%s,%s", l->name, l->kind, PS_MS(l->fwd),
                    PS_MS(l->bwd), PS_DBL(l->at_batch), PS_DBL(l->params),
                    PS_DBL(l->out_bytes), PS_DBL(l->stash_bytes));
            write_ext(f, l, nostash, fixed, wpts, remat, sizes, n_sizes);
        } else {
            fprintf(f, "%s,%s,%s,%s,%s,%s,%s", l->name, l->kind, PS_DBL(l->fwd),
                    PS_DBL(l->bwd), PS_DBL(l->params), PS_DBL(l->out_bytes),
                    PS_DBL(l->stash_bytes));
        }
        if (shared)
            fprintf(f, ",%s", PS_DBL(l->stash_shared_bytes));
        if (carry)
            fprintf(f, ",%s", PS_DBL(l->carry_bytes));
        write_work(f, l, p->measured, wgrad, work);
        fputc('\n', f);
    }
}

int mdl_profile_write(const struct mdl_profile *p, const char *path)
{
    struct ps_afile af;
    int rc = ps_afile_open(&af, path);
    if (rc < 0)
        return rc;
    mdl_profile_print(af.f, p);
    return ps_afile_commit(&af);
}

int mdl_profile_hash(const struct mdl_profile *p, char hex[17])
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = ps_memstream_open(&buf, &len);
    if (!f)
        return ps_error(PS_ENOMEM, "out of memory hashing profile %s", p->path);
    mdl_profile_print(f, p);
    if (ps_memstream_close(f, &buf, &len) < 0)
        return ps_error(PS_ENOMEM, "out of memory hashing profile %s", p->path);
    snprintf(hex, 17, "%016llx", (unsigned long long)ps_fnv1a(buf, len, PS_FNV_INIT));
    free(buf);
    return 0;
}
