/*
 * libFuzzer target: the command line. The input is split at newlines (or
 * NULs) into at most 24 arguments after "pipesim" and run through the real
 * main() (compiled as pipesim_main for this build), so command dispatch,
 * getopt, every option's value parser and the commands behind them run.
 *
 * Sandbox: the process works in a private temporary directory holding two
 * small fixtures, m.csv (4 layers) and t.json (4 devices); '/' in an
 * argument becomes '_', so every path stays inside it. Outputs the commands
 * write are removed after each input and the fixtures restored if one was
 * replaced. Inputs that name a number from 65 to 10^12 are skipped: they are
 * valid sizes (K, M, layers, devices) that only make a run long, not wrong.
 */
#include "fuzz_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int pipesim_main(int argc, char **argv);

static const char fix_csv[] =
    "name,kind,fwd_flops,bwd_flops,params,out_bytes,stash_bytes\n"
    "in,input,0,0,0,256,0\n"
    "a,dense,2e6,4e6,1000,256,512\n"
    "b,dense,2e6,4e6,1000,256,512\n"
    "c,dense,2e6,4e6,1000,256,512\n";
static const char fix_json[] =
    "{\"name\":\"fz\",\"devices\":[{\"name\":\"d\",\"count\":4,\"flops\":1e12,"
    "\"memory\":1e9,\"mem_bandwidth\":1e11,\"efficiency\":{\"max\":0.5,"
    "\"batch_half\":4,\"overhead_s\":1e-6}}],\"links\":[{\"name\":\"bus\","
    "\"endpoints\":\"*\",\"bandwidth\":1e10,\"latency\":1e-6,\"shared\":true}]}";
static struct stat st_csv, st_json;

static void put(const char *name, const char *text, struct stat *st)
{
    FILE *f = fopen(name, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0 || stat(name, st) != 0)
        abort();
}

static int changed(const char *name, const struct stat *st)
{
    struct stat now;
    return stat(name, &now) != 0 || now.st_ino != st->st_ino || now.st_size != st->st_size ||
           now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
           now.st_mtim.tv_nsec != st->st_mtim.tv_nsec;
}

static char sandbox[] = "/tmp/fuzz-cli-XXXXXX";

static void remove_tree(int at, const char *name);

static void remove_sandbox(void)
{
    if (chdir("/") == 0)
        remove_tree(AT_FDCWD, sandbox);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (!mkdtemp(sandbox) || chdir(sandbox) != 0)
        abort();
    atexit(remove_sandbox);
    put("m.csv", fix_csv, &st_csv);
    put("t.json", fix_json, &st_json);
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || dup2(fd, 1) < 0) /* results to stdout are not interesting */
        abort();
    close(fd);
    return 0;
}

/* Removes path, a directory with everything in it (export-chakra --out-dir). */
static void remove_tree(int at, const char *name)
{
    if (unlinkat(at, name, 0) == 0)
        return;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            remove_tree(dirfd(d), e->d_name);
    closedir(d);
    unlinkat(at, name, AT_REMOVEDIR);
}

static void clean_dir(void)
{
    DIR *d = opendir(".");
    struct dirent *e;
    if (!d)
        abort();
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "m.csv") &&
            strcmp(e->d_name, "t.json"))
            remove_tree(AT_FDCWD, e->d_name);
    closedir(d);
    if (changed("m.csv", &st_csv))
        put("m.csv", fix_csv, &st_csv);
    if (changed("t.json", &st_json))
        put("t.json", fix_json, &st_json);
}

/* 1 if s contains a decimal number in [65, 10^12). */
static int costly_number(const char *s)
{
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            continue;
        const char *q = p;
        while (*q == '0')
            q++;
        int nd = 0;
        unsigned long long v = 0;
        for (; *q >= '0' && *q <= '9'; q++, nd++)
            if (nd < 13)
                v = v * 10 + (unsigned)(*q - '0');
        if (nd <= 12 && v >= 65)
            return 1;
        p = q - 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[26] = { "pipesim" };
    int argc = 1;
    char *s = buf;
    for (size_t i = 0; i <= size && argc < 25; i++)
        if (i == size || buf[i] == '\n' || buf[i] == 0) {
            buf[i] = 0;
            argv[argc++] = s;
            s = buf + i + 1;
        } else if (buf[i] == '/') {
            buf[i] = '_';
        }
    argv[argc] = NULL;
    for (int i = 1; i < argc; i++)
        if (costly_number(argv[i])) {
            free(buf);
            return 0;
        }
    ps_error_clear();
    int st = pipesim_main(argc, argv);
    FUZZ_CHECK(st >= 0 && st <= 10);
    if (st != 0) { /* a failure says why, in one line */
        FUZZ_CHECK(ps_errcode() == 0 || ps_exit_status(ps_errcode()) == st);
    }
    fflush(stdout);
    clean_dir();
    free(buf);
    return 0;
}
