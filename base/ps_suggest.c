#include "base/ps_suggest.h"

#include <stdio.h>
#include <string.h>

#define NMAX 63

int ps_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > NMAX)
        n = NMAX;
    if (m > NMAX)
        m = NMAX;
    int d[NMAX + 1][NMAX + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1; /* adjacent transposition */
            d[i][j] = v;
        }
    return d[n][m];
}

void ps_suggest_init(struct ps_suggest *sg, const char *typed)
{
    memset(sg, 0, sizeof *sg);
    sg->typed = typed ? typed : "";
    sg->best_d = 1 << 30;
}

void ps_suggest_add(struct ps_suggest *sg, const char *c)
{
    if (!c || !*c || !strcmp(c, sg->typed))
        return;
    size_t tl = strlen(sg->typed);
    if (tl && !strncmp(c, sg->typed, tl)) {
        sg->n_prefix++;
        sg->prefix_of = c;
    }
    int limit = (int)(tl / 3) > 1 ? (int)(tl / 3) : 1;
    int d = ps_edit_distance(sg->typed, c);
    if (d <= limit && d < sg->best_d) {
        sg->best_d = d;
        sg->best = c;
    }
}

const char *ps_suggest_best(const struct ps_suggest *sg)
{
    if (sg->best)
        return sg->best;
    return sg->n_prefix == 1 ? sg->prefix_of : NULL;
}

const char *ps_suggest_hint(struct ps_suggest *sg)
{
    const char *b = ps_suggest_best(sg);
    if (!b)
        return "";
    snprintf(sg->hint, sizeof sg->hint, "; did you mean '%.63s'?", b);
    return sg->hint;
}

const char *ps_suggest_among(struct ps_suggest *sg, const char *typed,
                             const char *const *names, size_t n)
{
    ps_suggest_init(sg, typed);
    for (size_t i = 0; i < n; i++)
        ps_suggest_add(sg, names[i]);
    return ps_suggest_hint(sg);
}
