/*
 * ana_calib_int — private to analysis/ana_calib*.c: the timing half of
 * ana_calib_run (ana_calib_time.c, ana_calib_link.c), which fills the stats
 * of c from net.
 */
#ifndef ANA_CALIB_INT_H
#define ANA_CALIB_INT_H

#include "analysis/ana_calib.h"
#include "runtime/rt_net.h"

int ana_calib_time(const struct ana_calib_opts *o, struct rt_net *net, struct ana_calib *c);
/* The link half (ana_calib_link.c): hand-off, transfers, memcpy. */
int ana_calib_time_link(const struct rt_net *net, struct ana_calib *c);

#endif
