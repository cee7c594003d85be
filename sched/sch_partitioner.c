/*
 * The exact partitioner on plain arrays (see sch_partitioner.h).
 *
 * Why it is optimal. Write g(e) = pre[e] + out[e] + bias (out[L] = 0) and
 * h(a) = pre[a] - in[a] (in[0] = 0), so a stage [a, e) costs g(e) - h(a) and
 * "stage [a, e) fits under bound B" is the threshold test h(a) >= g(e) - B.
 * Cuts 0 = c_0 < ... < c_K = L are a path of K edges in the DAG on 0..L whose
 * edges are the fitting stages, and the best bottleneck is the least integer B
 * for which a K-edge path 0 -> L exists: feasibility only grows with B (edges
 * are only added), costs are integers, so bisection over integers between a
 * lower bound that no partition beats and the bottleneck of a real partition
 * ends on the optimum exactly, with no floating point.
 *
 * Lemma (interval property): the edge counts of the paths 0 -> e under one
 * threshold test form an interval [d(e), D(e)]. Proof: let A have k1 edges,
 * C have k2 >= k1 + 2. For C's edge j (c_j -> c_{j+1}) let i(j) be the A-edge
 * with a_i <= c_j < a_{i+1}; the two edges overlap, so the swapped edges
 * a_i -> c_{j+1} and c_j -> a_{i+1} both go forward. If h(a_i) >= h(c_j) the
 * first fits (h(a_i) >= h(c_j) >= g(c_{j+1}) - B), else the second does
 * (h(c_j) > h(a_i) >= g(a_{i+1}) - B). The hybrid paths "A up to a_i, swap,
 * C after" and "C up to c_j, swap, A after" have k2 + (i - j) and
 * k1 - (i - j) edges. delta = i(j) - j is 0 at j = 0, at most k1 - k2 <= -2 at
 * j = k2 - 1, and falls by at most 1 per step (i(j) never decreases), so some
 * j has delta = -1: a fitting path with k2 - 1 or k1 + 1 edges, strictly
 * between. Induction on k2 - k1 fills the interval.
 *
 * So with the same costs on every stage and no second constraint, a K-stage
 * partition fits under B iff d(L) <= K <= D(L), where d(e) = 1 + min d(a) and
 * D(e) = 1 + max D(a) over the a < e that can reach e. Both are monotone in B,
 * so the least B of each condition is bisected separately, each probe O(L log
 * K): a segment tree over stage counts holds, per count, the largest h(a) of
 * the cuts reached with that count, and "smallest (largest) count whose max h
 * is >= g(e) - B" is one descent. The partition is read back from the end: at
 * cut e needing k stages, any a that can reach e with d(a) <= k-1 <= D(a)
 * exists by the lemma; scanning down from e - 1 makes the walk O(L).
 *
 * With per-stage costs or a memory constraint (two thresholds, where the
 * lemma fails), a probe computes the exact set R_s of cuts reachable by s
 * stages, stage by stage: a running max of h for time alone, or a Fenwick
 * tree over the time rank of h holding the max memory h for both. The
 * partition is read back from the stored sets.
 */
#include "sched/sch_partitioner.h"
#include "base/ps_error.h"

#include <stdlib.h>
#include <string.h>

static int64_t g_of(const struct sch_part_cost *c, int L, int e)
{
    return c->pre[e] + (e < L && c->out ? c->out[e] : 0) + c->bias;
}

static int64_t h_of(const struct sch_part_cost *c, int a)
{
    return c->pre[a] - (a > 0 && c->in ? c->in[a] : 0);
}

static const struct sch_part_cost *tcost(const struct sch_part_problem *p, int s)
{
    return &p->time[p->same ? 0 : s];
}

static const struct sch_part_cost *mcost(const struct sch_part_problem *p, int s)
{
    return p->mem ? &p->mem[p->same ? 0 : s] : NULL;
}

int64_t sch_part_cost_eval(const struct sch_part_cost *c, int n_layers, int a, int e)
{
    return g_of(c, n_layers, e) - h_of(c, a);
}

int64_t sch_part_bottleneck(const struct sch_part_problem *p, const struct sch_partition *part,
                            int *worst, int *feasible)
{
    int64_t best = INT64_MIN;
    int ok = 1;
    for (int s = 0; s < part->n_stages; s++) {
        int a = part->first[s], e = part->first[s + 1];
        int64_t v = sch_part_cost_eval(tcost(p, s), p->n_layers, a, e);
        if (v > best) {
            best = v;
            if (worst)
                *worst = s;
        }
        if (p->mem && sch_part_cost_eval(mcost(p, s), p->n_layers, a, e) > 0)
            ok = 0;
    }
    if (feasible)
        *feasible = ok;
    return best;
}

static int check_problem(const struct sch_part_problem *p)
{
    if (p->n_stages < 1)
        return ps_error(PS_EUSAGE, "number of stages must be >= 1, got %d", p->n_stages);
    if (p->n_layers < 1)
        return ps_error(PS_EINVAL, "the model has no layers");
    if (p->n_stages > p->n_layers)
        return ps_error(PS_ENOFIT, "%d stages but the model has only %d layers (each stage "
                         "needs at least one)", p->n_stages, p->n_layers);
    return 0;
}

/* ---- fast path: same costs, one threshold ---- */

struct fast {
    int L, K, sz;
    int64_t *g, *h, *tree;
    int *d, *D;
};

static void tree_reset(struct fast *f)
{
    for (int i = 0; i < 2 * f->sz; i++)
        f->tree[i] = INT64_MIN;
}

static void tree_raise(struct fast *f, int k, int64_t v)
{
    int i = f->sz + k;
    if (f->tree[i] >= v)
        return;
    for (; i >= 1 && f->tree[i] < v; i >>= 1)
        f->tree[i] = v;
}

/* Smallest (last = 0) or largest (last = 1) count whose max h >= th, or -1. */
static int tree_find(const struct fast *f, int64_t th, int last)
{
    if (f->tree[1] < th)
        return -1;
    int i = 1;
    while (i < f->sz) {
        int pref = 2 * i + last, other = 2 * i + !last;
        i = f->tree[pref] >= th ? pref : other;
    }
    return i - f->sz;
}

/* d(e) for all e (K + 1 = "more than K - 1 before L"); returns d(L). */
static int fast_min_count(struct fast *f, int64_t B)
{
    tree_reset(f);
    f->d[0] = 0;
    tree_raise(f, 0, f->h[0]);
    for (int e = 1; e <= f->L; e++) {
        int k = tree_find(f, f->g[e] - B, 0);
        f->d[e] = k < 0 ? f->K + 1 : k + 1;
        if (e < f->L && f->d[e] <= f->K - 1)
            tree_raise(f, f->d[e], f->h[e]);
    }
    return f->d[f->L];
}

/* min(D(e), K) for all e (-1 = unreachable); returns it at L. */
static int fast_max_count(struct fast *f, int64_t B)
{
    tree_reset(f);
    f->D[0] = 0;
    tree_raise(f, 0, f->h[0]);
    for (int e = 1; e <= f->L; e++) {
        int k = tree_find(f, f->g[e] - B, 1);
        f->D[e] = k < 0 ? -1 : (k + 1 < f->K ? k + 1 : f->K);
        if (e < f->L && f->D[e] >= 0)
            tree_raise(f, f->D[e], f->h[e]);
    }
    return f->D[f->L];
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q * b < a ? q + 1 : q;
}

static int fast_solve(const struct sch_part_problem *p, struct sch_partition *part,
                      int64_t *bottleneck)
{
    const struct sch_part_cost *c = &p->time[0];
    int L = p->n_layers, K = p->n_stages;
    struct fast f = { .L = L, .K = K, .sz = 1 };
    while (f.sz < K + 1)
        f.sz <<= 1;
    f.g = malloc(sizeof *f.g * (size_t)(L + 1));
    f.h = malloc(sizeof *f.h * (size_t)(L + 1));
    f.d = malloc(sizeof *f.d * (size_t)(L + 1));
    f.D = malloc(sizeof *f.D * (size_t)(L + 1));
    f.tree = malloc(sizeof *f.tree * (size_t)(2 * f.sz));
    int rc = 0;
    if (!f.g || !f.h || !f.d || !f.D || !f.tree) {
        rc = ps_error(PS_ENOMEM, "out of memory partitioning %d layers", L);
        goto err_free_arrays;
    }
    int64_t maxinc = 0;
    for (int i = 0; i <= L; i++) {
        f.g[i] = g_of(c, L, i);
        f.h[i] = h_of(c, i);
        if (i < L && c->pre[i + 1] - c->pre[i] > maxinc)
            maxinc = c->pre[i + 1] - c->pre[i];
    }
    /* A start that fits: cuts nearest to equal shares of the compute total. */
    for (int s = 1, i = 0; s < K; s++) {
        int64_t target = (int64_t)((double)c->pre[L] * s / K);
        while (i < L && c->pre[i] < target)
            i++;
        int lo_i = part->first[s - 1] + 1, hi_i = L - (K - s);
        part->first[s] = i < lo_i ? lo_i : i > hi_i ? hi_i : i;
    }
    int64_t top = sch_part_bottleneck(p, part, NULL, NULL);
    int64_t lb1 = ceil_div(c->pre[L] + (int64_t)K * c->bias, K), lb2 = maxinc + c->bias;
    int64_t lo = (lb1 > lb2 ? lb1 : lb2) - 1, hi = top; /* lo fails, hi fits */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (fast_min_count(&f, mid) <= K)
            hi = mid;
        else
            lo = mid;
    }
    if (fast_max_count(&f, hi) < K) {
        lo = hi;
        hi = top;
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (fast_max_count(&f, mid) >= K)
                hi = mid;
            else
                lo = mid;
        }
    }
    int dL = fast_min_count(&f, hi), DL = fast_max_count(&f, hi);
    PS_ASSERT(dL <= K && DL >= K);
    int e = L;
    for (int s = K - 1; s >= 0; s--) {
        int a = e - 1;
        while (a >= s && !(f.d[a] <= s && s <= f.D[a] && f.h[a] >= f.g[e] - hi))
            a--;
        PS_ASSERT(a >= s);
        part->first[s] = a;
        e = a;
    }
    *bottleneck = hi;
err_free_arrays:
    free(f.g);
    free(f.h);
    free(f.d);
    free(f.D);
    free(f.tree);
    return rc;
}

/* ---- general path: exact layered reachability ---- */

struct layered {
    const struct sch_part_problem *p;
    int L, K, words;
    uint64_t *rows;      /* [(K + 1) * words] reachable cuts per stage count */
    int64_t *bit;        /* Fenwick tree, [L + 2] */
    int *order, *rank;   /* positions by time h descending, and the inverse: the */
    int64_t *hs;         /* time h in that order: current stage's, views of these */
    int *order_all, *rank_all; /* [n_keys][L + 1]: one order per distinct time h, */
    int64_t *hs_all;     /* which depends on a stage's pre and in arrays alone */
    int *key_of;         /* [K] the order of each stage */
    int n_keys;
};

static int row_get(const struct layered *w, int s, int i)
{
    return (int)(w->rows[(size_t)s * w->words + (size_t)(i >> 6)] >> (i & 63)) & 1;
}

static void row_set(struct layered *w, int s, int i)
{
    w->rows[(size_t)s * w->words + (size_t)(i >> 6)] |= 1ULL << (i & 63);
}

static int cmp_h_desc(const void *x, const void *y, void *ctx)
{
    const struct sch_part_cost *c = ctx;
    int a = *(const int *)x, b = *(const int *)y;
    int64_t ha = h_of(c, a), hb = h_of(c, b);
    return ha > hb ? -1 : ha < hb ? 1 : (a > b) - (a < b);
}

/* Stage s's order (made once per solve for each distinct pre and in: a probe
 * sorted every stage again, K sorts of L + 1 positions per probe). */
static void build_order(struct layered *w, int s)
{
    size_t at = (size_t)w->key_of[w->p->same ? 0 : s] * (size_t)(w->L + 1);
    w->order = w->order_all + at;
    w->rank = w->rank_all + at;
    w->hs = w->hs_all + at;
}

static void make_orders(struct layered *w)
{
    int K = w->p->same ? 1 : w->K;
    w->n_keys = 0;
    for (int s = 0; s < K; s++) {
        const struct sch_part_cost *c = tcost(w->p, s);
        int k = 0;
        while (k < w->n_keys && !(tcost(w->p, w->key_of[k])->pre == c->pre &&
                                  tcost(w->p, w->key_of[k])->in == c->in))
            k++;
        if (k == w->n_keys) { /* first stage of a new key: key_of[k] holds it for now */
            w->key_of[w->n_keys++] = s;
        }
        w->key_of[K + s] = k;
    }
    for (int k = 0; k < w->n_keys; k++) {
        const struct sch_part_cost *c = tcost(w->p, w->key_of[k]);
        size_t at = (size_t)k * (size_t)(w->L + 1);
        int *order = w->order_all + at, *rank = w->rank_all + at;
        for (int i = 0; i <= w->L; i++)
            order[i] = i;
        qsort_r(order, (size_t)w->L + 1, sizeof *order, cmp_h_desc,
                (void *)c); /* glibc's qsort_r: sweeps run this in threads */
        for (int i = 0; i <= w->L; i++) {
            rank[order[i]] = i + 1;
            w->hs_all[at + (size_t)i] = h_of(c, order[i]);
        }
    }
    for (int s = 0; s < K; s++)
        w->key_of[s] = w->key_of[K + s];
}

/* Number of positions whose time h is >= th (hs is descending). */
static int count_ge(const struct layered *w, int64_t th)
{
    int lo = 0, hi = w->L + 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (w->hs[mid] >= th)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int layered_probe(struct layered *w, int64_t B)
{
    int L = w->L, K = w->K;
    memset(w->rows, 0, sizeof *w->rows * (size_t)(K + 1) * (size_t)w->words);
    row_set(w, 0, 0);
    for (int s = 0; s < K; s++) {
        const struct sch_part_cost *tc = tcost(w->p, s), *mc = mcost(w->p, s);
        int emin = s + 1, emax = s + 1 == K ? L : L - (K - s - 1);
        if (mc) {
            build_order(w, s);
            for (int i = 0; i <= L + 1; i++)
                w->bit[i] = INT64_MIN;
        }
        int64_t best = INT64_MIN;
        int any = 0;
        for (int e = s + 1; e <= emax; e++) {
            int a = e - 1;
            if (row_get(w, s, a)) {
                int64_t ht = h_of(tc, a);
                if (!mc) {
                    if (ht > best)
                        best = ht;
                } else {
                    int64_t hm = h_of(mc, a);
                    for (int i = w->rank[a]; i <= L + 1; i += i & -i)
                        if (w->bit[i] < hm)
                            w->bit[i] = hm;
                }
            }
            if (e < emin)
                continue;
            int64_t th = g_of(tc, L, e) - B;
            int ok;
            if (!mc) {
                ok = best >= th;
            } else {
                int64_t mx = INT64_MIN, need = g_of(mc, L, e);
                for (int i = count_ge(w, th); i > 0; i -= i & -i)
                    if (w->bit[i] > mx)
                        mx = w->bit[i];
                ok = mx >= need;
            }
            if (ok) {
                row_set(w, s + 1, e);
                any = 1;
            }
        }
        if (!any)
            return 0;
    }
    return row_get(w, K, L);
}

static void layered_walk(const struct layered *w, int64_t B, struct sch_partition *part)
{
    int e = w->L;
    for (int s = w->K - 1; s >= 0; s--) {
        const struct sch_part_cost *tc = tcost(w->p, s), *mc = mcost(w->p, s);
        int a = e - 1;
        while (a >= s && !(row_get(w, s, a) && sch_part_cost_eval(tc, w->L, a, e) <= B &&
                           (!mc || sch_part_cost_eval(mc, w->L, a, e) <= 0)))
            a--;
        PS_ASSERT(a >= s);
        part->first[s] = a;
        e = a;
    }
}

static int layered_solve(const struct sch_part_problem *p, struct sch_partition *part,
                         int64_t *bottleneck)
{
    int L = p->n_layers, K = p->n_stages;
    struct layered w = { .p = p, .L = L, .K = K, .words = (L + 1 + 63) / 64 };
    int rc = 0;
    w.rows = malloc(sizeof *w.rows * (size_t)(K + 1) * (size_t)w.words);
    if (p->mem) {
        /* at most K distinct orders (one with p->same) */
        size_t n = (size_t)(p->same ? 1 : K) * (size_t)(L + 1);
        w.bit = malloc(sizeof *w.bit * (size_t)(L + 2));
        w.order_all = malloc(sizeof *w.order_all * n);
        w.rank_all = malloc(sizeof *w.rank_all * n);
        w.hs_all = malloc(sizeof *w.hs_all * n);
        w.key_of = malloc(sizeof *w.key_of * 2 * (size_t)K);
    }
    if (!w.rows || (p->mem && (!w.bit || !w.order_all || !w.rank_all || !w.hs_all ||
                               !w.key_of))) {
        rc = ps_error(PS_ENOMEM, "out of memory partitioning %d layers into %d stages", L, K);
        goto err_free_work;
    }
    if (p->mem)
        make_orders(&w);
    if (!layered_probe(&w, SCH_PART_INF)) {
        rc = ps_error(PS_ENOFIT, "no partition of %d layers into %d stages meets the memory "
                       "cap", L, K);
        goto err_free_work;
    }
    layered_walk(&w, SCH_PART_INF, part);
    int64_t hi = sch_part_bottleneck(p, part, NULL, NULL), lo = INT64_MIN;
    for (int s = 0; s < K; s++)
        if (tcost(p, s)->bias - 1 > lo)
            lo = tcost(p, s)->bias - 1; /* every stage costs >= its bias */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (layered_probe(&w, mid))
            hi = mid;
        else
            lo = mid;
    }
    PS_ASSERT(layered_probe(&w, hi));
    layered_walk(&w, hi, part);
    *bottleneck = hi;
err_free_work:
    free(w.rows);
    free(w.bit);
    free(w.order_all);
    free(w.rank_all);
    free(w.hs_all);
    free(w.key_of);
    return rc;
}

int sch_part_solve(const struct sch_part_problem *p, struct sch_partition **out,
                   int64_t *bottleneck)
{
    *out = NULL;
    int rc = check_problem(p);
    if (rc < 0)
        return rc;
    struct sch_partition *part = sch_partition_new(p->n_stages, p->n_layers);
    if (!part)
        return ps_error(PS_ENOMEM, "out of memory");
    int64_t bn = 0;
    rc = p->same && !p->mem ? fast_solve(p, part, &bn) : layered_solve(p, part, &bn);
    if (rc < 0) {
        sch_partition_free(part);
        return rc;
    }
    PS_ASSERT(part->first[0] == 0 && part->first[p->n_stages] == p->n_layers);
    if (bottleneck)
        *bottleneck = bn;
    *out = part;
    return 0;
}

/* ---- GPipe's heuristic: minimum sum of squared stage costs ---- */

__extension__ typedef __int128 i128;

struct sq {
    const struct sch_part_problem *p;
    const int64_t *pre;
    i128 *prev, *cur;
    int32_t *opt;        /* [rows of the block][L+1], or NULL on a forward pass */
    int k0;              /* the block's first row */
    int L;
};

static void sq_layer(struct sq *q, int k, int elo, int ehi, int alo, int ahi)
{
    if (elo > ehi)
        return;
    int mid = elo + (ehi - elo) / 2, best_a = -1;
    i128 best = 0;
    int top = ahi < mid - 1 ? ahi : mid - 1;
    for (int a = alo; a <= top; a++) {
        if (q->prev[a] < 0)
            continue; /* unreachable */
        i128 d = q->pre[mid] - q->pre[a];
        i128 v = q->prev[a] + d * d;
        if (best_a < 0 || v < best) {
            best = v;
            best_a = a;
        }
    }
    PS_ASSERT(best_a >= 0);
    q->cur[mid] = best;
    if (q->opt)
        q->opt[(size_t)(k - q->k0) * (size_t)(q->L + 1) + (size_t)mid] = best_a;
    sq_layer(q, k, elo, mid - 1, alo, best_a);
    sq_layer(q, k, mid + 1, ehi, best_a, ahi);
}

/* Row k of the DP: q->cur from q->prev (stages 0..k placed), then swapped. */
static void sq_row(struct sq *q, int k, int K)
{
    int L = q->L;
    q->pre = q->p->time[q->p->same ? 0 : k].pre;
    for (int i = 0; i <= L; i++)
        q->cur[i] = -1;
    /* k + 1 stages end at e in [k + 1, L - (K - k - 1)], the last at L */
    int elo = k + 1 == K ? L : k + 1, ehi = L - (K - k - 1);
    sq_layer(q, k, elo, ehi, k, ehi - 1);
    i128 *t = q->prev;
    q->prev = q->cur;
    q->cur = t;
}

/* The read-back keeps the argmin of every row of a block of B rows; the DP
 * rows at each block's start are checkpointed on a first pass, and each
 * block is recomputed from its checkpoint, last first, to walk the cuts
 * back. One block (no recomputation) while K (L+1) fits SQ_OPT_MAX entries;
 * beyond, B ~ 2 sqrt(K): memory O(sqrt(K) L) instead of O(K L) (K = 1024
 * stages of 100 000 layers kept 400 MB and was refused), time at most
 * twice the DP's. */
#define SQ_OPT_MAX (1 << 25)

int sch_part_min_sq_sum(const struct sch_part_problem *p, struct sch_partition **out)
{
    int B = p->n_stages;
    if ((double)p->n_stages * (p->n_layers + 1) > SQ_OPT_MAX)
        for (B = 1; (B + 1) * (B + 1) <= 4 * p->n_stages; B++)
            ;
    return sch_part_min_sq_sum_block(p, B, out);
}

int sch_part_min_sq_sum_block(const struct sch_part_problem *p, int B,
                              struct sch_partition **out)
{
    *out = NULL;
    int rc = check_problem(p);
    if (rc < 0)
        return rc;
    int L = p->n_layers, K = p->n_stages;
    if (B < 1 || B > K)
        B = K;
    int nb = (K + B - 1) / B;
    struct sq q = { .p = p, .L = L };
    size_t row = (size_t)L + 1;
    q.prev = malloc(sizeof *q.prev * row);
    q.cur = malloc(sizeof *q.cur * row);
    int32_t *opt = malloc(sizeof *opt * (size_t)B * row);
    i128 *ckpt = malloc(sizeof *ckpt * (size_t)nb * row); /* row before block j */
    struct sch_partition *part = sch_partition_new(K, L);
    if (!q.prev || !q.cur || !opt || !ckpt || !part) {
        rc = ps_error(PS_ENOMEM, "out of memory partitioning %d layers into %d stages "
                       "(gpipe strategy)", L, K);
        goto err_free_dp;
    }
    for (int i = 0; i <= L; i++)
        q.prev[i] = -1;
    q.prev[0] = 0;
    for (int k = 0; k < (nb - 1) * B; k++) { /* forward pass: the checkpoints */
        if (k % B == 0)
            memcpy(ckpt + (size_t)(k / B) * row, q.prev, sizeof *ckpt * row);
        sq_row(&q, k, K);
    }
    memcpy(ckpt + (size_t)(nb - 1) * row, q.prev, sizeof *ckpt * row);
    q.opt = opt;
    int e = L;
    for (int j = nb - 1; j >= 0; j--) {
        int k0 = j * B, k1 = k0 + B < K ? k0 + B : K;
        memcpy(q.prev, ckpt + (size_t)j * row, sizeof *ckpt * row);
        q.k0 = k0;
        for (int k = k0; k < k1; k++)
            sq_row(&q, k, K);
        for (int k = k1 - 1; k >= k0; k--) {
            e = opt[(size_t)(k - k0) * row + (size_t)e];
            part->first[k] = e;
        }
    }
    *out = part;
    part = NULL;
err_free_dp:
    sch_partition_free(part);
    free(q.prev);
    free(q.cur);
    free(opt);
    free(ckpt);
    return rc;
}
