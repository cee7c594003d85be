#include "base/ps_json.h"
#include "base/ps_error.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local int failed;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *counted_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        failed = 1;
    return p;
}

static void install(void) { json_set_alloc_funcs(counted_malloc, free); }

void ps_json_begin(void)
{
    pthread_once(&once, install);
    failed = 0;
}

int ps_json_oom(void) { return failed; }

int ps_json_parse_error(const char *name, size_t len, int line, int col, const char *text)
{
    if (!len) /* a pipe named twice reads empty the second time */
        return ps_error(PS_EPARSE, "%s: the file is empty (no JSON document; a pipe is read "
                        "once)", name);
    /* jansson's words for a document of blanks alone, put at the line after
     * its last newline, column 0 (helper-139) */
    if (!strcmp(text, "'[' or '{' expected near end of file"))
        return ps_error(PS_EPARSE, "%s: the file holds only blanks (no JSON document)", name);
    return ps_error(PS_EPARSE, "%s:%d:%d: %s", name, line, col, text);
}

/* A whole real as an integer: 1 and *out set, 0 if it is not one, -1 if
 * out of memory. */
static int as_integer(const json_t *v, json_t **out)
{
    double x = json_real_value(v);
    if (!isfinite(x) || x != floor(x) || fabs(x) >= 9007199254740992.0)
        return 0;
    *out = json_integer((json_int_t)x);
    return *out ? 1 : -1;
}

static int integralize(json_t *v)
{
    json_t *n;
    int r;
    if (json_is_object(v)) {
        for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
            json_t *x = json_object_iter_value(it);
            if (json_is_real(x)) {
                if ((r = as_integer(x, &n)) < 0 || (r && json_object_iter_set_new(v, it, n)))
                    return -1;
            } else if (integralize(x) < 0) {
                return -1;
            }
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *x = json_array_get(v, i);
            if (json_is_real(x)) {
                if ((r = as_integer(x, &n)) < 0 || (r && json_array_set_new(v, i, n)))
                    return -1;
            } else if (integralize(x) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

int ps_json_dumpf(json_t *root, FILE *f, unsigned long flags)
{
    if (integralize(root) < 0) { /* a half-converted tree is a wrong result */
        failed = 1;
        return -1;
    }
    return json_dumpf(root, f, flags | JSON_REAL_PRECISION(PS_JSON_REAL_DIGITS));
}

int ps_json_print(json_t *root, FILE *f, int bad)
{
    if (bad || ps_json_oom()) { /* a field left out is a wrong result, not a short one */
        json_decref(root);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    errno = 0;
    int rc = ps_json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER), e = errno;
    fputc('\n', f);
    json_decref(root);
    if (rc && ps_json_oom())
        return ps_error(PS_ENOMEM, "out of memory writing JSON");
    return rc ? ps_error(PS_EIO, "%s: write failed: %s", f == stdout ? "stdout" : "the output",
                         strerror(e ? e : EIO))
              : 0;
}

json_t *ps_json_text(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    size_t n = strlen(s);
    char *c = j ? NULL : malloc(n + 1);
    if (!c) {
        failed |= !j; /* ps_json_oom() tells it from bad bytes */
        return j;
    }
    for (size_t i = 0; i < n;) {
        unsigned char b = (unsigned char)s[i];
        size_t len = b < 0x80 ? 1 : (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3
                   : (b & 0xf8) == 0xf0 ? 4 : 0;
        int ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
        if (ok) {
            memcpy(c + i, s + i, len);
            i += len;
        } else {
            c[i++] = '?';
        }
    }
    c[n] = 0;
    if (!(j = json_string(c))) /* overlong forms, surrogates: keep ASCII alone */
        for (size_t i = 0; i < n; i++)
            c[i] = (unsigned char)c[i] < 0x80 ? c[i] : '?';
    j = j ? j : json_string(c);
    free(c);
    return j;
}
