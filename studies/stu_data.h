/*
 * stu_data — where a study's inputs are: the folder an option names, or by
 * default the data folder's (base/ps_data.h): topologies/, gpipe/,
 * torchgpipe/ (models/topologies, studies/gpipe, ... in the source tree,
 * share/pipesim/... installed). O(1) apart from ps_data_find's stat calls.
 */
#ifndef STU_DATA_H
#define STU_DATA_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/ps_data.h"
#include "base/ps_error.h"

/* given (an option's folder) into out, or the data folder's `kind` when
 * given is NULL; PS_EUSAGE for a path of n bytes or more. */
static inline int stu_data_dir(const char *given, const char *kind, char *out, size_t n)
{
    if (!given)
        return ps_data_find(kind, NULL, out, n);
    if ((size_t)snprintf(out, n, "%s", given) >= n)
        return ps_error(PS_EUSAGE, "%s: path too long", given);
    return 0;
}

/* "dir/name" into buf of n bytes; PS_EUSAGE "path too long" when it does
 * not fit. Every study names its inputs and outputs with it. */
static inline int stu_join(const char *dir, const char *name, char *buf, size_t n)
{
    if ((size_t)snprintf(buf, n, "%s/%s", dir, name) >= n)
        return ps_error(PS_EUSAGE, "path too long: %s/%s", dir, name);
    return 0;
}

/* 0 when path, a study's data file (a reference CSV, a template), is a
 * regular file; PS_EIO "<path>: not a regular file (...)" for a FIFO, a
 * device, a socket or a folder, or "<path>: cannot open: <reason>". Files
 * named on a command line may be pipes (ps_read_file reads them); a data
 * folder's files are found by name, and a FIFO there with no writer hung
 * the study (helper-103). Opened without blocking, so a FIFO is refused
 * at once. */
static inline int stu_data_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return ps_error(errno == ENOMEM ? PS_ENOMEM : PS_EIO, "%s: cannot open: %s", path,
                        strerror(errno));
    struct stat st;
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    close(fd);
    if (!regular)
        return ps_error(PS_EIO, "%s: not a regular file (a FIFO, device or folder): a study "
                        "reads its data folder's files whole", path);
    return 0;
}

#endif
