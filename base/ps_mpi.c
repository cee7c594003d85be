/* ps_mpi: see ps_mpi.h. */
#include "base/ps_mpi.h"

#ifdef PIPESIM_MPI
#include "base/ps_error.h"
#include "base/ps_strbuf.h"
#include "base/ps_util.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ps_mpi_agree(int rc)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = rc < 0 ? rank : size, first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first >= size)
        return 0;
    /* collectives only: a message with a tag could meet one the caller left
     * in flight */
    char msg[PS_ERRMSG_MAX] = "";
    int code = rc < 0 ? -rc : 0;
    if (rank == first)
        snprintf(msg, sizeof msg, "%s", ps_errmsg());
    MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD);
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD);
    if (rank != 0)
        return ps_error_silent(code);
    if (first == 0)
        return rc;
    return ps_error(code, "rank %d: %s", first, msg);
}

int ps_mpi_finalize(int rc, const char *cmd)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && rc < 0 && !ps_error_silenced()) {
        fprintf(stderr, "pipesim %s: %s\n", cmd, ps_errmsg());
        fflush(stderr);
        rc = ps_error_silent(rc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}

void ps_mpi_hash_text(const char *text, char hex[17])
{
    snprintf(hex, 17, "%016llx", (unsigned long long)ps_fnv1a(text, strlen(text), PS_FNV_INIT));
}

enum { HEX = 17, LISTED = 8 };

/* Rank 0: input i's differing ranks, as one clause of the message. */
static void name_ranks(struct ps_strbuf *b, const struct ps_mpi_input *in, const char *all,
                       int i, int n_in, int size)
{
    const char *mine = all + i * HEX;
#define THEIRS(r) (all + ((r) * n_in + i) * HEX)
    int n = 0;
    const char *theirs = NULL; /* the one hash they share, if they do */
    for (int r = 1; r < size; r++)
        if (strcmp(THEIRS(r), mine)) {
            n++;
            theirs = !theirs || !strcmp(theirs, THEIRS(r)) ? THEIRS(r) : "";
        }
    if (!n)
        return;
    ps_strbuf_printf(b, "%s%s: rank%s ", b->len ? "; " : "", in->name, n > 1 ? "s" : "");
    for (int r = 1, k = 0; r < size && k < LISTED; r++)
        if (strcmp(THEIRS(r), mine) && ++k)
            ps_strbuf_printf(b, "%s%d", k == 1 ? "" : k == n ? " and " : ", ", r);
    if (n > LISTED)
        ps_strbuf_printf(b, " and %d more", n - LISTED);
    if (in->given) {
        ps_strbuf_printf(b, " %s given other values than rank 0", n > 1 ? "were" : "was");
        return;
    }
    ps_strbuf_printf(b, " loaded %s than rank 0 (hash ", n > 1 ? "other files" : "another file");
    if (*theirs)
        ps_strbuf_puts(b, theirs);
    for (int r = 1, k = 0; !*theirs && r < size && k < LISTED; r++)
        if (strcmp(THEIRS(r), mine) && ++k)
            ps_strbuf_printf(b, "%s%s", k == 1 ? "" : k == n ? " and " : ", ", THEIRS(r));
    ps_strbuf_printf(b, "%s vs %s)", !*theirs && n > LISTED ? ", ..." : "", mine);
#undef THEIRS
}

int ps_mpi_same_inputs(const struct ps_mpi_input *in, int n)
{
    int rank = 0, size = 1, rc = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *mine = malloc((size_t)(n ? n : 1) * HEX), *all = NULL;
    if (!mine || (rank == 0 && !(all = malloc((size_t)size * (size_t)(n ? n : 1) * HEX))))
        rc = ps_error(PS_ENOMEM, "out of memory comparing the MPI ranks' inputs");
    for (int i = 0; mine && i < n; i++)
        memcpy(mine + i * HEX, in[i].hex, HEX);
    if ((rc = ps_mpi_agree(rc)) < 0)
        goto out;
    MPI_Gather(mine, n * HEX, MPI_CHAR, all, n * HEX, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        struct ps_strbuf b = PS_STRBUF_INIT;
        for (int i = 0; i < n; i++) {
            all[i * HEX + HEX - 1] = 0;
            for (int r = 1; r < size; r++) /* as sent: 16 digits and a NUL */
                all[(r * n + i) * HEX + HEX - 1] = 0;
            name_ranks(&b, &in[i], all, i, n, size);
        }
        if ((rc = ps_strbuf_error(&b)) == 0 && b.len)
            rc = ps_error(PS_EINVAL, "%s", ps_strbuf_str(&b));
        ps_strbuf_release(&b);
    }
    rc = ps_mpi_agree(rc);
out:
    free(mine);
    free(all);
    return rc;
}
#else
typedef int ps_mpi_unused; /* ISO C: no empty translation unit */
#endif
