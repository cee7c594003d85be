/* ps_jsonpos: line and column of JSON paths, and the error rewrite. */
#include "helpers.h"

#include "base/ps_jsonpos.h"

static const char doc[] =
    "{\n"
    "  \"name\": \"x\",\n"
    "  \"devices\": [\n"
    "    { \"name\": \"d\", \"flops\": 1 },\n"
    "    { \"name\": \"e\",\n"
    "      \"eff\\u0069ciency\": { \"max\": 2 } }\n"
    "  ],\n"
    "  \"links\": [ [1, {\"a\": \"]}\"}], 5, {\"k.x[0]\": 1} ]\n"
    "}\n";

static void at(const char *path, const char *key, int want_rc, int line, int col)
{
    int l = 0, c = 0;
    int rc = ps_json_locate(doc, sizeof doc - 1, path, key, &l, &c);
    cr_expect_eq(rc, want_rc, "%s: rc %d", path, rc);
    cr_expect(l == line && c == col, "%s %s: %d:%d, want %d:%d", path, key ? key : "", l, c,
              line, col);
}

Test(jsonpos, finds_members_elements_and_enclosing_containers)
{
    at("", NULL, 0, 1, 1);
    at("name", NULL, 0, 2, 3);
    at("devices[0]", NULL, 0, 4, 5);
    at("devices[0].flops", NULL, 0, 4, 20);
    at("devices[1].efficiency.max", NULL, 0, 6, 28); /* key spelled with a \u escape */
    at("devices[1].memory", NULL, 1, 5, 5);          /* missing: the object that lacks it */
    at("devices[7]", NULL, 1, 3, 3);
    at("links[1]", NULL, 0, 8, 32);                  /* skips a string holding "]}" */
    at("links[2]", "k.x[0]", 0, 8, 36);
    at("", "links", 0, 8, 3);
    at("devices[x]", NULL, -1, 0, 0);
}

Test(jsonpos, rewrites_path_errors_only)
{
    ps_error(PS_EINVAL, "f.json: devices[0].flops: must be > 0");
    cr_assert_eq(ps_json_error_at(-PS_EINVAL, "f.json", doc, sizeof doc - 1, NULL), -PS_EINVAL);
    cr_assert_str_eq(ps_errmsg(), "f.json:4:20: devices[0].flops: must be > 0");
    ps_error(PS_EPARSE, "f.json: topology: unknown field 'links'");
    ps_json_error_at(-PS_EPARSE, "f.json", doc, sizeof doc - 1, "topology");
    cr_assert_str_eq(ps_errmsg(), "f.json:8:3: topology: unknown field 'links'");
    ps_error(PS_EPARSE, "f.json:3:4: already has a position");
    ps_json_error_at(-PS_EPARSE, "f.json", doc, sizeof doc - 1, NULL);
    cr_assert_str_eq(ps_errmsg(), "f.json:3:4: already has a position");
    ps_error(PS_ENOMEM, "f.json: devices: out of memory");
    ps_json_error_at(-PS_ENOMEM, "f.json", doc, sizeof doc - 1, NULL);
    cr_assert_str_eq(ps_errmsg(), "f.json: devices: out of memory");
    /* a name with a newline, shown as '?' in the message, keeps its position
     * (helper-126: the prefix did not match and the position was dropped) */
    ps_error(PS_EINVAL, "%s: devices[0].flops: must be > 0", "f\nx.json");
    ps_json_error_at(-PS_EINVAL, "f\nx.json", doc, sizeof doc - 1, NULL);
    cr_assert_str_eq(ps_errmsg(), "f?x.json:4:20: devices[0].flops: must be > 0");
}

/* An alias names the root before an index too: the paths of a bare event array are
 * "traceEvents[i]...", as those of {"traceEvents": [...]} (they were all put at 1:1). */
Test(jsonpos, alias_names_a_root_array)
{
    static const char arr[] = "[\n {\"ts\": 0},\n {\"ts\": 1, \"dur\": -1}\n]\n";
    ps_error(PS_EINVAL, "f.json: traceEvents[1].dur: out of range");
    ps_json_error_at(-PS_EINVAL, "f.json", arr, sizeof arr - 1, "traceEvents");
    cr_assert_str_eq(ps_errmsg(), "f.json:3:12: traceEvents[1].dur: out of range");
    ps_error(PS_EPARSE, "f.json: traceEvents[1]: not an object");
    ps_json_error_at(-PS_EPARSE, "f.json", arr, sizeof arr - 1, "traceEvents");
    cr_assert_str_eq(ps_errmsg(), "f.json:3:2: traceEvents[1]: not an object");
    ps_error(PS_EPARSE, "f.json: traceEvents: empty");
    ps_json_error_at(-PS_EPARSE, "f.json", arr, sizeof arr - 1, "traceEvents");
    cr_assert_str_eq(ps_errmsg(), "f.json:1:1: traceEvents: empty");
}
