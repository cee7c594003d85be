/* LeakSanitizer in the Criterion test binaries (make asan, make alloc): no
 * leak check in Criterion's runner process. It runs none of the tests:
 * Criterion 2.4 runs each in a worker process, started with BXFI_MAP in its
 * environment, and those are checked in full. The runner itself leaks 48
 * bytes of its own (tests/lsan.supp says where), from a stack that the fast
 * unwinder cannot follow past libcriterion's first frame, so no suppression
 * but the library's name would match it, and that one hides every leak of
 * the tests too (tests/test_lsan_supp.c). Included once per test binary
 * (tests/helpers.h); an LSan hook, unused without the sanitizer. */
#ifndef TESTS_LSAN_RUNNER_H
#define TESTS_LSAN_RUNNER_H

#include <stdlib.h>

int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return getenv("BXFI_MAP") == NULL; /* the same all the process's life */
}

#endif
