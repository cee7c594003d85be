/*
 * ps_csv — the comma-separated lines pipesim's loaders read (model profiles,
 * the studies' reference figures): no quoting, fields trimmed of blanks.
 * The loaders own their buffers and their error messages; this only cuts.
 * Cost: O(line length).
 */
#ifndef PS_CSV_H
#define PS_CSV_H

/* Splits line in place at commas into at most max fields, trimming spaces,
 * tabs and a trailing '\r'; colno[i] is field i's 1-based column in line.
 * Returns the number of fields, or -1 when there are more than max. */
int ps_csv_split(char *line, char **f, int *colno, int max);

#endif
