#include "runtime/rt_layer.h"
#include "base/ps_error.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define RT_NORM_EPS 1e-5f

int rt_layer_init(struct rt_layer *l, enum rt_layer_kind kind, int in, int out,
                  int relu)
{
    memset(l, 0, sizeof *l);
    if (in < 1 || out < 1 || (kind == RT_LAYER_NORM && in != out))
        return ps_error(PS_EINVAL, "bad %s layer shape %d -> %d",
                         rt_layer_kind_name(kind), in, out);
    l->kind = kind;
    l->in = in;
    l->out = out;
    l->relu = kind == RT_LAYER_DENSE && relu;
    size_t nw = kind == RT_LAYER_DENSE ? (size_t)in * (size_t)out : (size_t)in;
    size_t nb = (size_t)out;
    l->n_params = (int64_t)(nw + nb);
    l->w = calloc(nw, sizeof *l->w);
    l->b = calloc(nb, sizeof *l->b);
    l->dw = calloc(nw, sizeof *l->dw);
    l->db = calloc(nb, sizeof *l->db);
    if (!l->w || !l->b || !l->dw || !l->db) {
        rt_layer_release(l);
        return ps_error(PS_ENOMEM, "out of memory for a %d x %d layer", out, in);
    }
    return 0;
}

void rt_layer_release(struct rt_layer *l)
{
    free(l->w);
    free(l->b);
    free(l->dw);
    free(l->db);
    l->w = l->b = l->dw = l->db = NULL;
}

const char *rt_layer_kind_name(enum rt_layer_kind k)
{
    return k == RT_LAYER_DENSE ? "dense" : "norm";
}

int64_t rt_layer_aux_floats(const struct rt_layer *l)
{
    return l->kind == RT_LAYER_NORM ? (int64_t)l->in + 1 : 0;
}

int rt_layer_needs_input(const struct rt_layer *l) { return l->kind == RT_LAYER_DENSE; }
int64_t rt_layer_mask_bytes(const struct rt_layer *l) { return l->relu ? l->out : 0; }

double rt_layer_fwd_flops(const struct rt_layer *l)
{
    if (l->kind == RT_LAYER_DENSE) /* GEMM, bias, ReLU */
        return 2.0 * l->in * l->out + l->out * (1.0 + l->relu);
    return 8.0 * l->in; /* mean, variance, normalize, scale and shift */
}

double rt_layer_bgrad_flops(const struct rt_layer *l)
{
    if (l->kind == RT_LAYER_DENSE) /* ReLU mask, dX GEMM */
        return 2.0 * l->in * l->out + l->relu * l->out;
    return 9.0 * l->in;
}

double rt_layer_wgrad_flops(const struct rt_layer *l)
{
    if (l->kind == RT_LAYER_DENSE) /* dW GEMM, bias sum */
        return 2.0 * l->in * l->out + l->out;
    return 3.0 * l->in;
}

static void norm_forward(const struct rt_layer *l, int rows, const float *x,
                         float *y, float *aux)
{
    int w = l->in;
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * w;
        float *yr = y + (size_t)r * w, *xh = aux + (size_t)r * (w + 1);
        double mean = 0, var = 0;
        for (int i = 0; i < w; i++)
            mean += xr[i];
        mean /= w;
        for (int i = 0; i < w; i++) {
            double d = xr[i] - mean;
            var += d * d;
        }
        var /= w;
        float rstd = (float)(1.0 / sqrt(var + RT_NORM_EPS));
        for (int i = 0; i < w; i++) {
            xh[i] = (float)(xr[i] - mean) * rstd;
            yr[i] = l->w[i] * xh[i] + l->b[i];
        }
        xh[w] = rstd;
    }
}

void rt_layer_forward(const struct rt_layer *l, int rows, const float *x,
                      float *y, float *aux, uint8_t *mask)
{
    if (l->kind == RT_LAYER_NORM) {
        norm_forward(l, rows, x, y, aux);
        return;
    }
    int n = l->out;
    for (int r = 0; r < rows; r++)
        memcpy(y + (size_t)r * n, l->b, (size_t)n * sizeof *y);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, l->in, 1.0f,
                x, l->in, l->w, l->in, 1.0f, y, n);
    if (!l->relu)
        return;
    size_t tot = (size_t)rows * n;
    for (size_t i = 0; i < tot; i++)
        y[i] = y[i] > 0 ? y[i] : 0;
    if (mask)
        for (size_t i = 0; i < tot; i++)
            mask[i] = y[i] > 0;
}

void rt_layer_grad_prep(const struct rt_layer *l, int rows, const uint8_t *mask,
                        float *dy)
{
    if (!l->relu)
        return;
    size_t tot = (size_t)rows * l->out;
    for (size_t i = 0; i < tot; i++)
        dy[i] = mask[i] ? dy[i] : 0.0f;
}

void rt_layer_grad_input(const struct rt_layer *l, int rows, const float *aux,
                         const float *dy, float *dx)
{
    if (l->kind == RT_LAYER_DENSE) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, l->in, l->out,
                    1.0f, dy, l->out, l->w, l->in, 0.0f, dx, l->in);
        return;
    }
    int w = l->in;
    for (int r = 0; r < rows; r++) {
        const float *dyr = dy + (size_t)r * w, *xh = aux + (size_t)r * (w + 1);
        float *dxr = dx + (size_t)r * w;
        double m1 = 0, m2 = 0;  /* mean(dxhat), mean(dxhat * xhat) */
        for (int i = 0; i < w; i++) {
            double g = (double)dyr[i] * l->w[i];
            m1 += g;
            m2 += g * xh[i];
        }
        m1 /= w;
        m2 /= w;
        float rstd = xh[w];
        for (int i = 0; i < w; i++)
            dxr[i] = rstd * (float)((double)dyr[i] * l->w[i] - m1 - xh[i] * m2);
    }
}

void rt_layer_grad_weight(struct rt_layer *l, int rows, const float *x,
                          const float *aux, const float *dy)
{
    if (l->kind == RT_LAYER_DENSE) {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l->out, l->in, rows,
                    1.0f, dy, l->out, x, l->in, 1.0f, l->dw, l->in);
        for (int r = 0; r < rows; r++) {
            const float *dyr = dy + (size_t)r * l->out;
            for (int i = 0; i < l->out; i++)
                l->db[i] += dyr[i];
        }
        return;
    }
    int w = l->in;
    for (int r = 0; r < rows; r++) {
        const float *dyr = dy + (size_t)r * w, *xh = aux + (size_t)r * (w + 1);
        for (int i = 0; i < w; i++) {
            l->dw[i] += dyr[i] * xh[i];
            l->db[i] += dyr[i];
        }
    }
}

void rt_layer_zero_grad(struct rt_layer *l)
{
    size_t nw = (size_t)(l->n_params - l->out);
    memset(l->dw, 0, nw * sizeof *l->dw);
    memset(l->db, 0, (size_t)l->out * sizeof *l->db);
}

void rt_layer_sgd(struct rt_layer *l, float lr)
{
    size_t nw = (size_t)(l->n_params - l->out);
    cblas_saxpy((int)nw, -lr, l->dw, 1, l->w, 1);
    cblas_saxpy(l->out, -lr, l->db, 1, l->b, 1);
}

void rt_blas_single_thread(void) { openblas_set_num_threads(1); }

static int limited(int resource)
{
    struct rlimit rl;
    return getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

/* Whether /proc/self/exe is the file this code was loaded from (the
 * mapping of /proc/self/maps holding this function): not when the program
 * was started through the dynamic loader (ld.so PROGRAM: /proc/self/exe is
 * ld.so, and main's argv lacks ld.so's own options) or under valgrind
 * (stat of /proc/self/exe gives the tool's binary), where executing it
 * would run something else. The same inode, and the same device or the
 * same path: on overlayfs, kernels before 6.8 show the lower file's device
 * in maps and the overlay's in stat (moby/moby#43512). */
static int exe_is_this_program(void)
{
    struct stat st;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    FILE *f = stat("/proc/self/exe", &st) == 0 && n > 0 ? fopen("/proc/self/maps", "r") : NULL;
    if (!f)
        return 0;
    exe[n] = 0;
    uintptr_t me = (uintptr_t)&exe_is_this_program;
    char line[4352];
    int same = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, ino;
        unsigned maj, mnr;
        int at = 0;
        if (sscanf(line, "%lx-%lx %*s %*x %x:%x %lu %n", &lo, &hi, &maj, &mnr, &ino, &at) < 5 ||
            me < lo || me >= hi)
            continue;
        char *path = line + at;
        path[strcspn(path, "\n")] = 0;
        same = ino == (unsigned long)st.st_ino &&
               ((maj == major(st.st_dev) && mnr == minor(st.st_dev)) || !strcmp(path, exe));
        break;
    }
    fclose(f);
    return same;
}

void rt_blas_reexec_single_thread(char **argv)
{
    const char *n = getenv("OPENBLAS_NUM_THREADS");
    if ((n && !strcmp(n, "1")) || !(limited(RLIMIT_AS) || limited(RLIMIT_DATA)) ||
        !exe_is_this_program())
        return;
    if (setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* not executed: run on with the pool as it is */
}

const char *rt_blas_corename(void)
{
    const char *s = openblas_get_corename();
    return s ? s : "unknown";
}
