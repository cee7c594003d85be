/* pipesim presets --format: the table, the CSV and the JSON list the same
 * items (the table's lines, the CSV's rows, the JSON's arrays); the CSV
 * parses (RFC 4180) into one header and rows of its width with the section
 * first; the JSON parses, counts are integers, descriptions are the files'
 * whole "comment"; a refused --format is the one usage line every command
 * prints. */
#include "helpers.h"
#include "sched/sch_partitioner.h"

#include <jansson.h>
#include <limits.h>

TestSuite(presets, .timeout = 60);

#define BIG (1 << 17)

/* Items of the table: the lines indented by two spaces (one per topology,
 * profile and generator), per section in the order listed. */
static void table_counts(const char *t, int n[3])
{
    int sec = -1;
    n[0] = n[1] = n[2] = 0;
    for (const char *l = t; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        if (!strncmp(l, "topologies", 10))
            sec = 0;
        else if (!strncmp(l, "profiles", 8))
            sec = 1;
        else if (!strncmp(l, "model generators", 16))
            sec = 2;
        else if (l[0] == ' ' && l[1] == ' ' && l[2] != ' ' && sec >= 0)
            n[sec]++;
    }
}

/* One CSV record of text at *p (RFC 4180: quoted fields, "" for a quote),
 * its fields into f (at most max, each at most 4096 bytes); advances *p past
 * the record's newline. Returns the field count, -1 at the end. */
static int csv_record(const char **p, char f[][4096], int max)
{
    const char *s = *p;
    if (!*s)
        return -1;
    int n = 0;
    for (;;) {
        size_t k = 0;
        cr_assert_lt(n, max, "more than %d fields", max);
        if (*s == '"') {
            for (s++;; s++) {
                cr_assert(*s, "unterminated quoted field");
                if (*s == '"' && s[1] == '"')
                    s++;
                else if (*s == '"') {
                    s++;
                    break;
                }
                cr_assert_lt(k, (size_t)4095);
                f[n][k++] = *s;
            }
        } else {
            while (*s && *s != ',' && *s != '\n') {
                cr_assert_neq(*s, '"', "a quote inside an unquoted field");
                cr_assert_lt(k, (size_t)4095);
                f[n][k++] = *s++;
            }
        }
        f[n++][k] = 0;
        if (*s == ',') {
            s++;
            continue;
        }
        cr_assert(*s == '\n', "a field ends in '%c'", *s);
        *p = s + 1;
        return n;
    }
}

static char fields[32][4096], header[32][4096];

static int column(int nh, const char *name)
{
    for (int i = 0; i < nh; i++)
        if (!strcmp(header[i], name))
            return i;
    cr_assert_fail("no column '%s'", name);
    return -1;
}

/* The three formats of `ENV pipesim presets` agree, item for item. */
static void formats_agree(const char *env, int want_topologies)
{
    static char table[BIG], csv[BIG], json[BIG];
    char bin[PATH_MAX];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    cr_assert_eq(th_capture(table, sizeof table, "cd /tmp && %s %s presets", env, bin), 0, "%s",
                 table);
    cr_assert_eq(th_capture(csv, sizeof csv, "cd /tmp && %s %s presets --format csv", env, bin),
                 0, "%s", csv);
    cr_assert_eq(th_capture(json, sizeof json, "cd /tmp && %s %s presets --format json", env,
                            bin), 0, "%s", json);
    int n[3];
    table_counts(table, n);
    if (want_topologies >= 0)
        cr_assert_eq(n[0], want_topologies, "%s", table);
    int n_gen = 0;
    for (const struct mdl_generator *g = mdl_generators; g->prefix; g++)
        n_gen++;
    cr_assert_eq(n[2], n_gen, "one example per generator:\n%s", table);

    /* CSV: a header, then one row per table line, sections in order */
    const char *p = csv;
    int nh = csv_record(&p, header, 32), rows[3] = { 0, 0, 0 }, r;
    cr_assert_eq(nh, 17, "%s", csv);
    cr_assert_str_eq(header[0], "section");
    cr_assert_str_eq(header[1], "name");
    int last = 0;
    while ((r = csv_record(&p, fields, 32)) >= 0) {
        cr_assert_eq(r, nh, "a row of %d fields, the header has %d", r, nh);
        int sec = !strcmp(fields[0], "topology")  ? 0
                  : !strcmp(fields[0], "profile") ? 1
                  : !strcmp(fields[0], "generator") ? 2
                                                    : -1;
        cr_assert_geq(sec, last, "section '%s' out of order", fields[0]);
        last = sec;
        rows[sec]++;
        cr_assert(strstr(table, fields[1]), "'%s' not in the table", fields[1]);
        if (sec == 0) { /* the file's whole comment, not the table's first sentence */
            json_t *file = json_load_file(fields[column(nh, "file")], 0, NULL);
            cr_assert(file, "%s", fields[column(nh, "file")]);
            const char *comment = json_string_value(json_object_get(file, "comment"));
            cr_expect_str_eq(fields[column(nh, "description")], comment ? comment : "");
            json_decref(file);
            cr_expect_gt(atof(fields[column(nh, "device_flops")]), 0, "%s", fields[1]);
            cr_expect(!strchr(fields[column(nh, "devices")], '.'), "%s", fields[1]);
        } else {
            cr_expect_gt(atoi(fields[column(nh, "layers")]), 0, "%s", fields[1]);
            cr_expect(!strpbrk(fields[column(nh, "parameters")], ".e"),
                      "parameters %s: not an integer", fields[column(nh, "parameters")]);
        }
    }
    for (int s = 0; s < 3; s++)
        cr_expect_eq(rows[s], n[s], "section %d: %d csv rows, %d table lines", s, rows[s], n[s]);

    /* JSON: the same counts; counts and whole numbers as integers */
    json_error_t err;
    json_t *o = json_loads(json, 0, &err);
    cr_assert(o, "%s: %s", err.text, json);
    cr_assert(json_is_string(json_object_get(o, "data_folder")));
    static const char *const arrays[] = { "topologies", "profiles", "generators" };
    for (int s = 0; s < 3; s++) {
        json_t *a = json_object_get(o, arrays[s]);
        cr_assert(json_is_array(a), "%s", arrays[s]);
        cr_expect_eq((int)json_array_size(a), n[s], "%s", arrays[s]);
        size_t i;
        json_t *it;
        json_array_foreach(a, i, it) {
            if (s == 0) {
                cr_expect(json_is_integer(json_object_get(it, "devices")));
                cr_expect(json_is_integer(json_object_get(it, "links")));
                json_t *run = json_array_get(json_object_get(it, "device_runs"), 0);
                cr_expect(json_is_integer(json_object_get(run, "count")));
                cr_expect(json_is_number(json_object_get(run, "flops")));
                json_t *file = json_load_file(json_string_value(json_object_get(it, "file")),
                                              0, NULL);
                cr_assert(file);
                cr_expect(json_equal(json_object_get(it, "description"),
                                     json_object_get(file, "comment")) ||
                          (!json_object_get(file, "comment") &&
                           json_is_null(json_object_get(it, "description"))),
                          "description of %zu: not the file's whole comment", i);
                json_decref(file);
            } else {
                cr_expect(json_is_integer(json_object_get(it, "layers")));
                cr_expect(json_is_integer(json_object_get(it, "parameters")),
                          "parameters of %zu in %s", i, arrays[s]);
            }
        }
    }
    json_decref(o);
}

Test(presets, bundled_formats_agree)
{
    formats_agree("", -1); /* the data folder the build found: the source tree */
}

/* A data folder of one topology with two kinds of device and no profiles:
 * two runs, the first device's peak in the CSV, the missing folder a note. */
Test(presets, own_folder_formats_agree)
{
    char d[64], env[128], out[BIG];
    th_tmpdir(d, sizeof d, "presets-fmt");
    cr_assert_eq(th_sh("mkdir %s/topologies", d), 0);
    th_put(d, "topologies/two-kinds.json",
           "{\"name\": \"two-kinds\", \"comment\": \"Two kinds of test accelerator. A second "
           "sentence, with a comma and a \\\"quote\\\".\", \"bytes_per_param\": 12, "
           "\"devices\": [{\"name\": \"big\", \"count\": 2, \"flops\": 2e12, \"memory\": 4e9, "
           "\"mem_bandwidth\": 0}, {\"name\": \"small\", \"count\": 1, \"flops\": 1e12, "
           "\"memory\": 1e9, \"mem_bandwidth\": 0}], \"links\": [{\"name\": \"bus\", "
           "\"endpoints\": \"*\", \"bandwidth\": 5e9, \"shared\": true}]}");
    snprintf(env, sizeof env, "PIPESIM_DATA=%s", d);
    formats_agree(env, 1);
    char bin[PATH_MAX];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    cr_assert_eq(th_capture(out, sizeof out, "%s %s presets --format json", env, bin), 0);
    json_t *o = json_loads(out, 0, NULL);
    cr_assert(o, "%s", out);
    cr_expect(json_is_null(json_object_get(o, "profiles_folder")));
    cr_expect(json_is_string(json_object_get(o, "profiles_note")));
    cr_expect(json_is_null(json_object_get(o, "topologies_note")));
    json_t *t = json_array_get(json_object_get(o, "topologies"), 0);
    cr_expect_eq(json_integer_value(json_object_get(t, "devices")), 3);
    json_t *runs = json_object_get(t, "device_runs");
    cr_assert_eq(json_array_size(runs), 2, "%s", out);
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(runs, 0), "flops")),
                 2000000000000);
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(runs, 1), "memory_bytes")),
                 1000000000);
    cr_expect(json_is_null(json_object_get(json_array_get(runs, 0), "preset")));
    json_t *g = json_array_get(json_object_get(t, "link_groups"), 0);
    cr_expect(json_is_true(json_object_get(g, "shared")));
    cr_expect_eq(json_integer_value(json_object_get(g, "bandwidth_bytes_per_s")), 5000000000);
    json_decref(o);
    /* the table cuts at the first sentence; csv and json keep the comma and quote */
    cr_assert_eq(th_capture(out, sizeof out, "%s %s presets", env, bin), 0);
    cr_expect(strstr(out, "  two-kinds            2 x big 2.00 TFLOP/s, 3.73 GiB, 1 x small "
                          "1.00 TFLOP/s, 953.67 MiB; links: 1 shared 5.00 GB/s. Two kinds of "
                          "test accelerator.\n"), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "%s %s presets --format csv", env, bin), 0);
    cr_expect(strstr(out, "\"Two kinds of test accelerator. A second sentence, with a comma "
                          "and a \"\"quote\"\".\",\n"), "%s", out);
    cr_expect(strstr(out, "topology,\"two-kinds\","), "%s", out);
    cr_expect(strstr(out, ",3,2000000000000,4000000000,,"), "%s", out);
    th_sh("rm -rf %s", d);
}

/* A file in the data folder that does not load is listed with its loader's
 * message and warned; the others are listed all the same (exit 0). It
 * failed the whole listing. */
Test(presets, a_file_that_does_not_load_hides_no_other)
{
    char d[64], bin[PATH_MAX], out[BIG];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    th_tmpdir(d, sizeof d, "presets-bad");
    cr_assert_eq(th_sh("mkdir %s/topologies %s/profiles && cp models/topologies/chain-8-ideal.json "
                       "%s/topologies/ && cp models/profiles/mlp-uniform.csv %s/profiles/",
                       d, d, d, d), 0);
    th_put(d, "topologies/a-bad.json", "{\"devices\": [\n");
    th_put(d, "profiles/b-bad.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,1,2,-3,4\n");
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets 2>%s/err", d, bin, d),
                 0, "%s", out);
    cr_expect(strstr(out, "  a-bad                does not load: "), "%s", out);
    cr_expect(strstr(out, "a-bad.json:2:0: "), "%s", out);
    cr_expect(strstr(out, "  b-bad                does not load: "), "%s", out);
    cr_expect(strstr(out, "b-bad.csv:2:"), "%s", out);
    cr_expect(strstr(out, "  chain-8-ideal        8 x dev"), "%s", out);
    cr_expect(strstr(out, "  mlp-uniform          16 layers"), "%s", out);
    cr_expect_eq(th_sh("grep -c 'pipesim presets: warning: .*(listed as not loading)$' %s/err "
                       "| grep -qx 2", d), 0);
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets --format json "
                            "2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); "
                            "print([sorted(t) for t in d[\"topologies\"]+d[\"profiles\"] if "
                            "\"error\" in t], len(d[\"topologies\"]), len(d[\"profiles\"]))'",
                            d, bin), 0, "%s", out);
    cr_expect_str_eq(out, "[['error', 'file', 'name'], ['error', 'file', 'name']] 2 2\n");
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets --format csv "
                            "2>/dev/null | python3 -c 'import csv,sys; r=list(csv.DictReader("
                            "sys.stdin)); print([(x[\"name\"], bool(x[\"error\"])) for x in r "
                            "if x[\"section\"] != \"generator\"], {len(x) for x in r})'", d,
                            bin), 0, "%s", out);
    cr_expect_str_eq(out, "[('a-bad', True), ('chain-8-ideal', False), ('b-bad', True), "
                          "('mlp-uniform', False)] {17}\n");
    th_sh("rm -rf %s", d);
}

/* JSON takes UTF-8 only: a file name or a loader's message with other
 * bytes is written with '?' for them. json_pack had failed, and presets
 * said "out of memory" (exit 6). */
Test(presets, json_of_names_and_messages_that_are_not_utf8)
{
    char d[64], bin[PATH_MAX], out[BIG];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    th_tmpdir(d, sizeof d, "presets-utf8");
    cr_assert_eq(th_sh("mkdir %s/profiles && cp models/profiles/mlp-uniform.csv "
                       "\"%s/profiles/u$(printf '\\377').csv\"", d, d), 0);
    th_put(d, "profiles/c-bad.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,1\xff,2,3,4\n");
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets --format json "
                            "2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); "
                            "print([(p[\"name\"], p.get(\"error\", \"\")[-39:]) for p in "
                            "d[\"profiles\"]])'", d, bin), 0, "%s", out);
    cr_expect_str_eq(out, "[('c-bad', \"field 'fwd_flops': '1?' is not a number\"), "
                          "('u?', '')]\n");
    th_sh("rm -rf %s", d);
}

/* -o writes what stdout gets. */
Test(presets, out_file_is_stdout)
{
    char d[64], a[BIG], b[BIG];
    th_tmpdir(d, sizeof d, "presets-out");
    cr_assert_eq(th_capture(a, sizeof a, "%s presets --format csv", th_pipesim()), 0);
    cr_assert_eq(th_sh("%s presets --format csv -o %s/p.csv", th_pipesim(), d), 0);
    th_slurp(d, "p.csv", b, sizeof b);
    cr_expect_str_eq(a, b);
    th_sh("rm -rf %s", d);
}

/* The one usage line of every command, exit 2, nothing on stdout. */
/* $PIPESIM_DATA that is not a folder is named as the reason a name is not
 * found, and presets refuses it (exit 5) rather than listing "none". */
Test(presets, a_data_folder_that_is_not_one_is_named)
{
    char out[2048];
    const char *ps = th_pipesim();
    cr_expect_eq(th_capture(out, sizeof out, "PIPESIM_DATA=/nonexistent %s predict --model "
                            "mlp:layers=2,width=8 --topology dgx1-v100 -K 1 -M 1 --batch 1 "
                            "2>&1", ps), 5);
    cr_expect(strstr(out, "(nor the name of a bundled topology: $PIPESIM_DATA '/nonexistent' "
                          "is not a folder (unset it to use the installed data))"), "%s", out);
    cr_expect_eq(th_capture(out, sizeof out, "PIPESIM_DATA=/etc/passwd %s presets 2>&1", ps),
                 5);
    cr_expect(strstr(out, "$PIPESIM_DATA '/etc/passwd' is not a folder"), "%s", out);
}

Test(presets, bad_format_is_a_usage_error)
{
    static const struct {
        const char *args, *err;
    } bad[] = {
        { "--format xml", "pipesim presets: --format: unknown format 'xml' (table, csv, json)\n" },
        { "--format JSON", "pipesim presets: --format: unknown format 'JSON' (table, csv, json)\n" },
        { "--format", "pipesim presets: option '--format' needs a value (see pipesim presets "
                      "--help)\n" },
        { "--formt csv", "pipesim presets: unknown option '--formt'; did you mean '--format'? "
                         "(see pipesim presets --help)\n" },
        { "csv", "pipesim presets: unexpected argument 'csv'\n" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[1024], out[1024];
        int rc = th_capture(err, sizeof err, "%s presets %s 2>&1 >/dev/null", th_pipesim(),
                            bad[i].args);
        cr_expect_eq(rc, 2, "'%s' exited %d", bad[i].args, rc);
        cr_expect_str_eq(err, bad[i].err, "'%s'", bad[i].args);
        th_capture(out, sizeof out, "%s presets %s 2>/dev/null", th_pipesim(), bad[i].args);
        cr_expect_str_empty(out, "'%s' printed: %s", bad[i].args, out);
    }
}

/* The bash completion reads the names from the CSV: a topology's name,
 * nothing of the other sections. */
Test(presets, completion_reads_the_names_from_the_csv)
{
    if (th_sh("command -v bash >/dev/null"))
        cr_skip_test("no bash");
    char d[64], out[1024], bin[PATH_MAX];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    th_tmpdir(d, sizeof d, "presets-compl");
    cr_assert_eq(th_sh("mkdir %s/topologies %s/profiles", d, d), 0);
    th_put(d, "topologies/box-1.json",
           "{\"name\": \"box-1\", \"comment\": \"One, with a comma.\", \"devices\": [{\"name\": "
           "\"acc\", \"count\": 2, \"flops\": 1e12, \"memory\": 3e9, \"mem_bandwidth\": 0}], "
           "\"links\": [{\"name\": \"bus\", \"endpoints\": \"*\", \"bandwidth\": 5e9, "
           "\"shared\": true}]}");
    cr_assert_eq(th_sh("%s gen model mlp:layers=2,width=8 -o %s/profiles/net-a.csv", bin, d),
                 0);
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s bash -c '. "
                            "scripts/pipesim-completion.bash && _pipesim_presets topology %s "
                            "&& echo -- && _pipesim_presets profile %s'", d, bin, bin), 0,
                 "%s", out);
    cr_expect_str_eq(out, "box-1\n--\nnet-a\n");
    th_sh("rm -rf %s", d);
}

/* The schedules the completion offers are the registry's (read from
 * `pipesim help schedules` when completing), so none is missing or stale;
 * each is a name the engine builds, and predict --help lists each. */
Test(presets, completion_offers_every_schedule)
{
    if (th_sh("command -v bash >/dev/null"))
        cr_skip_test("no bash");
    char want[1024] = "", help[1024] = "", compl[1024], got[1024], bin[PATH_MAX];
    char phelp[16384];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    int n = sch_schedule_count();
    cr_assert_geq(n, 10);
    int dualpipe = 0;
    for (int i = 0; i < n; i++) {
        const char *f = sch_schedule_form(i);
        char name[64], build[64];
        /* "x:v" is typed "x:" then a number; "x[:L]" is "x" */
        size_t l = strcspn(f, "[:");
        snprintf(name, sizeof name, "%.*s%s", (int)l, f, f[l] == ':' ? ":" : "");
        snprintf(build, sizeof build, "%.*s%s", (int)l, f, f[l] == ':' ? ":2" : "");
        struct sch_schedule *s = NULL;
        cr_expect_eq(sch_schedule_build(build, 4, 8, SCH_REMAT_NEVER, &s), 0, "%s: %s", build,
                     ps_errmsg());
        sch_schedule_free(s);
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s\n", name);
        snprintf(help + strlen(help), sizeof help - strlen(help), "%s\n", f);
        dualpipe |= !strcmp(f, "dualpipe-v");
    }
    cr_assert(dualpipe);
    cr_assert_eq(th_capture(got, sizeof got, "%s help schedules", bin), 0);
    cr_expect_str_eq(got, help);
    cr_assert_eq(th_capture(compl, sizeof compl, "bash -c '. scripts/pipesim-completion.bash "
                            "&& COMP_WORDS=(%s predict --schedule \"\") COMP_CWORD=3 && "
                            "_pipesim && printf \"%%s\\n\" \"${COMPREPLY[@]}\"'", bin), 0);
    cr_expect_str_eq(compl, want);
    /* a comma list completes its last name */
    cr_assert_eq(th_capture(compl, sizeof compl, "bash -c '. scripts/pipesim-completion.bash "
                            "&& COMP_WORDS=(%s compare-schedules --schedules gpipe,dual) "
                            "COMP_CWORD=3 && _pipesim && printf \"%%s\\n\" "
                            "\"${COMPREPLY[@]}\"'", bin), 0);
    cr_expect_str_eq(compl, "gpipe,dualpipe-v\n");
    cr_assert_eq(th_capture(compl, sizeof compl, "bash -c '. scripts/pipesim-completion.bash "
                            "&& COMP_WORDS=(%s sweep --schedule gpipe,inter) COMP_CWORD=3 && "
                            "_pipesim && printf \"%%s\\n\" \"${COMPREPLY[@]}\"'", bin), 0);
    cr_expect_str_eq(compl, "gpipe,interleaved:\n");
    cr_assert_eq(th_capture(phelp, sizeof phelp, "%s predict --help", bin), 0);
    for (int i = 0; i < n; i++)
        cr_expect(strstr(phelp, sch_schedule_form(i)), "predict --help lacks %s",
                  sch_schedule_form(i));
}

/* The table's generator section has an example of every generator
 * (models/mdl_gen.h's list), so a new generator is not left out. */
Test(presets, every_generator_has_an_example)
{
    static char out[BIG];
    cr_assert_eq(th_capture(out, sizeof out, "%s presets", th_pipesim()), 0, "%s", out);
    const char *sec = strstr(out, "model generators");
    cr_assert(sec, "%s", out);
    for (const struct mdl_generator *g = mdl_generators; g->prefix; g++) {
        char line[64];
        snprintf(line, sizeof line, "\n  %s:", g->prefix);
        cr_expect(strstr(sec, line), "no example of %s in:\n%s", g->prefix, sec);
    }
}

/* A topology file whose name holds a newline keeps its table line whole
 * ('?' for the control character); CSV keeps the name as it is, quoted. */
Test(presets, a_control_character_in_a_name_keeps_the_table_line)
{
    char d[64], out[16384];
    th_tmpdir(d, sizeof d, "presets-nl");
    cr_assert_eq(th_sh("mkdir -p %s/topologies %s/profiles && cp models/topologies/devices.json "
                       "%s/topologies/ && cp models/topologies/chain-8-ideal.json "
                       "\"%s/topologies/bad$(printf '\\nname').json\"", d, d, d, d), 0);
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets", d, th_pipesim()), 0,
                 "%s", out);
    cr_expect(strstr(out, "\n  bad?name             8 x dev"), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets --format csv", d,
                            th_pipesim()), 0);
    cr_expect(strstr(out, "\"bad\nname\""), "%s", out);
    th_sh("rm -rf %s", d);
}

/* A device's name and a topology's comment with a newline and an escape keep the table
 * line whole ('?' for each control character), as does the CSV's device_summary (the
 * table's words); the CSV's and JSON's description and JSON's kind stay the file's
 * own. The table printed both raw, and a newline split the listing's line. */
Test(presets, control_characters_in_a_device_or_comment_keep_the_line)
{
    char d[64], out[BIG];
    th_tmpdir(d, sizeof d, "presets-ctl");
    cr_assert_eq(th_sh("mkdir -p %s/topologies", d), 0);
    th_put(d, "topologies/cm.json",
           "{\"comment\": \"first\\nsecond\\u001b[2J line. more\", \"devices\": "
           "[{\"name\": \"node\\nfake line\", \"flops\": 1e12, \"memory\": 1e9}], "
           "\"links\": []}");
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets", d, th_pipesim()), 0,
                 "%s", out);
    cr_expect(strstr(out, "\n  cm                   1 x node?fake line 1.00 TFLOP/s, "
                          "953.67 MiB; links: none. first?second?[2J line.\n\n"), "%s", out);
    cr_expect(!strchr(out, '\033'), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets --format csv", d,
                            th_pipesim()), 0);
    cr_expect(strstr(out, ",\"1 x node?fake line 1.00 TFLOP/s, 953.67 MiB\","), "%s", out);
    cr_expect(strstr(out, ",\"first\nsecond\033[2J line. more\","), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets --format json", d,
                            th_pipesim()), 0);
    json_t *o = json_loads(out, 0, NULL);
    cr_assert(o, "%s", out);
    json_t *t = json_array_get(json_object_get(o, "topologies"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(
                         t, "device_runs"), 0), "kind")), "node\nfake line");
    cr_expect_str_eq(json_string_value(json_object_get(t, "description")),
                     "first\nsecond\033[2J line. more");
    json_decref(o);
    th_sh("rm -rf %s", d);
}

/* Huge accepted values print whole with their unit: 1e300 FLOP/s, bytes and B/s were
 * printed as 280 digits cut to the buffer, "FLOP/s" and the memory lost. */
Test(presets, huge_values_keep_their_unit)
{
    char d[64], out[BIG];
    th_tmpdir(d, sizeof d, "presets-huge");
    cr_assert_eq(th_sh("mkdir -p %s/topologies", d), 0);
    th_put(d, "topologies/huge.json",
           "{\"devices\": [{\"name\": \"g0\", \"count\": 2, \"flops\": 1e300, "
           "\"memory\": 1e300}], \"links\": [{\"name\": \"bus\", \"endpoints\": \"*\", "
           "\"bandwidth\": 1e300, \"shared\": true}]}");
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets", d, th_pipesim()), 0,
                 "%s", out);
    cr_expect(strstr(out, "\n  huge                 2 x g 1.00e+300 FLOP/s, 1.00e+300 B; links: "
                          "1 shared 1.00e+300 B/s\n"), "%s", out);
    th_sh("rm -rf %s", d);
}

/* A run's kind is its first device's name without the trailing index (mdl_preset.h):
 * a100-0 and a7 are two kinds, as are node1-gpu0 and node2-gpu0; core00_0..core33_1
 * of the bundled torus are one. The name was cut at its first digit, and a100-0, a7
 * were listed as "2 x a", node1-gpu0, node2-gpu0 as "2 x node". */
Test(presets, a_kind_is_the_name_without_its_trailing_index)
{
    char d[64], out[BIG];
    th_tmpdir(d, sizeof d, "presets-kind");
    cr_assert_eq(th_sh("mkdir -p %s/topologies", d), 0);
    th_put(d, "topologies/kinds.json",
           "{\"devices\": [{\"name\": \"a100-0\", \"flops\": 1e12, \"memory\": 1e9}, "
           "{\"name\": \"a7\", \"flops\": 1e12, \"memory\": 1e9}, "
           "{\"name\": \"node1-gpu0\", \"flops\": 1e12, \"memory\": 1e9}, "
           "{\"name\": \"node2-gpu0\", \"flops\": 1e12, \"memory\": 1e9}, "
           "{\"name\": \"node2-gpu1\", \"flops\": 1e12, \"memory\": 1e9}, "
           "{\"name\": \"c3_1\", \"flops\": 1e12, \"memory\": 1e9}, "
           "{\"name\": \"c4_0\", \"flops\": 1e12, \"memory\": 1e9}], \"links\": []}");
    cr_assert_eq(th_capture(out, sizeof out, "PIPESIM_DATA=%s %s presets --format json", d,
                            th_pipesim()), 0, "%s", out);
    json_t *o = json_loads(out, 0, NULL);
    cr_assert(o, "%s", out);
    json_t *runs = json_object_get(json_array_get(json_object_get(o, "topologies"), 0),
                                   "device_runs");
    static const struct { int count; const char *kind; } want[] = {
        { 1, "a100-" }, { 1, "a" }, { 1, "node1-gpu" }, { 2, "node2-gpu" }, { 2, "c" },
    };
    cr_assert_eq(json_array_size(runs), sizeof want / sizeof *want, "%s", out);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        json_t *r = json_array_get(runs, i);
        cr_expect_eq(json_integer_value(json_object_get(r, "count")), want[i].count, "%zu", i);
        cr_expect_str_eq(json_string_value(json_object_get(r, "kind")), want[i].kind);
    }
    json_decref(o);
    cr_assert_eq(th_capture(out, sizeof out, "%s presets", th_pipesim()), 0, "%s", out);
    cr_expect(strstr(out, "\n  tpu-v3-torus         32 x core 61.50 TFLOP/s"), "%s", out);
    th_sh("rm -rf %s", d);
}

/* A bad field of a device preset is named where it is: the presets file, its line and
 * the preset's field; a field the topology sets over the preset stays the topology's
 * (helper-67: a preset's "memory": 0 was reported at the topology's device line, and
 * devices.json was not named). */
Test(presets, a_bad_preset_field_names_the_presets_file)
{
    char d[64], bin[PATH_MAX], out[BIG];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    th_tmpdir(d, sizeof d, "preset-field");
    cr_assert_eq(th_sh("mkdir %s/topologies", d), 0);
    th_put(d, "topologies/devices.json",
           "{\"devices\": {\n  \"acc\": {\"flops\": 1e12,\n    \"memory\": 0},\n"
           "  \"good\": {\"flops\": 1e12, \"memory\": 1e9},\n"
           "  \"nomem\": {\"flops\": 1e12}}}\n");
    th_put(d, "topologies/sup.json", "{\"devices\": [\n  {\"name\": \"a\", \"preset\": "
           "\"nomem\", \"memory\": 1e9,\n   \"mem_bandwidth\": -5}]}\n");
    th_put(d, "topologies/box.json",
           "{\"devices\": [\n  {\"name\": \"a\", \"preset\": \"acc\"}]}\n");
    th_put(d, "topologies/own.json",
           "{\"devices\": [\n  {\"name\": \"a\", \"preset\": \"good\",\n   \"flops\": -1}]}\n");
    int st = th_capture(out, sizeof out, "cd %s/topologies && %s predict --model "
                        "mlp:layers=2,width=4 --topology box.json -K 1 -M 1 --batch 1 2>&1",
                        d, bin);
    cr_expect_eq(st, 4, "%s", out);
    cr_expect(strstr(out, "devices.json:3:5: devices.acc.memory: must be > 0, got 0"), "%s",
              out);
    st = th_capture(out, sizeof out, "cd %s/topologies && %s predict --model "
                    "mlp:layers=2,width=4 --topology own.json -K 1 -M 1 --batch 1 2>&1", d, bin);
    cr_expect_eq(st, 4, "%s", out);
    cr_expect(strstr(out, "own.json:3:4: devices[0].flops: must be > 0, got -1"), "%s", out);
    /* a preset that fails alone on another field (memory, which the topology supplies)
     * does not take the blame for the topology's own (helper-68) */
    st = th_capture(out, sizeof out, "cd %s/topologies && %s predict --model "
                    "mlp:layers=2,width=4 --topology sup.json -K 1 -M 1 --batch 1 2>&1", d, bin);
    cr_expect_eq(st, 4, "%s", out);
    cr_expect(strstr(out, "sup.json:3:4: devices[0].mem_bandwidth: must be >= 0, got -5"), "%s",
              out);
    th_sh("rm -rf %s", d);
}

/* The completion offers what each option takes (helper-94: --partition, --strategy,
 * --kind, --objective and gen's subcommands completed to file names, validate --net to
 * generators validate refuses): the values read from the command's own usage, every
 * strategy the partitioner has among --partition's. */
Test(presets, completion_offers_option_values)
{
    if (th_sh("command -v bash >/dev/null"))
        cr_skip_test("no bash");
    char bin[PATH_MAX], got[1024];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    static const struct { const char *words, *want; } c[] = {
        { "predict --partition \"\"", "uniform optimal gpipe balance-by-size lingvo" },
        { "sweep --strategy gpipe,b", "gpipe,balance-by-size" },
        { "plot --kind \"\"", "speedup bubble memory timeline schedules" }, /* every form */
        { "paper --tables \"\"", "1 2 3 partitions all" }, /* numbers that are names */
        { "reproduce gpipe --tables 1,p", "1,partitions" },
        { "plan --objective \"\"", "throughput memory" },
        { "plan --mem-cap \"\"", "device" },
        { "gen \"\"", "model chain --help" },
        { "gen model t", "transformer:" },
        { "validate --net \"\"", "mlp: file:" },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        th_capture(got, sizeof got, "bash -c 'source scripts/pipesim-completion.bash; "
                   "COMP_WORDS=(%s %s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _pipesim; "
                   "echo \"${COMPREPLY[*]}\"'", bin, c[i].words);
        got[strcspn(got, "\n")] = 0;
        cr_expect_str_eq(got, c[i].want, "%s", c[i].words);
    }
    /* a one-letter placeholder is not a value ("[--mem-M m]" offered "m") */
    th_capture(got, sizeof got, "bash -c 'source scripts/pipesim-completion.bash; "
               "COMP_WORDS=(%s plot --mem-M \"\"); COMP_CWORD=3; _pipesim; "
               "echo \" ${COMPREPLY[*]} \"'", bin);
    cr_expect(!strstr(got, " m "), "%s", got);
    for (int k = 0; k < SCH_PART_NSTRATEGIES; k++) {
        th_capture(got, sizeof got, "bash -c 'source scripts/pipesim-completion.bash; "
                   "COMP_WORDS=(%s predict --partition \"\"); COMP_CWORD=3; _pipesim; "
                   "echo \" ${COMPREPLY[*]} \"'", bin);
        char w[64];
        snprintf(w, sizeof w, " %s ", sch_part_strategy_name((enum sch_part_strategy)k));
        cr_expect(strstr(got, w), "%s missing from %s", w, got);
    }
}

/* A devices.json beside a topology is read in place of the bundled one, so a
 * user's own presets file hides every bundled preset and an unrelated file of
 * that name breaks them: each error says that file was read for that reason
 * (helper-112: "no device 'a100-sxm-80gb' in devices.json", no why); an error
 * about the bundled file does not. */
Test(presets, a_devices_json_beside_the_topology_is_named_as_the_reason)
{
    char d[64], out[2048];
    th_tmpdir(d, sizeof d, "presets-beside");
    th_put(d, "t.json", "{\"devices\": [{\"name\": \"g\", \"count\": 2, \"preset\": "
                        "\"a100-sxm-80gb\"}], \"links\": [{\"name\": \"l\", \"endpoints\": "
                        "[\"g0\", \"g1\"], \"bandwidth\": 1e11}]}");
    th_put(d, "devices.json", "{\"devices\": {\"my-gpu\": {\"flops\": 1e14, \"memory\": 4e10}}}");
    const char *run = "cd %s && %s predict --model mlp:layers=8,width=64 --topology t.json "
                      "-K 2 -M 2 --batch 4 2>&1";
    cr_expect_eq(th_capture(out, sizeof out, run, d, th_pipesim()), 4, "%s", out);
    cr_expect(strstr(out, "no device 'a100-sxm-80gb' in devices.json (the devices.json beside "
                          "t.json, read in place of the bundled presets: every preset comes "
                          "from it)"), "%s", out);
    th_put(d, "devices.json", "[{\"host\": \"node0\", \"gpus\": 4}]");
    cr_expect_eq(th_capture(out, sizeof out, run, d, th_pipesim()), 3, "%s", out);
    cr_expect(strstr(out, "devices.json:1:1: must be an object with \"devices\": { NAME: {..} } "
                          "(the devices.json beside t.json"), "%s", out);
    /* an unknown top-level key at its line and column, as a topology's
     * (helper-115: "devices.json: presets: unknown field 'extra'") */
    th_put(d, "devices.json", "{\"devices\": {\"my-gpu\": {\"flops\": 1e14, \"memory\": 4e10}},\n"
                              "  \"extra\": 1}");
    cr_expect_eq(th_capture(out, sizeof out, run, d, th_pipesim()), 3, "%s", out);
    cr_expect(strstr(out, "devices.json:2:3: presets: unknown field 'extra'"), "%s", out);
    th_sh("cp models/topologies/p40-pcie-8.json %s/../p40-typo.json && sed -i "
          "'s/\"tesla-p40\"/\"tesla-p4\"/' %s/../p40-typo.json", d, d);
    cr_expect_eq(th_capture(out, sizeof out, "%s predict --model mlp:layers=8,width=64 "
                            "--topology %s/../p40-typo.json -K 2 -M 2 --batch 4 2>&1",
                            th_pipesim(), d), 4, "%s", out);
    cr_expect(strstr(out, "did you mean 'tesla-p40'?") && !strstr(out, "read in place"),
              "%s", out); /* no devices.json beside it: the bundled one, no note */
    th_sh("rm -rf %s %s/../p40-typo.json", d, d);
}

/* The options the completion offers are the command's own usage's (helper-130: it took
 * every --word of the help's prose: gen chain offered --mem-cap, calibrate --model,
 * validate --check plain validate's), and the values it lists keep names with a suffix
 * (sweep --strategy's lingvo[,...]); validate --check --remat offers all. */
static int completions(char *out, size_t n, const char *bin, const char *words, int cword)
{
    return th_capture(out, n, "bash -c '. scripts/pipesim-completion.bash && COMP_WORDS=(%s "
                      "%s) COMP_CWORD=%d && _pipesim && printf \"%%s \" \"${COMPREPLY[@]}\"'",
                      bin, words, cword);
}

Test(presets, completion_offers_each_commands_own_options)
{
    if (th_sh("command -v bash >/dev/null"))
        cr_skip_test("no bash");
    char bin[PATH_MAX], out[4096];
    cr_assert(realpath(th_pipesim(), bin), "%s", th_pipesim());
    cr_assert_eq(completions(out, sizeof out, bin, "gen chain --", 3), 0);
    cr_expect(strstr(out, "--bandwidth ") && !strstr(out, "--mem-cap"), "%s", out);
    cr_assert_eq(completions(out, sizeof out, bin, "calibrate --", 2), 0);
    cr_expect(strstr(out, "--net ") && !strstr(out, "--model") && !strstr(out, "--topology"),
              "%s", out);
    cr_assert_eq(completions(out, sizeof out, bin, "validate --check --", 3), 0);
    cr_expect(strstr(out, "--report ") && strstr(out, "--quick ") && !strstr(out, "--backend"),
              "%s", out);
    cr_assert_eq(completions(out, sizeof out, bin, "validate --ch", 2), 0);
    cr_expect(strstr(out, "--check "), "%s", out);
    cr_assert_eq(completions(out, sizeof out, bin, "gen model -", 3), 0);
    cr_expect(strstr(out, "-o "), "%s", out);
    cr_assert_eq(completions(out, sizeof out, bin, "gen model -o x.csv g", 5), 0);
    cr_expect(strstr(out, "gpt: "), "%s", out);
    cr_assert_eq(completions(out, sizeof out, bin, "sweep --strategy \"\"", 3), 0);
    cr_expect(strstr(out, "lingvo "), "%s", out);
    cr_assert_eq(completions(out, sizeof out, bin, "validate --check --remat \"\"", 4), 0);
    cr_expect(strstr(out, "all "), "%s", out);
    /* each option offered is one the command takes: never "unknown option" */
    static const char *const cmds[] = { "predict", "partition", "sweep", "plan", "report",
                                        "plot", "compare", "compare-schedules", "calibrate",
                                        "import-torch", "export-chakra", "presets", "validate",
                                        "gen-paper" };
    char d[64]; /* where an option's "x" may be written (gen-paper -o x did, in the tree) */
    th_tmpdir(d, sizeof d, "compl-opts");
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char words[64], bad[1024] = "";
        snprintf(words, sizeof words, "%s --", cmds[i]);
        cr_assert_eq(completions(out, sizeof out, bin, words, 2), 0);
        for (char *o = strtok(out, " "); o; o = strtok(NULL, " "))
            if (!th_sh("cd %s && %s %s %s x 2>&1 </dev/null | grep -q 'unknown option'", d, bin,
                       cmds[i], o))
                snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " %s", o);
        cr_expect_str_eq(bad, "", "%s: offered but refused:%s", cmds[i], bad);
    }
    th_sh("rm -rf %s", d);
}
