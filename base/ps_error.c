#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char errbuf[PS_ERRMSG_MAX];
static _Thread_local int errcode;
static _Thread_local int silent;

/* A message longer than the buffer keeps its start (the file) and its end
 * (the explanation), cut in the middle, which is where a long path's middle
 * is; no UTF-8 sequence is split. */
static void shorten(const char *m, size_t len)
{
    static const char gap[] = " [...] ";
    size_t head = PS_ERRMSG_MAX / 4, tail = PS_ERRMSG_MAX - 1 - head - (sizeof gap - 1);
    while (head > 0 && ((unsigned char)m[head] & 0xC0) == 0x80)
        head--;
    size_t from = len - tail;
    while (from < len && ((unsigned char)m[from] & 0xC0) == 0x80)
        from++;
    memcpy(errbuf, m, head);
    memcpy(errbuf + head, gap, sizeof gap - 1);
    memcpy(errbuf + head + sizeof gap - 1, m + from, len - from + 1);
}

int ps_error(int code, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    /* formatted apart first: an argument may be ps_errmsg() itself, the
     * previous message ("..: %s", ps_errmsg()) */
    char local[PS_ERRMSG_MAX];
    int n = vsnprintf(local, sizeof local, fmt, ap);
    va_end(ap);
    char *full;
    if (n >= (int)sizeof errbuf && (full = malloc((size_t)n + 1))) {
        vsnprintf(full, (size_t)n + 1, fmt, ap2);
        shorten(full, (size_t)n);
        free(full);
    } else { /* it fits, or (no memory for more) its start */
        if (n < 0)
            local[0] = 0;
        memcpy(errbuf, local, strlen(local) + 1);
    }
    va_end(ap2);
    ps_printable_in_place(errbuf); /* input quoted in a message stays on one line */
    if (code < 0)
        code = -code;
    if (code <= 0 || code >= PS_NERR)
        PS_BUG("ps_error with bad code %d", code);
    errcode = code;
    silent = 0;
    return -code;
}

int ps_error_silent(int code)
{
    if (code < 0)
        code = -code;
    if (code <= 0 || code >= PS_NERR)
        PS_BUG("ps_error_silent with bad code %d", code);
    errbuf[0] = 0;
    errcode = code;
    silent = 1;
    return -code;
}

int ps_error_silenced(void) { return silent; }

const char *ps_errmsg(void) { return errbuf; }
int ps_errcode(void) { return errcode; }
void ps_error_clear(void) { errbuf[0] = 0; errcode = 0; silent = 0; }

static const struct { const char *name; int status; const char *desc; } tab[] = {
    [PS_OK] = { "OK", 0, "success" },
/* The names keep their first spelling, SIM_E*: sweep databases store them
 * (runs.status) and `pipesim help errors` prints them. */
#define PS_X_TAB(n, s, d) [PS_##n] = { "SIM_" #n, s, d },
    PS_ERRNO_MAP(PS_X_TAB)
#undef PS_X_TAB
};

static int norm(int code)
{
    if (code < 0)
        code = -code;
    return code < PS_NERR ? code : PS_EINVAL;
}

int ps_exit_status(int code) { return tab[norm(code)].status; }
const char *ps_errname(int code) { return tab[norm(code)].name; }
const char *ps_errdesc(int code) { return tab[norm(code)].desc; }
