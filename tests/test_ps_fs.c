/* ps_fs: mkdir -p of nested, existing, file-in-the-way and too-long paths. */
#include "helpers.h"

#include "base/ps_error.h"
#include "base/ps_fs.h"

#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void teardown(void);

static void setup(void)
{
    th_teardown_at_exit(teardown); /* its tests may skip */
    snprintf(root, sizeof root, "/tmp/pipesim-fs-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
    th_sh("rm -rf %s", root);
}

static int is_dir(const char *fmt, const char *sub)
{
    char p[256];
    snprintf(p, sizeof p, fmt, root, sub);
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

TestSuite(ps_fs, .init = setup, .fini = teardown, .timeout = 10);

Test(ps_fs, creates_every_missing_folder)
{
    char p[256];
    snprintf(p, sizeof p, "%s/a/b/c", root);
    cr_assert_eq(ps_mkdirs(p), 0, "%s", ps_errmsg());
    cr_assert(is_dir("%s/%s", "a/b/c"));
}

Test(ps_fs, folders_already_there_and_odd_slashes_are_fine)
{
    char p[256];
    snprintf(p, sizeof p, "%s/x//y/", root);
    cr_assert_eq(ps_mkdirs(p), 0, "%s", ps_errmsg());
    cr_assert_eq(ps_mkdirs(p), 0, "again: %s", ps_errmsg());
    cr_assert_eq(ps_mkdirs(root), 0);
    cr_assert_eq(ps_mkdirs("/"), 0);
    cr_assert_eq(ps_mkdirs("."), 0);
    cr_assert(is_dir("%s/%s", "x/y"));
}

Test(ps_fs, parent_of_a_file)
{
    char p[256];
    snprintf(p, sizeof p, "%s/d/e/out.db", root);
    cr_assert_eq(ps_mkdirs_parent(p), 0, "%s", ps_errmsg());
    cr_assert(is_dir("%s/%s", "d/e"));
    cr_assert(!is_dir("%s/%s", "d/e/out.db"));
    cr_assert_eq(ps_mkdirs_parent("out.db"), 0); /* no folder to make */
    cr_assert_eq(ps_mkdirs_parent("/out.db"), 0);
}

Test(ps_fs, a_file_in_the_way_is_named)
{
    /* as root, permissions do not stop mkdir: a file in the way does */
    char f[256], p[256];
    snprintf(f, sizeof f, "%s/file", root);
    FILE *fp = fopen(f, "w");
    cr_assert_not_null(fp);
    fclose(fp);
    cr_assert_eq(ps_mkdirs(f), -PS_EIO);
    cr_assert_str_eq(ps_errmsg(), strcat(strcpy(p, f), ": not a directory"));
    snprintf(p, sizeof p, "%s/file/sub/x.png", root);
    cr_assert_eq(ps_mkdirs_parent(p), -PS_EIO);
    cr_assert(strstr(ps_errmsg(), "/file: "), "%s", ps_errmsg());
    cr_assert(!is_dir("%s/%s", "file/sub"));
}

Test(ps_fs, too_long_is_a_usage_error)
{
    static char p[PS_FS_PATH_MAX + 16];
    memset(p, 'a', sizeof p - 1);
    cr_assert_eq(ps_mkdirs(p), -PS_EUSAGE);
    cr_assert(strstr(ps_errmsg(), "path too long"), "%s", ps_errmsg());
}

Test(ps_fs, an_unwritable_folder_is_named)
{
    if (geteuid() == 0)
        cr_skip_test("running as root: permissions do not stop mkdir");
    char ro[256], p[256];
    snprintf(ro, sizeof ro, "%s/ro", root);
    cr_assert_eq(mkdir(ro, 0555), 0);
    snprintf(p, sizeof p, "%s/ro/new/deeper", root);
    cr_assert_eq(ps_mkdirs(p), -PS_EIO);
    snprintf(p, sizeof p, "%s/ro/new: cannot create directory: ", root);
    cr_assert(!strncmp(ps_errmsg(), p, strlen(p)), "%s", ps_errmsg());
    chmod(ro, 0755);
}

/* The folders a run made are recorded, and taken away again while empty
 * (the last made first); those that were there, and one a file went into,
 * stay; keep only forgets them; a path with ".." records nothing. */
Test(ps_fs, made_folders_are_undone_while_empty)
{
    char p[256];
    struct ps_made m = { 0 };
    snprintf(p, sizeof p, "%s/old", root);
    cr_assert_eq(mkdir(p, 0777), 0);
    snprintf(p, sizeof p, "%s/old/a//b/c/", root);
    cr_assert_eq(ps_mkdirs_made(p, &m), 0, "%s", ps_errmsg());
    cr_assert_eq(m.n, 3);
    snprintf(p, sizeof p, "%s/old/a/x/f.db", root);
    cr_assert_eq(ps_mkdirs_parent_made(p, &m), 0, "%s", ps_errmsg());
    cr_assert_eq(m.n, 4);
    cr_assert_eq(ps_mkdirs_made(p, &m), 0, "%s", ps_errmsg()); /* a second call, deeper */
    cr_assert_eq(m.n, 5);
    cr_assert(is_dir("%s/%s", "old/a/x/f.db"));
    cr_assert_eq(th_sh("touch %s/old/a/b/keep", root), 0);
    ps_made_undo(&m);
    cr_assert_eq(m.n, 0);
    cr_assert(!is_dir("%s/%s", "old/a/x"));
    cr_assert(!is_dir("%s/%s", "old/a/b/c"));
    cr_assert(is_dir("%s/%s", "old/a/b"), "a folder with a file in it");
    cr_assert(is_dir("%s/%s", "old"), "a folder that was there");
    snprintf(p, sizeof p, "%s/old/k/l", root);
    cr_assert_eq(ps_mkdirs_made(p, &m), 0);
    ps_made_keep(&m);
    cr_assert(is_dir("%s/%s", "old/k/l"));
    /* through "..": the folders made on the way, by the names as typed */
    snprintf(p, sizeof p, "%s/new/../other", root);
    cr_assert_eq(ps_mkdirs_made(p, &m), 0);
    cr_assert_eq(m.n, 2);
    cr_assert(is_dir("%s/%s", "new") && is_dir("%s/%s", "other"));
    ps_made_undo(&m);
    cr_assert(!is_dir("%s/%s", "new") && !is_dir("%s/%s", "other"));
    snprintf(p, sizeof p, "%s/new/../old/z", root);
    cr_assert_eq(ps_mkdirs_made(p, &m), 0);
    cr_assert_eq(m.n, 2, "new and old/z; old was there");
    ps_made_undo(&m);
    cr_assert(!is_dir("%s/%s", "new") && !is_dir("%s/%s", "old/z") && is_dir("%s/%s", "old"));
}
