/*
 * fuzz_common — shared checks for the libFuzzer targets in tests/fuzz/.
 *
 * Every target feeds its input to one parser and then holds the tool to its
 * contract: either success with a fully valid object, or a negative PS_E*
 * code with one non-empty message line that names the input. Anything else
 * (a crash, a sanitizer report, a leak, a broken invariant) aborts, which
 * libFuzzer records as a finding. Build: `make fuzz` (clang, build/fuzz).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ana_predict.h"
#include "sched/sch_partitioner.h"
#include "base/ps_error.h"

#define FUZZ_CHECK(c)                                                          \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "fuzz invariant failed at %s:%d: %s (last error: %s)\n", \
                    __FILE__, __LINE__, #c, ps_errmsg());                     \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* A failed call: code in range, message one non-empty line naming `name`. */
static inline void fuzz_check_error(int rc, const char *name)
{
    FUZZ_CHECK(rc < 0 && -rc < PS_NERR);
    FUZZ_CHECK(ps_errcode() == -rc);
    const char *m = ps_errmsg();
    FUZZ_CHECK(*m);
    FUZZ_CHECK(!strchr(m, '\n'));
    if (name && -rc != PS_ENOMEM)
        FUZZ_CHECK(strstr(m, name) != NULL);
}

static inline int fuzz_finite_nonneg(double v) { return isfinite(v) && v >= 0; }

/* A small prediction on a loaded profile and topology: must succeed or fail
 * cleanly, and a success must carry finite, non-negative figures. */
static inline void fuzz_predict(const struct mdl_profile *p, const struct mdl_topology *t,
                                int K, int M, enum sch_remat remat)
{
    struct ana_config c = { .profile = p, .topo = t, .schedule = "gpipe", .K = K, .M = M,
                            .batch = 2.0 * M, .remat = remat };
    struct ana_prediction *pr = NULL;
    int rc = ana_predict(&c, &pr);
    if (rc < 0) {
        fuzz_check_error(rc, NULL);
        FUZZ_CHECK(pr == NULL);
        return;
    }
    FUZZ_CHECK(fuzz_finite_nonneg(pr->step_s));
    FUZZ_CHECK(fuzz_finite_nonneg(pr->baseline_step_s));
    FUZZ_CHECK(pr->bubble_sim >= -1e-12 && pr->bubble_sim <= 1 + 1e-12);
    for (int s = 0; s < pr->n_stages; s++) {
        FUZZ_CHECK(pr->stages[s].peak_mem >= 0);
        FUZZ_CHECK(pr->stages[s].peak_act >= 0);
        FUZZ_CHECK(pr->stages[s].static_mem >= 0);
        FUZZ_CHECK(fuzz_finite_nonneg(pr->stages[s].fwd_s));
        FUZZ_CHECK(fuzz_finite_nonneg(pr->stages[s].bwd_s));
    }
    ana_prediction_free(pr);
}

/* Every partition strategy on a loaded profile and topology (capped by the
 * devices' memory): a valid partition or a clean error. */
static inline void fuzz_partition(const struct mdl_profile *p, const struct mdl_topology *t,
                                  int S, int M)
{
    struct sch_part_opts o = { .n_stages = S, .n_micro = M, .micro_batch = 2,
                               .remat = SCH_REMAT_EXCEPT_LAST, .cap_mode = 1 };
    sch_part_model *m = NULL;
    int rc = sch_part_model_new(p, t, &o, &m);
    if (rc < 0) {
        fuzz_check_error(rc, NULL);
        return;
    }
    for (int k = 0; k < SCH_PART_NSTRATEGIES; k++) {
        struct sch_partition *part = NULL;
        rc = sch_part_strategy_run(m, (enum sch_part_strategy)k, &part);
        if (rc < 0) {
            fuzz_check_error(rc, NULL);
            continue;
        }
        FUZZ_CHECK(part->n_stages == S && part->first[0] == 0 &&
                   part->first[S] == p->n_layers);
        for (int s = 0; s < S; s++)
            FUZZ_CHECK(part->first[s + 1] > part->first[s]);
        sch_partition_free(part);
    }
    sch_part_model_free(m);
}

#endif
