/* libFuzzer target: the studies' reference readers (studies/stu_csv.h) and
 * template loader (studies/stu_tmpl.h). The input's first byte picks the
 * reader; the rest is the file: 0 torchgpipe's speed.csv, 1 its
 * resnet101-speed.csv, 2 its amoebanetd-memory.csv, 3 a text template
 * against the memory study's sections, 4-7 one of the GPipe study's
 * table1.csv, table2.csv, table3.csv, torchgpipe.csv beside the committed
 * other three (studies/gpipe/reference, read at start from the working
 * directory, the repository root under tests/fuzz/run.sh; without them
 * 4-7 are skipped), 8 its unet-memory.csv. Each must accept a file and hold its documented
 * ranges, or refuse it with one message naming the file. */
#include "fuzz_common.h"
#include "studies/stu_ref.h"
#include "studies/stu_tgmem.h"
#include "studies/stu_tgumem.h"
#include "studies/stu_tmpl.h"
#include "base/ps_util.h"

#include <unistd.h>

static char dir[64];
static const char *const gpipe_files[4] = { "table1.csv", "table2.csv", "table3.csv",
                                            "torchgpipe.csv" };
static char *gpipe_ref[4]; /* the committed files (NULL: not found) */
static size_t gpipe_len[4];

/* The folder and the files put() writes, removed at exit. */
static void cleanup(void)
{
    static const char *const names[] = { "speed.csv", "resnet101-speed.csv",
                                         STU_TGM_FILE ".csv", STU_TGU_FILE ".csv", "t.md" };
    char path[128];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, gpipe_files[i]);
        unlink(path);
        free(gpipe_ref[i]);
    }
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(dir, sizeof dir, "/tmp/pipesim-fuzz-studyref-XXXXXX");
    if (!mkdtemp(dir) || atexit(cleanup) != 0)
        abort();
    for (int i = 0; i < 4; i++) {
        char path[128];
        snprintf(path, sizeof path, "studies/gpipe/reference/%s", gpipe_files[i]);
        if (ps_read_file(path, &gpipe_ref[i], &gpipe_len[i]) < 0) {
            ps_error_clear();
            gpipe_ref[i] = NULL;
        }
    }
    return 0;
}

static void put(const char *name, const uint8_t *data, size_t size)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
}

static void speed(int k, const uint8_t *data, size_t size)
{
    const struct stu_tg_bench *b = &stu_tg_bench[k];
    char name[64];
    snprintf(name, sizeof name, "%s.csv", b->file);
    put(name, data, size);
    struct stu_tg_ref r;
    int rc = stu_tg_ref_load(dir, b, &r);
    if (rc < 0) {
        fuzz_check_error(rc, name);
        return;
    }
    FUZZ_CHECK(r.n_rows > 0 && r.n_rows <= STU_TG_MAXROW);
    FUZZ_CHECK(r.base >= 0 && r.base < r.n_rows && !strcmp(r.row[r.base].exp, b->base));
    for (int i = 0; i < r.n_rows; i++) {
        const struct stu_tg_row *w = &r.row[i];
        FUZZ_CHECK(w->n >= 1 && w->m >= 1 && w->batch >= w->m);
        FUZZ_CHECK(isfinite(w->samples_s) && w->samples_s > 0 && isfinite(w->speedup));
        FUZZ_CHECK(w->balance[0] && memchr(w->balance, 0, sizeof w->balance));
    }
}

static void memory(const uint8_t *data, size_t size)
{
    put(STU_TGM_FILE ".csv", data, size);
    struct stu_tgm_ref r;
    int rc = stu_tgm_ref_load(dir, &r);
    if (rc < 0) {
        fuzz_check_error(rc, STU_TGM_FILE ".csv");
        return;
    }
    FUZZ_CHECK(r.n_rows > 0 && r.n_rows <= STU_TGM_MAXROW);
    for (int i = 0; i < r.n_rows; i++) {
        const struct stu_tgm_row *w = &r.row[i];
        FUZZ_CHECK(w->n >= 1 && w->n <= 8 && w->L % 3 == 0 && w->D % 8 == 0);
        FUZZ_CHECK(w->chunks >= 1 && w->batch % w->chunks == 0);
        FUZZ_CHECK(w->params_m > 1e-3 && w->params_m <= 1e6);
        FUZZ_CHECK(w->model_gib > 1e-3 && w->model_gib <= 1e4);
        FUZZ_CHECK(w->oom ? w->act_gib == 0 : w->act_gib > 1e-3 && w->act_gib <= 1e4);
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(r.row[j].exp, w->exp));
    }
}

static void unet_memory(const uint8_t *data, size_t size)
{
    put(STU_TGU_FILE ".csv", data, size);
    struct stu_tgu_ref r;
    int rc = stu_tgu_ref_load(dir, &r);
    if (rc < 0) {
        fuzz_check_error(rc, STU_TGU_FILE ".csv");
        return;
    }
    FUZZ_CHECK(r.n_rows > 0 && r.n_rows <= STU_TGU_MAXROW);
    for (int i = 0; i < r.n_rows; i++) {
        const struct stu_tgu_row *w = &r.row[i];
        FUZZ_CHECK(w->n >= 1 && w->n <= 8 && w->B >= 1 && w->C >= 2);
        FUZZ_CHECK(w->chunks >= 1 && w->batch >= 1);
        int size1 = (w->batch + w->chunks - 1) / w->chunks;
        FUZZ_CHECK(w->batch % size1 == 0);
        FUZZ_CHECK(w->params_m > 1e-3 && w->params_m <= 1e6);
        FUZZ_CHECK(w->mem_gib > 1e-3 && w->mem_gib <= 1e4);
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(r.row[j].exp, w->exp));
    }
}

static void templ(const uint8_t *data, size_t size)
{
    put("t.md", data, size);
    stu_tmpl *t = NULL;
    int rc = stu_tmpl_load(dir, "t.md", stu_tgm_text, STU_TGM_NTEXT, &t);
    if (rc < 0) {
        fuzz_check_error(rc, "t.md");
        FUZZ_CHECK(t == NULL);
        return;
    }
    FILE *f = fopen("/dev/null", "w");
    if (!f)
        abort();
    struct stu_vals v;
    stu_vals_init(&v);
    stu_vals_set(&v, "excess", "0.5");
    stu_vals_set(&v, "ratio", "2");
    stu_vals_set(&v, "topo_name", "p40");
    stu_vals_set(&v, "memory", "24");
    stu_vals_set(&v, "bpp", "12");
    for (int i = 0; i < STU_TGM_NTEXT; i++)
        stu_tmpl_put(f, t, stu_tgm_text[i].name, &v);
    fclose(f);
    stu_tmpl_free(t);
}

/* GPipe's file k fuzzed, the other three as committed. */
static void gpipe(int k, const uint8_t *data, size_t size)
{
    for (int i = 0; i < 4; i++)
        if (!gpipe_ref[i])
            return;
    for (int i = 0; i < 4; i++)
        if (i == k)
            put(gpipe_files[i], data, size);
        else
            put(gpipe_files[i], (const uint8_t *)gpipe_ref[i], gpipe_len[i]);
    struct stu_ref r;
    int rc = stu_ref_load(dir, &r);
    if (rc < 0) {
        fuzz_check_error(rc, gpipe_files[k]);
        return;
    }
    for (int m = 0; m < 2; m++)
        for (int c = 0; c < STU_REF_NCOL; c++) {
            const struct stu_ref_t1 *t = &r.t1[m][c];
            FUZZ_CHECK(t->name[0] && memchr(t->name, 0, sizeof t->name));
            FUZZ_CHECK(t->K >= 1 && fuzz_finite_nonneg(t->params) &&
                       fuzz_finite_nonneg(t->pmem) && fuzz_finite_nonneg(t->act));
        }
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 3; j++) {
            for (int k2 = 0; k2 < 3; k2++)
                FUZZ_CHECK(fuzz_finite_nonneg(r.t2[m][j][k2]));
            FUZZ_CHECK(isnan(r.t3[m][j]) || r.t3[m][j] >= 0);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int which = data[0] % 9;
    if (which < 2)
        speed(which, data + 1, size - 1);
    else if (which == 2)
        memory(data + 1, size - 1);
    else if (which == 3)
        templ(data + 1, size - 1);
    else if (which < 8)
        gpipe(which - 4, data + 1, size - 1);
    else
        unet_memory(data + 1, size - 1);
    ps_error_clear();
    return 0;
}
