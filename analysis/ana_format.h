/*
 * ana_format — the output formats (table, csv, json) as one enum, parsed
 * once where a command reads its --format, and the dispatch every printer of
 * analysis/ and measure/ shares. ana_fmt_parse is the one place for the
 * format names and the unknown-format message; printers take the enum, never
 * the string. Printers take their object as const void * so one dispatcher
 * serves them all; json (if not NULL) returns a code, the others report
 * trouble through the stream's error flag. Cost: that of the printer.
 */
#ifndef ANA_FORMAT_H
#define ANA_FORMAT_H

#include <stdio.h>

enum ana_fmt { ANA_FMT_TABLE, ANA_FMT_CSV, ANA_FMT_JSON, ANA_FMT_N };

/* Sets of formats a command accepts, for ana_fmt_parse. */
#define ANA_FMT_BIT(f) (1u << (f))
#define ANA_FMTS_TABLE_CSV (ANA_FMT_BIT(ANA_FMT_TABLE) | ANA_FMT_BIT(ANA_FMT_CSV))
#define ANA_FMTS_ALL (ANA_FMTS_TABLE_CSV | ANA_FMT_BIT(ANA_FMT_JSON))

/* s, one of the formats in accepted (exact, case-sensitive names), into
 * *out; else PS_EUSAGE, "OPT: unknown format 'S' (table, csv[, json])"
 * listing the accepted ones (*out untouched). */
int ana_fmt_parse(const char *s, unsigned accepted, const char *opt, enum ana_fmt *out);

struct ana_printers {
    void (*table)(const void *obj, FILE *f);
    void (*csv)(const void *obj, FILE *f);
    int (*json)(const void *obj, FILE *f);  /* NULL: the format is not offered */
};

/* A format the printers do not offer is a bug (the parser refused it). */
int ana_print_as(enum ana_fmt fmt, const struct ana_printers *p, const void *obj, FILE *f);

#endif
