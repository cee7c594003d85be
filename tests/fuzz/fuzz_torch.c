/* libFuzzer target: the PyTorch profiler trace importer (mdl_torch_import)
 * and its sizes sidecar CSV (mdl_torch_sizes_load). An input starting with
 * '#' or "name" is a sidecar for a fixed two-layer trace; anything else is a
 * trace, imported without a sidecar (batch 4). What imports must be a valid
 * measured profile. */
#include "fuzz_common.h"
#include "models/mdl_torch.h"

#include <fcntl.h>
#include <unistd.h>

static char trace_path[64], sizes_path[80], fixed_trace[64];

static const char fixed[] =
    "[{\"ph\":\"X\",\"name\":\"layer:a\",\"ts\":100,\"dur\":50,\"pid\":1,\"tid\":7},"
    "{\"ph\":\"X\",\"name\":\"layer:b\",\"ts\":160,\"dur\":20,\"pid\":1,\"tid\":7}]";

static void put(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data, n) != (ssize_t)n)
        abort();
    close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(trace_path, sizeof trace_path, "%s/fuzz-torch-%ld.json", dir, (long)getpid());
    snprintf(sizes_path, sizeof sizes_path, "%s/fuzz-torch-%ld.csv", dir, (long)getpid());
    snprintf(fixed_trace, sizeof fixed_trace, "%s/fuzz-torch-%ld-fixed.json", dir,
             (long)getpid());
    put(fixed_trace, fixed, sizeof fixed - 1);
    return 0;
}

static void check_profile(const struct mdl_profile *p)
{
    FUZZ_CHECK(p->measured && p->n_layers > 0);
    for (int i = 0; i < p->n_layers; i++) {
        const struct mdl_layer *l = &p->layers[i];
        FUZZ_CHECK(l->name[0]);
        FUZZ_CHECK(fuzz_finite_nonneg(l->fwd) && fuzz_finite_nonneg(l->bwd));
        FUZZ_CHECK(fuzz_finite_nonneg(l->params) && fuzz_finite_nonneg(l->out_bytes) &&
                   fuzz_finite_nonneg(l->stash_bytes) && l->at_batch > 0 &&
                   isfinite(l->at_batch));
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(p->layers[j].name, l->name));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sidecar = size > 0 && (data[0] == '#' || (size >= 4 && !memcmp(data, "name", 4)));
    struct mdl_torch_opts o = { .batch = 4 };
    const char *path = trace_path;
    if (sidecar) {
        put(sizes_path, data, size);
        o.sizes_path = sizes_path;
        o.batch = 0;
        path = fixed_trace;
    } else {
        put(trace_path, data, size);
        o.sizes_path = NULL; /* <trace>.layers.csv, which never exists */
    }
    struct mdl_profile *p = NULL;
    struct mdl_torch_report rep;
    int rc = mdl_torch_import(path, &o, &p, &rep);
    if (rc < 0) {
        fuzz_check_error(rc, NULL);
        FUZZ_CHECK(p == NULL);
    } else {
        check_profile(p);
        mdl_profile_free(p);
    }
    unlink(trace_path);
    unlink(sizes_path);
    ps_error_clear();
    return 0;
}
