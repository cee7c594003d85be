/* The prose of the reproduction files lives in <data>/text/ (stu_tmpl.h);
 * here: the sections each file must have, with the values each may use, and
 * the notes of Tables 2 and 3 and of the partitions, which choose sections
 * and format the figures they cite from the facts structs. */
#include "studies/stu_paper_int.h"
#include "studies/stu_paper_text.h"

#include <string.h>

const struct stu_tmpl_sect stu_t1_text[STU_T1_NTEXT] = {
    { "intro", "" },
    { "deviations", "" },
    { "notes", "a_stash_mb t_stash_mib a_paper_mb t_paper_mib a_ratio t_ratio a_bf16 t_bf16 "
               "b_images b_amoeba b_amoeba_paper b_tf b_tf_paper b_tf_p1 c_columns c_ratio" },
};

const struct stu_tmpl_sect stu_t2_text[STU_T2_NTEXT] = {
    { "intro", "" },
    { "plot", "" },
    { "deviations", "bound_cells" },
    { "over", "n" },
    { "under", "" },
    { "notes", "h_amoeba h_tf recomp_amoeba recomp_tf imb_amoeba imb_tf agree" },
};

const struct stu_tmpl_sect stu_t3_text[STU_T3_NTEXT] = {
    { "intro", "" },
    { "no_paper", "" },
    { "policy", "" },
    { "plot", "" },
    { "deviations", "" },
    { "deviations_table", "" },
    { "deviations_none", "" },
    { "note_imbalance", "a_imb t_imb bound8" },
    { "note_bus", "" },
    { "bus", "" },
    { "bus_notes", "a_link a_step a_busy bus_sets falls t_link t_step" },
    { "bus_sets", "" },
    { "falls", "k4 k8" },
};

const struct stu_tmpl_sect stu_parts_text[STU_PARTS_NTEXT] = {
    { "intro", "" },
    { "notes", "gpipe_spec gpipe_speedup optimal_spec optimal_speedup ranked_spec ranked_speedup "
               "uniform_speedup best_name best_spec best_ms minmax tg_ms minmax_ms" },
    { "minmax", "minmax_step ranked_step" },
    { "layers", "mb" },
};

const struct stu_tmpl_sect stu_t2gp_text[1] = { { "script", "" } };
const struct stu_tmpl_sect stu_t3gp_text[3] = { { "script", "paper_lines paper_note" },
                                                { "paper_lines", "" },
                                                { "no_paper_note", "" } };

static const char *const model2[2] = { "AmoebaNet-D (18, 256)", "Transformer-48" };
static const char *const model3[2] = { "AmoebaNet-D (18, 128)", "Transformer-24" };
static const int Ks[3] = { 2, 4, 8 }, Ms[3] = { 1, 4, 32 };

/* Throughput over K = 2, M = 1 when every sample costs the same in every
 * cell: only the bubble (K-1)/(M+K-1) changes. */
static double bound(int K, int M) { return (double)K * M / (M + K - 1); }

void stu_paper_t2_notes(FILE *f, const stu_tmpl *tx, const struct stu_t2_facts *x)
{
    int over = 0;
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                over += x->norm[m][j][k] > bound(Ks[k], Ms[j]) * (1 + 1e-9);
    struct stu_vals v, sub;
    stu_vals_init(&v);
    stu_vals_init(&sub);
    stu_vals_set(&sub, "n", "%d", over);
    stu_vals_text(&v, "bound_cells", tx, over ? "over" : "under", &sub);
    stu_tmpl_put(f, tx, "deviations", &v);
    char e[32];
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) {
                double pv = x->norm[m][j][k], vv = x->paper[m][j][k];
                if (!*stu_paper_flag(pv, vv))
                    continue;
                double b = bound(Ks[k], Ms[j]);
                const char *note = vv > b ? "F" : pv > vv ? "G" : "H";
                int nofit = !x->fits[m][j][k] || !x->fits[m][0][0];
                fprintf(f, "| %s | %d | %d | %g | %.2f | %.2f | %s | %s%s |\n", model2[m], Ms[j],
                        Ks[k], vv, b, pv, stu_paper_err(pv, vv, e, sizeof e), note,
                        nofit ? ", I" : "");
            }
    stu_vals_init(&v);
    stu_vals_set(&v, "h_amoeba", "%.1f", x->imbalance[0][2] * 100);
    stu_vals_set(&v, "h_tf", "%.1f", x->imbalance[1][2] * 100);
    stu_vals_set(&v, "recomp_amoeba", "%.1f", x->recomp_max[0] * 100);
    stu_vals_set(&v, "recomp_tf", "%.1f", x->recomp_max[1] * 100);
    stu_vals_set(&v, "imb_amoeba", "%.1f", x->imbalance[0][0] * 100);
    stu_vals_set(&v, "imb_tf", "%.1f", x->imbalance[1][0] * 100);
    char agree[1024] = "";
    int n = 0;
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                if ((j || k) && !*stu_paper_flag(x->norm[m][j][k], x->paper[m][j][k]))
                    snprintf(agree + strlen(agree), sizeof agree - strlen(agree),
                             "%s %s M = %d, K = %d", n++ ? "," : "", model2[m], Ms[j], Ks[k]);
    stu_vals_set(&v, "agree", "%s", n ? agree : " none");
    stu_tmpl_put(f, tx, "notes", &v);
}

/* Table 3's bound: the pipeline's gain at M = 32 over K = 2's. */
static double bound3(int K) { return bound(K, 32) / bound(2, 32); }

void stu_paper_t3_notes(FILE *f, const stu_tmpl *tx, const struct stu_t3_facts *x)
{
    char e[32];
    int any = 0, any_imb = 0, any_bus = 0;
    stu_tmpl_put(f, tx, "deviations", NULL);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 3; k++)
            if (*stu_paper_flag(x->norm[m][k], x->paper[m][k])) {
                if (!any++)
                    stu_tmpl_put(f, tx, "deviations_table", NULL);
                /* L: a stage 10 % over the mean; B: a dedicated link per
                 * stage pair would give 5 % more */
                int imb = x->imbalance[m][k] >= 0.10;
                int bus = x->norm_dedicated[m][k] > x->norm[m][k] * 1.05;
                any_imb |= imb;
                any_bus |= bus;
                fprintf(f, "| %s | %d | %g | %.2f | %.2f | %s | %s%s%s |\n", model3[m], Ks[k],
                        x->paper[m][k], bound3(Ks[k]), x->norm[m][k],
                        stu_paper_err(x->norm[m][k], x->paper[m][k], e, sizeof e),
                        imb ? "L" : "", imb && bus ? ", " : "", bus ? "B" : imb ? "" : "—");
            }
    if (!any) {
        stu_tmpl_put(f, tx, "deviations_none", NULL);
    } else if (any_imb) {
        struct stu_vals n;
        stu_vals_init(&n);
        stu_vals_set(&n, "a_imb", "%.1f", x->imbalance[0][2] * 100);
        stu_vals_set(&n, "t_imb", "%.1f", x->imbalance[1][2] * 100);
        stu_vals_set(&n, "bound8", "%.2f", bound3(8));
        stu_tmpl_put(f, tx, "note_imbalance", &n);
    }
    if (any_bus)
        stu_tmpl_put(f, tx, "note_bus", NULL);
    stu_tmpl_put(f, tx, "bus", NULL);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 3; k++)
            fprintf(f, "| %s | %d | %.1f | %.1f | %.1f %% / %.1f %% | %.2f | %.2f |\n", model3[m],
                    Ks[k], x->link_s[m][k] * 1e3, x->step_s[m][k] * 1e3, x->bubble[m][k] * 100,
                    x->analytic[m][k] * 100, x->norm[m][k], x->norm_dedicated[m][k]);
    /* the busiest GPU's compute: the mean busy time, times its imbalance */
    double busy = x->step_s[0][2] * (1 - x->bubble[0][2]) * (1 + x->imbalance[0][2]);
    struct stu_vals v, sub;
    stu_vals_init(&v);
    stu_vals_init(&sub);
    stu_vals_set(&v, "a_link", "%.0f", x->link_s[0][2] * 1e3);
    stu_vals_set(&v, "a_step", "%.0f", x->step_s[0][2] * 1e3);
    stu_vals_set(&v, "a_busy", "%.0f", busy * 1e3);
    stu_vals_set(&v, "bus_sets", "%s", "");
    if (x->link_s[0][2] > busy)
        stu_vals_text(&v, "bus_sets", tx, "bus_sets", NULL);
    stu_vals_set(&v, "falls", "%s", "");
    stu_vals_set(&sub, "k4", "%.2f", x->norm[0][1]);
    stu_vals_set(&sub, "k8", "%.2f", x->norm[0][2]);
    if (x->norm[0][2] < x->norm[0][1])
        stu_vals_text(&v, "falls", tx, "falls", &sub);
    stu_vals_set(&v, "t_link", "%.0f", x->link_s[1][2] * 1e3);
    stu_vals_set(&v, "t_step", "%.0f", x->step_s[1][2] * 1e3);
    stu_tmpl_put(f, tx, "bus_notes", &v);
}

void stu_paper_parts_notes(FILE *f, const stu_tmpl *tx, const struct stu_parts_facts *x)
{
    const int j = 2; /* M = 32 */
    int best = 0;
    for (int k = 1; k < STU_NCAND; k++)
        if (x->step_ms[j][k] < x->step_ms[j][best])
            best = k;
    static const char *const short_name[STU_NCAND] = {
        "uniform", "GPipe's library", "the GPipe heuristic", "the prefix heuristic",
        "torchgpipe's balance", "min-max compute", "the optimal bound", "the best simulated"
    };
    struct stu_vals v, sub;
    stu_vals_init(&v);
    stu_vals_set(&v, "gpipe_spec", "%s", x->spec[j][STU_P_GPIPE]);
    stu_vals_set(&v, "gpipe_speedup", "%.2f", x->speedup[j][STU_P_GPIPE]);
    stu_vals_set(&v, "optimal_spec", "%s", x->spec[j][STU_P_OPTIMAL]);
    stu_vals_set(&v, "optimal_speedup", "%.2f", x->speedup[j][STU_P_OPTIMAL]);
    stu_vals_set(&v, "ranked_spec", "%s", x->spec[j][STU_P_RANKED]);
    stu_vals_set(&v, "ranked_speedup", "%.2f", x->speedup[j][STU_P_RANKED]);
    stu_vals_set(&v, "uniform_speedup", "%.2f", x->speedup[j][STU_P_UNIFORM]);
    stu_vals_set(&v, "best_name", "%s", short_name[best]);
    stu_vals_set(&v, "best_spec", "%s", x->spec[j][best]);
    stu_vals_set(&v, "best_ms", "%.2f", x->step_ms[j][best]);
    stu_vals_set(&v, "minmax", "%s", "");
    if (x->step_ms[j][STU_P_MINMAX] < x->step_ms[j][STU_P_RANKED]) {
        stu_vals_init(&sub);
        stu_vals_set(&sub, "minmax_step", "%.2f", x->step_ms[j][STU_P_MINMAX]);
        stu_vals_set(&sub, "ranked_step", "%.2f", x->step_ms[j][STU_P_RANKED]);
        stu_vals_text(&v, "minmax", tx, "minmax", &sub);
    }
    stu_vals_set(&v, "tg_ms", "%.2f", x->bottleneck_ms[j][STU_P_TORCHGPIPE]);
    stu_vals_set(&v, "minmax_ms", "%.2f", x->bottleneck_ms[j][STU_P_MINMAX]);
    stu_tmpl_put(f, tx, "notes", &v);
}
