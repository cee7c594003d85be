/*
 * stu_paper_text — the prose of the reproduction files: what each table
 * does, its policies, and the note on every deviation over 10 %, with the
 * figures they cite passed in from the runs. Internal to analysis/.
 */
#ifndef STU_PAPER_TEXT_H
#define STU_PAPER_TEXT_H

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
    int fits[2][3];
};

/* The partition candidates of partitions.md, in table order. */
enum { STU_P_UNIFORM, STU_P_GPIPE, STU_P_PREFIX, STU_P_TORCHGPIPE, STU_P_MINMAX, STU_P_OPTIMAL,
       STU_P_RANKED, STU_NCAND };

struct stu_parts_facts {
    double speedup[3][STU_NCAND], bottleneck_ms[3][STU_NCAND], step_ms[3][STU_NCAND];
    char spec[3][STU_NCAND][256];                           /* [M][candidate] */
};

extern const char stu_paper_t2_gnuplot[];
/* The Table 3 script; with_paper adds the paper's lines. */
void stu_paper_t3_gnuplot(FILE *f, int with_paper);

void stu_paper_t2_intro(FILE *f);
void stu_paper_t2_notes(FILE *f, const struct stu_t2_facts *x);
void stu_paper_t3_intro(FILE *f);
void stu_paper_t3_notes(FILE *f, const struct stu_t3_facts *x);
void stu_paper_parts_intro(FILE *f);
void stu_paper_parts_notes(FILE *f, const struct stu_parts_facts *x);

#endif
