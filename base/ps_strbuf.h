/*
 * ps_strbuf — a growing string that remembers running out of memory.
 *
 * Appends never fail where they are written: when the buffer cannot grow,
 * it sets its oom flag and every later append is dropped, so the text is
 * never a silently shortened one. The owner asks once, at the end:
 * ps_strbuf_error() is 0, or PS_ENOMEM (reported through ps_error) — the
 * way SQLite's sqlite3_str keeps an error code and git's strbuf dies.
 * Embedded, not allocated: PS_STRBUF_INIT or ps_strbuf_init, then
 * ps_strbuf_release (frees the text; safe on a buffer never appended to,
 * and twice). The buffer owns s until release.
 * Cost: appends are amortised O(length appended) (capacity doubles).
 */
#ifndef PS_STRBUF_H
#define PS_STRBUF_H

#include <stddef.h>

struct ps_strbuf {
    char *s;       /* NUL-terminated text, NULL until the first append */
    size_t len;    /* bytes of text */
    size_t cap;    /* bytes allocated */
    int oom;       /* an append did not fit: the text is incomplete */
};
#define PS_STRBUF_INIT { NULL, 0, 0, 0 }

void ps_strbuf_init(struct ps_strbuf *b);
void ps_strbuf_release(struct ps_strbuf *b);
void ps_strbuf_add(struct ps_strbuf *b, const char *s, size_t n);
void ps_strbuf_puts(struct ps_strbuf *b, const char *s);
void ps_strbuf_printf(struct ps_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The text ("" when empty, and after an oom: no partial text). */
const char *ps_strbuf_str(const struct ps_strbuf *b);
/* 0, or PS_ENOMEM "out of memory" when an append was dropped. */
int ps_strbuf_error(const struct ps_strbuf *b);

#endif
