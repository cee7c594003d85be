/* mdl_route: the route between two devices through the fabric
 * (models/mdl_topology.h: fewest hops, transit through switches only, ties
 * to the smallest link index hop by hop from the source). */
#include "models/mdl_topology.h"
#include "base/ps_error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void add_hop(const struct mdl_topology *t, struct mdl_route *r, int link, int from)
{
    const struct mdl_link *l = &t->links[link];
    struct mdl_hop *h = &r->hops[r->n_hops++];
    h->link = link;
    h->dir = l->shared || l->ends[0] == from ? 0 : 1;
    if (r->n_hops == 1 || l->bandwidth < r->bandwidth)
        r->bandwidth = l->bandwidth;
    r->latency += l->latency + l->overhead_s;
}

static int no_route(const struct mdl_topology *t, int a, int b)
{
    return ps_error(PS_EINVAL, "topology %s: no link or route between %s and %s", t->path,
                     t->devices[a].name, t->devices[b].name);
}

const struct mdl_link *mdl_route_slowest(const struct mdl_topology *t,
                                         const struct mdl_route *r)
{
    int best = 0;
    for (int h = 1; h < r->n_hops; h++)
        if (t->links[r->hops[h].link].bandwidth < t->links[r->hops[best].link].bandwidth)
            best = h;
    return &t->links[r->hops[best].link];
}

int mdl_topology_route(const struct mdl_topology *t, int a, int b, struct mdl_route *r)
{
    r->n_hops = 0;
    r->bandwidth = 0;
    r->latency = 0;
    r->too_long = 0;
    int direct = mdl_topology_link_between(t, a, b);
    if (direct >= 0) { /* one hop: the first listed link, as the rule gives */
        add_hop(t, r, direct, a);
        return 0;
    }
    if (!t->n_switches)
        return no_route(t, a, b);
    /* incidence lists: the links of each node, in link order (the
     * topology's index, else built here for a topology edited after load) */
    int nn = t->n_devices + t->n_switches, rc = 0;
    const int *first, *inc = mdl_topology_incidence(t, &first);
    int *own_first = NULL, *own_inc = NULL;
    int *dist = malloc(sizeof *dist * (size_t)nn);
    int *queue = malloc(sizeof *queue * (size_t)nn);
    if (!dist || !queue) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    if (!inc) {
        if ((rc = mdl_topology_incidence_new(t, &own_first, &own_inc)) < 0)
            goto out;
        first = own_first;
        inc = own_inc;
    }
    /* hops to b, expanding only b and switches (devices do not forward) */
    for (int v = 0; v < nn; v++)
        dist[v] = -1;
    int qh = 0, qt = 0;
    dist[b] = 0;
    queue[qt++] = b;
    while (qh < qt && dist[a] < 0) {
        int u = queue[qh++];
        if (u != b && u < t->n_devices)
            continue;
        for (int j = first[u]; j < first[u + 1]; j++) {
            const struct mdl_link *l = &t->links[inc[j]];
            for (int k = 0; k < l->n_ends; k++)
                if (dist[l->ends[k]] < 0) {
                    dist[l->ends[k]] = dist[u] + 1;
                    queue[qt++] = l->ends[k];
                }
        }
    }
    if (dist[a] < 0) {
        rc = no_route(t, a, b);
        goto out;
    }
    if (dist[a] > MDL_ROUTE_MAX) {
        r->too_long = 1;
        rc = ps_error(PS_EINVAL, "topology %s: the route between %s and %s takes %d hops, "
                       "more than %d", t->path, t->devices[a].name, t->devices[b].name,
                       dist[a], MDL_ROUTE_MAX);
        goto out;
    }
    /* from a, each hop on the smallest-index link that gets one hop closer
     * (through a switch, or onto b), to its lowest-index such node */
    for (int u = a; u != b;) {
        int next = -1, via = -1;
        for (int j = first[u]; j < first[u + 1] && next < 0; j++) {
            const struct mdl_link *l = &t->links[inc[j]];
            for (int k = 0; k < l->n_ends; k++) {
                int w = l->ends[k];
                if (dist[w] == dist[u] - 1 && (w == b || w >= t->n_devices) &&
                    (next < 0 || w < next)) {
                    next = w;
                    via = inc[j];
                }
            }
        }
        if (next < 0)
            PS_BUG("route walk lost its way at node %d", u);
        add_hop(t, r, via, u);
        u = next;
    }
out:
    free(own_first);
    free(own_inc);
    free(dist);
    free(queue);
    return rc;
}

struct copy_load {
    int64_t key; /* link * 2 + dir (a shared link: dir 0) */
    double s;
};

static int load_cmp(const void *x, const void *y)
{
    const struct copy_load *p = x, *q = y;
    return (p->key > q->key) - (p->key < q->key);
}

int mdl_route_copies(const struct mdl_topology *t, int D, int R, int a, int b, double bytes,
                     struct mdl_route *rts, double *occ, double *lat)
{
    struct copy_load *ld = malloc(sizeof *ld * (size_t)R * MDL_ROUTE_MAX + sizeof *ld);
    if (!ld)
        return ps_error(PS_ENOMEM, "out of memory");
    size_t n = 0;
    *occ = *lat = 0;
    for (int r = 0; r < R; r++) {
        struct mdl_route *rt = &rts[r];
        int x = r * D + a, y = r * D + b, rc;
        if ((rc = mdl_topology_route(t, x, y, rt)) < 0) {
            if (rc == -PS_EINVAL && R > 1) { /* the router's reason names both devices */
                char why[PS_ERRMSG_MAX];
                snprintf(why, sizeof why, "%s", ps_errmsg());
                rc = ps_error(PS_EINVAL, "%s (replica %d)", why, r);
            }
            free(ld);
            return rc;
        }
        if (rt->latency > *lat)
            *lat = rt->latency;
        for (int h = 0; h < rt->n_hops; h++) {
            int l = rt->hops[h].link;
            ld[n++] = (struct copy_load){ 2 * (int64_t)l + (t->links[l].shared ? 0
                                                            : rt->hops[h].dir),
                                          bytes / rt->bandwidth };
        }
    }
    qsort(ld, n, sizeof *ld, load_cmp);
    for (size_t i = 0; i < n;) {
        double sum = 0;
        size_t j = i;
        for (; j < n && ld[j].key == ld[i].key; j++)
            sum += ld[j].s;
        *occ = sum > *occ ? sum : *occ;
        i = j;
    }
    free(ld);
    return 0;
}
