/* mdl_torch — PyTorch profiler trace to measured profile (see mdl_torch.h):
 * the document, the steps, the profile and its sizes; the events are read in
 * mdl_torch_events.c and attributed in mdl_torch_attr.c (mdl_torch_int.h). */
#include "models/mdl_torch.h"
#include "models/mdl_torch_int.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_jsonpos.h"
#include "base/ps_memavail.h"
#include "base/ps_util.h"

#include <jansson.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Peak memory of an import over the trace's size: jansson's document of the
 * whole file. Measured (/usr/bin/time -f %M, pipesim import-torch): a 71 MiB
 * synthetic Kineto-style trace (4 ops per layer range, compact JSON) peaked
 * at 944 MiB (13.3x); tests/fixtures/torch/tinyformer.json's events x100
 * with indent=1 (56 MiB) held a 588 MiB document (10.5x). The lower figure
 * is used, so only imports that surely cannot fit are refused. */
#define TORCH_PEAK_FACTOR 10.0

/* Thread, then start, then longer first (parents before children), then file order. */
static int cmp_ev(const void *pa, const void *pb)
{
    const struct tev *a = pa, *b = pb;
    if (a->thr != b->thr)
        return a->thr < b->thr ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_first(const void *pa, const void *pb)
{
    const struct layer_acc *a = pa, *b = pb;
    if (a->first_fwd != b->first_fwd)
        return a->first_fwd < b->first_fwd ? -1 : 1;
    return a->first_end < b->first_end ? -1 : a->first_end > b->first_end;
}

/* Sizes from the sidecar; sets *batch from it when the caller gave none. */
static int apply_sizes(const struct ctx *c, const char *sizes, struct mdl_profile *p,
                       double *batch)
{
    struct mdl_torch_size *rows;
    int n, rc = mdl_torch_sizes_load(sizes, &rows, &n);
    if (rc < 0)
        return rc;
    if (n && rows[0].at_batch > 0) {
        if (*batch > 0 && *batch != rows[0].at_batch) {
            rc = ps_error(PS_EINVAL, "--batch %g disagrees with %s: at_batch %g", *batch,
                           sizes, rows[0].at_batch);
            goto out_free_rows;
        }
        *batch = rows[0].at_batch;
    }
    for (int l = 0; l < p->n_layers; l++) {
        int r = 0;
        while (r < n && strcmp(rows[r].name, p->layers[l].name))
            r++;
        if (r == n) {
            rc = ps_error(PS_EINVAL, "%s: no row for layer '%s' of %s", sizes,
                           p->layers[l].name, c->path);
            goto out_free_rows;
        }
        struct mdl_layer *ml = &p->layers[l];
        ml->params = rows[r].params;
        ml->out_bytes = rows[r].out_bytes;
        ml->stash_bytes = rows[r].stash_bytes;
        ml->stash_shared_bytes = rows[r].stash_shared_bytes;
        if (l == 0 && ml->stash_shared_bytes > 0) {
            rc = ps_error(PS_EINVAL, "%s: field 'stash_shared_bytes' of layer '%s' must be 0: "
                           "it is the first layer (no layer before it shares its stash)", sizes,
                           ml->name);
            goto out_free_rows;
        }
        memcpy(ml->kind, rows[r].kind, sizeof ml->kind);
    }
    if (n != p->n_layers) {
        for (int r = 0; r < n; r++) {
            int l = 0;
            while (l < p->n_layers && strcmp(rows[r].name, p->layers[l].name))
                l++;
            if (l == p->n_layers) {
                rc = ps_error(PS_EINVAL, "%s: layer '%s' has no range in %s", sizes,
                               rows[r].name, c->path);
                goto out_free_rows;
            }
        }
    }
out_free_rows:
    free(rows);
    return rc;
}

/* <trace minus .json>.layers.csv if it exists, else "". */
static void default_sizes(const char *trace, char *buf, size_t n)
{
    size_t len = strlen(trace);
    if (len > 5 && !strcmp(trace + len - 5, ".json"))
        len -= 5;
    snprintf(buf, n, "%.*s.layers.csv", (int)len, trace);
    if (access(buf, R_OK) != 0)
        buf[0] = 0;
}

/* The step count is the fewest forward ranges of a layer; every layer has a
 * whole number of forward ranges per step (a module called k times a step,
 * an RNN cell, a shared block, has k: its sum is its time per step), and as
 * many backward ranges as forward ones with backward ranges (helper-106: a
 * trace window opening inside a step, or cut inside the last backward, wrote
 * times halved or doubled, exit 0; helper-110: a module run twice a step is
 * a model, not a cut trace). By sequence numbers, each forward range that
 * holds a node maker has a function naming one of them (by_sequence;
 * helper-139: a window closing after a step's forward shrank every backward
 * by 1/steps, exit 0); a layer none names has no backward. The first layer that breaks
 * it is named; the first run more than once a step is reported. Layers in
 * first-forward order. */
static int check_steps(const struct ctx *c, int has_bwd, struct mdl_torch_report *rep)
{
    int steps = c->layers[0].n_fwd, first = 0;
    for (int l = 1; l < c->n_layers; l++)
        if (c->layers[l].n_fwd < steps)
            steps = c->layers[l].n_fwd, first = l;
    rep->steps = steps;
    rep->repeated = 0;
    int by_seq = rep->method == MDL_TORCH_BWD_SEQUENCE;
    for (int l = 0; l < c->n_layers; l++) {
        const struct layer_acc *a = &c->layers[l];
        /* every range holding a node maker named: a call under no_grad
         * holds none (helper-140: refused); one step too (helper-142: a
         * whole number a step let a one-step trace cut after its forward by) */
        if (a->n_fwd % steps == 0 && by_seq && a->n_fwd_seq_bwd != a->n_fwd_seq_own)
            return ps_error(PS_EPARSE, "%s: layer '%s' has %d forward range%s making autograd "
                            "nodes, %d of them with a backward (autograd functions naming "
                            "their ops' sequence numbers): profile whole steps (stop the trace "
                            "after the step's last backward)", c->path, a->name,
                            a->n_fwd_seq_own, a->n_fwd_seq_own == 1 ? "" : "s",
                            a->n_fwd_seq_bwd);
        if (a->n_fwd % steps == 0 && (!has_bwd || a->n_bwd == a->n_fwd)) {
            if (a->n_fwd > steps && !rep->repeated++) { /* the first is named */
                snprintf(rep->repeated_name, sizeof rep->repeated_name, "%s", a->name);
                rep->repeated_times = a->n_fwd / steps;
            }
            continue;
        }
        char counts[96];
        if (has_bwd)
            snprintf(counts, sizeof counts, "%d forward and %d backward range%s", a->n_fwd,
                     a->n_bwd, a->n_bwd == 1 ? "" : "s");
        else
            snprintf(counts, sizeof counts, "%d forward range%s", a->n_fwd,
                     a->n_fwd == 1 ? "" : "s");
        return ps_error(PS_EPARSE, "%s: layer '%s' has %s, but the trace has %d step%s (the "
                        "forward ranges of '%s', its layer of fewest): each layer needs a "
                        "whole number of forward ranges per step%s; profile whole steps (start "
                        "the trace before a step's first layer, stop it after the step's last "
                        "backward)", c->path, a->name, counts, steps, steps == 1 ? "" : "s",
                        c->layers[first].name,
                        has_bwd ? ", and as many backward ranges as forward ones" : "");
    }
    return 0;
}

const char *mdl_torch_bwd_name(enum mdl_torch_bwd m)
{
    return m == MDL_TORCH_BWD_RANGES ? "ranges" : m == MDL_TORCH_BWD_SEQUENCE ? "sequence"
                                                                             : "none";
}

static int build(struct ctx *c, const struct mdl_torch_opts *o, struct mdl_profile **out,
                 struct mdl_torch_report *rep)
{
    int rc = 0;
    qsort(c->ev, c->n, sizeof *c->ev, cmp_ev);
    size_t *tb = calloc((size_t)c->n_threads + 1, sizeof *tb);
    int64_t *ag_ts = malloc((c->n ? c->n : 1) * sizeof *ag_ts);
    int64_t *ag_end = malloc((c->n ? c->n : 1) * sizeof *ag_end);
    if (!tb || !ag_ts || !ag_end) {
        rc = ps_error(PS_ENOMEM, "out of memory reading %s", c->path);
        goto out_free;
    }
    for (size_t i = 0; i < c->n; i++)
        tb[c->ev[i].thr + 1] = i + 1;
    for (int th = 1; th <= c->n_threads; th++)
        if (tb[th] < tb[th - 1])
            tb[th] = tb[th - 1];
    int has_seq = 0, has_bwd = 0, has_ag = 0;
    for (int th = 0; th < c->n_threads && rc == 0; th++)
        rc = mdl_torch_classify(c, tb[th], tb[th + 1], ag_ts, ag_end, &rep->n_recompute);
    if (rc < 0)
        goto out_free;
    for (size_t i = 0; i < c->n; i++) {
        has_seq |= c->ev[i].type == EV_OP && c->ev[i].seq >= 0;
        has_ag |= c->ev[i].type == EV_AUTOGRAD;
    }
    for (int l = 0; l < c->n_layers; l++)
        has_bwd |= c->layers[l].n_bwd > 0;
    if (!c->n_layers) {
        rc = ps_error(PS_EPARSE, "%s: no layer ranges (record_function(\"%s<name>\") "
                       "around each layer's forward)", c->path, c->prefix);
        goto out_free;
    }
    for (int l = 0; l < c->n_layers; l++) {
        if (!c->layers[l].n_fwd) {
            rc = ps_error(PS_EPARSE, "%s: layer '%s' has no forward range", c->path,
                           c->layers[l].name);
            goto out_free;
        }
        if (has_bwd && !c->layers[l].n_bwd) {
            rc = ps_error(PS_EPARSE, "%s: layer '%s' has no backward range (other layers "
                           "do)", c->path, c->layers[l].name);
            goto out_free;
        }
    }
    rep->method = has_bwd ? MDL_TORCH_BWD_RANGES
                          : has_seq && has_ag ? MDL_TORCH_BWD_SEQUENCE : MDL_TORCH_BWD_NONE;
    /* a backward nothing attributes (helper-139: bwd written 2 x fwd, "no
     * backward in the trace", over a real one) */
    if (has_ag && rep->method == MDL_TORCH_BWD_NONE) {
        rc = ps_error(PS_EPARSE, "%s: the trace has a backward pass (autograd functions) but "
                       "no backward layer ranges, and no forward op with a sequence number, "
                       "to attribute it by: "
                       "wrap each layer's backward in record_function(\"%s<name>\") too "
                       "(scripts/make_torch_trace.py), or profile with Kineto, whose ops carry "
                       "them", c->path, c->prefix);
        goto out_free;
    }
    /* sequence numbers on forward ops but no autograd function: a forward-only
     * Kineto trace (helper-126: every backward was 0 ms, exit 0) */
    if (rep->method == MDL_TORCH_BWD_SEQUENCE &&
        (rc = mdl_torch_by_sequence(c, tb, &rep->unattributed_us, &rep->n_ambiguous)) < 0)
        goto out_free;
    /* order by first forward (events' layer ids are not used past here) */
    qsort(c->layers, (size_t)c->n_layers, sizeof *c->layers, cmp_first);
    if ((rc = check_steps(c, has_bwd, rep)) < 0)
        goto out_free;
    rep->n_layers = c->n_layers;
    rep->unattributed_us /= rep->steps;
    double batch = o->batch;
    char sizes[512] = "";
    if (o->sizes_path)
        snprintf(sizes, sizeof sizes, "%s", o->sizes_path);
    else
        default_sizes(c->path, sizes, sizeof sizes);
    char origin[1200];
    snprintf(origin, sizeof origin, "import-torch %s: %d step%s, backward by %s%s%s", c->path,
             rep->steps, rep->steps == 1 ? "" : "s", mdl_torch_bwd_name(rep->method),
             *sizes ? ", sizes from " : "", sizes);
    struct mdl_profile *p = mdl_profile_new(origin, 1);
    if (!p) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out_free;
    }
    for (int l = 0; l < c->n_layers && rc == 0; l++) {
        const struct layer_acc *a = &c->layers[l];
        /* divided by 1e6, not multiplied by 1e-6 (not a double): 100 us is the
         * double nearest 1e-4 s, written 0.1 ms, not 0.09999999999999999 */
        struct mdl_layer ml = { .fwd = a->fwd_us / rep->steps / 1e6 };
        ml.bwd = rep->method == MDL_TORCH_BWD_NONE ? 2 * ml.fwd : a->bwd_us / rep->steps / 1e6;
        snprintf(ml.name, sizeof ml.name, "%s", a->name);
        rep->fwd_us += a->fwd_us / rep->steps;
        rep->bwd_us += rep->method == MDL_TORCH_BWD_NONE ? 0 : a->bwd_us / rep->steps;
        rc = mdl_profile_add(p, &ml);
    }
    if (rc == 0 && *sizes)
        rc = apply_sizes(c, sizes, p, &batch);
    if (rc == 0 && !(batch > 0))
        rc = ps_error(PS_EUSAGE, "%s: the batch size is unknown: give --batch N or a sizes "
                       "sidecar with at_batch", c->path);
    if (rc < 0) {
        mdl_profile_free(p);
        goto out_free;
    }
    for (int l = 0; l < p->n_layers; l++)
        p->layers[l].at_batch = batch;
    snprintf(rep->sizes, sizeof rep->sizes, "%s", sizes);
    *out = p;
out_free:
    free(ag_end);
    free(ag_ts);
    free(tb);
    return rc;
}

int mdl_torch_import(const char *trace_path, const struct mdl_torch_opts *o,
                     struct mdl_profile **out, struct mdl_torch_report *rep)
{
    *out = NULL;
    memset(rep, 0, sizeof *rep);
    struct ctx c = { .path = trace_path, .prefix = o->prefix ? o->prefix : "layer:" };
    c.plen = strlen(c.prefix);
    if (!c.plen)
        return ps_error(PS_EUSAGE, "--prefix must not be empty");
    if (o->batch < 0)
        return ps_error(PS_EUSAGE, "--batch must be > 0, got %g", o->batch);
    struct stat sb;
    if (!stat(trace_path, &sb) && S_ISREG(sb.st_mode)) {
        char what[600], detail[96], sz[32];
        ps_mem_format((double)sb.st_size, sz, sizeof sz);
        snprintf(what, sizeof what, "%s", trace_path);
        snprintf(detail, sizeof detail, "the %s trace held as a JSON document, about %.0f x its "
                 "size", sz, TORCH_PEAK_FACTOR);
        int rc = ps_mem_check((double)sb.st_size * TORCH_PEAK_FACTOR, what, detail,
                               "import a trace of fewer steps, or set " PS_MEM_ENV
                               " to override the check");
        if (rc < 0)
            return rc;
    }
    /* read whole, as every input is (ps_read_file: recorded as an input, a
     * device or pipe stops at 1 GiB); it read 3 bytes for a byte-order mark
     * and rewound, which a pipe cannot: their 3 bytes were lost */
    char *text;
    size_t len;
    int rrc = ps_read_file(trace_path, &text, &len);
    if (rrc < 0)
        return rrc;
    size_t bom = ps_bom_len(text, len); /* a UTF-8 byte-order mark is skipped */
    json_error_t jerr;
    ps_json_begin();
    /* a key twice in an object is an error at the second (helper-106: the last
     * value was read, and an error in it was put at the first) */
    json_t *root = json_loadb(text + bom, len - bom,
                              JSON_DECODE_INT_AS_REAL | JSON_REJECT_DUPLICATES, &jerr);
    if (ps_json_oom()) { /* a syntax error to jansson, or a document missing a byte */
        json_decref(root);
        free(text);
        return ps_error(PS_ENOMEM, "%s: out of memory parsing JSON", trace_path);
    }
    if (!root) {
        free(text);
        return ps_json_parse_error(trace_path, len - bom, jerr.line, jerr.column, jerr.text);
    }
    int rc = 0;
    const json_t *arr = json_is_array(root) ? root : json_object_get(root, "traceEvents");
    if (!json_is_array(arr)) {
        rc = ps_error(PS_EPARSE, "%s: not a Chrome trace (no event array or "
                       "\"traceEvents\")", trace_path);
        goto out_free;
    }
    /* errors name the JSON path; add the line and column it is on. Paths
     * start "traceEvents[i]" either way: in a bare event array that name is
     * the root's (without the alias every error there was put at 1:1) */
    const char *alias = arr == root ? "traceEvents" : NULL;
    if ((rc = ps_json_error_at(mdl_torch_read_events(&c, arr), trace_path, text + bom, len - bom,
                               alias)) < 0)
        goto out_free;
    rc = ps_json_error_at(build(&c, o, out, rep), trace_path, text + bom, len - bom, alias);
out_free:
    for (int i = 0; i < c.n_threads; i++)
        free(c.threads[i]);
    free(c.threads);
    free(c.layers);
    free(c.thread_map.slot);
    free(c.layer_map.slot);
    free(c.ev);
    json_decref(root);
    free(text);
    return rc;
}
