#include "base/ps_util.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int looks_hex(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')
        s++;
    if (*s == '+' || *s == '-')
        s++;
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

double ps_strtod(const char *s, char **end)
{
    if (looks_hex(s)) {
        *end = (char *)s;
        return 0;
    }
    return strtod(s, end);
}

double ps_strtod_exp(const char *s, int shift)
{
    char *end, buf[512];
    double v = ps_strtod(s, &end);
    const char *e = strpbrk(s, "eE");
    long x = 0;
    size_t mant = e ? (size_t)(e - s) : strlen(s);
    if (e) {
        char *xe;
        errno = 0;
        x = strtol(e + 1, &xe, 10);
        if (errno || *xe || labs(x) > 100000)
            mant = sizeof buf; /* the fallback below */
    }
    if (end == s || *end || !isfinite(v) || mant >= sizeof buf - 16)
        return v * pow(10, shift);
    snprintf(buf, sizeof buf, "%.*se%ld", (int)mant, s, x + shift);
    return strtod(buf, NULL);
}

int ps_nul_at(const char *buf, size_t len, int *line, int *col)
{
    const char *nul = memchr(buf, 0, len);
    if (!nul)
        return 0;
    *line = 1;
    const char *bol = buf;
    for (const char *p = buf; p < nul; p++)
        if (*p == '\n') {
            ++*line;
            bol = p + 1;
        }
    *col = (int)(nul - bol) + 1;
    return 1;
}

int ps_parse_double(const char *s, const char *what, double *out)
{
    char *end;
    if (!s || !*s)
        return ps_error(PS_EUSAGE, "%s: empty value", what);
    errno = 0;
    double v = ps_strtod(s, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end || end == s) /* "8," or "abc": not a number at all (helper-130: it read "not
                           * a finite number", the words for inf and nan) */
        return ps_error(PS_EUSAGE, "%s: '%s' is not a %snumber", what, s,
                         looks_hex(s) ? "decimal " : "");
    if (errno == ERANGE) /* a number, but beyond a double's range */
        return ps_error(PS_EUSAGE, "%s: '%s' is out of range (%s)", what, s,
                         fabs(v) > 1 ? "magnitude above 1.8e308" : "nonzero but below 2.2e-308");
    if (!isfinite(v))
        return ps_error(PS_EUSAGE, "%s: '%s' is not a finite number", what, s);
    *out = v;
    return 0;
}

/* "what: 0 is out of range [1, 9]: must be at least 1" (low) or "at most". */
static int out_of_range(const char *what, const char *shown, long lo, long hi, int low)
{
    return ps_error(PS_EUSAGE, "%s: %s is out of range [%ld, %ld]: must be at %s %ld", what,
                    shown, lo, hi, low ? "least" : "most", low ? lo : hi);
}

int ps_parse_long(const char *s, const char *what, long lo, long hi, long *out)
{
    char *end;
    if (!s || !*s)
        return ps_error(PS_EUSAGE, "%s: empty value", what);
    errno = 0;
    long v = strtol(s, &end, 10);
    while (end != s && (*end == ' ' || *end == '\t')) /* as ps_parse_double: strtol skips */
        end++;                                        /* leading blanks, so trailing too */
    if (*end || end == s) /* "0x10" reads as 0 then junk: say why, as for a number */
        return ps_error(PS_EUSAGE, "%s: '%s' is not a%s integer", what, s,
                        looks_hex(s) ? " decimal" : "n");
    if (errno == ERANGE) /* an integer, but beyond a long */
        return ps_error(PS_EUSAGE, "%s: '%s' is out of range [%ld, %ld]", what, s, lo, hi);
    if (v < lo || v > hi) {
        char shown[32];
        snprintf(shown, sizeof shown, "%ld", v);
        return out_of_range(what, shown, lo, hi, v < lo);
    }
    *out = v;
    return 0;
}

int ps_parse_bytes(const char *s, const char *what, double *out)
{
    static const struct { const char *suf; double mul; } u[] = {
        { "", 1 },       { "B", 1 },       { "k", 1e3 },       { "K", 1e3 },   { "kB", 1e3 },
        { "KB", 1e3 },   { "M", 1e6 },     { "MB", 1e6 },      { "G", 1e9 },   { "GB", 1e9 },
        { "T", 1e12 },   { "TB", 1e12 },   { "KiB", 1024.0 },  { "MiB", 1048576.0 },
        { "GiB", 1073741824.0 },           { "TiB", 1099511627776.0 },
    };
    char *end, unit[8];
    double v = s && *s ? ps_strtod(s, &end) : 0;
    if (s && looks_hex(s))
        return ps_error(PS_EUSAGE, "%s: '%s' is not a decimal byte count", what, s);
    if (!s || !*s || end == s || !(v > 0))
        return ps_error(PS_EUSAGE, "%s: '%s' is not a positive byte count", what, s ? s : "");
    /* strtod skips leading blanks, so trailing ones go too, as ps_parse_long's */
    size_t n = strlen(end);
    while (n && (end[n - 1] == ' ' || end[n - 1] == '\t'))
        n--;
    snprintf(unit, sizeof unit, "%.*s", (int)(n < sizeof unit - 1 ? n : sizeof unit - 1), end);
    for (size_t i = 0; n < sizeof unit && i < sizeof u / sizeof *u; i++)
        if (!strcmp(unit, u[i].suf)) {
            if (!(v * u[i].mul <= 1e30))
                return ps_error(PS_EUSAGE, "%s: '%s' is out of range (at most 1e30 bytes)",
                                 what, s);
            /* bytes are whole: 1.5 was a capacity of 1.5 bytes (printed "2 B"),
             * likely 1.5G meant; a unit's fraction rounds down (0.1KiB: 102) */
            if (u[i].mul == 1 && v != floor(v))
                return ps_error(PS_EUSAGE, "%s: '%s' is not a whole number of bytes (with "
                                 "a unit: %sG = %se9, %sGiB = %s x 2^30)", what, s,
                                 PS_DBL(v), PS_DBL(v), PS_DBL(v), PS_DBL(v));
            if (v * u[i].mul < 1) /* 0.4 read as a capacity of 0 bytes */
                return ps_error(PS_EUSAGE, "%s: '%s' is less than one byte", what, s);
            *out = floor(v * u[i].mul);
            return 0;
        }
    return ps_error(PS_EUSAGE, "%s: unknown unit '%s' in '%s' (B; k or K, M, G, T, with or "
                     "without B: powers of 1000; KiB, MiB, GiB, TiB: of 1024)", what, end, s);
}

int ps_parse_count(const char *s, const char *what, long lo, long hi, long *out)
{
    double v;
    int rc = ps_parse_double(s, what, &v);
    if (rc < 0)
        return rc;
    if (v != floor(v))
        return ps_error(PS_EUSAGE, "%s: '%s' is not a whole number", what, s);
    if (v < lo || v > hi)
        return out_of_range(what, s, lo, hi, v < lo);
    *out = (long)v;
    return 0;
}

static int parse_list(const char *s, const char *what, long lo, long hi, long **out, int *n,
                      int (*one)(const char *, const char *, long, long, long *));

int ps_parse_long_list(const char *s, const char *what, long lo, long hi,
                        long **out, int *n)
{
    return parse_list(s, what, lo, hi, out, n, ps_parse_long);
}

int ps_parse_count_list(const char *s, const char *what, long lo, long hi, long **out, int *n)
{
    return parse_list(s, what, lo, hi, out, n, ps_parse_count);
}

static int parse_list(const char *s, const char *what, long lo, long hi, long **out, int *n,
                      int (*one)(const char *, const char *, long, long, long *))
{
    *out = NULL;
    *n = 0;
    if (!s || !*s)
        return ps_error(PS_EUSAGE, "%s: empty list", what);
    int cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    long *v = calloc((size_t)cap, sizeof *v);
    if (!v)
        return ps_error(PS_ENOMEM, "out of memory");
    char *copy = strdup(s);
    if (!copy) {
        free(v);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    int k = 0, rc = 0;
    char *tok = copy;
    for (int i = 0; i < cap; i++) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = 0;
        if ((rc = one(tok, what, lo, hi, &v[k])) < 0)
            break;
        k++;
        if (!comma)
            break;
        tok = comma + 1;
    }
    free(copy);
    if (rc < 0) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return 0;
}

uint64_t ps_fnv1a(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

int ps_file_hash(const char *path, char hex[17])
{
    FILE *f = fopen(path, "rb");
    if (!f && errno == ENOMEM)
        return ps_error(PS_ENOMEM, "%s: out of memory opening it", path);
    if (!f)
        return ps_error(PS_EIO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char buf[65536];
    uint64_t h = PS_FNV_INIT;
    size_t r;
    while ((r = fread(buf, 1, sizeof buf, f)) > 0)
        h = ps_fnv1a(buf, r, h);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return ps_error(PS_EIO, "%s: read error", path);
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
    return 0;
}

int ps_read_file(const char *path, char **buf, size_t *len)
{
    *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f && errno == ENOMEM) /* fopen allocates its FILE */
        return ps_error(PS_ENOMEM, "%s: out of memory opening it", path);
    if (!f)
        return ps_error(PS_EIO, "%s: cannot open: %s", path, strerror(errno));
    int rc = ps_io_read(path);
    if (rc < 0) {
        fclose(f);
        return rc;
    }
    struct stat st; /* a file is read whole; a device or pipe up to PS_READ_MAX */
    int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);
    if (!b) {
        fclose(f);
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (!regular && cap >= PS_READ_MAX) {
                free(b);
                fclose(f);
                return ps_error(PS_EIO, "%s: longer than %d MiB, the most pipesim reads from a "
                                 "device or pipe (an endless one such as /dev/zero?)", path,
                                 PS_READ_MAX >> 20);
            }
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                fclose(f);
                return ps_error(PS_ENOMEM, "%s: out of memory", path);
            }
            b = nb;
            cap *= 2;
        }
        errno = 0;
        size_t r = fread(b + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f), e = errno;
    fclose(f);
    if (bad) {
        free(b);
        return ps_error(PS_EIO, "%s: cannot read: %s", path, strerror(e ? e : EIO));
    }
    b[n] = 0;
    *buf = b;
    if (len)
        *len = n;
    return 0;
}

void ps_human_bytes(double b, char *buf, size_t n)
{
    static const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    double v = b;
    int i = 0;
    while (fabs(v) >= 1024 && i < 5) {
        v /= 1024;
        i++;
    }
    if (fabs(v) >= 1000 && i == 5) /* past the largest unit: 1e300 printed 301 digits */
        snprintf(buf, n, "%.2e B", b);
    else
        snprintf(buf, n, i ? "%.2f %s" : "%.0f %s", v, u[i]);
}

void ps_human_seconds(double s, char *buf, size_t n)
{
    if (!isfinite(s))
        snprintf(buf, n, "-");
    else if (s == 0)
        snprintf(buf, n, "0 s");
    else if (fabs(s) >= 0.9999995) /* what would print as 1000.000 ms */
        snprintf(buf, n, "%.3f s", s);
    else if (fabs(s) >= 0.9999995e-3)
        snprintf(buf, n, "%.3f ms", s * 1e3);
    else if (fabs(s) >= 0.9999995e-6)
        snprintf(buf, n, "%.3f us", s * 1e6);
    else
        snprintf(buf, n, "%.0f ns", s * 1e9);
}

void ps_human_seconds_delta(double s, char *buf, size_t n)
{
    int plus = isfinite(s) && s > 0 && n > 1;
    if (plus)
        buf[0] = '+';
    ps_human_seconds(s, buf + plus, n - (size_t)plus);
}

void ps_human_count(double v, char *buf, size_t n)
{
    static const char *const word[] = { "", "thousand", "million", "billion", "trillion" };
    int i = 0;
    double w = v;
    while (fabs(v) >= 999.995 && i < 4) { /* what would print as 1000.00 of a word */
        v /= 1000;
        i++;
    }
    if (fabs(v) >= 999999.995) /* a million trillion: 1e300 printed 289 digits */
        snprintf(buf, n, "%.2e", w);
    else if (i)
        snprintf(buf, n, "%.2f %s", v, word[i]);
    else
        snprintf(buf, n, "%.0f", v);
}

void ps_fixed(double v, int decimals, char *buf, size_t n)
{
    snprintf(buf, n, "%.*f", decimals, v);
    if (v != 0 && isfinite(v) && strspn(buf, "-0.") == strlen(buf)) /* a nonzero value as 0 */
        snprintf(buf, n, "%.3g", v);
}

int ps_is_ctrl(int c)
{
    return (unsigned char)c < 0x20 || (unsigned char)c == 0x7f;
}

void ps_put_printable(FILE *f, const char *s, int len)
{
    for (int i = 0; (len < 0 || i < len) && s[i]; i++)
        fputc(ps_is_ctrl(s[i]) ? '?' : s[i], f);
}

char *ps_printable_in_place(char *s)
{
    for (char *c = s; *c; c++)
        if (ps_is_ctrl(*c))
            *c = '?';
    return s;
}

struct memstream {
    char **buf;
    size_t *len, cap;
    int failed;
};

/* A failed write returns 0, never -1: fopencookie(3), "The function must
 * not return a negative value"; glibc 2.36's fwrite takes a -1 as a huge
 * count written and copies on from past the caller's buffer (a SIGSEGV in
 * tests/test_ps_strbuf.c once the address space ran out). */
static ssize_t memstream_write(void *cookie, const char *p, size_t n)
{
    struct memstream *m = cookie;
    if (m->failed || n >= SIZE_MAX / 2 - *m->len) {
        m->failed = 1;
        errno = ENOMEM;
        return 0;
    }
    if (*m->len + n + 1 > m->cap) {
        size_t cap = m->cap ? m->cap : 4096;
        while (cap < *m->len + n + 1)
            cap *= 2;
        char *b = realloc(*m->buf, cap);
        if (!b) {
            m->failed = 1;
            errno = ENOMEM;
            return 0;
        }
        *m->buf = b;
        m->cap = cap;
    }
    memcpy(*m->buf + *m->len, p, n);
    *m->len += n;
    (*m->buf)[*m->len] = 0;
    return (ssize_t)n;
}

static int memstream_close(void *cookie)
{
    struct memstream *m = cookie;
    int failed = m->failed;
    free(m);
    return failed ? -1 : 0;
}

/* ps_util.h */
FILE *ps_memstream_open(char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    struct memstream *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->buf = buf;
    m->len = len;
    FILE *f = fopencookie(m, "w", (cookie_io_functions_t){ .write = memstream_write,
                                                           .close = memstream_close });
    if (!f)
        free(m);
    return f;
}

/* ps_util.h */
int ps_memstream_close(FILE *f, char **buf, size_t *len)
{
    int bad = ferror(f);
    if (fclose(f) != 0) /* flushes: a failed last write shows here */
        bad = 1;
    if (!bad && !*buf && !(*buf = calloc(1, 1)))
        bad = 1;
    if (bad) {
        free(*buf);
        *buf = NULL;
        *len = 0;
        return -1;
    }
    return 0;
}

int64_t ps_us_to_ns(double us)
{
    double whole = trunc(us);
    return (int64_t)whole * 1000 + llround((us - whole) * 1000.0);
}

const char *ps_fmt_double(double v, char *buf, size_t n)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "%.17g", v);
        return buf;
    }
    for (int digits = 15; digits < 17; digits++) {
        snprintf(buf, n, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return buf;
    }
    snprintf(buf, n, "%.17g", v); /* 17 significant digits always read back */
    return buf;
}

/* The decimal text e ("-6.00000000000000e-05", as %.*e writes) times
 * 10^shift, as %.*g (prec significant digits) would write that decimal: its
 * digits, not a double's, so nothing is rounded. */
static void shift_decimal(const char *e, int shift, int prec, char *buf, size_t n)
{
    char dg[32];
    int nd = 0, neg = *e == '-';
    const char *p = e + neg;
    for (; *p && *p != 'e' && nd < (int)sizeof dg - 1; p++)
        if (*p != '.')
            dg[nd++] = *p;
    while (nd > 1 && dg[nd - 1] == '0')
        nd--;
    dg[nd] = 0;
    int x = atoi(p + 1) + shift; /* the value is d0.d1d2... x 10^x */
    size_t k = 0;
#define PUT(c) (k + 1 < n ? (void)(buf[k++] = (char)(c)) : (void)0)
    if (neg)
        PUT('-');
    if (x < -4 || x >= prec) {
        PUT(dg[0]);
        if (nd > 1)
            PUT('.');
        for (int i = 1; i < nd; i++)
            PUT(dg[i]);
        k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "e%c%02d", x < 0 ? '-' : '+',
                              abs(x));
        k = k < n ? k : n - 1;
    } else if (x < 0) {
        PUT('0');
        PUT('.');
        for (int i = -1; i > x; i--)
            PUT('0');
        for (int i = 0; i < nd; i++)
            PUT(dg[i]);
    } else {
        for (int i = 0; i <= x || i < nd; i++) {
            if (i == x + 1)
                PUT('.');
            PUT(i < nd ? dg[i] : '0');
        }
    }
#undef PUT
    buf[k] = 0;
}

const char *ps_fmt_exp(double v, int shift, char *buf, size_t n)
{
    if (isfinite(v) && v != 0 && abs(shift) < 100)
        for (int digits = 15; digits <= 17; digits++) {
            char e[48];
            snprintf(e, sizeof e, "%.*e", digits - 1, v);
            if (strtod(e, NULL) != v)
                continue;
            shift_decimal(e, shift, digits, buf, n);
            if (ps_strtod_exp(buf, -shift) == v)
                return buf;
            break;
        }
    return ps_fmt_double(v * pow(10, shift), buf, n);
}

void ps_csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void ps_utf8_trim_cut(char *s)
{
    size_t n = strlen(s), i = n;
    while (i > 0 && n - i < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--; /* back over up to three continuation bytes to their lead */
    if (i == 0)
        return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (want > 1 && n - (i - 1) < want)
        s[i - 1] = 0;
}
