/*
 * ana_format — the table / csv / json dispatch every printer of analysis/
 * shares: one place for the format names, the unknown-format error and the
 * stream check. Printers take their object as const void * so one dispatcher
 * serves them all; json (if not NULL) returns a code, the others report
 * trouble through the stream's error flag. Cost: that of the printer.
 */
#ifndef ANA_FORMAT_H
#define ANA_FORMAT_H

#include <stdio.h>

struct ana_printers {
    void (*table)(const void *obj, FILE *f);
    void (*csv)(const void *obj, FILE *f);
    int (*json)(const void *obj, FILE *f);  /* NULL: the format is not offered */
};

int ana_print_as(const char *format, const struct ana_printers *p, const void *obj, FILE *f);

#endif
