#include "models/mdl_profile.h"
#include "sim/sim_error.h"
#include "sim/sim_util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum col { C_NAME, C_KIND, C_FWD_FLOPS, C_FWD_MS, C_BWD_FLOPS, C_BWD_MS, C_AT_BATCH,
           C_PARAMS, C_OUT, C_STASH, C_N };
static const char *col_names[C_N] = {
    "name", "kind", "fwd_flops", "fwd_ms", "bwd_flops", "bwd_ms", "at_batch",
    "params", "out_bytes", "stash_bytes",
};

#define MAX_FIELDS 32

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
    free(p->layers);
    free(p);
}

int mdl_profile_add(struct mdl_profile *p, const struct mdl_layer *l)
{
    if ((p->n_layers & (p->n_layers - 1)) == 0) { /* grow at powers of two */
        size_t cap = p->n_layers ? (size_t)p->n_layers * 2 : 8;
        struct mdl_layer *nl = realloc(p->layers, cap * sizeof *nl);
        if (!nl)
            return sim_error(SIM_ENOMEM, "out of memory adding layer %d", p->n_layers);
        p->layers = nl;
    }
    p->layers[p->n_layers++] = *l;
    return 0;
}

double mdl_profile_params(const struct mdl_profile *p)
{
    double s = 0;
    for (int i = 0; i < p->n_layers; i++)
        s += p->layers[i].params;
    return s;
}

/* Splits line in place at commas; records each field's 1-based column. */
static int split(char *line, char **f, int *colno)
{
    int n = 0;
    char *s = line;
    for (;;) {
        if (n == MAX_FIELDS)
            return -1;
        colno[n] = (int)(s - line) + 1;
        f[n++] = s;
        char *c = strchr(s, ',');
        if (!c)
            break;
        *c = 0;
        s = c + 1;
    }
    for (int i = 0; i < n; i++) { /* trim */
        while (*f[i] == ' ' || *f[i] == '\t')
            f[i]++, colno[i]++;
        char *e = f[i] + strlen(f[i]);
        while (e > f[i] && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            *--e = 0;
    }
    return n;
}

static int num(const char *path, int line, int col, const char *field,
               const char *s, double *out)
{
    char *end;
    if (!*s)
        return sim_error(SIM_EPARSE, "%s:%d:%d: field '%s' is empty", path, line, col, field);
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno == ERANGE)
        return sim_error(SIM_EPARSE, "%s:%d:%d: field '%s': '%s' is not a number",
                         path, line, col, field, s);
    if (!isfinite(v))
        return sim_error(SIM_EINVAL, "%s:%d:%d: field '%s' must be finite, got '%s'",
                         path, line, col, field, s);
    if (v < 0)
        return sim_error(SIM_EINVAL, "%s:%d:%d: field '%s' must be >= 0, got %s",
                         path, line, col, field, s);
    *out = v;
    return 0;
}

static int parse_header(const char *path, int line, char **f, int *colno, int n,
                        int *idx)
{
    for (int c = 0; c < C_N; c++)
        idx[c] = -1;
    for (int i = 0; i < n; i++) {
        int c;
        for (c = 0; c < C_N; c++)
            if (!strcmp(f[i], col_names[c]))
                break;
        if (c == C_N)
            return sim_error(SIM_EPARSE, "%s:%d:%d: unknown column '%s'", path, line,
                             colno[i], f[i]);
        if (idx[c] >= 0)
            return sim_error(SIM_EPARSE, "%s:%d:%d: duplicate column '%s'", path, line,
                             colno[i], f[i]);
        idx[c] = i;
    }
    static const int required[] = { C_NAME, C_PARAMS, C_OUT, C_STASH };
    for (size_t r = 0; r < sizeof required / sizeof *required; r++)
        if (idx[required[r]] < 0)
            return sim_error(SIM_EPARSE, "%s:%d: missing column '%s'", path, line,
                             col_names[required[r]]);
    int flops = idx[C_FWD_FLOPS] >= 0, ms = idx[C_FWD_MS] >= 0;
    if (flops == ms)
        return sim_error(SIM_EPARSE, "%s:%d: need exactly one of columns 'fwd_flops' or "
                         "'fwd_ms'", path, line);
    if (flops && (idx[C_BWD_MS] >= 0 || idx[C_AT_BATCH] >= 0))
        return sim_error(SIM_EPARSE, "%s:%d: columns 'bwd_ms'/'at_batch' need 'fwd_ms', "
                         "not 'fwd_flops'", path, line);
    if (ms && idx[C_BWD_FLOPS] >= 0)
        return sim_error(SIM_EPARSE, "%s:%d: column 'bwd_flops' needs 'fwd_flops'", path, line);
    if (ms && idx[C_AT_BATCH] < 0)
        return sim_error(SIM_EPARSE, "%s:%d: measured times (fwd_ms) need column 'at_batch'",
                         path, line);
    return 0;
}

static int parse_row(struct mdl_profile *p, const char *path, int line, char **f,
                     int *colno, int n, int ncols, const int *idx, struct mdl_layer *l)
{
    if (n != ncols)
        return sim_error(SIM_EPARSE, "%s:%d: expected %d fields, found %d", path, line,
                         ncols, n);
    memset(l, 0, sizeof *l);
    for (int i = 0; i < n; i++)
        if (strchr(f[i], '"'))
            return sim_error(SIM_EPARSE, "%s:%d:%d: quoted fields are not supported", path,
                             line, colno[i]);
    const char *name = f[idx[C_NAME]];
    if (!*name)
        return sim_error(SIM_EPARSE, "%s:%d:%d: field 'name' is empty", path, line,
                         colno[idx[C_NAME]]);
    if (*name == '#') /* written back in the first column, it would read as a comment */
        return sim_error(SIM_EPARSE, "%s:%d:%d: field 'name' must not start with '#'", path,
                         line, colno[idx[C_NAME]]);
    if (strlen(name) >= MDL_NAME_MAX)
        return sim_error(SIM_EPARSE, "%s:%d:%d: field 'name' longer than %d characters",
                         path, line, colno[idx[C_NAME]], MDL_NAME_MAX - 1);
    strcpy(l->name, name);
    if (idx[C_KIND] >= 0) {
        if (strlen(f[idx[C_KIND]]) >= sizeof l->kind)
            return sim_error(SIM_EPARSE, "%s:%d:%d: field 'kind' too long", path, line,
                             colno[idx[C_KIND]]);
        strcpy(l->kind, f[idx[C_KIND]]);
    }
    int rc;
#define NUM(c, dst)                                                              \
    (rc = num(path, line, colno[idx[c]], col_names[c], f[idx[c]], dst))
    int fc = p->measured ? C_FWD_MS : C_FWD_FLOPS;
    int bc = p->measured ? C_BWD_MS : C_BWD_FLOPS;
    if (NUM(fc, &l->fwd) < 0)
        return rc;
    if (idx[bc] >= 0 && *f[idx[bc]]) {
        if (NUM(bc, &l->bwd) < 0)
            return rc;
    } else {
        l->bwd = 2 * l->fwd;
        if (!isfinite(l->bwd))
            return sim_error(SIM_EINVAL, "%s:%d:%d: field '%s': %s is too large (the default "
                             "backward, 2 x forward, overflows)", path, line, colno[idx[fc]],
                             col_names[fc], f[idx[fc]]);
    }
    if (p->measured) {
        if (NUM(C_AT_BATCH, &l->at_batch) < 0)
            return rc;
        if (l->at_batch <= 0)
            return sim_error(SIM_EINVAL, "%s:%d:%d: field 'at_batch' must be > 0", path,
                             line, colno[idx[C_AT_BATCH]]);
        l->fwd /= 1e3;
        l->bwd /= 1e3;
    }
    if (NUM(C_PARAMS, &l->params) < 0 || NUM(C_OUT, &l->out_bytes) < 0 ||
        NUM(C_STASH, &l->stash_bytes) < 0)
        return rc;
#undef NUM
    for (int i = 0; i < p->n_layers; i++)
        if (!strcmp(p->layers[i].name, l->name))
            return sim_error(SIM_EINVAL, "%s:%d:%d: duplicate layer name '%s'", path, line,
                             colno[idx[C_NAME]], l->name);
    return 0;
}

/* Parses buf[0..len) (NUL-terminated at len; modified in place, freed). */
static int parse_owned(char *buf, size_t len, const char *path, struct mdl_profile **out)
{
    int rc;
    struct mdl_profile *p = mdl_profile_new(path, 0);
    if (!p) {
        rc = sim_error(SIM_ENOMEM, "%s: out of memory", path);
        goto err_free_buf;
    }
    if (memchr(buf, 0, len)) {
        rc = sim_error(SIM_EPARSE, "%s: binary data (NUL byte) in a CSV file", path);
        goto err_free_profile;
    }
    char *f[MAX_FIELDS];
    int colno[MAX_FIELDS], idx[C_N], ncols = 0, line = 0;
    char *s = buf;
    while (s && *s) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = 0;
        line++;
        char *t = s;
        s = nl ? nl + 1 : NULL;
        while (*t == ' ' || *t == '\t')
            t++;
        if (!*t || *t == '#' || !strcmp(t, "\r"))
            continue;
        int n = split(t, f, colno);
        if (n < 0) {
            rc = sim_error(SIM_EPARSE, "%s:%d: more than %d fields", path, line, MAX_FIELDS);
            goto err_free_profile;
        }
        if (!ncols) {
            if ((rc = parse_header(path, line, f, colno, n, idx)) < 0)
                goto err_free_profile;
            ncols = n;
            p->measured = idx[C_FWD_MS] >= 0;
            continue;
        }
        struct mdl_layer l;
        if ((rc = parse_row(p, path, line, f, colno, n, ncols, idx, &l)) < 0 ||
            (rc = mdl_profile_add(p, &l)) < 0)
            goto err_free_profile;
    }
    if (!ncols) {
        rc = sim_error(SIM_EPARSE, "%s: empty profile (no header)", path);
        goto err_free_profile;
    }
    if (!p->n_layers) {
        rc = sim_error(SIM_EPARSE, "%s: profile has a header but no layers", path);
        goto err_free_profile;
    }
    free(buf);
    *out = p;
    return 0;

err_free_profile:
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
    int rc = sim_read_file(path, &buf, &len);
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
        return sim_error(SIM_ENOMEM, "%s: out of memory", name);
    memcpy(buf, text, len);
    buf[len] = 0;
    return parse_owned(buf, len, name, out);
}

int mdl_profile_write(const struct mdl_profile *p, const char *path)
{
    struct sim_afile af;
    int rc = sim_afile_open(&af, path);
    if (rc < 0)
        return rc;
    FILE *f = af.f;
    fprintf(f, "# pipesim layer profile (%s); %s\n", p->path,
            p->measured ? "times in ms at at_batch samples"
                        : "FLOPs per sample; bytes per sample");
    if (p->measured)
        fprintf(f, "name,kind,fwd_ms,bwd_ms,at_batch,params,out_bytes,stash_bytes\n");
    else
        fprintf(f, "name,kind,fwd_flops,bwd_flops,params,out_bytes,stash_bytes\n");
    for (int i = 0; i < p->n_layers; i++) {
        const struct mdl_layer *l = &p->layers[i];
        if (p->measured)
            fprintf(f, "%s,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", l->name, l->kind,
                    l->fwd * 1e3, l->bwd * 1e3, l->at_batch, l->params, l->out_bytes,
                    l->stash_bytes);
        else
            fprintf(f, "%s,%s,%.17g,%.17g,%.17g,%.17g,%.17g\n", l->name, l->kind, l->fwd,
                    l->bwd, l->params, l->out_bytes, l->stash_bytes);
    }
    return sim_afile_commit(&af);
}
