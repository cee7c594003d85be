/* libFuzzer target: the Chrome trace JSON reader (trc_read_chrome_mem), and
 * a write/read round trip of what it accepts. */
#include "fuzz_common.h"
#include "traces/trc_trace.h"

#include <unistd.h>

static char tmp_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/fuzz-trace-%ld.json", (long)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trc_trace *t = NULL, *u = NULL;
    int rc = trc_read_chrome_mem((const char *)data, size, "fuzz.json", &t);
    if (rc < 0) {
        fuzz_check_error(rc, "fuzz.json");
        FUZZ_CHECK(t == NULL);
        ps_error_clear();
        return 0;
    }
    FUZZ_CHECK(t && t->n_devices > 0 && t->n_stages > 0 && t->n_micro > 0);
    for (size_t i = 0; i < t->n_events; i++) {
        const struct trc_event *e = &t->events[i];
        FUZZ_CHECK(e->device >= 0 && e->device < t->n_devices);
        FUZZ_CHECK(e->stage >= 0 && e->stage < t->n_stages);
        FUZZ_CHECK(e->mb >= -1 && e->mb < t->n_micro);
        FUZZ_CHECK(e->stream < SCH_NSTREAMS && e->kind < SCH_OP_NKINDS);
        FUZZ_CHECK(e->end_ns >= e->start_ns);
        if (i)
            FUZZ_CHECK(t->events[i - 1].start_ns <= e->start_ns);
    }
    for (size_t i = 0; i < t->n_counters; i++)
        FUZZ_CHECK(t->counters[i].device >= 0 && t->counters[i].device < t->n_devices);
    /* small traces (the writer emits metadata per device, so few devices too):
     * what was read must write and read back to the same events */
    if (t->n_events + t->n_counters < 4096 && t->n_devices <= 1024) {
        rc = trc_write_chrome(t, tmp_path);
        if (rc == 0) {
            rc = trc_read_chrome(tmp_path, &u);
            if (rc < 0)
                fprintf(stderr, "reload failed: %s\n", ps_errmsg());
            FUZZ_CHECK(rc == 0);
            FUZZ_CHECK(u->n_events == t->n_events && u->n_devices == t->n_devices);
            for (size_t i = 0; i < t->n_events; i++)
                FUZZ_CHECK(u->events[i].kind == t->events[i].kind &&
                           u->events[i].stage == t->events[i].stage &&
                           u->events[i].mb == t->events[i].mb);
            trc_trace_free(u);
        } else {
            fuzz_check_error(rc, NULL);
        }
        unlink(tmp_path);
    }
    trc_trace_free(t);
    ps_error_clear();
    return 0;
}
