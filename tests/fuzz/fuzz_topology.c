/* libFuzzer target: the topology JSON loader (mdl_topology_parse) and a small
 * simulation on what it accepts. */
#include "fuzz_common.h"
#include "models/mdl_gen.h"
#include "models/mdl_topology.h"

static struct mdl_profile *prof;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (mdl_gen_mlp(4, 16, 0, &prof) < 0)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mdl_topology *t = NULL;
    int rc = mdl_topology_parse((const char *)data, size, "fuzz.json", &t);
    if (rc < 0) {
        fuzz_check_error(rc, "fuzz.json");
        FUZZ_CHECK(t == NULL);
        ps_error_clear();
        return 0;
    }
    FUZZ_CHECK(t && t->n_devices > 0);
    FUZZ_CHECK(fuzz_finite_nonneg(t->bytes_per_param));
    for (int i = 0; i < t->n_devices; i++) {
        const struct mdl_device *d = &t->devices[i];
        FUZZ_CHECK(d->name[0]);
        FUZZ_CHECK(isfinite(d->flops) && d->flops > 0 && isfinite(d->memory) && d->memory > 0);
        FUZZ_CHECK(d->eff_max > 0 && d->eff_max <= 1);
        FUZZ_CHECK(fuzz_finite_nonneg(d->batch_half) && fuzz_finite_nonneg(d->overhead_s) &&
                   fuzz_finite_nonneg(d->mem_bandwidth));
        /* the pairwise oracle for unique names, on topologies small enough for it */
        for (int j = 0; t->n_devices <= 4096 && j < i; j++)
            FUZZ_CHECK(strcmp(t->devices[j].name, d->name));
    }
    for (int i = 0; i < t->n_switches; i++) { /* node names are unique across both */
        FUZZ_CHECK(t->switches[i].name[0]);
        for (int j = 0; t->n_devices + t->n_switches <= 4096 && j < t->n_devices + i; j++)
            FUZZ_CHECK(strcmp(mdl_topology_node_name(t, j), t->switches[i].name));
    }
    for (int i = 0; i < t->n_links; i++) {
        const struct mdl_link *l = &t->links[i];
        /* a dedicated link joins 2 devices, or all of them ("*") */
        FUZZ_CHECK(l->n_ends >= 1 && (l->shared || l->n_ends == 2 || l->n_ends == t->n_devices));
        FUZZ_CHECK(isfinite(l->bandwidth) && l->bandwidth > 0 && fuzz_finite_nonneg(l->latency) &&
                   fuzz_finite_nonneg(l->overhead_s));
        for (int k = 0; k < l->n_ends; k++) /* devices, then switches */
            FUZZ_CHECK(l->ends[k] >= 0 && l->ends[k] < t->n_devices + t->n_switches);
        /* pairwise, on few links: unique names, and a two-endpoint link is
         * the first to join its devices (the one that carries their traffic) */
        for (int j = 0; t->n_links <= 4096 && j < i; j++)
            FUZZ_CHECK(strcmp(t->links[j].name, l->name));
        if (l->n_ends == 2 && t->n_links <= 4096 && t->n_devices <= 4096)
            FUZZ_CHECK(mdl_topology_link_between(t, l->ends[0], l->ends[1]) == i);
    }
    if (t->n_devices <= 64) { /* a simulation per accepted topology, kept small */
        int K = t->n_devices < 4 ? t->n_devices : 4;
        fuzz_predict(prof, t, K, 3, SCH_REMAT_ALWAYS);
        fuzz_partition(prof, t, K, 2);
    }
    mdl_topology_free(t);
    ps_error_clear();
    return 0;
}
