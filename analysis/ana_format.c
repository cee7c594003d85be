#include "analysis/ana_format.h"
#include "base/ps_error.h"

#include <string.h>

int ana_print_as(const char *format, const struct ana_printers *p, const void *obj, FILE *f)
{
    if (!strcmp(format, "table"))
        p->table(obj, f);
    else if (!strcmp(format, "csv"))
        p->csv(obj, f);
    else if (!strcmp(format, "json") && p->json)
        return p->json(obj, f);
    else
        return ps_error(PS_EUSAGE, "--format: unknown format '%s' (table, csv%s)", format,
                         p->json ? ", json" : "");
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}
