/* pipesim validate --check: its outputs after the grid, one set
 * (cli/cmd_validate_check.h). */
#include "cli/cmd_validate_check.h"
#include "analysis/ana_plot.h"
#include "measure/msr_calib_plot.h"
#include "measure/msr_validate.h"
#include "cli/cli.h"
#include "base/ps_afile.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_gnuplot.h"

#include <stdlib.h>

/* What stdout gets: msr_vcheck_print's results. */
struct results {
    const struct msr_vcheck *v;
    enum ana_fmt fmt;
};

static int print_results(const void *ctx, FILE *f)
{
    const struct results *r = ctx;
    return msr_vcheck_print(r->v, r->fmt, f);
}

/* An output written in place (stdout, a device): its text held in memory
 * until every file of the set is synced (cli_output_print). */
struct held {
    struct ps_afile af;
    const char *path;
    char *buf;
    size_t len;
};

int vc_publish(const struct check_args *a, const struct msr_vcheck *v, const char *command,
               const char *const traces[4], int64_t *run, int *db_slot)
{
    struct ana_plot_batch *set = NULL;
    struct held h[5];
    int n_h = 0, rc = ana_plot_batch_new(&set), gp = ps_gnuplot_have(NULL);
    struct msr_accuracy acc;
    msr_vcheck_accuracy(v, 0, &acc);
    const struct msr_vpoint *w = &v->pts[acc.i_mk_max];
    /* the worst point's timelines first: the report shows them */
    if (rc == 0 && gp) {
        char title[640];
        snprintf(title, sizeof title, "%s, K=%d M=%d %s: simulated (upper) vs measured "
                 "(lower), makespan error %+.2f%%", v->spec, w->K, w->M,
                 sch_remat_name(w->remat), 100 * w->cmp->makespan_err);
        rc = msr_plot_timelines_in(w->sim_trace, w->meas_trace, title, a->timeline, set);
    }
    if (rc == 0)
        rc = msr_vcheck_report(v, a->report, a->plot, a->timeline, set);
    /* the traces (PREFIX-sim.csv, -meas.csv, -sim.json, -meas.json), then stdout */
    static const cli_print_fn print[4] = { cli_print_csv, cli_print_csv, cli_print_chrome,
                                           cli_print_chrome };
    const struct trc_trace *trace[4] = { w->sim_trace, w->meas_trace, w->sim_trace,
                                         w->meas_trace };
    const struct results res = { v, a->fmt };
    for (int k = a->traces ? 0 : 4; k < 5 && rc == 0; k++) {
        struct held *x = &h[n_h];
        *x = (struct held){ .path = k < 4 ? traces[k] : "-" };
        rc = cli_output_print(&x->af, x->path, k < 4 ? print[k] : print_results,
                              k < 4 ? (const void *)trace[k] : &res, &x->buf, &x->len);
        if (x->af.f && ps_afile_direct(&x->af)) {
            n_h++;
        } else if (x->af.f) { /* a file: its temporary goes with the figures */
            int arc = ana_plot_batch_adopt(set, &x->af);
            rc = rc < 0 ? rc : arc;
        }
    }
    if (rc == 0)
        rc = ana_plot_batch_sync(set);
    /* the devices, then stdout: a full one stores and replaces nothing */
    for (int last = 0; last < 2; last++)
        for (int k = 0; k < n_h && rc == 0; k++)
            if ((h[k].af.f == stdout) == last)
                rc = cli_output_release(&h[k].af, h[k].path, h[k].buf, h[k].len);
    /* every file renamed into place, then the run stored, in one set: a
     * signal now leaves the old set or the new, and a store that fails puts
     * the old files back (helper-138: the run was stored first, and a file
     * that could not be replaced left the figures new, the report old) */
    ps_afile_publish_begin();
    struct ps_made set_made = { 0 }; /* the figures' folders, taken away if no run is stored */
    ana_plot_batch_hand_made(set, &set_made);
    rc = ana_plot_batch_finish(set, rc, NULL);
    for (int k = 0; k < n_h; k++) {
        if (rc == 0)
            rc = ps_afile_commit(&h[k].af);
        else
            ps_afile_abort(&h[k].af);
        free(h[k].buf);
    }
    if (rc == 0 && *db_slot >= 0) { /* a database made for this run: kept from now on */
        ps_afile_untrack(*db_slot); /* (helper-100: untracked before the figures, a */
        *db_slot = -1;              /* signal then left it empty) */
    }
    if (rc == 0 && (rc = msr_vcheck_store(v, a->db, command, run)) < 0)
        ps_afile_publish_fail();
    ps_afile_publish_end(); /* the files put back first, then their folders can go */
    if (rc < 0)
        ps_made_undo(&set_made);
    else
        ps_made_keep(&set_made);
    return rc;
}
