/* Splitting CSV lines (see ps_csv.h). */
#include "base/ps_csv.h"

#include <string.h>

int ps_csv_split(char *line, char **f, int *colno, int max)
{
    int n = 0;
    char *s = line;
    for (;;) {
        if (n == max)
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
