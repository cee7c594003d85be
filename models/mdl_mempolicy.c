#include "models/mdl_mempolicy.h"
#include "base/ps_error.h"

#include <stdio.h>
#include <string.h>

static const struct { const char *name; double bpp, grad; } policies[] = {
    { "fp32-rmsprop", 4 + 4 + 4, 4 },
    { "fp32-sgd", 4 + 4, 4 },
    { "fp32-momentum", 4 + 4 + 4, 4 },
    { "fp32-adam", 4 + 4 + 4 + 4, 4 },
    { "mixed-adam", 2 + 2 + 12, 2 },
    { "mixed-adam-fp32grad", 2 + 4 + 12, 4 },
};

int mdl_mempolicy_named(const char *name, struct mdl_mempolicy *out)
{
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (!strcmp(policies[i].name, name)) {
            memset(out, 0, sizeof *out);
            snprintf(out->optimizer, sizeof out->optimizer, "%s", name);
            out->bytes_per_param = policies[i].bpp;
            out->grad_bytes = policies[i].grad;
            return 0;
        }
    char known[200] = "";
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                 policies[i].name);
    /* a long name is cut, so that "unknown" and the list stay on the line
     * (helper-124: 300 bytes of name left the message ending inside it) */
    return ps_error(PS_EINVAL, "memory policy '%.64s%s': unknown (known: %s)", name,
                    strlen(name) > 64 ? "..." : "", known);
}

double mdl_mempolicy_act_bytes(const struct mdl_mempolicy *m, double act)
{
    return m->allocator_overhead > 0 ? act * (1 + m->allocator_overhead) : act;
}

double mdl_mempolicy_static_bytes(const struct mdl_mempolicy *m, double params)
{
    return params * m->bytes_per_param + m->workspace_bytes;
}
