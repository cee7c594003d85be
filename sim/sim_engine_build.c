/* sim_engine, construction: the tables an engine runs from (sim_engine.h),
 * built once per schedule: each (stage, kind)'s costs and ledger effects
 * by re-materialized or not, their shared rows and event-queue lanes, each
 * transfer's route over the topology's links, and each device's streams
 * at their first ops; and the engine's release.
 * Cost: O(stages x kinds + links + devices) beyond the schedule's lists. */
#include "sim/sim_engine_int.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t sim_engine_bytes(int n_stages, int n_micro, int record_trace)
{
    size_t x = 2 * (size_t)n_stages * (size_t)n_micro;
    return (2 * x / 64 + 1) * sizeof(uint64_t) + (record_trace ? x * sizeof(sch_time) : 0);
}

/* ---- construction ---- */

static int cmp_time(const void *a, const void *b)
{
    sch_time x = *(const sch_time *)a, y = *(const sch_time *)b;
    return x < y ? -1 : x > y;
}

/* One event-queue lane per distinct duration (see sim_evq.h). */
static int assign_lanes(sim_engine *e)
{
    size_t n = (size_t)e->s->n_stages * SCH_OP_NKINDS * 3, u = 0;
    sch_time *d = malloc(n * sizeof *d);
    if (!d)
        return ps_error(PS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        d[i] = i % 3 < 2 ? e->info[i / 3].dur[i % 3] : e->info[i / 3].lat;
    qsort(d, n, sizeof *d, cmp_time);
    for (size_t i = 0; i < n; i++)
        if (!u || d[i] != d[u - 1])
            d[u++] = d[i];
    for (size_t i = 0; i < n; i++) {
        struct opinfo *oi = &e->info[i / 3];
        const sch_time *key = i % 3 < 2 ? &oi->dur[i % 3] : &oi->lat;
        const sch_time *f = bsearch(key, d, u, sizeof *d, cmp_time);
        *(i % 3 < 2 ? &oi->lane[i % 3] : &oi->dlane) = (int32_t)(f - d);
    }
    free(d);
    e->n_dur_lanes = (int)u;
    /* drawn op times: each stream's op ends in a lane of its own (a stream
     * runs one op at a time, so its lane holds one event and stays in order) */
    return sim_evq_init(&e->evq, (int)u + (e->draw ? e->n_dev * NRUN : 0));
}

static int cmp_row(const void *a, const void *b, void *base)
{
    const struct opinfo *rows = base;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int c = memcmp(&rows[x], &rows[y], sizeof *rows);
    return c ? c : (x > y) - (x < y);
}

/* Stages alike cost alike: the loop reads one copy of each distinct row
 * (rows are calloc'ed, so their padding compares equal), a table of a few
 * rows instead of 80 bytes per (stage, kind) spread over the cache. */
static int share_rows(sim_engine *e)
{
    int32_t n = e->s->n_stages * SCH_OP_NKINDS, u = 0;
    int32_t *idx = malloc((size_t)n * sizeof *idx);
    struct opinfo *rows = calloc((size_t)n, sizeof *rows);
    e->row = malloc((size_t)n * sizeof *e->row);
    if (!idx || !rows || !e->row) {
        free(idx);
        free(rows);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    for (int32_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, (size_t)n, sizeof *idx, cmp_row, e->info);
    for (int32_t i = 0; i < n; i++) {
        if (!u || memcmp(&rows[u - 1], &e->info[idx[i]], sizeof *rows))
            memcpy(&rows[u++], &e->info[idx[i]], sizeof *rows);
        e->row[idx[i]] = u - 1;
    }
    free(idx);
    free(e->info);
    e->info = rows;
    return 0;
}

/* Appends resource r to the hold list of oi unless it holds it already. */
static int hold_add(sim_engine *e, struct opinfo *oi, int32_t r)
{
    if (oi->res < 0) {
        oi->res = e->n_hold;
        oi->n_res = 0;
    }
    for (int i = 0; i < oi->n_res; i++)
        if (e->hold[oi->res + i] == r)
            return 0;
    if (e->n_hold == e->cap_hold) {
        int cap = e->cap_hold ? 2 * e->cap_hold : 64;
        int32_t *h = realloc(e->hold, (size_t)cap * sizeof *h);
        if (!h)
            return ps_error(PS_ENOMEM, "out of memory");
        e->hold = h;
        e->cap_hold = cap;
    }
    e->hold[e->n_hold++] = r;
    oi->n_res++;
    return 0;
}

/* The resource of hop h (mdl_route.c: the link's, per direction if it is
 * dedicated). */
static int32_t hop_res(const struct mdl_topology *t, const int *first_res,
                       const struct mdl_hop *h)
{
    return first_res[h->link] + (t->links[h->link].shared ? 0 : h->dir);
}

/* AR(st): a ring all-reduce of the stage's gradients (the memory policy's
 * bytes per parameter, sch_costs_grad_bytes: 4, FP32, without one) over its
 * replicas' devices r * D + dev, r = 0..R-1. Each of the 2(R-1) steps moves
 * bytes/R over every ring route at once, so a step lasts as long as the
 * busiest link resource takes to carry the chunks of the routes that cross
 * it, plus the longest route's latency:
 *   2(R-1) * max over resources (sum over the routes crossing it of
 *                                bytes/R / the route's least bandwidth)
 *   + 2(R-1) * max latency
 * which is 2(R-1)/R * bytes / min bandwidth on a ring of its own links (each
 * resource crossed once), and 2(R-1) * bytes / bandwidth on one shared bus
 * that all R routes cross (helper-69: it was charged as one route's, R times
 * too little, though a bus serializes the pipeline's copies). A route's latency
 * is the sum of its hops' latency + overhead_s. Replicas are symmetric, so only
 * replica 0 is simulated; the all-reduce holds every resource its ring's routes
 * cross for all of that time (contending with the pipeline's transfers on
 * shared buses and switch uplinks; a ring of direct dedicated links uses links
 * no pipeline transfer of replica 0 does). */
static int ring_allreduce(sim_engine *e, const struct mdl_topology *t, const int *first_res,
                          int st)
{
    const struct sch_schedule *s = e->s;
    int R = s->n_replicas, D = s->n_devices, dev = s->stage_device[st], rc = 0;
    double lat = 0, bytes = e->c->st[st].params * sch_costs_grad_bytes(e->c);
    struct opinfo *oi = &e->info[(int64_t)st * SCH_OP_NKINDS + SCH_OP_ALLREDUCE];
    oi->res = -1;
    oi->n_res = 0;
    double *load = calloc((size_t)e->n_res + 1, sizeof *load); /* s per ring step */
    if (!load)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int r = 0; r < R && rc == 0; r++) {
        int a = r * D + dev, b = ((r + 1) % R) * D + dev;
        struct mdl_route rt;
        int rr = mdl_topology_route(t, a, b, &rt);
        if (rr == -PS_ENOMEM) {
            rc = rr;
            break;
        }
        if (rr < 0 && rt.too_long) { /* a route, but too long: the router's reason */
            char why[PS_ERRMSG_MAX];
            snprintf(why, sizeof why, "%s", ps_errmsg());
            rc = ps_error(PS_EINVAL, "%s (the all-reduce of stage %d across %d replicas)", why,
                          st, R);
            break;
        }
        if (rr < 0) {
            rc = ps_error(PS_EINVAL, "topology %s: no link or route between %s and %s for "
                          "the all-reduce of stage %d across %d replicas", t->path,
                          t->devices[a].name, t->devices[b].name, st, R);
            break;
        }
        if (rt.latency > lat)
            lat = rt.latency;
        for (int h = 0; h < rt.n_hops && rc == 0; h++) { /* each chunk holds its whole
            route for bytes / its least bandwidth, as a transfer does (cut through); each
            hop at its own bandwidth undercharged a fast shared hop behind slower ones:
            helper-118) */
            int32_t res = hop_res(t, first_res, &rt.hops[h]);
            load[res] += bytes / R / rt.bandwidth;
            rc = hold_add(e, oi, res);
        }
    }
    double step = 0;
    for (int i = 0; i < e->n_res; i++)
        step = load[i] > step ? load[i] : step;
    double secs = 2.0 * (R - 1) * (step + lat);
    if (rc == 0 && !(secs <= SCH_MAX_OP_S)) { /* it was clamped to the bound, exit 0 */
        /* every hop of a route is charged at its least bandwidth, so the busiest
         * load ties along the route: the slowest link of the busiest is named
         * (helper-129: a fast link first on the route was) */
        int l = 0;
        for (int i = 0, k = 0, found = 0; i < e->n_res; i++) {
            while (k + 1 < t->n_links && first_res[k + 1] <= i)
                k++;
            if (load[i] == step && (!found || t->links[k].bandwidth < t->links[l].bandwidth)) {
                l = k;
                found = 1;
            }
        }
        rc = mdl_topology_error_at(
            ps_error(PS_EINVAL, "%s: links[%d].bandwidth: link %s: the all-reduce of stage %d's "
                     "%g bytes of gradients across %d replicas takes %g s, more than %g s",
                     t->path, l, t->links[l].name, st, bytes, R, secs, SCH_MAX_OP_S), t);
    }
    free(load);
    if (rc < 0)
        return rc;
    oi->dur[0] = oi->dur[1] = sch_seconds_to_time(secs);
    return 0;
}

/* Link resources and the per-(stage, kind) table of durations and effects. */
static int build_info(sim_engine *e, const struct mdl_topology *t)
{
    const struct sch_schedule *s = e->s;
    int S = s->n_stages, rc = 0;
    struct mdl_route *rts = NULL; /* the replicas' copies of a transfer */
    int *first_res = malloc((size_t)(t->n_links ? t->n_links : 1) * sizeof *first_res);
    if (!first_res)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; i < t->n_links; i++) {
        first_res[i] = e->n_res;
        e->n_res += t->links[i].shared ? 1 : 2;
    }
    e->res = calloc((size_t)e->n_res + 1, sizeof *e->res);
    if (s->n_replicas > 1)
        rts = malloc((size_t)s->n_replicas * sizeof *rts);
    if (!e->res || (s->n_replicas > 1 && !rts)) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    for (int st = 0; st < S; st++) {
        const struct sch_stage_cost *sc = &e->c->st[st];
        for (int k = 0; k < SCH_OP_NKINDS; k++) {
            struct opinfo *oi = &e->info[(int64_t)st * SCH_OP_NKINDS + k];
            struct sch_op op = { (uint8_t)k, st, 0 };
            oi->res = -1;
            oi->n_res = 0;
            /* costs and the ledger rule, for a re-materialized micro-batch and not */
            struct sch_schedule tmp = *s;
            tmp.remat = SCH_REMAT_NEVER;
            oi->dur[0] = sch_costs_op_time(e->c, &tmp, &op);
            sch_mem_effect(&tmp, &op, &sc->mem, &oi->at_start[0], &oi->at_end[0]);
            tmp.remat = SCH_REMAT_ALWAYS;
            oi->dur[1] = sch_costs_op_time(e->c, &tmp, &op);
            sch_mem_effect(&tmp, &op, &sc->mem, &oi->at_start[1], &oi->at_end[1]);
            oi->pre = k == SCH_OP_FWD ? sc->fwd_pre : k == SCH_OP_BWD ? sc->bwd_pre : 0;
            oi->post = k == SCH_OP_FWD ? sc->fwd_post : k == SCH_OP_BWD ? sc->bwd_post : 0;
        }
        for (int dir = 0; dir < 2; dir++) {
            int peer = dir == 0 ? st + 1 : st - 1;
            if (peer < 0 || peer >= S)
                continue;
            int a = s->stage_device[st], b = s->stage_device[peer];
            if (a == b)
                continue;
            struct mdl_route rt;
            int rr = mdl_topology_route(t, a, b, &rt);
            if (rr == -PS_ENOMEM) {
                rc = rr;
                goto out;
            }
            if (rr < 0) {
                if (rt.too_long) { /* a route, but too long: the router's reason */
                    char why[PS_ERRMSG_MAX];
                    snprintf(why, sizeof why, "%s", ps_errmsg());
                    rc = ps_error(PS_EINVAL, "%s (stages %d and %d)", why, st, peer);
                } else {
                    rc = ps_error(PS_EINVAL, "topology %s: no link between %s and %s (stages "
                                   "%d and %d): no link or route joins them", t->path,
                                   t->devices[a].name, t->devices[b].name, st, peer);
                }
                goto out;
            }
            struct opinfo *oi = &e->info[(int64_t)st * SCH_OP_NKINDS +
                                         (dir == 0 ? SCH_OP_SEND_ACT : SCH_OP_SEND_GRAD)];
            int64_t bytes = sch_stage_wire(sc, dir == 0);
            for (int h = 0; h < rt.n_hops; h++)
                if ((rc = hold_add(e, oi, hop_res(t, first_res, &rt.hops[h]))) < 0)
                    goto out;
            /* cut-through: the bytes hold every hop at the least bandwidth;
             * the receiver has them the route's latency later. With replicas
             * it stands for every replica's copy at the same moment
             * (mdl_route_copies): it holds every link a copy crosses, for the
             * busiest one's sum, and delivers after the longest latency */
            double occ = (double)bytes / rt.bandwidth, lat = rt.latency;
            if (s->n_replicas > 1) {
                if ((rc = mdl_route_copies(t, s->n_devices, s->n_replicas, a, b, (double)bytes,
                                           rts, &occ, &lat)) < 0)
                    goto out;
                for (int r = 1; r < s->n_replicas; r++)
                    for (int h = 0; h < rts[r].n_hops; h++)
                        if ((rc = hold_add(e, oi, hop_res(t, first_res, &rts[r].hops[h]))) < 0)
                            goto out;
            }
            if (!(occ + lat <= SCH_MAX_OP_S)) {
                const struct mdl_link *sl = mdl_route_slowest(t, &rt);
                for (int r = 1; r < s->n_replicas; r++) { /* a replica's copy may be the
                                                           * slow one (helper-129) */
                    const struct mdl_link *x = mdl_route_slowest(t, &rts[r]);
                    sl = x->bandwidth < sl->bandwidth ? x : sl;
                }
                rc = mdl_topology_error_at(
                    ps_error(PS_EINVAL, "%s: links[%d].bandwidth: link %s: a transfer of %lld "
                             "bytes takes %g s, more than %g s", t->path, (int)(sl - t->links),
                             sl->name, (long long)bytes, occ + lat, SCH_MAX_OP_S), t);
                goto out;
            }
            oi->dur[0] = oi->dur[1] = sch_seconds_to_time(occ);
            oi->lat = sch_seconds_to_time(lat);
        }
    }
    for (int st = 0; st < S && !rc && s->n_replicas > 1; st++)
        rc = ring_allreduce(e, t, first_res, st);
    /* a queue for each link direction some op holds, not for every one the
     * topology has (helper-109: 2K + 1 entries for each of a full mesh's
     * 130 816 links took 1 GB at K = 512, outside the memory estimate) */
    for (int i = 0; !rc && i < e->n_hold; i++) {
        struct resource *r = &e->res[e->hold[i]];
        if (r->q)
            continue;
        r->cap = s->n_devices * NRUN + 1; /* a stream queues one op at most */
        if (!(r->q = malloc((size_t)r->cap * sizeof *r->q)))
            rc = ps_error(PS_ENOMEM, "out of memory");
    }
    if (!rc)
        rc = assign_lanes(e);
    if (!rc)
        rc = share_rows(e);
out:
    free(rts);
    free(first_res);
    return rc;
}

/* Adds n ops like op to its stream's count and to the clock's and ledger's
 * bounds. */
static void tally(const sim_engine *e, const struct sch_op *op, int64_t n, int64_t *cnt,
                  double *time, double *bytes)
{
    const struct opinfo *oi = info_of(e, op);
    cnt[run_stream(op->kind)] += n;
    *time += (double)n * ((double)(oi->dur[0] > oi->dur[1] ? oi->dur[0] : oi->dur[1]) +
                          (double)oi->lat);
    for (int r = 0; r < 2; r++)
        *bytes += (double)n * (fabs((double)oi->at_start[r]) + fabs((double)oi->at_end[r]));
}

/* Validates the schedule device by device, as sch_schedule_validate would
 * (not its one-thread replay, which the engine's deadlock check covers),
 * counts each stream's ops and sets the streams on their first op. No time
 * or byte count may wrap: every start is the end of some chain of distinct
 * ops, so the sum of all durations bounds the clock, and the sum of all
 * allocations bounds the ledger. O(ops). A compact schedule's runs come
 * from sched/'s closed forms, which tests check against their lists (and
 * the lists against the validator): the engine tallies them in O(runs)
 * without validating again. */
static int build_streams(sim_engine *e)
{
    const struct sch_schedule *s = e->s;
    struct sch_devindex x;
    int rc;
    if ((rc = sch_devindex_init(&x, s)) < 0)
        return rc;
    double time = 0, bytes = 0;
    for (int st = 0; st < s->n_stages; st++)
        bytes += (double)e->c->st[st].param_bytes;
    for (int d = 0; d < e->n_dev; d++) {
        int64_t cnt[NRUN] = { 0 };
        if (s->runs) { /* a compact form, sched/'s own: tallied run by run */
            for (int r = s->run_first[d]; r < s->run_first[d + 1]; r++) {
                const struct sch_run *u = &s->runs[r];
                for (int j = 0; j < u->n; j++) {
                    const struct sch_op op = { u->kind[j], u->stage, 0 };
                    tally(e, &op, u->count, cnt, &time, &bytes);
                }
            }
        } else {
            if ((rc = sch_devindex_fill(&x, s, d)) < 0 ||
                (rc = sch_schedule_check_device(s, &x, d)) < 0)
                break;
            for (int i = 0; i < s->n_ops[d]; i++)
                tally(e, &s->ops[d][i], 1, cnt, &time, &bytes);
        }
        for (int k = 0; k < NRUN; k++) {
            struct stream *st = &e->devs[d].st[k];
            st->dev = d;
            st->left = (int32_t)cnt[k];
            st->pos = -1;
            st->end = s->runs ? s->run_first[d + 1] : s->n_ops[d];
            sim_advance_slow(e, st, k);
        }
    }
    sch_devindex_release(&x);
    if (rc < 0)
        return rc;
    if (e->draw) /* a drawn op takes up to 16 x its tabled time (push_compute) */
        time *= 16;
    /* every device's ops and transfers summed: no path through them is longer,
     * so no time reaches 4e18 ns, with room to spare under int64's 9.2e18 */
    if (time > 4e18)
        return ps_error(PS_EINVAL, "schedule %s: its ops add up to %g s%s over all devices, "
                         "beyond the simulator's bound of 4e9 s (127 years, under the int64 "
                         "nanosecond clock's 292); check %s for huge figures", s->name,
                         time * 1e-9, e->draw ? " at 16 x their times (drawn)" : "", e->inputs);
    if (bytes > 4e18)
        return ps_error(PS_EINVAL, "schedule %s: its buffers add up to %g bytes, beyond the "
                         "simulator's memory ledger; check the profile and topology for huge "
                         "figures", s->name, bytes);
    return 0;
}

int sim_engine_new(const struct sch_schedule *s, const struct sch_costs *c,
                   const struct mdl_topology *t, const struct sim_engine_opts *o,
                   sim_engine **out)
{
    *out = NULL;
    int rc;
    if (c->n_stages != s->n_stages)
        return ps_error(PS_EINVAL, "costs for %d stages, schedule has %d", c->n_stages,
                         s->n_stages);
    int R = s->n_replicas > 1 ? s->n_replicas : 1;
    if ((int64_t)s->n_devices * R > t->n_devices)
        return ps_error(PS_ENOFIT, "K = %d with %d replica(s) needs %lld devices, topology %s "
                         "has %d", s->n_devices, R, (long long)s->n_devices * R, t->path,
                         t->n_devices);
    for (int r = 1; r < R; r++) /* one replica is simulated for all */
        for (int d = 0; d < s->n_devices; d++) {
            const struct mdl_device *x = &t->devices[d], *y = &t->devices[r * s->n_devices + d];
            const char *f = mdl_device_differs(x, y);
            if (f)
                return ps_error(PS_EINVAL, "topology %s: device %s (replica %d) differs from "
                                 "%s (replica 0) in %s: replicas must run on alike devices "
                                 "(one is simulated for all)", t->path, y->name, r, x->name,
                                 f);
        }
    if (sch_schedule_total_ops(s) >= INT32_MAX)
        return ps_error(PS_EINVAL, "schedule %s: %lld ops is more than the engine's %d",
                         s->name, (long long)sch_schedule_total_ops(s), INT32_MAX - 1);
    if ((int64_t)2 * s->n_stages * s->n_micro >= INT32_MAX - 2)
        return ps_error(PS_EINVAL, "schedule %s: %d stages x %d micro-batches is more than "
                         "the engine's %d transfers", s->name, s->n_stages, s->n_micro,
                         INT32_MAX - 3);
    if ((rc = sch_schedule_check_shape(s)) < 0)
        return rc;
    sim_engine *e = calloc(1, sizeof *e);
    if (!e)
        return ps_error(PS_ENOMEM, "out of memory");
    e->s = s;
    e->runs = s->runs;
    e->c = c;
    e->n_dev = s->n_devices;
    e->n_ops = sch_schedule_total_ops(s);
    e->n_micro = s->n_micro;
    e->rm_end = s->remat == SCH_REMAT_ALWAYS ? s->n_micro
                : s->remat == SCH_REMAT_EXCEPT_LAST ? s->n_micro - 1 : 0;
    e->draw = o && o->draw && o->draw->fn ? o->draw : NULL;
    e->inputs = o && o->inputs ? o->inputs : "the profile and topology";
    int S = s->n_stages, D = e->n_dev;
    size_t X = 2 * (size_t)S * (size_t)s->n_micro; /* transfers */
    e->bits = calloc(2 * X / 64 + 1, sizeof *e->bits);
    e->sends_to = calloc((size_t)S, 1);
    e->devs = aligned_alloc(64, (size_t)D * sizeof *e->devs);
    if (e->devs)
        memset(e->devs, 0, (size_t)D * sizeof *e->devs);
    e->info = calloc((size_t)S * SCH_OP_NKINDS, sizeof *e->info);
    e->r.n_devices = D;
    e->r.busy = calloc((size_t)D, sizeof(sch_time));
    e->r.busy_recomp = calloc((size_t)D, sizeof(sch_time));
    e->r.busy_update = calloc((size_t)D, sizeof(sch_time));
    e->r.busy_allreduce = calloc((size_t)D, sizeof(sch_time));
    e->r.static_mem = calloc((size_t)D, sizeof(int64_t));
    e->r.peak_act = calloc((size_t)D, sizeof(int64_t));
    e->r.peak_mem = calloc((size_t)D, sizeof(int64_t));
    e->r.capacity = calloc((size_t)D, sizeof(double));
    if (!e->bits || !e->sends_to || !e->devs ||
        !e->info || !e->r.busy || !e->r.busy_recomp || !e->r.busy_update || !e->r.busy_allreduce ||
        !e->r.static_mem || !e->r.peak_act || !e->r.peak_mem || !e->r.capacity) {
        rc = ps_error(PS_ENOMEM, "out of memory for %lld ops", (long long)e->n_ops);
        goto err_free_engine;
    }
    if ((rc = build_info(e, t)) < 0 || (rc = build_streams(e)) < 0)
        goto err_free_engine;
    for (int st = 0; st < S; st++) {
        int d = s->stage_device[st];
        e->sends_to[st] = (uint8_t)((st + 1 < S && s->stage_device[st + 1] != d) << DIR_ACT |
                                    (st > 0 && s->stage_device[st - 1] != d) << DIR_GRAD);
    }
    for (int st = 0; st < S; st++)
        e->r.static_mem[c->st[st].device] += c->st[st].param_bytes;
    for (int d = 0; d < D; d++)
        e->r.capacity[d] = t->devices[d].memory;
    if (o && o->record_trace) {
        e->trace = trc_trace_new("simulated", D, S, s->n_micro);
        e->xfer_at = calloc(X, sizeof *e->xfer_at);
        e->dev_free = calloc(2 * (size_t)D, sizeof *e->dev_free);
        if (!e->trace || !e->xfer_at || !e->dev_free ||
            !(e->trace->static_mem = calloc((size_t)D, sizeof(int64_t)))) {
            rc = ps_error(PS_ENOMEM, "out of memory");
            goto err_free_engine;
        }
        memcpy(e->trace->static_mem, e->r.static_mem, (size_t)D * sizeof(int64_t));
        snprintf(e->trace->schedule, sizeof e->trace->schedule, "%s", s->name);
        snprintf(e->trace->remat, sizeof e->trace->remat, "%s", sch_remat_name(s->remat));
        e->trace->batch = c->micro_batch * s->n_micro;
        e->trace->n_replicas = s->n_replicas > 1 ? s->n_replicas : 1;
        for (int d = 0; d < D; d++)
            if ((rc = trc_add_counter(e->trace, d, 0, 0)) < 0)
                goto err_free_engine;
    }
    *out = e;
    return 0;

err_free_engine:
    sim_engine_free(e);
    return rc;
}

void sim_engine_free(sim_engine *e)
{
    if (!e)
        return;
    if (e->res)
        for (int i = 0; i < e->n_res; i++)
            free(e->res[i].q);
    free(e->res);
    free(e->hold);
    free(e->devs);
    free(e->info);
    free(e->row);
    free(e->bits);
    free(e->sends_to);
    free(e->xfer_at);
    free(e->dev_free);
    sim_evq_release(&e->evq);
    free(e->r.busy);
    free(e->r.busy_recomp);
    free(e->r.busy_update);
    free(e->r.busy_allreduce);
    free(e->r.static_mem);
    free(e->r.peak_act);
    free(e->r.peak_mem);
    free(e->r.capacity);
    trc_trace_free(e->trace);
    free(e);
}
