/* Plots: PNG and SVG files exist and are what they claim, for the sweep
 * figures and a trace timeline; bad input leaves nothing behind. Skipped
 * (with the reason printed) when gnuplot is not installed. */
#include "helpers.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/ana_plot.h"
#include "base/ps_gnuplot.h"
#include "base/ps_util.h"

static char dir[64];

static void setup(void)
{
    th_tmpdir(dir, sizeof dir, "plot-test");
}

static void teardown(void)
{
    th_sh("rm -rf %s", dir);
}

TestSuite(plot, .init = setup, .fini = teardown, .timeout = 120);

static void need_gnuplot(void)
{
    if (!ps_gnuplot_have(NULL)) {
        printf("test_plot: gnuplot not found on PATH: skipping (apt-get install gnuplot-nox)\n");
        cr_skip_test("gnuplot is not installed");
    }
}

static void expect_png(const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/out/%s.png", dir, name);
    unsigned w = th_png_width(p);
    unsigned want = !strcmp(name, "schedules") ? 1400u : 1200u; /* the sweep's: keys beside */
    cr_assert_eq(w, want, "%s: width %u", p, w);
}

static void expect_svg(const char *name, const char *contains)
{
    char p[256], *buf;
    size_t len;
    snprintf(p, sizeof p, "%s/out/%s.svg", dir, name);
    cr_assert_eq(ps_read_file(p, &buf, &len), 0, "%s", ps_errmsg());
    cr_assert(strstr(buf, "<svg"), "%s: no <svg>", p);
    cr_assert(strstr(buf, "</svg>"), "%s: not closed", p);
    cr_assert(strstr(buf, contains), "%s lacks '%s'", p, contains);
    free(buf);
}

static int count_tmp(void)
{
    char p[256];
    snprintf(p, sizeof p, "%s/out", dir);
    DIR *d = opendir(p);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) ||
             strstr(e->d_name, ".tmp.") != NULL; /* ps_afile's ".<name>.XXXXXX", the old names */
    closedir(d);
    return n;
}

Test(plot, sweep_figures_and_timeline)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s sweep --model mlp:layers=8,width=64 --topology "
                       "models/topologies/chain-8-ideal.json -K 1,2,4 -M 1,2,4,8 --batch 8,16 "
                       "--quiet --db %s/s.db", ps, dir), 0);
    cr_assert_eq(th_sh("%s predict --model mlp:layers=8,width=64 --topology "
                       "models/topologies/chain-8-ideal.json -K 4 -M 4 --batch 16 "
                       "--trace %s/t.json >/dev/null", ps, dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/s.db --batch 16 --trace %s/t.json --out-dir %s/out "
                       "2>%s/err.txt", ps, dir, dir, dir, dir), 0);
    const char *names[] = { "speedup", "bubble", "memory", "timeline" };
    for (int i = 0; i < 4; i++) {
        expect_png(names[i]);
        expect_svg(names[i], i < 3 ? "batch 16" : "forward");
    }
    expect_svg("speedup", "K=4");
    expect_svg("bubble", "analytic");
    cr_assert_eq(count_tmp(), 0);
    /* each figure's script and data beside it; the script redraws it there */
    const char *kept[] = { "speedup.gp", "speedup.dat", "bubble.gp", "bubble.dat", "memory.gp",
                           "memory.dat", "memmax.dat", "capacity.dat", "timeline.gp",
                           "timeline.dat" };
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        cr_assert_eq(th_sh("test -s %s/out/%s", dir, kept[i]), 0, "%s not kept", kept[i]);
    cr_assert_eq(th_sh("cd %s/out && gnuplot memory.gp > re.png && cmp -s re.png memory.png",
                       dir), 0);
    /* the memory figure draws every M of the group, and the capacity */
    for (int M = 1; M <= 8; M *= 2)
        cr_assert_eq(th_sh("grep -qF 'title \"M=%d: largest' %s/out/memory.gp", M, dir), 0,
                     "M=%d", M);
    cr_assert_eq(th_sh("grep -qF 'device capacity' %s/out/memory.gp", dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/s.db --batch 16 --kind memory --mem-M 4 --prefix p- "
                       "--out-dir %s/out", ps, dir, dir), 0);
    cr_assert_eq(th_sh("grep -c 'largest stage' %s/out/p-memory.gp | grep -qx 1 && "
                       "grep -qF \"'p-memory.dat'\" %s/out/p-memory.gp && "
                       "test -s %s/out/p-memory.dat && test -s %s/out/p-capacity.dat", dir,
                       dir, dir, dir), 0);
}

/* The timeline: a row per buffer in flight, as the trace's tracks (recv,
 * recv 2, ...): no two boxes on one row overlap, and each row is named. Every
 * receive lane of a device was drawn on one row, a long activation transfer
 * covering those under it (helper-83: zb-v on pcie-8gpu, 12 overlaps on dev1). */
Test(plot, timeline_rows_are_the_trace_s_lanes)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s predict --model mlp:layers=16,width=512 --topology pcie-8gpu -K 4 "
                       "-M 8 --batch 64 --schedule zb-v --trace %s/z.json >/dev/null", ps, dir),
                 0);
    cr_assert_eq(th_sh("%s plot --trace %s/z.json --out-dir %s/out >%s/said.txt", ps, dir, dir,
                       dir), 0);
    /* it says what it wrote (it printed nothing, where --compare said it) */
    char said[256], want[256];
    th_slurp(dir, "said.txt", said, sizeof said);
    snprintf(want, sizeof want, "wrote %s/out/timeline.png and .svg\n", dir);
    cr_expect_str_eq(said, want);
    /* rows: the trace's threads of each device, in order */
    cr_assert_eq(th_sh("grep -o '\"dev1 [a-z]*[ 0-9]*\" -[0-9]*' %s/out/timeline.gp | tr '\n' ';' "
                       "| grep -qx '\"dev1 compute\" -3;\"dev1 send\" -4;\"dev1 recv\" -5;"
                       "\"dev1 recv 2\" -6;\"dev1 recv 3\" -7;'", dir), 0);
    /* no overlap on a row (columns: centre, row, half width) */
    cr_assert_eq(th_sh("awk '{print $2, $1 - $3, $1 + $3}' %s/out/timeline.dat | "
                       "sort -k1,1n -k2,2g | awk '$1 == row && $2 < end - 1e-9 {bad++} "
                       "$1 != row || $3 > end {end = $3} {row = $1} END {exit bad > 0}'", dir),
                 0, "boxes overlap on a row");
    /* as many rows as the trace has threads of X events */
    cr_assert_eq(th_sh("test \"$(awk '{print $2}' %s/out/timeline.dat | sort -u | wc -l)\" = "
                       "\"$(python3 -c \"import json; print(len({(e['pid'], e['tid']) for e in "
                       "json.load(open('%s/z.json'))['traceEvents'] if e.get('ph') == 'X'}))\")\"",
                       dir, dir), 0);
}

/* The memory figure: a log y axis with 1-2-5 labels when the values and the
 * capacity span more than 20x (the K = 1, M = 1 cell 700 GiB, the capacity
 * 16 GiB), a linear one from 0 when they do not. */
Test(plot, memory_axis_is_log_over_a_wide_span)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s sweep --model transformer:L=24 --topology pcie-8gpu -K 1,2,4,8 "
                       "-M 1,4,16,32 --batch 128 --quiet --db %s/s.db", ps, dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/s.db --kind memory --out-dir %s/out >/dev/null", ps,
                       dir, dir), 0);
    expect_png("memory");
    cr_assert_eq(th_sh("grep -qx 'set logscale y 10' %s/out/memory.gp", dir), 0);
    cr_assert_eq(th_sh("grep -qxF 'set ytics (\"5\" 5, \"10\" 10, \"20\" 20, \"50\" 50, "
                       "\"100\" 100, \"200\" 200, \"500\" 500, \"1000\" 1000)' "
                       "%s/out/memory.gp", dir), 0);
    cr_assert_eq(th_sh("grep -qF 'device capacity 16 GiB' %s/out/memory.gp", dir), 0);
    /* M = 16, 32 at K = 4, 8: 5 to 17 GiB beside 16 GiB, linear */
    cr_assert_eq(th_sh("%s sweep --model transformer:L=24 --topology pcie-8gpu -K 4,8 "
                       "-M 16,32 --batch 128 --quiet --db %s/n.db", ps, dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/n.db --kind memory --out-dir %s/out --prefix n- "
                       ">/dev/null", ps, dir, dir), 0);
    cr_assert_eq(th_sh("grep -q 'logscale y' %s/out/n-memory.gp", dir), 1);
    cr_assert_eq(th_sh("grep -q '^set yrange \\[0:' %s/out/n-memory.gp", dir), 0);
}

/* The capacity line spans every K of the figure: here M = 1 does not fit at K = 1, 2 (no
 * ok row there; the line was written from the smallest M's rows alone: "4 16", "8 16",
 * and for -K 1,2,8 -M 1,32 one point, which draws nothing). 16 GiB per P100 at every K,
 * whatever M --mem-M picks. */
Test(plot, memory_capacity_spans_every_K)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s sweep --model amoebanet:L=18,D=256 --topology p100-pcie-8 "
                       "-K 1,2,4,8 -M 1,4,32 --batch 128 --remat always --strategy optimal "
                       "--quiet --db %s/s.db", ps, dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/s.db --kind memory --out-dir %s/out >/dev/null", ps,
                       dir, dir), 0);
    cr_assert_eq(th_sh("awk '/^# M=1:/ { on = 1; next } /^#/ { on = 0 } on && NF { print $1 }' "
                       "%s/out/memmax.dat | tr '\\n' ' ' | grep -qx '4 8 '", dir), 0,
                 "the case needs M=1 to miss K=1,2");
    cr_assert_eq(th_sh("printf '1 16\\n2 16\\n4 16\\n8 16\\n' | cmp -s - %s/out/capacity.dat",
                       dir), 0);
    cr_assert_eq(th_sh("grep -qF 'device capacity 16 GiB' %s/out/memory.gp", dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/s.db --kind memory --mem-M 1 --prefix m- --out-dir "
                       "%s/out >/dev/null", ps, dir, dir), 0);
    cr_assert_eq(th_sh("printf '1 16\\n2 16\\n4 16\\n8 16\\n' | cmp -s - "
                       "%s/out/m-capacity.dat", dir), 0);
}

/* A mixed topology (two 16 GiB devices, then two 32 GiB ones; stage s on device s): per K
 * the largest device its stages ran on, and the legend gives the range rather than one
 * device's figure (it gave the largest alone). */
Test(plot, memory_capacity_on_mixed_devices)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    th_put(dir, "mixed.json",
           "{ \"name\": \"mixed-4\", \"bytes_per_param\": 12, \"devices\": [\n"
           "  { \"name\": \"a\", \"count\": 2, \"flops\": 1e14, \"memory\": 17179869184, "
           "\"mem_bandwidth\": 0 },\n"
           "  { \"name\": \"b\", \"count\": 2, \"flops\": 1e14, \"memory\": 34359738368, "
           "\"mem_bandwidth\": 0 } ],\n \"links\": [\n"
           "  { \"name\": \"l01\", \"endpoints\": [\"a0\", \"a1\"], \"bandwidth\": 1e11 },\n"
           "  { \"name\": \"l12\", \"endpoints\": [\"a1\", \"b0\"], \"bandwidth\": 1e11 },\n"
           "  { \"name\": \"l23\", \"endpoints\": [\"b0\", \"b1\"], \"bandwidth\": 1e11 } ] }\n");
    cr_assert_eq(th_sh("%s sweep --model mlp:layers=8,width=64 --topology %s/mixed.json "
                       "-K 1,2,4 -M 1,2 --batch 8 --quiet --db %s/s.db", ps, dir, dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/s.db --kind memory --out-dir %s/out >/dev/null", ps,
                       dir, dir), 0);
    cr_assert_eq(th_sh("printf '1 16\\n2 16\\n4 32\\n' | cmp -s - %s/out/capacity.dat", dir), 0);
    cr_assert_eq(th_sh("grep -qF 'device capacity 16 to 32 GiB (largest device)' "
                       "%s/out/memory.gp", dir), 0);
}

/* The sweep figures' keys beside the plot, where no data can be under them (the memory
 * figure's inside one, opaque, hid the M = 1 line at 15.5 GiB under 16 GiB and the
 * capacity line with it; the speedup's and bubble's inside ones lay over curves near
 * their top corners). */
Test(plot, sweep_keys_outside_the_plot)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s sweep --model amoebanet:L=18,D=256 --topology p100-pcie-8 "
                       "-K 1,2,4,8 -M 1,4,32 --batch 128 --remat always --schedule 1f1b "
                       "--strategy optimal --quiet --db %s/s.db", ps, dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/s.db --out-dir %s/out >/dev/null 2>&1", ps, dir, dir),
                 0);
    cr_assert_eq(th_sh("grep -qx '4 15.1215906' %s/out/memmax.dat", dir), 0,
                 "the case needs a value just under the capacity");
    const char *kinds[] = { "speedup", "bubble", "memory" };
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(th_sh("grep '^set key' %s/out/%s.gp | grep -qxv 'set key outside right "
                           "top'", dir, kinds[i]), 1, "%s: a key inside the plot", kinds[i]);
        cr_assert_eq(th_sh("grep -qx 'set key outside right top' %s/out/%s.gp", dir,
                           kinds[i]), 0, "%s: no key", kinds[i]);
        expect_png(kinds[i]); /* wider for the key */
    }
}

/* Time axes in the unit the span reads in: a 67 s step in s (not 67309 ms),
 * a 12 us one in us; the compare figure's key beside the plot (below it, it
 * met the axis label), as the timeline's. */
Test(plot, time_axes_pick_their_unit)
{
    const char *u;
    cr_assert_eq(ana_plot_time_unit(67.3e9, &u), 1e9);
    cr_assert_str_eq(u, "s");
    cr_assert_eq(ana_plot_time_unit(10e9, &u), 1e6);
    cr_assert_str_eq(u, "ms");
    cr_assert_eq(ana_plot_time_unit(10e6, &u), 1e6);
    cr_assert_str_eq(u, "ms");
    cr_assert_eq(ana_plot_time_unit(9.99e6, &u), 1e3);
    cr_assert_str_eq(u, "us");
    need_gnuplot();
    const char *ps = th_pipesim();
    /* one configuration twice (--compare overlays one configuration's traces: gpipe over
     * 1f1b is refused since helper-74) */
    for (int k = 0; k < 2; k++)
        cr_assert_eq(th_sh("%s predict --model transformer:L=24 --topology pcie-8gpu -K 4 "
                           "-M 32 --batch 128 --schedule gpipe --trace %s/l%d.json >/dev/null",
                           ps, dir, k), 0);
    cr_assert_eq(th_sh("%s plot --compare %s/l0.json %s/l1.json --out-dir %s/out >/dev/null && "
                       "%s plot --trace %s/l0.json --out-dir %s/out >/dev/null", ps, dir, dir,
                       dir, ps, dir, dir), 0);
    expect_png("compare");
    cr_assert_eq(th_sh("grep -qxF \"set xlabel 'time (s)'\" %s/out/compare.gp && "
                       "grep -qxF 'set xlabel \"time (s)\"' %s/out/timeline.gp", dir, dir), 0);
    cr_assert_eq(th_sh("grep -qx 'set key outside right top vertical reverse Left' "
                       "%s/out/compare.gp && ! grep -q 'key.*bottom' %s/out/compare.gp", dir,
                       dir), 0);
    /* the boxes' right ends: the 67.309 s step in seconds */
    cr_assert_eq(th_sh("awk '/^\\$ops/ { on = 1; next } /^EOD/ { on = 0 } on && $3 > m "
                       "{ m = $3 } END { exit !(m > 67.3 && m < 67.32) }' %s/out/compare.gp",
                       dir), 0);
    cr_assert_eq(th_sh("%s predict --model mlp:layers=8,width=512 --topology chain-8-ideal "
                       "-K 4 -M 4 --batch 64 --trace %s/s.json >/dev/null && %s plot --compare "
                       "%s/s.json %s/s.json --out-dir %s/out --prefix s- >/dev/null && "
                       "grep -qxF \"set xlabel 'time (us)'\" %s/out/s-compare.gp", ps, dir, ps,
                       dir, dir, dir, dir), 0);
}

/* The schedules one above another: a box per compute op of each schedule
 * (1f1b K M F and B; dualpipe-v 2K M F, B and W), and each schedule's
 * compute-only step in T_F at its closed form (tests/test_new_schedules.c,
 * chunks of T_F / 2 for the V): 1f1b (M+K-1) 3 = 33, zb-h2 3M+K-1 = 27,
 * dualpipe-v (6M+K-1) / 2 = 25.5 for K = 4, M = 8. */
Test(plot, schedules_one_above_another)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s plot --kind schedules -K 4 -M 8 --schedules 1f1b,zb-h2,dualpipe-v "
                       "--out-dir %s/out >/dev/null", ps, dir), 0);
    expect_png("schedules");
    expect_svg("schedules", "dualpipe-v");
    expect_svg("schedules", "W weight grad");
    cr_assert_eq(th_sh("test -s %s/out/schedules.gp && test -s %s/out/schedules.dat", dir, dir),
                 0);
    static const struct { const char *name, *step; int boxes; } want[] = {
        { "1f1b", "33", 2 * 4 * 8 }, { "zb-h2", "27", 3 * 4 * 8 },
        { "dualpipe-v", "25.5", 3 * 8 * 8 },
    };
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(th_sh("awk '/^# step/ {if (on) print $3; on = 0} /^# %s$/ {on = 1}' "
                           "%s/out/schedules.dat | grep -qx '%s'", want[i].name, dir,
                           want[i].step), 0, "%s step", want[i].name);
        cr_assert_eq(th_sh("test $(awk '/^# / {on = ($2 == \"%s\")} /^[0-9]/ && on' "
                           "%s/out/schedules.dat | wc -l) -eq %d", want[i].name, dir,
                           want[i].boxes), 0, "%s boxes", want[i].name);
    }
    cr_assert_eq(count_tmp(), 0);
    /* bad requests: a usage error and nothing written */
    th_sh("rm -rf %s/out", dir);
    cr_assert_eq(th_sh("%s plot --kind schedules -K 4 -M 8 --schedules 1f1b,nope --out-dir "
                       "%s/out 2>/dev/null", ps, dir), 2);
    cr_assert_eq(th_sh("%s plot --kind schedules -K 4 -M 4 --schedules dualpipe-v --out-dir "
                       "%s/out 2>/dev/null", ps, dir), 2);
    cr_assert_eq(th_sh("%s plot --kind schedules -M 4 --out-dir %s/out 2>/dev/null", ps, dir), 2);
    cr_assert_eq(th_sh("%s plot --db x.db -K 4 --out-dir %s/out 2>/dev/null", ps, dir), 2);
    cr_assert_neq(th_sh("test -e %s/out/schedules.png || test -e %s/out/schedules.gp", dir, dir),
                  0);
}

Test(plot, bad_input_leaves_nothing)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    char p[256];
    snprintf(p, sizeof p, "%s/bad.json", dir);
    th_put(dir, "bad.json", "{\"traceEvents\": [");
    cr_assert_neq(th_sh("%s plot --trace %s --out-dir %s/out 2>/dev/null", ps, p, dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/none.db --out-dir %s/out 2>/dev/null", ps, dir, dir), 5);
    /* no --db, no --trace: sweep's default database, here absent */
    char abs_ps[4200], here[4096];
    cr_assert_not_null(getcwd(here, sizeof here));
    snprintf(abs_ps, sizeof abs_ps, "%s%s%s", ps[0] == '/' ? "" : here, ps[0] == '/' ? "" : "/",
             ps);
    cr_assert_eq(th_sh("cd %s && %s plot --out-dir %s/out 2>%s/err", dir, abs_ps, dir, dir), 5);
    cr_assert_eq(th_sh("grep -q 'results/sweep.db' %s/err", dir), 0);
    cr_assert_eq(th_sh("%s plot --kind timeline --db %s/none.db 2>/dev/null", ps, dir), 2);
    /* --compare of two runs of different device counts: named, exit 4 */
    for (int k = 2; k <= 4; k += 2)
        cr_assert_eq(th_sh("%s predict --model mlp:layers=8,width=64 --topology "
                           "models/topologies/chain-8-ideal.json -K %d -M 2 --batch 8 "
                           "--trace %s/k%d.json >/dev/null 2>&1", ps, k, dir, k), 0);
    cr_assert_eq(th_sh("%s plot --compare %s/k2.json %s/k4.json --out-dir %s/out 2>%s/err", ps,
                       dir, dir, dir, dir), 4);
    cr_assert_eq(th_sh("grep -q 'k2.json has 2 devices, .*k4.json 4' %s/err", dir), 0);
    snprintf(p, sizeof p, "%s/out", dir);
    DIR *d = opendir(p);
    int n = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            n += e->d_name[0] != '.';
        closedir(d);
    }
    cr_assert_eq(n, 0, "files left in %s", p);
}

/* The figures of one run are a set: when the second cannot be written (its
 * name is taken by a folder), the first is not published either. */
Test(plot, a_failed_figure_publishes_none_of_the_set)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s sweep --model mlp:layers=8,width=64 --topology "
                       "models/topologies/chain-8-ideal.json -K 1,2 -M 1,2 --batch 8 "
                       "--quiet --db %s/s.db", ps, dir), 0);
    cr_assert_eq(th_sh("mkdir -p %s/set/bubble.png", dir), 0);
    cr_assert_eq(th_sh("%s plot --db %s/s.db --out-dir %s/set 2>%s/err", ps, dir, dir, dir), 5);
    cr_assert_eq(th_sh("grep -q 'bubble.png: cannot write: Is a directory' %s/err", dir), 0);
    cr_assert_eq(th_sh("cd %s/set && test \"$(ls -A)\" = bubble.png", dir), 0,
                 "a figure of the set was published, or a temporary left");
    cr_assert_eq(th_sh("rmdir %s/set/bubble.png && %s plot --db %s/s.db --out-dir %s/set "
                       ">/dev/null", dir, ps, dir, dir), 0);
    /* --kind schedules: its PNG, SVG, script and data are a set too */
    cr_assert_eq(th_sh("mkdir -p %s/sch/schedules.svg && %s plot --kind schedules -K 2 -M 4 "
                       "--schedules gpipe,1f1b --out-dir %s/sch 2>/dev/null", dir, ps, dir), 5);
    cr_assert_eq(th_sh("cd %s/sch && test \"$(ls -A)\" = schedules.svg", dir), 0,
                 "part of the schedules figure was published");
    cr_assert_eq(th_sh("test -s %s/set/speedup.png && test -s %s/set/bubble.svg", dir, dir), 0);
}

/* A fake gnuplot in dir/fakeplot running script (a shell body), a trace
 * of a small run in dir/t.json, and plot options writing into dir/out. */
static void fake_gnuplot_and_trace(const char *script, char fake[256], char out[256],
                                   char trace[256], struct ana_plot_opts *o)
{
    snprintf(fake, 256, "%s/fakeplot", dir);
    FILE *f = fopen(fake, "w");
    cr_assert(f);
    fprintf(f, "#!/bin/sh\n%s", script);
    fclose(f);
    chmod(fake, 0755);
    cr_assert_eq(th_sh("%s predict --model mlp:layers=4,width=8 --topology "
                       "models/topologies/chain-8-ideal.json -K 2 -M 2 --batch 4 --trace "
                       "%s/t.json >/dev/null", th_pipesim(), dir), 0);
    *o = (struct ana_plot_opts){ .gnuplot = fake };
    snprintf(out, 256, "%s/out", dir);
    o->out_dir = out;
    snprintf(trace, 256, "%s/t.json", dir);
}

Test(plot, a_failing_gnuplot_leaves_no_partial_file)
{
    need_gnuplot();
    /* a "gnuplot" that writes half a PNG and fails */
    char fake[256], out[256], trace[256];
    struct ana_plot_opts o;
    fake_gnuplot_and_trace("printf 'PNG?'\necho 'line 1: broken' >&2\nexit 1\n", fake, out,
                           trace, &o);
    cr_assert_eq(ana_plot_timeline(trace, &o), -PS_EIO);
    cr_assert(strstr(ps_errmsg(), "broken"), "%s", ps_errmsg());
    snprintf(trace, sizeof trace, "%s/out/timeline.png", dir);
    cr_assert_neq(access(trace, F_OK), 0, "partial output left");
    cr_assert_eq(count_tmp(), 0);
}

/* pipesim ignores SIGXFSZ (its own writes fail with EFBIG instead), and an
 * ignored signal stays ignored across exec: gnuplot must get it back, or
 * past a file-size limit it cuts its PNG short and exits 0 (the limit here
 * is above the data files and scripts, below every figure). */
Test(plot, a_file_size_limit_stops_gnuplot_and_publishes_nothing)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s sweep --model mlp:layers=8,width=64 --topology "
                       "models/topologies/chain-8-ideal.json -K 1,2,4 -M 1,2,4 --batch 16 "
                       "--quiet --db %s/s.db", ps, dir), 0);
    cr_assert_eq(th_sh("(ulimit -f 8; %s plot --db %s/s.db --out-dir %s/out 2>%s/err.txt)", ps,
                       dir, dir, dir), 5);
    cr_assert_eq(th_sh("grep -q 'gnuplot failed' %s/err.txt", dir), 0);
    cr_assert_eq(th_sh("test -z \"$(ls -A %s/out)\"", dir), 0, "a figure was published");
}

/* A plot that fails takes away the folders it made for --out-dir (they were
 * left, empty), and keeps one that was there. */
Test(plot, a_failing_plot_leaves_no_folder_it_made)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s predict --model mlp:layers=4,width=8 --topology "
                       "models/topologies/chain-8-ideal.json -K 2 -M 2 --batch 4 --trace "
                       "%s/t.json >/dev/null && %s sweep --model mlp:layers=4,width=8 --topology "
                       "models/topologies/chain-8-ideal.json -K 1,2 -M 1,2 --batch 4 --quiet "
                       "--db %s/s.db", ps, dir, ps, dir), 0);
    cr_assert_eq(th_sh("mkdir -p %s/bin %s/old && printf '#!/bin/sh\ncase \"$1\" in "
                       "--version|-V) echo gnuplot 5.4; exit 0;; esac\necho boom >&2\nexit 1\n'"
                       " > %s/bin/gnuplot && chmod +x %s/bin/gnuplot", dir, dir, dir, dir), 0);
    static const char *const args[] = { "--trace %s/t.json", "--db %s/s.db",
                                        "--kind schedules -K 2 -M 4",
                                        "--compare %1$s/t.json %1$s/t.json" };
    for (int k = 0; k < 4; k++) {
        char a[256];
        snprintf(a, sizeof a, args[k], dir);
        cr_expect_eq(th_sh("PATH=%s/bin:$PATH %s plot %s --out-dir %s/n/a/b 2>%s/err", dir, ps,
                           a, dir, dir), 5, "%s", a);
        cr_expect_eq(th_sh("grep -q 'gnuplot failed' %s/err", dir), 0, "%s", a);
        cr_expect_eq(th_sh("test ! -e %s/n", dir), 0, "%s: a folder it made was left", a);
        cr_expect_eq(th_sh("PATH=%s/bin:$PATH %s plot %s --out-dir %s/old/a 2>%s/err", dir, ps,
                           a, dir, dir), 5, "%s", a);
        cr_expect_eq(th_sh("test -d %s/old && test ! -e %s/old/a", dir, dir), 0, "%s", a);
    }
}

/* A "gnuplot" that writes nothing and exits 0 publishes nothing: an empty
 * figure is an error (it happened with stdout closed, when the output's
 * temporary took descriptor 1); its temporaries go to $TMPDIR. */
Test(plot, an_empty_figure_is_an_error_and_temporaries_follow_tmpdir)
{
    need_gnuplot();
    char fake[256], out[256], trace[256], tmpd[256], script[512];
    snprintf(tmpd, sizeof tmpd, "%s/mytmp", dir);
    cr_assert_eq(mkdir(tmpd, 0700), 0);
    snprintf(script, sizeof script, "echo \"$1\" > %s/script-was\nexit 0\n", dir);
    struct ana_plot_opts o;
    fake_gnuplot_and_trace(script, fake, out, trace, &o);
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("TMPDIR", tmpd, 1);
    int rc = ana_plot_timeline(trace, &o);
    if (saved) {
        setenv("TMPDIR", saved, 1);
        free(saved);
    } else {
        unsetenv("TMPDIR");
    }
    cr_assert_eq(rc, -PS_EIO);
    cr_assert(strstr(ps_errmsg(), "gnuplot wrote nothing"), "%s", ps_errmsg());
    cr_assert_eq(th_sh("grep -q '^%s/pipesim-plot-' %s/script-was", tmpd, dir), 0,
                 "the script was not under $TMPDIR");
    cr_assert_eq(th_sh("test -z \"$(ls -A %s)\"", tmpd), 0, "a temporary was left");
    snprintf(trace, sizeof trace, "%s/out/timeline.png", dir);
    cr_assert_neq(access(trace, F_OK), 0, "an empty figure was published");
}

/* With stdout closed, a figure is still whole: no file pipesim opens takes
 * descriptor 1 (ps_std_fds_reserve), so gnuplot's image reaches it. */
Test(plot, a_closed_stdout_still_gives_whole_figures)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("%s predict --model mlp:layers=4,width=8 --topology "
                       "models/topologies/chain-8-ideal.json -K 2 -M 2 --batch 4 --trace "
                       "%s/t.json >/dev/null", ps, dir), 0);
    th_sh("%s plot --compare %s/t.json %s/t.json --out-dir %s/out >&- 2>/dev/null", ps, dir,
          dir, dir);
    expect_png("compare");
    cr_assert_eq(th_sh("%s reproduce gpipe --tables 3 --out-dir %s/out >&- 2>/dev/null", ps,
                       dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/out/table3.png", dir);
    cr_assert_gt(th_png_width(p), 0, "table3.png is not a whole PNG");
}

/* A name that lands in a gnuplot script cannot get out of its string: file
 * names holding a double quote, a backquote (gnuplot runs `...` as a shell
 * command even inside double quotes) or a newline, given to plot --compare
 * or stored as a sweep's model name and drawn by plot --db, run nothing
 * (each ran its command: PWNED*); the figures are drawn. A --prefix with
 * such characters is refused (it names files inside the kept scripts). */
Test(plot, names_in_scripts_run_no_commands)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    char py[160];
    snprintf(py, sizeof py, "%s/names.py", dir);
    FILE *f = fopen(py, "w");
    cr_assert(f);
    /* plot --compare runs gnuplot here; plot --db in a folder of TMPDIR
     * (this one below), hence its "cd .." */
    fputs("import shutil, sys\n"
          "names = ['q\"; system \"echo x > PWNED1\"; x=\".json', 'b`touch PWNED2`.json',\n"
          "         'n\\nsystem \\'touch PWNED3\\'\\n.json',\n"
          "         'm\\nsystem \\'cd ..; touch PWNED4\\'\\n`cd ..; touch PWNED5`.csv']\n"
          "if sys.argv[1] == 'make':\n"
          "    for n in names[:3]:\n"
          "        shutil.copy('tr.json', n)\n"
          "    shutil.copy('p.csv', names[3])\n"
          "else:\n"
          "    print(names[int(sys.argv[1])], end='')\n", f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(th_sh("cd %s && %s gen model mlp:layers=4,width=8 -o p.csv && %s gen chain -n 4 "
                       "-o t.json && %s predict --model p.csv --topology t.json -K 2 -M 2 "
                       "--batch 4 --trace tr.json > /dev/null && python3 names.py make", dir,
                       ps, ps, ps), 0);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(th_sh("cd %s && %s plot --compare \"$(python3 names.py %d)\" tr.json "
                           "--out-dir c%d > /dev/null && test -s c%d/compare.png", dir, ps, i, i,
                           i), 0, "name %d", i);
    cr_expect_eq(th_sh("cd %s && %s sweep --model \"$(python3 names.py 3)\" --topology t.json "
                       "-K 1,2 -M 1,2 --batch 8 --quiet --db s.db && TMPDIR=%s %s plot --db "
                       "s.db --out-dir d > /dev/null && test -s d/speedup.png", dir, ps, dir, ps),
                 0);
    cr_expect_eq(th_sh("cd %s && for f in PWNED1 PWNED2 PWNED3 PWNED4 PWNED5; do test -e $f "
                       "&& exit 0; done; exit 1", dir), 1, "a command ran");
    cr_expect_eq(th_sh("cd %s && %s plot --trace tr.json --kind timeline --out-dir e "
                       "--prefix \"a'b\" > /dev/null 2>&1", dir, ps), 2);
    /* and one gnuplot reads as a command or a datablock (helper-119: the kept
     * script's '<touch PWNED6;echo timeline.dat' ran it on a redraw) */
    cr_expect_eq(th_sh("cd %s && %s plot --trace tr.json --kind timeline --out-dir e "
                       "--prefix '<touch PWNED6;echo ' 2>&1 | grep -q \"must not start with "
                       "'<'\" && ! test -e e", dir, ps), 0);
    cr_expect_eq(th_sh("cd %s && %s plot --trace tr.json --kind timeline --out-dir e "
                       "--prefix '$x-' > /dev/null 2>&1", dir, ps), 2);
}

/* helper-62: interleaved:v was drawn in ticks of 1/12 T_F, exact for v dividing 12 only:
 * v = 5 drew a step of 5.5 (not (vM + K - 1) 3 / v = 6.6), v = 17 no forward at all, v = 32
 * failed in gnuplot (exit 5); a --schedules error named --schedule; --kind schedules in a
 * list with -K and -M blamed the options. */
Test(plot, interleaved_schedules_are_drawn_exactly_for_every_v)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    static const struct { int v; const char *step; } want[] = {
        { 5, "6.6" }, { 17, "6.17647" }, { 32, "6.09375" },
    };
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(th_sh("%s plot --kind schedules -K 2 -M 2 --schedules interleaved:%d "
                           "--out-dir %s/v%d >/dev/null", ps, want[i].v, dir, want[i].v), 0,
                     "v = %d", want[i].v);
        cr_expect_eq(th_sh("grep -qx '# step %s' %s/v%d/schedules.dat", want[i].step, dir,
                           want[i].v), 0, "v = %d", want[i].v);
        /* every chunk's forward drawn: 2 devices x v chunks x 2 micro-batches F and B */
        cr_expect_eq(th_sh("test $(grep -c '^[0-9]' %s/v%d/schedules.dat) -eq %d", dir,
                           want[i].v, 2 * 2 * want[i].v * 2), 0, "v = %d boxes", want[i].v);
    }
    cr_expect_eq(th_sh("%s plot --kind schedules -K 4 -M 3 --schedules interleaved:2 "
                       "--out-dir %s/x 2>&1 >/dev/null | grep -q '^pipesim plot: --schedules "
                       "interleaved:2: -M 3'", ps, dir), 0);
    cr_expect_eq(th_sh("%s plot --kind timeline,schedules -K 4 -M 8 --out-dir %s/x 2>&1 "
                       ">/dev/null | grep -q 'schedules goes alone'", ps, dir), 0);
    /* a list as compare-schedules reads it: no empty name, no schedule twice */
    cr_expect_eq(th_sh("%s plot --kind schedules -K 4 -M 8 --schedules gpipe,gpipe "
                       "--out-dir %s/x 2>/dev/null", ps, dir), 2);
    cr_expect_eq(th_sh("%s plot --kind schedules -K 4 -M 8 --schedules gpipe,,1f1b "
                       "--out-dir %s/x 2>/dev/null", ps, dir), 2);
}

/* The bubble figure's dashed line is the schedule's own analytic bubble, as
 * the database stores it and report prints it (helper-119: GPipe's
 * (K-1)/(M+K-1), 42.9 % at K = 4, M = 4, drawn for zb-h2's 20 %); and every K
 * of a group is drawn (the figures kept 256 and dropped the rest). */
Test(plot, the_bubble_figure_draws_the_schedule_s_formula_and_every_k, .timeout = 120)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s sweep --model mlp:layers=16,width=1024 --topology "
                       "chain-8-ideal -K 2,4 -M 4,8 --batch 32 --schedule zb-h2 --db zb.db "
                       "--quiet && %s plot --db zb.db --out-dir zbp --kind bubble > /dev/null",
                       dir, ps, ps), 0);
    cr_expect_eq(th_sh("grep -q 'analytic (K-1)/(3M+K-1), dashed' %s/zbp/bubble.gp", dir), 0);
    cr_expect_eq(th_sh("grep -qx '4 [0-9.e-]* 1 0.2' %s/zbp/bubble.dat", dir), 0,
                 "K = 4, M = 4: 3/15");
    /* drawn as points too, so that a K of one M shows, with the key's entry of its
     * own (helper-120: a line of one point drew nothing) */
    cr_expect_eq(th_sh("grep -q 'using 1:4 with linespoints' %s/zbp/bubble.gp && grep -q "
                       "'keyentry with linespoints .*title \"analytic' %s/zbp/bubble.gp", dir,
                       dir), 0);
    cr_assert_eq(th_sh("cd %s && %s gen chain -n 270 -o c270.json && %s sweep --model "
                       "mlp:layers=270,width=8 --topology c270.json -K $(seq -s, 1 260) -M 1 "
                       "--batch 2 --db k.db --quiet && %s plot --db k.db --out-dir kp > "
                       "/dev/null", dir, ps, ps, ps), 0);
    cr_expect_eq(th_sh("grep -c '^# K=' %s/kp/bubble.dat | grep -qx 260 && grep -c . "
                       "%s/kp/capacity.dat | grep -qx 260", dir, dir), 0, "every K drawn");
}

/* Each "wrote" line is one line, '?' for a newline in the folder's name, as
 * the errors show it (helper-119: the line broke in two). */
Test(plot, the_wrote_lines_are_one_line_each)
{
    need_gnuplot();
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s predict --model mlp:layers=4,width=8 --topology "
                       "chain-8-ideal -K 2 -M 2 --batch 4 --trace t.json > /dev/null 2>&1", dir,
                       ps), 0);
    cr_expect_eq(th_sh("cd %s && %s plot --trace t.json --out-dir \"$(printf 'a\\nb')\" | "
                       "grep -qx 'wrote a?b/timeline.png and .svg'", dir, ps), 0);
    cr_expect_eq(th_sh("cd %s && %s plot --compare t.json t.json --out-dir \"$(printf 'c\\nd')\" "
                       "| grep -cx 'wrote c?d/compare.\\(png\\|svg\\)' | grep -qx 2", dir, ps), 0);
}
