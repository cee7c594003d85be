/* mdl_topology_check: links that join the same devices twice, and repeated
 * link names (models/mdl_topology_int.h). */
#include "models/mdl_topology.h"
#include "models/mdl_topology_int.h"
#include "base/ps_error.h"

#include <stdlib.h>
#include <string.h>

/* Two devices talk over the first listed link that has both as endpoints, so
 * a later link between them would silently carry nothing (a slow duplicate
 * listed first once turned a 0.2 ms step into 2 s). A link of two endpoints
 * (dedicated, full duplex, or shared) is an error when an earlier link, of
 * any kind, already joins its two devices, in either direction; a bus of
 * more endpoints may overlap earlier ones (it still serves its other pairs).
 * Link names are unique too. All of it in O(n log n + endpoints). */

struct pair_ix {
    int a, b, link; /* a < b */
};

static int pair_cmp(const void *x, const void *y)
{
    const struct pair_ix *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return (p->link > q->link) - (p->link < q->link);
}

/* Per device, the buses (links of more than two endpoints) it is on, in
 * link order: first[d]..first[d+1] in bus[]. */
struct bus_ix {
    int *first, *bus;
};

static int index_buses(const struct mdl_topology *t, struct bus_ix *bx)
{
    size_t total = 0;
    int nn = t->n_devices + t->n_switches;
    bx->first = calloc((size_t)nn + 1, sizeof *bx->first);
    if (!bx->first)
        return -1;
    for (int i = 0; i < t->n_links; i++)
        if (t->links[i].n_ends > 2) {
            total += (size_t)t->links[i].n_ends;
            for (int k = 0; k < t->links[i].n_ends; k++)
                bx->first[t->links[i].ends[k] + 1]++;
        }
    for (int d = 0; d < nn; d++)
        bx->first[d + 1] += bx->first[d];
    bx->bus = malloc(sizeof *bx->bus * (total ? total : 1));
    int *fill = malloc(sizeof *fill * (size_t)(nn ? nn : 1));
    if (!bx->bus || !fill) {
        free(fill);
        return -1;
    }
    memcpy(fill, bx->first, sizeof *fill * (size_t)nn);
    for (int i = 0; i < t->n_links; i++)
        if (t->links[i].n_ends > 2)
            for (int k = 0; k < t->links[i].n_ends; k++)
                bx->bus[fill[t->links[i].ends[k]]++] = i;
    free(fill);
    return 0;
}

/* The first bus before link `before` that has both a and b, or -1: a merge
 * of the two sorted lists, stopping at the first common entry. */
static int first_common_bus(const struct bus_ix *bx, int a, int b, int before)
{
    int i = bx->first[a], ie = bx->first[a + 1], j = bx->first[b], je = bx->first[b + 1];
    while (i < ie && j < je && bx->bus[i] < before && bx->bus[j] < before) {
        if (bx->bus[i] == bx->bus[j])
            return bx->bus[i];
        if (bx->bus[i] < bx->bus[j])
            i++;
        else
            j++;
    }
    return -1;
}

struct lname_ix {
    const char *name;
    int link;
};

static int lname_cmp(const void *x, const void *y)
{
    const struct lname_ix *p = x, *q = y;
    int c = strcmp(p->name, q->name);
    return c ? c : (p->link > q->link) - (p->link < q->link);
}

/* A repeated link name: the first repetition in file order, or -1; *orig is
 * the link it repeats. */
static int repeated_link_name(const struct mdl_topology *t, int *orig, int *nomem)
{
    int n = t->n_links, first = -1;
    struct lname_ix *ix = malloc(sizeof *ix * (size_t)(n ? n : 1));
    if (!ix) {
        *nomem = 1;
        return -1;
    }
    for (int i = 0; i < n; i++)
        ix[i] = (struct lname_ix){ t->links[i].name, i };
    qsort(ix, (size_t)n, sizeof *ix, lname_cmp);
    for (int i = 1, g = 0; i < n; i++) {
        if (strcmp(ix[i].name, ix[g].name)) {
            g = i; /* a new name: ix[g] is its first use */
            continue;
        }
        if (first < 0 || ix[i].link < first) {
            first = ix[i].link;
            *orig = ix[g].link;
        }
    }
    free(ix);
    return first;
}

/* A two-endpoint link whose devices an earlier link already joins: the first
 * in file order, or -1; *orig is the earlier link. */
static int repeated_pair(const struct mdl_topology *t, int *orig, int *nomem)
{
    int n = t->n_links, np = 0, first = -1, buses = 0;
    struct pair_ix *px = malloc(sizeof *px * (size_t)(n ? n : 1));
    if (!px) {
        *nomem = 1;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const struct mdl_link *l = &t->links[i];
        buses |= l->n_ends > 2;
        if (l->n_ends == 2)
            px[np++] = (struct pair_ix){ l->ends[0] < l->ends[1] ? l->ends[0] : l->ends[1],
                                         l->ends[0] < l->ends[1] ? l->ends[1] : l->ends[0],
                                         i };
    }
    qsort(px, (size_t)np, sizeof *px, pair_cmp);
    struct bus_ix bx = { NULL, NULL };
    if (buses && index_buses(t, &bx) < 0) {
        *nomem = 1;
        np = 0;
    }
    for (int i = 0, g = 0; i < np; i++) {
        if (px[i].a != px[g].a || px[i].b != px[g].b)
            g = i; /* px[g]: the first link of this pair */
        int j = g < i ? px[g].link : -1;
        int jb = buses ? first_common_bus(&bx, px[i].a, px[i].b, px[i].link) : -1;
        if (jb >= 0 && (j < 0 || jb < j))
            j = jb;
        if (j >= 0 && (first < 0 || px[i].link < first)) {
            first = px[i].link;
            *orig = j;
        }
    }
    free(bx.first);
    free(bx.bus);
    free(px);
    return first;
}

int mdl_topology_check_links(const char *path, const struct mdl_topology *t)
{
    int nomem = 0, on = -1, op = -1;
    int rn = repeated_link_name(t, &on, &nomem);
    int rp = nomem ? -1 : repeated_pair(t, &op, &nomem);
    if (nomem)
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    if (rn >= 0 && (rp < 0 || rn <= rp))
        return ps_error(PS_EINVAL, "%s: links[%d].name: duplicate link name '%s' (also "
                         "links[%d])", path, rn, t->links[rn].name, on);
    if (rp >= 0) {
        const struct mdl_link *l = &t->links[rp];
        return ps_error(PS_EINVAL, "%s: links[%d].endpoints: a second link between '%s' "
                         "and '%s': links[%d] ('%s') already joins them and would carry all "
                         "their traffic", path, rp,
                         mdl_topology_node_name(t, l->ends[0]), mdl_topology_node_name(t, l->ends[1]), op,
                         t->links[op].name);
    }
    return 0;
}
