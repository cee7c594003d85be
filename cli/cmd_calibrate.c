/* pipesim calibrate: time a runtime net on this machine, fit the cost model,
 * write a measured profile and a topology that pipesim predict accepts. */
#include "measure/msr_calib.h"
#include "cli/cli.h"
#include "cli/cli_calib.h"
#include "models/mdl_gen.h"
#include "runtime/rt_cpu.h"
#include "runtime/rt_net.h"
#include "base/ps_error.h"
#include "base/ps_fs.h"
#include "base/ps_util.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>

static const char help[] =
    "usage: pipesim calibrate --net SPEC [--out PREFIX] [--batch N] [-M 1,2,4,...]\n"
    "                         [--micro-batches 4,8,...] [--at-batch N] [--repeats R]\n"
    "                         [--warmup W] [--cpu C] [--peer-cpu C] [--seed N]\n"
    "                         [--stages K] [--format table|csv|json] [--realtime]\n\n"
    "Times every layer of the validation runtime's net (see pipesim validate --help\n"
    "for SPEC) on one pinned core with the runtime's own kernels: the forward that\n"
    "keeps its stash (F), the forward of a re-materialized micro-batch (F-nostash),\n"
    "the recompute (R) and the backward (B), in whole-net passes, at each\n"
    "micro-batch size (default: --batch 256 split into -M 1,2,4,8,16,32,64, i.e.\n"
    "256,128,...,4 samples). Per size, W warm-up and R timed repetitions (defaults 1,\n"
    "5) of the phases of a GPipe step over the micro-batches of a batch of the\n"
    "largest size (forwards, backwards, forwards without stash, recompute + backward),\n"
    "so every op runs after what precedes it in a pipeline: median and spread.\n"
    "--stages K times each layer inside its stage of a uniform partition into K stages\n"
    "(default 1): a layer costs less beside fewer others (caches), so calibrate with\n"
    "the K you will predict. Also every layer's SGD update, a dense GEMM (the FLOP rate),\n"
    "the hand-off latency between two pinned cores through the runtime's channels and\n"
    "a transfer of every activation size. Fits with GSL (relative least squares) per\n"
    "layer and per layer kind time = a + b*n, the device's FLOP model and the link's\n"
    "latency + bytes/bandwidth, and prints coefficients, R2 and residuals.\n\n"
    "Writes PREFIX.csv (measured profile: times at --at-batch, default the largest\n"
    "size, the other sizes as fwd_ms@N/bwd_ms@N points, fitted intercepts),\n"
    "PREFIX.json (this machine's topology: one device per allowed core, a\n"
    "full-duplex link between every two) and PREFIX-fit.csv (every median, spread,\n"
    "fit and residual). Default\n"
    "PREFIX: results/calib/<net>. --realtime times under SCHED_FIFO (root or\n"
    "CAP_SYS_NICE), so other jobs on shared cores stop preempting the timed kernels.\n"
    "--format csv prints PREFIX-fit.csv's rows; json the same rows (one object each)\n"
    "and the table's summary (update, device, hand-off, transfer, link, memory) in\n"
    "SI units. Default: --format table.\n"
    "Then:\n"
    "  pipesim predict --model PREFIX.csv --topology PREFIX.json -K 2 -M 8 --batch 256\n";

/* mlp:layers=8,width=512 -> mlp-layers8-width512 */
static void sanitize(const char *spec, char *buf, size_t n)
{
    size_t k = 0;
    for (const char *s = spec; *s && k + 1 < n; s++) {
        char ch = *s;
        int keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (keep)
            buf[k++] = ch;
        else if (ch != '=' && k && buf[k - 1] != '-')
            buf[k++] = '-';
    }
    while (k && buf[k - 1] == '-')
        k--;
    buf[k] = 0;
}

void cli_calib_default_prefix(const char *spec, char *buf, size_t n)
{
    char name[256];
    sanitize(spec, name, sizeof name);
    snprintf(buf, n, "results/calib/%s", *name ? name : "net");
}

void cli_realtime(int on)
{
    if (on && msr_realtime(1) < 0) {
        fprintf(stderr, "pipesim: warning: %s; timing at normal priority\n", ps_errmsg());
        ps_error_clear();
    }
}

int cli_io_net(const char *spec)
{
    return strncmp(spec, "file:", 5) ? 0 : ps_io_input(spec + 5, "--net");
}

int cli_prefix_named(const char *prefix, const char *opt, const char *files)
{
    size_t pl = strlen(prefix);
    if (!pl || prefix[pl - 1] == '/') /* "" or "dir/" would write .csv, .json, -fit.csv */
        return ps_error(PS_EUSAGE, "%s '%s': needs a file-name prefix (the files are %s)", opt,
                        prefix, files);
    const char *base = strrchr(prefix, '/') ? strrchr(prefix, '/') + 1 : prefix;
    if (base[0] == '.') /* ".", "..", "d/.": hidden files (.-K1.csv, ..-sim.json) */
        return ps_error(PS_EUSAGE, "%s '%s': the file-name prefix must not start with '.' "
                        "(the files, %s, would be hidden)", opt, prefix, files);
    return 0;
}

int cli_io_prefix(const char *prefix, const char *opt)
{
    static const char *const ext[] = { ".csv", ".json", "-fit.csv" };
    char path[4096];
    int rc = cli_prefix_named(prefix, opt, "PREFIX.csv, PREFIX.json and PREFIX-fit.csv");
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        if ((size_t)snprintf(path, sizeof path, "%s%s", prefix, ext[i]) >= sizeof path)
            return ps_error(PS_EUSAGE, "%s: path too long", opt);
        if ((rc = ps_io_output(path, opt)) < 0 || (rc = ps_output_writable(path, opt, 1)) < 0)
            return rc; /* before the calibration, not after it */
    }
    return 0;
}

int cli_calib_sizes(long batch, const char *ms, const char *mbs, int *sizes, int *n)
{
    long *v = NULL;
    int k = 0, rc;
    if (mbs && ms)
        return ps_error(PS_EUSAGE, "-M and --micro-batches: give one (the sizes, or the "
                         "micro-batch counts of --batch)");
    if (mbs) {
        if ((rc = ps_parse_long_list(mbs, "--micro-batches", 1, 1 << 20, &v, &k)) < 0)
            return rc;
    } else {
        if ((rc = ps_parse_long_list(ms ? ms : "1,2,4,8,16,32,64", "-M", 1, 1 << 20, &v,
                                      &k)) < 0)
            return rc;
        for (int i = 0; i < k; i++) {
            if (batch % v[i]) {
                long m = v[i];
                free(v);
                return ps_error(PS_EUSAGE, "--batch %ld must divide by -M %ld", batch, m);
            }
            v[i] = batch / v[i];
        }
    }
    if (k > MSR_CALIB_MAX_SIZES) {
        free(v);
        return ps_error(PS_EUSAGE, "at most %d micro-batch sizes, got %d",
                         MSR_CALIB_MAX_SIZES, k);
    }
    *n = 0;
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < *n; j++)
            if (sizes[j] == (int)v[i]) { /* as validate and sweep: each value once */
                long m = mbs ? v[i] : batch / v[i];
                free(v);
                return ps_error(PS_EUSAGE, "%s: %ld given twice", mbs ? "--micro-batches" : "-M",
                                 m);
            }
        sizes[(*n)++] = (int)v[i];
    }
    free(v);
    return 0;
}

int cli_calib_write(const struct msr_calib *c, const char *prefix)
{
    /* profile, topology and fits: one calibration, published together once all
     * three are on disk (helper-66: a failed topology left a new profile beside
     * the old fits), as export-chakra publishes its ranks */
    static const char *const ext[3] = { ".csv", ".json", "-fit.csv" };
    struct ps_afile af[3];
    memset(af, 0, sizeof af);
    struct mdl_profile *p = NULL;
    struct mdl_topology *t = NULL;
    int rc;
    if ((rc = ps_mkdirs_parent(prefix)) < 0 || (rc = msr_calib_profile(c, &p)) < 0 ||
        (rc = msr_calib_topology(c, &t)) < 0)
        goto out;
    for (int k = 0; k < 3; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s%s", prefix, ext[k]);
        if ((rc = ps_afile_open(&af[k], path)) < 0)
            goto out;
    }
    mdl_profile_print(af[0].f, p);
    if ((rc = mdl_topology_write_af(t, &af[1])) < 0)
        goto out;
    /* the file names its run first, as a profile does; --format csv prints
     * the rows alone */
    fputs("# pipesim calibrate ", af[2].f); /* a file: net's path may hold a newline */
    ps_put_printable(af[2].f, c->spec, -1);
    fprintf(af[2].f, " on cpu %d, OpenBLAS %s, %d repeats, %s\n", c->cpu, c->blas, c->repeats,
            c->stamp);
    if ((rc = msr_calib_print(c, ANA_FMT_CSV, af[2].f)) < 0) {
        if (rc == -PS_EIO) /* the file, as every write error names it (helper-73) */
            rc = ps_error(PS_EIO, "%s-fit.csv: write failed: %s", prefix,
                          strerror(errno ? errno : EIO));
        goto out;
    }
    for (int k = 0; k < 3; k++)
        if ((rc = ps_afile_sync(&af[k])) < 0)
            goto out;
    ps_afile_publish_begin(); /* a signal now leaves the old set or the new */
    for (int k = 0; k < 3 && rc == 0; k++)
        rc = ps_afile_commit(&af[k]);
    ps_afile_publish_end();
out:
    for (int k = 0; k < 3; k++)
        if (af[k].f)
            ps_afile_abort(&af[k]);
    mdl_profile_free(p);
    mdl_topology_free(t);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {
        { "net", required_argument, 0, 'n' },       { "out", required_argument, 0, 'o' },
        { "batch", required_argument, 0, 'b' },     { "micro-batches", required_argument, 0, 'u' },
        { "at-batch", required_argument, 0, 'a' },  { "repeats", required_argument, 0, 'r' },
        { "warmup", required_argument, 0, 'w' },    { "cpu", required_argument, 0, 'c' },
        { "peer-cpu", required_argument, 0, 'p' },  { "seed", required_argument, 0, 'e' },
        { "format", required_argument, 0, 'f' },    { "help", no_argument, 0, 'h' },
        { "realtime", no_argument, 0, 'T' },        { "stages", required_argument, 0, 'K' },
        { 0, 0, 0, 0 },
    };
    const char *spec = NULL, *prefix = NULL, *ms = NULL, *mbs = NULL;
    enum ana_fmt format = ANA_FMT_TABLE;
    long batch = 256, at = 0, repeats = 5, warmup = 1, cpu = -1, peer = -1, seed = 1, stages = 1;
    int c, rc = 0, realtime = 0;
    cli_getopt_reset();
    while ((c = cli_getopt("calibrate", argc, argv, "hM:", opts)) != -1) {
        switch (c) {
        case 'h': cli_help(help); return 0;
        case 'n': spec = optarg; break;
        case 'o': prefix = optarg; break;
        case 'b': rc = ps_parse_count(optarg, "--batch", 1, 1 << 20, &batch); break;
        case 'M': ms = optarg; break;
        case 'u': mbs = optarg; break;
        case 'a': rc = ps_parse_long(optarg, "--at-batch", 1, 1 << 20, &at); break;
        case 'r': rc = ps_parse_long(optarg, "--repeats", 1, 10000, &repeats); break;
        case 'w': rc = ps_parse_long(optarg, "--warmup", 0, 1000, &warmup); break;
        case 'c': rc = ps_parse_long(optarg, "--cpu", 0, 1 << 16, &cpu); break;
        case 'p': rc = ps_parse_long(optarg, "--peer-cpu", 0, 1 << 16, &peer); break;
        case 'e': rc = ps_parse_long(optarg, "--seed", 0, 0x7fffffffL, &seed); break;
        case 'f': rc = ana_fmt_parse(optarg, ANA_FMTS_ALL, "--format", &format); break;
        case 'T': realtime = 1; break;
        case 'K': rc = ps_parse_long(optarg, "--stages", 1, 4096, &stages); break;
        default: return -PS_EUSAGE;
        }
        if (rc < 0)
            return rc;
    }
    if (optind < argc)
        return ps_error(PS_EUSAGE, "unexpected argument '%s'", argv[optind]);
    if (!spec)
        return ps_error(PS_EUSAGE, "--net is required (see pipesim calibrate "
                         "--help)");
    int sizes[MSR_CALIB_MAX_SIZES], n = 0;
    if ((rc = cli_calib_sizes(batch, ms, mbs, sizes, &n)) < 0)
        return rc;
    char def[512];
    if (!prefix) {
        cli_calib_default_prefix(spec, def, sizeof def);
        prefix = def;
    }
    if ((rc = cli_io_net(spec)) < 0 || (rc = cli_io_prefix(prefix, "--out")) < 0)
        return rc;
    struct msr_calib_opts o = { .spec = spec, .sizes = sizes, .n_sizes = n,
                                .repeats = (int)repeats, .warmup = (int)warmup,
                                .ref_batch = (int)at, .n_stages = (int)stages, .cpu = (int)cpu,
                                .peer_cpu = (int)peer,
                                .seed = (uint64_t)seed };
    struct rt_net *net = NULL; /* more stages than layers before any note on cores */
    if ((rc = rt_net_parse(spec, &net)) < 0)
        return rc;
    int layers = net->n_layers;
    rt_net_free(net);
    if (stages > layers)
        return ps_error(PS_ENOFIT, "%ld stages but the net has %d layers", stages, layers);
    int c0, c1, n_cpus; /* the cores it will run on, defaults resolved */
    if ((rc = msr_calib_pick_cpus((int)cpu, (int)peer, &c0, &c1, &n_cpus)) < 0)
        return rc;
    if (c0 == c1) /* as validate notes it; one stage times the link there */
        fprintf(stderr, "pipesim calibrate: note: %s %d: %s share it, so %s timings are "
                "oversubscribed\n", cpu >= 0 && peer >= 0 ? "--cpu and --peer-cpu are both"
                : "this process may run on no core but", c0,
                stages > 1 ? "stages 0 and 1" : "the link's two ends",
                stages > 1 ? "their" : "the hand-off's");
    else if (stages > 1 && stages > n_cpus)
        fprintf(stderr, "pipesim calibrate: note: %ld stages on %d cores: stages share "
                "cores, so their timings are oversubscribed\n", stages, n_cpus);
    struct msr_calib *cal = NULL;
    cli_realtime(realtime);
    rc = msr_calib_run(&o, &cal);
    if (realtime)
        msr_realtime(0);
    if (rc < 0 && rc != -PS_ENOMEM && !strncmp(ps_errmsg(), "calibrate: ", 11)) {
        char m[PS_ERRMSG_MAX]; /* main() names the command already */
        snprintf(m, sizeof m, "%s", ps_errmsg() + 11);
        rc = ps_error(-rc, "%s", m);
    }
    if (rc < 0)
        return rc;
    errno = 0;
    if ((rc = msr_calib_print(cal, format, stdout)) < 0) {
        if (rc == -PS_EIO && ferror(stdout)) /* named, with why (helper-138: "write error") */
            rc = ps_error(PS_EIO, "stdout: write failed: %s", strerror(errno ? errno : EIO));
        goto out;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) { /* the files only once the report is out */
        rc = ps_error(PS_EIO, "stdout: write failed: %s", strerror(errno ? errno : EIO));
        goto out;
    }
    if ((rc = cli_calib_write(cal, prefix)) < 0)
        goto out;
    if (format == ANA_FMT_TABLE) { /* on one line, whatever the prefix holds */
        char px[4200];
        snprintf(px, sizeof px, "%s", prefix);
        ps_printable_in_place(px);
        printf("wrote           %s.csv (profile), %s.json (topology), %s-fit.csv (fits)\n",
               px, px, px);
    }
out:
    msr_calib_free(cal);
    return rc;
}
