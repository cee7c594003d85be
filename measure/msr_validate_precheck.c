/* msr_validate_precheck: what validate --check's options alone decide,
 * found before any output is made (see msr_validate.h). */
#include "measure/msr_validate.h"
#include "runtime/rt_cpu.h"
#include "runtime/rt_net.h"
#include "runtime/rt_stage.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int msr_vcheck_profile_fits(const struct mdl_profile *prof, const struct rt_net *net)
{
    if (net->n_layers != prof->n_layers)
        return ps_error(PS_EINVAL, "profile %s has %d layers, net %s has %d: calibrate "
                         "this net", prof->path, prof->n_layers, net->spec, net->n_layers);
    /* the same count of layers is not the same net (helper-66: a profile of
     * width 64 for a net of width 16 was reported as model misses) */
    struct mdl_profile *np = NULL;
    int rc = rt_net_profile(net, &np);
    if (rc < 0)
        return rc;
    for (int l = 0; l < np->n_layers && rc == 0; l++) {
        const struct mdl_layer *a = &prof->layers[l], *b = &np->layers[l];
        const char *f = a->params != b->params ? "params" : a->out_bytes != b->out_bytes
                                                              ? "out_bytes" : NULL;
        if (f)
            rc = ps_error(PS_EINVAL, "profile %s layer %d (%s): %s %.17g, net %s has %.17g: "
                          "calibrate this net", prof->path, l + 1, a->name, f,
                          f[0] == 'p' ? a->params : a->out_bytes, net->spec,
                          f[0] == 'p' ? b->params : b->out_bytes);
    }
    mdl_profile_free(np);
    return rc;
}

/* Every K has a step at some M of the grid (a schedule may have none at a
 * point: dualpipe-v needs M >= 2K), and its stages (K, or K x v of an
 * interleaved schedule) a layer each, as plain validate requires. The grid
 * skips a point the schedule has no list for; a K with none at all was found
 * after calibrating it (the calibration's "no micro-batch size divides the
 * batch", wrong), and a K above the layers after running the K before it. */
static int grid_fits(const struct msr_vcheck_opts *o, const struct rt_net *net)
{
    const char *name = o->schedule ? o->schedule : "gpipe";
    char Ms[256] = "";
    int divides = 0;
    for (int j = 0; j < o->n_M; j++) {
        size_t l = strlen(Ms);
        snprintf(Ms + l, sizeof Ms - l, "%s%d", j ? "," : "", o->Ms[j]);
        divides |= o->batch % o->Ms[j] == 0;
    }
    if (!divides)
        return ps_error(PS_EUSAGE, "--check: no -M of %s divides --batch %d", Ms, o->batch);
    for (int i = 0; i < o->n_K; i++) {
        char why[PS_ERRMSG_MAX] = "";
        int S = 0;
        for (int j = 0; j < o->n_M && !S; j++)
            for (int r = 0; r < o->n_remat && !S && o->batch % o->Ms[j] == 0; r++) {
                struct sch_schedule *s;
                int rc = sch_schedule_build(name, o->Ks[i], o->Ms[j], o->remats[r], &s);
                if (rc == -PS_EUSAGE) { /* a point the grid skips */
                    snprintf(why, sizeof why, "%s", ps_errmsg());
                    ps_error_clear();
                    continue;
                }
                if (rc < 0)
                    return rc;
                S = s->n_stages;
                sch_schedule_free(s);
            }
        if (!S)
            return ps_error(PS_EUSAGE, "--check: %s has no step at K = %d for any -M of %s "
                            "that divides --batch %d: %s", name, o->Ks[i], Ms, o->batch, why);
        if (S > net->n_layers)
            return ps_error(PS_ENOFIT, "--check: K = %d needs %d stages but the net has "
                             "%d layers", o->Ks[i], S, net->n_layers);
    }
    return 0;
}

/* Every K on the devices it will be predicted on: a given topology's, or the
 * calibrated one's, a device per core of this process's affinity mask
 * (msr_calib.c). A K above them was found after the K before it had run, and
 * with calibration after that K's calibration too (helper-99). */
static int grid_devices(const struct msr_vcheck_opts *o)
{
    int n = 0, *cpus = NULL, rc = 0;
    const char *what = NULL;
    if (o->topo && !o->prepare) {
        n = o->topo->n_devices;
        what = o->topo->path;
    } else if (o->prepare) {
        if ((rc = rt_cpus_allowed(&cpus, &n)) < 0)
            return rc;
        free(cpus);
        what = "";
    }
    for (int i = 0; what && i < o->n_K; i++)
        if (o->Ks[i] > n && *what)
            return ps_error(PS_ENOFIT, "--check: K = %d needs %d devices, topology %s has %d",
                            o->Ks[i], o->Ks[i], what, n);
        else if (o->Ks[i] > n)
            return ps_error(PS_ENOFIT, "--check: K = %d needs %d devices, the topology "
                            "calibrated here has %d (a device per core this process may run "
                            "on)", o->Ks[i], o->Ks[i], n);
    return 0;
}

int msr_vcheck_precheck(const struct msr_vcheck_opts *o)
{
    struct rt_net *net = NULL;
    int rc = rt_net_parse(o->spec, &net);
    if (rc == 0 && (rc = grid_fits(o, net)) == 0 && o->profile && !o->prepare)
        rc = msr_vcheck_profile_fits(o->profile, net);
    if (rc == 0)
        rc = grid_devices(o);
    rt_net_free(net);
    return rc;
}
