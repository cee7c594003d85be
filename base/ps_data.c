/* ps_data: the data folder and the bundled files in it (base/ps_data.h). */
#include "base/ps_data.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PIPESIM_SHARE_DIR
#define PIPESIM_SHARE_DIR "/usr/local/share/pipesim"
#endif
#ifndef PIPESIM_SRC_DIR
#define PIPESIM_SRC_DIR "."
#endif

enum layout { LAYOUT_SHARE, LAYOUT_SRC };

/* The installed folder of each kind and its place in the source tree. */
static const struct {
    const char *dir, *src;
} folders[] = {
    { "topologies", "models/topologies" },
    { "profiles", "models/profiles" },
    { "gpipe", "studies/gpipe" },
    { "torchgpipe", "studies/torchgpipe" },
};

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* PREFIX/share/pipesim for a program at PREFIX/bin/pipesim, if a folder. */
static int installed_root(char *out, size_t n)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return 0;
    exe[len] = 0;
    char *slash = strrchr(exe, '/'); /* .../bin/pipesim -> .../bin */
    if (!slash)
        return 0;
    *slash = 0;
    if (!(slash = strrchr(exe, '/'))) /* .../bin -> ... */
        return 0;
    *slash = 0;
    return (size_t)snprintf(out, n, "%s/share/pipesim", exe) < n && is_dir(out);
}

static int root(const char **how, enum layout *lay, char *out, size_t n)
{
    const char *data = getenv("PIPESIM_DATA");
    *lay = LAYOUT_SHARE;
    if (data && *data) {
        *how = "$PIPESIM_DATA";
        if ((size_t)snprintf(out, n, "%s", data) >= n)
            return ps_error(PS_EUSAGE, "$PIPESIM_DATA: path too long");
        if (!is_dir(out))
            return ps_error(PS_EIO, "$PIPESIM_DATA '%s' is not a folder (unset it to use the "
                             "installed data)", data);
        return 0;
    }
    if (installed_root(out, n)) {
        *how = "installed";
        return 0;
    }
    if ((size_t)snprintf(out, n, "%s/models/topologies", PIPESIM_SRC_DIR) < n && is_dir(out)) {
        *how = "source tree";
        *lay = LAYOUT_SRC;
        snprintf(out, n, "%s", PIPESIM_SRC_DIR);
        return 0;
    }
    if ((size_t)snprintf(out, n, "%s", PIPESIM_SHARE_DIR) < n && is_dir(out)) {
        *how = "prefix";
        return 0;
    }
    return ps_error(PS_EIO, "no data folder: $PIPESIM_DATA is not set, and neither "
                    "share/pipesim beside this program, the source tree " PIPESIM_SRC_DIR
                    " nor " PIPESIM_SHARE_DIR " is there (make install puts the files in "
                    "PREFIX/share/pipesim)");
}

int ps_data_root(const char **how, char *out, size_t n)
{
    enum layout lay;
    return root(how, &lay, out, n);
}

int ps_data_find(const char *dir, const char *file, char *out, size_t n)
{
    const char *how;
    enum layout lay;
    char base[4096];
    int rc = root(&how, &lay, base, sizeof base);
    if (rc < 0)
        return rc;
    const char *sub = dir;
    for (size_t i = 0; lay == LAYOUT_SRC && i < sizeof folders / sizeof *folders; i++)
        if (!strcmp(folders[i].dir, dir))
            sub = folders[i].src;
    int len = file ? snprintf(out, n, "%s/%s/%s", base, sub, file)
                   : snprintf(out, n, "%s/%s", base, sub);
    if (len < 0 || (size_t)len >= n)
        return ps_error(PS_EUSAGE, "%s/%s: path too long", base, sub);
    if (file ? is_file(out) : is_dir(out))
        return 0;
    /* $PIPESIM_DATA may name the folder of the file itself */
    if (file && !strcmp(how, "$PIPESIM_DATA") && (size_t)snprintf(out, n, "%s/%s", base, file) < n &&
        is_file(out))
        return 0;
    if (file)
        snprintf(out, n, "%s/%s/%s", base, sub, file); /* fit above */
    else
        snprintf(out, n, "%s/%s", base, sub);
    return ps_error(PS_EIO, "no %s (the data folder is %s: %s; `pipesim presets` lists what "
                    "it has)", out, base, how);
}
