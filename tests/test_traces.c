/* Trace writers: output that the reader (and any JSON parser) takes back. */
#include "helpers.h"

#include <unistd.h>

Test(traces, metadata_strings_are_escaped_and_round_trip)
{
    /* a fuzz finding: a tab in the source string made the writer emit
     * invalid JSON (tests/fuzz/regress/trace/source-with-tab-breaks-rewrite.json) */
    struct trc_trace *t;
    cr_assert_eq(trc_read_chrome("tests/fuzz/regress/trace/source-with-tab-breaks-rewrite.json",
                                 &t), 0, "%s", ps_errmsg());
    cr_assert_str_eq(t->source, "simul\ted");
    snprintf(t->schedule, sizeof t->schedule, "q\"b\\s\n");
    char path[] = "/tmp/pipesim-trc-XXXXXX";
    close(mkstemp(path));
    cr_assert_eq(trc_write_chrome(t, path), 0);
    struct trc_trace *u;
    cr_assert_eq(trc_read_chrome(path, &u), 0, "%s", ps_errmsg());
    cr_assert_str_eq(u->source, t->source);
    cr_assert_str_eq(u->schedule, t->schedule);
    cr_assert_eq(u->n_counters, t->n_counters);
    /* a second, strict JSON reader (`make test` installs python3) */
    if (th_sh("command -v python3 >/dev/null 2>&1") == 0)
        cr_assert_eq(th_sh("python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s", path),
                     0, "python's json module rejects %s", path);
    else
        cr_log_warn("python3 is not installed: the trace was not checked by a second JSON "
                    "reader (apt-get install python3)");
    trc_trace_free(u);
    trc_trace_free(t);
    unlink(path);
}

Test(traces, a_receive_no_stage_sends_is_refused)
{
    /* a fuzz finding: a recv-act of stage 0 was read, and its flow's sender
     * (stage -1) wrapped the written id past what a JSON integer holds, so the
     * written trace did not read back
     * (tests/fuzz/regress/trace/recv-act-stage0-flow-id-wraps.json) */
    struct trc_trace *t = NULL;
    int rc = trc_read_chrome("tests/fuzz/regress/trace/recv-act-stage0-flow-id-wraps.json", &t);
    cr_assert_eq(rc, -PS_EINVAL, "%s", ps_errmsg());
    cr_assert_null(t);
    cr_assert(strstr(ps_errmsg(), "recv-act of stage 0: no stage sends it (stages 0..1)"), "%s",
              ps_errmsg());
    static const char grad[] =
        "{\"pipesim\":{\"devices\":2,\"stages\":2,\"micro_batches\":1},\"traceEvents\":["
        "{\"name\":\"recvB0\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":1,"
        "\"args\":{\"kind\":\"recv-grad\",\"stage\":1,\"mb\":0}}]}";
    rc = trc_read_chrome_mem(grad, sizeof grad - 1, "g.json", &t);
    cr_assert_eq(rc, -PS_EINVAL, "%s", ps_errmsg());
    cr_assert(strstr(ps_errmsg(), "g.json:") &&
                  strstr(ps_errmsg(), "traceEvents[0]: recv-grad of stage 1: no stage sends it "
                                      "(stages 0..1)"),
              "%s", ps_errmsg());
}
