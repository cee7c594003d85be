/* ana_plan_cache: the partitions and costs of the plan search and the stash
 * counts of its schedules, each cached by what it depends on (see
 * ana_plan_int.h): an entry is made on a miss, with the lower bounds of its
 * cut(s); the bounds that use them are in ana_plan_bounds.c. */
#include "analysis/ana_plan_int.h"
#include "base/ps_error.h"
#include "sched/sch_partitioner.h"
#include "sched/sch_zb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- partitions and costs, cached by what they depend on ---- */

static uint64_t pkey_hash(const struct ana_plan_pkey *k)
{
    uint64_t h = 1469598103934665603ULL, mb;
    memcpy(&mb, &k->micro, sizeof mb);
    uint64_t w[] = { (uint64_t)k->v, (uint64_t)k->vee, (uint64_t)k->K, (uint64_t)k->M,
                     (uint64_t)k->remat, mb };
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        h = (h ^ w[i]) * 1099511628211ULL;
    for (const char *c = k->sched; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    return h;
}

static int pkey_eq(const struct ana_plan_pkey *a, const struct ana_plan_pkey *b)
{
    return a->v == b->v && a->vee == b->vee && a->K == b->K && a->M == b->M &&
           a->remat == b->remat && a->micro == b->micro && !strcmp(a->sched, b->sched);
}

void ana_plan_pcache_release(struct ana_plan_pcache *c)
{
    for (size_t i = 0; c->e && i < c->cap; i++)
        if (c->e[i].used) {
            sch_partition_free(c->e[i].part);
            sch_costs_free(c->e[i].costs);
            sch_partition_free(c->e[i].upart);
            sch_costs_free(c->e[i].ucosts);
            free(c->e[i].stage_device);
        }
    free(c->e);
}

static void cut_bounds(const struct ana_plan_spec *sp, const struct ana_plan_pkey *k, int S,
                       const struct sch_costs *costs, struct ana_plan_pentry *e);

/* The capped optimum, else the unconstrained one; the costs of it (and of the
 * unconstrained one where the engine is to judge it: upart); their bounds. */
static void pentry_fill(const struct ana_plan_spec *sp, struct ana_plan_pentry *e,
                        const int64_t *counts)
{
    const struct ana_plan_pkey *k = &e->k;
    int S = k->v * k->K, rc;
    sch_part_model *m = NULL;
    struct sch_schedule *sched = NULL;
    struct ana_plan_layout l = { k->v, k->vee };
    if (!(e->stage_device = malloc(sizeof *e->stage_device * (size_t)S))) {
        e->rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int s = 0; s < S; s++)
        e->stage_device[s] = ana_plan_layout_dev(l, k->K, s);
    struct sch_part_opts o = { .n_stages = S, .stage_device = e->stage_device,
                               .n_micro = k->M, .micro_batch = k->micro, .remat = k->remat,
                               .cap_mode = sp->cap_mode, .cap = sp->cap };
    if (k->sched[0] && counts) { /* that schedule's own stashes, counted already */
        o.counts = counts;
    } else if (k->sched[0]) { /* that schedule's own stashes */
        if ((rc = sch_schedule_build(k->sched, k->K, k->M, k->remat, &sched)) < 0) {
            e->rc = rc;
            goto out;
        }
        o.sched = sched;
    }
    /* The unconstrained optimum first (the fast path of sch_part_solve):
     * when it meets the cap it is an optimum under the cap too; else the
     * capped search; else (none meets the closed-form cap) the
     * unconstrained one, for the engine to judge. */
    int64_t bn;
    sch_part_model *um = NULL;
    struct sch_part_opts uo = o;
    uo.cap_mode = 0;
    uo.sched = NULL; /* no memory in the unconstrained problem: the stages alike, the */
    uo.counts = NULL; /* fast path (a schedule's counts told them apart) */
    struct sch_partition *up = NULL;
    if ((rc = sch_part_model_new(sp->profile, sp->topo, &uo, &um)) == 0 &&
        (rc = sch_part_solve(sch_part_model_problem(um), &up, &bn)) == 0 &&
        (rc = sch_part_model_new(sp->profile, sp->topo, &o, &m)) == 0) {
        /* a device holding several stages (V, interleaved) holds their sum */
        int feasible = sch_part_model_fits(m, up);
        e->binding = !feasible;
        if (feasible) {
            e->part = up;
            up = NULL;
            e->capped = 1;
        } else if ((rc = sch_part_model_solve(m, &e->part)) == 0) {
            e->capped = 1;
            /* the closed form is an upper bound (each class of buffer at its
             * own most, a device's stages summed): the engine judges the
             * optimum it refused, at simulation (helper-128: a slower cut was
             * planned while the optimum fit); not zb-auto's fitted order, nor a
             * layout entry of several stages a device (no schedule of its own) */
            const char *nm = k->sched[0] ? k->sched : k->v == 1 && !k->vee ? "gpipe" : NULL;
            if (nm && strcmp(nm, "zb-auto") && !sch_partition_equal(up, e->part)) {
                e->upart = up;
                up = NULL;
            }
        } else if (rc == -PS_ENOFIT) {
            e->part = up;
            up = NULL;
            rc = 0;
        }
    }
    sch_partition_free(up);
    sch_part_model_free(um);
    if (rc == 0)
        rc = sch_costs_new(sp->profile, sp->topo, e->part, e->stage_device, k->micro,
                           &e->costs);
    if (rc == 0 && e->upart) {
        int urc = sch_costs_new(sp->profile, sp->topo, e->upart, e->stage_device, k->micro,
                                &e->ucosts);
        if (urc == -PS_ENOMEM) {
            rc = urc;
        } else if (urc < 0) { /* beyond the engine's range: no candidate */
            ps_error_clear();
            sch_partition_free(e->upart);
            e->upart = NULL;
        }
    }
    if (rc < 0) {
        e->rc = rc;
        goto out;
    }
    /* the bounds hold for either cut: each the least of the two */
    e->tlb = e->tlb_plain = e->mem_lb = INT64_MAX;
    e->over = 1;
    for (int u = 0; u < 1 + (e->upart != NULL) && e->rc == 0; u++)
        cut_bounds(sp, k, S, u ? e->ucosts : e->costs, e);
out:
    if (e->rc < 0)
        ana_plan_msg_copy(e->msg, sizeof e->msg, ps_errmsg());
    sch_part_model_free(m);
    sch_schedule_free(sched);
}

/* The lower bounds of one cut's costs (pentry_fill), each folded into e's as
 * the least: time (with and without a split backward's tail), the largest
 * device's parameters and stash; over only where every cut's need is over. */
static void cut_bounds(const struct ana_plan_spec *sp, const struct ana_plan_pkey *k, int S,
                       const struct sch_costs *costs, struct ana_plan_pentry *e)
{
    /* The engine's compute ops back to back on each device, after the
     * forward of some micro-batch has gone through the stages before its
     * first one (the first op on a device is an F whose earlier stages are
     * all on other devices). Without a split backward, only U follows a
     * device's last B, whose gradient then goes back through the stages
     * before it: the tail. Memory: the parameters, and the stash of its
     * largest stage at that stage's backward. */
    int64_t *b = calloc((size_t)k->K * 6, sizeof *b);
    if (!b) {
        e->rc = ps_error(PS_ENOMEM, "out of memory");
        return;
    }
    int64_t *st = b + k->K, *mx = st + k->K, *head = mx + k->K, *tail = head + k->K;
    int64_t *upd = tail + k->K, nr = ana_plan_n_remat(k->remat, k->M);
    int64_t before = 0, back = 0;
    for (int d = 0; d < k->K; d++)
        head[d] = tail[d] = INT64_MAX;
    for (int s = 0; s < S; s++) {
        const struct sch_stage_cost *c = &costs->st[s];
        int d = c->device;
        b[d] += (k->M - nr) * (c->fwd + c->bwd) +
                nr * (c->fwd_nostash + c->recomp + c->bwd_remat) + c->update;
        st[d] += c->param_bytes;
        upd[d] += c->update;
        mx[d] = c->mem.stash > mx[d] ? c->mem.stash : mx[d];
        head[d] = before < head[d] ? before : head[d];
        tail[d] = back < tail[d] ? back : tail[d];
        before += c->fwd < c->fwd_nostash ? c->fwd : c->fwd_nostash;
        back += c->bwd < c->bwd_remat ? c->bwd : c->bwd_remat;
    }
    int over = 0;
    int64_t tlb = 0, tlb_plain = 0, mem_lb = 0;
    for (int d = 0; d < k->K; d++) {
        int64_t t = b[d] + (head[d] == INT64_MAX ? 0 : head[d]), need = st[d] + mx[d];
        int64_t tp = t + (tail[d] != INT64_MAX && tail[d] > upd[d] ? tail[d] - upd[d] : 0);
        double cap = sp->cap_mode == 2 ? sp->cap : sp->topo->devices[d].memory;
        tlb = t > tlb ? t : tlb;
        tlb_plain = tp > tlb_plain ? tp : tlb_plain;
        mem_lb = need > mem_lb ? need : mem_lb;
        over |= (double)need > cap;
    }
    e->tlb = tlb < e->tlb ? tlb : e->tlb;
    e->tlb_plain = tlb_plain < e->tlb_plain ? tlb_plain : e->tlb_plain;
    e->mem_lb = mem_lb < e->mem_lb ? mem_lb : e->mem_lb;
    e->over &= over;
    free(b);
}

int ana_plan_pcache_get(const struct ana_plan_spec *sp, struct ana_plan_pcache *c,
                        const int64_t *counts, const struct ana_plan_pkey *k,
                        struct ana_plan_pentry **out)
{
    if ((size_t)(c->n + 1) * 2 > c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 256;
        struct ana_plan_pentry *ne = calloc(ncap, sizeof *ne);
        if (!ne)
            return ps_error(PS_ENOMEM, "out of memory");
        for (size_t i = 0; i < c->cap; i++)
            if (c->e[i].used) {
                size_t j = pkey_hash(&c->e[i].k) & (ncap - 1);
                while (ne[j].used)
                    j = (j + 1) & (ncap - 1);
                ne[j] = c->e[i];
            }
        free(c->e);
        c->e = ne;
        c->cap = ncap;
    }
    size_t j = pkey_hash(k) & (c->cap - 1);
    while (c->e[j].used && !pkey_eq(&c->e[j].k, k))
        j = (j + 1) & (c->cap - 1);
    struct ana_plan_pentry *e = &c->e[j];
    if (!e->used) {
        memset(e, 0, sizeof *e);
        e->used = 1;
        e->k = *k;
        c->n++;
        pentry_fill(sp, e, counts);
    }
    *out = e;
    return 0;
}

/* ---- stashes in flight, cached by schedule ---- */

/* Per (schedule, K, M, remat): the most stashes each stage holds at once
 * in its device's program order (F of a stashing micro-batch or R: one
 * more; the end of its backward: one less; sch_mem_effect with one byte
 * of stash). Partition- and batch-free, so every R and micro-batch size
 * shares it; device d's peak is at least its parameters plus, for each of
 * its stages, that count times the stage's stash (exact with one stage per
 * device). */

static uint64_t ckey_hash(const char *name, int K, int M, enum sch_remat r)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    uint64_t w[] = { (uint64_t)K, (uint64_t)M, (uint64_t)r };
    for (int i = 0; i < 3; i++)
        h = (h ^ w[i]) * 1099511628211ULL;
    return h;
}

void ana_plan_ccache_release(struct ana_plan_ccache *c)
{
    for (size_t i = 0; c->e && i < c->cap; i++) {
        free(c->e[i].cnt);
        free(c->e[i].pcnt);
    }
    free(c->e);
}

static void centry_fill(struct ana_plan_centry *e)
{
    struct sch_schedule *s = NULL;
    ps_error_clear();
    if ((e->rc = sch_schedule_build(e->name, e->K, e->M, e->remat, &s)) < 0)
        goto out;
    e->S = s->n_stages;
    e->fitted = sch_zbauto_limit(s) > 0;
    /* the partitioner's counts; the stash count is their first (only compute
     * ops change it: sends and receives move inputs and outputs) */
    e->cnt = malloc(sizeof *e->cnt * (size_t)e->S);
    e->pcnt = malloc(sizeof *e->pcnt * 4 * (size_t)e->S);
    if (!e->cnt || !e->pcnt) {
        e->rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    sch_part_stage_counts(s, e->pcnt);
    for (int st = 0; st < e->S; st++)
        e->cnt[st] = (int)e->pcnt[4 * st];
    int64_t R = ana_plan_n_remat(e->remat, e->M), cs = (e->M - R) > (R > 0) ? e->M - R : (R > 0);
    int64_t ci = R > 0 ? e->M : 1;
    e->dominated = 1;
    for (int st = 0; st < e->S; st++) {
        const int64_t *q = e->pcnt + 4 * st;
        e->dominated &= q[0] <= cs && q[1] <= ci && q[2] <= 1 && q[3] == 0;
    }
out:
    if (e->rc < 0)
        ana_plan_msg_copy(e->msg, sizeof e->msg, ps_errmsg());
    sch_schedule_free(s);
}

int ana_plan_ccache_get(struct ana_plan_ccache *c, const struct ana_plan_cfg *g,
                        const struct ana_plan_centry **out)
{
    if ((size_t)(c->n + 1) * 2 > c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 256;
        struct ana_plan_centry *ne = calloc(ncap, sizeof *ne);
        if (!ne)
            return ps_error(PS_ENOMEM, "out of memory");
        for (size_t i = 0; i < c->cap; i++)
            if (c->e[i].used) {
                size_t j = ckey_hash(c->e[i].name, c->e[i].K, c->e[i].M, c->e[i].remat) &
                           (ncap - 1);
                while (ne[j].used)
                    j = (j + 1) & (ncap - 1);
                ne[j] = c->e[i];
            }
        free(c->e);
        c->e = ne;
        c->cap = ncap;
    }
    size_t j = ckey_hash(g->schedule, g->K, g->M, g->remat) & (c->cap - 1);
    while (c->e[j].used && !(c->e[j].K == g->K && c->e[j].M == g->M &&
                             c->e[j].remat == g->remat && !strcmp(c->e[j].name, g->schedule)))
        j = (j + 1) & (c->cap - 1);
    struct ana_plan_centry *e = &c->e[j];
    if (!e->used) {
        e->used = 1;
        snprintf(e->name, sizeof e->name, "%s", g->schedule);
        e->K = g->K;
        e->M = g->M;
        e->remat = g->remat;
        c->n++;
        centry_fill(e);
    }
    *out = e;
    return 0;
}
