#include "runtime/rt_net.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"
#include "base/ps_memavail.h"
#include "base/ps_util.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item { enum rt_layer_kind kind; int width, relu; };

/* Appends one layer item to a growing array. */
static int push_item(struct item **v, int *n, enum rt_layer_kind kind, int width,
                     int relu, const char *where)
{
    if (*n >= RT_MAX_LAYERS)
        return ps_error(PS_EINVAL, "%s: more than %d layers", where, RT_MAX_LAYERS);
    if ((*n & (*n - 1)) == 0) {
        struct item *nv = realloc(*v, (size_t)(*n ? *n * 2 : 8) * sizeof *nv);
        if (!nv)
            return ps_error(PS_ENOMEM, "out of memory");
        *v = nv;
    }
    (*v)[(*n)++] = (struct item){ kind, width, relu };
    return 0;
}

/* Re-files the last error (a usage error of a strict parse) as PS_EPARSE. */
static int as_parse_error(void)
{
    char msg[PS_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%s", ps_errmsg());
    return ps_error(PS_EPARSE, "%s", msg);
}

/* A width: a usage error in an mlp: spec (a command-line value, as gen's
 * specs), a parse error in a file: net's line (in_file). */
static int parse_width(const char *s, const char *what, int in_file, int *out)
{
    long v;
    if (ps_parse_long(s, what, 1, RT_MAX_WIDTH, &v) < 0)
        return in_file ? as_parse_error() : -PS_EUSAGE;
    *out = (int)v;
    return 0;
}

static int parse_mlp(const char *spec, int *in_width, struct item **items, int *n)
{
    char buf[256], what[320];
    if (strlen(spec) >= sizeof buf)
        return ps_error(PS_EUSAGE, "net spec '%.40s...' too long", spec);
    strcpy(buf, spec + 4);
    size_t bl = strlen(buf); /* an empty field, as a model spec's (helper-122: taken) */
    if (bl && (buf[0] == ',' || buf[bl - 1] == ',' || strstr(buf, ",,")))
        return ps_error(PS_EUSAGE, "net spec '%s': an empty field (a comma too many)", spec);
    int layers = -1, width = -1, in = -1, out = -1, every = 0, rc;
    static const char *const fields[] = { "layers", "width", "in", "out", "norm" };
    unsigned seen = 0;
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv;
         kv = strtok_r(NULL, ",", &save)) {
        rc = 0;
        char *eq = strchr(kv, '=');
        if (!eq)
            return ps_error(PS_EUSAGE, "net spec '%s': '%s' is not key=value", spec, kv);
        *eq = 0;
        const char *v = eq + 1;
        for (unsigned f = 0; f < 5; f++) /* once each, as a model spec's (helper-66) */
            if (!strcmp(kv, fields[f]) && (seen & (1u << f)))
                return ps_error(PS_EUSAGE, "net spec '%s': field '%s' given twice", spec, kv);
            else if (!strcmp(kv, fields[f]))
                seen |= 1u << f;
        snprintf(what, sizeof what, "net spec '%s' field '%s'", spec, kv);
        if (!strcmp(kv, "layers")) {
            long l;
            if (ps_parse_long(v, what, 1, RT_MAX_LAYERS / 2, &l) < 0)
                return -PS_EUSAGE;
            layers = (int)l;
        } else if (!strcmp(kv, "width")) {
            rc = parse_width(v, what, 0, &width);
        } else if (!strcmp(kv, "in")) {
            rc = parse_width(v, what, 0, &in);
        } else if (!strcmp(kv, "out")) {
            rc = parse_width(v, what, 0, &out);
        } else if (!strcmp(kv, "norm")) {
            long e;
            const char *num = strncmp(v, "every", 5) ? v : v + 5;
            if (ps_parse_long(num, what, 0, RT_MAX_LAYERS, &e) < 0)
                return ps_error(PS_EUSAGE, "%s: want N or everyN (N >= 0), got '%s'", what, v);
            every = (int)e;
        } else {
            struct ps_suggest sg;
            return ps_error(PS_EUSAGE, "net spec '%s': unknown field '%s'%s (layers, "
                             "width, in, out, norm)", spec, kv,
                             ps_suggest_among(&sg, kv, fields, 5));
        }
        if (rc < 0)
            return rc;
    }
    if (layers < 0 || width < 0)
        return ps_error(PS_EUSAGE, "net spec '%s': fields 'layers' and 'width' are "
                         "required", spec);
    *in_width = in > 0 ? in : width;
    for (int i = 0; i < layers; i++) {
        int last = i == layers - 1;
        rc = push_item(items, n, RT_LAYER_DENSE, last && out > 0 ? out : width, !last, spec);
        if (rc < 0)
            return rc;
        if (every && !last && (i + 1) % every == 0 &&
            (rc = push_item(items, n, RT_LAYER_NORM, width, 0, spec)) < 0)
            return rc;
    }
    return 0;
}

static int parse_file(const char *path, int *in_width, struct item **items, int *n)
{
    char *buf;
    size_t len;
    int rc = ps_read_file(path, &buf, &len);
    if (rc < 0)
        return rc;
    int at, col; /* the lines after it were dropped unsaid */
    if (ps_nul_at(buf, len, &at, &col)) {
        free(buf);
        return ps_error(PS_EPARSE, "%s:%d:%d: a NUL byte: not a text file", path, at, col);
    }
    int line = 0;
    *in_width = 0;
    /* a UTF-8 byte-order mark is skipped, as every loader does (helper-122) */
    char *start = len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3) ? buf + 3 : buf;
    for (char *save = NULL, *s = start; s; s = save) {
        char *nl = strchr(s, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl)
            *nl = 0;
        line++;
        char *hash = strchr(s, '#');
        if (hash)
            *hash = 0;
        char *tok[4], *ts = NULL;
        int nt = 0;
        for (char *t = strtok_r(s, " \t\r", &ts); t; t = strtok_r(NULL, " \t\r", &ts))
            tok[nt < 4 ? nt++ : 3] = t;
        if (!nt)
            continue;
        char what[64];
        snprintf(what, sizeof what, "%s:%d: width", path, line);
        if (!*in_width && strcmp(tok[0], "input")) {
            rc = ps_error(PS_EPARSE, "%s:%d: first item must be 'input WIDTH', got '%s'",
                           path, line, tok[0]);
        } else if (!strcmp(tok[0], "input")) {
            if (*in_width)
                rc = ps_error(PS_EPARSE, "%s:%d: second 'input' line", path, line);
            else if (nt != 2)
                rc = ps_error(PS_EPARSE, "%s:%d: want 'input WIDTH'", path, line);
            else
                rc = parse_width(tok[1], what, 1, in_width);
        } else if (!strcmp(tok[0], "dense")) {
            int w = 0;
            if (nt < 2 || nt > 3)
                rc = ps_error(PS_EPARSE, "%s:%d: want 'dense WIDTH [relu|linear]'", path, line);
            else if ((rc = parse_width(tok[1], what, 1, &w)) < 0)
                ;
            else if (nt == 3 && strcmp(tok[2], "relu") && strcmp(tok[2], "linear"))
                rc = ps_error(PS_EPARSE, "%s:%d: activation '%s' is not relu or linear",
                               path, line, tok[2]);
            else
                rc = push_item(items, n, RT_LAYER_DENSE, w,
                               nt == 2 || !strcmp(tok[2], "relu"), path);
        } else if (!strcmp(tok[0], "norm")) {
            rc = nt == 1 ? push_item(items, n, RT_LAYER_NORM, 0, 0, path)
                         : ps_error(PS_EPARSE, "%s:%d: 'norm' takes no arguments", path, line);
        } else {
            rc = ps_error(PS_EPARSE, "%s:%d: unknown layer kind '%s' (dense, norm)",
                           path, line, tok[0]);
        }
        if (rc < 0)
            break;
    }
    free(buf);
    if (rc >= 0 && !*in_width)
        rc = ps_error(PS_EPARSE, "%s: no 'input WIDTH' line", path);
    return rc < 0 ? rc : 0;
}

int rt_net_parse(const char *spec, struct rt_net **out)
{
    *out = NULL;
    struct item *items = NULL;
    int n = 0, in_width = 0, rc;
    if (!strncmp(spec, "mlp:", 4))
        rc = parse_mlp(spec, &in_width, &items, &n);
    else if (!strncmp(spec, "file:", 5))
        rc = parse_file(spec + 5, &in_width, &items, &n);
    else
        rc = ps_error(PS_EUSAGE, "net spec '%s': want mlp:layers=L,width=W[,...] or "
                       "file:PATH", spec);
    if (rc < 0)
        goto err_free_items;
    if (n == 0) {
        rc = ps_error(PS_EPARSE, "net spec '%s': no layers", spec);
        goto err_free_items;
    }
    /* parameters and gradients, FP32, allocated below: refuse what cannot fit */
    double params = 0;
    for (int i = 0, w = in_width; i < n; i++) {
        int ow = items[i].kind == RT_LAYER_NORM ? w : items[i].width;
        params += items[i].kind == RT_LAYER_DENSE ? (double)w * ow + ow : 2.0 * w;
        w = ow;
    }
    char what[300], detail[96], np[32];
    snprintf(what, sizeof what, "net '%s'", spec);
    ps_human_count(params, np, sizeof np);
    snprintf(detail, sizeof detail, "parameters and gradients of %s FP32 parameters", np);
    if ((rc = ps_mem_check(8 * params, what, detail, "use a smaller net, or set "
                            PS_MEM_ENV " to override the check")) < 0)
        goto err_free_items;
    struct rt_net *net = calloc(1, sizeof *net);
    if (!net || !(net->layers = calloc((size_t)n, sizeof *net->layers))) {
        free(net);
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto err_free_items;
    }
    snprintf(net->spec, sizeof net->spec, "%s", spec);
    net->in_width = in_width;
    int w = in_width;
    for (int i = 0; i < n; i++, net->n_layers++) {
        int ow = items[i].kind == RT_LAYER_NORM ? w : items[i].width;
        if ((rc = rt_layer_init(&net->layers[i], items[i].kind, w, ow, items[i].relu)) < 0) {
            rt_net_free(net);
            goto err_free_items;
        }
        w = ow;
    }
    free(items);
    *out = net;
    return 0;
err_free_items:
    free(items);
    return rc;
}

void rt_net_free(struct rt_net *n)
{
    if (!n)
        return;
    for (int i = 0; i < n->n_layers; i++)
        rt_layer_release(&n->layers[i]);
    free(n->layers);
    free(n);
}

int rt_net_width(const struct rt_net *n, int l)
{
    return l == 0 ? n->in_width : n->layers[l - 1].out;
}

int64_t rt_net_params(const struct rt_net *n)
{
    int64_t s = 0;
    for (int i = 0; i < n->n_layers; i++)
        s += n->layers[i].n_params;
    return s;
}

int rt_net_init_params(struct rt_net *n, uint64_t seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return ps_error(PS_ENOMEM, "out of memory");
    gsl_rng_set(r, (unsigned long)seed);
    for (int i = 0; i < n->n_layers; i++) {
        struct rt_layer *l = &n->layers[i];
        if (l->kind == RT_LAYER_DENSE) {
            double a = sqrt(6.0 / l->in); /* He uniform */
            for (int64_t k = 0; k < (int64_t)l->in * l->out; k++)
                l->w[k] = (float)((2.0 * gsl_rng_uniform(r) - 1.0) * a);
            memset(l->b, 0, (size_t)l->out * sizeof *l->b);
        } else {
            for (int k = 0; k < l->in; k++) {
                l->w[k] = 1.0f;
                l->b[k] = 0.0f;
            }
        }
        rt_layer_zero_grad(l);
    }
    gsl_rng_free(r);
    return 0;
}

void rt_net_copy_params(struct rt_net *dst, const struct rt_net *src)
{
    PS_ASSERT(dst->n_layers == src->n_layers);
    for (int i = 0; i < src->n_layers; i++) {
        const struct rt_layer *s = &src->layers[i];
        struct rt_layer *d = &dst->layers[i];
        PS_ASSERT(s->n_params == d->n_params);
        memcpy(d->w, s->w, (size_t)(s->n_params - s->out) * sizeof *d->w);
        memcpy(d->b, s->b, (size_t)s->out * sizeof *d->b);
    }
}

void rt_net_zero_grad(struct rt_net *n)
{
    for (int i = 0; i < n->n_layers; i++)
        rt_layer_zero_grad(&n->layers[i]);
}

int rt_data_new(const struct rt_net *net, int n, uint64_t seed, struct rt_data **out)
{
    *out = NULL;
    int in = net->in_width, o = rt_net_width(net, net->n_layers);
    struct rt_data *d = calloc(1, sizeof *d);
    double *a = malloc((size_t)in * (size_t)o * sizeof *a);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    int rc = 0;
    if (!d || !a || !r || !(d->x = malloc((size_t)n * in * sizeof *d->x)) ||
        !(d->t = malloc((size_t)n * o * sizeof *d->t))) {
        rc = ps_error(PS_ENOMEM, "out of memory for %d samples", n);
        goto cleanup;
    }
    d->n = n;
    d->in = in;
    d->out = o;
    d->seed = seed;
    gsl_rng_set(r, (unsigned long)(seed ^ 0x5eedda7aULL));
    for (size_t k = 0; k < (size_t)in * o; k++)
        a[k] = gsl_ran_gaussian(r, 1.0 / sqrt((double)in));
    for (size_t k = 0; k < (size_t)n * in; k++)
        d->x[k] = (float)(2.0 * gsl_rng_uniform(r) - 1.0);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < o; j++) {
            double s = 0;
            for (int k = 0; k < in; k++)
                s += d->x[(size_t)i * in + k] * a[(size_t)k * o + j];
            d->t[(size_t)i * o + j] = (float)tanh(s);
        }
    *out = d;
    d = NULL;
cleanup:
    rt_data_free(d);
    free(a);
    if (r)
        gsl_rng_free(r);
    return rc;
}

void rt_data_free(struct rt_data *d)
{
    if (!d)
        return;
    free(d->x);
    free(d->t);
    free(d);
}

double rt_loss(int rows, int width, int n_total, const float *y, const float *t,
               float *dy)
{
    double scale = 1.0 / ((double)n_total * width), s = 0;
    for (size_t i = 0; i < (size_t)rows * width; i++) {
        double e = (double)y[i] - t[i];
        s += e * e;
        if (dy)
            dy[i] = (float)(e * scale);
    }
    return 0.5 * s * scale;
}

int rt_net_reference_step(struct rt_net *n, const struct rt_data *d, float lr,
                          double *loss)
{
    int L = n->n_layers, N = d->n, rc = 0;
    float **t = calloc((size_t)L + 1, sizeof *t), **aux = calloc((size_t)L, sizeof *aux);
    uint8_t **mask = calloc((size_t)L, sizeof *mask);
    float *g0 = NULL, *g1 = NULL;
    size_t maxw = (size_t)n->in_width;
    if (!t || !aux || !mask)
        goto err_nomem;
    t[0] = d->x;
    for (int l = 0; l < L; l++) {
        const struct rt_layer *ly = &n->layers[l];
        if ((size_t)ly->out > maxw)
            maxw = (size_t)ly->out;
        if (!(t[l + 1] = malloc((size_t)N * ly->out * sizeof **t)))
            goto err_nomem;
        if (rt_layer_aux_floats(ly) &&
            !(aux[l] = malloc((size_t)N * rt_layer_aux_floats(ly) * sizeof **aux)))
            goto err_nomem;
        if (rt_layer_mask_bytes(ly) && !(mask[l] = malloc((size_t)N * rt_layer_mask_bytes(ly))))
            goto err_nomem;
    }
    if (!(g0 = malloc((size_t)N * maxw * sizeof *g0)) ||
        !(g1 = malloc((size_t)N * maxw * sizeof *g1)))
        goto err_nomem;
    rt_net_zero_grad(n);
    for (int l = 0; l < L; l++)
        rt_layer_forward(&n->layers[l], N, t[l], t[l + 1], aux[l], mask[l]);
    *loss = rt_loss(N, d->out, N, t[L], d->t, g0);
    for (int l = L - 1; l >= 0; l--) {
        struct rt_layer *ly = &n->layers[l];
        rt_layer_grad_prep(ly, N, mask[l], g0);
        rt_layer_grad_weight(ly, N, t[l], aux[l], g0);
        if (l > 0) {
            rt_layer_grad_input(ly, N, aux[l], g0, g1);
            float *tmp = g0;
            g0 = g1;
            g1 = tmp;
        }
    }
    if (lr > 0)
        for (int l = 0; l < L; l++)
            rt_layer_sgd(&n->layers[l], lr);
    goto cleanup;
err_nomem:
    rc = ps_error(PS_ENOMEM, "out of memory for the reference step (batch %d)", N);
cleanup:
    if (t)
        for (int l = 1; l <= L; l++)
            free(t[l]);
    for (int l = 0; aux && mask && l < L; l++) {
        free(aux[l]);
        free(mask[l]);
    }
    free(mask);
    free(t);
    free(aux);
    free(g0);
    free(g1);
    return rc;
}

/* Index of the first non-finite value of v[0..n), or -1. */
static int64_t first_nonfinite(const float *v, int64_t n)
{
    for (int64_t i = 0; v && i < n; i++)
        if (!isfinite(v[i]))
            return i;
    return -1;
}

int rt_check_diverged(const struct rt_net *net, long step, double loss, double lr)
{
    if (!isfinite(loss))
        return ps_error(PS_EINVAL, "step %ld: the loss is %s: training diverged; try a "
                         "smaller --lr (now %g)", step, isnan(loss) ? "NaN" : "infinite", lr);
    for (int l = 0; net && l < net->n_layers; l++) {
        const struct rt_layer *ly = &net->layers[l];
        int64_t nw = ly->kind == RT_LAYER_DENSE ? (int64_t)ly->in * ly->out : ly->out;
        const char *what = NULL;
        if (first_nonfinite(ly->dw, nw) >= 0 || first_nonfinite(ly->db, ly->out) >= 0)
            what = "a non-finite gradient";
        else if (first_nonfinite(ly->w, nw) >= 0 || first_nonfinite(ly->b, ly->out) >= 0)
            what = "non-finite parameters";
        if (what)
            return ps_error(PS_EINVAL, "step %ld: layer %d (%s) has %s after the "
                             "update: training diverged; try a smaller --lr (now %g)",
                             step, l, rt_layer_kind_name(ly->kind), what, lr);
    }
    return 0;
}
