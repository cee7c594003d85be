/* Chakra export: decoded with the tests' own protobuf reader (chakra_decode.h,
 * written from the wire format, not from trc_chakra.c's encoder) and, when protoc is
 * installed, with protoc against a schema subset. Checks node counts,
 * types, exact durations, dependency structure and send/recv pairing. */
#include "helpers.h"

#include "chakra_decode.h"
#include "traces/trc_chakra.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(chakra, .timeout = 60);

static char *tmpdir(void)
{
    char *d = malloc(64);
    cr_assert(d);
    th_tmpdir(d, 64, "chakra");
    return d;
}

static void rmdir_all(char *dir)
{
    th_sh("rm -rf '%s'", dir);
    free(dir);
}

static void load_rank(const char *dir, int rank, struct dfile *df)
{
    char path[512];
    snprintf(path, sizeof path, "%s/pipesim.%d.et", dir, rank);
    rd_file(path, df);
}

/* ---- checks shared by the schedules --------------------------------------- */

/* Structure every export must have, whatever the schedule. */
static void check_common(struct dfile *df, int R, const struct sch_schedule *s)
{
    int D = s->n_devices;
    for (int rank = 0; rank < D * R; rank++) {
        struct dfile *f = &df[rank];
        int d = rank % D;
        cr_assert_str_eq(f->version, "0.0.4");
        cr_assert_eq((int64_t)attr(f->meta, f->nmeta, "pipesim_rank", 9)->v, rank);
        cr_assert_eq((int64_t)attr(f->meta, f->nmeta, "pipesim_n_ranks", 9)->v, D * R);
        cr_assert_str_eq(attr(f->meta, f->nmeta, "pipesim_schedule", 29)->s, s->name);
        cr_assert_eq(f->n, s->n_ops[d], "rank %d: one node per op", rank);
        int last[3] = { -1, -1, -1 };
        for (int i = 0; i < f->n; i++) {
            const struct dnode *n = &f->nodes[i];
            const struct sch_op *op = &s->ops[d][i];
            cr_assert_eq(n->id, (uint64_t)i);
            cr_assert_eq(ival(n, "pipesim_stage", 9), op->stage);
            cr_assert_eq(ival(n, "pipesim_mb", 9), op->mb);
            cr_assert_eq(ival(n, "is_cpu_op", 27), 0);
            int stream = n->type == TRC_CHAKRA_SEND ? 1 : n->type == TRC_CHAKRA_RECV ? 2 : 0;
            int want = op->kind == SCH_OP_ALLREDUCE ? TRC_CHAKRA_COLL
                       : sch_op_stream(op->kind) == SCH_STREAM_SEND ? TRC_CHAKRA_SEND
                       : sch_op_stream(op->kind) == SCH_STREAM_RECV ? TRC_CHAKRA_RECV
                                                                    : TRC_CHAKRA_COMP;
            cr_assert_eq(n->type, want, "%s", n->name);
            /* ctrl: the previous node of the same stream, none for the first */
            if (last[stream] < 0)
                cr_assert_eq(n->nctrl, 0, "%s", n->name);
            else {
                cr_assert_eq(n->nctrl, 1, "%s", n->name);
                cr_assert_eq(n->ctrl[0], (uint64_t)last[stream], "%s", n->name);
                const struct dnode *p = &f->nodes[last[stream]];
                /* streams run in order: the previous one ended first (a
                 * receive's span starts with its transfer, which may have
                 * begun earlier: receives only complete in order) */
                int64_t pend = ival(p, "pipesim_start_ns", 9) + ival(p, "pipesim_duration_ns", 9);
                int64_t nend = ival(n, "pipesim_start_ns", 9) + ival(n, "pipesim_duration_ns", 9);
                if (stream == 2)
                    cr_assert_leq(pend, nend, "%s after %s", n->name, p->name);
                else
                    cr_assert_leq(pend, ival(n, "pipesim_start_ns", 9), "%s after %s", n->name,
                                  p->name);
            }
            last[stream] = i;
            for (int k = 0; k < n->ndata; k++)
                cr_assert_lt(n->data[k], n->id, "%s: data deps point back", n->name);
            int64_t ns = ival(n, "pipesim_duration_ns", 9);
            cr_assert_eq(n->dur, (uint64_t)((ns + 500) / 1000), "%s", n->name);
            cr_assert_eq(n->start, (uint64_t)((ival(n, "pipesim_start_ns", 9) + 500) / 1000));
        }
    }
    /* every send has one receive on its peer with the same tag and size */
    int sends = 0, recvs = 0;
    for (int a = 0; a < D * R; a++)
        for (int i = 0; i < df[a].n; i++) {
            const struct dnode *n = &df[a].nodes[i];
            if (n->type == TRC_CHAKRA_RECV) {
                recvs++;
                cr_assert_eq(ival(n, "comm_dst", 7), a);
            }
            if (n->type != TRC_CHAKRA_SEND)
                continue;
            sends++;
            cr_assert_eq(ival(n, "comm_src", 7), a);
            int b = (int)ival(n, "comm_dst", 7), found = 0;
            cr_assert(b >= 0 && b < D * R && b != a);
            cr_assert_eq(b / D, a / D, "transfers stay inside a replica");
            for (int j = 0; j < df[b].n; j++) {
                const struct dnode *m = &df[b].nodes[j];
                if (m->type == TRC_CHAKRA_RECV && ival(m, "comm_src", 7) == a &&
                    ival(m, "comm_tag", 7) == ival(n, "comm_tag", 7)) {
                    found++;
                    cr_assert_eq(ival(m, "comm_size", 9), ival(n, "comm_size", 9));
                    cr_assert_gt(ival(m, "comm_size", 9), 0);
                    /* the receive completes once the transfer has */
                    cr_assert_geq(ival(m, "pipesim_start_ns", 9) + ival(m, "pipesim_duration_ns", 9),
                                  ival(n, "pipesim_start_ns", 9) + ival(n, "pipesim_duration_ns", 9));
                }
            }
            cr_assert_eq(found, 1, "rank %d %s: %d matching receives", a, n->name, found);
        }
    cr_assert_eq(sends, recvs);
    cr_assert_gt(sends, 0);
}

static void export(const struct sch_schedule *s, const struct sch_costs *c, sim_engine *e,
                   const char *dir, int R)
{
    struct trc_chakra_opts o = { .dir = dir, .batch = 8 };
    int n = -1;
    cr_assert_eq(trc_chakra_write(s, c, sim_engine_trace(e), &o, &n), 0, "%s", ps_errmsg());
    cr_assert_eq(n, s->n_devices * R);
}

/* ---- tests ------------------------------------------------------------------ */

/* The step both GPipe tests export: 8 layers of 1000 / 2000 ns at the
 * micro-batch size, 2 per stage; 100 bytes per sample cross each cut; ideal
 * links 1 GB/s, 100 ns; K = 4, M = 3, except_last; each device's own copy
 * of a message it sends or receives (send_s, recv_s; 0: none). Exported,
 * read back into df and checked by check_common. */
static void gpipe_step(double send_s, double recv_s, struct mdl_profile **p,
                       struct mdl_topology **t, struct th_run *run, char **dir,
                       struct dfile df[4])
{
    *p = th_uniform(8, 1000, 2000, 2, 100, 0, 10);
    *t = th_chain(4, 0, 1e9, 100e-9);
    th_messages(*t, send_s, 0, recv_s, 0);
    th_simulate(run, "gpipe", *p, *t, 4, 3, SCH_REMAT_EXCEPT_LAST, 2, 1);
    *dir = tmpdir();
    export(run->s, run->c, run->e, *dir, 1);
    for (int r = 0; r < 4; r++)
        load_rank(*dir, r, &df[r]);
    check_common(df, 1, run->s);
}

Test(chakra, gpipe_exact_durations_and_deps)
{
    struct mdl_profile *p;
    struct mdl_topology *t;
    struct th_run run;
    char *dir;
    struct dfile df[4];
    gpipe_step(0, 0, &p, &t, &run, &dir, df);
    for (int r = 0; r < 4; r++) {
        int M = 3;
        for (int m = 0; m < M; m++) {
            const struct dnode *F = by_name(&df[r], "s%d:F%d", r, m);
            const struct dnode *B = by_name(&df[r], "s%d:B%d", r, m);
            const struct dnode *R = by_name(&df[r], "s%d:R%d", r, m);
            cr_assert(F && B);
            cr_assert_eq(ival(F, "pipesim_duration_ns", 9), 2000);
            cr_assert_eq(F->dur, 2);
            cr_assert_eq(ival(B, "pipesim_duration_ns", 9), 4000);
            cr_assert_str_eq(attr(F->a, F->na, "pipesim_kind", 29)->s, "F");
            /* except_last: every micro-batch but the last re-materializes */
            cr_assert_eq(R != NULL, m < M - 1, "R%d on stage %d", m, r);
            cr_assert(has_data_dep(B, R ? R : F));
            if (R)
                cr_assert(has_data_dep(R, F));
            if (r > 0) {
                const struct dnode *rv = by_name(&df[r], "s%d:recvF%d", r, m);
                const struct dnode *sg = by_name(&df[r], "s%d:sendB%d", r, m);
                cr_assert(rv && sg);
                cr_assert(has_data_dep(F, rv));
                cr_assert(has_data_dep(sg, B));
                cr_assert_eq(rv->ndata, 0, "its dependency is on the peer");
                cr_assert_eq(ival(rv, "comm_src", 7), r - 1);
            }
            if (r < 3) {
                const struct dnode *sn = by_name(&df[r], "s%d:sendF%d", r, m);
                const struct dnode *rg = by_name(&df[r], "s%d:recvB%d", r, m);
                cr_assert(sn && rg);
                cr_assert(has_data_dep(sn, F));
                cr_assert(has_data_dep(B, rg));
                cr_assert_eq(ival(sn, "comm_size", 9), 200);
                /* the bytes' time on the link; the 100 ns latency is the
                 * receiver's wait, not the send's (mdl_topology.h) */
                cr_assert_eq(ival(sn, "pipesim_duration_ns", 9), 200, "200 B / 1 GB/s");
                cr_assert_eq(ival(sn, "comm_tag", 7), 2 * (r * M + m));
            }
        }
        const struct dnode *U = by_name(&df[r], "s%d:U", r, 0);
        cr_assert(U);
        cr_assert_eq(U->ndata, 3, "U waits for its stage's three backwards");
        for (int m = 0; m < 3; m++)
            cr_assert(has_data_dep(U, by_name(&df[r], "s%d:B%d", r, m)));
        cr_assert_eq(U->id, (uint64_t)df[r].n - 1);
        df_free(&df[r]);
    }
    rmdir_all(dir);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

static void schedule_roundtrip(const char *name, int K, int M)
{
    double f[8] = { 700, 900, 1100, 1300, 800, 600, 1000, 1200 }, b[8], out[8];
    for (int i = 0; i < 8; i++)
        b[i] = 2 * f[i], out[i] = 64;
    struct mdl_profile *p = th_profile(8, f, b, 1, out, NULL, 100);
    struct mdl_topology *t = th_chain(K, 1e9, 1e9, 50e-9);
    struct th_run run;
    th_simulate(&run, name, p, t, K, M, SCH_REMAT_NEVER, 1, 1);
    char *dir = tmpdir();
    export(run.s, run.c, run.e, dir, 1);
    struct dfile df[8];
    for (int r = 0; r < K; r++)
        load_rank(dir, r, &df[r]);
    check_common(df, 1, run.s);
    for (int r = 0; r < K; r++) {
        for (int st = 0; st < run.s->n_stages; st++) {
            if (run.s->stage_device[st] != r)
                continue;
            const struct dnode *U = by_name(&df[r], "s%d:U", st, 0);
            cr_assert(U);
            cr_assert_eq(U->ndata, M);
            for (int m = 0; m < M; m++)
                cr_assert(has_data_dep(U, by_name(&df[r], run.s->has_wgrad ? "s%d:W%d"
                                                                          : "s%d:B%d", st, m)),
                          "%s: U(%d) after micro-batch %d", name, st, m);
            if (run.s->has_wgrad)
                for (int m = 0; m < M; m++)
                    cr_assert(has_data_dep(by_name(&df[r], "s%d:W%d", st, m),
                                           by_name(&df[r], "s%d:B%d", st, m)));
            /* consecutive stages on one device: a direct data dependency */
            if (st > 0 && run.s->stage_device[st - 1] == r)
                cr_assert(has_data_dep(by_name(&df[r], "s%d:F%d", st, 0),
                                       by_name(&df[r], "s%d:F%d", st - 1, 0)));
        }
        df_free(&df[r]);
    }
    rmdir_all(dir);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}


/* Host-driven messages (sends 50 ns, receives 70 ns, th_messages) on the
 * 4-stage GPipe above: F and B nodes keep their own time (2000, 4000 ns);
 * a send spans its device's copy and its bytes' time (50 + 200 ns) from
 * where its F ends, a receive ends where its reader starts, and each gives
 * its copy as pipesim_copy_ns; R nodes carry none. */
Test(chakra, message_copies_in_the_nodes)
{
    struct mdl_profile *p;
    struct mdl_topology *t;
    struct th_run run;
    char *dir;
    struct dfile df[4];
    gpipe_step(50e-9, 70e-9, &p, &t, &run, &dir, df);
    for (int r = 0; r < 4; r++) {
        for (int m = 0; m < 3; m++) {
            const struct dnode *F = by_name(&df[r], "s%d:F%d", r, m);
            const struct dnode *B = by_name(&df[r], "s%d:B%d", r, m);
            cr_assert(F && B);
            int64_t f0 = ival(F, "pipesim_start_ns", 9), b0 = ival(B, "pipesim_start_ns", 9);
            cr_assert_eq(ival(F, "pipesim_duration_ns", 9), 2000);
            cr_assert_eq(ival(B, "pipesim_duration_ns", 9), 4000);
            for (int k = 0; k < F->na; k++)
                cr_assert(strncmp(F->a[k].name, "pipesim_copy", 12), "F%d has no copy", m);
            const struct dnode *R = by_name(&df[r], "s%d:R%d", r, m);
            if (R)
                for (int k = 0; k < R->na; k++)
                    cr_assert(strncmp(R->a[k].name, "pipesim_copy", 12), "R%d has no copy", m);
            if (r < 3) {
                const struct dnode *sn = by_name(&df[r], "s%d:sendF%d", r, m);
                const struct dnode *rg = by_name(&df[r], "s%d:recvB%d", r, m);
                cr_assert(sn && rg);
                cr_assert_eq(ival(sn, "pipesim_duration_ns", 9), 250,
                             "50 ns copy + 200 B / 1 GB/s");
                cr_assert_eq(ival(sn, "pipesim_copy_ns", 9), 50);
                cr_assert_eq(ival(sn, "pipesim_start_ns", 9), f0 + 2000,
                             "the send starts where its F ends");
                cr_assert_eq(ival(rg, "pipesim_copy_ns", 9), 70);
                cr_assert_eq(ival(rg, "pipesim_start_ns", 9) + ival(rg, "pipesim_duration_ns", 9),
                             b0, "the receive ends where its reader starts");
            }
            if (r > 0) {
                const struct dnode *rv = by_name(&df[r], "s%d:recvF%d", r, m);
                cr_assert(rv);
                cr_assert_eq(ival(rv, "pipesim_copy_ns", 9), 70);
                cr_assert_eq(ival(rv, "pipesim_start_ns", 9) + ival(rv, "pipesim_duration_ns", 9),
                             f0, "the receive ends where its reader starts");
            }
        }
        df_free(&df[r]);
    }
    rmdir_all(dir);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

Test(chakra, other_schedules) {
    schedule_roundtrip("1f1b", 4, 8);
    schedule_roundtrip("interleaved:2", 2, 4);
    schedule_roundtrip("zb-h1", 3, 6);
}

Test(chakra, replicas_get_allreduce_collectives)
{
    char tp[] = "/tmp/pipesim-bus-XXXXXX";
    FILE *tf = fdopen(mkstemp(tp), "w");
    fprintf(tf, "{\"devices\":[{\"name\":\"g\",\"count\":6,\"flops\":1e12,\"memory\":1e12}],"
                "\"links\":[{\"name\":\"bus\",\"endpoints\":\"*\",\"bandwidth\":1e10,"
                "\"shared\":true}]}");
    fclose(tf);
    struct mdl_topology *t;
    cr_assert_eq(mdl_topology_load(tp, &t), 0, "%s", ps_errmsg());
    unlink(tp);
    struct mdl_profile *p = th_uniform(4, 1000, 2000, 1, 10, 0, 250);
    struct sch_schedule *s;
    struct sch_partition *part;
    struct sch_costs *c;
    sim_engine *e;
    cr_assert_eq(sch_schedule_build("1f1b", 2, 4, SCH_REMAT_NEVER, &s), 0);
    cr_assert_eq(sch_schedule_add_allreduce(s, 3), 0);
    cr_assert_eq(sch_partition_uniform(2, 4, &part), 0);
    cr_assert_eq(sch_costs_new(p, t, part, s->stage_device, 1, &c), 0);
    cr_assert_eq(sim_simulate(s, c, t, 1, &e), 0, "%s", ps_errmsg());
    char *dir = tmpdir();
    export(s, c, e, dir, 3);
    struct dfile df[6];
    for (int r = 0; r < 6; r++)
        load_rank(dir, r, &df[r]);
    check_common(df, 3, s);
    for (int r = 0; r < 6; r++) {
        int st = r % 2;
        const struct dnode *ar = by_name(&df[r], "s%d:AR", st, 0);
        const struct dnode *U = by_name(&df[r], "s%d:U", st, 0);
        cr_assert(ar && U);
        cr_assert_eq(ar->type, TRC_CHAKRA_COLL);
        cr_assert_eq(ival(ar, "comm_type", 9), TRC_CHAKRA_ALL_REDUCE);
        cr_assert_eq(ival(ar, "comm_size", 9), 2 * 250 * 4, "two layers of 250 FP32 params");
        /* ASTRA-sim reads pg_name as a group number (std::stoi): device d's replicas
         * are group d + 1 of <prefix>.comm_groups.json ("dp_stage0" aborted it) */
        char pg[16];
        snprintf(pg, sizeof pg, "%d", st + 1);
        cr_assert_str_eq(attr(ar->a, ar->na, "pg_name", 29)->s, pg);
        cr_assert_eq(ar->ndata, 4);
        cr_assert_eq(U->ndata, 1);
        cr_assert_eq(U->data[0], ar->id);
        cr_assert_eq(ival(ar, "pipesim_duration_ns", 9) > 0, 1);
        /* replicas are copies of replica 0 but for their ranks */
        const struct dfile *z = &df[st];
        cr_assert_eq(df[r].n, z->n);
        for (int i = 0; i < z->n; i++) {
            cr_assert_str_eq(df[r].nodes[i].name, z->nodes[i].name);
            cr_assert_eq(df[r].nodes[i].dur, z->nodes[i].dur);
            cr_assert_eq(df[r].nodes[i].ndata, z->nodes[i].ndata);
        }
    }
    for (int r = 0; r < 6; r++)
        df_free(&df[r]);
    rmdir_all(dir);
    /* a memory policy's FP16 gradients (mixed-adam): half the bytes */
    c->grad_bytes = 2;
    dir = tmpdir();
    export(s, c, e, dir, 3);
    load_rank(dir, 0, &df[0]);
    cr_assert_eq(ival(by_name(&df[0], "s%d:AR", 0, 0), "comm_size", 9), 2 * 250 * 2);
    df_free(&df[0]);
    rmdir_all(dir);
    sim_engine_free(e);
    sch_costs_free(c);
    sch_partition_free(part);
    sch_schedule_free(s);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

Test(chakra, cli_writes_rank_files_and_fails_cleanly)
{
    const char *ps = th_pipesim();
    char *dir = tmpdir();
    char sub[600];
    snprintf(sub, sizeof sub, "%s/out", dir);
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=6,width=64 --topology "
                       "models/topologies/pcie-8gpu.json -K 3 -M 4 --batch 16 --replicas 2 "
                       "--out-dir %s --prefix job 2>/dev/null", ps, sub), 0);
    cr_assert_eq(count_files(sub), 7);
    /* the communicator groups ASTRA-sim takes (--comm-group-configuration): each
     * device's replicas */
    cr_assert_eq(th_sh("python3 -c 'import json,sys; g=json.load(open(sys.argv[1])); "
                       "assert g == {\"1\": [0, 3], \"2\": [1, 4], \"3\": [2, 5]}, g' "
                       "%s/job.comm_groups.json", sub), 0);
    struct dfile df;
    char path[700];
    snprintf(path, sizeof path, "%s/job.5.et", sub);
    rd_file(path, &df);
    cr_assert_eq((int64_t)attr(df.meta, df.nmeta, "pipesim_replicas", 9)->v, 2);
    cr_assert_gt(df.n, 0);
    df_free(&df);
    /* a smaller export under the same prefix removes the ranks it no longer has (they
     * stayed, so job.*.et mixed two runs); another prefix's files and a gap stay */
    cr_assert_eq(th_sh("touch %s/job.7.et %s/other.4.et", sub, sub), 0);
    char err[1024];
    cr_assert_eq(th_capture(err, sizeof err, "%s export-chakra --model mlp:layers=6,width=64 "
                            "--topology models/topologies/pcie-8gpu.json -K 2 -M 4 --batch 16 "
                            "--out-dir %s --prefix job 2>&1 >/dev/null", ps, sub), 0);
    /* four ranks (2-5), and the groups of that export with replicas */
    cr_assert(strstr(err, "removed 5 file(s) an earlier export left under the same prefix "
                          "(ranks 2 and up"), "%s", err);
    cr_assert_eq(th_sh("test ! -e %s/job.comm_groups.json", sub), 0);
    cr_assert_eq(th_sh("cd %s && test -f job.0.et && test -f job.1.et && ! test -e job.2.et && "
                       "! test -e job.5.et && test -f job.7.et && test -f other.4.et", sub), 0);
    /* only pipesim's own rank files go, never a file the run read (helper-70: a
     * topology named job.2.et was deleted) */
    cr_assert_eq(th_sh("cp models/topologies/chain-8-ideal.json %s/job.2.et", sub), 0);
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=6,width=64 --topology %s/job.2.et "
                       "-K 2 -M 4 --batch 16 --out-dir %s --prefix job >/dev/null 2>&1", ps, sub,
                       sub), 0);
    cr_assert_eq(th_sh("grep -q devices %s/job.2.et", sub), 0, "the input was deleted");
    /* and a rank file past it is removed still */
    cr_assert_eq(th_sh("rm %s/job.2.et && cp %s/job.0.et %s/job.3.et && cp "
                       "models/topologies/chain-8-ideal.json %s/job.2.et && %s export-chakra "
                       "--model mlp:layers=6,width=64 --topology %s/job.2.et -K 2 -M 4 --batch 16 "
                       "--out-dir %s --prefix job >/dev/null 2>&1 && test ! -e %s/job.3.et && "
                       "grep -q devices %s/job.2.et", sub, sub, sub, sub, ps, sub, sub, sub, sub),
                 0);
    /* past a gap too: an export stopped while it removed them left one, and the
     * walk stopped at the first missing rank (helper-113) */
    cr_assert_eq(th_sh("cp %s/job.0.et %s/job.9.et && cp %s/job.0.et %s/job.12.et && %s "
                       "export-chakra --model mlp:layers=6,width=64 --topology "
                       "models/topologies/pcie-8gpu.json -K 2 -M 4 --batch 16 --out-dir %s "
                       "--prefix job >/dev/null 2>&1 && test ! -e %s/job.9.et && "
                       "test ! -e %s/job.12.et && test -f %s/job.1.et", sub, sub, sub, sub, ps,
                       sub, sub, sub, sub), 0);
    /* two ranks that are one file (links) are refused before any work */
    cr_assert_eq(th_sh("mkdir %s/ln && ln -s x %s/ln/p.0.et && ln -s x %s/ln/p.1.et", dir, dir,
                       dir), 0);
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=6,width=64 --topology "
                       "chain-8-ideal -K 2 -M 4 --batch 16 --out-dir %s/ln --prefix p "
                       ">/dev/null 2>&1", ps, dir), 2);
    cr_assert_neq(th_sh("test -e %s/ln/x", dir), 0);
    /* bad input: clear exit status, no files */
    char sub2[600];
    snprintf(sub2, sizeof sub2, "%s/bad", dir);
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=2,width=64 --topology "
                       "models/topologies/pcie-8gpu.json -K 3 -M 4 --batch 16 --out-dir %s "
                       "2>/dev/null", ps, sub2), 7, "K > layers");
    cr_assert_leq(count_files(sub2), 0);
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=6,width=64 --topology "
                       "models/topologies/pcie-8gpu.json -K 3 -M 4 --batch 16 2>/dev/null", ps),
                 2, "--out-dir is required");
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=6,width=64 --topology "
                       "models/topologies/pcie-8gpu.json -K 3 -M 4 --batch 16 --out-dir %s "
                       "--prefix a/b 2>/dev/null", ps, sub2), 2);
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=6,width=64 --topology "
                       "models/topologies/pcie-8gpu.json -K 3 -M 4 --batch 16 --out-dir "
                       "%s/job.0.et 2>/dev/null", ps, sub), 5, "--out-dir is a file");
    /* a rank that cannot be written (a link to /dev/full) replaces no other:
     * the old job.0.et stays (the ranks published before it were unlinked,
     * old files and new) */
    cr_assert_eq(th_sh("mkdir %s/full && cd %s/full && echo OLD > job.0.et && ln -s "
                       "/dev/full job.1.et && echo OLD > job.3.et", dir, dir), 0);
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=4,width=64 --topology "
                       "models/topologies/pcie-8gpu.json -K 2 -M 1 --batch 4 --replicas 2 "
                       "--out-dir %s/full --prefix job 2>/dev/null", ps, dir), 5, "/dev/full");
    cr_assert_eq(th_sh("cd %s/full && test \"$(cat job.0.et)\" = OLD && test \"$(cat job.3.et)"
                       "\" = OLD && test -L job.1.et && ! test -e job.2.et", dir), 0,
                 "a rank was replaced or removed");
    /* where the ranks go is refused before the simulation (helper-87: after it, seconds
     * later): an --out-dir under a file fails so even where the run would not fit */
    cr_assert_eq(th_sh("%s export-chakra --model mlp:layers=6,width=64 --topology "
                       "models/topologies/pcie-8gpu.json -K 3 -M 4 --batch 48 --replicas 3 "
                       "--out-dir %s/job.0.et/x 2>/dev/null", ps, sub), 5,
                 "checked after the work");
    /* and any rank's, not rank 0's alone (helper-96) */
    cr_assert_eq(th_sh("mkdir -p %s/o2/pipesim.1.et && %s export-chakra --model "
                       "mlp:layers=6,width=64 --topology models/topologies/pcie-8gpu.json -K 3 "
                       "-M 4 --batch 48 --replicas 3 --out-dir %s/o2 2>%s/err", dir, ps, dir,
                       dir), 5, "checked after the work");
    cr_assert_eq(th_sh("grep -q \"^pipesim export-chakra: --out-dir '%s/o2/pipesim.1.et': "
                       "cannot write: \" %s/err", dir, dir), 0);
    /* and one that is an input only through ".." over folders not there yet: the
     * folders made on the way are taken away */
    cr_assert_eq(th_sh("mkdir %s/in && cp models/topologies/chain-8-ideal.json %s/in/job.0.et "
                       "&& %s export-chakra --model mlp:layers=6,width=64 --topology "
                       "%s/in/job.0.et -K 2 -M 4 --batch 16 --out-dir %s/nd/a/../../in --prefix "
                       "job 2>/dev/null; test $? = 2 && test ! -e %s/nd", dir, dir, ps, dir, dir,
                       dir), 0);
    /* a failed export takes away the folders it made for --out-dir (they were
     * left, empty): here no rank can be written past a file-size limit */
    cr_assert_eq(th_sh("(ulimit -f 0; %s export-chakra --model mlp:layers=4,width=64 --topology "
                       "models/topologies/pcie-8gpu.json -K 2 -M 1 --batch 4 --out-dir %s/n/a "
                       "2>/dev/null)", ps, dir), 5, "a file-size limit");
    cr_assert_eq(th_sh("test ! -e %s/n", dir), 0, "a folder it made was left");
    cr_assert_eq(th_sh("%s export-chakra --help >/dev/null", ps), 0);
    rmdir_all(dir);
}

/* protoc, when installed, as a second decoder (schema subset written here:
 * the field numbers and types of et_def.proto that the exporter uses). */
static const char subset_proto[] =
    "syntax = \"proto3\";\npackage ChakraProtoMsg;\n"
    "message AttributeProto { string name = 1; oneof value { double double_val = 3;\n"
    "  int32 int32_val = 7; int64 int64_val = 9; bool bool_val = 27; string string_val = 29; } }\n"
    "message GlobalMetadata { string version = 1; repeated AttributeProto attr = 2; }\n"
    "enum NodeType { INVALID_NODE = 0; METADATA_NODE = 1; MEM_LOAD_NODE = 2;\n"
    "  MEM_STORE_NODE = 3; COMP_NODE = 4; COMM_SEND_NODE = 5; COMM_RECV_NODE = 6;\n"
    "  COMM_COLL_NODE = 7; }\n"
    "message Node { uint64 id = 1; string name = 2; NodeType type = 3;\n"
    "  repeated uint64 ctrl_deps = 4; repeated uint64 data_deps = 5;\n"
    "  uint64 start_time_micros = 6; uint64 duration_micros = 7;\n"
    "  repeated AttributeProto attr = 10; }\n";

static void protoc_decode(const char *dir, const uint8_t *msg, size_t len, const char *type,
                          char *out, size_t n)
{
    char in[600], txt[600];
    snprintf(in, sizeof in, "%s/msg.bin", dir);
    snprintf(txt, sizeof txt, "%s/msg.txt", dir);
    FILE *f = fopen(in, "wb");
    cr_assert(f);
    fwrite(msg, 1, len, f);
    fclose(f);
    cr_assert_eq(th_sh("protoc -I%s --decode=ChakraProtoMsg.%s %s/et_subset.proto < %s > %s",
                       dir, type, dir, in, txt), 0, "protoc rejected a %s", type);
    f = fopen(txt, "r");
    size_t k = fread(out, 1, n - 1, f);
    out[k] = 0;
    fclose(f);
    for (const char *l = out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        const char *q = l + strspn(l, " ");
        cr_assert(!(*q >= '0' && *q <= '9'), "protoc found an unknown field: %.40s", q);
    }
}

Test(chakra, protoc_decodes_the_files_too)
{
    if (th_sh("command -v protoc >/dev/null 2>&1") != 0)
        cr_skip_test("protoc is not installed (apt-get install protobuf-compiler; "
                     "`make test` installs it)");
    struct mdl_profile *p = th_uniform(4, 1000, 2000, 1, 10, 0, 10);
    struct mdl_topology *t = th_chain(2, 0, 1e9, 100e-9);
    struct th_run run;
    th_simulate(&run, "gpipe", p, t, 2, 2, SCH_REMAT_ALWAYS, 1, 1);
    char *dir = tmpdir();
    export(run.s, run.c, run.e, dir, 1);
    char proto[600];
    snprintf(proto, sizeof proto, "%s/et_subset.proto", dir);
    FILE *pf = fopen(proto, "w");
    fputs(subset_proto, pf);
    fclose(pf);
    for (int r = 0; r < 2; r++) {
        struct dfile df;
        load_rank(dir, r, &df);
        struct rd rr = { df.raw, df.raw + df.len };
        static char txt[8192];
        for (int k = 0; rr.p < rr.end; k++) {
            uint64_t len = rd_varint(&rr);
            protoc_decode(dir, rr.p, len, k ? "Node" : "GlobalMetadata", txt, sizeof txt);
            rr.p += len;
            char want[128];
            if (k == 0) {
                cr_assert(strstr(txt, "version: \"0.0.4\""), "%s", txt);
                continue;
            }
            const struct dnode *n = &df.nodes[k - 1];
            static const char *const types[] = { [4] = "COMP_NODE", [5] = "COMM_SEND_NODE",
                                                 [6] = "COMM_RECV_NODE" };
            snprintf(want, sizeof want, "name: \"%s\"\ntype: %s\n", n->name, types[n->type]);
            cr_assert(strstr(txt, want), "want %s in\n%s", want, txt);
            snprintf(want, sizeof want, "duration_micros: %llu\n", (unsigned long long)n->dur);
            cr_assert(!n->dur || strstr(txt, want), "want %s in\n%s", want, txt);
            for (int i = 0; i < n->ndata; i++) {
                snprintf(want, sizeof want, "data_deps: %llu\n", (unsigned long long)n->data[i]);
                cr_assert(strstr(txt, want), "want %s in\n%s", want, txt);
            }
            if (n->type == TRC_CHAKRA_SEND) {
                snprintf(want, sizeof want, "name: \"comm_size\"\n  int64_val: %lld\n",
                         (long long)ival(n, "comm_size", 9));
                cr_assert(strstr(txt, want), "want %s in\n%s", want, txt);
            }
        }
        df_free(&df);
    }
    rmdir_all(dir);
    th_release(&run);
    mdl_topology_free(t);
    mdl_profile_free(p);
}

/* A signal at any moment leaves the old ranks or the new, never a mix, and
 * no temporary: the ranks are renamed into place with the signal held off
 * (a handler on OpenBLAS's thread once left .pipesim.N.et.XXXXXX files it
 * missed and a mix of old and new ranks). An invariant at every moment, so
 * the moments are spread over the run, whatever the machine's speed. */
Test(chakra, a_signal_leaves_the_old_ranks_or_the_new, .timeout = 300)
{
    const char *ps = th_pipesim();
    char *dir = tmpdir();
    cr_assert_eq(th_sh("cd %s && %s gen chain -n 1024 -o c.json && %s export-chakra --model "
                       "mlp:layers=1024,width=64 --topology c.json -K 1024 -M 8 --batch 32 "
                       "--out-dir ch > /dev/null 2>&1", dir, ps, ps), 0);
    for (int i = 0; i < 8; i++) {
        /* mark the old ranks, start again, stop it after i x 0.15 s */
        int rc = th_sh("cd %s && for f in ch/*.et; do echo OLD >> $f; done && { %s export-chakra "
                       "--model mlp:layers=1024,width=64 --topology c.json -K 1024 -M 8 "
                       "--batch 32 --out-dir ch > /dev/null 2>&1 & p=$!; sleep %d.%02d; kill -TERM "
                       "$p 2>/dev/null; wait $p 2>/dev/null; }; test $(ls -A ch | grep -c '^[.]') = 0 && "
                       "o=$(grep -l OLD ch/*.et | wc -l) && test $(ls ch/*.et | wc -l) = 1024 && "
                       "{ test $o = 0 || test $o = 1024; }", dir, ps, 15 * i / 100, 15 * i % 100);
        cr_expect_eq(rc, 0, "signal after %d.%02d s: temporaries left or old and new ranks "
                     "mixed", 15 * i / 100, 15 * i % 100);
    }
    rmdir_all(dir);
}

/* Before the simulation: the limit on open files the ranks take (helper-113:
 * 1.2 s and 545 MB of simulation first) and a path too long for a rank's
 * file (cut short, its error named another file). */
Test(chakra, the_check_before_the_work_sees_the_open_files_and_long_paths)
{
    char *dir = tmpdir();
    struct trc_chakra_opts o = { .dir = dir, .prefix = "p" };
    cr_assert_eq(trc_chakra_check(&o, 4, 0), 0, "%s", ps_errmsg());
    char longdir[4200];
    int n = snprintf(longdir, sizeof longdir, "%s/", dir);
    memset(longdir + n, 'd', sizeof longdir - (size_t)n - 1);
    longdir[4090] = 0;
    o.dir = longdir;
    cr_assert_eq(trc_chakra_check(&o, 2, 0), -PS_EUSAGE);
    cr_expect(strstr(ps_errmsg(), "--out-dir: the path of rank 0's file"), "%s", ps_errmsg());
    o.dir = dir;
    /* the hard limit, which the export cannot raise, in this test's own process
     * (Criterion runs each test in one) */
    struct rlimit rl = { 256, 256 };
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    cr_assert_eq(trc_chakra_check(&o, 300, 1), -PS_EINVAL);
    cr_expect(strstr(ps_errmsg(), "300 ranks need ") && strstr(ps_errmsg(), "the limit is 256 "
                                                                "(ulimit -n)"), "%s",
              ps_errmsg());
    cr_expect_eq(trc_chakra_check(&o, 4, 0), 0, "%s", ps_errmsg());
    rmdir_all(dir);
}

/* The summary names a folder with a newline on one line, '?' for it, as its
 * errors do (helper-113: the line broke in two). */
Test(chakra, the_summary_names_the_folder_on_one_line)
{
    char *dir = tmpdir(), err[2048], wd[4096];
    cr_assert(getcwd(wd, sizeof wd));
    cr_assert_eq(th_capture(err, sizeof err, "cd %s && %s export-chakra --model "
                            "mlp:layers=4,width=8 --topology %s/models/topologies/"
                            "chain-8-ideal.json -K 2 -M 2 --batch 4 --out-dir \"$(printf "
                            "'a\\nb')\" 2>&1 >/dev/null", dir, th_pipesim(), wd),
                 0, "%s", err);
    cr_expect(strstr(err, "simulated -> a?b/pipesim.<rank>.et\n"), "%s", err);
    rmdir_all(dir);
}
