/*
 * ps_error — the one error-reporting path of pipesim.
 *
 * Three tiers (git's): programmer errors abort with file:line (PS_BUG);
 * recoverable errors return a negative PS_E* code after ps_error() has
 * formatted one message; only main() decides to exit, with the code's exit
 * status. The message buffer is thread-local, so parallel sweep workers each
 * keep their own last error. Cost: O(length of the message).
 */
#ifndef PS_ERROR_H
#define PS_ERROR_H

#include <stdio.h>
#include <stdlib.h>

/* X(name, exit status, description) — the exit-status table of
 * docs/errors-and-outputs.md is generated from it
 * by `pipesim help errors`. */
#define PS_ERRNO_MAP(X)                                                    \
    X(EUSAGE, 2, "bad command line (unknown option, bad value, a generator or --net mlp: spec's key or value)") \
    X(EPARSE, 3, "malformed input file (CSV, JSON, trace, a --net file: net)") \
    X(EINVAL, 4, "input values out of range or inconsistent")               \
    X(EIO, 5, "file could not be read or written")                          \
    X(ENOMEM, 6, "out of memory")                                           \
    X(ENOFIT, 7, "no feasible configuration (memory cap, K > layers, plan: none fits)")      \
    X(EDB, 8, "results database error (corrupt, locked, wrong schema)")     \
    X(ERUNTIME, 9, "validation runtime failure (threads, affinity)")        \
    X(EINTR, 10, "interrupted by a signal; finished work was kept")

enum ps_errcode {
    PS_OK = 0,
#define PS_X_ENUM(name, status, desc) PS_##name,
    PS_ERRNO_MAP(PS_X_ENUM)
#undef PS_X_ENUM
    PS_NERR
};

/* Longest message kept (bytes, NUL included). A longer one keeps its start
 * and its end, " [...] " between: the file it names and the explanation
 * survive, the middle of a long path does not. Buffers that carry a message
 * on (worker threads, result rows) use this size too. */
#define PS_ERRMSG_MAX 4096

/* Formats the message, remembers code, returns -code. */
int ps_error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Last message of this thread ("" if none). */
const char *ps_errmsg(void);
/* Last code of this thread (positive), 0 if none. */
int ps_errcode(void);
void ps_error_clear(void);
/* Fails with code, the message reported elsewhere (MPI rank 0 prints what
 * every rank would: ps_mpi.h): ps_errmsg() is "" and ps_error_silenced() 1
 * until the next ps_error or ps_error_clear, so main prints nothing and
 * exits with code's status. Returns -code. */
int ps_error_silent(int code);
int ps_error_silenced(void);
/* Exit status and name/description for a (positive or negative) code. */
int ps_exit_status(int code);
const char *ps_errname(int code);
const char *ps_errdesc(int code);

#define PS_BUG(...)                                                        \
    do {                                                                    \
        fprintf(stderr, "pipesim: BUG at %s:%d: ", __FILE__, __LINE__);     \
        fprintf(stderr, __VA_ARGS__);                                       \
        fputc('\n', stderr);                                                \
        abort();                                                            \
    } while (0)
#define PS_ASSERT(c)                                                       \
    do {                                                                    \
        if (!(c))                                                           \
            PS_BUG("assertion failed: %s", #c);                            \
    } while (0)

#endif
