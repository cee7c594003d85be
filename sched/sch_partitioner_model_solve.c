/*
 * The partitioner's model, its capped optimum: whether a partition fits
 * (each stage under its device's memory, and a device's stages summed where
 * it holds several), and sch_part_model_solve(_caps, _stages), which share a
 * device's memory among its stages when the per-stage optimum overflows it
 * (sch_partitioner.h says how). Each solve is one sch_part_solve; a shared
 * device costs at most 64 rounds of one solve per stage, 11 fixed shares and
 * 400 searched ones.
 */
#include "sched/sch_partitioner_model_int.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sch_part_model_fits(const sch_part_model *m, const struct sch_partition *part)
{
    if (!m->o.cap_mode)
        return 1;
    int feasible = 0;
    sch_part_bottleneck(&m->pb, part, NULL, &feasible);
    if (!feasible || !shared_devices(m))
        return feasible;
    int64_t *mem = malloc(sizeof *mem * 2 * (size_t)m->S);
    if (!mem)
        return 0; /* judged by the engine, which also checks */
    int64_t *sum = mem + m->S;
    device_sums(m, part, mem, sum);
    for (int s = 0; s < m->S && feasible; s++)
        feasible = (double)sum[s] <= m->cap[s];
    free(mem);
    return feasible;
}

/* The optimum with stage s under caps[s] (bytes). */
static int solve_capped_bn(const sch_part_model *m, const int64_t *caps,
                           struct sch_part_cost *c, struct sch_partition **out, int64_t *bn)
{
    for (int s = 0; s < m->S; s++) {
        c[s] = m->mem[s];
        c[s].bias = -caps[s];
    }
    struct sch_part_problem pb = own_problem(m, c);
    return sch_part_solve(&pb, out, bn);
}

static int solve_capped(const sch_part_model *m, const int64_t *caps,
                        struct sch_part_cost *c, struct sch_partition **out)
{
    int64_t bn;
    return solve_capped_bn(m, caps, c, out, &bn);
}

/* Sets the caps of device d's stages: its first stage f of cap0 (f 0: 1/n, an
 * equal share), the others (1 - f) / (n - 1) each (no more than limit's, where
 * given). */
static void set_shares(const sch_part_model *m, int d, double f, const int64_t *cap0,
                       const int64_t *limit, int64_t *caps)
{
    int n = 0, first = -1;
    for (int t = 0; t < m->S; t++)
        if (m->dev[t] == d) {
            n++;
            first = first < 0 ? t : first;
        }
    if (f == 0)
        f = 1.0 / n;
    for (int t = 0; t < m->S; t++)
        if (m->dev[t] == d) {
            caps[t] = (int64_t)floor((double)cap0[t] *
                                     (n == 1 ? 1 : t == first ? f : (1 - f) / (n - 1)));
            if (limit && limit[t] < caps[t])
                caps[t] = limit[t];
        }
}

/* Shares found device by device: for each device holding several stages, its
 * first stage's share f from 0.05 to 0.95 in 0.05, the others' caps kept,
 * the f whose cut overflows the devices least, then runs fastest; three
 * rounds, at most 400 solves. The fastest cut that fits, or -PS_ENOFIT. */
static int share_descent(const sch_part_model *m, int64_t *caps, const int64_t *cap0,
                         const int64_t *limit, struct sch_part_cost *c, int64_t *mem,
                         int64_t *sum, struct sch_partition **out)
{
    int S = m->S, solves = 0, rc;
    int64_t best_fit = INT64_MAX;
    const struct sch_part_problem tp = own_problem(m, NULL);
    for (int s = 0; s < S; s++) { /* equal shares to start */
        int n = 0;
        for (int t = 0; t < S; t++)
            n += m->dev[t] == m->dev[s];
        caps[s] = cap0[s] / n;
        if (limit && limit[s] < caps[s])
            caps[s] = limit[s];
    }
    for (int round = 0; round < 3 && solves < 400; round++)
        for (int d = 0; d < m->topo->n_devices && solves < 400; d++) {
            int n = 0;
            for (int t = 0; t < S; t++)
                n += m->dev[t] == d;
            if (n < 2)
                continue;
            double best_f = -1;
            int64_t best_over = INT64_MAX, best_bn = INT64_MAX;
            for (int k = 1; k < 20 && solves < 400; k++) {
                double f = k / 20.0;
                set_shares(m, d, f, cap0, limit, caps);
                struct sch_partition *p = NULL;
                solves++;
                if ((rc = solve_capped(m, caps, c, &p)) == -PS_ENOFIT) {
                    ps_error_clear();
                    continue;
                }
                if (rc < 0)
                    return rc;
                device_sums(m, p, mem, sum);
                int64_t over = 0;
                for (int t = 0; t < S; t++) /* each device once: at its first stage */
                    if (sum[t] > cap0[t]) {
                        int first = 1;
                        for (int u = 0; u < t; u++)
                            first &= m->dev[u] != m->dev[t];
                        over += first ? sum[t] - cap0[t] : 0;
                    }
                int64_t b = sch_part_bottleneck(&tp, p, NULL, NULL);
                if (over < best_over || (over == best_over && b < best_bn)) {
                    best_over = over;
                    best_bn = b;
                    best_f = f;
                }
                if (!over && b < best_fit) {
                    sch_partition_free(*out);
                    *out = p;
                    p = NULL;
                    best_fit = b;
                }
                sch_partition_free(p);
            }
            if (best_f > 0)
                set_shares(m, d, best_f, cap0, limit, caps);
        }
    return *out ? 0 : -PS_ENOFIT;
}

int sch_part_model_solve(const sch_part_model *m, struct sch_partition **out)
{
    return sch_part_model_solve_caps(m, NULL, out);
}

int sch_part_model_solve_stages(const sch_part_model *m, const int64_t *limit,
                                struct sch_partition **out)
{
    *out = NULL;
    struct sch_part_cost *c = malloc(sizeof *c * (size_t)m->S);
    if (!c)
        return ps_error(PS_ENOMEM, "out of memory");
    int rc = solve_capped(m, limit, c, out);
    free(c);
    return rc;
}

int sch_part_model_solve_caps(const sch_part_model *m, const int64_t *limit,
                              struct sch_partition **out)
{
    int64_t bn;
    int rc, S = m->S;
    *out = NULL;
    int64_t *mem = malloc(sizeof *mem * 5 * (size_t)S);
    struct sch_part_cost *c = malloc(sizeof *c * (size_t)S);
    if (!mem || !c) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto fail;
    }
    rc = limit ? solve_capped(m, limit, c, out) : sch_part_solve(&m->pb, out, &bn);
    if (rc < 0 || !m->o.cap_mode || !shared_devices(m) || sch_part_model_fits(m, *out))
        goto done;
    int64_t *sum = mem + S, *caps = sum + S, *cap0 = caps + S, *trial = cap0 + S;
    for (int s = 0; s < S; s++) {
        cap0[s] = -m->mem[s].bias;
        caps[s] = limit && limit[s] < cap0[s] ? limit[s] : cap0[s];
    }
    /* The first overflowing device gives up its excess from one of its stages:
     * the one whose cut then runs fastest (each tried); the caps only fall. */
    for (int round = 0; round < 64; round++) {
        device_sums(m, *out, mem, sum);
        int d = -1;
        for (int s = 0; s < S && d < 0; s++)
            if ((double)sum[s] > (double)cap0[s])
                d = s;
        if (d < 0) {
            rc = 0;
            goto done;
        }
        int64_t excess = sum[d] - cap0[d], best_bn = INT64_MAX;
        struct sch_partition *best = NULL;
        int best_s = -1;
        for (int s = 0; s < S; s++) {
            if (m->dev[s] != m->dev[d] || mem[s] <= excess)
                continue;
            memcpy(trial, caps, sizeof *caps * (size_t)S);
            trial[s] = mem[s] - excess < trial[s] ? mem[s] - excess : trial[s];
            struct sch_partition *p = NULL;
            int64_t b;
            if ((rc = solve_capped_bn(m, trial, c, &p, &b)) == 0 && b < best_bn) {
                sch_partition_free(best);
                best = p;
                best_bn = b;
                best_s = s;
            } else {
                sch_partition_free(p);
                if (rc < 0 && rc != -PS_ENOFIT) {
                    sch_partition_free(best); /* helper-61: it leaked here */
                    goto fail;
                }
            }
        }
        if (!best)
            break;
        caps[best_s] = mem[best_s] - excess < caps[best_s] ? mem[best_s] - excess
                                                           : caps[best_s];
        sch_partition_free(*out);
        *out = best;
    }
    if (*out && sch_part_model_fits(m, *out)) { /* the last round's cut, unchecked */
        rc = 0;
        goto done;
    }
    /* Then fixed shares: the first stage of each device gets f of its memory and
     * the others (1 - f) / (n - 1) each, f = 1/n (equal) and 0.1 .. 0.9; and
     * the cut that balances memory (balance-by-size). The fastest that fits
     * (its bottleneck, on the stages' own time costs). */
    sch_partition_free(*out);
    *out = NULL;
    int64_t best_bn = INT64_MAX;
    for (int f10 = 0; f10 <= 10; f10++) { /* f10 0: equal shares; 10: balance-by-size */
        struct sch_partition *p = NULL;
        int64_t b;
        if (f10 < 10) {
            for (int d = 0; d < m->topo->n_devices; d++)
                set_shares(m, d, f10 / 10.0, cap0, limit, caps);
            rc = solve_capped(m, caps, c, &p);
        } else if (!limit) { /* balance-by-size knows no limit */
            rc = sch_part_solve(&m->size_pb, &p, &b);
        } else {
            continue;
        }
        if (rc == -PS_ENOFIT) {
            ps_error_clear();
            continue;
        }
        if (rc < 0)
            goto fail; /* *out may hold an earlier share's cut */
        if (sch_part_model_fits(m, p)) {
            const struct sch_part_problem tp = own_problem(m, NULL);
            b = sch_part_bottleneck(&tp, p, NULL, NULL);
            if (b < best_bn) {
                sch_partition_free(*out);
                *out = p;
                p = NULL;
                best_bn = b;
            }
        }
        sch_partition_free(p);
    }
    if (!*out) { /* each device's share on its own: coordinate descent */
        if ((rc = share_descent(m, caps, cap0, limit, c, mem, sum, out)) < 0 &&
            rc != -PS_ENOFIT)
            goto fail;
        if (rc == -PS_ENOFIT)
            ps_error_clear();
    }
    rc = *out ? 0 : ps_error(PS_ENOFIT, "no partition fits");
    goto done;
fail:
    sch_partition_free(*out);
    *out = NULL;
done:
    free(mem);
    free(c);
    return rc;
}
