/* ps_memavail — memory available to this process, and the check against
 * it (see ps_memavail.h). */
#include "base/ps_util.h"
#include "base/ps_memavail.h"
#include "base/ps_error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* ---- what is available ---- */

/* Keeps the smaller of the two figures, and its source. */
static void take(struct ps_mem_avail *a, double bytes, const char *source)
{
    if (bytes < 0)
        bytes = 0;
    if (bytes < a->bytes) {
        a->bytes = bytes;
        snprintf(a->source, sizeof a->source, "%s", source);
    }
}

/* The first line of a small file, without its newline; 0 if unreadable. */
static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = 0;
    return ok;
}

/* A file holding one byte count; -1 if absent, malformed or "max". */
static double read_bytes(const char *path)
{
    char buf[64], *end;
    if (!read_line(path, buf, sizeof buf))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (end == buf || *end || errno)
        return -1;
    return (double)v;
}

/* "Key:   N kB" of a /proc file (meminfo, self/status); -1 if absent. */
static double proc_kb(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    size_t kl = strlen(key);
    double v = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            unsigned long long kb;
            if (sscanf(line + kl + 1, "%llu", &kb) == 1)
                v = (double)kb * 1024;
            break;
        }
    fclose(f);
    return v;
}

/* Limits at dir/<cg> and every ancestor up to dir: limit minus usage. v1
 * reports "no limit" as a huge page-rounded number. */
static void cgroup_walk(struct ps_mem_avail *a, const char *dir, const char *cg,
                        const char *limit_file, const char *usage_file, const char *source)
{
    char path[8192], rel[2048];
    snprintf(rel, sizeof rel, "%s", cg);
    for (;;) {
        snprintf(path, sizeof path, "%s%s%s/%s", dir, *rel == '/' ? "" : "/", rel, limit_file);
        double limit = read_bytes(path);
        if (limit >= 0 && limit < 0x1p60) {
            snprintf(path, sizeof path, "%s%s%s/%s", dir, *rel == '/' ? "" : "/", rel,
                     usage_file);
            double usage = read_bytes(path);
            take(a, limit - (usage > 0 ? usage : 0), source);
        }
        char *slash = strrchr(rel, '/');
        if (!slash || !*rel || !strcmp(rel, "/"))
            break;
        if (slash == rel)
            rel[1] = 0; /* "/a" -> "/" */
        else
            *slash = 0;
    }
}

static int is_dir_with(const char *dir, const char *file)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

void ps_mem_available_at(const struct ps_mem_paths *p, struct ps_mem_avail *out)
{
    out->bytes = INFINITY;
    snprintf(out->source, sizeof out->source, "no limit found");
    double v = proc_kb(p->meminfo, "MemAvailable");
    if (v >= 0)
        take(out, v, "MemAvailable");
    FILE *f = fopen(p->self_cgroup, "r");
    if (!f)
        return;
    char line[4096], dir[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        /* id:controllers:path */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = 0;
        const char *ctl = c1 + 1, *cg = c2 + 1;
        if (!strcmp(line, "0") && !*ctl) {
            /* v2: the unified hierarchy at the root, or under unified/ (hybrid) */
            snprintf(dir, sizeof dir, "%s", p->cgroup_root);
            if (!is_dir_with(dir, "cgroup.controllers"))
                snprintf(dir, sizeof dir, "%s/unified", p->cgroup_root);
            cgroup_walk(out, dir, cg, "memory.max", "memory.current", "cgroup memory.max");
        } else {
            char ctls[256], *save = NULL;
            snprintf(ctls, sizeof ctls, "%s", ctl);
            for (char *t = strtok_r(ctls, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (!strcmp(t, "memory")) {
                    snprintf(dir, sizeof dir, "%s/memory", p->cgroup_root);
                    cgroup_walk(out, dir, cg, "memory.limit_in_bytes", "memory.usage_in_bytes",
                                "cgroup memory.limit_in_bytes");
                }
        }
    }
    fclose(f);
}

int ps_mem_parse_size(const char *s, const char *what, double *out)
{
    return ps_parse_bytes(s, what, out); /* whole bytes, at least one */
}

/* RLIMIT_AS and RLIMIT_DATA, less what the process already uses of them. */
static void take_rlimit(struct ps_mem_avail *a, int res, const char *status_key,
                        const char *source)
{
    struct rlimit rl;
    if (getrlimit(res, &rl) || rl.rlim_cur == RLIM_INFINITY)
        return;
    double used = proc_kb("/proc/self/status", status_key);
    take(a, (double)rl.rlim_cur - (used > 0 ? used : 0), source);
}

int ps_mem_available(struct ps_mem_avail *out)
{
    const char *env = getenv(PS_MEM_ENV);
    if (env && *env) {
        int rc = ps_mem_parse_size(env, PS_MEM_ENV, &out->bytes);
        if (rc < 0)
            return rc;
        snprintf(out->source, sizeof out->source, "%s", PS_MEM_ENV);
        return 0;
    }
    const struct ps_mem_paths real = { "/proc/meminfo", "/proc/self/cgroup", "/sys/fs/cgroup" };
    ps_mem_available_at(&real, out);
    take_rlimit(out, RLIMIT_AS, "VmSize", "RLIMIT_AS");
    take_rlimit(out, RLIMIT_DATA, "VmData", "RLIMIT_DATA");
    return 0;
}

int ps_mem_env_check(void)
{
    const char *env = getenv(PS_MEM_ENV);
    double b;
    return env && *env ? ps_mem_parse_size(env, PS_MEM_ENV, &b) : 0;
}

void ps_mem_format(double bytes, char *buf, size_t n)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    int u = 0;
    while (fabs(bytes) >= 1024 && u < 6) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.0f B", bytes);
    else
        snprintf(buf, n, "%.1f %s", bytes, units[u]);
}

int ps_mem_check(double need, const char *what, const char *detail, const char *hint)
{
    if (!(need >= PS_MEM_FLOOR))
        return 0;
    struct ps_mem_avail a;
    int rc = ps_mem_available(&a);
    if (rc < 0)
        return rc;
    if (!(need > PS_MEM_MARGIN * a.bytes))
        return 0;
    char nb[32], ab[32];
    ps_mem_format(need, nb, sizeof nb);
    ps_mem_format(a.bytes, ab, sizeof ab);
    return ps_error(PS_ENOMEM, "%s needs about %s%s%s%s but only %s is available (%s); %s",
                     what, nb, detail ? " (" : "", detail ? detail : "", detail ? ")" : "", ab,
                     a.source, hint ? hint : "set " PS_MEM_ENV " to override the check");
}

