/* bench_load: loading a 1 M-layer profile CSV (target < 2 s) and a 1 M-device
 * topology (for comparison), each written to a temporary file first. The
 * load path must stay O(n log n): the layer-name check was pairwise once and
 * took about 40 minutes on this profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "models/mdl_profile.h"
#include "models/mdl_topology.h"
#include "base/ps_error.h"

enum { N_LAYERS = 1000000 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int write_profile(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "name,kind,fwd_flops,bwd_flops,params,out_bytes,stash_bytes\n");
    for (int i = 0; i < N_LAYERS; i++) /* names in no particular order */
        fprintf(f, "layer%d,dense,%d,%d,%d,4096,8192\n", (int)((i * 7919L) % N_LAYERS),
                1000000 + i % 977, 2000000 + i % 131, 1000 + i % 17);
    return fclose(f);
}

static int write_topology(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"name\": \"bench\", \"devices\": [{\"name\": \"gpu\", \"count\": %d, "
               "\"flops\": 1e12, \"memory\": 1e10}], \"links\": [", 1 << 20);
    for (int i = 0; i + 1 < 1 << 20; i++)
        fprintf(f, "%s{\"name\": \"l%d\", \"endpoints\": [\"gpu%d\", \"gpu%d\"], \"bandwidth\": 1e10}",
                i ? ", " : "", i, i, i + 1);
    fprintf(f, "]}\n");
    return fclose(f);
}

int main(void)
{
    char path[] = "/tmp/pipesim-bench-load-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("bench_load: mkstemp");
        return 1;
    }
    close(fd);
    int bad = 0;
    if (write_profile(path) != 0) {
        perror("bench_load: writing the profile");
        unlink(path);
        return 1;
    }
    struct mdl_profile *p = NULL;
    double t0 = now();
    int rc = mdl_profile_load(path, &p);
    double t = now() - t0;
    if (rc < 0 || p->n_layers != N_LAYERS) {
        fprintf(stderr, "bench_load: %s\n", rc < 0 ? ps_errmsg() : "wrong layer count");
        bad = 1;
    } else {
        printf("profile load, 1M layers: %.2f s (target < 2 s: %.2f of it)\n", t, t / 2);
    }
    mdl_profile_free(p);

    if (!bad && write_topology(path) == 0) {
        struct mdl_topology *topo = NULL;
        t0 = now();
        rc = mdl_topology_load(path, &topo);
        t = now() - t0;
        if (rc < 0) {
            fprintf(stderr, "bench_load: %s\n", ps_errmsg());
            bad = 1;
        } else {
            printf("topology load, 1M devices + 1M links: %.2f s\n", t);
        }
        mdl_topology_free(topo);
    }
    unlink(path);
    return bad;
}
