/* bench_verdict — what the reproduction benchmarks share: the issue's
 * accuracy targets and the PASS/MISS count each figure adds to (one
 * translation unit per benchmark, so the counters are its own). */
#ifndef BENCH_VERDICT_H
#define BENCH_VERDICT_H

#define MEDIAN_TARGET 0.08
#define CELL_TARGET 0.15

static int n_pass, n_miss; /* figures met and missed */

static inline const char *verdict(int ok)
{
    ok ? n_pass++ : n_miss++;
    return ok ? "PASS" : "MISS";
}

static inline int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
