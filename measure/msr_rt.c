/* Real-time scheduling for measurements (msr_calib.h): SCHED_FIFO on or
 * off for the calling thread, and the kernel's RT throttling
 * (kernel.sched_rt_runtime_us) read, set and described. Split from
 * msr_calib.c. */
#include "measure/msr_calib.h"
#include "base/ps_error.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int msr_realtime(int on)
{
    struct sched_param sp = { .sched_priority = on ? 10 : 0 };
    if (sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &sp))
        return ps_error(PS_ERUNTIME, "cannot switch to %s scheduling: %s",
                         on ? "real-time (SCHED_FIFO)" : "normal", strerror(errno));
    return 0;
}

static void rt_path(const char *dir, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", dir ? dir : "/proc/sys/kernel", name);
}

static int read_long_file(const char *path, long *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return ps_error(PS_EIO, "%s: %s", path, strerror(errno));
    char line[64], *end;
    int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    errno = 0;
    long v = ok ? strtol(line, &end, 10) : 0;
    if (!ok || end == line || errno || (*end && *end != '\n'))
        return ps_error(PS_EIO, "%s:1: not one integer", path);
    *out = v;
    return 0;
}

int msr_rt_throttle_read(const char *dir, long *runtime_us, long *period_us)
{
    char p[4096];
    rt_path(dir, "sched_rt_runtime_us", p, sizeof p);
    int rc = read_long_file(p, runtime_us);
    if (rc < 0)
        return rc;
    rt_path(dir, "sched_rt_period_us", p, sizeof p);
    return read_long_file(p, period_us);
}

int msr_rt_throttle_set(const char *dir, long runtime_us, long *old)
{
    if (runtime_us < -1)
        return ps_error(PS_EINVAL, "RT runtime %ld us: -1 (no limit) or >= 0", runtime_us);
    char p[4096];
    rt_path(dir, "sched_rt_runtime_us", p, sizeof p);
    long prev;
    int rc = read_long_file(p, &prev);
    if (rc < 0)
        return rc;
    FILE *f = fopen(p, "w");
    if (!f)
        return ps_error(PS_EIO, "%s: %s", p, strerror(errno));
    int bad = fprintf(f, "%ld\n", runtime_us) < 0;
    bad |= fclose(f) != 0;
    if (bad)
        return ps_error(PS_EIO, "%s: cannot write %ld: %s", p, runtime_us, strerror(errno));
    if (old)
        *old = prev;
    return 0;
}

int msr_rt_throttle_describe(const char *dir, char *buf, size_t n)
{
    long rt, period;
    if (msr_rt_throttle_read(dir, &rt, &period) < 0) {
        snprintf(buf, n, "RT throttling: unknown (%s)", ps_errmsg());
        ps_error_clear();
        return -1;
    }
    if (rt < 0) {
        snprintf(buf, n, "RT throttling: off (kernel.sched_rt_runtime_us = -1)");
        return 0;
    }
    snprintf(buf, n, "RT throttling: FIFO threads may use %.0f of every %.0f ms "
             "(kernel.sched_rt_runtime_us)", rt / 1e3, period / 1e3);
    return rt < period;
}
