#include "sim/sim_error.h"

#include <stdarg.h>
#include <string.h>

static _Thread_local char errbuf[1024];
static _Thread_local int errcode;

int sim_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    for (char *c = errbuf; *c; c++) /* input quoted in a message stays on one line */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    if (code < 0)
        code = -code;
    if (code <= 0 || code >= SIM_NERR)
        SIM_BUG("sim_error with bad code %d", code);
    errcode = code;
    return -code;
}

const char *sim_errmsg(void) { return errbuf; }
int sim_errcode(void) { return errcode; }
void sim_error_clear(void) { errbuf[0] = 0; errcode = 0; }

static const struct { const char *name; int status; const char *desc; } tab[] = {
    [SIM_OK] = { "OK", 0, "success" },
#define SIM_X_TAB(n, s, d) [SIM_##n] = { "SIM_" #n, s, d },
    SIM_ERRNO_MAP(SIM_X_TAB)
#undef SIM_X_TAB
};

static int norm(int code)
{
    if (code < 0)
        code = -code;
    return code < SIM_NERR ? code : SIM_EINVAL;
}

int sim_exit_status(int code) { return tab[norm(code)].status; }
const char *sim_errname(int code) { return tab[norm(code)].name; }
const char *sim_errdesc(int code) { return tab[norm(code)].desc; }
