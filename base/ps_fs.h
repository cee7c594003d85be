/*
 * ps_fs — folders for outputs: mkdir -p, written once.
 *
 * ps_mkdirs(dir) creates dir and every missing folder above it (mode 0777,
 * less the umask), like `mkdir -p`; folders already there are fine. A
 * component that exists and is not a folder (a file in the way) is an
 * error naming that component, found here rather than later when a file
 * under it cannot be opened. ps_mkdirs_parent(path) does the same for the
 * folder a file will be written in (nothing when path has no '/').
 * Errors: PS_EIO "<component>: cannot create directory: <reason>" or
 * "<component>: not a directory"; PS_EUSAGE "<path>: path too long" for a
 * path of PS_FS_PATH_MAX bytes or more. No state, nothing to free.
 * Cost: one mkdir (and a stat where it fails) per component.
 */
#ifndef PS_FS_H
#define PS_FS_H

#include <stddef.h>

#define PS_FS_PATH_MAX 4096

int ps_mkdirs(const char *dir);
int ps_mkdirs_parent(const char *path);

/* The folders a run made for its outputs, so that a run that fails (or is
 * interrupted) takes them away again. ps_mkdirs_made(dir, m) is
 * ps_mkdirs(dir) making each missing folder by ps_afile_mkdir: tracked for
 * the signal handler from the moment it exists, and one another process
 * makes meanwhile is not taken for ours; each is recorded in m (which
 * starts zeroed, and may take several calls): each prefix of dir as typed
 * that mkdir made ("new/../old": new, and old when it was missing; new/..
 * was there). ps_made_undo(m), after a failure,
 * removes the recorded folders that are empty, the last made first, and
 * forgets them; ps_made_keep(m), after a success, only forgets them. Both
 * leave m zeroed. Errors as ps_mkdirs's, or PS_ENOMEM. */
struct ps_made {
    char **paths;
    int *slots;
    int n;
};
int ps_mkdirs_made(const char *dir, struct ps_made *m);
int ps_mkdirs_parent_made(const char *path, struct ps_made *m);
void ps_made_undo(struct ps_made *m);
/* Appends from's folders to to's (undone after them: they were made later)
 * and zeroes from; PS_ENOMEM leaves both as they were. */
int ps_made_move(struct ps_made *to, struct ps_made *from);
void ps_made_keep(struct ps_made *m);
/* Before long work: can path be written? A folder there, a file that may
 * not be written, or a folder above it that is missing (unless mkparents:
 * the command creates them; then the nearest existing one) or may not be
 * written, is PS_EIO "OPT 'PATH': cannot write: <reason>". "-" and NULL
 * are fine; devices are left to the write. */
int ps_output_writable(const char *path, const char *opt, int mkparents);
/* An output folder option's value: PS_EUSAGE "OPT needs a directory" for
 * an empty one (which would put the files in the root folder). */
int ps_outdir_check(const char *dir, const char *opt);
/* Where temporaries that belong to no output go: $TMPDIR when it is an
 * absolute path of a folder (at most 200 bytes), else /tmp. */
const char *ps_tmpdir(void);
/* A file-name prefix option's value: PS_EUSAGE when it holds a '/' (files
 * would land outside the output folder), starts with '.' (they would be
 * hidden: export-chakra's "." made "..0.et") or is longer than 200 bytes. */
int ps_prefix_check(const char *prefix, const char *opt);
/* The path of target as seen from the folder of from_file (a link in a
 * document: "../figs/p.png"): each folder resolved as the kernel does where it
 * exists (symbolic links, ".."), lexically where not; the target as given when
 * the current folder is unknown. 0, or -1 when buf is too small. */
int ps_path_from(const char *from_file, const char *target, char *buf, size_t n);
/* 1 when file's folder is dir or one of the folders above it, compared as
 * absolute paths taken lexically ("./out/r.txt" and "out//p/" alike): a file
 * in a folder that making dir makes. */
int ps_folder_on_path(const char *file, const char *dir);

#endif
