#include "base/ps_json.h"

#include <jansson.h>
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
