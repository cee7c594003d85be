/* The prose template files (see stu_tmpl.h): a strict loader and the fill. */
#include "studies/stu_tmpl.h"
#include "studies/stu_data.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct sect {
    const char *text; /* into buf; NULL: not in the file */
    size_t len;
    int line;         /* of the "@@" line */
};

struct stu_tmpl {
    char path[4096];
    char *buf;
    const struct stu_tmpl_sect *spec;
    int n;
    struct sect s[];
};

static int is_name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

static int find(const stu_tmpl *t, const char *name, size_t len)
{
    for (int i = 0; i < t->n; i++)
        if (strlen(t->spec[i].name) == len && !strncmp(t->spec[i].name, name, len))
            return i;
    return -1;
}

/* Whether the space-separated list has the word name[0..len). */
static int has_var(const char *vars, const char *name, size_t len)
{
    for (const char *p = vars; *p;) {
        size_t w = strcspn(p, " ");
        if (w == len && !strncmp(p, name, len))
            return 1;
        p += w;
        p += strspn(p, " ");
    }
    return 0;
}

/* The placeholder at p ("{{"), up to end: its name and length; -1 unless a
 * name (a-z, 0-9, _) and "}}" follow. */
static int placeholder(const char *p, const char *end, const char **name, size_t *len)
{
    const char *q = p + 2;
    while (q < end && is_name_char(*q))
        q++;
    if (q == p + 2 || q + 1 >= end || q[0] != '}' || q[1] != '}')
        return -1;
    *name = p + 2;
    *len = (size_t)(q - *name);
    return 0;
}

/* One line of section s: its placeholders must be declared. */
static int check_line(const stu_tmpl *t, int s, const char *p, const char *end, int line)
{
    for (const char *q = p; (q = memmem(q, (size_t)(end - q), "{{", 2));) {
        const char *name;
        size_t len;
        if (placeholder(q, end, &name, &len) < 0) {
            /* "{{A_IMB}}": closed, but no name a placeholder can have */
            const char *cl = memmem(q + 2, (size_t)(end - q - 2), "}}", 2);
            if (cl && !memmem(q + 2, (size_t)(cl - q - 2), "{{", 2))
                return ps_error(PS_EPARSE, "%s:%d: unknown placeholder '%.*s' in section '%s' "
                                "(a name is of a-z, 0-9, _)", t->path, line,
                                (int)(cl + 2 - q), q, t->spec[s].name);
            return ps_error(PS_EPARSE, "%s:%d: unterminated '{{' in section '%s' (want "
                            "'{{name}}', name of a-z, 0-9, _)", t->path, line, t->spec[s].name);
        }
        if (!has_var(t->spec[s].vars, name, len))
            return ps_error(PS_EPARSE, "%s:%d: unknown placeholder '{{%.*s}}' in section '%s'",
                            t->path, line, (int)len, name, t->spec[s].name);
        q = name + len + 2;
    }
    return 0;
}

static int parse(stu_tmpl *t, const char *p, const char *end)
{
    int line = 0, cur = -1, rc;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
        line++;
        if (eol - p >= 2 && p[0] == '@' && p[1] == '@') {
            const char *name = p + 3;
            size_t len = 0;
            while (name + len < eol && is_name_char(name[len]))
                len++;
            if (eol - p < 4 || p[2] != ' ' || !len || name + len != eol)
                return ps_error(PS_EPARSE, "%s:%d: malformed section line '%.*s' (want '@@ "
                                "name', name of a-z, 0-9, _)", t->path, line, (int)(eol - p), p);
            if ((cur = find(t, name, len)) < 0)
                return ps_error(PS_EPARSE, "%s:%d: unknown section '%.*s'", t->path, line,
                                (int)len, name);
            if (t->s[cur].text)
                return ps_error(PS_EPARSE, "%s:%d: a second section '%s' (the first is on "
                                "line %d)", t->path, line, t->spec[cur].name, t->s[cur].line);
            t->s[cur].text = nl ? nl + 1 : end;
            t->s[cur].line = line;
        } else if (cur >= 0) {
            if ((rc = check_line(t, cur, p, eol, line)) < 0)
                return rc;
            t->s[cur].len = (size_t)((nl ? nl + 1 : end) - t->s[cur].text);
        }
        p = nl ? nl + 1 : end;
    }
    for (int i = 0; i < t->n; i++)
        if (!t->s[i].text && !line) /* no line to name */
            return ps_error(PS_EPARSE, "%s: missing section '%s' (the file is empty)", t->path,
                            t->spec[i].name);
        else if (!t->s[i].text)
            return ps_error(PS_EPARSE, "%s:%d: missing section '%s' (end of file)", t->path,
                            line, t->spec[i].name);
    return 0;
}

int stu_tmpl_load(const char *dir, const char *name, const struct stu_tmpl_sect *spec, int n,
                  stu_tmpl **out)
{
    *out = NULL;
    stu_tmpl *t = calloc(1, sizeof *t + sizeof *t->s * (size_t)n);
    if (!t)
        return ps_error(PS_ENOMEM, "out of memory");
    t->spec = spec;
    t->n = n;
    size_t len;
    int rc;
    if ((rc = stu_join(dir, name, t->path, sizeof t->path)) < 0 ||
        (rc = stu_data_regular(t->path)) < 0 || (rc = ps_read_file(t->path, &t->buf, &len)) < 0)
        goto err_free;
    int nl, nc;
    if (ps_nul_at(t->buf, len, &nl, &nc)) {
        rc = ps_error(PS_EPARSE, "%s:%d:%d: binary data (NUL byte) in a template", t->path, nl,
                      nc);
        goto err_free;
    }
    size_t bom = ps_bom_len(t->buf, len);
    if ((rc = parse(t, t->buf + bom, t->buf + len)) < 0)
        goto err_free;
    *out = t;
    return 0;

err_free:
    stu_tmpl_free(t);
    return rc;
}

void stu_tmpl_free(stu_tmpl *t)
{
    if (!t)
        return;
    free(t->buf);
    free(t);
}

void stu_vals_init(struct stu_vals *v)
{
    v->n = 0;
    v->used = 0;
}

/* The slot of name (a new one if unset). */
static int slot(struct stu_vals *v, const char *name)
{
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->name[i], name))
            return i;
    if (v->n == STU_VALS_MAX)
        PS_BUG("more than %d template values (at '%s')", STU_VALS_MAX, name);
    v->name[v->n] = name;
    return v->n++;
}

void stu_vals_set(struct stu_vals *v, const char *name, const char *fmt, ...)
{
    int i = slot(v, name);
    size_t room = sizeof v->buf - v->used;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(v->buf + v->used, room, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= room)
        PS_BUG("template values over %d bytes (at '%s')", STU_VALS_BYTES, name);
    v->off[i] = v->used;
    v->used += (size_t)w + 1;
}

static const char *value(const struct stu_vals *v, const char *name, size_t len)
{
    for (int i = 0; v && i < v->n; i++)
        if (strlen(v->name[i]) == len && !strncmp(v->name[i], name, len))
            return v->buf + v->off[i];
    return NULL;
}

/* Where the filled text goes: a FILE, or a buffer of cap bytes. */
struct sink {
    FILE *f;
    char *b;
    size_t n, cap;
};

static void emit(struct sink *k, const char *p, size_t len)
{
    if (k->f) {
        fwrite(p, 1, len, k->f);
        return;
    }
    if (k->n + len >= k->cap)
        PS_BUG("template values over %d bytes", STU_VALS_BYTES);
    memcpy(k->b + k->n, p, len);
    k->n += len;
}

static void fill(struct sink *k, const stu_tmpl *t, const char *section, const struct stu_vals *v)
{
    int s = find(t, section, strlen(section));
    if (s < 0)
        PS_BUG("%s: section '%s' not declared", t->path, section);
    const char *p = t->s[s].text, *end = p + t->s[s].len, *q;
    while ((q = memmem(p, (size_t)(end - p), "{{", 2))) {
        const char *name, *val;
        size_t len;
        PS_ASSERT(placeholder(q, end, &name, &len) == 0); /* checked on load */
        if (!(val = value(v, name, len)))
            PS_BUG("%s: section '%s': no value for '{{%.*s}}'", t->path, section, (int)len,
                   name);
        emit(k, p, (size_t)(q - p));
        emit(k, val, strlen(val));
        p = name + len + 2;
    }
    emit(k, p, (size_t)(end - p));
}

void stu_tmpl_put(FILE *f, const stu_tmpl *t, const char *section, const struct stu_vals *v)
{
    struct sink k = { .f = f };
    fill(&k, t, section, v);
}

void stu_vals_text(struct stu_vals *v, const char *name, const stu_tmpl *t,
                   const char *section, const struct stu_vals *sub)
{
    int i = slot(v, name);
    struct sink k = { .b = v->buf + v->used, .cap = sizeof v->buf - v->used };
    fill(&k, t, section, sub);
    if (k.n && k.b[k.n - 1] == '\n')
        k.n--;
    k.b[k.n] = 0;
    v->off[i] = v->used;
    v->used += k.n + 1;
}
