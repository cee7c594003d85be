/*
 * stu_out — a study's output folder written as one set: every file is
 * written into a staging folder beside the others (<out_dir>/.pipesim-
 * stage-XXXXXX, so gnuplot finds the data files the scripts name), and
 * only when the whole study has succeeded are they published, again as a
 * set (each opened with ps_afile, all written and synced, then all
 * renamed). A study that fails, or a signal, leaves the folder as it was:
 * no new table beside old ones, no staging folder (a signal's handler
 * removes only the files it tracked: files of their own that a --data
 * template's gnuplot script wrote keep the staging folder, with them).
 *
 * stu_out_begin(s, out_dir, log): creates out_dir if missing and the
 * staging folder (s->stage), tracked for the signal handler. Write each
 * file as <s->stage>/<name> with ps_afile and finish it with
 * stu_out_file(s, af, name), which records it (tracked too; a name given
 * twice is kept once) and commits it into the staging folder.
 * stu_out_commit publishes every recorded file into out_dir in order,
 * writes "wrote <out_dir>/<name>" on log per file once all are in place,
 * and removes the staging folder; on an error nothing is replaced and the
 * staging folder is removed. stu_out_abort removes it (after a failure;
 * harmless after a commit) with everything in it, files that a --data
 * template's gnuplot script wrote there too (not following links, not
 * entering another file system). A staged file is published only as
 * stu_out_file found it: one changed since (a gnuplot script writing over
 * table1.md) fails the commit, PS_EIO, nothing replaced.
 * Cost: each file is read once when staged (its sum) and copied once from
 * the staging folder.
 */
#ifndef STU_OUT_H
#define STU_OUT_H

#include "base/ps_fs.h"

#include <stdint.h>
#include <stdio.h>

struct stu_out {
    char final[4096];   /* the folder asked for */
    char stage[4096];   /* <final>/.pipesim-stage-XXXXXX */
    int stage_slot;     /* its ps_afile tracking slot, -1 when gone */
    struct ps_made made; /* the folders begin made, tracked for the signal handler
                            until a commit or an abort, and removed again (while
                            empty) by an abort before a commit */
    int committed;
    FILE *log;
    int n, cap;
    struct stu_out_entry {
        char name[256];
        int slot;       /* its ps_afile tracking slot */
        uint64_t sum;   /* FNV-1a 64 of the bytes staged: published only unchanged */
    } *files;           /* staged, in the order written */
};

struct ps_afile;
int stu_out_begin(struct stu_out *s, const char *out_dir, FILE *log);
/* rc, and where rc < 0 the last error message names the file by the folder
 * asked for: every "<stage>/" in it becomes "<final>/" (a user never sees the
 * staging folder, which is gone when the message is printed). */
int stu_out_shown(const struct stu_out *s, int rc);
int stu_out_file(struct stu_out *s, struct ps_afile *af, const char *name);
int stu_out_commit(struct stu_out *s);
void stu_out_abort(struct stu_out *s);

#endif
