/* torchgpipe's measured speed rows, <data>/reference/<file>.csv (format in
 * stu_torchgpipe.h), on the strict reader of stu_csv.h; the benchmarks. */
#include "studies/stu_torchgpipe.h"
#include "studies/stu_csv.h"
#include "base/ps_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_EXP, C_N, C_M, C_BATCH, C_BALANCE, C_CKPT, C_SPS, C_SPEEDUP, NCOL };
static const char *const cols[NCOL] = { "experiment", "n", "m", "batch", "balance",
                                        "checkpoint", "samples_per_s", "speedup" };

const struct stu_tg_bench stu_tg_bench[STU_TG_NBENCH] = {
    { .name = "amoebanetd-speed", .title = "AmoebaNet-D (18, 256)",
      .model = "amoebanet:L=18,D=256,pool3=avg", .model_h = "models/mdl_amoeba.h", .file = "speed",
      .base = "n2m1", .commit = "a4710261", .dataset = 10000, .nm_names = 1 },
    { .name = "resnet101-speed", .title = "ResNet-101", .model = "resnet:depth=101",
      .model_h = "models/mdl_resnet.h", .file = "resnet101-speed", .base = "baseline",
      .commit = "fe52c4dc", .dataset = 50000, .nm_names = 0 },
    { .name = "unet-speed", .title = "U-Net (5, 64)", .model = "unet:convs=5,channels=64",
      .model_h = "models/mdl_unet.h", .file = "unet-speed", .base = "baseline",
      .commit = "fe52c4dc", .dataset = 10000, .nm_names = 0, .relayed = 1 },
};

/* The experiment's name by the bench's rule. */
static void exp_name(const struct stu_tg_bench *b, const struct stu_tg_row *w, char *buf,
                     size_t n)
{
    if (b->nm_names)
        snprintf(buf, n, "n%dm%d", w->n, w->m);
    else if (w->n == 1 && w->m == 1 && w->remat == SCH_REMAT_NEVER)
        snprintf(buf, n, "baseline");
    else
        snprintf(buf, n, "pipeline-%d", w->n);
}

int stu_tg_balance(const struct stu_csv *c, int k, int n, const char *nname, char *out,
                   size_t outn, int *total)
{
    char tmp[256];
    const char *s = stu_csv_field(c, k);
    if (strlen(s) >= sizeof tmp)
        return ps_error(PS_EPARSE, "%s:%d:%d: field 'balance': longer than %zu bytes", c->path,
                        c->line, stu_csv_col(c, k), sizeof tmp - 1);
    strcpy(tmp, s);
    size_t o = 0;
    int parts = 0;
    char *save = NULL;
    *total = 0;
    *out = 0;
    for (char *tok = strtok_r(tmp, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *end;
        long v = strtol(tok, &end, 10);
        if (*end || v < 1 || v > 1 << 20)
            return ps_error(PS_EPARSE, "%s:%d:%d: field 'balance': '%s' is not a positive "
                            "layer count", c->path, c->line, stu_csv_col(c, k), tok);
        if (parts == n) /* not a bad count: one too many (it said '1' was not positive) */
            return ps_error(PS_EPARSE, "%s:%d:%d: field 'balance': more than %d layer counts "
                            "for %s = %d", c->path, c->line, stu_csv_col(c, k), n, nname, n);
        if (o + strlen(tok) + 2 > outn)
            return ps_error(PS_EPARSE, "%s:%d:%d: field 'balance': longer than %zu bytes "
                            "written with commas", c->path, c->line, stu_csv_col(c, k),
                            outn - 1);
        o += (size_t)snprintf(out + o, outn - o, "%s%ld", parts++ ? "," : "", v);
        *total += (int)v;
    }
    if (parts != n)
        return ps_error(PS_EPARSE, "%s:%d:%d: field 'balance': %d layer counts for %s = %d",
                        c->path, c->line, stu_csv_col(c, k), parts, nname, n);
    return 0;
}

static int row(const struct stu_csv *c, struct stu_tg_ref *r, int *total)
{
    if (r->n_rows == STU_TG_MAXROW)
        return ps_error(PS_EPARSE, "%s:%d: more than %d rows", c->path, c->line, STU_TG_MAXROW);
    struct stu_tg_row *w = &r->row[r->n_rows];
    memset(w, 0, sizeof *w);
    w->line = c->line;
    int rc, k, t = 0;
    if ((rc = stu_csv_whole(c, C_N, 1, 1024, &w->n)) < 0 ||
        (rc = stu_csv_whole(c, C_M, 1, 1 << 20, &w->m)) < 0 ||
        (rc = stu_csv_whole(c, C_BATCH, 1, 1 << 24, &w->batch)) < 0 ||
        (rc = stu_csv_key(c, C_CKPT, stu_tg_ckpt_names, 3, &k)) < 0 ||
        (rc = stu_csv_range(c, C_SPS, STU_TG_SPS_MIN, STU_TG_SPS_MAX, &w->samples_s)) < 0 ||
        (rc = stu_csv_range(c, C_SPEEDUP, STU_TG_SPEEDUP_MIN, STU_TG_SPEEDUP_MAX,
                            &w->speedup)) < 0 ||
        (rc = stu_tg_balance(c, C_BALANCE, w->n, "n", w->balance, sizeof w->balance, &t)) < 0)
        return rc;
    w->remat = stu_tg_ckpt_modes[k];
    if (w->batch < w->m)
        return ps_error(PS_EPARSE, "%s:%d:%d: field 'batch': %d is smaller than m = %d",
                        c->path, c->line, stu_csv_col(c, C_BATCH), w->batch, w->m);
    char want[32];
    exp_name(r->bench, w, want, sizeof want);
    if (strcmp(stu_csv_field(c, C_EXP), want))
        return ps_error(PS_EPARSE, "%s:%d:%d: field 'experiment': '%s' is not %s (n = %d, "
                        "m = %d, checkpoint %s)", c->path, c->line, stu_csv_col(c, C_EXP),
                        stu_csv_field(c, C_EXP), want, w->n, w->m, stu_tg_ckpt_names[k]);
    snprintf(w->exp, sizeof w->exp, "%s", want);
    /* every row cuts the same model; which of two disagreeing rows is wrong the
     * file cannot say, so both lines are named (it blamed the second) */
    if (*total && t != *total)
        return ps_error(PS_EPARSE, "%s:%d:%d: field 'balance': %d layers, but line %d's has "
                        "%d (every row cuts the same model)", c->path, c->line,
                        stu_csv_col(c, C_BALANCE), t, r->row[0].line, *total);
    *total = t;
    for (int i = 0; i < r->n_rows; i++)
        if ((r->row[i].n == w->n && r->row[i].m == w->m) || !strcmp(r->row[i].exp, w->exp))
            return ps_error(PS_EPARSE, "%s:%d: a second row for %s (n = %d, m = %d; line %d)",
                            c->path, c->line, w->exp, w->n, w->m, r->row[i].line);
    r->n_rows++;
    return 0;
}

int stu_tg_ref_load(const char *dir, const struct stu_tg_bench *b, struct stu_tg_ref *r)
{
    memset(r, 0, sizeof *r);
    r->bench = b;
    char name[128];
    snprintf(name, sizeof name, "%s.csv", b->file);
    struct stu_csv c;
    int total = 0, rc = stu_csv_open(&c, dir, name, cols, NCOL);
    if (rc < 0)
        return rc;
    snprintf(r->path, sizeof r->path, "%s", c.path);
    while ((rc = stu_csv_row(&c)) > 0)
        if ((rc = row(&c, r, &total)) < 0)
            break;
    if (rc == 0 && r->n_rows == 0)
        rc = ps_error(PS_EPARSE, "%s:%d: no rows", c.path, c.line);
    r->base = -1;
    for (int i = 0; rc == 0 && i < r->n_rows; i++)
        if (!strcmp(r->row[i].exp, b->base))
            r->base = i;
    if (rc == 0 && r->base < 0)
        rc = ps_error(PS_EPARSE, "%s:%d: no row %s (the speed-ups' baseline)", c.path, c.line,
                      b->base);
    /* The published speed-ups are samples/s over the base row's, rounded. */
    for (int i = 0; rc == 0 && i < r->n_rows; i++) {
        const struct stu_tg_row *w = &r->row[i];
        double q = w->samples_s / r->row[r->base].samples_s;
        if (fabs(q - w->speedup) > 0.0015) /* which of the three figures is wrong the
                                              file cannot say: all named */
            rc = ps_error(PS_EPARSE, "%s:%d: field 'speedup': %g is not this row's "
                          "samples_per_s (%g) over the %s row's (%g, line %d): %.4g", c.path,
                          w->line, w->speedup, w->samples_s, b->base,
                          r->row[r->base].samples_s, r->row[r->base].line, q);
    }
    stu_csv_close(&c);
    return rc;
}
