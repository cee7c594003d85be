/* mdl_topology_index — a topology's nodes and the links that touch each:
 * node names, the incidence index, the link between two nodes
 * (models/mdl_topology.h). */
#include "models/mdl_topology.h"
#include "base/ps_error.h"

#include <stdlib.h>

const char *mdl_topology_node_name(const struct mdl_topology *t, int i)
{
    return i < t->n_devices ? t->devices[i].name : t->switches[i - t->n_devices].name;
}

int mdl_topology_incidence_new(const struct mdl_topology *t, int **first_out, int **inc_out)
{
    int nn = t->n_devices + t->n_switches;
    size_t ends = 0;
    for (int i = 0; i < t->n_links; i++)
        ends += (size_t)t->links[i].n_ends;
    int *first = calloc((size_t)nn + 1, sizeof *first);
    int *inc = malloc(sizeof *inc * (ends ? ends : 1));
    int *cur = malloc(sizeof *cur * (size_t)(nn ? nn : 1));
    if (!first || !inc || !cur) {
        free(first);
        free(inc);
        free(cur);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int i = 0; i < t->n_links; i++)
        for (int k = 0; k < t->links[i].n_ends; k++)
            first[t->links[i].ends[k] + 1]++;
    for (int v = 0; v < nn; v++) {
        first[v + 1] += first[v];
        cur[v] = first[v];
    }
    for (int i = 0; i < t->n_links; i++) /* in link order: each list ascending */
        for (int k = 0; k < t->links[i].n_ends; k++)
            inc[cur[t->links[i].ends[k]]++] = i;
    free(cur);
    *first_out = first;
    *inc_out = inc;
    return 0;
}

int mdl_topology_index(struct mdl_topology *t)
{
    int *first, *inc, rc = mdl_topology_incidence_new(t, &first, &inc);
    if (rc < 0)
        return rc;
    free(t->inc_first);
    free(t->inc);
    t->inc_first = first;
    t->inc = inc;
    t->inc_links = t->links;
    t->inc_n_links = t->n_links;
    t->inc_nodes = t->n_devices + t->n_switches;
    return 0;
}

const int *mdl_topology_incidence(const struct mdl_topology *t, const int **first)
{
    int ok = t->inc && t->inc_links == t->links && t->inc_n_links == t->n_links &&
             t->inc_nodes == t->n_devices + t->n_switches;
    *first = ok ? t->inc_first : NULL;
    return ok ? t->inc : NULL;
}

int mdl_topology_link_between(const struct mdl_topology *t, int a, int b)
{
    const int *first, *inc = mdl_topology_incidence(t, &first);
    if (inc) { /* the first link in both ascending lists */
        int i = first[a], j = first[b];
        while (i < first[a + 1] && j < first[b + 1]) {
            if (inc[i] == inc[j])
                return inc[i];
            if (inc[i] < inc[j])
                i++;
            else
                j++;
        }
        return -1;
    }
    for (int i = 0; i < t->n_links; i++) {
        int ha = 0, hb = 0;
        for (int k = 0; k < t->links[i].n_ends; k++) {
            ha |= t->links[i].ends[k] == a;
            hb |= t->links[i].ends[k] == b;
        }
        if (ha && hb)
            return i;
    }
    return -1;
}
