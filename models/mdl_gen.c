#include "models/mdl_gen.h"
#include "models/mdl_genwork.h"
#include "models/mdl_gpt.h"
#include "models/mdl_paper.h"
#include "models/mdl_preset.h"
#include "models/mdl_resnet.h"
#include "models/mdl_unet.h"
#include "models/mdl_vgg.h"
#include "base/ps_error.h"
#include "base/ps_json.h"
#include "base/ps_suggest.h"
#include "base/ps_util.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int mdl_spec_check(const char *spec, const char *params, const char *const *keys)
{
    const char *p = params;
    while (p && *p) {
        const char *eq = strchr(p, '='), *comma = strchr(p, ',');
        if (!eq || (comma && comma < eq))
            return ps_error(PS_EUSAGE, "model spec '%s': expected key=value at '%s'", spec, p);
        size_t len = (size_t)(eq - p);
        int ok = 0;
        for (const char *const *k = keys; *k; k++)
            ok |= strlen(*k) == len && !strncmp(*k, p, len);
        if (!ok) {
            char typed[64];
            snprintf(typed, sizeof typed, "%.*s", (int)len, p);
            struct ps_suggest sg;
            ps_suggest_init(&sg, typed);
            for (const char *const *k = keys; *k; k++)
                ps_suggest_add(&sg, *k);
            return ps_error(PS_EUSAGE, "model spec '%s': unknown parameter '%s'%s", spec,
                             typed, ps_suggest_hint(&sg));
        }
        /* a key given twice: which one was meant is not ours to guess */
        for (const char *q = params; q < p;) {
            const char *qe = strchr(q, '='), *qc = strchr(q, ',');
            if (qe && (size_t)(qe - q) == len && !strncmp(q, p, len))
                return ps_error(PS_EUSAGE, "model spec '%s': parameter '%.*s' given twice", spec,
                                 (int)len, p);
            q = qc ? qc + 1 : p;
        }
        if (comma && !comma[1]) /* as mdl_paper's specs (transformer:, amoebanet:) */
            return ps_error(PS_EUSAGE, "model spec '%s': trailing comma", spec);
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

int mdl_spec_long(const char *spec, const char *params, const char *key, long dflt, long lo,
                  long hi, long *out)
{
    size_t kl = strlen(key);
    for (const char *p = params; p && *p;) {
        const char *comma = strchr(p, ',');
        if (!strncmp(p, key, kl) && p[kl] == '=') {
            /* the whole value (one of 64 characters or more was cut, and
             * its first 63 read as the number) */
            size_t vl = comma ? (size_t)(comma - p - (long)kl - 1) : strlen(p + kl + 1);
            char *val = strndup(p + kl + 1, vl);
            if (!val)
                return ps_error(PS_ENOMEM, "out of memory");
            char what[128];
            snprintf(what, sizeof what, "model spec '%s': %s", spec, key);
            int rc = ps_parse_long(val, what, lo, hi, out);
            free(val);
            return rc;
        }
        p = comma ? comma + 1 : NULL;
    }
    if (dflt < 0)
        return ps_error(PS_EUSAGE, "model spec '%s': missing parameter '%s'", spec, key);
    *out = dflt;
    return 0;
}

static const struct mdl_gen_key mlp_keys[] = {
    { "layers", NULL, "dense layers, W x W with bias and ReLU, FP32 (+ layers/N norms)" },
    { "width", NULL, "W, features per layer" },
    { "norm", "0", "a layer norm after every N-th dense layer (0: none)" },
    { NULL, NULL, NULL },
};
static const struct mdl_gen_key amoeba_keys[] = {
    { "L", "18", "normal cells, a multiple of 3 (the profile: L + 6 layers)" },
    { "D", "256", "filters of the first stack, a multiple of 8" },
    { "classes", "1000", "classifier outputs" },
    { "image", "224", "input height = width, a multiple of 32" },
    { "act_bytes", "4", "bytes per activation element (4 = FP32)" },
    { "keep", "unfused", "what backward keeps and what runs alone: unfused (every intermediate, every op a kernel) or fused (what XLA keeps, element-wise ops in the products they feed or follow)" },
    { "pool3", "max", "max_pool_3x3 as a max pool (TensorFlow's) or avg (torchgpipe's AvgPool2d)" },
    { NULL, NULL, NULL },
};
static const struct mdl_gen_key transformer_keys[] = {
    { "L", "48", "Transformer layers (the profile: L + 2, embedding, softmax)" },
    { "d_model", "2048", "hidden size" },
    { "ff", "8192", "feed-forward size" },
    { "heads", "32", "attention heads" },
    { "vocab", "32000", "vocabulary (the softmax layer)" },
    { "seq", "1024", "sequence length" },
    { "act_bytes", "4", "bytes per activation element (4 = FP32)" },
    { "keep", "unfused", "what backward keeps and what runs alone: unfused (every intermediate, every op a kernel) or fused (what XLA keeps, element-wise ops in the products they feed or follow)" },
    { NULL, NULL, NULL },
};
static const struct mdl_gen_key gpt_keys[] = {
    { "layers", NULL, "Transformer layers (profile: layers + 2, embedding, head)" },
    { "hidden", NULL, "hidden size h" },
    { "heads", NULL, "attention heads" },
    { "seq", NULL, "sequence length" },
    { "vocab", NULL, "vocabulary" },
    { "ffn", "0", "feed-forward size (0: 4 x hidden)" },
    { "act_bytes", "2", "bytes per activation element (2 = FP16/BF16)" },
    { NULL, NULL, NULL },
};
static const struct mdl_gen_key resnet_keys[] = {
    { "depth", NULL, "50, 101 or 152 (one profile layer per torchgpipe module)" },
    { "classes", "1000", "classifier outputs" },
    { "image", "224", "input height = width, a multiple of 32" },
    { "act_bytes", "4", "bytes per activation element (4 = FP32)" },
    { NULL, NULL, NULL },
};

static const struct mdl_gen_key unet_keys[] = {
    { "convs", NULL, "B, conv blocks per cell (profile: 44 B + 21 layers at depth 5)" },
    { "channels", NULL, "C, filters of the first encoder" },
    { "depth", "5", "encoders (and decoders); image a multiple of 2^depth" },
    { "image", "192", "input height = width" },
    { "in", "3", "input channels" },
    { "out", "1", "output channels" },
    { "act_bytes", "4", "bytes per activation element (4 = FP32)" },
    { NULL, NULL, NULL },
};

static const struct mdl_gen_key vgg_keys[] = {
    { "depth", NULL, "11, 13, 16 or 19 (configurations A, B, D, E)" },
    { "classes", "1000", "classifier outputs" },
    { "image", "224", "input height = width, a multiple of 32" },
    { "act_bytes", "4", "bytes per activation element (4 = FP32)" },
    { NULL, NULL, NULL },
};

const struct mdl_generator mdl_generators[] = {
    { "mlp", "a stack of dense layers", mlp_keys },
    { "amoebanet", "AmoebaNet-D (L, D) of the GPipe paper (models/mdl_amoeba.h)", amoeba_keys },
    { "transformer", "the GPipe paper's Transformer (models/mdl_transformer.h)",
      transformer_keys },
    { "gpt", "a GPT decoder (models/mdl_gpt.h)", gpt_keys },
    { "resnet", "a ResNet (models/mdl_resnet.h)", resnet_keys },
    { "unet", "torchgpipe's simplified U-Net (B, C) (models/mdl_unet.h)", unet_keys },
    { "vgg", "VGG-11/13/16/19 (models/mdl_vgg.h)", vgg_keys },
    { NULL, NULL, NULL },
};

void mdl_generators_help(FILE *f)
{
    fprintf(f, "Generator specs (PREFIX:key=value,...; keys without a default are "
               "required):\n");
    for (const struct mdl_generator *g = mdl_generators; g->prefix; g++) {
        fprintf(f, "  %s: %s\n", g->prefix, g->summary);
        for (const struct mdl_gen_key *k = g->keys; k->name; k++) {
            char d[32] = "(required)";
            if (k->dflt)
                snprintf(d, sizeof d, "(%s)", k->dflt);
            fprintf(f, "    %-10s %-11s %s\n", k->name, d, k->doc);
        }
    }
}

/* Per sample, FP32. Dense y = relu(x W + b): 2*W*W FLOPs forward, 4*W*W
 * backward (dX and dW), params W*W + W; backward keeps its input x and the
 * ReLU output (for the mask): 2 * 4W bytes. Layer norm over W features:
 * about 8W FLOPs forward, 2W params (gain, bias); it keeps its input and
 * the per-sample mean and inverse deviation. Work (mdl_genwork.h): the
 * dense layer is a 1 x W x W GEMM, the bias (W FLOPs forward, a W-element
 * reduction backward) and ReLU (W and W) vector ops; the layer norm is
 * vector work alone, 3 tensors forward and 5 backward. */
int mdl_gen_mlp(int layers, int width, int norm_every, struct mdl_profile **out)
{
    char origin[96];
    snprintf(origin, sizeof origin, "mlp:layers=%d,width=%d,norm=%d", layers, width, norm_every);
    struct mdl_profile *p = mdl_profile_new(origin, 0);
    if (!p)
        return ps_error(PS_ENOMEM, "out of memory");
    double w = width;
    int rc = 0;
    for (int i = 0; i < layers && !rc; i++) {
        struct mdl_layer l = { .fwd = 2 * w * w + 2 * w, .bwd = 4 * w * w + 2 * w,
                               .params = w * w + w, .out_bytes = 4 * w, .stash_bytes = 8 * w };
        snprintf(l.name, sizeof l.name, "dense%d", i);
        snprintf(l.kind, sizeof l.kind, "dense");
        struct mdl_genwork dw;
        mdl_genwork_init(&dw);
        mdl_genwork_gemm(&dw, 1, w, w, 1, 1, 1);
        mdl_genwork_vec(&dw, w, w, 8 * w, 4 * w, 1);      /* bias */
        mdl_genwork_vec(&dw, w, w, 8 * w, 12 * w, 1);     /* ReLU */
        mdl_genwork_attach(&dw, &l);
        rc = mdl_profile_add(p, &l);
        if (!rc && norm_every > 0 && (i + 1) % norm_every == 0) {
            struct mdl_layer n = { .fwd = 8 * w, .bwd = 12 * w, .params = 2 * w,
                                   .out_bytes = 4 * w, .stash_bytes = 4 * w + 8 };
            snprintf(n.name, sizeof n.name, "norm%d", i);
            snprintf(n.kind, sizeof n.kind, "layernorm");
            struct mdl_genwork nw;
            mdl_genwork_init(&nw);
            mdl_genwork_vec(&nw, 8 * w, 12 * w, 12 * w, 20 * w, 1);
            mdl_genwork_attach(&nw, &n);
            rc = mdl_profile_add(p, &n);
        }
    }
    if (rc < 0) {
        mdl_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}


int mdl_model_open(const char *arg, struct mdl_profile **out)
{
    *out = NULL;
    struct stat st;
    if (stat(arg, &st) == 0 || strchr(arg, '/'))
        return mdl_profile_load(arg, out);
    if (!strchr(arg, ':')) { /* a bundled profile's name (models/mdl_preset.h) */
        for (const struct mdl_generator *g = mdl_generators; g->prefix; g++)
            if (!strcmp(arg, g->prefix)) /* the generator without its colon */
                return ps_error(PS_EUSAGE, "model '%s': no such file; the generator is "
                                "'%s:' followed by its keys (`pipesim gen --help` lists "
                                "them)", arg, arg);
        char path[4096];
        int rc = mdl_preset_path(MDL_PRESET_PROFILE, arg, path, sizeof path);
        if (rc == 0)
            rc = mdl_preset_hint(MDL_PRESET_PROFILE, arg, mdl_profile_load(path, out));
        return rc;
    }
    if (!strncmp(arg, "mlp:", 4)) {
        static const char *const keys[] = { "layers", "width", "norm", NULL };
        long L, W, N;
        int rc;
        if ((rc = mdl_spec_check(arg, arg + 4, keys)) < 0 ||
            (rc = mdl_spec_long(arg, arg + 4, "layers", -1, 1, 1 << 20, &L)) < 0 ||
            (rc = mdl_spec_long(arg, arg + 4, "width", -1, 1, 1 << 16, &W)) < 0 ||
            (rc = mdl_spec_long(arg, arg + 4, "norm", 0, 0, 1 << 20, &N)) < 0)
            return rc;
        return mdl_gen_mlp((int)L, (int)W, (int)N, out);
    }
    int rc = mdl_paper_from_spec(arg, out);
    if (rc == 0)
        rc = mdl_gpt_from_spec(arg, out);
    if (rc == 0)
        rc = mdl_resnet_from_spec(arg, out);
    if (rc == 0)
        rc = mdl_unet_from_spec(arg, out);
    if (rc == 0)
        rc = mdl_vgg_from_spec(arg, out);
    if (rc == -PS_EINVAL) { /* a spec is a command-line value: one out of its range, or two
                               that disagree (heads and d_model), is a usage error (exit 2),
                               as every generator's key ranges and gen chain's are; named by
                               the spec as theirs are ("gpt: field ..." named no spec:
                               helper-112) */
        const char *m = ps_errmsg(), *field = strstr(m, ": field '");
        int bare = field && !strstr(m, "model spec '"); /* "gpt: field ...", no spec */
        char msg[PS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", bare ? field + 2 : m);
        rc = bare ? ps_error(PS_EUSAGE, "model spec '%s': %s", arg, msg)
                  : ps_error(PS_EUSAGE, "%s", msg);
    }
    if (rc != 0)
        return rc < 0 ? rc : 0;
    char typed[64];
    snprintf(typed, sizeof typed, "%.*s", (int)strcspn(arg, ":"), arg);
    struct ps_suggest sg;
    ps_suggest_init(&sg, typed);
    for (const struct mdl_generator *g = mdl_generators; g->prefix; g++)
        ps_suggest_add(&sg, g->prefix);
    return ps_error(PS_EUSAGE, "model '%s': no such file, and not a known generator spec "
                     "(mlp:..., amoebanet:..., transformer:..., gpt:..., resnet:..., "
                     "unet:..., vgg:...)%s", arg, ps_suggest_hint(&sg));
}

int mdl_topology_write(const struct mdl_topology *t, const char *path)
{
    struct ps_afile af;
    int rc = ps_afile_open(&af, path);
    if (rc < 0)
        return rc;
    if ((rc = mdl_topology_write_af(t, &af)) < 0) {
        ps_afile_abort(&af);
        return rc;
    }
    return ps_afile_commit(&af);
}

int mdl_topology_write_af(const struct mdl_topology *t, struct ps_afile *af)
{
    const char *path = af->path ? af->path : "stdout";
    ps_json_begin();
    json_t *root = json_object(), *devs = json_array(), *links = json_array();
    int rc = 0;
    if (!root || !devs || !links) {
        rc = ps_error(PS_ENOMEM, "out of memory");
        goto out;
    }
    json_object_set_new(root, "name", json_string(t->name));
    json_object_set_new(root, "bytes_per_param", json_real(t->bytes_per_param));
    if (t->mem.optimizer[0])
        json_object_set_new(root, "memory_policy",
                            json_pack("{s:s, s:f, s:f}", "optimizer", t->mem.optimizer,
                                      "allocator_overhead", t->mem.allocator_overhead,
                                      "workspace_bytes", t->mem.workspace_bytes));
    for (int i = 0; i < t->n_devices; i++) {
        const struct mdl_device *d = &t->devices[i];
        json_t *dj = json_pack("{s:s, s:f, s:f, s:f, s:{s:f, s:f, s:f}}", "name", d->name,
                               "flops", d->flops, "memory", d->memory, "mem_bandwidth",
                               d->mem_bandwidth, "efficiency", "max", d->eff_max, "batch_half",
                               d->batch_half, "overhead_s", d->overhead_s);
        if (dj && (d->msg_send_s > 0 || d->msg_send_bw > 0 || d->msg_recv_s > 0 ||
                   d->msg_recv_bw > 0))
            json_object_set_new(dj, "messages",
                                json_pack("{s:f, s:f, s:f, s:f}", "send_s", d->msg_send_s,
                                          "send_bandwidth", d->msg_send_bw, "recv_s",
                                          d->msg_recv_s, "recv_bandwidth", d->msg_recv_bw));
        json_array_append_new(devs, dj);
    }
    for (int i = 0; i < t->n_links; i++) {
        const struct mdl_link *l = &t->links[i];
        json_t *ends = json_array();
        for (int k = 0; k < l->n_ends; k++) /* a device, or a switch after them */
            json_array_append_new(ends, json_string(mdl_topology_node_name(t, l->ends[k])));
        json_array_append_new(links, json_pack("{s:s, s:o, s:f, s:f, s:b}", "name", l->name,
                                               "endpoints", ends, "bandwidth", l->bandwidth,
                                               "latency", l->latency, "shared", l->shared));
    }
    json_object_set(root, "devices", devs);
    if (t->n_switches > 0) {
        json_t *sw = json_array();
        for (int i = 0; i < t->n_switches; i++)
            json_array_append_new(sw, json_pack("{s:s}", "name", t->switches[i].name));
        json_object_set_new(root, "switches", sw);
    }
    json_object_set(root, "links", links);
    if (ps_json_oom()) { /* something above was dropped */
        rc = ps_error(PS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    if (ps_json_dumpf(root, af->f, JSON_INDENT(2) | JSON_PRESERVE_ORDER)) {
        rc = ps_json_oom() ? ps_error(PS_ENOMEM, "%s: out of memory writing JSON", path)
                            : ps_error(PS_EIO, "%s: write error", path);
        goto out;
    }
    fputc('\n', af->f);
out:
    json_decref(root);
    json_decref(devs);
    json_decref(links);
    return rc;
}
