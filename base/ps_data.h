/*
 * ps_data — where pipesim finds the files it ships: the preset topologies
 * and devices.json, the model profiles, the studies' reference figures and
 * prose templates.
 *
 * One data folder serves a run: the first of
 *   1. $PIPESIM_DATA, when set and not empty;
 *   2. share/pipesim beside the running program's bin/ folder (an installed
 *      pipesim: PREFIX/bin/pipesim reads PREFIX/share/pipesim, also when
 *      installed under a DESTDIR or moved);
 *   3. the source tree it was built in (PIPESIM_SRC_DIR, when it still has
 *      models/topologies): build/pipesim reads the checkout, never an older
 *      installed copy;
 *   4. PIPESIM_SHARE_DIR, the share folder of the PREFIX it was built for.
 * Files are looked up in that folder only, so an installed pipesim that
 * lacks a file says so instead of reading the tree it was built in.
 * Installed layout (`make install`): <root>/<dir>/<file>, dir one of
 * "topologies", "profiles", "gpipe", "torchgpipe"; in the source tree the
 * same folders are models/topologies, models/profiles, studies/gpipe and
 * studies/torchgpipe. In $PIPESIM_DATA a file is also taken from
 * <root>/<file> (PIPESIM_DATA naming a topologies folder, as it did for
 * devices.json).
 *
 * ps_data_find(dir, file, out, n): the bundled file's path in out (file
 * NULL: the folder dir itself); PS_EIO "no <path> (the data folder is
 * <root>: <how it was chosen>; ...)" when it is not there, PS_EUSAGE for a path longer
 * than n. ps_data_root(how, out, n): the folder and why it was chosen
 * ("$PIPESIM_DATA", "installed", "source tree", "prefix"); PS_EIO when
 * none of the four exists.
 * No state, nothing to free. Cost: a few stat calls and one readlink.
 */
#ifndef PS_DATA_H
#define PS_DATA_H

#include <stddef.h>

int ps_data_root(const char **how, char *out, size_t n);
int ps_data_find(const char *dir, const char *file, char *out, size_t n);

#endif
