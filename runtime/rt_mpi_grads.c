/* rt_grads_print — a net's gradients as the file both backends write (rt_mpi.h). */
#include "runtime/rt_mpi.h"
#include "base/ps_error.h"
#include "base/ps_util.h"

#include <stdint.h>
#include <stdio.h>

int rt_grads_print(const struct rt_net *net, FILE *f)
{
    int32_t n = net->n_layers;
    fwrite("PSGRADS1", 1, 8, f);
    fwrite(&n, sizeof n, 1, f);
    for (int l = 0; l < net->n_layers; l++) {
        const struct rt_layer *ly = &net->layers[l];
        int32_t hdr[3] = { (int32_t)ly->kind, ly->in, ly->out };
        int64_t nw = ly->kind == RT_LAYER_DENSE ? (int64_t)ly->in * ly->out : ly->out;
        int64_t nb = ly->out;
        fwrite(hdr, sizeof *hdr, 3, f);
        fwrite(&nw, sizeof nw, 1, f);
        fwrite(&nb, sizeof nb, 1, f);
        fwrite(ly->dw, sizeof *ly->dw, (size_t)nw, f);
        fwrite(ly->db, sizeof *ly->db, (size_t)nb, f);
    }
    return ferror(f) ? ps_error(PS_EIO, "write error") : 0;
}
