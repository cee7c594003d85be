/* The reference figures' CSV files (see stu_ref.h): a loader per table on
 * the strict reader of stu_csv.h (header by name, fields by column). */
#include "studies/stu_ref.h"
#include "studies/stu_csv.h"
#include "studies/stu_torchgpipe.h"
#include "base/ps_csv.h"
#include "base/ps_error.h"
#include "base/ps_util.h"
#include "models/mdl_amoeba.h"
#include "models/mdl_transformer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const models[2] = { "AmoebaNet-D", "Transformer" };
static const char *const Ks[3] = { "2", "4", "8" }, *const Ms[3] = { "1", "4", "32" };

static int load_t1(const char *dir, struct stu_ref *r)
{
    static const char *const cols[] = { "model", "column", "K", "L", "D", "params",
                                        "param_memory", "peak_activation_memory", "unit" };
    static const char *const units[] = { "GB", "GiB" };
    struct stu_csv c;
    int n[2] = { 0, 0 }, rc = stu_csv_open(&c, dir, "table1.csv", cols, 9);
    if (rc < 0)
        return rc;
    while ((rc = stu_csv_row(&c)) > 0) {
        int m, u;
        if ((rc = stu_csv_key(&c, 0, models, 2, &m)) < 0)
            break;
        if (n[m] == STU_REF_NCOL) {
            rc = ps_error(PS_EPARSE, "%s:%d: more than %d rows for %s", c.path, c.line,
                          STU_REF_NCOL, models[m]);
            break;
        }
        struct stu_ref_t1 *t = &r->t1[m][n[m]++];
        double unit;
        if ((rc = stu_csv_whole(&c, 2, 1, 1 << 20, &t->K)) < 0 || (rc = stu_csv_whole(&c, 3, 1, 1 << 20, &t->L)) < 0 ||
            (rc = stu_csv_whole(&c, 4, 0, 1 << 20, &t->D)) < 0 || (rc = stu_csv_pos(&c, 5, 0, &t->params)) < 0 ||
            (rc = stu_csv_pos(&c, 6, 0, &t->pmem)) < 0 || (rc = stu_csv_pos(&c, 7, 0, &t->act)) < 0 ||
            (rc = stu_csv_key(&c, 8, units, 2, &u)) < 0)
            break;
        /* The column is the paper's name: Naive-K or Pipeline-K. */
        char want[2][32];
        snprintf(want[0], sizeof want[0], "Naive-%d", t->K);
        snprintf(want[1], sizeof want[1], "Pipeline-%d", t->K);
        const char *name = stu_csv_field(&c, 1);
        if (strcmp(name, want[0]) && strcmp(name, want[1])) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'column': '%s' is neither %s nor %s (K = "
                          "%d)", c.path, c.line, c.colno[c.idx[1]], name, want[0], want[1],
                          t->K);
            break;
        }
        if ((m == 0) != (t->D > 0)) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'D': %s", c.path, c.line,
                          c.colno[c.idx[4]], m ? "must be 0 for the Transformer"
                                               : "must be > 0 for AmoebaNet-D");
            break;
        }
        /* what the generators build (models/mdl_amoeba.h, mdl_transformer.h), and
         * K stages of at least a layer each (AmoebaNet: L + 6 layers, Transformer:
         * L + 2), here with the line, not as a generator's error after work */
        if (m == 0 && (t->L < MDL_AMOEBA_L_MIN || t->L % 3 || t->L > MDL_AMOEBA_L_MAX)) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'L': must be a multiple of 3 in [%d, %d] "
                          "(AmoebaNet-D's L/3 normal cells per stack), got %d", c.path, c.line,
                          c.colno[c.idx[3]], MDL_AMOEBA_L_MIN, MDL_AMOEBA_L_MAX, t->L);
            break;
        }
        if (m == 0 && (t->D < MDL_AMOEBA_D_MIN || t->D % 8 || t->D > MDL_AMOEBA_D_MAX)) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'D': must be a multiple of 8 in [%d, %d] "
                          "for AmoebaNet-D, got %d", c.path, c.line, c.colno[c.idx[4]],
                          MDL_AMOEBA_D_MIN, MDL_AMOEBA_D_MAX, t->D);
            break;
        }
        if (m == 1 && t->L > MDL_TRANSFORMER_L_MAX) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'L': at most %d Transformer layers, got "
                          "%d", c.path, c.line, c.colno[c.idx[3]], MDL_TRANSFORMER_L_MAX, t->L);
            break;
        }
        if (t->K > t->L + (m == 0 ? 6 : 2)) {
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'K': %d stages of a model of %d layers "
                          "(each stage needs one)", c.path, c.line, c.colno[c.idx[2]], t->K,
                          t->L + (m == 0 ? 6 : 2));
            break;
        }
        for (int j = 0; j < n[m] - 1 && rc == 0; j++)
            if (!strcmp(r->t1[m][j].name, name))
                rc = ps_error(PS_EPARSE, "%s:%d: a second row for %s %s (line %d)", c.path,
                              c.line, models[m], name, r->t1[m][j].line);
        if (rc < 0)
            break;
        t->line = c.line;
        /* past these the paper's 12 B per parameter and the GB columns overflow
         * ("inf GB" in table1.md) */
        if (t->params > 1e15 || t->pmem > 1e9 || t->act > 1e9) {
            rc = ps_error(PS_EPARSE, "%s:%d: field '%s': %g is out of range (params at most "
                          "1e15, memory at most 1e9 %s)", c.path, c.line,
                          t->params > 1e15 ? "params" : t->pmem > 1e9 ? "param_memory"
                                                                      : "peak_activation_memory",
                          t->params > 1e15 ? t->params : t->pmem > 1e9 ? t->pmem : t->act,
                          units[u]);
            break;
        }
        snprintf(t->name, sizeof t->name, "%s", name);
        t->naive = name[0] == 'N';
        unit = u ? 1073741824.0 : 1e9;
        t->pmem *= unit;
        t->act *= unit;
    }
    if (rc == 0)
        rc = stu_csv_rows_end(&c, 2 * STU_REF_NCOL, "Table 1 (5 columns per model)");
    snprintf(r->t1_path, sizeof r->t1_path, "%s", c.path);
    stu_csv_close(&c);
    return rc;
}

/* A published ratio (normalized throughput, speed-up): > 0, in its range
 * (stu_ref.h), or NA where na_ok. */
static int ratio(const struct stu_csv *c, int k, int na_ok, double *v)
{
    int rc = stu_csv_pos(c, k, na_ok, v);
    if (rc == 0)
        rc = stu_csv_range_na(c, k, STU_REF_RATIO_MIN, STU_REF_RATIO_MAX, v);
    return rc;
}

/* Tables 2 and 3: model, M, K, throughput. */
static int load_tput(const char *dir, const char *name, int t3, struct stu_ref *r)
{
    static const char *const cols[] = { "model", "M", "K", "throughput" };
    struct stu_csv c;
    int seen[2][3][3] = { { { 0 } } }, rc = stu_csv_open(&c, dir, name, cols, 4);
    if (rc < 0)
        return rc;
    while ((rc = stu_csv_row(&c)) > 0) {
        int m, j, k;
        double v;
        if ((rc = stu_csv_key(&c, 0, models, 2, &m)) < 0 ||
            (rc = stu_csv_key(&c, 1, t3 ? Ms + 2 : Ms, t3 ? 1 : 3, &j)) < 0 ||
            (rc = stu_csv_key(&c, 2, Ks, 3, &k)) < 0 ||
            (rc = ratio(&c, 3, t3, &v)) < 0)
            break;
        /* normalized to K = 2 (Table 3) or K = 2, M = 1 (Table 2): that cell is 1 */
        if (k == 0 && (t3 || j == 0) && v != 1 && !(t3 && isnan(v))) { /* or NA */
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'throughput': %g, but the table is "
                          "normalized to this cell (K = 2%s), which is 1", c.path, c.line,
                          c.colno[c.idx[3]], v, t3 ? "" : ", M = 1");
            break;
        }
        char what[64];
        snprintf(what, sizeof what, "%s M = %s K = %s", models[m], stu_csv_field(&c, 1), Ks[k]);
        if ((rc = stu_csv_dup(&c, &seen[m][j][k], what)) < 0)
            break;
        if (t3)
            r->t3[m][k] = v;
        else
            r->t2[m][j][k] = v;
    }
    if (rc == 0)
        rc = stu_csv_rows_end(&c, t3 ? 6 : 18, t3 ? "Table 3 (2 models x K 2, 4, 8)"
                                          : "Table 2 (2 models x M 1, 4, 32 x K 2, 4, 8)");
    stu_csv_close(&c);
    return rc;
}

static int load_tg(const char *dir, struct stu_ref *r)
{
    static const char *const cols[] = { "K", "M", "speedup", "balance" };
    struct stu_csv c;
    int seen[3][3] = { { 0 } }, rc = stu_csv_open(&c, dir, "torchgpipe.csv", cols, 4);
    if (rc < 0)
        return rc;
    while ((rc = stu_csv_row(&c)) > 0) {
        int k, j;
        if ((rc = stu_csv_key(&c, 0, Ks, 3, &k)) < 0 || (rc = stu_csv_key(&c, 1, Ms, 3, &j)) < 0 ||
            (rc = ratio(&c, 2, 0, &r->tg_speedup[k][j])) < 0)
            break;
        char what[32];
        snprintf(what, sizeof what, "K = %s M = %s", Ks[k], Ms[j]);
        if ((rc = stu_csv_dup(&c, &seen[k][j], what)) < 0)
            break;
        /* "2 2 3" -> "2,2,3": K positive layer counts (torchgpipe's n) */
        char *b = r->tg_balance[k][j];
        int total;
        if (rc == 0)
            rc = stu_tg_balance(&c, 3, atoi(Ks[k]), "K", b, sizeof r->tg_balance[k][j], &total);
        /* every row's, used or not: AmoebaNet-D (18, 256) has L + 6 = 24 layers */
        if (rc == 0 && total != 24)
            rc = ps_error(PS_EPARSE, "%s:%d:%d: field 'balance': %d layers; AmoebaNet-D "
                          "(18, 256) has L + 6 = 24", c.path, c.line, c.colno[c.idx[3]], total);
        if (rc < 0)
            break;
    }
    if (rc == 0)
        rc = stu_csv_rows_end(&c, 9, "torchgpipe's table (K 2, 4, 8 x M 1, 4, 32)");
    stu_csv_close(&c);
    return rc;
}

int stu_ref_load(const char *dir, struct stu_ref *r)
{
    memset(r, 0, sizeof *r);
    int rc;
    if ((rc = load_t1(dir, r)) < 0 || (rc = load_tput(dir, "table2.csv", 0, r)) < 0 ||
        (rc = load_tput(dir, "table3.csv", 1, r)) < 0 || (rc = load_tg(dir, r)) < 0)
        return rc;
    return 0;
}
