/* ana_format: one output-format enum parsed once — every value accepted or
 * refused per accepted set, the one message, case-sensitivity; and end to
 * end, a refused --format exits 2 with that one line. */
#include "helpers.h"
#include "analysis/ana_format.h"
#include "base/ps_error.h"

#include <string.h>

TestSuite(format, .timeout = 60);

static const unsigned sets[] = { ANA_FMTS_ALL, ANA_FMTS_TABLE_CSV };
static const char *const lists[] = { "table, csv, json", "table, csv" };

/* name, its enum, whether each set (in sets[] order) takes it */
static const struct {
    const char *name;
    enum ana_fmt fmt;
    int in[2];
} known[] = {
    { "table", ANA_FMT_TABLE, { 1, 1 } },
    { "csv", ANA_FMT_CSV, { 1, 1 } },
    { "json", ANA_FMT_JSON, { 1, 0 } },
};

/* refused by every set: case differs, near names, empty, padded; with the
 * accepted name within one edit in 3 letters (or the one it begins) that each
 * set suggests (base/ps_suggest), "" for none */
static const struct {
    const char *name, *hint[2];
} never[] = {
    { "TABLE", { "", "" } },          { "Table", { "table", "table" } },
    { "CSV", { "", "" } },            { "Csv", { "csv", "csv" } },
    { "JSON", { "", "" } },           { "Json", { "json", "" } },
    { "", { "", "" } },               { "xml", { "", "" } },
    { "tab", { "table", "table" } },  { "tables", { "table", "table" } },
    { " csv", { "csv", "csv" } },     { "csv ", { "csv", "csv" } },
    { "json ", { "json", "" } },      { "table,csv", { "", "" } },
};

Test(format, accepted_per_set)
{
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
            enum ana_fmt out = (enum ana_fmt)-1;
            int rc = ana_fmt_parse(known[i].name, sets[s], "--format", &out);
            if (known[i].in[s]) {
                cr_expect_eq(rc, 0, "'%s' in set %zu: %s", known[i].name, s, ps_errmsg());
                cr_expect_eq(out, known[i].fmt, "'%s' in set %zu", known[i].name, s);
            } else {
                char want[128];
                snprintf(want, sizeof want, "--format: unknown format '%s' (%s)",
                         known[i].name, lists[s]);
                cr_expect_eq(rc, -PS_EUSAGE, "'%s' in set %zu", known[i].name, s);
                cr_expect_str_eq(ps_errmsg(), want);
                cr_expect_eq((int)out, -1, "'%s': *out written on refusal", known[i].name);
            }
        }
}

Test(format, refused_everywhere_case_sensitive)
{
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
        for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
            enum ana_fmt out = ANA_FMT_CSV;
            char want[160], hint[64] = "";
            if (*never[i].hint[s])
                snprintf(hint, sizeof hint, "; did you mean '%s'?", never[i].hint[s]);
            snprintf(want, sizeof want, "--format: unknown format '%s'%s (%s)", never[i].name,
                     hint, lists[s]);
            cr_expect_eq(ana_fmt_parse(never[i].name, sets[s], "--format", &out), -PS_EUSAGE,
                         "'%s' accepted by set %zu", never[i].name, s);
            cr_expect_str_eq(ps_errmsg(), want);
            cr_expect_eq(out, ANA_FMT_CSV, "'%s': *out written on refusal", never[i].name);
        }
}

Test(format, message_names_the_option)
{
    enum ana_fmt out;
    cr_assert_eq(ana_fmt_parse("xml", ANA_FMT_BIT(ANA_FMT_JSON), "--report-format", &out),
                 -PS_EUSAGE);
    cr_expect_str_eq(ps_errmsg(), "--report-format: unknown format 'xml' (json)");
    cr_expect_eq(ana_fmt_parse("json", ANA_FMT_BIT(ANA_FMT_JSON), "--report-format", &out), 0);
    cr_expect_eq(out, ANA_FMT_JSON);
}

/* pipesim ARGS: exit 2 and exactly the line `want` on stderr, nothing on
 * stdout. */
static void refused(const char *args, const char *want)
{
    char err[1024];
    int rc = th_capture(err, sizeof err, "%s %s 2>&1 >/dev/null", th_pipesim(), args);
    cr_expect_eq(rc, 2, "'%s' exited %d: %s", args, rc, err);
    cr_expect_str_eq(err, want, "'%s'", args);
}

Test(format, refused_end_to_end)
{
    refused("predict --format xml",
            "pipesim predict: --format: unknown format 'xml' (table, csv, json)\n");
    refused("compare-schedules --format Table",
            "pipesim compare-schedules: --format: unknown format 'Table'; did you mean 'table'? "
            "(table, csv, json)\n");
    refused("partition --format xml",
            "pipesim partition: --format: unknown format 'xml' (table, csv, json)\n");
    refused("compare a.json b.json --format xml",
            "pipesim compare: --format: unknown format 'xml' (table, csv, json)\n");
    refused("gen-paper --format yaml",
            "pipesim gen-paper: --format: unknown format 'yaml' (table, csv, json)\n");
    refused("presets --format xml",
            "pipesim presets: --format: unknown format 'xml' (table, csv, json)\n");
    refused("calibrate --net mlp:layers=2,width=8 --format yaml",
            "pipesim calibrate: --format: unknown format 'yaml' (table, csv, json)\n");
}

/* gen-paper's CSV is its JSON to every digit the JSON has (it cut
 * params_err_pct to 2 decimals and the GFLOPs to 3). */
Test(format, gen_paper_csv_is_exact)
{
    const char *ps = th_pipesim();
    cr_expect_eq(th_sh("%s gen-paper --format csv > /tmp/pipesim-gp-$$.csv && %s gen-paper "
                       "--format json > /tmp/pipesim-gp-$$.json && python3 -c '\n"
                       "import csv, json, sys\n"
                       "rows = list(csv.DictReader(open(sys.argv[1])))\n"
                       "objs = json.load(open(sys.argv[2]))\n"
                       "objs = objs.get(\"models\", objs) if isinstance(objs, dict) else objs\n"
                       "assert len(rows) == len(objs) > 0, (len(rows), len(objs))\n"
                       "for r, o in zip(rows, objs):\n"
                       "    for k, v in o.items():\n"
                       "        if isinstance(v, float):\n"
                       "            assert \"%%.15g\" %% float(r[k]) == \"%%.15g\" %% v, (k, r[k], v)\n"
                       "' /tmp/pipesim-gp-$$.csv /tmp/pipesim-gp-$$.json; s=$?; "
                       "rm -f /tmp/pipesim-gp-$$.csv /tmp/pipesim-gp-$$.json; exit $s", ps, ps), 0);
}

/* A model or topology file whose name is not UTF-8 is written into JSON with
 * '?' for its other bytes, as report and presets write one (helper-114:
 * predict left the "model" key out, exit 0; compare-schedules failed, "out
 * of memory", exit 6). */
Test(format, json_names_a_file_that_is_not_utf8)
{
    char d[64], out[16384], wd[4096];
    th_tmpdir(d, sizeof d, "fmt8");
    cr_assert(getcwd(wd, sizeof wd));
    const char *ps = th_pipesim();
    cr_assert_eq(th_sh("cd %s && %s gen model mlp:layers=4,width=8 -o \"$(printf 'm\\377.csv')\" "
                       "&& cp %s/models/topologies/chain-8-ideal.json \"$(printf 't\\376.json')\"",
                       d, ps, wd), 0);
    const char *args = "--model \"$(printf 'm\\377.csv')\" --topology \"$(printf 't\\376.json')\" "
                       "-K 2 -M 2 --batch 4 --format json";
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s predict %s 2>&1", d, ps, args), 0,
                 "%s", out);
    cr_expect(strstr(out, "\"model\": \"m?.csv\""), "predict: %s", out);
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s compare-schedules %s --schedules "
                            "gpipe,1f1b 2>&1", d, ps, args), 0, "%s", out);
    cr_expect(strstr(out, "\"model\": \"m?.csv\""), "compare-schedules: %s", out);
    cr_expect(strstr(out, "\"topology\": \"t?.json\""), "compare-schedules: %s", out);
    th_sh("rm -rf %s", d);
}

/* Every figure of predict's and compare-schedules' JSON is in their CSV, with
 * the same value (helper-114: the CSVs lacked model, ops_below_tick,
 * baseline_fits, first_layer, recomp_s, the topology and the baseline). */
Test(format, the_csv_has_every_figure_of_the_json)
{
    const char *ps = th_pipesim();
    const char *check =
        "import csv, json, sys\n"
        "rows = list(csv.DictReader(open(sys.argv[1])))\n"
        "j = json.load(open(sys.argv[2]))\n"
        "def same(a, b, k):\n"
        "    if isinstance(b, bool): b = int(b)\n"
        "    if b is None: assert a == '', (k, a)\n"
        "    elif isinstance(b, (int, float)):\n"
        "        assert '%.15g' % float(a) == '%.15g' % b, (k, a, b)  # JSON's 15 digits\n"
        "    else: assert a == b, (k, a, b)\n"
        "if 'stages' in j:\n"
        "    assert len(rows) == len(j['stages'])\n"
        "    for r, st in zip(rows, j['stages']):\n"
        "        for k, v in j.items():\n"
        "            if k != 'stages': same(r[k], v, k)\n"
        "        for k, v in st.items(): same(r['stage_fits' if k == 'fits' else k], v, k)\n"
        "else:\n"
        "    for k, v in j.items():\n"
        "        if k not in ('schedules', 'remat'):\n"
        "            for r in rows: same(r[k], v, k)\n"
        "    for s in j['schedules']:\n"
        "        mine = [r for r in rows if r['schedule'] == s['schedule']]\n"
        "        assert len(mine) == len(s['devices'])\n"
        "        for r, d in zip(mine, s['devices']):\n"
        "            for k, v in s.items():\n"
        "                if k not in ('devices', 'remat'): same(r[k], v, k)\n"
        "            for k, v in d.items(): same(r[k], v, k)\n";
    static const char *const runs[] = {
        "predict --model mlp:layers=8,width=256 --topology models/topologies/pcie-8gpu.json "
        "-K 2 -M 4 --batch 8",
        "predict --model mlp:layers=8,width=256 --topology models/topologies/pcie-8gpu.json "
        "-K 4 -M 4 --batch 8 --schedule interleaved:2 --replicas 2",
        "compare-schedules --model mlp:layers=8,width=256 --topology "
        "models/topologies/pcie-8gpu.json -K 2 -M 4 --batch 8 --schedules gpipe,zb-h1,zb-v",
    };
    char d[64];
    th_tmpdir(d, sizeof d, "fmtcsv");
    th_put(d, "check.py", check);
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++)
        cr_expect_eq(th_sh("%s %s --format csv > %s/c.csv 2>/dev/null && %s %s --format json > "
                           "%s/j.json 2>/dev/null && python3 %s/check.py %s/c.csv %s/j.json", ps,
                           runs[i], d, ps, runs[i], d, d, d, d), 0, "%s", runs[i]);
    th_sh("rm -rf %s", d);
}
