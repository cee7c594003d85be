/* The shared conventions of the command line and its numbers: "did you
 * mean" (base/ps_suggest), durations (ps_human_seconds), memory in GiB
 * (ps_human_bytes), JSON integers and digits (ps_json_dumpf), the generator
 * table against the parsers it documents, and end to end -o, --out-dir,
 * --partition optimal, report's defaults. */
#include "helpers.h"
#include "base/ps_json.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"
#include "measure/msr_validate.h"
#include "models/mdl_gen.h"
#include "runtime/rt_cpu.h"

#include <jansson.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

TestSuite(suggest, .timeout = 30);
TestSuite(numbers, .timeout = 30);
TestSuite(genspec, .timeout = 60);
TestSuite(options, .timeout = 120);

Test(suggest, edit_distance_by_definition)
{
    cr_assert_eq(ps_edit_distance("", ""), 0);
    cr_assert_eq(ps_edit_distance("abc", ""), 3);
    cr_assert_eq(ps_edit_distance("kitten", "sitting"), 3); /* 2 substitutions, 1 insertion */
    cr_assert_eq(ps_edit_distance("1fb1", "1f1b"), 1);      /* one adjacent transposition */
    cr_assert_eq(ps_edit_distance("--modle", "--model"), 1);
    cr_assert_eq(ps_edit_distance("gpipe", "gpipe"), 0);
}

static const char *best_of(const char *typed, const char *const *c)
{
    static struct ps_suggest sg;
    ps_suggest_init(&sg, typed);
    for (; *c; c++)
        ps_suggest_add(&sg, *c);
    return ps_suggest_best(&sg);
}

Test(suggest, closest_within_reach_or_none)
{
    static const char *const sch[] = { "gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", NULL };
    cr_assert_str_eq(best_of("1fb1", sch), "1f1b");
    cr_assert_str_eq(best_of("gpip", sch), "gpipe");
    cr_assert_str_eq(best_of("zb-h3", sch), "zb-h1"); /* ties: the first listed */
    cr_assert_str_eq(best_of("inter", sch), "interleaved"); /* a unique prefix */
    cr_assert_null(best_of("frobnicate", sch));
    cr_assert_null(best_of("zb", sch)); /* the prefix of two: no guess */
    static const char *const opt[] = { "--out", "--out-dir", NULL };
    cr_assert_str_eq(best_of("--out-dri", opt), "--out-dir");
    struct ps_suggest sg;
    ps_suggest_init(&sg, "xyzzy");
    ps_suggest_add(&sg, "gpipe");
    cr_assert_str_eq(ps_suggest_hint(&sg), "");
    ps_suggest_init(&sg, "gpipf");
    ps_suggest_add(&sg, "gpipe");
    cr_assert_str_eq(ps_suggest_hint(&sg), "; did you mean 'gpipe'?");
}

static const char *secs(double s)
{
    static char b[32];
    ps_human_seconds(s, b, sizeof b);
    return b;
}

/* Command-line numbers: blanks around a value are fine either side (as the
 * shell may keep them), hexadecimal and trailing text are not. */
Test(numbers, parsed_values_blanks_hex_and_junk)
{
    long v;
    double d;
    cr_expect_eq(ps_parse_long(" 3", "-K", 1, 9, &v), 0);
    cr_expect_eq(v, 3);
    cr_expect_eq(ps_parse_long("3 ", "-K", 1, 9, &v), 0);
    cr_expect_eq(v, 3);
    cr_expect_eq(ps_parse_long("3 x", "-K", 1, 9, &v), -PS_EUSAGE);
    cr_expect_eq(ps_parse_long(" ", "-K", 1, 9, &v), -PS_EUSAGE);
    cr_expect_eq(ps_parse_long("0x3", "-K", 1, 9, &v), -PS_EUSAGE);
    cr_expect_eq(ps_parse_double(" 2.5 ", "--x", &d), 0);
    cr_expect_eq(d, 2.5);
    cr_expect_eq(ps_parse_double("0x10", "--x", &d), -PS_EUSAGE);
    cr_expect(strstr(ps_errmsg(), "'0x10' is not a decimal number"), "%s", ps_errmsg());
    cr_expect_eq(ps_parse_double("-0X1p3", "--x", &d), -PS_EUSAGE);
    char *end;
    cr_expect_eq(ps_strtod("0x10", &end), 0);
    cr_expect_str_eq(end, "0x10");
    cr_expect_eq(ps_strtod("1e3x", &end), 1000);
    cr_expect_str_eq(end, "x");
    cr_expect_eq(ps_parse_bytes("2KiB", "--mem-cap", &d), 0);
    cr_expect_eq(d, 2048);
    cr_expect_eq(ps_parse_bytes("1e31", "--mem-cap", &d), -PS_EUSAGE);
    cr_expect(strstr(ps_errmsg(), "out of range (at most 1e30 bytes)"), "%s", ps_errmsg());
    cr_expect_eq(ps_parse_bytes("0x10", "--mem-cap", &d), -PS_EUSAGE);
    /* whole bytes (1.5 was a capacity of 1.5 bytes, printed "2 B"); KB as K */
    cr_expect_eq(ps_parse_bytes("1.5", "--mem-cap", &d), -PS_EUSAGE);
    cr_expect_str_eq(ps_errmsg(), "--mem-cap: '1.5' is not a whole number of bytes (with a "
                     "unit: 1.5G = 1.5e9, 1.5GiB = 1.5 x 2^30)");
    cr_expect_eq(ps_parse_bytes("16KB", "--mem-cap", &d), 0);
    cr_expect_eq(d, 16000);
    cr_expect_eq(ps_parse_bytes("16XB", "--mem-cap", &d), -PS_EUSAGE);
    cr_expect(strstr(ps_errmsg(), "(B; k or K, M, G, T, with or without B: powers of 1000; "
                     "KiB, MiB, GiB, TiB: of 1024)"), "%s", ps_errmsg());
}

/* A message may quote the previous one: ps_error formats apart before it
 * writes its buffer (the quoted text is that buffer). */
Test(numbers, a_message_quoting_the_previous_one)
{
    ps_error(PS_EIO, "inner: %s", "the reason");
    cr_expect_eq(ps_error(PS_EUSAGE, "outer (%s)", ps_errmsg()), -PS_EUSAGE);
    cr_expect_str_eq(ps_errmsg(), "outer (inner: the reason)");
    char big[6000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    ps_error(PS_EIO, "%s", big); /* shortened to the buffer */
    ps_error(PS_EIO, "again: %s", ps_errmsg());
    cr_expect_eq(strncmp(ps_errmsg(), "again: aaa", 10), 0, "%.20s", ps_errmsg());
    cr_expect_lt(strlen(ps_errmsg()), 4096);
}

Test(numbers, durations_in_the_unit_that_reads)
{
    cr_assert_str_eq(secs(19.392971342), "19.393 s");
    cr_assert_str_eq(secs(116.82450372), "116.825 s");
    cr_assert_str_eq(secs(0.4278516), "427.852 ms");
    cr_assert_str_eq(secs(0.9999), "999.900 ms");
    cr_assert_str_eq(secs(0.9999996), "1.000 s"); /* not "1000.000 ms" */
    cr_assert_str_eq(secs(0.9999994), "999.999 ms");
    cr_assert_str_eq(secs(12.5e-6), "12.500 us");
    cr_assert_str_eq(secs(40e-9), "40 ns");
    cr_assert_str_eq(secs(0), "0 s");
    cr_assert_str_eq(secs(NAN), "-");
    cr_assert_str_eq(secs(INFINITY), "-");
}

Test(numbers, memory_in_binary_units)
{
    char b[32];
    ps_human_bytes(17179869184.0, b, sizeof b); /* a 16 GiB P100 */
    cr_assert_str_eq(b, "16.00 GiB");
    ps_human_bytes(16e9, b, sizeof b);
    cr_assert_str_eq(b, "14.90 GiB");
    ps_human_bytes(512, b, sizeof b);
    cr_assert_str_eq(b, "512 B");
    ps_human_bytes(1536, b, sizeof b);
    cr_assert_str_eq(b, "1.50 KiB");
    /* past the largest unit, exponent notation: 1e300 printed 301 digits, cut to
     * the buffer's size and without its unit */
    char s[16];
    ps_human_bytes(999.0 * 1125899906842624.0, s, sizeof s);
    cr_assert_str_eq(s, "999.00 PiB");
    ps_human_bytes(1e300, s, sizeof s);
    cr_assert_str_eq(s, "1.00e+300 B");
    ps_human_bytes(-1e300, s, sizeof s);
    cr_assert_str_eq(s, "-1.00e+300 B");
}

Test(numbers, signed_durations_and_counts)
{
    char b[32];
    ps_human_seconds_delta(19.859873e-3, b, sizeof b);
    cr_assert_str_eq(b, "+19.860 ms");
    ps_human_seconds_delta(-3.5e-6, b, sizeof b);
    cr_assert_str_eq(b, "-3.500 us");
    ps_human_seconds_delta(54.7102e-3, b, sizeof b);
    cr_assert_str_eq(b, "+54.710 ms");
    ps_human_seconds_delta(0, b, sizeof b);
    cr_assert_str_eq(b, "0 s");
    ps_human_seconds_delta(NAN, b, sizeof b);
    cr_assert_str_eq(b, "-");
    static const struct { double v; const char *want; } n[] = {
        { 0, "0" }, { 526, "526" }, { 999, "999" }, { 1000, "1.00 thousand" },
        { 526336, "526.34 thousand" }, { 999996, "1.00 million" }, /* not 1000.00 thousand */
        { 2101248, "2.10 million" }, { 16785408, "16.79 million" },
        { 1.34e9, "1.34 billion" }, { 8.796e12, "8.80 trillion" }, { 2e15, "2000.00 trillion" },
        { 1e300, "1.00e+300" }, /* 289 digits and "trillion", cut to the buffer's size */
        { -2.5e18, "-2.50e+18" },
    };
    for (size_t i = 0; i < sizeof n / sizeof *n; i++) {
        ps_human_count(n[i].v, b, sizeof b);
        cr_expect_str_eq(b, n[i].want, "%.0f", n[i].v);
    }
}

/* Table figures of fixed decimals: a value that is not 0 never prints as
 * zero (helper-114: 1.6e-4 samples/s printed 0.00 in predict, plan,
 * compare-schedules and report, 0.000 GiB in partition). */
Test(numbers, fixed_decimals_never_print_a_nonzero_as_zero)
{
    static const struct {
        double v;
        int d;
        const char *want;
    } c[] = {
        { 0, 2, "0.00" },           { 12.345, 2, "12.35" },  { 0.005, 2, "0.01" },
        { 0.004, 2, "0.004" },      { 0.000162760415708522, 2, "0.000163" },
        { 2.47e-09, 2, "2.47e-09" }, { -0.004, 2, "-0.004" }, { 0.04, 1, "0.04" },
        { 0.0004, 3, "0.0004" },    { 1.5, 3, "1.500" },
    };
    char b[64];
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        ps_fixed(c[i].v, c[i].d, b, sizeof b);
        cr_expect_str_eq(b, c[i].want, "%g at %d decimals", c[i].v, c[i].d);
    }
    char out[16384];
    cr_assert_eq(th_capture(out, sizeof out, "d=$(mktemp -d) && %s gen chain -n 8 --bandwidth 1 "
                            "-o $d/bw1.json && %s predict --model mlp:layers=8,width=512 "
                            "--topology $d/bw1.json -K 4 -M 4 --batch 4; s=$?; rm -rf $d; exit $s",
                            th_pipesim(), th_pipesim()), 0, "%s", out);
    cr_expect(strstr(out, "throughput      0.000163 samples/s\n"), "%s", out);
    /* partition's speedup column too (helper-117: 0.000x) */
    cr_assert_eq(th_capture(out, sizeof out, "d=$(mktemp -d) && %s gen chain -n 8 --bandwidth 1 "
                            "-o $d/bw1.json && %s partition --model mlp:layers=8,width=512 "
                            "--topology $d/bw1.json -K 4 -M 4 --batch 4; s=$?; rm -rf $d; exit $s",
                            th_pipesim(), th_pipesim()), 0, "%s", out);
    cr_expect(strstr(out, "e-08x ") && !strstr(out, "0.000x"), "%s", out);
}

Test(numbers, parameter_counts_in_one_style_everywhere, .timeout = 60)
{
    char out[16384];
    cr_assert_eq(th_capture(out, sizeof out, "%s predict --model mlp:layers=8,width=256 "
                            "--topology models/topologies/pcie-8gpu.json -K 2 -M 4 --batch 8",
                            th_pipesim()), 0);
    cr_assert(strstr(out, ": 8 layers, 526.34 thousand parameters\n"), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "%s presets", th_pipesim()), 0);
    cr_assert(strstr(out, "16 layers, 16.79 million parameters,"), "%s", out);
    cr_assert_null(strstr(out, " G parameters"), "%s", out);
    /* validate: the net's parameters counted so, its memory in binary units */
    cr_assert_eq(th_capture(out, sizeof out, "%s validate --net mlp:layers=8,width=512 -K 2 -M 4 "
                            "--batch 8 --steps 1 --no-pin 2>&1", th_pipesim()), 0);
    cr_assert(strstr(out, " (8 layers, 2.10 million parameters)\n"), "%s", out);
    cr_assert(strstr(out, "    peak act    schedule match params+grad   workspace\n"), "%s",
              out);
    cr_assert(strstr(out, "   24.00 KiB   24.00 KiB   yes    8.02 MiB   12.01 KiB\n"), "%s",
              out);
    cr_assert(strstr(out, "   39.00 KiB   39.00 KiB   yes    8.02 MiB   12.01 KiB\n"), "%s",
              out);
    /* unpinned, a device has no CPU: '-', an empty field, null (helper-66: -1) */
    cr_assert(strstr(out, "\n     0    -       0      4"), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "%s validate --net mlp:layers=8,width=512 -K 2 "
                            "-M 4 --batch 8 --steps 1 --no-pin --format csv 2>/dev/null | "
                            "tail -1 | cut -d, -f6,7", th_pipesim()), 0);
    cr_assert_str_eq(out, "1,\n");
    cr_assert_eq(th_capture(out, sizeof out, "%s validate --net mlp:layers=8,width=512 -K 2 "
                            "-M 4 --batch 8 --steps 1 --no-pin --format json 2>/dev/null | "
                            "grep -c '\"cpu\": null'", th_pipesim()), 0);
    cr_assert_str_eq(out, "2\n");
}

Test(numbers, json_whole_numbers_are_integers_and_reals_have_no_noise)
{
    json_t *o = json_pack("{s:f, s:f, s:[f, f], s:f, s:f}", "batch", 128.0, "step_s",
                          67.309252046, "list", 16e9, 0.5, "tiny", 1e-300, "huge", 1e300);
    cr_assert_not_null(o);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(ps_json_dumpf(o, f, JSON_COMPACT), 0);
    fclose(f);
    json_decref(o);
    cr_assert_str_eq(buf, "{\"batch\":128,\"step_s\":67.309252046,\"list\":[16000000000,0.5],"
                          "\"tiny\":1e-300,\"huge\":1e300}");
    free(buf);
}

/* The shortest of %.15g, %.16g, %.17g that reads back: each written from
 * the definition (the digits a person would type, or 17 where nothing
 * shorter is the same double). */
Test(numbers, csv_reals_are_the_shortest_that_read_back)
{
    static const struct { double v; const char *want; } cases[] = {
        { 67.309252046, "67.309252046" },
        { 0.1, "0.1" },
        { 0.1 + 0.2, "0.30000000000000004" },
        { 2.52e-07, "2.52e-07" },
        { 0.8, "0.8" },
        { 1.0 / 3, "0.3333333333333333" },
        { 9007199254740993.0, "9007199254740992" }, /* 2^53 + 1 is 2^53 as a double */
        { 9007199254740994.0, "9007199254740994" },
        { 128, "128" },
        { 16e9, "16000000000" },
        { 0, "0" },
        { -0.0, "-0" },
        { 1e-300, "1e-300" },
        { 1e300, "1e+300" },
        { 5e-324, "4.94065645841247e-324" }, /* the smallest denormal: 15 digits read back */
        { INFINITY, "inf" },
        { -INFINITY, "-inf" },
    };
    char b[PS_DBL_LEN];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        cr_expect_str_eq(ps_fmt_double(cases[i].v, b, sizeof b), cases[i].want);
    cr_assert_str_eq(PS_DBL(NAN), "nan");
    /* every finite value reads back bit for bit, through all three widths */
    const double v[] = { 0.1 + 0.2, 67.309252046, 31746031.746031743, 1e-300, 5e-324,
                         2.2250738585072009e-308, 2.2250738585072014e-308, 1.7976931348623157e308,
                         -1.0 / 7, 9007199254740993.0, 0x1.fffffffffffffp-1, 123456789012345678.0,
                         4.35, 0.427851607, 0.8556305420000001 };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        double back = strtod(ps_fmt_double(v[i], b, sizeof b), NULL);
        cr_expect(!memcmp(&back, &v[i], sizeof back), "%.17g: '%s' reads %.17g", v[i], b, back);
        char d[3][32]; /* shortest: the fewest of 15, 16, 17 digits that read back */
        for (int k = 0; k < 3; k++)
            snprintf(d[k], sizeof d[k], "%.*g", 15 + k, v[i]);
        int k = strtod(d[0], NULL) == v[i] ? 0 : strtod(d[1], NULL) == v[i] ? 1 : 2;
        cr_expect_str_eq(b, d[k]);
    }
    unsigned long long bits = 0x9e3779b97f4a7c15ULL; /* and random bit patterns */
    for (int i = 0; i < 20000; i++) {
        bits ^= bits << 13, bits ^= bits >> 7, bits ^= bits << 17;
        double x, back;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x))
            continue;
        back = strtod(ps_fmt_double(x, b, sizeof b), NULL);
        cr_assert(!memcmp(&back, &x, sizeof x), "%a: '%s' reads %a", x, b, back);
    }
}

/* Milliseconds written from seconds and read back with the exponent moved
 * (ps_fmt_exp, ps_strtod_exp): the decimal of the seconds, so no noise
 * (helper-139: 6e-5 s was written 0.060000000000000005 ms), and every value
 * reads back bit for bit (s x 1e3 then / 1e3 did not always). */
Test(numbers, milliseconds_shift_the_decimal_exponent)
{
    static const struct { double s; const char *ms; } cases[] = {
        { 6e-5, "0.06" },       { 1.97e-4, "0.197" }, { 1e-3, "1" },
        { 1e-12, "1e-09" },     { 1.5e-7, "0.00015" }, { 4.2e10, "42000000000000" },
        { 1.234e15, "1.234e+18" }, { -2.5e-3, "-2.5" }, { 0, "0" },
        { 1.0 / 3, "333.3333333333333" },
    };
    char b[PS_DBL_LEN];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_expect_str_eq(ps_fmt_exp(cases[i].s, 3, b, sizeof b), cases[i].ms);
        cr_expect(ps_strtod_exp(cases[i].ms, -3) == cases[i].s, "%s", cases[i].ms);
    }
    cr_expect(ps_strtod_exp("0.06", -3) == 6e-5 && 0.06 / 1e3 != 6e-5, "rounded once");
    cr_expect(ps_strtod_exp("6E1", -3) == 0.06 && ps_strtod_exp("-1.5e-3", -3) == -1.5e-6);
    unsigned long long bits = 0x2545f4914f6cdd1dULL;
    for (int i = 0; i < 200000; i++) {
        bits ^= bits << 13, bits ^= bits >> 7, bits ^= bits << 17;
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x) || fabs(x) > 1e300 || fabs(x) < 1e-300)
            continue;
        double back = ps_strtod_exp(ps_fmt_exp(x, 3, b, sizeof b), -3);
        cr_assert(!memcmp(&back, &x, sizeof x), "%a: '%s' reads %a", x, b, back);
    }
}

/* --batch takes a whole number in any decimal notation in every command, as
 * predict always did ("8.0", "1e1"); sweep, report, plot, validate and
 * calibrate refused them as "not an integer" (helper-138), so a batch
 * predict took could not be swept or selected. */
Test(numbers, a_batch_is_a_whole_number_in_any_notation)
{
    long v = 0;
    cr_expect(ps_parse_count("8.0", "--batch", 1, 100, &v) == 0 && v == 8);
    cr_expect(ps_parse_count("1e1", "--batch", 1, 100, &v) == 0 && v == 10);
    cr_expect(ps_parse_count(" 12 ", "--batch", 1, 100, &v) == 0 && v == 12);
    cr_expect_eq(ps_parse_count("8.5", "--batch", 1, 100, &v), -PS_EUSAGE);
    cr_expect_str_eq(ps_errmsg(), "--batch: '8.5' is not a whole number");
    cr_expect_eq(ps_parse_count("0x10", "--batch", 1, 100, &v), -PS_EUSAGE);
    cr_expect_eq(ps_parse_count("1e3", "--batch", 1, 100, &v), -PS_EUSAGE);
    cr_expect_str_eq(ps_errmsg(), "--batch: 1e3 is out of range [1, 100]: must be at most 100");
    cr_expect_eq(ps_parse_count("nan", "--batch", 1, 100, &v), -PS_EUSAGE);
    long *l = NULL;
    int n = 0;
    cr_expect(ps_parse_count_list("8.0,1e1,4", "--batch", 1, 100, &l, &n) == 0 && n == 3 &&
              l[0] == 8 && l[1] == 10 && l[2] == 4);
    free(l);
    char d[64];
    th_tmpdir(d, sizeof d, "batchforms");
    const char *ps = th_pipesim();
    cr_expect_eq(th_sh("cd %s && %s sweep --model mlp:layers=8,width=8 --topology chain-8-ideal "
                       "-K 1,2 -M 1 --batch 8.0,1e1 --db s.db --quiet && %s report --db s.db "
                       "--batch 1e1 --metric step >/dev/null && %s plot --db s.db --batch 8.0 "
                       "--out-dir p >/dev/null && %s predict --model mlp:layers=8,width=8 "
                       "--topology chain-8-ideal -K 1 -M 1 --batch 8.0 >/dev/null", d, ps, ps,
                       ps, ps), 0);
    cr_expect_eq(th_sh("%s validate --net mlp:layers=2,width=4 -K 1 -M 1 --batch 8.5 "
                       "2>/dev/null", ps), 2);
    th_sh("rm -rf %s", d);
}

Test(numbers, csv_outputs_have_no_float_noise)
{
    char out[16384];
    cr_assert_eq(th_capture(out, sizeof out, "%s predict --model transformer:L=24 --topology "
                            "models/topologies/pcie-8gpu.json -K 4 -M 32 --batch 128 "
                            "--format csv", th_pipesim()), 0);
    cr_assert(strstr(out, ",\"7,7,6,6\",67.309252046,"), "%s", out);
    cr_assert(strstr(out, ",0.427851607,"), "%s", out);
    cr_assert_null(strstr(out, "67.309252045999997"), "%s", out); /* what %.17g wrote */
    cr_assert_null(strstr(out, "0.42785160700000002"), "%s", out);
    cr_assert_eq(th_capture(out, sizeof out, "%s compare-schedules --model transformer:L=24 "
                            "--topology models/topologies/pcie-8gpu.json -K 4 -M 32 --batch 128"
                            " --schedules gpipe,1f1b --format csv", th_pipesim()), 0);
    cr_assert(strstr(out, "\ngpipe,4,32,128,4,except_last,4,67.309252046,"), "%s", out);
}

/* "prefix:" and the required keys given `req`; with all, every key with a
 * default spelled out too. */
static void spell(const struct mdl_generator *g, const char *req, int all, char *buf, size_t n)
{
    snprintf(buf, n, "%s:", g->prefix);
    int first = 1;
    for (const struct mdl_gen_key *k = g->keys; k->name; k++) {
        if (k->dflt && !all)
            continue;
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s=%s", first ? "" : ",", k->name,
                 k->dflt ? k->dflt : req);
        first = 0;
    }
}

/* What a required key gets: values each generator accepts. */
static const char *required_value(const struct mdl_generator *g)
{
    if (!strcmp(g->prefix, "resnet"))
        return "50";
    if (!strcmp(g->prefix, "vgg"))
        return "11";
    return "8";
}

Test(genspec, every_key_accepted_and_every_default_the_parsers)
{
    int n = 0;
    for (const struct mdl_generator *g = mdl_generators; g->prefix; g++, n++) {
        char bare[256], full[512];
        spell(g, required_value(g), 0, bare, sizeof bare);
        spell(g, required_value(g), 1, full, sizeof full);
        struct mdl_profile *a = NULL, *b = NULL;
        cr_assert_eq(mdl_model_open(bare, &a), 0, "%s: %s", bare, ps_errmsg());
        cr_assert_eq(mdl_model_open(full, &b), 0, "%s: %s", full, ps_errmsg());
        cr_assert_eq(a->n_layers, b->n_layers, "%s vs %s", bare, full);
        cr_assert_eq(mdl_profile_params(a), mdl_profile_params(b), "%s vs %s", bare, full);
        double fa = 0, fb = 0, sa = 0, sb = 0;
        for (int l = 0; l < a->n_layers; l++) {
            fa += a->layers[l].fwd;
            fb += b->layers[l].fwd;
            sa += a->layers[l].stash_bytes;
            sb += b->layers[l].stash_bytes;
        }
        cr_assert_eq(fa, fb, "%s: forward FLOPs differ from %s", bare, full);
        cr_assert_eq(sa, sb, "%s: stash bytes differ from %s", bare, full);
        mdl_profile_free(a);
        mdl_profile_free(b);
        /* a key not in the table is refused */
        char bad[300];
        snprintf(bad, sizeof bad, "%s%sbogus_key=1", bare,
                 bare[strlen(bare) - 1] == ':' ? "" : ",");
        cr_assert_lt(mdl_model_open(bad, &a), 0, "%s accepted", bad);
    }
    cr_assert_eq(n, 7);
}

Test(genspec, help_lists_every_generator_and_key)
{
    char out[16384];
    cr_assert_eq(th_capture(out, sizeof out, "%s gen --help", th_pipesim()), 0);
    char pred[16384];
    cr_assert_eq(th_capture(pred, sizeof pred, "%s predict --help", th_pipesim()), 0);
    for (const struct mdl_generator *g = mdl_generators; g->prefix; g++) {
        char line[64];
        snprintf(line, sizeof line, "\n  %s: ", g->prefix);
        cr_assert(strstr(out, line), "gen --help lacks %s", g->prefix);
        cr_assert(strstr(pred, line), "predict --help lacks %s", g->prefix);
        for (const struct mdl_gen_key *k = g->keys; k->name; k++) {
            char kl[64];
            snprintf(kl, sizeof kl, "    %-10s (%s)", k->name, k->dflt ? k->dflt : "required");
            cr_assert(strstr(out, kl), "gen --help lacks '%s'", kl);
        }
    }
    cr_assert(strstr(out, "    d_model    (2048)"));
}

#define TOPO "models/topologies/pcie-8gpu.json"

Test(options, dash_o_is_out_in_predict_and_the_table_names_the_model)
{
    char dir[64], out[8192];
    th_tmpdir(dir, sizeof dir, "opt");
    cr_assert_eq(th_sh("%s predict --model transformer:L=4 --topology " TOPO " -K 2 -M 4 "
                       "--batch 8 -o %s/p.txt", th_pipesim(), dir), 0);
    th_slurp(dir, "p.txt", out, sizeof out);
    cr_assert(strstr(out, "model           transformer:L=4,"), "%s", out);
    cr_assert(strstr(out, ": 6 layers, "), "%s", out); /* 4 layers + embedding + softmax */
    cr_assert(strstr(out, " GiB "), "%s", out);
    cr_assert_null(strstr(out, " GB "), "%s", out);
    th_sh("rm -rf %s", dir);
}

Test(options, json_batch_is_an_integer)
{
    char out[16384];
    cr_assert_eq(th_capture(out, sizeof out, "%s predict --model mlp:layers=4,width=64 "
                            "--topology " TOPO " -K 2 -M 4 --batch 128 --format json",
                            th_pipesim()), 0);
    cr_assert(strstr(out, "\"batch\": 128,"), "%s", out);
    cr_assert(strstr(out, "\"micro_batch\": 32,"), "%s", out);
    /* plan's JSON too: whole numbers as integers, reals at most 15
     * significant digits (no float noise such as 43431.878455888138) */
    cr_assert_eq(th_sh("%s plan --model mlp-uniform --topology pcie-8gpu --devices 4 --batch 64 "
                       "--format json 2>/dev/null | python3 -c 'import re,sys; t=sys.stdin.read(); "
                       "n=re.findall(r\"[0-9]+[.][0-9]+\", t); "
                       "sig=[len(x.replace(\".\", \"\").lstrip(\"0\")) for x in n]; "
                       "sys.exit(0 if n and \"\\\"speedup\\\": 1,\" in t and max(sig) <= 15 "
                       "and not re.search(r\": [0-9]+[.]0,\", t) else 1)'", th_pipesim()), 0);
}

Test(options, partition_optimal_in_predict)
{
    char a[8192], b[300];
    cr_assert_eq(th_capture(a, sizeof a, "%s predict --model amoebanet:L=6,D=64 --topology "
                            TOPO " -K 4 -M 4 --batch 16 --partition optimal", th_pipesim()), 0);
    cr_assert_eq(th_capture(b, sizeof b, "%s partition --model amoebanet:L=6,D=64 --topology "
                            TOPO " -K 4 -M 4 --batch 16 --strategy optimal --top 8 --format csv"
                            " | awk -F'\"' '$2 == \"optimal\" { print $4; exit }'",
                            th_pipesim()), 0);
    b[strcspn(b, "\n")] = 0;
    char want[400];
    snprintf(want, sizeof want, "partition       %s (layers per stage)", b);
    cr_assert(*b && strstr(a, want), "predict: %s\npartition: %s", a, b);
}

/* Another command's name for an option this one has is named (helper-94: sweep
 * --partition, predict --strategy, sweep --schedules, -o, -k got no hint or an
 * unrelated one). */
Test(options, another_commands_name_for_an_option_is_named)
{
    const char *P = th_pipesim();
    static const struct { const char *cmd, *typed, *want; } c[] = {
        { "predict", "--strategy", "--partition" }, { "export-chakra", "--strategy",
                                                      "--partition" },
        { "sweep", "--partition", "--strategy" },   { "sweep", "--schedules", "--schedule" },
        { "sweep", "-o", "--db" },                  { "predict", "-k", "-K" },
        { "predict", "-m", "-M" },                  { "calibrate", "-K", "--stages" },
        { "predict", "--stages", "-K" },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char err[512];
        th_capture(err, sizeof err, "%s %s %s 2 2>&1", P, c[i].cmd, c[i].typed);
        char want[200];
        snprintf(want, sizeof want, "pipesim %s: unknown option '%s'; in pipesim %s it is '%s' "
                 "(see pipesim %s --help)", c[i].cmd, c[i].typed, c[i].cmd, c[i].want, c[i].cmd);
        cr_expect(strstr(err, want), "%s", err);
    }
    /* a generator's name without its colon is said to be one (helper-94: 'transformer'
     * was offered 'transformer-small', 'gpt' nothing) */
    char e2[512];
    th_capture(e2, sizeof e2, "%s predict --model gpt --topology " TOPO " -K 1 -M 1 --batch 1 "
               "2>&1; echo rc=$?", P);
    cr_expect(strstr(e2, "model 'gpt': no such file; the generator is 'gpt:' followed by its "
                         "keys (`pipesim gen --help` lists them)\nrc=2"), "%s", e2);
    /* a command with both names, or with neither, gets the usual answer */
    char err[512];
    th_capture(err, sizeof err, "%s plan --schedule gpipe 2>&1", P);
    cr_expect(strstr(err, "did you mean '--schedules'?"), "%s", err);
}

Test(options, did_you_mean_end_to_end)
{
    const char *P = th_pipesim();
    cr_assert_eq(th_sh("%s predcit 2>&1 | grep -q \"did you mean 'predict'\"", P), 0);
    cr_expect_eq(th_sh("%s --verison 2>&1 | grep -q \"did you mean '--version'\"", P), 0);
    cr_assert_eq(th_sh("%s predict --modle x 2>&1 | grep -q \"did you mean '--model'\"", P), 0);
    cr_assert_eq(th_sh("%s predict --model mlp:layers=2,widht=4 --topology " TOPO " -K 1 -M 1 "
                       "--batch 1 2>&1 | grep -q \"did you mean 'width'\"", P), 0);
    cr_assert_eq(th_sh("%s predict --model mlp:layers=2,width=4 --topology " TOPO " -K 1 -M 1 "
                       "--batch 1 --schedule 1fb1 2>&1 | grep -q \"did you mean '1f1b'\"", P),
                 0);
    cr_assert_eq(th_sh("%s predict --model mlp:layers=2,width=4 --topology " TOPO " -K 2 -M 1 "
                       "--batch 1 --partition optimla 2>&1 | grep -q \"did you mean "
                       "'optimal'\"", P), 0);
    /* bundled names: a near miss is named, a far one is not */
    cr_assert_eq(th_sh("%s predict --model mlp-unifrm --topology pcie-8gpu -K 2 -M 1 --batch 1 "
                       "2>&1 | grep -q \"bundled profile .*; did you mean 'mlp-uniform'?$\"", P),
                 0);
    cr_assert_eq(th_sh("%s predict --model mlp-uniform --topology pcie-8gp.json -K 2 -M 1 "
                       "--batch 1 2>&1 | grep -q \"did you mean 'pcie-8gpu'?$\"", P), 0);
    cr_assert_eq(th_sh("%s predict --model mlp-uniform --topology frobnicate -K 2 -M 1 "
                       "--batch 1 2>&1 | grep -q 'did you mean'", P), 1);
}

Test(options, out_dir_and_the_deprecated_out)
{
    char dir[64];
    th_tmpdir(dir, sizeof dir, "optdir");
    const char *P = th_pipesim();
    cr_assert_eq(th_sh("%s reproduce gpipe --tables partitions --no-plots --quiet --out-dir "
                       "%s/a 2>%s/err1", P, dir, dir), 0);
    cr_assert_eq(th_sh("%s paper --tables partitions --no-plots --quiet --out %s/b 2>%s/err2",
                       P, dir, dir), 0);
    cr_assert_eq(th_sh("cmp -s %s/a/partitions.md %s/b/partitions.md", dir, dir), 0);
    cr_assert_eq(th_sh("test -s %s/err1", dir), 1); /* nothing on stderr */
    cr_assert_eq(th_sh("grep -q 'pipesim paper: --out DIR is deprecated, use --out-dir DIR' "
                       "%s/err2", dir), 0);
    /* a usage error after --out is its one line alone (the note came first,
     * two lines, each study) */
    char err[1024];
    const char *bad[] = { "reproduce gpipe --out x --out-dir y",
                          "reproduce torchgpipe --out x --out-dir y",
                          "paper --out x --bogus", "reproduce torchgpipe --out x extra" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(th_capture(err, sizeof err, "cd %s && %s %s 2>&1", dir, P, bad[i]), 2,
                     "%s", bad[i]);
        cr_expect(!strstr(err, "deprecated") && strchr(err, '\n') == err + strlen(err) - 1,
                  "%s: %s", bad[i], err);
    }
    th_sh("rm -rf %s", dir);
}

Test(options, no_format_escapes_in_help)
{
    char out[16384];
    cr_assert_eq(th_capture(out, sizeof out, "%s compare-schedules --help", th_pipesim()), 0);
    cr_assert_null(strstr(out, "%%"), "%s", out);
    cr_assert(strstr(out, "M % K == 0"));
}

Test(options, report_defaults_to_the_sweep_db_and_prints_json)
{
    char dir[64], out[65536];
    th_tmpdir(dir, sizeof dir, "optrep");
    char here[4096];
    cr_assert_not_null(getcwd(here, sizeof here));
    const char *P = th_pipesim();
    char pp[4200];
    snprintf(pp, sizeof pp, "%s%s%s", P[0] == '/' ? "" : here, P[0] == '/' ? "" : "/", P);
    /* sweep and report, both with their default --db, from one directory */
    cr_assert_eq(th_sh("cd %s && %s sweep --model mlp:layers=4,width=16 --topology "
                       "%s/models/topologies/chain-8-ideal.json -K 1,2 -M 1,2 --batch 4 "
                       "--quiet >/dev/null && test -f results/sweep.db", dir, pp, here), 0);
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s report --format json", dir, pp), 0);
    json_error_t err;
    json_t *a = json_loads(out, 0, &err);
    cr_assert_not_null(a, "%s: %s", err.text, out);
    cr_assert_eq(json_array_size(a), 12); /* normalized, speedup, bubble x 2 x 2 cells */
    json_t *c0 = json_array_get(a, 0);
    cr_assert_str_eq(json_string_value(json_object_get(c0, "metric")), "normalized");
    cr_assert(json_is_integer(json_object_get(c0, "batch")));
    cr_assert_eq(json_number_value(json_object_get(c0, "value")), 1.0); /* the baseline cell */
    json_decref(a);
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s report --format csv | wc -l", dir,
                            pp), 0);
    cr_assert_eq(atoi(out), 13); /* header + 12 */
    cr_assert_eq(th_sh("cd %s && %s report --format yaml 2>/dev/null", dir, pp), 2);
    th_sh("rm -rf %s", dir);
}

/* ---- a busy machine is said plainly ---- */

Test(numbers, runq_wait_reads_and_never_decreases)
{
    if (access("/proc/thread-self/schedstat", R_OK) != 0)
        cr_skip_test("no /proc/thread-self/schedstat (kernel without schedstats)");
    long long a = rt_thread_runq_wait_ns();
    cr_assert_geq(a, 0);
    volatile double x = 0;
    for (int i = 0; i < 1000000; i++)
        x += i;
    long long b = rt_thread_runq_wait_ns();
    cr_assert_geq(b, a);
}

static void accuracy_text(double runq, char *buf, size_t n)
{
    struct msr_vpoint pts[2] = { { .K = 1, .M = 1, .runq_frac = 0.01, .preempt_all = 3 },
                                 { .K = 2, .M = 4, .runq_frac = runq, .preempt_all = 4 } };
    struct msr_vcheck v = { .steps = 3, .n_points = 2, .pts = pts };
    /* every figure within its target: no discrepancy list to print */
    struct msr_accuracy a = { .n = 2 };
    FILE *f = fmemopen(buf, n, "w");
    cr_assert_not_null(f);
    cr_assert_eq(msr_accuracy_print(&v, &a, f), 0, "%s", ps_errmsg());
    fclose(f);
}

Test(numbers, accuracy_says_when_the_machine_was_busy)
{
    char buf[4096];
    accuracy_text(0.40, buf, sizeof buf);
    cr_assert(strstr(buf, "note: the machine was busy: at one point the workers waited 40% of "
                          "their time for a CPU"), "%s", buf);
    cr_assert(strstr(buf, "(7 involuntary context switches in all)"), "%s", buf);
    accuracy_text(MSR_BUSY_RUNQ / 2, buf, sizeof buf);
    cr_assert_null(strstr(buf, "busy"), "%s", buf);
    accuracy_text(-1, buf, sizeof buf); /* unknown on this kernel: nothing claimed */
    cr_assert_null(strstr(buf, "busy"), "%s", buf);
    cr_assert_null(strstr(buf, "nan"), "%s", buf);
}

/* Every enumerated value a command checks answers a near miss the same way:
 * its one error line with "did you mean", the usage exit status, no output. */
Test(options, did_you_mean_every_enumerated_value)
{
#define RUN "--model mlp:layers=2,width=4 --topology " TOPO " -K 2 -M 2 --batch 4"
    static const struct {
        const char *args, *err;
        int rc;
    } bad[] = {
        { "predict " RUN " --remat nevr", "pipesim predict: --remat: unknown mode 'nevr'; did "
          "you mean 'never'? (always, except_last, never)", 2 },
        { "sweep --remat nevr", "pipesim sweep: --remat: unknown mode 'nevr'; did you mean "
          "'never'? (always, except_last, never)", 2 },
        { "predict " RUN " --format jsn", "pipesim predict: --format: unknown format 'jsn'; "
          "did you mean 'json'? (table, csv, json)", 2 },
        { "presets --format jsn", "pipesim presets: --format: unknown format 'jsn'; did you "
          "mean 'json'? (table, csv, json)", 2 },
        { "plot --kind speeup", "pipesim plot: --kind: unknown figure 'speeup'; did you mean "
          "'speedup'? (speedup, bubble, memory, timeline, schedules)", 2 },
        { "partition --mem-cap devce", "pipesim partition: --mem-cap: 'devce' is not a "
          "positive byte count (or none, device); did you mean 'device'?", 2 },
        { "reproduce gpip", "pipesim reproduce: unknown study 'gpip'; did you mean 'gpipe'? "
          "(gpipe or torchgpipe; see pipesim reproduce --help)", 2 },
        { "gen modle", "pipesim gen: unknown generator 'modle'; did you mean 'model'? (model, "
          "chain)", 2 },
        { "validate --net mlp:layer=2,width=8 -K 2 -M 2 --batch 4", "pipesim validate: net "
          "spec 'mlp:layer=2,width=8': unknown field 'layer'; did you mean 'layers'? (layers, "
          "width, in, out, norm)", 2 },
        { "help erors", "pipesim help: unknown topic 'erors'; did you mean 'errors'? (errors, "
          "schedules, or a command's name)", 2 },
        { "compare-schedules " RUN " --schedules gpipe,zbh1", "pipesim compare-schedules: "
          "--schedules: unknown schedule 'zbh1'; did you mean 'zb-h1'? (known: gpipe, 1f1b, "
          "interleaved, zb-h1, zb-h2, zb-v, zb-auto, dualpipe-v, eager-1f1b, breadth-first)", 2 },
        { "plan --model mlp:layers=2,width=4 --topology " TOPO " --devices 2 --batch 4 "
          "--schedules zbh1", "pipesim plan: --schedules: unknown schedule 'zbh1'; did you "
          "mean 'zb-h1'? (known: gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-v, zb-auto, "
          "dualpipe-v, eager-1f1b, breadth-first)", 2 },
        { "plot --kind schedules -K 2 -M 2 --schedules zbh1", "pipesim plot: --schedules: "
          "unknown schedule 'zbh1'; did you mean 'zb-h1'? (known: gpipe, 1f1b, interleaved, "
          "zb-h1, zb-h2, zb-v, zb-auto, dualpipe-v, eager-1f1b, breadth-first)", 2 },
        { "plan --objective memroy", "pipesim plan: --objective: unknown objective 'memroy'; "
          "did you mean 'memory'? (throughput, memory)", 2 },
        { "plan --frontier exct", "pipesim plan: --frontier: unknown mode 'exct'; did you mean "
          "'exact'? (exact, found)", 2 },
        { "paper --tables 1,partitons", "pipesim paper: --tables: unknown item 'partitons' in "
          "'1,partitons'; did you mean 'partitions'? (1, 2, 3, partitions or all)", 2 },
        /* far misses name no guess */
        { "gen frob", "pipesim gen: unknown generator 'frob' (model, chain)", 2 },
        { "help frobnicate", "pipesim help: unknown topic 'frobnicate' (errors, "
          "schedules, or a command's name)", 2 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[1024], out[1024], want[1100];
        int rc = th_capture(err, sizeof err, "%s %s 2>&1 >/dev/null", th_pipesim(),
                            bad[i].args);
        snprintf(want, sizeof want, "%s\n", bad[i].err);
        cr_expect_eq(rc, bad[i].rc, "'%s' exited %d", bad[i].args, rc);
        cr_expect_str_eq(err, want, "'%s'", bad[i].args);
        th_capture(out, sizeof out, "%s %s 2>/dev/null", th_pipesim(), bad[i].args);
        cr_expect_str_empty(out, "'%s' printed: %s", bad[i].args, out);
    }
#undef RUN
}

Test(options, help_topics)
{
    char a[65536], b[65536];
    const char *P = th_pipesim();
    cr_assert_eq(th_capture(a, sizeof a, "%s help predict", P), 0);
    cr_assert_eq(th_capture(b, sizeof b, "%s predict --help", P), 0);
    cr_assert_str_eq(a, b);
    /* as predict --help, help works under a malformed memory limit: exit 2 can be looked up
     * (helper-130) */
    cr_assert_eq(th_capture(a, sizeof a, "PIPESIM_MEMORY_LIMIT=abc %s help predict", P), 0);
    cr_assert_str_eq(a, b);
    cr_expect_eq(th_sh("PIPESIM_MEMORY_LIMIT=abc %s help errors > /dev/null", P), 0);
    cr_assert_eq(th_capture(a, sizeof a, "%s help", P), 0);
    cr_assert_eq(th_capture(b, sizeof b, "%s help --help", P), 0);
    cr_assert_str_eq(a, b);
    cr_assert(strstr(a, "commands:"), "%s", a);
    /* README: "help CMD is CMD --help", and its table lists `reproduce gpipe` (helper-65) */
    cr_assert_eq(th_capture(a, sizeof a, "%s help reproduce gpipe", P), 0);
    cr_assert_eq(th_capture(b, sizeof b, "%s reproduce gpipe --help", P), 0);
    cr_assert_str_eq(a, b);
    cr_assert_eq(th_capture(a, sizeof a, "%s help reproduce torchgpipe", P), 0);
    cr_assert_eq(th_capture(b, sizeof b, "%s reproduce torchgpipe --help", P), 0);
    cr_assert_str_eq(a, b);
    cr_expect_eq(th_sh("%s help reproduce bogus 2>/dev/null", P), 2);
}

/* --out and -o mean a file everywhere: a command that writes a folder never
 * takes them (nor an abbreviation of --out) for --out-dir, silently or not. */
Test(options, out_is_never_the_out_dir)
{
    char dir[64];
    th_tmpdir(dir, sizeof dir, "optout");
    const char *P = th_pipesim();
    static const struct {
        const char *args, *err;
    } bad[] = {
        { "export-chakra --out", "pipesim export-chakra: --out is a file option; use --out-dir "
          "DIR" },
        { "export-chakra --out=", "pipesim export-chakra: --out is a file option; use --out-dir "
          "DIR" },
        { "export-chakra --ou", "pipesim export-chakra: '--ou' is ambiguous: --out is a file "
          "option; use --out-dir DIR" },
        { "export-chakra -o", "pipesim export-chakra: -o is --out, a file option; use --out-dir "
          "DIR" },
        { "plot --out", "pipesim plot: --out is a file option; use --out-dir DIR" },
        { "plot -o", "pipesim plot: -o is --out, a file option; use --out-dir DIR" },
        { "paper --tables partitions --no-plots -o", "pipesim paper: -o is --out, a file "
          "option; use --out-dir DIR" },
        { "reproduce torchgpipe -o", "pipesim reproduce: -o is --out, a file option; use "
          "--out-dir DIR" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[1024], want[1100];
        const char *eq = bad[i].args[strlen(bad[i].args) - 1] == '=' ? "" : " ";
        int rc = th_capture(err, sizeof err, "%s %s%s%s/x --model mlp:layers=2,width=4 "
                            "--topology " TOPO " -K 2 -M 2 --batch 4 2>&1 >/dev/null", P,
                            bad[i].args, eq, dir);
        snprintf(want, sizeof want, "%s\n", bad[i].err);
        cr_expect_eq(rc, 2, "'%s' exited %d", bad[i].args, rc);
        cr_expect_str_eq(err, want, "'%s'", bad[i].args);
    }
    cr_assert_eq(th_sh("test -e %s/x", dir), 1, "a folder was written");
    /* the full name works; no option is abbreviated (getopt_long would take
     * --out-d for --out-dir, and --trace for validate's --traces) */
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=2,width=4 --topology " TOPO
                       " -K 2 -M 2 --batch 4 --out-dir %s/y >/dev/null 2>&1 && test -s "
                       "%s/y/pipesim.1.et", P, dir, dir), 0);
    char err[1024];
    cr_expect_eq(th_capture(err, sizeof err, "%s export-chakra --model mlp:layers=2,width=4 "
                            "--topology " TOPO " -K 2 -M 2 --batch 4 --out-d %s/z 2>&1 "
                            ">/dev/null", P, dir), 2);
    cr_expect_str_eq(err, "pipesim export-chakra: unknown option '--out-d'; did you mean "
                          "'--out-dir'? (options are not abbreviated; see pipesim "
                          "export-chakra --help)\n");
    cr_expect_eq(th_capture(err, sizeof err, "%s validate --check --trace x.json 2>&1 "
                            ">/dev/null", P), 2);
    cr_expect(strstr(err, "unknown option '--trace'; did you mean '--traces'?"), "%s", err);
    /* an unknown letter inside a cluster is named by itself (helper-65: "sweep -np 4"
     * named 'sweep', getopt still being inside "-np"); a flag given a value is not
     * taken for its letter */
    cr_expect_eq(th_capture(err, sizeof err, "%s sweep -np 4 2>&1 >/dev/null", P), 2);
    cr_expect_str_eq(err, "pipesim sweep: unknown option '-n' (see pipesim sweep --help)\n");
    cr_expect_eq(th_capture(err, sizeof err, "%s predict --model mlp:layers=4,width=64 -xK 2 "
                            "2>&1 >/dev/null", P), 2);
    cr_expect_str_eq(err, "pipesim predict: unknown option '-x' (see pipesim predict --help)\n");
    cr_expect_eq(th_capture(err, sizeof err, "%s plan --quiet=yes 2>&1 >/dev/null", P), 2);
    cr_expect_str_eq(err, "pipesim plan: option '--quiet' takes no value\n");
    /* an abbreviated flag with a value is named as typed (helper-68: '-B') */
    cr_expect_eq(th_capture(err, sizeof err, "%s plan --brute=1 2>&1 >/dev/null", P), 2);
    cr_expect(strstr(err, "unknown option '--brute'; did you mean '--brute-force'?"), "%s",
              err);
    /* an unknown command is echoed as every message is: one line, control
     * characters as '?', a long name cut */
    cr_expect_eq(th_capture(err, sizeof err, "%s \"$(printf 'fro\\nb\\033[1m')\" 2>&1", P), 2);
    cr_expect_str_eq(err, "pipesim: unknown command 'fro?b?[1m' (see pipesim --help)\n");
    cr_expect_eq(th_sh("test \"$(%s \"$(head -c 100000 /dev/zero | tr '\\0' x)\" 2>&1 | "
                       "wc -c)\" -lt 5000", P), 0, "a 100 kB command name echoed whole");
    cr_assert_eq(th_sh("test -e %s/z", dir), 1, "a folder was written");
    th_sh("rm -rf %s", dir);
}

/* Every short option a command accepts is in its usage: gen-paper took -f
 * for --format and its help never said so. The short options are read from
 * the cli_getopt calls in cli/ (commands named by a string literal). */
Test(options, every_short_option_is_in_its_usage)
{
    FILE *p = popen("grep -ho 'cli_getopt(\"[^\"]*\", argc, argv, \"[^\"]*\"' cli/*.c", "r");
    cr_assert_not_null(p);
    char line[256], cmd[64], shorts[32], help[65536];
    int calls = 0;
    while (fgets(line, sizeof line, p)) {
        cr_assert_eq(sscanf(line, "cli_getopt(\"%63[^\"]\", argc, argv, \"%31[^\"]\"", cmd,
                            shorts), 2, "%s", line);
        calls++;
        cr_assert_eq(th_capture(help, sizeof help, "%s %s --help", th_pipesim(), cmd), 0, "%s",
                     cmd);
        char *nl = strstr(help, "\n\n"); /* the usage block */
        if (nl)
            *nl = 0;
        for (const char *s = shorts; *s; s++) {
            if (*s == ':' || *s == 'h')
                continue;
            int found = 0; /* "-X" between ' ', '[' or '|' and ' ', '|' or ']' */
            for (const char *q = help; !found && (q = strchr(q, '-')); q++)
                found = q > help && strchr(" [|", q[-1]) && q[1] == *s && q[2] &&
                        strchr(" |]", q[2]);
            cr_expect(found, "pipesim %s: -%c not in its usage:\n%s", cmd, *s, help);
        }
    }
    pclose(p);
    cr_expect_geq(calls, 10);
}

/* One parameter is "1 parameter" (helper-137: presets said "1 layer, 1
 * parameters"; predict too). */
Test(options, one_parameter_is_singular)
{
    char d[64], out[4096];
    th_tmpdir(d, sizeof d, "singular");
    th_put(d, "one.csv", "name,fwd_flops,params,out_bytes,stash_bytes\na,1e6,1,64,128\n");
    cr_assert_eq(th_capture(out, sizeof out, "cd %s && %s predict --model one.csv --topology "
                            "chain-8-ideal -K 1 -M 1 --batch 1 2>/dev/null", d, th_pipesim()), 0);
    cr_expect(strstr(out, ": 1 layer, 1 parameter\n"), "%s", out);
    th_sh("rm -rf %s", d);
}

/* validate's device table keeps its columns with a long stage list
 * (helper-142: interleaved:8's "0,2,...,14" overflowed the column and
 * shifted every one after it): the header and each device's row are one
 * length. */
Test(options, the_device_table_fits_its_stage_lists)
{
    char out[16384];
    cr_assert_eq(th_capture(out, sizeof out, "%s validate --net mlp:layers=16,width=32 -K 2 -M 8 "
                            "--batch 32 --steps 1 --schedule interleaved:8 --no-pin 2>/dev/null",
                            th_pipesim()), 0);
    char *h = strstr(out, "device  cpu");
    cr_assert_not_null(h, "%s", out);
    size_t len = strcspn(h, "\n");
    char *r0 = strstr(h, "\n     0 ");
    char *r1 = strstr(h, "\n     1 ");
    cr_assert(r0 && r1, "%s", out);
    cr_expect_eq(strcspn(r0 + 1, "\n"), len, "%s", h);
    cr_expect_eq(strcspn(r1 + 1, "\n"), len, "%s", h);
    cr_expect(strstr(r0, " 0,2,4,6,8,10,12,14 "), "%s", h);
}
