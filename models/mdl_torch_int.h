/*
 * mdl_torch_int — what the files of the torch trace import share
 * (models/mdl_torch.h): the events read from the trace, the layers and
 * threads they name, and the two passes over them.
 *   mdl_torch.c         the import: the JSON document, the steps, the profile
 *   mdl_torch_events.c  complete events of the document into a struct ctx
 *   mdl_torch_attr.c    layer ranges to directions, backward time to layers
 * Ownership: a struct ctx owns ev, threads (and each name), layers and the
 * maps' slots; events borrow their names from the JSON document.
 */
#ifndef MDL_TORCH_INT_H
#define MDL_TORCH_INT_H

#include "models/mdl_torch.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum { EV_OP, EV_LAYER, EV_AUTOGRAD };
enum { DIR_FWD, DIR_BWD, DIR_RECOMP };

struct tev {
    int64_t ts, end;     /* nanoseconds */
    double seq;          /* "Sequence number", -1 if none */
    double tid;          /* its "tid" when a number, else -1 */
    double fwd_tid;      /* "Fwd thread id" (a backward's: its forward's tid), -1 if none */
    const char *name;    /* borrowed from the JSON document */
    size_t idx;          /* position in the file, for stable order and messages */
    int thr, type, layer, dir;
};

struct layer_acc {
    char name[MDL_NAME_MAX];
    int64_t first_fwd;   /* ts of its first forward range, ns */
    int64_t first_end;   /* its end: of two starting together, the shorter is first */
    double fwd_us, bwd_us;
    int n_fwd, n_bwd;
    int n_fwd_seq_bwd; /* by sequence: its forward ranges an autograd function names */
    int n_fwd_seq_own; /* and those that hold the last op of a number (the node maker) */
};

/* Names to indices by open addressing (slot: index + 1, 0 empty), so a
 * trace of many distinct layers or threads reads in linear time (a linear
 * search took 100 s for 200 000 layers). */
struct name_map {
    int *slot;
    size_t cap; /* a power of 2, at least twice the entries */
};

struct ctx {
    const char *path, *prefix;
    size_t plen;
    struct tev *ev;
    size_t n;
    char **threads;
    int n_threads;
    struct layer_acc *layers;
    int n_layers;
    struct name_map thread_map, layer_map;
};

/* Collects the complete events of the document into c->ev. O(E) for E
 * events. In mdl_torch_events.c. */
int mdl_torch_read_events(struct ctx *c, const json_t *arr);

/* Per thread [b, e): autograd start times and the running maximum of their
 * ends; classifies each layer range; rejects layer ranges of one direction
 * that are nested or overlap. Events sorted by thread, then start, longer
 * first (mdl_torch.c); ag_ts and ag_end hold e - b. O(n log n), n = e - b. */
int mdl_torch_classify(struct ctx *c, size_t b, size_t e, int64_t *ag_ts, int64_t *ag_end,
                       int *n_recomp);

/* Backward by sequence numbers: see mdl_torch.h. Adds to layers' bwd_us and
 * *unattr; counts in *ambiguous the functions whose number several threads'
 * makers carry; and for check_steps, of each forward range that holds a node
 * maker (n_fwd_seq_own), whether a function named one of them
 * (n_fwd_seq_bwd): a trace cut after a step's forward leaves a step's ranges
 * unnamed. Not the earliest node's function alone (helper-144: a node the
 * loss never reaches, a statistic for monitoring, has none), so a cut inside
 * one layer's backward passes. tb[th] .. tb[th + 1]: thread th's events,
 * sorted as for mdl_torch_classify, which set each range's direction.
 * O(E log E). In mdl_torch_attr.c. */
int mdl_torch_by_sequence(struct ctx *c, const size_t *tb, double *unattr, int *ambiguous);

#endif
