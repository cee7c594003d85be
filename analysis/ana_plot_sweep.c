/* ana_plot_sweep: speedup, bubble and memory figures of one group of sweep
 * runs (see ana_plot.h). */
#include "analysis/ana_plot.h"
#include "analysis/ana_plot_util.h"
#include "analysis/ana_schedules.h"
#include "base/ps_error.h"
#include "base/ps_gnuplot.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"

#include <stdlib.h>
#include <math.h>
#include <string.h>

struct sel {
    const struct ana_run **r;  /* the group's ok runs, in key order (K, then M) */
    int *Ks;                   /* its distinct K, as many as runs at most (there were
                                  256 places, and later K were dropped: helper-119) */
    int n, nK, Mmin, Mmax, groups;
    char title[512];
};

static int pick_group(const struct ana_run *runs, int n, const struct ana_report_opts *o,
                      struct sel *g)
{
    const struct ana_run *first = NULL, *prev = NULL;
    int reused = 0; /* another group of first's names, from other files (hashes) */
    g->n = g->nK = g->groups = 0;
    for (int i = 0; i < n; i++) {
        const struct ana_run *r = &runs[i];
        if (!ana_run_selected(r, o))
            continue;
        if (!prev || !ana_run_same_group(prev, r))
            g->groups++; /* runs are sorted, so a group is contiguous */
        prev = r;
        if (!first)
            first = r;
        if (!strcmp(r->model, first->model) && !strcmp(r->topology, first->topology) &&
            (strcmp(r->model_hash, first->model_hash) ||
             strcmp(r->topology_hash, first->topology_hash)))
            reused = 1;
        if (!ana_run_same_group(first, r) || strcmp(r->status, "ok"))
            continue;
        g->r[g->n++] = r;
        if (!g->nK || g->Ks[g->nK - 1] != r->K)
            g->Ks[g->nK++] = r->K;
        if (g->n == 1 || r->M < g->Mmin)
            g->Mmin = r->M;
        if (g->n == 1 || r->M > g->Mmax)
            g->Mmax = r->M;
    }
    if (!g->n)
        return ps_error(PS_EINVAL, "no successful runs match the selection (%d runs "
                         "in the database)", n);
    char m[256], t[256];
    ana_plot_clean(m, sizeof m, first->model);
    ana_plot_clean(t, sizeof t, first->topology);
    char reps[64] = "";
    if (first->replicas != 1)
        snprintf(reps, sizeof reps, " per replica, %d replicas", first->replicas);
    if ((size_t)snprintf(g->title, sizeof g->title, "%s on %s\\n%s, remat %s, %s partition, "
                         "batch %ld%s", m, t, first->schedule, first->remat, first->strategy,
                         first->batch, reps) >= sizeof g->title)
        g->title[sizeof g->title - 1] = 0; /* a long title is cut, not an error */
    if (g->groups > 1) {
        /* the title's gnuplot line break ("\\n") as "; " on a terminal */
        char note[sizeof g->title];
        const char *br = strstr(g->title, "\\n");
        snprintf(note, sizeof note, "%.*s; %s", br ? (int)(br - g->title) : (int)strlen(g->title),
                 g->title, br ? br + 2 : "");
        char inputs[96] = "";
        if (reused) /* the names alone would not tell the groups apart */
            snprintf(inputs, sizeof inputs, ", inputs %.8s/%.8s (model/topology hash)",
                     first->model_hash, first->topology_hash);
        /* the title names replicas only past one; the groups may differ in them alone */
        fprintf(stderr, "pipesim plot: %d groups match; plotting the first: %s%s%s (select "
                "with --model, --topology, --schedule, --remat, --strategy, --batch, "
                "--replicas%s)\n", g->groups, note, first->replicas == 1 ? ", 1 replica" : "",
                inputs, reused ? ", --model-hash, --topology-hash" : "");
    }
    return 0;
}

/* Writes blocks per K of "M value fits" lines (index i = i-th K); the
 * bubble's with the analytic bubble after them ("?" where it has none). */
static int write_by_k(struct tmp *t, const struct sel *g, const char *name, int bubble)
{
    char path[320];
    FILE *f = ana_tmp_file(t, name, path, sizeof path);
    if (!f)
        return ps_error(PS_EIO, "%s: cannot write", path);
    for (int k = 0; k < g->nK; k++) {
        fprintf(f, "# K=%d\n", g->Ks[k]);
        for (int i = 0; i < g->n; i++)
            if (g->r[i]->K == g->Ks[k] && (bubble || !isnan(g->r[i]->speedup))) {
                fprintf(f, "%d %s %d", g->r[i]->M,
                        PS_DBL(bubble ? g->r[i]->bubble_sim : g->r[i]->speedup), g->r[i]->fits);
                if (bubble)
                    fprintf(f, " %s", isfinite(g->r[i]->bubble_analytic)
                                          ? PS_DBL(g->r[i]->bubble_analytic) : "?");
                fputc('\n', f);
            }
        fprintf(f, "\n\n");
    }
    return fclose(f) == 0 ? 0 : ps_error(PS_EIO, "%s: write failed", path);
}

/* The key beside the plot (as the timeline's), where no data can be under it: inside,
 * a value near a top corner lay under it (the memory figure's near capacity, hidden by
 * its opaque box). Below the plot, gnuplot 5.4 drew it over the x label. The figures are
 * wider for it, the plot about as wide as with the key inside. */
#define FIG_KEY "set key outside right top\n"
enum { FIG_W = 1200, FIG_H = 600 };

static void common(struct ps_strbuf *b, const struct sel *g)
{
    ps_strbuf_printf(b, "Ks = \"");
    for (int k = 0; k < g->nK; k++)
        ps_strbuf_printf(b, "%s%d", k ? " " : "", g->Ks[k]);
    double lo = g->Mmin, hi = g->Mmax;
    if (lo == hi) {
        lo /= 2;
        hi *= 2;
    }
    ps_strbuf_printf(b, "\"\nset logscale x 2\nset xrange [%g:%g]\nset samples 400\nset grid\n"
                     "set xlabel \"micro-batches M\"\n", lo, hi);
}

static int speedup(const struct ana_plot_opts *o, struct tmp *t, const struct sel *g)
{
    int rc = write_by_k(t, g, "speedup.dat", 0);
    if (rc < 0)
        return rc;
    struct ps_strbuf b = PS_STRBUF_INIT;
    /* R replicas: R pipelines' worth of the one-device baseline */
    int R = g->r[0]->replicas;
    char rk[32] = "", rf[32] = "";
    if (R != 1) {
        snprintf(rk, sizeof rk, "%d * ", R);
        snprintf(rf, sizeof rf, "%d ", R);
    }
    common(&b, g);
    ps_strbuf_printf(&b, "set title \"speedup over one device\\n%s\" noenhanced\n"
                      "set ylabel \"speedup (K=1, M=1, no remat = 1)\"\n" FIG_KEY
                      "set yrange [0:*]\nideal(k, m) = %sk * m / (m + k - 1)\n"
                      "plot for [i=1:words(Ks)] 'speedup.dat' index (i-1) using 1:2 with "
                      "linespoints lc i pt 7 title sprintf(\"K=%%s\", word(Ks, i)), \\\n"
                      "  for [i=1:words(Ks)] ideal(word(Ks, i) + 0, x) with lines dt 2 lc i "
                      "title (i == 1 ? \"ideal %sK M/(M+K-1), dashed\" : \"\"), \\\n"
                      "  'speedup.dat' using 1:($3 == 0 ? $2 : 1/0) with points pt 6 ps 2 lw 2 "
                      "lc rgb '#cc0000' title \"does not fit in memory (circled)\"\n", g->title,
                      rk, rf);
    if ((rc = ps_strbuf_error(&b)) == 0)
        rc = ana_plot_render(o, t, "speedup", FIG_W, FIG_H, ps_strbuf_str(&b));
    ps_strbuf_release(&b);
    return rc;
}

static int bubble(const struct ana_plot_opts *o, struct tmp *t, const struct sel *g)
{
    int rc = write_by_k(t, g, "bubble.dat", 1);
    if (rc < 0)
        return rc;
    /* the schedule's own analytic bubble, as the database stores it and report
     * prints it, at the swept M (it drew GPipe's (K-1)/(M+K-1) for every
     * schedule: helper-119); none where the schedule or its stages have none.
     * Points as well as lines, so that a K of one M shows (a line of one point
     * draws nothing: helper-120), and the key's entry of its own (keyentry), so
     * that it shows whichever K have a value */
    int any = 0;
    for (int i = 0; i < g->n && !any; i++)
        any = isfinite(g->r[i]->bubble_analytic);
    char an[320] = "";
    if (any)
        snprintf(an, sizeof an, "\\\n  for [i=1:words(Ks)] 'bubble.dat' index (i-1) using 1:4 "
                 "with linespoints dt 2 pt 2 ps 1.2 lc i notitle, \\\n  keyentry with "
                 "linespoints dt 2 pt 2 ps 1.2 lc rgb 'black' title \"analytic %s, dashed "
                 "(x)\", ", ana_bubble_formula_name(g->r[0]->schedule));
    struct ps_strbuf b = PS_STRBUF_INIT;
    common(&b, g);
    ps_strbuf_printf(&b, "set title \"pipeline bubble\\n%s\" noenhanced\n"
                      "set ylabel \"bubble fraction of the step\"\n" FIG_KEY
                      "set yrange [0:1]\nset datafile missing \"?\"\n"
                      "plot for [i=1:words(Ks)] 'bubble.dat' index (i-1) using 1:2 with "
                      "linespoints lc i pt 7 title sprintf(\"K=%%s simulated\", word(Ks, i)), "
                      "%s\\\n"
                      "  'bubble.dat' using 1:($3 == 0 ? $2 : 1/0) with points pt 6 ps 2 lw 2 "
                      "lc rgb '#cc0000' title \"does not fit in memory (circled)\"\n",
                  g->title, an);
    if ((rc = ps_strbuf_error(&b)) == 0)
        rc = ana_plot_render(o, t, "bubble", FIG_W, FIG_H, ps_strbuf_str(&b));
    ps_strbuf_release(&b);
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Every M of the group (or --mem-M alone): per M the stages' peaks as
 * points and the largest as a line, one colour per M; the device capacity
 * dashed, always on the scale (a log axis when it is far above the data). */
static int memory(const struct ana_plot_opts *o, struct tmp *t, const struct sel *g)
{
    int *Ms = malloc(sizeof *Ms * (size_t)g->n), nM = 0; /* (256 places dropped later M) */
    if (!Ms)
        return ps_error(PS_ENOMEM, "out of memory");
    for (int i = 0; i < g->n; i++) {
        int M = g->r[i]->M, seen = 0;
        if (o->mem_M && M != o->mem_M)
            continue;
        for (int j = 0; j < nM; j++)
            seen |= Ms[j] == M;
        if (!seen)
            Ms[nM++] = M;
    }
    int rc = 0;
    if (!nM) {
        rc = ps_error(PS_EINVAL, "no successful run with M=%d for the memory figure",
                      o->mem_M);
        goto out;
    }
    qsort(Ms, (size_t)nM, sizeof *Ms, cmp_int);
    double top = 0, topcap = 0, low = 0;
    char p1[320], p2[320], p3[320];
    FILE *f = ana_tmp_file(t, "memory.dat", p1, sizeof p1);
    FILE *h = ana_tmp_file(t, "memmax.dat", p2, sizeof p2);
    FILE *c = ana_tmp_file(t, "capacity.dat", p3, sizeof p3);
    if (!f || !h || !c) {
        if (f)
            fclose(f);
        if (h)
            fclose(h);
        if (c)
            fclose(c);
        rc = ps_error(PS_EIO, "%s: cannot write", t->dir);
        goto out;
    }
    /* the capacity at every K of the figure (every K of the group, whichever M ran
     * there and whatever --mem-M picks): per K the largest of the devices its stages
     * ran on, so on a mixed topology the line rises where a larger device joins */
    double capmin = 0;
    for (int k = 0; k < g->nK; k++) {
        double cap = 0;
        for (int i = 0; i < g->n; i++)
            for (int s = 0; g->r[i]->K == g->Ks[k] && s < g->r[i]->n_stages; s++)
                cap = g->r[i]->stages[s].capacity / PS_GIB > cap
                          ? g->r[i]->stages[s].capacity / PS_GIB : cap;
        fprintf(c, "%d %.9g\n", g->Ks[k], cap);
        topcap = cap > topcap ? cap : topcap;
        capmin = k == 0 || cap < capmin ? cap : capmin;
    }
    for (int j = 0; j < nM; j++) { /* index j: M = Ms[j] */
        fprintf(f, "# M=%d: K, peak GiB, stage\n", Ms[j]);
        fprintf(h, "# M=%d: K, largest stage GiB\n", Ms[j]);
        for (int i = 0; i < g->n; i++) {
            const struct ana_run *r = g->r[i];
            if (r->M != Ms[j])
                continue;
            double mx = 0;
            for (int s = 0; s < r->n_stages; s++) {
                double gb = (double)r->stages[s].peak_mem / PS_GIB;
                fprintf(f, "%d %.9g %d\n", r->K, gb, s);
                mx = gb > mx ? gb : mx;
                low = low == 0 || (gb > 0 && gb < low) ? gb : low;
            }
            fprintf(h, "%d %.9g\n", r->K, mx);
            top = mx > top ? mx : top;
        }
        fprintf(f, "\n\n");
        fprintf(h, "\n\n");
    }
    int bad = fclose(f) != 0;
    bad |= fclose(h) != 0;
    bad |= fclose(c) != 0;
    if (bad) {
        rc = ps_error(PS_EIO, "%s: write failed", t->dir);
        goto out;
    }
    struct ps_strbuf b = PS_STRBUF_INIT;
    char ms[64];
    if (nM == 1)
        snprintf(ms, sizeof ms, "M=%d", Ms[0]);
    else
        snprintf(ms, sizeof ms, "M=%d..%d", Ms[0], Ms[nM - 1]);
    ps_strbuf_printf(&b, "set title \"per-stage peak memory, %s\\n%s\" noenhanced\n"
                      "set xlabel \"stages K\"\nset ylabel \"GiB\"\nset grid\n%s"
                      "set logscale x 2\nset xrange [%g:%g]\n",
                      ms, g->title, FIG_KEY, g->Ks[0] / 1.5, g->Ks[g->nK - 1] * 1.5);
    double hi = topcap > top ? topcap : top;
    if (capmin > 0 && (low == 0 || capmin < low))
        low = capmin; /* the whole line on the scale */
    if (low > 0 && hi > 20 * low) {
        /* values (capacity included) over more than 20x: on a linear axis the
         * capacity and the cells that fit sit squashed at the bottom */
        char tics[4096];
        ps_gnuplot_log_tics(tics, sizeof tics, "y", low / 1.5, hi * 1.5);
        ps_strbuf_printf(&b, "set logscale y 10\nset yrange [%g:%g]\n%s", low / 1.5,
                         hi * 1.5, tics);
    } else
        ps_strbuf_printf(&b, "set yrange [0:%g]\n", hi * 1.1 > 0 ? hi * 1.1 : 1);
    ps_strbuf_printf(&b, "plot ");
    for (int j = 0; j < nM; j++)
        ps_strbuf_printf(&b, "%s'memory.dat' index %d using 1:2 with points pt 7 ps 0.7 lc %d "
                          "notitle, \\\n  'memmax.dat' index %d using 1:2 with linespoints "
                          "lw 2 pt 7 lc %d title \"M=%d: largest stage (points: each)\"",
                          j ? ", \\\n  " : "", j, j + 1, j, j + 1, Ms[j]);
    char caps[96];
    if (capmin == topcap)
        snprintf(caps, sizeof caps, "%.4g GiB", topcap);
    else /* a mixed topology: the line is not one device's */
        snprintf(caps, sizeof caps, "%.4g to %.4g GiB (largest device)", capmin, topcap);
    ps_strbuf_printf(&b, ", \\\n  'capacity.dat' using 1:2 with lines dt 2 lw 2 lc rgb "
                          "\"black\" title \"device capacity %s\"\n", caps);
    rc = ps_strbuf_error(&b);
    if (rc == 0)
        rc = ana_plot_render(o, t, "memory", FIG_W, FIG_H, ps_strbuf_str(&b));
    ps_strbuf_release(&b);
out:
    free(Ms);
    return rc;
}

/* Every --kind of pipesim plot; ana_plot_sweep draws the first three. */
static const char *const plot_kinds[] = { "speedup", "bubble", "memory", "timeline",
                                          "schedules" };

int ana_plot_sweep_kind(const char *kind)
{
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(kind, plot_kinds[i]))
            return 0;
    struct ps_suggest sg;
    return ps_error(PS_EUSAGE, "--kind: unknown figure '%s'%s (speedup, bubble, memory, "
                    "timeline, schedules)", kind, ps_suggest_among(&sg, kind, plot_kinds, 5));
}

int ana_plot_sweep(const struct ana_run *runs, int n, const char *kinds,
                   const struct ana_plot_opts *o)
{
    static const struct {
        const char *name;
        int (*fn)(const struct ana_plot_opts *, struct tmp *, const struct sel *);
    } tab[] = { { "speedup", speedup }, { "bubble", bubble }, { "memory", memory } };
    int want[3] = { 0 };
    char buf[256];
    snprintf(buf, sizeof buf, "%s", kinds);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int rc = ana_plot_sweep_kind(tok);
        if (rc < 0)
            return rc;
        size_t i = 0;
        while (strcmp(tok, tab[i].name))
            i++;
        want[i] = 1;
    }
    struct sel g = { .r = malloc(sizeof *g.r * (size_t)(n ? n : 1)),
                     .Ks = malloc(sizeof *g.Ks * (size_t)(n ? n : 1)) };
    if (!g.r || !g.Ks) {
        free(g.r);
        free(g.Ks);
        return ps_error(PS_ENOMEM, "out of memory");
    }
    struct tmp t;
    int rc = pick_group(runs, n, &o->sel, &g);
    if (rc < 0)
        goto err_free_sel;
    int any_speedup = 0;
    for (int i = 0; i < g.n; i++)
        any_speedup |= !isnan(g.r[i]->speedup);
    if (want[0] && !any_speedup) { /* nothing to draw but the ideal curves */
        const char *why = "the one-device baseline (K=1, M=1) is beyond the engine's range, "
                          "so no run has a speedup";
        if (!want[1] && !want[2]) {
            rc = ps_error(PS_EINVAL, "no speedup figure: %s", why);
            goto err_free_sel;
        }
        fprintf(stderr, "pipesim plot: no speedup figure: %s\n", why);
        want[0] = 0;
    }
    if ((rc = ana_tmp_new(&t)) < 0)
        goto err_free_sel;
    for (size_t i = 0; i < 3 && rc == 0; i++)
        if (want[i])
            rc = tab[i].fn(o, &t, &g);
    ana_tmp_free(&t);
err_free_sel:
    free(g.r);
    free(g.Ks);
    return rc;
}
