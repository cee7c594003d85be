/*
 * ana_paper_text — the prose of the reproduction files: what each table
 * does, its policies, and the note on every deviation over 10 %, with the
 * figures they cite passed in from the runs. Internal to analysis/.
 */
#ifndef ANA_PAPER_TEXT_H
#define ANA_PAPER_TEXT_H

#include <stdio.h>

struct ana_t2_facts {
    double norm[2][3][3], paper[2][3][3], batch[2][3][3]; /* [model][M][K] */
    int fits[2][3][3];
    double recomp_max[2];                                  /* largest share */
    double imbalance[2][3];                                /* [model][K] at M = 32 */
};

struct ana_t3_facts {
    double norm[2][3], paper[2][3], bubble[2][3], analytic[2][3]; /* [model][K] */
    double link_s[2][3], step_s[2][3];  /* all transfers of a step, serialized */
    double norm_dedicated[2][3];        /* the same with a link per stage pair */
    int fits[2][3];
};

/* The partition candidates of partitions.md, in table order. */
enum { ANA_P_UNIFORM, ANA_P_GPIPE, ANA_P_PREFIX, ANA_P_TORCHGPIPE, ANA_P_MINMAX, ANA_P_OPTIMAL,
       ANA_P_RANKED, ANA_NCAND };

struct ana_parts_facts {
    double speedup[3][ANA_NCAND], bottleneck_ms[3][ANA_NCAND], step_ms[3][ANA_NCAND];
    char spec[3][ANA_NCAND][256];                           /* [M][candidate] */
};

extern const char ana_paper_t2_gnuplot[];
/* The Table 3 script; with_paper adds the paper's lines. */
void ana_paper_t3_gnuplot(FILE *f, int with_paper);

void ana_paper_t2_intro(FILE *f);
void ana_paper_t2_notes(FILE *f, const struct ana_t2_facts *x);
void ana_paper_t3_intro(FILE *f);
void ana_paper_t3_notes(FILE *f, const struct ana_t3_facts *x);
void ana_paper_parts_intro(FILE *f);
void ana_paper_parts_notes(FILE *f, const struct ana_parts_facts *x);

#endif
