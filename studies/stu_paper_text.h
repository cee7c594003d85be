/*
 * stu_paper_text — the prose of the reproduction files, read from the
 * templates <data>/text/<output> (stu_tmpl.h): the sections each must have,
 * and the notes on the deviations, which choose sections and fill them with
 * the figures passed in from the runs. Internal to studies/.
 */
#ifndef STU_PAPER_TEXT_H
#define STU_PAPER_TEXT_H

#include "studies/stu_tmpl.h"

#include <stdio.h>

struct stu_t2_facts {
    double norm[2][3][3], paper[2][3][3], batch[2][3][3]; /* [model][M][K] */
    int fits[2][3][3];
    double recomp_max[2];                                  /* largest share */
    double imbalance[2][3];                                /* [model][K] at M = 32 */
};

struct stu_t3_facts {
    double norm[2][3], paper[2][3], bubble[2][3], analytic[2][3]; /* [model][K] */
    double link_s[2][3], step_s[2][3];  /* all transfers of a step, serialized */
    double norm_dedicated[2][3];        /* the same with a link per stage pair */
    double imbalance[2][3];             /* slowest stage's compute / mean - 1 */
    int fits[2][3];
};

/* The partition candidates of partitions.md, in table order. */
enum { STU_P_UNIFORM, STU_P_LINGVO, STU_P_GPIPE, STU_P_PREFIX, STU_P_TORCHGPIPE, STU_P_MINMAX,
       STU_P_OPTIMAL, STU_P_RANKED, STU_NCAND };

struct stu_parts_facts {
    double speedup[3][STU_NCAND], bottleneck_ms[3][STU_NCAND], step_ms[3][STU_NCAND];
    char spec[3][STU_NCAND][256];                           /* [M][candidate] */
};

/* The sections of text/table1.md, table2.md, table3.md, partitions.md,
 * table2.gp, table3.gp, and the placeholders each may use. */
#define STU_T1_NTEXT 3
#define STU_T2_NTEXT 6
#define STU_T3_NTEXT 13
#define STU_PARTS_NTEXT 4
extern const struct stu_tmpl_sect stu_t1_text[STU_T1_NTEXT], stu_t2_text[STU_T2_NTEXT],
    stu_t3_text[STU_T3_NTEXT], stu_parts_text[STU_PARTS_NTEXT], stu_t2gp_text[1],
    stu_t3gp_text[3];

/* From the "Deviations" heading to the end of the file (tables and notes). */
void stu_paper_t2_notes(FILE *f, const stu_tmpl *tx, const struct stu_t2_facts *x);
void stu_paper_t3_notes(FILE *f, const stu_tmpl *tx, const struct stu_t3_facts *x);
/* The paragraphs after the candidates table. */
void stu_paper_parts_notes(FILE *f, const stu_tmpl *tx, const struct stu_parts_facts *x);

#endif
