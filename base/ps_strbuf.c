/* ps_strbuf: a string buffer with a sticky out-of-memory flag (see ps_strbuf.h). */
#include "base/ps_strbuf.h"
#include "base/ps_error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ps_strbuf_init(struct ps_strbuf *b)
{
    memset(b, 0, sizeof *b);
}

void ps_strbuf_release(struct ps_strbuf *b)
{
    free(b->s);
    ps_strbuf_init(b);
}

/* Room for n more bytes and the NUL; 0, or -1 with the flag set. */
static int grow(struct ps_strbuf *b, size_t n)
{
    if (b->oom)
        return -1;
    if (n > (size_t)PTRDIFF_MAX - b->len - 1) {
        b->oom = 1;
        return -1;
    }
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return 0;
    size_t nc = b->cap ? b->cap : 1024;
    while (nc < need)
        nc = nc > (size_t)PTRDIFF_MAX / 2 ? need : nc * 2;
    char *s = realloc(b->s, nc);
    if (!s) {
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = nc;
    return 0;
}

void ps_strbuf_add(struct ps_strbuf *b, const char *s, size_t n)
{
    if (grow(b, n) < 0)
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void ps_strbuf_puts(struct ps_strbuf *b, const char *s)
{
    ps_strbuf_add(b, s, strlen(s));
}

void ps_strbuf_printf(struct ps_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) { /* an encoding error: the text would be wrong, as after an oom */
        b->oom = 1;
        return;
    }
    if (grow(b, (size_t)k) < 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)k;
}

const char *ps_strbuf_str(const struct ps_strbuf *b)
{
    return b->s && !b->oom ? b->s : "";
}

int ps_strbuf_error(const struct ps_strbuf *b)
{
    return b->oom ? ps_error(PS_ENOMEM, "out of memory") : 0;
}
