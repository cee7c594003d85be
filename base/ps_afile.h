/*
 * ps_afile — every output file of pipesim, written so that nothing is ever
 * destroyed: atomic replacement, devices and FIFOs written in place, no
 * output the same file as an input, temporaries removed on signals.
 *
 * ps_afile_open(af, path) decides how path is written:
 *   "-", our own stdout (/dev/stdout), a character or block device, a FIFO
 *   or a socket: written directly (no temporary, no rename);
 *   a symlink: followed (a chain of them, a dangling one too) and its
 *   target replaced, so the link stays a link;
 *   a regular file or a new name: a temporary made with mkstemp in the
 *   target's resolved directory (".<name>.XXXXXX"), mode 0666 & ~umask or
 *   the replaced file's mode (and owner, where allowed).
 * ps_afile_commit flushes, fsyncs and renames the temporary over the target
 * (for a direct output: flushes and checks for write errors);
 * ps_afile_abort removes the temporary. A failure, a crash or a signal
 * never leaves a half-written result under the real name.
 * Ownership: af owns f, path and the temporary until commit or abort.
 *
 * Signals: ps_afile_signals_install() (once, from main) makes SIGINT,
 * SIGTERM, SIGHUP and SIGPIPE unlink every live temporary, restore the default
 * disposition and re-raise. The list of live temporaries is a fixed array
 * of atomic pointers (PS_AFILE_MAX slots) the handler only reads; a
 * handler installed later (the sweep's) may run instead and chain to it.
 * Signals that were ignored at start (nohup) stay ignored. SIGXFSZ is
 * ignored, so a write past `ulimit -f` fails (EFBIG) and is cleaned up.
 *
 * Same-file checks, per command: the command's option handling declares
 * every input and output file with ps_io_input / ps_io_output before any
 * work; an output that is the same file as an input or as another output
 * (same st_dev and st_ino, or for names not there yet the same resolved
 * path) is a PS_EUSAGE error naming both options and the path. "-",
 * stdout and character devices never clash. ps_afile_open also refuses a
 * target that is one of the declared inputs (outputs under --out-dir).
 * Cost: open and the checks are O(inputs + outputs) system calls; the
 * signal list is O(PS_AFILE_MAX) for the handler only.
 */
#ifndef PS_AFILE_H
#define PS_AFILE_H

#include <stdio.h>

#define PS_AFILE_MAX 8192 /* live temporaries at once (Chakra writes up to 4096) */

struct ps_afile {
    FILE *f;
    char *path;   /* as given, for messages; NULL for stdout */
    char *target; /* resolved name the temporary is renamed to; NULL when direct */
    char *tmp;    /* the temporary; NULL when direct */
    int slot;     /* in the signal list */
};

int ps_afile_open(struct ps_afile *af, const char *path);
/* The name path writes to once every symbolic link is followed: "<realpath
 * of its folder>/<name>" (a dangling link: the name it points to), in *out
 * (malloc'd); 0, or an errno value (the folder missing: ENOENT). */
int ps_afile_resolve(const char *path, char **out);
/* 1 when path is this process's own stdout (/dev/stdout, /proc/self/fd/1,
 * or the file stdout is), which ps_afile_open writes in place. */
int ps_afile_names_stdout(const char *path);
int ps_afile_commit(struct ps_afile *af);
/* The first half of a commit, for a set published together: flushes and
 * fsyncs the temporary and checks it is not an input (as commit does),
 * leaving af open; 0, or an error after which af is still to be aborted.
 * Commit after it only renames (and closes). */
int ps_afile_sync(struct ps_afile *af);
void ps_afile_abort(struct ps_afile *af);
/* 1 when the output is written in place (stdout, a device, a FIFO). */
int ps_afile_direct(const struct ps_afile *af);

/* Once, from main(): temporaries removed on SIGINT, SIGTERM, SIGHUP, SIGPIPE. */
void ps_afile_signals_install(void);
/* Another temporary path the handler removes (a plot's script, or a
 * temporary folder: the handler unlinks every file, then removes the
 * folders); returns the slot or a negative error. ps_afile_untrack(slot)
 * forgets it. */
int ps_afile_track(const char *path);
void ps_afile_untrack(int slot);
/* mkdtemp(templ) and ps_afile_track of the folder with the signals held
 * off between them (no window where it exists untracked): the slot, or
 * PS_EIO naming the reason. */
int ps_afile_mkdtemp(char *templ);
/* mkdir(path) and ps_afile_track of the new folder with the signals held off
 * between them: the slot; PS_AFILE_EXISTED (not ours, not tracked) when path
 * was there, made by another process meanwhile too; or PS_EIO naming the
 * reason. The handler removes the folder while it is empty. */
#define PS_AFILE_EXISTED (-1000000)
int ps_afile_mkdir(const char *path);
/* The same for a file: mkstemp(templ) tracked, *slot its slot; the open
 * descriptor, or a negative error (PS_EIO naming the reason). */
int ps_afile_mkstemp(char *templ, int *slot);
/* Around the renames that publish a set of outputs (their commits after
 * every ps_afile_sync): the signals stay blocked on this thread, and a
 * handler on another waits (up to about 30 s) for the end, so a signal
 * leaves the old set or the new, never a mix. A commit in the set keeps a
 * hard link to the file it replaces until the end; when one of the set's
 * commits fails, or ps_afile_publish_fail() was called (a database store
 * after the renames failed), the end puts back every file the set replaced
 * and removes those it created, so the old set stays whole (a file system
 * without hard links: what it replaced is not restored). From one thread;
 * nested sets end with the outermost. */
void ps_afile_publish_begin(void);
void ps_afile_publish_fail(void);
void ps_afile_publish_end(void);

/* Once, first thing in main(): a standard descriptor (0, 1, 2) the caller
 * left closed is opened read-only on /dev/null, so that no file pipesim
 * opens takes its number: a temporary on descriptor 1 would receive what
 * is printed to stdout, and a child's output (gnuplot's image) would be
 * lost. Writes to it still fail (EBADF), so a closed stdout still makes a
 * printing command fail with exit 5. */
void ps_std_fds_reserve(void);

/* Flushes stdout and checks it for write errors (ferror, fflush, and close
 * of a duplicate descriptor): PS_EIO "stdout: write failed: <reason>". */
int ps_stdout_check(void);

/* Per-command registry of the files a command reads and writes.
 * ps_io_begin starts a command (empties the registry and arms ps_io_read);
 * ps_io_reset drops the declarations (ps_io_input, ps_io_output) but keeps
 * what was read, for a study that declares its files after loading them;
 * ps_io_read records a
 * file a loader actually opens (ps_read_file calls it), so an input found
 * by name (a bundled profile or topology, the devices.json behind a
 * topology, a default sidecar) is protected as a declared one is: an
 * output that is that file is refused when opened and, for one opened
 * before the read, when committed (its result dropped, the input kept).
 * An input whose name no longer leads to the same file (a temporary read
 * back and removed) protects nothing: its inode number may be reused.
 * Until the first ps_io_begin (library use, tests) ps_io_read records
 * nothing. Thread-safe. */
void ps_io_begin(void);
void ps_io_reset(void);
int ps_io_input(const char *path, const char *opt);
int ps_io_output(const char *path, const char *opt);
/* Whether path's last component fits a folder (NAME_MAX bytes): else
 * PS_EIO "OPT 'SHOWN...': cannot write: File name too long (...)".
 * ps_io_output checks it, so a command says so before its work and before
 * it prints a result (helper-130: predict printed its table, then failed). */
int ps_name_fits(const char *path, const char *shown, const char *opt);
int ps_io_read(const char *path);
/* For an output a library writes in place (an SQLite database): the
 * refusal ps_afile_open gives (exit 2) when path is a file the command has
 * read or declared as an input; 0 otherwise. */
int ps_io_check_written(const char *path, const char *opt);

#endif
