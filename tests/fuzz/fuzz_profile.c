/* libFuzzer target: the layer-profile CSV loader (mdl_profile_parse), a
 * write/reload round trip of what it accepts, a small simulation of it and
 * every partition strategy on it. */
#include "fuzz_common.h"
#include "models/mdl_profile.h"
#include "models/mdl_topology.h"

#include <unistd.h>

static char tmp_path[64];
static struct mdl_topology *topo;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/fuzz-profile-%ld.csv", (long)getpid());
    struct mdl_device d = { .flops = 1e12, .memory = 1e10, .mem_bandwidth = 1e11,
                            .eff_max = 0.5, .batch_half = 4, .overhead_s = 1e-6 };
    if (mdl_topology_chain(2, &d, 1e10, 1e-6, &topo) < 0)
        abort();
    return 0;
}

static void same_layers(const struct mdl_profile *a, const struct mdl_profile *b)
{
    FUZZ_CHECK(a->n_layers == b->n_layers);
    FUZZ_CHECK(a->measured == b->measured);
    for (int i = 0; i < a->n_layers; i++) {
        const struct mdl_layer *x = &a->layers[i], *y = &b->layers[i];
        FUZZ_CHECK(!strcmp(x->name, y->name));
        FUZZ_CHECK(!strcmp(x->kind, y->kind));
        /* measured times go through ms and back: allow the last bits */
        double tol = a->measured ? 1e-15 : 0;
        FUZZ_CHECK(fabs(x->fwd - y->fwd) <= tol * x->fwd);
        FUZZ_CHECK(fabs(x->bwd - y->bwd) <= tol * x->bwd);
        FUZZ_CHECK(x->at_batch == y->at_batch && x->params == y->params &&
                   x->out_bytes == y->out_bytes && x->stash_bytes == y->stash_bytes &&
                   x->stash_shared_bytes == y->stash_shared_bytes &&
                   x->carry_bytes == y->carry_bytes);
        /* the products as written back, marks included (conv, wino) */
        const struct mdl_work *u = x->work, *v = y->work;
        FUZZ_CHECK((u && u->n_gemms) == (v && v->n_gemms));
        if (!u || !v)
            continue;
        FUZZ_CHECK(u->n_gemms == v->n_gemms);
        for (int g = 0; g < u->n_gemms; g++) {
            const struct mdl_gemm *e = &u->gemms[g], *f = &v->gemms[g];
            FUZZ_CHECK(e->rows == f->rows && e->k == f->k && e->n == f->n &&
                       e->count == f->count && e->weight == f->weight && e->in == f->in &&
                       e->conv == f->conv && e->wino == f->wino);
        }
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names are unique: sorted, no two neighbours equal (a pairwise check would
 * be quadratic on the large regression inputs). */
static void unique_names(const struct mdl_profile *p)
{
    const char **names = malloc(sizeof *names * (size_t)p->n_layers);
    FUZZ_CHECK(names != NULL);
    for (int i = 0; i < p->n_layers; i++)
        names[i] = p->layers[i].name;
    qsort(names, (size_t)p->n_layers, sizeof *names, cmp_str);
    for (int i = 1; i < p->n_layers; i++)
        FUZZ_CHECK(strcmp(names[i - 1], names[i]));
    free(names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mdl_profile *p = NULL, *q = NULL;
    int rc = mdl_profile_parse((const char *)data, size, "fuzz.csv", &p);
    if (rc < 0) {
        fuzz_check_error(rc, "fuzz.csv");
        FUZZ_CHECK(p == NULL);
        ps_error_clear();
        return 0;
    }
    FUZZ_CHECK(p && p->n_layers > 0);
    for (int i = 0; i < p->n_layers; i++) {
        const struct mdl_layer *l = &p->layers[i];
        FUZZ_CHECK(l->name[0]);
        FUZZ_CHECK(fuzz_finite_nonneg(l->fwd) && fuzz_finite_nonneg(l->bwd));
        FUZZ_CHECK(fuzz_finite_nonneg(l->params) && fuzz_finite_nonneg(l->out_bytes) &&
                   fuzz_finite_nonneg(l->stash_bytes) && fuzz_finite_nonneg(l->at_batch));
        FUZZ_CHECK(!p->measured || l->at_batch > 0);
        FUZZ_CHECK(l->stash_shared_bytes >= 0 && l->stash_shared_bytes <= l->stash_bytes);
        FUZZ_CHECK(i > 0 || l->stash_shared_bytes == 0);
        FUZZ_CHECK(l->carry_bytes >= 0 && l->carry_bytes <= l->out_bytes);
    }
    unique_names(p);
    /* what the loader accepts, the writer must write so that it loads back */
    FUZZ_CHECK(mdl_profile_write(p, tmp_path) == 0);
    rc = mdl_profile_load(tmp_path, &q);
    if (rc < 0)
        fprintf(stderr, "reload failed: %s\n", ps_errmsg());
    FUZZ_CHECK(rc == 0);
    same_layers(p, q);
    mdl_profile_free(q);
    unlink(tmp_path);
    fuzz_predict(p, topo, p->n_layers > 1 ? 2 : 1, 2, SCH_REMAT_EXCEPT_LAST);
    fuzz_partition(p, topo, p->n_layers > 1 ? 2 : 1, 3);
    mdl_profile_free(p);
    ps_error_clear();
    return 0;
}
