/*
 * Bad input, table-driven and end to end: every case runs build/pipesim in a
 * fresh directory and must end with
 *   - the exit status of its error class (base/ps_error.h, `pipesim help
 *     errors`, docs/errors-and-outputs.md "Exit statuses"),
 *   - exactly one line on stderr, "pipesim <command>: ...", naming the file,
 *     line and field (or the option) given in the table,
 *   - no output file and no temporary file left behind, and nothing on
 *     stdout.
 * A second table feeds the Chrome trace reader (no command reads traces yet).
 */
#include "helpers.h"

#include "traces/trc_trace.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

/* Fixtures every case sees. */
#define CSV_H "name,fwd_flops,params,out_bytes,stash_bytes\n"
#define CSV_OK CSV_H "a,1e6,100,64,128\nb,1e6,100,64,128\nc,1e6,100,64,128\nd,1e6,100,64,128\n"
#define DEV "{\"name\":\"d\",\"count\":4,\"flops\":1e12,\"memory\":1e9}"
#define BUS "{\"name\":\"bus\",\"endpoints\":\"*\",\"bandwidth\":1e10,\"shared\":true}"
#define JSON_OK "{\"devices\":[" DEV "],\n\"links\":[" BUS "]}"
#define SW4 "{\"devices\":[" DEV "],\"switches\":[{\"name\":\"sw\"}],\"links\":[" \
    "{\"name\":\"u0\",\"endpoints\":[\"d0\",\"sw\"],\"bandwidth\":1e10},\n" \
    "{\"name\":\"u1\",\"endpoints\":[\"d1\",\"sw\"],\"bandwidth\":1e10},\n" \
    "{\"name\":\"u2\",\"endpoints\":[\"d2\",\"sw\"],\"bandwidth\":1e10},\n" \
    "{\"name\":\"u3\",\"endpoints\":[\"d3\",\"sw\"],\"bandwidth\":1e-300}]}"
#define F8 ",1,1,1,1,1,1,1,1"
#define MANY_FIELDS F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 F8 \
    F8 F8 F8 F8 F8 F8 F8 F8 F8 /* 264 */
#define RUN "predict --model ok.csv --topology ok.json"
#define P_CSV "predict --topology ok.json -K 1 -M 1 --batch 4 --model p.csv"
#define P_JSON "predict --model ok.csv -K 2 -M 2 --batch 4 --topology t.json"

#define NOPERM 010000

struct bad_case {
    const char *file;  /* written for this case; a trailing '/' makes a directory */
    const char *text;  /* its contents (NULL with a directory) */
    int mode;          /* chmod, 0 = leave, NOPERM = chmod 0 */
    const char *args;  /* after "pipesim" */
    int code;          /* PS_E* class: exit status ps_exit_status(code) */
    const char *what;  /* part of the message, naming file:line:field or the option */
};

static const struct bad_case cases[] = {
    /* ---- profile CSV ---- */
    { "p.csv", CSV_H "a,1e6,100", 0, P_CSV, PS_EPARSE, "p.csv:2: expected 5 fields, found 3" },
    { "p.csv", "name,fwd_flops,par", 0, P_CSV, PS_EPARSE, "p.csv:1:16: unknown column 'par'" },
    { "p.csv", CSV_H "a,1e6,lots,64,128\n", 0, P_CSV, PS_EPARSE,
      "p.csv:2:7: field 'params': 'lots' is not a number" },
    { "p.csv", CSV_H "a,NaN,100,64,128\n", 0, P_CSV, PS_EINVAL,
      "p.csv:2:3: field 'fwd_flops' must be finite" },
    { "p.csv", CSV_H "a,1e6,100,inf,128\n", 0, P_CSV, PS_EINVAL,
      "p.csv:2:11: field 'out_bytes' must be finite" },
    { "p.csv", CSV_H "a,1e6,100,-64,128\n", 0, P_CSV, PS_EINVAL,
      "p.csv:2:11: field 'out_bytes' must be >= 0" },
    { "p.csv", CSV_H "a,1e6,100,64,-1\n", 0, P_CSV, PS_EINVAL,
      "p.csv:2:14: field 'stash_bytes' must be >= 0" },
    /* the bound the message and the docs state (it said 292 years of 4.5e9 s) */
    { "p.csv", CSV_H "a,3e20,0,1,1\n", 0,
      "predict --topology ok.json -K 1 -M 5 --batch 5 --remat never --model p.csv", PS_EINVAL,
      "schedule gpipe: its ops add up to 4.5e+09 s over all devices, beyond the simulator's "
      "bound of 4e9 s (127 years, under the int64 nanosecond clock's 292)" },
    { "p.csv", CSV_H "a,1e999,100,64,128\n", 0, P_CSV, PS_EPARSE,
      "p.csv:2:3: field 'fwd_flops': '1e999' is out of range (magnitude above 1.8e308)" },
    { "p.csv", CSV_H "a,1e308,100,64,128\n", 0, P_CSV, PS_EINVAL,
      "p.csv:2:3: field 'fwd_flops': 1e308 is too large" },
    { "p.csv", CSV_H "a,1e6,100,64,128\nb,1e300,1,1,1\n", 0,
      "predict --topology ok.json -K 2 -M 1 --batch 4 --model p.csv", PS_EINVAL,
      "p.csv: layers 2-2 ('b'..'b', stage 1 on device d1): forward time" },
    { "p.csv", CSV_H "a,1e6,100,1e16,128\nb,1,1,1,1\n", 0,
      "predict --topology ok.json -K 2 -M 1 --batch 64 --model p.csv", PS_EINVAL,
      "p.csv: layers 1-1 ('a'..'a', stage 0 on device d0): output activation" },
    { "p.csv", CSV_H "a,1e6,100,64,128\na,1e6,100,64,128\n", 0, P_CSV, PS_EINVAL,
      "p.csv:3:1: duplicate layer name 'a'" },
    { "p.csv", "name,fwd_flops,params,out_bytes\na,1,1,1\n", 0, P_CSV, PS_EPARSE,
      "p.csv:1: missing column 'stash_bytes'" },
    { "p.csv", CSV_H "a,1e6,10.5,64,128\n", 0, P_CSV, PS_EINVAL,
      "p.csv:2:7: field 'params' (10.5) must be a whole number of parameters" },
    { "p.csv", CSV_H "a,1e6,,64,128\n", 0, P_CSV, PS_EPARSE,
      "p.csv:2:7: field 'params' is empty" },
    { "p.csv", CSV_H ",1e6,1,64,128\n", 0, P_CSV, PS_EPARSE, "p.csv:2:1: field 'name' is empty" },
    { "p.csv", "name,fwd_flops,params,params,out_bytes,stash_bytes\n", 0, P_CSV, PS_EPARSE,
      "p.csv:1:23: duplicate column 'params'" },
    { "p.csv", "name,fwd_flops,fwd_ms,params,out_bytes,stash_bytes\n", 0, P_CSV, PS_EPARSE,
      "p.csv:1: need exactly one of columns 'fwd_flops' or 'fwd_ms'" },
    { "p.csv", "name,fwd_ms,params,out_bytes,stash_bytes\na,1,1,1,1\n", 0, P_CSV, PS_EPARSE,
      "p.csv:1: measured times (fwd_ms) need column 'at_batch'" },
    { "p.csv", "name,fwd_ms,at_batch,params,out_bytes,stash_bytes\na,1,0,1,1,1\n", 0, P_CSV,
      PS_EINVAL, "p.csv:2:5: field 'at_batch' (0) must be a whole number of samples, 1 to "
      "2^30" },
    { "p.csv", "name,fwd_ms,at_batch,params,out_bytes,stash_bytes\na,1,2.5,1,1,1\n", 0, P_CSV,
      PS_EINVAL, "p.csv:2:5: field 'at_batch' (2.5) must be a whole number" },
    { "p.csv", CSV_H "\"a\",1,1,1,1\n", 0, P_CSV, PS_EPARSE,
      "p.csv:2:1: quoted fields are not supported" },
    /* a quoted comma, as a spreadsheet saves one: said "expected 5 fields, found 6" */
    { "p.csv", CSV_H "\"a, b\",1,1,1,1\n", 0, P_CSV, PS_EPARSE,
      "p.csv:2:1: quoted fields are not supported (a name or value with a comma" },
    { "p.csv", CSV_H "#a,1,1,1,1\n", 0, P_CSV, PS_EPARSE, "p.csv: profile has a header but no" },
    { "p.csv", "params,name,fwd_flops,out_bytes,stash_bytes\n1,#a,1,1,1\n", 0, P_CSV, PS_EPARSE,
      "p.csv:2:3: field 'name' must not start with '#'" },
    { "p.csv", CSV_H "a234567890123456789012345678901234567890123456789012345678901234,1,1,1,1\n",
      0, P_CSV, PS_EPARSE, "p.csv:2:1: field 'name' longer than 63 bytes" },
    { "p.csv", CSV_H "a" MANY_FIELDS "\n", 0, P_CSV, PS_EPARSE, "p.csv:2: more than 256 fields" },
    { "p.csv", CSV_H, 0, P_CSV, PS_EPARSE, "p.csv: profile has a header but no layers" },
    { "p.csv", "", 0, P_CSV, PS_EPARSE, "p.csv: empty profile (no header)" },
    /* at its line and column (helper-137: neither) */
    { "p.csv", CSV_H "a,1\0,1,1,1\n", 0, P_CSV, PS_EPARSE, "p.csv:2:4: binary data (NUL byte)" },
    { NULL, NULL, 0, P_CSV, PS_EIO, "p.csv: cannot open: No such file or directory" },
    { "p.csv/", NULL, 0, P_CSV, PS_EIO, "p.csv: cannot read: Is a directory" },
    { "p.csv", CSV_OK, NOPERM, P_CSV, PS_EIO, "p.csv: cannot open: Permission denied" },
    /* ---- topology JSON ---- */
    { "t.json", "{\"devices\":[{\"name\":\"d\",", 0, P_JSON, PS_EPARSE,
      "t.json:1:24: string or '}' expected near end of file" },
    { "t.json", "{\"devices\":[{\"name\":\"d\",\n\"flops\":1e12,\"memory\":\"big\"}]}", 0, P_JSON,
      PS_EPARSE, "t.json:2:14: devices[0].memory: must be a number" },
    { "t.json", "{\"devices\":[{\"name\":\"d\",\"count\":2,\n\"flops\":-1,\"memory\":1}]}", 0,
      P_JSON, PS_EINVAL, "t.json:2:1: devices[0].flops: must be > 0, got -1" },
    { "t.json", "{\"devices\":[{\"name\":\"d\",\"count\":2,\"flops\":1e999,\"memory\":1}]}", 0,
      P_JSON, PS_EPARSE, "t.json:1:" },
    { "t.json", "{\"devices\":[{\"name\":\"d\",\"count\":2,\n\"flops\":1e12}]}", 0, P_JSON,
      PS_EPARSE, "t.json:1:13: devices[0]: missing field 'memory'" },
    /* free text, but text (helper-137: a number loaded) */
    { "t.json", "{\"devices\":[" DEV "],\n\"comment\":5}", 0, P_JSON, PS_EPARSE,
      "t.json:2:1: topology.comment: must be a string" },
    { "t.json", "{\"devices\":[" DEV "],\n\"colour\":\"red\"}", 0, P_JSON, PS_EPARSE,
      "t.json:2:1: topology: unknown field 'colour'" },
    { "t.json", "{\"devices\":[" DEV ",\n" DEV "]}", 0, P_JSON, PS_EINVAL,
      "t.json:2:1: devices[1]: duplicate device name 'd0'" },
    { "t.json",
      "{\"devices\":[" DEV "],\"links\":[{\"name\":\"l\",\n\"endpoints\":[\"d0\",\"gpu9\"],"
      "\"bandwidth\":1}]}", 0, P_JSON, PS_EINVAL,
      "t.json:2:19: links[0].endpoints[1]: unknown device 'gpu9'" },
    { "t.json", "{\"devices\":[" DEV "],\n\"devices\":[]}", 0, P_JSON, PS_EPARSE,
      "t.json:2:9: duplicate object key near '\"devices\"'" },
    { "t.json", "{\"devices\":[{\"name\":\"d\",\"count\":0,\"flops\":1,\"memory\":1}]}", 0, P_JSON,
      PS_EINVAL, "t.json:1:25: devices[0].count: must be an integer in [1, 1048576], got 0\n" },
    { "t.json",
      "{\"devices\":[{\"name\":\"d\",\"count\":99999999999,\"flops\":1,\"memory\":1}]}", 0,
      P_JSON, PS_EINVAL, "t.json:1:25: devices[0].count: must be an integer in [1, 1048576], "
      "got 99999999999\n" },
    /* a number however written is a value out of range (exit 4): 2.5 and 1e18 were
     * type errors (exit 3) with the message of 0 */
    { "t.json", "{\"devices\":[{\"name\":\"d\",\"count\":2.5,\"flops\":1,\"memory\":1}]}", 0,
      P_JSON, PS_EINVAL, "t.json:1:25: devices[0].count: must be an integer in [1, 1048576], "
      "got 2.5\n" },
    { "t.json", "{\"devices\":[{\"name\":\"d\",\"count\":1e18,\"flops\":1,\"memory\":1}]}", 0,
      P_JSON, PS_EINVAL, "t.json:1:25: devices[0].count: must be an integer in [1, 1048576], "
      "got 1e+18\n" },
    { "t.json", "{\"devices\":[{\"name\":\"d\",\"count\":\"8\",\"flops\":1,\"memory\":1}]}", 0,
      P_JSON, PS_EPARSE, "t.json:1:25: devices[0].count: must be an integer in [1, 1048576]" },
    { "t.json", "{\"devices\":[{\"name\":\"d\",\"count\":2,\"flops\":1,\"memory\":1,\n"
      "\"efficiency\":{\"max\":2}}]}", 0, P_JSON, PS_EINVAL,
      "t.json:2:15: devices[0].efficiency.max: must be in (0, 1]" },
    { "t.json",
      "{\"devices\":[" DEV "],\"links\":[{\"name\":\"l\",\"endpoints\":[\"d0\",\"d1\",\"d2\"],"
      "\"bandwidth\":1}]}", 0, P_JSON, PS_EINVAL,
      "t.json:1:72: links[0]: a dedicated link joins exactly 2 devices" },
    /* "*" on more than 2 devices without "shared" is the same error (it was
     * accepted, with made-up timing) */
    { "t.json",
      "{\"devices\":[" DEV "],\"links\":[{\"name\":\"l\",\"endpoints\":\"*\","
      "\"bandwidth\":1}]}", 0, P_JSON, PS_EINVAL,
      "links[0]: a dedicated link joins exactly 2 devices (\"*\" names 4)" },
    { "t.json", "[" DEV "]", 0, P_JSON, PS_EPARSE,
      "t.json:1:1: topology: top level must be an object" },
    { "t.json", "{\"devices\":[]}", 0, P_JSON, PS_EPARSE,
      "t.json:1:2: devices: must be a non-empty array" },
    /* helper-67: what the loader refuses is named, with its place */
    { "t.json", "{\"devices\":{\"v\":{\"flops\":1,\"memory\":1}}}", 0, P_JSON, PS_EPARSE,
      "t.json:1:2: devices: must be a non-empty array (an object of named devices is the "
      "device presets file, devices.json, not a topology" },
    { "t.json", "{\"devices\":[" DEV "],\n\"memory_policy\":\"fp32-adam\",\n"
      "\"bytes_per_param\":12}", 0, P_JSON, PS_EINVAL,
      "t.json:3:1: bytes_per_param: 12 disagrees with memory_policy 'fp32-adam'" },
    { "t.json", "{\"devices\":[" DEV "],\n\"memory_policy\":{\"optimizer\":\"mixed-adam\","
      "\"workspace_bytes\":1e300}}", 0, P_JSON, PS_EINVAL,
      "t.json:2:43: memory_policy.workspace_bytes: must be at most 1e15 bytes, got 1e+300" },
    { "t.json", "{\"devices\":[" DEV "],\"links\":[{\"name\":\"bus\",\"endpoints\":\"*\","
      "\"bandwidth\":1e10,\"shared\":true,\n\"latency\":1e30}]}", 0, P_JSON, PS_EINVAL,
      "t.json:2:1: links[0].latency: must be <= 1 s, got 1e+30" },
    { NULL, NULL, 0, "gen chain -n 2 --latency 1e30 -o g.json", PS_EUSAGE,
      "chain: --latency must be <= 1 s, got 1e+30" },
    /* a fixed cost per op over 1 s, as a link's (gen chain wrote 1e9 s, which predict
     * then refused for the op time it made) */
    { "t.json", "{\"devices\":[{\"name\":\"d\",\"count\":4,\"flops\":1e12,\"memory\":1e9,"
      "\n\"efficiency\":{\"overhead_s\":2}}],\"links\":[" BUS "]}", 0, P_JSON, PS_EINVAL,
      "devices[0].efficiency.overhead_s: must be <= 1 s, got 2" },
    { NULL, NULL, 0, "gen chain -n 2 --overhead 1e9 -o g.json", PS_EUSAGE,
      "chain: --overhead must be <= 1 s, got 1e+09" },
    { "t.json", "{\"devices\":[" DEV "],\"links\":[{\"name\":\"l\",\"endpoints\":\"*\","
      "\"bandwidth\":1,\n\"shared\":\"yes\"}]}", 0, P_JSON, PS_EPARSE,
      "t.json:2:1: links[0].shared: must be true or false" },
    { "t.json",
      "{\"devices\":[{\"name\":\"a2345678901234567890123456789012345678901234567890123456\","
      "\"flops\":1,\"memory\":1}]}", 0, P_JSON, PS_EPARSE,
      "t.json:1:14: devices[0].name: longer than 55 bytes" },
    /* behind a switch, the slow link is named, not the route's first fast one nor replica
     * 0's route's (helper-129) */
    { "t.json", SW4, 0, "predict --model ok.csv -K 1 --replicas 4 -M 1 --batch 4 --topology "
      "t.json", PS_EINVAL, "t.json:4:38: links[3].bandwidth: link u3: the all-reduce" },
    { "t.json", SW4, 0, "predict --model ok.csv -K 2 --replicas 2 -M 1 --batch 4 --topology "
      "t.json", PS_EINVAL, "t.json:4:38: links[3].bandwidth: link u3: a transfer" },
    /* no bytes at all: it was "t.json:1:0: '[' or '{' expected" (helper-126) */
    { "t.json", "", 0, P_JSON, PS_EPARSE, "t.json: the file is empty" },
    /* blanks alone: it was "t.json:3:0: '[' or '{' expected" (helper-139) */
    { "t.json", "\n \n", 0, P_JSON, PS_EPARSE,
      "t.json: the file holds only blanks (no JSON document)" },
    { "t.json", "{\"devices\":[" DEV "]}", 0, P_JSON, PS_EINVAL,
      "t.json: no link between d0 and d1 (stages 0 and 1)" },
    { "t.json", "{\"devices\":[" DEV "],\"links\":[{\"name\":\"slow\",\"endpoints\":\"*\","
      "\n\"bandwidth\":1e-300,\"shared\":true}]}", 0, P_JSON, PS_EINVAL,
      "t.json:2:1: links[0].bandwidth: link slow: a transfer of 128 bytes takes 1.28e+302 s" },
    /* the all-reduce over the same link: clamped to 1e9 s without a word, exit 0 */
    { "t.json", "{\"devices\":[" DEV "],\"links\":[{\"name\":\"slow\",\"endpoints\":\"*\","
      "\n\"bandwidth\":1e-300,\"shared\":true}]}", 0,
      "predict --model ok.csv -K 1 --replicas 2 -M 2 --batch 4 --topology t.json", PS_EINVAL,
      "t.json:2:1: links[0].bandwidth: link slow: the all-reduce of stage 0's 1600 bytes" },
    { "t.json", "{\"devices\":[" DEV "],\"links\":[\n" BUS ",\n{\"name\":\"nv\","
      "\"endpoints\":[\"d1\",\"d0\"],\"bandwidth\":1e9}]}", 0, P_JSON, PS_EINVAL,
      "t.json:3:14: links[1].endpoints: a second link between 'd1' and 'd0': links[0] ('bus')" },
    { "t.json", "{\"devices\":[" DEV "],\"links\":[" BUS ",\n" BUS "]}", 0, P_JSON,
      PS_EINVAL, "t.json:2:2: links[1].name: duplicate link name 'bus' (also links[0])" },
    { NULL, NULL, 0, P_JSON, PS_EIO, "t.json: cannot open: No such file or directory" },
    { "p.csv", CSV_H "a,1e300,1,1,1\nb,1e300,1,1,1\nc,1e300,1,1,1\nd,1e300,1,1,1\n"
      "e,1e300,1,1,1\nf,1e300,1,1,1\ng,1e300,1,1,1\nh,1e300,1,1,1\ni,1e300,1,1,1\n"
      "j,1e300,1,1,1\n", 0, "partition --topology ok.json -K 3 -M 2 --batch 4 --model p.csv",
      PS_EINVAL, "p.csv: layers 1-1 (up to 'a') take 1.4e+289 s per step on device d0" },
    /* ---- configuration: sizes that cannot work ---- */
    { NULL, NULL, 0, "predict --model mlp:layers=8,width=8 --topology ok.json -K 5 -M 2 --batch 4",
      PS_ENOFIT, "topology ok.json has only 4 devices" },
    { "p.csv", CSV_H "a,1,1,1,1\nb,1,1,1,1\n", 0,
      "predict --topology ok.json -K 3 -M 3 --batch 3 --model p.csv", PS_ENOFIT,
      "3 stages but the model has only 2 layers" },
    { NULL, NULL, 0, RUN " -K 2 -M 0 --batch 4", PS_EUSAGE, "-M: 0 is out of range" },
    { NULL, NULL, 0, RUN " -K 0 -M 2 --batch 4", PS_EUSAGE, "-K: 0 is out of range" },
    { NULL, NULL, 0, RUN " -K 2 -M 3 --batch 4", PS_EUSAGE,
      "--batch 4 is not divisible by -M 3" },
    /* in predict's words from partition and predict --partition too (helper-150: three
     * wordings of one error) */
    { NULL, NULL, 0, "partition --model mlp:layers=8,width=8 --topology ok.json -K 2 -M 3 "
      "--batch 16", PS_EUSAGE, "--batch 16 is not divisible by -M 3 (micro-batches must be "
      "equal)" },
    { NULL, NULL, 0, RUN " -K 2 -M 3 --batch 16 --partition optimal", PS_EUSAGE,
      "--batch 16 is not divisible by -M 3 (micro-batches must be equal)" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch -4", PS_EUSAGE,
      "--batch must be a positive integer (>= 1), got -4" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 2.5", PS_EUSAGE,
      "--batch must be a positive integer (>= 1), got 2.5" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch nan", PS_EUSAGE,
      "--batch: 'nan' is not a finite number" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 1e999", PS_EUSAGE,
      "--batch: '1e999' is out of range (magnitude above 1.8e308)" },
    { NULL, NULL, 0, RUN " -K 99999999999999999999 -M 2 --batch 4", PS_EUSAGE,
      "-K: '99999999999999999999' is out of range [1, 1048576]" },
    { NULL, NULL, 0, RUN " -K 2 -M 16777217 --batch 4", PS_EUSAGE,
      "-M: 16777217 is out of range" },
    { NULL, NULL, 0, RUN " -K 1048576 -M 16777216 --batch 16777216", PS_EINVAL,
      "-K 1048576 is too many stages (at most 65536)" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 0", PS_EUSAGE,
      "--batch must be a positive integer (>= 1), got 0" },
    { NULL, NULL, 0, "partition --model ok.csv --topology ok.json -K 2 -M 2 --batch 0",
      PS_EUSAGE, "--batch must be a positive integer (>= 1), got 0" },
    { NULL, NULL, 0, "gen model ''", PS_EUSAGE, "model: expected one SPEC" },
    { NULL, NULL, 0, "import-torch t.json --sizes ''", PS_EUSAGE, "--sizes needs a file name" },
    { NULL, NULL, 0, "--version extra", PS_EUSAGE, "takes no argument (got 'extra')" },
    /* --help too (helper-130: the word was ignored), and gen with no word prints no help on
     * stdout; a non-number is not "not a finite number" */
    { NULL, NULL, 0, "--help predict", PS_EUSAGE,
      "takes no argument (got 'predict'; a command's help: pipesim help COMMAND)" },
    { NULL, NULL, 0, "gen", PS_EUSAGE, "expected 'model' or 'chain'" },
    { NULL, NULL, 0, "validate --check --net mlp:layers=4,width=8 -K 1 -M 1 --plot p.svg",
      PS_EUSAGE, "--plot 'p.svg': the figure is a PNG; give a name ending in .png" },
    { NULL, NULL, 0, "reproduce gpipe --out-dir x --out y", PS_EUSAGE,
      "--out-dir given twice" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 8,", PS_EUSAGE, "--batch: '8,' is not a number" },
    { NULL, NULL, 0, "compare-schedules --model ok.csv --topology ok.json -K 2 -M 2 --batch 0",
      PS_EUSAGE, "--batch must be a positive integer (>= 1), got 0" },
    { NULL, NULL, 0, "export-chakra --model ok.csv --topology ok.json -K 2 -M 2 --batch 0 "
      "--out-dir ch", PS_EUSAGE, "--batch must be a positive integer (>= 1), got 0" },
    /* a folder no file can be made in: exit 5 with the reason, as root too (helper-125:
     * root passed the access check on /proc, then SQLite's "unable to open", exit 8) */
    { NULL, NULL, 0, "sweep --model ok.csv --topology ok.json -K 1 -M 1 --batch 4 --db "
      "/proc/pipesim-no.db", PS_EIO, "/proc/pipesim-no.db" },
    { NULL, NULL, 0, "sweep --model ok.csv --topology ok.json -K 2 -M 2 --batch 0 --db s.db",
      PS_EUSAGE, "--batch: 0 is out of range [1, 1099511627776]: must be at least 1" },
    { NULL, NULL, 0, "report --db s.db --batch 0", PS_EUSAGE,
      "--batch: 0 is out of range [1, 1099511627776]: must be at least 1" },
    { NULL, NULL, 0, "plot --db s.db --batch 0", PS_EUSAGE,
      "--batch: 0 is out of range [1, 1099511627776]: must be at least 1" },
    { NULL, NULL, 0, "calibrate --net mlp:layers=2,width=8 --batch 0", PS_EUSAGE,
      "--batch: 0 is out of range [1, 1048576]: must be at least 1" },
    { NULL, NULL, 0, "calibrate --net mlp:layers=2,width=8 -M 1,1", PS_EUSAGE,
      "-M: 1 given twice" },
    { NULL, NULL, 0, "calibrate --net mlp:layers=2,width=8 -M 2 --micro-batches 4", PS_EUSAGE,
      "-M and --micro-batches: give one" },
    { NULL, NULL, 0, "paper --tables 1,1 --out-dir pp", PS_EUSAGE,
      "--tables: '1' given twice in '1,1'" },
    { NULL, NULL, 0, "help errors x", PS_EUSAGE, "unexpected argument 'x' (help takes one topic, or reproduce and a study)" },
    /* outputs checked before the work, not after it */
    { NULL, NULL, 0, "calibrate --net mlp:layers=2,width=8 --out ''", PS_EUSAGE,
      "--out '': needs a file-name prefix" },
    { NULL, NULL, 0, "calibrate --net mlp:layers=2,width=8 --out outdir/", PS_EUSAGE,
      "--out 'outdir/': needs a file-name prefix" },
    /* helper-99: ".", "d/." and ".." named hidden files (d/.-K1.csv, ..-sim.json) */
    { NULL, NULL, 0, "calibrate --net mlp:layers=2,width=8 --out d/.", PS_EUSAGE,
      "--out 'd/.': the file-name prefix must not start with '.'" },
    { NULL, NULL, 0, "validate --check --net mlp:layers=2,width=8 -K 1 -M 1 --batch 4 "
      "--traces ..", PS_EUSAGE, "--traces '..': the file-name prefix must not start with '.'" },
    { NULL, NULL, 0, "validate --check --net mlp:layers=2,width=8 -K 1 -M 1 --batch 4 "
      "--calib-out x/.y", PS_EUSAGE,
      "--calib-out 'x/.y': the file-name prefix must not start with '.'" },
    { NULL, NULL, 0, "validate --net mlp:layers=2,width=8 -K 2 -M 2 --batch 4 --trace "
      "nodir/t.json", PS_EIO, "--trace 'nodir/t.json': cannot write: nodir: No such file" },
    { "dd/", NULL, 0, "validate --net mlp:layers=2,width=8 -K 2 -M 2 --batch 4 --trace-csv dd",
      PS_EIO, "--trace-csv 'dd': cannot write: Is a directory" },
    { NULL, NULL, 0, "sweep --model mlp:layers=8,width=8 --topology ok.json -K 1 -M 1 "
      "--batch 4 --quiet --db /dev/null", PS_EIO, "--db '/dev/null': not a regular file" },
    { NULL, NULL, 0, "validate --net mlp:layers=2,width=8 -K 2 -M 2 --batch 0", PS_EUSAGE,
      "--batch: 0 is out of range [1, 16777216]: must be at least 1" },
    { NULL, NULL, 0, "validate --check --net mlp:layers=2,width=8 --batch 0", PS_EUSAGE,
      "--batch: 0 is out of range [1, 1048576]: must be at least 1" },
    /* helper-66: a spec's key once, as a model spec's; a batch M does not divide is a
     * usage error, as predict's; more stages than layers is exit 7, named once */
    { NULL, NULL, 0, "validate --net mlp:layers=2,width=4,layers=3 -K 1 -M 1 --batch 4",
      PS_EUSAGE, "net spec 'mlp:layers=2,width=4,layers=3': field 'layers' given twice" },
    { NULL, NULL, 0, "validate --net mlp:layers=4,width=64 -K 2 -M 3 --batch 32", PS_EUSAGE,
      "--batch 32 is not divisible by -M 3 (micro-batches must be equal)" },
    { NULL, NULL, 0, "calibrate --net mlp:layers=2,width=16 --batch 4 -M 1 --stages 3 --out c/t",
      PS_ENOFIT, "pipesim calibrate: 3 stages but the net has 2 layers" },
    /* helper-66: found after the calibration, as another error */
    { NULL, NULL, 0, "validate --check --net mlp:layers=2,width=8 --batch 8 -K 1 -M 1 "
      "--schedule 1fb1 --db v.db --report r.md", PS_EUSAGE,
      "--schedule: unknown schedule '1fb1'; did you mean '1f1b'?" },
    { NULL, NULL, 0, "import-torch tr.json --batch 0", PS_EUSAGE,
      "--batch must be a whole number of samples, 1 to 2^30, got 0" },
    { NULL, NULL, 0, "import-torch tr.json --batch 2.5", PS_EUSAGE,
      "--batch must be a whole number of samples, 1 to 2^30, got 2.5" },
    /* a huge batch is the batch's fault, not the profile's */
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 1e300", PS_EUSAGE,
      "--batch 1e+300 is out of range: at most 1099511627776 samples per step" },
    { NULL, NULL, 0, "partition --model ok.csv --topology ok.json -K 2 -M 2 --batch 1e300",
      PS_EUSAGE, "--batch 1e+300 is out of range: at most 1099511627776" },
    /* one over the bound prints whole (%g said 1.09951e+12, within it to the eye) */
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 1099511627777", PS_EUSAGE,
      "--batch 1099511627777 is out of range: at most 1099511627776 samples per step" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --replicas 1e400", PS_EUSAGE,
      "--replicas: '1e400' is not an integer" },
    { NULL, NULL, 0, "gen chain -n 2 --bandwidth 1e400 -o c.json", PS_EUSAGE,
      "--bandwidth: '1e400' is out of range (magnitude above 1.8e308)" },
    { NULL, NULL, 0, "gen chain -n 2 --latency 1e-400 -o c.json", PS_EUSAGE,
      "--latency: '1e-400' is out of range (nonzero but below 2.2e-308)" },
    { NULL, NULL, 0, "gen chain -n 99999999999999999999 -o c.json", PS_EUSAGE,
      "-n: '99999999999999999999' is out of range [1, " },
    /* ---- byte-order marks: skipped, so the error is the real one at its place ---- */
    { "p.csv", "\xEF\xBB\xBF" CSV_H "a,1e6,lots,64,128\n", 0, P_CSV, PS_EPARSE,
      "p.csv:2:7: field 'params': 'lots' is not a number" },
    { "t.json", "\xEF\xBB\xBF{\"devices\":[{\"name\":\"d\",\"count\":2,\n\"flops\":-1,"
      "\"memory\":1}]}", 0, P_JSON, PS_EINVAL, "t.json:2:1: devices[0].flops: must be > 0" },
    /* ---- command line ---- */
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --frobnicate", PS_EUSAGE,
      "unknown option '--frobnicate'" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch", PS_EUSAGE, "option '--batch' needs a value" },
    /* the next word one of the command's options: its value was left out (helper-130: a
     * trace named --sensitivity, the flag dropped); --trace=--x still names such a file */
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --trace --sensitivity", PS_EUSAGE,
      "option '--trace' needs a value: '--sensitivity' is an option (a file of that name: "
      "--trace=--sensitivity or ./--sensitivity)" },
    { NULL, NULL, 0, "plan --model ok.csv --topology ok.json --devices 2 --batch 4 --db "
      "--quiet", PS_EUSAGE, "option '--db' needs a value: '--quiet' is an option" },
    { NULL, NULL, 0, "partition --model ok.csv --topology ok.json -K 2 -M 2 --batch 4 -o "
      "--format", PS_EUSAGE,
      "option '-o' needs a value: '--format' is an option (a file of that name: ./--format)" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --remat sometimes", PS_EUSAGE,
      "unknown mode 'sometimes'" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --format xml", PS_EUSAGE,
      "--format: unknown format 'xml'" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --partition 1,2", PS_EUSAGE,
      "--partition '1,2' covers 3 layers, the model has 4" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --partition 2,x", PS_EUSAGE,
      "--partition: 'x' is not an integer" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --schedule nope", PS_EUSAGE,
      "unknown schedule 'nope'" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 stray", PS_EUSAGE, "unexpected argument 'stray'" },
    { NULL, NULL, 0, "predict --model mlp:layers=4 --topology ok.json -K 1 -M 1 --batch 4",
      PS_EUSAGE,
      "model spec 'mlp:layers=4': missing parameter 'width'" },
    { NULL, NULL, 0, "predict --model mlp:layers=4,width=8,depth=2 --topology ok.json -K 1 -M 1 "
      "--batch 4", PS_EUSAGE, "unknown parameter 'depth'" },
    { NULL, NULL, 0, "gen chain -n 0 -o c.json", PS_EUSAGE, "-n: 0 is out of range" },
    { NULL, NULL, 0, "gen chain -n 2 --efficiency 2 -o c.json", PS_EUSAGE,
      "chain: --efficiency must be in (0, 1], got 2" },
    { NULL, NULL, 0, "gen chain -n 2 --latency -1 -o c.json", PS_EUSAGE,
      "chain: --latency must be >= 0, got -1" },
    { NULL, NULL, 0, "gen chain -n 2 --memory 0 -o c.json", PS_EUSAGE,
      "--memory: '0' is not a positive byte count" },
    { NULL, NULL, 0, "gen chain -n 2 junk -o c.json", PS_EUSAGE,
      "chain: unexpected argument 'junk'" },
    { NULL, NULL, 0, "gen model mlp:layers=4,width=8,width=16 -o g.csv", PS_EUSAGE,
      "model spec 'mlp:layers=4,width=8,width=16': parameter 'width' given twice" },
    /* a trailing comma, as transformer: and amoebanet: refused it (gpt:, mlp:,
     * resnet:, unet:, vgg: took it); a value of 64 characters or more is read
     * whole (its first 63 were: 62 zeros and 5, 5 layers) */
    { NULL, NULL, 0, "gen model gpt:layers=2,hidden=8,heads=2,seq=4,vocab=16, -o g.csv",
      PS_EUSAGE, "model spec 'gpt:layers=2,hidden=8,heads=2,seq=4,vocab=16,': trailing comma" },
    { NULL, NULL, 0, "gen model mlp:layers=4,width=8, -o g.csv", PS_EUSAGE, "trailing comma" },
    { NULL, NULL, 0, "gen model resnet:depth=00000000000000000000000000000000000000000000000000"
      "000000000000105 -o g.csv", PS_EUSAGE, "depth must be 50, 101 or 152, got 105" },
    { NULL, NULL, 0, "gen model vgg:depth=12 -o g.csv", PS_EUSAGE,
      "depth must be 11, 13, 16 or 19, got 12" },
    /* every generator's bad value is exit 2, its own checks too (they were 4) */
    { NULL, NULL, 0, "gen model transformer:heads=3 -o g.csv", PS_EUSAGE,
      "model spec 'transformer:heads=3': field 'heads' (3) must divide d_model (2048)" },
    /* a key's range is the generator's, whichever side it is missed on */
    { NULL, NULL, 0, "gen model transformer:d_model=1073741824 -o g.csv", PS_EUSAGE,
      "key 'd_model': 1073741824 is out of range [1, 1048576]: must be at most 1048576" },
    { NULL, NULL, 0, "gen model amoebanet:L=0 -o g.csv", PS_EUSAGE,
      "key 'L': 0 is out of range [3, 30000]: must be at least 3" },
    { NULL, NULL, 0, "gen model amoebanet:L=30003 -o g.csv", PS_EUSAGE,
      "key 'L': 30003 is out of range [3, 30000]: must be at most 30000" },
    { NULL, NULL, 0, "gen model unet:convs=5,channels=64,image=100 -o g.csv", PS_EUSAGE,
      "image must be a multiple of 2^depth = 32" },
    { NULL, NULL, 0, "gen model gpt:layers=2,hidden=10,heads=3,seq=4,vocab=8 -o g.csv",
      PS_EUSAGE, "model spec 'gpt:layers=2,hidden=10,heads=3,seq=4,vocab=8': field 'heads' "
      "(3) must divide hidden (10)" },
    /* resnet's depths named alike on either side of them (34 said out of [50, 152]) */
    { NULL, NULL, 0, "gen model resnet:depth=34 -o g.csv", PS_EUSAGE,
      "model spec 'resnet:depth=34': depth must be 50, 101 or 152, got 34" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 0x10", PS_EUSAGE,
      "--batch: '0x10' is not a decimal number" },
    /* hexadecimal is said to be so everywhere (integers and byte counts said "not an
     * integer" and "not a positive byte count") */
    { NULL, NULL, 0, RUN " -K 0x2 -M 2 --batch 4", PS_EUSAGE,
      "-K: '0x2' is not a decimal integer" },
    { NULL, NULL, 0, "partition --model ok.csv --topology ok.json -K 2 -M 2 --batch 4 "
      "--mem-cap 0x10", PS_EUSAGE, "--mem-cap: '0x10' is not a decimal byte count" },
    { "p.csv", CSV_H "a,0x10,100,64,128\n", 0, P_CSV, PS_EPARSE,
      "p.csv:2:3: field 'fwd_flops': '0x10' is not a number" },
    { NULL, NULL, 0, "partition --model ok.csv --topology ok.json -K 2 -M 2 --batch 4 "
      "--mem-cap 1e300", PS_EUSAGE, "--mem-cap: '1e300' is out of range (at most 1e30 bytes)" },
    { NULL, NULL, 0, "partition --model ok.csv --topology ok.json -K 2 -M 2 --batch 4 "
      "--strategy optimal,", PS_EUSAGE, "--strategy: 'optimal,': an empty name in the list" },
    { NULL, NULL, 0, "report --db s.db --metric step,step", PS_EUSAGE,
      "--metric: 'step' given twice" },
    { NULL, NULL, 0, "report --db s.db --metric step,", PS_EUSAGE,
      "--metric: 'step,': an empty name in the list" },
    { NULL, NULL, 0, "report --db s.db --schedule bogus", PS_EUSAGE,
      "--schedule: unknown schedule 'bogus'" },
    /* plot's selection as report's (it said "no successful runs match", exit 4) */
    { NULL, NULL, 0, "plot --db s.db --out-dir pd --schedule bogus", PS_EUSAGE,
      "--schedule: unknown schedule 'bogus'" },
    /* ---- results databases and traces (sweep, report, compare) ---- */
    { NULL, NULL, 0, "sweep --model mlp:layers=8,width=8 --topology ok.json -K 1,x -M 1 "
      "--batch 4 --db s.db", PS_EUSAGE, "-K: 'x' is not an integer" },
    { NULL, NULL, 0, "sweep --model mlp:layers=8,width=8 --topology ok.json -K 1 -M 1 "
      "--batch 4 --jobs 0 --db s.db", PS_EUSAGE, "--jobs: 0 is out of range" },
    /* the option named (helper-141: "ok.json: not a directory") */
    { NULL, NULL, 0, "sweep --model mlp:layers=8,width=8 --topology ok.json -K 1 -M 1 "
      "--batch 4 --db ok.json/s.db", PS_EIO,
      "--db 'ok.json/s.db': cannot write: ok.json is not a directory" },
    { "s.db", "this is not a database, just text\n", 0, "report --db s.db", PS_EDB,
      "s.db: reading the schema version: not an SQLite database" },
    { NULL, NULL, 0, "report --db s.db", PS_EIO, "s.db: cannot read the results database" },
    { "ro/", NULL, 0555, "sweep --model mlp:layers=8,width=8 --topology ok.json -K 1,2 -M 1 "
      "--batch 4 --quiet --db ro/s.db", PS_EIO,
      "--db 'ro/s.db': cannot create the database in ro: Permission denied" },
    { "dd/", NULL, 0, "sweep --model mlp:layers=8,width=8 --topology ok.json -K 1 -M 1 "
      "--batch 4 --quiet --db dd", PS_EIO, "--db 'dd': cannot open the database: Is a directory" },
    { "dd/", NULL, 0, "report --db dd", PS_EIO,
      "--db 'dd': cannot open the database: Is a directory" },
    { "tr.json", "{\"pipesim\":{", 0, "compare tr.json tr.json", PS_EPARSE,
      "tr.json:1:12: string or '}' expected near end of file" },
    { "tr.json", "{\"pipesim\":{\"devices\":2,\"stages\":2,\"micro_batches\":2},\n"
      "\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":9,\"ts\":1,\"args\":{}}]}", 0,
      "compare tr.json tr.json", PS_EPARSE,
      "tr.json:3:11: traceEvents[0].pid: 9 is not a device of the trace (0..1)" },
    { NULL, NULL, 0, "compare tr.json missing.json", PS_EIO,
      "tr.json: cannot open: No such file or directory" },
    /* ---- outputs that cannot be written ---- */
    { "ro/", NULL, 0555, RUN " -K 2 -M 2 --batch 4 --trace ro/t.json", PS_EIO,
      "ro/t.json: cannot write: Permission denied" },
    { "ro/", NULL, 0555, "gen model mlp:layers=2,width=4 -o ro/m.csv", PS_EIO,
      "ro/m.csv: cannot write: Permission denied" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --trace ''", PS_EUSAGE,
      "--trace needs a file name" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --sensitivity=yes", PS_EUSAGE,
      "option '--sensitivity' takes no value" },
    { NULL, NULL, 0, RUN " -K 2 -M 2 --batch 4 --trace-csv nodir/t.csv", PS_EIO,
      "nodir/t.csv: cannot write: No such file or directory" },
};

static char dir[64];
static int unprivileged; /* root reads and writes through chmod: run cases as nobody */

static void put(const char *name, const char *text, size_t n, int mode)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    size_t len = strlen(p);
    if (p[len - 1] == '/') {
        p[len - 1] = 0;
        cr_assert_eq(mkdir(p, 0755), 0, "mkdir %s", p);
    } else {
        FILE *f = fopen(p, "w");
        cr_assert(f, "cannot write fixture %s", p);
        cr_assert_eq(fwrite(text, 1, n, f), n);
        fclose(f);
    }
    if (mode)
        cr_assert_eq(chmod(p, mode == NOPERM ? 0 : (mode_t)mode), 0);
}

static void teardown(void);

static void setup(void)
{
    th_teardown_at_exit(teardown); /* its tests may skip */
    th_tmpdir(dir, sizeof dir, "bad");
    cr_assert_eq(chmod(dir, 0777), 0);
    put("ok.csv", CSV_OK, strlen(CSV_OK), 0);
    put("ok.json", JSON_OK, strlen(JSON_OK), 0);
    /* as root, permission cases run as nobody, if nobody can run the binary */
    unprivileged = geteuid() == 0 &&
                   th_sh("cd %s && setpriv --reuid=65534 --regid=65534 --clear-groups %s "
                         "--version >/dev/null 2>&1", dir, th_pipesim()) == 0;
}

static void teardown(void)
{
    th_sh("chmod -R u+rwx %s; rm -rf %s /tmp/pipesim-gcov-nobody-%ld", dir, dir, (long)getpid());
}

/* Names in dir, sorted into one string. */
static void listing(char *buf, size_t n)
{
    struct dirent **ents;
    int k = scandir(dir, &ents, NULL, alphasort);
    cr_assert_geq(k, 0);
    buf[0] = 0;
    for (int i = 0; i < k; i++) {
        if (ents[i]->d_name[0] != '.') {
            strncat(buf, ents[i]->d_name, n - strlen(buf) - 2);
            strncat(buf, " ", n - strlen(buf) - 1);
        }
        free(ents[i]);
    }
    free(ents);
}

static void slurp(const char *name, char *buf, size_t n)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    cr_assert(f);
    size_t r = fread(buf, 1, n - 1, f);
    buf[r] = 0;
    fclose(f);
    unlink(p);
}

/* Text length, NULs included, for the one fixture that holds a NUL. */
static size_t text_len(const struct bad_case *c)
{
    if (!strcmp(c->what, "p.csv:2:4: binary data (NUL byte)"))
        return strlen(CSV_H) + 4 + strlen(",1,1,1\n");
    return strlen(c->text);
}

static void run_case(int i, const struct bad_case *c)
{
    char before[1024], after[1024], err[2048], out[256];
    if (c->file)
        put(c->file, c->text, c->text ? text_len(c) : 0, c->mode);
    listing(before, sizeof before);
    /* GCOV_PREFIX: a --coverage build (make coverage) run as nobody cannot
     * write its .gcda files beside the root-owned objects and says so on
     * stderr; its counts go to a folder of nobody's instead (ignored by
     * other builds) */
    char as[160] = "";
    if (unprivileged)
        snprintf(as, sizeof as, "GCOV_PREFIX=/tmp/pipesim-gcov-nobody-%ld "
                 "setpriv --reuid=65534 --regid=65534 --clear-groups ", (long)getpid());
    int pred = !strncmp(c->args, "predict", 7);
    int st = th_sh("cd %s && %s%s %s%s >.out 2>.err", dir, as, th_pipesim(),
                   pred ? "predict --out result.txt" : "", pred ? c->args + 7 : c->args);
    slurp(".err", err, sizeof err);
    slurp(".out", out, sizeof out);
    listing(after, sizeof after);
    int want = ps_exit_status(c->code);
    cr_expect_eq(st, want, "case %d '%s': exit %d, not %d (%s): %s", i, c->args, st, want,
                 ps_errname(c->code), err);
    cr_expect(strstr(err, c->what), "case %d '%s': message '%s' lacks '%s'", i, c->args, err,
              c->what);
    const char *cmd = c->args;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "pipesim %.*s: ", (int)strcspn(cmd, " "), cmd);
    cr_expect(!strncmp(err, prefix, strlen(prefix)), "case %d: '%s' does not start with '%s'", i,
              err, prefix);
    /* main() names the command once: no "pipesim predict: predict: ..." */
    size_t cl = strcspn(cmd, " ");
    const char *rest = err + strlen(prefix);
    cr_expect(strncmp(rest, cmd, cl) || (rest[cl] != ':' && rest[cl] != ' '),
              "case %d: the command is named twice: '%s'", i, err);
    cr_expect(strlen(err) > 0 && strchr(err, '\n') == err + strlen(err) - 1,
              "case %d '%s': not exactly one line: '%s'", i, c->args, err);
    cr_expect_str_eq(out, "", "case %d '%s': wrote to stdout", i, c->args);
    cr_expect_str_eq(after, before, "case %d '%s': left files behind", i, c->args);
    if (c->file) { /* the next case starts clean */
        char p[256];
        snprintf(p, sizeof p, "%s/%s", dir, c->file);
        th_sh("chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", p, p);
    }
}

TestSuite(badinput, .init = setup, .fini = teardown, .timeout = 120);

Test(badinput, every_case_one_line_its_class_status_no_output)
{
    int n = (int)(sizeof cases / sizeof *cases);
    cr_assert_geq(n, 40);
    for (int i = 0; i < n; i++)
        if (!cases[i].mode) /* those: the next test */
            run_case(i, &cases[i]);
}

/* The cases of a file's or folder's mode (unreadable, read-only). */
Test(badinput, permission_cases_one_line_its_class_status_no_output)
{
    if (geteuid() == 0 && !unprivileged)
        cr_skip_test("root ignores file modes and setpriv cannot run %s as nobody: the "
                     "permission cases not run", th_pipesim());
    int n = (int)(sizeof cases / sizeof *cases), k = 0;
    for (int i = 0; i < n; i++)
        if (cases[i].mode) {
            run_case(i, &cases[i]);
            k++;
        }
    cr_assert_geq(k, 3);
}

/* validate checks its outputs before it trains: what it writes through is
 * the target's folder (a temporary renamed over the file), so a writable
 * file in a read-only folder, or a dangling link into one, is refused up
 * front (it used to print the whole run, then fail), and a read-only file
 * in a writable folder is replaced as predict replaces it. */
Test(badinput, validate_checks_the_folder_its_outputs_are_renamed_into)
{
    if (!unprivileged)
        cr_skip_test("needs root and setpriv to run %s as nobody", th_pipesim());
    cr_assert_eq(th_sh("cd %s && mkdir ro && touch ro/t.json ro444.json && chmod 666 ro/t.json "
                       "&& chmod 444 ro444.json && ln -s ro/none.json dangling.json", dir), 0);
    const char *as = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    const char *net = "validate --net mlp:layers=2,width=8 -K 1 -M 1 --batch 2 --steps 1";
    cr_assert_eq(th_sh("cd %s && %s %s %s --trace ro/t.json >.out 2>.err", dir, as,
                       th_pipesim(), net), 5);
    cr_assert_eq(th_sh("cd %s && grep -q \"^pipesim validate: --trace 'ro/t.json': cannot "
                       "write in ro: Permission denied$\" .err && test ! -s .out", dir), 0);
    cr_assert_eq(th_sh("cd %s && %s %s %s --trace-csv dangling.json >.out 2>.err", dir, as,
                       th_pipesim(), net), 5);
    cr_assert_eq(th_sh("cd %s && grep -q -e \"--trace-csv 'dangling.json': cannot write in "
                       ".*/ro: Permission denied$\" .err && test ! -s .out", dir), 0);
    cr_assert_eq(th_sh("cd %s && %s %s %s --trace ro444.json >.out 2>.err && "
                       "grep -q traceEvents ro444.json", dir, as, th_pipesim(), net), 0);
    th_sh("cd %s && rm -rf ro ro444.json dangling.json .out .err", dir);
}

/* The statuses are distinct per class and match the table in docs/errors-and-outputs.md. */
Test(badinput, exit_statuses_are_distinct_and_documented)
{
    for (int a = 1; a < PS_NERR; a++) {
        cr_expect_geq(ps_exit_status(a), 2);
        for (int b = 1; b < a; b++)
            cr_expect_neq(ps_exit_status(a), ps_exit_status(b));
        cr_expect_eq(th_sh("%s help errors | grep -q '^| %d | %s | '", th_pipesim(),
                           ps_exit_status(a), ps_errname(a)), 0, "%s", ps_errname(a));
        cr_expect_eq(th_sh("grep -q '^| %d | %s | ' docs/errors-and-outputs.md",
                           ps_exit_status(a), ps_errname(a)),
                     0, "docs/errors-and-outputs.md lacks %s", ps_errname(a));
    }
}

/* ---- the trace reader ---- */

#define META "\"pipesim\":{\"devices\":2,\"stages\":2,\"micro_batches\":2}"
#define EV(x) "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":2,\"args\":{\"kind\":\"F\"," \
              "\"stage\":0,\"mb\":0" x "}}"

static const struct {
    const char *text;
    int code;
    const char *what;
} trace_cases[] = {
    { "{" META ",\"traceEvents\":[" EV(""), PS_EPARSE, "tr.json:1:" },
    /* no document: it was put at column 0 (helper-106) */
    { "", PS_EPARSE, "tr.json: the file is empty (no JSON document; a pipe is read once)" },
    { "\n", PS_EPARSE, "tr.json: the file holds only blanks (no JSON document)" },
    { "{\"traceEvents\":[]}", PS_EPARSE, "tr.json:1:1: pipesim: missing or bad metadata" },
    /* each count named at its position (helper-95: one message named none of the three) */
    { "{\"pipesim\":{\"devices\":0,\"stages\":2,\"micro_batches\":2},\"traceEvents\":[]}",
      PS_EPARSE, "tr.json:1:13: pipesim.devices: 0: must be a whole number in [1, 1048576]" },
    { "{\"pipesim\":{\"devices\":-2,\"stages\":2,\"micro_batches\":2},\"traceEvents\":[]}",
      PS_EPARSE, "tr.json:1:13: pipesim.devices: -2: must be a whole number in [1, 1048576]" },
    { "{\"pipesim\":{\"devices\":1e30,\"stages\":2,\"micro_batches\":2},\"traceEvents\":[]}",
      PS_EPARSE, "tr.json:1:13: pipesim.devices: 1e+30: must be a whole number in [1, 1048576]" },
    { "{\"pipesim\":{\"devices\":2,\"stages\":2.0,\"micro_batches\":2},\"traceEvents\":[]}",
      PS_EPARSE, "tr.json:1:25: pipesim.stages: 2.0: must be a whole number in [1, 16777216]" },
    { "{\"pipesim\":{\"devices\":2,\"stages\":\"2\",\"micro_batches\":2},\"traceEvents\":[]}",
      PS_EPARSE, "tr.json:1:25: pipesim.stages: '2': must be a whole number in [1, 16777216]" },
    { "{\"pipesim\":{\"devices\":2,\"stages\":2,\"micro_batches\":4000000000},"
      "\"traceEvents\":[]}", PS_EPARSE,
      "tr.json:1:36: pipesim.micro_batches: 4000000000: must be a whole number in [1, 16777216]" },
    { "{\"pipesim\":{\"devices\":2,\"stages\":2},\"traceEvents\":[]}", PS_EPARSE,
      "tr.json:1:2: pipesim.micro_batches: missing: must be a whole number in [1, 16777216]" },
    { "{" META "}", PS_EPARSE, "tr.json:1:1: traceEvents: missing or not an array" },
    { "{" META ",\"traceEvents\":[\n{\"pid\":0}]}", PS_EPARSE,
      "tr.json:2:1: traceEvents[0]: missing 'ph'" },
    { "{" META ",\"traceEvents\":[" EV("") ",\n{\"ph\":\"X\",\"pid\":7,\"ts\":1,\"args\":{}}]}",
      PS_EPARSE, "tr.json:2:11: traceEvents[1].pid: 7 is not a device of the trace (0..1)" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"ts\":1e300,\"args\":{}}]}",
      PS_EPARSE, "tr.json:2:19: traceEvents[0].ts: missing, not a number or beyond 4e+15 us" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":4294967296,\"ts\":1,\"args\":{}}]}",
      PS_EPARSE, "tr.json:2:11: traceEvents[0].pid: missing, not an integer or beyond 32 bits" },
    { "{" META ",\"traceEvents\":[\n" EV(",\"bytes\":1e300") "]}", PS_EPARSE,
      "tr.json:2:1: traceEvents[0]: args.bytes: must be a byte count" },
    /* negative byte counts (they passed: the check was on the magnitude, helper-57) */
    { "{" META ",\"traceEvents\":[\n" EV(",\"bytes\":-65536") "]}", PS_EPARSE,
      "tr.json:2:1: traceEvents[0]: args.bytes: must be a byte count" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"C\",\"pid\":0,\"ts\":1,\"args\":"
      "{\"activations\":-1}}]}", PS_EPARSE,
      "tr.json:2:34: traceEvents[0].args.activations: must be a byte count (a number from 0)" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"C\",\"pid\":0,\"ts\":1,\"args\":{}}]}", PS_EPARSE,
      "tr.json:2:26: traceEvents[0].args: counter without 'activations'" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":-2,"
      "\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":0}}]}", PS_EPARSE,
      "tr.json:2:34: traceEvents[0].dur: missing, not a number or negative" },
    /* one op lasts at most 1e9 s, as in a profile (helper-106: 3.99e15 us was read) */
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":3.99e15,"
      "\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":0}}]}", PS_EINVAL,
      "tr.json:2:34: traceEvents[0].dur: 3.99e+15 us is beyond one op's bound of 1e+15 us "
      "(1e+09 s)" },
    /* a key twice: an error at the second (helper-106: the last value was read) */
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":2,"
      "\"dur\":-2,\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":0}}]}", PS_EPARSE,
      "tr.json:2:46: duplicate object key near '\"dur\"'" },
    /* each field of an X event named (helper-83: one line listed five) */
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":-1,\"ts\":1,\"dur\":2,"
      "\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":0}}]}", PS_EPARSE,
      "tr.json:2:19: traceEvents[0].tid: missing, negative, not an integer or beyond 32 bits" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":2,"
      "\"args\":{\"kind\":\"Q\",\"stage\":0,\"mb\":0}}]}", PS_EPARSE,
      "tr.json:2:50: traceEvents[0].args.kind: unknown op kind 'Q'" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":2,"
      "\"args\":{\"stage\":0,\"mb\":0}}]}", PS_EPARSE,
      "traceEvents[0].args.kind: missing" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":2,"
      "\"args\":{\"kind\":5,\"stage\":0,\"mb\":0}}]}", PS_EPARSE,
      "tr.json:2:50: traceEvents[0].args.kind: not a string" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":2,"
      "\"args\":{\"kind\":\"F\",\"stage\":5,\"mb\":0}}]}", PS_EPARSE,
      "traceEvents[0].args.stage: missing or not a stage of the trace (0..1)" },
    { "{" META ",\"traceEvents\":[\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":2,"
      "\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":2}}]}", PS_EPARSE,
      "traceEvents[0].args.mb: missing or not a micro-batch of the trace (0..1)" },
    { "{\"pipesim\":{\"devices\":2,\"stages\":2,\"micro_batches\":2,\"static_mem\":[1,-5]},"
      "\"traceEvents\":[]}", PS_EPARSE,
      "tr.json:1:70: pipesim.static_mem[1]: must be a byte count" },
    /* one device, two compute ops at once (F0 1-3 us, F1 from 1.5 us); within
     * the microsecond of rounding is not an overlap (below the table) */
    { "{" META ",\"traceEvents\":[" EV("") ",\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1.5,"
      "\"dur\":2,\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":1}}]}", PS_EINVAL,
      "tr.json:2:1: traceEvents[1]: device 0: compute ops F of stage 0, mb 0 (1.000 to 3.000 us) "
      "and F of stage 0, mb 1 (from 1.500 us) overlap: a device runs one compute op at a time" },
    /* an op twice (it was matched to nothing and named as missing from the
     * other trace), and a header whose counts the events do not have (a
     * forged 'devices' made compare print a row per device, compare
     * --replay run for minutes) */
    { "{" META ",\"traceEvents\":[" EV("") ",\n" EV("") "]}", PS_EPARSE,
      "tr.json:2:1: traceEvents[1]: F0 of stage 0 on device 0 appears more than once (also "
      "traceEvents[0])" },
    { "{" META ",\"traceEvents\":[" EV("") "]}", PS_EPARSE,
      "tr.json:1:13: pipesim.devices: 2, but the events are on 1 device" },
    { "{\"pipesim\":{\"devices\":2,\"stages\":3,\"micro_batches\":2},\"traceEvents\":["
      EV("") ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":1,\"dur\":9,\"args\":{\"kind\":\"F\","
      "\"stage\":1,\"mb\":0}}]}", PS_EPARSE,
      "tr.json:1:25: pipesim.stages: 3, but the events are of 2 stages" },
};

Test(badinput, trace_reader_names_file_line_and_path)
{
    char path[128];
    snprintf(path, sizeof path, "%s/tr.json", dir);
    for (size_t i = 0; i < sizeof trace_cases / sizeof *trace_cases; i++) {
        FILE *f = fopen(path, "w");
        fputs(trace_cases[i].text, f);
        fclose(f);
        struct trc_trace *t = (void *)1;
        int rc = trc_read_chrome(path, &t);
        cr_expect_eq(rc, -trace_cases[i].code, "trace case %zu: rc %d: %s", i, rc, ps_errmsg());
        cr_expect_null(t);
        cr_expect(strstr(ps_errmsg(), trace_cases[i].what), "trace case %zu: '%s' lacks '%s'", i,
                  ps_errmsg(), trace_cases[i].what);
        cr_expect(!strchr(ps_errmsg(), '\n'));
    }
    struct trc_trace *t;
    cr_expect_eq(trc_read_chrome("/nonexistent/tr.json", &t), -PS_EIO);
    /* back to back, and 0.5 us of overlap (rounding), and on two devices: read */
    FILE *f = fopen(path, "w");
    fputs("{" META ",\"traceEvents\":[" EV("") ",\n{\"ph\":\"X\",\"pid\":0,\"tid\":0,"
          "\"ts\":2.5,\"dur\":1,\"args\":{\"kind\":\"F\",\"stage\":0,\"mb\":1}},\n"
          "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":1,\"dur\":9,\"args\":{\"kind\":\"F\","
          "\"stage\":1,\"mb\":0}}]}", f);
    fclose(f);
    cr_expect_eq(trc_read_chrome(path, &t), 0, "%s", ps_errmsg());
    trc_trace_free(t);
}
