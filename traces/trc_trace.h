/*
 * trc_trace — the one event-record format shared by the simulator and the
 * validation runtime, with writers for Chrome Trace Event JSON (Perfetto)
 * and CSV.
 *
 * Chrome JSON: one process per device (pid = device), threads compute (0),
 * send (1), receive (2), and for transfers in flight at once more tracks of
 * the same stream ("recv 2" is tid 5: tid = lane * 3 + stream, see
 * trc_layout.h), so slices on one thread never overlap; "X" events with
 * ts/dur in microseconds named like F3/B3/R3 with stage and micro-batch in
 * args; a "C" memory counter per device; a flow per transfer ("s" inside
 * the send's slice, "f" with bp "e" inside the receive's); a "pipesim"
 * object with the run's parameters and "otherData" (generator, events).
 * CSV: one row per event, header
 *   device,stream,kind,stage,mb,start_us,end_us,bytes,peer
 *
 * Ownership: trc_trace_new / trc_trace_free (NULL ok); adds are amortized
 * O(1); writers O(events), atomic (temp file + rename).
 */
#ifndef TRC_TRACE_H
#define TRC_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sched/sch_schedule.h"

struct trc_event {
    int32_t device;
    int32_t stage;
    int32_t mb;
    int32_t peer;        /* other device of a transfer, -1 otherwise */
    uint8_t kind;        /* enum sch_op_kind */
    uint8_t stream;      /* enum sch_stream */
    uint32_t src;        /* a read trace's: its index in traceEvents, for messages
                            (in the padding: no size); 0 otherwise */
    int64_t start_ns;
    int64_t end_ns;
    int64_t bytes;       /* transfers */
};

struct trc_counter {
    int32_t device;
    int64_t t_ns;
    int64_t bytes;       /* activation + buffer bytes in use after t */
};

struct trc_trace {
    char source[16];     /* "simulated" or "measured" */
    char schedule[32];
    char remat[16];
    int n_devices, n_stages, n_micro;
    double batch;        /* samples per step; 0: not named (the reader
                            refuses a header's negative batch) */
    int64_t step_ns;     /* a measured step's own time, its start to its last
                            worker's end, which the last op's end falls short of
                            by the workers' closing bookkeeping; 0: unknown (a
                            simulated step ends with its last op) */
    int n_replicas;      /* data-parallel pipelines the step stands for (0 or 1:
                            none); the trace holds the first, the others being
                            alike ("replicas" in the JSON's pipesim object) */
    size_t n_events, cap_events;
    struct trc_event *events;
    size_t n_counters, cap_counters;
    struct trc_counter *counters;
    int64_t *static_mem; /* [n_devices] or NULL */
};

struct trc_trace *trc_trace_new(const char *source, int n_devices, int n_stages,
                                int n_micro);
void trc_trace_free(struct trc_trace *t);
int trc_add_event(struct trc_trace *t, const struct trc_event *e);
int trc_add_counter(struct trc_trace *t, int device, int64_t t_ns, int64_t bytes);
/* "compute", "send", "recv" ("?" out of range). */
const char *trc_stream_name(int k);
/* Sorts events by (start, device, stream, kind, stage, mb): stable output. */
void trc_trace_sort(struct trc_trace *t);
/* qsort comparator of pointers to events: by device, then start, so each
 * device's ops come in the order they ran. */
int trc_event_ptr_by_device_start(const void *a, const void *b);
int trc_write_chrome(const struct trc_trace *t, const char *path);
int trc_write_csv(const struct trc_trace *t, const char *path);
/* The same to an open stream, for a set of outputs written together
 * (cli_write_outputs); -PS_EIO "write error" when the stream has one. */
int trc_print_chrome(const struct trc_trace *t, FILE *f);
int trc_print_csv(const struct trc_trace *t, FILE *f);
/* Reads a Chrome JSON trace written by trc_write_chrome (either source), or
 * another tool's in its shape; times count from the earliest event (op or
 * counter) when that is after 0. */
int trc_read_chrome(const char *path, struct trc_trace **out);
/* Whether the traces at a and b (b may be NULL) can be read at once in the
 * memory this process may use: reading holds the text, jansson's tree and
 * the events, measured at 7.7 x the files' bytes (compare of two 65 MB
 * traces: 1.0 GB); PS_ENOMEM with one line, as ps_mem_check, when not (a 2 GB
 * trace ran out of memory after minutes). trc_read_chrome checks its own
 * file; a command reading two checks their sum first. */
int trc_read_fits(const char *a, const char *b);
/* The same at per_byte bytes held per byte of trace, for a reader that holds
 * more than the trace (plot's timeline: 15.7 x measured, a 14.6 MB trace
 * 229 MB, where the 8 x check let 130 MB through: helper-119). */
int trc_fits_at(const char *a, const char *b, double per_byte);
/* The same from memory: text[0..len), errors name `name`. */
int trc_read_chrome_mem(const char *text, size_t len, const char *name, struct trc_trace **out);
/* 0 if t holds a compute op (F, B, R or W), else -PS_EPARSE naming path: a
 * trace to compare or replay (the reader takes one of metadata alone). O(events). */
int trc_require_compute(const struct trc_trace *t, const char *path);

#endif
