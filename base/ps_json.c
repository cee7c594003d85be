#include "base/ps_json.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

static _Thread_local int failed;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *counted_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        failed = 1;
    return p;
}

static void install(void) { json_set_alloc_funcs(counted_malloc, free); }

void ps_json_begin(void)
{
    pthread_once(&once, install);
    failed = 0;
}

int ps_json_oom(void) { return failed; }

/* A whole real as an integer (NULL if it is not one or no memory). */
static json_t *as_integer(const json_t *v)
{
    double x = json_real_value(v);
    if (!isfinite(x) || x != floor(x) || fabs(x) >= 9007199254740992.0)
        return NULL;
    return json_integer((json_int_t)x);
}

static void integralize(json_t *v)
{
    if (json_is_object(v)) {
        for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
            json_t *x = json_object_iter_value(it), *n;
            if (json_is_real(x) && (n = as_integer(x)))
                json_object_iter_set_new(v, it, n);
            else
                integralize(x);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *x = json_array_get(v, i), *n;
            if (json_is_real(x) && (n = as_integer(x)))
                json_array_set_new(v, i, n);
            else
                integralize(x);
        }
    }
}

int ps_json_dumpf(json_t *root, FILE *f, unsigned long flags)
{
    integralize(root);
    return json_dumpf(root, f, flags | JSON_REAL_PRECISION(PS_JSON_REAL_DIGITS));
}
