/*
 * ps_afile_int — private to base/ps_afile*.c: what the five parts of
 * ps_afile (see ps_afile.h) share.
 *   ps_afile.c       the files: open, sync, commit, abort;
 *   ps_afile_sig.c   the live temporaries the signal handler removes, the
 *                    handler, and making a temporary tracked (no window);
 *   ps_afile_set.c   sets of outputs published together, rolled back
 *                    through hard-link backups;
 *   ps_afile_name.c  what a name leads to (our stdout, the resolved target),
 *                    the standard descriptors, the stdout check;
 *   ps_afile_io.c    the per-command registry of inputs and outputs.
 * The signal handler's state is one object each, defined in ps_afile_sig.c
 * and static there but for ps_afile_publishing, which the other parts
 * count and read; the rest they reach through the functions below.
 * Cost: a few system calls each; ps_afile_lexical_resolve one stat a path
 * component, ps_io_input_of O(registered files) and a stat for a match.
 */
#ifndef PS_AFILE_INT_H
#define PS_AFILE_INT_H

#include "base/ps_afile.h"

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/stat.h>

/* ---- ps_afile_sig.c ---- */

/* Sets of outputs being renamed into place (ps_afile_publish_begin, in
 * ps_afile_set.c); the handler waits for it to fall to 0, and a commit
 * while it is above is one of a set. Defined in ps_afile_sig.c. */
extern atomic_int ps_afile_publishing;
/* Blocks the cleanup signals on this thread; the old mask in *old. */
void ps_afile_block_signals(sigset_t *old);
/* After counting itself in (creating or publishing), with the signals
 * blocked on its thread: if a handler has begun on another thread, which
 * may have read live[] already, this thread makes nothing more and waits
 * for the handler to end the process (seq_cst: either the handler sees
 * the count and waits, or this sees its flag). */
void ps_afile_stop_if_dying(atomic_int *count);
/* Around making a temporary and tracking it: no window where it exists
 * untracked, not on this thread (the signals are blocked), nor on another
 * (its handler waits for creating, or this thread stops if it has begun). */
void ps_afile_create_begin(sigset_t *old);
void ps_afile_create_end(const sigset_t *old);

/* ---- ps_afile_set.c (only the publishing thread calls them) ---- */

/* Before renaming over target inside a set: room for its entry, and a link
 * to what it replaces (a name beside the temporary; none where the file
 * system refuses links, the file then not restored). 0 or an errno. */
int ps_afile_set_prepare(const char *target, const char *tmp, char **backup, int *existed);
/* After that rename: the set takes target and backup (malloc'd), in the
 * room ps_afile_set_prepare made. */
void ps_afile_set_add(char *target, char *backup, int existed);

/* ---- ps_afile_name.c ---- */

/* 1 when path, which is st, is this process's own stdout. */
int ps_afile_is_stdout(const char *path, const struct stat *st);
/* The name a path not there yet will have: its existing folders by
 * realpath, then the rest component by component ("." dropped, ".."
 * taking off the last), so nd/x and nd/./x, or nd/../nd/x, compare equal
 * while nd does not exist (the raw spellings were compared, and commands
 * that create folders wrote one output over another). NULL: no memory. */
char *ps_afile_lexical_resolve(const char *path);

/* ---- ps_afile_io.c ---- */

/* The input that is the file st, as "OPT 'PATH'" in buf; 0 when none. An
 * input whose name no longer leads to the file recorded (deleted or
 * replaced since: a temporary of our own) is not one: its inode number may
 * have been given to another file. */
int ps_io_input_of(const struct stat *st, char *buf, size_t n);

/* ---- ps_afile.c ---- */

/* Reads the umask once (umask() reads it only by setting it), for the mode
 * of new files; ps_afile_signals_install reads it too, once from main. */
void ps_afile_umask_once(void);

#endif
