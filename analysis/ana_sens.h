/*
 * ana_sens — how a prediction depends on each hardware figure: the
 * step's elasticity to each knob of the device and link model, and the
 * factor on one knob that alone would move a figure to a given value.
 *
 * A knob scales one figure of every device (or link) of a topology by a
 * factor f, the others untouched:
 *   matrix    the matrix peak of the running precision (op-level devices:
 *             matrix_flops, or "flops" where it is absent); legacy devices
 *             (models/mdl_topology.h) their "flops", which time all work
 *   vector    the vector/elementwise peak (op-level devices only)
 *   memory    mem_bandwidth: memory-bound kernels and the optimizer update
 *   overhead  the fixed cost per kernel (kernel_overhead_s) or per op
 *             (a legacy device's overhead_s)
 *   link_bw   every link's bandwidth
 *   latency   every link's latency and per-message overhead
 * A profile of measured times keeps them on any device (mdl_layer_seconds),
 * so the device knobs move only its update. Each figure is materialized
 * before it is scaled (a vector peak that falls back to "flops" is set to
 * that value), so a knob never moves another's figure.
 *
 * Elasticity: d ln(value) / d ln(knob), by the central difference at
 * f = 1 +- rel: -1 for a value that is all matrix work, 0 for a knob that
 * does not touch the value's critical path (and for a value of 0, which no
 * figure moves: a step of no work and no link). A simulated step is piecewise
 * linear in its durations (a max over paths of sums), so at a kink the
 * difference mixes the slopes on either side.
 * Solve: the factor on one knob at which the value equals a target, by
 * bisection on ln f within [1/64, 64] to 1e-6 relative in f, from ends
 * whose values bracket the target (else NaN: no factor in the range
 * reaches it). A value need not be monotone in a knob (a shared link's
 * FIFO order, or zb-auto's order fitted to the costs, can change with the
 * durations); bisection then finds one crossing, and a jump over the
 * target is not one: the value at the factor found must be within
 * ANA_SOLVE_CHECK of the target, else NaN.
 * zb-auto fits its order to the scaled costs on every evaluation, as it
 * would on that hardware; every other schedule keeps its lists.
 * A diagnostic: what the prediction needs of one figure, never applied.
 *
 * Ownership: ana_topo_scaled fills a caller's struct that owns copies of
 * the devices and links (ana_topo_scaled_free); the path, switches and
 * link end lists stay the source's, which must outlive it. Cost: an
 * elasticity is two evaluations, a solve about 26.
 */
#ifndef ANA_SENS_H
#define ANA_SENS_H

#include "analysis/ana_predict.h"
#include "models/mdl_topology.h"

enum ana_knob {
    ANA_KNOB_MATRIX,
    ANA_KNOB_VECTOR,
    ANA_KNOB_MEMORY,
    ANA_KNOB_OVERHEAD,
    ANA_KNOB_LINK_BW,
    ANA_KNOB_LATENCY,
    ANA_KNOB_N
};

/* "matrix", "vector", ...: the JSON and CSV names. */
extern const char *const ana_knob_names[ANA_KNOB_N];
/* "matrix peak", "memory bandwidth", ...: for tables. */
extern const char *const ana_knob_titles[ANA_KNOB_N];

struct ana_topo_scaled {
    struct mdl_topology t; /* points at the copies below */
    struct mdl_device *dev;
    struct mdl_link *links;
};

/* out = src with knob k's figure times f (f > 0, finite). */
int ana_topo_scaled(const struct mdl_topology *src, enum ana_knob k, double f,
                    struct ana_topo_scaled *out);
void ana_topo_scaled_free(struct ana_topo_scaled *s);

/* A value computed on a topology (a step, an epoch's time, samples/s). */
typedef int (*ana_sens_eval)(void *ctx, const struct mdl_topology *t, double *value);

/* The value's elasticity to knob k at t (rel in (0, 0.5)). */
int ana_elasticity(const struct mdl_topology *t, enum ana_knob k, double rel, ana_sens_eval eval,
                   void *ctx, double *e);
/* The factor on knob k at which eval gives target (NaN: none in range, or
 * a jump over it). */
#define ANA_SOLVE_CHECK 1e-3
int ana_knob_solve(const struct mdl_topology *t, enum ana_knob k, double target,
                   ana_sens_eval eval, void *ctx, double *factor);

/* A configuration's step time on t (c's topology replaced; no baseline, no
 * trace, no draws): the evaluation `pipesim predict --sensitivity` uses,
 * ctx a const struct ana_config *. The partition stays c's. */
int ana_sens_step(void *ctx, const struct mdl_topology *t, double *step_s);
/* Every knob's elasticity of c's step into e (rel = ANA_SENS_REL). */
#define ANA_SENS_REL 0.01
int ana_sensitivity(const struct ana_config *c, double e[ANA_KNOB_N]);

#endif
