#include "analysis/ana_format.h"
#include "base/ps_error.h"
#include "base/ps_suggest.h"

#include <string.h>

static const char *const names[ANA_FMT_N] = { "table", "csv", "json" };

int ana_fmt_parse(const char *s, unsigned accepted, const char *opt, enum ana_fmt *out)
{
    char list[32] = "";
    size_t len = 0;
    for (int f = 0; f < ANA_FMT_N; f++)
        if ((accepted & ANA_FMT_BIT(f)) && !strcmp(s, names[f])) {
            *out = (enum ana_fmt)f;
            return 0;
        }
    for (int f = 0; f < ANA_FMT_N; f++)
        if (accepted & ANA_FMT_BIT(f))
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                                    names[f]);
    if (!len)
        PS_BUG("no output format accepted for %s", opt);
    const char *acc[ANA_FMT_N] = { 0 };
    for (int f = 0; f < ANA_FMT_N; f++)
        acc[f] = (accepted & ANA_FMT_BIT(f)) ? names[f] : NULL;
    struct ps_suggest sg;
    return ps_error(PS_EUSAGE, "%s: unknown format '%s'%s (%s)", opt, s,
                    ps_suggest_among(&sg, s, acc, ANA_FMT_N), list);
}

int ana_print_as(enum ana_fmt fmt, const struct ana_printers *p, const void *obj, FILE *f)
{
    switch (fmt) {
    case ANA_FMT_TABLE: p->table(obj, f); break;
    case ANA_FMT_CSV: p->csv(obj, f); break;
    case ANA_FMT_JSON:
        if (!p->json)
            PS_BUG("json output not offered here");
        return p->json(obj, f);
    default: PS_BUG("output format %d", (int)fmt);
    }
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}
