/*
 * msr_calib_int — private to measure/msr_calib*.c: the timing half of
 * msr_calib_run (msr_calib_time.c, msr_calib_link.c), which fills the stats
 * of c from net.
 */
#ifndef MSR_CALIB_INT_H
#define MSR_CALIB_INT_H

#include "measure/msr_calib.h"
#include "runtime/rt_net.h"

int msr_calib_time(const struct msr_calib_opts *o, struct rt_net *net, struct msr_calib *c);
/* The link half (msr_calib_link.c): hand-off, transfers, memcpy. */
int msr_calib_time_link(const struct rt_net *net, struct msr_calib *c);

#endif
