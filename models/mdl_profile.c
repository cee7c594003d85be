#include "models/mdl_profile.h"
#include "models/mdl_profile_int.h"
#include "models/mdl_profile_row.h"
#include "base/ps_csv.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>



struct mdl_profile *mdl_profile_new(const char *origin, int measured)
{
    struct mdl_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->path = strdup(origin ? origin : "<generated>");
    if (!p->path) {
        free(p);
        return NULL;
    }
    p->measured = measured;
    return p;
}

void mdl_profile_free(struct mdl_profile *p)
{
    if (!p)
        return;
    free(p->path);
    for (int i = 0; i < p->n_layers; i++) {
        free(p->layers[i].pt_batch);
        if (p->layers[i].work)
            free(p->layers[i].work->gemms);
        free(p->layers[i].work);
    }
    free(p->layers);
    free(p);
}

int mdl_profile_add(struct mdl_profile *p, const struct mdl_layer *l)
{
    if (!(l->stash_shared_bytes >= 0 && l->stash_shared_bytes <= l->stash_bytes) ||
        (p->n_layers == 0 && l->stash_shared_bytes > 0))
        return ps_error(PS_EINVAL, "layer '%s': stash_shared_bytes %g outside [0, %g] (0 on "
                         "the first layer)", l->name, l->stash_shared_bytes,
                         p->n_layers == 0 ? 0 : l->stash_bytes);
    if (!(l->carry_bytes >= 0 && l->carry_bytes <= l->out_bytes))
        return ps_error(PS_EINVAL, "layer '%s': carry_bytes %g outside [0, out_bytes = %g]",
                         l->name, l->carry_bytes, l->out_bytes);
    if ((p->n_layers & (p->n_layers - 1)) == 0) { /* grow at powers of two */
        size_t cap = p->n_layers ? (size_t)p->n_layers * 2 : 8;
        struct mdl_layer *nl = realloc(p->layers, cap * sizeof *nl);
        if (!nl)
            return ps_error(PS_ENOMEM, "out of memory adding layer %d", p->n_layers);
        p->layers = nl;
    }
    struct mdl_layer *d = &p->layers[p->n_layers];
    *d = *l;
    d->pt_batch = d->pt_fwd = d->pt_bwd = d->pt_nostash = d->pt_wgrad = NULL;
    d->pt_recomp = d->pt_bwd_remat = NULL;
    d->work = NULL;
    if (l->work) {
        struct mdl_work *w = malloc(sizeof *w);
        struct mdl_gemm *g = NULL;
        if (w && l->work->n_gemms > 0 &&
            !(g = malloc(sizeof *g * (size_t)l->work->n_gemms))) {
            free(w);
            w = NULL;
        }
        if (!w)
            return ps_error(PS_ENOMEM, "out of memory adding layer %d", p->n_layers);
        *w = *l->work;
        if (g)
            memcpy(g, l->work->gemms, sizeof *g * (size_t)l->work->n_gemms);
        w->gemms = g;
        d->work = w;
    }
    if (l->n_pts > 0) {
        size_t n = (size_t)l->n_pts;
        double *b = malloc(7 * n * sizeof *b);
        if (!b) {
            if (d->work)
                free(d->work->gemms);
            free(d->work);
            return ps_error(PS_ENOMEM, "out of memory adding layer %d", p->n_layers);
        }
        memcpy(b, l->pt_batch, n * sizeof *b);
        memcpy(b + n, l->pt_fwd, n * sizeof *b);
        memcpy(b + 2 * n, l->pt_bwd, n * sizeof *b);
        memcpy(b + 3 * n, l->pt_nostash, n * sizeof *b);
        for (size_t i = 0; i < n; i++) { /* a layer without those points: none */
            b[4 * n + i] = l->pt_wgrad ? l->pt_wgrad[i] : -1;
            b[5 * n + i] = l->pt_recomp ? l->pt_recomp[i] : -1;
            b[6 * n + i] = l->pt_bwd_remat ? l->pt_bwd_remat[i] : -1;
        }
        d->pt_batch = b;
        d->pt_fwd = b + n;
        d->pt_bwd = b + 2 * n;
        d->pt_nostash = b + 3 * n;
        d->pt_wgrad = b + 4 * n;
        d->pt_recomp = b + 5 * n;
        d->pt_bwd_remat = b + 6 * n;
    }
    p->n_layers++;
    return 0;
}

double mdl_profile_params(const struct mdl_profile *p)
{
    double s = 0;
    for (int i = 0; i < p->n_layers; i++)
        s += p->layers[i].params;
    return s;
}

/* Where each layer's name is in the file, for the duplicate check. */
struct name_pos {
    uint64_t hash; /* of the name */
    int line, col;
};

/* A layer's index and a hash of its name. */
struct name_ix {
    uint64_t hash;
    const char *name;
    int layer;
};

static int by_hash(const void *a, const void *b)
{
    const struct name_ix *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->layer > y->layer) - (x->layer < y->layer);
}

static int by_name(const void *a, const void *b)
{
    const struct name_ix *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->layer > y->layer) - (x->layer < y->layer);
}

/* Layer names are unique: O(n log n) in the worst case, through an index
 * sorted by name hash and then, within a run of equal hashes, by name (a
 * million layers compared pairwise took most of an hour). A repeated name is
 * reported at its first repetition in file order, as a scan would find it. */
static int check_names(const char *path, const struct mdl_profile *p,
                       const struct name_pos *pos)
{
    int n = p->n_layers;
    struct name_ix *ix = malloc(sizeof *ix * (size_t)(n ? n : 1));
    if (!ix)
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    for (int i = 0; i < n; i++)
        ix[i] = (struct name_ix){ pos[i].hash, p->layers[i].name, i };
    qsort(ix, (size_t)n, sizeof *ix, by_hash);
    int first = -1;
    for (int i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && ix[j].hash == ix[i].hash; j++)
            ;
        if (j - i < 2)
            continue;
        qsort(ix + i, (size_t)(j - i), sizeof *ix, by_name);
        for (int k = i + 1; k < j; k++) /* ix[k] repeats ix[k-1]: a repetition */
            if (!strcmp(ix[k].name, ix[k - 1].name) && (first < 0 || ix[k].layer < first))
                first = ix[k].layer;
    }
    free(ix);
    if (first >= 0)
        return ps_error(PS_EINVAL, "%s:%d:%d: duplicate layer name '%s'", path,
                         pos[first].line, pos[first].col, p->layers[first].name);
    return 0;
}

/* Records where layer i's name is, growing at powers of two as the layers do. */
static int add_pos(const char *path, struct name_pos **pos, int i, const char *name, int line,
                   int col)
{
    if ((i & (i - 1)) == 0) {
        size_t cap = i ? (size_t)i * 2 : 8;
        struct name_pos *np = realloc(*pos, cap * sizeof *np);
        if (!np)
            return ps_error(PS_ENOMEM, "%s: out of memory adding layer %d", path, i);
        *pos = np;
    }
    (*pos)[i] = (struct name_pos){ ps_fnv1a(name, strlen(name), PS_FNV_INIT), line, col };
    return 0;
}

/* Parses buf[0..len) (NUL-terminated at len; modified in place, freed). */
static int parse_owned(char *buf, size_t len, const char *path, struct mdl_profile **out)
{
    int rc;
    struct name_pos *pos = NULL;
    struct mdl_profile *p = mdl_profile_new(path, 0);
    if (!p) {
        rc = ps_error(PS_ENOMEM, "%s: out of memory", path);
        goto err_free_buf;
    }
    int nul_line, nul_col; /* named where it is (helper-137: no line or column) */
    if (ps_nul_at(buf, len, &nul_line, &nul_col)) {
        rc = ps_error(PS_EPARSE, "%s:%d:%d: binary data (NUL byte) in a CSV file", path,
                      nul_line, nul_col);
        goto err_free_profile;
    }
    char *f[MAX_FIELDS];
    int colno[MAX_FIELDS], ncols = 0, line = 0;
    struct header h;
    struct row_pts pts;
    char *s = buf + ps_bom_len(buf, len);
    while (s && *s) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = 0;
        line++;
        char *start = s, *t = s;
        s = nl ? nl + 1 : NULL;
        while (*t == ' ' || *t == '\t')
            t++;
        if (!*t || *t == '#' || !strcmp(t, "\r"))
            continue;
        int n = ps_csv_split(start, f, colno, MAX_FIELDS); /* columns from the line's start */
        if (n < 0) {
            rc = ps_error(PS_EPARSE, "%s:%d: more than %d fields", path, line, MAX_FIELDS);
            goto err_free_profile;
        }
        if (!ncols) {
            if ((rc = mdl_profile_header(path, line, f, colno, n, &h)) < 0)
                goto err_free_profile;
            ncols = n;
            p->measured = h.idx[C_FWD_MS] >= 0;
            continue;
        }
        struct mdl_layer l;
        if ((rc = mdl_profile_row(p, path, line, f, colno, n, ncols, &h, &l, &pts)) < 0 ||
            (rc = add_pos(path, &pos, p->n_layers, l.name, line, colno[h.idx[C_NAME]])) < 0 ||
            (rc = mdl_profile_add(p, &l)) < 0)
            goto err_free_profile;
    }
    if (!ncols) {
        rc = ps_error(PS_EPARSE, "%s: empty profile (no header)", path);
        goto err_free_profile;
    }
    if (!p->n_layers) {
        rc = ps_error(PS_EPARSE, "%s: profile has a header but no layers", path);
        goto err_free_profile;
    }
    if ((rc = check_names(path, p, pos)) < 0)
        goto err_free_profile;
    free(pos);
    free(buf);
    *out = p;
    return 0;

err_free_profile:
    free(pos);
    mdl_profile_free(p);
err_free_buf:
    free(buf);
    return rc;
}

int mdl_profile_load(const char *path, struct mdl_profile **out)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = ps_read_file(path, &buf, &len);
    if (rc < 0)
        return rc;
    return parse_owned(buf, len, path, out);
}

int mdl_profile_parse(const char *text, size_t len, const char *name,
                      struct mdl_profile **out)
{
    *out = NULL;
    char *buf = malloc(len + 1);
    if (!buf)
        return ps_error(PS_ENOMEM, "%s: out of memory", name);
    memcpy(buf, text, len);
    buf[len] = 0;
    return parse_owned(buf, len, name, out);
}
