/* mdl_topology_check: links that join the same devices twice, and repeated
 * link names (models/mdl_topology_int.h). */
#include "models/mdl_topology.h"
#include "models/mdl_topology_int.h"
#include "base/ps_error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Two devices talk over the first listed link that has both as endpoints, so
 * a later link between them would silently carry nothing (a slow duplicate
 * listed first once turned a 0.2 ms step into 2 s). A link of two endpoints
 * (dedicated, full duplex, or shared) is an error when an earlier link, of
 * any kind, already joins its two devices, in either direction; a bus of
 * more endpoints may overlap earlier ones (it still serves its other pairs),
 * but not be covered by them: one whose every two endpoints earlier links
 * already join carries nothing (`"endpoints": "*"` listed twice).
 * Link names are unique too. All of it in O(n log n + endpoints), but the
 * covered bus (bus_covered): per bus, the endpoints of the earlier links on
 * its own endpoints, then for a bus of n <= 4096 endpoints n^2 / 8 bytes
 * and m x n / 64 words per such link of m shared endpoints. */

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

#define BUS_PAIRS_MAX 4096 /* endpoints of a bus checked pair by pair */

/* What the covered-bus check keeps between buses: the incidence index (each
 * node's links in link order), each link's last visit, each node's place
 * in the bus at hand (-1 outside it), and scratch. */
struct cover {
    const int *first, *inc; /* the topology's incidence index, or one made here */
    int *stamp;       /* [links] the bus that last visited the link */
    int *pos;         /* [nodes] place in the bus, -1 */
    int *cand;        /* [links] the earlier links a bus shares 2+ endpoints with */
};

/* Whether the earlier links (below bus i) join every two endpoints of bus i;
 * *orig: the first of them that joins any (-1: none). Only the earlier
 * links on its endpoints are visited (the incidence index). First, in
 * O(their endpoints): each endpoint must share an earlier link with another
 * (else the bus carries that one's traffic), and an earlier link holding
 * them all covers it. Then, for a bus of up to BUS_PAIRS_MAX endpoints,
 * per endpoint the set of those it shares a link with, a bitset row OR-ed
 * with each link's members: O(n^2 / 8) bytes, O(sum of m x n / 64) time for
 * links of m shared endpoints (a larger bus: only the first test).
 * 1 covered, 0 not, -1 no memory. */
static int bus_covered(const struct mdl_topology *t, int i, struct cover *cv, int *orig)
{
    const struct mdl_link *b = &t->links[i];
    int n = b->n_ends, nc = 0, whole = 0, covered = 0;
    size_t W = ((size_t)n + 63) / 64;
    unsigned char *seen = calloc((size_t)n, 1);
    uint64_t *rows = NULL, *mask = NULL;
    if (!seen)
        return -1;
    for (int k = 0; k < n; k++)
        cv->pos[b->ends[k]] = k;
    *orig = -1;
    /* the endpoint on fewest links first: with no earlier link sharing
     * another endpoint, it rules the bus out at once (buses that share a
     * busy pair of devices would each visit every earlier one) */
    int lo = 0;
    for (int k = 1; k < n; k++)
        if (cv->first[b->ends[k] + 1] - cv->first[b->ends[k]] <
            cv->first[b->ends[lo] + 1] - cv->first[b->ends[lo]])
            lo = k;
    int joined = 0;
    for (int x = cv->first[b->ends[lo]]; x < cv->first[b->ends[lo] + 1] && !joined; x++) {
        const struct mdl_link *l = &t->links[cv->inc[x]];
        int m = 0;
        for (int q = 0; q < l->n_ends && m < 2; q++)
            m += cv->pos[l->ends[q]] >= 0;
        joined = cv->inc[x] < i && m >= 2;
    }
    if (!joined)
        goto out;
    for (int k = 0; k < n; k++) {
        int e = b->ends[k];
        for (int x = cv->first[e]; x < cv->first[e + 1]; x++) {
            int j = cv->inc[x];
            if (j >= i || cv->stamp[j] == i)
                continue;
            cv->stamp[j] = i;
            const struct mdl_link *l = &t->links[j];
            int m = 0;
            for (int q = 0; q < l->n_ends; q++)
                m += cv->pos[l->ends[q]] >= 0;
            if (m < 2)
                continue;
            cv->cand[nc++] = j;
            if (*orig < 0 || j < *orig)
                *orig = j;
            for (int q = 0; q < l->n_ends; q++)
                if (cv->pos[l->ends[q]] >= 0)
                    seen[cv->pos[l->ends[q]]] = 1;
            whole |= m == n;
        }
    }
    int all = 1;
    for (int k = 0; k < n && all; k++)
        all = seen[k];
    if (whole || !all || n > BUS_PAIRS_MAX) {
        covered = whole;
        goto out;
    }
    if (!(rows = calloc((size_t)n * W, sizeof *rows)) || !(mask = malloc(W * sizeof *mask))) {
        covered = -1;
        goto out;
    }
    for (int c = 0; c < nc; c++) {
        const struct mdl_link *l = &t->links[cv->cand[c]];
        memset(mask, 0, W * sizeof *mask);
        for (int q = 0; q < l->n_ends; q++) {
            int p = cv->pos[l->ends[q]];
            if (p >= 0)
                mask[p / 64] |= 1ULL << (p % 64);
        }
        for (int q = 0; q < l->n_ends; q++) {
            int p = cv->pos[l->ends[q]];
            if (p < 0)
                continue;
            uint64_t *r = rows + (size_t)p * W;
            for (size_t w = 0; w < W; w++)
                r[w] |= mask[w];
        }
    }
    covered = 1; /* every endpoint's row holds every endpoint */
    for (int k = 0; k < n && covered; k++) {
        const uint64_t *r = rows + (size_t)k * W;
        int cnt = 0;
        for (size_t w = 0; w < W; w++)
            cnt += __builtin_popcountll(r[w]);
        covered = cnt == n;
    }
out:
    for (int k = 0; k < n; k++)
        cv->pos[b->ends[k]] = -1;
    free(rows);
    free(mask);
    free(seen);
    return covered;
}

/* The first bus whose every two endpoints earlier links already join, or -1;
 * *orig: the first of those earlier links. */
static int covered_bus(const struct mdl_topology *t, int *orig, int *nomem)
{
    int nn = t->n_devices + t->n_switches, rc = -1, buses = 0;
    for (int i = 0; i < t->n_links; i++)
        buses |= t->links[i].n_ends > 2;
    if (!buses)
        return -1;
    struct cover cv = { NULL, NULL, NULL, NULL, NULL };
    int *own_first = NULL, *own_inc = NULL; /* without the loader's index */
    if (!(cv.inc = mdl_topology_incidence(t, &cv.first))) {
        if (mdl_topology_incidence_new(t, &own_first, &own_inc) < 0) {
            *nomem = 1;
            goto out;
        }
        cv.first = own_first;
        cv.inc = own_inc;
    }
    if (!(cv.stamp = malloc(sizeof *cv.stamp * (size_t)t->n_links)) ||
        !(cv.cand = malloc(sizeof *cv.cand * (size_t)t->n_links)) ||
        !(cv.pos = malloc(sizeof *cv.pos * (size_t)(nn ? nn : 1)))) {
        *nomem = 1;
        goto out;
    }
    for (int j = 0; j < t->n_links; j++)
        cv.stamp[j] = -1;
    for (int d = 0; d < nn; d++)
        cv.pos[d] = -1;
    for (int i = 0; i < t->n_links; i++) {
        if (t->links[i].n_ends <= 2)
            continue;
        int c = bus_covered(t, i, &cv, orig);
        if (c < 0) {
            *nomem = 1;
            break;
        }
        if (c) {
            rc = i;
            break;
        }
    }
out:
    free(own_first);
    free(own_inc);
    free(cv.stamp);
    free(cv.cand);
    free(cv.pos);
    return rc;
}

int mdl_topology_check_links(const char *path, const struct mdl_topology *t)
{
    int nomem = 0, on = -1, op = -1, ob = -1;
    int rn = repeated_link_name(t, &on, &nomem);
    int rp = nomem ? -1 : repeated_pair(t, &op, &nomem);
    int rb = nomem ? -1 : covered_bus(t, &ob, &nomem);
    if (nomem)
        return ps_error(PS_ENOMEM, "%s: out of memory", path);
    if (rn >= 0 && (rp < 0 || rn <= rp) && (rb < 0 || rn <= rb))
        return ps_error(PS_EINVAL, "%s: links[%d].name: duplicate link name '%s' (also "
                         "links[%d])", path, rn, t->links[rn].name, on);
    if (rb >= 0 && (rp < 0 || rb < rp))
        return ps_error(PS_EINVAL, "%s: links[%d].endpoints: earlier links already join "
                         "every two of its %d endpoints (the first: links[%d] '%s'), so it "
                         "would carry no traffic", path, rb, t->links[rb].n_ends, ob,
                         t->links[ob].name);
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
