/*
 * stu_tmpl — the prose of the study outputs as template files, read at run
 * time from <data>/text/ (studies/gpipe/text/, one per generated file).
 *
 * Format: lines before the first section are a preamble (comments for the
 * reader, not output). A line "@@ name" starts the section `name` (names:
 * a-z, 0-9, _); its text is every byte after that line up to the next "@@"
 * line or the end of the file, blank lines included, so the file reads like
 * the output. "{{name}}" in a section's text is replaced by the value the
 * code formatted; there is no escape ("{{" always opens a placeholder).
 * The code chooses which sections to write and in what order; a sentence
 * that appears only under some condition is its own section, inserted into
 * another through a placeholder (stu_vals_text: the text without the
 * newline that ends it).
 *
 * The loader is strict, against the code's list of sections and the
 * placeholders each may use: an unknown, duplicate or missing section, an
 * unknown placeholder, an unterminated "{{" or a malformed "@@" line is one
 * PS_EPARSE message "file:line: ..." naming it (exit status 3).
 *
 * Ownership: stu_tmpl_load returns a heap template (stu_tmpl_free); a
 * stu_vals is a caller's fixed buffer (STU_VALS_MAX values, STU_VALS_BYTES
 * of text in all; overflow is a bug). Cost: one pass over the file to load,
 * one over a section to write it.
 */
#ifndef STU_TMPL_H
#define STU_TMPL_H

#include <stddef.h>
#include <stdio.h>

typedef struct stu_tmpl stu_tmpl;

/* One section the code uses: its name and the placeholders it may hold,
 * separated by spaces ("" for none). */
struct stu_tmpl_sect {
    const char *name, *vars;
};

/* Reads dir/name, checked against spec[0..n). */
int stu_tmpl_load(const char *dir, const char *name, const struct stu_tmpl_sect *spec, int n,
                  stu_tmpl **out);
void stu_tmpl_free(stu_tmpl *t);

#define STU_VALS_MAX 24
#define STU_VALS_BYTES 4096

/* Placeholder values, formatted by the code. */
struct stu_vals {
    int n;
    size_t used;
    const char *name[STU_VALS_MAX];
    size_t off[STU_VALS_MAX];
    char buf[STU_VALS_BYTES];
};

void stu_vals_init(struct stu_vals *v);
/* name = printf(fmt, ...); a name set twice keeps the last value. */
void stu_vals_set(struct stu_vals *v, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* name = section of t filled from sub (may be NULL), without its final
 * newline: a sentence to insert inside another section. */
void stu_vals_text(struct stu_vals *v, const char *name, const stu_tmpl *t,
                   const char *section, const struct stu_vals *sub);

/* Writes section of t to f, its placeholders filled from v (may be NULL).
 * A section or value the code did not declare is a bug (PS_BUG). */
void stu_tmpl_put(FILE *f, const stu_tmpl *t, const char *section, const struct stu_vals *v);

#endif
