/* trc_chakra_int — where an export's files go (traces/trc_chakra_files.c),
 * for trc_chakra.c: the paths of the ranks and of the communicator groups,
 * the checks before the work, and the files of an earlier, larger export
 * under the same prefix, which an export removes (a reader that takes every
 * <prefix>.*.et would mix the two runs).
 *
 * Ownership: borrows the options; trc_chakra_earlier_find allocates *out
 * (free). Cost: O(ranks) each, trc_chakra_earlier_find O(entries of the
 * folder).
 */
#ifndef TRC_CHAKRA_INT_H
#define TRC_CHAKRA_INT_H

#include "traces/trc_chakra.h"

#include <stddef.h>

/* Rank numbers an export writes and an earlier one's files are looked for
 * below (one past the most ranks a name may carry). */
#define TRC_CHAKRA_RANK_MAX (1 << 20)

/* DIR/PREFIX.RANK.et into buf of n bytes; PS_EUSAGE naming the rank when it
 * does not fit (a long --out-dir was cut short, and its error named another
 * file: helper-113). */
int trc_chakra_rank_path(const struct trc_chakra_opts *o, int rank, char *buf, size_t n);
/* DIR/PREFIX.comm_groups.json into buf; PS_EUSAGE when it does not fit. */
int trc_chakra_groups_path(const struct trc_chakra_opts *o, char *buf, size_t n);
/* Every rank file of n (and the groups file, gpath or NULL) is a file of its
 * own and none an input the command read: two links to one file would leave
 * one rank's graph under two ranks' names (helper-70). PS_EUSAGE, or an
 * input's error, else 0. */
int trc_chakra_distinct_outputs(const struct trc_chakra_opts *o, int n, const char *gpath);
/* Every rank's temporary stays open until all are on disk: whether the
 * limit on open files allows ranks (+ the groups file) beside what is open
 * now, PS_EINVAL naming ulimit -n when its hard limit does not; raise 1
 * also raises the soft limit to it (helper-70: 1024). With raise 0, the
 * check before the work (helper-113: found after the simulation). */
int trc_chakra_open_files(int ranks, int groups, int raise);
/* The numbers, from ranks up, of the rank files (names as
 * trc_chakra_rank_path writes them) the folder holds now: an earlier,
 * larger export's, every one, past a gap too (helper-113: the walk stopped
 * at the first missing rank, and a stopped removal left ranks no later
 * export removed). Found before the renames, so that the folder's read is
 * not done with signals held. *out (NULL when none) and *n; PS_ENOMEM. */
int trc_chakra_earlier_find(const struct trc_chakra_opts *o, int ranks, int **out, int *n);
/* Removes the n files found that are pipesim's own rank files (a regular
 * file holding "pipesim_rank", none a command input: helper-70, a topology
 * named like one was deleted), and, when this export has no groups, an
 * earlier export's groups file gpath; each removal adds 1 to *o->stale.
 * Run with signals held, with the renames (ps_afile_publish_begin), so that
 * a signal leaves the one set or the other: one non-blocking open, a 4 KB
 * read and an unlink per file. */
void trc_chakra_earlier_remove(const struct trc_chakra_opts *o, const int *found, int n,
                               int groups, const char *gpath);

#endif
