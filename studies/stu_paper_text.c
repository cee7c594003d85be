/* The prose of table2.md, table3.md and partitions.md, and their gnuplot
 * scripts. Figures come in through the facts structs; nothing here is a
 * result. */
#include "studies/stu_paper_int.h"
#include "studies/stu_paper_text.h"

#include <math.h>

static const char *const model2[2] = { "AmoebaNet-D (18, 256)", "Transformer-48" };
static const char *const model3[2] = { "AmoebaNet-D (18, 128)", "Transformer-24" };
static const int Ks[3] = { 2, 4, 8 }, Ms[3] = { 1, 4, 32 };

const char stu_paper_t2_gnuplot[] =
    "# Table 2: predicted (solid) vs the paper (dashed). Run in this folder:\n"
    "#   gnuplot table2.gp > table2.png\n"
    "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
    "    set terminal pngcairo size 1100,460 font \",10\"\n"
    "} else {\n"
    "    set terminal png size 1100,460 font \",10\"\n"
    "}\n"
    "set datafile missing \"?\"\n"
    "set multiplot layout 1,2\n"
    "set logscale x 2\n"
    "set xtics (2, 4, 8)\n"
    "set xrange [1.8:8.8]\n"
    "set yrange [0:*]\n"
    "set xlabel \"K (partitions)\"\n"
    "set ylabel \"throughput / throughput at K=2, M=1\"\n"
    "set key top left\n"
    "set title \"AmoebaNet-D (18,256), TPUv2\"\n"
    "plot for [j=0:2] 'table2.dat' using 1:(column(2+2*j)) with linespoints lw 2 lc j+1 "
    "pt 7 title sprintf(\"M=%s predicted\", word(\"1 4 32\", j+1)), \\\n"
    "     for [j=0:2] 'table2.dat' using 1:(column(3+2*j)) with linespoints dt 2 lc j+1 "
    "pt 6 title sprintf(\"M=%s paper\", word(\"1 4 32\", j+1))\n"
    "set title \"Transformer-48, TPUv3\"\n"
    "plot for [j=0:2] 'table2.dat' using 1:(column(8+2*j)) with linespoints lw 2 lc j+1 "
    "pt 7 title sprintf(\"M=%s predicted\", word(\"1 4 32\", j+1)), \\\n"
    "     for [j=0:2] 'table2.dat' using 1:(column(9+2*j)) with linespoints dt 2 lc j+1 "
    "pt 6 title sprintf(\"M=%s paper\", word(\"1 4 32\", j+1))\n"
    "unset multiplot\n";

void stu_paper_t3_gnuplot(FILE *f, int with_paper)
{
    fputs("# Table 3: predicted normalized throughput on 8 P100s over PCIe (M = 32).\n"
          "#   gnuplot table3.gp > table3.png\n"
          "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
          "    set terminal pngcairo size 640,460 font \",10\"\n"
          "} else {\n"
          "    set terminal png size 640,460 font \",10\"\n"
          "}\n"
          "set datafile missing \"?\"\n"
          "set logscale x 2\n"
          "set xtics (2, 4, 8)\n"
          "set xrange [1.8:8.8]\n"
          "set yrange [0:*]\n"
          "set xlabel \"K (partitions)\"\n"
          "set ylabel \"throughput / throughput at K=2\"\n"
          "set key top left\n"
          "set title \"P100 x 8, PCIe host bus, M=32\"\n"
          "plot 'table3.dat' using 1:2 with linespoints lw 2 lc 1 pt 7 title "
          "\"AmoebaNet-D (18,128)\", \\\n"
          "     'table3.dat' using 1:4 with linespoints lw 2 lc 2 pt 7 title \"Transformer-24\"",
          f);
    if (with_paper)
        fputs(", \\\n     'table3.dat' using 1:3 with linespoints dt 2 lc 1 pt 6 title "
              "\"AmoebaNet paper\", \\\n     'table3.dat' using 1:5 with linespoints dt 2 lc 2 "
              "pt 6 title \"Transformer paper\"", f);
    fputc('\n', f);
}

static void policy(FILE *f, const char *start)
{
    fprintf(f, "- **Batch size.** The paper: \"batch size was adjusted to fit memory if "
               "necessary\"; it does not give the sizes. Policy here: start from %s, halve the "
               "mini-batch (keeping it a multiple of M) until every stage fits, and if nothing "
               "fits down to micro-batches of one sample, report the cell at the starting "
               "batch and mark it \"no\" under *fits* (time does not depend on the fit, so the "
               "throughput is still predicted).\n", start);
    fputs("- **Schedule.** GPipe fill-drain, every micro-batch re-materialized before its "
          "backward pass (re-computation costs one forward per micro-batch).\n"
          "- **Partition.** From issue 3's partitioner: the exact optimum of the per-step "
          "stage cost under each core's memory and every partition one cut away from it, "
          "simulated, the fastest that fits (what `pipesim partition --strategy optimal "
          "--mem-cap device` ranks first); if none fits, the same without the memory cap "
          "(see `partitions.md`).\n"
          "- **Devices.** Peak FLOP/s at every batch size, no per-op overhead "
          "(`models/topologies/SOURCES.md`: efficiency max 1, batch_half 0, chosen "
          "neutral because there is no published sustained-efficiency figure and deriving "
          "one from these tables would be fitting).\n\n", f);
}

void stu_paper_t2_intro(FILE *f)
{
    fputs("The paper's Table 2: training throughput of AmoebaNet-D (18, 256) (Cloud TPUv2, 8 "
          "cores) and Transformer-48 (Cloud TPUv3) for K = 2, 4, 8 partitions and M = 1, 4, "
          "32 micro-batches, normalized to K = 2, M = 1 of the same model. Predicted: samples "
          "per second of each simulated step divided by that of K = 2, M = 1.\n\n", f);
    policy(f, "128 images (AmoebaNet) and 32 sequences (Transformer), the Table 1 mini-batches "
              "(the only ones the reference table gives)");
}

/* Throughput over K = 2, M = 1 when every sample costs the same in every
 * cell: only the bubble (K-1)/(M+K-1) changes. */
static double bound(int K, int M) { return (double)K * M / (M + K - 1); }

void stu_paper_t2_notes(FILE *f, const struct stu_t2_facts *x)
{
    int over = 0;
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                over += x->norm[m][j][k] > bound(Ks[k], Ms[j]) * (1 + 1e-9);
    fputs("\n## Deviations over 10 %\n\n"
          "The pipeline alone moves throughput by at most the **bound** K·M/(M+K-1): with the "
          "same cost per sample in every cell, only the bubble (K-1)/(M+K-1) changes, and "
          "K = 2, M = 1 has bound 1. ", f);
    if (over)
        fprintf(f, "%d simulated cells exceed it: a stage's re-computation needs nothing "
                   "from later stages, so the schedule runs it while the stage waits for its "
                   "gradient, inside the bubble; at M = 1 that hides the recomputes of every "
                   "stage but the last, a larger share of the work the more stages there are, "
                   "which a bound of equal work per sample does not count. ", over);
    else
        fputs("Every simulated cell stays under it (imbalance, transfers, the update). ", f);
    fputs("A paper value above the bound means the paper's cost per sample fell between "
          "cells, one far below it that its cost per sample rose.\n\n"
          "| model | M | K | paper | bound | predicted | error | note |\n"
          "|---|---|---|---|---|---|---|---|\n", f);
    char e[32];
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) {
                double pv = x->norm[m][j][k], vv = x->paper[m][j][k];
                if (!*stu_paper_flag(pv, vv))
                    continue;
                double b = bound(Ks[k], Ms[j]);
                const char *note = vv > b ? "F" : pv > vv ? "G" : "H";
                int nofit = !x->fits[m][j][k] || !x->fits[m][0][0];
                fprintf(f, "| %s | %d | %d | %g | %.2f | %.2f | %s | %s%s |\n", model2[m], Ms[j],
                        Ks[k], vv, b, pv, stu_paper_err(pv, vv, e, sizeof e), note,
                        nofit ? ", I" : "");
            }
    fputs("\n**F. The paper beats the pipeline bound.** At M = 1 there is no pipelining "
          "(one micro-batch visits the stages in turn), yet the paper's throughput grows "
          "with K; and Transformer M = 4 exceeds K·M/(M+K-1) at every K. Only a lower cost "
          "per sample does that: with more cores, more memory per model, so larger batches "
          "fit (\"batch size was adjusted to fit memory\") and a TPU core is more efficient "
          "on larger batches. The simulator's devices run at one efficiency for every "
          "batch size, so it cannot follow; its M = 1 rows stay near 1 (the bubble is the "
          "same (K-1)/K of every step).\n\n"
          "**G. Small micro-batches are slower per sample.** AmoebaNet's paper values lie "
          "far below the bound at M = 4 and 32: with the mini-batch cut into micro-batches "
          "of 32 or 4 images, each convolution is a smaller matrix for the 128 x 128 MXU "
          "and the fixed cost of each op is paid M times. The presets model neither "
          "(batch_half 0, overhead_s 0), so the simulator keeps the pipeline's whole gain "
          "and overshoots; `models/topologies/SOURCES.md` names this as the expected main "
          "departure at large M. A device efficiency curve calibrated on real measurements "
          "(not on this table) would close it.\n\n", f);
    fprintf(f, "**H. Less than the paper, under the bound.** Load imbalance the paper's "
               "partition may not have: at K = 8 the slowest stage does %.1f %% (AmoebaNet) "
               "and %.1f %% (Transformer) more work than the mean, because layers are whole "
               "cells and the Transformer's embedding and softmax are extra layers at the "
               "ends; the reference table gives no Table 2 partitions.\n\n",
            x->imbalance[0][2] * 100, x->imbalance[1][2] * 100);
    fputs("**I. Does not fit in the simulator at any batch.** Transformer-48 at K = 2 puts "
          "24 layers on a 16 GiB core: their parameters alone take 24 x 50.4M x 12 B = "
          "13.5 GiB, plus the embedding and softmax. The paper's own Table 1 fits 13 such "
          "layers per 16 GB core (Pipeline-1, and 103 on 8 cores), so the paper's Table 2 "
          "run must differ in something the reference table does not give (model "
          "dimensions, memory per core, or parameter bytes). The cell's throughput is "
          "predicted anyway; it is the normalization base of the Transformer rows, so all "
          "of them carry this caveat.\n\n", f);
    fprintf(f, "## What agrees\n\n- The paper: \"re-computation time was the main contributor "
               "to GPipe overhead, taking up to 23%% of the total step time\". Simulated, the "
               "largest share of a step one core spends re-materializing: %.1f %% "
               "(AmoebaNet), %.1f %% (Transformer). Re-computation is one forward per "
               "micro-batch and backward is twice the forward, so it is at most F / (F + F "
               "+ 2F) = 25 %% of a core's busy time.\n"
               "- The paper: \"with two partitions, overhead caused by load imbalance was only "
               "3.2%%\". Simulated at K = 2 the slower stage does %.1f %% (AmoebaNet) and %.1f "
               "%% (Transformer) more work than the mean.\n"
               "- Within 10 %% of the paper:",
            x->recomp_max[0] * 100, x->recomp_max[1] * 100, x->imbalance[0][0] * 100,
            x->imbalance[1][0] * 100);
    int n = 0;
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                if ((j || k) && !*stu_paper_flag(x->norm[m][j][k], x->paper[m][j][k]))
                    fprintf(f, "%s %s M = %d, K = %d", n++ ? "," : "", model2[m], Ms[j], Ks[k]);
    fprintf(f, "%s (K = 2, M = 1 is 1 by construction).\n", n ? "" : " none");
}

void stu_paper_t3_intro(FILE *f)
{
    fputs("The paper's Table 3: the same measurement on GPUs without a high-speed "
          "interconnect, AmoebaNet-D (18, 128) and a 24-layer Transformer on P100s over "
          "PCIe, K = 2, 4, 8, M = 32, normalized to K = 2. Topology `p100-pcie-8.json`: "
          "8 x Tesla P100 PCIe 16 GB in one host, every GPU-to-GPU copy over the PCIe 3.0 "
          "host bus, modelled as one shared FIFO (transfers serialize; "
          "`models/topologies/SOURCES.md`). The Transformer has the Table 1 dimensions "
          "(d_model 2048, feed-forward 8192, 32 heads, vocabulary 32k, sequence 1024): the "
          "reference table gives no others.\n\n"
          "**The paper's Table 3 values are not in the project's reference data** "
          "(`studies/gpipe/reference/table3.csv` holds NA for every cell: the figures were "
          "copied from a reference with Tables 1 and 2 and torchgpipe's figures only), so "
          "this file shows the prediction alone and no error is computed; with the paper's "
          "values in place of the NAs in that file, the errors and notes follow.\n\n", f);
    policy(f, "128 images (AmoebaNet) and 32 sequences (Transformer)");
}

void stu_paper_t3_notes(FILE *f, const struct stu_t3_facts *x)
{
    char e[32];
    int any = 0;
    fputs("\n## Deviations over 10 %\n\n", f);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 3; k++)
            if (*stu_paper_flag(x->norm[m][k], x->paper[m][k])) {
                if (!any++)
                    fputs("| model | K | paper | predicted | error |\n|---|---|---|---|---|\n",
                          f);
                fprintf(f, "| %s | %d | %g | %.2f | %s |\n", model3[m], Ks[k], x->paper[m][k],
                        x->norm[m][k], stu_paper_err(x->norm[m][k], x->paper[m][k], e,
                                                     sizeof e));
            }
    if (!any)
        fputs("None can be computed without the paper's values (see above).\n", f);
    fputs("\n## The shared bus\n\nAll of a step's activation and gradient transfers, one "
          "after another, against the simulated step, and the throughput the same GPUs "
          "would reach with a dedicated PCIe 3.0 x16 link between neighbouring stages "
          "(an upper bound on what a PCIe switch tree can give):\n\n"
          "| model | K | transfers (ms) | step (ms) | bubble simulated / (K-1)/(M+K-1) | "
          "normalized, shared bus | normalized, dedicated links |\n"
          "|---|---|---|---|---|---|---|\n", f);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 3; k++)
            fprintf(f, "| %s | %d | %.1f | %.1f | %.1f %% / %.1f %% | %.2f | %.2f |\n", model3[m],
                    Ks[k], x->link_s[m][k] * 1e3, x->step_s[m][k] * 1e3, x->bubble[m][k] * 100,
                    x->analytic[m][k] * 100, x->norm[m][k], x->norm_dedicated[m][k]);
    double busy = x->step_s[0][2] * (1 - x->bubble[0][2]);
    fprintf(f, "\nAmoebaNet sends two cell outputs (the next cell's two inputs) across every "
               "cut. At K = 8 its transfers take %.0f ms of a %.0f ms step, against %.0f ms of "
               "compute per GPU", x->link_s[0][2] * 1e3, x->step_s[0][2] * 1e3, busy * 1e3);
    if (x->link_s[0][2] > busy)
        fprintf(f, ": the bus, not the GPUs, sets the step");
    if (x->norm[0][2] < x->norm[0][1])
        fprintf(f, ", and throughput falls from K = 4 to K = 8 (%.2f -> %.2f)", x->norm[0][1],
                x->norm[0][2]);
    fprintf(f, ". The Transformer sends one 1024 x 2048 hidden state per cut: %.0f ms of "
               "transfers in a %.0f ms step at K = 8. How the paper's host joined its GPUs "
               "(PCIe switches, sockets, peer-to-peer copies) is not given; a single shared "
               "bus is the pessimistic reading, the dedicated column the optimistic one.\n",
            x->link_s[1][2] * 1e3, x->step_s[1][2] * 1e3);
}

void stu_paper_parts_intro(FILE *f)
{
    fputs("AmoebaNet-D (18, 256) split into K = 8 stages on 8 TPUv2 cores (`tpu-v2.json`), "
          "GPipe with every micro-batch re-materialized, the batch of Table 2's policy for "
          "each M; every candidate partition runs at the same batch, so only the partition "
          "differs. The model has 24 layers (stem1-3, 18 normal and 2 reduction cells, the "
          "classifier), named as torchgpipe's nn.Sequential so that published balances index "
          "the same layers.\n\n"
          "Candidates:\n\n"
          "- **uniform**: 3 layers per stage.\n"
          "- **GPipe heuristic**: the partition of minimum variance of the stages' compute "
          "time, which `sched/sch_partitioner.h` implements as the GPipe paper's heuristic "
          "(`sch_part_min_sq_sum`, exact by dynamic programming).\n"
          "- **prefix heuristic**: cut where the running compute (F + R + B per micro-batch) "
          "passes s/K of the whole (the nearer side), a cheaper estimate-based heuristic.\n"
          "- **torchgpipe's published balance** for this model at K = 8 (the reference "
          "table: [2,2,2,2,2,3,4,7] at M = 1, [2,2,2,3,3,4,4,4] at M = 4 and 32), found by "
          "torchgpipe's profiler on Tesla P40s with `checkpoint = except_last`; used as "
          "published.\n"
          "- **min-max compute**: the contiguous partition whose slowest stage per "
          "micro-batch (F + R + B) is fastest, exact (`stu_part_time`: the partitioner's "
          "`sch_part_solve` on that cost, checked against brute force in "
          "`tests/test_paper.c`).\n"
          "- **optimal** (the partitioner of issue 3, `sch_part_solve`): the exact minimum "
          "of the largest per-step stage cost, M (F + B) + recomputes + the weight update + "
          "the stage's boundary transfers, under each core's memory.\n"
          "- **best simulated**: the optimum and each partition one cut away from it, "
          "simulated, the fastest that fits (`analysis/ana_rank.h`; what `pipesim partition "
          "--strategy optimal --mem-cap device` ranks first). Tables 2 and 3 use this one.\n\n"
          "Speedup is over the same model and batch on one core, M = 1, no "
          "re-materialization (`ana_predict`'s baseline).\n\n", f);
}

void stu_paper_parts_notes(FILE *f, const struct stu_parts_facts *x)
{
    const int j = 2; /* M = 32 */
    int best = 0;
    for (int k = 1; k < STU_NCAND; k++)
        if (x->step_ms[j][k] < x->step_ms[j][best])
            best = k;
    static const char *const short_name[STU_NCAND] = {
        "uniform", "the GPipe heuristic", "the prefix heuristic", "torchgpipe's balance",
        "min-max compute", "the optimal bound", "the best simulated"
    };
    fprintf(f, "At M = 32 the GPipe heuristic (%s) predicts a speedup of %.2f over one core, "
               "the partitioner's optimum (%s) %.2f and its best simulated neighbour (%s) "
               "%.2f; uniform gives %.2f. The fastest simulated step of all candidates is "
               "%s's (%s, %.2f ms).",
            x->spec[j][STU_P_GPIPE], x->speedup[j][STU_P_GPIPE], x->spec[j][STU_P_OPTIMAL],
            x->speedup[j][STU_P_OPTIMAL], x->spec[j][STU_P_RANKED], x->speedup[j][STU_P_RANKED],
            x->speedup[j][STU_P_UNIFORM], short_name[best], x->spec[j][best],
            x->step_ms[j][best]);
    if (x->step_ms[j][STU_P_MINMAX] < x->step_ms[j][STU_P_RANKED])
        fprintf(f, " Min-max compute beats the partitioner's pick here (%.2f vs %.2f ms): the "
                   "optimum minimizes the largest per-step stage cost, in which a stage's M "
                   "micro-batches of compute, its weight update (2 x parameters x 12 B / memory "
                   "bandwidth, largest for the 4D-filter cells at the end) and its boundary "
                   "transfers simply add up, while the simulated step overlaps transfers with "
                   "compute, runs each update once at the end, and is set mostly by the slowest "
                   "stage's per-micro-batch time, repeated M - 1 times. ana_rank's one-cut "
                   "neighbours of the optimum do not reach the min-max partition.",
                x->step_ms[j][STU_P_MINMAX], x->step_ms[j][STU_P_RANKED]);
    fprintf(f, "\n\ntorchgpipe's balance (%.2f ms slowest stage against %.2f for min-max) gives "
               "the later stages more layers, so its profiler measured the later cells as "
               "faster. By FLOPs they are not (table below): a 1x1 convolution over 28 x 28 x "
               "D costs what one over 14 x 14 x 2D or 7 x 7 x 4D does. What shrinks is the "
               "activation, which halves at each reduction cell, and with it the memory-bound "
               "work (ReLU, batch norm, depthwise convolutions) that dominates such cells on a "
               "GPU; a peak-FLOP/s cost model does not see that work, so on this device model "
               "torchgpipe's balance overloads the last stages. No partition removes the "
               "granularity: with 24 layers on 8 stages the slowest stage stays above the "
               "mean.\n\n",
            x->bottleneck_ms[j][STU_P_TORCHGPIPE], x->bottleneck_ms[j][STU_P_MINMAX]);
}
