#include "base/ps_jsonpos.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct scan {
    const char *p, *end;
};

static void ws(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static void skip_string(struct scan *s)
{
    for (s->p++; s->p < s->end; s->p++) {
        if (*s->p == '\\')
            s->p++;
        else if (*s->p == '"') {
            s->p++;
            return;
        }
    }
}

static void skip_value(struct scan *s)
{
    ws(s);
    if (s->p >= s->end)
        return;
    if (*s->p == '"') {
        skip_string(s);
        return;
    }
    if (*s->p == '{' || *s->p == '[') {
        int depth = 0;
        while (s->p < s->end) {
            char c = *s->p;
            if (c == '"') {
                skip_string(s);
                continue;
            }
            s->p++;
            if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                return;
        }
        return;
    }
    while (s->p < s->end && !strchr(",]} \t\r\n", *s->p))
        s->p++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Compares the JSON string at s->p (at its quote) with want[0..n); leaves
 * s->p after the string. Non-ASCII escapes never match. */
static int key_is(struct scan *s, const char *want, size_t n)
{
    const char *q = s->p + 1;
    size_t i = 0;
    int same = 1;
    while (q < s->end && *q != '"') {
        int c = (unsigned char)*q++;
        if (c == '\\' && q < s->end) {
            char e = *q++;
            static const char esc[] = "\"\"\\\\//b\bf\fn\nr\rt\t"; /* pairs: escape, char */
            const char *map = e ? strchr(esc, e) : NULL;
            if (e == 'u' && s->end - q >= 4) {
                int v = 0;
                for (int k = 0; k < 4; k++) {
                    int h = hexval(q[k]);
                    v = h < 0 || v < 0 ? -1 : v * 16 + h;
                }
                q += 4;
                c = v >= 0 && v < 0x80 ? v : -1;
            } else {
                c = map && (map - esc) % 2 == 0 ? map[1] : -1;
            }
        }
        if (c < 0 || i >= n || want[i] != (char)c)
            same = 0;
        i++;
    }
    skip_string(s);
    return same && i == n;
}

/* Moves s into member key[0..n) of the object at s->p; *at = the key. */
static int enter_member(struct scan *s, const char *key, size_t n, const char **at)
{
    ws(s);
    if (s->p >= s->end || *s->p != '{')
        return 0;
    s->p++;
    for (;;) {
        ws(s);
        if (s->p >= s->end || *s->p != '"')
            return 0;
        const char *k = s->p;
        int hit = key_is(s, key, n);
        ws(s);
        if (s->p < s->end && *s->p == ':')
            s->p++;
        ws(s);
        if (hit) {
            *at = k;
            return 1;
        }
        skip_value(s);
        ws(s);
        if (s->p >= s->end || *s->p != ',')
            return 0;
        s->p++;
    }
}

static int enter_element(struct scan *s, long idx, const char **at)
{
    ws(s);
    if (s->p >= s->end || *s->p != '[')
        return 0;
    s->p++;
    for (long i = 0;; i++) {
        ws(s);
        if (s->p >= s->end || *s->p == ']')
            return 0;
        if (i == idx) {
            *at = s->p;
            return 1;
        }
        skip_value(s);
        ws(s);
        if (s->p >= s->end || *s->p != ',')
            return 0;
        s->p++;
    }
}

int ps_json_locate(const char *text, size_t len, const char *path, const char *key,
                    int *line, int *col)
{
    struct scan s = { text, text + len };
    ws(&s);
    const char *at = s.p; /* the innermost position found so far */
    int found = 1;
    const char *p = path;
    while (found && *p) {
        if (*p == '.')
            p++;
        if (*p == '[') {
            char *e;
            long idx = strtol(p + 1, &e, 10);
            if (e == p + 1 || *e != ']' || idx < 0)
                return -1;
            found = enter_element(&s, idx, &at);
            p = e + 1;
        } else {
            size_t n = strcspn(p, ".[");
            if (!n)
                return -1;
            found = enter_member(&s, p, n, &at);
            p += n;
        }
    }
    if (found && key) {
        const char *k = at;
        if (enter_member(&s, key, strlen(key), &k))
            at = k;
        else
            found = 0;
    }
    int ln = 1, cl = 1;
    for (const char *c = text; c < at; c++) {
        if (*c == '\n') {
            ln++;
            cl = 1;
        } else {
            cl++;
        }
    }
    *line = ln;
    *col = cl;
    return found ? 0 : 1;
}

static int is_path(const char *p)
{
    if (!*p)
        return 0;
    for (; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.[]-", *p))
            return 0;
    return 1;
}

int ps_json_error_at(int rc, const char *name, const char *text, size_t len,
                      const char *alias)
{
    if (rc >= 0 || -rc == PS_ENOMEM || !text)
        return rc;
    char msg[PS_ERRMSG_MAX], shown[PS_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%s", ps_errmsg());
    /* the message shows the name's control characters as '?' (ps_error): so
     * must the prefix it is matched with (helper-126: a name with a newline
     * lost its line and column) */
    snprintf(shown, sizeof shown, "%s", name);
    ps_printable_in_place(shown);
    size_t nl = strlen(shown);
    if (strncmp(msg, shown, nl) || strncmp(msg + nl, ": ", 2))
        return rc;
    char *where = msg + nl + 2, *sep = strstr(where, ": ");
    if (!sep)
        return rc;
    *sep = 0;
    const char *rest = sep + 2;
    if (!is_path(where))
        return rc;
    const char *path = where;
    /* the alias names the document's root: "topology.links" is "links" and
     * "traceEvents[3]" is "[3]" (a bare event array) */
    size_t al = alias ? strlen(alias) : 0;
    if (al && !strncmp(path, alias, al) && (path[al] == 0 || path[al] == '.' || path[al] == '['))
        path += al + (path[al] == '.');
    char key[256], *k = NULL;
    static const char unknown[] = "unknown field '";
    if (!strncmp(rest, unknown, sizeof unknown - 1)) {
        const char *ks = rest + sizeof unknown - 1, *ke = strrchr(ks, '\'');
        if (ke && (size_t)(ke - ks) < sizeof key) {
            memcpy(key, ks, (size_t)(ke - ks));
            key[ke - ks] = 0;
            k = key;
        }
    }
    int line, col;
    if (ps_json_locate(text, len, path, k, &line, &col) < 0)
        return rc;
    return ps_error(-rc, "%s:%d:%d: %s: %s", shown, line, col, where, rest);
}
