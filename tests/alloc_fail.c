/*
 * alloc_fail — an LD_PRELOAD shim that makes one allocation fail, for
 * tests/test_alloc.c.
 *
 *   ALLOC_FAIL_N=n       the n-th allocation (1-based) returns NULL with
 *                        errno ENOMEM; every other one succeeds
 *   ALLOC_FAIL_REPORT=f  at exit, write the number of allocations made to f
 *
 * Counted from main() on: malloc, calloc, realloc (to a non-zero size), reallocarray,
 * strdup, strndup, posix_memalign, aligned_alloc, memalign — from the
 * program, jansson and libc's own internals (fopen, stdio buffers) alike.
 * Each call forwards to the next definition (glibc's, or ASan's when the
 * shim is preloaded before an ASan binary's runtime: set
 * ASAN_OPTIONS=verify_asan_link_order=0), so sanitizers still see every
 * block. Not part of the library; built as build/tests/alloc_fail.so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);

static unsigned long fail_at, count;
static int ready, resolving, armed;

/* dlsym may allocate before the real functions are known: serve it here. */
static _Alignas(16) char boot[4096];
static size_t boot_used;

static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (boot_used + n > sizeof boot)
        return NULL;
    void *p = boot + boot_used;
    boot_used += n;
    return p;
}

static int in_boot(const void *p)
{
    return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

static unsigned long env_ulong(const char *name)
{
    const char *s = getenv(name);
    unsigned long v = 0;
    while (s && *s >= '0' && *s <= '9')
        v = v * 10 + (unsigned long)(*s++ - '0');
    return v;
}

static void init(void)
{
    if (ready || resolving)
        return;
    resolving = 1;
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    resolving = 0;
    ready = 1;
}

/* 1 if this allocation is the one to fail. */
static int fails(void)
{
    if (!armed)
        return 0;
    unsigned long n = __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
    if (fail_at && n == fail_at) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    init();
    if (!ready)
        return boot_alloc(n);
    return fails() ? NULL : real_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    init();
    if (!ready) {
        void *p = n && k > SIZE_MAX / n ? NULL : boot_alloc(k * n);
        return p ? memset(p, 0, k * n) : NULL;
    }
    return fails() ? NULL : real_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    init();
    if (in_boot(p)) { /* move a bootstrap block to the real heap */
        size_t room = (size_t)(boot + sizeof boot - (char *)p);
        void *q = malloc(n);
        if (q)
            memcpy(q, p, n < room ? n : room);
        return q;
    }
    if (n && fails())
        return NULL;
    return real_realloc(p, n);
}

void *reallocarray(void *p, size_t k, size_t n)
{
    if (n && k > SIZE_MAX / n) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, k * n);
}

void free(void *p)
{
    init();
    if (!p || in_boot(p))
        return;
    real_free(p);
}

char *strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    return p ? memcpy(p, s, n) : NULL;
}

char *strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
    init();
    if (fails())
        return ENOMEM;
    return real_posix_memalign(out, align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    init();
    return fails() ? NULL : real_aligned_alloc(align, n);
}

void *memalign(size_t align, size_t n)
{
    init();
    return fails() ? NULL : real_memalign(align, n);
}

/* Counting starts at main(): what library constructors (OpenBLAS threads,
 * sanitizer runtimes) allocate before it is not the program's to handle. */
typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;

static int counted_main(int argc, char **argv, char **envp)
{
    fail_at = env_ulong("ALLOC_FAIL_N");
    armed = 1;
    return real_main(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    int (*next)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
                void *) = (int (*)(main_fn, int, char **, void (*)(void), void (*)(void),
                                   void (*)(void), void *))dlsym(RTLD_NEXT, "__libc_start_main");
    real_main = main;
    return next(counted_main, argc, argv, init, fini, rtld_fini, stack_end);
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("ALLOC_FAIL_REPORT");
    if (!path)
        return;
    char buf[32];
    int k = (int)sizeof buf;
    unsigned long v = count;
    buf[--k] = '\n';
    do
        buf[--k] = (char)('0' + v % 10);
    while ((v /= 10) && k > 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, buf + k, sizeof buf - (size_t)k);
        (void)w;
        close(fd);
    }
}
